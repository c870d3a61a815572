// `tbcheck hypotheses --options` shows what the README's tour says it shows: the shipped hypotheses with
// their options, then every mechanism option with its paper section, then the rule language (text and --json).
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "tbcheck/model/hypothesis.hpp"

using namespace tbcheck;

TEST_CASE("hypotheses --options lists every shipped hypothesis and every mechanism option", "[cli]") {
  auto r = test::run_tbcheck("hypotheses --options");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  for (const auto& h : model::builtin_hypotheses()) CHECK(r.out.find(h.name) != std::string::npos);
  for (const auto& o : model::option_table()) CHECK(r.out.find(std::string(o.value)) != std::string::npos);
  CHECK(r.out.find("Shipped hypotheses") < r.out.find("Mechanism options"));

  auto j = test::run_tbcheck("hypotheses --options --json");
  REQUIRE(j.exit_code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(doc.at("hypotheses").size() == model::builtin_hypotheses().size());
  CHECK(doc.at("options").size() == model::option_table().size());
  // The rule language: every feature, and each shipped ranking as a rule a file can give back as its selection.
  CHECK(doc.at("rule_features").size() == model::rule_features().size());
  CHECK(doc.at("rule_features")[0].at("key") == "room");
  REQUIRE(doc.at("selection_rules").contains("gpc-spread"));
  const model::Hypothesis spread = model::hypothesis_from_json(
      {{"name", "as-rule"}, {"base", "most-room"}, {"selection", doc.at("selection_rules").at("gpc-spread")}}, "t.json");
  CHECK(spread.rule == *model::selection_as_rule(model::Selection::GpcSpread));
  CHECK_FALSE(doc.at("selection_rules").contains("gpc-priority"));
  CHECK(r.out.find("The shipped selections as rules") != std::string::npos);
}
