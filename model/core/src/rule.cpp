// The rule language's descriptors (one row per feature), its JSON form, and the shipped selections written in it.
// The engines interpret rules in model/engine/src/rule_pick.cpp and smt/src/rule_pick.cpp.
#include "tbcheck/model/rule.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/hypothesis.hpp"

namespace tbcheck::model {

namespace {

// In enum order (checked below), so a feature's row is found by its value.
constexpr FeatureInfo kFeatures[] = {
    {RuleFeature::Room, "room",
     "blocks of the kernel the SM can take now (the hypothesis' capacity value: under capacity literal, its units)"},
    {RuleFeature::Held, "held", "blocks resident on the SM now, of every kernel"},
    {RuleFeature::TpcRoom, "tpc_room", "room summed over the SM's TPC"},
    {RuleFeature::SingleTpcGpc, "single_tpc_gpc", "1 when the SM's GPC has a single TPC, else 0", true, FeatureState::None,
     true},
    {RuleFeature::GpcServed, "gpc_served",
     "TPCs of the SM's GPC with less tpc_room than the SM's TPC: the turns its GPC has taken at that room "
     "(gpc-spread)",
     true},
    {RuleFeature::SmInTpc, "sm_in_tpc", "the SM's place in its TPC (0 for its first SM)", false, FeatureState::None,
     true},
    {RuleFeature::TpcPosition, "tpc_position", "the place of the SM's TPC among its GPC's TPCs (0 for the first)", true,
     FeatureState::None, true},
    {RuleFeature::Gpc, "gpc", "the SM's GPC index", true, FeatureState::None, true},
    {RuleFeature::Tpc, "tpc", "the SM's TPC index", false, FeatureState::None, true},
    {RuleFeature::Position, "position", "the SM's place in the hypothesis' scan order (its order option)", false,
     FeatureState::None, true},
    {RuleFeature::RrDistance, "rr_distance",
     "scan positions from the round-robin pointer forward to the SM, wrapping (0 at the pointer); the pointer starts "
     "at 0 and moves to the chosen position + 1 after every selection",
     false, FeatureState::Pointer},
};

constexpr bool in_order() {
  for (size_t i = 0; i < std::size(kFeatures); ++i)
    if (static_cast<size_t>(kFeatures[i].feature) != i) return false;
  return true;
}
static_assert(in_order(), "kFeatures lists RuleFeature's values once, in declaration order");

struct PreferName {
  Prefer prefer;
  std::string_view name;
};
constexpr PreferName kPrefer[] = {{Prefer::Min, "min"}, {Prefer::Max, "max"}};

}  // namespace

bool Rule::uses(RuleFeature f) const {
  return std::any_of(keys.begin(), keys.end(), [&](const RuleKey& k) { return k.feature == f; });
}

const std::vector<FeatureInfo>& rule_features() {
  static const std::vector<FeatureInfo> all(std::begin(kFeatures), std::end(kFeatures));
  return all;
}

const FeatureInfo& feature_info(RuleFeature f) {
  const auto i = static_cast<size_t>(f);
  if (i < std::size(kFeatures)) return kFeatures[i];
  throw std::logic_error("a rule feature without a row in kFeatures (model/core/src/rule.cpp)");
}

std::string_view to_string(RuleFeature f) { return feature_info(f).name; }
std::string_view to_string(Prefer p) { return kPrefer[static_cast<size_t>(p)].name; }

const FeatureInfo* gpc_map_feature(const Rule& r) {
  for (const auto& k : r.keys)
    if (feature_info(k.feature).needs_gpc_map) return &feature_info(k.feature);
  return nullptr;
}

json rule_to_json(const Rule& r) {
  json keys = json::array();
  for (const auto& k : r.keys) keys.push_back({{"key", to_string(k.feature)}, {"prefer", to_string(k.prefer)}});
  return json{{"rule", keys}};
}

Rule rule_from_json(const json& j, const std::string& where, const std::string& field) {
  ObjectReader r(j, where, field, {"rule"});
  const json& list = r.require("rule");
  if (!list.is_array()) r.fail("rule", fmt::format("expected a list of keys, got {}", json_type_name(list)));
  if (list.empty())
    r.fail("rule", "the rule is empty: give at least one key, e.g. {\"key\": \"room\", \"prefer\": \"max\"}");
  std::vector<std::string_view> names, directions;
  for (const auto& f : kFeatures) names.push_back(f.name);
  for (const auto& p : kPrefer) directions.push_back(p.name);
  Rule out;
  for (size_t i = 0; i < list.size(); ++i) {
    ObjectReader kr(list[i], where, fmt::format("{}[{}]", r.field("rule"), i), {"key", "prefer"});
    const std::string key = kr.string("key");
    const std::string prefer = kr.string("prefer");
    auto f = std::find_if(std::begin(kFeatures), std::end(kFeatures), [&](const FeatureInfo& x) { return x.name == key; });
    if (f == std::end(kFeatures))
      kr.fail("key", fmt::format("unknown feature '{}'; features are: {}", key, fmt::join(names, ", ")));
    auto p = std::find_if(std::begin(kPrefer), std::end(kPrefer), [&](const PreferName& x) { return x.name == prefer; });
    if (p == std::end(kPrefer))
      kr.fail("prefer", fmt::format("unknown direction '{}' for key '{}'; directions are: {}", prefer, key,
                                    fmt::join(directions, ", ")));
    // A repeated feature can never decide anything its first use left tied: a slip, not a rule.
    if (out.uses(f->feature))
      kr.fail("key", fmt::format("feature '{}' is already ranked by an earlier key of this rule", key));
    out.keys.push_back({f->feature, p->prefer});
  }
  return out;
}

std::string rule_text(const Rule& r) {
  std::vector<std::string> parts;
  for (const auto& k : r.keys) parts.push_back(fmt::format("{}:{}", to_string(k.feature), to_string(k.prefer)));
  return fmt::format("{}", fmt::join(parts, " "));
}

std::string rule_feature_table_markdown() {
  std::string out = "| key | meaning | needs | state |\n| --- | --- | --- | --- |\n";
  for (const auto& f : kFeatures)
    out += fmt::format("| `{}` | {} | {} | {} |\n", f.name, f.meaning, f.needs_gpc_map ? "a GPC map" : "-",
                       f.state == FeatureState::Pointer ? "the round-robin pointer" : "-");
  return out;
}

// The shipped selections that are rankings, as rules: the engines keep their hard-wired paths (faster), and
// tests/model/test_rule_pick.cpp proves each equal to its rule. gpc-priority plans waves; no ranking says it.
std::optional<Rule> selection_as_rule(Selection s) {
  using F = RuleFeature;
  constexpr Prefer kMin = Prefer::Min, kMax = Prefer::Max;
  switch (s) {
    case Selection::RoundRobin: return Rule{{{F::RrDistance, kMin}}};
    case Selection::MostRoom: return Rule{{{F::Room, kMax}}};
    case Selection::GpcSpread:
      return Rule{{{F::Room, kMax}, {F::SingleTpcGpc, kMax}, {F::TpcRoom, kMax}, {F::GpcServed, kMin}, {F::Gpc, kMin},
                   {F::Tpc, kMin}}};
    case Selection::TpcPosition:
      return Rule{{{F::Room, kMax}, {F::SingleTpcGpc, kMax}, {F::SmInTpc, kMin}, {F::TpcPosition, kMin}, {F::Gpc, kMin},
                   {F::Tpc, kMin}}};
    case Selection::GpcPriority:
    case Selection::Rule: return std::nullopt;
  }
  return std::nullopt;
}

std::string shipped_rules_markdown() {
  std::string out = "| selection | as a rule (`selection: {\"rule\": [...]}`, keys in order; then the scan position) |\n"
                    "| --- | --- |\n";
  for (Selection s : {Selection::RoundRobin, Selection::MostRoom, Selection::GpcPriority, Selection::GpcSpread,
                      Selection::TpcPosition}) {
    const auto r = selection_as_rule(s);
    out += fmt::format("| `{}` | {} |\n", to_string(s), r ? fmt::format("`{}`", rule_text(*r)) : "none: not a ranking (waves planned per kernel)");
  }
  return out;
}

}  // namespace tbcheck::model
