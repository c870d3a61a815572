// Random conformance between the SMT encoding and the simulator (the test that makes every
// synthesized case trustworthy). Scenarios are small enough to solve in milliseconds.
#include "tbcheck/smt/conformance.hpp"

#include <random>

#include <fmt/format.h>

#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/resources.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/smt/encoding.hpp"

namespace tbcheck::smt {

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
    kr.threads = 32 * (pick(0, 3) == 0 ? pick(1, 32) : pick(1, 8));
    const auto& regs = realizable_regs();
    kr.regs = pick(0, 2) == 0 ? regs[static_cast<size_t>(pick(0, static_cast<int>(regs.size()) - 1))] : (pick(0, 1) ? 32 : 64);
    kr.smem = pick(0, 2) == 0 ? 0 : 128 * pick(0, base.max_smem_per_block / 128);
    kr.duration = pick(1, 3);
    kr.local = pick(0, 3) == 0 ? pick(0, 2) * 16 : 0;
    // Keep only kernels one block of which fits an empty SM under every shipped hypothesis.
    bool ok = true;
    for (const auto& h : model::builtin_hypotheses()) {
      if (h.selection == model::Selection::GpcPriority) continue;  // needs a GPC map; not encoded anyway
      ok = ok && model::infeasibility_reason(kr, s.device, h).empty();
    }
    if (!ok) {
      kr.threads = 32 * pick(1, 4);
      kr.regs = 32;
      kr.smem = 1024 * pick(0, 8);
    }
    s.kernels.push_back(kr);
  }
  return s;
}

std::string check_one(const model::Scenario& sc, const model::Hypothesis& h, unsigned timeout_ms, bool* unknown,
                      bool* not_unique) {
  model::Schedule want = model::simulate(sc, h);
  std::vector<model::BlockPlacement> flat;
  for (const auto& k : want.kernels)
    for (const auto& b : k.blocks) flat.push_back(b);
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
  auto groups = encode_grouped(s, h, d, "h");
  z3::solver solver(c);
  z3::params p(c);
  p.set("timeout", timeout_ms);
  solver.set(p);
  for (const auto& x : groups[0]) solver.add(x);
  // Induction over blocks: given the simulator's decisions for blocks 0..i-1, block i's constraints
  // must admit the simulator's decision and no other. Then the whole schedule is unique and equal.
  for (size_t i = 0; i < flat.size(); ++i) {
    for (const auto& x : groups[i + 1]) solver.add(x);
    auto res = solver.check();
    if (res == z3::unknown) {
      if (unknown) *unknown = true;
      return "";
    }
    if (res == z3::unsat)
      return fmt::format("{}: {}: the encoding admits no decision after the simulator's history; case: {}", h.name, where(i), as_case);
    z3::model m = solver.get_model();
    int64_t sm = m.eval(d.sm[i], true).get_numeral_int64();
    int64_t st = m.eval(d.start[i], true).get_numeral_int64();
    if (sm != flat[i].sm || st != flat[i].start)
      return fmt::format("{}: {}: simulator SM {} start {}, SMT SM {} start {}; case: {}", h.name, where(i), flat[i].sm,
                         flat[i].start, sm, st, as_case);
    solver.push();
    solver.add(d.sm[i] != flat[i].sm || d.start[i] != static_cast<int>(flat[i].start));
    auto again = solver.check();
    solver.pop();
    if (again == z3::sat) {
      if (not_unique) *not_unique = true;
      return fmt::format("{}: {}: a second decision satisfies the encoding; case: {}", h.name, where(i), as_case);
    }
    if (again == z3::unknown) {
      if (unknown) *unknown = true;
      return "";
    }
    solver.add(d.sm[i] == flat[i].sm && d.start[i] == static_cast<int>(flat[i].start));
  }
  return "";
}

ConformanceReport run_conformance(const model::Hypothesis& h, int scenarios, unsigned seed, unsigned timeout_ms) {
  ConformanceReport r;
  try {
    check_encodable(h);
  } catch (const Unsupported& e) {
    r.unsupported = true;
    r.unsupported_reason = e.what();
    return r;
  }
  const model::Device& base = model::builtin_device("rtx3090", "", "");
  for (int n = 0; n < scenarios; ++n) {
    model::Scenario sc = random_small_scenario(seed + static_cast<unsigned>(n) * 7919u, base);
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
