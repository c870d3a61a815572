// `learn`: a version space over hypotheses. Each step runs the case whose predictions split the consistent
// candidates best (corpus first, Z3 between class representatives after); a survivor is accepted only after
// predicting the cases that separate it from its neighbours in the composition space (model/compositions.hpp).
#include "tbcheck/search/learn.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/check.hpp"
#include "tbcheck/search/learn_nearest.hpp"
#include "tbcheck/search/learn_numeric.hpp"
#include "tbcheck/search/lemma_cache.hpp"
#include "control_variants.hpp"

namespace tbcheck::search {

std::string_view to_string(LearnSpace s) {
  switch (s) {
    case LearnSpace::Compositions: return "compositions";
    case LearnSpace::List: return "list";
  }
  return "?";
}

std::string_view to_string(LearnOutcome o) {
  switch (o) {
    case LearnOutcome::Identified: return "identified";
    case LearnOutcome::Equivalent: return "equivalent";
    case LearnOutcome::Unconfirmed: return "unconfirmed";
    case LearnOutcome::Undecided: return "undecided";
    case LearnOutcome::NoneSurvives: return "none-survives";
    case LearnOutcome::Unstable: return "unstable";
    case LearnOutcome::NoDevice: return "no-device";
    case LearnOutcome::Unsupported: return "unsupported";
  }
  return "?";
}

std::string_view to_string(StepPurpose p) {
  switch (p) {
    case StepPurpose::Split: return "split";
    case StepPurpose::Confirm: return "confirm";
    case StepPurpose::Bracket: return "bracket";
  }
  return "?";
}

std::string_view to_string(NeighbourVerdict v) {
  switch (v) {
    case NeighbourVerdict::Separated: return "separated";
    case NeighbourVerdict::Equivalent: return "equivalent";
    case NeighbourVerdict::NotSeparated: return "not-separated";
  }
  return "?";
}

std::string_view to_string(Settledness s) {
  switch (s) {
    case Settledness::Settled: return "settled";
    case Settledness::Open: return "open";
  }
  return "?";
}

DistinguishBounds learn_bounds() {
  DistinguishBounds b;
  b.max_kernels = 2;
  b.max_blocks_per_kernel = 2;
  b.max_total_blocks = 3;
  b.params.max_duration = 2;
  b.params.max_local = 4096;  // local memory is what separates local: gpu-config from ignore
  b.timeout_ms = 2000;
  b.pair_budget_ms = 5000;
  b.lemma_timeout_ms = 2000;
  b.reduced_tpcs = {1, 2};
  b.sim_samples = 400;
  b.deep_samples = 2000;
  b.wide_samples = 2000;
  return b;
}

size_t Confirmation::count(NeighbourVerdict v) const {
  return static_cast<size_t>(
      std::count_if(neighbours.begin(), neighbours.end(), [&](const NeighbourCheck& n) { return n.verdict == v; }));
}

std::vector<std::string> Confirmation::not_separated() const {
  std::vector<std::string> out;
  for (const auto& n : neighbours)
    if (n.verdict == NeighbourVerdict::NotSeparated) out.push_back(n.name);
  return out;
}

std::string Confirmation::summary() const {
  std::string s = fmt::format("{} agrees with {} case(s); separated from {} of its {} neighbours", survivor,
                              cases_agreed, count(NeighbourVerdict::Separated), neighbours.size());
  if (const size_t e = count(NeighbourVerdict::Equivalent)) s += fmt::format("; {} proved equivalent on this device", e);
  const auto open = not_separated();
  if (!open.empty()) s += fmt::format("; not yet separated from: {}", fmt::join(open, ", "));
  return s;
}

nlohmann::json LearnResult::to_json() const {
  nlohmann::json steps_j = nlohmann::json::array();
  for (const auto& s : steps)
    steps_j.push_back({{"step", s.index},
                       {"purpose", to_string(s.purpose)},
                       {"case", s.case_id},
                       {"origin", s.origin},
                       {"kernels", s.kernels},
                       {"blocks", s.blocks},
                       {"group_sizes", s.group_sizes},
                       {"groups", s.groups},
                       {"oracle_status", oracle::to_string(s.status)},
                       {"oracle_note", s.oracle_note},
                       {"dropped_count", s.dropped_count},
                       {"dropped", s.dropped},
                       {"survivor_count", s.survivor_count},
                       {"survivors", s.survivors},
                       {"confirms", s.confirms},
                       {"oracle_seconds", s.oracle_seconds},
                       {"device_seconds", s.device_seconds}});
  nlohmann::json mech = nlohmann::json::array();
  for (const auto& m : mechanisms)
    mech.push_back({{"mechanism", m.mechanism},
                    {"state", to_string(m.state)},
                    {"values", m.values},
                    {"settled_by", m.settled_by.empty() ? nlohmann::json() : nlohmann::json(m.settled_by)}});
  nlohmann::json open = nlohmann::json::array();
  for (const auto& p : open_pairs) open.push_back({{"a", p.a}, {"b", p.b}, {"why", p.why}});
  nlohmann::json j = {{"space", to_string(space)},
                      {"outcome", to_string(outcome)},
                      {"reason", reason},
                      {"candidates", candidates},
                      {"survivors", survivors},
                      {"equivalence", equivalence},
                      {"open_pairs", open},
                      {"open_pair_count", open_pair_count},
                      {"mechanisms", mech},
                      {"steps", steps_j},
                      {"oracle_runs", oracle_runs},
                      {"oracle_seconds", oracle_seconds},
                      {"device_seconds", device_seconds},
                      {"synthesis_seconds", synthesis_seconds},
                      {"not_applicable", not_applicable}};
  nlohmann::json iv = nlohmann::json::array();
  for (const auto& i : intervals) iv.push_back(i.to_json());
  j["thresholds"] = iv;
  j["scope"] = scope;
  if (confirmation) {
    nlohmann::json nb = nlohmann::json::array();
    for (const auto& n : confirmation->neighbours)
      nb.push_back({{"name", n.name},
                    {"differences", n.differences},
                    {"verdict", to_string(n.verdict)},
                    {"case", n.case_id},
                    {"detail", n.detail}});
    j["confirmation"] = {{"survivor", confirmation->survivor},
                         {"cases_agreed", confirmation->cases_agreed},
                         {"neighbours", confirmation->neighbours.size()},
                         {"separated", confirmation->count(NeighbourVerdict::Separated)},
                         {"equivalent", confirmation->count(NeighbourVerdict::Equivalent)},
                         {"not_separated", confirmation->not_separated()},
                         {"summary", confirmation->summary()},
                         {"checks", nb}};
  }
  if (open_question) {
    j["open_question"] = open_question->to_json();
    j["closest"] = closest;
    nlohmann::json nm = nlohmann::json::array();
    for (const auto& n : nearest)
      nm.push_back({{"name", n.name},
                    {"cases_refuted", n.cases_refuted},
                    {"blocks_misplaced", n.blocks_misplaced},
                    {"first_case", n.first_case},
                    {"where", n.where}});
    j["nearest"] = nm;
  }
  return j;
}

std::optional<model::Scenario> retarget(const model::Scenario& s, const model::Device& d) {
  if (s.device.name == d.name) return s;
  const int from = s.device.tpcs(), to = d.tpcs();
  if (from <= 0 || to <= 0) return std::nullopt;
  model::json j = s.to_json();
  j["device"] = d.to_json();
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    // Whole multiples of the TPC count fill TPCs and scale with them; other counts (the 1-block probe
    // kernels of seed 000's cases) and 2-D grids (their shape is the point) are kept.
    const auto& k = s.kernels[i];
    if (k.grid || k.blocks % from != 0) continue;
    j["kernels"][i]["blocks"] = static_cast<int64_t>(k.blocks) / from * to;
  }
  try {
    return model::scenario_from_json(j, "retargeted scenario");
  } catch (const model::InputError&) {
    return std::nullopt;  // a kernel the device cannot run (threads, registers, shared memory)
  }
}

namespace {

std::string file_of(const model::Case& c) { return c.file.empty() ? c.id : c.file; }

}  // namespace

std::vector<DeviceCase> device_cases(const std::vector<model::Case>& corpus, const model::Device& d) {
  std::vector<DeviceCase> out;
  std::set<std::string> seen;  // scenario JSON: the corpus repeats scenarios
  for (const auto& c : corpus) {
    auto s = retarget(c.scenario, d);
    if (!s) continue;
    if (!seen.insert(s->to_json().dump()).second) continue;
    std::string origin = c.scenario.device.name == d.name
                             ? "corpus " + file_of(c)
                             : fmt::format("corpus {} retargeted from {} (blocks x {}/{})", file_of(c),
                                           c.scenario.device.name, d.tpcs(), c.scenario.device.tpcs());
    out.push_back({c.id, std::move(origin), std::move(*s)});
  }
  return out;
}

namespace {

constexpr int kNotSimulated = -1, kCannotRun = -2;
// Scenarios the PB-hole search may simulate per pair: covers the strict round-robin witnesses on the
// 4-PB devices with room to spare (docs/learn.md gives the tries they took).
constexpr int kPbHoleTries = 3000;
// Threshold refits learn tries when every candidate is refuted, before saying none fits: each simulates the
// cases seen once per combination of their kernels' cuts.
constexpr int kRescueFits = 300;
// When none fits: candidates replayed over every observed case (those refuted last), and the nearest listed.
constexpr size_t kNearestPool = 200, kNearestListed = 5;
// Boundary cases in a row without an observation before bracketing stops.
constexpr int kBracketBlind = 3;

size_t placement_hash(const model::Schedule& s) {
  size_t h = 1469598103934665603ull;
  auto mix = [&](int64_t v) { h = (h ^ static_cast<size_t>(v)) * 1099511628211ull; };
  for (const auto& k : s.kernels)
    for (const auto& b : k.blocks) {
      mix(b.sm);
      mix(b.start);
    }
  return h;
}

// One case, the schedules its candidates predict, shared by the candidates predicting the same placements:
// a candidate is simulated at most once per case, and a class is compared with an observation once.
struct CaseEntry {
  CaseEntry(std::string i, std::string o, model::Scenario s) : id(std::move(i)), origin(std::move(o)), scenario(std::move(s)) {}
  std::string id, origin;
  model::Scenario scenario;
  bool used = false;
  std::vector<int> cls;                   // per candidate: kNotSimulated, kCannotRun or a class
  std::vector<model::Schedule> schedule;  // per class
  std::unordered_map<size_t, std::vector<int>> by_hash;

  int classify(const std::vector<model::Hypothesis>& hs, size_t i) {
    if (cls.empty()) cls.assign(hs.size(), kNotSimulated);
    if (cls[i] != kNotSimulated) return cls[i];
    model::Schedule s;
    try {
      s = model::simulate(scenario, hs[i]);
    } catch (const model::InputError&) {
      return cls[i] = kCannotRun;
    }
    auto& bucket = by_hash[placement_hash(s)];
    for (int c : bucket)
      if (same_placements(schedule[static_cast<size_t>(c)], s)) return cls[i] = c;
    schedule.push_back(std::move(s));
    bucket.push_back(static_cast<int>(schedule.size() - 1));
    return cls[i] = static_cast<int>(schedule.size() - 1);
  }
};

struct SplitScore {
  size_t largest = 0, groups = 0;
  int64_t cost = 0;  // longest predicted makespan: oracle time
};

// How `members` fall apart on case `c` (classes counted; kCannotRun is a class of its own).
SplitScore score_of(CaseEntry& c, const std::vector<model::Hypothesis>& hs, const std::vector<size_t>& members) {
  std::map<int, size_t> count;
  for (size_t i : members) ++count[c.classify(hs, i)];
  SplitScore s;
  s.groups = count.size();
  for (const auto& [k, n] : count) {
    s.largest = std::max(s.largest, n);
    if (k >= 0) s.cost = std::max(s.cost, c.schedule[static_cast<size_t>(k)].makespan());
  }
  return s;
}

int matching_blocks(const model::Schedule& a, const model::Schedule& b) {
  int n = 0;
  for (size_t k = 0; k < a.kernels.size() && k < b.kernels.size(); ++k)
    for (size_t i = 0; i < a.kernels[k].blocks.size() && i < b.kernels[k].blocks.size(); ++i)
      n += a.kernels[k].blocks[i].sm == b.kernels[k].blocks[i].sm ? 1 : 0;
  return n;
}

// The schedule a strict majority of repetitions agree on, if any: noise perturbs single runs, so a
// majority is what the device does and a true hypothesis is never dropped on a minority run.
std::optional<model::Schedule> majority(const std::vector<model::Schedule>& reps, int& votes) {
  votes = 0;
  std::optional<model::Schedule> best;
  for (const auto& r : reps) {
    int v = 0;
    for (const auto& q : reps) v += same_placements(r, q) ? 1 : 0;
    if (v > votes) {
      votes = v;
      best = r;
    }
  }
  if (2 * votes > static_cast<int>(reps.size())) return best;
  return std::nullopt;
}

// Options that cannot matter on `d` set to one value, so candidates that differ only there are one machine
// (no solver needed): the order on at most 2 SMs; the issue rule's compute-capability switch and the device's
// own issue rule where it reduces to single or paired; and the
// capacity rule's value, which only ranks SMs for most-room (round-robin and gpc-priority ask only whether
// a block fits, which capacity blocks and literal answer alike: resources.cpp sm_capacity).
model::Hypothesis canonical(model::Hypothesis h, const model::Device& d) {
  if (d.sms <= 2) h.order = model::Order::Natural;
  switch (h.issue) {
    case model::Issue::Single:
    case model::Issue::Paired: break;
    case model::Issue::PairedCc8:
      h.issue = std::atof(d.cc.c_str()) >= 8.0 ? model::Issue::Paired : model::Issue::Single;
      break;
    case model::Issue::FromDevice:  // the device's own rule; passes of one decision are plain pairs
      if (!d.issue_pairs) h.issue = model::Issue::Single;
      else if (d.issue_pass <= 1) h.issue = model::Issue::Paired;
      break;
  }
  if (h.selection != model::Selection::MostRoom) h.capacity = model::Capacity::Blocks;
  // Priorities need the device's range (two-level is strict where it has two levels), masks a
  // second TPC (search/src/control_variants.hpp).
  if (h.priority == model::Priority::TwoLevel && !detail::priority_exercised(d, h.priority, model::Priority::Strict))
    h.priority = model::Priority::Strict;
  if (!detail::priority_exercised(d, h.priority, model::Priority::Ignore)) h.priority = model::Priority::Ignore;
  if (!detail::partition_exercised(d)) h.partition = model::Partition::AllowedSms;
  // With one register pool per SM, pb-any places exactly what sm does on a device where the check over
  // every SM state proves their capacity rules equal (model::pb_any_as_sm; docs/learn.md).
  if (model::pb_any_acts_as_sm(h, d)) h.warps = model::Warps::Sm;
  h.name.clear();
  h.source.clear();
  h.description.clear();
  h.file.clear();
  return h;
}

// Whether a threshold of h is off the enumerated values (threshold_set): found by refitting or bracketing.
bool thresholds_off_space(const model::Hypothesis& h) {
  for (const auto& o : model::threshold_options()) {
    const auto t = model::threshold_of(h, o);
    if (!t) continue;
    bool listed = false;
    for (const auto& row : model::threshold_set())
      if (row.mechanism == o.key)
        for (const auto& v : row.values) listed = listed || (v.is_number_integer() && v.get<int>() == *t);
    if (!listed) return true;
  }
  return false;
}

std::string machine_key(const model::Hypothesis& h, const model::Device& d) { return canonical(h, d).to_json().dump(); }

// Why two hypotheses with one machine_key act alike on d.
std::string why_one_machine(const model::Hypothesis& a, const model::Hypothesis& b, const model::Device& d) {
  std::string why = "the same options where they can matter on " + d.name;
  if (a.warps != b.warps && a.registers == model::Registers::Sm)
    why += fmt::format(" (pb-any acts as sm with SM-pooled registers: {})", model::pb_any_as_sm(d).summary());
  return why;
}

std::vector<std::string> field_values(const model::Hypothesis& h, const std::vector<std::string>& fields) {
  const auto j = h.to_json();
  std::vector<std::string> v;
  for (const auto& f : fields) {
    const auto& x = j.contains(f) ? j[f] : model::json();
    v.push_back(x.is_string() ? x.get<std::string>() : x.is_null() ? "off" : x.dump());
  }
  return v;
}

struct UnionFind {
  std::vector<size_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  size_t find(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(size_t a, size_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

template <class T>
std::vector<T> first_n(const std::vector<T>& v, size_t n) {
  return std::vector<T>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(n, v.size())));
}

struct Observed {
  size_t case_index;
  model::Observation obs;
};

class Learner {
 public:
  Learner(const std::vector<model::Hypothesis>& candidates, const model::Device& device,
          const std::vector<model::Case>& corpus, const LearnOptions& o,
          const std::function<void(const LearnStep&)>& on_step)
      : device_(device), o_(o), on_step_(on_step), uf_(0) {
    if (o.oracle_spec.rfind("replay", 0) == 0)
      throw model::InputError("--oracle", "", "learn needs an oracle that runs new scenarios: sim:<hypothesis> or cuda");
    if (candidates.empty()) throw model::InputError("--hypotheses", "", "no hypotheses to learn from");
    res_.space = o.space;
    // A candidate that cannot place one small block on this device (e.g. gpc-priority without a GPC map)
    // does not describe it: set aside up front, with the reason, rather than blocking every case.
    model::json probe = {{"device", device.to_json()},
                         {"kernels", {{{"name", "probe"}, {"blocks", 1}, {"threads", 32}, {"regs", 32}, {"smem", 0},
                                       {"duration", 1}}}}};
    probe_ = model::scenario_from_json(probe, "learn probe");
    // The oracle is checked before the first step: a bad spec at once, and a simulated device that cannot
    // run even the probe on this device (sim:fermi on an Ampere GPU) instead of after a second of steps.
    if (auto oracle = oracle::make_oracle(o.oracle_spec, o.noise, o.seed, nullptr); o.oracle_spec.rfind("sim:", 0) == 0)
      if (const auto r = oracle->run(probe_, 1); r.status == oracle::RunStatus::Unsupported)
        throw model::InputError("--oracle", "", fmt::format("cannot play {}: {}", device.name, r.reason));
    for (const auto& h : candidates) {
      // The composition space keeps the priority option at its default on a device without
      // a priority range to exercise it, instead of tripling the candidates for nothing.
      if (o.space == LearnSpace::Compositions &&
          !detail::priority_exercised(device, h.priority, model::Priority::Ignore) && h.priority != model::Priority::Ignore)
        continue;
      if (auto why = not_applicable(h))
        res_.not_applicable.push_back(fmt::format("{}: {}", h.name, *why));
      else
        hs_.push_back(h);
    }
    if (hs_.empty()) throw model::InputError("--hypotheses", "", "none of the hypotheses applies to " + device.name);
    res_.candidates = hs_.size();
    alive_.resize(hs_.size());
    std::iota(alive_.begin(), alive_.end(), 0);
    uf_ = UnionFind(hs_.size());
    std::map<std::string, size_t> by_key;
    for (size_t i = 0; i < hs_.size(); ++i) {
      auto [it, fresh] = by_key.emplace(machine_key(hs_[i], device), i);
      if (!fresh) {
        uf_.unite(it->second, i);
        proof_[i] = why_one_machine(hs_[it->second], hs_[i], device);
      }
    }
    for (auto& c : device_cases(corpus, device)) cases_.emplace_back(c.id, c.origin, std::move(c.scenario));
    fields_ = model::mechanism_fields();
    for (const auto& h : hs_) {
      values_.push_back(field_values(h, fields_));
      canon_values_.push_back(field_values(canonical(h, device), fields_));
    }
    refittable_.assign(hs_.size(), 0);
    refit_failed_.assign(hs_.size(), 0);
    dropped_at_.assign(hs_.size(), 0);
    settled_by_.assign(fields_.size(), "");
    was_settled_.assign(fields_.size(), false);
    for (size_t f = 0; f < fields_.size(); ++f) was_settled_[f] = values_left(f).size() == 1;
  }

  LearnResult run();

 private:
  // Why h cannot place one small block on the device (nullopt: it can).
  std::optional<std::string> not_applicable(const model::Hypothesis& h) const {
    try {
      (void)model::simulate(probe_, h);
      return std::nullopt;
    } catch (const model::InputError& e) {
      return e.reason();
    }
  }

  enum class Ran { Observed, NoObservation, NoDevice };

  // Values of field f left among the consistent candidates, as written or as they act on the device.
  std::set<std::string> values_left(size_t f, bool as_acting = true) const {
    std::set<std::string> v;
    for (size_t i : alive_) v.insert(as_acting ? canon_values_[i][f] : values_[i][f]);
    return v;
  }

  double synthesis_left() const { return o_.synthesis_budget_s - res_.synthesis_seconds; }

  // A witness by simulation alone: random kernels of small structures, scaled by the TPC count (how
  // distinguish lifts a reduced device's witness) and unscaled, run on both simulators. Learn needs a
  // separating case, not a minimal one, and this finds most in milliseconds where Z3 takes seconds.
  std::optional<model::Case> quick_witness(const model::Hypothesis& a, const model::Hypothesis& b) {
    static const std::vector<std::vector<int>> shapes = {{1}, {2}, {1, 1}, {1, 2}, {2, 1}, {2, 2}, {3}, {1, 1, 1}, {3, 2}};
    // Kernels of many small blocks per TPC fill SMs, where warp slots fragment across PBs after completions.
    static const std::vector<std::vector<int>> fills = {{8, 8}, {16, 8}, {6, 6, 6}, {12, 4, 4}, {4, 4, 4, 4}, {24, 12}};
    std::vector<std::pair<int, const std::vector<int>*>> plan;
    for (int scale : {device_.tpcs(), 2 * device_.tpcs(), 1})
      for (const auto& shape : shapes) plan.emplace_back(scale, &shape);
    for (const auto& shape : fills) plan.emplace_back(device_.tpcs(), &shape);
    unsigned k = 0;
    for (const auto& [scale, shape] : plan) {
      std::vector<int> blocks;
      for (int x : *shape) blocks.push_back(x * scale);
      std::optional<model::Scenario> found;
      // Priorities and masks (on TPC 0) where the pair differs in them (control_variants).
      for (const auto& params :
           detail::control_variants(a, b, device_, static_cast<int>(blocks.size()), o_.bounds.params, 1)) {
        try {
          found = simulator_search(a, b, device_, blocks, params, 150, o_.seed + 7919u * ++k);
        } catch (const model::InputError&) {
          return std::nullopt;  // one of them cannot run on this device at all
        }
        if (found) break;
      }
      if (!found) continue;
      model::Case c;
      c.id = fmt::format("simulated-witness-{}", ++witnesses_);
      c.source = "learn: simulator search";
      c.scenario = std::move(*found);
      c.scenario.device = device_;
      c.scenario.device_builtin = true;
      return c;
    }
    return std::nullopt;
  }

  // A corpus case lifted above the pair's thresholds (learn_numeric.hpp) that separates them, if any.
  std::optional<model::Case> lifted_witness(const model::Hypothesis& a, const model::Hypothesis& b) {
    // Only for thresholds off the enumerated values (found by refitting): the space's own pairs keep the
    // witnesses they always had.
    if (!thresholds_off_space(a) && !thresholds_off_space(b)) return std::nullopt;
    const size_t n = cases_.size();
    for (size_t ci = 0; ci < n; ++ci) {
      auto s = lift_above_thresholds(cases_[ci].scenario, a, b);
      if (!s) continue;
      try {
        if (same_placements(model::simulate(*s, a), model::simulate(*s, b))) continue;
      } catch (const model::InputError&) {
        continue;
      }
      model::Case c;
      c.id = fmt::format("{}-lifted", cases_[ci].id);
      c.source = "learn: " + cases_[ci].id + " with the quantities the thresholds ignore raised above them";
      c.scenario = std::move(*s);
      return c;
    }
    return std::nullopt;
  }

  // Z3 (with its simulator pre-pass) on one pair, its wall time charged to the run's budget; a quick
  // simulated witness first.
  PairResult synthesize(const model::Hypothesis& a, const model::Hypothesis& b) {
    if (differ_in_warp_placement(a, b)) {
      // Random small kernels rarely fill every SM's PBs; the shaped family does (learn_witness.cpp).
      if (auto w = pb_hole_search(a, b, device_, kPbHoleTries)) {
        PairResult pr;
        pr.h1 = a.name;
        pr.h2 = b.name;
        pr.outcome = PairOutcome::Separated;
        model::Case c;
        c.id = fmt::format("simulated-witness-{}", ++witnesses_);
        c.source = "learn: PB-hole search";
        RobustWitness rw = robust_witness(w->scenario, a, b, o_.bounds.params.max_duration);  // search/ties.hpp
        c.scenario = std::move(rw.scenario);
        pr.ties = rw.ties;
        pr.witness = std::move(c);
        pr.route = fmt::format("PB-hole search on {} ({} tries)", device_.name, w->tries);
        return pr;
      }
    }
    auto separated = [&](model::Case w, std::string route) {
      PairResult pr;
      RobustWitness rw = robust_witness(w.scenario, a, b, o_.bounds.params.max_duration);  // search/ties.hpp
      w.scenario = std::move(rw.scenario);
      pr.ties = rw.ties;
      pr.h1 = a.name;
      pr.h2 = b.name;
      pr.outcome = PairOutcome::Separated;
      pr.witness = std::move(w);
      pr.route = std::move(route);
      return pr;
    };
    if (auto w = lifted_witness(a, b))
      return separated(std::move(*w), "a corpus case with the quantities their thresholds ignore raised above them");
    if (auto w = quick_witness(a, b)) return separated(std::move(*w), "simulator search on " + device_.name);
    DistinguishBounds bounds = o_.bounds;
    const double left_ms = synthesis_left() * 1000.0;
    if (bounds.pair_budget_ms == 0 || bounds.pair_budget_ms > left_ms)
      bounds.pair_budget_ms = static_cast<unsigned>(std::max(1.0, left_ms));
    PairResult pr;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      pr = distinguish_pair(a, b, device_, bounds, &lemmas_);
    } catch (const std::exception& e) {
      // A solver failure (e.g. z3::exception under memory or time pressure) leaves this pair
      // undecided; it must not end the whole loop.
      pr.h1 = a.name;
      pr.h2 = b.name;
      pr.outcome = PairOutcome::Unknown;
      pr.reason = std::string("synthesis failed: ") + e.what();
    }
    res_.synthesis_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return pr;
  }

  size_t add_case(const model::Case& w, std::string origin) {
    cases_.emplace_back(w.id, std::move(origin), w.scenario);
    return cases_.size() - 1;
  }

  std::map<size_t, std::vector<size_t>> groups_of_alive() {
    std::map<size_t, std::vector<size_t>> g;
    for (size_t i : alive_) g[uf_.find(i)].push_back(i);
    return g;
  }

  std::optional<size_t> best_split();
  bool split_by_synthesis(size_t& chosen);
  Ran run_case(size_t ci, StepPurpose purpose, const std::vector<std::string>& confirms);
  // Confirmation of the one group left: true when finished (outcome set), false when a step changed the set.
  bool confirm(bool& stop);
  void finish_undecided();
  // Thresholds (learn_numeric.hpp): the cases seen so far; h's thresholds refitted to them (false: none fit);
  // one boundary case for the last group's representative (false: its thresholds are as bracketed as they get).
  std::vector<SeenCase> seen() const;
  bool refit(size_t i);
  bool bracket();
  std::string scope_of(const std::vector<model::ThresholdInterval>& intervals) const;

  const model::Device& device_;
  model::Scenario probe_;
  LearnOptions o_;
  std::function<void(const LearnStep&)> on_step_;
  std::vector<model::Hypothesis> hs_;
  std::vector<size_t> alive_;
  std::vector<CaseEntry> cases_;
  std::vector<Observed> history_;
  UnionFind uf_;
  std::map<size_t, std::string> proof_;  // why a candidate joined its group
  std::map<std::pair<size_t, size_t>, PairResult> tried_;
  LemmaCache lemmas_;
  std::vector<std::string> fields_;
  std::vector<std::vector<std::string>> values_, canon_values_;  // per candidate, per field
  std::vector<std::string> settled_by_;
  std::vector<bool> was_settled_;
  int unstable_in_a_row_ = 0, unsupported_in_a_row_ = 0, step_ = 0;
  LearnResult res_;
  // Confirmation state, per representative.
  std::optional<size_t> confirming_;
  std::vector<model::Hypothesis> nbrs_;
  std::vector<NeighbourCheck> nchecks_;
  std::set<size_t> nbr_synth_tried_;
  bool refit_neighbours_ = false;
  int confirm_synth_used_ = 0;
  int witnesses_ = 0;
  // Thresholds: candidates whose thresholds are refitted rather than dropped when a prediction fails (the last
  // group while bracketing, and those rescued when every candidate was refuted); when each was dropped; the
  // bracketing state of the representative.
  std::vector<char> refittable_, refit_failed_;
  std::vector<int> dropped_at_;
  int rescue_fits_ = 0;
  std::optional<size_t> bracketing_, bracketed_;
  std::vector<int> own_cut_;                // per threshold option: the survivor's cut when bracketing began
  std::vector<std::string> bracket_notes_;  // per threshold option: why it is not bracketed further
  std::vector<std::string> bracket_case_;   // per threshold option: the last boundary case run for it
  int bracket_blind_ = 0;                   // boundary cases in a row that gave no observation
};

std::optional<size_t> Learner::best_split() {
  // Estimate on an evenly spread sample when there are many; fall back to all when the sample splits nowhere.
  std::vector<size_t> sample = alive_;
  if (alive_.size() > o_.split_sample) {
    sample.clear();
    for (size_t k = 0; k < o_.split_sample; ++k) sample.push_back(alive_[k * alive_.size() / o_.split_sample]);
  }
  for (int pass = 0; pass < 2; ++pass) {
    std::optional<size_t> best;
    SplitScore bs;
    for (size_t ci = 0; ci < cases_.size(); ++ci) {
      if (cases_[ci].used) continue;
      SplitScore s = score_of(cases_[ci], hs_, sample);
      if (s.groups < 2) continue;
      const int blocks = cases_[ci].scenario.total_blocks();
      if (!best || s.largest < bs.largest ||
          (s.largest == bs.largest &&
           (s.cost < bs.cost || (s.cost == bs.cost && blocks < cases_[*best].scenario.total_blocks())))) {
        best = ci;
        bs = s;
      }
    }
    if (best || sample.size() == alive_.size()) return best;
    sample = alive_;
  }
  return std::nullopt;
}

bool Learner::split_by_synthesis(size_t& chosen) {
  if (!o_.synthesize) return false;
  auto groups = groups_of_alive();
  std::vector<std::vector<size_t>> gs;
  for (auto& [r, m] : groups) gs.push_back(m);
  // Representatives of the largest groups first: a witness between them splits the most.
  std::stable_sort(gs.begin(), gs.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  for (size_t x = 0; x < gs.size(); ++x)
    for (size_t y = x + 1; y < gs.size(); ++y) {
      const size_t a = gs[x].front(), b = gs[y].front();
      if (uf_.find(a) == uf_.find(b)) continue;  // merged by a proof found in this loop
      const auto key = std::minmax(a, b);
      if (tried_.count(key)) continue;
      if (synthesis_left() <= 0) return false;
      PairResult pr = synthesize(hs_[a], hs_[b]);
      tried_[key] = pr;
      if (pr.outcome == PairOutcome::Inseparable) {
        uf_.unite(a, b);
        proof_[std::max(a, b)] = fmt::format("Z3: inseparable from {} ({})", hs_[std::min(a, b)].name, pr.reason);
        continue;
      }
      if (pr.outcome != PairOutcome::Separated || !pr.witness) continue;
      const size_t ci = add_case(*pr.witness, fmt::format("synthesized ({} vs {}; {})", hs_[a].name, hs_[b].name, pr.route));
      if (score_of(cases_[ci], hs_, alive_).groups < 2) continue;
      chosen = ci;
      return true;
    }
  return false;
}

Learner::Ran Learner::run_case(size_t ci, StepPurpose purpose, const std::vector<std::string>& confirms) {
  CaseEntry& cand = cases_[ci];
  cand.used = true;
  LearnStep st;
  st.index = ++step_;
  st.purpose = purpose;
  st.case_id = cand.id;
  st.origin = cand.origin;
  st.kernels = static_cast<int>(cand.scenario.kernels.size());
  st.blocks = cand.scenario.total_blocks();
  st.confirms = confirms;
  std::map<int, std::vector<size_t>> by_class;
  for (size_t i : alive_) by_class[cand.classify(hs_, i)].push_back(i);
  for (const auto& [k, members] : by_class) {
    st.group_sizes.push_back(members.size());
    std::vector<std::string> names;
    for (size_t i : first_n(members, 8)) names.push_back(hs_[i].name);
    st.groups.push_back(std::move(names));
  }

  auto oracle = oracle::make_oracle(o_.oracle_spec, o_.noise, o_.seed + static_cast<unsigned>(step_), nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  oracle::RunResult r = oracle->run(cand.scenario, o_.repetitions);
  st.oracle_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  st.status = r.status;
  res_.oracle_runs += static_cast<int>(r.repetitions.size());
  res_.oracle_seconds += st.oracle_seconds;
  auto emit = [&] {
    std::vector<std::string> names;
    for (size_t i : first_n(alive_, 20)) names.push_back(hs_[i].name);
    st.survivors = std::move(names);
    st.survivor_count = alive_.size();
    res_.steps.push_back(st);
    if (on_step_) on_step_(st);
  };

  if (r.status == oracle::RunStatus::NoDevice) {
    res_.outcome = LearnOutcome::NoDevice;
    res_.reason = r.reason;
    st.oracle_note = r.reason;
    emit();
    return Ran::NoDevice;
  }
  std::optional<model::Schedule> observed;
  if (r.status == oracle::RunStatus::Unsupported) {
    st.oracle_note = "the oracle cannot run this case: " + r.reason;
    ++unsupported_in_a_row_;
  } else if (r.status == oracle::RunStatus::Timeout || r.status == oracle::RunStatus::OrderUnconfirmed ||
             r.status == oracle::RunStatus::DeviceError) {
    // No trustworthy observation of this case: nobody is dropped; another case is tried.
    st.oracle_note = fmt::format("{}: {}; nobody dropped", oracle::to_string(r.status), r.reason);
    ++unsupported_in_a_row_;
  } else if (r.effective_scenario) {
    // The GPU ran other TPC partitions than the case asks for (green contexts grant SMs, not TPCs:
    // docs/oracle.md); the classes predicted the case as written, so this observation judges no one.
    st.oracle_note = "the GPU ran other TPC partitions than the case asks for (green contexts); nobody dropped";
    ++unsupported_in_a_row_;
  } else if (r.status == oracle::RunStatus::Ok) {
    observed = r.repetitions.front();
  } else {
    int votes = 0;
    observed = majority(r.repetitions, votes);
    st.oracle_note = observed ? fmt::format("unstable; {} of {} repetitions agree and are used", votes,
                                            r.repetitions.size())
                              : fmt::format("unstable with no majority ({} of {} at most); nobody dropped", votes,
                                            r.repetitions.size());
    if (!r.unstable_blocks.empty())
      st.oracle_note += fmt::format(" ({} unstable placement(s), first: {})", r.unstable_blocks.size(),
                                    r.unstable_blocks.front());
    if (!observed) ++unstable_in_a_row_;
  }
  if (!observed) {
    emit();
    return Ran::NoObservation;
  }
  unstable_in_a_row_ = unsupported_in_a_row_ = 0;
  st.device_seconds = static_cast<double>(observed->makespan()) * o_.time_unit_ms / 1000.0 *
                      static_cast<double>(r.repetitions.size());
  res_.device_seconds += st.device_seconds;
  const model::Observation obs = oracle::observation_of(*observed, model::ObservationKind::Synthetic);
  history_.push_back({ci, obs});

  std::vector<size_t> keep, refitted;
  std::vector<std::pair<int, size_t>> refuted_now;  // blocks on the observed SM, candidate
  int closest_match = -1;
  size_t closest = 0;
  for (const auto& [k, members] : by_class) {
    // A class that predicts the kernels cannot run is refuted by any observation of them running.
    const bool pass = k >= 0 && model::compare_recording(obs, cand.scenario, cand.schedule[static_cast<size_t>(k)],
                                                         model::Level::Exact)
                                        .verdict == model::Verdict::Pass;
    if (pass) {
      keep.insert(keep.end(), members.begin(), members.end());
      continue;
    }
    const int m = k >= 0 ? matching_blocks(cand.schedule[static_cast<size_t>(k)], *observed) : 0;
    for (size_t i : members) {
      // A threshold is an interval: other values of it may still fit everything seen (learn_numeric.hpp).
      if (refittable_[i] && !refit_failed_[i]) {
        if (refit(i)) {
          keep.push_back(i);
          refitted.push_back(i);
          continue;
        }
        refit_failed_[i] = 1;
      }
      dropped_at_[i] = step_;
      refuted_now.emplace_back(m, i);
    }
    if (m > closest_match) {
      closest_match = m;
      closest = members.front();
    }
  }
  if (keep.empty()) {
    // Every candidate is refuted at its thresholds. Before saying none fits, other values of their thresholds:
    // those just refuted first (most blocks on the observed SM first), then those refuted earlier, latest first;
    // the fits of one drop step compete in the steps that follow.
    std::stable_sort(refuted_now.begin(), refuted_now.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<size_t> order;
    for (const auto& [m, i] : refuted_now) order.push_back(i);
    std::vector<size_t> earlier;
    for (size_t i = 0; i < hs_.size(); ++i)
      if (dropped_at_[i] > 0 && dropped_at_[i] < step_) earlier.push_back(i);
    std::stable_sort(earlier.begin(), earlier.end(), [&](size_t a, size_t b) { return dropped_at_[a] > dropped_at_[b]; });
    order.insert(order.end(), earlier.begin(), earlier.end());
    int rescued_from = -1;
    for (size_t i : order) {
      if ((!keep.empty() && dropped_at_[i] != rescued_from) || rescue_fits_ >= kRescueFits) break;
      if (refit_failed_[i]) continue;
      ++rescue_fits_;
      if (!refit(i)) {
        refit_failed_[i] = 1;
        continue;
      }
      keep.push_back(i);
      refitted.push_back(i);
      refittable_[i] = 1;
      rescued_from = dropped_at_[i];
    }
    if (!keep.empty())
      st.oracle_note += fmt::format("{}every candidate was refuted at its thresholds; {} fit everything seen with "
                                    "other thresholds and are kept",
                                    st.oracle_note.empty() ? "" : "; ", keep.size());
  }
  // Refitted candidates that became the same composition are one.
  for (size_t x = 0; x < refitted.size(); ++x)
    for (size_t y = 0; y < keep.size(); ++y)
      if (keep[y] != refitted[x] && hs_[keep[y]].same_options(hs_[refitted[x]]) &&
          (std::find(refitted.begin(), refitted.end(), keep[y]) == refitted.end() || keep[y] < refitted[x])) {
        keep.erase(std::find(keep.begin(), keep.end(), refitted[x]));
        break;
      }
  std::sort(keep.begin(), keep.end());
  for (size_t i : alive_)
    if (!std::binary_search(keep.begin(), keep.end(), i) && st.dropped.size() < 20) st.dropped.push_back(hs_[i].name);
  st.dropped_count = alive_.size() - keep.size();
  if (keep.empty()) {
    res_.outcome = LearnOutcome::NoneSurvives;
    res_.closest = hs_[closest].name;
    model::Case q;
    q.id = "open-" + cand.id;
    q.source = "learn: oracle " + oracle->name();
    q.scenario = cand.scenario;
    q.observation = obs;
    q.observation->kind = o_.oracle_spec == "cuda" ? model::ObservationKind::Hardware : model::ObservationKind::Synthetic;
    std::vector<std::string> refuted;
    for (size_t i : first_n(alive_, 12)) refuted.push_back(hs_[i].name);
    q.notes = fmt::format("refutes every candidate still consistent ({}{}); closest: {} with {} of {} blocks on the "
                          "observed SM",
                          fmt::join(refuted, ", "), alive_.size() > refuted.size() ? ", ..." : "", res_.closest,
                          closest_match, cand.scenario.total_blocks());
    res_.open_question = std::move(q);
    res_.reason = "none fits: " + res_.open_question->notes;
    // The nearest, over every observed case: from those refuted last (they came closest), a bounded pool.
    std::vector<size_t> pool;
    for (size_t i = 0; i < hs_.size(); ++i)
      if (dropped_at_[i] > 0) pool.push_back(i);
    std::stable_sort(pool.begin(), pool.end(), [&](size_t a, size_t b) { return dropped_at_[a] > dropped_at_[b]; });
    std::vector<model::Hypothesis> near;
    for (size_t i : first_n(pool, kNearestPool)) near.push_back(hs_[i]);
    std::vector<std::string> ids;
    for (const auto& ob : history_) ids.push_back(cases_[ob.case_index].id);
    res_.nearest = nearest_misses(near, seen(), ids, kNearestListed);
  }
  alive_ = std::move(keep);
  for (size_t f = 0; f < fields_.size(); ++f) {
    const bool now = values_left(f).size() <= 1;
    if (now && !was_settled_[f]) settled_by_[f] = cand.id;
    was_settled_[f] = now;
  }
  emit();
  return Ran::Observed;
}

bool Learner::confirm(bool& stop) {
  auto groups = groups_of_alive();
  const std::vector<size_t>& group = groups.begin()->second;
  const size_t rep = group.front();
  const model::Hypothesis& h = hs_[rep];
  if (confirming_ != rep) {
    confirming_ = rep;
    nbr_synth_tried_.clear();
    nbrs_.clear();
    nchecks_.clear();
    // With thresholds off the enumerated values, a neighbour is another choice of the other options with the
    // survivor's thresholds (its own values are the intervals' business), and it is separated only when no
    // threshold values make it fit what was seen.
    refit_neighbours_ = thresholds_off_space(h);
    std::vector<model::Hypothesis> candidates_near;
    if (refit_neighbours_) {
      // The space's neighbours are its compositions near h's other options (h itself is off the space's values).
      model::Hypothesis base = h;
      for (const auto& opt : model::threshold_options()) model::set_threshold(base, opt, std::nullopt);
      candidates_near = model::neighbours(base, o_.neighbour_distance);
      candidates_near.push_back(base);  // changes only thresholds: dropped below
    } else {
      candidates_near = model::neighbours(h, o_.neighbour_distance);
    }
    if (refit_neighbours_) {
      std::vector<model::Hypothesis> moved;
      for (auto n : candidates_near) {
        for (const auto& opt : model::threshold_options()) model::set_threshold(n, opt, model::threshold_of(h, opt));
        if (n.same_options(h)) continue;
        bool seen_before = false;
        for (const auto& m : moved) seen_before = seen_before || m.same_options(n);
        if (seen_before) continue;
        n.name = model::composition_name(n);
        moved.push_back(std::move(n));
      }
      candidates_near = std::move(moved);
    }
    for (auto& n : candidates_near) {
      if (not_applicable(n)) continue;  // cannot describe this device (as candidates are set aside)
      NeighbourCheck c;
      c.name = n.name;
      c.differences = option_differences(h, n);
      // A neighbour that is itself a consistent candidate is in the group (one group is left).
      for (size_t i : group)
        if (hs_[i].same_options(n) && i != rep) {
          c.verdict = NeighbourVerdict::Equivalent;
          c.detail = proof_.count(i) ? proof_[i] : "in the consistent set's equivalence group";
        }
      if (c.verdict != NeighbourVerdict::Equivalent && machine_key(n, device_) == machine_key(h, device_)) {
        c.verdict = NeighbourVerdict::Equivalent;
        c.detail = why_one_machine(h, n, device_);
      }
      nbrs_.push_back(std::move(n));
      nchecks_.push_back(std::move(c));
    }
  }
  // What the observations so far say about each neighbour still open.
  for (size_t k = 0; k < nbrs_.size(); ++k) {
    if (nchecks_[k].verdict != NeighbourVerdict::NotSeparated) continue;
    if (refit_neighbours_) {
      if (auto fit = fit_thresholds(nbrs_[k], device_, seen())) {
        nbrs_[k] = std::move(fit->fitted);  // the confirming cases are chosen against thresholds that fit
        continue;
      }
      nchecks_[k].verdict = NeighbourVerdict::Separated;
      nchecks_[k].case_id = "every threshold value (the observed cases together)";
    }
    for (const auto& ob : history_) {
      const CaseEntry& c = cases_[ob.case_index];
      model::Schedule s;
      try {
        s = model::simulate(c.scenario, nbrs_[k]);
      } catch (const model::InputError&) {
        nchecks_[k].verdict = NeighbourVerdict::Separated;  // predicts the observed case cannot run
        nchecks_[k].case_id = c.id;
        break;
      }
      if (model::compare_recording(ob.obs, c.scenario, s, model::Level::Exact).verdict != model::Verdict::Pass) {
        nchecks_[k].verdict = NeighbourVerdict::Separated;
        nchecks_[k].case_id = c.id;
        break;
      }
    }
  }
  auto finish = [&] {
    Confirmation cf;
    cf.survivor = h.name;
    cf.cases_agreed = static_cast<int>(history_.size());
    cf.neighbours = nchecks_;
    // A threshold's neighbouring values are neighbours too: one not separated leaves the answer unconfirmed.
    std::vector<std::string> numeric_open;
    if (auto fit = fit_thresholds(h, device_, seen())) {
      res_.intervals = fit->intervals;
      for (size_t x = 0; x < res_.intervals.size(); ++x)
        if (res_.intervals[x].cuts() > 1)
          numeric_open.push_back(fmt::format("{} ({})", res_.intervals[x].text(),
                                             bracket_notes_.size() > x && !bracket_notes_[x].empty()
                                                 ? bracket_notes_[x]
                                                 : std::string(o_.confirm ? "step budget spent" : "confirmation off")));
    }
    const bool complete = cf.not_separated().empty() && numeric_open.empty();
    res_.outcome = !complete ? LearnOutcome::Unconfirmed
                   : group.size() == 1 ? LearnOutcome::Identified
                                       : LearnOutcome::Equivalent;
    res_.reason = cf.summary();
    if (!numeric_open.empty())
      res_.reason += fmt::format("; thresholds not bracketed to the device's granularity: {}", fmt::join(numeric_open, "; "));
    res_.confirmation = std::move(cf);
    res_.scope = scope_of(res_.intervals);
    stop = true;
    return true;
  };
  if (!o_.confirm) return finish();
  std::vector<size_t> open;
  for (size_t k = 0; k < nbrs_.size(); ++k)
    if (nchecks_[k].verdict == NeighbourVerdict::NotSeparated) open.push_back(k);
  if (open.empty()) return finish();

  // The unused corpus case that separates the survivor from the most open neighbours (then the cheapest).
  std::optional<size_t> best;
  std::vector<size_t> best_cover;
  int64_t best_cost = 0;
  for (size_t ci = 0; ci < cases_.size(); ++ci) {
    CaseEntry& c = cases_[ci];
    if (c.used) continue;
    const int mine = c.classify(hs_, rep);
    if (mine < 0) continue;
    const model::Schedule& ms = c.schedule[static_cast<size_t>(mine)];
    std::vector<size_t> cover;
    for (size_t k : open) {
      model::Schedule s;
      try {
        s = model::simulate(c.scenario, nbrs_[k]);
      } catch (const model::InputError&) {
        cover.push_back(k);
        continue;
      }
      if (!same_placements(s, ms)) cover.push_back(k);
    }
    if (cover.empty()) continue;
    if (!best || cover.size() > best_cover.size() || (cover.size() == best_cover.size() && ms.makespan() < best_cost)) {
      best = ci;
      best_cover = std::move(cover);
      best_cost = ms.makespan();
    }
  }
  if (!best && o_.synthesize) {
    // No corpus case: a synthesized witness against one open neighbour at a time, within the budget.
    for (size_t k : open) {
      if (confirm_synth_used_ >= o_.confirm_synthesis_pairs || synthesis_left() <= 0) break;
      if (nbr_synth_tried_.count(k)) continue;
      nbr_synth_tried_.insert(k);
      ++confirm_synth_used_;
      PairResult pr = synthesize(h, nbrs_[k]);
      if (pr.outcome == PairOutcome::Inseparable) {
        nchecks_[k].verdict = NeighbourVerdict::Equivalent;
        nchecks_[k].detail = "Z3: inseparable (" + pr.reason + ")";
        continue;
      }
      if (pr.outcome != PairOutcome::Separated || !pr.witness) {
        nchecks_[k].detail = fmt::format("Z3: {}{}", to_string(pr.outcome), pr.reason.empty() ? "" : " (" + pr.reason + ")");
        continue;
      }
      best = add_case(*pr.witness, fmt::format("synthesized ({} vs {}; {})", h.name, nbrs_[k].name, pr.route));
      best_cover = {k};
      break;
    }
  }
  if (!best) {
    for (size_t k : open)
      if (nchecks_[k].detail.empty())
        nchecks_[k].detail = o_.synthesize ? "no corpus case separates them; synthesis budget spent"
                                           : "no corpus case separates them (synthesis off)";
    return finish();
  }
  std::vector<std::string> names;
  for (size_t k : best_cover) names.push_back(nbrs_[k].name);
  const Ran ran = run_case(*best, StepPurpose::Confirm, names);
  if (ran == Ran::NoDevice || alive_.empty()) {
    stop = true;
    return true;
  }
  if (ran == Ran::NoObservation)
    for (size_t k : best_cover)
      nchecks_[k].detail = "the confirming case " + cases_[*best].id + " gave no observation";
  return false;
}

std::vector<SeenCase> Learner::seen() const {
  std::vector<SeenCase> out;
  for (const auto& ob : history_) out.push_back({&cases_[ob.case_index].scenario, &ob.obs});
  return out;
}

bool Learner::refit(size_t i) {
  auto fit = fit_thresholds(hs_[i], device_, seen());
  if (!fit) return false;
  if (!fit->fitted.same_options(hs_[i])) {
    hs_[i] = std::move(fit->fitted);
    hs_[i].name = model::composition_name(hs_[i]);
    for (auto& c : cases_)
      if (!c.cls.empty()) c.cls[i] = kNotSimulated;
    values_[i] = field_values(hs_[i], fields_);
    canon_values_[i] = field_values(canonical(hs_[i], device_), fields_);
  }
  return true;
}

bool Learner::bracket() {
  auto groups = groups_of_alive();
  if (groups.size() != 1) return false;
  const std::vector<size_t>& group = groups.begin()->second;
  const size_t rep = group.front();
  for (size_t i : group) refittable_[i] = 1;
  if (bracketed_ == rep) return false;
  const auto& opts = model::threshold_options();
  if (bracketing_ != rep) {
    bracketing_ = rep;
    own_cut_.assign(opts.size(), -1);
    bracket_notes_.assign(opts.size(), "");
    bracket_case_.assign(opts.size(), "");
    bracket_blind_ = 0;
  }
  auto fit = fit_thresholds(hs_[rep], device_, seen());
  if (!fit || bracket_blind_ >= kBracketBlind || step_ >= o_.max_steps) {
    if (fit && bracket_blind_ >= kBracketBlind)
      for (size_t x = 0; x < opts.size(); ++x)
        if (fit->intervals[x].cuts() > 1) bracket_notes_[x] = "the boundary cases gave no observation";
    bracketed_ = rep;
    return false;
  }
  // An option with no boundary case now may get one once another is narrower (a case must be read the same
  // whatever the other thresholds are), so an option is given up only when no option has a case.
  std::vector<size_t> stuck;
  for (size_t x = 0; x < opts.size(); ++x) {
    const auto& iv = fit->intervals[x];
    if (iv.cuts() <= 1 || !bracket_notes_[x].empty()) continue;
    // The values next to the survivor's own threshold first (a threshold the space named is then confirmed in
    // a step or two), then halving what is left.
    if (own_cut_[x] < 0) own_cut_[x] = model::cut_of(opts[x], model::threshold_of(hs_[rep], opts[x]), iv.values);
    const int own = own_cut_[x];
    std::vector<int> cuts;
    if (own >= iv.lo_cut && own <= iv.hi_cut) {
      if (own < iv.hi_cut) cuts.push_back(own + 1);
      if (own > iv.lo_cut) cuts.push_back(own);
    }
    cuts.push_back((iv.lo_cut + iv.hi_cut + 1) / 2);
    // Both questions next to the survivor's own threshold in one case when the family has one (learn_numeric.hpp).
    if (own > iv.lo_cut && own < iv.hi_cut)
      if (auto bc = boundary_pair_case(hs_[rep], device_, fit->intervals, x, own, own + 1)) {
        const int v1 = iv.values[static_cast<size_t>(own) - 1], v2 = iv.values[static_cast<size_t>(own)];
        model::Case c;
        c.id = fmt::format("boundary-{}-{}-{}", opts[x].key, v1, v2);
        c.scenario = std::move(bc->scenario);
        const size_t ci = add_case(c, fmt::format("boundary case: does {} ignore {} {}, and {}? (now {}; {} shapes tried)",
                                                  opts[x].key, v1, model::unit_of(opts[x].quantity), v2,
                                                  iv.range_text(), bc->tries));
        bracket_case_[x] = c.id;
        const Ran ran = run_case(ci, StepPurpose::Bracket, {});
        bracket_blind_ = ran == Ran::NoObservation ? bracket_blind_ + 1 : 0;
        return ran != Ran::NoDevice;
      }
    for (int m : cuts) {
      auto bc = boundary_case(hs_[rep], device_, fit->intervals, x, m);
      if (!bc) continue;
      const int value = iv.values[static_cast<size_t>(m) - 1];
      model::Case c;
      c.id = fmt::format("boundary-{}-{}", opts[x].key, value);
      c.scenario = std::move(bc->scenario);
      const size_t ci = add_case(c, fmt::format("boundary case: does {} ignore {} {}? (now {}; {} shapes tried)",
                                                opts[x].key, value, model::unit_of(opts[x].quantity),
                                                iv.range_text(), bc->tries));
      bracket_case_[x] = c.id;
      const Ran ran = run_case(ci, StepPurpose::Bracket, {});
      bracket_blind_ = ran == Ran::NoObservation ? bracket_blind_ + 1 : 0;
      return ran != Ran::NoDevice;
    }
    stuck.push_back(x);
  }
  for (size_t x : stuck)
    bracket_notes_[x] = fmt::format("no boundary case in learn's family separates the values of {} on {} under {}",
                                    fit->intervals[x].range_text(), device_.name, hs_[rep].name);
  bracketed_ = rep;
  return false;
}

std::string Learner::scope_of(const std::vector<model::ThresholdInterval>& intervals) const {
  std::vector<std::string> iv;
  bool all_one = true;
  for (const auto& i : intervals) {
    iv.push_back(fmt::format("{} {} ({} step(s))", i.option.key, i.range_text(), i.cuts()));
    all_one = all_one && i.cuts() == 1;
  }
  return fmt::format("among {} candidates ({}), each threshold the interval of values every observation allows, in "
                     "steps of the granularity the device can tell apart: {}; confirmation covered {} neighbours (one "
                     "or two option changes){}",
                     res_.candidates, res_.space == LearnSpace::Compositions ? "every valid composition" : "the given list",
                     fmt::join(iv, ", "), res_.confirmation ? res_.confirmation->neighbours.size() : 0,
                     all_one ? " and each threshold's neighbouring values" : ", not the values inside a wider interval");
}

void Learner::finish_undecided() {
  auto groups = groups_of_alive();
  std::vector<std::string> why;
  res_.open_pairs.clear();
  std::vector<size_t> reps;
  for (const auto& [r, m] : groups) reps.push_back(m.front());
  res_.open_pair_count = reps.empty() ? 0 : reps.size() * (reps.size() - 1) / 2;
  // Listed: the pairs Z3 was asked about (their answers say most), then the others, up to the cap.
  std::vector<char> is_rep(hs_.size(), 0);
  for (size_t r : reps) is_rep[r] = 1;
  for (const auto& [ab, answer] : tried_) {
    if (res_.open_pairs.size() >= kListedOpenPairs) break;
    if (!is_rep[ab.first] || !is_rep[ab.second]) continue;
    res_.open_pairs.push_back({hs_[ab.first].name, hs_[ab.second].name,
                               fmt::format("no corpus case splits them; Z3: {}{}", to_string(answer.outcome),
                                           answer.reason.empty() ? "" : " (" + answer.reason + ")")});
  }
  const std::string unasked = !o_.synthesize         ? "no unused corpus case splits them (synthesis off)"
                              : synthesis_left() <= 0 ? "no unused corpus case splits them; synthesis budget spent"
                                                      : "no unused corpus case splits them";
  for (size_t x = 0; x < reps.size() && res_.open_pairs.size() < kListedOpenPairs; ++x)
    for (size_t y = x + 1; y < reps.size() && res_.open_pairs.size() < kListedOpenPairs; ++y)
      if (!tried_.count(std::minmax(reps[x], reps[y])))
        res_.open_pairs.push_back({hs_[reps[x]].name, hs_[reps[y]].name, unasked});
  res_.outcome = unstable_in_a_row_ > 0     ? LearnOutcome::Unstable
                 : unsupported_in_a_row_ > 0 ? LearnOutcome::Unsupported
                                             : LearnOutcome::Undecided;
  res_.reason = unstable_in_a_row_ > 0     ? "the oracle gave no majority on the last splitting cases; "
                : unsupported_in_a_row_ > 0 ? "the oracle could not run the last splitting cases; "
                                            : "";
  res_.reason += fmt::format("{} groups of consistent candidates that no case splits ({} pair(s) open)", groups.size(),
                             res_.open_pair_count);
}

LearnResult Learner::run() {
  bool stop = false;
  while (!stop && !alive_.empty()) {
    if (step_ >= o_.max_steps) {
      res_.outcome = groups_of_alive().size() == 1 ? LearnOutcome::Unconfirmed : LearnOutcome::Undecided;
      res_.reason = fmt::format("stopped after {} steps", o_.max_steps);
      break;
    }
    std::optional<size_t> ci = best_split();
    size_t synth_ci = 0;
    if (!ci && groups_of_alive().size() > 1 && split_by_synthesis(synth_ci)) ci = synth_ci;
    if (ci) {
      if (run_case(*ci, StepPurpose::Split, {}) == Ran::NoDevice) break;
      continue;
    }
    if (groups_of_alive().size() > 1) {
      finish_undecided();
      break;
    }
    if (o_.confirm && bracket()) continue;
    confirm(stop);
  }
  for (size_t i : alive_) {
    res_.survivors.push_back(hs_[i].name);
    res_.consistent.push_back(hs_[i]);
  }
  for (const auto& [r, m] : groups_of_alive()) {
    std::vector<std::string> names;
    for (size_t i : m) names.push_back(hs_[i].name);
    res_.equivalence.push_back(std::move(names));
  }
  for (size_t f = 0; f < fields_.size() && !alive_.empty(); ++f) {
    MechanismStatus m;
    m.mechanism = fields_[f];
    auto left = values_left(f, false);
    m.values.assign(left.begin(), left.end());
    m.state = values_left(f).size() == 1 ? Settledness::Settled : Settledness::Open;
    m.settled_by = m.state == Settledness::Settled ? settled_by_[f] : "";
    // A threshold of the confirmed survivor: the interval, settled once it is one step of the granularity.
    const auto& opts = model::threshold_options();
    for (size_t x = 0; x < res_.intervals.size() && x < opts.size(); ++x)
      if (opts[x].key == m.mechanism) {
        m.values = {res_.intervals[x].range_text()};
        m.state = res_.intervals[x].cuts() == 1 ? Settledness::Settled : Settledness::Open;
        m.settled_by = m.state == Settledness::Settled && x < bracket_case_.size() && !bracket_case_[x].empty()
                           ? bracket_case_[x]
                           : m.settled_by;
      }
    res_.mechanisms.push_back(std::move(m));
  }
  return std::move(res_);
}

}  // namespace

std::string_view to_string(AnswerGrade g) {
  switch (g) {
    case AnswerGrade::Named: return "named";
    case AnswerGrade::NoneFits: return "none-fits";
    case AnswerGrade::Wrong: return "WRONG";
    case AnswerGrade::Open: return "open";
  }
  return "?";
}

AnswerGrade grade_answer(const LearnResult& r, const model::Hypothesis& truth) {
  if (r.outcome == LearnOutcome::NoneSurvives) return AnswerGrade::NoneFits;
  if (r.outcome != LearnOutcome::Identified && r.outcome != LearnOutcome::Equivalent) return AnswerGrade::Open;
  // Thresholds are judged as intervals: named when the other options agree and every interval holds the truth's.
  const auto& opts = model::threshold_options();
  auto without_thresholds = [&](model::Hypothesis h) {
    for (const auto& o : opts) model::set_threshold(h, o, std::nullopt);
    return h;
  };
  bool within = true;
  for (const auto& iv : r.intervals) within = within && iv.contains(model::threshold_of(truth, iv.option));
  for (const auto& h : r.consistent)
    if (r.intervals.empty() ? h.same_options(truth)
                            : within && without_thresholds(h).same_options(without_thresholds(truth)))
      return AnswerGrade::Named;
  // The truth as a neighbour proved to make the same decisions on this device is named too.
  if (r.confirmation)
    for (const auto& n : r.confirmation->neighbours)
      if (n.verdict == NeighbourVerdict::Equivalent && n.name == model::composition_name(truth)) return AnswerGrade::Named;
  return AnswerGrade::Wrong;
}

std::string acting_key(const model::Hypothesis& h, const model::Device& d) { return machine_key(h, d); }

LearnResult learn(const std::vector<model::Hypothesis>& candidates, const model::Device& device,
                  const std::vector<model::Case>& corpus, const LearnOptions& o,
                  const std::function<void(const LearnStep&)>& on_step) {
  return Learner(candidates, device, corpus, o, on_step).run();
}

}  // namespace tbcheck::search
