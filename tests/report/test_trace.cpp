// Tests of the Chrome trace export: one complete event per block with the right times, a named
// track for every SM, no overlapping events on one track (Perfetto would drop them), valid JSON.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "helpers.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/report/trace.hpp"

using namespace tbcheck;
using namespace tbcheck::model;
using nlohmann::json;

namespace {

Scenario mini_scenario() {
  return test::scenario(R"({"device": {"name": "mini-ampere-2", "cc": "8.6", "sms": 2, "sms_per_tpc": 2,
    "pbs_per_sm": 4, "max_blocks_per_sm": 16, "max_warps_per_sm": 48, "max_threads_per_block": 1024,
    "regs_per_sm": 65536, "reg_alloc_unit": 256, "max_regs_per_thread": 255,
    "smem_configs_kb": [0, 8, 16, 32, 64, 100], "smem_alloc_unit": 128,
    "smem_reserved_per_block": 1024, "max_smem_per_block": 101376},
    "kernels": [
    {"name": "k1", "blocks": 5, "threads": 256, "regs": 32, "duration": 3},
    {"name": "k2", "blocks": 4, "threads": 128, "regs": 32, "duration": 1},
    {"name": "k\"3", "blocks": 3, "threads": 64, "regs": 32, "duration": 2}]})");
}

std::vector<json> events_with(const json& trace, const std::string& ph) {
  std::vector<json> out;
  for (const auto& e : trace.at("traceEvents"))
    if (e.at("ph") == ph) out.push_back(e);
  return out;
}

std::map<int, std::string> thread_names(const json& trace) {
  std::map<int, std::string> out;
  for (const auto& e : events_with(trace, "M"))
    if (e.at("name") == "thread_name") out[e.at("tid").get<int>()] = e.at("args").at("name").get<std::string>();
  return out;
}

}  // namespace

TEST_CASE("trace: one X event per block with ts and dur in microseconds", "[trace]") {
  Scenario sc = mini_scenario();
  Schedule s = simulate(sc, test::hyp("alg1"));
  for (double us : {1000.0, 2.5}) {
    INFO("us_per_unit " << us);
    json t = report::chrome_trace(s, sc, us);
    std::vector<json> xs = events_with(t, "X");
    REQUIRE(xs.size() == static_cast<size_t>(sc.total_blocks()));
    const int stride = report::trace_tid_stride(s, sc);
    // Events are emitted in kernel then block order; check each against its placement.
    size_t i = 0;
    for (const auto& k : s.kernels)
      for (size_t b = 0; b < k.blocks.size(); ++b, ++i) {
        const auto& p = k.blocks[b];
        const json& e = xs[i];
        CHECK(e.at("name") == k.name);
        CHECK(e.at("ts").get<double>() == Approx(static_cast<double>(p.start) * us));
        CHECK(e.at("dur").get<double>() == Approx(static_cast<double>(p.end - p.start) * us));
        CHECK(e.at("args").at("block") == b);
        CHECK(e.at("args").at("sm") == p.sm);
        CHECK(e.at("args").at("start") == p.start);
        CHECK(e.at("args").at("end") == p.end);
        CHECK(e.at("tid").get<int>() / stride == p.sm);
        CHECK(e.at("pid") == 1);
      }
  }
  CHECK(report::chrome_trace(s, sc).at("displayTimeUnit") == "ms");
}

TEST_CASE("trace: every SM and every used lane is a named, sorted track", "[trace]") {
  Scenario sc = mini_scenario();
  Schedule s = simulate(sc, test::hyp("alg1"));
  json t = report::chrome_trace(s, sc);
  const int stride = report::trace_tid_stride(s, sc);
  CHECK(stride == 64);
  std::map<int, std::string> names = thread_names(t);
  for (int sm = 0; sm < sc.device.sms; ++sm) CHECK(names[sm * stride] == fmt::format("SM {}", sm));
  std::set<int> sorted;
  for (const auto& e : events_with(t, "M"))
    if (e.at("name") == "thread_sort_index") sorted.insert(e.at("tid").get<int>());
  for (const auto& x : events_with(t, "X")) {
    const int tid = x.at("tid").get<int>(), lane = tid % stride;
    REQUIRE(names.count(tid) == 1);
    CHECK(sorted.count(tid) == 1);
    CHECK(names[tid] == (lane == 0 ? fmt::format("SM {}", tid / stride) : fmt::format("SM {} / lane {}", tid / stride, lane)));
  }
  bool has_process = false;
  for (const auto& e : events_with(t, "M"))
    if (e.at("name") == "process_name") has_process = e.at("args").at("name").get<std::string>().find("mini-ampere-2") != std::string::npos;
  CHECK(has_process);
}

TEST_CASE("trace: events on one track never overlap, so Perfetto drops none", "[trace]") {
  Scenario sc = mini_scenario();
  Schedule s = simulate(sc, test::hyp("alg1"));
  json t = report::chrome_trace(s, sc);
  std::map<int, std::vector<std::pair<double, double>>> by_tid;
  std::set<int> sms_with_lanes;
  for (const auto& x : events_with(t, "X")) {
    by_tid[x.at("tid").get<int>()].emplace_back(x.at("ts").get<double>(), x.at("ts").get<double>() + x.at("dur").get<double>());
    if (x.at("args").at("lane").get<int>() > 0) sms_with_lanes.insert(x.at("args").at("sm").get<int>());
  }
  CHECK(!sms_with_lanes.empty());  // the scenario has co-resident blocks at all
  for (auto& [tid, spans] : by_tid) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) {
      INFO("tid " << tid);
      CHECK(spans[i].first >= spans[i - 1].second);
    }
  }
}

TEST_CASE("trace: hand-made overlaps that do not nest go to separate lanes", "[trace]") {
  Schedule s;
  s.device = "mini";
  s.hypothesis = "hand";
  s.sms = 2;
  s.kernels = {{"A", {{0, 0, 4}}}, {"B", {{0, 2, 6}}}, {"C", {{1, 1, 2}}}};
  Scenario sc = mini_scenario();
  json t = report::chrome_trace(s, sc);
  std::vector<json> xs = events_with(t, "X");
  REQUIRE(xs.size() == 3);
  CHECK(xs[0].at("tid") == 0);
  CHECK(xs[1].at("tid") == 1);
  CHECK(xs[2].at("tid") == 64);
  CHECK(thread_names(t).at(1) == "SM 0 / lane 1");
}

TEST_CASE("trace: dumps and parses back as the same JSON, bad scale rejected", "[trace]") {
  Scenario sc = mini_scenario();
  Schedule s = simulate(sc, test::hyp("alg1"));
  json t = report::chrome_trace(s, sc);
  const std::string text = t.dump(1);
  json back = json::parse(text);
  CHECK(back == t);
  CHECK(back.at("traceEvents").is_array());
  CHECK(text.find("k\\\"3") != std::string::npos);  // quote in a kernel name stays escaped
  CHECK_THROWS_AS(report::chrome_trace(s, sc, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(report::chrome_trace(s, sc, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(report::chrome_trace(s, sc, std::numeric_limits<double>::infinity()), std::invalid_argument);
  CHECK_THROWS_AS(report::chrome_trace(s, sc, std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
}

TEST_CASE("trace: blocks carry their kernel's controls and their cluster", "[trace][cluster]") {
  auto cs = model::load_cases(test::source_path("corpus/paper/controls/cuda-guide-cluster-coscheduled-assumed-gpcs.json"));
  REQUIRE(cs.size() == 1);
  const auto& sc = cs[0].scenario;
  const auto s = model::simulate(sc, test::hyp("most-room"));
  const auto t = report::chrome_trace(s, sc, 1000.0);
  std::map<std::pair<std::string, int>, std::set<int64_t>> starts;  // (kernel, cluster) -> starts
  int clustered = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] != "X") continue;
    REQUIRE(e["args"].contains("cluster"));
    CHECK(e["args"]["controls"].contains("cluster"));
    starts[{e["name"].get<std::string>(), e["args"]["cluster"].get<int>()}].insert(e["args"]["start"].get<int64_t>());
    ++clustered;
  }
  CHECK(clustered == sc.total_blocks());
  for (const auto& [key, st] : starts) CHECK(st.size() == 1);  // a cluster's blocks start together
}
