// Every text output fits the terminal: the everyday commands and every --help page, run with COLUMNS=120,
// print no line wider than 160 columns (issue 44); long lists are cut with a count and --details shows all.
#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <regex>
#include <thread>
#include <unistd.h>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include "helpers.hpp"
#include "tbcheck/report/table.hpp"

using namespace tbcheck;

namespace {

// Runs tbcheck from the repository root with COLUMNS set (stdout and stderr together).
test::RunResult run_at_width(const std::string& args, const std::string& columns = "120") {
  return test::run_tbcheck(args, columns);
}

size_t widest_line(const std::string& text) {
  std::istringstream in(text);
  size_t most = 0;
  for (std::string line; std::getline(in, line);) most = std::max(most, report::display_width(line));
  return most;
}

std::vector<std::string> subcommands() {
  std::vector<std::string> out;
  std::istringstream in(test::run_tbcheck("--help").out);
  bool on = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Subcommands:", 0) == 0) on = true;
    else if (on && line.size() > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ')
      out.push_back(line.substr(2, line.find(' ', 2) - 2));
  }
  return out;
}

}  // namespace

TEST_CASE("the everyday commands print no line wider than 160 columns with COLUMNS=120", "[cli][width]") {
  struct Run {
    std::string args;
    int exit_code;
  };
  const std::vector<Run> runs = {
      {"devices", 0},
      {"hypotheses", 0},
      {"hypotheses --options", 0},
      {"predict corpus/paper/000-wang/case-1.2.json --hypothesis alg1", 0},
      {"validate corpus/paper --hypothesis all", 0},
      // The whole folder under every hypothesis is minutes; this recording has the 13,285-column order line.
      {"validate corpus/hw/h200/2026-11-26-run3/h200-cluster-fill-8.cuda.json --timing trace", 0},
      {"check tests/data/check-no-skip-counted-smem.json --corpus corpus/paper --synthesize none", 0},
      {"distinguish --device rtx3090 --hypotheses alg1,alg1-natural-order,round-robin", 0},
      // Exit 1: without synthesis the survivor stays unconfirmed (some neighbours no paper case separates).
      {"learn --device rtx3090 --hypotheses round-robin,most-room,alg1 --oracle sim:alg1 --corpus corpus/paper --no-synthesis", 1},
  };
  for (const auto& run : runs) {
    auto r = run_at_width(run.args);
    INFO("tbcheck " << run.args << "\n" << r.out);
    CHECK(r.exit_code == run.exit_code);
    CHECK(widest_line(r.out) <= 160);
  }
}

TEST_CASE("every --help page fits 160 columns with COLUMNS=120, and 100 without COLUMNS", "[cli][width]") {
  const auto cmds = subcommands();
  REQUIRE(cmds.size() > 10);
  {
    auto r = run_at_width("--help");
    INFO(r.out);
    CHECK(widest_line(r.out) <= 120);
  }
  for (const auto& c : cmds) {
    auto r = run_at_width(c + " --help");
    INFO("tbcheck " << c << " --help\n" << r.out);
    CHECK(r.exit_code == 0);
    CHECK(widest_line(r.out) <= 120);
    auto d = test::run_tbcheck(c + " --help", "");  // the default width
    CHECK(widest_line(d.out) <= report::kTableWidth);
  }
}

TEST_CASE("validate --timing trace cuts a long retirement order with a count, --details shows it all", "[cli][width]") {
  const std::string args = "validate corpus/hw/h200/2026-11-26-run3/h200-cluster-fill-8.cuda.json --timing trace --hypothesis round-robin";
  auto cut = run_at_width(args);
  auto all = run_at_width(args + " --details");
  INFO(cut.out);
  REQUIRE(cut.out.find("Passes under an order the recording did not observe") != std::string::npos);
  CHECK(widest_line(cut.out) <= 120);
  CHECK(widest_line(all.out) <= 120);
  CHECK(cut.out.find("more (--details shows all)") != std::string::npos);
  CHECK(cut.out.find("clusters8[300]") == std::string::npos);
  CHECK(all.out.find("clusters8[300]") != std::string::npos);  // the whole order, wrapped
}

TEST_CASE("a table too wide for the terminal folds into bands, or into one block per row", "[report][width]") {
  report::Table t({"name", "a", "b", "c"});
  t.add({"first", std::string(30, 'a'), std::string(30, 'b'), std::string(30, 'c')});
  t.add({"second", "1", "2", "3"});
  const std::string banded = t.render(60);
  INFO(banded);
  CHECK(widest_line(banded) <= 60);
  CHECK(banded.find("second") != banded.rfind("second"));  // the first column repeated in each band
  report::Table wide({"name", "text"});
  wide.add({"x", std::string(200, 'w')});
  const std::string rows = wide.render(60);
  INFO(rows);
  CHECK(widest_line(rows) <= 60);
  CHECK(rows.find("text:") != std::string::npos);
}

TEST_CASE("fit_line wraps under the label, cut_list keeps what fits and counts the rest", "[report][width]") {
  const auto lines = report::fit_line("  --flag TEXT   " + std::string(20, 'x') + " " + std::string(60, 'y'), 50);
  REQUIRE(lines.size() >= 2);
  for (const auto& l : lines) CHECK(report::display_width(l) <= 50);
  CHECK(lines[1].rfind(std::string(16, ' '), 0) == 0);  // continued under the description
  const std::string cut = report::cut_list({"alpha", "beta", "gamma", "delta", "epsilon"}, 30, ", ", " (--details)");
  CHECK(report::display_width(cut) <= 30);
  CHECK(cut.find("more (--details)") != std::string::npos);
  CHECK(report::cut_list({"a", "b"}, 30) == "a, b");
}

namespace {

// What `f` writes to stderr (fd 2 sent to a temporary file meanwhile).
template <class F>
std::string stderr_of(F&& f) {
  std::fflush(stderr);
  FILE* tmp = std::tmpfile();
  const int saved = dup(2);
  dup2(fileno(tmp), 2);
  f();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::rewind(tmp);
  std::string out;
  for (int c; (c = std::fgetc(tmp)) != EOF;) out.push_back(static_cast<char>(c));
  std::fclose(tmp);
  return out;
}

}  // namespace

TEST_CASE("progress off a terminal: a line after 10 s with the count and an estimate, none when quiet", "[report][progress]") {
  // Off a terminal (stderr is a file here) nothing comes in the first 10 s, then a line every 10 s.
  const std::string shown = stderr_of([] {
    report::Progress p("work", 4);
    p.tick();
    std::this_thread::sleep_for(std::chrono::milliseconds(10300));
  });
  INFO(shown);
  CHECK(std::regex_search(shown, std::regex(R"(work: 1/4 \(25%\), 1\d s elapsed, about \d+ s left)")));
  const std::string quiet = stderr_of([] {
    report::Progress::set_quiet(true);
    report::Progress p("work", 4);
    p.tick();
    std::this_thread::sleep_for(std::chrono::milliseconds(10300));
  });
  report::Progress::set_quiet(false);
  CHECK(quiet.empty());
  const std::string quick = stderr_of([] {
    report::Progress p("work", 4);
    p.tick(4);
  });
  CHECK(quick.empty());  // done before the first line is due
}
