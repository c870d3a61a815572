// Tests of learning from recordings (search/learn_replay.hpp): recordings made by simulating a known composition
// keep its class, settle the mechanisms they exercise by the right case, and recordings of another device are skipped.
#include <catch2/catch.hpp>

#include <algorithm>

#include <fmt/format.h>

#include "helpers.hpp"
#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/learn.hpp"
#include "tbcheck/search/learn_numeric.hpp"
#include "tbcheck/search/learn_replay.hpp"

using namespace tbcheck;

namespace {

// The case as a hardware recording of `truth`: every block's SM and start, as the CUDA oracle writes them.
model::Case recorded(const std::string& id, const model::Scenario& s, const model::Hypothesis& truth) {
  model::Case c;
  c.id = id;
  c.source = "test: simulated " + truth.name;
  c.scenario = s;
  const model::Schedule sch = model::simulate(s, truth);
  model::Observation o;
  o.kind = model::ObservationKind::Hardware;
  for (size_t k = 0; k < s.kernels.size(); ++k)
    for (const auto& b : sch.kernels[k].blocks) {
      o.sm_of_block[s.kernels[k].name].push_back(b.sm);
      o.start_of_block[s.kernels[k].name].push_back(static_cast<int>(b.start));
    }
  c.observation = o;
  return c;
}

model::Hypothesis with_selection_round_robin(model::Hypothesis h) {
  h.selection = model::Selection::RoundRobin;
  h.name = model::composition_name(h);
  return h;
}

struct Recordings {
  test::TempDir dir{"learn-replay"};
  std::string quiet_id, selecting_id;
};

// Two recordings of alg1 on rtx3090 in a temp folder: one block (every candidate agrees) and the first corpus
// case that alg1 and its round-robin neighbour place differently.
void write_recordings(Recordings& r, const model::Hypothesis& truth, const model::Device& d) {
  const auto corpus = model::load_cases(test::source_path("corpus/synth"));
  const model::Hypothesis rr = with_selection_round_robin(truth);
  std::optional<search::DeviceCase> selecting;
  for (auto& c : search::device_cases(corpus, d)) {
    if (c.scenario.total_blocks() > 400) continue;
    if (!search::same_placements(model::simulate(c.scenario, truth), model::simulate(c.scenario, rr))) {
      selecting = std::move(c);
      break;
    }
  }
  REQUIRE(selecting);
  const model::Scenario one = test::scenario(R"({"device": "rtx3090", "kernels": [
    {"name": "k", "blocks": 1, "threads": 32, "regs": 32, "duration": 1}]})");
  r.quiet_id = "rec-one-block";
  r.selecting_id = "rec-" + selecting->id;
  r.dir.write("a.json", recorded(r.quiet_id, one, truth).to_json().dump(1));
  r.dir.write("b.json", recorded(r.selecting_id, selecting->scenario, truth).to_json().dump(1));
}

}  // namespace

TEST_CASE("learning from recordings keeps the recorded composition and names the case that settled selection",
          "[learn][replay]") {
  const model::Device& d = model::builtin_device("rtx3090", "--device", "");
  const model::Hypothesis& truth = test::hyp("alg1");
  Recordings rec;
  write_recordings(rec, truth, d);
  // The candidates: alg1 and every valid composition one option change away.
  std::vector<model::Hypothesis> candidates = model::neighbours(truth, 1);
  candidates.push_back(truth);
  const auto recordings = model::load_cases(rec.dir.path.string());
  REQUIRE(recordings.size() == 2);
  search::ReplayLearnOptions o;
  const auto r = search::learn_from_recordings(candidates, d, recordings, {}, o);
  CHECK(r.skipped.empty());
  REQUIRE(r.steps.size() == 2);
  // The known composition survives, and so does every candidate that acts as it does on the device.
  bool truth_kept = false;
  for (const auto& h : r.consistent) {
    truth_kept = truth_kept || h.same_options(truth);
    // Every survivor agrees with both recordings, judged one by one.
    for (const auto& c : recordings) CHECK(model::evaluate(c, h).at(model::Level::Exact) == model::Verdict::Pass);
  }
  CHECK(truth_kept);
  // And every candidate left out fails a recording.
  for (const auto& h : candidates) {
    bool kept = false;
    for (const auto& s : r.consistent) kept = kept || s.same_options(h);
    if (kept) continue;
    bool fails = false;
    for (const auto& c : recordings) fails = fails || model::evaluate(c, h).at(model::Level::Exact) != model::Verdict::Pass;
    CHECK(fails);
  }
  const auto sel = std::find_if(r.mechanisms.begin(), r.mechanisms.end(),
                                [](const search::MechanismStatus& m) { return m.mechanism == "selection"; });
  REQUIRE(sel != r.mechanisms.end());
  CHECK(sel->state == search::Settledness::Settled);
  CHECK(sel->values == std::vector<std::string>{"most-room"});
  CHECK(sel->settled_by == rec.selecting_id);
  // The JSON has the oracle learner's outcome and survivors: two recordings leave several groups.
  REQUIRE(r.consistent_groups.size() > 1);
  const auto j = r.to_json();
  CHECK(j["outcome"] == "undecided");
  CHECK(j["survivors"].size() == r.consistent.size());
  // Both learners' JSON share these keys, so a script reads either alike.
  const auto oracle_learner = search::LearnResult{}.to_json();
  for (const char* key : {"space", "outcome", "reason", "candidates", "survivors", "equivalence", "mechanisms",
                          "thresholds", "scope"}) {
    INFO(key);
    CHECK(j.contains(key));
    CHECK(oracle_learner.contains(key));
  }
  CHECK(j["equivalence"].size() == r.consistent_groups.size());
  CHECK_THAT(j["reason"].get<std::string>(), Catch::Contains(fmt::format("{} groups of candidates pass every one of the "
                                                                         "{} recording(s)",
                                                                         r.consistent_groups.size(), r.recordings)));
  CHECK_THAT(j["scope"].get<std::string>(), Catch::Contains(fmt::format("among {} candidates", r.candidates)));
}

TEST_CASE("learning from recordings skips a recording of another device and names its file", "[learn][replay]") {
  const model::Device& d = model::builtin_device("rtx3090", "--device", "");
  const model::Device& v100 = model::builtin_device("v100", "--device", "");
  const model::Hypothesis& truth = test::hyp("alg1");
  Recordings rec;
  write_recordings(rec, truth, d);
  const model::Scenario other = test::scenario(R"({"device": "v100", "kernels": [
    {"name": "k", "blocks": 160, "threads": 32, "regs": 32, "duration": 1}]})");
  REQUIRE(other.device.name == v100.name);
  const std::string other_file = rec.dir.write("other/v100.json", recorded("rec-v100", other, truth).to_json().dump(1));
  const std::vector<model::Hypothesis> candidates = {truth, with_selection_round_robin(truth)};
  const auto recordings = model::load_cases(rec.dir.path.string());
  const auto r = search::learn_from_recordings(candidates, d, recordings, {}, {});
  REQUIRE(r.skipped.size() == 1);
  CHECK(r.skipped[0].why == search::ReplaySkip::OtherDevice);
  CHECK(r.skipped[0].message.find(other_file) != std::string::npos);
  CHECK(r.skipped[0].message.find("v100") != std::string::npos);
  CHECK(r.steps.size() == 2);
  // Only recordings of another device: an error naming the flag and the file, not an empty answer.
  const auto only_other = model::load_cases(other_file);
  const auto e = test::error_of([&] { (void)search::learn_from_recordings(candidates, d, only_other, {}, {}); });
  CHECK(std::string(e.what()).find(other_file) != std::string::npos);
}

TEST_CASE("learning from recordings proposes corpus cases that split what the recordings left", "[learn][replay]") {
  const model::Device& d = model::builtin_device("rtx3090", "--device", "");
  const model::Hypothesis& truth = test::hyp("alg1");
  Recordings rec;
  write_recordings(rec, truth, d);
  std::vector<model::Hypothesis> candidates = model::neighbours(truth, 1);
  candidates.push_back(truth);
  const auto recordings = model::load_cases(rec.dir.path.string());
  const auto corpus = model::load_cases(test::source_path("corpus/synth"));
  const auto r = search::learn_from_recordings(candidates, d, recordings, corpus, {});
  REQUIRE(r.consistent_groups.size() > 1);
  REQUIRE(!r.campaign.empty());
  // Each proposed case splits the consistent groups it was chosen for, and the list runs smallest first.
  for (size_t i = 0; i < r.campaign.size(); ++i) {
    CHECK(r.campaign[i].class_sizes.size() >= 2);
    CHECK(!r.campaign[i].c.observation);
    if (i > 0) CHECK(r.campaign[i - 1].c.scenario.total_blocks() <= r.campaign[i].c.scenario.total_blocks());
  }
  CHECK(r.unsplit_groups < r.consistent_groups.size());
}

TEST_CASE("learning from the RTX 2080 Ti recordings agrees with judging each shipped hypothesis alone",
          "[learn][replay]") {
  const std::string path = test::shared_or_skip("external/ntbs/rtx2080ti.json");
  if (path.empty()) return;
  const model::Device& d = model::builtin_device("rtx2080ti", "--device", "");
  const auto recordings = model::load_cases(path);
  std::vector<model::Hypothesis> candidates;
  for (const auto& h : model::builtin_hypotheses())
    if (model::try_simulate(recordings.front().scenario, h)) candidates.push_back(h);
  const auto r = search::learn_from_recordings(candidates, d, recordings, {}, {});
  CHECK(!r.steps.empty());
  for (const auto& h : candidates) {
    bool passes = true;
    for (const auto& c : recordings) passes = passes && model::evaluate(c, h).at(model::Level::Exact) == model::Verdict::Pass;
    const bool kept = std::any_of(r.consistent.begin(), r.consistent.end(),
                                  [&](const model::Hypothesis& s) { return s.same_options(h); });
    INFO(h.name);
    CHECK(kept == passes);
  }
}

TEST_CASE("learning from recordings counts each recording a nearest candidate fails once", "[learn][replay]") {
  // The run stops at the first recording that refutes the last group; the nearest candidates are then judged on
  // every recording, the applied ones first. Each must count once: a recording applied out of folder order was
  // counted twice and another never, before.
  const model::Device& d = model::builtin_device("rtx3090", "--device", "");
  const model::Hypothesis truth = test::hyp("alg1");
  const model::Hypothesis rr = with_selection_round_robin(truth);
  std::vector<model::Case> recordings;
  const auto corpus = model::load_cases(test::source_path("corpus/synth"));
  int failing = 0;
  for (auto& c : search::device_cases(corpus, d)) {
    if (c.scenario.total_blocks() > 400) continue;
    recordings.push_back(recorded("rec-" + c.id, c.scenario, truth));
    if (recordings.size() == 6) break;
  }
  REQUIRE(recordings.size() == 6);
  for (const auto& c : recordings) failing += model::evaluate(c, rr).at(model::Level::Exact) == model::Verdict::Fail;
  REQUIRE(failing >= 1);
  REQUIRE(failing < 6);
  // A recording rr passes first, so that the one the run applies (the first that refutes) is not the first.
  std::stable_partition(recordings.begin(), recordings.end(), [&](const model::Case& c) {
    return model::evaluate(c, rr).at(model::Level::Exact) == model::Verdict::Pass;
  });
  const auto r = search::learn_from_recordings({rr}, d, recordings, {}, {});
  REQUIRE(r.consistent.empty());
  REQUIRE_FALSE(r.nearest.empty());
  CHECK(r.nearest.front().recordings_refuted == failing);
  CHECK(r.to_json()["outcome"] == "none-survives");
}

TEST_CASE("learning from recordings names the simplest of equally near candidates first", "[learn][replay]") {
  // When the recordings refute every candidate equally, the nearest list leads with a shipped hypothesis, then
  // the fewest option changes from alg1, whatever order the space listed them in.
  const model::Device& d = model::builtin_device("rtx3090", "--device", "");
  const model::Hypothesis alg1 = test::hyp("alg1");
  model::Hypothesis ignoring = alg1;  // acts as alg1 on kernels of more than 32 registers, yet is its own group
  ignoring.registers_ignore_at_or_below = 32;
  ignoring.name = model::composition_name(ignoring);
  const model::Hypothesis truth = with_selection_round_robin(alg1);
  std::vector<model::Case> recordings;
  for (auto& c : search::device_cases(model::load_cases(test::source_path("corpus/synth")), d)) {
    if (c.scenario.total_blocks() > 400) continue;
    bool many_regs = true;
    for (const auto& k : c.scenario.kernels) many_regs = many_regs && k.regs > 32;
    if (!many_regs) continue;
    model::Case rec = recorded("rec-" + c.id, c.scenario, truth);
    if (model::evaluate(rec, alg1).at(model::Level::Exact) != model::Verdict::Fail) continue;
    recordings.push_back(std::move(rec));
    break;
  }
  REQUIRE(recordings.size() == 1);
  for (const auto& c : recordings)
    REQUIRE(model::evaluate(c, ignoring).at(model::Level::Exact) == model::Verdict::Fail);
  const auto r = search::learn_from_recordings({ignoring, alg1}, d, recordings, {}, {});
  REQUIRE(r.consistent.empty());
  REQUIRE(r.nearest.size() == 2);
  CHECK(r.nearest[0].recordings_refuted == r.nearest[1].recordings_refuted);
  CHECK(r.nearest.front().hypothesis.name == "alg1");
}

namespace {

// Recordings of a composition no shipped hypothesis is (alg1 picking by round robin) on rtx3090, and the shipped
// hypotheses that can run them: none fits them all, so learning ranks its nearest.
struct NoneFits {
  const model::Device& d = model::builtin_device("rtx3090", "--device", "");
  std::vector<model::Case> recordings;
  std::vector<model::Hypothesis> candidates;
  NoneFits() {
    const model::Hypothesis truth = with_selection_round_robin(test::hyp("alg1"));
    for (auto& c : search::device_cases(model::load_cases(test::source_path("corpus/synth")), d)) {
      if (c.scenario.total_blocks() > 400) continue;
      recordings.push_back(recorded("rec-" + c.id, c.scenario, truth));
      if (recordings.size() == 10) break;
    }
    for (const auto& h : model::builtin_hypotheses())
      if (!h.same_options(truth) &&
          std::all_of(recordings.begin(), recordings.end(), [&](const model::Case& c) { return model::try_simulate(c.scenario, h).has_value(); }))
        candidates.push_back(h);
  }
};

}  // namespace

TEST_CASE("learning from recordings lists the nearest the recordings refute least and cuts the others short",
          "[learn][replay]") {
  // The nearest are judged a few groups at a time and a group refuted more often than the fifth best so far is
  // judged no further: the listed counts must still be the smallest of every candidate judged on every recording.
  NoneFits f;
  REQUIRE(f.candidates.size() > 8);
  std::vector<std::pair<int, size_t>> refuted;  // (recordings refuting it, candidate)
  for (size_t i = 0; i < f.candidates.size(); ++i) {
    int n = 0;
    for (const auto& c : f.recordings) {
      const model::CaseResult cr = model::evaluate(c, f.candidates[i]);
      n += cr.at(model::Level::Exact) == model::Verdict::Fail || !cr.ran ? 1 : 0;
    }
    refuted.emplace_back(n, i);
  }
  // The nearest first, so the later groups meet a bound and are cut short.
  std::stable_sort(refuted.begin(), refuted.end());
  std::vector<model::Hypothesis> nearest_first;
  for (const auto& [n, i] : refuted) nearest_first.push_back(f.candidates[i]);
  REQUIRE(refuted.front().first > 0);
  REQUIRE(refuted[4].first < refuted.back().first);
  search::ReplayLearnOptions o;
  o.split_sample = 2;  // the steps judge little beyond the groups they drop: the nearest stage judges the rest
  const auto r = search::learn_from_recordings(nearest_first, f.d, f.recordings, {}, o);
  REQUIRE(r.consistent.empty());
  REQUIRE(r.nearest.size() == 5);
  for (size_t i = 0; i < r.nearest.size(); ++i) {
    INFO(r.nearest[i].names.front());
    CHECK(r.nearest[i].recordings_refuted == refuted[i].first);
  }
  CHECK(r.evaluations < static_cast<int>(r.groups * f.recordings.size()));
}

TEST_CASE("learning from recordings gives the same answer and judgements on any number of threads", "[learn][replay]") {
  NoneFits f;
  search::ReplayLearnOptions one, two;
  one.jobs = 1;
  two.jobs = 2;
  const auto a = search::learn_from_recordings(f.candidates, f.d, f.recordings, {}, one);
  const auto b = search::learn_from_recordings(f.candidates, f.d, f.recordings, {}, two);
  REQUIRE_FALSE(a.nearest.empty());
  CHECK(a.to_json().dump() == b.to_json().dump());
  CHECK(a.evaluations == b.evaluations);
}
