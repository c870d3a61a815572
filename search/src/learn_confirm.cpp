// Learn's confirmation: a survivor is accepted only once it predicted the cases that separate it from its
// neighbours in the composition space, and its thresholds are bracketed by boundary cases (learn_numeric.hpp).
#include <algorithm>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/effective.hpp"
#include "tbcheck/model/options.hpp"
#include "tbcheck/search/check.hpp"
#include "tbcheck/search/learn_rules.hpp"
#include "learn_internal.hpp"
#include "worker_pool.hpp"

namespace tbcheck::search::learn_detail {

Learner::ConfirmStep Learner::confirm() {
  auto groups = space_.groups_of_alive();
  const std::vector<size_t>& group = groups.begin()->second;
  const size_t rep = group.front();
  const model::Hypothesis& h = space_.candidates[rep];
  if (confirmation_.of != rep) {
    confirmation_.of = rep;
    confirmation_.synthesized.clear();
    confirmation_.neighbours.clear();
    confirmation_.checks.clear();
    // With thresholds off the enumerated values, a neighbour is another choice of the other options with the
    // survivor's thresholds (its own values are the intervals' business), and it is separated only when no
    // threshold values make it fit what was seen.
    confirmation_.refit_neighbours = thresholds_off_space(h);
    std::vector<model::Hypothesis> candidates_near;
    if (confirmation_.refit_neighbours) {
      // The space's neighbours are its compositions near h's other options (h itself is off the space's values).
      model::Hypothesis base = h;
      for (const auto& opt : model::threshold_options()) model::set_threshold(base, opt, std::nullopt);
      candidates_near = model::neighbours(base, o_.neighbour_distance);
      candidates_near.push_back(base);  // changes only thresholds: dropped below
    } else {
      candidates_near = model::neighbours(h, o_.neighbour_distance);
    }
    if (confirmation_.refit_neighbours) {
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
    if (o_.rule_neighbour_keys > 0)
      for (auto& n : rule_neighbours(h, device_, o_.rule_neighbour_keys)) candidates_near.push_back(std::move(n));
    for (auto& n : candidates_near) {
      if (not_applicable(n)) continue;  // cannot describe this device (as candidates are set aside)
      NeighbourCheck c;
      c.name = n.name;
      c.differences = option_differences(h, n);
      // A neighbour that is itself a consistent candidate is in the group (one group is left).
      for (size_t i : group)
        if (space_.candidates[i].same_options(n) && i != rep) {
          c.verdict = NeighbourVerdict::Equivalent;
          c.detail = space_.proof.count(i) ? space_.proof[i] : "in the consistent set's equivalence group";
        }
      if (c.verdict != NeighbourVerdict::Equivalent && machine_key(n, device_) == machine_key(h, device_)) {
        c.verdict = NeighbourVerdict::Equivalent;
        c.detail = why_one_machine(h, n, device_);
      }
      confirmation_.neighbours.push_back(std::move(n));
      confirmation_.checks.push_back(std::move(c));
    }
  }
  // What the observations so far say about each neighbour still open.
  for (size_t k = 0; k < confirmation_.neighbours.size(); ++k) {
    if (confirmation_.checks[k].verdict != NeighbourVerdict::NotSeparated) continue;
    if (confirmation_.refit_neighbours) {
      if (auto fit = fit_thresholds(confirmation_.neighbours[k], device_, pool_.seen())) {
        confirmation_.neighbours[k] = std::move(fit->fitted);  // the confirming cases are chosen against thresholds that fit
        continue;
      }
      confirmation_.checks[k].verdict = NeighbourVerdict::Separated;
      confirmation_.checks[k].case_id = "every threshold value (the observed cases together)";
    }
    for (const auto& ob : pool_.history) {
      const CaseEntry& c = pool_.cases[ob.case_index];
      const std::optional<model::Schedule> s = model::try_simulate(c.scenario, confirmation_.neighbours[k]);
      // No schedule: it predicts the observed case cannot run.
      if (!s || model::compare_recording(ob.obs, c.scenario, *s, model::Level::Exact).verdict != model::Verdict::Pass) {
        confirmation_.checks[k].verdict = NeighbourVerdict::Separated;
        confirmation_.checks[k].case_id = c.id;
        break;
      }
    }
  }
  auto finish = [&] {
    Confirmation cf;
    cf.survivor = h.name;
    cf.cases_agreed = static_cast<int>(pool_.history.size());
    cf.neighbours = confirmation_.checks;
    // A threshold's neighbouring values are neighbours too: one not separated leaves the answer unconfirmed.
    std::vector<std::string> numeric_open;
    if (auto fit = fit_thresholds(h, device_, pool_.seen())) {
      res_.intervals = fit->intervals;
      for (size_t x = 0; x < res_.intervals.size(); ++x)
        if (res_.intervals[x].cuts() > 1)
          numeric_open.push_back(fmt::format("{} ({})", res_.intervals[x].text(),
                                             bracket_.notes.size() > x && !bracket_.notes[x].empty()
                                                 ? bracket_.notes[x]
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
    return ConfirmStep::Finished;
  };
  if (!o_.confirm) return finish();
  std::vector<size_t> open;
  for (size_t k = 0; k < confirmation_.neighbours.size(); ++k)
    if (confirmation_.checks[k].verdict == NeighbourVerdict::NotSeparated) open.push_back(k);
  if (open.empty()) return finish();

  // The unused corpus case that separates the survivor from the most open neighbours per unit of the device
  // time it costs (its makespan: greedy weighted set cover), then from the most: a case covering every
  // neighbour at a hundred times the makespan of one covering half of them is not worth the device time.
  std::optional<size_t> best;
  std::vector<size_t> best_cover;
  int64_t best_cost = 0;
  for (size_t ci = 0; ci < pool_.cases.size(); ++ci) {
    CaseEntry& c = pool_.cases[ci];
    if (c.used) continue;
    const int mine = c.classify(space_.candidates, rep, sharing());
    if (mine < 0) continue;
    const model::Schedule& ms = c.schedule[static_cast<size_t>(mine)];
    std::vector<size_t> cover;
    for (size_t k : open) {
      const std::optional<model::Schedule> s = model::try_simulate(c.scenario, confirmation_.neighbours[k]);
      if (!s || !same_placements(*s, ms)) cover.push_back(k);  // no schedule: predicts it cannot run
    }
    if (cover.empty()) continue;
    const int64_t cost = std::max<int64_t>(1, ms.makespan());
    const int64_t mine_per_cost = static_cast<int64_t>(cover.size()) * best_cost;  // cover / cost, cross-multiplied
    const int64_t best_per_cost = static_cast<int64_t>(best_cover.size()) * cost;
    if (!best || mine_per_cost > best_per_cost || (mine_per_cost == best_per_cost && cover.size() > best_cover.size())) {
      best = ci;
      best_cover = std::move(cover);
      best_cost = cost;
    }
  }
  if (!best && o_.synthesize) {
    // No corpus case: a synthesized witness against one open neighbour at a time, within the budget.
    for (size_t k : open) {
      if (confirmation_.synthesis_used >= o_.confirm_synthesis_pairs || synthesis_left() <= 0) break;
      if (confirmation_.synthesized.count(k)) continue;
      confirmation_.synthesized.insert(k);
      ++confirmation_.synthesis_used;
      // A rule neighbour needs a separating case, not the smallest one: simulation beyond the bounds first.
      PairResult pr = synthesize(h, confirmation_.neighbours[k], confirmation_.neighbours[k].selection == model::Selection::Rule);
      if (pr.outcome == PairOutcome::Inseparable) {
        confirmation_.checks[k].verdict = NeighbourVerdict::Equivalent;
        confirmation_.checks[k].detail = "Z3: inseparable (" + pr.reason + ")";
        continue;
      }
      if (pr.outcome != PairOutcome::Separated || !pr.witness) {
        confirmation_.checks[k].detail = fmt::format("Z3: {}{}", to_string(pr.outcome), pr.reason.empty() ? "" : " (" + pr.reason + ")");
        continue;
      }
      best = pool_.add(*pr.witness, fmt::format("synthesized ({} vs {}; {})", h.name, confirmation_.neighbours[k].name, pr.route));
      best_cover = {k};
      break;
    }
  }
  if (!best) {
    for (size_t k : open)
      if (confirmation_.checks[k].detail.empty())
        confirmation_.checks[k].detail = o_.synthesize ? "no corpus case separates them; synthesis budget spent"
                                           : "no corpus case separates them (synthesis off)";
    return finish();
  }
  std::vector<std::string> names;
  for (size_t k : best_cover) names.push_back(confirmation_.neighbours[k].name);
  const Ran ran = run_case(*best, StepPurpose::Confirm, names);
  if (ran == Ran::NoDevice || space_.alive.empty()) return ConfirmStep::Finished;
  if (ran == Ran::NoObservation || ran == Ran::Skipped)
    for (size_t k : best_cover)
      confirmation_.checks[k].detail = "the confirming case " + pool_.cases[*best].id +
                           (ran == Ran::Skipped ? " cannot run on the oracle" : " gave no observation");
  return ConfirmStep::Stepped;
}

Learner::Refit Learner::refit(size_t i) {
  auto fit = fit_thresholds(space_.candidates[i], device_, pool_.seen());
  if (!fit) return Refit::NoneFits;
  if (!fit->fitted.same_options(space_.candidates[i])) {
    space_.candidates[i] = std::move(fit->fitted);
    space_.candidates[i].name = model::composition_name(space_.candidates[i]);
    // Its machine changes; without machines, its class on every case is simulated again.
    space_.machines.of[i] = space_.machines.add(model::effective_options(space_.candidates[i], device_));
    if (!sharing())
      for (auto& c : pool_.cases)
        if (!c.cls.empty()) c.cls.set(i, kNotSimulated);
    space_.set_values(i);
  }
  return Refit::Fitted;
}

Learner::BracketStep Learner::bracket() {
  auto groups = space_.groups_of_alive();
  if (groups.size() != 1) return BracketStep::Settled;
  const std::vector<size_t>& group = groups.begin()->second;
  const size_t rep = group.front();
  for (size_t i : group) refit_.refittable[i] = 1;
  if (bracket_.done == rep) return BracketStep::Settled;
  const auto& opts = model::threshold_options();
  if (bracket_.of != rep) {
    bracket_.of = rep;
    bracket_.own_cut.assign(opts.size(), -1);
    bracket_.notes.assign(opts.size(), "");
    bracket_.last_case.assign(opts.size(), "");
    bracket_.blind = 0;
  }
  auto fit = fit_thresholds(space_.candidates[rep], device_, pool_.seen());
  if (!fit || bracket_.blind >= kBracketBlind || step_ >= o_.max_steps) {
    if (fit && bracket_.blind >= kBracketBlind)
      for (size_t x = 0; x < opts.size(); ++x)
        if (fit->intervals[x].cuts() > 1) bracket_.notes[x] = "the boundary cases gave no observation";
    bracket_.done = rep;
    return BracketStep::Settled;
  }
  // An option with no boundary case now may get one once another is narrower (a case must be read the same
  // whatever the other thresholds are), so an option is given up only when no option has a case.
  std::vector<size_t> stuck;
  for (size_t x = 0; x < opts.size(); ++x) {
    const auto& iv = fit->intervals[x];
    if (iv.cuts() <= 1 || !bracket_.notes[x].empty()) continue;
    // The values next to the survivor's own threshold first (a threshold the space named is then confirmed in
    // a step or two), then halving what is left.
    if (bracket_.own_cut[x] < 0) bracket_.own_cut[x] = model::cut_of(opts[x], model::threshold_of(space_.candidates[rep], opts[x]), iv.values);
    const int own = bracket_.own_cut[x];
    std::vector<int> cuts;
    if (own >= iv.lo_cut && own <= iv.hi_cut) {
      if (own < iv.hi_cut) cuts.push_back(own + 1);
      if (own > iv.lo_cut) cuts.push_back(own);
    }
    cuts.push_back((iv.lo_cut + iv.hi_cut + 1) / 2);
    // Both questions next to the survivor's own threshold in one case when the family has one (learn_numeric.hpp).
    if (own > iv.lo_cut && own < iv.hi_cut)
      if (auto bc = boundary_pair_case(space_.candidates[rep], device_, fit->intervals, x, own, own + 1)) {
        const int v1 = iv.values[static_cast<size_t>(own) - 1], v2 = iv.values[static_cast<size_t>(own)];
        model::Case c;
        c.id = fmt::format("boundary-{}-{}-{}", opts[x].key, v1, v2);
        c.scenario = std::move(bc->scenario);
        const size_t ci = pool_.add(c, fmt::format("boundary case: does {} ignore {} {}, and {}? (now {}; {} shapes tried)",
                                                   opts[x].key, v1, model::unit_of(opts[x].quantity), v2,
                                                   iv.range_text(), bc->tries));
        bracket_.last_case[x] = c.id;
        const Ran ran = run_case(ci, StepPurpose::Bracket, {});
        bracket_.blind = ran == Ran::NoObservation ? bracket_.blind + 1 : 0;
        return ran == Ran::NoDevice ? BracketStep::Settled : BracketStep::Asked;
      }
    for (int m : cuts) {
      auto bc = boundary_case(space_.candidates[rep], device_, fit->intervals, x, m);
      if (!bc) continue;
      const int value = iv.values[static_cast<size_t>(m) - 1];
      model::Case c;
      c.id = fmt::format("boundary-{}-{}", opts[x].key, value);
      c.scenario = std::move(bc->scenario);
      const size_t ci = pool_.add(c, fmt::format("boundary case: does {} ignore {} {}? (now {}; {} shapes tried)",
                                                 opts[x].key, value, model::unit_of(opts[x].quantity),
                                                 iv.range_text(), bc->tries));
      bracket_.last_case[x] = c.id;
      const Ran ran = run_case(ci, StepPurpose::Bracket, {});
      bracket_.blind = ran == Ran::NoObservation || ran == Ran::Skipped ? bracket_.blind + 1 : 0;
      return ran == Ran::NoDevice ? BracketStep::Settled : BracketStep::Asked;
    }
    stuck.push_back(x);
  }
  for (size_t x : stuck)
    bracket_.notes[x] = fmt::format("no boundary case in learn's family separates the values of {} on {} under {}",
                                    fit->intervals[x].range_text(), device_.name, space_.candidates[rep].name);
  bracket_.done = rep;
  return BracketStep::Settled;
}

bool same_prefix_placements(const model::Schedule& a, const model::Schedule& b, size_t kernels) {
  if (a.kernels.size() < kernels || b.kernels.size() < kernels) return false;
  for (size_t k = 0; k < kernels; ++k) {
    const auto &x = a.kernels[k].blocks, &y = b.kernels[k].blocks;
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i].sm != y[i].sm || x[i].start != y[i].start) return false;
  }
  return true;
}

std::optional<ThresholdFit> Learner::fit_after(const model::Scenario& s, size_t r, const std::vector<SeenCase>& before,
                                               int64_t* makespan, const std::vector<FitTable>* known) const {
  const auto sch = model::try_simulate(s, space_.candidates[r]);
  if (!sch) return std::nullopt;
  if (makespan) *makespan = std::max(*makespan, sch->makespan());
  const model::Observation obs = oracle::observation_of(*sch, model::ObservationKind::Synthetic);
  std::vector<SeenCase> with = before;
  with.push_back({&s, &obs});
  return known ? fit_thresholds(space_.candidates[r], device_, with, *known) : fit_thresholds(space_.candidates[r], device_, with);
}

std::optional<std::map<int, std::vector<size_t>>> Learner::split_classes(size_t ci) {
  std::map<int, std::vector<size_t>> by_class;
  for (size_t i : space_.alive) {
    const int k = pool_.cases[ci].classify(space_.candidates, i, sharing());
    if (k < 0) return std::nullopt;
    by_class[k].push_back(i);
  }
  if (by_class.size() < 2) return std::nullopt;
  return by_class;
}

std::vector<const std::vector<size_t>*> largest_first(const std::map<int, std::vector<size_t>>& by_class) {
  std::vector<const std::vector<size_t>*> classes;
  for (const auto& [k, members] : by_class) classes.push_back(&members);
  std::stable_sort(classes.begin(), classes.end(), [](const auto* a, const auto* b) { return a->size() > b->size(); });
  return classes;
}

std::optional<size_t> Learner::fold_bracket(size_t ci) {
  // Only the split after which one group is left whatever the device does: then the survivor is one of its
  // classes, and the boundary questions bracketing would ask next for each class's representative (largest class
  // first) ride on it. A question folded in for a candidate that does not survive costs device time, no claim:
  // every interval is the fit of whole observed cases.
  const std::optional<std::map<int, std::vector<size_t>>> by_class = split_classes(ci);
  if (!by_class) return std::nullopt;
  for (const auto& [k, members] : *by_class)
    for (size_t i : members)
      if (space_.groups.find(i) != space_.groups.find(members.front())) return std::nullopt;
  const std::vector<const std::vector<size_t>*> classes = largest_first(*by_class);
  const std::vector<SeenCase> before = pool_.seen();
  std::map<size_t, std::vector<FitTable>> known;  // per representative: its tables over `before`, made once
  auto known_of = [&](size_t rep) -> const std::vector<FitTable>* {
    auto it = known.find(rep);
    if (it == known.end()) it = known.emplace(rep, fit_tables(space_.candidates[rep], before)).first;
    return &it->second;
  };
  const auto& opts = model::threshold_options();
  const model::Scenario& split = pool_.cases[ci].scenario;
  const size_t split_kernels = split.kernels.size();
  // Every candidate's placements of the split's own kernels must stay as they are alone, so the combined case
  // splits the consistent set at least as finely as the split.
  std::vector<model::Schedule> alone;
  for (size_t i : space_.alive) alone.push_back(pool_.cases[ci].schedule[static_cast<size_t>(pool_.cases[ci].classify(space_.candidates, i, sharing()))]);
  auto keeps_split = [&](const model::Scenario& c, int64_t& makespan) {
    makespan = 0;
    for (size_t a = 0; a < space_.alive.size(); ++a) {
      const auto sch = model::try_simulate(c, space_.candidates[space_.alive[a]]);
      if (!sch || !same_prefix_placements(*sch, alone[a], split_kernels)) return false;
      makespan = std::max(makespan, sch->makespan());
    }
    return true;
  };
  std::optional<model::Scenario> combined;
  int64_t combined_makespan = 0;
  for (const auto& a : alone) combined_makespan = std::max(combined_makespan, a.makespan());
  std::vector<std::string> asked;
  std::vector<size_t> asked_options;
  for (const auto* members : classes) {
    const size_t rep = members->front();
    // What this representative would still have open once the device answered the case so far as it predicts.
    const std::vector<FitTable>* rep_known = known_of(rep);
    const auto fit = fit_after(combined ? *combined : split, rep, before, nullptr, rep_known);
    if (!fit) continue;
    for (size_t x = 0; x < opts.size(); ++x) {
      const auto& iv = fit->intervals[x];
      if (iv.cuts() <= 1) continue;
      const model::Scenario& prior = combined ? *combined : split;
      int64_t last_release = 0;
      for (const auto& k : prior.kernels) last_release = std::max(last_release, k.release);
      const int own = model::cut_of(opts[x], model::threshold_of(space_.candidates[rep], opts[x]), iv.values);
      // Beside the split's tail (no device time of its own when it fits in) or after it; a shape each of whose
      // sides predicts one schedule, or one whose observation narrows the fit as this representative predicts it
      // (the split's kernels ahead of it may be read differently across the intervals). The shortest is kept.
      const int64_t after_split = std::max(last_release, combined_makespan);
      std::optional<model::Scenario> shortest;
      int64_t shortest_makespan = 0;
      std::string shortest_question;
      for (const auto& [release, judged] : {std::pair{last_release, false}, std::pair{after_split, false},
                                            std::pair{last_release, true}, std::pair{after_split, true}}) {
        BoundaryPrefix prefix{&prior, release, {}};
        if (judged)
          prefix.accept = [&, x = x, rep = rep, open = iv.cuts()](const model::Scenario& c) {
            int64_t m = 0;
            if (!keeps_split(c, m)) return false;
            const auto f = fit_after(c, rep, before, nullptr, rep_known);
            return f && f->intervals[x].cuts() < open;
          };
        std::optional<BoundaryCase> bc;
        std::string question;
        if (own > iv.lo_cut && own < iv.hi_cut) {
          bc = boundary_pair_case(space_.candidates[rep], device_, fit->intervals, x, own, own + 1, prefix);
          if (bc)
            question = fmt::format("{} {} and {} {}", opts[x].key, iv.values[static_cast<size_t>(own) - 1],
                                   iv.values[static_cast<size_t>(own)], model::unit_of(opts[x].quantity));
        }
        if (!bc) {
          std::vector<int> cuts;
          if (own >= iv.lo_cut && own <= iv.hi_cut) {
            if (own < iv.hi_cut) cuts.push_back(own + 1);
            if (own > iv.lo_cut) cuts.push_back(own);
          }
          cuts.push_back((iv.lo_cut + iv.hi_cut + 1) / 2);
          for (int m : cuts)
            if ((bc = boundary_case(space_.candidates[rep], device_, fit->intervals, x, m, prefix))) {
              question = fmt::format("{} {} {}", opts[x].key, iv.values[static_cast<size_t>(m) - 1],
                                     model::unit_of(opts[x].quantity));
              break;
            }
        }
        int64_t makespan = 0;
        if (bc && keeps_split(bc->scenario, makespan) && (!shortest || makespan < shortest_makespan)) {
          shortest = std::move(bc->scenario);
          shortest_makespan = makespan;
          shortest_question = std::move(question);
          if (makespan <= combined_makespan) break;  // takes no device time of its own
        }
      }
      if (shortest) {
        combined = std::move(shortest);
        combined_makespan = shortest_makespan;
        if (std::find(asked.begin(), asked.end(), shortest_question) == asked.end()) asked.push_back(shortest_question);
        asked_options.push_back(x);
      }
    }
  }
  if (!combined) return std::nullopt;
  model::Case c;
  c.id = fmt::format("{}+boundary", pool_.cases[ci].id);
  c.scenario = std::move(*combined);
  pool_.cases[ci].used = true;
  const size_t folded = pool_.add(c, fmt::format("{} ({}), followed by boundary kernels asking whether the device "
                                                 "ignores {}",
                                                 pool_.cases[ci].id, pool_.cases[ci].origin, fmt::join(asked, ", and ")));
  bracket_.folded_split_kernels[folded] = split_kernels;
  bracket_.folded_case.resize(opts.size());
  for (size_t x : asked_options) bracket_.folded_case[x] = c.id;
  return folded;
}

std::optional<size_t> Learner::sharpen_split(size_t ci) {
  // The split runs anyway; moving a kernel's quantity to a value bracketing would ask about keeps it the same split
  // when every consistent candidate falls into the same classes, and its observation then narrows the thresholds
  // of whichever candidate survives.
  if (space_.alive.size() > kSharpenAlive) return std::nullopt;
  const std::optional<std::map<int, std::vector<size_t>>> by_class = split_classes(ci);
  if (!by_class) return std::nullopt;
  // Representatives of the largest classes, largest first: a move is scored by the widths their thresholds
  // would have, summed, so a move is taken when it narrows some survivor's thresholds.
  const std::vector<const std::vector<size_t>*> classes = largest_first(*by_class);
  std::vector<size_t> reps;
  for (const auto* members : first_n(classes, kSharpenReps)) reps.push_back(members->front());
  const size_t rep = reps.front();
  const std::vector<SeenCase> before = pool_.seen();
  // Each representative's tables over the cases seen, made once for the many moves below.
  std::vector<std::vector<FitTable>> known(reps.size());
  detail::run_on_workers(reps.size(), o_.jobs, [&](size_t i) { known[i] = fit_tables(space_.candidates[reps[i]], before); });
  // Per consistent candidate, the first one predicting the same placements: one simulation per machine.
  auto partition = [&](const model::Scenario& s) -> std::optional<std::vector<size_t>> {
    std::unordered_map<uint32_t, size_t> first_of_machine;
    std::vector<std::pair<size_t, model::Schedule>> firsts;
    std::vector<size_t> out;
    for (size_t a = 0; a < space_.alive.size(); ++a) {
      const uint32_t m = space_.machines.of[space_.alive[a]];
      auto it = first_of_machine.find(m);
      if (it == first_of_machine.end()) {
        auto sch = model::try_simulate(s, space_.machines.acting[m]);
        if (!sch) return std::nullopt;
        size_t j = 0;
        while (j < firsts.size() && !same_placements(firsts[j].second, *sch)) ++j;
        if (j == firsts.size()) firsts.emplace_back(a, std::move(*sch));
        it = first_of_machine.emplace(m, firsts[j].first).first;
      }
      out.push_back(it->second);
    }
    return out;
  };
  // The representatives' threshold widths summed, each after the device did what it predicts for s; `own`: the
  // first representative's fit (the moves' values come from it).
  auto width_of = [&](const model::Scenario& s, std::optional<ThresholdFit>& own, int64_t& cost) -> std::optional<int> {
    int w = 0;
    cost = 0;
    for (size_t i = 0; i < reps.size(); ++i) {
      const size_t r = reps[i];
      auto f = fit_after(s, r, before, &cost, &known[i]);
      if (!f) return std::nullopt;
      for (const auto& iv : f->intervals) w += iv.cuts();
      if (r == rep) own = std::move(f);
    }
    return w;
  };
  const std::optional<std::vector<size_t>> same_as = partition(pool_.cases[ci].scenario);
  if (!same_as) return std::nullopt;
  model::Scenario best = pool_.cases[ci].scenario;
  std::optional<ThresholdFit> best_fit;
  int64_t best_cost = 0;
  std::optional<int> best_width = width_of(best, best_fit, best_cost);
  if (!best_width) return std::nullopt;
  const int64_t split_cost = best_cost;
  const auto& opts = model::threshold_options();
  std::map<std::pair<size_t, size_t>, std::string> moves;  // (kernel, option): the value it was moved to
  for (size_t round = 0; round < best.kernels.size() * opts.size(); ++round) {
    // The moves of this round, each judged on its own (jobs at once), then taken in order as one thread would.
    struct Move {
      size_t k, x;
      int v;
      model::Scenario s;
      std::optional<int> width;
      std::optional<ThresholdFit> fit;
      int64_t cost = 0;
    };
    std::vector<Move> round_moves;
    for (size_t x = 0; x < opts.size(); ++x) {
      const auto& iv = best_fit->intervals[x];
      if (iv.cuts() <= 1) continue;
      const int own = model::cut_of(opts[x], model::threshold_of(space_.candidates[rep], opts[x]), iv.values);
      std::set<int> asked;
      for (int m : {own, own + 1, iv.lo_cut + 1, iv.hi_cut, (iv.lo_cut + iv.hi_cut + 1) / 2})
        if (m > iv.lo_cut && m <= iv.hi_cut) asked.insert(m);
      for (int m : asked) {
        const int v = iv.values[static_cast<size_t>(m) - 1];
        for (size_t k = 0; k < best.kernels.size(); ++k) {
          if (model::quantity_of(opts[x].quantity, best.kernels[k], best.device) == v) continue;
          model::Kernel kernel = best.kernels[k];
          model::set_quantity(opts[x].quantity, kernel, v, best.device);
          model::json j = best.to_json();
          j["kernels"][k]["regs"] = kernel.regs;
          j["kernels"][k]["smem"] = kernel.smem;
          auto s = model::try_scenario_from_json(j, best.device, best.device_builtin, "sharpened split");
          if (!s) continue;
          round_moves.push_back({k, x, v, std::move(*s), std::nullopt, std::nullopt, 0});
        }
      }
    }
    detail::run_on_workers(round_moves.size(), o_.jobs, [&](size_t i) {
      Move& mv = round_moves[i];
      const auto p = partition(mv.s);
      if (!p || *p != *same_as) return;
      mv.width = width_of(mv.s, mv.fit, mv.cost);
    });
    std::optional<model::Scenario> pick;
    std::optional<ThresholdFit> pick_fit;
    int pick_width = *best_width;
    int64_t pick_cost = 0;
    std::pair<size_t, size_t> pick_at;
    std::string pick_move;
    for (auto& mv : round_moves) {
      // Narrower, at no more device time than the split as it was (a question carried at a cost may cost
      // more than the boundary case it spares); the cheapest of equal width.
      const auto& w = mv.width;
      if (!w || *w >= *best_width || mv.cost > split_cost) continue;
      if (pick && (*w > pick_width || (*w == pick_width && mv.cost >= pick_cost))) continue;
      pick_width = *w;
      pick_cost = mv.cost;
      pick_at = {mv.k, mv.x};
      pick_move = fmt::format("{} {} {}", best.kernels[mv.k].name, mv.v, model::unit_of(opts[mv.x].quantity));
      pick = std::move(mv.s);
      pick_fit = std::move(mv.fit);
    }
    if (!pick) break;
    best = std::move(*pick);
    best_fit = std::move(pick_fit);
    best_width = pick_width;
    best_cost = pick_cost;
    moves[pick_at] = std::move(pick_move);
  }
  if (moves.empty()) return std::nullopt;
  std::vector<std::string> moved;
  for (auto& [at, text] : moves) moved.push_back(std::move(text));
  model::Case c;
  c.id = fmt::format("{}-sharpened", pool_.cases[ci].id);
  c.scenario = std::move(best);
  pool_.cases[ci].used = true;
  return pool_.add(c, fmt::format("{} ({}), with {} (the same split; the observation also brackets the thresholds)",
                                  pool_.cases[ci].id, pool_.cases[ci].origin, fmt::join(moved, ", ")));
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
                     "or two option changes{}){}",
                     res_.candidates, res_.space == LearnSpace::Compositions
                         ? "every valid composition that runs on the device, priority options it cannot exercise folded "
                           "into the default"
                         : "the given list",
                     fmt::join(iv, ", "), res_.confirmation ? res_.confirmation->neighbours.size() : 0,
                     o_.rule_neighbour_keys > 0
                         ? fmt::format(", or the selection as another rule of up to {} key(s)", o_.rule_neighbour_keys)
                         : std::string(),
                     all_one ? " and each threshold's neighbouring values" : ", not the values inside a wider interval");
}

}  // namespace tbcheck::search::learn_detail
