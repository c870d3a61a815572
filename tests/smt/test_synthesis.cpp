// Synthesis of distinguishing scenarios: a known separable pair yields a case the simulators
// confirm, a renamed copy cannot be separated (UNSAT), and a tiny timeout is reported as unknown.
#include <catch2/catch.hpp>

#include <algorithm>

#include "helpers.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/distinguish.hpp"
#include "tbcheck/smt/synthesis.hpp"

using namespace tbcheck;

namespace {
smt::QueryOptions small_options() {
  smt::QueryOptions o;
  o.bounds.max_warps = 8;
  o.bounds.max_duration = 2;
  o.timeout_ms = 60000;
  return o;
}
model::Device one_tpc() { return search::reduced_device(model::builtin_device("rtx3090", "", ""), 1); }
}  // namespace

TEST_CASE("round-robin vs most-room: the witness separates the simulators", "[smt][synthesis]") {
  auto r = smt::distinguish_structure(test::hyp("round-robin"), test::hyp("most-room"), one_tpc(), {1, 1}, small_options());
  REQUIRE(r.outcome == smt::QueryOutcome::Found);
  auto a = model::simulate(r.scenario, test::hyp("round-robin"));
  auto b = model::simulate(r.scenario, test::hyp("most-room"));
  CHECK(!search::first_difference(a, b).empty());
  // They agree on every block but the last (the shape the query asks for).
  CHECK(a.kernels[0].blocks[0] == b.kernels[0].blocks[0]);
}

TEST_CASE("a single block cannot separate round-robin from most-room", "[smt][synthesis]") {
  auto r = smt::distinguish_structure(test::hyp("round-robin"), test::hyp("most-room"), one_tpc(), {1}, small_options());
  CHECK(r.outcome == smt::QueryOutcome::None);
}

TEST_CASE("a hypothesis and a renamed copy of itself are inseparable (UNSAT)", "[smt][synthesis]") {
  model::Hypothesis copy = test::hyp("most-room");
  copy.name = "most-room-copy";
  // UNSAT must be proved, not timed out: about 15 s of CPU, so the limit leaves room for a loaded machine.
  auto o = small_options();
  o.timeout_ms = 300000;
  for (std::vector<int> st : {std::vector<int>{1, 1}, std::vector<int>{2, 1}}) {
    auto r = smt::distinguish_structure(test::hyp("most-room"), copy, one_tpc(), st, o);
    CHECK(r.outcome == smt::QueryOutcome::None);
  }
}

TEST_CASE("a solver limit is reported as unknown with Z3's reason", "[smt][synthesis]") {
  auto o = small_options();
  o.bounds.max_warps = 32;
  // Z3's own work counter, not the clock: a 1 ms timeout was answered in full on a loaded machine, whose
  // timer thread did not run in time.
  o.resource_limit = 1;
  auto r = smt::distinguish_structure(test::hyp("alg1"), test::hyp("alg1-no-skip"), one_tpc(), {1, 1, 1}, o);
  CHECK(r.outcome == smt::QueryOutcome::Unknown);
  CHECK(!r.reason.empty());
}

TEST_CASE("distinguish_pair lifts a witness to the full device and re-verifies it", "[smt][synthesis]") {
  search::DistinguishBounds b;
  b.max_kernels = 2;
  b.max_total_blocks = 2;
  b.max_blocks_per_kernel = 2;
  b.params.max_warps = 8;
  b.params.max_duration = 2;
  b.timeout_ms = 60000;
  b.reduced_tpcs = {1};
  b.sim_samples = 0;  // Z3 only: this test is about the solver's witness and its minimality proof
  const auto& full = model::builtin_device("rtx3090", "", "");
  auto r = search::distinguish_pair(test::hyp("round-robin"), test::hyp("most-room"), full, b);
  REQUIRE(r.outcome == search::PairOutcome::Separated);
  REQUIRE(r.witness);
  CHECK(r.witness->scenario.device.sms == 82);
  CHECK(r.blocks == 82);  // two kernels of one block each, lifted x41
  CHECK(r.minimal_proved);
  CHECK(!search::first_difference(model::simulate(r.witness->scenario, test::hyp("round-robin")),
                                  model::simulate(r.witness->scenario, test::hyp("most-room")))
             .empty());
}

TEST_CASE("alg1 vs alg1-no-skip: distinguish_pair yields a case both simulators confirm", "[smt][synthesis]") {
  // The pair that timed out at every structure beyond the trivial ones before the simulator pre-pass.
  search::DistinguishBounds b;
  b.timeout_ms = 500;
  b.pair_budget_ms = 1000;
  b.reduced_tpcs = {1};
  const auto& full = model::builtin_device("rtx3090", "", "");
  auto r = search::distinguish_pair(test::hyp("alg1"), test::hyp("alg1-no-skip"), full, b);
  REQUIRE(r.outcome == search::PairOutcome::Separated);
  REQUIRE(r.witness);
  CHECK(r.witness->scenario.device.sms == 82);
  auto a = model::simulate(r.witness->scenario, test::hyp("alg1"));
  auto c = model::simulate(r.witness->scenario, test::hyp("alg1-no-skip"));
  CHECK(!search::first_difference(a, c).empty());
  CHECK(r.first_difference == search::first_difference(a, c));
}

TEST_CASE("a hypothesis and a renamed copy are reported inseparable by distinguish_pair", "[smt][synthesis]") {
  model::Hypothesis copy = test::hyp("alg1");
  copy.name = "alg1-copy";
  search::DistinguishBounds b;
  auto r = search::distinguish_pair(test::hyp("alg1"), copy, model::builtin_device("rtx3090", "", ""), b);
  CHECK(r.outcome == search::PairOutcome::Inseparable);
  CHECK(r.minimal_proved);
}

TEST_CASE("even-first and natural order are the same machine on one TPC", "[smt][synthesis]") {
  const auto& full = model::builtin_device("rtx3090", "", "");
  CHECK(search::same_machine_on(test::hyp("alg1"), test::hyp("alg1-natural-order"), search::reduced_device(full, 1), 3));
  CHECK(!search::same_machine_on(test::hyp("alg1"), test::hyp("alg1-natural-order"), search::reduced_device(full, 2), 3));
  CHECK(!search::same_machine_on(test::hyp("alg1"), test::hyp("alg1-no-skip"), search::reduced_device(full, 1), 3));
}

TEST_CASE("pb-any and sm warps are the same machine under SM-pooled registers, not under PB registers", "[smt][synthesis]") {
  const auto& full = model::builtin_device("h100-sxm", "", "");
  model::Hypothesis any = test::hyp("alg1"), sm = test::hyp("alg1");
  any.registers = sm.registers = model::Registers::Sm;
  any.warps = model::Warps::PbAny;
  sm.warps = model::Warps::Sm;
  any.skip_on_multiple_of_4 = sm.skip_on_multiple_of_4 = false;
  CHECK(search::same_machine_on(any, sm, full, 3));
  CHECK(search::same_machine_on(any, sm, search::reduced_device(full, 1), 3));
  model::Hypothesis rr = sm;
  rr.warps = model::Warps::PbStrictRR;
  CHECK(!search::same_machine_on(any, rr, full, 3));
  any.registers = model::Registers::Pb;  // PB registers: pb-any's rooms are per PB, and sm pools cannot say
  CHECK(!search::same_machine_on(any, sm, full, 3));
}

TEST_CASE("paired issue: last-block synthesis is refused where pair leaders look ahead", "[smt][synthesis]") {
  auto o = small_options();
  o.timeout_ms = 20000;
  // No leader in a 2-block kernel on 2 SMs: the encoding is single issue's, so alg1 equals it.
  auto none = smt::distinguish_structure(test::hyp("alg1"), test::hyp("alg1-paired"), one_tpc(), {2}, o);
  CHECK(none.outcome == smt::QueryOutcome::None);
  // 9 blocks on 2 SMs has leaders (>= 2 x SMs + 5): the encoding is exact there (conformance test in
  // tests/smt/test_encoding.cpp), but a first difference may come before the last block, so the last-block
  // query is refused with the reason rather than answering an UNSAT that proves nothing.
  auto big = smt::distinguish_structure(test::hyp("alg1"), test::hyp("alg1-paired"), one_tpc(), {9}, o);
  CHECK(big.outcome == smt::QueryOutcome::Unsupported);
  CHECK(big.reason.find("pair leaders") != std::string::npos);
}

TEST_CASE("integer and bit-vector encodings agree on a query", "[smt][synthesis]") {
  auto o = small_options();
  for (auto sort : {smt::Sort::Int, smt::Sort::BitVec}) {
    o.sort = sort;
    auto r = smt::distinguish_structure(test::hyp("round-robin"), test::hyp("most-room"), one_tpc(), {1, 1}, o);
    REQUIRE(r.outcome == smt::QueryOutcome::Found);
    CHECK(!search::first_difference(model::simulate(r.scenario, test::hyp("round-robin")),
                                    model::simulate(r.scenario, test::hyp("most-room")))
               .empty());
    auto one = smt::distinguish_structure(test::hyp("round-robin"), test::hyp("most-room"), one_tpc(), {1}, o);
    CHECK(one.outcome == smt::QueryOutcome::None);
  }
}

TEST_CASE("a pair with a hypothesis that cannot run on the device is unsupported, quickly", "[smt][synthesis]") {
  // fermi needs a GPC map; rtx3090 has none.
  auto r = search::distinguish_pair(test::hyp("alg1"), test::hyp("fermi"), model::builtin_device("rtx3090", "", ""),
                                    search::DistinguishBounds{});
  CHECK(r.outcome == search::PairOutcome::Unsupported);
  CHECK(r.reason.find("GPC") != std::string::npos);
}

TEST_CASE("pb-contiguous pairs are separated by a re-verified case", "[smt][synthesis]") {
  search::DistinguishBounds b;
  b.reduced_tpcs = {1};
  const auto& full = model::builtin_device("rtx3090", "", "");
  auto r = search::distinguish_pair(test::hyp("alg1-literal"), test::hyp("alg1-contiguous-regs"), full, b);
  REQUIRE(r.outcome == search::PairOutcome::Separated);
  REQUIRE(r.witness.has_value());
  // pb-contiguous has an encoding now, so no reason mentions it as missing.
  CHECK(r.reason.find("pb-contiguous") == std::string::npos);
  CHECK(!search::first_difference(model::simulate(r.witness->scenario, test::hyp("alg1-literal")),
                                  model::simulate(r.witness->scenario, test::hyp("alg1-contiguous-regs")))
             .empty());
}

// The structure carries stream priorities and TPC masks (control_variants), so every new pair
// is separated by a witness both simulators confirm, or settled by the device (two levels only).
TEST_CASE("distinguish separates the priority and partition options with confirmed witnesses", "[smt][synthesis][controls]") {
  search::DistinguishBounds b;
  b.max_kernels = 2;
  b.max_total_blocks = 3;
  b.timeout_ms = 5000;
  b.pair_budget_ms = 20000;
  b.wide_samples = 0;
  model::Hypothesis two = test::hyp("alg1-priority"), masks_off = test::hyp("alg1");
  two.name = "alg1-two-level";
  two.priority = model::Priority::TwoLevel;
  masks_off.name = "alg1-partition-ignore";
  masks_off.partition = model::Partition::Ignore;
  struct Pair {
    const model::Hypothesis *a, *b;
    const char* device;
    bool priorities, masks;
  };
  const Pair pairs[] = {{&test::hyp("alg1"), &test::hyp("alg1-priority"), "rtx2080ti", true, false},
                        {&test::hyp("alg1"), &two, "rtx2080ti", true, false},
                        {&test::hyp("alg1-priority"), &two, "rtx2080ti", true, false},
                        {&test::hyp("alg1"), &masks_off, "rtx3090", false, true}};
  for (const auto& p : pairs) {
    INFO(p.a->name << " vs " << p.b->name);
    for (bool z3_only : {false, true}) {
      INFO("Z3 only: " << z3_only);
      search::DistinguishBounds bb = b;
      if (z3_only) bb.sim_samples = 0;
      auto r = search::distinguish_pair(*p.a, *p.b, model::builtin_device(p.device, "", ""), bb);
      REQUIRE(r.outcome == search::PairOutcome::Separated);
      REQUIRE(r.witness);
      if (z3_only) CHECK(r.found_by == search::Finder::Smt);
      const auto& ks = r.witness->scenario.kernels;
      CHECK(std::any_of(ks.begin(), ks.end(), [](const model::Kernel& k) { return k.priority.has_value(); }) == p.priorities);
      CHECK(std::any_of(ks.begin(), ks.end(), [](const model::Kernel& k) { return !k.tpcs.empty(); }) == p.masks);
      CHECK_FALSE(search::first_difference(model::simulate(r.witness->scenario, *p.a),
                                           model::simulate(r.witness->scenario, *p.b)).empty());
    }
  }
  // xavier has two priority levels: two-level is strict there, settled without a query.
  auto r = search::distinguish_pair(test::hyp("alg1-priority"), two, model::builtin_device("xavier", "", ""), b);
  CHECK(r.outcome == search::PairOutcome::Inseparable);
  // rtx3090 has no priority range: priorities cannot be set there at all.
  r = search::distinguish_pair(test::hyp("alg1"), test::hyp("alg1-priority"), model::builtin_device("rtx3090", "", ""), b);
  CHECK(r.outcome == search::PairOutcome::Inseparable);
}

TEST_CASE("the shipped priority and partition witnesses separate their pairs", "[synthesis][controls]") {
  const std::pair<const char*, const char*> pairs[] = {
      {"alg1", "alg1-priority"},
      {"alg1", "alg1-two-level"},
      {"alg1-priority", "alg1-two-level"},
      {"alg1", "alg1-partition-ignore"}};
  auto resolve = [](const std::string& name) {
    const auto* h = model::find_builtin_hypothesis(name);
    return h ? *h : model::load_hypothesis_file(test::source_path("corpus/hypotheses-extra/" + name + ".json"));
  };
  for (const auto& [a, b] : pairs) {
    const std::string device = std::string(b) == "alg1-partition-ignore" ? "rtx3090" : "rtx2080ti";
    const std::string id = "synth-" + device + "-" + a + "-vs-" + b;
    INFO(id);
    auto cases = model::load_cases(test::source_path("corpus/synth/" + id + ".json"));
    REQUIRE(cases.size() == 1);
    const auto& s = cases[0].scenario;
    const bool controls = std::any_of(s.kernels.begin(), s.kernels.end(),
                                      [](const model::Kernel& k) { return k.priority || !k.tpcs.empty(); });
    CHECK(controls);
    CHECK_FALSE(search::first_difference(model::simulate(s, resolve(a)), model::simulate(s, resolve(b))).empty());
  }
}
