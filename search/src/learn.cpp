// `learn`'s loop over a version space: split the consistent candidates (learn_split, learn_step) until one
// group is left, then bracket its thresholds and confirm it against its neighbours (learn_confirm).
#include "tbcheck/search/learn.hpp"

#include <algorithm>
#include <future>
#include <iterator>
#include <numeric>

#include <fmt/format.h>

#include "tbcheck/model/effective.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/options.hpp"
#include "tbcheck/model/stop.hpp"
#include "learn_internal.hpp"

namespace tbcheck::search {

namespace learn_detail {

Learner::Learner(std::vector<model::Hypothesis> candidates, const model::Device& device,
                 const std::vector<model::Case>& corpus, const LearnOptions& o,
                 const std::function<void(const LearnStep&)>& on_step)
    : device_(device), o_(o), on_step_(on_step) {
  if (o.oracle_spec.rfind("replay", 0) == 0)
    throw model::InputError("--oracle", "", "learn needs an oracle that runs new scenarios: sim:<hypothesis> or cuda");
  if (candidates.empty()) throw model::InputError("--hypotheses", "", "no hypotheses to learn from");
  res_.space = o.space;
  // A candidate that cannot place one small block on this device (e.g. gpc-priority without a GPC map)
  // does not describe it: set aside up front, with the reason, rather than blocking every case.
  const model::json probe = {{"kernels", {{{"name", "probe"}, {"blocks", 1}, {"threads", 32}, {"regs", 32},
                                           {"smem", 0}, {"duration", 1}}}}};
  probe_ = model::scenario_from_json(probe, device, false, "learn probe");
  // The oracle is checked before the first step: a bad spec at once, and a simulated device that cannot
  // run even the probe on this device (sim:fermi on an Ampere GPU) instead of after a second of steps.
  if (auto oracle = oracle::make_oracle(o.oracle_spec, o.noise, o.seed, nullptr); o.oracle_spec.rfind("sim:", 0) == 0)
    if (const auto r = oracle->run(probe_, 1); r.status == oracle::RunStatus::Unsupported)
      throw model::InputError("--oracle", "", fmt::format("cannot play {}: {}", device.name, r.reason));
  // Candidates the probe cannot tell apart (model::options_on) either all run it or are each asked why not.
  const model::ScenarioReach probe_reach(probe_);
  std::unordered_map<std::string, bool> probe_ran;
  for (auto& h : candidates) {
    // The composition space keeps the priority option at its default on a device without
    // a priority range to exercise it, instead of tripling the candidates for nothing.
    const model::Priority by_default = model::Hypothesis{}.priority;
    if (o.space == LearnSpace::Compositions && h.priority != by_default &&
        model::priority_on(h.priority, device) == model::priority_on(by_default, device))
      continue;
    model::Hypothesis acting = model::effective_options(h, device);
    std::optional<std::string> why;
    if (o.share_simulations) {
      auto [ran, fresh] = probe_ran.emplace(model::option_key(model::options_on(acting, probe_, probe_reach)), false);
      if (fresh || !ran->second) why = not_applicable(h);
      ran->second = !why;
    } else {
      why = not_applicable(h);
    }
    if (why) {
      res_.not_applicable.push_back(fmt::format("{}: {}", h.name, *why));
      continue;
    }
    space_.machines.of.push_back(space_.machines.add(acting));
    space_.candidates.push_back(std::move(h));
  }
  if (space_.candidates.empty()) throw model::InputError("--hypotheses", "", "none of the hypotheses applies to " + device.name);
  res_.candidates = space_.candidates.size();
  space_.alive.resize(space_.candidates.size());
  std::iota(space_.alive.begin(), space_.alive.end(), 0);
  space_.groups = UnionFind(space_.candidates.size());
  // Candidates of one machine are one group from the start: the first of each machine leads it.
  std::vector<size_t> first_of(space_.machines.acting.size(), SIZE_MAX);
  for (size_t i = 0; i < space_.candidates.size(); ++i) {
    size_t& first = first_of[space_.machines.of[i]];
    if (first == SIZE_MAX) {
      first = i;
      continue;
    }
    space_.groups.unite(first, i);
    space_.proof[i] = why_one_machine(space_.candidates[first], space_.candidates[i], device);
  }
  for (auto& c : device_cases(corpus, device)) pool_.cases.emplace_back(c.id, c.origin, std::move(c.scenario));
  space_.values.fields = model::mechanism_fields();
  const size_t fields = space_.values.fields.size();
  space_.values.names.resize(fields);
  space_.values.written.resize(fields * space_.candidates.size());
  for (size_t i = 0; i < space_.candidates.size(); ++i) space_.set_values(i);
  refit_.refittable.assign(space_.candidates.size(), 0);
  refit_.failed.assign(space_.candidates.size(), 0);
  refit_.dropped_at.assign(space_.candidates.size(), 0);
  settled_by_.assign(fields, "");
  was_settled_.assign(fields, false);
  for (size_t f = 0; f < fields; ++f) was_settled_[f] = space_.values_left(f).size() == 1;
}

// Why h cannot place one small block on the device (nullopt: it can).
std::optional<std::string> Learner::not_applicable(const model::Hypothesis& h) const {
  model::FeasibilityCheck why;
  if (model::try_simulate(probe_, h, &why)) return std::nullopt;
  return why.reason;
}

uint16_t FieldValues::id(size_t f, const std::string& v) {
  auto& field = names[f];
  const auto it = std::find(field.begin(), field.end(), v);  // a field has a handful of values
  if (it != field.end()) return static_cast<uint16_t>(it - field.begin());
  field.push_back(v);
  return static_cast<uint16_t>(field.size() - 1);
}

void VersionSpace::set_values(size_t i) {
  const size_t fs = values.fields.size();
  const std::vector<std::string> written = field_values(candidates[i], values.fields);
  for (size_t f = 0; f < fs; ++f) values.written[i * fs + f] = values.id(f, written[f]);
  // Machines are numbered in the order of their first candidates, so machine m's first set_values comes after
  // those of machines below m.
  const size_t m = machines.of[i];
  if (values.acting.size() > m * fs) return;
  const std::vector<std::string> acting = field_values(machines.acting[m], values.fields);
  for (size_t f = 0; f < fs; ++f) values.acting.push_back(values.id(f, acting[f]));
}

std::set<std::string> VersionSpace::values_left(size_t f, bool as_acting) const {
  std::vector<char> seen(values.names[f].size(), 0);
  const size_t fs = values.fields.size();
  for (size_t i : alive) seen[as_acting ? values.acting[machines.of[i] * fs + f] : values.written[i * fs + f]] = 1;
  std::set<std::string> v;
  for (size_t x = 0; x < seen.size(); ++x)
    if (seen[x]) v.insert(values.names[f][x]);
  return v;
}

std::map<size_t, std::vector<size_t>> VersionSpace::groups_of_alive() {
  std::map<size_t, std::vector<size_t>> g;
  for (size_t i : alive) g[groups.find(i)].push_back(i);
  return g;
}

size_t CasePool::add(const model::Case& w, std::string origin) {
  cases.emplace_back(w.id, std::move(origin), w.scenario);
  return cases.size() - 1;
}

std::vector<SeenCase> CasePool::seen() const {
  std::vector<SeenCase> out;
  for (const auto& ob : history) out.push_back({&cases[ob.case_index].scenario, &ob.obs});
  return out;
}

void Learner::finish_undecided() {
  auto groups = space_.groups_of_alive();
  std::vector<std::string> why;
  res_.open_pairs.clear();
  std::vector<size_t> reps;
  for (const auto& [r, m] : groups) reps.push_back(m.front());
  res_.open_pair_count = reps.empty() ? 0 : reps.size() * (reps.size() - 1) / 2;
  // Listed: the pairs Z3 was asked about (their answers say most), then the others, up to the cap.
  std::vector<char> is_rep(space_.candidates.size(), 0);
  for (size_t r : reps) is_rep[r] = 1;
  for (const auto& [ab, answer] : tried_) {
    if (res_.open_pairs.size() >= kListedOpenPairs) break;
    if (!is_rep[ab.first] || !is_rep[ab.second]) continue;
    res_.open_pairs.push_back({space_.candidates[ab.first].name, space_.candidates[ab.second].name,
                               fmt::format("no corpus case splits them; Z3: {}{}", to_string(answer.outcome),
                                           answer.reason.empty() ? "" : " (" + answer.reason + ")")});
  }
  const std::string unasked = !o_.synthesize         ? "no unused corpus case splits them (synthesis off)"
                              : synthesis_left() <= 0 ? "no unused corpus case splits them; synthesis budget spent"
                                                      : "no unused corpus case splits them";
  for (size_t x = 0; x < reps.size() && res_.open_pairs.size() < kListedOpenPairs; ++x)
    for (size_t y = x + 1; y < reps.size() && res_.open_pairs.size() < kListedOpenPairs; ++y)
      if (!tried_.count(std::minmax(reps[x], reps[y])))
        res_.open_pairs.push_back({space_.candidates[reps[x]].name, space_.candidates[reps[y]].name, unasked});
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
  while (!space_.alive.empty()) {
    model::throw_if_stopped();
    if (step_ >= o_.max_steps) {
      res_.outcome = space_.groups_of_alive().size() == 1 ? LearnOutcome::Unconfirmed : LearnOutcome::Undecided;
      res_.reason = fmt::format("stopped after {} steps", o_.max_steps);
      break;
    }
    std::optional<size_t> ci = best_split();
    if (!ci && space_.groups_of_alive().size() > 1) ci = split_by_synthesis();
    if (ci) {
      if (o_.confirm) {
        if (auto sharpened = sharpen_split(*ci)) ci = sharpened;
        if (auto folded = fold_bracket(*ci)) ci = folded;
      }
      if (run_case(*ci, StepPurpose::Split, {}) == Ran::NoDevice) break;
      continue;
    }
    if (space_.groups_of_alive().size() > 1) {
      finish_undecided();
      break;
    }
    if (o_.confirm && bracket() == BracketStep::Asked) continue;
    if (confirm() == ConfirmStep::Finished) break;
  }
  for (const auto& ob : pool_.history) {
    model::Case c;
    c.id = pool_.cases[ob.case_index].id;
    c.source = "learn: oracle " + o_.oracle_spec;
    c.scenario = pool_.cases[ob.case_index].scenario;
    c.observation = ob.obs;
    res_.observed.push_back(std::move(c));
  }
  for (size_t i : space_.alive) {
    res_.survivors.push_back(space_.candidates[i].name);
    res_.consistent.push_back(space_.candidates[i]);
  }
  for (const auto& [r, m] : space_.groups_of_alive()) {
    std::vector<std::string> names;
    for (size_t i : m) names.push_back(space_.candidates[i].name);
    res_.equivalence.push_back(std::move(names));
  }
  for (size_t f = 0; f < space_.values.fields.size() && !space_.alive.empty(); ++f) {
    MechanismStatus m;
    m.mechanism = space_.values.fields[f];
    auto left = space_.values_left(f, false);
    m.values.assign(left.begin(), left.end());
    m.state = space_.values_left(f).size() == 1 ? Settledness::Settled : Settledness::Open;
    m.settled_by = m.state == Settledness::Settled ? settled_by_[f] : "";
    // A threshold of the confirmed survivor: the interval, settled once it is one step of the granularity.
    const auto& opts = model::threshold_options();
    for (size_t x = 0; x < res_.intervals.size() && x < opts.size(); ++x)
      if (opts[x].key == m.mechanism) {
        m.values = {res_.intervals[x].range_text()};
        m.state = res_.intervals[x].cuts() == 1 ? Settledness::Settled : Settledness::Open;
        m.settled_by = m.state != Settledness::Settled                               ? m.settled_by
                       : x < bracket_.last_case.size() && !bracket_.last_case[x].empty() ? bracket_.last_case[x]
                       : x < bracket_.folded_case.size() && !bracket_.folded_case[x].empty()   ? bracket_.folded_case[x]
                                                                               : m.settled_by;
      }
    res_.mechanisms.push_back(std::move(m));
  }
  return std::move(res_);
}


}  // namespace learn_detail

SpaceAndCorpus composition_space_and_corpus(const model::Device& d, const std::vector<std::string>& corpus_paths) {
  auto space = std::async(std::launch::async, [&d] {
    std::vector<model::Hypothesis> hs = model::compositions_for(d);
    (void)model::pb_any_as_sm(d);  // memoised: the learner's first effective_options then finds it made
    return hs;
  });
  SpaceAndCorpus out;
  for (const auto& p : corpus_paths) {
    auto cs = model::load_cases(p);
    std::move(cs.begin(), cs.end(), std::back_inserter(out.corpus));
  }
  out.space = space.get();
  return out;
}

std::string acting_key(const model::Hypothesis& h, const model::Device& d) {
  return model::effective_options(h, d).to_json().dump();
}

LearnResult learn(std::vector<model::Hypothesis> candidates, const model::Device& device,
                  const std::vector<model::Case>& corpus, const LearnOptions& o,
                  const std::function<void(const LearnStep&)>& on_step) {
  // Its own statement, so the candidates the learner did not keep are freed before the first step.
  learn_detail::Learner learner(std::move(candidates), device, corpus, o, on_step);
  return learner.run();
}

}  // namespace tbcheck::search
