// The rule search (learn_rules.hpp): rules of the ranking language enumerated up to a bound, pruned where a key
// provably cannot decide, given the other mechanisms of the nearest candidates, then judged on what was observed.
#include "tbcheck/search/learn_rules.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/effective.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/feasibility.hpp"
#include "tbcheck/model/options.hpp"
#include "tbcheck/search/learn_nearest.hpp"
#include "tbcheck/search/learn_numeric.hpp"

namespace tbcheck::search {

std::string_view to_string(RulePrune p) {
  switch (p) {
    case RulePrune::ConstantFeature: return "constant-feature";
    case RulePrune::Determined: return "determined";
    case RulePrune::TrailingScan: return "trailing-scan";
  }
  return "?";
}

namespace {

using model::RuleFeature;

// TPCs per GPC of the device's map (empty without one).
std::vector<int> gpc_sizes(const model::Device& d) {
  std::vector<int> n;
  for (int g : d.gpc_of_tpc) {
    if (g >= static_cast<int>(n.size())) n.resize(static_cast<size_t>(g) + 1, 0);
    ++n[static_cast<size_t>(g)];
  }
  n.erase(std::remove(n.begin(), n.end(), 0), n.end());
  return n;
}

// True when the feature has one value on every SM of the device at every instant: ranking by it never decides.
bool constant_on(RuleFeature f, const model::Device& d) {
  const std::vector<int> sizes = gpc_sizes(d);
  const bool all_single = std::all_of(sizes.begin(), sizes.end(), [](int n) { return n == 1; });
  const bool none_single = std::none_of(sizes.begin(), sizes.end(), [](int n) { return n == 1; });
  switch (f) {
    case RuleFeature::Room:
    case RuleFeature::Held:
    case RuleFeature::TpcRoom: return false;
    case RuleFeature::SingleTpcGpc: return all_single || none_single;
    case RuleFeature::GpcServed:  // counts other TPCs of the SM's GPC: none when every GPC has one
    case RuleFeature::TpcPosition: return all_single;
    case RuleFeature::Gpc: return sizes.size() <= 1;
    case RuleFeature::SmInTpc: return d.sms_per_tpc == 1;
    case RuleFeature::Tpc: return d.tpcs() <= 1;
    case RuleFeature::Position:
    case RuleFeature::RrDistance: return d.sms <= 1;
  }
  return false;
}

// The features whose values the given ones fix: SMs equal in every feature of `s` are equal in each of these.
// Position and the round-robin distance differ between any two SMs; a TPC fixes its GPC and everything read
// per TPC; a GPC and a place in it fix the TPC; a TPC and a place in it fix the SM.
std::set<RuleFeature> closure(std::set<RuleFeature> s, const model::Device& d) {
  const std::set<RuleFeature> every = [] {
    std::set<RuleFeature> all;
    for (const auto& f : model::rule_features()) all.insert(f.feature);
    return all;
  }();
  for (bool grew = true; grew;) {
    const size_t before = s.size();
    auto has = [&](RuleFeature f) { return s.count(f) > 0; };
    if (has(RuleFeature::Position) || has(RuleFeature::RrDistance) ||
        (has(RuleFeature::Tpc) && (has(RuleFeature::SmInTpc) || d.sms_per_tpc == 1)))
      s = every;
    if (has(RuleFeature::Gpc) && has(RuleFeature::TpcPosition)) s.insert(RuleFeature::Tpc);
    if (has(RuleFeature::Tpc))
      s.insert({RuleFeature::TpcRoom, RuleFeature::SingleTpcGpc, RuleFeature::GpcServed, RuleFeature::TpcPosition,
                RuleFeature::Gpc});
    if (has(RuleFeature::Gpc)) s.insert(RuleFeature::SingleTpcGpc);
    grew = s.size() != before;
  }
  return s;
}

model::Rule without(const model::Rule& r, size_t i) {
  model::Rule out = r;
  out.keys.erase(out.keys.begin() + static_cast<std::ptrdiff_t>(i));
  // A rule of one key that cannot decide equals the scan order alone.
  if (out.keys.empty()) out.keys.push_back({RuleFeature::Position, model::Prefer::Min});
  return out;
}

// Why `r` is left out (nullopt: kept), and the shorter rule it equals.
std::optional<PrunedRule> prune_reason(const model::Rule& r, const model::Device& d) {
  std::set<RuleFeature> earlier;
  for (size_t i = 0; i < r.keys.size(); ++i) {
    const RuleFeature f = r.keys[i].feature;
    if (constant_on(f, d)) return PrunedRule{r, RulePrune::ConstantFeature, without(r, i)};
    if (closure(earlier, d).count(f)) return PrunedRule{r, RulePrune::Determined, without(r, i)};
    earlier.insert(f);
  }
  const auto& last = r.keys.back();
  if (r.keys.size() > 1 && last.feature == RuleFeature::Position && last.prefer == model::Prefer::Min)
    return PrunedRule{r, RulePrune::TrailingScan, without(r, r.keys.size() - 1)};
  return std::nullopt;
}

// A feature fixed per SM (FeatureInfo::constant), as the engines read it.
int64_t fixed_value(RuleFeature f, int sm, const model::Device& d, const std::vector<int>& position) {
  const int tpc = d.tpc_of(sm);
  const int gpc = d.gpc_of_tpc.empty() ? 0 : d.gpc_of_tpc[static_cast<size_t>(tpc)];
  switch (f) {
    case RuleFeature::SingleTpcGpc:
      return std::count(d.gpc_of_tpc.begin(), d.gpc_of_tpc.end(), gpc) == 1 ? 1 : 0;
    case RuleFeature::SmInTpc: return sm % d.sms_per_tpc;
    case RuleFeature::TpcPosition: return std::count(d.gpc_of_tpc.begin(), d.gpc_of_tpc.begin() + tpc, gpc);
    case RuleFeature::Gpc: return gpc;
    case RuleFeature::Tpc: return tpc;
    case RuleFeature::Position: return position[static_cast<size_t>(sm)];
    case RuleFeature::Room:
    case RuleFeature::Held:
    case RuleFeature::TpcRoom:
    case RuleFeature::GpcServed:
    case RuleFeature::RrDistance: break;
  }
  throw std::logic_error("fixed_value of a feature that changes while a scenario runs");
}

// FNV-1a: the same name on every platform and run (std::hash promises neither).
uint32_t fnv1a(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

std::string candidate_name(const std::string& base_name, const model::Rule& r) {
  // File names stay well under the file system's limit: composition names can run to hundreds of characters.
  constexpr size_t kLongBase = 96;
  std::string n = base_name;
  if (n.size() > kLongBase)
    n = fmt::format("{}~{:08x}", n.substr(0, n.find('+')).substr(0, 32), fnv1a(base_name));
  for (const auto& k : r.keys) n += fmt::format(".{}-{}", model::to_string(k.feature), model::to_string(k.prefer));
  return n;
}

// `base` with `r` as its selection, named "<base>.<keys>" and described for a written hypothesis file.
model::Hypothesis with_rule(const model::Hypothesis& base, const model::Rule& r, std::string source) {
  model::Hypothesis c = base;
  c.selection = model::Selection::Rule;
  c.rule = r;
  c.name = candidate_name(base.name, r);
  c.source = std::move(source);
  c.description = fmt::format("selection rule {} (then the scan order); every other mechanism as {}",
                              model::rule_text(r), base.name);
  return c;
}

// h's selection as a ranking: its own rule, or the shipped selection written as one (none for gpc-priority).
std::optional<model::Rule> own_ranking(const model::Hypothesis& h) {
  return h.selection == model::Selection::Rule ? std::optional<model::Rule>(h.rule) : model::selection_as_rule(h.selection);
}

// A base's mechanisms other than its selection, as they act on the device: bases equal here give equal candidates.
std::string base_key(const model::Hypothesis& h, const model::Device& d) {
  model::Hypothesis k = model::effective_options(h, d);
  k.name = k.source = k.description = "";
  k.selection = model::Selection::MostRoom;
  k.rule = {};
  return k.to_json().dump();
}

}  // namespace

model::Rule shortest_equal(model::Rule r, const model::Hypothesis& base, const model::Device& d) {
  for (auto why = prune_reason(r, d); why; why = prune_reason(r, d)) r = why->same_as;
  const model::Rule shorter = reduced_for(r, base, d);
  return shorter == r ? r : shortest_equal(shorter, base, d);
}

model::Rule reduced_for(const model::Rule& r, const model::Hypothesis& base, const model::Device& d) {
  if (!d.gpc_of_tpc.empty() && static_cast<int>(d.gpc_of_tpc.size()) != d.tpcs()) return r;
  size_t tail = r.keys.size();  // the first key of the run of fixed features that ends the rule
  while (tail > 0 && model::feature_info(r.keys[tail - 1].feature).constant &&
         (!model::feature_info(r.keys[tail - 1].feature).needs_gpc_map || !d.gpc_of_tpc.empty()))
    --tail;
  if (tail == r.keys.size()) return r;
  const std::vector<int> order = model::sm_order(d, base.order);
  std::vector<int> position(static_cast<size_t>(d.sms), 0);
  for (size_t p = 0; p < order.size(); ++p) position[static_cast<size_t>(order[p])] = static_cast<int>(p);
  // The run orders SMs as the scan does when, with the scan position last, no SM of a later position comes first.
  auto key_of = [&](int sm) {
    std::vector<int64_t> k;
    for (size_t i = tail; i < r.keys.size(); ++i) {
      const int64_t v = fixed_value(r.keys[i].feature, sm, d, position);
      k.push_back(r.keys[i].prefer == model::Prefer::Min ? v : -v);
    }
    k.push_back(position[static_cast<size_t>(sm)]);
    return k;
  };
  for (size_t p = 1; p < order.size(); ++p)
    if (key_of(order[p]) < key_of(order[p - 1])) return r;
  model::Rule out = r;
  out.keys.resize(tail);
  if (out.keys.empty()) out.keys.push_back({RuleFeature::Position, model::Prefer::Min});
  return out;
}

namespace {

// The features a rule may use on d (the GPC ones only with a GPC map).
std::vector<RuleFeature> features_on(const model::Device& d) {
  std::vector<RuleFeature> out;
  for (const auto& f : model::rule_features())
    if (!f.needs_gpc_map || !d.gpc_of_tpc.empty()) out.push_back(f.feature);
  return out;
}

// Rules one edit from r: a key inserted anywhere, a key replaced (feature or direction), a key removed; no
// feature twice.
std::vector<model::Rule> one_edit(const model::Rule& r, const std::vector<RuleFeature>& features) {
  std::vector<model::Rule> out;
  const auto keys_for = [&](const model::Rule& without) {
    std::vector<model::RuleKey> ks;
    for (RuleFeature f : features)
      if (!without.uses(f))
        for (model::Prefer p : {model::Prefer::Min, model::Prefer::Max}) ks.push_back({f, p});
    return ks;
  };
  for (const auto& k : keys_for(r))
    for (size_t at = 0; at <= r.keys.size(); ++at) {
      model::Rule x = r;
      x.keys.insert(x.keys.begin() + static_cast<std::ptrdiff_t>(at), k);
      out.push_back(std::move(x));
    }
  for (size_t at = 0; at < r.keys.size(); ++at) {
    model::Rule rest = r;
    rest.keys.erase(rest.keys.begin() + static_cast<std::ptrdiff_t>(at));
    for (const auto& k : keys_for(rest)) {
      if (k == r.keys[at]) continue;
      model::Rule x = r;
      x.keys[at] = k;
      out.push_back(std::move(x));
    }
    if (!rest.keys.empty()) out.push_back(std::move(rest));
  }
  return out;
}

}  // namespace

std::vector<model::Rule> rule_edits(const model::Rule& r, const model::Device& d, int distance) {
  const auto features = features_on(d);
  std::vector<model::Rule> out;
  std::set<std::string> seen = {model::rule_text(r)};
  std::vector<model::Rule> frontier = {r};
  for (int e = 0; e < distance; ++e) {
    std::vector<model::Rule> next;
    for (const auto& f : frontier)
      for (auto& x : one_edit(f, features))
        if (seen.insert(model::rule_text(x)).second) {
          out.push_back(x);
          next.push_back(std::move(x));
        }
    frontier = std::move(next);
  }
  return out;
}

std::vector<model::Hypothesis> rule_neighbours(const model::Hypothesis& h, const model::Device& d, int max_keys) {
  std::vector<model::Hypothesis> out;
  std::optional<model::Rule> own = own_ranking(h);
  if (own && h.selection == model::Selection::Rule) own = reduced_for(*own, h, d);
  std::set<std::string> seen;
  auto add = [&](const model::Rule& r) {
    if (prune_reason(r, d) || !(reduced_for(r, h, d) == r) || (own && *own == r)) return;
    if (!seen.insert(model::rule_text(r)).second) return;
    out.push_back(with_rule(h, r, fmt::format("tbcheck learn: a rule neighbour of {} on {}", h.name, d.name)));
  };
  for (const auto& r : enumerate_rules(d, max_keys).rules) add(r);
  // Past the bound, the refinements and variants of the survivor's own ranking within two edits: a device whose
  // rule breaks the survivor's ties by one more key agrees with it on most cases, and is the likeliest miss.
  if (own)
    for (const auto& r : rule_edits(*own, d, 2)) add(r);
  return out;
}

RuleEnumeration enumerate_rules(const model::Device& d, int max_keys) {
  if (max_keys < 1 || max_keys > kMaxRuleKeys)
    throw model::InputError("--rule-keys", "", fmt::format("{} is outside 1 to {}", max_keys, kMaxRuleKeys));
  RuleEnumeration e;
  e.features = features_on(d);
  // Breadth first: every rule of n keys before any of n + 1, each level in feature then direction order.
  std::vector<model::Rule> level = {model::Rule{}};
  for (int n = 1; n <= max_keys; ++n) {
    std::vector<model::Rule> next;
    for (const auto& r : level)
      for (RuleFeature f : e.features) {
        if (r.uses(f)) continue;
        for (model::Prefer p : {model::Prefer::Min, model::Prefer::Max}) {
          model::Rule x = r;
          x.keys.push_back({f, p});
          next.push_back(x);
          if (auto why = prune_reason(x, d)) e.pruned.push_back(std::move(*why));
          else e.rules.push_back(std::move(x));
        }
      }
    level = std::move(next);
  }
  return e;
}

RuleSpace rule_space(const std::vector<model::Hypothesis>& bases, const model::Device& d, const RuleBound& b) {
  RuleSpace s;
  s.rules = enumerate_rules(d, b.max_keys);
  s.edits = b.edits;
  std::unordered_set<std::string> seen;
  std::vector<const model::Hypothesis*> kept;
  for (const auto& h : bases) {
    if (kept.size() >= b.bases) break;
    if (seen.insert(base_key(h, d)).second) kept.push_back(&h);
  }
  const size_t nearest = kept.size();  // the bases given; the shipped ones follow
  if (b.shipped_bases)
    for (const auto& h : model::builtin_hypotheses()) {
      model::Hypothesis other = h;  // what the base brings besides its selection, which the rule replaces
      other.selection = model::Selection::MostRoom;
      if (d.gpc_of_tpc.empty() && model::needs_gpc_map(other)) continue;
      if (seen.insert(base_key(h, d)).second) kept.push_back(&h);
    }
  for (const auto* h : kept) s.bases.push_back(h->name);
  // Rule-major: every base's candidate of a shorter rule comes before any of a longer one, so the first
  // consistent candidate is one of the simplest rules.
  for (const auto& r : s.rules.rules)
    for (const auto* h : kept) {
      if (!(reduced_for(r, *h, d) == r)) continue;
      s.candidates.push_back(with_rule(*h, r,
                                       fmt::format("tbcheck learn: rule search on {} (a rule of the ranking language "
                                                   "with the other mechanisms of {})",
                                                   d.name, h->name)));
    }
  // Past the bound: each base's own ranking and the rankings within b.edits edits of it (a key inserted, replaced or
  // removed; one edit for the shipped bases), so that a long ranking such as the Hopper rule's six keys is searched
  // near where it stands, not only short rules. A base's own ranking is new where the base was not a candidate
  // (a shipped hypothesis outside the composition space).
  for (size_t i = 0; i < kept.size() && b.edits > 0; ++i) {
    const model::Hypothesis& h = *kept[i];
    const std::optional<model::Rule> own = own_ranking(h);
    if (!own) continue;
    std::set<std::string> have;
    for (const auto& r : s.rules.rules) have.insert(model::rule_text(r));
    std::vector<model::Rule> near = {*own};
    for (auto& r : rule_edits(*own, d, i < nearest ? b.edits : 1)) near.push_back(std::move(r));
    for (const auto& edited_rule : near) {
      // Shortened to the rule it equals (the Hopper ranking's last tpc:min is fixed by gpc and tpc_position).
      const model::Rule r = shortest_equal(edited_rule, h, d);
      if (!have.insert(model::rule_text(r)).second) continue;
      s.candidates.push_back(with_rule(h, r,
                                       fmt::format("tbcheck learn: rule search on {} (within {} edit(s) of {}'s ranking)",
                                                   d.name, i < nearest ? b.edits : 1, h.name)));
      ++s.edited;
    }
  }
  return s;
}

std::string RuleSpace::scope() const {
  std::vector<std::string> feats;
  for (auto f : rules.features) feats.push_back(std::string(model::to_string(f)));
  size_t by[3] = {0, 0, 0};
  for (const auto& p : rules.pruned) ++by[static_cast<size_t>(p.why)];
  size_t longest = 0;
  for (const auto& r : rules.rules) longest = std::max(longest, r.keys.size());
  return fmt::format("rules of up to {} key(s) over {} feature(s) ({}), each min or max, then the scan order: {} "
                     "rule(s), {} left out as equal to a shorter rule ({} with a feature constant on the device, {} "
                     "with a key the earlier keys fix, {} ending in the scan order itself; per base, also those whose "
                     "last keys repeat its scan order); state: the round-robin pointer only; every other mechanism, "
                     "the block numbering included, from {}{}",
                     longest, feats.size(), fmt::join(feats, ", "), rules.rules.size(), rules.pruned.size(), by[0],
                     by[1], by[2], bases.empty() ? std::string("no base") : fmt::format("{}", fmt::join(bases, ", ")),
                     edited ? fmt::format("; and {} rule(s) that are a base's own ranking or within {} edit(s) of it "
                                          "(1 for the shipped bases)",
                                          edited, edits)
                            : std::string());
}

std::vector<model::Hypothesis> rule_bases(const LearnResult& first) {
  std::vector<model::Hypothesis> out = first.consistent;
  if (out.empty())
    for (const auto& n : first.nearest) out.push_back(n.hypothesis);
  return out;
}

std::vector<model::Hypothesis> rule_bases(const ReplayLearnResult& first) {
  std::vector<model::Hypothesis> out = first.consistent;
  if (out.empty())
    for (const auto& n : first.nearest) out.push_back(n.hypothesis);
  return out;
}

namespace {
constexpr std::string_view kMethod =
    "enumeration with pruning: the bounded language is small enough to judge every rule by simulation, at the cost "
    "of a composition, and each rule is then a candidate like any (split, confirmed, written as a file); pruning "
    "drops only rules proved equal to a shorter one";
}  // namespace

ReplayRuleSearchResult learn_rules_from_recordings(const ReplayLearnResult& first, const model::Device& d,
                                                   const std::vector<model::Case>& recordings,
                                                   const std::vector<model::Case>& corpus,
                                                   const ReplayLearnOptions& o, const RuleBound& b) {
  ReplayRuleSearchResult res;
  RuleSpace space = rule_space(rule_bases(first), d, b);
  res.method = kMethod;
  res.scope = space.scope();
  res.candidates = space.candidates.size();
  if (space.candidates.empty()) return res;
  ReplayLearnOptions ro = o;
  ro.space = LearnSpace::List;
  res.replay = learn_from_recordings(space.candidates, d, recordings, corpus, ro);
  return res;
}

nlohmann::json ReplayRuleSearchResult::to_json() const {
  return {{"method", method}, {"scope", scope}, {"candidates", candidates}, {"replay", replay.to_json()}};
}

RuleSearchResult learn_rules(const LearnResult& first, const model::Device& d, const std::vector<model::Case>& corpus,
                             const LearnOptions& o, const RuleBound& b,
                             const std::function<void(const LearnStep&)>& on_step) {
  RuleSearchResult res;
  RuleSpace space = rule_space(rule_bases(first), d, b);
  res.scope = space.scope();
  res.method = kMethod;
  res.candidates = space.candidates.size();
  if (space.candidates.empty()) return res;
  // Every rule on every case observed so far: consistent ones go on to learn, the others are ranked for "nearest".
  std::vector<SeenCase> seen;
  std::vector<std::string> ids;
  for (const auto& c : first.observed) {
    seen.push_back({&c.scenario, &*c.observation});
    ids.push_back(c.id);
  }
  std::vector<NearMiss> judged = nearest_misses(space.candidates, seen, ids, space.candidates.size());
  std::vector<model::Hypothesis> consistent;
  for (auto& n : judged)
    if (n.cases_refuted == 0) consistent.push_back(std::move(n.hypothesis));
  res.consistent = consistent.size();
  if (consistent.empty()) {
    judged.resize(std::min<size_t>(judged.size(), 5));
    res.nearest = std::move(judged);
    return res;
  }
  LearnOptions lo = o;
  lo.space = LearnSpace::List;
  res.learned = learn(std::move(consistent), d, corpus, lo, on_step);
  res.learned->scope = res.learned->scope.empty() ? res.scope : res.learned->scope + "; among " + res.scope;
  return res;
}

nlohmann::json RuleSearchResult::to_json() const {
  nlohmann::json j = {{"method", method}, {"scope", scope}, {"candidates", candidates}, {"consistent", consistent}};
  if (learned) j["learned"] = learned->to_json();
  nlohmann::json nm = nlohmann::json::array();
  for (const auto& n : nearest) nm.push_back(n.to_json());
  j["nearest"] = nm;
  return j;
}

}  // namespace tbcheck::search
