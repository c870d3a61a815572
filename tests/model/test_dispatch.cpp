// The generic dispatcher's selections beyond the papers': gpc-spread against the H200 recordings it was
// read from, and its refusal of a device without a GPC map.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/simulator.hpp"

using namespace tbcheck;
using namespace tbcheck::model;

namespace {

Hypothesis gpc_spread() { return load_hypothesis_file(test::source_path("docs/results/h200/gpc-spread.json")); }

std::vector<int> blocks_per_sm(const std::vector<int>& sms, int n) {
  std::vector<int> out(static_cast<size_t>(n), 0);
  for (int sm : sms) out[static_cast<size_t>(sm)] += 1;
  return out;
}

}  // namespace

TEST_CASE("gpc-spread lands every block of the one-kernel H200 grids where the GPU put it", "[dispatch][gpc-spread]") {
  const Hypothesis h = gpc_spread();
  REQUIRE(h.selection == Selection::GpcSpread);
  int compared = 0;
  for (const char* run : {"corpus/hw/h200/2026-11-26-run5", "corpus/hw/h200/2026-11-26-run7"}) {
    for (const Case& c : load_cases(test::source_path(run))) {
      // The single-wave grids made for it (a second wave follows the GPU's order of retirements).
      if (c.scenario.kernels.size() != 1 || c.scenario.total_blocks() > 132 || c.id.find("spread") == std::string::npos)
        continue;
      const Schedule s = simulate(c.scenario, h);
      std::vector<int> predicted;
      for (const auto& b : s.kernels[0].blocks) predicted.push_back(b.sm);
      const std::vector<int>& observed = c.observation->sm_of_block.at(c.scenario.kernels[0].name);
      INFO(c.id);
      CHECK(blocks_per_sm(predicted, c.scenario.device.sms) == blocks_per_sm(observed, c.scenario.device.sms));
      ++compared;
    }
  }
  CHECK(compared >= 30);
  // The same grids under alg1 (most-room): blocks fill the SMs in the scan order, so a 20-block grid lands elsewhere.
  const Case c = load_cases(test::source_path("corpus/hw/h200/2026-11-26-run7/h200-spread-020.cuda.json")).at(0);
  const Schedule most_room = simulate(c.scenario, test::hyp("alg1"));
  std::vector<int> mr;
  for (const auto& b : most_room.kernels[0].blocks) mr.push_back(b.sm);
  CHECK(blocks_per_sm(mr, 132) != blocks_per_sm(c.observation->sm_of_block.at("k1"), 132));
}

TEST_CASE("gpc-spread: the GPCs take turns one TPC at a time, single-TPC GPCs first", "[dispatch][gpc-spread]") {
  // 4 TPCs of 2 SMs: GPC 0 has TPC 0, GPC 1 has TPCs 1 and 2, GPC 2 has TPC 3.
  json d = json::parse(test::mini_device(8));
  d["gpc_of_tpc"] = {0, 1, 1, 2};
  d["gpc_source"] = "test";
  json sc = {{"device", d}, {"kernels", {{{"name", "k"}, {"blocks", 8}, {"threads", 32}, {"regs", 32}, {"smem", 0},
                                         {"duration", 1}}}}};
  const Scenario s = scenario_from_json(sc, "t");
  const Schedule spread = simulate(s, gpc_spread());
  std::vector<int> order;
  for (const auto& b : spread.kernels[0].blocks) order.push_back(b.sm);
  // One block per SM first; the single-TPC GPCs 0 and 2 before GPC 1 (SMs 0, 6, then their second SMs
  // 1, 7); in GPC 1 one block per TPC (2, 4) before the second SMs (3, 5).
  CHECK(order == std::vector<int>{0, 6, 1, 7, 2, 4, 3, 5});
}

TEST_CASE("gpc-spread on a device without a GPC map is refused naming the device", "[dispatch][gpc-spread]") {
  Scenario s = test::scenario(R"({"device": "rtx3090", "kernels": [{"blocks": 2, "threads": 32, "regs": 32, "smem": 0, "duration": 1}]})");
  FeasibilityCheck why;
  CHECK_FALSE(try_simulate(s, gpc_spread(), &why).has_value());
  CHECK(why.status == Feasibility::NoGpcMap);
  CHECK(why.field == "device");
  CHECK_THAT(why.reason, Catch::Contains("gpc-spread"));
}
