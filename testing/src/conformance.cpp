// Random conformance between the SMT encoding and the simulator (the test that makes every
// synthesized case trustworthy). Scenarios are small enough to solve in milliseconds.
#include "tbcheck/testing/conformance.hpp"

#include <algorithm>
#include <random>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/resources.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/smt/encoding.hpp"

namespace tbcheck::smt {

namespace {

// The uninterpreted constants (variables) of e not yet in `seen`, appended to `out`.
void free_constants(const z3::expr& e, std::set<unsigned>& seen, z3::expr_vector& out) {
  std::vector<z3::expr> todo = {e};
  std::set<unsigned> visited;
  while (!todo.empty()) {
    z3::expr x = todo.back();
    todo.pop_back();
    if (!visited.insert(x.id()).second) continue;
    if (x.is_const() && x.decl().decl_kind() == Z3_OP_UNINTERPRETED) {
      if (seen.insert(x.id()).second) out.push_back(x);
      continue;
    }
    if (x.is_app())
      for (unsigned a = 0; a < x.num_args(); ++a) todo.push_back(x.arg(a));
  }
}

}  // namespace

model::Scenario random_small_scenario(unsigned seed, const model::Device& base) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  model::Scenario s;
  s.device = base;
  s.device.name = base.name + "-2tpc";
  s.device.sms = 4;
  s.device.gpc_of_tpc.clear();
  s.device_builtin = false;
  int kernels = pick(1, 4);
  for (int k = 0; k < kernels; ++k) {
    model::Kernel kr;
    kr.name = fmt::format("k{}", k + 1);
    kr.blocks = pick(1, 4);
    // Mix small and large blocks so that warps, registers and shared memory all bind sometimes.
    kr.threads = model::kThreadsPerWarp * (pick(0, 3) == 0 ? pick(1, 32) : pick(1, 8));
    const auto& regs = realizable_regs();
    kr.regs = pick(0, 2) == 0 ? regs[static_cast<size_t>(pick(0, static_cast<int>(regs.size()) - 1))] : (pick(0, 1) ? 32 : 64);
    kr.smem = pick(0, 2) == 0 ? 0 : 128 * pick(0, base.max_smem_per_block / 128);
    kr.duration = pick(1, 3);
    kr.local = pick(0, 3) == 0 ? pick(0, 2) * 16 : 0;
    // Keep only kernels one block of which fits an empty SM under every shipped hypothesis.
    bool ok = true;
    for (const auto& h : model::builtin_hypotheses()) {
      if (h.selection == model::Selection::GpcPriority) continue;  // needs a GPC map: random_fermi_scenario
      ok = ok && model::infeasibility_reason(kr, s.device, h).empty();
    }
    if (!ok) {
      kr.threads = model::kThreadsPerWarp * pick(1, 4);
      kr.regs = 32;
      kr.smem = 1024 * pick(0, 8);
    }
    s.kernels.push_back(kr);
  }
  return s;
}

model::Scenario random_control_scenario(unsigned seed, const model::Device& base) {
  model::Scenario s = random_small_scenario(seed, base);
  std::mt19937 rng(seed ^ 0x5eed17u);  // its own stream, so the kernels are random_small_scenario's
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  s.device.stream_priorities = model::PriorityRange{0, -5, "random_control_scenario: the RTX 2080 Ti's range"};
  for (size_t k = 0; k < s.kernels.size(); ++k) {
    model::Kernel& kr = s.kernels[k];
    if (pick(0, 3) != 0) {
      kr.priority = -pick(0, 5);
      kr.stream = static_cast<int>(k);
    }
    if (pick(0, 2) == 0) kr.tpcs = {pick(0, s.device.tpcs() - 1)};
  }
  return s;
}

model::Scenario random_release_scenario(unsigned seed, const model::Device& base) {
  model::Scenario s = random_control_scenario(seed, base);
  std::mt19937 rng(seed ^ 0x2e1ea5eu);  // its own stream, so the kernels are random_control_scenario's
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  // The encoding enumerates dispatch orders: at most 3 kernels of at most 3 blocks keep them few.
  if (s.kernels.size() > 3) s.kernels.resize(3);
  if (s.kernels.size() < 2) {  // a release needs a kernel before it
    model::Kernel second = s.kernels[0];
    second.name = "k2";
    second.stream.reset();
    second.priority.reset();
    s.kernels.push_back(second);
  }
  int64_t at = 0;
  int best = 0;  // the highest priority so far (CUDA's convention: the lowest number)
  for (size_t k = 0; k < s.kernels.size(); ++k) {
    model::Kernel& kr = s.kernels[k];
    kr.blocks = std::min(kr.blocks, 3);
    if (k > 0 && pick(0, 3) != 0) {
      at += pick(1, 3);  // durations are 1-3: releases fall among the retirements
      if (pick(0, 3) != 0) {  // a later kernel of a higher priority: the case that reorders dispatches
        kr.priority = std::max(best - 1, -5);
        kr.stream = static_cast<int>(k);
      }
    }
    kr.release = at;
    best = std::min(best, kr.priority.value_or(0));
  }
  return s;
}

model::Scenario random_tie_scenario(unsigned seed, const model::Device& base) {
  model::Scenario s = random_small_scenario(seed, base);
  std::mt19937 rng(seed ^ 0x71e5u);  // its own stream, so the kernels are random_small_scenario's
  const int duration = std::uniform_int_distribution<int>(1, 2)(rng);
  for (auto& k : s.kernels) k.duration = duration;
  return s;
}

model::Scenario random_fermi_scenario(unsigned seed, const model::Device& device, const model::Hypothesis& h,
                                      int max_blocks) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  model::Scenario s;
  s.device = device;
  s.device_builtin = false;
  const int kernels = pick(1, 3);
  int budget = std::max(max_blocks, kernels);  // the encoding grows with the square of the blocks times the SMs
  for (int k = 0; k < kernels; ++k) {
    model::Kernel kr;
    kr.name = fmt::format("k{}", k + 1);
    const int most = std::min(40, std::max(1, budget - (kernels - k - 1)));
    // Some 2-D grids (seed 003 Section 4.2's multirows, odd rows and columns included), else 1-D.
    if (most >= 2 && pick(0, 3) == 0) {
      const int y = pick(2, std::min(6, most)), x = pick(1, most / y);
      kr.grid = std::make_pair(x, y);
      kr.blocks = x * y;
    } else {
      kr.blocks = pick(1, most);
    }
    budget -= kr.blocks;
    // Warps, shared memory and registers chosen so that residency (blocks per empty SM) ranges over 1..8
    // and the binding resource varies: 48 warps, 48 KB and 32768 registers per Fermi SM.
    static const int kWarps[] = {1, 2, 4, 6, 8, 12, 16, 24, 32};
    static const int kSmem[] = {0, 0, 0, 6144, 8192, 12288, 16384, 24576, 32768, 49152};
    static const int kRegs[] = {16, 20, 32, 40, 63};
    kr.threads = model::kThreadsPerWarp * kWarps[pick(0, 8)];
    kr.smem = kSmem[pick(0, 9)];
    kr.regs = kRegs[pick(0, 4)];
    kr.duration = pick(1, 3);
    kr.local = pick(0, 3) == 0 ? pick(0, 2) * 16 : 0;
    if (!model::infeasibility_reason(kr, s.device, h).empty()) {
      kr.threads = model::kThreadsPerWarp * pick(1, 4);
      kr.regs = 32;
      kr.smem = 1024 * pick(0, 8);
    }
    s.kernels.push_back(kr);
  }
  return s;
}

std::string check_one(const model::Scenario& sc, const model::Hypothesis& h, unsigned timeout_ms, bool* unknown,
                      bool* not_unique) {
  return check_schedule(sc, h, model::simulate(sc, h), timeout_ms, unknown, not_unique);
}

std::string check_schedule(const model::Scenario& sc, const model::Hypothesis& h, const model::Schedule& want,
                           unsigned timeout_ms, bool* unknown, bool* not_unique) {
  std::vector<model::BlockPlacement> flat;
  for (const auto& k : want.kernels)
    for (const auto& b : k.blocks) flat.push_back(b);
  // Numbering gpc-ring: the encoder decides placements and numbers them in a last group. The placements are the
  // simulator's under numbering dispatch (the numbering moves no block: model timing gives a kernel's blocks one
  // duration); the induction pins and checks those, and the last group must then give `want`, uniquely.
  const bool ring = model::ring_numbered(h.numbering);
  std::vector<model::BlockPlacement> placed = flat;
  if (ring) {
    model::Hypothesis by_dispatch = h;
    by_dispatch.numbering = model::Numbering::Dispatch;
    placed.clear();
    for (const auto& k : model::simulate(sc, by_dispatch).kernels)
      for (const auto& b : k.blocks) placed.push_back(b);
  }
  auto clustered_block = [&](size_t b) {
    size_t k = 0;
    while (b >= static_cast<size_t>(sc.kernels[k].blocks)) b -= static_cast<size_t>(sc.kernels[k++].blocks);
    return sc.kernels[k].cluster.has_value();
  };
  std::string as_case = [&] {
    model::Case cs;
    cs.id = "conformance-mismatch";
    cs.source = "smt conformance test";
    cs.scenario = sc;
    return cs.to_json().dump();
  }();
  auto where = [&](size_t i) {
    int k = 0;
    size_t b = i;
    while (b >= static_cast<size_t>(sc.kernels[static_cast<size_t>(k)].blocks)) b -= static_cast<size_t>(sc.kernels[static_cast<size_t>(k++)].blocks);
    return fmt::format("{} block {}", sc.kernels[static_cast<size_t>(k)].name, b);
  };
  z3::context c;
  SymbolicScenario s = SymbolicScenario::make_fixed(c, sc);
  Decisions d = Decisions::fresh(c, s.total_blocks(), "d");
  // Release times: several dispatch orders. The simulator's schedule must satisfy exactly one order's
  // encoding. Uniqueness over all orders, by induction over picks: given the simulator's first p picks, an
  // order that agrees with its kernels so far but puts another kernel at pick p must admit no decision
  // there (each group depends only on its order's prefix); the chosen order then goes through the
  // induction below. Far cheaper than solving each other order's whole encoding.
  const std::vector<std::vector<int>> sequences = kernel_sequences(s, h);
  size_t chosen = 0;
  if (sequences.size() > 1) {
    auto pin = [&](z3::solver& sv, int b) {
      const size_t bu = static_cast<size_t>(b);
      sv.add(d.sm[bu] == flat[bu].sm && d.start[bu] == static_cast<int>(flat[bu].start));
    };
    // The p-th placement of an encoding tagged `tag`, as the simulator placed it (block b by dispatch numbering).
    auto pin_placed = [&](z3::solver& sv, const std::string& tag, int p, int b) {
      const size_t bu = static_cast<size_t>(b);
      const z3::expr sm = ring && !clustered_block(bu) ? placement_sm(s, tag, p) : d.sm[bu];
      sv.add(sm == placed[bu].sm && d.start[bu] == static_cast<int>(placed[bu].start));
    };
    std::vector<size_t> holds;
    for (size_t n = 0; n < sequences.size(); ++n) {
      z3::solver one = make_solver(c, timeout_ms);
      for (const auto& g : encode_grouped(s, h, d, fmt::format("o{}", n), sequences[n]))
        for (const auto& x : g) one.add(x);
      for (size_t b = 0; b < flat.size(); ++b) pin(one, static_cast<int>(b));
      const auto fixed = one.check();
      if (fixed == z3::unknown) {
        if (unknown) *unknown = true;
        return "";
      }
      if (fixed == z3::sat) holds.push_back(n);
    }
    if (holds.size() != 1)
      return fmt::format("{}: the simulator's schedule satisfies {} of the {} dispatch orders' encodings (want 1); "
                         "case: {}",
                         h.name, holds.size(), sequences.size(), as_case);
    chosen = holds[0];
    const std::vector<int>& best = sequences[chosen];
    const std::vector<int> best_order = pick_order(s, h, best);
    for (size_t p = 0; p < best.size(); ++p) {
      std::set<int> tried = {best[p]};
      for (size_t n = 0; n < sequences.size(); ++n) {
        const std::vector<int>& o = sequences[n];
        if (!std::equal(o.begin(), o.begin() + static_cast<long>(p), best.begin()) || !tried.insert(o[p]).second) continue;
        const std::string tag = fmt::format("a{}_{}", p, n);
        const auto groups = encode_grouped(s, h, d, tag, o);
        z3::solver alt = make_solver(c, timeout_ms);
        for (size_t g = 0; g <= p + 1; ++g)
          for (const auto& x : groups[g]) alt.add(x);
        for (size_t q = 0; q < p; ++q) pin_placed(alt, tag, static_cast<int>(q), best_order[q]);
        const auto res = alt.check();
        if (res == z3::unknown) {
          if (unknown) *unknown = true;
          return "";
        }
        if (res == z3::sat) {
          if (not_unique) *not_unique = true;
          return fmt::format("{}: after the simulator's first {} picks, kernel {} could place the next block instead "
                             "of kernel {}; case: {}",
                             h.name, p, sc.kernels[static_cast<size_t>(o[p])].name,
                             sc.kernels[static_cast<size_t>(best[p])].name, as_case);
        }
      }
    }
  }
  auto groups = encode_grouped(s, h, d, "h", sequences[chosen]);
  const std::vector<int> order = pick_order(s, h, sequences[chosen]);  // groups[pick + 1] decides block order[pick]
  // Induction over dispatches: given the simulator's decisions for the earlier picks, pick p's
  // constraints must admit the simulator's decision and no other. Then the whole schedule is unique
  // and equal. Every other variable of a group (the encoding's defined terms) must be determined too,
  // so the values of earlier groups can be substituted as constants: the same question as asserting
  // the earlier groups with their decisions fixed, without the solver re-deriving every earlier term
  // (what made schedules of 40 blocks on 14 SMs take minutes).
  z3::expr_vector known_vars(c), known_vals(c);
  z3::solver solver = make_solver(c, timeout_ms);
  enum class Step { Ok, Unknown, Fail };
  std::string failure;
  // Adds group g with the known values substituted; `fixed` pins the pick's decision (none for group 0).
  // Checks that the decision is `want` and unique, then that every other variable is determined.
  auto step = [&](const z3::expr_vector& group, const z3::expr* sm, const z3::expr* st, const model::BlockPlacement* want_b,
                  const std::string& what) -> Step {
    solver.push();  // the group's constraints only for this step: earlier ones are in known_vals
    struct Pop {
      z3::solver& s;
      ~Pop() { s.pop(); }
    } pop_at_exit{solver};
    z3::expr_vector vars(c);
    std::set<unsigned> seen;
    if (!group.empty()) {  // one substitution for the group: each call indexes all known values
      z3::expr x = z3::mk_and(group).substitute(known_vars, known_vals).simplify();
      solver.add(x);
      free_constants(x, seen, vars);
    }
    auto res = solver.check();
    if (res == z3::unknown) return Step::Unknown;
    if (res == z3::unsat) {
      failure = fmt::format("{}: {}: the encoding admits no decision after the simulator's history", h.name, what);
      return Step::Fail;
    }
    if (sm) {
      z3::model m = solver.get_model();
      int64_t got_sm = m.eval(*sm, true).get_numeral_int64();
      int64_t got_st = m.eval(*st, true).get_numeral_int64();
      if (got_sm != want_b->sm || got_st != want_b->start) {
        failure = fmt::format("{}: {}: simulator SM {} start {}, SMT SM {} start {}", h.name, what, want_b->sm, want_b->start,
                              got_sm, got_st);
        return Step::Fail;
      }
      solver.push();
      solver.add(*sm != want_b->sm || *st != static_cast<int>(want_b->start));
      auto again = solver.check();
      solver.pop();
      if (again == z3::unknown) return Step::Unknown;
      if (again == z3::sat) {
        if (not_unique) *not_unique = true;
        failure = fmt::format("{}: {}: a second decision satisfies the encoding", h.name, what);
        return Step::Fail;
      }
      solver.add(*sm == want_b->sm && *st == static_cast<int>(want_b->start));
      if (solver.check() != z3::sat) return Step::Unknown;  // sat above with these very values
    }
    z3::model m = solver.get_model();
    z3::expr_vector other(c);
    for (const auto& v : vars) {
      z3::expr val = m.eval(v, true);
      known_vars.push_back(v);
      known_vals.push_back(val);
      other.push_back(v != val);
    }
    if (!other.empty()) {
      solver.add(z3::mk_or(other));
      auto res2 = solver.check();
      if (res2 == z3::unknown) return Step::Unknown;
      if (res2 == z3::sat) {
        if (not_unique) *not_unique = true;
        failure = fmt::format("{}: {}: an intermediate term of the encoding is not determined", h.name, what);
        return Step::Fail;
      }
    }
    return Step::Ok;
  };
  auto finish = [&](Step r) -> std::string {
    if (r == Step::Unknown && unknown) *unknown = true;
    return r == Step::Fail ? fmt::format("{}; case: {}", failure, as_case) : "";
  };
  if (Step r = step(groups[0], nullptr, nullptr, nullptr, "kernel terms"); r != Step::Ok) return finish(r);
  for (size_t pick = 0; pick < flat.size(); ++pick) {
    const size_t i = static_cast<size_t>(order[pick]);
    const z3::expr sm = ring && !clustered_block(i) ? placement_sm(s, "h", static_cast<int>(pick)) : d.sm[i];
    if (Step r = step(groups[pick + 1], &sm, &d.start[i], &placed[i], where(i)); r != Step::Ok) return finish(r);
  }
  if (ring) {
    // The numbering group: satisfiable after the placements, every label determined (step), and equal to want.
    if (groups.size() != flat.size() + 2) return finish((failure = h.name + ": no numbering group", Step::Fail));
    if (Step r = step(groups.back(), nullptr, nullptr, nullptr, "numbering"); r != Step::Ok) return finish(r);
    for (size_t i = 0; i < flat.size(); ++i) {
      const z3::expr got = d.sm[i].substitute(known_vars, known_vals).simplify();
      if (!got.is_numeral() || got.get_numeral_int64() != flat[i].sm) {
        failure = fmt::format("{}: {}: numbered onto SM {}, the simulator's is SM {}", h.name, where(i), got.to_string(), flat[i].sm);
        return finish(Step::Fail);
      }
    }
  }
  return "";
}

model::Scenario with_gpc_map(model::Scenario s, const model::Hypothesis& h) {
  if (!model::needs_gpc_map(h) || h.selection == model::Selection::GpcPriority) return s;
  s.device.gpc_of_tpc.clear();
  const int tpcs = s.device.sms / s.device.sms_per_tpc;
  for (int g = 0; static_cast<int>(s.device.gpc_of_tpc.size()) < tpcs; ++g)
    for (int t = 0; t < 1 + g % 2 && static_cast<int>(s.device.gpc_of_tpc.size()) < tpcs; ++t) s.device.gpc_of_tpc.push_back(g);
  s.device.gpc_source = "conformance";
  return s;
}

ConformanceReport run_conformance(const model::Hypothesis& h, int scenarios, unsigned seed, unsigned timeout_ms,
                                  bool controls) {
  ConformanceReport r;
  try {
    check_encodable(h);
  } catch (const Unsupported& e) {
    r.unsupported = true;
    r.unsupported_reason = e.what();
    return r;
  }
  // gpc-priority needs a GPC map: quadro6000 (seed 003's 14-SM Fermi), the only built-in device with one.
  const bool fermi = h.selection == model::Selection::GpcPriority;
  const model::Device& base = model::builtin_device(fermi ? "quadro6000" : "rtx3090", "", "");
  return check_scenarios(h, scenarios, seed, timeout_ms, [&](unsigned sd) {
    return fermi      ? random_fermi_scenario(sd, base, h)
           : controls ? with_gpc_map(random_control_scenario(sd, base), h)
                      : with_gpc_map(random_small_scenario(sd, base), h);
  });
}

ConformanceReport run_tie_conformance(const model::Hypothesis& h, int scenarios, unsigned seed, unsigned timeout_ms) {
  const model::Device& base = model::builtin_device("rtx3090", "", "");
  return check_scenarios(h, scenarios, seed, timeout_ms, [&](unsigned sd) {
    return with_gpc_map(sd % 2 ? random_tie_scenario(sd, base) : random_small_scenario(sd, base), h);
  });
}

ConformanceReport run_release_conformance(const model::Hypothesis& h, int scenarios, unsigned seed,
                                          unsigned timeout_ms) {
  const model::Device& base = model::builtin_device("rtx3090", "", "");
  return check_scenarios(h, scenarios, seed, timeout_ms,
                         [&](unsigned sd) { return with_gpc_map(random_release_scenario(sd, base), h); });
}

ConformanceReport check_scenarios(const model::Hypothesis& h, int scenarios, unsigned seed, unsigned timeout_ms,
                                  const std::function<model::Scenario(unsigned)>& make) {
  ConformanceReport r;
  for (int n = 0; n < scenarios; ++n) {
    const model::Scenario sc = make(seed + static_cast<unsigned>(n) * 7919u);
    bool unknown = false, not_unique = false;
    std::string err = check_one(sc, h, timeout_ms, &unknown, &not_unique);
    if (!err.empty()) {
      r.mismatches.push_back(err);
      if (not_unique) ++r.not_unique;
    } else if (unknown) {
      ++r.unknown;
    } else {
      ++r.checked;
    }
  }
  return r;
}

}  // namespace tbcheck::smt
