// The SMT twin of the generic dispatcher's gpc-spread selection (and of smem_config sm, measured beside it):
// the model's schedule is the simulator's, and unique, on random scenarios over a mixed GPC map.
#include <catch2/catch.hpp>

#include <string>

#include "helpers.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "smt/conformance_checks.hpp"
#include "tbcheck/testing/conformance.hpp"

using namespace tbcheck;

namespace {

void check_conforms_over_mixed_gpcs(const model::Hypothesis& h, unsigned seed0) {
  const model::Device& base = model::builtin_device("rtx3090", "test", "device");
  auto report = smt::check_scenarios(h, 30, seed0, 60000, [&](unsigned seed) {
    model::Scenario s = smt::random_small_scenario(seed, base);
    // Four TPCs: single-TPC GPCs 0 and 2 around a two-TPC GPC 1, so that both tiers and the turns act.
    s.device.sms = 8;
    s.device.gpc_of_tpc = {0, 1, 1, 2};
    s.device.gpc_source = "test";
    return s;
  });
  test::check_mostly_conforms(report, 30, 25);
}

}  // namespace

TEST_CASE("SMT gpc-spread conforms with the simulator on random scenarios over a mixed GPC map", "[smt][gpc-spread][conformance]") {
  check_conforms_over_mixed_gpcs(model::load_hypothesis_file(test::source_path("docs/results/h200/gpc-spread.json")), 515);
}

TEST_CASE("SMT smem_config sm conforms with the simulator beside gpc-spread and most-room", "[smt][gpc-spread][conformance]") {
  model::Hypothesis spread = model::load_hypothesis_file(test::source_path("docs/results/h200/gpc-spread.json"));
  spread.smem_config = model::SmemConfig::Sm;
  check_conforms_over_mixed_gpcs(spread, 733);
  model::Hypothesis most_room = test::hyp("alg1");
  most_room.smem_config = model::SmemConfig::Sm;
  check_conforms_over_mixed_gpcs(most_room, 911);
}

TEST_CASE("SMT tpc-position and smem_config sm-floor conform with the simulator over a mixed GPC map",
          "[smt][tpc-position][conformance]") {
  model::Hypothesis h = test::hyp("hopper");
  h.numbering = model::Numbering::Dispatch;  // the placements alone (test_numbering.cpp numbers them)
  REQUIRE(h.selection == model::Selection::TpcPosition);
  REQUIRE(h.smem_config == model::SmemConfig::SmFloor);
  check_conforms_over_mixed_gpcs(h, 1201);
}
