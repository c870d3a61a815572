// Whether a scenario can run under a hypothesis, and if not the field and reason to blame, plus the
// per-scenario orders every dispatcher reads (SM scan order, stream FIFOs).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"

namespace tbcheck::model {

// SMs in the order a hypothesis scans them (natural, or Mechanism 1's even-first).
std::vector<int> sm_order(const Device& d, Order o);

// docs/design.md's streams: kernels with equal `stream` form one FIFO in list order; the others have their own.
// Shared by the generic dispatcher and the Fermi one.
struct StreamOrder {
  std::vector<int> successor;         // the next kernel of the same stream, -1 if none
  std::vector<bool> first_in_stream;  // eligible from the start
};
StreamOrder stream_order(const Scenario& s);

// Whether a scenario can run under a hypothesis at all, and if not, why: a kernel one block of which
// fits no empty SM, or gpc-priority on a device without a GPC map. Search asks this of scenarios it
// made up, where "cannot run" is an answer, not an error.
// TooLarge: more blocks than the simulator holds; Unsupported: a control (priority, TPC mask, cluster,
// or a release time under gpc-priority) that no option models yet. Both are the scenario's, whatever
// the hypothesis' resources.
enum class Feasibility { Runs, KernelNeverFits, NoGpcMap, TooLarge, Unsupported };
std::string_view to_string(Feasibility);

struct FeasibilityCheck {
  Feasibility status = Feasibility::Runs;
  int kernel = -1;     // KernelNeverFits: the first such kernel (index in the scenario)
  std::string field;   // the input field to blame ("kernels[2]", "device"); empty when it runs
  std::string reason;  // the message InputError carries; empty when it runs
  bool runs() const { return status == Feasibility::Runs; }
  // The refusal as InputError(where, field, reason) would word it.
  std::string message(const std::string& where) const;
  json to_json() const;
};
FeasibilityCheck check_feasibility(const Scenario& s, const Hypothesis& h);

}  // namespace tbcheck::model
