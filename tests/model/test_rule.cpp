// The rule language (model/core/src/rule.cpp): a hypothesis file's selection as a list of ranking keys, read back to
// itself, its errors naming the file, the key and why, and the shipped selections written as rules.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <fmt/format.h>

#include "helpers.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/options.hpp"
#include "tbcheck/model/rule.hpp"
#include "tbcheck/model/simulator.hpp"

using namespace tbcheck;
using namespace tbcheck::model;

namespace {

json with_rule(const json& keys) {
  return json{{"name", "mine"}, {"base", "alg1"}, {"selection", {{"rule", keys}}}};
}

}  // namespace

TEST_CASE("rule: a selection given as keys reads back to itself and differs from other rules as an option does", "[rule][hypothesis]") {
  const json keys = json::array({{{"key", "room"}, {"prefer", "max"}},
                                 {{"key", "held"}, {"prefer", "min"}},
                                 {{"key", "sm_in_tpc"}, {"prefer", "min"}}});
  Hypothesis h = hypothesis_from_json(with_rule(keys), "mine.json");
  CHECK(h.selection == Selection::Rule);
  REQUIRE(h.rule.keys.size() == 3);
  CHECK(h.rule.keys[1] == RuleKey{RuleFeature::Held, Prefer::Min});
  CHECK(h.to_json()["selection"] == json{{"rule", keys}});
  CHECK(hypothesis_from_json(h.to_json(), "again.json").same_options(h));
  CHECK(rule_text(h.rule) == "room:max held:min sm_in_tpc:min");

  // Another order of the same keys is another rule: same_options, option_key and the settings tell them apart.
  json swapped = keys;
  std::swap(swapped[1], swapped[2]);
  Hypothesis other = hypothesis_from_json(with_rule(swapped), "other.json");
  CHECK_FALSE(other.same_options(h));
  CHECK(option_key(other) != option_key(h));
  CHECK(option_settings(other)[0].value != option_settings(h)[0].value);
  CHECK(option_columns(h)[0].cell == "rule room:max held:min sm_in_tpc:min");

  // A string selection over a base with a rule replaces the rule.
  Hypothesis plain = hypothesis_from_json(json{{"name", "p"}, {"base", "alg1"}, {"selection", "most-room"}}, "p.json");
  CHECK(plain.rule.keys.empty());
  CHECK(plain.same_options(test::hyp("alg1")));
}

TEST_CASE("rule: a bad rule names the file the key and why", "[rule][hypothesis][loaders]") {
  auto error = [](const json& selection) {
    return test::error_of([&] {
      hypothesis_from_json(json{{"name", "bad"}, {"base", "alg1"}, {"selection", selection}}, "bad.json");
    });
  };
  auto e = error({{"rule", {{{"key", "room"}, {"prefer", "max"}}, {{"key", "warmth"}, {"prefer", "min"}}}}});
  CHECK(e.where() == "bad.json");
  CHECK(e.field() == "selection.rule[1].key");
  CHECK(e.reason().find("unknown feature 'warmth'") != std::string::npos);
  CHECK(e.reason().find("rr_distance") != std::string::npos);  // the valid ones are listed

  e = error({{"rule", {{{"key", "room"}, {"prefer", "first"}}}}});
  CHECK(e.field() == "selection.rule[0].prefer");
  CHECK(e.reason().find("unknown direction 'first'") != std::string::npos);

  e = error({{"rule", json::array()}});
  CHECK(e.field() == "selection.rule");
  CHECK(e.reason().find("empty") != std::string::npos);

  e = error({{"rule", {{{"key", "gpc"}, {"prefer", "min"}}, {{"key", "gpc"}, {"prefer", "max"}}}}});
  CHECK(e.field() == "selection.rule[1].key");
  CHECK(e.reason().find("already ranked") != std::string::npos);

  e = error({{"keys", json::array()}});
  CHECK(e.field().rfind("selection", 0) == 0);

  e = error("rule");  // the name of the form, without the keys
  CHECK(e.field() == "selection");
  CHECK(e.reason().find("given as an object") != std::string::npos);

  e = error({{"rule", {{{"key", "room"}}}}});
  CHECK(e.field() == "selection.rule[0].prefer");
}

TEST_CASE("rule: a key that needs a GPC map is refused on a device without one naming the key", "[rule][options]") {
  Hypothesis h = hypothesis_from_json(with_rule({{{"key", "room"}, {"prefer", "max"}}, {{"key", "gpc"}, {"prefer", "min"}}}),
                                      "gpc.json");
  const Scenario s = test::scenario(R"({"device": )" + test::mini_device(4) +
                                    R"(, "kernels": [{"name": "k", "blocks": 2, "threads": 32, "regs": 32, "smem": 0, "duration": 1}]})");
  REQUIRE(s.device.gpc_of_tpc.empty());
  const FeasibilityCheck f = check_feasibility(s, h);
  CHECK(f.status == Feasibility::NoGpcMap);
  CHECK(f.reason.find("rule key 'gpc'") != std::string::npos);
  // Without that key the same device runs it.
  h.rule.keys.pop_back();
  CHECK(check_feasibility(s, h).runs());
}

TEST_CASE("rule: every feature has one descriptor row and the tables are derived from them", "[rule]") {
  std::set<std::string_view> names;
  for (const auto& f : rule_features()) {
    CHECK(feature_info(f.feature).name == f.name);
    names.insert(f.name);
    CHECK(rule_feature_table_markdown().find(fmt::format("| `{}` |", f.name)) != std::string::npos);
  }
  CHECK(names.size() == rule_features().size());
  // The shipped rankings as rules, gpc-priority not among them.
  CHECK(rule_text(*selection_as_rule(Selection::MostRoom)) == "room:max");
  CHECK(rule_text(*selection_as_rule(Selection::RoundRobin)) == "rr_distance:min");
  CHECK_FALSE(selection_as_rule(Selection::GpcPriority));
  CHECK(shipped_rules_markdown().find("`room:max single_tpc_gpc:max tpc_room:max gpc_served:min gpc:min tpc:min`") !=
        std::string::npos);
}

TEST_CASE("rule: numbering gpc-ring takes a rule only when it ranks by the GPC map", "[rule][hypothesis]") {
  json j = with_rule({{{"key", "room"}, {"prefer", "max"}}});
  j["numbering"] = "gpc-ring";
  auto e = test::error_of([&] { hypothesis_from_json(j, "ring.json"); });
  CHECK(e.field() == "numbering");
  j["selection"]["rule"].push_back({{"key", "tpc_position"}, {"prefer", "min"}});
  CHECK(hypothesis_from_json(j, "ring.json").numbering == Numbering::GpcRing);
}

TEST_CASE("docs/rules.md and docs/design.md carry the rule tables the descriptors generate", "[rule][docs]") {
  auto text = [](const std::string& rel) {
    std::ifstream in(test::source_path(rel));
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  INFO("regenerate with: build/cli/tbcheck hypotheses --options --markdown (the tables after the option table)");
  CHECK(text("docs/rules.md").find(rule_feature_table_markdown()) != std::string::npos);
  CHECK(text("docs/rules.md").find(shipped_rules_markdown()) != std::string::npos);
  CHECK(text("docs/design.md").find(shipped_rules_markdown()) != std::string::npos);
}

TEST_CASE("rule: the example rule file of docs/rules.md loads and runs on the paper corpus", "[rule][docs][cli]") {
  const Hypothesis h = load_hypothesis_file(test::source_path("docs/examples/rule-fewest-held.json"));
  CHECK(h.selection == Selection::Rule);
  for (Selection s : {Selection::RoundRobin, Selection::MostRoom, Selection::GpcSpread, Selection::TpcPosition})
    CHECK(h.rule != *selection_as_rule(s));  // a rule no shipped selection is
  auto r = test::run_tbcheck("predict corpus/paper/000-wang/case-1.1.json -H docs/examples/rule-fewest-held.json");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  r = test::run_tbcheck("check docs/examples/rule-fewest-held.json --corpus corpus/paper --synthesize none");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("rule held:min room:max") != std::string::npos);
}

TEST_CASE("rule: a bad rule file stops a command with exit 2 naming the file and the key", "[rule][cli]") {
  test::TempDir t;
  const std::string bad = t.write("bad-rule.json", R"({"name": "bad", "base": "alg1",
      "selection": {"rule": [{"key": "room", "prefer": "max"}, {"key": "warmth", "prefer": "min"}]}})");
  auto r = test::run_tbcheck("predict corpus/paper/000-wang/case-1.1.json -H " + bad);
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("bad-rule.json") != std::string::npos);
  CHECK(r.out.find("selection.rule[1].key") != std::string::npos);
  CHECK(r.out.find("unknown feature 'warmth'") != std::string::npos);
  // A key that needs a GPC map, on a paper case's device (rtx3090 has none).
  const std::string gpc = t.write("gpc-rule.json", R"({"name": "by-gpc", "base": "alg1",
      "selection": {"rule": [{"key": "gpc", "prefer": "min"}]}})");
  r = test::run_tbcheck("predict corpus/paper/000-wang/case-1.1.json -H " + gpc);
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("rule key 'gpc'") != std::string::npos);
}
