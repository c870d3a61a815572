// The SMT twin of the generic dispatcher's gpc-spread selection: the model's schedule is the simulator's,
// and unique, on random scenarios over a device whose GPC map mixes single- and multi-TPC GPCs.
#include <catch2/catch.hpp>

#include <string>

#include "helpers.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/testing/conformance.hpp"

using namespace tbcheck;

TEST_CASE("SMT gpc-spread conforms with the simulator on random scenarios over a mixed GPC map", "[smt][gpc-spread][conformance]") {
  const model::Hypothesis h = model::load_hypothesis_file(test::source_path("docs/results/h200/gpc-spread.json"));
  const model::Device& base = model::builtin_device("rtx3090", "test", "device");
  auto report = smt::check_scenarios(h, 30, 515, 60000, [&](unsigned seed) {
    model::Scenario s = smt::random_small_scenario(seed, base);
    // Four TPCs: single-TPC GPCs 0 and 2 around a two-TPC GPC 1, so that both tiers and the turns act.
    s.device.sms = 8;
    s.device.gpc_of_tpc = {0, 1, 1, 2};
    s.device.gpc_source = "test";
    return s;
  });
  INFO((report.mismatches.empty() ? std::string() : report.mismatches.front()));
  CHECK(report.mismatches.empty());
  CHECK_FALSE(report.unsupported);
  CHECK(report.not_unique == 0);
  CHECK(report.checked + report.unknown == 30);
  CHECK(report.checked >= 25);
}
