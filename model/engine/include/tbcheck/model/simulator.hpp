// The dispatcher of docs/design.md (stream eligibility, retire-then-dispatch per instant, head-of-line
// blocking, block-index order) with a hypothesis plugged in for SM selection and resources.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/model/feasibility.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/schedule.hpp"

namespace tbcheck::model {

// Trace-driven judging's extension point (docs/recordings.md): when given, a block retires at
// ends(kernel, block, start) (block: its index in the schedule; at least start + 1) instead of start +
// the kernel's duration, so a recording's retirements time the dispatcher and the hypothesis only
// places blocks. The generic dispatcher only; gpc-priority's (seed 003) plans waves from durations.
using EndTimeSource = std::function<int64_t(int kernel, int block, int64_t start)>;

// The schedule, or std::nullopt with `why` (when given) filled: simulate() without the exception.
std::optional<Schedule> try_simulate(const Scenario& s, const Hypothesis& h, FeasibilityCheck* why = nullptr,
                                     const EndTimeSource* ends = nullptr);

// Simulates the scenario under the hypothesis. A scenario check_feasibility rejects is an InputError
// from "scenario", naming the field and the reason: for input a user gave.
Schedule simulate(const Scenario& s, const Hypothesis& h);

// What predict_all did: how many hypotheses ran, and each one skipped as "name: reason".
struct PredictAllResult {
  size_t ran = 0;
  std::vector<std::string> skipped;
};

// Every hypothesis's schedule of s, handed to `each` (with its index in hs) as it is made and then dropped, so
// that many hypotheses on a large scenario need the memory of the largest schedule alone. One that cannot run s
// (fermi off a Fermi device, a kernel too large under one option) is skipped and named, as validate does; where
// hs holds only that one, or none can run s, it is an InputError from `source` (the scenario's file). The one
// way from hypotheses to schedules for predict, the Python module and the benches.
PredictAllResult predict_all(const Scenario& s, const std::vector<Hypothesis>& hs, const std::string& source,
                             const std::function<void(size_t, Schedule&&)>& each);

}  // namespace tbcheck::model
