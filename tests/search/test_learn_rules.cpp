// Tests of search/learn_rules.cpp: the bounded rule enumeration and its pruning (every rule left out places every
// block as the shorter rule it equals), rule neighbours in confirmation, and learn finding a planted rule.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "helpers.hpp"
#include "rule_scenarios.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/learn.hpp"
#include "tbcheck/search/learn_replay.hpp"
#include "tbcheck/search/learn_rules.hpp"

using namespace tbcheck;

namespace {

model::Hypothesis with_rule(model::Hypothesis h, const model::Rule& r) {
  h.selection = model::Selection::Rule;
  h.rule = r;
  return h;
}

// Sequences of distinct features, each min or max, of 1 to k keys over n features.
size_t sequences(size_t n, int k) {
  size_t total = 0, level = 1;
  for (int i = 0; i < k && static_cast<size_t>(i) < n; ++i) {
    level *= (n - static_cast<size_t>(i)) * 2;
    total += level;
  }
  return total;
}

// The number of random scenarios on which a and b place some block differently (both must run each; at least
// half of them run, so that a pass compares schedules).
int differing(const model::Hypothesis& a, const model::Hypothesis& b, const model::Device& d, unsigned seed0, int n) {
  int differ = 0, ran = 0;
  for (int i = 0; i < n; ++i) {
    const model::Scenario s = test::random_scenario(seed0 + static_cast<unsigned>(i) * 7919u, d);
    const auto x = model::try_simulate(s, a);
    const auto y = model::try_simulate(s, b);
    REQUIRE(x.has_value() == y.has_value());
    if (!x) continue;
    ++ran;
    bool same = true;
    for (size_t k = 0; k < x->kernels.size(); ++k)
      for (size_t j = 0; j < x->kernels[k].blocks.size(); ++j)
        same = same && x->kernels[k].blocks[j].sm == y->kernels[k].blocks[j].sm &&
               x->kernels[k].blocks[j].start == y->kernels[k].blocks[j].start;
    differ += same ? 0 : 1;
  }
  CHECK(2 * ran >= n);
  return differ;
}

search::LearnOptions sim_options(const std::string& spec) {
  search::LearnOptions o;
  o.oracle_spec = "sim:" + spec;
  o.repetitions = 1;
  o.synthesis_budget_s = 20;
  return o;
}

std::vector<model::Case> paper_corpus() {
  static const std::vector<model::Case> cases = model::load_cases(test::source_path("corpus/paper"));
  return cases;
}

}  // namespace

TEST_CASE("the rule enumeration judges or leaves out every rule of the bound once", "[learn][rules]") {
  const auto& rtx = model::builtin_device("rtx3090", "test", "device");
  const auto mapped = test::device_with_map({0, 0, 0, 1, 1, 1, 2, 3});
  for (const model::Device* d : {&rtx, &mapped}) {
    for (int k = 1; k <= 3; ++k) {
      INFO(d->name << ", " << k << " key(s)");
      const auto e = search::enumerate_rules(*d, k);
      // Without a GPC map the four GPC features are out of the language's reach on the device.
      CHECK(e.features.size() == (d->gpc_of_tpc.empty() ? 7u : 11u));
      CHECK(e.rules.size() + e.pruned.size() == sequences(e.features.size(), k));
      std::set<std::string> texts;
      for (const auto& r : e.rules) {
        CHECK(static_cast<int>(r.keys.size()) <= k);
        CHECK(texts.insert(model::rule_text(r)).second);
      }
      for (const auto& p : e.pruned) {
        CHECK(texts.insert(model::rule_text(p.rule)).second);
        CHECK(p.same_as.keys.size() < p.rule.keys.size() + (p.rule.keys.size() == 1 ? 1 : 0));
      }
    }
  }
  CHECK_THROWS_AS(search::enumerate_rules(rtx, 0), model::InputError);
  CHECK_THROWS_AS(search::enumerate_rules(rtx, search::kMaxRuleKeys + 1), model::InputError);
}

TEST_CASE("every rule the enumeration leaves out places every block where the shorter rule it equals does",
          "[learn][rules]") {
  // GPCs of three, three, one and one TPCs: both tiers, and positions within a GPC.
  const auto d = test::device_with_map({0, 0, 0, 1, 1, 1, 2, 3});
  const auto e = search::enumerate_rules(d, 2);
  std::set<search::RulePrune> reasons;
  for (const auto& p : e.pruned) reasons.insert(p.why);
  CHECK(reasons.count(search::RulePrune::Determined));
  CHECK(reasons.count(search::RulePrune::TrailingScan));
  for (const auto& p : e.pruned)
    for (const char* base : {"alg1", "most-room"}) {
      INFO(model::rule_text(p.rule) << " vs " << model::rule_text(p.same_as) << " (" << to_string(p.why) << ") on "
                                    << base);
      CHECK(differing(with_rule(test::hyp(base), p.rule), with_rule(test::hyp(base), p.same_as), d, 11, 10) == 0);
    }
  // One SM per TPC: sm_in_tpc is 0 everywhere, so a key on it is left out as a constant feature.
  model::Device one = d;
  one.sms_per_tpc = 1;
  one.sms = 8;
  const auto e1 = search::enumerate_rules(one, 1);
  CHECK(std::any_of(e1.pruned.begin(), e1.pruned.end(), [](const search::PrunedRule& p) {
    return p.why == search::RulePrune::ConstantFeature && p.rule.uses(model::RuleFeature::SmInTpc);
  }));
}

TEST_CASE("a rule ending in keys that order SMs as the scan does is shortened, and places blocks alike",
          "[learn][rules]") {
  const auto d = test::device_with_map({0, 0, 0, 1, 1, 1, 2, 3});
  using F = model::RuleFeature;
  using P = model::Prefer;
  const model::Rule room{{{F::Room, P::Max}}};
  const model::Rule room_even{{{F::Room, P::Max}, {F::SmInTpc, P::Min}}};
  const model::Rule room_tpc{{{F::Room, P::Max}, {F::Tpc, P::Min}}};
  const model::Rule room_tpc_down{{{F::Room, P::Max}, {F::Tpc, P::Max}}};
  // alg1 scans even SMs first: sm_in_tpc:min orders as its scan does; most-room scans 0, 1, 2, ...: tpc:min does.
  CHECK(search::reduced_for(room_even, test::hyp("alg1"), d) == room);
  CHECK(search::reduced_for(room_even, test::hyp("most-room"), d) == room_even);
  CHECK(search::reduced_for(room_tpc, test::hyp("most-room"), d) == room);
  CHECK(search::reduced_for(room_tpc_down, test::hyp("most-room"), d) == room_tpc_down);
  int shortened = 0;
  for (const auto& r : search::enumerate_rules(d, 2).rules)
    for (const char* base : {"alg1", "most-room"}) {
      const model::Rule s = search::reduced_for(r, test::hyp(base), d);
      if (s == r) continue;
      ++shortened;
      INFO(model::rule_text(r) << " shortened to " << model::rule_text(s) << " on " << base);
      CHECK(differing(with_rule(test::hyp(base), r), with_rule(test::hyp(base), s), d, 23, 10) == 0);
    }
  CHECK(shortened > 0);
  // Not shortened means not equal: tpc:max against the natural scan moves blocks.
  CHECK(differing(with_rule(test::hyp("most-room"), room_tpc_down), with_rule(test::hyp("most-room"), room), d, 5, 20) > 0);
}

TEST_CASE("rule neighbours are the survivor with every other rule of the bound, its own selection left out",
          "[learn][rules]") {
  const auto& rtx = model::builtin_device("rtx3090", "test", "device");
  const auto n = search::rule_neighbours(test::hyp("alg1"), rtx, 2);
  REQUIRE(!n.empty());
  for (const auto& h : n) {
    CHECK(h.selection == model::Selection::Rule);
    CHECK(!(h.rule == *model::selection_as_rule(model::Selection::MostRoom)));  // alg1's own ranking
    model::Hypothesis same = h;
    same.selection = test::hyp("alg1").selection;
    same.rule = {};
    same.name = "alg1";
    CHECK(same.same_options(test::hyp("alg1")));
  }
  // Round-robin's own rule is rr_distance:min.
  for (const auto& h : search::rule_neighbours(test::hyp("round-robin"), rtx, 1))
    CHECK(!(h.rule == *model::selection_as_rule(model::Selection::RoundRobin)));
}

TEST_CASE("learn does not name a composition for a device playing a rule outside the space, and finds the rule",
          "[learn][rules]") {
  const auto& rtx = model::builtin_device("rtx3090", "test", "device");
  test::TempDir tmp("planted-rule");
  // The SM holding the fewest blocks of any kernel, then the most room: no shipped selection ranks so.
  model::Hypothesis planted = with_rule(test::hyp("alg1"), model::Rule{{{model::RuleFeature::Held, model::Prefer::Min},
                                                                        {model::RuleFeature::Room, model::Prefer::Max}}});
  planted.name = "planted-fewest-held";
  const std::string file = (tmp.path / "planted-fewest-held.json").string();
  model::write_file_atomic(file, model::json_file_text(planted.to_json(), 2));

  std::vector<model::Hypothesis> shipped;
  for (const auto& h : model::builtin_hypotheses())
    if (!model::needs_gpc_map(h)) shipped.push_back(h);
  const auto first = search::learn(shipped, rtx, paper_corpus(), sim_options(file));
  INFO(first.reason);
  // alg1 agrees with the planted rule on many cases; confirmation against the rules of the bound refutes it.
  REQUIRE(first.outcome == search::LearnOutcome::NoneSurvives);
  REQUIRE(!first.observed.empty());
  REQUIRE(!first.nearest.empty());

  const auto found = search::learn_rules(first, rtx, paper_corpus(), sim_options(file), search::RuleBound{});
  CHECK(found.method.find("enumeration") != std::string::npos);
  CHECK(found.scope.find("up to 2 key(s)") != std::string::npos);
  REQUIRE(found.learned.has_value());
  INFO(found.learned->reason);
  CHECK(search::grade_answer(*found.learned, planted) == search::AnswerGrade::Named);
  // What learn writes is a hypothesis file check and validate read back as the same rule.
  REQUIRE(!found.learned->consistent.empty());
  const model::Hypothesis& h = found.learned->consistent.front();
  const auto back = model::hypothesis_from_json(h.to_json(), "learned rule");
  CHECK(back.same_options(planted));
}

TEST_CASE("a rule search that nothing within the bound fits names the nearest rules and their first wrong block",
          "[learn][rules]") {
  const auto& rtx = model::builtin_device("rtx3090", "test", "device");
  // One block that started late on an idle device: no ranking delays a block, so every rule is refuted.
  search::LearnResult first;
  model::Case c;
  c.id = "late-start";
  c.scenario = test::scenario(R"({"device": "rtx3090", "kernels": [{"name": "k1", "blocks": 2, "threads": 32,
                                 "regs": 32, "smem": 0, "duration": 2}]})");
  model::Observation o;
  o.sm_of_block["k1"] = {0, 2};
  o.start_of_block["k1"] = {0, 5};
  c.observation = o;
  first.observed = {c};
  model::Hypothesis base = test::hyp("alg1");
  first.nearest.push_back({base.name, base, 1, 1, "late-start", ""});
  search::RuleBound b;
  b.max_keys = 1;
  b.shipped_bases = false;
  const auto r = search::learn_rules(first, rtx, {}, sim_options("alg1"), b);
  CHECK(r.consistent == 0);
  CHECK(!r.learned.has_value());
  REQUIRE(!r.nearest.empty());
  CHECK(r.nearest.size() <= 5);
  for (const auto& n : r.nearest) {
    CHECK(n.hypothesis.selection == model::Selection::Rule);
    CHECK(n.first_case == "late-start");
    CHECK(n.where.find("kernel k1 block 1") != std::string::npos);
  }
  CHECK(r.to_json().at("nearest").size() == r.nearest.size());
}

TEST_CASE("rules searched over the V100 and RTX 3090 recordings reproduce them as alg1-paired does", "[learn][rules]") {
  const std::string ntbs = test::shared_or_skip("external/ntbs");
  if (ntbs.empty()) return;
  for (const char* gpu : {"v100", "rtx3090"}) {
    INFO(gpu);
    const auto& d = model::builtin_device(gpu, "test", "device");
    const auto recordings = model::load_cases(ntbs + "/" + gpu + ".json");
    search::ReplayLearnOptions o;
    const auto first = search::learn_from_recordings({test::hyp("alg1-paired"), test::hyp("most-room")}, d, recordings, {}, o);
    REQUIRE(!first.consistent.empty());
    CHECK(first.consistent.front().name == "alg1-paired");
    search::RuleBound b;
    b.shipped_bases = false;
    const auto r = search::learn_rules_from_recordings(first, d, recordings, {}, o, b);
    REQUIRE(!r.replay.consistent.empty());
    // The simplest rule that fits is alg1-paired's own ranking (room:max, then its even-first scan).
    const model::Hypothesis& simplest = r.replay.consistent.front();
    CHECK(simplest.name == "alg1-paired.room-max");
    CHECK(simplest.rule == *model::selection_as_rule(model::Selection::MostRoom));
    for (const auto& h : r.replay.consistent) CHECK(h.selection == model::Selection::Rule);
  }
}
