// Tests of cuda_scheduling_examiner interop: hand-written result logs in the examiner's format
// (tests/data/examiner) import into hardware cases; cases export to multikernel-plugin configs.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "helpers.hpp"
#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/oracle/examiner.hpp"

using namespace tbcheck;
namespace fs = std::filesystem;

namespace {

std::string data(const std::string& f) { return test::source_path("tests/data/examiner/" + f); }

oracle::examiner::ImportOptions on_rtx3090() {
  oracle::examiner::ImportOptions o;
  o.device = model::builtin_device("rtx3090", "test", "device");
  return o;
}

using tbcheck::test::TempDir;

}  // namespace

TEST_CASE("examiner logs import into one hardware case in launch order with shared streams", "[examiner]") {
  auto cases = oracle::examiner::import_logs({data("pair_stream0.json"), data("pair_stream1.json")}, on_rtx3090());
  REQUIRE(cases.size() == 1);
  const auto& c = cases[0];
  CHECK(c.id == "examiner-tbcheck-pair");
  CHECK_THAT(c.source, Catch::Contains("pair_stream0.json") && Catch::Contains("pair_stream1.json"));
  CHECK(c.scenario.device.name == "rtx3090");
  REQUIRE(c.scenario.kernels.size() == 3);
  // Launch order from cuda_launch_times: K1 (stream 0), K2 (stream 1), K3 (stream 0 again).
  CHECK(c.scenario.kernels[0].name == "K1");
  CHECK(c.scenario.kernels[1].name == "K2");
  CHECK(c.scenario.kernels[2].name == "K3");
  CHECK(c.scenario.kernels[0].stream == 0);
  CHECK(c.scenario.kernels[2].stream == 0);
  CHECK_FALSE(c.scenario.kernels[1].stream.has_value());  // alone in its log: its own stream
  for (const auto& k : c.scenario.kernels) {
    CHECK(k.threads == 256);
    CHECK(k.regs == 32);
    CHECK(k.duration == 1);
  }
  REQUIRE(c.observation);
  CHECK(c.observation->kind == model::ObservationKind::Hardware);
  CHECK(c.observation->sm_of_block.at("K1") == std::vector<int>{0, 2});
  CHECK(c.observation->sm_of_block.at("K2") == std::vector<int>{1, 3});
  CHECK(c.observation->sm_of_block.at("K3") == std::vector<int>{0});
  CHECK(c.observation->start_of_block.at("K1") == std::vector<int>{0, 0});
  CHECK(c.observation->start_of_block.at("K2") == std::vector<int>{0, 0});
  CHECK(c.observation->start_of_block.at("K3") == std::vector<int>{1});
  CHECK_THAT(c.notes, Catch::Contains("cuda_launch_times") && Catch::Contains("32 assumed"));

  SECTION("a finer time unit keeps the microsecond offsets apart") {
    auto o = on_rtx3090();
    o.time_unit_ms = 0.001;  // 1 us
    auto fine = oracle::examiner::import_logs({data("pair_stream0.json"), data("pair_stream1.json")}, o);
    CHECK(fine[0].observation->start_of_block.at("K2") == std::vector<int>{100, 101});
    CHECK(fine[0].scenario.kernels[0].duration == 20001);  // 20000.5 us, rounded half up
  }
}

TEST_CASE("an examiner import keeps block ends, launch calls and the resolution the logs show", "[examiner]") {
  auto o = on_rtx3090();
  o.time_unit_ms = 0.001;  // 1 us
  const auto c = oracle::examiner::import_logs({data("pair_stream0.json"), data("pair_stream1.json")}, o).at(0);
  REQUIRE(c.observation);
  CHECK(c.observation->end_of_block.at("K1") == std::vector<int>{20001, 20002});  // 20000.5 and 20001.5 us, half up
  CHECK(c.observation->launch_of_kernel.at("K1") == 0);
  CHECK(c.observation->launch_of_kernel.at("K2") == 100);
  CHECK(c.observation->launch_of_kernel.at("K3") == 200);
  REQUIRE(c.observation->resolution);
  CHECK(c.observation->resolution->tick == 1);           // half-microsecond steps, below the unit
  CHECK(c.observation->resolution->launch_window == 10);  // the 10 us launch calls
  CHECK(c.observation->has_block_times(c.scenario));
  CHECK_THAT(c.notes, Catch::Contains("unordered"));
}

TEST_CASE("the TX2 race illustration passes alg1 only under trace timing, naming the launch order", "[examiner]") {
  oracle::examiner::ImportOptions o;
  o.device = model::builtin_device("tx2", "test", "device");
  o.time_unit_ms = 0.001;
  std::vector<std::string> logs;
  for (int t = 1; t <= 4; ++t) logs.push_back(data("tx2-race/thread" + std::to_string(t) + ".json"));
  const auto c = oracle::examiner::import_logs(logs, o).at(0);
  REQUIRE(c.observation->resolution);
  CHECK(c.observation->resolution->launch_window == 10);
  const model::Hypothesis& alg1 = *model::find_builtin_hypothesis("alg1");
  const model::CaseResult by_model = model::evaluate(c, alg1);
  CHECK(by_model.at(model::Level::Counts) == model::Verdict::Fail);
  // exact's closest order first, then the 24 launch orders.
  CHECK_THAT(by_model.first_failure(model::Level::Counts), Catch::Contains("under every admissible order (25 simulated"));
  model::JudgeOptions trace;
  trace.timing = model::Timing::Trace;
  const model::CaseResult by_trace = model::evaluate(c, alg1, trace);
  CHECK(by_trace.at(model::Level::Exact) == model::Verdict::Pass);
  // 99.9 and 100.3 us both read 100 units: retiring together would send K4's second block to SM 0.
  CHECK(by_trace.order(model::Level::Exact) ==
        "launch order K2, K1, K4, K3; retirements recorded at 100..100 in the order K1[1], K2[0]");
}

TEST_CASE("the imported case equals the case the logs record, and exports back to the plugin", "[examiner]") {
  const auto want = model::load_cases(data("pair.case.json")).at(0);
  auto got = oracle::examiner::import_logs({data("pair_stream0.json"), data("pair_stream1.json")}, on_rtx3090()).at(0);
  REQUIRE(got.scenario.kernels.size() == want.scenario.kernels.size());
  for (size_t i = 0; i < want.scenario.kernels.size(); ++i)
    CHECK(got.scenario.kernels[i].to_json() == want.scenario.kernels[i].to_json());

  const auto cfg = oracle::examiner::export_config(want, {});
  CHECK(cfg["name"] == "examiner-pair");
  CHECK(cfg["max_iterations"] == 1);
  REQUIRE(cfg["benchmarks"].size() == 2);  // stream 0 (K1, K3) and K2 alone
  const auto& s0 = cfg["benchmarks"][0];
  CHECK(s0["filename"] == "./bin/multikernel.so");
  REQUIRE(s0["additional_info"].size() == 2);
  CHECK(s0["additional_info"][0]["kernel_label"] == "K1");
  CHECK(s0["additional_info"][1]["kernel_label"] == "K3");
  CHECK(s0["additional_info"][0]["duration"] == 20000000);
  CHECK(s0["additional_info"][0]["block_count"] == 2);
  CHECK(s0["additional_info"][0]["thread_count"] == 256);
  CHECK(s0["additional_info"][0]["shared_memory_size"] == 0);
  CHECK(cfg["benchmarks"][1]["additional_info"][0]["kernel_label"] == "K2");
  CHECK_THAT(cfg["comment"].get<std::string>(), Catch::Contains("registers") && Catch::Contains("launch order"));
}

TEST_CASE("export refuses shared memory the multikernel plugin cannot express", "[examiner]") {
  auto c = model::load_cases(data("pair.case.json")).at(0);
  c.scenario.kernels[1].smem = 1000;
  auto e = test::error_of([&] { oracle::examiner::export_config(c, {}); });
  CHECK(e.field() == "kernels[1].smem");
  CHECK_THAT(e.reason(), Catch::Contains("K2") && Catch::Contains("16384"));
  c.scenario.kernels[1].smem = 32768;
  CHECK(oracle::examiner::export_config(c, {})["benchmarks"][1]["additional_info"][0]["shared_memory_size"] == 8192);
}

TEST_CASE("malformed examiner logs are input errors naming file, field and reason", "[examiner]") {
  auto e1 = test::error_of([&] { oracle::examiner::import_logs({data("bad_smids.json")}, on_rtx3090()); });
  CHECK_THAT(e1.where(), Catch::Contains("bad_smids.json"));
  CHECK(e1.field() == "times[2].block_smids");
  CHECK_THAT(e1.reason(), Catch::Contains("1 SM ids for block_count 2"));
  auto e2 = test::error_of([&] { oracle::examiner::import_logs({data("bad_times.json")}, on_rtx3090()); });
  CHECK(e2.field() == "times[2].block_times");
  CHECK_THAT(e2.reason(), Catch::Contains("3 times for 2 blocks"));

  TempDir dir;
  auto write = [&](const std::string& name, const std::string& text) {
    const fs::path p = dir.path / name;
    std::ofstream(p) << text;
    return p.string();
  };
  auto e3 = test::error_of([&] { oracle::examiner::import_logs({write("no_times.json", R"({"scenario_name": "x"})")}, on_rtx3090()); });
  CHECK(e3.field() == "times");
  auto e4 = test::error_of([&] {
    oracle::examiner::import_logs({write("str.json", R"({"times": [{}, {"block_count": 1, "thread_count": 32,
        "block_times": ["a", 0.2], "block_smids": [0]}]})")}, on_rtx3090());
  });
  CHECK(e4.field() == "times[1].block_times[0]");
  auto e5 = test::error_of([&] {
    oracle::examiner::import_logs({write("nothreads.json", R"({"times": [{}, {"block_times": [0.1, 0.2], "block_smids": [0]}]})")},
                                  on_rtx3090());
  });
  CHECK_THAT(e5.reason(), Catch::Contains("thread_count"));
  auto e6 = test::error_of([&] {
    auto o = on_rtx3090();
    o.device = model::device_from_json(model::parse_json_text(test::mini_device(2), "t"), "t");
    oracle::examiner::import_logs({data("pair_stream1.json")}, o);
  });
  CHECK_THAT(e6.reason(), Catch::Contains("SM 3") && Catch::Contains("--device"));
  CHECK_THROWS_AS(oracle::examiner::import_logs({write("syntax.json", "{\"times\": [")}, on_rtx3090()), model::InputError);
}

TEST_CASE("several iterations of a log become one case each", "[examiner]") {
  TempDir dir;
  const fs::path p = dir.path / "iters.json";
  std::ofstream(p) << R"({"scenario_name": "two runs", "times": [{},
    {"cpu_times": [0.0, 0.1]},
    {"kernel_name": "A", "block_count": 1, "thread_count": 64, "block_times": [1.0, 1.02], "block_smids": [4]},
    {"cpu_times": [0.2, 0.3]},
    {"kernel_name": "A", "block_count": 1, "thread_count": 64, "block_times": [2.0, 2.04], "block_smids": [6]}]})";
  auto cases = oracle::examiner::import_logs({p.string()}, on_rtx3090());
  REQUIRE(cases.size() == 2);
  CHECK(cases[0].id == "examiner-two-runs.it1");
  CHECK(cases[1].id == "examiner-two-runs.it2");
  CHECK(cases[0].observation->sm_of_block.at("A") == std::vector<int>{4});
  CHECK(cases[1].observation->sm_of_block.at("A") == std::vector<int>{6});
  CHECK(cases[1].scenario.kernels[0].duration == 2);
  CHECK_THAT(cases[0].notes, Catch::Contains("file order"));
}

TEST_CASE("import-examiner and export-examiner on the command line", "[examiner]") {
  TempDir dir;
  const std::string logs = "tests/data/examiner/pair_stream0.json tests/data/examiner/pair_stream1.json";
  auto r = test::run_tbcheck("import-examiner " + logs + " --device rtx3090 --out '" + dir.path.string() + "'");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const fs::path written = dir.path / "examiner-tbcheck-pair.json";
  REQUIRE(fs::exists(written));
  auto back = model::load_cases(written.string());
  REQUIRE(back.size() == 1);
  CHECK(back[0].observation->sm_of_block.at("K2") == std::vector<int>{1, 3});
  // Recorded results are never overwritten.
  auto again = test::run_tbcheck("import-examiner " + logs + " --device rtx3090 --out '" + dir.path.string() + "'");
  CHECK(again.exit_code == 2);

  auto nodev = test::run_tbcheck("import-examiner " + logs + " --out '" + dir.path.string() + "'");
  CHECK(nodev.exit_code == 2);
  CHECK_THAT(nodev.out, Catch::Contains("--device"));
  auto bad = test::run_tbcheck("import-examiner tests/data/examiner/bad_times.json --device rtx3090 --out '" +
                               dir.path.string() + "'");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.out, Catch::Contains("bad_times.json") && Catch::Contains("block_times"));

  auto ex = test::run_tbcheck("export-examiner tests/data/examiner/pair.case.json --time-unit-ms 500");
  REQUIRE(ex.exit_code == 0);
  const auto cfg = nlohmann::json::parse(ex.out);
  CHECK(cfg["benchmarks"][0]["additional_info"][0]["duration"] == 500000000);
  const fs::path out = dir.path / "cfg.json";
  auto ex2 = test::run_tbcheck("export-examiner tests/data/examiner/pair.case.json --out '" + out.string() + "'");
  CHECK(ex2.exit_code == 0);
  CHECK(fs::exists(out));
}

// Examiner configs (not logs) import as scenarios with priorities, releases and SM masks.
TEST_CASE("an examiner config imports as a scenario with priorities, release times and TPC masks", "[examiner][controls]") {
  test::TempDir t;
  const std::string cfg = t.write("prio.json", R"({"name": "priority test", "max_iterations": 1, "benchmarks": [
    {"filename": "./bin/timer_spin.so", "label": "low", "thread_count": 1024, "block_count": 8,
     "stream_priority": 0, "additional_info": 500000000},
    {"filename": "./bin/timer_spin.so", "label": "high", "thread_count": 1024, "block_count": 4,
     "stream_priority": -1, "additional_info": "250000000", "release_time": 0.3},
    {"filename": "./bin/multikernel.so", "label": "mk", "thread_count": 1, "block_count": 1, "release_time": 0.1,
     "additional_info": [{"kernel_label": "m1", "duration": 100000000, "thread_count": 256, "block_count": 2,
                          "sm_mask": "~0x1"},
                         {"kernel_label": "m2", "duration": 50000000, "thread_count": 64, "block_count": 1}]}]})");
  oracle::examiner::ImportOptions o;
  o.device = model::builtin_device("tx2", "", "");
  o.time_unit_ms = 50;
  const model::Case c = oracle::examiner::import_config(cfg, o);
  CHECK(c.id == "prio");
  CHECK_FALSE(c.observation.has_value());
  const auto& k = c.scenario.kernels;
  REQUIRE(k.size() == 4);
  // Release order: low (0), m1 and m2 (0.1 s = 2 units, one stream), high (0.3 s = 6 units).
  CHECK(k[0].name == "low");
  CHECK(k[0].duration == 10);
  CHECK(k[0].priority == 0);
  CHECK(k[1].name == "m1");
  CHECK(k[1].release == 2);
  CHECK(k[1].tpcs == std::vector<int>{0});  // ~0x1 leaves only TPC 0 enabled (a set bit disables)
  CHECK(k[2].name == "m2");
  CHECK(k[2].stream == k[1].stream);
  CHECK(k[2].tpcs.empty());
  CHECK(k[3].name == "high");
  CHECK(k[3].priority == -1);
  CHECK(k[3].release == 6);
  CHECK(k[3].duration == 5);

  // Impossible or inexpressible values name the field.
  auto bad = [&](const std::string& bench) {
    return test::error_of([&] {
      oracle::examiner::import_config(t.write("bad.json", R"({"benchmarks": [)" + bench + "]}"), o);
    });
  };
  const std::string spin = R"("filename": "./bin/timer_spin.so", "thread_count": 32, "block_count": 1, "additional_info": 100000000)";
  CHECK(bad("{" + spin + R"(, "release_time": 0.07})").field() == "benchmarks[0].release_time");  // not whole units
  CHECK(bad("{" + spin + R"(, "stream_priority": -2})").field() == "benchmarks[0].stream_priority");  // TX2 has 0, -1
  CHECK(bad("{" + spin + R"(, "sm_mask": "0x3"})").field() == "benchmarks[0].sm_mask");         // every TPC off
  CHECK(bad("{" + spin + R"(, "sm_mask": "0xzz"})").field() == "benchmarks[0].sm_mask");
  CHECK(bad(R"({"filename": "./bin/counter_spin.so"})").field() == "benchmarks[0].filename");
  CHECK(bad(R"({"filename": "./bin/multikernel.so", "additional_info": [{"kernel_label": "x", "duration": 1e8,
      "thread_count": 32, "block_count": 1, "delay": 0.5}]})").field() == "benchmarks[0].additional_info[0].delay");
}

TEST_CASE("config times are range checked before any conversion, naming the benchmark and its field", "[examiner][errors]") {
  test::TempDir t;
  oracle::examiner::ImportOptions o;
  o.device = model::builtin_device("rtx3090", "", "");
  auto error = [&](const std::string& bench, double unit_ms = 20.0) {
    o.time_unit_ms = unit_ms;
    return test::error_of([&] {
      oracle::examiner::import_config(t.write("bad.json", R"({"benchmarks": [)" + bench + "]}"), o);
    });
  };
  const std::string spin = R"("filename": "./bin/timer_spin.so", "thread_count": 32, "block_count": 1)";
  const std::string mk = R"("filename": "./bin/multikernel.so", "additional_info": [{"kernel_label": "x", "thread_count": 32, "block_count": 1, "duration": )";
  // Each once converted silently: a 32-bit wrap, a double past int64, a zero from a tiny unit.
  auto e = error("{" + spin + R"(, "additional_info": 214748365300000000})");
  CHECK(e.field() == "benchmarks[0].additional_info");
  CHECK(e.reason().find("units are expressible") != std::string::npos);
  CHECK(error("{" + mk + "2.5e20}]}").field() == "benchmarks[0].additional_info[0].duration");
  CHECK(error("{" + spin + R"(, "additional_info": 100000000, "release_time": 1e300})").field() == "benchmarks[0].release_time");
  CHECK(error("{" + spin + R"(, "additional_info": 100000000, "release_time": -1})").field() == "benchmarks[0].release_time");
  CHECK(error("{" + spin + R"(, "additional_info": "nan"})").field() == "benchmarks[0].additional_info");
  CHECK(error("{" + spin + R"(, "additional_info": 100000000})", 1e-300).field() == "benchmarks[0].additional_info");
  CHECK(error("{" + spin + R"(, "additional_info": 1})", 1e6).reason().find("shorter than one") != std::string::npos);
}

TEST_CASE("config errors found by the scenario check name the config's field, not kernels[i]", "[examiner][errors]") {
  test::TempDir t;
  oracle::examiner::ImportOptions o;
  o.device = model::builtin_device("rtx3090", "", "");
  const auto e = test::error_of([&] {
    oracle::examiner::import_config(t.write("c.json", R"({"benchmarks": [
      {"filename": "./bin/timer_spin.so", "thread_count": 32, "block_count": 1, "additional_info": 100000000},
      {"filename": "./bin/multikernel.so", "additional_info": [
        {"kernel_label": "x", "thread_count": 2048, "block_count": 1, "duration": 100000000}]}]})"), o);
  });
  CHECK(e.field() == "benchmarks[1].additional_info[0].thread_count");
  CHECK(std::string(e.what()).find("kernels[") == std::string::npos);
}

TEST_CASE("export writes the priorities, release times and TPC masks the importer reads, and refuses clusters", "[examiner][controls]") {
  test::TempDir t;
  const std::string file = t.write("c.json", R"({"id": "ctl", "device": "tx2", "kernels": [
    {"name": "a", "blocks": 2, "threads": 64, "regs": 32, "smem": 0, "duration": 3, "stream": 1, "priority": 0},
    {"name": "b", "blocks": 1, "threads": 64, "regs": 32, "smem": 0, "duration": 2, "stream": 2, "priority": -1,
     "release_time": 4, "tpcs": [1]}]})");
  const model::Case c = model::load_cases(file).at(0);
  oracle::examiner::ExportOptions eo;
  const auto cfg = oracle::examiner::export_config(c, eo);
  CHECK(cfg["benchmarks"][1]["stream_priority"] == -1);
  CHECK(cfg["benchmarks"][1]["additional_info"][0]["sm_mask"] == "0x1");
  oracle::examiner::ImportOptions o;
  o.device = c.scenario.device;
  const model::Case back = oracle::examiner::import_config(t.write("exported.json", cfg.dump()), o);
  REQUIRE(back.scenario.kernels.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const auto& k = back.scenario.kernels[i];
    const auto& want = c.scenario.kernels[i];
    INFO(want.name);
    CHECK(k.name == want.name);
    CHECK(k.priority == want.priority);
    CHECK(k.release == want.release);
    CHECK(k.tpcs == want.tpcs);
    CHECK(k.duration == want.duration);
  }
  // What a config cannot say is refused by name: clusters, and two priorities or releases in one stream.
  auto refused = [&](const std::string& kernels) {
    return test::error_of([&] {
      oracle::examiner::export_config(model::load_cases(t.write("r.json", R"({"id": "r", "device": "h100-sxm", "kernels": [)" + kernels + "]}")).at(0), eo);
    });
  };
  const std::string k = R"("blocks": 2, "threads": 64, "regs": 32, "smem": 0, "duration": 1)";
  CHECK(refused(R"({"name": "c", "cluster": [2, 1, 1], )" + k + "}").field() == "kernels[0].cluster");
  CHECK(refused(R"({"name": "x", "stream": 1, )" + k + R"(}, {"name": "y", "stream": 1, "release_time": 2, )" + k + "}").field() ==
        "kernels[1].release_time");
}

TEST_CASE("tpcs_from_sm_mask follows libsmctrl's convention", "[examiner][controls]") {
  using oracle::examiner::tpcs_from_sm_mask;
  CHECK(tpcs_from_sm_mask("0x5", 4, "f", "m") == std::vector<int>{1, 3});
  CHECK(tpcs_from_sm_mask("~0xaaaaaaaaaaaaaaa8", 8, "f", "m") == std::vector<int>{3, 5, 7});
  CHECK(tpcs_from_sm_mask("~0x5555555555555554", 8, "f", "m") == std::vector<int>{2, 4, 6});
}

TEST_CASE("an examiner scenario name of spaces and punctuation gives an id without doubled or trailing dashes", "[examiner]") {
  std::ifstream in(data("pair_stream0.json"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string was = "\"scenario_name\": \"tbcheck pair\"";
  REQUIRE(text.find(was) != std::string::npos);
  auto named = [&](const std::string& name) {
    std::string t = text;
    t.replace(t.find(was), was.size(), "\"scenario_name\": \"" + name + "\"");
    return oracle::examiner::import_log_texts({{"run (1).json", t}}, on_rtx3090()).at(0).id;
  };
  CHECK(named("tx2 race (illustration)") == "examiner-tx2-race-illustration");
  CHECK(named("  --a  b--  ") == "examiner-a-b");
  // Nothing left of the name: the log's file stem names the case instead.
  CHECK(named("(!)") == "examiner-run-1");
}
