// Selection rules as data: an ordered list of ranking keys over features of a candidate SM, least key wins
// (docs/rules.md). One descriptor per feature, from which parsing, printing and the docs' table derive.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "tbcheck/model/json_reader.hpp"

namespace tbcheck::model {

// What a rule may rank a candidate SM by (an SM with room for at least one block of the kernel). The engines
// read features only in switches without default (model/engine/src/rule_pick.cpp, smt/src/rule_pick.cpp), so a
// feature added here does not build until both say what it is.
enum class RuleFeature { Room, Held, TpcRoom, SingleTpcGpc, GpcServed, SmInTpc, TpcPosition, Gpc, Tpc, Position, RrDistance };
enum class Prefer { Min, Max };

struct RuleKey {
  RuleFeature feature = RuleFeature::Room;
  Prefer prefer = Prefer::Max;
  bool operator==(const RuleKey&) const = default;
};

// Keys compared lexicographically; the scan position (the hypothesis' order) breaks what ties remain, so a rule
// always names one SM.
struct Rule {
  std::vector<RuleKey> keys;
  bool operator==(const Rule&) const = default;
  bool uses(RuleFeature f) const;
};

// The state a feature reads besides the machine: none, or the round-robin pointer, which starts at scan position
// 0 and after each selection moves to the chosen position + 1 (a follower of paired issue leaves it).
enum class FeatureState { None, Pointer };

struct FeatureInfo {
  RuleFeature feature;
  std::string_view name;     // the "key" of a rule file
  std::string_view meaning;  // for a user who never read the engines
  bool needs_gpc_map = false;
  FeatureState state = FeatureState::None;
  // The feature is a fixed number per SM (it never changes while the scenario runs): the SMT encoder folds it.
  bool constant = false;
};
const std::vector<FeatureInfo>& rule_features();
const FeatureInfo& feature_info(RuleFeature f);
std::string_view to_string(RuleFeature f);
std::string_view to_string(Prefer p);

// The first feature of the rule that needs the device's GPC map, or nullptr.
const FeatureInfo* gpc_map_feature(const Rule& r);

// {"rule": [{"key": ..., "prefer": ...}, ...]}: the selection field's object form.
json rule_to_json(const Rule& r);
// Reads the object form of a hypothesis file's selection field; an unknown or repeated key, an unknown
// direction or an empty rule is an InputError naming `where` and the field ("selection.rule[1].key").
Rule rule_from_json(const json& j, const std::string& where, const std::string& field);
// "room:max tpc_room:max gpc:min": the hypotheses table's cell and the lemma cache's option value.
std::string rule_text(const Rule& r);

// The tables of docs/rules.md: one row per feature.
std::string rule_feature_table_markdown();

}  // namespace tbcheck::model
