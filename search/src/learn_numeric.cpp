// Thresholds as intervals in learn (learn_numeric.hpp): the joint fit of a composition's thresholds to what the
// device did, and the boundary cases that bisect a threshold down to the granularity the device can tell apart.
#include "tbcheck/search/learn_numeric.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/simulator.hpp"

namespace tbcheck::search {

namespace {

using model::ThresholdOption;

// The distinct values of an option's quantity among a scenario's kernels, ascending.
std::vector<int> values_in(const model::Scenario& s, const ThresholdOption& o) {
  std::set<int> v;
  for (const auto& k : s.kernels) v.insert(model::quantity_of(o.quantity, k, s.device));
  return {v.begin(), v.end()};
}

// How many of `local` (ascending) a cut of `axis` ignores: those at or below the cut's last value.
int local_cut(int cut, const std::vector<int>& axis, const std::vector<int>& local) {
  if (cut <= 0) return 0;
  const int last = axis[static_cast<size_t>(std::min<int>(cut, static_cast<int>(axis.size()))) - 1];
  return static_cast<int>(std::upper_bound(local.begin(), local.end(), last) - local.begin());
}

// Calls f with every combination of idx[i] in [lo[i], hi[i]]; stops when f returns false.
bool for_each_combination(const std::vector<int>& lo, const std::vector<int>& hi,
                          const std::function<bool(const std::vector<int>&)>& f) {
  std::vector<int> idx = lo;
  while (true) {
    if (!f(idx)) return false;
    size_t i = 0;
    for (; i < idx.size(); ++i) {
      if (++idx[i] <= hi[i]) break;
      idx[i] = lo[i];
    }
    if (i == idx.size()) return true;
  }
}

// h with each threshold set so that it ignores exactly local[i][k[i]] of the case's own values.
model::Hypothesis with_local_cuts(model::Hypothesis h, const std::vector<std::vector<int>>& local, const std::vector<int>& k) {
  const auto& opts = model::threshold_options();
  for (size_t i = 0; i < opts.size(); ++i) model::set_threshold(h, opts[i], model::threshold_at_cut(opts[i], k[i], local[i]));
  return h;
}

// A scenario's own values of each threshold option, and the cuts of them its intervals allow.
struct LocalCuts {
  std::vector<std::vector<int>> local;
  std::vector<int> lo, hi;
};

LocalCuts local_cuts(const model::Scenario& s, const std::vector<model::ThresholdInterval>& intervals) {
  const auto& opts = model::threshold_options();
  LocalCuts c;
  for (size_t i = 0; i < opts.size(); ++i) {
    c.local.push_back(values_in(s, opts[i]));
    c.lo.push_back(local_cut(intervals[i].lo_cut, intervals[i].values, c.local[i]));
    c.hi.push_back(local_cut(intervals[i].hi_cut, intervals[i].values, c.local[i]));
  }
  return c;
}

// A boundary kernel as JSON: `v` of quantity q (set last, so a shared-memory quantity overrides `smem`).
model::json boundary_kernel(model::ThresholdQuantity q, const model::Device& d, const std::string& name, int blocks,
                            int threads, int v, int duration, int smem = 0) {
  model::Kernel k;
  k.name = name;
  k.blocks = blocks;
  k.threads = threads;
  k.duration = duration;
  k.smem = smem;
  model::set_quantity(q, k, v, d);
  return k.to_json();
}

// Large values of a quantity to fill SMs with, spread over the device's values, ascending and distinct.
std::vector<int> filler_values(const std::vector<int>& device_values) {
  std::vector<int> fillers;
  const size_t m = device_values.size();
  for (size_t at : {m - 1, m - 2, 3 * m / 4, m / 2, m / 4, m / 8})
    if (at < m) fillers.push_back(device_values[at]);
  std::sort(fillers.begin(), fillers.end());
  fillers.erase(std::unique(fillers.begin(), fillers.end()), fillers.end());
  return fillers;
}

}  // namespace

bool same_placements(const model::Schedule& a, const model::Schedule& b) {
  if (a.kernels.size() != b.kernels.size()) return false;
  for (size_t k = 0; k < a.kernels.size(); ++k) {
    const auto &x = a.kernels[k].blocks, &y = b.kernels[k].blocks;
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i].sm != y[i].sm || x[i].start != y[i].start) return false;
  }
  return true;
}

namespace {

// The one schedule every threshold combination in [l, u] predicts for s; none when one cannot run or two differ.
std::optional<model::Schedule> uniform_schedule(const model::Scenario& s, const model::Hypothesis& h,
                                                const std::vector<std::vector<int>>& local, const std::vector<int>& l,
                                                const std::vector<int>& u) {
  std::optional<model::Schedule> one;
  bool uniform = true;
  for_each_combination(l, u, [&](const std::vector<int>& k) {
    auto sch = model::try_simulate(s, with_local_cuts(h, local, k));
    if (!sch) return uniform = false;
    if (!one) one = std::move(*sch);
    else if (!same_placements(*one, *sch)) uniform = false;
    return uniform;
  });
  if (!uniform) return std::nullopt;
  return one;
}

// The scenarios of boundary kernels on d, after the prefix's kernels when there is one (released at its release
// time, named apart from them); none when the device cannot run a shape (threads, registers, shared memory). The
// prefix is written as JSON once and the device is not written at all: a bracket tries hundreds of shapes behind
// the same prefix.
class BoundaryScenarios {
 public:
  BoundaryScenarios(const model::Device& d, const BoundaryPrefix& prefix)
      : d_(d), release_(prefix.before ? prefix.release : 0) {
    if (!prefix.before) return;
    // Named apart from the prefix's kernels, which may hold an earlier question's boundary kernels.
    tag_ = "boundary-";
    for (int n = 2;; ++n) {
      bool taken = false;
      for (const auto& k : prefix.before->kernels) taken = taken || k.name.rfind(tag_, 0) == 0;
      if (!taken) break;
      tag_ = fmt::format("boundary{}-", n);
    }
    for (const auto& k : prefix.before->kernels) prefix_json_.push_back(k.to_json());
  }

  std::optional<model::Scenario> operator()(model::json kernels) const {
    model::json all = prefix_json_;
    for (auto& k : kernels) {
      if (!tag_.empty()) {
        k["name"] = tag_ + k["name"].get<std::string>();
        if (release_ > 0) k["release_time"] = release_;
      }
      all.push_back(std::move(k));
    }
    const model::json j = {{"kernels", std::move(all)}};
    return model::try_scenario_from_json(j, d_, true, "boundary case");
  }

 private:
  const model::Device& d_;
  int64_t release_;
  model::json prefix_json_ = model::json::array();
  std::string tag_;  // empty without a prefix
};

// A shape's verdict: with a judge (a prefix that is a split) the judge's, since the split's kernels ahead may be
// read differently across the intervals and the fit of the whole observed case is what narrows them; without
// one, `uniform` (each side predicts one schedule). `tries` counts the shapes judged.
template <class Uniform>
std::optional<BoundaryCase> judged(const model::Scenario& s, const BoundaryPrefix& prefix, int& tries, Uniform& uniform) {
  if (!prefix.accept) return uniform(s);
  ++tries;
  if (!prefix.accept(s)) return std::nullopt;
  return BoundaryCase{s, {}, {}, tries};
}

// The block sizes a boundary kernel tries: one warp and powers of two above it, up to the device's limit.
std::vector<int> probe_threads(const model::Device& d) {
  std::vector<int> threads;
  for (int t : {32, 64, 128, 256, 512, 1024})
    if (t <= d.max_threads_per_block) threads.push_back(t);
  return threads;
}

}  // namespace

std::vector<FitTable> fit_tables(const model::Hypothesis& h, const std::vector<SeenCase>& seen) {
  const auto& opts = model::threshold_options();
  const size_t n = opts.size();
  std::vector<FitTable> tables;
  for (const auto& c : seen) {
    FitTable t;
    std::vector<int> hi(n);
    for (size_t i = 0; i < n; ++i) {
      t.local.push_back(values_in(*c.scenario, opts[i]));
      hi[i] = static_cast<int>(t.local[i].size());
    }
    for_each_combination(std::vector<int>(n, 0), hi, [&](const std::vector<int>& k) {
      // No schedule: it predicts the case cannot run, and it ran.
      const auto s = model::try_simulate(*c.scenario, with_local_cuts(h, t.local, k));
      const bool ok =
          s && model::compare_recording(*c.observation, *c.scenario, *s, model::Level::Exact).verdict == model::Verdict::Pass;
      t.fits.push_back(ok ? 1 : 0);
      return true;
    });
    tables.push_back(std::move(t));
  }
  return tables;
}

std::optional<ThresholdFit> fit_thresholds(const model::Hypothesis& h, const model::Device& d,
                                           const std::vector<SeenCase>& seen, const std::vector<FitTable>& known) {
  const auto& opts = model::threshold_options();
  const size_t n = opts.size();
  // Per option: the axis (device values and seen ones) and the seen values, whose cuts are the cells.
  std::vector<std::vector<int>> axis(n), seen_values(n);
  for (size_t i = 0; i < n; ++i) {
    std::set<int> all, mine;
    for (int v : model::threshold_values(opts[i].quantity, d)) all.insert(v);
    for (const auto& c : seen)
      for (int v : values_in(*c.scenario, opts[i])) {
        all.insert(v);
        mine.insert(v);
      }
    axis[i].assign(all.begin(), all.end());
    seen_values[i].assign(mine.begin(), mine.end());
  }
  // Which combinations of each case's own cuts fit what it showed: those of the first cases as given, the rest made.
  const size_t given = std::min(known.size(), seen.size());
  const std::vector<SeenCase> rest(seen.begin() + static_cast<std::ptrdiff_t>(given), seen.end());
  std::vector<FitTable> made = fit_tables(h, rest);
  std::vector<const FitTable*> tables;
  for (size_t c = 0; c < given; ++c) tables.push_back(&known[c]);
  for (const auto& t : made) tables.push_back(&t);
  auto index_of = [&](const FitTable& t, const std::vector<int>& k) {
    size_t idx = 0, stride = 1;
    for (size_t i = 0; i < n; ++i) {
      idx += static_cast<size_t>(k[i]) * stride;
      stride *= t.local[i].size() + 1;
    }
    return idx;
  };
  // Cells: cuts of the axis that ignore the same seen values; cell j ignores the first j of them.
  auto cell_range = [&](size_t i, int j) {
    const auto& sv = seen_values[i];
    const auto pos = [&](int v) { return static_cast<int>(std::lower_bound(axis[i].begin(), axis[i].end(), v) - axis[i].begin()); };
    const int lo = j == 0 ? 0 : pos(sv[static_cast<size_t>(j) - 1]) + 1;
    const int hi = j == static_cast<int>(sv.size()) ? static_cast<int>(axis[i].size()) : pos(sv[static_cast<size_t>(j)]);
    return std::pair<int, int>(lo, hi);
  };
  std::vector<int> own(n);
  for (size_t i = 0; i < n; ++i) own[i] = model::cut_of(opts[i], model::threshold_of(h, opts[i]), axis[i]);
  std::vector<int> hull_lo(n, -1), hull_hi(n, -1);
  std::optional<std::vector<int>> chosen;
  int chosen_distance = 0;
  std::vector<int> cells_hi(n);
  for (size_t i = 0; i < n; ++i) cells_hi[i] = static_cast<int>(seen_values[i].size());
  for_each_combination(std::vector<int>(n, 0), cells_hi, [&](const std::vector<int>& cell) {
    for (const FitTable* t : tables) {
      std::vector<int> k(n);
      for (size_t i = 0; i < n; ++i) k[i] = local_cut(cell_range(i, cell[i]).second, axis[i], t->local[i]);
      if (!t->fits[index_of(*t, k)]) return true;
    }
    std::vector<int> cuts(n);
    int distance = 0;
    for (size_t i = 0; i < n; ++i) {
      const auto [lo, hi] = cell_range(i, cell[i]);
      hull_lo[i] = hull_lo[i] < 0 ? lo : std::min(hull_lo[i], lo);
      hull_hi[i] = std::max(hull_hi[i], hi);
      cuts[i] = std::clamp(own[i], lo, hi);
      distance += std::abs(cuts[i] - own[i]);
    }
    if (!chosen || distance < chosen_distance) {
      chosen = cuts;
      chosen_distance = distance;
    }
    return true;
  });
  if (!chosen) return std::nullopt;
  ThresholdFit fit;
  fit.fitted = h;
  for (size_t i = 0; i < n; ++i) {
    if ((*chosen)[i] != own[i]) model::set_threshold(fit.fitted, opts[i], model::threshold_at_cut(opts[i], (*chosen)[i], axis[i]));
    model::ThresholdInterval iv;
    iv.option = opts[i];
    iv.values = axis[i];
    iv.lo_cut = hull_lo[i];
    iv.hi_cut = hull_hi[i];
    iv.granularity = model::granularity_of(opts[i].quantity, d);
    fit.intervals.push_back(std::move(iv));
  }
  return fit;
}

std::optional<BoundaryCase> boundary_case(const model::Hypothesis& h, const model::Device& d,
                                          const std::vector<model::ThresholdInterval>& intervals, size_t which, int cut,
                                          const BoundaryPrefix& prefix) {
  const auto& opts = model::threshold_options();
  const auto& iv = intervals[which];
  if (cut <= iv.lo_cut || cut > iv.hi_cut) return std::nullopt;
  const auto& axis = iv.values;
  const int value = axis[static_cast<size_t>(cut) - 1];
  const auto q = opts[which].quantity;
  const auto device_values = model::threshold_values(q, d);

  auto kernel_json = [&](const std::string& name, int blocks, int threads, int v, int duration, int smem = 0) {
    return boundary_kernel(q, d, name, blocks, threads, v, duration, smem);
  };
  int tries = 0;
  // Predictions of every threshold combination the intervals allow, split by whether `value` is ignored.
  auto uniform_sides = [&](const model::Scenario& s) -> std::optional<BoundaryCase> {
    ++tries;
    const auto [local, lo, hi] = local_cuts(s, intervals);
    std::optional<model::Schedule> side[2];
    for (int above = 0; above < 2; ++above) {
      std::vector<int> l = lo, u = hi;
      if (above) l[which] = local_cut(cut, axis, local[which]);
      else u[which] = local_cut(cut - 1, axis, local[which]);
      side[above] = uniform_schedule(s, h, local, l, u);
      if (!side[above]) return std::nullopt;
    }
    if (same_placements(*side[0], *side[1])) return std::nullopt;
    return BoundaryCase{s, std::move(*side[0]), std::move(*side[1]), tries};
  };
  auto separates = [&](const model::Scenario& s) { return judged(s, prefix, tries, uniform_sides); };
  const BoundaryScenarios scenario(d, prefix);
  const std::vector<int> threads = probe_threads(d);
  // One kernel of the value, enough blocks per SM that counting it binds.
  for (int per_sm : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64})
    for (int t : threads) {
      if (per_sm * t > d.max_warps_per_sm * 32 * 2) continue;  // beyond twice what warps allow: adds nothing
      auto s = scenario(model::json::array({kernel_json("probe", per_sm * d.sms, t, value, 1)}));
      if (s)
        if (auto b = separates(*s)) return b;
    }
  // A filler of a large value on every SM, then a probe of the value that fits beside it only if it is ignored.
  std::vector<int> fillers = filler_values(device_values);
  if (q == model::ThresholdQuantity::SmemPerBlock)
    for (int kb : d.smem_configs_kb) {
      // The least value that leaves less than `value` of this configuration free.
      auto it = std::upper_bound(device_values.begin(), device_values.end(), kb * 1024 - value);
      if (it != device_values.end()) fillers.push_back(*it);
    }
  std::sort(fillers.begin(), fillers.end());
  fillers.erase(std::unique(fillers.begin(), fillers.end()), fillers.end());
  for (int per_sm : {1, 2})
    for (int f : fillers)
      for (int tf : threads)
        for (int tp : {32, 128}) {
          auto s = scenario({kernel_json("filler", per_sm * d.sms, tf, f, 2), kernel_json("probe", d.sms, tp, value, 1)});
          if (s)
            if (auto b = separates(*s)) return b;
        }
  // The same, with shared memory large enough that both kernels choose the largest configuration: under a
  // per-TPC configuration (Mechanism 3) a probe whose configuration differs from the filler's waits whatever
  // the threshold says, so the two must agree on it.
  if (q != model::ThresholdQuantity::SmemPerBlock) {
    const int top = d.max_smem_config_bytes();
    std::vector<std::pair<int, int>> pairs;
    if (d.smem_configs_kb.size() >= 2) {
      // The filler just above the second largest configuration, the probe half of what is left beside it.
      const int sf = d.smem_configs_kb[d.smem_configs_kb.size() - 2] * 1024 + d.smem_alloc_unit;
      pairs.emplace_back(sf, (top - sf - 2 * d.smem_reserved_per_block) / 2);
    }
    pairs.emplace_back(top * 4 / 5, top / 12);
    pairs.emplace_back(top / 2, top / 5);
    for (auto [sf, sp] : pairs) {
      sf = std::min(d.max_smem_per_block, sf);
      sp = std::min(d.max_smem_per_block, sp);
      if (sp <= 0) continue;
      for (int f : fillers)
        for (int tf : threads)
          for (int tp : {32, 128}) {
            auto s = scenario({kernel_json("filler", d.sms, tf, f, 2, sf), kernel_json("probe", d.sms, tp, value, 1, sp)});
            if (s)
              if (auto b = separates(*s)) return b;
          }
    }
  }
  return std::nullopt;
}

std::optional<BoundaryCase> boundary_pair_case(const model::Hypothesis& h, const model::Device& d,
                                               const std::vector<model::ThresholdInterval>& intervals, size_t which,
                                               int m1, int m2, const BoundaryPrefix& prefix) {
  const auto& opts = model::threshold_options();
  const auto& iv = intervals[which];
  if (m1 >= m2 || m1 <= iv.lo_cut || m2 > iv.hi_cut) return std::nullopt;
  const auto& axis = iv.values;
  const int v1 = axis[static_cast<size_t>(m1) - 1], v2 = axis[static_cast<size_t>(m2) - 1];
  const auto q = opts[which].quantity;
  const auto device_values = model::threshold_values(q, d);
  auto kernel_json = [&](const std::string& name, int blocks, int threads, int v, int duration) {
    return boundary_kernel(q, d, name, blocks, threads, v, duration);
  };
  int tries = 0;
  // The cut ranges of the three regions over the option's axis; each must predict one schedule whatever the
  // other thresholds are within their intervals, and the three must differ.
  const std::pair<int, int> regions[3] = {{iv.lo_cut, m1 - 1}, {m1, m2 - 1}, {m2, iv.hi_cut}};
  auto uniform_sides = [&](const model::Scenario& s) -> std::optional<BoundaryCase> {
    ++tries;
    const auto [local, lo, hi] = local_cuts(s, intervals);
    std::optional<model::Schedule> side[3];
    for (int r = 0; r < 3; ++r) {
      std::vector<int> l = lo, u = hi;
      l[which] = local_cut(regions[r].first, axis, local[which]);
      u[which] = local_cut(regions[r].second, axis, local[which]);
      side[r] = uniform_schedule(s, h, local, l, u);
      if (!side[r]) return std::nullopt;
    }
    for (int a = 0; a < 3; ++a)
      for (int b = a + 1; b < 3; ++b)
        if (same_placements(*side[a], *side[b])) return std::nullopt;
    return BoundaryCase{s, std::move(*side[0]), std::move(*side[2]), tries};
  };
  auto separates = [&](const model::Scenario& s) { return judged(s, prefix, tries, uniform_sides); };
  const BoundaryScenarios scenario(d, prefix);
  const std::vector<int> threads = probe_threads(d);
  // boundary_case's family with a probe per value: the two kernels filling every SM, then a filler that each
  // probe must fit beside.
  for (int per_sm : {1, 2, 3, 4, 6, 8, 12, 16})
    for (int t : threads) {
      if (per_sm * t > d.max_warps_per_sm * 32 * 2) continue;
      auto s = scenario({kernel_json("probe-low", per_sm * d.sms, t, v1, 1), kernel_json("probe-high", per_sm * d.sms, t, v2, 1)});
      if (s)
        if (auto b = separates(*s)) return b;
    }
  const std::vector<int> fillers = filler_values(device_values);
  for (int per_sm : {1, 2})
    for (int f : fillers)
      for (int tf : threads)
        for (int tp : {32, 128}) {
          auto s = scenario({kernel_json("filler", per_sm * d.sms, tf, f, 2), kernel_json("probe-low", d.sms, tp, v1, 1),
                             kernel_json("probe-high", d.sms, tp, v2, 1)});
          if (s)
            if (auto b = separates(*s)) return b;
        }
  return std::nullopt;
}

std::optional<model::Scenario> lift_above_thresholds(const model::Scenario& s, const model::Hypothesis& a,
                                                     const model::Hypothesis& b) {
  const auto& opts = model::threshold_options();
  const model::Device& d = s.device;
  model::json j = s.to_json();
  bool changed = false;
  for (const auto& o : opts) {
    const auto values = model::threshold_values(o.quantity, d);
    const int cut = std::max(model::cut_of(o, model::threshold_of(a, o), values),
                             model::cut_of(o, model::threshold_of(b, o), values));
    if (cut <= 0 || cut >= static_cast<int>(values.size())) continue;
    const int floor = values[static_cast<size_t>(cut)];  // the least value neither ignores
    for (size_t k = 0; k < s.kernels.size(); ++k) {
      model::Kernel kernel = s.kernels[k];
      if (model::quantity_of(o.quantity, kernel, d) >= floor) continue;
      model::set_quantity(o.quantity, kernel, floor, d);
      j["kernels"][k]["regs"] = kernel.regs;
      j["kernels"][k]["smem"] = kernel.smem;
      changed = true;
    }
  }
  if (!changed) return std::nullopt;
  return model::try_scenario_from_json(j, d, s.device_builtin, "lifted case");
}

}  // namespace tbcheck::search
