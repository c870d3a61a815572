// Regression tests for crashes the libFuzzer targets (fuzz/, scripts/fuzz.sh) found, each input that once
// escaped as something other than InputError replayed; and the in-memory entries those targets drive.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "helpers.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/oracle/examiner.hpp"

using namespace tbcheck::model;
namespace examiner = tbcheck::oracle::examiner;

// fuzz_device, crash-7de09946: "regs_per_sm": 6E5536 made nlohmann::json throw out_of_range (406,
// number overflow), which parse_json_text did not turn into an InputError.
TEST_CASE("a number too large for a double is an InputError", "[fuzz]") {
  CHECK_THROWS_AS(parse_json_text("6E5536", "fuzz"), InputError);
  CHECK_THROWS_AS(parse_json_text("{\"sms\": -1e400}", "fuzz"), InputError);
  try {
    parse_json_text("{\"regs_per_sm\": 6E5536}", "fuzz");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.where() == "fuzz");
    CHECK(std::string(e.what()).find("6E5536") != std::string::npos);
  }
  // The same through the loaders the fuzzers drive.
  CHECK_THROWS_AS(device_from_json(parse_json_text("{\"name\": \"x\", \"sms\": 6E5536}", "fuzz"), "fuzz"), InputError);
  const std::string scenario = "{\"device\": \"rtx3090\", \"kernels\": [{\"blocks\": 1e999}]}";
  CHECK_THROWS_AS(scenario_from_json(parse_json_text(scenario, "fuzz"), "fuzz"), InputError);
}

// fuzz_examiner_log and fuzz_examiner_config import from memory (no file per input): what they fuzz must be
// what import-examiner does with the same bytes in a file, cases and refusals alike.
TEST_CASE("the examiner importers read a text in memory as they read its file", "[fuzz][examiner]") {
  examiner::ImportOptions o;
  o.device = builtin_device("rtx3090", "test", "device");
  auto path = [](const std::string& f) { return tbcheck::test::source_path("tests/data/examiner/" + f); };
  const std::string s0 = path("pair_stream0.json"), s1 = path("pair_stream1.json");
  const auto from_files = examiner::import_logs({s0, s1}, o);
  const auto from_texts = examiner::import_log_texts({{s0, read_input_file(s0, "")}, {s1, read_input_file(s1, "")}}, o);
  REQUIRE(from_files.size() == 1);
  REQUIRE(from_texts.size() == 1);
  CHECK(from_texts[0].to_json() == from_files[0].to_json());

  const std::string bad = path("bad_times.json");
  std::string file_error, text_error;
  try {
    examiner::import_logs({bad}, o);
  } catch (const InputError& e) {
    file_error = e.what();
  }
  try {
    examiner::import_log_texts({{bad, read_input_file(bad, "")}}, o);
  } catch (const InputError& e) {
    text_error = e.what();
  }
  CHECK_THAT(file_error, Catch::Contains("bad_times.json"));
  CHECK(text_error == file_error);
  CHECK_THROWS_AS(examiner::import_log_texts({}, o), InputError);

  const std::string config = path("config-priority.json");
  o.device = builtin_device("tx2", "test", "device");  // a device with a stream priority range
  o.time_unit_ms = 50;                                  // its times are whole multiples of 50 ms
  CHECK(examiner::import_config_text(read_input_file(config, ""), config, o).to_json() ==
        examiner::import_config(config, o).to_json());
  try {
    examiner::import_config_text("{\"benchmarks\": [", "mine.json", o);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.where() == "mine.json");
  }
}

// fuzz_examiner_config, crash-955584ff: a benchmark's "filename" (or the config's "name") of another JSON type
// made nlohmann throw type_error (302) out of import_config: import-examiner --config ended in exit 3.
TEST_CASE("an examiner config field of the wrong JSON type is an InputError naming it", "[fuzz][examiner]") {
  examiner::ImportOptions o;
  o.device = builtin_device("rtx3090", "test", "device");
  const std::string crash = read_input_file(tbcheck::test::source_path("fuzz/seeds/fuzz_examiner_config/filename-a-number.json"), "");
  try {
    examiner::import_config_text(crash, "crash.json", o);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.where() == "crash.json");
    CHECK(e.field() == "benchmarks[0].filename");
  }
  const std::string named = R"({"name": 5, "benchmarks": [{"filename": "./bin/timer_spin.so", "thread_count": 32,
      "block_count": 1, "additional_info": 20000000}]})";
  try {
    examiner::import_config_text(named, "named.json", o);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.field() == "name");
  }
  // The same config with a string name loads.
  std::string ok = named;
  ok.replace(ok.find("5"), 1, "\"five\"");
  CHECK(examiner::import_config_text(ok, "named.json", o).scenario.kernels.size() == 1);
}

// fuzz_cli_bounded, crash-f867dd09: `random ... --out $'\x87&' --json` wrote its cases, then nlohmann threw
// type_error 316 (invalid UTF-8) printing the written paths: exit 3 after the work was done.
TEST_CASE("an output path that is not UTF-8 is refused by its flag before any work", "[fuzz]") {
  const std::string dir = std::filesystem::temp_directory_path() / "tbcheck-fuzz-utf8";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // The shell's printf makes the raw bytes (popen's sh has no $'...').
  auto r = tbcheck::test::run_tbcheck("random --count 3 --max-blocks 1 --must-run alg1 --json --out \"$(printf '" +
                                      dir + "/\\207&')\"");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--out: is not valid UTF-8") != std::string::npos);
  CHECK(std::filesystem::is_empty(dir));  // nothing written
  r = tbcheck::test::run_tbcheck("predict corpus/paper/000-wang/case-1.1.json --svg \"$(printf '" + dir +
                                 "/a\\377.svg')\"");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--svg: is not valid UTF-8") != std::string::npos);
  InputError e = tbcheck::test::error_of([&] { check_output_dir(dir + "/\xc3(", "--out"); });
  CHECK(e.field() == "--out");
  CHECK(e.where() == dir + "/\xef\xbf\xbd(");  // shown with U+FFFD where its bytes are not UTF-8
  CHECK_NOTHROW(check_output_dir(dir + "/r\xc3\xa9sultats", "--out"));  // UTF-8 beyond ASCII is a path like any
  std::filesystem::remove_all(dir);
}

// fuzz_cli_bounded, crash-8ed2d376: `export-examiner rec.json --plugin $'\xff...'` put the plugin path into the
// config and nlohmann threw type_error 316 writing it: exit 3.
TEST_CASE("a plugin path that is not UTF-8 is refused by its flag and no config is written", "[fuzz]") {
  tbcheck::test::ScratchDir d("fuzz-plugin");
  const std::string out = (d.path / "cfg.json").string();
  auto r = tbcheck::test::run_tbcheck("export-examiner corpus/paper/000-wang/case-1.1.json --out " + out +
                                      " --plugin \"$(printf 'lib\\377.so')\"");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--plugin: is not valid UTF-8; the plugin path is written into JSON") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
  // A UTF-8 path beyond ASCII is written as given.
  r = tbcheck::test::run_tbcheck("export-examiner corpus/paper/000-wang/case-1.1.json --out " + out +
                                 " --plugin ./bin/multik\xc3\xa9rnel.so");
  REQUIRE(r.exit_code == 0);
  std::ifstream in(out);
  CHECK(nlohmann::json::parse(in).dump().find("multik\xc3\xa9rnel.so") != std::string::npos);
}

// Found beside crash-8ed2d376, by hand: a log or case file whose name is not UTF-8 ended import-examiner and
// minimize in exit 3 after their work (the name is quoted in the written case's source and notes), and
// campaign plan likewise (the manifest names every case file).
TEST_CASE("a file name that is not UTF-8 is quoted with U+FFFD in the files written, or refused where it is an address",
          "[fuzz]") {
  tbcheck::test::ScratchDir d("fuzz-names");
  const std::string dir = d.path.string();
  auto sh = [&](const std::string& cmd) { return std::system(("cd '" + dir + "' && " + cmd).c_str()); };
  REQUIRE(sh("cp '" + tbcheck::test::source_path("tests/data/examiner/pair_stream0.json") + "' \"$(printf 'log\\377.json')\"") == 0);
  REQUIRE(sh("cp '" + tbcheck::test::source_path("corpus/paper/000-wang/case-1.1.json") + "' \"$(printf 'case\\377.json')\"") == 0);
  const std::string log = "\"$(printf '" + dir + "/log\\377.json')\"", cs = "\"$(printf '" + dir + "/case\\377.json')\"";
  auto r = tbcheck::test::run_tbcheck("import-examiner " + log + " --device rtx3090 --out " + dir + "/imported");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  std::ifstream imported(dir + "/imported/examiner-tbcheck-pair.json");
  CHECK(nlohmann::json::parse(imported).at("source").get<std::string>().find("log\xef\xbf\xbd.json") != std::string::npos);
  r = tbcheck::test::run_tbcheck("minimize " + cs + " --keep-disagreement alg1,round-robin --out " + dir + "/min.json");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  std::ifstream minimized(dir + "/min.json");
  CHECK(nlohmann::json::parse(minimized).at("notes").get<std::string>().find("case\xef\xbf\xbd.json") != std::string::npos);
  r = tbcheck::test::run_tbcheck("campaign plan --cases " + cs + " --device rtx3090 --out " + dir + "/camp");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--cases: is not valid UTF-8; a case file's path is written into JSON") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/camp"));
}

// fuzz_cli_bounded, slow-unit-f44dcf3f: `learn --hypotheses ''` read the empty list as "left out" and learned
// over the whole composition space; every other command refuses an empty list.
TEST_CASE("learn refuses an empty hypothesis list instead of learning over the composition space", "[fuzz]") {
  for (const char* flag : {"--hypotheses", "-H"}) {
    auto r = tbcheck::test::run_tbcheck(std::string("learn --device tx2 --oracle sim:alg1 ") + flag + " ''");
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("no hypothesis given") != std::string::npos);
  }
}
