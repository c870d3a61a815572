// Learn's numeric options: which thresholds of one composition agree with every observation, jointly over its
// threshold options, and the boundary case that asks the device on which side of one value its threshold lies.
#pragma once
#include <functional>
#include <optional>
#include <vector>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/schedule.hpp"
#include "tbcheck/model/thresholds.hpp"

namespace tbcheck::search {

// Placements as Exact comparison sees them: the SM and start of every block.
bool same_placements(const model::Schedule& a, const model::Schedule& b);

// A case the device ran, with what it did.
struct SeenCase {
  const model::Scenario* scenario = nullptr;
  const model::Observation* observation = nullptr;
};

// h's thresholds that agree with every seen case: per threshold option (model::threshold_options() order),
// the hull of the cuts that appear in a combination fitting every case, over the values the option's quantity
// takes on d and in the seen cases. A run reveals a threshold only through the quantities of its kernels, so
// each case is simulated once per combination of its own kernels' cuts, not per value. `fitted` is h with
// thresholds of one fitting combination: h's own where they fit, else the fitting ones nearest to them.
// nullopt: no thresholds fit, so h's other options are refuted.
struct ThresholdFit {
  std::vector<model::ThresholdInterval> intervals;
  model::Hypothesis fitted;
};
// Which combinations of a seen case's own cuts fit what it showed under h (h's thresholds aside): the part of
// fit_thresholds that simulates. Made once, a case's table serves every later fit of h over that case.
struct FitTable {
  std::vector<std::vector<int>> local;  // per threshold option: the case's own values of its quantity
  std::vector<char> fits;               // indexed by the combination of cuts, option 0 fastest
};
std::vector<FitTable> fit_tables(const model::Hypothesis& h, const std::vector<SeenCase>& seen);
// `known`: fit_tables(h, ...) of the first cases of `seen`, made before (the rest are made here).
std::optional<ThresholdFit> fit_thresholds(const model::Hypothesis& h, const model::Device& d,
                                           const std::vector<SeenCase>& seen, const std::vector<FitTable>& known = {});

// A case that asks whether the device ignores value `cut` (1-based: the cut-th of intervals[which].values) of
// option `which`: under h, every combination of thresholds within `intervals` that keeps it predicts `below`,
// every one that ignores it predicts `above`, and the two differ. Drawn from a small family, cheapest first:
// one kernel of that value filling every SM, then a filler kernel of another value that the probe kernel must
// fit beside. `tries`: scenarios simulated before it.
struct BoundaryCase {
  model::Scenario scenario;
  model::Schedule below, above;
  int tries = 0;
};
// A case that runs anyway (a split), whose kernels a boundary case's follow, released at `release`: one oracle
// run then asks both. The boundary case is judged on the whole (the prefix's kernels take room), and its
// kernels are named apart from the prefix's.
// `accept`, when set, replaces the test that each side predicts one schedule: it judges the whole case (kept when
// it returns true), e.g. by how much the fit of the observed case would narrow.
struct BoundaryPrefix {
  const model::Scenario* before = nullptr;
  int64_t release = 0;
  std::function<bool(const model::Scenario&)> accept;
};
std::optional<BoundaryCase> boundary_case(const model::Hypothesis& h, const model::Device& d,
                                          const std::vector<model::ThresholdInterval>& intervals, size_t which, int cut,
                                          const BoundaryPrefix& prefix = {});

// One case that asks two neighbouring questions of option `which` at once: whether the device ignores the value of
// cut `m1` and of cut `m2` (m1 < m2, 1-based as in boundary_case). Every combination the intervals allow predicts
// one schedule per region (neither ignored, only the first, both), and the three differ: a threshold at a value
// the space names is bracketed in one step instead of two. `below`/`above` hold the first and last regions'.
std::optional<BoundaryCase> boundary_pair_case(const model::Hypothesis& h, const model::Device& d,
                                               const std::vector<model::ThresholdInterval>& intervals, size_t which,
                                               int m1, int m2, const BoundaryPrefix& prefix = {});

// s with every kernel quantity that a threshold of `a` or `b` ignores raised to the least value on s's device
// that neither ignores: a corpus case that separated two compositions without thresholds often separates
// them again once both have one (a threshold found by bracketing can hide what the corpus case showed).
// nullopt when nothing is ignored or the raised kernels cannot run on the device.
std::optional<model::Scenario> lift_above_thresholds(const model::Scenario& s, const model::Hypothesis& a,
                                                     const model::Hypothesis& b);

}  // namespace tbcheck::search
