// The dispatcher of DESIGN.md (stream eligibility, retire-then-dispatch per instant, head-of-line
// blocking, block-index order) with a hypothesis plugged in for SM selection and resources.
#pragma once
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/schedule.hpp"

namespace tbcheck::model {

// SMs in the order a hypothesis scans them (natural, or Mechanism 1's even-first).
std::vector<int> sm_order(const Device& d, Order o);

// DESIGN.md's streams: kernels with equal `stream` form one FIFO in list order; the others have their own.
// Shared by the generic dispatcher and the Fermi one.
struct StreamOrder {
  std::vector<int> successor;         // the next kernel of the same stream, -1 if none
  std::vector<bool> first_in_stream;  // eligible from the start
};
StreamOrder stream_order(const Scenario& s);

// Simulates the scenario under the hypothesis. A kernel one block of which fits no empty SM
// under the hypothesis is an InputError naming the kernel and the reason.
Schedule simulate(const Scenario& s, const Hypothesis& h);

// Raises the InputError simulate() would raise for an infeasible kernel; `where` names the file.
void check_feasible(const Scenario& s, const Hypothesis& h, const std::string& where);

}  // namespace tbcheck::model
