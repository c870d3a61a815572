// Conformance of the Z3 encoding with the simulator: for random concrete scenarios, given the
// simulator's decisions for earlier blocks, each block's constraints force exactly its decision.
#include <catch2/catch.hpp>

#include <cstdlib>

#include <fmt/format.h>

#include "helpers.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/testing/conformance.hpp"
#include "tbcheck/smt/encoding.hpp"

using namespace tbcheck;

TEST_CASE("SMT encoding conforms to the simulator on random scenarios", "[smt][conformance]") {
  // The default run is sized for CI (2 cores); scripts/long.sh sets TBCHECK_CONFORMANCE_SCENARIOS.
  const char* env = std::getenv("TBCHECK_CONFORMANCE_SCENARIOS");
  const int forced = env ? std::atoi(env) : 0;
  for (const auto& h : model::builtin_hypotheses()) {
    INFO(h.name);
    // gpc-priority needs a device with a GPC map and scenarios of its own: tests/smt/test_fermi_encoding.cpp.
    if (h.selection == model::Selection::GpcPriority) continue;
    const bool pb = h.pb_warps();
    const bool few = h.warps == model::Warps::PbAny || h.registers == model::Registers::PbContiguous;
    const int scenarios = forced > 0 ? forced : pb ? (few ? 4 : 8) : 40;
    auto report = smt::run_conformance(h, scenarios, /*seed=*/1234, /*timeout_ms=*/60000);
    CHECK_FALSE(report.unsupported);  // every option has an encoding
    for (const auto& m : report.mismatches) FAIL_CHECK(m);
    CHECK(report.checked == scenarios);
    CHECK(report.not_unique == 0);
  }
}

TEST_CASE("SMT conformance catches a wrong encoding", "[smt][conformance]") {
  // The check is only worth something if it can fail: compare alg1's encoding with the schedule of
  // a different hypothesis on a scenario where the two differ (seed 000 Case 2.2, reduced).
  auto sc = test::scenario(R"({"device": {"name": "mini", "cc": "8.6", "sms": 1, "sms_per_tpc": 1, "pbs_per_sm": 4,
    "max_blocks_per_sm": 16, "max_warps_per_sm": 48, "max_threads_per_block": 1024, "regs_per_sm": 65536,
    "reg_alloc_unit": 256, "max_regs_per_thread": 255, "smem_configs_kb": [0, 8, 16, 32, 64, 100],
    "smem_alloc_unit": 128, "smem_reserved_per_block": 1024, "max_smem_per_block": 101376},
    "kernels": [{"blocks": 1, "threads": 32, "regs": 255, "duration": 1},
                {"blocks": 1, "threads": 128, "regs": 255, "duration": 1},
                {"blocks": 1, "threads": 96, "regs": 255, "duration": 1}]})");
  CHECK(smt::check_one(sc, test::hyp("alg1"), 60000).empty());
  CHECK(smt::check_one(sc, test::hyp("alg1-no-skip"), 60000).empty());
  // The two hypotheses really differ here: kernel 3 waits under alg1 only.
  CHECK(model::simulate(sc, test::hyp("alg1")).kernels[2].blocks[0].start == 1);
  CHECK(model::simulate(sc, test::hyp("alg1-no-skip")).kernels[2].blocks[0].start == 0);
}

TEST_CASE("SMT engine encodes gpc-priority and pb-contiguous", "[smt]") {
  model::Hypothesis gpc = test::hyp("alg1");
  gpc.name = "alg1-gpc-priority";
  gpc.selection = model::Selection::GpcPriority;
  CHECK_NOTHROW(smt::check_encodable(gpc));  // the GPC map is checked per device: tests/smt/test_fermi_encoding.cpp
  CHECK_NOTHROW(smt::check_encodable(test::hyp("alg1-contiguous-regs")));
  CHECK_NOTHROW(smt::check_encodable(test::hyp("alg1")));
}

TEST_CASE("SMT encoding of pb-contiguous registers conforms where holes fragment", "[smt][conformance]") {
  // One SM, 4-warp blocks (one warp per PB, 16384 registers per PB). Per PB: k1 takes [0, 4096), k2
  // [4096, 12288); when k1 retires at 1 the PB has 8192 free registers in two 4096 holes. k3's warps
  // need 8192: pooled registers (alg1) take it at 1, contiguous ones wait for k2 to retire at 3.
  auto sc = test::scenario(R"({"device": {"name": "mini", "cc": "8.6", "sms": 1, "sms_per_tpc": 1, "pbs_per_sm": 4,
    "max_blocks_per_sm": 16, "max_warps_per_sm": 48, "max_threads_per_block": 1024, "regs_per_sm": 65536,
    "reg_alloc_unit": 256, "max_regs_per_thread": 255, "smem_configs_kb": [0, 8, 16, 32, 64, 100],
    "smem_alloc_unit": 128, "smem_reserved_per_block": 1024, "max_smem_per_block": 101376},
    "kernels": [{"blocks": 1, "threads": 128, "regs": 128, "duration": 1},
                {"blocks": 1, "threads": 128, "regs": 255, "duration": 3},
                {"blocks": 1, "threads": 128, "regs": 255, "duration": 1},
                {"blocks": 2, "threads": 32, "regs": 64, "duration": 2}]})");
  for (const char* name : {"alg1", "alg1-contiguous-regs"}) {
    INFO(name);
    bool unknown = false, not_unique = false;
    CHECK(smt::check_one(sc, test::hyp(name), 60000, &unknown, &not_unique) == "");
    CHECK_FALSE(unknown);
    CHECK_FALSE(not_unique);
  }
  CHECK(model::simulate(sc, test::hyp("alg1")).kernels[2].blocks[0].start == 1);
  CHECK(model::simulate(sc, test::hyp("alg1-contiguous-regs")).kernels[2].blocks[0].start == 3);
}

TEST_CASE("SMT encoding of the paired issue conforms on grids large enough to pair", "[smt][conformance][issue]") {
  // One TPC (2 SMs): a kernel of >= 9 blocks has pair leaders. Small blocks pair; 33-warp blocks cannot
  // join their leader (one per SM), so the selection places them; a second kernel follows in another stream.
  const std::string dev = test::mini_device(2);
  const std::vector<std::string> kernels = {
      R"([{"name": "k1", "blocks": 9, "threads": 32, "regs": 32, "smem": 0, "duration": 1}])",
      R"([{"name": "k1", "blocks": 11, "threads": 64, "regs": 40, "smem": 2048, "duration": 2}])",
      R"([{"name": "k1", "blocks": 10, "threads": 1024, "regs": 32, "smem": 0, "duration": 1}])",
      R"([{"name": "k1", "blocks": 3, "threads": 800, "regs": 32, "smem": 0, "duration": 2},
          {"name": "k2", "blocks": 9, "threads": 96, "regs": 64, "smem": 0, "duration": 1}])"};
  model::Hypothesis room = test::hyp("most-room");
  room.name = "most-room-paired";
  room.issue = model::Issue::Paired;
  const std::vector<const model::Hypothesis*> paired = {&room, &test::hyp("alg1-paired")};
  for (const auto* h : paired)
    for (const auto& k : kernels) {
      auto sc = test::scenario(R"({"device": )" + dev + R"(, "kernels": )" + k + "}");
      INFO(h->name << " on " << k);
      bool unknown = false, not_unique = false;
      CHECK(smt::check_one(sc, *h, 120000, &unknown, &not_unique).empty());
      CHECK_FALSE(unknown);
      CHECK_FALSE(not_unique);
    }
  // The rule matters on these scenarios: the first one pairs under alg1-paired and not under alg1.
  auto first = test::scenario(R"({"device": )" + dev + R"(, "kernels": )" + kernels[0] + "}");
  CHECK(model::simulate(first, test::hyp("alg1-paired")).kernels[0].blocks[1].sm == 0);
  CHECK(model::simulate(first, test::hyp("alg1")).kernels[0].blocks[1].sm == 1);
}

TEST_CASE("SMT encoding of the device's hand-out passes conforms, and a pass-less schedule is told apart", "[smt][conformance][issue]") {
  // One TPC whose file pairs and hands out two decisions per pass from the second on (the device issue rule,
  // scaled down): 11 small blocks are placements 0 1 | 2 4 3 5 | ... (blocks 2 and 3 lead, 4 and 5 follow).
  const std::string dev = R"({"name": "mini-turing-2", "cc": "7.5", "sms": 2, "sms_per_tpc": 2, "pbs_per_sm": 4,
      "max_blocks_per_sm": 16, "max_warps_per_sm": 32, "max_threads_per_block": 1024, "regs_per_sm": 65536,
      "reg_alloc_unit": 256, "max_regs_per_thread": 255, "smem_configs_kb": [32, 64], "smem_alloc_unit": 128,
      "smem_reserved_per_block": 0, "max_smem_per_block": 65536, "issue_pairs": true, "issue_pass": 2,
      "issue_pass_from": 1})";
  const std::vector<std::string> kernels = {
      R"([{"name": "k1", "blocks": 11, "threads": 32, "regs": 32, "smem": 0, "duration": 1}])",
      R"([{"name": "k1", "blocks": 12, "threads": 64, "regs": 40, "smem": 2048, "duration": 2}])",
      R"([{"name": "k1", "blocks": 2, "threads": 800, "regs": 32, "smem": 0, "duration": 2},
          {"name": "k2", "blocks": 11, "threads": 96, "regs": 64, "smem": 0, "duration": 1}])"};
  const model::Hypothesis& h = test::hyp("alg1-paired");
  for (const auto& k : kernels) {
    auto sc = test::scenario(R"({"device": )" + dev + R"(, "kernels": )" + k + "}");
    INFO(k);
    bool unknown = false, not_unique = false;
    CHECK(smt::check_one(sc, h, 120000, &unknown, &not_unique).empty());
    CHECK_FALSE(unknown);
    CHECK_FALSE(not_unique);
  }
  auto sc = test::scenario(R"({"device": )" + dev + R"(, "kernels": )" + kernels[0] + "}");
  model::Schedule passes = model::simulate(sc, h);
  std::vector<int> sms;
  for (const auto& b : passes.kernels[0].blocks) sms.push_back(b.sm);
  CHECK(std::vector<int>(sms.begin(), sms.begin() + 6) == std::vector<int>{0, 0, 1, 0, 1, 0});
  // The same decisions handed out pair by pair (the device without passes) is another schedule: the
  // encoding with passes must reject it.
  model::Scenario adjacent = sc;
  adjacent.device.issue_pass = 1;
  adjacent.device.issue_pass_from = 0;
  bool unknown = false;
  CHECK_FALSE(smt::check_schedule(sc, h, model::simulate(adjacent, h), 120000, &unknown).empty());
  CHECK_FALSE(unknown);
}

// The priority and partition options in both engines, on random scenarios with stream
// priorities and one-TPC masks (random_control_scenario). scripts/long.sh runs 1000 per option.
TEST_CASE("SMT encoding conforms to the simulator with priorities and TPC masks", "[smt][conformance][controls]") {
  const char* env = std::getenv("TBCHECK_CONFORMANCE_SCENARIOS");
  const int forced = env ? std::atoi(env) : 0;
  const int scenarios = forced > 0 ? forced : 30;
  std::vector<model::Hypothesis> hs;
  for (auto p : {model::Priority::Ignore, model::Priority::Strict, model::Priority::TwoLevel})
    for (auto q : {model::Partition::AllowedSms, model::Partition::Ignore}) {
      model::Hypothesis h = test::hyp("alg1");
      h.priority = p;
      h.partition = q;
      h.name = fmt::format("alg1+priority={}+partition={}", model::to_string(p), model::to_string(q));
      hs.push_back(h);
    }
  model::Hypothesis rr = test::hyp("round-robin");  // the pointer over a masked order
  rr.priority = model::Priority::Strict;
  rr.name = "round-robin+priority=strict";
  hs.push_back(rr);
  for (const auto& h : hs) {
    INFO(h.name);
    auto report = smt::run_conformance(h, scenarios, /*seed=*/1717, /*timeout_ms=*/60000, /*controls=*/true);
    for (const auto& m : report.mismatches) FAIL_CHECK(m);
    CHECK(report.checked == scenarios);
  }
}

TEST_CASE("SMT encoding: strict priority reorders the kernels", "[smt][controls]") {
  auto sc = test::scenario(R"({"device": "xavier", "kernels": [
      {"name": "low", "blocks": 3, "threads": 1024, "regs": 32, "duration": 2, "stream": 0, "priority": 0},
      {"name": "high", "blocks": 1, "threads": 1024, "regs": 32, "duration": 1, "stream": 1, "priority": -1, "tpcs": [2]}]})");
  sc.device.sms = 6;  // 3 TPCs keep the query small
  CHECK(smt::check_one(sc, test::hyp("alg1-priority"), 60000).empty());
  CHECK(smt::check_one(sc, test::hyp("alg1"), 60000).empty());
  // The check fails when handed the other option's schedule (they differ here).
  const model::Schedule other = model::simulate(sc, test::hyp("alg1"));
  CHECK_FALSE(smt::check_schedule(sc, test::hyp("alg1-priority"), other, 60000).empty());
}

TEST_CASE("SMT encoding of retirement start-order conforms to the simulator where retirements tie", "[smt][conformance][retirement]") {
  const char* env = std::getenv("TBCHECK_CONFORMANCE_SCENARIOS");
  const int forced = env ? std::atoi(env) : 0;
  const model::Device& base = model::builtin_device("rtx3090", "", "");
  for (const auto& shipped : model::builtin_hypotheses()) {
    if (model::combination_error([&] {
          model::Hypothesis h = shipped;
          h.retirement = model::Retirement::StartOrder;
          return h;
        }()))
      continue;  // gpc-priority has one reading only
    model::Hypothesis h = shipped;
    h.name = shipped.name + "-start-order";
    h.retirement = model::Retirement::StartOrder;
    INFO(h.name);
    const bool pb = h.pb_warps();
    const bool few = h.warps == model::Warps::PbAny || h.registers == model::Registers::PbContiguous;
    const int scenarios = forced > 0 ? forced : pb ? (few ? 4 : 8) : 24;
    auto report = smt::run_tie_conformance(h, scenarios, /*seed=*/4242, /*timeout_ms=*/60000);
    CHECK_FALSE(report.unsupported);
    for (const auto& m : report.mismatches) FAIL_CHECK(m);
    CHECK(report.checked == scenarios);
    CHECK(report.not_unique == 0);
    // The scenarios exercise the option: on some of them the two readings place blocks differently.
    int parted = 0;
    for (int n = 0; n < scenarios; ++n) {
      const unsigned sd = 4242u + static_cast<unsigned>(n) * 7919u;
      const model::Scenario sc =
          smt::with_gpc_map(sd % 2 ? smt::random_tie_scenario(sd, base) : smt::random_small_scenario(sd, base), h);
      const model::Schedule a = model::simulate(sc, h), b = model::simulate(sc, shipped);
      for (size_t k = 0; k < sc.kernels.size(); ++k) parted += a.kernels[k].blocks != b.kernels[k].blocks ? 1 : 0;
    }
    if (!pb) CHECK(parted > 0);
  }
}

// Launches and tied retirements at one instant: >= 200 scenarios in scripts/long.sh (TBCHECK_RELEASE_SCENARIOS).
TEST_CASE("SMT encoding of retirement start-order conforms with release times", "[smt][conformance][release][retirement]") {
  const char* env = std::getenv("TBCHECK_RELEASE_SCENARIOS");
  const int forced = env ? std::atoi(env) : 0;
  const int scenarios = forced > 0 ? forced : 12;
  for (auto p : {model::Priority::Ignore, model::Priority::Strict}) {
    model::Hypothesis h = test::hyp("alg1");
    h.name = "alg1-start-order";
    h.retirement = model::Retirement::StartOrder;
    h.priority = p;
    INFO(model::to_string(p));
    auto report = smt::run_release_conformance(h, scenarios, /*seed=*/77, /*timeout_ms=*/60000);
    for (const auto& m : report.mismatches) FAIL_CHECK(m);
    CHECK(report.checked == scenarios);
  }
}

TEST_CASE("SMT encoding tells the two readings of tied retirements apart", "[smt][retirement]") {
  // tests/model/test_simulate.cpp's scenario: k2 and k3 end together at 3, where k4 waits.
  const model::Scenario s = test::scenario(R"({"device": )" + test::mini_device(2) + R"(, "kernels": [
    {"name": "k1", "blocks": 1, "threads": 1024, "regs": 32, "duration": 1},
    {"name": "k2", "blocks": 1, "threads": 1024, "regs": 32, "duration": 3},
    {"name": "k3", "blocks": 1, "threads": 1024, "regs": 32, "duration": 2},
    {"name": "k4", "blocks": 1, "threads": 1024, "regs": 32, "duration": 1}]})");
  model::Hypothesis start = test::hyp("alg1");
  start.name = "alg1-start-order";
  start.retirement = model::Retirement::StartOrder;
  const model::Schedule all = model::simulate(s, test::hyp("alg1")), one = model::simulate(s, start);
  REQUIRE(all.kernels[3].blocks[0].sm != one.kernels[3].blocks[0].sm);
  // Each encoding forces its own reading's schedule and refutes the other's.
  CHECK(smt::check_schedule(s, start, one, 60000).empty());
  CHECK(smt::check_schedule(s, test::hyp("alg1"), all, 60000).empty());
  CHECK_FALSE(smt::check_schedule(s, start, all, 60000).empty());
  CHECK_FALSE(smt::check_schedule(s, test::hyp("alg1"), one, 60000).empty());
}
