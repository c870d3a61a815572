// Tests of report/src/table.cpp: aligned tables, a wrapped column that keeps a table within
// kTableWidth columns, and the text wrapping behind it.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "helpers.hpp"
#include "tbcheck/report/table.hpp"

using namespace tbcheck;

namespace {

size_t widest_line(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  size_t most = 0;
  while (std::getline(in, line)) most = std::max(most, report::display_width(line));
  return most;
}

}  // namespace

TEST_CASE("wrap_text breaks at spaces, slashes and commas, and cuts a word longer than the width", "[report][table]") {
  CHECK(report::wrap_text("short", 10) == std::vector<std::string>{"short"});
  CHECK(report::wrap_text("one two three four", 9) == std::vector<std::string>{"one two", "three", "four"});
  CHECK(report::wrap_text("0/8/16/32/64/100", 8) == std::vector<std::string>{"0/8/16/", "32/64/", "100"});
  CHECK(report::wrap_text("abcdefghij", 4) == std::vector<std::string>{"abcd", "efgh", "ij"});
  CHECK(report::wrap_text("", 4) == std::vector<std::string>{""});
}

TEST_CASE("a table with a wrapped column fits kTableWidth columns, other cells on the first line only", "[report][table]") {
  report::Table t({"name", "meaning"});
  t.wrap(1);
  const std::string long_text(300, 'x');
  t.add({"a", "a long explanation " + long_text});
  t.add({"b", "short"});
  const std::string out = t.render();
  CHECK(widest_line(out) <= report::kTableWidth);
  CHECK(out.find("\nb  ") != std::string::npos);
  const size_t first = out.find("a long explanation");
  REQUIRE(first != std::string::npos);
  CHECK(out.substr(out.rfind('\n', first) + 1, 2) == "a ");  // the name cell on the wrapped cell's first line
}

TEST_CASE("devices and hypotheses --options print within kTableWidth columns", "[report][table][cli]") {
  for (const char* cmd : {"devices", "hypotheses --options"}) {
    auto r = test::run_tbcheck(cmd, "");  // the default width
    INFO(cmd << "\n" << r.out);
    REQUIRE(r.exit_code == 0);
    CHECK(widest_line(r.out) <= report::kTableWidth);
  }
}
