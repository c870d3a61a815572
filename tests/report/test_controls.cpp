// The controls a kernel sets as predict, the SVG and the trace show them (report/src/controls.cpp): wording,
// JSON, allowed SMs, and the schedule JSON that predict --json prints.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/model/text.hpp"
#include "tbcheck/report/controls.hpp"

using namespace tbcheck;

TEST_CASE("controls: wording and JSON of priority, partition and clusters", "[report][controls]") {
  model::Kernel k;
  k.name = "k";
  k.blocks = 8;
  CHECK(report::controls_text(k).empty());
  CHECK(report::controls_json(k).empty());
  k.priority = -2;
  k.tpcs = {0, 1, 2, 5};
  k.cluster = std::array<int, 3>{2, 2, 1};
  CHECK(report::controls_text(k) == "priority -2, TPCs " + model::format_int_list(k.tpcs) + ", clusters of 2 x 2 x 1 (2)");
  const auto j = report::controls_json(k);
  CHECK(j["priority"] == -2);
  CHECK(j["tpcs"].size() == 4);
  CHECK(j["cluster"] == nlohmann::json::array({2, 2, 1}));
  CHECK(j["clusters"] == 2);
  const auto& d = model::builtin_device("rtx3090", "test", "device");  // 2 SMs per TPC
  const auto allowed = report::allowed_sms(k, d);
  REQUIRE(allowed.size() == static_cast<size_t>(d.sms));
  CHECK(allowed[0]);
  CHECK(allowed[5]);
  CHECK_FALSE(allowed[6]);
  CHECK(allowed[10]);
  CHECK_FALSE(allowed[12]);
}

TEST_CASE("controls: predict --json annotates clustered kernels and their blocks", "[report][controls][cli]") {
  auto r = test::run_tbcheck("predict corpus/paper/controls/cuda-guide-cluster-coscheduled-assumed-gpcs.json --hypothesis most-room --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["kernels"].size() == 2);
  const auto& wide = j["kernels"][1];
  CHECK(wide["controls"]["cluster"] == nlohmann::json::array({4, 2, 1}));
  // grid 8 x 4 of 4 x 2 clusters: block 8 (x 0, y 1) is in cluster 0 with block 0, block 4 in cluster 1.
  CHECK(wide["blocks"][8]["cluster"] == 0);
  CHECK(wide["blocks"][4]["cluster"] == 1);
  CHECK(wide["blocks"][0]["start"] == wide["blocks"][8]["start"]);
  auto text = test::run_tbcheck("predict corpus/paper/controls/cuda-guide-cluster-coscheduled-assumed-gpcs.json --hypothesis most-room");
  CHECK_THAT(text.out, Catch::Contains("gemm: clusters of 2 x 1 x 1 (132)"));
}
