// Learn's splitting cases: the pool case whose predictions split the consistent candidates best, else a
// witness between group representatives (PB-hole search, a lifted corpus case, simulator search, then Z3).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>

#include <fmt/format.h>

#include "tbcheck/model/compare.hpp"
#include "control_variants.hpp"
#include "learn_internal.hpp"
#include "worker_pool.hpp"

namespace tbcheck::search {

DistinguishBounds learn_bounds() {
  DistinguishBounds b;
  b.max_kernels = 2;
  b.max_blocks_per_kernel = 2;
  b.max_total_blocks = 3;
  b.params.max_duration = 2;
  b.params.max_local = 4096;  // local memory is what separates local: gpu-config from ignore
  b.timeout_ms = 2000;
  b.pair_budget_ms = 5000;
  b.lemma_timeout_ms = 2000;
  b.reduced_tpcs = {1, 2};
  b.sim_samples = 400;
  b.deep_samples = 2000;
  b.wide_samples = 2000;
  return b;
}

namespace learn_detail {

// A witness by simulation alone: random kernels of small structures, scaled by the TPC count (how
// distinguish lifts a reduced device's witness) and unscaled, run on both simulators. Learn needs a
// separating case, not a minimal one, and this finds most in milliseconds where Z3 takes seconds.
std::optional<model::Case> Learner::quick_witness(const model::Hypothesis& a, const model::Hypothesis& b) {
  static const std::vector<std::vector<int>> shapes = {{1}, {2}, {1, 1}, {1, 2}, {2, 1}, {2, 2}, {3}, {1, 1, 1}, {3, 2}};
  // Kernels of many small blocks per TPC fill SMs, where warp slots fragment across PBs after completions.
  static const std::vector<std::vector<int>> fills = {{8, 8}, {16, 8}, {6, 6, 6}, {12, 4, 4}, {4, 4, 4, 4}, {24, 12}};
  std::vector<std::pair<int, const std::vector<int>*>> plan;
  for (int scale : {device_.tpcs(), 2 * device_.tpcs(), 1})
    for (const auto& shape : shapes) plan.emplace_back(scale, &shape);
  for (const auto& shape : fills) plan.emplace_back(device_.tpcs(), &shape);
  unsigned k = 0;
  for (const auto& [scale, shape] : plan) {
    std::vector<int> blocks;
    for (int x : *shape) blocks.push_back(x * scale);
    std::optional<model::Scenario> found;
    // Priorities and masks (on TPC 0) where the pair differs in them (control_variants).
    for (const auto& params :
         detail::control_variants(a, b, device_, static_cast<int>(blocks.size()), o_.bounds.params, 1)) {
      // A sample one of them cannot run separates nothing (search/src/witness.cpp, separates).
      found = simulator_search(a, b, device_, blocks, params, 150, o_.seed + 7919u * ++k);
      if (found) break;
    }
    if (!found) continue;
    model::Case c;
    c.id = fmt::format("simulated-witness-{}", ++pool_.witnesses);
    c.source = "learn: simulator search";
    c.scenario = std::move(*found);
    c.scenario.device = device_;
    c.scenario.device_builtin = true;
    return c;
  }
  return std::nullopt;
}

// A corpus case lifted above the pair's thresholds (learn_numeric.hpp) that separates them, if any.
std::optional<model::Case> Learner::lifted_witness(const model::Hypothesis& a, const model::Hypothesis& b) {
  // Only for thresholds off the enumerated values (found by refitting): the space's own pairs keep the
  // witnesses they always had.
  if (!thresholds_off_space(a) && !thresholds_off_space(b)) return std::nullopt;
  const size_t n = pool_.cases.size();
  for (size_t ci = 0; ci < n; ++ci) {
    auto s = lift_above_thresholds(pool_.cases[ci].scenario, a, b);
    if (!s) continue;
    const auto sa = model::try_simulate(*s, a), sb = sa ? model::try_simulate(*s, b) : std::nullopt;
    if (!sa || !sb || same_placements(*sa, *sb)) continue;
    model::Case c;
    c.id = fmt::format("{}-lifted", pool_.cases[ci].id);
    c.source = "learn: " + pool_.cases[ci].id + " with the quantities the thresholds ignore raised above them";
    c.scenario = std::move(*s);
    return c;
  }
  return std::nullopt;
}

// Z3 (with its simulator pre-pass) on one pair, its wall time charged to the run's budget; a quick
// simulated witness first.
PairResult Learner::synthesize(const model::Hypothesis& a, const model::Hypothesis& b, bool any_witness) {
  // The quick routes' witnesses are taken only when they hold under every order of tied retirements; the
  // first that does not is kept for when distinguish_pair, which searches for a robust one, separates nothing.
  std::optional<PairResult> dependent;
  auto take = [&](PairResult pr) -> std::optional<PairResult> {
    if (pr.ties != WitnessTies::Dependent) return pr;
    if (!dependent) dependent = std::move(pr);
    return std::nullopt;
  };
  if (differ_in_warp_placement(a, b)) {
    // Random small kernels rarely fill every SM's PBs; the shaped family does (learn_witness.cpp).
    if (auto w = pb_hole_search(a, b, device_, kPbHoleTries)) {
      PairResult pr;
      pr.h1 = a.name;
      pr.h2 = b.name;
      pr.outcome = PairOutcome::Separated;
      model::Case c;
      c.id = fmt::format("simulated-witness-{}", ++pool_.witnesses);
      c.source = "learn: PB-hole search";
      RobustWitness rw = robust_witness(w->scenario, a, b, o_.bounds.params.max_duration);  // search/ties.hpp
      c.scenario = std::move(rw.scenario);
      pr.ties = rw.ties;
      pr.witness = std::move(c);
      pr.route = fmt::format("PB-hole search on {} ({} tries)", device_.name, w->tries);
      if (auto t = take(std::move(pr))) return *t;
    }
  }
  auto separated = [&](model::Case w, std::string route) {
    PairResult pr;
    RobustWitness rw = robust_witness(w.scenario, a, b, o_.bounds.params.max_duration);  // search/ties.hpp
    w.scenario = std::move(rw.scenario);
    pr.ties = rw.ties;
    pr.h1 = a.name;
    pr.h2 = b.name;
    pr.outcome = PairOutcome::Separated;
    pr.witness = std::move(w);
    pr.route = std::move(route);
    return pr;
  };
  if (auto w = lifted_witness(a, b))
    if (auto t = take(separated(std::move(*w), "a corpus case with the quantities their thresholds ignore raised above them")))
      return *t;
  if (auto w = quick_witness(a, b))
    if (auto t = take(separated(std::move(*w), "simulator search on " + device_.name))) return *t;
  DistinguishBounds bounds = o_.bounds;
  bounds.wide_first = any_witness;
  const double left_ms = synthesis_left() * 1000.0;
  if (bounds.pair_budget_ms == 0 || bounds.pair_budget_ms > left_ms)
    bounds.pair_budget_ms = static_cast<unsigned>(std::max(1.0, left_ms));
  PairResult pr;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    pr = distinguish_pair(a, b, device_, bounds, &lemmas_);
  } catch (const std::exception& e) {
    // A solver failure (e.g. z3::exception under memory or time pressure) leaves this pair
    // undecided; it must not end the whole loop.
    pr.h1 = a.name;
    pr.h2 = b.name;
    pr.outcome = PairOutcome::Unknown;
    pr.reason = std::string("synthesis failed: ") + e.what();
  }
  res_.synthesis_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (pr.outcome != PairOutcome::Separated && dependent) return *dependent;
  return pr;
}

std::optional<size_t> Learner::best_split() {
  // Estimate on an evenly spread sample when there are many; fall back to all when the sample splits nowhere.
  std::vector<size_t> sample = space_.alive;
  if (space_.alive.size() > o_.split_sample) {
    sample.clear();
    for (size_t k = 0; k < o_.split_sample; ++k) sample.push_back(space_.alive[k * space_.alive.size() / o_.split_sample]);
  }
  for (int pass = 0; pass < 2; ++pass) {
    // Each case is classed on its own (jobs at once), cut once a class outgrows the smallest largest class
    // of any case finished so far (with machines). A cut case's largest class exceeds a real split's, so it
    // cannot be chosen, whichever case set the bound: the choice below is the one a single thread makes.
    std::vector<SplitScore> scores(pool_.cases.size());
    std::atomic<size_t> bound{SIZE_MAX};
    detail::run_on_workers(pool_.cases.size(), sharing() ? o_.jobs : 1, [&](size_t ci) {
      if (pool_.cases[ci].used) return;
      SplitScore& s = scores[ci];
      s = score_of(pool_.cases[ci], space_.candidates, sample, sharing(), sharing() ? bound.load() : SIZE_MAX);
      if (s.cut || s.groups < 2) return;
      for (size_t b = bound.load(); s.largest < b && !bound.compare_exchange_weak(b, s.largest);) {
      }
    });
    std::optional<size_t> best;
    SplitScore bs;
    for (size_t ci = 0; ci < pool_.cases.size(); ++ci) {
      const SplitScore& s = scores[ci];
      if (pool_.cases[ci].used || s.cut || s.groups < 2) continue;
      const int blocks = pool_.cases[ci].scenario.total_blocks();
      if (!best || s.largest < bs.largest ||
          (s.largest == bs.largest &&
           (s.cost < bs.cost || (s.cost == bs.cost && blocks < pool_.cases[*best].scenario.total_blocks())))) {
        best = ci;
        bs = s;
      }
    }
    if (best || sample.size() == space_.alive.size()) return best;
    sample = space_.alive;
  }
  return std::nullopt;
}

std::optional<size_t> Learner::split_by_synthesis() {
  if (!o_.synthesize) return std::nullopt;
  auto groups = space_.groups_of_alive();
  std::vector<std::vector<size_t>> gs;
  for (auto& [r, m] : groups) gs.push_back(m);
  // Representatives of the largest groups first: a witness between them splits the most.
  std::stable_sort(gs.begin(), gs.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  for (size_t x = 0; x < gs.size(); ++x)
    for (size_t y = x + 1; y < gs.size(); ++y) {
      const size_t a = gs[x].front(), b = gs[y].front();
      if (space_.groups.find(a) == space_.groups.find(b)) continue;  // merged by a proof found in this loop
      const auto key = std::minmax(a, b);
      if (tried_.count(key)) continue;
      if (synthesis_left() <= 0) return std::nullopt;
      PairResult pr = synthesize(space_.candidates[a], space_.candidates[b]);
      tried_[key] = pr;
      if (pr.outcome == PairOutcome::Inseparable) {
        space_.groups.unite(a, b);
        space_.proof[std::max(a, b)] = fmt::format("Z3: inseparable from {} ({})", space_.candidates[std::min(a, b)].name, pr.reason);
        continue;
      }
      if (pr.outcome != PairOutcome::Separated || !pr.witness) continue;
      const size_t ci = pool_.add(*pr.witness, fmt::format("synthesized ({} vs {}; {})", space_.candidates[a].name, space_.candidates[b].name, pr.route));
      if (score_of(pool_.cases[ci], space_.candidates, space_.alive, sharing()).groups < 2) continue;
      return ci;
    }
  return std::nullopt;
}

}  // namespace learn_detail

}  // namespace tbcheck::search
