// Distinguishing-scenario synthesis over structures in increasing size: a simulator pre-pass per
// structure, then Z3 (witness or UNSAT, so minimality is proved); every witness re-checked by simulation.
#include "tbcheck/search/distinguish.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <exception>
#include <future>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/shard.hpp"

namespace tbcheck::search {

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

int total_duration(const model::Scenario& s) {
  int t = 0;
  for (const auto& k : s.kernels) t += k.duration;
  return t;
}

// Replicates the scenario per TPC: every kernel's block count times `factor`.
model::Scenario lift(const model::Scenario& s, const model::Device& full, int factor) {
  model::Scenario out = s;
  out.device = full;
  out.device_builtin = true;
  for (auto& k : out.kernels) k.blocks *= factor;
  return out;
}

// Kernel completion instants of a schedule are distinct unless the kernels start together and share
// a duration (the same rule the Z3 query states): otherwise hardware order of completion is a race.
bool realizable(const model::Scenario& s, const model::Schedule& sch) {
  const size_t nk = s.kernels.size();
  std::vector<int64_t> first(nk), last(nk);
  for (size_t k = 0; k < nk; ++k) {
    first[k] = sch.kernels[k].blocks.front().start;
    last[k] = 0;
    for (const auto& b : sch.kernels[k].blocks) last[k] = std::max(last[k], b.end);
  }
  for (size_t a = 0; a < nk; ++a)
    for (size_t b = a + 1; b < nk; ++b)
      if (last[a] == last[b] && !(first[a] == first[b] && s.kernels[a].duration == s.kernels[b].duration)) return false;
  return true;
}

// Both simulators accept it, their schedules differ, and both are realizable.
bool separates(const model::Scenario& s, const model::Hypothesis& a, const model::Hypothesis& b) {
  try {
    model::Schedule x = model::simulate(s, a), y = model::simulate(s, b);
    return !first_difference(x, y).empty() && realizable(s, x) && realizable(s, y);
  } catch (const model::InputError&) {
    return false;  // infeasible under one of them: not a usable witness
  }
}

// Lowers each kernel's duration while the scenario still separates (greedy, by simulation only).
model::Scenario shorten(model::Scenario s, const model::Hypothesis& a, const model::Hypothesis& b) {
  for (bool again = true; again;) {
    again = false;
    for (auto& k : s.kernels)
      while (k.duration > 1) {
        --k.duration;
        if (separates(s, a, b)) {
          again = true;
          continue;
        }
        ++k.duration;
        break;
      }
  }
  return s;
}

// Drops every block after the first one on which the schedules differ (the dispatcher never looks
// ahead, so the prefix still differs there); kept only when the shorter scenario still separates.
model::Scenario truncate_after_difference(const model::Scenario& s, const model::Hypothesis& a, const model::Hypothesis& b) {
  model::Schedule x = model::simulate(s, a), y = model::simulate(s, b);
  for (size_t k = 0; k < s.kernels.size(); ++k)
    for (size_t i = 0; i < x.kernels[k].blocks.size(); ++i)
      if (!(x.kernels[k].blocks[i] == y.kernels[k].blocks[i])) {
        model::Scenario t = s;
        t.kernels.resize(k + 1);
        t.kernels[k].blocks = static_cast<int>(i) + 1;
        return separates(t, a, b) ? t : s;
      }
  return s;
}

std::string structure_text(const std::vector<int>& st, const model::Device& d) {
  return fmt::format("[{}] on {}", fmt::join(st, ","), d.name);
}

// Seconds of wall-clock time since t0.
double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

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
  model::Hypothesis a = h1, b = h2;
  if (d.sms <= 2) a.order = b.order = model::Order::Natural;  // 0, 1 either way
  // The issue rule acts only on pair leaders, which exist only in kernels of >= 2 x SMs + 5 blocks.
  bool leaders = false;
  for (int n = 1; n <= max_blocks_per_kernel && !leaders; ++n)
    for (int i = 0; i < n && !leaders; ++i) leaders = a.leads_pair(d, n, i) || b.leads_pair(d, n, i);
  if (!leaders) a.issue = b.issue = model::Issue::Single;
  return a.same_options(b);
}

std::optional<model::Scenario> simulator_search(const model::Hypothesis& h1, const model::Hypothesis& h2,
                                                const model::Device& d, const std::vector<int>& blocks,
                                                const smt::ParamBounds& params, int samples, unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const auto& regs = smt::realizable_regs();
  const int max_w = std::min(params.max_warps, d.max_threads_per_block / 32);
  const int max_units = d.max_smem_per_block / 128;
  model::Scenario s;
  s.device = d;
  s.device_builtin = false;
  s.kernels.resize(blocks.size());
  for (size_t k = 0; k < blocks.size(); ++k) {
    s.kernels[k].name = fmt::format("k{}", k + 1);
    s.kernels[k].blocks = blocks[k];
  }
  // The decisive values sit on boundaries (warps at multiples of the PB count, shared memory at
  // configuration edges, registers at the allocation steps), so those are drawn often.
  for (int n = 0; n < samples; ++n) {
    for (size_t k = 0; k < blocks.size(); ++k) {
      auto& kr = s.kernels[k];
      if (k > 0 && pick(0, 3) == 0) {  // a copy of an earlier kernel, as the paper's cases use
        const auto& from = s.kernels[static_cast<size_t>(pick(0, static_cast<int>(k) - 1))];
        kr.threads = from.threads;
        kr.regs = from.regs;
        kr.smem = from.smem;
      } else {
        int w = pick(0, 2) == 0 ? std::min(max_w, 4 * pick(1, 8)) : pick(0, 1) ? pick(1, std::min(max_w, 8)) : pick(1, max_w);
        kr.threads = 32 * std::max(1, w);
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

std::optional<smt::FixedSchedule> LemmaCache::constant_schedule(const model::Hypothesis& h, const model::Device& d,
                                                                const std::vector<int>& blocks,
                                                                const smt::QueryOptions& o, double& spent) {
  spent = 0;
  // Keyed by what the answer depends on: the options (not the name), the device's limits, the
  // structure and the parameter ranges.
  model::json options = h.to_json();
  for (const char* text : {"name", "source", "description"}) options.erase(text);
  const std::string key = fmt::format("{}|{}|{}|{}|{},{},{},{},{}|{}|{}", options.dump(), d.to_json().dump(),
                                      fmt::join(blocks, ","), o.timeout_ms, o.bounds.max_warps, o.bounds.max_duration,
                                      o.bounds.vary_regs, o.bounds.vary_smem, o.bounds.max_local, smt::to_string(o.sort),
                                      o.arith_solver);
  std::promise<std::optional<smt::FixedSchedule>> mine;
  {
    std::unique_lock<std::mutex> lock(m_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      auto answer = it->second;
      lock.unlock();  // wait for another thread's answer without holding the cache
      return answer.get();
    }
    cache_.emplace(key, mine.get_future().share());
  }
  std::optional<smt::FixedSchedule> answer;
  try {
    // The candidate: h's schedule of the smallest kernels of this structure.
    model::Scenario s;
    s.device = d;
    s.device_builtin = false;
    for (size_t k = 0; k < blocks.size(); ++k) {
      model::Kernel kr;
      kr.name = fmt::format("k{}", k + 1);
      kr.blocks = blocks[k];
      kr.threads = 32;
      kr.regs = 32;
      kr.smem = 0;
      kr.duration = 1;
      s.kernels.push_back(kr);
    }
    smt::FixedSchedule expected;
    for (const auto& k : model::simulate(s, h).kernels)
      for (const auto& p : k.blocks) expected.emplace_back(p.sm, p.start);
    smt::QueryResult q = smt::prove_schedule(h, d, blocks, expected, o);
    spent = q.seconds;
    if (q.outcome == smt::QueryOutcome::None) answer = expected;
  } catch (const model::InputError&) {
    // The smallest kernels cannot run under h on d: no lemma.
  }
  mine.set_value(answer);
  return answer;
}

int LemmaCache::asked() const {
  std::lock_guard<std::mutex> lock(m_);
  return static_cast<int>(cache_.size());
}

PairResult distinguish_pair(const model::Hypothesis& h1, const model::Hypothesis& h2, const model::Device& full,
                            const DistinguishBounds& b, LemmaCache* lemmas) {
  LemmaCache own;
  if (!lemmas) lemmas = &own;
  PairResult r;
  r.h1 = h1.name;
  r.h2 = h2.name;
  const auto t0 = std::chrono::steady_clock::now();
  std::string bounds_text = fmt::format("kernels <= {}, blocks <= {} per kernel and {} in all, durations <= {}, warps <= {}",
                                        b.max_kernels, b.max_blocks_per_kernel, b.max_total_blocks, b.params.max_duration,
                                        b.params.max_warps);
  // A hypothesis that cannot run on the device at all (fermi needs a GPC map) separates nothing there.
  for (const auto* h : {&h1, &h2}) {
    model::Scenario probe;
    probe.device = full;
    probe.kernels.push_back(model::Kernel{});
    probe.kernels.back().name = "k1";
    try {
      model::simulate(probe, *h);
    } catch (const model::InputError& e) {
      r.outcome = PairOutcome::Unsupported;
      r.reason = fmt::format("{} cannot run on {}: {}", h->name, full.name, e.what());
      return r;
    }
  }
  std::string unsupported;
  try {
    smt::check_encodable(h1);
    smt::check_encodable(h2);
  } catch (const smt::Unsupported& e) {
    unsupported = e.what();
  }
  if (h1.same_options(h2)) {
    // Same options, same machine: no query needed, but say so rather than "unknown".
    r.outcome = PairOutcome::Inseparable;
    r.reason = "the two hypotheses choose the same option for every mechanism";
    r.minimal_proved = true;
    return r;
  }
  double z3_seconds = 0;  // against the pair budget
  double lemma_seconds = 0;  // constant-schedule lemmas this pair asked first (beyond the budget)
  auto budget_left_ms = [&]() -> int64_t {
    if (b.pair_budget_ms == 0) return INT64_MAX;
    return static_cast<int64_t>(b.pair_budget_ms) - static_cast<int64_t>(z3_seconds * 1000);
  };
  // The options of every Z3 query of this pair: the bounds and term sort of the run, a time limit.
  auto query_options = [&](unsigned timeout_ms) {
    smt::QueryOptions o;
    o.bounds = b.params;
    o.timeout_ms = timeout_ms;
    o.sort = b.sort;
    return o;
  };
  // Runs one Z3 query within the per-query timeout and what is left of the pair budget.
  auto query = [&](const model::Device& reduced, const std::vector<int>& st, smt::QueryOptions o) -> smt::QueryResult {
    int64_t left = budget_left_ms();
    if (left <= 0) {
      smt::QueryResult q;
      q.outcome = smt::QueryOutcome::Unknown;
      q.reason = fmt::format("pair budget of {} ms spent", b.pair_budget_ms);
      return q;
    }
    o.timeout_ms = static_cast<unsigned>(std::min<int64_t>(o.timeout_ms, left));
    smt::QueryResult q = smt::distinguish_structure(h1, h2, reduced, st, o);
    z3_seconds += q.seconds;
    return q;
  };
  // A witness on the reduced device: re-checked by both simulators, truncated after the first
  // difference, durations shortened, lifted to the full device and re-checked there.
  auto accept = [&](const model::Scenario& found, Finder finder, int tpcs, const model::Device& reduced, bool minimal,
                    const std::string& note) -> bool {
    // Never trust the model alone: the simulators must disagree on the reduced device ...
    if (!separates(found, h1, h2)) {
      r.outcome = PairOutcome::Unknown;
      r.reason = fmt::format("internal: the witness {} does not separate the simulators", found.to_json().dump());
      return false;
    }
    (void)reduced;
    model::Scenario best = shorten(truncate_after_difference(found, h1, h2), h1, h2);
    // ... and, once lifted, on the full device.
    int exact = full.tpcs() / tpcs;
    std::vector<int> factors = {exact};
    if (exact * tpcs != full.tpcs()) factors.push_back(exact + 1);
    factors.push_back(1);
    for (int f : factors) {
      model::Scenario lifted = lift(best, full, f);
      if (!separates(lifted, h1, h2)) continue;
      model::Case c;
      c.scenario = lifted;
      c.id = fmt::format("synth-{}-{}-vs-{}", full.name, h1.name, h2.name);
      c.source = "synthesized";
      r.witness = c;
      r.found_by = finder;
      std::string by = finder == Finder::Smt ? "Z3" : "simulator search";
      r.route = f == 1 ? fmt::format("{} on {} TPC(s), disagrees unlifted on {}", by, tpcs, full.name)
                       : fmt::format("{} on {} TPC(s), lifted x{} to {}", by, tpcs, f, full.name);
      r.outcome = PairOutcome::Separated;
      r.structure.clear();
      for (const auto& k : best.kernels) r.structure.push_back(k.blocks);
      r.kernels = static_cast<int>(lifted.kernels.size());
      r.blocks = lifted.total_blocks();
      r.total_duration = total_duration(lifted);
      r.minimal_proved = minimal;
      r.reason = note;
      if (!unsupported.empty()) r.reason = (note.empty() ? "" : note + "; ") + "minimality not proved: " + unsupported;
      r.first_difference = first_difference(model::simulate(lifted, h1), model::simulate(lifted, h2));
      r.solver_seconds = z3_seconds + lemma_seconds;
      r.wall_seconds = since(t0);
      return true;
    }
    return false;
  };
  // The schedule both hypotheses give `st` when lemmas prove it fixed under each (and the two equal).
  auto common_fixed = [&](const std::vector<int>& st, const model::Device& reduced) -> std::optional<smt::FixedSchedule> {
    const smt::QueryOptions o = query_options(b.lemma_timeout_ms);
    double s1 = 0, s2 = 0;
    auto c1 = lemmas->constant_schedule(h1, reduced, st, o, s1);
    auto c2 = c1 ? lemmas->constant_schedule(h2, reduced, st, o, s2) : std::nullopt;
    lemma_seconds += s1 + s2;
    if (c1 && c2 && *c1 == *c2) return c1;
    return std::nullopt;
  };
  // The same for every block of `st` but the last: facts for the pair query (QueryOptions::prefix).
  // Only where the dispatcher does not look ahead (the pair query refuses pair leaders already).
  auto known_prefix = [&](const std::vector<int>& st, const model::Device& reduced) -> std::optional<smt::FixedSchedule> {
    if (b.lemma_timeout_ms == 0) return std::nullopt;
    for (const auto* h : {&h1, &h2})
      if (h->selection == model::Selection::GpcPriority) return std::nullopt;  // looks ahead (seed 003 wave)
    std::vector<int> prefix = st;
    if (--prefix.back() == 0) prefix.pop_back();
    // One-kernel prefixes only: with two kernels the second one's place depends on whether it fits
    // beside the first, so such lemmas fail, and asking costs up to the lemma timeout each.
    if (prefix.size() != 1) return std::nullopt;
    return common_fixed(prefix, reduced);
  };
  const auto structures = structures_in_order(b);
  bool all_unsat_so_far = true;  // every smaller structure, on every smaller device, proved inseparable
  for (int tpcs : b.reduced_tpcs) {
    if (tpcs > full.tpcs()) continue;
    model::Device reduced = reduced_device(full, tpcs);
    if (same_machine_on(h1, h2, reduced, b.max_blocks_per_kernel)) {
      r.structures_unsat += static_cast<int>(structures.size());  // by the options, not by Z3
      continue;
    }
    bool device_all_unsat = true;
    // Structures of this device neither separated nor proved inseparable, with where each one's entry
    // sits in r.unknown_structures.
    std::vector<std::pair<size_t, size_t>> undecided;
    const size_t device_first_unknown = r.unknown_structures.size();
    for (size_t si = 0; si < structures.size(); ++si) {
      const auto& st = structures[si];
      std::optional<model::Scenario> found;
      Finder finder = Finder::None;
      if (b.sim_samples > 0) {
        ++r.structures_sampled;
        found = simulator_search(h1, h2, reduced, st, b.params, b.sim_samples, b.seed + static_cast<unsigned>(si) * 7919u);
        if (found) finder = Finder::Simulator;
      }
      if (found && !undecided.empty() && b.deep_samples > 0) {
        // A witness here, but smaller structures are undecided: sample those harder first, so that
        // the witness reported is the smallest the simulators can find.
        for (auto [u, pos] : undecided) {
          auto smaller = simulator_search(h1, h2, reduced, structures[u], b.params, b.deep_samples,
                                          b.seed * 7u + static_cast<unsigned>(u) * 104729u);
          if (smaller) {  // the entries from u on are no longer smaller than the witness
            found = smaller;
            r.unknown_structures.erase(r.unknown_structures.begin() + static_cast<long>(pos), r.unknown_structures.end());
            device_all_unsat = pos == device_first_unknown;
            break;
          }
        }
      }
      if (!found && unsupported.empty() && st.size() == 1 && b.lemma_timeout_ms > 0) {
        // One kernel: both hypotheses proved to give the structure one fixed schedule cannot differ
        // on it (see LemmaCache); cheaper than the pair query and shared with the other pairs.
        if (common_fixed(st, reduced)) {
          ++r.structures_unsat;
          ++r.structures_by_lemma;
          continue;
        }
      }
      if (!found && unsupported.empty()) {
        smt::QueryOptions o = query_options(b.timeout_ms);
        o.prefix = known_prefix(st, reduced);
        smt::QueryResult q = query(reduced, st, o);
        if (q.outcome == smt::QueryOutcome::Unknown || q.outcome == smt::QueryOutcome::Unsupported) {
          device_all_unsat = false;
          undecided.emplace_back(si, r.unknown_structures.size());
          r.unknown_structures.push_back(fmt::format("{}: {}", structure_text(st, reduced), q.reason));
          continue;
        }
        if (q.outcome == smt::QueryOutcome::None) {
          ++r.structures_unsat;
          continue;
        }
        if (q.outcome != smt::QueryOutcome::Found) continue;
        // Minimise the total duration at this structure; each step is proved by the next query.
        model::Scenario best = q.scenario;
        for (int limit = total_duration(best) - 1; limit >= static_cast<int>(st.size()); limit = total_duration(best) - 1) {
          o.max_total_duration = limit;
          smt::QueryResult shorter = query(reduced, st, o);
          if (shorter.outcome != smt::QueryOutcome::Found) break;
          best = shorter.scenario;
        }
        found = best;
        finder = Finder::Smt;
      } else if (!found) {
        device_all_unsat = false;
        undecided.emplace_back(si, r.unknown_structures.size());
        r.unknown_structures.push_back(fmt::format("{}: no SMT encoding, and {} random scenarios did not separate",
                                                   structure_text(st, reduced), b.sim_samples));
        continue;
      }
      if (accept(*found, finder, tpcs, reduced, all_unsat_so_far && device_all_unsat && unsupported.empty(), "")) return r;
      if (r.outcome == PairOutcome::Unknown && !r.reason.empty()) return r;  // internal error, said in the reason
      device_all_unsat = false;
      r.unknown_structures.push_back(fmt::format("{}: separates on the reduced device but lifting lost it", structure_text(st, reduced)));
    }
    all_unsat_so_far = all_unsat_so_far && device_all_unsat;
  }
  // Nothing within the bounds (or undecided there): random structures beyond them, by simulation
  // only. A witness found here is real but not minimal; "within bounds" stays what was proved.
  if (b.wide_samples > 0) {
    std::mt19937 rng(b.seed * 31u + 17u);
    // The reduced devices, then the full one (issue 3: "search on the full device directly"): some
    // options differ only on more SMs than a reduced device has (with one SM per TPC, quadro6000's
    // 1- and 2-TPC devices have 1 and 2 SMs, where even-first is the natural order).
    std::vector<int> wide_tpcs = b.reduced_tpcs;
    if (std::all_of(wide_tpcs.begin(), wide_tpcs.end(), [&](int t) { return t < full.tpcs(); }))
      wide_tpcs.push_back(full.tpcs());
    for (int tpcs : wide_tpcs) {
      if (tpcs > full.tpcs()) continue;
      model::Device reduced = tpcs == full.tpcs() ? full : reduced_device(full, tpcs);
      const int per = 40, rounds = std::max(1, b.wide_samples / per);
      for (int round = 0; round < rounds; ++round) {
        std::vector<int> st(static_cast<size_t>(std::uniform_int_distribution<int>(1, b.max_kernels)(rng)));
        for (auto& x : st) x = std::uniform_int_distribution<int>(1, 4 * reduced.sms + 8)(rng);
        auto found = simulator_search(h1, h2, reduced, st, b.params, per, b.seed + static_cast<unsigned>(round));
        if (!found) continue;
        std::string note = all_unsat_so_far && unsupported.empty()
                               ? fmt::format("found beyond the bounds; none exists within them ({})", bounds_text)
                               : "found beyond the bounds by simulation";
        if (accept(*found, Finder::Simulator, tpcs, reduced, false, note)) {
          r.found_beyond_bounds = true;
          return r;
        }
      }
    }
  }
  r.solver_seconds = z3_seconds + lemma_seconds;
  r.wall_seconds = since(t0);
  if (all_unsat_so_far) {
    r.outcome = PairOutcome::Inseparable;
    r.reason = fmt::format("no distinguishing scenario within bounds ({}) on reduced devices of {} TPC(s)", bounds_text,
                           fmt::join(b.reduced_tpcs, ", "));
    if (b.wide_samples > 0)
      r.reason += fmt::format("; {} random scenarios beyond the bounds on those and on {} did not separate either",
                              b.wide_samples, full.name);
    r.minimal_proved = true;
    return r;
  }
  if (!unsupported.empty()) {
    r.outcome = PairOutcome::Unsupported;
    r.reason = fmt::format("{}; the simulator pre-pass ({} scenarios per structure, {}) found no separating scenario",
                           unsupported, b.sim_samples, bounds_text);
    return r;
  }
  r.outcome = PairOutcome::Unknown;
  r.reason = fmt::format("Z3 could not decide {} structure(s) within {} ms each (first: {})", r.unknown_structures.size(),
                         b.timeout_ms, r.unknown_structures.empty() ? "-" : r.unknown_structures.front());
  return r;
}

std::string minimality_text(const PairResult& r) {
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
  std::atomic<size_t> next{0};
  std::mutex report;
  std::exception_ptr failure;  // the first exception of any worker, rethrown on the caller's thread
  LemmaCache lemmas;           // one per run: a hypothesis' lemma serves all its pairs
  auto work = [&] {
    for (size_t k = next++; k < pairs.size(); k = next++) {
      try {
        out[k] = distinguish_pair(hs[pairs[k].first], hs[pairs[k].second], full, b, &lemmas);
        std::lock_guard<std::mutex> lock(report);
        if (done) done(out[k]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(report);
        if (!failure) failure = std::current_exception();
        next = pairs.size();  // the others stop after their current pair
      }
    }
  };
  const size_t n = std::min(pairs.size(), static_cast<size_t>(std::max(1, jobs)));
  if (n <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (size_t t = 0; t < n; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }
  if (failure) std::rethrow_exception(failure);
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
  return j;
}

}  // namespace tbcheck::search
