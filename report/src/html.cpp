// The HTML validation report (html.hpp): plain HTML with inline CSS and inline SVG timelines from
// svg.cpp, so the page needs nothing but a browser. Built from a finished ValidationRun.
#include "tbcheck/report/html.hpp"

#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "tbcheck/model/error.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/report/svg.hpp"
#include "tbcheck/report/table.hpp"

namespace tbcheck::report {
namespace {

const char* kStyle = R"(
body { font-family: sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; } h3 { font-size: 15px; margin-bottom: 4px; }
table.grid { border-collapse: collapse; font-size: 13px; }
table.grid th, table.grid td { border: 1px solid #ccc; padding: 3px 7px; text-align: center; }
table.grid td.case { text-align: left; font-family: monospace; }
td.pass { background: #d9f2d9; } td.fail { background: #f6cccc; } td.mixed { background: #fbe9c8; } td.na { background: #eee; color: #777; }
.legend { font-size: 13px; color: #555; }
.pair { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
.pair > div { border: 1px solid #ddd; padding: 6px; overflow: auto; flex: 1 1 0; min-width: 420px; max-height: 760px; }
.pair svg { width: 100%; height: auto; }
.facts li.fail { color: #a00; } .facts li.pass { color: #070; }
.failure { border-top: 1px solid #bbb; padding-top: 8px; }
code { background: #f4f4f4; padding: 1px 3px; }
)";

std::string esc(const std::string& s) { return xml_escape(s); }

std::string symbol(model::Verdict v) { return verdict_symbol(v); }

// The SVG element alone (the document's XML prolog cannot sit inside HTML).
std::string inline_svg(const std::string& doc) {
  auto at = doc.find("<svg");
  return at == std::string::npos ? doc : doc.substr(at);
}

bool recorded(const model::Case& c) { return c.observation && c.observation->has_recording(); }

std::string cell_class(const std::vector<model::Verdict>& vs) {
  bool pass = false, fail = false;
  for (auto v : vs) {
    pass = pass || v == model::Verdict::Pass;
    fail = fail || v == model::Verdict::Fail;
  }
  return fail && pass ? "mixed" : fail ? "fail" : pass ? "pass" : "na";
}

}  // namespace

model::Schedule observed_schedule(const model::Case& c) {
  model::Schedule s;
  s.hypothesis = "observed";
  s.device = c.scenario.device.name;
  s.sms = c.scenario.device.sms;
  for (const auto& k : c.scenario.kernels) {
    model::KernelSchedule ks;
    ks.name = k.name;
    const std::vector<int>* sms = nullptr;
    const std::vector<int>* starts = nullptr;
    if (c.observation) {
      if (auto it = c.observation->sm_of_block.find(k.name); it != c.observation->sm_of_block.end()) sms = &it->second;
      if (auto it = c.observation->start_of_block.find(k.name); it != c.observation->start_of_block.end()) starts = &it->second;
    }
    for (int b = 0; b < k.blocks; ++b) {
      model::BlockPlacement p;
      p.sm = sms && static_cast<size_t>(b) < sms->size() ? (*sms)[static_cast<size_t>(b)] : -1;
      p.start = starts && static_cast<size_t>(b) < starts->size() ? (*starts)[static_cast<size_t>(b)] : 0;
      p.end = p.start + k.duration;
      ks.blocks.push_back(p);
    }
    s.kernels.push_back(std::move(ks));
  }
  return s;
}

std::string render_validation_html(const model::ValidationRun& run, const std::vector<model::Level>& levels,
                                   const HtmlOptions& o) {
  std::string out;
  auto w = std::back_inserter(out);
  fmt::format_to(w, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{}</style></head><body>\n",
                 esc(o.title), kStyle);
  fmt::format_to(w, "<h1>{}</h1>\n<p class=\"legend\">{} cases, {} hypotheses; levels: ", esc(o.title), run.cases.size(),
                 run.hypotheses.size());
  for (size_t i = 0; i < levels.size(); ++i) fmt::format_to(w, "{}{}", i ? ", " : "", model::to_string(levels[i]));
  fmt::format_to(w, ". Cells: ✓ pass, ✗ fail, – not applicable, ? unknown; a recorded case shows one mark per level; "
                    "a large collection reads as passing/total.</p>\n");

  // The case x hypothesis table.
  fmt::format_to(w, "<table class=\"grid\"><tr><th>case</th>");
  for (const auto& h : run.hypotheses) fmt::format_to(w, "<th>{}</th>", esc(h.name));
  fmt::format_to(w, "</tr>\n");
  std::vector<size_t> collection_size(run.cases.size());
  for (size_t c = 0; c < run.cases.size();) {
    size_t e = c + 1;
    while (e < run.cases.size() && run.cases[e].file == run.cases[c].file) ++e;
    for (size_t i = c; i < e; ++i) collection_size[i] = e - c;
    if (e - c > o.collection_row_limit) {
      fmt::format_to(w, "<tr><td class=\"case\">{} ({} cases)</td>",
                     esc(std::filesystem::path(run.cases[c].file).filename().string()), e - c);
      for (size_t h = 0; h < run.hypotheses.size(); ++h) {
        size_t pass = 0;
        std::vector<model::Verdict> vs;
        for (size_t i = c; i < e; ++i) {
          auto v = run.results[i][h].at(levels[0]);
          pass += v == model::Verdict::Pass;
          vs.push_back(v);
        }
        fmt::format_to(w, "<td class=\"{}\">{}/{}</td>", cell_class(vs), pass, e - c);
      }
      fmt::format_to(w, "</tr>\n");
    } else {
      for (size_t i = c; i < e; ++i) {
        fmt::format_to(w, "<tr><td class=\"case\">{}</td>", esc(run.cases[i].id));
        for (size_t h = 0; h < run.hypotheses.size(); ++h) {
          std::vector<model::Verdict> vs;
          std::string marks;
          for (auto l : levels) {
            vs.push_back(run.results[i][h].at(l));
            if (recorded(run.cases[i]) || marks.empty()) marks += symbol(vs.back());
          }
          fmt::format_to(w, "<td class=\"{}\" title=\"{}\">{}</td>", cell_class(vs),
                         esc(run.results[i][h].first_failure(levels[0])), marks);
        }
        fmt::format_to(w, "</tr>\n");
      }
    }
    c = e;
  }
  fmt::format_to(w, "</table>\n");

  // Failures, with pictures.
  fmt::format_to(w, "<h2>Failures</h2>\n");
  size_t sections = 0, listed_only = 0;
  std::map<std::pair<std::string, size_t>, bool> collection_shown;
  std::string overflow;
  for (size_t c = 0; c < run.cases.size(); ++c)
    for (size_t h = 0; h < run.hypotheses.size(); ++h) {
      const auto& r = run.results[c][h];
      std::optional<model::Level> failing;
      for (auto l : levels)
        if (r.at(l) == model::Verdict::Fail) {
          failing = l;
          break;
        }
      if (!failing) continue;
      const model::Case& cs = run.cases[c];
      if (collection_size[c] > o.collection_row_limit) {
        if (collection_shown[{cs.file, h}]) continue;
        collection_shown[{cs.file, h}] = true;
      }
      std::string heading = fmt::format("{} under {} (fails at {}): {}", cs.id, run.hypotheses[h].name,
                                        recorded(cs) ? std::string(model::to_string(*failing)) : "facts",
                                        r.first_failure(*failing));
      if (sections >= o.max_failure_sections) {
        overflow += fmt::format("<li>{}</li>\n", esc(heading));
        ++listed_only;
        continue;
      }
      ++sections;
      fmt::format_to(w, "<div class=\"failure\"><h3>{}</h3>\n<p class=\"legend\">{}</p>\n", esc(heading), esc(cs.file));
      // The failing facts first: the timelines of a full-size device are tall.
      if (!r.fact_checks.empty()) {
        fmt::format_to(w, "<ul class=\"facts\">\n");
        for (size_t f = 0; f < r.fact_checks.size(); ++f) {
          const auto& chk = r.fact_checks[f];
          const bool fail = chk.verdict == model::Verdict::Fail;
          fmt::format_to(w, "<li class=\"{}\">{} {}{}</li>\n", fail ? "fail" : "pass", symbol(chk.verdict),
                         esc(cs.observation->facts[f].describe()), fail ? " — " + esc(chk.detail) : "");
        }
        fmt::format_to(w, "</ul>\n");
      }
      model::FeasibilityCheck why;
      const std::optional<model::Schedule> simulated = model::try_simulate(cs.scenario, run.hypotheses[h], &why);
      if (!simulated) {
        fmt::format_to(w, "<p>not simulated: {}</p></div>\n", esc(why.reason));
        continue;
      }
      const model::Schedule& predicted = *simulated;
      // A recording: one difference picture, predicted above observed per SM, the differing blocks marked.
      // Where the recording has no start times only SMs are compared (its bars then all start at 0).
      if (recorded(cs)) {
        const bool times = !cs.observation->start_of_block.empty();
        fmt::format_to(w, "<div class=\"pair\"><div>{}</div></div>\n",
                       inline_svg(render_diff_svg(predicted, observed_schedule(cs), cs.scenario,
                                                  fmt::format("predicted by {} vs observed{}", run.hypotheses[h].name,
                                                              times ? "" : " (SMs only: no start times recorded)"),
                                                  {}, times)));
      } else {
        fmt::format_to(w, "<div class=\"pair\"><div>{}</div></div>\n",
                       inline_svg(render_timeline_svg(predicted, cs.scenario, "predicted by " + run.hypotheses[h].name)));
      }
      fmt::format_to(w, "</div>\n");
    }
  if (sections == 0) fmt::format_to(w, "<p>None.</p>\n");
  if (listed_only)
    fmt::format_to(w, "<h3>{} more failure(s), without timelines</h3><ul>\n{}</ul>\n", listed_only, overflow);
  for (const auto& [heading, text] : o.text_sections) fmt::format_to(w, "<h2>{}</h2>\n<pre>{}</pre>\n", esc(heading), esc(text));
  fmt::format_to(w, "</body></html>\n");
  return out;
}

}  // namespace tbcheck::report
