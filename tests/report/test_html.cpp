// The HTML validation report: self-contained, the case x hypothesis table, and per failure the difference
// picture of predicted and observed (recordings) or the predicted timeline and failing facts (paper).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "helpers.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/report/html.hpp"
#include "tbcheck/report/svg.hpp"

using namespace tbcheck;

namespace {
size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("html report: facts failures show the predicted timeline and the failing fact", "[html]") {
  auto cases = model::load_cases(test::source_path("corpus/paper/000-wang"));
  auto run = model::run_validation(cases, {test::hyp("alg1"), test::hyp("alg1-counted-smem")});
  std::string html = report::render_validation_html(run, {model::Level::Exact});
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(count(html, "<script") == 0);
  CHECK(count(html, "<link") == 0);
  CHECK(count(html, "<?xml") == 0);  // SVG prologs are stripped inside HTML
  // One row per case, and exactly one failure (case 4.2 under alg1-counted-smem), with one picture.
  CHECK(count(html, "<td class=\"case\">") == cases.size());
  CHECK(count(html, "<div class=\"failure\">") == 1);
  CHECK(html.find("case-4.2 under alg1-counted-smem") != std::string::npos);
  CHECK(count(html, "<svg") == 1);
  CHECK(html.find("<li class=\"fail\">") != std::string::npos);
  CHECK(html.find("predicted by alg1-counted-smem") != std::string::npos);
}

TEST_CASE("html report: recording failures show predicted against observed, differences marked", "[html]") {
  auto s = test::scenario(R"({"device": )" + test::mini_device(4) +
                          R"(, "kernels": [{"name": "a<b", "blocks": 3, "threads": 64, "regs": 32, "duration": 2}]})");
  auto truth = model::simulate(s, test::hyp("round-robin"));
  model::Case c;
  c.id = "rec<1>";
  c.file = "mem";
  c.scenario = s;
  model::Observation o;
  o.kind = model::ObservationKind::Synthetic;
  for (const auto& b : truth.kernels[0].blocks) {
    o.sm_of_block["a<b"].push_back(b.sm);
    o.start_of_block["a<b"].push_back(static_cast<int>(b.start));
  }
  c.observation = o;
  auto observed = report::observed_schedule(c);
  REQUIRE(observed.kernels.size() == 1);
  CHECK(observed.kernels[0].blocks == truth.kernels[0].blocks);
  auto run = model::run_validation({c}, {test::hyp("round-robin"), test::hyp("alg1")});
  REQUIRE(run.results[0][1].at(model::Level::Exact) == model::Verdict::Fail);
  std::string html = report::render_validation_html(run, {model::Level::Exact, model::Level::Counts, model::Level::Sms});
  CHECK(html.find("rec&lt;1&gt;") != std::string::npos);
  CHECK(html.find("rec<1>") == std::string::npos);
  CHECK(count(html, "<div class=\"failure\">") == 1);  // alg1 only: round-robin recorded it
  // One difference picture: predicted above observed, the differing blocks marked, the first in red.
  CHECK(count(html, "<svg") == 1);
  CHECK(html.find("predicted by alg1 vs observed") != std::string::npos);
  CHECK(html.find(">observed</text>") != std::string::npos);
  const auto diff = report::diff_schedules(model::simulate(s, test::hyp("alg1")), observed);
  REQUIRE(diff.count > 0);
  CHECK(count(html, "data-diff=\"first\"") == 2);
  CHECK(count(html, "data-diff=\"differs\"") == 2 * (diff.count - 1));
  CHECK(html.find(fmt::format("{} of 3 blocks differ", diff.count)) != std::string::npos);

  // A recording of SMs only: times are not compared, and the title says so.
  c.observation->start_of_block.clear();
  auto sms_only = model::run_validation({c}, {test::hyp("alg1")});
  std::string html2 = report::render_validation_html(sms_only, {model::Level::Exact});
  CHECK(html2.find("SMs only: no start times recorded") != std::string::npos);
  CHECK(count(html2, "data-diff=\"first\"") == 2);
}

TEST_CASE("tbcheck validate --report writes the page", "[html][cli]") {
  const std::string out = (std::filesystem::temp_directory_path() / "tbcheck-test-report.html").string();
  std::filesystem::remove(out);
  auto r = test::run_tbcheck("validate corpus/paper/000-wang --hypothesis alg1,alg1-no-skip --report '" + out + "'");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str().find("case-2.2 under alg1-no-skip") != std::string::npos);
  std::filesystem::remove(out);
}
