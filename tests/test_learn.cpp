// Tests of search/learn.cpp: the refutation loop identifies each shipped hypothesis played by the simulated
// device, survives noise without dropping the truth, reports equivalence and open questions, and retargets cases.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "helpers.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
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

}  // namespace

TEST_CASE("learn identifies every shipped hypothesis played by sim on rtx3090", "[learn]") {
  const auto& dev = model::builtin_device("rtx3090", "test", "device");
  for (const auto& h : model::builtin_hypotheses()) {
    if (h.selection == model::Selection::GpcPriority) continue;  // needs a GPC map: tested on quadro6000 below
    INFO("device played by " << h.name);
    auto r = search::learn(model::builtin_hypotheses(), dev, paper_and_synth(), sim_options(h.name));
    CHECK(r.outcome == search::LearnOutcome::Identified);
    CHECK(r.survivors == std::vector<std::string>{h.name});
    CHECK(!r.steps.empty());
    // Every step split its survivors and dropped someone (no wasted oracle runs on a clean device).
    for (const auto& s : r.steps) {
      CHECK(s.groups.size() >= 2);
      CHECK(!s.dropped.empty());
      CHECK(!contains(s.dropped, h.name));
    }
  }
}

TEST_CASE("learn under noise uses the majority and never drops the true hypothesis", "[learn]") {
  const auto& dev = model::builtin_device("rtx3090", "test", "device");
  auto r = search::learn(model::builtin_hypotheses(), dev, paper_and_synth(), sim_options("alg1", 0.3, 5));
  CHECK(r.outcome == search::LearnOutcome::Identified);
  CHECK(r.survivors == std::vector<std::string>{"alg1"});
  const bool flagged = std::any_of(r.steps.begin(), r.steps.end(),
                                   [](const search::LearnStep& s) { return s.status == oracle::RunStatus::Unstable; });
  CHECK(flagged);  // at p = 0.3 over 5 repetitions some run is perturbed, and the step says so
  CHECK(r.oracle_runs == 5 * static_cast<int>(r.steps.size()));

  // Mostly noise: no majority, so nobody is dropped on those steps and the truth is still there.
  auto noisy = search::learn(model::builtin_hypotheses(), dev, paper_and_synth(), sim_options("alg1", 0.9, 3));
  CHECK(contains(noisy.survivors, "alg1"));
  for (const auto& s : noisy.steps) CHECK(!contains(s.dropped, "alg1"));
}

TEST_CASE("learn reports a hypothesis and its renamed copy as not split, and equivalent once Z3 proves it", "[learn]") {
  const auto& dev = model::builtin_device("rtx3090", "test", "device");
  model::Hypothesis copy = hyp("most-room");
  copy.name = "most-room-copy";
  auto r = search::learn({hyp("most-room"), copy, hyp("round-robin")}, dev, paper_and_synth(), sim_options("most-room"));
  CHECK(r.outcome == search::LearnOutcome::Undecided);  // synthesis off: nothing proved
  CHECK(r.survivors == std::vector<std::string>{"most-room", "most-room-copy"});
  CHECK(r.reason.find("most-room / most-room-copy: no unused corpus case splits them (synthesis off)") != std::string::npos);
  // With synthesis on a tiny bound, Z3 proves the copy inseparable (UNSAT), so they are equivalent within it.
  auto o = sim_options("most-room");
  o.synthesize = true;
  o.bounds.max_kernels = 1;
  o.bounds.max_blocks_per_kernel = 2;
  o.bounds.max_total_blocks = 2;
  o.bounds.reduced_tpcs = {1};
  auto p = search::learn({hyp("most-room"), copy}, dev, {}, o);
  CHECK(p.outcome == search::LearnOutcome::Equivalent);
  CHECK(p.survivors.size() == 2);
  CHECK(p.reason.find("inseparable") != std::string::npos);
}

TEST_CASE("learn reports an open question when the device is none of the hypotheses", "[learn]") {
  const auto& dev = model::builtin_device("rtx3090", "test", "device");
  auto r = search::learn({hyp("round-robin"), hyp("most-room")}, dev, paper_and_synth(), sim_options("alg1"));
  REQUIRE(r.outcome == search::LearnOutcome::NoneSurvives);
  REQUIRE(r.open_question.has_value());
  CHECK(r.survivors.empty());
  CHECK((r.closest == "round-robin" || r.closest == "most-room"));
  CHECK(r.open_question->observation->has_recording());
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
  CHECK(r.survivors.size() + r.not_applicable.size() == model::builtin_hypotheses().size());
  CHECK(r.not_applicable.size() == 1);  // fermi: rtx3090 has no GPC map
  CHECK(r.not_applicable[0].rfind("fermi: ", 0) == 0);
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

TEST_CASE("tbcheck learn prints the steps and exits 0 when it identifies the hypothesis", "[learn][cli]") {
  auto r = tbcheck::test::run_tbcheck("learn --device rtx3090 --oracle sim:alg1-no-skip --no-synthesis");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("identified: alg1-no-skip") != std::string::npos);
  CHECK(r.out.find("step 1:") != std::string::npos);
  auto bad = tbcheck::test::run_tbcheck("learn --device rtx3090 --oracle cuda --no-synthesis");
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.find("no-device") != std::string::npos);
}

TEST_CASE("learn identifies the Fermi scheduler on quadro6000 from seed 003's cases", "[learn][fermi]") {
  const auto& dev = model::builtin_device("quadro6000", "test", "device");
  auto corpus = model::load_cases(source_path("corpus/paper/003-pai"));
  auto r = search::learn(model::builtin_hypotheses(), dev, corpus, sim_options("fermi"));
  INFO(r.reason);
  CHECK(r.outcome == search::LearnOutcome::Identified);
  CHECK(r.survivors == std::vector<std::string>{"fermi"});
}
