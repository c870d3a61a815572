// Tests of the SVG timeline: one bar per block, a legend naming every kernel, escaping, lanes that
// keep co-resident blocks apart, and a document that is well-formed XML even on a 132-SM device.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <vector>

#include <fmt/format.h>

#include "helpers.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/report/svg.hpp"

using namespace tbcheck;
using namespace tbcheck::model;

namespace {

// Two SMs with full-size per-SM limits, so small blocks pile up and overlap on one SM.
const char* kMiniDevice = R"({"name": "mini-ampere-2", "cc": "8.6", "sms": 2, "sms_per_tpc": 2, "pbs_per_sm": 4,
  "max_blocks_per_sm": 16, "max_warps_per_sm": 48, "max_threads_per_block": 1024,
  "regs_per_sm": 65536, "reg_alloc_unit": 256, "max_regs_per_thread": 255,
  "smem_configs_kb": [0, 8, 16, 32, 64, 100], "smem_alloc_unit": 128,
  "smem_reserved_per_block": 1024, "max_smem_per_block": 101376})";

Scenario mini_scenario() {
  return test::scenario(std::string(R"({"device": )") + kMiniDevice + R"(, "kernels": [
    {"name": "k1", "blocks": 5, "threads": 256, "regs": 32, "duration": 3},
    {"name": "k2", "blocks": 4, "threads": 128, "regs": 32, "duration": 1},
    {"name": "a<b>&\"c'", "blocks": 3, "threads": 64, "regs": 32, "duration": 2}]})");
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

// Minimal well-formedness check: tags nest and close, attributes are quoted, and every '&'
// starts one of the five predefined entities (the only ones the renderer may emit).
void require_well_formed(const std::string& svg) {
  std::vector<std::string> open;
  size_t i = 0;
  REQUIRE(svg.rfind("<?xml", 0) == 0);
  i = svg.find("?>") + 2;
  size_t roots = 0;
  while (i < svg.size()) {
    if (svg[i] == '&') {
      bool ok = false;
      for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"}) ok = ok || svg.compare(i, std::string(e).size(), e) == 0;
      INFO("at byte " << i << ": " << svg.substr(i, 12));
      REQUIRE(ok);
    }
    if (svg[i] != '<') {
      ++i;
      continue;
    }
    const size_t close = svg.find('>', i);
    REQUIRE(close != std::string::npos);
    std::string tag = svg.substr(i + 1, close - i - 1);
    // Quotes inside the tag must pair up, and no '<' may hide in an attribute value.
    REQUIRE(count(tag, "\"") % 2 == 0);
    REQUIRE(tag.find('<') == std::string::npos);
    if (tag[0] == '/') {
      REQUIRE(!open.empty());
      REQUIRE(open.back() == tag.substr(1));
      open.pop_back();
    } else {
      const bool self_closing = tag.back() == '/';
      const std::string name = tag.substr(0, tag.find_first_of(" /"));
      if (open.empty()) ++roots;
      if (!self_closing) open.push_back(name);
    }
    i = close + 1;
  }
  REQUIRE(open.empty());
  REQUIRE(roots == 1);
}

struct Bar {
  double x, y, w, h;
  std::string tooltip;
};

std::vector<Bar> bars(const std::string& svg) {
  static const std::regex re(
      R"re(<rect class="block" x="([^"]+)" y="([^"]+)" width="([^"]+)" height="([^"]+)"[^>]*><title>([^<]*)</title></rect>)re");
  std::vector<Bar> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back({std::stod((*it)[1]), std::stod((*it)[2]), std::stod((*it)[3]), std::stod((*it)[4]), (*it)[5]});
  return out;
}

std::string legend_of(const std::string& svg) {
  const size_t from = svg.find("<g class=\"legend\"");
  const size_t to = svg.find("<g class=\"rows\"");
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  return svg.substr(from, to - from);
}

}  // namespace

TEST_CASE("svg: one bar per block, legend names every kernel, well-formed", "[svg]") {
  Scenario sc = mini_scenario();
  Schedule s = simulate(sc, test::hyp("alg1"));
  const std::string svg = report::render_timeline_svg(s, sc, "mini <timeline> & co");
  require_well_formed(svg);

  CHECK(count(svg, "<rect class=\"block\"") == static_cast<size_t>(sc.total_blocks()));
  CHECK(bars(svg).size() == static_cast<size_t>(sc.total_blocks()));
  const std::string legend = legend_of(svg);
  for (const auto& k : sc.kernels) CHECK(legend.find(">" + report::xml_escape(k.name) + "</text>") != std::string::npos);
  CHECK(svg.find(">SM 0</text>") != std::string::npos);
  CHECK(svg.find(">SM 1</text>") != std::string::npos);
  // Every block has its tooltip, with kernel, index, SM and interval.
  const auto& b = s.kernels[1].blocks[2];
  CHECK(svg.find(fmt::format("<title>k2 block 2: SM {}, {}-{}</title>", b.sm, b.start, b.end)) != std::string::npos);
}

TEST_CASE("svg: XML special characters in names and titles are escaped", "[svg]") {
  Scenario sc = mini_scenario();
  Schedule s = simulate(sc, test::hyp("alg1"));
  const std::string svg = report::render_timeline_svg(s, sc, "t<i>tle & \"quotes\" 'too'");
  CHECK(svg.find("a&lt;b&gt;&amp;&quot;c&apos;") != std::string::npos);
  CHECK(svg.find("a<b>") == std::string::npos);
  CHECK(svg.find("t&lt;i&gt;tle &amp; &quot;quotes&quot; &apos;too&apos;") != std::string::npos);
  CHECK(svg.find("t<i>tle") == std::string::npos);
  CHECK(report::xml_escape(std::string("x\x01y")) == "x?y");
  require_well_formed(svg);
}

TEST_CASE("svg: greedy lanes give overlapping blocks distinct lanes, reuse freed ones", "[svg]") {
  // One SM: A [0,4), B [1,3) nested in A, C [2,6) overlapping both without nesting, D [4,5) after A.
  Schedule s;
  s.device = "mini";
  s.sms = 2;
  s.kernels = {{"A", {{0, 0, 4}}}, {"B", {{0, 1, 3}}}, {"C", {{0, 2, 6}, {1, 0, 1}}}, {"D", {{0, 4, 5}}}};
  report::Lanes lanes = report::assign_lanes(s, 2);
  CHECK(lanes.of_block[0][0] == 0);
  CHECK(lanes.of_block[1][0] == 1);
  CHECK(lanes.of_block[2][0] == 2);
  CHECK(lanes.of_block[2][1] == 0);
  CHECK(lanes.of_block[3][0] == 0);  // A is gone at 4: its lane is free again
  CHECK(lanes.per_sm == std::vector<int>{3, 1});
  // A block on an SM outside the rows drawn is left out, not mis-drawn.
  CHECK(report::assign_lanes(s, 1).of_block[2][1] == -1);
}

TEST_CASE("svg: co-resident blocks of a simulated schedule never cover each other", "[svg]") {
  Scenario sc = mini_scenario();
  Schedule s = simulate(sc, test::hyp("alg1"));
  const std::string svg = report::render_timeline_svg(s, sc, "overlap");
  std::vector<Bar> all = bars(svg);
  REQUIRE(all.size() == static_cast<size_t>(sc.total_blocks()));
  // Tooltip order is block order, so the i-th bar is the i-th block in kernel order.
  std::vector<BlockPlacement> placements;
  for (const auto& k : s.kernels)
    for (const auto& b : k.blocks) placements.push_back(b);
  size_t overlapping_pairs = 0;
  for (size_t i = 0; i < all.size(); ++i)
    for (size_t j = i + 1; j < all.size(); ++j) {
      const auto &p = placements[i], &q = placements[j];
      if (p.sm != q.sm || p.end <= q.start || q.end <= p.start) continue;
      ++overlapping_pairs;
      INFO(all[i].tooltip << " vs " << all[j].tooltip);
      CHECK((all[i].y + all[i].h <= all[j].y + 1e-9 || all[j].y + all[j].h <= all[i].y + 1e-9));
    }
  CHECK(overlapping_pairs > 0);  // the scenario must exercise stacking at all
}

TEST_CASE("svg: a 132-SM device keeps rows readable and the document valid", "[svg]") {
  Scenario sc = test::scenario(R"({"device": "h100-sxm", "kernels": [
    {"name": "k1", "blocks": 132, "threads": 1024, "regs": 32, "duration": 2},
    {"name": "k2", "blocks": 264, "threads": 1024, "regs": 32, "duration": 1},
    {"name": "k3", "blocks": 10, "threads": 1024, "regs": 64, "duration": 3}]})");
  Schedule s = simulate(sc, test::hyp("alg1"));
  const std::string svg = report::render_timeline_svg(s, sc, "h100");
  require_well_formed(svg);
  CHECK(svg.find(">SM 131</text>") != std::string::npos);
  std::vector<Bar> all = bars(svg);
  REQUIRE(all.size() == 406);
  double lowest = 0;
  for (const auto& b : all) {
    CHECK(b.h >= 4);   // never a hairline lane
    CHECK(b.h <= 14);  // one-block-at-a-time rows stay compact
    CHECK(b.w >= 1);
    lowest = std::max(lowest, b.y + b.h);
  }
  // Rows are ~14 px apart: 132 of them fit in about 1900 px (plus header and axis).
  CHECK(lowest < 132 * 16 + 120);
}

TEST_CASE("svg: colours cycle through the palette for many kernels", "[svg]") {
  std::string kernels;
  for (int i = 0; i < 12; ++i) kernels += fmt::format("{}{{\"name\": \"kern{}\", \"blocks\": 1, \"threads\": 32, \"regs\": 32, \"smem\": 0, \"duration\": 1}}", i ? "," : "", i);
  Scenario sc = test::scenario(std::string(R"({"device": )") + kMiniDevice + R"(, "kernels": [)" + kernels + "]}");
  Schedule s = simulate(sc, test::hyp("alg1"));
  const std::string svg = report::render_timeline_svg(s, sc, "many");
  require_well_formed(svg);
  static const std::regex fill_re(R"re(<rect class="swatch"[^>]*fill="(#[0-9a-f]{6})")re");
  std::vector<std::string> fills;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), fill_re); it != std::sregex_iterator(); ++it)
    fills.push_back((*it)[1]);
  REQUIRE(fills.size() == 12);
  CHECK(fills[0] != fills[1]);
  CHECK(fills[10] == fills[0]);  // 10-colour palette wraps around
  for (int i = 0; i < 12; ++i) CHECK(legend_of(svg).find(fmt::format(">kern{}</text>", i)) != std::string::npos);
}
