// Tests of the SVG timeline: one bar per block, a legend naming every kernel, escaping, lanes that
// keep co-resident blocks apart, a well-formed document on a 132-SM device, zoom, folding and the difference picture.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <vector>

#include <fmt/format.h>

#include "helpers.hpp"
#include "tbcheck/model/observation.hpp"
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
  for (const auto& k : sc.kernels) CHECK(legend.find(fmt::format(">{}</text>", report::xml_escape(k.name))) != std::string::npos);
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
  report::TimelineOptions one_row_per_sm;
  one_row_per_sm.fold = false;
  const std::string svg = report::render_timeline_svg(s, sc, "h100", one_row_per_sm);
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

namespace {

// Row labels of a picture, top to bottom.
std::vector<std::string> row_labels(const std::string& svg) {
  static const std::regex re(R"re(<text x="[^"]+" y="[^"]+">(SM [^<]*)</text>)re");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) out.push_back((*it)[1]);
  return out;
}

// Tooltips of the bars that carry a difference mark ("differs" or "first").
std::vector<std::string> marked(const std::string& svg, const std::string& mark) {
  static const std::regex re(R"re(<rect class="block"[^>]*data-diff="([a-z]+)"[^>]*><title>([^<]*)</title>)re");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it)
    if ((*it)[1] == mark) out.push_back((*it)[2]);
  return out;
}

// Wang et al. Case 4.2 (nine kernels of 82 blocks on the RTX 3090): every SM runs the same row.
Scenario case_4_2() { return load_cases(test::source_path("corpus/paper/000-wang/case-4.2.json")).at(0).scenario; }

}  // namespace

TEST_CASE("svg: runs of SMs with identical rows fold into one labelled row", "[svg]") {
  const Scenario sc = case_4_2();
  const Schedule s = simulate(sc, test::hyp("alg1"));
  const std::string folded = report::render_timeline_svg(s, sc, "4.2");
  require_well_formed(folded);
  // Every SM holds one block of each kernel at the same times and lanes: one row for all 82.
  CHECK(row_labels(folded) == std::vector<std::string>{"SM 0-81 (82 SMs, same)"});
  const std::vector<Bar> all = bars(folded);
  REQUIRE(all.size() == sc.kernels.size());  // one bar per kernel slot, standing for 82 blocks
  CHECK(all[0].tooltip.rfind("k1 blocks 0, 41, 1, 42, ", 0) == 0);  // even-first: SM 0 runs block 0, SM 1 block 41
  CHECK(count(all[0].tooltip, ", ") == 82);                         // 82 blocks, then the SMs' interval
  CHECK(all[0].tooltip.find(": SMs 0-81, 0-2") != std::string::npos);
  for (const auto& b : all) CHECK(b.h >= 10);  // readable lanes, not the 4 px hairlines of 82 stacked rows
  CHECK(all.back().y + all.back().h < 400);

  report::TimelineOptions flat;
  flat.fold = false;
  const std::string unfolded = report::render_timeline_svg(s, sc, "4.2", flat);
  CHECK(row_labels(unfolded).size() == 82);
  CHECK(bars(unfolded).size() == static_cast<size_t>(sc.total_blocks()));

  // A row that differs splits the run: SM 1 idle between busy SMs 0 and 2-3.
  Schedule t;
  t.device = "mini";
  t.sms = 4;
  t.kernels = {{"A", {{0, 0, 2}, {2, 0, 2}, {3, 0, 2}}}};
  Scenario four = test::scenario(R"({"device": )" + test::mini_device(4) +
                                 R"(, "kernels": [{"name": "A", "blocks": 3, "threads": 32, "regs": 32, "duration": 2}]})");
  CHECK(row_labels(report::render_timeline_svg(t, four, "split")) ==
        std::vector<std::string>{"SM 0", "SM 1", "SM 2-3 (2 SMs, same)"});
}

TEST_CASE("svg: --sms zooms to a range of SMs and rejects ranges off the device", "[svg]") {
  const Scenario sc = test::scenario(R"({"device": "rtx3090", "kernels": [
    {"name": "k1", "blocks": 100, "threads": 1024, "regs": 32, "duration": 2}]})");
  const Schedule s = simulate(sc, test::hyp("alg1"));
  report::TimelineOptions o;
  o.fold = false;
  o.sms = report::parse_sm_range("10-13", "--sms");
  const std::string svg = report::render_timeline_svg(s, sc, "zoom", o);
  require_well_formed(svg);
  CHECK(row_labels(svg) == std::vector<std::string>{"SM 10", "SM 11", "SM 12", "SM 13"});
  // Exactly the blocks placed on SMs 10-13 are drawn.
  size_t on_range = 0;
  for (const auto& b : s.kernels[0].blocks) on_range += b.sm >= 10 && b.sm <= 13;
  CHECK(bars(svg).size() == on_range);
  for (const auto& b : bars(svg)) CHECK(std::regex_search(b.tooltip, std::regex(": SM 1[0-3], ")));
  CHECK(svg.find("SMs 10-13 of 82") != std::string::npos);

  CHECK(report::parse_sm_range("7", "--sms").first == 7);
  CHECK(report::parse_sm_range("7", "--sms").last == 7);
  for (const char* bad : {"", "a-b", "5-2", "-3", "3-", "1-2-3", "99999999"}) {
    INFO(bad);
    auto e = test::error_of([&] { report::parse_sm_range(bad, "--sms"); });
    CHECK(e.where() == "--sms");
  }
  o.sms = report::parse_sm_range("80-82", "--sms");
  auto e = test::error_of([&] { report::render_timeline_svg(s, sc, "zoom", o); });
  CHECK(e.reason().find("0-81") != std::string::npos);
}

TEST_CASE("svg: the difference picture marks exactly the blocks that differ, the first in red", "[svg]") {
  // Case 4.2: alg1 holds k9 until k1 ends (2-3); counting shared memory lets it start at 1.
  const Scenario sc = case_4_2();
  const Schedule a = simulate(sc, test::hyp("alg1"));
  const Schedule b = simulate(sc, test::hyp("alg1-counted-smem"));
  const report::ScheduleDiff d = report::diff_schedules(a, b);
  size_t expected = 0;
  for (size_t k = 0; k < a.kernels.size(); ++k)
    for (size_t i = 0; i < a.kernels[k].blocks.size(); ++i) expected += !(a.kernels[k].blocks[i] == b.kernels[k].blocks[i]);
  CHECK(d.count == expected);
  CHECK(d.count == 82);  // every k9 block, nothing else
  REQUIRE(d.first);
  CHECK(*d.first == std::make_pair(size_t{8}, size_t{0}));

  report::TimelineOptions flat;
  flat.fold = false;
  const std::string svg = report::render_diff_svg(a, b, sc, "4.2 diff", flat);
  require_well_formed(svg);
  // Each differing block is marked on both sides; the first one on both sides, in red.
  CHECK(marked(svg, "differs").size() == 2 * (d.count - 1));
  const auto first = marked(svg, "first");
  REQUIRE(first.size() == 2);
  CHECK(first[0] == "k9 block 0: SM 0, 2-3 (differs: alg1-counted-smem SM 0, 1-2)");
  CHECK(first[1] == "k9 block 0: SM 0, 1-2 (differs: alg1 SM 0, 2-3)");
  for (const auto& t : marked(svg, "differs")) CHECK(t.rfind("k9 block ", 0) == 0);
  CHECK(svg.find("82 of 738 blocks differ") != std::string::npos);
  CHECK(svg.find("first difference (red): k9 block 0: alg1 SM 0, 2-3, alg1-counted-smem SM 0, 1-2") != std::string::npos);
  CHECK(svg.find("\u25c0 first") != std::string::npos);
  // Unmarked bars are faded so the marked ones stand out.
  CHECK(count(svg, "fill-opacity=\"0.3\"") == 2 * static_cast<size_t>(sc.total_blocks()) - 2 * d.count);

  // Folded: both sides share one row per run; SM 0 (the first difference) stands alone.
  const std::string folded = report::render_diff_svg(a, b, sc, "4.2 diff");
  require_well_formed(folded);
  CHECK(row_labels(folded) == std::vector<std::string>{"SM 0", "SM 1-81 (81 SMs, same)"});

  // Identical schedules: nothing marked, nothing faded, said in words.
  const std::string same = report::render_diff_svg(a, a, sc, "same");
  CHECK(marked(same, "differs").empty());
  CHECK(marked(same, "first").empty());
  CHECK(same.find("no block differs") != std::string::npos);
  CHECK(count(same, "fill-opacity") == 0);

  // Without times only SMs count, and an unrecorded SM (-1) never differs.
  Schedule c = a;
  c.kernels[8].blocks[0].start = 0;
  c.kernels[8].blocks[3].sm = -1;
  CHECK(report::diff_schedules(a, c, false).count == 0);
  c.kernels[8].blocks[5].sm = 40;
  const auto sms_only = report::diff_schedules(a, c, false);
  CHECK(sms_only.count == 1);
  CHECK(*sms_only.first == std::make_pair(size_t{8}, size_t{5}));
}

TEST_CASE("tbcheck predict --svg: zoom, folding and the difference picture from the command line", "[svg][cli]") {
  test::ScratchDir dir("svg");
  const std::string svg = dir / "p.svg";
  auto read = [&] {
    std::ifstream in(svg);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string c42 = "corpus/paper/000-wang/case-4.2.json";
  auto r = test::run_tbcheck("predict " + c42 + " --svg '" + svg + "'");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(row_labels(read()) == std::vector<std::string>{"SM 0-81 (82 SMs, same)"});

  r = test::run_tbcheck("predict " + c42 + " --svg '" + svg + "' --sms 3-5 --no-fold --force");
  REQUIRE(r.exit_code == 0);
  CHECK(row_labels(read()) == std::vector<std::string>{"SM 3", "SM 4", "SM 5"});

  r = test::run_tbcheck("predict " + c42 + " -H alg1,alg1-counted-smem --svg '" + svg + "' --force");
  REQUIRE(r.exit_code == 0);
  const std::string diff = read();
  CHECK(row_labels(diff) == std::vector<std::string>{"SM 0", "SM 1-81 (81 SMs, same)"});
  CHECK(marked(diff, "first").size() == 2);
  CHECK(diff.find("<title>alg1 vs alg1-counted-smem on rtx3090</title>") != std::string::npos);

  // Bad picture options: exit 2 naming the flag, and no file left behind.
  std::filesystem::remove(svg);
  for (const std::string& bad : std::vector<std::string>{" --svg '" + svg + "' --sms 5-2", " --svg '" + svg + "' --sms 80-90", " --sms 0-3",
                                " -H alg1,alg1-paired,round-robin --svg '" + svg + "'"}) {
    auto e = test::run_tbcheck("predict " + c42 + bad);
    INFO(bad << ": " << e.out);
    CHECK(e.exit_code == 2);
    CHECK((e.out.find("--sms") != std::string::npos || e.out.find("--svg") != std::string::npos));
    CHECK(!std::filesystem::exists(svg));
  }
}

TEST_CASE("svg: clusters are outlined, partitions marked, controls named in the legend", "[svg][cluster]") {
  // A clustered kernel on the illustrative CC 9.0 device: one dashed outline per cluster, over its blocks.
  auto cs = load_cases(test::source_path("corpus/paper/controls/cuda-guide-cluster-coscheduled-assumed-gpcs.json"));
  REQUIRE(cs.size() == 1);
  const Scenario& sc = cs[0].scenario;
  const Schedule s = simulate(sc, test::hyp("most-room"));
  const std::string svg = report::render_timeline_svg(s, sc, "clusters");
  std::regex outline(R"re(<rect class="cluster"[^>]*><title>(\S+) cluster (\d+): blocks ([^<]*)</title>)re");
  size_t n = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), outline); it != std::sregex_iterator(); ++it) ++n;
  size_t clusters = 0;
  for (const auto& k : sc.kernels) clusters += static_cast<size_t>(k.blocks / k.cluster_size());
  CHECK(n == clusters);
  CHECK(svg.find("gemm (clusters of 2 x 1 x 1 (132))") != std::string::npos);
  CHECK(svg.find("wide (clusters of 4 x 2 x 1 (4))") != std::string::npos);
  CHECK(svg.find("class=\"partition\"") == std::string::npos);

  // A partitioned kernel and a prioritized one (fields only): a strip on the allowed SMs' rows, the
  // priority in the legend, and no fold across the partition's edge.
  Scenario p = mini_scenario();
  p.kernels[0].tpcs = {0};
  p.kernels[1].priority = -1;
  const Schedule plain = simulate(mini_scenario(), test::hyp("alg1"));
  const std::string svg2 = report::render_timeline_svg(plain, p, "partitions");
  CHECK(svg2.find("class=\"partition\"") != std::string::npos);
  CHECK(svg2.find(fmt::format("{} (TPCs 0)", p.kernels[0].name)) != std::string::npos);
  CHECK(svg2.find(fmt::format("{} (priority -1)", p.kernels[1].name)) != std::string::npos);
  CHECK(svg2.find("may use this SM") != std::string::npos);
}
