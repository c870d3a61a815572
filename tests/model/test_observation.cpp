// Corpus cases and observations: facts and recordings checked against the case's own scenario,
// and load_cases on single files, collections and directories (the Table II corpus, ntbs recordings).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "helpers.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/one_case.hpp"

using namespace tbcheck;
using namespace tbcheck::model;
using tbcheck::test::error_of;

namespace {

// A case on rtx3090 with kernels a (2 blocks) and b (1 block) and the given observation.
json case_with(const json& observation) {
  json j = json::parse(R"({"id": "c", "source": "test", "device": "rtx3090", "kernels": [
      {"name": "a", "blocks": 2, "threads": 32, "regs": 32, "smem": 0, "duration": 1},
      {"name": "b", "blocks": 1, "threads": 32, "regs": 32, "smem": 0, "duration": 1}]})");
  j["observation"] = observation;
  return j;
}

InputError case_error(const json& observation) {
  return error_of([&] { case_from_json(case_with(observation), "case.json"); });
}

// A scratch directory removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name) : path(std::filesystem::temp_directory_path() / name) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& rel, const std::string& text) const {
    auto p = path / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
};

}  // namespace

TEST_CASE("observation: a case with every kind of fact and a recording loads", "[loaders][observation]") {
  Case c = case_from_json(case_with(json::parse(R"({"kind": "hardware",
      "sm_of_block": {"a": [0, 2], "b": [81]}, "start_of_block": {"a": [0, 0]},
      "facts": [{"kernel": "a", "on_sms": [0, 2]}, {"kernel": "a", "block": 1, "sm": 2},
                {"kernel": "b", "starts_at": 0}, {"kernel": "b", "starts_after": ["a"]},
                {"kernel": "a", "concurrent_with": ["b"], "note": "why"}]})")),
                          "case.json");
  CHECK(c.id == "c");
  CHECK(c.source == "test");
  CHECK(c.file == "case.json");
  REQUIRE(c.observation.has_value());
  const Observation& o = *c.observation;
  CHECK(o.kind == ObservationKind::Hardware);
  CHECK(o.has_recording());
  CHECK(o.sm_of_block.at("a") == std::vector<int>{0, 2});
  CHECK(o.sm_of_block.at("b") == std::vector<int>{81});
  CHECK(o.start_of_block.at("a") == std::vector<int>{0, 0});
  REQUIRE(o.facts.size() == 5);
  CHECK(o.facts[0].kind == Fact::Kind::OnSms);
  CHECK(o.facts[0].sms == std::vector<int>{0, 2});
  CHECK(o.facts[1].kind == Fact::Kind::BlockOnSm);
  CHECK(o.facts[1].block == 1);
  CHECK(o.facts[1].sm == 2);
  CHECK(o.facts[2].kind == Fact::Kind::StartsAt);
  CHECK(o.facts[3].kind == Fact::Kind::StartsAfter);
  CHECK(o.facts[3].kernels == std::vector<std::string>{"a"});
  CHECK(o.facts[4].kind == Fact::Kind::ConcurrentWith);
  CHECK(o.facts[1].describe() == "a block 1 is on SM 2");
  CHECK(o.facts[3].describe() == "b starts only after a finished");
  // Round trip through the case JSON.
  Case again = case_from_json(c.to_json(), "again");
  CHECK(again.to_json() == c.to_json());
}

TEST_CASE("observation: facts must name kernels of the case", "[loaders][observation]") {
  InputError e = case_error(json::parse(R"({"facts": [{"kernel": "zz", "on_sms": [0]}]})"));
  CHECK(e.where() == "case.json");
  CHECK(e.field() == "observation.facts[0].kernel");
  CHECK(e.reason() == "no kernel named 'zz' in this case; kernels are: a, b");

  InputError after = case_error(json::parse(R"({"facts": [{"kernel": "b", "starts_after": ["a", "k9"]}]})"));
  CHECK(after.field() == "observation.facts[0].starts_after[1]");
  CHECK(after.reason() == "no kernel named 'k9' in this case; kernels are: a, b");

  InputError conc = case_error(json::parse(R"({"facts": [{"kernel": "b", "concurrent_with": []}]})"));
  CHECK(conc.field() == "observation.facts[0].concurrent_with");
  CHECK(conc.reason() == "expected a non-empty array of kernel names");

  InputError rec = case_error(json::parse(R"({"sm_of_block": {"c": [0]}})"));
  CHECK(rec.field() == "observation.sm_of_block.c");
  CHECK(rec.reason() == "no kernel named 'c' in this case; kernels are: a, b");
}

TEST_CASE("observation: recordings must have one entry per block and SMs of the device", "[loaders][observation]") {
  InputError len = case_error(json::parse(R"({"sm_of_block": {"a": [0]}})"));
  CHECK(len.field() == "observation.sm_of_block.a");
  CHECK(len.reason() == "lists 1 blocks but kernel a has 2");
  InputError len2 = case_error(json::parse(R"({"start_of_block": {"b": [0, 1]}})"));
  CHECK(len2.field() == "observation.start_of_block.b");
  CHECK(len2.reason() == "lists 2 blocks but kernel b has 1");

  InputError sm = case_error(json::parse(R"({"sm_of_block": {"a": [0, 82]}})"));
  CHECK(sm.field() == "observation.sm_of_block.a[1]");
  CHECK(sm.reason() == "82 is above the maximum 81");
  InputError neg = case_error(json::parse(R"({"sm_of_block": {"a": [-1, 0]}})"));
  CHECK(neg.field() == "observation.sm_of_block.a[0]");
  CHECK(neg.reason() == "-1 is below the minimum 0");

  InputError fact_sm = case_error(json::parse(R"({"facts": [{"kernel": "a", "on_sms": [0, 82]}]})"));
  CHECK(fact_sm.field() == "observation.facts[0].on_sms[1]");
  CHECK(fact_sm.reason() == "82 is above the maximum 81");
  InputError block_sm = case_error(json::parse(R"({"facts": [{"kernel": "a", "block": 0, "sm": 82}]})"));
  CHECK(block_sm.field() == "observation.facts[0].sm");
  CHECK(block_sm.reason() == "82 is above the maximum 81");
  InputError block = case_error(json::parse(R"({"facts": [{"kernel": "a", "block": 2, "sm": 0}]})"));
  CHECK(block.field() == "observation.facts[0].block");
  CHECK(block.reason() == "2 is above the maximum 1");

  InputError type = case_error(json::parse(R"({"sm_of_block": {"a": "0, 1"}})"));
  CHECK(type.field() == "observation.sm_of_block.a");
  CHECK(type.reason() == "expected an array, found a string");
}

TEST_CASE("observation: a fact has exactly one kind, kinds and fields are checked", "[loaders][observation]") {
  InputError two = case_error(json::parse(R"({"facts": [{"kernel": "a", "on_sms": [0], "starts_at": 0}]})"));
  CHECK(two.field() == "observation.facts[0]");
  CHECK(two.reason() == "a fact needs exactly one of: on_sms, block + sm, starts_at, starts_after, concurrent_with, "
                        "clusters_coscheduled");
  InputError zero = case_error(json::parse(R"({"facts": [{"kernel": "a"}]})"));
  CHECK(zero.field() == "observation.facts[0]");
  InputError unknown = case_error(json::parse(R"({"facts": [{"kernel": "a", "on_sm": [0]}]})"));
  CHECK(unknown.field() == "observation.facts[0].on_sm");
  CHECK_THAT(unknown.reason(), Catch::StartsWith("unknown field; valid fields are: kernel, on_sms, block, sm"));
  InputError kind = case_error(json::parse(R"({"kind": "rumour"})"));
  CHECK(kind.field() == "observation.kind");
  CHECK(kind.reason() == "unknown kind 'rumour'; valid kinds are: hardware, paper, synthetic");
  InputError obs_field = case_error(json::parse(R"({"sms": {}})"));
  CHECK(obs_field.field() == "observation.sms");
  InputError expect = error_of([] {
    json j = case_with(json::object());
    j["expect"] = {{"alg1", "maybe"}};
    case_from_json(j, "case.json");
  });
  CHECK(expect.field() == "expect.alg1");
  CHECK(expect.reason() == "expected \"pass\" or \"fail\"");
  // Without a kind an observation is a paper observation.
  Case c = case_from_json(case_with(json::parse(R"({"facts": [{"kernel": "a", "on_sms": [0]}]})")), "case.json");
  CHECK(c.observation->kind == ObservationKind::Paper);
  CHECK_FALSE(c.observation->has_recording());
}

TEST_CASE("load_cases: the Table II directory", "[loaders][observation]") {
  std::vector<Case> cs = load_cases(test::source_path("corpus/paper/000-wang"));
  std::vector<std::string> ids;
  for (const auto& c : cs) ids.push_back(c.id);
  CHECK(ids == std::vector<std::string>{"case-1.1", "case-1.2", "case-1.3", "case-1.4", "case-2.1", "case-2.2", "case-3",
                                        "case-4.1", "case-4.2"});
  for (const auto& c : cs) {
    INFO(c.id);
    CHECK(c.scenario.device.name == "rtx3090");
    REQUIRE(c.observation.has_value());
    CHECK_FALSE(c.observation->facts.empty());
    CHECK(c.file.find("000-wang") != std::string::npos);
  }
  // Case 3: two kernels, k1's 41 blocks on the even SMs, expectations from the paper.
  const Case& c3 = cs[6];
  CHECK(c3.scenario.kernels.size() == 2);
  CHECK(c3.scenario.kernels[0].blocks == 41);
  CHECK(c3.observation->facts[0].sms.size() == 41);
  CHECK(c3.expect.at("alg1") == Expect::Pass);
  CHECK(c3.expect.at("alg1-no-tpc-config") == Expect::Fail);
}

TEST_CASE("load_cases: collections and the ntbs recordings", "[loaders][observation]") {
  const std::string ntbs = test::shared_or_skip("external/ntbs");
  if (ntbs.empty()) return;
  std::vector<Case> a100 = load_cases(ntbs + "/a100.json");
  CHECK(a100.size() == 22);
  for (const auto& c : a100) {
    INFO(c.id);
    CHECK(c.scenario.device.name == "a100");
    CHECK_THAT(c.source, Catch::Contains("thread-block-scheduling"));
    REQUIRE(c.observation.has_value());
    CHECK(c.observation->kind == ObservationKind::Hardware);
    CHECK(c.observation->has_recording());
  }
  CHECK(a100[0].id == "ntbs-a100-test2-216");
  CHECK(a100[0].scenario.kernels[0].blocks == 216);
  CHECK(a100[0].observation->sm_of_block.at("K1").size() == 216);

  std::vector<Case> all = load_cases(ntbs);
  CHECK(all.size() == 79);
  std::set<std::string> devices, ids;
  for (const auto& c : all) {
    devices.insert(c.scenario.device.name);
    ids.insert(c.id);
  }
  CHECK(devices == std::set<std::string>{"a100", "rtx2080ti", "rtx3090", "v100"});
  CHECK(ids.size() == 79);  // ids are unique
}

TEST_CASE("load_cases: ids, defaults and skipped files", "[loaders][observation]") {
  TempDir dir("tbcheck-test-observation");
  const std::string kernels =
      R"("device": "rtx3090", "kernels": [{"name": "a", "blocks": 1, "threads": 32, "regs": 32, "duration": 1}])";
  dir.write("b/one.json", "{" + kernels + "}");
  dir.write("a/many.json", R"({"source": "coll", "cases": [{)" + kernels + R"(}, {"id": "named", "source": "own", )" +
                               kernels + "}]}");
  dir.write("a/device.json", R"({"name": "x"})");  // no "kernels": skipped in a directory
  dir.write("notes.txt", "not json");
  std::vector<Case> cs = load_cases(dir.path.string());
  REQUIRE(cs.size() == 3);
  CHECK(cs[0].id == "many#0");  // files in path order: a/many.json before b/one.json
  CHECK(cs[0].source == "coll");
  CHECK(cs[1].id == "named");
  CHECK(cs[1].source == "own");
  CHECK(cs[2].id == "one");  // the file stem
  CHECK_FALSE(cs[2].observation.has_value());

  // The same non-case file given directly is an error that says what is missing.
  InputError e = error_of([&] { load_cases((dir.path / "a/device.json").string()); });
  CHECK_THAT(e.reason(), Catch::StartsWith("not a corpus case: it has neither \"kernels\" nor \"cases\""));

  // An error inside a collection names the case.
  std::string bad = dir.write("c/bad.json", R"({"cases": [{)" + kernels + R"(}, {"device": "rtx3090", "kernels": [
      {"blocks": 1, "threads": 1200, "regs": 32, "duration": 1}]}]})");
  InputError f = error_of([&] { load_cases(bad); });
  CHECK(f.where() == bad + ": cases[1]");
  CHECK(f.field() == "kernels[0].threads");
  CHECK(f.reason() == "1200 threads > 1024 per block on rtx3090");

  InputError missing = error_of([&] { load_cases((dir.path / "nope").string()); });
  CHECK(missing.reason() == "no such file or directory");
}

TEST_CASE("load_one_case: one case of a file or the one --case names and never a folder", "[loaders][observation]") {
  TempDir dir("tbcheck-test-one-case");
  const std::string kernels =
      R"("device": "rtx3090", "kernels": [{"name": "a", "blocks": 1, "threads": 32, "regs": 32, "duration": 1}])";
  const std::string one = dir.write("one.json", "{" + kernels + "}");
  const std::string many = dir.write("many.json", R"({"cases": [{"id": "x", )" + kernels + R"(}, {"id": "y", )" + kernels + "}]}");
  CHECK(load_one_case(one, "", "predict").id == "one");
  CHECK(load_one_case(many, "y", "predict").id == "y");

  InputError whole = error_of([&] { load_one_case(many, "", "minimize"); });
  CHECK(whole.where() == many);
  CHECK(whole.reason() == "minimize takes one scenario or case; this holds 2 (--case ID picks one)");
  InputError unknown = error_of([&] { load_one_case(many, "z", "run"); });
  CHECK(unknown.field() == "--case");
  CHECK(unknown.reason() == "no case with id 'z'");
  InputError folder = error_of([&] { load_one_case(dir.path.string(), "", "run"); });
  CHECK(folder.reason() == "is a directory (a scenario or case file is expected here)");
}

TEST_CASE("observation: block ends, launch calls and a resolution load and write back", "[loaders][observation]") {
  const json o = json::parse(R"({"kind": "hardware", "sm_of_block": {"a": [0, 1], "b": [2]},
      "start_of_block": {"a": [0, 0], "b": [3]}, "end_of_block": {"a": [5, 4], "b": [9]},
      "launch_of_kernel": {"a": 0, "b": 2}, "resolution": {"tick": 2, "launch_window": 3}})");
  const Case c = case_from_json(case_with(o), "case.json");
  REQUIRE(c.observation);
  CHECK(c.observation->end_of_block.at("a") == std::vector<int>{5, 4});
  CHECK(c.observation->launch_of_kernel.at("b") == 2);
  REQUIRE(c.observation->resolution);
  CHECK(c.observation->resolution->tick == 2);
  CHECK(c.observation->resolution->launch_window == 3);
  CHECK(c.observation->has_block_times(c.scenario));
  CHECK(c.observation->to_json() == o);
}

TEST_CASE("observation: a block must end after it starts, and resolutions are checked", "[loaders][observation]") {
  InputError end = case_error(json::parse(R"({"start_of_block": {"a": [0, 4]}, "end_of_block": {"a": [1, 4]}})"));
  CHECK(end.field() == "observation.end_of_block.a[1]");
  CHECK(end.reason() == "block 1 ends at 4, not after its start 4");
  InputError alone = case_error(json::parse(R"({"end_of_block": {"a": [1, 4]}})"));
  CHECK(alone.field() == "observation.end_of_block");
  InputError tick = case_error(json::parse(R"({"sm_of_block": {"a": [0, 1]}, "resolution": {"tick": 0}})"));
  CHECK(tick.field() == "observation.resolution.tick");
  InputError key = case_error(json::parse(R"({"sm_of_block": {"a": [0, 1]}, "resolution": {"window": 1}})"));
  CHECK(key.field() == "observation.resolution.window");
  InputError who = case_error(json::parse(R"({"sm_of_block": {"a": [0, 1]}, "launch_of_kernel": {"c": 1}})"));
  CHECK(who.field() == "observation.launch_of_kernel.c");
}

TEST_CASE("observation: a case id with a control character is refused at load", "[loaders][observation]") {
  for (const char* id : {R"(a\nb)", R"(a\u001b[31mb)", R"(a\u0000b)"}) {
    const std::string text = std::string(R"({"id": ")") + id +
                             R"(", "device": "rtx3090", "kernels": [{"name": "k", "blocks": 1, "threads": 32, "regs": 32, "smem": 0, "duration": 1}]})";
    const auto e = error_of([&] { case_from_json(parse_json_text(text, "c.json"), "c.json"); });
    CHECK(e.field() == "id");
    CHECK(e.reason().find("control character") != std::string::npos);
  }
}

TEST_CASE("load_cases: a large folder comes out in name order, and its first bad file in that order is the error",
          "[loaders][observation]") {
  // Enough files for load_cases to read them on several threads.
  TempDir dir("tbcheck-test-observation-many");
  const std::string kernels =
      R"("device": "rtx3090", "kernels": [{"name": "a", "blocks": 1, "threads": 32, "regs": 32, "duration": 1}])";
  for (int i = 0; i < 120; ++i) dir.write(fmt::format("d{:03}/case-{:03}.json", i % 7, i), "{" + kernels + "}");
  std::vector<Case> cs = load_cases(dir.path.string());
  REQUIRE(cs.size() == 120);
  std::vector<std::string> ids;
  for (const auto& c : cs) ids.push_back(c.file);
  CHECK(std::is_sorted(ids.begin(), ids.end()));
  CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == 120);

  // Two bad files: the one first in name order is reported, whichever thread read it.
  const std::string bad_kernel = R"("device": "rtx3090", "kernels": [{"name": "a", "blocks": 1, "threads": 1200, "regs": 32, "duration": 1}])";
  const std::string first = dir.write("d002/case-050.json", "{" + bad_kernel + "}");
  dir.write("d006/case-999.json", "{ not json");
  for (int round = 0; round < 5; ++round) {
    InputError e = error_of([&] { load_cases(dir.path.string()); });
    CHECK(e.where() == first);
    CHECK(e.field() == "kernels[0].threads");
  }
}

TEST_CASE("observation: a recording no SM could hold is refused as impossible, naming the block", "[loaders][observation]") {
  // 66 blocks of 164 KB on one H200 SM at once: its 228 KB hold one.
  json j = json::parse(R"({"id": "c", "device": "h200", "kernels": [
      {"name": "big", "blocks": 66, "threads": 128, "regs": 32, "smem": 167936, "duration": 10}]})");
  std::vector<int> sm(66, 0), start(66, 0), end(66, 10);
  j["observation"] = {{"kind", "hardware"}, {"sm_of_block", {{"big", sm}}}, {"start_of_block", {{"big", start}}},
                      {"end_of_block", {{"big", end}}}};
  auto e = error_of([&] { case_from_json(j, "c.json"); });
  CHECK(e.field() == "observation.start_of_block.big[1]");
  CHECK_THAT(e.reason(), Catch::Contains("impossible recording") && Catch::Contains("shared memory") &&
                             Catch::Contains("SM 0"));
  // One after the other, the same blocks fit: 66 blocks of 10 units each in turn.
  for (int b = 0; b < 66; ++b) start[static_cast<size_t>(b)] = 10 * b, end[static_cast<size_t>(b)] = 10 * b + 10;
  j["observation"]["start_of_block"]["big"] = start;
  j["observation"]["end_of_block"]["big"] = end;
  CHECK_NOTHROW(case_from_json(j, "c.json"));
  // Too many resident blocks, on rtx3090 (16 per SM); an overlap within the timer's tick is no proof.
  json k = json::parse(R"({"id": "c", "device": "rtx3090", "kernels": [
      {"name": "k", "blocks": 17, "threads": 32, "regs": 32, "smem": 0, "duration": 4}]})");
  k["observation"] = {{"kind", "hardware"}, {"sm_of_block", {{"k", std::vector<int>(17, 3)}}},
                      {"start_of_block", {{"k", std::vector<int>(17, 0)}}}, {"end_of_block", {{"k", std::vector<int>(17, 4)}}}};
  e = error_of([&] { case_from_json(k, "c.json"); });
  CHECK(e.field() == "observation.start_of_block.k[16]");
  CHECK_THAT(e.reason(), Catch::Contains("17 blocks") && Catch::Contains("at most 16"));
  k["observation"]["resolution"] = {{"tick", 2}};
  CHECK_NOTHROW(case_from_json(k, "c.json"));
}

TEST_CASE("observation: a FIFO inside a corpus folder is an error naming it, not skipped", "[loaders][observation]") {
  TempDir t("tbcheck-obs-fifo");
  t.write("a.json", case_with(json::object()).dump());
  const std::string fifo = (t.path / "sub" / "pipe.json").string();
  std::filesystem::create_directories(t.path / "sub");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto e = error_of([&] { load_cases(t.path.string()); });
  CHECK(std::string(e.what()).find("pipe.json") != std::string::npos);
  CHECK(e.reason().find("not a regular file") != std::string::npos);
  std::filesystem::remove(fifo);
  CHECK(load_cases(t.path.string()).size() == 1);
}

TEST_CASE("case: the run metadata is a field of its own, and the older notes form reads into it",
          "[loaders][observation]") {
  json j = case_with(json::parse(R"({"kind": "hardware", "sm_of_block": {"a": [0, 1], "b": [2]}})"));
  j["notes"] = "tbcheck run of c: ok over 2 repetition(s)";
  j["run"] = json::parse(R"({"oracle": "cuda", "repetitions": 2, "raw_ns": [{"origin_ns": 7}]})");
  const Case c = case_from_json(j, "case.json");
  CHECK(c.run.at("oracle") == "cuda");
  CHECK(c.notes == "tbcheck run of c: ok over 2 repetition(s)");
  CHECK(c.to_json() == j);

  // Recordings written before: the metadata at the end of the notes. Read into `run`, written back as a field.
  json old = j;
  old.erase("run");
  old["notes"] = std::string(j["notes"]) + "; metadata " + j["run"].dump();
  const Case o = case_from_json(old, "old.json");
  CHECK(o.run == c.run);
  CHECK(o.notes == c.notes);
  CHECK(o.to_json() == j);
  // Notes that only look like the mark stay notes.
  old["notes"] = "see the run's log; metadata lost";
  const Case text = case_from_json(old, "text.json");
  CHECK(text.run.is_null());
  CHECK(text.notes == "see the run's log; metadata lost");
  CHECK_FALSE(text.to_json().contains("run"));

  j["run"] = "cuda";
  const InputError e = error_of([&] { case_from_json(j, "case.json"); });
  CHECK(e.where() == "case.json");
  CHECK(e.field() == "run");
}
