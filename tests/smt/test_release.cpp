// Release times in the SMT engine (smt/src/release.cpp): the dispatch orders a scenario admits, and the
// encoding against the simulator on hand-made and random scenarios with priorities and launch instants.
#include <catch2/catch.hpp>

#include <cstdlib>

#include <fmt/format.h>

#include "helpers.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/testing/conformance.hpp"
#include "tbcheck/smt/encoding.hpp"

using namespace tbcheck;

namespace {

model::Hypothesis with_priority(model::Priority p) {
  model::Hypothesis h = test::hyp("alg1");
  h.priority = p;
  h.name = fmt::format("alg1+priority={}", model::to_string(p));
  return h;
}

// A low-priority kernel that fills the 4 SMs at 0 (two blocks each), and a high-priority one launched at 1
// (Test5's shape).
model::Scenario late_high() {
  auto sc = test::scenario(R"({"device": "xavier", "kernels": [
      {"name": "low", "blocks": 10, "threads": 1024, "regs": 32, "duration": 2, "stream": 0, "priority": 0},
      {"name": "high", "blocks": 2, "threads": 1024, "regs": 32, "duration": 1, "stream": 1, "priority": -1,
       "release_time": 1}]})");
  sc.device.sms = 4;  // 2 TPCs keep the query small
  return sc;
}

}  // namespace

TEST_CASE("release times: the dispatch orders each priority option admits", "[smt][release]") {
  auto sc = test::scenario(R"({"device": "xavier", "kernels": [
      {"name": "low", "blocks": 2, "threads": 1024, "regs": 32, "duration": 2, "stream": 0, "priority": 0},
      {"name": "high", "blocks": 1, "threads": 1024, "regs": 32, "duration": 1, "stream": 1, "priority": -1,
       "release_time": 1}]})");
  z3::context c;
  auto s = smt::SymbolicScenario::make_fixed(c, sc);
  // ignore: launch order, so high waits for low's last block whatever the times.
  CHECK(smt::kernel_sequences(s, with_priority(model::Priority::Ignore)) == std::vector<std::vector<int>>{{0, 0, 1}});
  // strict: high goes next once launched, however many of low's blocks were placed before 1.
  CHECK(smt::kernel_sequences(s, with_priority(model::Priority::Strict)) ==
        std::vector<std::vector<int>>{{0, 0, 1}, {0, 1, 0}, {1, 0, 0}});
  sc.kernels[1].release = 0;  // no launch instant after 0: the one stable priority order
  auto s0 = smt::SymbolicScenario::make_fixed(c, sc);
  CHECK(smt::kernel_sequences(s0, with_priority(model::Priority::Strict)) == std::vector<std::vector<int>>{{1, 0, 0}});
}

TEST_CASE("release times: a later high-priority kernel in both engines", "[smt][release][controls]") {
  const model::Scenario sc = late_high();
  const model::Hypothesis strict = with_priority(model::Priority::Strict);
  const model::Hypothesis ignore = with_priority(model::Priority::Ignore);
  const model::Schedule by_strict = model::simulate(sc, strict), by_ignore = model::simulate(sc, ignore);
  // The two options part here: at low's first boundary (2) strict places high before low's last two blocks,
  // so high takes the emptiest SMs first; ignore places low's two first.
  REQUIRE(by_strict.kernels[1].blocks[0].start == 2);
  REQUIRE(by_ignore.kernels[1].blocks[0].start == 2);
  REQUIRE(by_strict.kernels[1].blocks[0].sm != by_ignore.kernels[1].blocks[0].sm);
  bool unknown = false;
  CHECK(smt::check_one(sc, strict, 120000, &unknown).empty());
  CHECK(smt::check_one(sc, ignore, 120000, &unknown).empty());
  CHECK_FALSE(unknown);
  // Each engine rejects the other option's schedule, and a start moved off the release is rejected.
  CHECK_FALSE(smt::check_schedule(sc, strict, by_ignore, 120000).empty());
  CHECK_FALSE(smt::check_schedule(sc, ignore, by_strict, 120000).empty());
  model::Schedule early = by_strict;
  early.kernels[1].blocks[0].start = 0;  // before its launch
  early.kernels[1].blocks[0].end = 1;
  CHECK_FALSE(smt::check_schedule(sc, strict, early, 120000).empty());
}

TEST_CASE("release times: a kernel that could start before a release may not be passed over", "[smt][release]") {
  // low fits at 1 (B retires), before high's launch at 2; high then waits for A. An encoding that checked
  // only the last head before the start would also admit high at 10 ahead of low.
  auto sc = test::scenario(R"({"device": "xavier", "kernels": [
      {"name": "A", "blocks": 4, "threads": 768, "regs": 32, "duration": 10, "stream": 0, "priority": 0},
      {"name": "B", "blocks": 2, "threads": 512, "regs": 32, "duration": 1, "stream": 1, "priority": 0},
      {"name": "low", "blocks": 1, "threads": 512, "regs": 32, "duration": 1, "stream": 2, "priority": 0},
      {"name": "high", "blocks": 1, "threads": 1024, "regs": 32, "duration": 1, "stream": 3, "priority": -1,
       "release_time": 2}]})");
  sc.device.sms = 2;
  const model::Hypothesis strict = with_priority(model::Priority::Strict);
  const model::Schedule want = model::simulate(sc, strict);
  REQUIRE(want.kernels[2].blocks[0].start == 1);
  REQUIRE(want.kernels[3].blocks[0].start == 10);
  bool unknown = false;
  CHECK(smt::check_one(sc, strict, 120000, &unknown).empty());
  CHECK_FALSE(unknown);
}

TEST_CASE("release times: encode() is the disjunction of the dispatch orders", "[smt][release]") {
  auto sc = test::scenario(R"({"device": "xavier", "kernels": [
      {"name": "low", "blocks": 5, "threads": 1024, "regs": 32, "duration": 2, "stream": 0, "priority": 0},
      {"name": "high", "blocks": 1, "threads": 1024, "regs": 32, "duration": 1, "stream": 1, "priority": -1,
       "release_time": 1}]})");
  sc.device.sms = 2;  // 4 slots: low's fifth block waits for 2, where strict places high first
  const model::Hypothesis strict = with_priority(model::Priority::Strict);
  auto solve_with = [&](const model::Schedule& pinned) {
    z3::context c;
    auto s = smt::SymbolicScenario::make_fixed(c, sc);
    auto d = smt::Decisions::fresh(c, s.total_blocks(), "d");
    z3::solver solver = smt::make_solver(c, 120000);
    for (const auto& x : smt::encode(s, strict, d, "h")) solver.add(x);
    size_t i = 0;
    for (const auto& k : pinned.kernels)
      for (const auto& b : k.blocks) {
        solver.add(d.sm[i] == b.sm && d.start[i] == static_cast<int>(b.start));
        ++i;
      }
    return solver.check();
  };
  const model::Schedule want = model::simulate(sc, strict);
  const model::Schedule other = model::simulate(sc, with_priority(model::Priority::Ignore));
  REQUIRE(want.kernels[1].blocks[0].start == 2);
  REQUIRE(want.kernels[1].blocks[0].sm != other.kernels[1].blocks[0].sm);  // high before or after low's last
  CHECK(solve_with(want) == z3::sat);
  CHECK(solve_with(other) == z3::unsat);
}

TEST_CASE("release times refused where the simulator refuses them or the encoding has no rule", "[smt][release]") {
  model::Scenario sc = late_high();
  z3::context c;
  auto s = smt::SymbolicScenario::make_fixed(c, sc);
  auto d = smt::Decisions::fresh(c, s.total_blocks(), "d");
  model::Hypothesis fermi = test::hyp("alg1");
  fermi.selection = model::Selection::GpcPriority;
  fermi.name = "gpc-priority";
  CHECK_THROWS_AS(smt::encode(s, fermi, d, "h"), smt::Unsupported);
  // Several dispatch orders: one at a time through the sequence overload, never a silent pick of one.
  CHECK_THROWS_AS(smt::encode_grouped(s, with_priority(model::Priority::Strict), d, "h"), smt::Unsupported);
}

// Priorities x release times, >= 200 random scenarios per option in scripts/long.sh
// (TBCHECK_RELEASE_SCENARIOS); a few in the default run.
TEST_CASE("SMT encoding conforms to the simulator with release times", "[smt][conformance][release]") {
  const char* env = std::getenv("TBCHECK_RELEASE_SCENARIOS");
  const int forced = env ? std::atoi(env) : 0;
  const int scenarios = forced > 0 ? forced : 12;
  // The scenarios exercise interleaving: under strict, a good share admit several dispatch orders (the
  // seeds check_scenarios draws).
  int interleaved = 0;
  for (int n = 0; n < scenarios; ++n) {
    z3::context c;
    const model::Scenario sc = smt::random_release_scenario(2017u + static_cast<unsigned>(n) * 7919u,
                                                            model::builtin_device("rtx3090", "", ""));
    auto s = smt::SymbolicScenario::make_fixed(c, sc);
    interleaved += smt::kernel_sequences(s, with_priority(model::Priority::Strict)).size() > 1;
  }
  CHECK(interleaved * 4 >= scenarios);
  for (auto p : {model::Priority::Ignore, model::Priority::Strict, model::Priority::TwoLevel}) {
    const model::Hypothesis h = with_priority(p);
    INFO(h.name);
    auto report = smt::run_release_conformance(h, scenarios, /*seed=*/2017, /*timeout_ms=*/60000);
    for (const auto& m : report.mismatches) FAIL_CHECK(m);
    CHECK(report.checked == scenarios);
  }
}
