// The SMT twin of the rule interpreter (smt/src/rule_pick.cpp): on random scenarios the model's schedule is the
// simulator's, and unique, for rules that between them rank by every feature in both directions.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "helpers.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/rule.hpp"
#include "smt/conformance_checks.hpp"
#include "tbcheck/testing/conformance.hpp"

using namespace tbcheck;
using model::Prefer;
using model::RuleFeature;

namespace {

model::Hypothesis by_rule(const std::string& base, model::Rule r) {
  model::Hypothesis h = test::hyp(base);
  h.name = base + "-rule";
  h.selection = model::Selection::Rule;
  h.rule = std::move(r);
  return h;
}

// Four TPCs: single-TPC GPCs 0 and 2 around a two-TPC GPC 1 (test_dispatch.cpp's map), so that every GPC
// feature takes more than one value.
smt::ConformanceReport conform_over_mixed_gpcs(const model::Hypothesis& h, int scenarios, unsigned seed0) {
  const model::Device& base = model::builtin_device("rtx3090", "test", "device");
  return smt::check_scenarios(h, scenarios, seed0, 60000, [&](unsigned seed) {
    model::Scenario s = smt::random_small_scenario(seed, base);
    s.device.sms = 8;
    s.device.gpc_of_tpc = {0, 1, 1, 2};
    s.device.gpc_source = "test";
    return s;
  });
}

void check(const smt::ConformanceReport& report, int scenarios) {
  test::check_mostly_conforms(report, scenarios, scenarios * 4 / 5);
}

const std::vector<model::Rule>& rules() {
  static const std::vector<model::Rule> all = {
      // State features: blocks held, room of the TPC, the pointer's distance the long way round.
      {{{RuleFeature::Held, Prefer::Min}, {RuleFeature::TpcRoom, Prefer::Max}, {RuleFeature::RrDistance, Prefer::Max}}},
      // The GPC features, each the other way round from the shipped rules.
      {{{RuleFeature::SingleTpcGpc, Prefer::Min}, {RuleFeature::GpcServed, Prefer::Max}, {RuleFeature::Room, Prefer::Min},
        {RuleFeature::TpcPosition, Prefer::Max}, {RuleFeature::SmInTpc, Prefer::Max}}},
      // Constants first, then the state: a GPC and TPC order of its own, the nearest SM after the pointer last.
      {{{RuleFeature::Gpc, Prefer::Max}, {RuleFeature::Held, Prefer::Max}, {RuleFeature::Tpc, Prefer::Min},
        {RuleFeature::Position, Prefer::Max}}},
      {{{RuleFeature::Room, Prefer::Max}, {RuleFeature::Held, Prefer::Min}, {RuleFeature::RrDistance, Prefer::Min}}},
  };
  return all;
}

}  // namespace

TEST_CASE("SMT rules rank by every feature as the simulator does", "[smt][rule][conformance]") {
  std::set<RuleFeature> seen;
  for (const auto& r : rules())
    for (const auto& k : r.keys) seen.insert(k.feature);
  CHECK(seen.size() == model::rule_features().size());  // a new feature needs a rule here
  unsigned seed = 1303;
  for (const auto& r : rules()) {
    INFO(model::rule_text(r));
    check(conform_over_mixed_gpcs(by_rule("most-room", r), 12, seed += 17), 12);
  }
}

TEST_CASE("SMT rules conform beside TPC-coupled capacities and paired issue", "[smt][rule][conformance]") {
  // alg1: warps on PBs, smem_config tpc (an SM's room follows its TPC's configuration); alg1-paired: followers.
  check(conform_over_mixed_gpcs(by_rule("alg1", rules()[1]), 12, 2111), 12);
  check(conform_over_mixed_gpcs(by_rule("alg1-paired", rules()[0]), 12, 2333), 12);
}

TEST_CASE("SMT rules spread a cluster over its GPC as the simulator does", "[smt][rule][cluster][conformance]") {
  for (size_t r : {size_t{0}, size_t{3}}) {
    model::Hypothesis h = test::cluster_variant("most-room", model::ClusterGpc::MostRoom, model::ClusterSpread::Selection);
    h.selection = model::Selection::Rule;
    h.rule = rules()[r];
    INFO(model::rule_text(h.rule));
    const auto report = smt::run_cluster_conformance(h, 10, 4001 + static_cast<unsigned>(r), 60000);
    REQUIRE_FALSE(report.unsupported);
    for (const auto& m : report.mismatches) FAIL_CHECK(m);
    CHECK(report.checked == 10);
    CHECK(report.not_unique == 0);
  }
}
