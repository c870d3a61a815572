// The documentation's commands run as written: every `tbcheck ...` line of a ```sh block in
// README.md and docs/**/*.md (found at run time, so new pages need no edit here), and cli.md in step.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <sys/wait.h>

#include "helpers.hpp"
#include "shell.hpp"

using namespace tbcheck;
namespace fs = std::filesystem;

namespace {

// One `tbcheck` line of a ```sh block.
struct DocCommand {
  std::string file;  // relative to the repository root
  int line = 0;
  int block = 0;       // index of its fenced block in the file (commands of a block share one out/)
  std::string text;    // the line as written
  int expect_exit = 0;
  std::string not_run;  // reason, when marked `# not run: <reason>`
};

std::string trim_left(const std::string& s) {
  size_t i = s.find_first_not_of(" \t");
  return i == std::string::npos ? "" : s.substr(i);
}

// The convention of the team brief: lines inside ```sh fences that begin with `tbcheck `; a
// trailing `# exit N` sets the expected exit code, `# not run: reason` marks it as not run.
std::vector<DocCommand> parse_doc(const std::string& text, const std::string& file) {
  static const std::regex exit_mark(R"(#\s*exit\s+(\d+)\s*$)");
  static const std::regex not_run_mark(R"(#\s*not run:\s*(.*?)\s*$)");
  std::vector<DocCommand> out;
  std::istringstream in(text);
  std::string raw;
  bool in_fence = false, in_sh = false;
  std::string fence;  // the opening backticks/tildes
  int block = -1;
  for (int n = 1; std::getline(in, raw); ++n) {
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    const std::string t = trim_left(raw);
    if (!in_fence) {
      if (t.rfind("```", 0) == 0 || t.rfind("~~~", 0) == 0) {
        size_t k = t.find_first_not_of(t[0]);
        fence = t.substr(0, k == std::string::npos ? t.size() : k);
        std::string info = k == std::string::npos ? "" : trim_left(t.substr(k));
        info = info.substr(0, info.find_first_of(" \t{"));
        in_fence = true;
        in_sh = info == "sh";
        if (in_sh) ++block;
      }
      continue;
    }
    if (t.rfind(fence, 0) == 0 && t.find_first_not_of(fence[0]) == std::string::npos) {
      in_fence = in_sh = false;
      continue;
    }
    if (!in_sh || t.rfind("tbcheck ", 0) != 0) continue;
    DocCommand c{file, n, block, t, 0, ""};
    std::smatch m;
    if (std::regex_search(t, m, not_run_mark)) c.not_run = m[1].str().empty() ? "(no reason given)" : m[1].str();
    else if (std::regex_search(t, m, exit_mark)) c.expect_exit = std::stoi(m[1].str());
    out.push_back(c);
  }
  return out;
}

// Every `out/` that starts a path (after a space, '=', a quote or at the start) becomes `dir/`.
std::string replace_out(const std::string& line, const std::string& dir) {
  static const std::regex out_path(R"((^|[\s='"])out/)");
  return std::regex_replace(line, out_path, "$1" + dir + "/");
}

std::vector<std::string> doc_files() {
  std::vector<std::string> files;
  if (fs::exists(test::source_path("README.md"))) files.push_back("README.md");
  const fs::path docs = test::source_path("docs");
  if (fs::is_directory(docs))
    for (const auto& e : fs::recursive_directory_iterator(docs))
      if (e.is_regular_file() && e.path().extension() == ".md")
        files.push_back(fs::relative(e.path(), test::source_path("")).generic_string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs a shell line from the repository root under a hang guard; exit code and output.
test::RunResult run_shell(const std::string& line, int limit_s) {
  const std::string cmd = "cd '" + std::string(TBCHECK_SOURCE_DIR) + "' && timeout " + std::to_string(limit_s) +
                          " sh -c '" + std::regex_replace(line, std::regex("'"), "'\\''") + "' 2>&1";
  return test::run_shell(cmd);
}

// A ```text block that follows `<!-- output of: tbcheck ... -->`: what the page says the command prints.
struct DocOutput {
  std::string file;
  int line = 0;          // of the comment
  std::string command;   // the tbcheck line
  std::vector<std::string> lines;  // the block's lines; "..." stands for lines left out
};

std::vector<DocOutput> parse_outputs(const std::string& text, const std::string& file) {
  static const std::regex mark(R"(^<!--\s*output of:\s*(tbcheck .*?)\s*-->\s*$)");
  std::vector<DocOutput> out;
  std::istringstream in(text);
  std::string raw;
  std::optional<DocOutput> pending;
  bool in_block = false;
  for (int n = 1; std::getline(in, raw); ++n) {
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    std::smatch m;
    if (!in_block && std::regex_match(raw, m, mark)) {
      pending = DocOutput{file, n, m[1].str(), {}};
      continue;
    }
    if (pending && !in_block) {
      if (raw.rfind("```text", 0) == 0) in_block = true;
      else if (!trim_left(raw).empty()) pending.reset();  // the block must follow the comment
      continue;
    }
    if (in_block) {
      if (raw.rfind("```", 0) == 0) {
        out.push_back(*pending);
        pending.reset();
        in_block = false;
      } else {
        pending->lines.push_back(raw);
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("docs convention: sh fences, exit and not-run marks, out/ replaced", "[docs]") {
  const std::string md =
      "text\n"
      "```sh\n"
      "tbcheck devices\n"
      "scripts/setup.sh   # not a tbcheck line\n"
      "  tbcheck validate bad.json   # exit 2\n"
      "tbcheck run x.json --oracle cuda   # not run: needs a GPU\n"
      "```\n"
      "```console\n"
      "tbcheck devices --json\n"
      "```\n"
      "````sh\n"
      "```\n"
      "tbcheck random --out out/r --seed 1 # and out/ again: 'out/x' --to=out/y layout/ stdout/\n"
      "````\n"
      "tbcheck outside a fence\n";
  auto cmds = parse_doc(md, "x.md");
  REQUIRE(cmds.size() == 4);
  CHECK(cmds[0].text == "tbcheck devices");
  CHECK(cmds[0].line == 3);
  CHECK(cmds[0].expect_exit == 0);
  CHECK(cmds[1].expect_exit == 2);
  CHECK(cmds[2].not_run == "needs a GPU");
  CHECK(cmds[3].block == 1);
  CHECK(replace_out(cmds[3].text, "/tmp/T") ==
        "tbcheck random --out /tmp/T/r --seed 1 # and /tmp/T/ again: '/tmp/T/x' --to=/tmp/T/y layout/ stdout/");
}

TEST_CASE("every command in README.md and docs/ runs as documented, without ../shared", "[docs][cli]") {
  int ran = 0, not_run = 0, files_with_commands = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& file : doc_files()) {
    const auto cmds = parse_doc(read_text(test::source_path(file)), file);
    if (!cmds.empty()) ++files_with_commands;
    std::map<int, std::unique_ptr<test::TempDir>> outs;  // one fresh out/ per fenced block
    for (const auto& c : cmds) {
      INFO(c.file << ":" << c.line << ": " << c.text);
      // A fresh clone has no ../shared: no documented command may need it, run or not.
      CHECK(c.text.find("../shared") == std::string::npos);
      if (!c.not_run.empty()) {
        ++not_run;
        continue;
      }
      auto& out = outs[c.block];
      if (!out) out = std::make_unique<test::TempDir>();
      const std::string line =
          std::string(TBCHECK_BINARY) + c.text.substr(std::string("tbcheck").size());
      const auto start = std::chrono::steady_clock::now();
      auto r = run_shell(replace_out(line, out->path.string()), 120);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      INFO("output:\n" << r.out);
      if (r.exit_code == 124) FAIL_CHECK("ran past 120 s: mark it `# not run: minutes` or make it smaller");
      else CHECK(r.exit_code == c.expect_exit);
      if (s > 10) WARN(c.file << ":" << c.line << " took " << s << " s; documented commands should take a few seconds");
      ++ran;
    }
  }
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("test_docs: ran %d documented commands from %d files in %.1f s (%d marked not run)\n", ran,
              files_with_commands, total, not_run);
  CHECK(ran > 0);
}

TEST_CASE("each output the docs show after `<!-- output of: tbcheck ... -->` is what the command prints", "[docs][cli]") {
  int checked = 0;
  for (const auto& file : doc_files()) {
    for (const auto& d : parse_outputs(read_text(test::source_path(file)), file)) {
      INFO(d.file << ":" << d.line << ": " << d.command);
      test::TempDir out;
      // At the default width (COLUMNS unset), from the repository root, out/ in a fresh folder.
      const std::string line = "unset COLUMNS; " + std::string(TBCHECK_BINARY) + d.command.substr(std::string("tbcheck").size());
      auto r = run_shell(replace_out(line, out.path.string()), 120);
      INFO("output:\n" << r.out);
      // Every line shown appears, whole and in order; "..." stands for lines the page leaves out.
      std::vector<std::string> got;
      std::istringstream in(r.out);
      for (std::string l; std::getline(in, l);) got.push_back(l);
      size_t at = 0;
      for (const auto& want : d.lines) {
        if (trim_left(want) == "...") continue;
        while (at < got.size() && got[at] != want) ++at;
        INFO("missing or out of order: " << want);
        CHECK(at < got.size());
        if (at == got.size()) break;
        ++at;
      }
      ++checked;
    }
  }
  CHECK(checked > 0);
}

TEST_CASE("docs/cli.md is what scripts/gen_cli_md.sh makes from the built binary's --help", "[docs][cli]") {
  const std::string path = test::source_path("docs/cli.md");
  REQUIRE(fs::exists(path));
  auto r = run_shell("scripts/gen_cli_md.sh '" + std::string(TBCHECK_BINARY) + "'", 60);
  REQUIRE(r.exit_code == 0);
  INFO("regenerate with: scripts/gen_cli_md.sh build/cli/tbcheck > docs/cli.md");
  CHECK(r.out == read_text(path));
}
