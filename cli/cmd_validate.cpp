// `tbcheck validate`: every case of a corpus (files, collections, directories) under every chosen
// hypothesis; a case x hypothesis table, a summary per hypothesis, failures with the first difference.
#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "commands.hpp"
#include "tbcheck/model/hypothesis_list.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/validate.hpp"
#include "tbcheck/report/html.hpp"
#include "tbcheck/report/table.hpp"
#include "tbcheck/search/contested.hpp"

namespace tbcheck::cli {
namespace {

std::string symbol(model::Verdict v) { return report::verdict_symbol(v); }

// Collections larger than this show one row of pass counts unless --all-rows.
constexpr size_t kCollectionRowLimit = 50;

struct Validate : Command {
  std::vector<std::string> paths;
  std::string hypothesis_spec = "all", level_name = "all", report_path;
  bool json = false, all_rows = false, details = false, force = false;
  JudgingFlags judging;

  int run() override {
    std::vector<model::Level> levels;
    if (level_name == "all") levels.assign(std::begin(model::kAllLevels), std::end(model::kAllLevels));
    else levels.push_back(model::level_from_string(level_name));
    const model::Level expect_level = levels.size() == 1 ? levels[0] : model::Level::Exact;
    auto hs = model::resolve_hypotheses(hypothesis_spec);
    if (!report_path.empty()) model::check_output_file(report_path, force, "--report");  // before the work
    std::vector<model::Case> cases;
    for (const auto& p : paths)
      for (auto& c : model::load_cases(p)) cases.push_back(std::move(c));
    if (cases.empty()) throw model::InputError(fmt::format("{}", fmt::join(paths, " ")), "", "no corpus cases found");

    report::Progress progress("validate", cases.size());
    model::JudgeOptions judge = judging.options();
    // Only the levels read are searched over the orders (--level exact: Exact alone; counts: Exact, from whose
    // closest order it starts, and counts).
    const auto reads = [&](model::Level l) { return std::find(levels.begin(), levels.end(), l) != levels.end(); };
    if (!reads(model::Level::Sms))
      judge.levels = reads(model::Level::Counts) ? model::JudgedLevels::ExactAndCounts : model::JudgedLevels::Exact;
    model::ValidationRun run = model::run_validation(std::move(cases), std::move(hs), [&] { progress.tick(); }, judge);
    auto mismatches = run.mismatches(expect_level);
    if (!report_path.empty()) {
      report::HtmlOptions ho;
      ho.title = fmt::format("tbcheck validate {}", fmt::join(paths, " "));
      // The run's predictions (synthetic cases), contested among its hypotheses on its evidence.
      search::ContestOptions co;
      co.synthesize = false;  // one distinguish per prediction is minutes; predict --contested asks it
      co.judging = run.judging;
      for (const auto& c : search::contest_predictions(run, co))
        ho.text_sections.emplace_back(fmt::format("Contested prediction: {}", c.case_id), c.report.text());
      model::write_file_atomic(report_path, report::render_validation_html(run, levels, ho), /*no_overwrite=*/!force);
    }

    if (json) {
      auto j = envelope();
      j.update(run.to_json(levels, expect_level));
      print_json(j);
      return mismatches.empty() ? kExitOk : kExitFailed;
    }
    print_table(run, levels);
    print_timing(run, details);
    print_summary(run, levels);
    print_failures(run, levels);
    if (!mismatches.empty()) {
      say("\nExpectation mismatches ({}; judged at level {}):\n", mismatches.size(), model::to_string(expect_level));
      for (const auto& m : mismatches) {
        const auto& r = run.results[m.case_index][m.hypothesis_index];
        say("  {} under {}: expected {}, got {}{}\n", run.cases[m.case_index].id,
                   run.hypotheses[m.hypothesis_index].name, m.expected == model::Expect::Pass ? "pass" : "fail",
                   model::to_string(m.got), r.first_failure(expect_level).empty() ? "" : " — " + r.first_failure(expect_level));
      }
      return kExitFailed;
    }
    say("\n{}\n", outcome_line(run, levels));
    return kExitOk;
  }

  // The closing line when no expectation is contradicted (exit 0): how many expectations were judged,
  // and what the failures above are when no expectation covers them.
  static std::string outcome_line(const model::ValidationRun& run, const std::vector<model::Level>& levels) {
    size_t judged = 0, failures = 0;
    // Undecided verdicts are counted over every pair, expectations or not: "nothing failed" must not
    // hide a case whose verdict the search could not reach.
    std::vector<std::string> undecided;
    for (size_t c = 0; c < run.cases.size(); ++c)
      for (size_t h = 0; h < run.hypotheses.size(); ++h) {
        bool unknown = false;
        for (auto l : levels) unknown = unknown || run.results[c][h].at(l) == model::Verdict::Unknown;
        if (unknown) undecided.push_back(fmt::format("{} under {}", run.cases[c].id, run.hypotheses[h].name));
        if (run.cases[c].expect.count(run.hypotheses[h].name)) {
          ++judged;
          continue;
        }
        bool failed = false;
        for (auto l : levels) failed = failed || run.results[c][h].at(l) == model::Verdict::Fail;
        failures += failed;
      }
    std::string line = judged == 0 ? "No case states an expectation for these hypotheses"
                                   : fmt::format("All {} expectation(s) met", judged);
    std::string open;
    if (!undecided.empty()) {
      const size_t shown = std::min<size_t>(undecided.size(), 5);
      open = fmt::format("; {} verdict(s) unknown, undecided within --max-orders: {}{}", undecided.size(),
                         fmt::join(undecided.begin(), undecided.begin() + static_cast<long>(shown), ", "),
                         undecided.size() > shown ? fmt::format(", ... {} more", undecided.size() - shown) : "");
    }
    if (failures == 0)
      return line + (judged == 0 && undecided.empty() ? "; nothing failed." : open + (judged == 0 ? "; nothing else failed." : "."));
    return line + open +
           fmt::format("; the {} failure(s) above{} are findings, not contradicted expectations (exit 0).", failures,
                       judged == 0 ? "" : " where no expectation is stated");
  }

  // One cell: a symbol per level for recordings; facts-only cases read the same at every level.
  static std::string cell(const model::CaseResult& r, const model::Case& c, const std::vector<model::Level>& levels) {
    bool recorded = c.observation && c.observation->has_recording();
    if (!recorded || levels.size() == 1) return symbol(r.at(levels[0]));
    std::string s;
    for (auto l : levels) s += symbol(r.at(l));
    return s;
  }

  void print_table(const model::ValidationRun& run, const std::vector<model::Level>& levels) const {
    say("Hypotheses:");
    for (size_t h = 0; h < run.hypotheses.size(); ++h) say(" [{}] {}", h + 1, run.hypotheses[h].name);
    say("\nCells: ✓ pass, ✗ fail, – not applicable, ? unknown, n/N passing cases of a large collection");
    if (levels.size() > 1) say("; recordings show three marks: exact, counts, sms");
    say("\n\n");
    std::vector<std::string> headers = {"case"};
    for (size_t h = 0; h < run.hypotheses.size(); ++h) headers.push_back(fmt::format("[{}]", h + 1));
    report::Table t(headers);
    // A large collection (the 1024-cell Olmedo grids) reads as one row of pass counts; other runs
    // of identical rows from one file fold into one line.
    size_t c = 0;
    while (c < run.cases.size()) {
      size_t e = c + 1;
      while (e < run.cases.size() && run.cases[e].file == run.cases[c].file) ++e;
      if (!all_rows && e - c > kCollectionRowLimit) {
        std::vector<std::string> row = {fmt::format("{} ({} cases)", std::filesystem::path(run.cases[c].file).filename().string(), e - c)};
        for (size_t h = 0; h < run.hypotheses.size(); ++h) {
          size_t pass = 0, fail = 0, unknown = 0;
          for (size_t i = c; i < e; ++i) {
            auto v = run.results[i][h].at(levels[0]);
            pass += v == model::Verdict::Pass;
            fail += v == model::Verdict::Fail;
            unknown += v == model::Verdict::Unknown;
          }
          // Passing cells of those the hypothesis could run; "–" when it could run none of them. Unknown
          // cells were run but not decided: never "–", and counted in the cell.
          const size_t ran = pass + fail + unknown;
          row.push_back(ran == 0               ? symbol(model::Verdict::Unsupported)
                        : pass == e - c        ? symbol(model::Verdict::Pass)
                        : fail == e - c        ? symbol(model::Verdict::Fail)
                        : unknown == e - c     ? symbol(model::Verdict::Unknown)
                        : unknown > 0          ? fmt::format("{}/{} ({} ?)", pass, e - c, unknown)
                                               : fmt::format("{}/{}", pass, e - c));
        }
        t.add(row);
        c = e;
        continue;
      }
      for (size_t end = e; c < end;) {
        std::vector<std::string> row;
        for (size_t h = 0; h < run.hypotheses.size(); ++h) row.push_back(cell(run.results[c][h], run.cases[c], levels));
        size_t f = c + 1;
        while (!all_rows && f < end) {
          bool same = true;
          for (size_t h = 0; h < run.hypotheses.size() && same; ++h) same = cell(run.results[f][h], run.cases[f], levels) == row[h];
          if (!same) break;
          ++f;
        }
        row.insert(row.begin(), f - c == 1 ? run.cases[c].id
                                           : fmt::format("{} … {} ({} cases)", run.cases[c].id, run.cases[f - 1].id, f - c));
        t.add(row);
        c = f;
      }
    }
    say("{}", t.render());
  }

  // Passes that rest on an order the recording did not observe name it (the first level that does). An order
  // of a large grid names thousands of blocks: cut to the line, with a count, unless --details.
  static void print_named_orders(const model::ValidationRun& run, bool details) {
    std::vector<std::string> named;
    for (size_t c = 0; c < run.cases.size(); ++c)
      for (size_t h = 0; h < run.hypotheses.size(); ++h)
        for (model::Level l : model::kAllLevels) {
          const auto& r = run.results[c][h];
          if (r.at(l) != model::Verdict::Pass || r.order(l).empty()) continue;
          // The order on a line of its own under its case: the room of a whole line for the cut list.
          const std::string head = fmt::format("  {} under {} ({}):\n    ", run.cases[c].id, run.hypotheses[h].name,
                                               model::to_string(l));
          named.push_back(head + (details ? r.order(l)
                                          : report::cut_list_text(r.order(l), report::output_width() - 4, ", ",
                                                                  " (--details shows all)")));
          break;
        }
    if (!named.empty()) {
      say("\nPasses under an order the recording did not observe ({}):\n", named.size());
      for (size_t i = 0; i < named.size() && i < 20; ++i) say("{}\n", named[i]);
      if (named.size() > 20) say("  ... {} more (--json names every one)\n", named.size() - 20);
    }
  }

  // Which timing judged each recording (docs/recordings.md): trace only where asked and possible.
  static void print_timing(const model::ValidationRun& run, bool details) {
    std::vector<std::string> traced;
    size_t recorded = 0;
    for (size_t c = 0; c < run.cases.size(); ++c) {
      bool any = false, trace = false;
      for (const auto& r : run.results[c]) {
        any = any || r.orders_tried > 0;
        trace = trace || r.timing == model::Timing::Trace;
      }
      recorded += any;
      if (trace) traced.push_back(run.cases[c].id);
    }
    if (recorded == 0) return;
    print_named_orders(run, details);
    if (run.judging.timing == model::Timing::Model) return;  // as every run before --timing: nothing to say
    const size_t shown = std::min<size_t>(traced.size(), 10);
    say("\nTiming: trace-driven (recorded ends) for {} of {} recording(s){}{}{}; model durations for the rest "
               "(no block end times, or a gpc-priority hypothesis).\n",
               traced.size(), recorded, traced.empty() ? "" : ": ",
               fmt::join(traced.begin(), traced.begin() + static_cast<long>(shown), ", "),
               traced.size() > shown ? fmt::format(", ... {} more", traced.size() - shown) : "");
    // The skew each trace-timed case allows between starts on different SMs (docs/recordings.md).
    std::vector<std::string> skews;
    for (size_t c = 0; c < run.cases.size(); ++c)
      for (const auto& r : run.results[c])
        if (r.skew) {
          skews.push_back(fmt::format("  {}: {}", run.cases[c].id, r.skew->describe()));
          break;
        }
    if (!skews.empty()) {
      say("Dispatch skew (starts on different SMs order dispatches only farther apart than this):\n");
      for (size_t i = 0; i < skews.size() && i < 10; ++i) say("{}\n", skews[i]);
      if (skews.size() > 10) say("  ... {} more (--json gives each case's dispatch_skew)\n", skews.size() - 10);
    }
  }

  static void print_summary(const model::ValidationRun& run, std::vector<model::Level> levels) {
    bool recorded = false;
    for (const auto& c : run.cases) recorded = recorded || (c.observation && c.observation->has_recording());
    if (!recorded) levels.resize(1);  // facts read the same at every level
    say("\nSummary (cases passing / failing / unknown / not applicable{}):\n", recorded ? "" : "; paper facts only");
    std::vector<std::string> headers = {"hypothesis"};
    for (auto l : levels) headers.push_back(recorded ? std::string(model::to_string(l)) : "verdict");
    report::Table t(headers);
    for (size_t h = 0; h < run.hypotheses.size(); ++h) {
      std::vector<std::string> row = {run.hypotheses[h].name};
      for (auto l : levels) {
        auto x = run.tally(h, l);
        row.push_back(fmt::format("{} / {} / {} / {}", x.pass, x.fail, x.unknown, x.other));
      }
      t.add(row);
    }
    say("{}", t.render());
  }

  // Size of the collection (consecutive cases from one file) that case c belongs to.
  static std::vector<size_t> collection_sizes(const model::ValidationRun& run) {
    std::vector<size_t> size(run.cases.size());
    for (size_t c = 0; c < run.cases.size();) {
      size_t e = c + 1;
      while (e < run.cases.size() && run.cases[e].file == run.cases[c].file) ++e;
      for (size_t i = c; i < e; ++i) size[i] = e - c;
      c = e;
    }
    return size;
  }

  void print_failures(const model::ValidationRun& run, const std::vector<model::Level>& levels) const {
    std::vector<std::string> lines;
    auto sizes = collection_sizes(run);
    // In a large collection only the first failing case per hypothesis is listed, with a count.
    std::map<std::pair<std::string, size_t>, size_t> folded;
    for (size_t c = 0; c < run.cases.size(); ++c)
      for (size_t h = 0; h < run.hypotheses.size(); ++h) {
        const auto& r = run.results[c][h];
        std::string line;
        if (!r.ran) {
          line = fmt::format("  {} under {}: not run: {}", run.cases[c].id, run.hypotheses[h].name, r.reason);
        } else {
          for (auto l : levels) {
            if (r.at(l) != model::Verdict::Fail) continue;
            line = fmt::format("  {} under {} ({}): {}", run.cases[c].id, run.hypotheses[h].name, model::to_string(l),
                               r.first_failure(l));
            break;  // the strictest failing level names the first difference
          }
        }
        if (line.empty()) continue;
        if (!details && sizes[c] > kCollectionRowLimit) {
          if (folded[{run.cases[c].file, h}]++ > 0) continue;
          line += fmt::format(" [first of the failures in {}]", std::filesystem::path(run.cases[c].file).filename().string());
        }
        lines.push_back(line);
      }
    if (lines.empty()) return;
    const size_t limit = details ? lines.size() : 60;
    say("\nFailures (first difference, at the strictest failing level):\n");
    for (size_t i = 0; i < lines.size() && i < limit; ++i) say("{}\n", lines[i]);
    if (lines.size() > limit) say("  ... {} more (--details shows all)\n", lines.size() - limit);
  }
};

}  // namespace

std::unique_ptr<Command> make_validate(CLI::App& app) {
  auto c = std::make_unique<Validate>();
  c->app = app.add_subcommand("validate", "Check hypotheses against corpus cases (paper facts and recorded runs)");
  c->app->add_option("paths", c->paths, "Case files, collection files or directories")->required();
  c->app->add_option(kHypothesisOption, c->hypothesis_spec, "Names, comma list, 'all' (default) or hypothesis files");
  c->app->add_option("--level", c->level_name, "exact, counts, sms, or all (default)")
      ->check(CLI::IsMember({"exact", "counts", "sms", "all"}));
  add_judging_options(c->app, c->judging);
  c->app->add_flag("--json", c->json, "Machine-readable output");
  c->app->add_flag("--all-rows", c->all_rows, "Do not fold runs of identical rows");
  c->app->add_flag("--details", c->details, "List every failure (not only the first 60) and every order in full (not cut to the line)");
  c->app->add_option("--report", c->report_path,
                     "Also write a self-contained HTML report (table; per failure, predicted against observed with the "
                     "differing blocks marked)");
  c->app->add_flag("--force", c->force, "Replace an existing --report file (never one under corpus/hw/)");
  c->app->footer(kExitCodesHelp);
  return c;
}

}  // namespace tbcheck::cli
