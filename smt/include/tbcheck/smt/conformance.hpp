// Conformance of the SMT engine with the simulator: random concrete scenarios, the model's schedule
// compared block by block with simulate(), and uniqueness (a different schedule is UNSAT).
#pragma once
#include <string>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"

namespace tbcheck::smt {

struct ConformanceReport {
  int checked = 0;                      // scenarios whose schedule matched and was unique
  int not_unique = 0;                   // a second schedule was satisfiable
  int unknown = 0;                      // Z3 gave up (timeout)
  bool unsupported = false;             // the hypothesis has an option without encoding
  std::string unsupported_reason;
  std::vector<std::string> mismatches;  // each names the scenario as a corpus case (JSON) and the first difference
};

// A random small scenario on a reduced device with full-size per-SM limits (2 TPCs).
model::Scenario random_small_scenario(unsigned seed, const model::Device& base);

ConformanceReport run_conformance(const model::Hypothesis& h, int scenarios, unsigned seed, unsigned timeout_ms);

// One scenario: "" when the model's schedule is the simulator's and unique, else what differs.
std::string check_one(const model::Scenario& s, const model::Hypothesis& h, unsigned timeout_ms, bool* unknown = nullptr,
                      bool* not_unique = nullptr);

}  // namespace tbcheck::smt
