// `tbcheck check` end to end on a hypothesis written only for this test (alg1 without the skip and with
// counted shared memory): options explained with citations, corpus validated, each shipped one told apart.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "helpers.hpp"
#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/check.hpp"

using namespace tbcheck;

namespace {
const std::string kHyp = "tests/data/check-no-skip-counted-smem.json";
}

TEST_CASE("check explains options, validates on the corpus and separates it from the shipped hypotheses", "[check]") {
  auto h = model::load_hypothesis_file(test::source_path(kHyp));
  auto cases = model::load_cases(test::source_path("corpus/paper/000-wang"));
  search::CheckOptions o;
  o.synthesis = search::SynthesisMode::None;
  // Fermi's GPC-priority scheduler has no Table II counterpart (its cases are in 003-pai), so it is left out.
  std::vector<model::Hypothesis> against;
  for (const auto& b : model::builtin_hypotheses())
    if (!model::needs_gpc_map(b)) against.push_back(b);  // fermi and hopper: wang's devices have no GPC map
  REQUIRE(against.size() >= 11);
  auto r = search::check_hypothesis(h, cases, against, o);
  CHECK(!r.same_as);
  // Every mechanism field is explained with the paper it comes from.
  bool skip_off = false, counted = false;
  for (const auto& e : r.options) {
    CHECK(!e.cites.empty());
    CHECK(!e.meaning.empty());
    skip_off = skip_off || (e.mechanism == "skip_on_multiple_of_4" && e.value == "false");
    counted = counted || (e.mechanism == "smem" && e.value == "counted" && e.cites.find("seed 002") != std::string::npos);
  }
  CHECK(skip_off);
  CHECK(counted);
  // Of Table II, Case 2.2 (the skip) and Case 4.2 (contiguity) fail, the others pass.
  REQUIRE(r.tallies.size() == 3);
  CHECK(r.tallies[0].fail == 2);
  std::set<std::string> failing;
  for (const auto& f : r.failures) failing.insert(f.case_id);
  CHECK(failing == std::set<std::string>{"case-2.2", "case-4.2"});
  // Separated from each shipped one by a corpus case; the alg1 neighbours by the case of their mechanism.
  REQUIRE(r.pairs.size() == against.size());
  for (const auto& p : r.pairs) {
    INFO(p.other);
    CHECK(p.verdict == search::PairVerdict::SeparatedByCorpus);
    CHECK(!p.differences.empty());
    if (p.other == "alg1-counted-smem") {
      CHECK(p.witness_case == "case-2.2");
      CHECK(p.differences == std::vector<std::string>{"skip_on_multiple_of_4: false vs true"});
    }
    if (p.other == "alg1-no-skip") CHECK(p.witness_case == "case-4.2");
  }
  // A shipped hypothesis checked against itself has the same options: no solver call.
  auto self = search::check_hypothesis(test::hyp("alg1"), cases, {test::hyp("alg1")}, o);
  CHECK(self.same_as == std::optional<std::string>("alg1"));
  CHECK(self.pairs[0].verdict == search::PairVerdict::SameOptions);
}

TEST_CASE("check lists the neighbours of the composition and the corpus cases that separate each", "[check][compositions]") {
  auto cases = model::load_cases(test::source_path("corpus/paper/000-wang"));
  search::CheckOptions o;
  o.synthesis = search::SynthesisMode::None;
  const auto& alg1 = test::hyp("alg1");
  auto r = search::check_hypothesis(alg1, cases, {}, o);
  REQUIRE(r.neighbours.size() == model::neighbours(alg1, 2).size());
  size_t separated = 0;
  for (const auto& n : r.neighbours) {
    INFO(n.name);
    CHECK(!n.differences.empty());
    CHECK(n.differences.size() <= 2);
    separated += n.cases.empty() ? 0 : 1;
    // Each listed case really separates them (or the neighbour cannot run it: gpc-priority and tpc-position need a
    // GPC map).
    const model::Hypothesis* other = nullptr;
    for (const auto& c : model::all_compositions())
      if (c.name == n.name) other = &c;
    REQUIRE(other);
    for (const auto& id : n.cases)
      for (const auto& c : cases)
        if (c.id == id) {
          bool differs = false;
          try {
            differs = !search::first_difference(model::simulate(c.scenario, alg1), model::simulate(c.scenario, *other)).empty();
          } catch (const model::InputError&) {  // the selections that need a GPC map
            differs = other->selection == model::Selection::GpcPriority || other->selection == model::Selection::TpcPosition;
          }
          CHECK(differs);
        }
    if (n.name == "alg1-counted-smem") CHECK(std::find(n.cases.begin(), n.cases.end(), "case-4.2") != n.cases.end());
  }
  CHECK(separated > 0);
  CHECK(separated < r.neighbours.size());  // Table II cannot see every mechanism (local memory, thresholds)
  CHECK(r.to_json()["neighbours"].size() == r.neighbours.size());
}

TEST_CASE("tbcheck check runs end to end with synthesis within a small timeout", "[check][cli]") {
  // One pair, synthesis forced, so the Z3 path runs; corpus kept to Table II for speed.
  auto r = test::run_tbcheck("check " + kHyp +
                             " --corpus corpus/paper/000-wang --hypotheses round-robin --synthesize all --timeout 1 --json");
  INFO(r.out);
  CHECK(r.exit_code == 0);  // it fails Cases 2.2 and 4.2, which state no expectation for it: findings, as in validate
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["hypothesis"]["name"] == "alg1-no-skip-counted-smem");
  CHECK(j["corpus"]["levels"]["exact"]["fail"] == 2);
  REQUIRE(j["pairs"].size() == 1);
  CHECK(j["pairs"][0]["other"] == "round-robin");
  CHECK(j["pairs"][0]["verdict"] == "separated-by-corpus");
  REQUIRE(j["pairs"][0].contains("synthesis"));
  const std::string outcome = j["pairs"][0]["synthesis"]["outcome"];
  CHECK((outcome == "separated" || outcome == "unknown"));
  if (outcome == "separated") CHECK(j["pairs"][0]["synthesis"]["case"]["kernels"].size() >= 1);

  auto human = test::run_tbcheck("check " + kHyp + " --corpus corpus/paper/000-wang --synthesize none");
  CHECK(human.out.find("seed 000 Mechanism 2.2") != std::string::npos);
  CHECK(human.out.find("separated-by-corpus") != std::string::npos);
  CHECK(human.out.find("the 2 failure(s) above are findings (exit 0)") != std::string::npos);
  CHECK(test::run_tbcheck("check tests/data/nosuch.json").exit_code == 2);
}
