// Learning from recordings (learn_replay.hpp): every candidate group judged as validate judges it against each
// recording of the device, then the corpus cases that would split what is left, as a campaign for the GPU.
#include "tbcheck/search/learn_replay.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/learn_numeric.hpp"
#include "control_variants.hpp"
#include "worker_pool.hpp"

namespace tbcheck::search {

std::string_view to_string(ReplaySkip s) {
  switch (s) {
    case ReplaySkip::OtherDevice: return "other-device";
    case ReplaySkip::NoRecording: return "no-recording";
  }
  return "?";
}

LearnOutcome ReplayLearnResult::outcome() const {
  if (consistent.empty()) return LearnOutcome::NoneSurvives;
  return consistent_groups.size() == 1 ? LearnOutcome::Unconfirmed : LearnOutcome::Undecided;
}

std::string ReplayLearnResult::reason() const {
  switch (outcome()) {
    case LearnOutcome::NoneSurvives:
      return nearest.empty() ? fmt::format("no candidate passes every one of the {} recording(s)", recordings)
                             : fmt::format("no candidate passes every one of the {} recording(s); nearest: {} ({} "
                                           "refuted block for block)",
                                           recordings, fmt::join(nearest.front().names, ", "),
                                           nearest.front().recordings_refuted);
    case LearnOutcome::Unconfirmed:
      return fmt::format("one group of {} candidate(s) passes every one of the {} recording(s); recordings cannot run "
                         "the cases that would confirm it against its neighbours",
                         consistent.size(), recordings);
    case LearnOutcome::Undecided:
      return fmt::format("{} groups of candidates pass every one of the {} recording(s); the campaign lists {} case(s) "
                         "that would split them",
                         consistent_groups.size(), recordings, campaign.size());
    case LearnOutcome::Identified:
    case LearnOutcome::Equivalent:
    case LearnOutcome::Unstable:
    case LearnOutcome::NoDevice:
    case LearnOutcome::Unsupported: break;  // outcome() never gives these: recordings confirm nothing
  }
  return "";
}

std::string ReplayLearnResult::scope() const {
  std::vector<std::string> iv;
  for (const auto& i : intervals) iv.push_back(fmt::format("{} {}", i.option.key, i.range_text()));
  return fmt::format("among {} candidates in {} groups that act alike on the device ({}), judged against {} "
                     "recording(s){}{}",
                     candidates, groups, space == LearnSpace::Compositions ? "the composition space" : "the given list",
                     recordings, iv.empty() ? "" : "; thresholds every recording allows: ", fmt::join(iv, ", "));
}

nlohmann::json ReplayLearnResult::to_json() const {
  nlohmann::json sk = nlohmann::json::array();
  for (const auto& s : skipped)
    sk.push_back({{"file", s.file}, {"case", s.case_id}, {"why", to_string(s.why)}, {"message", s.message}});
  nlohmann::json st = nlohmann::json::array();
  for (const auto& s : steps)
    st.push_back({{"step", s.index},
                  {"case", s.case_id},
                  {"file", s.file},
                  {"groups_before", s.groups_before},
                  {"groups_after", s.groups_after},
                  {"undecided", s.undecided}});
  nlohmann::json mech = nlohmann::json::array();
  for (const auto& m : mechanisms)
    mech.push_back(m.to_json());
  nlohmann::json iv = nlohmann::json::array();
  for (const auto& i : intervals) iv.push_back(i.to_json());
  nlohmann::json camp = nlohmann::json::array();
  for (const auto& c : campaign)
    camp.push_back({{"case", c.c.id},
                    {"origin", c.origin},
                    {"kernels", c.c.scenario.kernels.size()},
                    {"blocks", c.c.scenario.total_blocks()},
                    {"class_sizes", c.class_sizes}});
  std::vector<std::string> names;
  for (const auto& h : consistent) names.push_back(h.name);
  nlohmann::json near = nlohmann::json::array();
  for (const auto& n : nearest)
    near.push_back({{"names", n.names},
                    {"members", n.members},
                    {"recordings_refuted", n.recordings_refuted},
                    {"counts_refuted", n.counts_refuted},
                    {"first_case", n.first_case},
                    {"first_file", n.first_file},
                    {"where", n.where}});
  nlohmann::json differs = nullptr;
  if (device_differs)
    differs = {{"recordings", device_differs->recordings},
               {"fields", device_differs->fields},
               {"first_file", device_differs->first_file},
               {"first_case", device_differs->first_case}};
  return {{"space", to_string(space)},
          {"outcome", to_string(outcome())},
          {"reason", reason()},
          {"scope", scope()},
          {"survivors", names},
          {"equivalence", consistent_groups},
          {"recordings", recordings},
          {"nearest", near},
          {"device_differs", differs},
          {"candidates", candidates},
          {"groups", groups},
          {"not_applicable", not_applicable},
          {"skipped", sk},
          {"recordings_applied", st},
          {"consistent", names},
          {"consistent_groups", consistent_groups},
          {"mechanisms", mech},
          {"thresholds_of", intervals_of},
          {"thresholds", iv},
          {"campaign", camp},
          {"campaign_sample", campaign_sample},
          {"unsplit_groups", unsplit_groups},
          {"evaluations", evaluations}};
}

namespace {

std::string file_of(const model::Case& c) { return c.file.empty() ? c.id : c.file; }

// The groups' representatives spread evenly over `alive`, at most n of them.
std::vector<size_t> spread(const std::vector<size_t>& alive, size_t n) {
  if (alive.size() <= n) return alive;
  std::vector<size_t> out;
  for (size_t k = 0; k < n; ++k) out.push_back(alive[k * alive.size() / n]);
  return out;
}

// A mechanism field's value as written in a hypothesis-file object ("off": no threshold).
std::string field_text(const nlohmann::json& j, const std::string& f) {
  const auto& x = j.contains(f) ? j[f] : nlohmann::json();
  return x.is_string() ? x.get<std::string>() : x.is_null() ? "off" : x.dump();
}

class ReplayLearner {
 public:
  ReplayLearner(const std::vector<model::Hypothesis>& candidates, const model::Device& d,
                const std::vector<model::Case>& recordings, const ReplayLearnOptions& o)
      : d_(d), o_(o) {
    res_.space = o.space;
    for (const auto& c : recordings) {
      if (!c.observation || !c.observation->has_recording()) {
        res_.skipped.push_back({file_of(c), c.id, ReplaySkip::NoRecording,
                                fmt::format("{}: case {} has no recorded schedule (sm_of_block / start_of_block)",
                                            file_of(c), c.id)});
        continue;
      }
      if (c.scenario.device.name != d.name) {
        res_.skipped.push_back({file_of(c), c.id, ReplaySkip::OtherDevice,
                                fmt::format("{}: case {} was recorded on {}, not {}", file_of(c), c.id,
                                            c.scenario.device.name, d.name)});
        continue;
      }
      if (!(c.scenario.device == d)) note_device_difference(c);
      recs_.push_back(&c);
    }
    if (recs_.empty())
      throw model::InputError("--oracle", "",
                              fmt::format("no recording of {} to learn from ({} skipped{})", d.name, res_.skipped.size(),
                                          res_.skipped.empty() ? "" : ", first: " + res_.skipped.front().message));
    // As learn sets candidates aside: one that cannot place a small block on the device does not describe it.
    const model::json probe_j = {{"kernels", {{{"name", "probe"}, {"blocks", 1}, {"threads", 32}, {"regs", 32},
                                               {"smem", 0}, {"duration", 1}}}}};
    const model::Scenario probe = model::scenario_from_json(probe_j, d, false, "learn probe");
    // Each candidate's probe and acting key on workers (a simulation each), grouped in the candidates' order after.
    enum class Kept : char { Skipped, NotApplicable, Kept };
    std::vector<Kept> kept(candidates.size(), Kept::Skipped);
    std::vector<std::string> key_or_why(candidates.size());
    stage("the candidates that act alike on the device", candidates.size());
    on_workers(candidates.size(), 4096, [&](size_t i) {
      const model::Hypothesis& h = candidates[i];
      if (o.space == LearnSpace::Compositions && h.priority != model::Priority::Ignore &&
          !detail::priority_exercised(d, h.priority, model::Priority::Ignore))
        return;
      model::FeasibilityCheck why;
      if (!model::try_simulate(probe, h, &why)) {
        kept[i] = Kept::NotApplicable;
        key_or_why[i] = why.reason;
        return;
      }
      kept[i] = Kept::Kept;
      key_or_why[i] = acting_key(h, d);
    });
    std::map<std::string, size_t> by_key;
    std::vector<const std::string*> group_key;
    for (size_t i = 0; i < candidates.size(); ++i) {
      switch (kept[i]) {
        case Kept::Skipped: continue;
        case Kept::NotApplicable:
          res_.not_applicable.push_back(fmt::format("{}: {}", candidates[i].name, key_or_why[i]));
          continue;
        case Kept::Kept: break;
      }
      hs_.push_back(candidates[i]);
      auto [it, fresh] = by_key.emplace(key_or_why[i], groups_.size());
      if (fresh) {
        groups_.push_back({});
        group_key.push_back(&it->first);
      }
      groups_[it->second].push_back(hs_.size() - 1);
    }
    acting_.resize(groups_.size());
    detail::run_on_workers(groups_.size(), o.jobs, [&](size_t g) { acting_[g] = nlohmann::json::parse(*group_key[g]); });
    if (hs_.empty()) throw model::InputError("--hypotheses", "", "none of the hypotheses applies to " + d.name);
    res_.candidates = hs_.size();
    res_.recordings = recs_.size();
    res_.groups = groups_.size();
    verdict_.assign(recs_.size(), std::vector<signed char>(groups_.size(), kUnjudged));
    fields_ = model::mechanism_fields();
  }

  ReplayLearnResult run(const std::vector<model::Case>& corpus);

 private:
  static constexpr signed char kUnjudged = -1, kPass = 0, kRefuted = 1, kUndecided = 2;

  // The group's verdict on a recording: its representative judged at Exact, as validate does. A group whose
  // members act alike on the device shares one verdict. Safe on workers: each pair has a cell of its own.
  signed char judge(size_t r, size_t g) {
    signed char& v = verdict_[r][g];
    if (v != kUnjudged) return v;
    std::atomic_ref<int>(res_.evaluations).fetch_add(1, std::memory_order_relaxed);
    model::JudgeOptions exact = o_.judging;
    exact.levels = model::JudgedLevels::Exact;  // the verdict is Exact's; counts are asked only for a near miss's words
    exact.wording = model::Wording::VerdictOnly;  // the words of the listed near misses are asked again (nearest())
    const model::CaseResult cr = model::evaluate(*recs_[r], hs_[groups_[g].front()], exact);
    switch (cr.at(model::Level::Exact)) {
      case model::Verdict::Pass: return v = kPass;
      case model::Verdict::Fail: return v = kRefuted;
      case model::Verdict::Unknown: return v = kUndecided;
      case model::Verdict::Unsupported:  // predicts the recorded kernels cannot run: the recording refutes it
        return v = cr.ran ? kUndecided : kRefuted;
    }
    return v = kUndecided;
  }

  // task(0 .. n-1) on o_.jobs threads, `chunk` tasks at a time so that progress (a unit per task, counted on the
  // calling thread, as on_unit asks) moves while they run.
  void on_workers(size_t n, size_t chunk, const std::function<void(size_t)>& task) {
    for (size_t at = 0; at < n; at += chunk) {
      const size_t end = std::min(n, at + chunk);
      detail::run_on_workers(end - at, o_.jobs, [&](size_t k) { task(at + k); });
      for (size_t k = at; k < end; ++k) unit();
    }
  }
  // The verdicts of every pair, those not judged yet on workers.
  void judge_all(const std::vector<std::pair<size_t, size_t>>& pairs) {
    std::vector<std::pair<size_t, size_t>> open;
    for (const auto& [r, g] : pairs)
      if (verdict_[r][g] == kUnjudged) open.emplace_back(r, g);
    for (size_t k = open.size(); k < pairs.size(); ++k) unit();  // the cached ones are done at once
    on_workers(open.size(), 128, [&](size_t k) { judge(open[k].first, open[k].second); });
  }
  static std::vector<std::pair<size_t, size_t>> pairs_of(size_t r, const std::vector<size_t>& gs) {
    std::vector<std::pair<size_t, size_t>> out;
    for (size_t g : gs) out.emplace_back(r, g);
    return out;
  }

  std::set<std::string> values_left(size_t f, bool acting) const {
    std::set<std::string> v;
    for (size_t g : alive_) {
      if (acting) {
        v.insert(field_text(acting_[g], fields_[f]));
        continue;
      }
      for (size_t i : groups_[g]) v.insert(field_text(hs_[i].to_json(), fields_[f]));
    }
    return v;
  }

  void campaign(const std::vector<model::Case>& corpus);
  void nearest();
  // The member a group is named by: its shipped hypothesis where it holds one, else its first.
  size_t representative(size_t g) const {
    for (size_t m : groups_[g])
      if (model::find_builtin_hypothesis(hs_[m].name)) return m;
    return groups_[g].front();
  }
  bool holds_shipped(size_t g) const { return model::find_builtin_hypothesis(hs_[representative(g)].name) != nullptr; }

  // Blocks h places on another SM than the recording's (all of them when h cannot run it), under model timing.
  static size_t misplaced(const model::Case& rec, const model::Hypothesis& h) {
    const auto sch = model::try_simulate(rec.scenario, h);
    if (!sch) return static_cast<size_t>(rec.scenario.total_blocks());
    size_t n = 0;
    for (const auto& k : sch->kernels) {
      const auto it = rec.observation->sm_of_block.find(k.name);
      if (it == rec.observation->sm_of_block.end()) continue;
      for (size_t b = 0; b < k.blocks.size() && b < it->second.size(); ++b) n += it->second[b] != k.blocks[b].sm ? 1 : 0;
    }
    return n;
  }
  // Progress (ReplayLearnOptions::on_stage, on_unit): a judgement over trace timing can take seconds.
  void stage(const std::string& what, size_t units) const {
    if (o_.on_stage) o_.on_stage(what, units);
  }
  void unit() const {
    if (o_.on_unit) o_.on_unit();
  }

  void note_device_difference(const model::Case& c) {
    if (!res_.device_differs) {
      DeviceDifference dd;
      dd.first_file = file_of(c);
      dd.first_case = c.id;
      dd.carried = c.scenario.device;
      const nlohmann::json given = d_.to_json(), carried = c.scenario.device.to_json();
      for (const auto& [k, v] : carried.items())
        if (!given.contains(k) || given[k] != v) dd.fields.push_back(k);
      for (const auto& [k, v] : given.items())
        if (!carried.contains(k)) dd.fields.push_back(k);
      res_.device_differs = std::move(dd);
    }
    ++res_.device_differs->recordings;
  }

  const model::Device& d_;
  ReplayLearnOptions o_;
  std::vector<const model::Case*> recs_;
  std::vector<model::Hypothesis> hs_;
  std::vector<std::vector<size_t>> groups_;  // candidate indices, per acting key
  std::vector<nlohmann::json> acting_;       // per group: the options as they act on the device
  std::vector<std::vector<signed char>> verdict_;
  std::vector<size_t> alive_;
  std::vector<int> dropped_at_;  // per group: the step that refuted it (0: never)
  std::vector<size_t> applied_;  // recordings in the order they were applied
  std::vector<std::string> fields_;
  ReplayLearnResult res_;
};

ReplayLearnResult ReplayLearner::run(const std::vector<model::Case>& corpus) {
  alive_.resize(groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) alive_[g] = g;
  std::vector<std::string> settled_by(fields_.size());
  std::vector<bool> settled(fields_.size());
  for (size_t f = 0; f < fields_.size(); ++f) settled[f] = values_left(f, true).size() <= 1;
  // Recordings in learn's order: the one refuting the most of an evenly spread sample of what is left first,
  // so "settled by" names the recording that decided a mechanism rather than the file order.
  std::vector<char> used(recs_.size(), 0);
  dropped_at_.assign(groups_.size(), 0);
  for (size_t step = 0; step < recs_.size(); ++step) {
    const auto sample = spread(alive_, o_.split_sample);
    // The step's judgements: each recording left against the sample, then the chosen one against every group left.
    stage(fmt::format("recording {} of {} ({} groups left)", step + 1, recs_.size(), alive_.size()),
          (recs_.size() - step) * sample.size() + alive_.size());
    size_t best = recs_.size(), best_refuted = 0;
    for (size_t r = 0; r < recs_.size(); ++r) {
      if (used[r]) continue;
      judge_all(pairs_of(r, sample));
      size_t refuted = 0;
      for (size_t g : sample) refuted += judge(r, g) == kRefuted ? 1 : 0;
      if (best == recs_.size() || refuted > best_refuted) {
        best = r;
        best_refuted = refuted;
      }
      if (best_refuted == sample.size()) break;  // refutes the whole sample: no later recording is chosen over it
    }
    used[best] = 1;
    applied_.push_back(best);
    ReplayStep st;
    st.index = static_cast<int>(step) + 1;
    st.case_id = recs_[best]->id;
    st.file = file_of(*recs_[best]);
    st.groups_before = alive_.size();
    std::vector<size_t> keep;
    judge_all(pairs_of(best, alive_));
    for (size_t g : alive_) {
      const signed char v = judge(best, g);
      if (v == kRefuted) {
        dropped_at_[g] = static_cast<int>(step) + 1;
        continue;
      }
      if (v == kUndecided) ++st.undecided;
      keep.push_back(g);
    }
    alive_ = std::move(keep);
    st.groups_after = alive_.size();
    res_.steps.push_back(st);
    for (size_t f = 0; f < fields_.size(); ++f) {
      const bool now = values_left(f, true).size() <= 1;
      if (now && !settled[f]) settled_by[f] = st.case_id;
      settled[f] = now;
    }
    if (alive_.empty()) break;
  }
  if (alive_.empty()) {
    nearest();
    return std::move(res_);
  }
  for (size_t g : alive_) {
    std::vector<std::string> names;
    for (size_t i : groups_[g]) {
      res_.consistent.push_back(hs_[i]);
      names.push_back(hs_[i].name);
    }
    res_.consistent_groups.push_back(std::move(names));
  }
  for (size_t f = 0; f < fields_.size() && !alive_.empty(); ++f) {
    MechanismStatus m;
    m.mechanism = fields_[f];
    const auto written = values_left(f, false);
    m.values.assign(written.begin(), written.end());
    m.state = values_left(f, true).size() == 1 ? Settledness::Settled : Settledness::Open;
    m.settled_by = m.state == Settledness::Settled ? settled_by[f] : "";
    res_.mechanisms.push_back(std::move(m));
  }
  if (!alive_.empty()) {
    // The first consistent group's thresholds as intervals: what every recording allows around its values.
    std::vector<SeenCase> seen;
    for (const auto* c : recs_) seen.push_back({&c->scenario, &*c->observation});
    const model::Hypothesis& h = hs_[groups_[alive_.front()].front()];
    stage("the thresholds every recording allows", 0);
    if (auto fit = fit_thresholds(h, d_, seen)) {
      res_.intervals_of = h.name;
      res_.intervals = fit->intervals;
      // The threshold rows say what the recordings allow at the device's granularity, not the enumerated values.
      for (auto& m : res_.mechanisms)
        for (const auto& iv : res_.intervals)
          if (iv.option.key == m.mechanism && alive_.size() == 1) {
            m.values = {iv.range_text()};
            m.state = iv.cuts() == 1 ? Settledness::Settled : Settledness::Open;
          }
    }
    campaign(corpus);
  }
  return std::move(res_);
}

void ReplayLearner::nearest() {
  // The groups refuted last came closest: a bounded pool of them, judged on every recording (the judgements
  // are cached), so the ranking does not depend on the order the recordings were applied in.
  constexpr size_t kPool = 24, kListed = 5, kPanel = 8;
  constexpr int64_t kCountsOrders = 16;
  const model::Hypothesis* alg1 = model::find_builtin_hypothesis("alg1");
  // Among candidates the recordings cannot tell apart, the one that assumes least first: a shipped
  // hypothesis, then the fewest option changes from alg1, then the fewest rule keys.
  auto simplicity_of = [&](const model::Hypothesis& h) {
    return std::make_tuple(model::find_builtin_hypothesis(h.name) ? 0 : 1, alg1 ? model::option_distance(h, *alg1) : 0,
                           h.rule.keys.size());
  };
  auto simplicity = [&](size_t g) { return simplicity_of(hs_[representative(g)]); };
  // Groups ranked on the panel below: fewer under trace timing, where one judgement can take seconds.
  const size_t pre_pool = o_.judging.timing == model::Timing::Trace ? 256 : 4096;
  std::vector<size_t> pool(groups_.size());
  for (size_t g = 0; g < pool.size(); ++g) pool[g] = g;
  std::stable_sort(pool.begin(), pool.end(), [&](size_t a, size_t b) { return dropped_at_[a] > dropped_at_[b]; });
  if (pool.size() > kPool) {
    // Refuted last is a weak sign of near when recordings differ in kind (a spread that fits every one-kernel
    // grid can fall to an early random scenario while a round-robin survives to a late grid): the groups
    // refuted last and an even spread over all are ranked by the recordings of a panel spread over the applied
    // order that refute them, then by refuted last, then by the blocks on another SM where they were refuted.
    std::vector<size_t> pre(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(std::min(pool.size(), pre_pool / 2)));
    std::vector<size_t> every(groups_.size());
    for (size_t g = 0; g < every.size(); ++g) every[g] = g;
    std::vector<char> in(groups_.size(), 0);
    for (size_t g : pre) in[g] = 1;
    for (size_t g : spread(every, pre_pool / 2))
      if (!in[g]) {
        in[g] = 1;
        pre.push_back(g);
      }
    // The groups holding a shipped hypothesis are always ranked: where every group fell to one recording, the
    // ones refuted last are a mere prefix of the space, and a user looks for the rules with a name first.
    for (size_t g = 0; g < groups_.size(); ++g)
      if (!in[g] && holds_shipped(g)) {
        in[g] = 1;
        pre.push_back(g);
      }
    // Spread over the recordings applied, filled up from the others: where one recording refuted every group,
    // it alone would rank nothing.
    std::vector<size_t> panel = spread(applied_, kPanel);
    if (panel.size() < kPanel) {
      std::vector<char> used(recs_.size(), 0);
      for (size_t rec : panel) used[rec] = 1;
      std::vector<size_t> rest;
      for (size_t rec = 0; rec < recs_.size(); ++rec)
        if (!used[rec]) rest.push_back(rec);
      for (size_t rec : spread(rest, kPanel - panel.size())) panel.push_back(rec);
    }
    stage("ranking the candidates for the nearest", pre.size() * (panel.size() + 1));
    std::vector<size_t> panel_refuted(groups_.size(), 0), off(groups_.size(), 0);
    std::vector<std::pair<size_t, size_t>> pairs;
    for (size_t g : pre)
      for (size_t rec : panel) pairs.emplace_back(rec, g);
    judge_all(pairs);
    for (size_t g : pre)
      for (size_t rec : panel) panel_refuted[g] += judge(rec, g) == kRefuted ? 1 : 0;
    on_workers(pre.size(), 128, [&](size_t k) {
      const size_t g = pre[k];
      off[g] = dropped_at_[g] > 0 ? misplaced(*recs_[applied_[static_cast<size_t>(dropped_at_[g]) - 1]], hs_[groups_[g].front()])
                                  : 0;
    });
    std::stable_sort(pre.begin(), pre.end(), [&](size_t a, size_t b) {
      if (panel_refuted[a] != panel_refuted[b]) return panel_refuted[a] < panel_refuted[b];
      if (dropped_at_[a] != dropped_at_[b]) return dropped_at_[a] > dropped_at_[b];
      return off[a] != off[b] ? off[a] < off[b] : simplicity(a) < simplicity(b);
    });
    pool = std::move(pre);
  }
  if (pool.size() > kPool) pool.resize(kPool);
  struct Ranked {
    size_t g = 0;
    int refuted = 0;
    bool cut = false;  // refuted by more recordings than kListed groups judged before it: cannot be listed
  };
  std::vector<Ranked> ranked;
  // The applied recordings first, in their order, then every one not applied (the run stopped when no candidate
  // was left): each recording once.
  std::vector<size_t> order = applied_;
  {
    std::vector<char> seen(recs_.size(), 0);
    for (size_t rec : applied_) seen[rec] = 1;
    for (size_t rec = 0; rec < recs_.size(); ++rec)
      if (!seen[rec]) order.push_back(rec);
  }
  stage("the nearest candidates", pool.size() * recs_.size());
  // A few groups at a time, on workers: once kListed groups are judged on every recording, a group refuted by
  // more recordings than the kListed-th of them cannot be listed and is judged no further. The batch does not
  // depend on jobs, so neither do the judgements made.
  constexpr size_t kBatch = 6;
  for (size_t at = 0; at < pool.size(); at += kBatch) {
    int bound = INT_MAX;
    if (ranked.size() >= kListed) {
      std::vector<int> counts;
      for (const auto& r : ranked) counts.push_back(r.refuted);
      std::nth_element(counts.begin(), counts.begin() + (kListed - 1), counts.end());
      bound = counts[kListed - 1];
    }
    std::vector<Ranked> batch(std::min(kBatch, pool.size() - at));
    detail::run_on_workers(batch.size(), o_.jobs, [&](size_t k) {
      Ranked& r = batch[k];
      r.g = pool[at + k];
      for (size_t rec : order)
        if (judge(rec, r.g) == kRefuted && ++r.refuted > bound) {
          r.cut = true;
          return;
        }
    });
    for (const auto& r : batch) {
      for (size_t i = 0; i < recs_.size(); ++i) unit();
      if (!r.cut) ranked.push_back(r);
    }
  }
  std::stable_sort(ranked.begin(), ranked.end(), [&](const Ranked& a, const Ranked& b) {
    return a.refuted != b.refuted ? a.refuted < b.refuted : simplicity(a.g) < simplicity(b.g);
  });
  if (ranked.size() > kListed) ranked.resize(kListed);
  // Judged again for their words and per-SM counts (the cached verdict keeps no text): each listed group on each
  // recording that refutes it, on workers, each into its own slot. The counts verdict only ranks near misses:
  // under trace timing it is searched within kCountsOrders simulations (the stepwise search is the exact
  // level's), a recording it leaves unknown not counted.
  model::JudgeOptions counts = o_.judging;
  counts.levels = model::JudgedLevels::ExactAndCounts;
  if (counts.timing == model::Timing::Trace) counts.max_orders = std::min<int64_t>(counts.max_orders, kCountsOrders);
  std::vector<std::pair<size_t, size_t>> work;  // (listed, recording), each group's in `order`
  for (size_t k = 0; k < ranked.size(); ++k)
    for (size_t rec : order)
      if (judge(rec, ranked[k].g) == kRefuted) work.emplace_back(k, rec);
  std::vector<model::CaseResult> judged(work.size());
  stage("the nearest candidates' first failures and per-SM counts", work.size());
  on_workers(work.size(), 8, [&](size_t i) {
    judged[i] = model::evaluate(*recs_[work[i].second], hs_[representative(ranked[work[i].first].g)], counts);
  });
  std::vector<ReplayNearMiss> listed(ranked.size()), cannot_run(ranked.size());
  for (size_t k = 0; k < ranked.size(); ++k) {
    ReplayNearMiss& n = listed[k];
    const auto& members = groups_[ranked[k].g];
    n.members = members.size();
    const size_t rep = representative(ranked[k].g);
    n.names.push_back(hs_[rep].name);
    for (size_t i = 0; i < members.size() && n.names.size() < 3; ++i)
      if (members[i] != rep) n.names.push_back(hs_[members[i]].name);
    n.recordings_refuted = ranked[k].refuted;
    n.hypothesis = hs_[rep];
  }
  // The first recording it places a block of wrongly; one it cannot run only when there is no such one.
  for (size_t i = 0; i < work.size(); ++i) {
    const auto [k, rec] = work[i];
    const model::CaseResult& cr = judged[i];
    ReplayNearMiss& n = listed[k];
    if (cr.at(model::Level::Counts) == model::Verdict::Fail || !cr.ran) ++n.counts_refuted;
    ReplayNearMiss& into = cr.ran ? n : cannot_run[k];
    if (!into.first_case.empty()) continue;
    into.first_case = recs_[rec]->id;
    into.first_file = file_of(*recs_[rec]);
    if (!cr.ran) {
      into.where = "cannot run it: " + cr.reason;
    } else if (cr.at(model::Level::Exact) == model::Verdict::Fail) {
      into.where = cr.first_failure(model::Level::Exact);
    } else {  // the smaller bound left the exact level open: its words under the judgement's own bound
      model::JudgeOptions exact = o_.judging;
      exact.levels = model::JudgedLevels::Exact;
      into.where = model::evaluate(*recs_[rec], n.hypothesis, exact).first_failure(model::Level::Exact);
    }
  }
  for (size_t k = 0; k < ranked.size(); ++k)
    if (listed[k].first_case.empty()) {
      listed[k].first_case = cannot_run[k].first_case;
      listed[k].first_file = cannot_run[k].first_file;
      listed[k].where = cannot_run[k].where;
    }
  for (auto& n : listed) res_.nearest.push_back(std::move(n));
  // Nearest first: fewest recordings refuted, then fewest refuted even in per-SM counts, then the simplest.
  std::stable_sort(res_.nearest.begin(), res_.nearest.end(), [&](const ReplayNearMiss& a, const ReplayNearMiss& b) {
    if (a.recordings_refuted != b.recordings_refuted) return a.recordings_refuted < b.recordings_refuted;
    if (a.counts_refuted != b.counts_refuted) return a.counts_refuted < b.counts_refuted;
    return simplicity_of(a.hypothesis) < simplicity_of(b.hypothesis);
  });
}

void ReplayLearner::campaign(const std::vector<model::Case>& corpus) {
  // learn's splitting-case choice without an oracle: over a sample of the consistent groups, the corpus case
  // (moved to the device) whose predictions leave the smallest largest class of the classes still unsplit,
  // then the fewest blocks; repeated on the refined partition until no case refines it.
  const auto sample = spread(alive_, o_.split_sample);
  res_.campaign_sample = sample.size();
  std::vector<int> part(sample.size(), 0);  // class of each sampled group so far
  auto largest = [](const std::vector<int>& p) {
    std::map<int, size_t> n;
    for (int x : p) ++n[x];
    size_t m = 0;
    for (const auto& [k, c] : n) m = std::max(m, c);
    return m;
  };
  res_.unsplit_groups = largest(part);
  if (sample.size() < 2) return;
  auto cases = device_cases(corpus, d_);
  stage("the campaign: corpus cases that split what is left", cases.size());
  // Per case: the class of each sampled group (-1: cannot run), computed once.
  std::vector<std::vector<int>> cls(cases.size());
  auto classes_of = [&](size_t ci) -> const std::vector<int>& {
    auto& out = cls[ci];
    if (!out.empty()) return out;
    unit();
    std::vector<model::Schedule> seen;
    std::unordered_map<size_t, std::vector<int>> by_size;
    for (size_t s : sample) {
      model::FeasibilityCheck why;
      auto sch = model::try_simulate(cases[ci].scenario, hs_[groups_[s].front()], &why);
      if (!sch) {
        out.push_back(-1);
        continue;
      }
      int found = -1;
      for (int k : by_size[static_cast<size_t>(sch->makespan())])
        if (same_placements(seen[static_cast<size_t>(k)], *sch)) found = k;
      if (found < 0) {
        seen.push_back(std::move(*sch));
        found = static_cast<int>(seen.size()) - 1;
        by_size[static_cast<size_t>(seen.back().makespan())].push_back(found);
      }
      out.push_back(found);
    }
    return out;
  };
  std::vector<char> taken(cases.size(), 0);
  while (static_cast<int>(res_.campaign.size()) < o_.campaign_cases) {
    size_t best = cases.size(), best_largest = 0;
    std::vector<int> best_part;
    for (size_t ci = 0; ci < cases.size(); ++ci) {
      if (taken[ci]) continue;
      const auto& c = classes_of(ci);
      std::map<std::pair<int, int>, int> refined;
      std::vector<int> np(sample.size());
      for (size_t s = 0; s < sample.size(); ++s)
        np[s] = refined.emplace(std::make_pair(part[s], c[s]), static_cast<int>(refined.size())).first->second;
      if (refined.size() == std::set<int>(part.begin(), part.end()).size()) continue;  // splits nothing left
      const size_t l = largest(np);
      if (best == cases.size() || l < best_largest ||
          (l == best_largest && cases[ci].scenario.total_blocks() < cases[best].scenario.total_blocks())) {
        best = ci;
        best_largest = l;
        best_part = std::move(np);
      }
    }
    if (best == cases.size()) break;
    taken[best] = 1;
    part = std::move(best_part);
    CampaignCase cc;
    // A case moved from another device gets the device in its id: the file runs there, not where it came from.
    cc.c.id = cases[best].origin.find(" retargeted from ") == std::string::npos ? cases[best].id
                                                                              : fmt::format("{}-on-{}", cases[best].id, d_.name);
    cc.c.source = fmt::format("learn --oracle replay: splits the groups consistent with the recordings of {}", d_.name);
    cc.c.scenario = cases[best].scenario;
    cc.origin = cases[best].origin;
    std::map<int, size_t> n;
    for (int x : classes_of(best)) ++n[x];
    for (const auto& [k, c] : n) cc.class_sizes.push_back(c);
    std::sort(cc.class_sizes.rbegin(), cc.class_sizes.rend());
    res_.campaign.push_back(std::move(cc));
    res_.unsplit_groups = best_largest;
    if (best_largest <= 1) break;
  }
  // Smallest first: the GPU runs the cheap cases before the large ones.
  std::stable_sort(res_.campaign.begin(), res_.campaign.end(), [](const CampaignCase& a, const CampaignCase& b) {
    return a.c.scenario.total_blocks() < b.c.scenario.total_blocks();
  });
}

}  // namespace

ReplayLearnResult learn_from_recordings(const std::vector<model::Hypothesis>& candidates, const model::Device& device,
                                        const std::vector<model::Case>& recordings,
                                        const std::vector<model::Case>& corpus, const ReplayLearnOptions& o) {
  return ReplayLearner(candidates, device, recordings, o).run(corpus);
}

}  // namespace tbcheck::search
