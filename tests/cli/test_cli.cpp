// End-to-end tests of the tbcheck command as a user runs it: outputs, JSON shapes, exit codes
// (0 ok, 1 expectation failed, 2 bad input) and that bad input never leaves a partial file.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "helpers.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/oracle/oracle.hpp"

using tbcheck::test::run_tbcheck;
namespace fs = std::filesystem;

namespace {

using tbcheck::test::TempDir;

const char* kSmallCase = R"({"device": "rtx3090", "kernels": [
  {"name": "k1", "blocks": 3, "threads": 256, "regs": 32, "smem": 0, "duration": 2},
  {"name": "k2", "blocks": 1, "threads": 64, "regs": 32, "smem": 0, "duration": 1}]})";

}  // namespace

TEST_CASE("devices and hypotheses list the built-ins", "[cli]") {
  auto d = run_tbcheck("devices");
  CHECK(d.exit_code == 0);
  for (const char* name : {"rtx3090", "v100", "rtx2080ti", "a100", "h100-sxm", "h100-pcie", "h200", "b200", "xavier", "quadro6000"})
    CHECK(d.out.find(name) != std::string::npos);
  auto j = tbcheck::model::json::parse(run_tbcheck("devices --json").out);
  CHECK(j["schema_version"] == 1);
  CHECK(j["devices"].size() == 12);  // every file of corpus/devices, h100-sxm-assumed-gpcs and b200 included
  auto h = tbcheck::model::json::parse(run_tbcheck("hypotheses --json").out);
  CHECK(h["hypotheses"].size() == 15);
  CHECK(h["hypotheses"][3]["name"] == "alg1");
  auto o = run_tbcheck("hypotheses --options");
  CHECK(o.exit_code == 0);
  CHECK(o.out.find("Mechanism 2.2") != std::string::npos);
}

TEST_CASE("predict prints the schedule JSON of docs/design.md", "[cli]") {
  TempDir t;
  std::string f = t.write("c.json", kSmallCase);
  auto r = run_tbcheck("predict " + f + " --hypothesis alg1 --json");
  REQUIRE(r.exit_code == 0);
  auto j = tbcheck::model::json::parse(r.out);
  CHECK(j["hypothesis"] == "alg1");
  CHECK(j["device"] == "rtx3090");
  REQUIRE(j["kernels"].size() == 2);
  CHECK(j["kernels"][0]["name"] == "k1");
  // Even-first most-room: SMs 0, 2, 4; k2 ties everywhere else and goes to SM 6.
  CHECK(j["kernels"][0]["blocks"][1]["sm"] == 2);
  CHECK(j["kernels"][0]["blocks"][2]["sm"] == 4);
  CHECK(j["kernels"][1]["blocks"][0]["sm"] == 6);
  CHECK(j["kernels"][0]["blocks"][0]["end"] == 2);
  auto human = run_tbcheck("predict " + f);
  CHECK(human.exit_code == 0);
  CHECK(human.out.find("0, 2, 4") != std::string::npos);
}

TEST_CASE("predict writes SVG and trace files", "[cli]") {
  TempDir t;
  std::string f = t.write("c.json", kSmallCase);
  std::string svg = (t.path / "t.svg").string(), trace = (t.path / "t.json").string();
  auto r = run_tbcheck("predict " + f + " --svg " + svg + " --trace " + trace);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::file_size(svg) > 100);
  std::ifstream in(trace);
  auto j = tbcheck::model::json::parse(in);
  CHECK(j.contains("traceEvents"));
}

TEST_CASE("bad input exits 2 with the file, the field and the reason", "[cli][errors]") {
  TempDir t;
  SECTION("malformed JSON") {
    auto r = run_tbcheck("predict " + t.write("bad.json", "{\"device\": \"rtx3090\", \"kernels\": ["));
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("bad.json") != std::string::npos);
    CHECK(r.out.find("malformed JSON") != std::string::npos);
  }
  SECTION("impossible kernel") {
    auto r = run_tbcheck("predict " + t.write("k.json", R"({"device": "rtx3090", "kernels": [
      {"blocks": 1, "threads": 1200, "regs": 32, "smem": 0, "duration": 1}]})"));
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("kernels[0].threads: 1200 threads > 1024 per block") != std::string::npos);
  }
  SECTION("kernel that fits no SM under the hypothesis") {
    auto r = run_tbcheck("predict " + t.write("k.json", R"({"device": "rtx3090", "kernels": [
      {"name": "fat", "blocks": 1, "threads": 1024, "regs": 255, "smem": 0, "duration": 1}]})"));
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("fat can never be placed") != std::string::npos);
    CHECK(r.out.find("registers") != std::string::npos);
  }
  SECTION("unknown device and hypothesis") {
    auto r = run_tbcheck("predict " + t.write("d.json", R"({"device": "rtx9999", "kernels": [
      {"blocks": 1, "threads": 32, "regs": 32, "duration": 1}]})"));
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("unknown device 'rtx9999'") != std::string::npos);
    auto h = run_tbcheck("predict " + t.write("c.json", kSmallCase) + " --hypothesis nosuch");
    CHECK(h.exit_code == 2);
    CHECK(h.out.find("unknown hypothesis 'nosuch'") != std::string::npos);
  }
  SECTION("missing file and unknown flag") {
    CHECK(run_tbcheck("predict /nonexistent/x.json").exit_code == 2);
    CHECK(run_tbcheck("validate corpus/paper --level nope").exit_code == 2);
    CHECK(run_tbcheck("frobnicate").exit_code == 2);
  }
  SECTION("an unwritable picture leaves no file and exits 2") {
    // A missing folder is created (docs/errors.md); one under a plain file cannot be.
    const std::string blocker = t.write("no", "a file, not a folder");
    auto r = run_tbcheck("predict " + t.write("c.json", kSmallCase) + " --svg " + blocker + "/dir/t.svg");
    CHECK(r.exit_code == 2);
    CHECK(fs::is_regular_file(t.path / "no"));
  }
}

TEST_CASE("run, minimize and export-examiner take one case of a collection with --case", "[cli][errors]") {
  // A collection (here Olmedo's 1024-case grid; the ntbs recordings are the same shape) holds many
  // cases: without --case the one-case commands refuse it, naming the option that picks one.
  TempDir t;
  const std::string grid = "corpus/paper/002-olmedo/table2-volta-grid.json";
  for (const std::string& cmd : {"run " + grid + " --oracle sim:alg1", "export-examiner " + grid,
                                "minimize " + grid + " --keep-disagreement alg1,olmedo"}) {
    auto whole = run_tbcheck(cmd);
    CHECK(whole.exit_code == 2);
    CHECK(whole.out.find("holds 1024 (--case ID picks one)") != std::string::npos);
    auto unknown = run_tbcheck(cmd + " --case nosuch");
    CHECK(unknown.exit_code == 2);
    CHECK(unknown.out.find("--case: no case with id 'nosuch'") != std::string::npos);
  }
  auto r = run_tbcheck("run " + grid + " --case olmedo-t2-x1-y1 --oracle sim:alg1 --repeat 1 --out '" + t.path.string() + "'");
  CHECK(r.exit_code == 0);
  CHECK(fs::exists(t.path / "olmedo-t2-x1-y1.sim-alg1.json"));
  // The run's metadata is the recording's `run` field, not text in its notes.
  const auto written = tbcheck::model::read_json_file((t.path / "olmedo-t2-x1-y1.sim-alg1.json").string());
  CHECK(written["run"]["oracle"] == "sim:alg1");
  CHECK(written["run"]["repetitions"] == 1);
  CHECK(written["notes"] == "tbcheck run of olmedo-t2-x1-y1: ok over 1 repetition(s)");
  auto e = run_tbcheck("export-examiner " + grid + " --case olmedo-t2-x1-y1");
  REQUIRE(e.exit_code == 0);
  CHECK(tbcheck::model::json::parse(e.out)["benchmarks"].size() == 2);  // the case's two kernels, one benchmark each
}

TEST_CASE("validate: paper corpus meets every expectation, exit 0", "[cli][validate]") {
  auto r = run_tbcheck("validate corpus/paper/000-wang --hypothesis all");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find(" expectation(s) met") != std::string::npos);
  auto j = tbcheck::model::json::parse(run_tbcheck("validate corpus/paper/000-wang --json").out);
  CHECK(j["cases"].size() == 9);
  CHECK(j["mismatches"].empty());
}

TEST_CASE("validate exits 1 when a case's expectation is contradicted", "[cli][validate]") {
  TempDir t;
  // The paper's Case 2.2 fact, but claiming alg1-no-skip passes it: a contradiction.
  std::string f = t.write("x.json", R"({"id": "x", "device": "rtx3090", "kernels": [
    {"name": "k1", "blocks": 82, "threads": 32, "regs": 255, "smem": 0, "duration": 1},
    {"name": "k2", "blocks": 82, "threads": 128, "regs": 255, "smem": 0, "duration": 1},
    {"name": "k3", "blocks": 82, "threads": 96, "regs": 255, "smem": 0, "duration": 1}],
    "observation": {"kind": "paper", "facts": [{"kernel": "k3", "starts_after": ["k1", "k2"]}]},
    "expect": {"alg1-no-skip": "pass"}})");
  auto r = run_tbcheck("validate " + f + " --hypothesis alg1,alg1-no-skip");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("x under alg1-no-skip: expected pass, got fail") != std::string::npos);
}

TEST_CASE("validate on the external recordings reports all three levels", "[cli][validate][external]") {
  const std::string ntbs = tbcheck::test::shared_or_skip("external/ntbs");
  if (ntbs.empty()) return;
  auto r = run_tbcheck("validate '" + ntbs + "' --json");
  REQUIRE(r.exit_code == 0);
  auto j = tbcheck::model::json::parse(r.out);
  CHECK(j["cases"].size() == 79);
  CHECK(j["levels"].size() == 3);
  // alg1 gets every per-SM count right but not the Ampere block order.
  for (const auto& s : j["summary"]) {
    if (s["hypothesis"] != "alg1") continue;
    CHECK(s["counts"]["pass"] == 79);
    CHECK(s["exact"]["fail"].get<int>() > 0);
  }
}

TEST_CASE("a user-written hypothesis file works with predict and validate", "[cli]") {
  TempDir t;
  std::string h = t.write("mine.json", R"({"name": "mine", "base": "alg1", "smem": "counted",
    "description": "alg1 without contiguous shared memory, written by a user"})");
  auto r = run_tbcheck("validate corpus/paper/000-wang/case-4.2.json --hypothesis " + h + " --json");
  REQUIRE(r.exit_code == 0);
  auto j = tbcheck::model::json::parse(r.out);
  CHECK(j["hypotheses"][0] == "mine");
  CHECK(j["cases"][0]["results"][0]["levels"]["exact"]["verdict"] == "fail");
  auto bad = run_tbcheck("validate corpus/paper --hypothesis " + t.write("b.json", R"({"name": "b", "base": "alg1", "warps": "pb-sometimes"})"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.find("unknown option 'pb-sometimes'; valid options are: sm, pb-strict-rr, pb-any") != std::string::npos);
}

TEST_CASE("predict --contested: settled and contested blocks, sides, the settling case, and its errors", "[cli][contested]") {
  TempDir t;
  // Evidence of an Ampere device only: nothing judges a Hopper scenario (the default, corpus/paper, would).
  const std::string h100 = "corpus/predictions/ntbs-h100-sxm.json --case ntbs-h100-sxm-test2-269 --evidence corpus/paper/000-wang";
  auto r = run_tbcheck("predict " + h100 + " --contested --against alg1,alg1-paired --no-synthesis");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("no case of h100-sxm or of any Hopper device") != std::string::npos);
  CHECK(r.out.find("Contested: 133 of 269 blocks (136 settled): K1 1-") != std::string::npos);
  auto j = tbcheck::model::json::parse(
      run_tbcheck("predict " + h100 + " --hypothesis alg1-paired --contested --against alg1,alg1-paired --no-synthesis --json").out);
  CHECK(j["hypothesis"] == "alg1-paired");
  CHECK(j["contested"]["verdict"] == "contested");
  CHECK(j["contested"]["evidence"]["scope"] == "none");
  CHECK(j["contested"]["contested"][0]["block"] == 1);
  // The paper cases of the RTX 2080 Ti (Olmedo's grid, one-block kernels) judge a Turing scenario.
  auto turing = run_tbcheck("predict corpus/predictions/ntbs-rtx2080ti.json --case ntbs-rtx2080ti-test2-272 --contested "
                            "--evidence corpus/paper --against alg1,alg1-paired --no-synthesis --json");
  REQUIRE(turing.exit_code == 0);
  auto tj = tbcheck::model::json::parse(turing.out)["contested"];
  CHECK(tj["evidence"]["scope"] == "device");
  CHECK(tj["evidence"]["cases"] == 1024);
  // A settling case written where asked (a missing folder is created, as every --out is); a folder that
  // cannot be made (under a regular file) or --settle-out alone is exit 2.
  auto w = run_tbcheck("predict " + h100 + " --contested --against alg1-paired,most-room --settle-out '" + t.path.string() + "'");
  REQUIRE(w.exit_code == 0);
  CHECK(w.out.find("wrote ") != std::string::npos);
  CHECK(std::distance(fs::directory_iterator(t.path), fs::directory_iterator{}) == 1);
  auto made = run_tbcheck("predict " + h100 + " --contested --against alg1-paired,most-room --settle-out '" +
                          (t.path / "new").string() + "'");
  CHECK(made.exit_code == 0);
  CHECK(fs::is_directory(t.path / "new"));
  const std::string file = (t.path / "new").string() + "/" + fs::directory_iterator(t.path / "new")->path().filename().string();
  auto bad = run_tbcheck("predict " + h100 + " --contested --settle-out '" + file + "/sub'");
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.find("--settle-out") != std::string::npos);
  CHECK(run_tbcheck("predict " + h100 + " --settle-out '" + t.path.string() + "'").exit_code == 2);
}

TEST_CASE("retime writes each CUDA recording once in the finer unit, lists what it skips, and never replaces one",
          "[cli][retime]") {
  TempDir t;
  const std::string fine = t / "fine";
  const std::string kept = "corpus/hw/h200/2026-11-26-run3/h200-wave-one-per-sm-66.cuda.json";
  const std::string old = "corpus/hw/h200/2026-11-26-run1/h200-cluster-one-2.cuda.json";  // before raw_ns existed
  auto r = run_tbcheck("retime " + kept + " " + old + " --unit-ns 1000 --out " + fine + " --json");
  REQUIRE(r.exit_code == 0);
  const auto j = tbcheck::model::json::parse(r.out);
  REQUIRE(j["written"].size() == 1);
  CHECK(j["written"][0]["id"] == "h200-wave-one-per-sm-66.cuda-1000ns");
  REQUIRE(j["skipped"].size() == 1);
  CHECK(j["skipped"][0]["reason"].get<std::string>().find("raw_ns") != std::string::npos);
  const std::string written = j["written"][0]["file"];
  CHECK(fs::exists(written));
  // The retimed case is judged like any recording, here under trace timing.
  auto v = run_tbcheck("validate " + written + " --hypothesis most-room --timing trace");
  CHECK(v.exit_code == 0);
  CHECK(v.out.find("trace-driven (recorded ends) for 1 of 1") != std::string::npos);

  // Again: the recording is there, so nothing is written and the run says why.
  const auto before = fs::last_write_time(written);
  auto again = run_tbcheck("retime " + kept + " --unit-ns 1000 --out " + fine);
  CHECK(again.exit_code == 2);
  CHECK(again.out.find("already exists") != std::string::npos);
  CHECK(fs::last_write_time(written) == before);
  // A unit that does not divide the run's 20 ms, and a folder with nothing to retime: exit 2, no file.
  auto odd = run_tbcheck("retime " + kept + " --unit-ns 3000 --out " + (t / "odd"));
  CHECK(odd.exit_code == 2);
  CHECK(odd.out.find("--unit-ns: 3000 ns does not divide") != std::string::npos);
  auto none = run_tbcheck("retime " + old + " --unit-ns 1000 --out " + (t / "none"));
  CHECK(none.exit_code == 2);
  CHECK(none.out.find("no case could be retimed") != std::string::npos);
  CHECK_FALSE(fs::exists(t / "odd"));
  CHECK_FALSE(fs::exists(t / "none"));
  // One recording given twice (two folders): refused before the first file is written.
  fs::create_directories(t / "a");
  fs::create_directories(t / "b");
  fs::copy_file(tbcheck::test::source_path(kept), t / "a/x.json");
  fs::copy_file(tbcheck::test::source_path(kept), t / "b/x.json");
  auto twice = run_tbcheck("retime " + (t / "a") + " " + (t / "b") + " --unit-ns 1000 --out " + (t / "twice"));
  CHECK(twice.exit_code == 2);
  CHECK(twice.out.find("two cases have the id h200-wave-one-per-sm-66.cuda-1000ns") != std::string::npos);
  CHECK_FALSE(fs::exists(t / "twice"));

  // Every repetition the run kept (ten), one case each; a repetition it did not keep, or no number, is exit 2.
  auto all = run_tbcheck("retime " + kept + " --unit-ns 1000 --repetition all --out " + (t / "all") + " --json");
  REQUIRE(all.exit_code == 0);
  const auto ja = tbcheck::model::json::parse(all.out);
  REQUIRE(ja["written"].size() == 10);
  CHECK(ja["written"][9]["id"] == "h200-wave-one-per-sm-66.cuda-1000ns-rep10");
  auto beyond = run_tbcheck("retime " + kept + " --unit-ns 1000 --repetition 11 --out " + (t / "beyond"));
  CHECK(beyond.exit_code == 2);
  CHECK(beyond.out.find("--repetition") != std::string::npos);
  auto word = run_tbcheck("retime " + kept + " --unit-ns 1000 --repetition first --out " + (t / "word"));
  CHECK(word.exit_code == 2);
  CHECK(word.out.find("--repetition: 'first' is neither a repetition number") != std::string::npos);
  CHECK_FALSE(fs::exists(t / "beyond"));
  CHECK_FALSE(fs::exists(t / "word"));
}

TEST_CASE("validate counts unknown verdicts apart and never closes with 'nothing failed' while one is open",
          "[cli][validate]") {
  using namespace tbcheck;
  // A and B raced at launch; the recording is B's launch first, which --max-orders 1 (the listed order
  // only) cannot reach: unknown, not a pass, a fail or "not applicable".
  const model::Scenario listed = test::scenario(R"({"device": )" + test::mini_device(2) + R"(, "kernels": [
      {"name": "A", "blocks": 1, "threads": 1024, "regs": 32, "smem": 0, "duration": 5},
      {"name": "B", "blocks": 1, "threads": 1024, "regs": 32, "smem": 0, "duration": 5}]})");
  model::Scenario swapped = listed;
  std::swap(swapped.kernels[0], swapped.kernels[1]);
  model::Case c;
  c.id = "raced";
  c.scenario = listed;
  c.observation = oracle::observation_of(model::simulate(swapped, test::hyp("alg1")), model::ObservationKind::Hardware);
  c.observation->resolution = model::Resolution{1, 1};
  TempDir t;
  const std::string f = t / "raced.json";
  std::ofstream(f) << c.to_json().dump(1);

  auto r = run_tbcheck("validate " + f + " -H alg1 --max-orders 1");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("passing / failing / unknown / not applicable") != std::string::npos);
  CHECK(r.out.find("0 / 0 / 1 / 0") != std::string::npos);
  CHECK(r.out.find("nothing failed") == std::string::npos);
  CHECK(r.out.find("1 verdict(s) unknown, undecided within --max-orders: raced under alg1") != std::string::npos);
  auto j = run_tbcheck("validate " + f + " -H alg1 --max-orders 1 --json");
  const auto doc = model::json::parse(j.out);
  REQUIRE(doc["summary"].size() == 1);
  CHECK(doc["summary"][0]["exact"]["unknown"] == 1);
  CHECK(doc["summary"][0]["exact"]["not_applicable"] == 0);
  // Decided, the same case says nothing is open.
  auto decided = run_tbcheck("validate " + f + " -H alg1");
  CHECK(decided.out.find("unknown, undecided") == std::string::npos);
  CHECK(decided.out.find("1 / 0 / 0 / 0") != std::string::npos);
}
