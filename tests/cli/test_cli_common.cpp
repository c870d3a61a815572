// The conventions every command shares (cli/common.*), checked across the command table read from
// `tbcheck --help`: --json envelope first, one hypothesis option, required flags marked, exit status 1.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "helpers.hpp"

using tbcheck::test::run_tbcheck;
namespace fs = std::filesystem;

namespace {

// Writes `text` to `path`, creating its folders.
void write_file(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

// Every subcommand listed by `tbcheck --help`.
std::vector<std::string> commands() {
  auto r = run_tbcheck("--help");
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> out;
  std::istringstream in(r.out.substr(r.out.find("Subcommands:")));
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, std::regex(R"(^  ([a-z][a-z-]*)\s)"))) out.push_back(m[1]);
  }
  REQUIRE(out.size() >= 10);
  return out;
}

}  // namespace

TEST_CASE("every --json document starts with schema_version, then tool", "[cli][json]") {
  tbcheck::test::ScratchDir t("common");
  std::string out = "'";  // built in steps: GCC 12 warns (-Wrestrict, falsely) on "'" + string + "'"
  out += t.path;
  out += "'";
  // The smallest clone of nicolaswilde/thread-block-scheduling import-ntbs takes: one V100 Test2 grid.
  const std::string rule(80, '=');
  write_file(t / "clone/my-result/V100/V100.log", rule + "\nTest2 " + std::string(74, '=') +
                                               "\nK1 = K(4, 32, 32, 0 Bytes), all blocks 1s, stream1\n" + rule +
                                               "\nK1 smid = 0, 2, 1, 3, \n" + rule + "\n");
  write_file(t / "merged/README", "merge writes into an existing folder\n");
  // One quick invocation per command that has --json; a command added with --json and no line here fails.
  const std::map<std::string, std::vector<std::string>> runs = {
      {"devices", {"devices --json"}},
      {"hypotheses", {"hypotheses --json", "hypotheses --options --json"}},
      {"predict",
       {"predict corpus/paper/000-wang/case-4.2.json --json",
        "predict corpus/paper/000-wang/case-4.2.json -H alg1,alg1-paired --json"}},
      {"validate", {"validate corpus/paper/000-wang -H alg1 --json"}},
      {"distinguish",
       {"distinguish -H round-robin,most-room --max-kernels 1 --max-blocks 2 --timeout 1 --json",
        "distinguish -H round-robin,most-room --max-kernels 1 --max-blocks 2 --timeout 1 --shard 1/1 --out " + out +
            "/shard --json"}},
      {"merge", {"merge " + out + "/shard --out " + out + "/merged --json"}},  // after distinguish: the help lists it later
      {"suite", {"suite corpus/paper/000-wang -H alg1,round-robin --json"}},
      {"run", {"run corpus/paper/000-wang/case-4.2.json --oracle sim:alg1 --repeat 1 --out " + out + " --json"}},
      {"learn",
       {"learn --device rtx3090 -H alg1,round-robin --oracle sim:alg1 --corpus corpus/paper/000-wang --no-synthesis --json"}},
      {"random", {"random --out " + out + "/random --count 2 --json"}},
      {"minimize", {"minimize corpus/paper/000-wang/case-4.2.json --keep-disagreement alg1,alg1-counted-smem --json"}},
      {"check",
       {"check tests/data/check-no-skip-counted-smem.json --corpus corpus/paper/000-wang -H round-robin --synthesize none "
        "--json"}},
      {"import-ntbs", {"import-ntbs " + out + "/clone --out " + out + "/ntbs --json"}},
      {"merge",
       {"distinguish -H round-robin,most-room --max-kernels 1 --max-blocks 2 --timeout 1 --shard 1/1 --out " + out +
            "/shard --json",
        "merge " + out + "/shard --out " + out + "/merged --json"}},
      {"import-examiner",
       {"import-examiner tests/data/examiner/pair_stream0.json tests/data/examiner/pair_stream1.json --device rtx3090 --out " +
        out + "/examiner --json"}},
      {"retime",
       {"retime corpus/hw/h200/2026-11-26-run3/h200-wave-one-per-sm-66.cuda.json --unit-ns 1000 --out " + out +
        "/retimed --json"}},
  };
  size_t with_json = 0;
  for (const auto& cmd : commands()) {
    const bool has_json = run_tbcheck(cmd + " --help").out.find("--json") != std::string::npos;
    INFO(cmd);
    if (!has_json) {
      CHECK(runs.count(cmd) == 0);
      continue;
    }
    ++with_json;
    REQUIRE(runs.count(cmd) == 1);
    for (const auto& args : runs.at(cmd)) {
      auto r = run_tbcheck(args);
      INFO(args << "\n" << r.out.substr(0, 400));
      CHECK((r.exit_code == 0 || r.exit_code == 1));
      // The raw text, not the parsed object: nlohmann::json would sort the keys again.
      CHECK(r.out.rfind("{\n  \"schema_version\": 1,\n  \"tool\": {\n    \"name\": \"tbcheck\",", 0) == 0);
      CHECK_NOTHROW(nlohmann::json::parse(r.out));
    }
  }
  CHECK(with_json == runs.size());
}

TEST_CASE("every command that takes hypotheses spells the option -H, --hypothesis, --hypotheses", "[cli]") {
  size_t taking = 0;
  for (const auto& cmd : commands()) {
    const std::string help = run_tbcheck(cmd + " --help").out;
    INFO(cmd << "\n" << help);
    const bool any = help.find("--hypothes") != std::string::npos;
    if (!any) continue;
    ++taking;
    CHECK(help.find("-H,--hypothesis,--hypotheses") != std::string::npos);
  }
  CHECK(taking >= 6);  // predict, validate, distinguish, suite, learn, check
  // Both spellings are accepted and mean the same.
  auto one = run_tbcheck("validate corpus/paper/000-wang --hypothesis alg1,round-robin --json");
  auto other = run_tbcheck("validate corpus/paper/000-wang --hypotheses alg1,round-robin --json");
  auto dash = run_tbcheck("validate corpus/paper/000-wang -H alg1,round-robin --json");
  CHECK(one.exit_code == 0);
  CHECK(one.out == other.out);
  CHECK(one.out == dash.out);
  CHECK(run_tbcheck("suite corpus/paper/000-wang --hypothesis alg1,round-robin").out ==
        run_tbcheck("suite corpus/paper/000-wang --hypotheses alg1,round-robin").out);
}

TEST_CASE("an option a command cannot run without is marked REQUIRED in its --help", "[cli]") {
  for (const auto& cmd : commands()) {
    // Run with nothing: CLI11 names the first missing required option or positional.
    auto r = run_tbcheck(cmd);
    INFO(cmd << ": " << r.out);
    std::smatch m;
    if (!std::regex_search(r.out, m, std::regex(R"(([-a-z]+) is required)"))) continue;
    CHECK(r.exit_code == 2);
    const std::string help = run_tbcheck(cmd + " --help").out;
    std::string name = m[1];
    CHECK(std::regex_search(help, std::regex("(^|\\n)  (\\S+,)?" + name + "( [A-Z]+)*( \\.\\.\\.)? REQUIRED")));
  }
  // minimize needs exactly one of two predicates; its help says so on both.
  const std::string help = run_tbcheck("minimize --help").out;
  CHECK(std::regex_search(help, std::regex(R"(--keep-disagreement[^\n]*\n?[^\n]*required)")));
  CHECK(std::regex_search(help, std::regex(R"(--keep-failure[^\n]*\n?[^\n]*required)")));
}

TEST_CASE("validate and check mean the same by exit 1, and say so", "[cli]") {
  // A hypothesis no case names (round-robin under a new name) fails some of Wang's cases: findings, exit 0.
  tbcheck::test::ScratchDir t("common");
  const std::string mine = t / "mine.json";
  std::ofstream(mine) << R"({"name": "mine", "base": "round-robin"})";
  auto v = run_tbcheck("validate corpus/paper/000-wang -H '" + mine + "'");
  INFO(v.out);
  CHECK(v.exit_code == 0);
  CHECK(v.out.find("All expectations met (0") == std::string::npos);
  CHECK(std::regex_search(v.out, std::regex(R"(No case states an expectation for these hypotheses; the [1-9][0-9]* )"
                                            R"(failure\(s\) above are findings, not contradicted expectations \(exit 0\)\.)")));
  // With expectations judged, the line counts them.
  auto e = run_tbcheck("validate corpus/paper/000-wang -H alg1");
  CHECK(e.exit_code == 0);
  CHECK(std::regex_search(e.out, std::regex(R"(All [1-9][0-9]* expectation\(s\) met\.)")));
  // check: the same hypothesis, the same corpus, the same exit status.
  auto c = run_tbcheck("check '" + mine + "' --corpus corpus/paper/000-wang -H alg1 --synthesize none");
  INFO(c.out);
  CHECK(c.exit_code == v.exit_code);
  CHECK(c.out.find("No case's expectation for mine is contradicted") != std::string::npos);
  // An expectation contradicted is exit 1 in both.
  const std::string wrong = t / "case.json";
  std::ofstream(wrong) << R"({"id": "x", "device": "rtx3090", "kernels": [
    {"name": "k1", "blocks": 2, "threads": 32, "regs": 32, "duration": 1}],
    "observation": {"kind": "paper", "facts": [{"kernel": "k1", "on_sms": [0, 1]}]},
    "expect": {"mine": "fail"}})";  // round-robin does put the two blocks on SMs 0 and 1
  auto v1 = run_tbcheck("validate '" + wrong + "' -H '" + mine + "'");
  INFO(v1.out);
  auto c1 = run_tbcheck("check '" + mine + "' --corpus '" + wrong + "' -H alg1 --synthesize none");
  INFO(c1.out);
  CHECK(v1.exit_code == 1);
  CHECK(c1.exit_code == 1);
  for (const char* cmd : {"validate", "check"})
    CHECK(run_tbcheck(std::string(cmd) + " --help").out.find("1 an expectation is contradicted") != std::string::npos);
}

TEST_CASE("the hypotheses table has a column per mechanism, so no two shipped rows read alike", "[cli]") {
  const std::string out = run_tbcheck("hypotheses").out;
  const std::string header = out.substr(0, out.find('\n'));
  std::set<std::string> mechanisms;
  for (const auto& o : tbcheck::model::option_table()) mechanisms.insert(std::string(o.mechanism));
  for (const char* m : {"selection", "order", "warps", "registers", "smem", "smem config", "local", "capacity", "issue"})
    CHECK(header.find(m) != std::string::npos);
  CHECK(mechanisms.count("issue") == 1);
  // Rows minus the name: every shipped hypothesis differs from every other in some column.
  std::set<std::string> rows;
  std::istringstream in(out);
  std::string line;
  std::getline(in, line);
  std::getline(in, line);  // the rule under the header
  size_t n = 0;
  while (std::getline(in, line) && !line.empty()) {
    rows.insert(line.substr(header.find("selection")));
    ++n;
  }
  CHECK(n == tbcheck::model::builtin_hypotheses().size());
  CHECK(rows.size() == n);
  CHECK(out.find("   device") != std::string::npos);  // alg1-paired's issue column
  CHECK(out.find("pb-strict-rr +skip") != std::string::npos);
  CHECK(out.find("sm (ignored <= 32)") != std::string::npos);
}

TEST_CASE("number flags take plain decimal only, and name a value too close to 0 as such", "[cli][errors]") {
  for (const char* v : {"0x10", "0X1p3", " 5", "5 "}) {
    auto r = run_tbcheck(std::string("distinguish --timeout '") + v + "'");
    INFO(v << "\n" << r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("not a decimal number") != std::string::npos);
  }
  auto r = run_tbcheck("distinguish --timeout 1e-320");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("too close to 0") != std::string::npos);
  CHECK(r.out.find("not a finite number") == std::string::npos);
  // Integer flags go through the same parser, with a readable range.
  r = run_tbcheck("random --device rtx3090 --count 0x10 --out /nonexistent/x");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("not a decimal number") != std::string::npos);
}

TEST_CASE("integer flags refuse hex, exponents, nan and fractions with tbcheck: error:, the flag and the range", "[cli][errors]") {
  const std::map<std::string, std::string> why = {{"0x10", "not a decimal number"},
                                                  {"1e3", "not a whole number"},
                                                  {"nan", "not a finite number"},
                                                  {"1.5", "not a whole number"},
                                                  {"-inf", "not a finite number"},
                                                  {"99999999999999999999", "too large"},
                                                  {"", "no value"},
                                                  {"12abc", "not a number"}};
  for (const auto& [v, reason] : why) {
    auto r = run_tbcheck("retime corpus/hw --unit-ns '" + v + "' --out /nonexistent/x");
    INFO(v << "\n" << r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.rfind("tbcheck: error: --unit-ns: ", 0) == 0);
    CHECK(r.out.find(reason) != std::string::npos);
    CHECK(r.out.find("from 1 to 1000000000000") != std::string::npos);
    CHECK(r.out.find("Could not convert") == std::string::npos);
  }
  // A leading zero is decimal (CLI11 alone reads 010 as octal 8, which --max-kernels would accept).
  auto r = run_tbcheck("distinguish --max-kernels 010");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("010 is not between 1 and 8") != std::string::npos);
  // A floating flag too large for a double says so, with its range.
  r = run_tbcheck("distinguish --timeout 1e999");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("tbcheck: error: --timeout: 1e999 is too large") != std::string::npos);
}

TEST_CASE("every numeric option of every command goes through the one number parser", "[cli][errors]") {
  std::vector<std::string> cmds = commands();
  for (const char* sub : {"campaign plan", "campaign status", "campaign resume", "campaign collect"}) cmds.push_back(sub);
  size_t numeric = 0;
  for (const auto& cmd : cmds) {
    const std::string help = run_tbcheck(cmd + " --help").out;
    std::istringstream in(help);
    std::string line;
    while (std::getline(in, line)) {
      // CLI11 shows an option's type after its name (INT, UINT, FLOAT) and a check's description after a colon.
      std::smatch m;
      if (!std::regex_search(line, m, std::regex(R"(^\s+(-\w,)?(--[a-z-]+)(,-\w)? (U?INT|FLOAT)\b(\S*))"))) continue;
      ++numeric;
      INFO(cmd << ": " << line);
      CHECK(std::regex_match(std::string(m[5]), std::regex(R"(:(INTEGER|NUMBER))")));
    }
  }
  CHECK(numeric >= 30);
}

TEST_CASE("a mistyped command is named, with the nearest command where one is close", "[cli][errors]") {
  auto r = run_tbcheck("validat corpus/paper");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("tbcheck: error: 'validat' is not a command; did you mean 'validate'?") != std::string::npos);
  CHECK(r.out.find("A subcommand is required") == std::string::npos);
  r = run_tbcheck("distinguis");
  CHECK(r.out.find("did you mean 'distinguish'?") != std::string::npos);
  r = run_tbcheck("xyzzy-plugh");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("'xyzzy-plugh' is not a command (tbcheck --help") != std::string::npos);
  CHECK(r.out.find("did you mean") == std::string::npos);
  r = run_tbcheck("\"$(printf 'pred\\033[2Jict')\"");  // an ESC in what was typed is shown escaped
  CHECK(r.exit_code == 2);
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(r.out.find("\\x1b") != std::string::npos);
  // Other parse errors carry the same prefix.
  r = run_tbcheck("validate --no-such-flag");
  CHECK(r.exit_code == 2);
  CHECK(r.out.rfind("tbcheck: error: ", 0) == 0);
}

TEST_CASE("run and import-examiner write their default folders only from the repository root", "[cli]") {
  tbcheck::test::ScratchDir d("cwd-out");
  const std::string c = std::string(TBCHECK_SOURCE_DIR) + "/corpus/paper/000-wang/case-1.2.json";
  const std::string cmd = "cd '" + d.path.string() + "' && '" + TBCHECK_BINARY + "' run " + c + " --oracle sim:alg1 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = pclose(p);
  INFO(out);
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 2);
  CHECK(out.find("tbcheck: error: --out: not given, and this is not the repository root") != std::string::npos);
  CHECK(fs::is_empty(d.path));  // no ./corpus/sim
  CHECK(run_tbcheck("run --help").out.find("from the repository root only") != std::string::npos);
}

TEST_CASE("default corpora are the repository's own, found from its root, never a path outside it", "[cli]") {
  for (const char* cmd : {"learn", "check"}) {
    auto r = run_tbcheck(std::string(cmd) + " --help");
    INFO(cmd);
    CHECK(r.out.find("shared") == std::string::npos);
  }
  // Outside the repository root no command reads an empty corpus silently: learn says so as check does.
  tbcheck::test::ScratchDir d("cwd");
  for (const std::string& cmd : {std::string("learn --device rtx3090 --oracle sim:alg1 --no-synthesis"),
                                std::string("check alg1 --synthesize none")}) {
    const std::string line = "cd '" + d.path.string() + "' && '" + TBCHECK_BINARY + "' " + cmd + " 2>&1";
    FILE* p = popen(line.c_str(), "r");
    REQUIRE(p);
    std::string out;
    char buf[4096];
    size_t n = 0;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    const int st = pclose(p);
    INFO(cmd << "\n" << out);
    CHECK(WEXITSTATUS(st) == 2);
    CHECK(out.find("--corpus: not given, and no corpus") != std::string::npos);
  }
}

TEST_CASE("the device a command synthesizes or learns on is a built-in name or a device file in every such command",
          "[cli]") {
  tbcheck::test::ScratchDir d("device-file");
  const std::string dev = (d.path / "mini.json").string();
  write_file(dev, R"({"name": "mini", "cc": "8.6", "sms": 2, "sms_per_tpc": 2, "pbs_per_sm": 4, "max_blocks_per_sm": 16,
    "max_warps_per_sm": 8, "max_threads_per_block": 128, "regs_per_sm": 8192, "reg_alloc_unit": 256,
    "max_regs_per_thread": 64, "smem_configs_kb": [0, 8, 16], "smem_alloc_unit": 128, "smem_reserved_per_block": 1024,
    "max_smem_per_block": 15360})");
  // check's synthesized witness is built on the file's device, not on a built-in of that name.
  auto r = run_tbcheck("check alg1 --corpus corpus/paper/000-wang/case-4.2.json -H round-robin --synthesize all --timeout 1 "
                       "--json --device " + dev);
  INFO(r.out.substr(0, 600));
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& s = j.at("pairs").at(0).at("synthesis");
  CHECK(s.at("outcome") == "separated");
  CHECK(s.at("case").at("device").at("name") == "mini");
  CHECK(s.at("case").at("device").at("max_warps_per_sm") == 8);
  // On two SMs even-first is the natural order: nothing separates the pair, and --wide-samples says how many
  // random scenarios beyond the bounds were tried (none at 0).
  const std::string hyp = (d.path / "natural.json").string();
  write_file(hyp, R"({"name": "natural", "base": "alg1", "order": "natural"})");
  for (int wide : {40, 0}) {
    auto w = run_tbcheck("distinguish --max-kernels 1 --max-blocks 2 --timeout 1 --json -H alg1," + hyp + " --device " + dev +
                         " --wide-samples " + std::to_string(wide));
    INFO(w.out.substr(0, 600));
    REQUIRE(w.exit_code == 0);
    const auto p = nlohmann::json::parse(w.out).at("pairs").at(0);
    CHECK(p.at("outcome") == "inseparable within bounds");
    const std::string reason = p.at("reason");
    CHECK((reason.find("40 random scenarios beyond the bounds") != std::string::npos) == (wide == 40));
    CHECK((reason.find("beyond") != std::string::npos) == (wide == 40));
  }
  // A missing file is refused before any work, naming it, by each command alike.
  for (const std::string& cmd : {std::string("check alg1 --synthesize none --corpus corpus/paper/000-wang"),
                                 std::string("distinguish -H alg1,round-robin"),
                                 std::string("learn --oracle sim:alg1 --no-synthesis --corpus corpus/paper/000-wang")}) {
    auto bad = run_tbcheck(cmd + " --device " + (d.path / "nosuch.json").string());
    INFO(cmd << "\n" << bad.out);
    CHECK(bad.exit_code == 2);
    CHECK(bad.out.find("nosuch.json: no such file") != std::string::npos);
  }
}
