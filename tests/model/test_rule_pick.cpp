// The simulator's rule interpreter (model/engine/src/rule_pick.cpp): every shipped ranking written as a rule places every
// block where the hard-wired selection does, on random scenarios, and hand-checked placements of single features.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "helpers.hpp"
#include "rule_scenarios.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/rule.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/testing/conformance.hpp"

using namespace tbcheck;
using namespace tbcheck::model;

namespace {

using test::device_with_map;
using test::random_scenario;

void check_same_schedules(const Hypothesis& hard, const Hypothesis& rule, const Device& d, unsigned seed0, int& compared) {
  for (unsigned n = 0; n < 40; ++n) {
    const Scenario s = random_scenario(seed0 + n * 7919, d);
    const auto want = try_simulate(s, hard);
    if (!want) continue;
    const auto got = try_simulate(s, rule);
    REQUIRE(got);
    bool same = true;
    for (size_t k = 0; k < want->kernels.size(); ++k) same = same && want->kernels[k].blocks == got->kernels[k].blocks;
    INFO(hard.name << " on seed " << seed0 + n * 7919 << " as " << rule_text(rule.rule));
    CHECK(same);
    ++compared;
  }
}

Hypothesis by_rule(Hypothesis h, Rule r) {
  h.selection = Selection::Rule;
  h.rule = std::move(r);
  return h;
}

std::vector<Hypothesis> bases() {
  Hypothesis paired = test::hyp("alg1");
  paired.name = "alg1-paired-issue";
  paired.issue = Issue::Paired;
  return {test::hyp("alg1"), paired, test::hyp("most-room"), test::hyp("round-robin"), test::hyp("alg1-literal"),
          test::hyp("olmedo")};
}

}  // namespace

TEST_CASE("rule: each shipped ranking as a rule places every block as the hard-wired selection does", "[rule][dispatch]") {
  // Two GPC maps: single-TPC GPCs 0 and 2 beside three-TPC ones (both tiers and the turns act), and four two-TPC
  // GPCs. Bases: TPC-coupled capacities (alg1's smem_config tpc), paired issue, literal capacity, both orders.
  const std::vector<Device> devices = {device_with_map({0, 1, 1, 1, 2, 3, 3, 3}), device_with_map({0, 0, 1, 1, 2, 2, 3, 3})};
  int compared = 0;
  unsigned seed = 17;
  for (const Device& d : devices)
    for (const Hypothesis& base : bases())
      for (Selection sel : {Selection::RoundRobin, Selection::MostRoom, Selection::GpcSpread, Selection::TpcPosition}) {
        Hypothesis hard = base;
        hard.selection = sel;
        REQUIRE_FALSE(combination_error(hard));
        check_same_schedules(hard, by_rule(base, *selection_as_rule(sel)), d, seed += 101, compared);
      }
  CHECK(compared >= 1500);
}

TEST_CASE("rule: clusters are spread inside their GPC by the rule as by the hard-wired selection", "[rule][dispatch][cluster]") {
  // cluster_spread selection ranks the chosen GPC's SMs by the hypothesis' selection; one-per-sm ignores it.
  const Device& base = builtin_device("h100-sxm-assumed-gpcs", "test", "device");
  int compared = 0, clustered = 0;
  for (const char* name : {"most-room", "round-robin", "alg1", "alg1-literal"})
    for (auto g : {ClusterGpc::MostRoom, ClusterGpc::LowestIndex})
      for (auto spread : {ClusterSpread::Selection, ClusterSpread::OnePerSm}) {
        const Hypothesis hard = test::cluster_variant(name, g, spread);
        const Hypothesis rule = by_rule(hard, *selection_as_rule(hard.selection));
        for (unsigned n = 0; n < 25; ++n) {
          const Scenario s = smt::random_cluster_scenario(41 + n * 13, base, hard);
          const auto want = try_simulate(s, hard);
          REQUIRE(want);
          const auto got = try_simulate(s, rule);
          REQUIRE(got);
          bool same = true;
          for (size_t k = 0; k < want->kernels.size(); ++k) same = same && want->kernels[k].blocks == got->kernels[k].blocks;
          INFO(hard.name << " seed " << 41 + n * 13);
          CHECK(same);
          ++compared;
          for (const auto& k : s.kernels) clustered += k.cluster ? 1 : 0;
        }
      }
  CHECK(compared == 400);
  CHECK(clustered >= 200);
}

TEST_CASE("rule: the interpreter's general path agrees with its index shortcuts", "[rule][dispatch]") {
  // A lone room:max and a leading rr_distance:min are answered by the capacity index; the same rankings with a key
  // that cannot decide anything added go through the key-by-key comparison (room:max first: over the SMs of the most
  // room only; any other key first: over every SM).
  const Device d = device_with_map({0, 0, 1, 1, 2, 2, 3, 3});  // no single-TPC GPC: single_tpc_gpc is 0 everywhere
  int compared = 0;
  unsigned seed = 5;
  for (const Hypothesis& base : bases()) {
    Hypothesis rr = base, mr = base;
    rr.selection = Selection::RoundRobin;
    mr.selection = Selection::MostRoom;
    check_same_schedules(rr, by_rule(base, Rule{{{RuleFeature::SingleTpcGpc, Prefer::Max}, {RuleFeature::RrDistance, Prefer::Min}}}),
                         d, seed += 31, compared);
    check_same_schedules(mr, by_rule(base, Rule{{{RuleFeature::Room, Prefer::Max}, {RuleFeature::Position, Prefer::Min}}}), d,
                         seed += 31, compared);
    check_same_schedules(mr, by_rule(base, Rule{{{RuleFeature::SingleTpcGpc, Prefer::Min}, {RuleFeature::Room, Prefer::Max}}}),
                         d, seed += 31, compared);
  }
  CHECK(compared >= 450);
}

TEST_CASE("rule: single keys place blocks where the feature says", "[rule][dispatch]") {
  const Scenario s = test::scenario(R"({"device": )" + test::mini_device(4) + R"(, "kernels": [
      {"name": "long", "blocks": 2, "threads": 32, "regs": 32, "smem": 0, "duration": 10},
      {"name": "short", "blocks": 4, "threads": 32, "regs": 32, "smem": 0, "duration": 1}]})");
  Hypothesis base = test::hyp("most-room");
  auto sms = [&](const Rule& r, size_t k) {
    const Schedule sch = simulate(s, by_rule(base, r));
    std::vector<int> out;
    for (const auto& b : sch.kernels[k].blocks) out.push_back(b.sm);
    return out;
  };
  // Most room, then the last SM in the order: one block per SM from the top.
  CHECK(sms(Rule{{{RuleFeature::Room, Prefer::Max}, {RuleFeature::Position, Prefer::Max}}}, 0) == std::vector<int>{3, 2});
  // The farthest SM from the pointer is the one before it: the pointer moves past SM 3 back to 0, so every block
  // lands on SM 3 while it has room.
  CHECK(sms(Rule{{{RuleFeature::RrDistance, Prefer::Max}}}, 1) == std::vector<int>{3, 3, 3, 3});
  // Fewest blocks held: the long kernel's two blocks sit on SMs 0 and 1, so the short kernel's first two go to SMs 2
  // and 3; then every SM holds one and the position decides: 0, then 1.
  CHECK(sms(Rule{{{RuleFeature::Held, Prefer::Min}}}, 1) == std::vector<int>{2, 3, 0, 1});
  // Second SM of each TPC first, TPCs from the highest.
  CHECK(sms(Rule{{{RuleFeature::SmInTpc, Prefer::Max}, {RuleFeature::Tpc, Prefer::Max}, {RuleFeature::Held, Prefer::Min}}}, 0) ==
        std::vector<int>{3, 3});
}
