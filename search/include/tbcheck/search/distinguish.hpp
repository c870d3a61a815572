// `distinguish`: for each pair of hypotheses, the smallest scenario on which their schedules differ
// (fewest kernels, then blocks, then total duration), synthesized on a reduced device, lifted to the
// full device and re-verified by the simulators; or a bounded proof that none exists; or unknown.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/smt/synthesis.hpp"

namespace tbcheck::search {

struct DistinguishBounds {
  int max_kernels = 3;
  int max_blocks_per_kernel = 3;
  int max_total_blocks = 5;
  smt::ParamBounds params;
  unsigned timeout_ms = 10000;  // per solver query
  std::vector<int> reduced_tpcs = {1, 2};  // reduced devices tried, in order
};

enum class PairOutcome { Separated, Inseparable, Unknown, Unsupported };
std::string_view to_string(PairOutcome);

struct PairResult {
  std::string h1, h2;
  PairOutcome outcome = PairOutcome::Unknown;
  std::string reason;               // unknown / unsupported: why; inseparable: the bounds
  std::optional<model::Case> witness;  // on the full device, re-verified
  std::string route;                // "lifted x41 from 1 TPC", ...
  int kernels = 0, blocks = 0, total_duration = 0;
  bool minimal_proved = false;      // every smaller structure answered UNSAT
  std::vector<std::string> unknown_structures;  // smaller structures Z3 could not decide
  double solver_seconds = 0;
  std::string first_difference;     // "k2 block 0: SM 1 vs SM 0"
};

// A device with the same per-SM limits and `tpcs` TPCs.
model::Device reduced_device(const model::Device& full, int tpcs);

PairResult distinguish_pair(const model::Hypothesis& h1, const model::Hypothesis& h2, const model::Device& full,
                            const DistinguishBounds& b);

// The first block where two schedules of one scenario part ("" when they agree).
std::string first_difference(const model::Schedule& a, const model::Schedule& b);

// The corpus case written for a separated pair: scenario, source "synthesized", bounds, solver time,
// route, each hypothesis' predicted schedule and the first difference.
model::json case_json(const PairResult& r, const DistinguishBounds& b, const model::Hypothesis& h1,
                      const model::Hypothesis& h2);

}  // namespace tbcheck::search
