// Learn's shared simulations: candidates a case cannot tell apart (model::options_on) share one simulation, and
// the learner gives the answer, by the same steps, of simulating every candidate on every case.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/effective.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/options.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/learn.hpp"
#include "tbcheck/search/learn_numeric.hpp"

using namespace tbcheck;

namespace {

const std::vector<model::Case>& paper_and_synth() {
  static const std::vector<model::Case> cases = [] {
    auto a = model::load_cases(test::source_path("corpus/paper/000-wang"));
    auto b = model::load_cases(test::source_path("corpus/synth"));
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }();
  return cases;
}

std::string sim_file(const model::Hypothesis& h) {
  const auto dir = std::filesystem::temp_directory_path() / "tbcheck-test-learn-sharing";
  std::filesystem::create_directories(dir);
  const auto path = (dir / (h.name + ".json")).string();
  model::write_file_atomic(path, h.to_json().dump(1) + "\n");
  return path;
}

search::LearnResult learn_with(const model::Hypothesis& truth, const model::Device& d, bool synthesize, bool share,
                               int jobs = 1) {
  search::LearnOptions o;
  o.jobs = jobs;
  o.oracle_spec = "sim:" + sim_file(truth);
  o.space = search::LearnSpace::Compositions;
  o.synthesize = synthesize;
  o.share_simulations = share;
  return search::learn(model::compositions_for(d), d, paper_and_synth(), o);
}

void check_same_answer(const search::LearnResult& every, const search::LearnResult& shared) {
  CHECK(shared.outcome == every.outcome);
  CHECK(shared.reason == every.reason);
  CHECK(shared.survivors == every.survivors);
  CHECK(shared.equivalence == every.equivalence);
  CHECK(shared.device_seconds == every.device_seconds);
  REQUIRE(shared.steps.size() == every.steps.size());
  for (size_t i = 0; i < every.steps.size(); ++i) {
    const auto &a = every.steps[i], &b = shared.steps[i];
    INFO("step " << a.index << ": " << a.case_id);
    CHECK(b.case_id == a.case_id);
    CHECK(b.purpose == a.purpose);
    CHECK(b.group_sizes == a.group_sizes);
    CHECK(b.groups == a.groups);
    CHECK(b.dropped_count == a.dropped_count);
    CHECK(b.dropped == a.dropped);
    CHECK(b.survivor_count == a.survivor_count);
    CHECK(b.survivors == a.survivors);
  }
  REQUIRE(shared.intervals.size() == every.intervals.size());
  for (size_t i = 0; i < every.intervals.size(); ++i) CHECK(shared.intervals[i].text() == every.intervals[i].text());
}

// A small random scenario that sets, now and then, each thing options_on reads: stream priorities, TPC masks,
// clusters, local memory, and register counts and shared memory on both sides of the thresholds.
model::Scenario random_scenario(const model::Device& d, std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1)); };
  static const std::vector<int> regs = {24, 32, 40, 64, 128, 255};
  model::Scenario s;
  s.device = d;
  const int kernels = pick(1, 3);
  for (int i = 0; i < kernels; ++i) {
    model::Kernel k;
    k.name = "k" + std::to_string(i + 1);
    k.threads = 32 * pick(1, 16);
    k.regs = std::min(regs[static_cast<size_t>(pick(0, static_cast<int>(regs.size()) - 1))], d.max_regs_per_thread);
    k.smem = pick(0, 3) == 0 ? 0 : 128 * pick(0, d.max_smem_per_block / 128 / 4);
    k.local = pick(0, 5) == 0 ? 512 * pick(1, 4) : 0;
    k.duration = pick(1, 3);
    k.blocks = pick(1, 2 * d.sms + 3);
    if (d.stream_priorities && pick(0, 3) == 0) k.priority = pick(d.stream_priorities->greatest, d.stream_priorities->least);
    if (d.tpcs() >= 2 && pick(0, 4) == 0) k.tpcs = {0, pick(1, d.tpcs() - 1)};
    if (d.has_clusters() && !d.gpc_of_tpc.empty() && pick(0, 4) == 0) {
      const int size = pick(1, 4);
      k.cluster = std::array<int, 3>{size, 1, 1};
      k.blocks = size * pick(1, 8);
    }
    s.kernels.push_back(k);
  }
  return s;
}

}  // namespace

TEST_CASE("options_on never merges candidates that a random scenario separates", "[learn][sharing]") {
  // Candidates from the device's composition space, with thresholds redrawn near the kernels' quantities so that
  // a threshold ignores some of a scenario's kernels and not others.
  int merged = 0, compared = 0;
  for (const char* name : {"rtx3090", "h100-sxm", "h100-sxm-assumed-gpcs"}) {
    const model::Device& d = model::builtin_device(name, "test", "device");
    const auto space = model::compositions_for(d);
    std::mt19937_64 rng(20261126);
    for (int n = 0; n < 40; ++n) {
      const model::Scenario s = random_scenario(d, rng);
      const model::ScenarioReach reach(s);
      std::map<std::string, std::vector<model::Hypothesis>> by_key;
      for (int c = 0; c < 300; ++c) {
        model::Hypothesis h = space[rng() % space.size()];
        if (h.registers_ignore_at_or_below && rng() % 2) h.registers_ignore_at_or_below = 24 + static_cast<int>(rng() % 120);
        if (h.smem_ignore_below && rng() % 2)
          h.smem_ignore_below = 128 * (1 + static_cast<int>(rng() % static_cast<uint64_t>(d.max_smem_per_block / 512)));
        by_key[model::option_key(model::options_on(model::effective_options(h, d), s, reach))].push_back(h);
      }
      for (const auto& [key, hs] : by_key)
        for (size_t i = 1; i < hs.size() && i < 4; ++i) {
          if (hs[i].same_options(hs[0])) continue;
          ++merged;
          const auto a = model::try_simulate(s, hs[0]), b = model::try_simulate(s, hs[i]);
          INFO(name << ": " << hs[0].name << " and " << hs[i].name << " on " << s.to_json().dump());
          REQUIRE(a.has_value() == b.has_value());
          if (!a) continue;
          ++compared;
          CHECK(search::same_placements(*a, *b));
        }
    }
  }
  // The property was exercised: many pairs of different options merged, most of them simulated.
  CHECK(merged > 1000);
  CHECK(compared > 500);
}

TEST_CASE("options_on separates hypotheses whose options a scenario exercises", "[learn][sharing]") {
  const model::Device& d = model::builtin_device("h100-sxm-assumed-gpcs", "test", "device");
  model::Scenario s;
  s.device = d;
  model::Kernel k;
  k.name = "k1";
  k.regs = 40;
  k.blocks = 4;
  k.cluster = std::array<int, 3>{2, 1, 1};
  s.kernels = {k};
  const model::ScenarioReach reach(s);
  auto key = [&](const model::Hypothesis& h) { return model::option_key(model::options_on(h, s, reach)); };
  model::Hypothesis a = test::hyp("alg1"), b = a;
  b.cluster_gpc = model::ClusterGpc::LowestIndex;
  CHECK(key(a) != key(b));  // the kernel is clustered
  b = a;
  b.registers_ignore_at_or_below = 40;
  CHECK(key(a) != key(b));  // ignores the kernel's 40 registers
  model::Hypothesis c = a;
  c.registers_ignore_at_or_below = 32;
  CHECK(key(a) == key(c));  // ignores none of them: as off
  c.registers_ignore_at_or_below = 64;
  CHECK(key(b) == key(c));  // ignores the same kernel as 40
  c = a;
  c.local = model::Local::GpuConfig;
  CHECK(key(a) == key(c));  // no local memory
  // option_key tells apart exactly what same_options does.
  CHECK(model::option_key(a) != model::option_key(b));
  b = a;
  b.name = "another name";
  CHECK(model::option_key(a) == model::option_key(b));
}

TEST_CASE("learn sharing simulations gives the steps and survivors of simulating every candidate", "[learn][sharing]") {
  const auto& alg1 = test::hyp("alg1");
  struct Run {
    model::Hypothesis truth;
    const char* device;
    bool synthesize;
  };
  std::vector<Run> runs;
  // Neither device has a GPC map: only compositions that can run there play it.
  const auto mapless = [](const model::Hypothesis& h) { return !model::needs_gpc_map(h); };
  for (const auto& h : model::sample_compositions(alg1, 5, 2, 2, 3, mapless)) runs.push_back({h, "rtx3090", false});
  for (const auto& h : model::sample_compositions(alg1, 9, 1, 2, 2, mapless)) runs.push_back({h, "h100-sxm", true});
  // A threshold off the enumerated values: refitted and bracketed, so candidates' options change mid-run.
  model::Hypothesis off = alg1;
  off.smem_ignore_below = 8192;
  off.name = model::composition_name(off);
  runs.push_back({off, "rtx3090", false});
  for (const auto& r : runs) {
    INFO(r.truth.name << " on " << r.device);
    const model::Device& d = model::builtin_device(r.device, "test", "device");
    const auto every = learn_with(r.truth, d, r.synthesize, false);
    const auto shared = learn_with(r.truth, d, r.synthesize, true);
    INFO(every.reason);
    CHECK(every.steps.size() > 2);
    check_same_answer(every, shared);
  }
}

TEST_CASE("learn on several threads gives the steps and survivors of one thread", "[learn][sharing][jobs]") {
  // Cases are classed for a split, and a sharpened split's moves judged, on worker threads; each worker cuts a
  // case against the best split any has finished, so which cases are cut depends on timing: the choice must not.
  const auto& alg1 = test::hyp("alg1");
  std::vector<std::pair<model::Hypothesis, const char*>> runs;
  const auto mapless = [](const model::Hypothesis& h) { return !model::needs_gpc_map(h); };  // neither has a GPC map
  for (const auto& h : model::sample_compositions(alg1, 5, 2, 2, 3, mapless)) runs.emplace_back(h, "rtx3090");
  for (const auto& h : model::sample_compositions(alg1, 9, 1, 2, 2, mapless)) runs.emplace_back(h, "h100-sxm");
  model::Hypothesis off = alg1;  // refitted and bracketed: sharpen_split moves kernels onto boundary values
  off.smem_ignore_below = 8192;
  off.name = model::composition_name(off);
  runs.emplace_back(off, "rtx3090");
  for (const auto& [truth, device] : runs) {
    INFO(truth.name << " on " << device);
    const model::Device& d = model::builtin_device(device, "test", "device");
    const auto one = learn_with(truth, d, false, true, 1);
    for (int jobs : {2, 4}) {
      INFO(jobs << " jobs");
      check_same_answer(one, learn_with(truth, d, false, true, jobs));
    }
  }
}
