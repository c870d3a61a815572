// Tests of search/learn.cpp: the version space names the composition a simulated device plays (or says none
// fits), never a wrong one; list mode accepts only after confirmation; noise, open questions, retargeting.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "helpers.hpp"
#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/thresholds.hpp"
#include "tbcheck/search/learn_rules.hpp"
#include "tbcheck/search/learn.hpp"

using namespace tbcheck;
using tbcheck::test::hyp;
using tbcheck::test::source_path;

namespace {

const std::vector<model::Case>& paper_and_synth() {
  static const std::vector<model::Case> cases = [] {
    auto a = model::load_cases(source_path("corpus/paper/000-wang"));
    auto b = model::load_cases(source_path("corpus/synth"));
    a.insert(a.end(), b.begin(), b.end());
    auto t = model::load_cases(source_path("corpus/synth-tie-dependent"));
    a.insert(a.end(), t.begin(), t.end());
    // The recordings' single large grids are what separates alg1 from alg1-paired.
    if (const std::string ntbs = tbcheck::test::shared_path("external/ntbs"); std::filesystem::exists(ntbs)) {
      auto c = model::load_cases(ntbs);
      a.insert(a.end(), c.begin(), c.end());
    } else {
      WARN("../shared/external/ntbs is not present: learning from corpus/paper/000-wang and corpus/synth only");
    }
    return a;
  }();
  return cases;
}

search::LearnOptions sim_options(const std::string& h, double noise = 0.0, int reps = 1) {
  search::LearnOptions o;
  o.oracle_spec = "sim:" + h;
  o.noise = noise;
  o.repetitions = reps;
  o.synthesize = false;
  return o;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// A composition written where `sim:` can read it (the oracle takes a name or a file).
std::string sim_file(const model::Hypothesis& h) {
  const auto dir = std::filesystem::temp_directory_path() / "tbcheck-test-learn";
  std::filesystem::create_directories(dir);
  const auto path = (dir / (h.name + ".json")).string();
  model::write_file_atomic(path, h.to_json().dump(1) + "\n");
  return path;
}

model::Hypothesis alg1_with(const std::function<void(model::Hypothesis&)>& change) {
  model::Hypothesis h = hyp("alg1");
  change(h);
  h.name = model::composition_name(h);
  return h;
}

// The two devices of the learn acceptance: compositions near shipped ones that the list learner once named wrongly.
model::Hypothesis issue_device_1() {  // on rtx3090
  return alg1_with([](model::Hypothesis& h) {
    h.registers = model::Registers::PbContiguous;
    h.smem = model::Smem::Counted;
  });
}
model::Hypothesis issue_device_2() {  // on h100-sxm
  return alg1_with([](model::Hypothesis& h) {
    h.warps = model::Warps::PbAny;
    h.skip_on_multiple_of_4 = false;
    h.registers = model::Registers::PbContiguous;
  });
}

// Rule neighbours (search/learn_rules.hpp) are off unless asked for: the threshold tests protect bracketing, and
// separating a survivor from every rule of the bound costs Z3 time there without covering more of it.
search::LearnResult learn_space(const model::Hypothesis& truth, const std::string& device, bool synthesize = true,
                                int rule_keys = 0) {
  const auto& dev = model::builtin_device(device, "test", "device");
  auto o = sim_options(sim_file(truth));
  o.space = search::LearnSpace::Compositions;
  o.synthesize = synthesize;
  o.rule_neighbour_keys = rule_keys;
  return search::learn(model::all_compositions(), dev, paper_and_synth(), o);
}

// The shipped hypotheses that are h's machine on a device without a stream priority range
// (alg1 and alg1-priority differ only in `priority`), in the shipped order.
std::vector<std::string> same_machine_without_priorities(const model::Hypothesis& h) {
  std::vector<std::string> out;
  for (auto g : model::builtin_hypotheses()) {
    const std::string name = g.name;
    g.priority = h.priority;
    if (g.same_options(h)) out.push_back(name);
  }
  return out;
}

}  // namespace

TEST_CASE("the list learner names each shipped hypothesis played by sim only after confirming it", "[learn]") {
  const auto& dev = model::builtin_device("rtx3090", "test", "device");
  for (const auto& h : model::builtin_hypotheses()) {
    if (model::needs_gpc_map(h)) continue;  // rtx3090 has no GPC map (fermi is tested on quadro6000 below)
    INFO("device played by " << h.name);
    auto r = search::learn(model::builtin_hypotheses(), dev, paper_and_synth(), sim_options(h.name));
    INFO(r.reason);
    const auto same = same_machine_without_priorities(h);  // rtx3090 has no priority range
    CHECK(r.survivors == same);
    // Synthesis off: identified only when the corpus separates every neighbour, else unconfirmed.
    REQUIRE((r.outcome == search::LearnOutcome::Identified || r.outcome == search::LearnOutcome::Unconfirmed));
    REQUIRE(r.confirmation.has_value());
    CHECK(r.confirmation->survivor == same.front());
    // Its neighbours, less those that cannot run on a device without a GPC map (gpc-priority, tpc-position).
    const auto all = model::neighbours(test::hyp(same.front()), 2);
    // ... and its selection as each rule of the default bound (search/learn_rules.hpp).
    CHECK(r.confirmation->neighbours.size() ==
          static_cast<size_t>(std::count_if(all.begin(), all.end(), [](const model::Hypothesis& n) {
            return !model::needs_gpc_map(n);
          })) + search::rule_neighbours(test::hyp(same.front()), dev, search::LearnOptions{}.rule_neighbour_keys).size());
    CHECK((r.outcome == search::LearnOutcome::Identified) == r.confirmation->not_separated().empty());
    CHECK(r.reason.find("agrees with") != std::string::npos);
    CHECK(!r.steps.empty());
    for (const auto& s : r.steps) {
      CHECK(!contains(s.dropped, h.name));
      if (s.purpose == search::StepPurpose::Split) {  // a splitting step splits and drops someone on a clean device
        CHECK(s.groups.size() >= 2);
        CHECK(!s.dropped.empty());
      } else if (s.purpose == search::StepPurpose::Confirm) {
        CHECK(!s.confirms.empty());
      } else {  // bracketing a threshold: a boundary case built for it
        CHECK(s.case_id.rfind("boundary-", 0) == 0);
      }
    }
    // Every neighbour the report calls separated is contradicted by the observed case it names.
    for (const auto& n : r.confirmation->neighbours)
      if (n.verdict == search::NeighbourVerdict::Separated) CHECK(!n.case_id.empty());
  }
}

TEST_CASE("learn acceptance: the list learner never names alg1-contiguous-regs for a device with counted shared memory", "[learn]") {
  const auto& dev = model::builtin_device("rtx3090", "test", "device");
  auto r = search::learn(model::builtin_hypotheses(), dev, paper_and_synth(), sim_options(sim_file(issue_device_1())));
  INFO(r.reason);
  CHECK(r.outcome != search::LearnOutcome::Identified);
  CHECK(search::grade_answer(r, issue_device_1()) != search::AnswerGrade::Wrong);
  // Confirming alg1-contiguous-regs against its neighbour with counted shared memory runs paper case 4.2,
  // which refutes it: none fits, and the open question is that case.
  REQUIRE(r.outcome == search::LearnOutcome::NoneSurvives);
  REQUIRE(r.open_question.has_value());
  CHECK(r.open_question->id == "open-case-4.2");
  CHECK(r.steps.back().purpose == search::StepPurpose::Confirm);
}

TEST_CASE("learn acceptance: the list learner never names alg1-pb-any on h100-sxm for pb-any with contiguous registers", "[learn]") {
  const auto& dev = model::builtin_device("h100-sxm", "test", "device");
  auto r = search::learn(model::builtin_hypotheses(), dev, paper_and_synth(), sim_options(sim_file(issue_device_2())));
  INFO(r.reason);
  CHECK(r.outcome != search::LearnOutcome::Identified);
  CHECK(search::grade_answer(r, issue_device_2()) != search::AnswerGrade::Wrong);
  CHECK(r.outcome == search::LearnOutcome::NoneSurvives);
}

TEST_CASE("learn acceptance: the composition space names both devices of the learn acceptance", "[learn][compositions]") {
  for (auto [truth, device] : {std::pair(issue_device_1(), "rtx3090"), std::pair(issue_device_2(), "h100-sxm")}) {
    INFO(truth.name << " on " << device);
    auto r = learn_space(truth, device, true, search::LearnOptions{}.rule_neighbour_keys);  // as a user runs it
    INFO(r.reason);
    CHECK(search::grade_answer(r, truth) == search::AnswerGrade::Named);
    CHECK(r.space == search::LearnSpace::Compositions);
    CHECK(r.candidates > 1000);
    // Settled mechanisms carry the truth's value and the case that settled them.
    const auto j = truth.to_json();
    for (const auto& m : r.mechanisms) {
      if (m.state != search::Settledness::Settled) continue;
      // A threshold is settled as an interval at the device's granularity, holding the truth's value.
      bool threshold = false;
      for (const auto& iv : r.intervals)
        if (iv.option.key == m.mechanism) {
          threshold = true;
          CHECK(iv.cuts() == 1);
          CHECK(iv.contains(model::threshold_of(truth, iv.option)));
          CHECK(contains(m.values, iv.range_text()));
        }
      if (threshold) continue;
      const auto& v = j[m.mechanism];
      CHECK(contains(m.values, v.is_string() ? v.get<std::string>() : v.is_null() ? "off" : v.dump()));
    }
  }
}

TEST_CASE("learn over the composition space never names a wrong composition (seeded sample)", "[learn][compositions]") {
  // A fast subset of the acceptance run (scripts/long.sh runs 24): seed 13, one composition two or three
  // changes from alg1 per device.
  const auto& alg1 = hyp("alg1");
  for (const char* device : {"rtx3090", "h100-sxm"}) {
    for (const auto& truth : model::sample_compositions(alg1, 13, 1, 2, 3, [](const model::Hypothesis& h) {
           return !model::needs_gpc_map(h);  // neither device has a GPC map
         })) {
      INFO(truth.name << " on " << device);
      auto r = learn_space(truth, device);
      INFO(r.reason);
      const auto g = search::grade_answer(r, truth);
      CHECK(g != search::AnswerGrade::Wrong);
      CHECK((g == search::AnswerGrade::Named || g == search::AnswerGrade::NoneFits));
      if (g == search::AnswerGrade::Named) {
        REQUIRE(r.confirmation.has_value());
        CHECK(r.confirmation->not_separated().empty());
      }
    }
  }
}

TEST_CASE("learn under noise uses the majority and never drops the true hypothesis", "[learn]") {
  const auto& dev = model::builtin_device("rtx3090", "test", "device");
  auto r = search::learn(model::builtin_hypotheses(), dev, paper_and_synth(), sim_options("alg1", 0.3, 5));
  CHECK(r.survivors == same_machine_without_priorities(test::hyp("alg1")));  // alg1, alg1-priority
  CHECK(r.outcome != search::LearnOutcome::NoneSurvives);
  const bool flagged = std::any_of(r.steps.begin(), r.steps.end(),
                                   [](const search::LearnStep& s) { return s.status == oracle::RunStatus::Unstable; });
  CHECK(flagged);  // at p = 0.3 over 5 repetitions some run is perturbed, and the step says so
  CHECK(r.oracle_runs == 5 * static_cast<int>(r.steps.size()));

  // Mostly noise: no majority, so nobody is dropped on those steps and the truth is still there.
  auto noisy = search::learn(model::builtin_hypotheses(), dev, paper_and_synth(), sim_options("alg1", 0.9, 3));
  CHECK(contains(noisy.survivors, "alg1"));
  for (const auto& s : noisy.steps) CHECK(!contains(s.dropped, "alg1"));
}

TEST_CASE("learn groups candidates that are one machine on the device and never splits them", "[learn]") {
  const auto& dev = model::builtin_device("rtx3090", "test", "device");
  model::Hypothesis copy = hyp("most-room");
  copy.name = "most-room-copy";
  // paired-cc8 is paired on a compute capability 8.6 device: the same machine with other options.
  model::Hypothesis cc8 = hyp("alg1-paired");
  cc8.issue = model::Issue::PairedCc8;
  cc8.name = "alg1-paired-cc8";
  auto r = search::learn({hyp("most-room"), copy, hyp("round-robin"), hyp("alg1-paired"), cc8}, dev, paper_and_synth(),
                         sim_options("alg1-paired"));
  CHECK(r.survivors == std::vector<std::string>{"alg1-paired", "alg1-paired-cc8"});
  REQUIRE(r.equivalence.size() == 1);
  CHECK(r.equivalence[0].size() == 2);
  for (const auto& s : r.steps) CHECK(contains(s.dropped, "most-room") == contains(s.dropped, "most-room-copy"));
}

TEST_CASE("learn splits the PB warp rules under SM-pooled registers and groups pb-any with sm", "[learn]") {
  // The four warp placements once registers are one SM pool: the corpus splits none of them (the learn acceptance's
  // undecided runs); the PB-hole search splits the strict round-robin ones, and pb-any is one machine with sm.
  auto pooled = [](model::Warps w, bool skip) {
    return alg1_with([&](model::Hypothesis& h) {
      h.registers = model::Registers::Sm;
      h.warps = w;
      h.skip_on_multiple_of_4 = skip;
    });
  };
  const std::vector<model::Hypothesis> four = {pooled(model::Warps::PbStrictRR, true), pooled(model::Warps::PbStrictRR, false),
                                               pooled(model::Warps::Sm, false), pooled(model::Warps::PbAny, false)};
  for (const char* device : {"rtx3090", "h100-sxm"}) {
    const auto& dev = model::builtin_device(device, "test", "device");
    for (size_t t = 0; t < 3; ++t) {
      INFO(four[t].name << " on " << device);
      auto o = sim_options(sim_file(four[t]));
      o.synthesize = true;
      o.confirm = false;  // the split is under test here; confirmation has its own tests
      auto r = search::learn(four, dev, paper_and_synth(), o);
      INFO(r.reason);
      REQUIRE(r.equivalence.size() == 1);
      if (t < 2) {
        CHECK(r.survivors == std::vector<std::string>{four[t].name});
      } else {
        CHECK(r.survivors == std::vector<std::string>{four[2].name, four[3].name});
      }
      const bool by_pb_hole = std::any_of(r.steps.begin(), r.steps.end(), [](const search::LearnStep& s) {
        return s.origin.find("PB-hole search") != std::string::npos;
      });
      CHECK(by_pb_hole);
      // pb-any is never split from sm: they are one group from the start, by the state check.
      for (const auto& s : r.steps) CHECK(contains(s.dropped, four[2].name) == contains(s.dropped, four[3].name));
    }
  }
}

TEST_CASE("the list learner confirms olmedo: PB warp neighbours separated, pb-any proved equivalent", "[learn]") {
  // Before the PB-hole search, olmedo's neighbours with a PB warp rule stayed open (unconfirmed).
  const auto& dev = model::builtin_device("rtx3090", "test", "device");
  auto o = sim_options("olmedo");
  o.synthesize = true;
  auto r = search::learn(model::builtin_hypotheses(), dev, paper_and_synth(), o);
  INFO(r.reason);
  REQUIRE(r.confirmation.has_value());
  CHECK(r.outcome == search::LearnOutcome::Identified);
  CHECK(r.confirmation->not_separated().empty());
  // The one neighbour that differs only in warps: pb-any, proved equivalent by the state check.
  size_t pb_any = 0;
  for (const auto& n : r.confirmation->neighbours) {
    if (n.differences.size() != 1 || n.differences[0].rfind("warps:", 0) != 0) continue;
    if (n.name.find("warps=pb-any") == std::string::npos) continue;
    CHECK(n.verdict == search::NeighbourVerdict::Equivalent);
    CHECK_THAT(n.detail, Catch::Contains("pb-any acts as sm"));
    ++pb_any;
  }
  CHECK(pb_any == 1);
  // Some neighbour with strict round-robin warps is separated by the PB-hole search's witness.
  const bool by_witness = std::any_of(r.confirmation->neighbours.begin(), r.confirmation->neighbours.end(), [](const auto& n) {
    const bool rr = std::any_of(n.differences.begin(), n.differences.end(),
                                [](const std::string& d) { return d.find("pb-strict-rr") != std::string::npos; });
    return rr && n.verdict == search::NeighbourVerdict::Separated && n.case_id.rfind("simulated-witness", 0) == 0;
  });
  CHECK(by_witness);
}

TEST_CASE("learn reports an open question when the device is none of the hypotheses", "[learn]") {
  const auto& dev = model::builtin_device("rtx3090", "test", "device");
  auto r = search::learn({hyp("round-robin"), hyp("most-room")}, dev, paper_and_synth(), sim_options("alg1"));
  REQUIRE(r.outcome == search::LearnOutcome::NoneSurvives);
  REQUIRE(r.open_question.has_value());
  CHECK(r.survivors.empty());
  CHECK((r.closest == "round-robin" || r.closest == "most-room"));
  CHECK(r.open_question->observation->has_recording());
  // How close each came: both listed, nearest first, with the first case each fails and where.
  REQUIRE(r.nearest.size() == 2);
  for (const auto& n : r.nearest) {
    CHECK(n.cases_refuted >= 1);
    CHECK(!n.first_case.empty());
    CHECK(!n.where.empty());
  }
  CHECK(r.nearest[0].cases_refuted <= r.nearest[1].cases_refuted);
}

TEST_CASE("learn refuses replay and reports no-device for cuda without a GPU", "[learn]") {
  const auto& dev = model::builtin_device("rtx3090", "test", "device");
  search::LearnOptions o;
  o.oracle_spec = "replay";
  CHECK_THROWS_AS(search::learn(model::builtin_hypotheses(), dev, paper_and_synth(), o), model::InputError);
  o.oracle_spec = "cuda";
  o.synthesize = false;
  auto r = search::learn(model::builtin_hypotheses(), dev, paper_and_synth(), o);
  CHECK(r.outcome == search::LearnOutcome::NoDevice);
  CHECK(!r.reason.empty());
  CHECK(!r.confirmation.has_value());
  CHECK(r.survivors.size() + r.not_applicable.size() == model::builtin_hypotheses().size());
  REQUIRE(r.not_applicable.size() == 2);  // fermi and hopper: rtx3090 has no GPC map
  CHECK(r.not_applicable[0].rfind("fermi: ", 0) == 0);
  CHECK(r.not_applicable[1].rfind("hopper: ", 0) == 0);
}

TEST_CASE("retarget scales blocks by the TPC count and refuses what does not divide", "[learn]") {
  auto cases = model::load_cases(source_path("corpus/paper/000-wang/case-1.1.json"));
  REQUIRE(cases.size() == 1);
  const auto& s = cases[0].scenario;  // rtx3090: 41 TPCs, kernels of 41 / 82 blocks
  const auto& h100 = model::builtin_device("h100-sxm", "test", "device");
  auto moved = search::retarget(s, h100);
  REQUIRE(moved.has_value());
  CHECK(moved->device.name == "h100-sxm");
  REQUIRE(s.kernels.size() == 3);
  CHECK(moved->kernels[0].blocks == 66);  // 41 -> 66: one block per TPC stays one per TPC
  CHECK(moved->kernels[1].blocks == 66);
  CHECK(moved->kernels[2].blocks == 1);  // the probe kernel keeps its single block
  CHECK(search::retarget(s, s.device)->total_blocks() == s.total_blocks());
  auto big = tbcheck::test::scenario(R"({"device": "h100-sxm", "kernels": [{"name": "k", "blocks": 132, "threads": 32,
      "regs": 32, "smem": 200000, "duration": 1}]})");
  const auto& v100 = model::builtin_device("v100", "test", "device");
  CHECK(!search::retarget(big, v100).has_value());  // 200000 B of shared memory does not fit a V100 block
}

TEST_CASE("tbcheck learn prints the steps, the confirmation and the mechanisms, and writes the consistent set", "[learn][cli]") {
  const auto out = std::filesystem::temp_directory_path() / "tbcheck-test-learn-out";
  std::filesystem::remove_all(out);
  auto r = tbcheck::test::run_tbcheck("learn --device rtx3090 --oracle sim:alg1-no-skip --out " + out.string());
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("identified: alg1-no-skip") != std::string::npos);
  CHECK(r.out.find("step 1 (split):") != std::string::npos);
  CHECK(r.out.find("agrees with") != std::string::npos);
  CHECK(r.out.find("skip_on_multiple_of_4          settled  false") != std::string::npos);
  CHECK(std::filesystem::exists(out / "alg1-no-skip.json"));
  CHECK(model::load_hypothesis_file((out / "alg1-no-skip.json").string()).same_options(hyp("alg1-no-skip")));
  auto list = tbcheck::test::run_tbcheck("learn --device rtx3090 --oracle sim:alg1-no-skip --hypotheses all --no-synthesis --json");
  auto j = nlohmann::json::parse(list.out);
  CHECK(j["space"] == "list");
  CHECK(j["confirmation"]["survivor"] == "alg1-no-skip");
  CHECK((j["outcome"] == "identified" || j["outcome"] == "unconfirmed"));
  CHECK(list.exit_code == (j["outcome"] == "identified" ? 0 : 1));
  auto bad = tbcheck::test::run_tbcheck("learn --device rtx3090 --oracle cuda --hypotheses all --no-synthesis");
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.find("no-device") != std::string::npos);
}

TEST_CASE("learn names the Fermi scheduler on quadro6000 from seed 003's cases", "[learn][fermi]") {
  const auto& dev = model::builtin_device("quadro6000", "test", "device");
  auto corpus = model::load_cases(source_path("corpus/paper/003-pai"));
  auto r = search::learn(model::builtin_hypotheses(), dev, corpus, sim_options("fermi"));
  INFO(r.reason);
  CHECK((r.outcome == search::LearnOutcome::Identified || r.outcome == search::LearnOutcome::Unconfirmed));
  CHECK(r.survivors == std::vector<std::string>{"fermi"});
}

// Without corpus and synthesis nothing splits the composition space: thousands of groups, millions of
// pairs. The result keeps their count but lists a bounded number, so memory and output stay small.
TEST_CASE("learn lists a bounded number of open pairs and counts them all", "[learn]") {
  const auto& dev = model::builtin_device("rtx3090", "test", "device");
  search::LearnOptions o = sim_options("alg1");
  o.space = search::LearnSpace::Compositions;
  auto r = search::learn(model::compositions_for(dev), dev, {}, o);
  CHECK(r.outcome == search::LearnOutcome::Undecided);
  const size_t groups = r.equivalence.size();
  REQUIRE(groups > 100);
  CHECK(r.open_pair_count == groups * (groups - 1) / 2);
  CHECK(r.open_pairs.size() == search::kListedOpenPairs);
  CHECK_THAT(r.reason, Catch::Contains(std::to_string(r.open_pair_count) + " pair(s) open"));
  CHECK(r.to_json()["open_pair_count"] == r.open_pair_count);
}

TEST_CASE("learn brackets a shared-memory threshold outside the enumerated values and never names 3072", "[learn][numeric]") {
  // The enumerated space samples the threshold at off and 3072; the device has 8192.
  const auto truth = alg1_with([](model::Hypothesis& h) { h.smem_ignore_below = 8192; });
  auto r = learn_space(truth, "rtx3090");
  INFO(r.reason);
  CHECK(r.outcome == search::LearnOutcome::Identified);
  CHECK(search::grade_answer(r, truth) == search::AnswerGrade::Named);
  for (const auto& h : r.consistent) CHECK(h.smem_ignore_below != 3072);
  bool found = false;
  for (const auto& iv : r.intervals)
    if (iv.option.key == "smem_ignore_below") {
      found = true;
      CHECK(iv.range_text() == "in (8064, 8192] B");
      CHECK(iv.cuts() == 1);
    } else {
      CHECK(iv.contains(std::nullopt));  // the register threshold: off, as the truth's
    }
  CHECK(found);
  CHECK(r.scope.find("among") != std::string::npos);
  bool bracketed = false;
  for (const auto& s : r.steps) bracketed = bracketed || s.purpose == search::StepPurpose::Bracket;
  CHECK(bracketed);
}

TEST_CASE("learn asks the boundary question of a threshold the space names and a folded question rides only on a split", "[learn][numeric]") {
  const auto truth = alg1_with([](model::Hypothesis& h) { h.smem_ignore_below = 3072; });
  auto r = learn_space(truth, "rtx3090");
  INFO(r.reason);
  CHECK(r.outcome == search::LearnOutcome::Identified);
  CHECK(search::grade_answer(r, truth) == search::AnswerGrade::Named);
  for (const auto& iv : r.intervals)
    if (iv.option.key == "smem_ignore_below") CHECK(iv.range_text() == "in (2944, 3072] B");
  // The question is asked: folded into a split that ran anyway where the split allows it (then it is a
  // split with groups of its own), else as a bracket step.
  int folded = 0, bracket = 0;
  for (const auto& s : r.steps) {
    bracket += s.purpose == search::StepPurpose::Bracket;
    if (s.case_id.size() > 9 && s.case_id.compare(s.case_id.size() - 9, 9, "+boundary") == 0) {
      ++folded;
      CHECK(s.purpose == search::StepPurpose::Split);
      CHECK(s.group_sizes.size() >= 2);
    }
  }
  CHECK(folded + bracket >= 1);
  CHECK(folded <= 1);
}

TEST_CASE("learn brackets a threshold the space names within the splits it runs", "[learn][numeric]") {
  const auto truth = alg1_with([](model::Hypothesis& h) { h.smem_ignore_below = 3072; });
  auto r = learn_space(truth, "rtx3090");
  INFO(r.reason);
  REQUIRE(r.outcome == search::LearnOutcome::Identified);
  for (const auto& iv : r.intervals)
    if (iv.option.key == "smem_ignore_below") CHECK(iv.range_text() == "in (2944, 3072] B");
  // The questions rode on splits (their kernels' quantities moved onto the boundary, or boundary kernels
  // following them), each still a split with groups of its own, and no step was spent on a boundary case alone.
  int carried = 0;
  for (const auto& s : r.steps) {
    CHECK(s.purpose != search::StepPurpose::Bracket);
    const bool sharpened = s.case_id.find("-sharpened") != std::string::npos;
    const bool folded = s.case_id.size() > 9 && s.case_id.compare(s.case_id.size() - 9, 9, "+boundary") == 0;
    if (sharpened || folded) {
      ++carried;
      CHECK(s.purpose == search::StepPurpose::Split);
      CHECK(s.group_sizes.size() >= 2);
    }
  }
  CHECK(carried >= 1);
}

TEST_CASE("thresholds learned through moved and folded splits hold the device's value between the probe values", "[learn][numeric]") {
  // 3100 B and 36 registers lie strictly between the values a boundary question asks about: an interval read
  // from a split whose quantities were moved must still hold them, one step of the granularity wide.
  struct Truth {
    model::Hypothesis h;
    std::string option, range;
    int value;
  };
  const std::vector<Truth> truths = {
      {alg1_with([](model::Hypothesis& h) { h.smem_ignore_below = 3100; }), "smem_ignore_below", "in (3072, 3200] B", 3100},
      {alg1_with([](model::Hypothesis& h) { h.registers_ignore_at_or_below = 36; }), "registers_ignore_at_or_below",
       "in [32, 39] registers per thread", 36}};
  for (const auto& t : truths) {
    auto r = learn_space(t.h, "rtx3090");
    INFO(t.h.name << ": " << r.reason);
    CHECK(search::grade_answer(r, t.h) != search::AnswerGrade::Wrong);
    bool found = false;
    for (const auto& iv : r.intervals) {
      if (iv.option.key != t.option) continue;
      found = true;
      CHECK(iv.contains(t.value));
      CHECK(iv.range_text() == t.range);
    }
    CHECK((found || r.outcome != search::LearnOutcome::Identified));
  }
}

TEST_CASE("a folded boundary question the device answers against the space's value is bracketed further", "[learn][numeric]") {
  // One step of 128 B above the space's 3072: the question asked for 3072 finds both values ignored.
  const auto truth = alg1_with([](model::Hypothesis& h) { h.smem_ignore_below = 3200; });
  auto r = learn_space(truth, "rtx3090");
  INFO(r.reason);
  CHECK(search::grade_answer(r, truth) != search::AnswerGrade::Wrong);
  CHECK(r.outcome == search::LearnOutcome::Identified);
  bool found = false;
  for (const auto& iv : r.intervals)
    if (iv.option.key == "smem_ignore_below") {
      found = true;
      CHECK(iv.contains(3200));
      CHECK_FALSE(iv.contains(3072));
      CHECK(iv.range_text() == "in (3072, 3200] B");
    }
  CHECK(found);
  for (const auto& h : r.consistent) CHECK(h.smem_ignore_below != 3072);
}

TEST_CASE("learn finds a register threshold that no enumerated value fits instead of saying none fits", "[learn][numeric]") {
  const auto truth = alg1_with([](model::Hypothesis& h) { h.registers_ignore_at_or_below = 64; });
  // Its confirmation needs Z3 answers that a loaded machine's 2 s per query sometimes leaves unknown (then one
  // pair stays open): wall-clock budgets that hold under load, so the test judges learn, not the load.
  const auto& dev = model::builtin_device("rtx3090", "test", "device");
  auto o = sim_options(sim_file(truth));
  o.space = search::LearnSpace::Compositions;
  o.synthesize = true;
  o.bounds.timeout_ms = 20000;
  o.bounds.pair_budget_ms = 60000;
  o.synthesis_budget_s = 600;
  auto r = search::learn(model::all_compositions(), dev, paper_and_synth(), o);
  INFO(r.reason);
  CHECK(r.outcome == search::LearnOutcome::Identified);
  CHECK(search::grade_answer(r, truth) == search::AnswerGrade::Named);
  for (const auto& iv : r.intervals)
    if (iv.option.key == "registers_ignore_at_or_below") CHECK(iv.range_text() == "in [64, 71] registers per thread");
}

TEST_CASE("learn stopped while bracketing a threshold claims no point value", "[learn][numeric]") {
  const auto truth = alg1_with([](model::Hypothesis& h) { h.smem_ignore_below = 8192; });
  const auto& dev = model::builtin_device("rtx3090", "test", "device");
  auto o = sim_options(sim_file(truth));
  const std::vector<model::Hypothesis> one = {alg1_with([](model::Hypothesis& h) { h.smem_ignore_below = 3072; })};
  auto r = search::learn(one, dev, paper_and_synth(), o);
  INFO(r.reason);
  CHECK(search::grade_answer(r, truth) != search::AnswerGrade::Wrong);
  int first_bracket = 0;
  for (const auto& s : r.steps)
    if (s.purpose == search::StepPurpose::Bracket && first_bracket == 0) first_bracket = s.index;
  REQUIRE(first_bracket > 0);
  o.max_steps = first_bracket;  // one boundary case: 3072 is refuted, 8192 not yet reached
  auto cut = search::learn(one, dev, paper_and_synth(), o);
  INFO(cut.reason);
  CHECK(cut.outcome != search::LearnOutcome::Identified);
  CHECK(cut.outcome != search::LearnOutcome::Equivalent);
  CHECK(search::grade_answer(cut, truth) != search::AnswerGrade::Wrong);
}
