// Learn beyond the composition space: selection rules of the ranking language (docs/rules.md) up to a bound,
// enumerated with pruning and put in place of the nearest candidates' selections, then judged as learn judges any.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/search/learn.hpp"
#include "tbcheck/search/learn_replay.hpp"

namespace tbcheck::search {

// How far the search goes: rules of 1 to max_keys keys (each a feature and a direction), each given the other
// mechanisms of one of at most `bases` base hypotheses (the consistent, else the nearest, candidates of the space)
// and, with `shipped_bases`, of every shipped hypothesis: the mechanisms the papers and the hardware runs
// documented, which a short first round (one case refuting every candidate) cannot rank.
// Past max_keys, the nearest bases' own rankings are searched within `edits` edits (a key inserted, replaced or
// removed): the Hopper rule has six keys.
struct RuleBound {
  int max_keys = 2;
  size_t bases = 3;
  bool shipped_bases = true;
  int edits = 2;
};
inline constexpr int kMaxRuleKeys = 4;

// Why an enumerated rule is left out: it places every block where a shorter rule of the bound does, so judging it
// could not change the answer. Each reason is a fact about the device or the language, checked by a test.
enum class RulePrune {
  ConstantFeature,  // the feature has one value on every SM of the device (sm_in_tpc with one SM per TPC, ...)
  Determined,       // the earlier keys already fix the feature among the tied SMs (position fixes everything)
  TrailingScan      // a last position:min: the scan order breaks the ties left anyway
};
std::string_view to_string(RulePrune);

struct PrunedRule {
  model::Rule rule;
  RulePrune why = RulePrune::Determined;
  model::Rule same_as;  // the shorter rule it always equals (the key that cannot decide removed)
};

// The enumerated rules of the bound over the features the device can evaluate (GPC features need its GPC map),
// shortest first, and those left out with the shorter rule each equals.
struct RuleEnumeration {
  std::vector<model::RuleFeature> features;
  std::vector<model::Rule> rules;
  std::vector<PrunedRule> pruned;
};
RuleEnumeration enumerate_rules(const model::Device& d, int max_keys);

// Rules within `distance` edits of r (a key inserted anywhere, replaced, or removed; no feature twice), over the
// features d can evaluate, nearest first; r itself left out.
std::vector<model::Rule> rule_edits(const model::Rule& r, const model::Device& d, int distance);

// `r` without its last keys when those order the SMs exactly as `base`'s scan order does (features fixed per SM:
// sm_in_tpc:min under even-first, tpc:min under natural, ...): the shorter rule places every block where `r` does.
model::Rule reduced_for(const model::Rule& r, const model::Hypothesis& base, const model::Device& d);
// The shortest rule reached from r by the enumeration's pruning and reduced_for, each step proved equal.
model::Rule shortest_equal(model::Rule r, const model::Hypothesis& base, const model::Device& d);

// The rules of the bound, and those within two edits of `h`'s own ranking (a key inserted, replaced or removed),
// each as `h` with that selection, less `h`'s own and those equal to a shorter rule:
// what confirmation separates a survivor from besides its neighbours in the composition space, so that a device
// playing a rule outside the space, or one that breaks the survivor's ties further, is not identified as it.
std::vector<model::Hypothesis> rule_neighbours(const model::Hypothesis& h, const model::Device& d, int max_keys);

// The candidates: each base with each rule as its selection (the base's scan order breaks ties), named
// "<base>.<feature>-<min|max>..." (a long base name shortened to its first part and a hash). Bases that differ
// only in their selection count once; a rule that reduced_for shortens is left out for that base.
struct RuleSpace {
  RuleEnumeration rules;
  std::vector<std::string> bases;
  std::vector<model::Hypothesis> candidates;
  size_t edited = 0;  // candidates from edits of the nearest bases' rankings (after the bound's rules)
  int edits = 0;
  std::string scope() const;  // the bound, the features, what was pruned and why, the bases
};
// `bases` in order, at most b.bases of them, then (with b.shipped_bases) the shipped hypotheses that can run on d.
RuleSpace rule_space(const std::vector<model::Hypothesis>& bases, const model::Device& d, const RuleBound& b);

// What the rule search found. `method` says how it searched and why that way.
struct RuleSearchResult {
  std::string method, scope;
  size_t candidates = 0;  // base x rule
  size_t consistent = 0;  // with every observation made before the search
  std::optional<LearnResult> learned;  // learn over the consistent rules (oracle learning only)
  std::vector<NearMiss> nearest;       // none consistent: the nearest rules and the first block each gets wrong
  nlohmann::json to_json() const;
  std::string text(size_t observed) const;  // after the first learn, which observed `observed` cases
};

// Oracle learning: after `first` (a learn over the space) found none fitting, or when asked to go on anyway.
// Rules are judged on every case `first` observed; the consistent ones are learned over as a list (new splitting
// cases on the oracle, confirmation as for any candidate). Bases: first's consistent candidates, else its nearest.
RuleSearchResult learn_rules(const LearnResult& first, const model::Device& d, const std::vector<model::Case>& corpus,
                             const LearnOptions& o, const RuleBound& b,
                             const std::function<void(const LearnStep&)>& on_step = {});

// The bases for a search after `first`: its consistent candidates, else its nearest misses, in that order.
std::vector<model::Hypothesis> rule_bases(const LearnResult& first);
std::vector<model::Hypothesis> rule_bases(const ReplayLearnResult& first);

// Replay learning: the rule candidates judged on the recordings as learn --oracle replay: judges any list (groups,
// consistent ones, the campaign that would split them; or the nearest rules with their first wrong block).
struct ReplayRuleSearchResult {
  std::string method, scope;
  size_t candidates = 0;
  ReplayLearnResult replay;
  nlohmann::json to_json() const;
  std::string text(const std::string& device) const;  // the search, then its replay as ReplayLearnResult::text
};
ReplayRuleSearchResult learn_rules_from_recordings(const ReplayLearnResult& first, const model::Device& d,
                                                   const std::vector<model::Case>& recordings,
                                                   const std::vector<model::Case>& corpus,
                                                   const ReplayLearnOptions& o, const RuleBound& b);

}  // namespace tbcheck::search
