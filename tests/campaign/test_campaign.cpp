// Tests of campaign/campaign.cpp: planning from the shipped corpus, the generated sbatch script run
// as Slurm would run one array task (no Slurm needed), status, resume and collect from the files.
#include <catch2/catch.hpp>

#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "helpers.hpp"
#include "scratch.hpp"
#include "tbcheck/campaign/campaign.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/observation.hpp"

using namespace tbcheck;
using namespace tbcheck::campaign;
namespace fs = std::filesystem;

namespace {

PlanOptions synth_plan(const std::string& out, int chunk = 1) {
  PlanOptions o;
  o.case_paths = {test::source_path("corpus/synth"), test::source_path("corpus/paper")};
  o.devices = {parse_device_target("rtx3090=gpu:rtx3090:1")};
  o.oracle = "sim:alg1";
  o.repeat = 2;
  o.chunk = chunk;
  o.tbcheck = TBCHECK_BINARY;
  o.tool_version = "test";
  o.out_dir = out;
  o.created = "2026-01-01T00:00:00";
  return o;
}

// The shipped cases whose scenario targets rtx3090 (those a campaign of that device runs).
size_t rtx3090_cases() {
  size_t n = 0;
  for (const char* dir : {"corpus/synth", "corpus/paper"})
    for (const auto& c : model::load_cases(test::source_path(dir))) n += c.scenario.device.name == "rtx3090";
  return n;
}

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs one array task of a generated script the way slurmd would (the task id in the environment).
int run_task(const std::string& script, int task) {
  auto r = run_command({"env", "SLURM_ARRAY_TASK_ID=" + std::to_string(task), "SLURM_ARRAY_JOB_ID=77", "bash", script});
  return r ? r->exit_code : -1;
}

}  // namespace

TEST_CASE("device targets: NAME or NAME=GRES, named errors otherwise", "[campaign]") {
  auto t = parse_device_target("a100=gpu:a100:1");
  CHECK(t.name == "a100");
  CHECK(t.gres == "gpu:a100:1");
  CHECK(parse_device_target("h100-sxm").gres.empty());
  CHECK(test::error_of([] { parse_device_target("a/100"); }).where() == "--device");
  CHECK(test::error_of([] { parse_device_target("a100="); }).where() == "--device");
  CHECK(test::error_of([] { parse_device_target("a100=gpu:a100:1;rm"); }).reason().find("gres") != std::string::npos);
  CHECK(parse_device_target("a100=gpu:a100:2,mps:100").gres == "gpu:a100:2,mps:100");
}

TEST_CASE("plan: each case of the campaign's devices once, in chunks, other devices skipped", "[campaign]") {
  test::ScratchDir d("campaign");
  const Manifest m = make_plan(synth_plan(d / "c1"));
  REQUIRE(m.devices.size() == 1);
  const auto& dev = m.devices[0];
  CHECK(dev.tasks.size() == rtx3090_cases());
  CHECK(dev.job_name.rfind("tbcheck-c1-", 0) == 0);
  for (size_t i = 0; i < dev.tasks.size(); ++i) {
    CHECK(dev.tasks[i].index == static_cast<int>(i));
    REQUIRE(dev.tasks[i].cases.size() == 1);
    CHECK(dev.tasks[i].cases[0].result == dev.tasks[i].cases[0].id + ".sim-alg1.json");
  }
  CHECK_FALSE(m.skipped.empty());  // paper cases of other GPUs
  for (const auto& s : m.skipped) CHECK(s.device != "rtx3090");

  const Manifest chunked = make_plan(synth_plan(d / "c2", 10));
  const size_t n = rtx3090_cases();
  CHECK(chunked.devices[0].tasks.size() == (n + 9) / 10);
  CHECK(chunked.devices[0].tasks.back().cases.size() == n - 10 * (chunked.devices[0].tasks.size() - 1));

  // The manifest reads back as written.
  CHECK(manifest_from_json(m.to_json(), "m").to_json() == m.to_json());
  CHECK(manifest_text(m).rfind("{\n \"schema_version\": 1,\n \"tool\": {", 0) == 0);
}

TEST_CASE("plan rejects what cannot be a campaign, naming the flag", "[campaign][errors]") {
  test::ScratchDir d("campaign");
  auto o = synth_plan(d / "c1");
  o.oracle = "replay";
  CHECK(test::error_of([&] { make_plan(o); }).where() == "--oracle");
  o = synth_plan(d / "c1");
  o.devices.push_back(parse_device_target("h200"));  // no shipped case targets h200
  CHECK(test::error_of([&] { make_plan(o); }).reason().find("no case targets device 'h200'") != std::string::npos);
  o = synth_plan(d / "c1");
  o.devices[0].partition = "gpu\n#SBATCH --exclusive";  // would add a line to the script
  CHECK(test::error_of([&] { make_plan(o); }).where() == "--partition");
  o = synth_plan(d / "c1");
  o.time_limit = "1:00 x";
  CHECK(test::error_of([&] { make_plan(o); }).where() == "--time");
  o = synth_plan(d / "c1");
  o.case_paths.push_back(test::source_path("corpus/synth"));  // every case twice
  CHECK(test::error_of([&] { make_plan(o); }).reason().find("one result per case") != std::string::npos);

  // The folder: never planned over a non-empty one.
  fs::create_directories(d / "busy");
  std::ofstream(d / "busy/x") << "x";
  o = synth_plan(d / "busy");
  CHECK(test::error_of([&] { write_campaign(make_plan(o), o.out_dir); }).field() == "--out");
  CHECK_FALSE(fs::exists(d / "busy/manifest.json"));
  CHECK(test::error_of([&] { load_manifest(d / "busy"); }).reason().find("not a campaign folder") != std::string::npos);
}

TEST_CASE("the sbatch script: array, gres, one tbcheck run per case, records of start and exit", "[campaign]") {
  test::ScratchDir d("campaign");
  auto o = synth_plan(d / "c1", 2);
  o.devices[0].partition = "gpu-ampere";
  o.time_limit = "00:10:00";
  const Manifest m = make_plan(o);
  write_campaign(m, o.out_dir);
  const std::string script = d / "c1/rtx3090.sbatch";
  const std::string text = slurp(script);
  CHECK(text.find(fmt::format("#SBATCH --array=0-{}\n", m.devices[0].tasks.size() - 1)) != std::string::npos);
  CHECK(text.find("#SBATCH --gres=gpu:rtx3090:1\n") != std::string::npos);
  CHECK(text.find("#SBATCH --partition=gpu-ampere\n") != std::string::npos);
  CHECK(text.find("#SBATCH --time=00:10:00\n") != std::string::npos);
  CHECK(text.find("--oracle 'sim:alg1' --repeat 2") != std::string::npos);
  CHECK(load_manifest(d / "c1").to_json() == m.to_json());

  // Task 0 as slurmd runs it: both results written, start and exit recorded.
  const auto& t0 = m.devices[0].tasks[0];
  REQUIRE(run_task(script, 0) == 0);
  for (const auto& c : t0.cases) CHECK(fs::is_regular_file(d / ("c1/results/rtx3090/" + c.result)));
  CHECK(slurp(d / "c1/state/rtx3090/0.started") == "77\n");
  CHECK(slurp(d / "c1/state/rtx3090/0.rc") == "0\n");
  // Again: the results exist, so nothing runs and nothing is rewritten.
  const auto before = fs::last_write_time(d / ("c1/results/rtx3090/" + t0.cases[0].result));
  REQUIRE(run_task(script, 0) == 0);
  CHECK(fs::last_write_time(d / ("c1/results/rtx3090/" + t0.cases[0].result)) == before);
  // A task index outside the array fails with exit 2.
  CHECK(run_task(script, 999) == 2);
}

TEST_CASE("status, resume and collect follow the files and the scheduler's view", "[campaign]") {
  test::ScratchDir d("campaign");
  auto o = synth_plan(d / "c1");
  const Manifest m = make_plan(o);
  write_campaign(m, o.out_dir);
  const std::string dir = d / "c1", script = d / "c1/rtx3090.sbatch";
  const std::string state = d / "c1/state/rtx3090", results = d / "c1/results/rtx3090";
  REQUIRE(run_task(script, 0) == 0);
  REQUIRE(run_task(script, 1) == 0);
  std::ofstream(state + "/2.started") << "5\n";  // killed: a start record and exit 143
  std::ofstream(state + "/2.rc") << "143\n";
  std::ofstream(state + "/3.started") << "5\n";  // started, no exit record
  const std::string tmp = results + "/." + m.devices[0].tasks[2].cases[0].result + ".tbcheck-tmp.99999.0";
  REQUIRE(model::is_temporary_name(fs::path(tmp).filename().string()));
  std::ofstream(tmp) << "{";  // a run killed between write and rename

  SchedulerView none;
  auto st = campaign_status(m, dir, none);
  REQUIRE(st.size() == m.devices[0].tasks.size());
  CHECK(st[0].state == TaskState::Done);
  CHECK(st[1].state == TaskState::Done);
  CHECK(st[2].state == TaskState::Failed);
  CHECK(st[2].detail.find("exit 143") == 0);
  CHECK(st[3].state == TaskState::Running);  // no scheduler to tell it from a task at work
  CHECK(st[4].state == TaskState::Missing);

  // With a scheduler: task 3 not in it is lost; task 4 pending is left alone by resume.
  SchedulerView v;
  v.available = true;
  v.add(m.devices[0].job_name, {{6, 4, SlurmState::Pending, "PENDING"}}, true);
  st = campaign_status(m, dir, v);
  CHECK(st[3].state == TaskState::Failed);
  CHECK(st[4].state == TaskState::Queued);
  auto subs = plan_resume(m, st, dir);
  REQUIRE(subs.size() == 1);
  CHECK(subs[0].array == fmt::format("2-3,5-{}", m.devices[0].tasks.size() - 1));
  auto removed = clear_for_resubmission(m, subs[0], dir);
  CHECK(removed.size() == 4);  // 2.rc, 2.started, 3.started and the temporary
  CHECK_FALSE(fs::exists(tmp));
  CHECK_FALSE(fs::exists(state + "/2.rc"));
  CHECK(fs::exists(state + "/0.rc"));  // a done task's records stay

  // Collect: the two results; the second time nothing new; a differing file is never overwritten.
  const std::string hw = d / "hw";
  auto c = collect(m, dir, hw);
  CHECK(c.copied.size() == 2);
  CHECK(c.missing == static_cast<int>(m.devices[0].tasks.size()) - 2);
  c = collect(m, dir, hw);
  CHECK(c.copied.empty());
  CHECK(c.already.size() == 2);
  const std::string target = hw + "/rtx3090/" + m.devices[0].tasks[0].cases[0].result;
  std::ofstream(target) << "{\"edited\": true}\n";
  c = collect(m, dir, hw);
  REQUIRE(c.conflicts.size() == 1);
  CHECK(c.conflicts[0] == target);
  CHECK(slurp(target) == "{\"edited\": true}\n");
}

TEST_CASE("campaign CLI: plan, status (exit 1 until complete), resume --dry-run, bad folder exit 2", "[campaign][cli]") {
  test::ScratchDir d("campaign");
  auto r = test::run_tbcheck("campaign plan --cases corpus/synth --device rtx3090 --oracle sim:alg1 --repeat 1 --chunk 30 --out " + (d / "c1"));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("array task(s)") != std::string::npos);
  r = test::run_tbcheck("campaign status " + (d / "c1"));
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("incomplete") != std::string::npos);
  r = test::run_tbcheck("campaign resume --dry-run " + (d / "c1"));
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("would run: sbatch --array=0-2 ") != std::string::npos);
  r = test::run_tbcheck("campaign plan --cases corpus/synth --device rtx3090 --out " + (d / "c1"));
  CHECK(r.exit_code == 2);  // the folder holds a campaign already
  r = test::run_tbcheck("campaign status " + (d / "nothing"));
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("no manifest.json") != std::string::npos);
}

TEST_CASE("collect checks every result before copying anything: a tampered one stops it, the target untouched", "[campaign][errors]") {
  test::ScratchDir d("campaign");
  auto o = synth_plan(d / "c1");
  const Manifest m = make_plan(o);
  write_campaign(m, o.out_dir);
  const std::string dir = d / "c1", results = d / "c1/results/rtx3090", hw = d / "hw";
  REQUIRE(run_task(d / "c1/rtx3090.sbatch", 0) == 0);
  REQUIRE(run_task(d / "c1/rtx3090.sbatch", 1) == 0);
  const std::string good = results + "/" + m.devices[0].tasks[0].cases[0].result;
  const std::string bad = results + "/" + m.devices[0].tasks[1].cases[0].result;
  const std::string genuine = slurp(bad);
  const std::string other_id = slurp(good);
  const std::string secret = d.write("secret.txt", "not a result\n");
  struct Tamper {
    const char* what;
    std::function<void()> apply;
    const char* reason;
  };
  const std::vector<Tamper> tampers = {
      {"truncated", [&] { std::ofstream(bad) << genuine.substr(0, genuine.size() / 2); }, "malformed JSON"},
      {"empty object", [&] { std::ofstream(bad) << "{}"; }, "not a corpus case"},
      {"another case's result", [&] { std::ofstream(bad) << other_id; }, "this result is of case"},
      {"a link to another file", [&] { fs::remove(bad); fs::create_symlink(secret, bad); }, "not a regular file"},
  };
  for (const auto& t : tampers) {
    INFO(t.what);
    fs::remove(bad);
    t.apply();
    const auto e = test::error_of([&] { collect(m, dir, hw); });
    CHECK(e.where() == bad);
    CHECK(std::string(e.what()).find(t.reason) != std::string::npos);
    CHECK(std::string(e.what()).find("nothing was collected") != std::string::npos);
    CHECK_FALSE(fs::exists(hw));  // not even the good result: nothing is copied before every check passed
  }
  fs::remove(bad);
  std::ofstream(bad) << genuine;
  const auto c = collect(m, dir, hw);
  CHECK(c.copied.size() == 2);
  // A result on another device than the campaign ran it on.
  auto j = model::parse_json_text(genuine, "g");
  j["device"] = "v100";
  j.erase("observation");
  std::ofstream(bad) << j.dump();
  CHECK(test::error_of([&] { collect(m, dir, hw); }).field() == "device");
}

TEST_CASE("two collects into one target write one copy: identical bytes already there are not written again", "[campaign]") {
  test::ScratchDir d("campaign");
  auto o = synth_plan(d / "c1");
  const Manifest m = make_plan(o);
  write_campaign(m, o.out_dir);
  REQUIRE(run_task(d / "c1/rtx3090.sbatch", 0) == 0);
  const std::string result = m.devices[0].tasks[0].cases[0].result;
  const std::string content = slurp(d / ("c1/results/rtx3090/" + result));
  // The race's loser finds the name taken at the write itself (after its own check said absent).
  fs::create_directories(d / "hw/rtx3090");
  CHECK(model::write_file_if_absent(d / ("hw/rtx3090/" + result), content));
  CHECK_FALSE(model::write_file_if_absent(d / ("hw/rtx3090/" + result), content));
  const auto c = collect(m, d / "c1", d / "hw");
  CHECK(c.already.size() == 1);
  CHECK(c.copied.empty());
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d / "hw/rtx3090")) ++files;
  CHECK(files == 1);  // no <case>.<oracle>.2.json beside it
  // Two processes at once, each stalled mid-write so both pass the check before either places its file.
  fs::remove_all(d / "hw");
  const std::string cmd = "export TBCHECK_TEST_WRITE_STALL_MS=300; " + std::string(TBCHECK_BINARY) + " campaign collect " +
                          (d / "c1") + " --to " + (d / "hw") + " >/dev/null 2>&1 & " + TBCHECK_BINARY + " campaign collect " +
                          (d / "c1") + " --to " + (d / "hw") + " >/dev/null 2>&1; wait";
  REQUIRE(std::system(cmd.c_str()) == 0);
  files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d / "hw/rtx3090")) ++files;
  CHECK(files == 1);
}

TEST_CASE("status shows an exit record that is not a number cut short and printable", "[campaign][errors]") {
  test::ScratchDir d("campaign");
  auto o = synth_plan(d / "c1");
  const Manifest m = make_plan(o);
  write_campaign(m, o.out_dir);
  std::string junk(100000, 'x');
  junk[3] = '\033';
  junk[5] = '\n';
  std::ofstream(d / "c1/state/rtx3090/0.rc") << junk;
  std::ofstream(d / "c1/state/rtx3090/1.rc") << "137\n";
  const auto st = campaign_status(m, d / "c1", SchedulerView{});
  CHECK(st[0].state == TaskState::Failed);
  CHECK(st[0].detail.size() < 200);
  CHECK(st[0].detail.find("unreadable record 0.rc") != std::string::npos);
  CHECK(st[0].detail.find('\033') == std::string::npos);
  CHECK(st[1].detail.find("exit 137;") == 0);
}

TEST_CASE("plan applies run's checks at plan time: repetitions, chunk, Slurm time, an absolute binary", "[campaign][errors]") {
  test::ScratchDir d("campaign");
  struct Bad {
    std::function<void(PlanOptions&)> set;
    const char* flag;
    const char* reason;
  };
  const std::vector<Bad> bad = {
      {[](PlanOptions& o) { o.repeat = 1'000'000'000; }, "--repeat", "not between 1 and 10000"},
      {[](PlanOptions& o) { o.repeat = 0; }, "--repeat", "not between 1 and 10000"},
      {[](PlanOptions& o) { o.chunk = 0; }, "--chunk", "not between 1 and"},
      {[](PlanOptions& o) { o.time_limit = "abc"; }, "--time", "not a Slurm time limit"},
      {[](PlanOptions& o) { o.time_limit = "-5"; }, "--time", "not a Slurm time limit"},
      // Move-assigned: GCC 12's -Wrestrict misreads the inlined assignment of a one-character literal.
      {[](PlanOptions& o) { o.time_limit = std::string("0"); }, "--time", "not a Slurm time limit"},
      {[](PlanOptions& o) { o.tbcheck = "relative/path"; }, "--tbcheck", "not an absolute path"},
      {[](PlanOptions& o) { o.tbcheck = "/bin/tb\"; rm -rf ~"; }, "--tbcheck", "not an absolute path"},
  };
  for (const auto& b : bad) {
    auto o = synth_plan(d / "c1");
    b.set(o);
    const auto e = test::error_of([&] { make_plan(o); });
    CHECK(e.where() == b.flag);
    CHECK(e.reason().find(b.reason) != std::string::npos);
    CHECK(e.reason().size() < 200);
  }
  for (const char* ok : {"30", "1:00:00", "2-12", "1-00:00:00", "10:30"}) {
    auto o = synth_plan(d / "c1");
    o.time_limit = ok;
    CHECK_NOTHROW(make_plan(o));
  }
  // The CLI says the range readably (CLI11's own check printed 300 digits).
  auto r = test::run_tbcheck("campaign plan --cases corpus/synth --device rtx3090 --chunk 0 --out " + (d / "c2"));
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("not between 1 and 100000") != std::string::npos);
  CHECK(r.out.size() < 300);
}

TEST_CASE("a hand-edited manifest with a bad repeat, duplicate task indices or a control character is refused", "[campaign][errors]") {
  test::ScratchDir d("campaign");
  auto o = synth_plan(d / "c1");
  const Manifest m = make_plan(o);
  const model::json good = model::parse_json_text(manifest_text(m), "m");
  CHECK_NOTHROW(manifest_from_json(good, "m"));
  auto j = good;
  j["repeat"] = -3;
  CHECK(test::error_of([&] { manifest_from_json(j, "m"); }).field() == "repeat");
  j = good;
  j["devices"][0]["tasks"][1]["index"] = 0;
  CHECK(test::error_of([&] { manifest_from_json(j, "m"); }).reason().find("given twice") != std::string::npos);
  j = good;
  j["devices"][0]["tasks"][0]["cases"][0]["id"] = "a\nb";
  CHECK(test::error_of([&] { manifest_from_json(j, "m"); }).reason().find("control character") != std::string::npos);
  j = good;
  j["time_limit"] = "1; rm";
  CHECK(test::error_of([&] { manifest_from_json(j, "m"); }).field() == "time_limit");
  j = good;
  j["oracle"] = "replay";
  CHECK(test::error_of([&] { manifest_from_json(j, "m"); }).field() == "oracle");
}

TEST_CASE("a hand-edited manifest number that is not a whole number within int range is refused by field", "[campaign][errors][fuzz]") {
  // fuzz_campaign_manifest: "chunk": 1e91 reached get<int>(), which has no defined value for it.
  test::ScratchDir d("campaign");
  auto o = synth_plan(d / "c1");
  const model::json good = model::parse_json_text(manifest_text(make_plan(o)), "m");
  for (const char* field : {"chunk", "repeat", "schema_version"})
    for (const model::json& bad : {model::json(1e91), model::json(2.5), model::json(4294967297LL), model::json(-4294967297LL),
                                  model::json(18446744073709551615ULL)}) {
      auto j = good;
      j[field] = bad;
      INFO(field << " = " << bad.dump());
      const auto e = test::error_of([&] { manifest_from_json(j, "m"); });
      CHECK(e.field() == field);
      CHECK(e.where() == "m");
    }
  auto j = good;
  j["devices"][0]["tasks"][0]["index"] = -1e300;
  CHECK(test::error_of([&] { manifest_from_json(j, "m"); }).field() == "devices[0].tasks");
}
