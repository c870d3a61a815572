// Retiming CUDA-oracle recordings: retirements one model unit holds come apart in the GPU's order, the
// scenario scales with the unit, and what cannot be retimed is refused with the file and the field.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <set>

#include "helpers.hpp"
#include "tbcheck/model/compare.hpp"
#include "tbcheck/oracle/oracle.hpp"
#include "tbcheck/oracle/retime.hpp"

using namespace tbcheck;
using model::json;
using tbcheck::test::error_of;

namespace {

// The GPU's ns times of a run on the TX2's two SMs: k1's two blocks (40 KB of shared memory each, one per SM)
// on SMs 0 and 1, then k2's block on the SM that freed first. Block 1 ended 3 us before block 0; in 20 ms units both end at 1.
json gpu_times() {
  return {{"k1", {{"sm", {0, 1}}, {"start_ns", {0, 32}}, {"end_ns", {20003040, 20000032}}}},
          {"k2", {{"sm", {1}}, {"start_ns", {20001056}}, {"end_ns", {40001088}}}}};
}

// The case `tbcheck run --oracle cuda` writes for that run, its metadata keeping `kernels` as raw_ns.
json recording_json(const json& kernels) {
  json c = json::parse(R"({"id": "two-then-one.cuda", "device": "tx2", "kernels": [
      {"name": "k1", "blocks": 2, "threads": 256, "regs": 32, "smem": 40000, "duration": 1},
      {"name": "k2", "blocks": 1, "threads": 256, "regs": 32, "smem": 40000, "duration": 1}],
      "observation": {"kind": "hardware", "sm_of_block": {"k1": [0, 1], "k2": [1]},
        "start_of_block": {"k1": [0, 0], "k2": [1]}, "end_of_block": {"k1": [1, 1], "k2": [2]},
        "resolution": {"tick": 1, "launch_window": 0}},
      "expect": {"most-room": "pass"}})");
  const json m = {{"time_unit_ms", 20.0}, {"raw_ns", json::array({{{"origin_ns", 5000}, {"kernels", kernels}}})}};
  c["notes"] = "tbcheck run of two-then-one: ok over 1 repetition(s)";
  c["run"] = m;
  return c;
}

model::Case recording(const json& kernels = gpu_times()) {
  return model::case_from_json(recording_json(kernels), "two-then-one.cuda.json");
}

// The same run with a second repetition in which block 0 ended first, so k2 went to SM 0.
model::Case two_repetitions() {
  json c = recording_json(gpu_times());
  const json second = {{"k1", {{"sm", {0, 1}}, {"start_ns", {0, 32}}, {"end_ns", {20000064, 20004000}}}},
                       {"k2", {{"sm", {0}}, {"start_ns", {20001024}}, {"end_ns", {40001056}}}}};
  model::Case one = model::case_from_json(c, "two-then-one.cuda.json");
  one.run["raw_ns"].push_back({{"origin_ns", 9000}, {"kernels", second}});
  return one;
}

const model::Hypothesis& most_room() { return *model::find_builtin_hypothesis("most-room"); }

}  // namespace

TEST_CASE("retime orders the retirements a model unit tied as the GPU's timer saw them", "[oracle][retime]") {
  const model::Case c = recording();
  const model::Case r = oracle::retime_recording(c, 1000);
  CHECK(r.id == "two-then-one.cuda-1000ns");
  CHECK(r.scenario.kernels[0].duration == 20000);
  CHECK(r.scenario.kernels[1].duration == 20000);
  const model::Observation& o = *r.observation;
  CHECK(o.sm_of_block == c.observation->sm_of_block);
  CHECK(o.start_of_block.at("k1") == std::vector<int>{0, 0});
  CHECK(o.end_of_block.at("k1") == std::vector<int>{20003, 20000});
  CHECK(o.start_of_block.at("k2") == std::vector<int>{20001});
  CHECK(o.resolution->tick == 1);  // the timer's 32 ns step is below the new unit
  CHECK(r.expect.empty());         // expectations about the 20 ms recording do not carry over

  // Trace timing needs no unobserved order on the retimed recording; on the 20 ms one it must search the
  // tie of k1's two ends and name the order that reproduces the GPU's choice of SM 1.
  model::JudgeOptions trace;
  trace.timing = model::Timing::Trace;
  const model::CaseResult fine = model::evaluate(r, most_room(), trace);
  CHECK(fine.at(model::Level::Exact) == model::Verdict::Pass);
  CHECK(fine.orders[static_cast<size_t>(model::Level::Exact)].empty());
  const model::CaseResult coarse = model::evaluate(c, most_room(), trace);
  CHECK(coarse.at(model::Level::Exact) == model::Verdict::Pass);
  CHECK(coarse.orders[static_cast<size_t>(model::Level::Exact)].find("k1[1], k1[0]") != std::string::npos);

  // The metadata keeps the new unit: retiming again at the same unit changes no time, and a finer one scales.
  const model::Case again = oracle::retime_recording(r, 1000);
  CHECK(again.scenario.kernels[0].duration == 20000);
  CHECK(again.observation->end_of_block == o.end_of_block);
  const model::Case finer = oracle::retime_recording(r, 8);
  CHECK(finer.scenario.kernels[0].duration == 2500000);
  CHECK(finer.observation->end_of_block.at("k1") == std::vector<int>{2500380, 2500004});
  CHECK(finer.observation->resolution->tick == 4);  // the timer's 32 ns step is 4 units of 8 ns
  // A unit that does not divide the case's own (1000 ns now) is refused, though the ns times would allow it.
  CHECK(error_of([&] { oracle::retime_recording(r, 32); }).where() == "--unit-ns");
  // The written case loads back as it is.
  CHECK(model::case_from_json(r.to_json(), "r.json").to_json() == r.to_json());
}

TEST_CASE("retime refuses what it cannot do, naming the file and the field or the flag", "[oracle][retime]") {
  json plain = recording_json(gpu_times());
  plain["notes"] = "recorded by hand";
  plain.erase("run");
  auto e = error_of([&] { oracle::retime_recording(model::case_from_json(plain, "plain.json"), 1000); });
  CHECK(e.where() == "plain.json");
  CHECK(e.field() == "run");

  // A recording of the older form, its run metadata at the end of its notes, is read the same way.
  json no_raw = recording_json(gpu_times());
  no_raw.erase("run");
  no_raw["notes"] = "tbcheck run of x; metadata {\"time_unit_ms\": 20.0}";
  CHECK(error_of([&] { oracle::retime_recording(model::case_from_json(no_raw, "old.json"), 1000); }).field() ==
        "run.raw_ns");

  e = error_of([&] { oracle::retime_recording(recording(), 3000); });
  CHECK(e.where() == "--unit-ns");
  CHECK(e.reason().find("does not divide the run's time unit of 20000000 ns") != std::string::npos);
  CHECK(error_of([&] { oracle::retime_recording(recording(), 0); }).where() == "--unit-ns");

  json unfinished = gpu_times();
  unfinished["k1"]["end_ns"][0] = nullptr;  // the block did not finish: its record is empty
  e = error_of([&] { oracle::retime_recording(recording(unfinished), 1000); });
  CHECK(e.where() == "two-then-one.cuda.json");
  CHECK(e.field() == "run.raw_ns[0].kernels.k1.end_ns[0]");

  json missing = gpu_times();
  missing.erase("k2");
  CHECK(error_of([&] { oracle::retime_recording(recording(missing), 1000); }).field() ==
        "run.raw_ns[0].kernels.k2");
}

TEST_CASE("retime on an H200 recording: 20 ms blocks come out 20 ms long and their tied ends apart",
          "[oracle][retime]") {
  // A recording of the repository (corpus/hw), made on an H200 with the GPU's ns times kept.
  const auto cases =
      model::load_cases(test::source_path("corpus/hw/h200/2026-11-26-run3/h200-wave-one-per-sm-132.cuda.json"));
  REQUIRE(cases.size() == 1);
  const model::Case& c = cases[0];
  const model::Case r = oracle::retime_recording(c, 1000);
  const auto& k = r.scenario.kernels[0];
  REQUIRE(k.duration == 20000 * c.scenario.kernels[0].duration);
  const auto& starts = r.observation->start_of_block.at(k.name);
  const auto& ends = r.observation->end_of_block.at(k.name);
  for (size_t b = 0; b < ends.size(); ++b) {
    INFO("block " << b);
    CHECK(std::abs(ends[b] - starts[b] - k.duration) <= k.duration / 100);  // the spin ran its time
  }
  const auto& coarse = c.observation->end_of_block.at(k.name);
  CHECK(std::set<int>(coarse.begin(), coarse.end()).size() == 1);  // one instant in 20 ms units
  CHECK(std::set<int>(ends.begin(), ends.end()).size() > 1);  // apart on the GPU's timer
  CHECK(r.observation->sm_of_block == c.observation->sm_of_block);
}

TEST_CASE("retime takes any repetition the run kept, its SMs in the device's scheduler order", "[oracle][retime]") {
  const model::Case c = two_repetitions();
  CHECK(oracle::kept_repetitions(c) == 2);
  const model::Case second = oracle::retime_recording(c, 1000, 1);
  CHECK(second.id == "two-then-one.cuda-1000ns-rep2");
  CHECK(second.observation->sm_of_block.at("k2") == std::vector<int>{0});  // that repetition's SM, not the first's
  CHECK(second.observation->end_of_block.at("k1") == std::vector<int>{20000, 20004});
  model::JudgeOptions trace;
  trace.timing = model::Timing::Trace;
  CHECK(model::evaluate(second, most_room(), trace).at(model::Level::Exact) == model::Verdict::Pass);
  CHECK(error_of([&] { oracle::retime_recording(c, 1000, 2); }).where() == "--repetition");

  // A device with a measured SM order: the oracle's %smid is mapped through it, as the run mapped the
  // observation; a first repetition whose SMs are not the observation's is refused, not silently mixed.
  model::Case ordered = c;
  ordered.scenario.device.smid_of_sm = {1, 0};
  ordered.scenario.device_builtin = false;
  ordered.observation->sm_of_block = {{"k1", {1, 0}}, {"k2", {0}}};
  const model::Case first = oracle::retime_recording(ordered, 1000, 0);
  CHECK(first.observation->sm_of_block.at("k1") == std::vector<int>{1, 0});
  CHECK(oracle::retime_recording(ordered, 1000, 1).observation->sm_of_block.at("k2") == std::vector<int>{1});
  model::Case mixed = c;
  mixed.observation->sm_of_block["k2"] = {0};
  CHECK(error_of([&] { oracle::retime_recording(mixed, 1000, 0); }).field() ==
        "run.raw_ns[0].kernels.k2.sm");
}
