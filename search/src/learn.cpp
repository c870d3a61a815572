// `learn`: pick the case whose predictions split the survivors most evenly, run it on the oracle,
// drop the refuted hypotheses; corpus cases first (moved to the device by TPC scaling), Z3 synthesis after.
#include "tbcheck/search/learn.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/simulator.hpp"

namespace tbcheck::search {

std::string_view to_string(LearnOutcome o) {
  switch (o) {
    case LearnOutcome::Identified: return "identified";
    case LearnOutcome::Equivalent: return "equivalent";
    case LearnOutcome::Undecided: return "undecided";
    case LearnOutcome::NoneSurvives: return "none-survives";
    case LearnOutcome::Unstable: return "unstable";
    case LearnOutcome::NoDevice: return "no-device";
    case LearnOutcome::Unsupported: return "unsupported";
  }
  return "?";
}

nlohmann::json LearnResult::to_json() const {
  nlohmann::json steps_j = nlohmann::json::array();
  for (const auto& s : steps)
    steps_j.push_back({{"step", s.index},
                       {"case", s.case_id},
                       {"origin", s.origin},
                       {"kernels", s.kernels},
                       {"blocks", s.blocks},
                       {"groups", s.groups},
                       {"oracle_status", oracle::to_string(s.status)},
                       {"oracle_note", s.oracle_note},
                       {"dropped", s.dropped},
                       {"survivors", s.survivors},
                       {"oracle_seconds", s.oracle_seconds},
                       {"device_seconds", s.device_seconds}});
  nlohmann::json j = {{"outcome", to_string(outcome)},   {"reason", reason},
                      {"survivors", survivors},          {"steps", steps_j},
                      {"oracle_runs", oracle_runs},      {"oracle_seconds", oracle_seconds},
                      {"device_seconds", device_seconds}, {"synthesis_seconds", synthesis_seconds},
                      {"not_applicable", not_applicable}};
  if (open_question) {
    j["open_question"] = open_question->to_json();
    j["closest"] = closest;
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

struct Candidate {
  std::string id, origin;
  model::Scenario scenario;
  bool used = false;
};

struct Split {
  std::vector<model::Schedule> schedules;  // one per group
  std::vector<std::vector<size_t>> groups;  // survivor indices per group
  std::vector<size_t> group_of;             // per survivor
  int64_t cost = 0;                          // the longest predicted makespan
};

bool same_placements(const model::Schedule& a, const model::Schedule& b) {
  if (a.kernels.size() != b.kernels.size()) return false;
  for (size_t k = 0; k < a.kernels.size(); ++k)
    if (a.kernels[k].blocks != b.kernels[k].blocks) return false;
  return true;
}

// Survivors grouped by their predicted schedule; nullopt when some survivor cannot run the scenario.
std::optional<Split> split_of(const model::Scenario& s, const std::vector<model::Hypothesis>& hs) {
  Split sp;
  for (size_t i = 0; i < hs.size(); ++i) {
    model::Schedule sch;
    try {
      sch = model::simulate(s, hs[i]);
    } catch (const model::InputError&) {
      return std::nullopt;
    }
    sp.cost = std::max(sp.cost, sch.makespan());
    size_t g = 0;
    while (g < sp.schedules.size() && !same_placements(sp.schedules[g], sch)) ++g;
    if (g == sp.schedules.size()) {
      sp.schedules.push_back(std::move(sch));
      sp.groups.emplace_back();
    }
    sp.groups[g].push_back(i);
    sp.group_of.push_back(g);
  }
  return sp;
}

size_t largest_group(const Split& s) {
  size_t m = 0;
  for (const auto& g : s.groups) m = std::max(m, g.size());
  return m;
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

std::vector<std::string> names(const std::vector<model::Hypothesis>& hs) {
  std::vector<std::string> v;
  for (const auto& h : hs) v.push_back(h.name);
  return v;
}

std::string file_of(const model::Case& c) { return c.file.empty() ? c.id : c.file; }

}  // namespace

LearnResult learn(const std::vector<model::Hypothesis>& hypotheses, const model::Device& device,
                  const std::vector<model::Case>& corpus, const LearnOptions& o,
                  const std::function<void(const LearnStep&)>& on_step) {
  if (o.oracle_spec.rfind("replay", 0) == 0)
    throw model::InputError("--oracle", "", "learn needs an oracle that runs new scenarios: sim:<hypothesis> or cuda");
  if (hypotheses.empty()) throw model::InputError("--hypotheses", "", "no hypotheses to learn from");
  LearnResult res;
  // A hypothesis that cannot place one small block on this device (e.g. gpc-priority without a GPC map)
  // does not describe it: set aside up front, with the reason, rather than blocking every case.
  std::vector<model::Hypothesis> alive;
  {
    model::json probe = {{"device", device.to_json()},
                         {"kernels", {{{"name", "probe"}, {"blocks", 1}, {"threads", 32}, {"regs", 32}, {"smem", 0},
                                       {"duration", 1}}}}};
    const model::Scenario s = model::scenario_from_json(probe, "learn probe");
    for (const auto& h : hypotheses) {
      try {
        (void)model::simulate(s, h);
        alive.push_back(h);
      } catch (const model::InputError& e) {
        res.not_applicable.push_back(fmt::format("{}: {}", h.name, e.reason()));
      }
    }
  }
  if (alive.empty()) throw model::InputError("--hypotheses", "", "none of the hypotheses applies to " + device.name);

  std::vector<Candidate> cands;
  std::map<std::string, bool> seen;  // scenario JSON -> present (the corpus repeats scenarios)
  for (const auto& c : corpus) {
    auto s = retarget(c.scenario, device);
    if (!s) continue;
    const std::string key = s->to_json().dump();
    if (seen[key]) continue;
    seen[key] = true;
    std::string origin = c.scenario.device.name == device.name
                             ? "corpus " + file_of(c)
                             : fmt::format("corpus {} retargeted from {} (blocks x {}/{})", file_of(c),
                                           c.scenario.device.name, device.tpcs(), c.scenario.device.tpcs());
    cands.push_back({c.id, origin, std::move(*s), false});
  }
  std::map<std::pair<std::string, std::string>, PairResult> tried;  // synthesis results per pair

  int unstable_in_a_row = 0, unsupported_in_a_row = 0;
  for (int step = 1; step <= o.max_steps; ++step) {
    if (alive.size() == 1) break;
    // The unused case whose predictions leave the fewest survivors in the worst case, then the cheapest.
    std::optional<size_t> best;
    Split best_split;
    for (size_t i = 0; i < cands.size(); ++i) {
      if (cands[i].used) continue;
      auto sp = split_of(cands[i].scenario, alive);
      if (!sp || sp->groups.size() < 2) continue;
      if (!best || largest_group(*sp) < largest_group(best_split) ||
          (largest_group(*sp) == largest_group(best_split) &&
           (sp->cost < best_split.cost ||
            (sp->cost == best_split.cost && cands[i].scenario.total_blocks() < cands[*best].scenario.total_blocks())))) {
        best = i;
        best_split = std::move(*sp);
      }
    }
    if (!best && o.synthesize) {
      // No corpus case splits them: ask Z3 for one pair at a time; each separating witness is re-verified.
      for (size_t a = 0; a < alive.size() && !best; ++a)
        for (size_t b = a + 1; b < alive.size() && !best; ++b) {
          auto key = std::make_pair(alive[a].name, alive[b].name);
          if (tried.count(key)) continue;
          PairResult pr;
          try {
            pr = distinguish_pair(alive[a], alive[b], device, o.bounds);
          } catch (const std::exception& e) {
            // A solver failure (e.g. z3::exception under memory or time pressure) leaves this pair
            // undecided; it must not end the whole loop.
            pr.h1 = alive[a].name;
            pr.h2 = alive[b].name;
            pr.outcome = PairOutcome::Unknown;
            pr.reason = std::string("synthesis failed: ") + e.what();
          }
          res.synthesis_seconds += pr.solver_seconds;
          tried[key] = pr;
          if (pr.outcome != PairOutcome::Separated || !pr.witness) continue;
          auto sp = split_of(pr.witness->scenario, alive);
          if (!sp || sp->groups.size() < 2) continue;
          cands.push_back({pr.witness->id, fmt::format("synthesized ({} vs {}; {})", key.first, key.second, pr.route),
                           pr.witness->scenario, false});
          best = cands.size() - 1;
          best_split = std::move(*sp);
        }
    }
    if (!best) {
      bool all_proved = true;
      std::vector<std::string> why;
      for (size_t a = 0; a < alive.size(); ++a)
        for (size_t b = a + 1; b < alive.size(); ++b) {
          auto it = tried.find({alive[a].name, alive[b].name});
          all_proved = all_proved && it != tried.end() && it->second.outcome == PairOutcome::Inseparable;
          if (it == tried.end())
            why.push_back(fmt::format("{} / {}: no unused corpus case splits them{}", alive[a].name, alive[b].name,
                                      o.synthesize ? "" : " (synthesis off)"));
          else
            why.push_back(fmt::format("{} / {}: {}{}", alive[a].name, alive[b].name, to_string(it->second.outcome),
                                      it->second.reason.empty() ? "" : " (" + it->second.reason + ")"));
        }
      res.outcome = unstable_in_a_row > 0       ? LearnOutcome::Unstable
                    : unsupported_in_a_row > 0 ? LearnOutcome::Unsupported
                    : all_proved               ? LearnOutcome::Equivalent
                                               : LearnOutcome::Undecided;
      res.reason = unstable_in_a_row > 0     ? "the oracle gave no majority on the last splitting cases; "
                   : unsupported_in_a_row > 0 ? "the oracle could not run the last splitting cases; "
                                              : "";
      res.reason += fmt::format("{}", fmt::join(why, "; "));
      break;
    }

    Candidate& cand = cands[*best];
    cand.used = true;
    LearnStep st;
    st.index = step;
    st.case_id = cand.id;
    st.origin = cand.origin;
    st.kernels = static_cast<int>(cand.scenario.kernels.size());
    st.blocks = cand.scenario.total_blocks();
    for (const auto& g : best_split.groups) {
      std::vector<std::string> gn;
      for (size_t i : g) gn.push_back(alive[i].name);
      st.groups.push_back(gn);
    }

    auto oracle = oracle::make_oracle(o.oracle_spec, o.noise, o.seed + static_cast<unsigned>(step), nullptr);
    const auto t0 = std::chrono::steady_clock::now();
    oracle::RunResult r = oracle->run(cand.scenario, o.repetitions);
    st.oracle_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    st.status = r.status;
    res.oracle_runs += static_cast<int>(r.repetitions.size());
    res.oracle_seconds += st.oracle_seconds;

    if (r.status == oracle::RunStatus::NoDevice) {
      res.outcome = LearnOutcome::NoDevice;
      res.reason = r.reason;
      st.oracle_note = r.reason;
      st.survivors = names(alive);
      res.steps.push_back(st);
      if (on_step) on_step(st);
      break;
    }
    std::optional<model::Schedule> observed;
    if (r.status == oracle::RunStatus::Unsupported) {
      st.oracle_note = "the oracle cannot run this case: " + r.reason;
      ++unsupported_in_a_row;
    } else if (r.status == oracle::RunStatus::Timeout || r.status == oracle::RunStatus::OrderUnconfirmed ||
               r.status == oracle::RunStatus::DeviceError) {
      // No trustworthy observation of this case: nobody is dropped; another splitting case is tried.
      st.oracle_note = fmt::format("{}: {}; nobody dropped", oracle::to_string(r.status), r.reason);
      ++unsupported_in_a_row;
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
    }
    if (observed) {
      st.device_seconds = static_cast<double>(observed->makespan()) * o.time_unit_ms / 1000.0 *
                          static_cast<double>(r.repetitions.size());
      res.device_seconds += st.device_seconds;
      const model::Observation obs = oracle::observation_of(*observed, model::ObservationKind::Synthetic);
      std::vector<model::Hypothesis> keep;
      const model::Hypothesis* closest = nullptr;
      int closest_match = -1;
      for (size_t i = 0; i < alive.size(); ++i) {
        const model::Schedule& pred = best_split.schedules[best_split.group_of[i]];
        const model::Check c = model::compare_recording(obs, cand.scenario, pred, model::Level::Exact);
        if (c.verdict == model::Verdict::Pass) {
          keep.push_back(alive[i]);
        } else {
          st.dropped.push_back(alive[i].name);
          const int m = matching_blocks(pred, *observed);
          if (m > closest_match) {
            closest_match = m;
            closest = &alive[i];
          }
        }
      }
      unstable_in_a_row = unsupported_in_a_row = 0;
      if (keep.empty()) {
        res.outcome = LearnOutcome::NoneSurvives;
        res.closest = closest ? closest->name : "";
        model::Case q;
        q.id = "open-" + cand.id;
        q.source = "learn: oracle " + oracle->name();
        q.scenario = cand.scenario;
        q.observation = obs;
        q.observation->kind =
            o.oracle_spec == "cuda" ? model::ObservationKind::Hardware : model::ObservationKind::Synthetic;
        q.notes = fmt::format("refutes every survivor ({}); closest: {} with {} of {} blocks on the observed SM",
                              fmt::join(names(alive), ", "), res.closest, closest_match, cand.scenario.total_blocks());
        res.open_question = std::move(q);
        res.reason = res.open_question->notes;
        alive.clear();
      } else {
        alive = std::move(keep);
      }
    } else if (r.status == oracle::RunStatus::Unstable) {
      ++unstable_in_a_row;
    }
    st.survivors = names(alive);
    res.steps.push_back(st);
    if (on_step) on_step(st);
    if (alive.empty()) break;
  }
  res.survivors = names(alive);
  if (alive.size() == 1 && res.outcome != LearnOutcome::NoDevice) {
    res.outcome = LearnOutcome::Identified;
    res.reason.clear();
  }
  if (alive.size() > 1 && res.reason.empty() && res.outcome == LearnOutcome::Equivalent) {
    res.outcome = LearnOutcome::Undecided;
    res.reason = fmt::format("stopped after {} steps", o.max_steps);
  }
  return res;
}

}  // namespace tbcheck::search
