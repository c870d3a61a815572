// One learn step: a case run on the oracle, a majority taken over noisy repetitions, and the candidates its
// observation refutes dropped (or refitted: a threshold is an interval), ending the run when none fits.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/stop.hpp"
#include "tbcheck/search/learn_nearest.hpp"
#include "learn_internal.hpp"

namespace tbcheck::search::learn_detail {

namespace {

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

}  // namespace

Learner::Ran Learner::run_case(size_t ci, StepPurpose purpose, const std::vector<std::string>& confirms) {
  CaseEntry& cand = pool_.cases[ci];
  cand.used = true;
  LearnStep st;
  st.index = ++step_;
  st.purpose = purpose;
  st.case_id = cand.id;
  st.origin = cand.origin;
  st.kernels = static_cast<int>(cand.scenario.kernels.size());
  st.blocks = cand.scenario.total_blocks();
  st.confirms = confirms;
  // Keyed by the class's number in the order an uncut classing finds them (CaseEntry::class_order).
  std::map<int, std::vector<size_t>> by_class;
  for (size_t i : space_.alive) {
    if (i % 1024 == 0) model::throw_if_stopped();
    cand.classify(space_.candidates, i, sharing());
  }
  const std::vector<int> rank_of = cand.class_order(space_.candidates, sharing());
  std::vector<int> class_at(rank_of.size());
  for (size_t c = 0; c < rank_of.size(); ++c) class_at[static_cast<size_t>(rank_of[c])] = static_cast<int>(c);
  for (size_t i : space_.alive) {
    const int c = cand.classify(space_.candidates, i, sharing());
    by_class[c < 0 ? c : rank_of[static_cast<size_t>(c)]].push_back(i);
  }
  for (const auto& [k, members] : by_class) {
    st.group_sizes.push_back(members.size());
    std::vector<std::string> names;
    for (size_t i : first_n(members, 8)) names.push_back(space_.candidates[i].name);
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
    for (size_t i : first_n(space_.alive, 20)) names.push_back(space_.candidates[i].name);
    st.survivors = std::move(names);
    st.survivor_count = space_.alive.size();
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
  if (r.status == oracle::RunStatus::Unsupported) {
    // A case the oracle cannot run (a TPC mask under sim:fermi) tells nothing about the device: set aside and
    // counted, not a step, so the run goes on with the other cases.
    --step_;
    if (res_.skipped.size() < kListedSkipped) res_.skipped.push_back({cand.id, r.reason});
    ++res_.skipped_count;
    return Ran::Skipped;
  }
  std::optional<model::Schedule> observed;
  if (r.status == oracle::RunStatus::Timeout || r.status == oracle::RunStatus::OrderUnconfirmed ||
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
  pool_.history.push_back({ci, obs});

  std::vector<size_t> keep, refitted;
  std::vector<std::pair<int, size_t>> refuted_now;  // blocks on the observed SM, candidate
  int closest_match = -1;
  size_t closest = 0;
  for (const auto& [k, members] : by_class) {
    // A class that predicts the kernels cannot run is refuted by any observation of them running.
    const bool pass = k >= 0 && model::compare_recording(obs, cand.scenario, cand.schedule[static_cast<size_t>(class_at[static_cast<size_t>(k)])],
                                                         model::Level::Exact)
                                        .verdict == model::Verdict::Pass;
    if (pass) {
      keep.insert(keep.end(), members.begin(), members.end());
      continue;
    }
    const size_t sched = k >= 0 ? static_cast<size_t>(class_at[static_cast<size_t>(k)]) : 0;
    const int m = k >= 0 ? matching_blocks(cand.schedule[sched], *observed) : 0;
    const auto folded = bracket_.folded_split_kernels.find(ci);
    const bool split_part_agrees = folded != bracket_.folded_split_kernels.end() && k >= 0 &&
                                   same_prefix_placements(cand.schedule[sched], *observed, folded->second);
    for (size_t i : members) {
      // A threshold is an interval: other values of it may still fit everything seen (learn_numeric.hpp).
      if ((refit_.refittable[i] || split_part_agrees) && !refit_.failed[i]) {
        if (refit(i) == Refit::Fitted) {
          keep.push_back(i);
          refitted.push_back(i);
          continue;
        }
        refit_.failed[i] = 1;
      }
      refit_.dropped_at[i] = step_;
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
    for (size_t i = 0; i < space_.candidates.size(); ++i)
      if (refit_.dropped_at[i] > 0 && refit_.dropped_at[i] < step_) earlier.push_back(i);
    std::stable_sort(earlier.begin(), earlier.end(), [&](size_t a, size_t b) { return refit_.dropped_at[a] > refit_.dropped_at[b]; });
    order.insert(order.end(), earlier.begin(), earlier.end());
    int rescued_from = -1;
    for (size_t i : order) {
      if ((!keep.empty() && refit_.dropped_at[i] != rescued_from) || refit_.rescue_fits >= kRescueFits) break;
      if (refit_.failed[i]) continue;
      ++refit_.rescue_fits;
      if (refit(i) == Refit::NoneFits) {
        refit_.failed[i] = 1;
        continue;
      }
      keep.push_back(i);
      refitted.push_back(i);
      refit_.refittable[i] = 1;
      rescued_from = refit_.dropped_at[i];
    }
    if (!keep.empty())
      st.oracle_note += fmt::format("{}every candidate was refuted at its thresholds; {} fit everything seen with "
                                    "other thresholds and are kept",
                                    st.oracle_note.empty() ? "" : "; ", keep.size());
  }
  // Refitted candidates that became the same composition are one.
  for (size_t x = 0; x < refitted.size(); ++x)
    for (size_t y = 0; y < keep.size(); ++y)
      if (keep[y] != refitted[x] && space_.candidates[keep[y]].same_options(space_.candidates[refitted[x]]) &&
          (std::find(refitted.begin(), refitted.end(), keep[y]) == refitted.end() || keep[y] < refitted[x])) {
        keep.erase(std::find(keep.begin(), keep.end(), refitted[x]));
        break;
      }
  std::sort(keep.begin(), keep.end());
  for (size_t i : space_.alive)
    if (!std::binary_search(keep.begin(), keep.end(), i) && st.dropped.size() < 20) st.dropped.push_back(space_.candidates[i].name);
  st.dropped_count = space_.alive.size() - keep.size();
  if (keep.empty()) {
    res_.outcome = LearnOutcome::NoneSurvives;
    res_.closest = space_.candidates[closest].name;
    model::Case q;
    q.id = "open-" + cand.id;
    q.source = "learn: oracle " + oracle->name();
    q.scenario = cand.scenario;
    q.observation = obs;
    q.observation->kind = o_.oracle_spec == "cuda" ? model::ObservationKind::Hardware : model::ObservationKind::Synthetic;
    std::vector<std::string> refuted;
    for (size_t i : first_n(space_.alive, 12)) refuted.push_back(space_.candidates[i].name);
    q.notes = fmt::format("refutes every candidate still consistent ({}{}); closest: {} with {} of {} blocks on the "
                          "observed SM",
                          fmt::join(refuted, ", "), space_.alive.size() > refuted.size() ? ", ..." : "", res_.closest,
                          closest_match, cand.scenario.total_blocks());
    res_.open_question = std::move(q);
    res_.reason = "none fits: " + res_.open_question->notes;
    // The nearest, over every observed case: from those refuted last (they came closest), a bounded pool.
    std::vector<size_t> pool;
    for (size_t i = 0; i < space_.candidates.size(); ++i)
      if (refit_.dropped_at[i] > 0) pool.push_back(i);
    std::stable_sort(pool.begin(), pool.end(), [&](size_t a, size_t b) { return refit_.dropped_at[a] > refit_.dropped_at[b]; });
    std::vector<model::Hypothesis> near;
    for (size_t i : first_n(pool, kNearestPool)) near.push_back(space_.candidates[i]);
    std::vector<std::string> ids;
    for (const auto& ob : pool_.history) ids.push_back(pool_.cases[ob.case_index].id);
    res_.nearest = nearest_misses(near, pool_.seen(), ids, kNearestListed);
  }
  space_.alive = std::move(keep);
  for (size_t f = 0; f < space_.values.fields.size(); ++f) {
    const bool now = space_.values_left(f).size() <= 1;
    if (now && !was_settled_[f]) settled_by_[f] = cand.id;
    was_settled_[f] = now;
  }
  emit();
  return Ran::Observed;
}

}  // namespace tbcheck::search::learn_detail
