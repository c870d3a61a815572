// The real TX2 run of docs/recordings.md's worked example: ../shared/external/tx2's examiner logs imported
// at 20 ms, 2 us and 1 us and judged under both timings by every shipped hypothesis, as the page states.
#include <catch2/catch.hpp>

#include <chrono>

#include "helpers.hpp"
#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/oracle/examiner.hpp"

using namespace tbcheck;

TEST_CASE("the TX2 recording of docs/recordings.md keeps its verdicts at 20 ms, 2 us and 1 us in both timings",
          "[examiner][recordings]") {
  const std::string dir = test::shared_or_skip("external/tx2");
  if (dir.empty()) return;  // a user's clone has no ../shared: the WARN above names the path
  std::vector<std::string> logs;
  for (int i = 1; i <= 4; ++i) logs.push_back(dir + "/concurrent_1st_" + std::to_string(i) + ".json");
  for (const double unit_ms : {20.0, 0.002, 0.001}) {
    oracle::examiner::ImportOptions o;
    o.device = model::builtin_device("tx2", "test", "device");
    o.time_unit_ms = unit_ms;
    const auto cases = oracle::examiner::import_logs(logs, o);
    REQUIRE(cases.size() == 1);
    const model::Case& c = cases[0];
    CHECK(c.id == "examiner-Concurrency-during-1st-kernel-test");
    // Listed by launch call: K1, K4, K2, K3 (all four calls within 64 ns, so every launch order is open).
    REQUIRE(c.scenario.kernels.size() == 4);
    CHECK(c.scenario.kernels[0].blocks == 2);  // K1
    CHECK(c.scenario.kernels[1].blocks == 5);  // K4
    CHECK(c.scenario.kernels[2].blocks == 7);  // K2
    CHECK(c.scenario.kernels[3].blocks == 2);  // K3
    for (const auto& h : model::builtin_hypotheses()) {
      INFO(unit_ms << " ms, " << h.name);
      for (const model::Timing t : model::kAllTimings) {
        INFO(model::to_string(t) << " timing");
        model::JudgeOptions j;
        j.timing = t;
        const auto t0 = std::chrono::steady_clock::now();
        const model::CaseResult r = model::evaluate(c, h, j);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        CHECK(s < 1.0);
        if (model::needs_gpc_map(h)) {  // fermi and hopper need a GPC map the TX2 has none of
          CHECK_FALSE(r.ran);
          continue;
        }
        // Every level decided: never unknown.
        for (const model::Level l : model::kAllLevels) CHECK(r.at(l) != model::Verdict::Unknown);
        CHECK(r.at(model::Level::Counts) == model::Verdict::Pass);
        CHECK(r.at(model::Level::Sms) == model::Verdict::Pass);
        if (t == model::Timing::Model) {
          // Model durations end K2's seven blocks together and start K1 first: its blocks land on both SMs.
          CHECK(r.at(model::Level::Exact) == model::Verdict::Fail);
          CHECK_THAT(r.first_failure(model::Level::Exact), Catch::Contains("GPUSpin block 0: predicted SM 0, observed SM 1"));
          continue;
        }
        CHECK(r.timing == model::Timing::Trace);
        CHECK(r.at(model::Level::Exact) == model::Verdict::Pass);
        REQUIRE(r.skew);
        // At 20 ms every start of a wave reads one unit: no skew, and K1 and K4 (both waiting on K2) stay
        // unordered. At 2 us and 1 us K4's five blocks, dispatched after K2's retirements, start a unit
        // apart on the two SMs; the order that reproduces the run is the thesis' K2, K3, K4, K1.
        if (unit_ms == 20.0) {
          CHECK(r.skew->units == 0);
          CHECK_THAT(r.order(model::Level::Exact), Catch::StartsWith("launch order GPUSpin.3, GPUSpin.4"));
        } else {
          CHECK(r.skew->units == 1);
          CHECK_THAT(r.skew->basis, Catch::Contains("5 blocks of GPUSpin.2 on SM(s) 0, 1"));
          CHECK_THAT(r.order(model::Level::Exact),
                     Catch::StartsWith("launch order GPUSpin.3, GPUSpin.4, GPUSpin.2, GPUSpin;"));
        }
      }
    }
  }
}
