// Conformance of the SMT engine with the simulator: random concrete scenarios, the model's schedule
// compared block by block with simulate(), and uniqueness (a different schedule is UNSAT).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/schedule.hpp"

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

// random_small_scenario with the controls drawn on top: the device gets a stream priority range
// [0, -5] (the RTX 2080 Ti's), most kernels a priority in it and some a TPC mask of one of the 2 TPCs.
model::Scenario random_control_scenario(unsigned seed, const model::Device& base);

// random_control_scenario cut to 2-3 kernels of at most 3 blocks, with release times: each later
// kernel launched 1-3 time units after the one before it (3 in 4; else with it), and 3 in 4 of those given
// a priority above every earlier kernel's (so that they reorder dispatches).
model::Scenario random_release_scenario(unsigned seed, const model::Device& base);
// random_small_scenario with one duration (1 or 2) for every kernel, so that blocks of different kernels
// retire at one instant often: where the two readings of the retirement mechanism part.
model::Scenario random_tie_scenario(unsigned seed, const model::Device& base);
// The hypotheses that spread over GPCs (gpc-spread, tpc-position, gpc-ring) act only on a device with a GPC map:
// for them, s's device gets one of GPCs of one and two TPCs in turn, so that both tiers occur (others: s as is).
model::Scenario with_gpc_map(model::Scenario s, const model::Hypothesis& h);
// Scenarios alternately from random_small_scenario and random_tie_scenario (rtx3090's limits), checked as
// run_conformance does: for the retirement option, whose two readings part only where retirements tie.
ConformanceReport run_tie_conformance(const model::Hypothesis& h, int scenarios, unsigned seed, unsigned timeout_ms);
// Random scenarios with priorities, masks and release times (random_release_scenario on rtx3090's limits),
// checked as run_conformance does; every dispatch order but the simulator's must admit no schedule.
ConformanceReport run_release_conformance(const model::Hypothesis& h, int scenarios, unsigned seed,
                                          unsigned timeout_ms);
// A random scenario for a gpc-priority hypothesis on `device` (which has a GPC map): 1-3 kernels of
// 1-40 blocks (max_blocks in all), some on 2-D grids, durations 1-3, residency 1..8 on a Fermi SM;
// feasible under h.
model::Scenario random_fermi_scenario(unsigned seed, const model::Device& device, const model::Hypothesis& h,
                                      int max_blocks = 40);

// A random scenario with thread block clusters on a reduced CC 9.0 device (2-4 TPCs of 2 SMs in 2-3 GPCs of a
// random map, full-size per-SM limits of `base`): 1-3 kernels, some clustered (1-D and 2-D clusters of up to 4
// blocks), some not, 1-12 blocks in all; check_feasibility(h) accepts it.
model::Scenario random_cluster_scenario(unsigned seed, const model::Device& base, const model::Hypothesis& h);
// Random clustered scenarios (random_cluster_scenario on h100-sxm-assumed-gpcs) checked as run_conformance does.
ConformanceReport run_cluster_conformance(const model::Hypothesis& h, int scenarios, unsigned seed, unsigned timeout_ms);

// check_one on `scenarios` scenarios make(seed + n x 7919), n = 0, 1, ..., counted into one report.
ConformanceReport check_scenarios(const model::Hypothesis& h, int scenarios, unsigned seed, unsigned timeout_ms,
                                  const std::function<model::Scenario(unsigned)>& make);

// Random scenarios (random_small_scenario, or random_control_scenario with `controls`; random_fermi_scenario
// on quadro6000 for gpc-priority).
ConformanceReport run_conformance(const model::Hypothesis& h, int scenarios, unsigned seed, unsigned timeout_ms,
                                  bool controls = false);

// One scenario: "" when the model's schedule is the simulator's and unique, else what differs.
std::string check_one(const model::Scenario& s, const model::Hypothesis& h, unsigned timeout_ms, bool* unknown = nullptr,
                      bool* not_unique = nullptr);
// The same against a given schedule `want` (check_one passes simulate(s, h)); a test hands it a wrong
// schedule to show that the check can fail.
std::string check_schedule(const model::Scenario& s, const model::Hypothesis& h, const model::Schedule& want,
                           unsigned timeout_ms, bool* unknown = nullptr, bool* not_unique = nullptr);

}  // namespace tbcheck::smt
