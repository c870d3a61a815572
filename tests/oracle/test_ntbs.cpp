// The ntbs importer: the raw logs of nicolaswilde/thread-block-scheduling give exactly the shipped
// recordings, case for case; malformed logs and clones are exit-2 errors naming the file and line.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "helpers.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/oracle/ntbs.hpp"

using namespace tbcheck;
using test::TempDir;
namespace fs = std::filesystem;

namespace {

// A log in the shape of the repository's: build noise, a profiler-only test, Test2 and Test8
// (whose header repeats K1's parameters for K2 and K3, as the real logs do).
const char* kLog = R"(make -C test1 GPGPU=V100
================================================================================
Test1 ==========================================================================
K1 = K(160, 1024, 32, 0 Bytes), last block 1s, other blocks 2s, stream1
K2 = K(2, 1024, 32, 0 Bytes), all blocks 1s,                  stream2
================================================================================
Generating '/tmp/nsys-report-1a02.qdstrm'
================================================================================
Test2 ==========================================================================
K1 = K(4, 32, 32, 0 Bytes), all blocks 1s, stream1
================================================================================
K1 smid = 0, 2, 1, 3, 
================================================================================
================================================================================
Test8 ==========================================================================
K1 = K(2, 256, 128, 0 Bytes), all blocks 1s, stream1
K2 = K(2, 256, 128, 0 Bytes), all blocks 1s, stream2
K3 = K(2, 256, 128, 0 Bytes), all blocks 1s, stream3
================================================================================
K1 smid = 0, 2
K2 smid = 1, 3
K3 smid = 1
================================================================================
)";

std::string error_of_parse(const std::string& text) {
  try {
    oracle::ntbs::parse_log(text, "v100", "my-result/V100/V100.log", "clone/my-result/V100/V100.log");
  } catch (const model::InputError& e) {
    return e.what();
  }
  FAIL("expected an InputError");
  return "";
}

// kLog with line `n` (1-based) replaced.
std::string with_line(int n, const std::string& replacement) {
  std::string out, line;
  std::istringstream in(kLog);
  for (int i = 1; std::getline(in, line); ++i) out += (i == n ? replacement : line) + "\n";
  return out;
}

}  // namespace

TEST_CASE("parse_log: one case per experiment with smid lines, Test8's header corrected", "[ntbs]") {
  auto cases = oracle::ntbs::parse_log(kLog, "v100", "my-result/V100/V100.log", "x.log");
  REQUIRE(cases.size() == 2);
  CHECK(cases[0]["id"] == "ntbs-v100-test2-4");
  CHECK(cases[0]["source"] == "nicolaswilde/thread-block-scheduling my-result/V100/V100.log (Test2)");
  CHECK(cases[0]["kernels"][0]["threads"] == 32);
  CHECK(cases[0]["observation"]["sm_of_block"]["K1"] == model::json::array({0, 2, 1, 3}));
  CHECK(cases[1]["id"] == "ntbs-v100-test8-2-2-1");
  CHECK(cases[1]["kernels"][1]["threads"] == 128);
  CHECK(cases[1]["kernels"][1]["blocks"] == 2);
  CHECK(cases[1]["kernels"][2]["threads"] == 128);
  CHECK(cases[1]["kernels"][2]["blocks"] == 1);
  CHECK_FALSE(cases[1]["kernels"][0].contains("stream"));  // distinct streams: each kernel its own
  for (const auto& c : cases) CHECK_NOTHROW(model::case_from_json(c, "imported"));
}

TEST_CASE("parse_log: malformed lines are errors naming file:line", "[ntbs][errors]") {
  // Line 12 is Test2's smid line, line 10 its kernel line.
  CHECK_THAT(error_of_parse(with_line(12, "K1 smid = 0, two, 1, 3")),
             Catch::Contains("clone/my-result/V100/V100.log:12") && Catch::Contains("'two' is not an SM id"));
  CHECK_THAT(error_of_parse(with_line(12, "K1 smid = 0, 2, 1")),
             Catch::Contains(":12") && Catch::Contains("3 SM ids for a kernel of 4 blocks"));
  CHECK_THAT(error_of_parse(with_line(12, "K1 smid = 0, 2, 1, 300")),
             Catch::Contains(":12") && Catch::Contains("not a valid case"));
  CHECK_THAT(error_of_parse(with_line(10, "K1 = K(4, 32, 32), all blocks 1s, stream1")),
             Catch::Contains(":12") && Catch::Contains("declares no kernel K1"));
  CHECK_THAT(error_of_parse(with_line(12, "K1 smid =")), Catch::Contains(":12") && Catch::Contains("no SM ids"));
  CHECK_THAT(error_of_parse("K1 smid = 0\n"), Catch::Contains(":1") && Catch::Contains("before any"));
}

TEST_CASE("parse_log: a number past int or its field's range names file:line and the field, never an internal error", "[ntbs][errors]") {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"K1 = K(99999999999, 32, 32, 0 Bytes), all blocks 1s, stream1", "K1 blocks"},
      {"K1 = K(4, 99999999999, 32, 0 Bytes), all blocks 1s, stream1", "K1 threads"},
      {"K1 = K(4, 32, 99999999999, 0 Bytes), all blocks 1s, stream1", "K1 regs"},
      {"K1 = K(4, 32, 32, 99999999999 Bytes), all blocks 1s, stream1", "K1 smem"},
      {"K1 = K(4, 32, 32, 0 Bytes), all blocks 99999999999s, stream1", "K1 duration"},
      {"K1 = K(4, 32, 32, 0 Bytes), all blocks 1s, stream99999999999", "K1 stream"},
      {"K9999999999 = K(4, 32, 32, 0 Bytes), all blocks 1s, stream1", "K<i>"},
  };
  for (const auto& [line, field] : bad) {
    INFO(line);
    const std::string e = error_of_parse(with_line(10, line));
    CHECK_THAT(e, Catch::StartsWith("clone/my-result/V100/V100.log:10: " + field + ": "));
    CHECK_THAT(e, Catch::Contains("is not between"));
  }
  CHECK_THAT(error_of_parse(with_line(9, "Test99999999999 ===")), Catch::StartsWith("clone/my-result/V100/V100.log:9: TestN"));
  CHECK_THAT(error_of_parse(with_line(12, "K99999999999 smid = 0, 2, 1, 3, ")), Catch::Contains(":12:"));
}

TEST_CASE("import_clone names a log that is a directory or a symbolic link loop", "[ntbs][errors]") {
  TempDir t;
  fs::create_directories(t.path / "my-result/V100/V100.log");
  try {
    oracle::ntbs::import_clone(t.path.string());
    FAIL("no error");
  } catch (const model::InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("V100.log") && Catch::Contains("is a directory"));
  }
  fs::remove(t.path / "my-result/V100/V100.log");
  fs::create_symlink(t.path / "my-result/V100/V100.log", t.path / "my-result/V100/V100.log");
  try {
    oracle::ntbs::import_clone(t.path.string());
    FAIL("no error");
  } catch (const model::InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("Too many levels of symbolic links"));
  }
}

TEST_CASE("import_clone: missing folders and logs are errors, unknown GPUs are skipped", "[ntbs][errors]") {
  TempDir t;
  auto error_of = [](const std::string& dir) {
    try {
      oracle::ntbs::import_clone(dir);
    } catch (const model::InputError& e) {
      return std::string(e.what());
    }
    FAIL("expected an InputError");
    return std::string();
  };
  CHECK_THAT(error_of((t.path / "absent").string()), Catch::Contains("absent") && Catch::Contains("no such directory"));
  CHECK_THAT(error_of(t.path.string()), Catch::Contains("my-result") && Catch::Contains("no such directory"));
  fs::create_directories(t.path / "my-result" / "V100");
  CHECK_THAT(error_of(t.path.string()), Catch::Contains("V100.log") && Catch::Contains("no such file or directory"));
  t.write("my-result/V100/V100.log", kLog);
  t.write("my-result/GTX9000/GTX9000.log", kLog);
  auto imported = oracle::ntbs::import_clone(t.path.string());
  REQUIRE(imported.collections.size() == 1);
  CHECK(imported.collections[0].device == "v100");
  CHECK(imported.collections[0].collection["cases"].size() == 2);
  REQUIRE(imported.skipped.size() == 1);
  CHECK(imported.skipped[0].gpu == "GTX9000");
}

TEST_CASE("import-ntbs of the raw logs equals the shipped recordings case for case", "[ntbs][external]") {
  const std::string raw = test::shared_or_skip("external/ntbs-raw");
  const std::string shipped = test::shared_or_skip("external/ntbs");
  if (raw.empty() || shipped.empty()) return;
  auto imported = oracle::ntbs::import_clone(raw);
  REQUIRE(imported.collections.size() == 3);
  for (const auto& c : imported.collections) {
    INFO(c.gpu);
    const model::json expected = model::read_json_file(shipped + "/" + c.device + ".json");
    CHECK(c.collection["source"] == expected["source"]);
    const auto& got = c.collection["cases"];
    REQUIRE(got.size() == expected["cases"].size());
    for (size_t i = 0; i < got.size(); ++i) {
      INFO(expected["cases"][i]["id"].get<std::string>());
      CHECK(got[i] == expected["cases"][i]);
    }
  }
}

TEST_CASE("tbcheck import-ntbs: writes one collection per GPU, never over an existing one, exit 2 on bad input",
          "[ntbs][cli]") {
  TempDir t;
  t.write("clone/my-result/V100/V100.log", kLog);
  const std::string out = (t.path / "out" / "new").string();
  auto r = test::run_tbcheck("import-ntbs '" + (t.path / "clone").string() + "' --out '" + out + "'");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  auto cases = model::load_cases(out + "/v100.json");
  CHECK(cases.size() == 2);
  auto again = test::run_tbcheck("import-ntbs '" + (t.path / "clone").string() + "' --out '" + out + "'");
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.out, Catch::Contains("v100.json") && Catch::Contains("already exists"));

  t.write("bad/my-result/V100/V100.log", with_line(12, "K1 smid = 0, 2, x, 3"));
  auto bad = test::run_tbcheck("import-ntbs '" + (t.path / "bad").string() + "' --out '" + (t.path / "o2").string() + "'");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.out, Catch::Contains("V100.log:12"));
  CHECK_FALSE(fs::exists(t.path / "o2" / "v100.json"));
  auto missing = test::run_tbcheck("import-ntbs '" + (t.path / "nowhere").string() + "' --out '" + (t.path / "o3").string() + "'");
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.out, Catch::Contains("nowhere"));
}
