// Distinguishing-scenario synthesis over structures in increasing size: a simulator pre-pass per
// structure, then Z3 (witness or UNSAT, so minimality is proved); every witness re-checked by simulation
// (witness.cpp), one-kernel structures by shared lemmas (lemma_cache.cpp), pairs on workers (worker_pool.cpp).
#include "tbcheck/search/distinguish.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <map>
#include <mutex>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/effective.hpp"
#include "tbcheck/model/options.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/model/stop.hpp"
#include "lemma_cache.hpp"
#include "tbcheck/smt/synthesis.hpp"
#include "classes.hpp"
#include "control_variants.hpp"
#include "cluster_witness.hpp"
#include "witness.hpp"
#include "worker_pool.hpp"
#include "tbcheck/search/shard.hpp"

namespace tbcheck::search {

using detail::separates;
using detail::total_duration;

std::string_view to_string(PairOutcome o) {
  switch (o) {
    case PairOutcome::Separated: return "separated";
    case PairOutcome::Inseparable: return "inseparable within bounds";
    case PairOutcome::Unknown: return "unknown";
    case PairOutcome::Unsupported: return "unsupported";
  }
  return "?";
}

model::Device reduced_device(const model::Device& full, int tpcs) {
  model::Device d = full;
  d.sms = tpcs * full.sms_per_tpc;
  d.name = fmt::format("{}-{}tpc", full.name, tpcs);
  // gpc-priority needs the GPC map (seed 003 Section 4.1): that of the TPCs kept, GPCs renumbered
  // densely in their original order (so that "the lowest index on ties" picks the same GPC).
  if (!full.gpc_of_tpc.empty()) {
    d.gpc_of_tpc.assign(full.gpc_of_tpc.begin(), full.gpc_of_tpc.begin() + std::min<int>(tpcs, full.tpcs()));
    std::vector<int> ids = d.gpc_of_tpc;
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (int& g : d.gpc_of_tpc) g = static_cast<int>(std::lower_bound(ids.begin(), ids.end(), g) - ids.begin());
  }
  return d;
}

std::string first_difference(const model::Schedule& a, const model::Schedule& b) {
  for (size_t k = 0; k < a.kernels.size() && k < b.kernels.size(); ++k)
    for (size_t i = 0; i < a.kernels[k].blocks.size(); ++i) {
      const auto& x = a.kernels[k].blocks[i];
      const auto& y = b.kernels[k].blocks[i];
      if (x.sm != y.sm || x.start != y.start)
        return fmt::format("{} block {}: {} puts it on SM {} at {}, {} on SM {} at {}", a.kernels[k].name, i, a.hypothesis,
                           x.sm, x.start, b.hypothesis, y.sm, y.start);
    }
  return "";
}

namespace {

// Structures (blocks per kernel) with `kernels` kernels and `total` blocks, each kernel <= cap.
void compositions(int kernels, int total, int cap, std::vector<int>& cur, std::vector<std::vector<int>>& out) {
  if (kernels == 0) {
    if (total == 0) out.push_back(cur);
    return;
  }
  for (int b = 1; b <= std::min(cap, total - (kernels - 1)); ++b) {
    cur.push_back(b);
    compositions(kernels - 1, total - b, cap, cur, out);
    cur.pop_back();
  }
}

// Every structure within the bounds, smallest first: kernels, then total blocks.
std::vector<std::vector<int>> structures_in_order(const DistinguishBounds& b) {
  std::vector<std::vector<int>> out;
  for (int kernels = 1; kernels <= b.max_kernels; ++kernels)
    for (int total = kernels; total <= std::min(b.max_total_blocks, kernels * b.max_blocks_per_kernel); ++total) {
      std::vector<int> cur;
      compositions(kernels, total, b.max_blocks_per_kernel, cur, out);
    }
  return out;
}

std::string structure_text(const std::vector<int>& st, const model::Device& d) {
  return fmt::format("[{}] on {}", fmt::join(st, ","), d.name);
}

// Seconds of wall-clock time since t0.
double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::string_view to_string(QueryPurpose p) {
  switch (p) {
    case QueryPurpose::Pair: return "pair";
    case QueryPurpose::Shorter: return "shorter";
    case QueryPurpose::Lemma: return "lemma";
    case QueryPurpose::Cluster: return "cluster";
  }
  return "?";
}

std::string_view to_string(StructureAnswer a) {
  switch (a) {
    case StructureAnswer::Separates: return "separates";
    case StructureAnswer::Inseparable: return "inseparable";
    case StructureAnswer::Undecided: return "undecided";
  }
  return "?";
}

std::string_view to_string(Finder f) {
  switch (f) {
    case Finder::None: return "-";
    case Finder::Simulator: return "simulator";
    case Finder::Smt: return "smt";
  }
  return "?";
}

bool same_machine_on(const model::Hypothesis& h1, const model::Hypothesis& h2, const model::Device& d,
                     int max_blocks_per_kernel) {
  // The options as they act on `d` (model/options.hpp), then what the bounded structures cannot exercise.
  model::Hypothesis a = model::effective_options(h1, d), b = model::effective_options(h2, d);
  // The issue rule acts only on pair leaders, which exist only in kernels of >= 2 x SMs + 5 blocks.
  bool leaders = false;
  for (int n = 1; n <= max_blocks_per_kernel && !leaders; ++n)
    for (int i = 0; i < n && !leaders; ++i) leaders = a.leads_pair(d, n, i) || b.leads_pair(d, n, i);
  if (!leaders) a.issue = b.issue = model::Issue::Single;
  // The structures asked on `d` launch no clusters (clustered ones: cluster_witness.cpp), so the cluster
  // mechanisms never act there.
  a.cluster_gpc = b.cluster_gpc;
  a.cluster_spread = b.cluster_spread;
  return a.same_options(b);
}

std::optional<model::Scenario> simulator_search(const model::Hypothesis& h1, const model::Hypothesis& h2,
                                                const model::Device& d, const std::vector<int>& blocks,
                                                const smt::ParamBounds& params, int samples, unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const auto& regs = smt::realizable_regs();
  const int max_w = std::min(params.max_warps, d.max_threads_per_block / model::kThreadsPerWarp);
  const int max_units = d.max_smem_per_block / 128;
  model::Scenario s;
  s.device = d;
  s.device_builtin = false;
  s.kernels.resize(blocks.size());
  for (size_t k = 0; k < blocks.size(); ++k) {
    s.kernels[k].name = fmt::format("k{}", k + 1);
    s.kernels[k].blocks = blocks[k];
    // The controls are part of the structure (control_variants): one stream per kernel.
    if (k < params.priorities.size() && params.priorities[k]) {
      s.kernels[k].priority = params.priorities[k];
      s.kernels[k].stream = static_cast<int>(k);
    }
    if (k < params.tpcs.size()) s.kernels[k].tpcs = params.tpcs[k];
  }
  // The decisive values sit on boundaries (warps at multiples of the PB count, shared memory at
  // configuration edges, registers at the allocation steps), so those are drawn often.
  for (int n = 0; n < samples; ++n) {
    if (n % 256 == 0) model::throw_if_stopped();  // thousands of simulations per structure
    for (size_t k = 0; k < blocks.size(); ++k) {
      auto& kr = s.kernels[k];
      if (k > 0 && pick(0, 3) == 0) {  // a copy of an earlier kernel, as the paper's cases use
        const auto& from = s.kernels[static_cast<size_t>(pick(0, static_cast<int>(k) - 1))];
        kr.threads = from.threads;
        kr.regs = from.regs;
        kr.smem = from.smem;
      } else {
        int w = pick(0, 2) == 0 ? std::min(max_w, 4 * pick(1, 8)) : pick(0, 1) ? pick(1, std::min(max_w, 8)) : pick(1, max_w);
        kr.threads = model::kThreadsPerWarp * std::max(1, w);
        if (!params.vary_regs) kr.regs = 32;
        else {
          int r = pick(0, 5);
          kr.regs = r == 0 ? 32 : r == 1 ? 255 : r == 2 ? 64 : regs[static_cast<size_t>(pick(0, static_cast<int>(regs.size()) - 1))];
          if (kr.regs > d.max_regs_per_thread) kr.regs = 32;
        }
        if (!params.vary_smem) kr.smem = 0;
        else {
          int m = pick(0, 4);
          int kb = d.smem_configs_kb[static_cast<size_t>(pick(0, static_cast<int>(d.smem_configs_kb.size()) - 1))];
          int bytes = m == 0 ? 0
                      : m == 1 ? 1024 * pick(1, 16)
                      : m == 2 ? (kb * 1024 / pick(1, 4)) - d.smem_reserved_per_block - 128 * pick(0, 1)
                               : 128 * pick(0, max_units);
          kr.smem = std::clamp(bytes, 0, max_units * 128);
        }
      }
      kr.duration = pick(1, params.max_duration);
      kr.local = params.max_local > 0 && pick(0, 3) == 0 ? pick(0, params.max_local) : 0;
    }
    if (separates(s, h1, h2)) return s;
  }
  return std::nullopt;
}

namespace {

// One pair's search (distinguish_pair): structures smallest first on each reduced device, by the
// simulator pre-pass, shared lemmas and Z3; then random structures beyond the bounds; then the verdict.
// The state the steps share (Z3 time against the budget, the result being filled) lives here.
class PairSearch {
 public:
  PairSearch(const model::Hypothesis& h1, const model::Hypothesis& h2, const model::Device& full,
             const DistinguishBounds& b, LemmaCache& lemmas, detail::OneKernelTables& tables)
      : h1_(h1), h2_(h2), full_(full), b_(b), lemmas_(lemmas), tables_(tables), t0_(std::chrono::steady_clock::now()) {
    r_.h1 = h1.name;
    r_.h2 = h2.name;
    bounds_text_ = fmt::format("kernels <= {}, blocks <= {} per kernel and {} in all, durations <= {}, warps <= {}",
                               b.max_kernels, b.max_blocks_per_kernel, b.max_total_blocks, b.params.max_duration,
                               b.params.max_warps);
  }

  PairResult run() {
    if (!runs_on_device()) return r_;
    try {
      smt::check_encodable(h1_);
      smt::check_encodable(h2_);
    } catch (const smt::Unsupported& e) {
      unsupported_ = e.what();
    }
    if (h1_.same_options(h2_)) {
      // Same options, same machine: no query needed, but say so rather than "unknown".
      r_.outcome = PairOutcome::Inseparable;
      r_.reason = "the two hypotheses choose the same option for every mechanism";
      r_.minimal_proved = true;
      return r_;
    }
    if (detail::cluster_pair(h1_, h2_, full_) && clustered()) return r_;
    if (b_.wide_first && beyond_bounds()) return r_;
    if (within_bounds()) return r_;
    if (beyond_bounds()) return r_;
    if (dependent_) {
      record_dependent();
      return r_;
    }
    return verdict();
  }

 private:
  // A hypothesis that cannot run on the device at all (fermi needs a GPC map) separates nothing there.
  bool runs_on_device() {
    for (const auto* h : {&h1_, &h2_}) {
      model::Scenario probe;
      probe.device = full_;
      probe.kernels.push_back(model::Kernel{});
      probe.kernels.back().name = "k1";
      model::FeasibilityCheck f = model::check_feasibility(probe, *h);
      if (!f.runs()) {
        r_.outcome = PairOutcome::Unsupported;
        r_.reason = fmt::format("{} cannot run on {}: {}", h->name, full_.name, f.reason);
        return false;
      }
    }
    return true;
  }

  int64_t budget_left_ms() const {
    if (b_.pair_budget_ms == 0) return INT64_MAX;
    return static_cast<int64_t>(b_.pair_budget_ms) - static_cast<int64_t>(z3_seconds_ * 1000);
  }

  // The options of every Z3 query of this pair: the bounds and term sort of the run, a time limit.
  smt::QueryOptions query_options(unsigned timeout_ms) const {
    smt::QueryOptions o;
    o.bounds = b_.params;
    o.timeout_ms = timeout_ms;
    o.sort = b_.sort;
    return o;
  }

  // Runs one Z3 query within the per-query timeout and what is left of the pair budget.
  smt::QueryResult query(const model::Device& reduced, const std::vector<int>& st, smt::QueryOptions o,
                         QueryPurpose purpose = QueryPurpose::Pair) {
    int64_t left = budget_left_ms();
    if (left <= 0) {
      smt::QueryResult q;
      q.outcome = smt::QueryOutcome::Unknown;
      q.reason = fmt::format("pair budget of {} ms spent", b_.pair_budget_ms);
      return q;
    }
    o.timeout_ms = static_cast<unsigned>(std::min<int64_t>(o.timeout_ms, left));
    smt::QueryResult q = smt::distinguish_structure(h1_, h2_, reduced, st, o);
    z3_seconds_ += q.seconds;
    note_query(st, reduced, purpose, q);
    return q;
  }

  void note_query(const std::vector<int>& st, const model::Device& d, QueryPurpose purpose, const smt::QueryResult& q) {
    StructureAnswer a = StructureAnswer::Undecided;
    switch (q.outcome) {
      case smt::QueryOutcome::Found: a = StructureAnswer::Separates; break;
      case smt::QueryOutcome::None: a = StructureAnswer::Inseparable; break;
      case smt::QueryOutcome::Unknown:
      case smt::QueryOutcome::Unsupported: break;
    }
    r_.queries.push_back({structure_text(st, d), purpose, a, q.seconds});
  }

  // The pair is separated by `found` (checked by the caller): the case, made robust to tied retirements
  // where its durations can be staggered, and the figures of the result.
  void record_witness(const model::Scenario& found, Finder finder, std::string route) {
    RobustWitness robust = robust_of(found);
    const model::Scenario& witness = robust.scenario;
    r_.ties = robust.ties;
    r_.ties_beyond_max_duration = robust.beyond_max_duration;
    r_.ties_orders = robust.orders;
    model::Case c;
    c.scenario = witness;
    c.id = fmt::format("synth-{}-{}-vs-{}", full_.name, h1_.name, h2_.name);
    c.source = "synthesized";
    r_.witness = c;
    r_.found_by = finder;
    r_.route = std::move(route);
    r_.outcome = PairOutcome::Separated;
    r_.kernels = static_cast<int>(witness.kernels.size());
    r_.blocks = witness.total_blocks();
    r_.total_duration = total_duration(witness);
    r_.first_difference = first_difference(model::simulate(witness, h1_), model::simulate(witness, h2_));
    r_.solver_seconds = z3_seconds_ + lemma_seconds_;
    r_.wall_seconds = since(t0_);
  }

  // A witness on the reduced device: re-checked by both simulators, truncated after the first
  // difference, durations shortened, lifted to the full device and re-checked there. A witness whose
  // every separating lift rests on tied retirements is not taken: the first such one is kept (dependent_)
  // for when no robust one turns up, and `last_dependent_` tells the caller why nothing was accepted.
  bool accept(const model::Scenario& found, Finder finder, int tpcs, bool minimal, const std::string& note) {
    last_dependent_ = false;
    // Never trust the model alone: the simulators must disagree on the reduced device ...
    if (!separates(found, h1_, h2_)) {
      r_.outcome = PairOutcome::Unknown;
      r_.reason = fmt::format("internal: the witness {} does not separate the simulators", found.to_json().dump());
      return false;
    }
    const Lifted l = lift_robustly(found, tpcs);
    const int f = l.robust ? *l.robust : l.dependent ? *l.dependent : 0;
    if (f == 0) return false;
    const std::string by = finder == Finder::Smt ? "Z3" : "simulator search";
    std::string route = f == 1 ? fmt::format("{} on {} TPC(s), disagrees unlifted on {}", by, tpcs, full_.name)
                               : fmt::format("{} on {} TPC(s), lifted x{} to {}", by, tpcs, f, full_.name);
    std::vector<int> structure;
    for (const auto& k : l.best.kernels) structure.push_back(k.blocks);
    if (!l.robust) {
      last_dependent_ = true;
      last_dependent_where_ = structure_text(structure, reduced_device(full_, tpcs));
      if (!dependent_)
        dependent_ = Dependent{detail::lift(l.best, full_, f), finder, std::move(route), structure, minimal, note,
                               r_.unknown_structures.size(), structure_text(structure, reduced_device(full_, tpcs))};
      return false;
    }
    record_witness(detail::lift(l.best, full_, f), finder, std::move(route));
    r_.structure = std::move(structure);
    r_.minimal_proved = minimal && !dependent_;
    r_.reason = note;
    if (!unsupported_.empty()) r_.reason = (note.empty() ? "" : note + "; ") + "minimality not proved: " + unsupported_;
    if (dependent_) {
      r_.smaller_tie_dependent = dependent_->where;
      r_.reason = (r_.reason.empty() ? "" : r_.reason + "; ") +
                  fmt::format("the smallest witness that holds under every order of tied retirements: {} separates "
                              "the pair only through them",
                              dependent_->where);
    }
    return true;
  }

  // How a reduced-device witness lifts: truncated and shortened, then the lift factors in order (the
  // exact one, one more where the TPCs do not divide, unlifted); the first that separates and holds under
  // tied retirements, else the first that separates. A lifted witness repeats the case on every TPC, so
  // blocks of one kernel end together on many SMs, which robust_witness cannot stagger apart.
  struct Lifted {
    model::Scenario best;         // truncated and shortened, on the reduced device
    std::optional<int> robust;    // the factor taken
    std::optional<int> dependent; // the first separating factor, when none is robust
  };
  Lifted lift_robustly(const model::Scenario& found, int tpcs) const {
    Lifted l{detail::shorten(detail::truncate_after_difference(found, h1_, h2_), h1_, h2_), std::nullopt, std::nullopt};
    const int exact = full_.tpcs() / tpcs;
    std::vector<int> factors = {exact};
    if (exact * tpcs != full_.tpcs()) factors.push_back(exact + 1);
    factors.push_back(1);
    for (int f : factors) {
      const model::Scenario lifted = detail::lift(l.best, full_, f);
      if (!separates(lifted, h1_, h2_)) continue;
      if (robust_of(lifted).ties == WitnessTies::Dependent) {
        if (!l.dependent) l.dependent = f;
        continue;
      }
      l.robust = f;
      l.dependent.reset();
      return l;
    }
    return l;
  }

  // robust_witness of a scenario, once per pair: the same lifted witness is judged again when a deeper
  // search compares it, when it is accepted and when it is recorded, and the order search that judges
  // a tie-dependent one simulates every admissible order of its retirements on the full device.
  const RobustWitness& robust_of(const model::Scenario& s) const {
    std::string key = s.to_json().dump();
    auto it = robust_cache_.find(key);
    if (it == robust_cache_.end())
      it = robust_cache_.emplace(std::move(key), robust_witness(s, h1_, h2_, b_.params.max_duration)).first;
    return it->second;
  }

  // After a structure's witness rested on tied retirements: more simulator samples of that structure
  // (other seeds), each accepted only when robust; true when one is.
  bool robust_retry(const model::Device& reduced, const std::vector<int>& st, const smt::ParamBounds& params, int tpcs,
                    bool minimal, unsigned seed) {
    for (int round = 1; round <= kRobustRounds; ++round) {
      auto again = simulator_search(h1_, h2_, reduced, st, params, b_.sim_samples > 0 ? b_.sim_samples : 3000,
                                    seed + static_cast<unsigned>(round) * 104729u);
      if (again && accept(*again, Finder::Simulator, tpcs, minimal, "")) return true;
    }
    return false;
  }

  static std::vector<int> found_structure(const model::Scenario& s) {
    std::vector<int> st;
    for (const auto& k : s.kernels) st.push_back(k.blocks);
    return st;
  }

  // No robust witness anywhere: the first tie-dependent one, with the minimality it had when found.
  void record_dependent() {
    const Dependent& d = *dependent_;
    record_witness(d.lifted, d.finder, d.route);
    r_.structure = d.structure;
    r_.minimal_proved = d.minimal;
    r_.found_beyond_bounds = false;
    r_.unknown_structures.resize(std::min(r_.unknown_structures.size(), d.unknown_before));
    r_.reason = d.note;
    if (!unsupported_.empty()) r_.reason = (d.note.empty() ? "" : d.note + "; ") + "minimality not proved: " + unsupported_;
    r_.robust_search = fmt::format(
        "none found: every witness sampled within the bounds after this one ({} more rounds of the structure, "
        "then the larger structures) and {} random scenarios beyond them rests on tied retirements or does not separate",
        kRobustRounds, b_.wide_samples);
  }

  // The schedule both hypotheses give `st` when lemmas prove it fixed under each (and the two equal).
  std::optional<smt::FixedSchedule> common_fixed(const std::vector<int>& st, const model::Device& reduced) {
    if (b_.enumerate_one_kernel && st.size() == 1) {
      // By exhaustion over each hypothesis' one-kernel table where it covers both (classes.hpp): no Z3 time.
      const auto t = std::chrono::steady_clock::now();
      const auto e1 = detail::constant_one_kernel_schedule(tables_, h1_, reduced, st.front(), b_.params);
      const auto e2 = detail::constant_one_kernel_schedule(tables_, h2_, reduced, st.front(), b_.params);
      r_.enumeration_seconds += since(t);
      auto decided = [](detail::Constancy c) {
        switch (c) {
          case detail::Constancy::Constant:
          case detail::Constancy::Varies: return true;
          case detail::Constancy::NotCovered: return false;
        }
        return false;
      };
      if (decided(e1.outcome) && decided(e2.outcome)) {
        if (e1.outcome == detail::Constancy::Constant && e2.outcome == detail::Constancy::Constant &&
            e1.schedule == e2.schedule)
          return e1.schedule;
        return std::nullopt;
      }
    }
    const smt::QueryOptions o = query_options(b_.lemma_timeout_ms);
    double s1 = 0, s2 = 0;
    auto c1 = lemmas_.constant_schedule(h1_, reduced, st, o, s1);
    auto c2 = c1 ? lemmas_.constant_schedule(h2_, reduced, st, o, s2) : std::nullopt;
    lemma_seconds_ += s1 + s2;
    const bool common = c1 && c2 && *c1 == *c2;
    if (s1 + s2 > 0)
      r_.queries.push_back({structure_text(st, reduced), QueryPurpose::Lemma,
                            common ? StructureAnswer::Inseparable : StructureAnswer::Undecided, s1 + s2});
    if (common) return c1;
    return std::nullopt;
  }

  // The same for every block of `st` but the last: facts for the pair query (QueryOptions::prefix).
  // Only where the dispatcher does not look ahead (the pair query refuses pair leaders already).
  std::optional<smt::FixedSchedule> known_prefix(const std::vector<int>& st, const model::Device& reduced) {
    if (b_.lemma_timeout_ms == 0) return std::nullopt;
    for (const auto* h : {&h1_, &h2_})
      if (model::is_fermi(h->selection)) return std::nullopt;  // looks ahead (seed 003 wave)
    std::vector<int> prefix = st;
    if (--prefix.back() == 0) prefix.pop_back();
    // One-kernel prefixes only: with two kernels the second one's place depends on whether it fits
    // beside the first, so such lemmas fail, and asking costs up to the lemma timeout each.
    if (prefix.size() != 1) return std::nullopt;
    return common_fixed(prefix, reduced);
  }

  // Every structure within the bounds on every reduced device, smallest first; true when r_ is final
  // (a witness, or an internal error said in the reason).
  bool within_bounds() {
    const auto structures = structures_in_order(b_);
    for (int tpcs : b_.reduced_tpcs) {
      if (tpcs > full_.tpcs()) continue;
      model::Device reduced = reduced_device(full_, tpcs);
      if (same_machine_on(h1_, h2_, reduced, b_.max_blocks_per_kernel)) {
        r_.structures_unsat += static_cast<int>(structures.size());  // by the options, not by Z3
        continue;
      }
      bool device_all_unsat = true;
      // Structures of this device neither separated nor proved inseparable, with where each one's entry
      // sits in r_.unknown_structures.
      std::vector<std::pair<size_t, size_t>> undecided;
      const size_t device_first_unknown = r_.unknown_structures.size();
      for (size_t si = 0; si < structures.size(); ++si) {
        model::throw_if_stopped();
        // The structure with each assignment of priorities and masks that can matter; none
        // when the pair differs only in those and no assignment of this size can separate it.
        const auto variants = detail::control_variants(h1_, h2_, reduced, static_cast<int>(structures[si].size()), b_.params);
        if (variants.empty()) ++r_.structures_unsat;  // by the options, not by Z3
        for (const smt::ParamBounds& params : variants) {
        const auto& st = structures[si];
        // A structure with priorities or masks; lemmas and prefixes are about plain structures.
        const bool plain = params.priorities.empty() && params.tpcs.empty();
        std::optional<model::Scenario> found;
        Finder finder = Finder::None;
        std::string not_enumerated;  // why the enumeration left this structure to Z3, for the undecided list
        if (b_.sim_samples > 0) {
          ++r_.structures_sampled;
          found = simulator_search(h1_, h2_, reduced, st, params, b_.sim_samples, b_.seed + static_cast<unsigned>(si) * 7919u);
          if (found) finder = Finder::Simulator;
        }
        if (found && !undecided.empty() && b_.deep_samples > 0) {
          // A witness here, but smaller structures are undecided: sample those harder first, so that
          // the witness reported is the smallest the simulators can find.
          for (auto [u, pos] : undecided) {
            auto smaller = simulator_search(h1_, h2_, reduced, structures[u], params, b_.deep_samples,
                                            b_.seed * 7u + static_cast<unsigned>(u) * 104729u);
            // A smaller witness that rests on tied retirements does not replace one that may not.
            if (smaller && !lift_robustly(*smaller, tpcs).robust && lift_robustly(*found, tpcs).robust) smaller.reset();
            if (smaller) {  // the entries from u on are no longer smaller than the witness
              found = smaller;
              r_.unknown_structures.erase(r_.unknown_structures.begin() + static_cast<long>(pos), r_.unknown_structures.end());
              device_all_unsat = pos == device_first_unknown;
              break;
            }
          }
        }
        if (!found && plain && (st.size() == 1 ? b_.enumerate_one_kernel : b_.max_enumerated > 0)) {
          // Decided by simulating one representative of every parameter class, a proof by exhaustion
          // (classes.hpp; the argument in docs/synthesis.md), with or without Z3; a structure whose
          // enumeration is over the limit goes on to the lemmas and Z3.
          const auto t = std::chrono::steady_clock::now();
          detail::EnumerationResult e =
              detail::enumerate_structure(h1_, h2_, reduced, st, params, b_.max_enumerated, &tables_);
          r_.enumeration_seconds += since(t);
          switch (e.outcome) {
            case detail::Enumerated::Inseparable:
              ++r_.structures_unsat;
              ++r_.structures_by_enumeration;
              continue;
            case detail::Enumerated::Separates:
              found = std::move(e.witness);
              finder = Finder::Simulator;
              break;
            case detail::Enumerated::NotCovered: break;
            case detail::Enumerated::OverLimit:
              ++r_.structures_over_limit;
              not_enumerated = "; not enumerated: " + e.reason;
              break;
          }
        }
        if (!found && unsupported_.empty() && plain && st.size() == 1 && b_.lemma_timeout_ms > 0) {
          // One kernel: both hypotheses proved to give the structure one fixed schedule cannot differ
          // on it (see LemmaCache); cheaper than the pair query and shared with the other pairs.
          if (common_fixed(st, reduced)) {
            ++r_.structures_unsat;
            ++r_.structures_by_lemma;
            continue;
          }
        }
        if (!found && unsupported_.empty()) {
          smt::QueryOptions o = query_options(b_.timeout_ms);
          o.bounds = params;
          if (plain) o.prefix = known_prefix(st, reduced);
          smt::QueryResult q = query(reduced, st, o);
          if (q.outcome == smt::QueryOutcome::Unknown || q.outcome == smt::QueryOutcome::Unsupported) {
            device_all_unsat = false;
            undecided.emplace_back(si, r_.unknown_structures.size());
            r_.unknown_structures.push_back(fmt::format("{}: {}{}", structure_text(st, reduced), q.reason, not_enumerated));
            continue;
          }
          if (q.outcome == smt::QueryOutcome::None) {
            ++r_.structures_unsat;
            continue;
          }
          if (q.outcome != smt::QueryOutcome::Found) continue;
          // Minimise the total duration at this structure; each step is proved by the next query.
          found = shortest(reduced, st, o, q.scenario);
          finder = Finder::Smt;
        } else if (!found) {
          device_all_unsat = false;
          undecided.emplace_back(si, r_.unknown_structures.size());
          r_.unknown_structures.push_back(fmt::format("{}: no SMT encoding, and {} random scenarios did not separate{}",
                                                      structure_text(st, reduced), b_.sim_samples, not_enumerated));
          continue;
        }
        const bool minimal = all_unsat_so_far_ && device_all_unsat && unsupported_.empty();
        if (accept(*found, finder, tpcs, minimal, "")) return true;
        if (r_.outcome == PairOutcome::Unknown && !r_.reason.empty()) return true;  // internal error, said in the reason
        // A deeper search may have put a smaller structure's witness in `found`: the retries are of its structure.
        const bool dependent = last_dependent_;
        if (dependent && robust_retry(reduced, found_structure(*found), params, tpcs, minimal,
                                      b_.seed + static_cast<unsigned>(si) * 7919u))
          return true;
        device_all_unsat = false;
        r_.unknown_structures.push_back(
            dependent ? fmt::format("{}: separates, but only through tied retirements (its witness and {} further "
                                    "simulator searches of it)",
                                    last_dependent_where_, kRobustRounds)
                : fmt::format("{}: separates on the reduced device but lifting lost it", structure_text(st, reduced)));
        }
      }
      all_unsat_so_far_ = all_unsat_so_far_ && device_all_unsat;
    }
    return false;
  }

  // A pair that differs in a cluster mechanism: clustered structures on two-GPC devices,
  // fewest blocks first, each sampled by the simulators and then asked of Z3 with its cluster dims fixed.
  // A witness stays on its small device (lifting would change its GPCs); it is the smallest clustered
  // structure when Z3 answered none for every structure before it. Nothing found: the plain structures
  // follow (within_bounds), where the cluster options act alike, and the verdict covers both.
  bool clustered() {
    const int samples = std::max(200, b_.sim_samples / 10);
    std::mt19937 rng(b_.seed);
    for (const auto& st : detail::cluster_structures())
      for (const auto& d : detail::cluster_devices(full_)) {
        ++cluster_structures_asked_;
        std::optional<model::Scenario> found = detail::cluster_sample(h1_, h2_, d, st, samples, rng);
        Finder finder = found ? Finder::Simulator : Finder::None;
        const std::string where = fmt::format("{} on {}", st.text(), d.name);
        if (!found && !unsupported_.empty()) {
          all_unsat_so_far_ = false;
          r_.unknown_structures.push_back(
              fmt::format("{}: no SMT encoding, and {} random scenarios did not separate", where, samples));
          continue;
        }
        if (!found) {
          smt::QueryOptions o = query_options(b_.timeout_ms);
          o.bounds = st.bounds(b_.params);
          const smt::QueryResult q = query(d, st.blocks(), o, QueryPurpose::Cluster);
          switch (q.outcome) {
            case smt::QueryOutcome::None: ++r_.structures_unsat; continue;
            case smt::QueryOutcome::Unknown:
            case smt::QueryOutcome::Unsupported:
              all_unsat_so_far_ = false;
              r_.unknown_structures.push_back(fmt::format("{}: {}", where, q.reason));
              continue;
            case smt::QueryOutcome::Found: found = shortest(d, st.blocks(), o, q.scenario); finder = Finder::Smt; break;
          }
        }
        if (!separates(*found, h1_, h2_)) {
          r_.outcome = PairOutcome::Unknown;
          r_.reason = fmt::format("internal: the witness {} does not separate the simulators", found->to_json().dump());
          return true;
        }
        record_witness(detail::shorten(*found, h1_, h2_), finder,
                       fmt::format("{} over clustered structures on {} (two GPCs of {}), not lifted",
                                   finder == Finder::Smt ? "Z3" : "simulator search", d.name, full_.name));
        r_.structure = st.blocks();
        r_.minimal_proved = all_unsat_so_far_;
        r_.reason = all_unsat_so_far_ ? "the smallest clustered structure: Z3 found none on every smaller one"
                                      : "not proved the smallest clustered structure: " + r_.unknown_structures.front();
        return true;
      }
    return false;
  }

  // The Z3 witness `found` of `st` on `d` with the least total duration, each step proved by a query.
  model::Scenario shortest(const model::Device& d, const std::vector<int>& st, smt::QueryOptions o, model::Scenario found) {
    for (int limit = total_duration(found) - 1; limit >= static_cast<int>(st.size()); limit = total_duration(found) - 1) {
      o.max_total_duration = limit;
      const smt::QueryResult shorter = query(d, st, o, QueryPurpose::Shorter);
      if (shorter.outcome != smt::QueryOutcome::Found) break;
      found = shorter.scenario;
    }
    return found;
  }

  // Nothing within the bounds (or undecided there): random structures beyond them, by simulation
  // only. A witness found here is real but not minimal; "within bounds" stays what was proved.
  bool beyond_bounds() {
    if (b_.wide_samples <= 0) return false;
    std::mt19937 rng(b_.seed * 31u + 17u);
    // The reduced devices, then the full one ("search on the full device directly"): some
    // options differ only on more SMs than a reduced device has (with one SM per TPC, quadro6000's
    // 1- and 2-TPC devices have 1 and 2 SMs, where even-first is the natural order).
    std::vector<int> wide_tpcs = b_.reduced_tpcs;
    if (std::all_of(wide_tpcs.begin(), wide_tpcs.end(), [&](int t) { return t < full_.tpcs(); }))
      wide_tpcs.push_back(full_.tpcs());
    for (int tpcs : wide_tpcs) {
      if (tpcs > full_.tpcs()) continue;
      model::Device reduced = tpcs == full_.tpcs() ? full_ : reduced_device(full_, tpcs);
      const int per = 40, rounds = std::max(1, b_.wide_samples / per);
      for (int round = 0; round < rounds; ++round) {
        model::throw_if_stopped();
        std::vector<int> st(static_cast<size_t>(std::uniform_int_distribution<int>(1, b_.max_kernels)(rng)));
        for (auto& x : st) x = std::uniform_int_distribution<int>(1, 4 * reduced.sms + 8)(rng);
        auto found = simulator_search(h1_, h2_, reduced, st, b_.params, per, b_.seed + static_cast<unsigned>(round));
        if (!found) continue;
        std::string note = all_unsat_so_far_ && unsupported_.empty()
                               ? fmt::format("found beyond the bounds; none exists within them ({})", bounds_text_)
                               : "found beyond the bounds by simulation";
        if (accept(*found, Finder::Simulator, tpcs, false, note)) {
          r_.found_beyond_bounds = true;
          return true;
        }
      }
    }
    return false;
  }

  // No witness: inseparable within the bounds, unsupported, or unknown.
  PairResult verdict() {
    r_.solver_seconds = z3_seconds_ + lemma_seconds_;
    r_.wall_seconds = since(t0_);
    if (all_unsat_so_far_) {
      r_.outcome = PairOutcome::Inseparable;
      r_.reason = fmt::format("no distinguishing scenario within bounds ({}) on reduced devices of {} TPC(s)", bounds_text_,
                              fmt::join(b_.reduced_tpcs, ", "));
      if (cluster_structures_asked_ > 0)
        r_.reason += fmt::format(", nor on {} clustered structure(s) on two-GPC devices", cluster_structures_asked_);
      if (b_.wide_samples > 0)
        r_.reason += fmt::format("; {} random scenarios beyond the bounds on those and on {} did not separate either",
                                 b_.wide_samples, full_.name);
      r_.minimal_proved = true;
      return r_;
    }
    if (!unsupported_.empty()) {
      r_.outcome = PairOutcome::Unsupported;
      r_.reason = fmt::format("{}; the simulator pre-pass ({} scenarios per structure, {}) found no separating scenario",
                              unsupported_, b_.sim_samples, bounds_text_);
      return r_;
    }
    r_.outcome = PairOutcome::Unknown;
    r_.reason = fmt::format("Z3 could not decide {} structure(s) within {} ms each (first: {})", r_.unknown_structures.size(),
                            b_.timeout_ms, r_.unknown_structures.empty() ? "-" : r_.unknown_structures.front());
    return r_;
  }

  mutable std::map<std::string, RobustWitness> robust_cache_;  // robust_of's answers, by the scenario's JSON
  const model::Hypothesis& h1_;
  const model::Hypothesis& h2_;
  const model::Device& full_;
  const DistinguishBounds& b_;
  LemmaCache& lemmas_;
  detail::OneKernelTables& tables_;
  const std::chrono::steady_clock::time_point t0_;
  PairResult r_;
  std::string bounds_text_;
  std::string unsupported_;     // why Z3 cannot encode one of the two ("": it can)
  double z3_seconds_ = 0;       // against the pair budget
  double lemma_seconds_ = 0;    // constant-schedule lemmas this pair asked first (beyond the budget)
  bool all_unsat_so_far_ = true;  // every smaller structure, on every smaller device, proved inseparable
  int cluster_structures_asked_ = 0;  // clustered structures (clustered()) before the plain ones
  // The first witness that separated only through tied retirements, as accept() would have recorded it.
  struct Dependent {
    model::Scenario lifted;
    Finder finder = Finder::None;
    std::string route;
    std::vector<int> structure;
    bool minimal = false;
    std::string note;
    size_t unknown_before = 0;  // r_.unknown_structures' size then: the structures smaller than it
    std::string where;          // "[2,3] on rtx3090-1tpc"
  };
  std::optional<Dependent> dependent_;
  bool last_dependent_ = false;  // the last accept() refused a witness for resting on tied retirements
  std::string last_dependent_where_;  // that witness' structure ("[2,3] on rtx3090-1tpc")
  static constexpr int kRobustRounds = 10;  // further simulator searches of a structure whose witness was tie-dependent
};

}  // namespace

PairResult distinguish_pair(const model::Hypothesis& h1, const model::Hypothesis& h2, const model::Device& full,
                            const DistinguishBounds& b, LemmaCache* lemmas, detail::OneKernelTables* tables) {
  LemmaCache own;
  detail::OneKernelTables own_tables;
  return PairSearch(h1, h2, full, b, lemmas ? *lemmas : own, tables ? *tables : own_tables).run();
}

std::string minimality_text(const PairResult& r) {
  // Both labels: not the smallest witness, and how far it is shown the smallest robust one (the smaller
  // tie-dependent structure is among the undecided ones: sampling cannot prove it has no robust witness).
  if (!r.smaller_tie_dependent.empty())
    return fmt::format("not minimal ({} separates only through tied retirements); smallest robust: {}",
                       r.smaller_tie_dependent,
                       r.found_beyond_bounds ? std::string("not claimed (found beyond the bounds)")
                                             : fmt::format("bounded ({} undecided)", r.unknown_structures.size()));
  if (r.minimal_proved) return "proved";
  if (r.found_beyond_bounds) return "not claimed (found beyond the bounds)";
  return fmt::format("bounded ({} undecided)", r.unknown_structures.size());
}

std::vector<PairResult> distinguish_all(const std::vector<model::Hypothesis>& hs, const model::Device& full,
                                        const DistinguishBounds& b, int jobs,
                                        const std::function<void(const PairResult&)>& done) {
  return distinguish_pairs(hs, all_pairs(hs.size()), full, b, jobs, done);
}

std::vector<PairResult> distinguish_pairs(const std::vector<model::Hypothesis>& hs,
                                          const std::vector<std::pair<size_t, size_t>>& pairs, const model::Device& full,
                                          const DistinguishBounds& b, int jobs,
                                          const std::function<void(const PairResult&)>& done) {
  std::vector<PairResult> out(pairs.size());
  std::mutex report;  // `done` is never called from two threads at once
  LemmaCache lemmas;  // one per run: a hypothesis' lemma serves all its pairs
  detail::OneKernelTables tables;  // likewise its one-kernel schedules
  detail::run_on_workers(pairs.size(), jobs, [&](size_t k) {
    out[k] = distinguish_pair(hs[pairs[k].first], hs[pairs[k].second], full, b, &lemmas, &tables);
    std::lock_guard<std::mutex> lock(report);
    if (done) done(out[k]);
  });
  return out;
}

model::json case_json(const PairResult& r, const DistinguishBounds& b, const model::Hypothesis& h1,
                      const model::Hypothesis& h2) {
  model::json j = r.witness->to_json();
  model::Schedule s1 = model::simulate(r.witness->scenario, h1), s2 = model::simulate(r.witness->scenario, h2);
  j["observation"] = {{"kind", "synthetic"}};
  j["notes"] = fmt::format("separates {} from {}; first difference: {}", h1.name, h2.name, r.first_difference);
  j["route"] = r.route;
  j["solver_seconds"] = r.solver_seconds;
  j["first_difference"] = r.first_difference;
  j["bounds"] = {{"max_kernels", b.max_kernels},
                 {"max_blocks_per_kernel", b.max_blocks_per_kernel},
                 {"max_total_blocks", b.max_total_blocks},
                 {"max_duration", b.params.max_duration},
                 {"max_warps", b.params.max_warps},
                 {"timeout_ms", b.timeout_ms},
                 {"minimal_proved", r.minimal_proved},
                 {"minimality", minimality_text(r)},
                 {"simulator_samples_per_structure", b.sim_samples},
                 {"found_by", to_string(r.found_by)},  // inside bounds: the case loader knows no other field
                 {"pair_budget_ms", b.pair_budget_ms},
                 {"undecided_smaller_structures", r.unknown_structures}};
  j["predictions"] = {{h1.name, s1.to_json()}, {h2.name, s2.to_json()}};
  // Whether the predictions hold when blocks ending together retire one at a time (search/ties.hpp).
  j["tied_retirements"] = tied_retirements_json(r.witness->scenario, h1, h2, r.ties, r.ties_beyond_max_duration,
                                                r.ties_orders);
  if (!r.smaller_tie_dependent.empty()) {
    j["tied_retirements"]["minimality"] = "smallest robust";
    j["tied_retirements"]["smaller_tie_dependent"] = r.smaller_tie_dependent;
  }
  if (!r.robust_search.empty()) j["tied_retirements"]["robust_search"] = r.robust_search;
  return j;
}

}  // namespace tbcheck::search
