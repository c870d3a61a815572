// `tbcheck predict`: the schedule of a scenario under one or more hypotheses, as a table,
// as the schedule JSON of docs/design.md, and optionally as an SVG timeline and a Chrome trace.
#include <algorithm>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "tbcheck/model/hypothesis_list.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/model/one_case.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/model/text.hpp"
#include "tbcheck/model/thresholds.hpp"
#include "tbcheck/report/controls.hpp"
#include "tbcheck/report/svg.hpp"
#include "tbcheck/report/table.hpp"
#include "tbcheck/report/trace.hpp"
#include "tbcheck/search/contested.hpp"

namespace tbcheck::cli {
namespace {

// Consecutive blocks with the same start and end whose SMs step evenly collapse into one row,
// so an 82-block kernel on SMs 0, 2, ..., 80 reads as one line.
report::Table schedule_table(const model::Schedule& s) {
  report::Table t({"kernel", "blocks", "SMs", "start", "end"});
  t.right_align(3);
  t.right_align(4);
  t.wrap(2);  // an unfolded (--no-fold) or irregular SM list wraps rather than widening the table
  for (const auto& k : s.kernels) {
    size_t b = 0;
    while (b < k.blocks.size()) {
      size_t e = b + 1;
      while (e < k.blocks.size() && k.blocks[e].start == k.blocks[b].start && k.blocks[e].end == k.blocks[b].end &&
             (e == b + 1 ? k.blocks[e].sm != k.blocks[b].sm
                         : k.blocks[e].sm - k.blocks[e - 1].sm == k.blocks[b + 1].sm - k.blocks[b].sm))
        ++e;
      std::vector<int> sms;
      for (size_t i = b; i < e; ++i) sms.push_back(k.blocks[i].sm);
      t.add({k.name, e - b == 1 ? std::to_string(b) : fmt::format("{}-{}", b, e - 1), model::format_int_list(sms),
             std::to_string(k.blocks[b].start), std::to_string(k.blocks[b].end)});
      b = e;
    }
  }
  return t;
}

// One hypothesis' schedule as the text output shows it (the i-th printed: a blank line before all but the first),
// with every outcome where it depends on where a threshold lies inside its interval.
void print_schedule(const model::Schedule& s, const std::optional<model::RangedPrediction>& r, const model::Scenario& sc,
                    int i) {
  say("{}{} on {} ({} SMs): {} blocks, makespan {}\n", i ? "\n" : "", s.hypothesis, sc.device.name, s.sms,
      sc.total_blocks(), s.makespan());
  for (const auto& k : sc.kernels)
    if (std::string c = report::controls_text(k); !c.empty()) say("{}: {}\n", k.name, c);
  if (r) say("{}\n", r->summary());
  if (r && r->failure.empty() && !r->independent()) {
    for (size_t n = 0; n < r->outcomes.size(); ++n) {
      std::vector<std::string> where;
      for (size_t x = 0; x < r->options.size(); ++x) {
        std::vector<std::string> texts;
        for (const auto& p : r->outcomes[n].pieces[x]) texts.push_back(model::threshold_range_text(r->options[x].option, p));
        where.push_back(fmt::format("{} in {}", r->options[x].option.key, fmt::join(texts, " or ")));
      }
      say("outcome {} ({}): makespan {}\n{}", n + 1, fmt::join(where, ", "), r->outcomes[n].schedule.makespan(),
          schedule_table(r->outcomes[n].schedule).render());
    }
    return;
  }
  say("{}", schedule_table(s).render());
}

// predict --json builds the whole schedule JSON in memory; docs/errors.md states the figure at this limit.
constexpr int64_t kMaxJsonBlocks = int64_t{1} << 20;

struct Predict : Command {
  std::string scenario_path, case_id, hypothesis_spec = "alg1", svg_path, trace_path, sms_spec, against_spec = "all",
      settle_out;
  std::vector<std::string> evidence_paths;
  bool json = false, force = false, no_fold = false, contested = false, no_synthesis = false, against_given = false;
  JudgingFlags judging;
  double us_per_unit = 1000.0;

  int run() override {
    // Read as a case, whatever it holds: a collection without --case is named as such, and an observation
    // is checked as validate checks it.
    model::Scenario sc = model::load_one_case(scenario_path, case_id, "predict").scenario;
    // Thresholds a file gives as intervals (model/thresholds.hpp): the schedule is simulated at each piece.
    auto ranged = model::resolve_ranged_hypotheses(hypothesis_spec);
    std::vector<model::Hypothesis> hs;
    for (const auto& r : ranged) hs.push_back(r.h);
    if (!contested)
      for (const auto& [given, flag] : {std::pair{!evidence_paths.empty(), "--evidence"}, {against_given, "--against"},
                                        {no_synthesis, "--no-synthesis"}, {!settle_out.empty(), "--settle-out"}})
        if (given) throw model::InputError(flag, "", "needs --contested");
    for (const auto& [path, flag] : {std::pair{&svg_path, "--svg"}, {&trace_path, "--trace"}})
      if (!path->empty() && sc.total_blocks() > report::kMaxDrawnBlocks)
        throw model::InputError(flag, "", fmt::format("the scenario has {} blocks; pictures and traces draw at most {} (2^16)",
                                                      sc.total_blocks(), report::kMaxDrawnBlocks));
    // The schedule JSON is built whole before it is printed (about half a KB per block): bounded, as pictures are.
    if (json && sc.total_blocks() * static_cast<int64_t>(hs.size()) > kMaxJsonBlocks)
      throw model::InputError("--json", "", fmt::format("{} blocks under {} hypothesis(es); the schedule JSON holds at most {} "
                                                        "(2^20) blocks in all (the table without --json has no such limit)",
                                                        sc.total_blocks(), hs.size(), kMaxJsonBlocks));
    if (hs.size() > 1 && !trace_path.empty()) throw model::InputError("--trace", "", "a trace takes exactly one hypothesis");
    if (hs.size() > 2 && !svg_path.empty())
      throw model::InputError("--svg", "", "a picture takes one hypothesis, or two for a difference picture");
    if (svg_path.empty() && (!sms_spec.empty() || no_fold))
      throw model::InputError(sms_spec.empty() ? "--no-fold" : "--sms", "", "shapes the --svg picture; give --svg too");
    report::TimelineOptions picture;
    if (!sms_spec.empty()) picture.sms = report::parse_sm_range(sms_spec, "--sms");
    picture.fold = !no_fold;
    // Outputs are checked before the work: a directory, an existing file without --force, a file under
    // corpus/hw/ or an unwritable folder stop the command here.
    if (!svg_path.empty()) model::check_output_file(svg_path, force, "--svg");
    if (!trace_path.empty()) model::check_output_file(trace_path, force, "--trace");
    // Several hypotheses: those that cannot run the scenario are skipped and said so (model::predict_all).
    std::vector<model::Schedule> schedules;
    std::vector<model::Hypothesis> ran;
    std::vector<std::optional<model::RangedPrediction>> over_ranges;  // per hypothesis that ran
    // The plain tables print each schedule as it is simulated and keep none, so that many hypotheses on a large
    // grid need the memory of the largest schedule, not of all (pictures, --json and --contested use them all).
    const bool stream = !json && svg_path.empty() && trace_path.empty() && !contested;
    int printed = 0;
    const model::PredictAllResult done = model::predict_all(sc, hs, scenario_path, [&](size_t hi, model::Schedule&& s) {
      ran.push_back(hs[hi]);
      over_ranges.push_back(model::predict_over_ranges(sc, ranged[hi]));
      if (stream)
        print_schedule(s, over_ranges.back(), sc, printed++);
      else
        schedules.push_back(std::move(s));
    });
    // A prediction that depends on where a threshold lies inside its interval is not one schedule: every
    // outcome is shown with its sub-intervals, and the exit code is 1.
    const bool undetermined = std::any_of(over_ranges.begin(), over_ranges.end(), [](const auto& r) {
      return r && (!r->independent() || !r->failure.empty());
    });
    for (const auto& why : done.skipped) fmt::print(stderr, "tbcheck: skipped (not applicable) {}\n", why);
    hs = std::move(ran);
    // Pictures first: a failure to write them must not follow a printed success.
    if (!svg_path.empty())
      model::write_file_atomic(
          svg_path,
          schedules.size() == 2
              ? report::render_diff_svg(schedules[0], schedules[1], sc,
                                        fmt::format("{} vs {} on {}", hs[0].name, hs[1].name, sc.device.name), picture)
              : report::render_timeline_svg(schedules[0], sc, fmt::format("{} on {}", hs[0].name, sc.device.name), picture),
          /*no_overwrite=*/!force);
    if (!trace_path.empty())
      model::write_file_atomic(trace_path, model::json_file_text(report::chrome_trace(schedules[0], sc, us_per_unit), 1),
                               /*no_overwrite=*/!force);
    // Where the hypotheses that survive the evidence part on this scenario.
    std::optional<search::ContestReport> contest;
    std::vector<std::string> written;
    std::string evidence_said;
    if (contested) {
      if (!settle_out.empty()) model::check_output_dir(settle_out, "--settle-out");
      // No --evidence: the repository's recordings and paper cases (imported ones under corpus/hw/ too).
      const bool defaulted = evidence_paths.empty();
      if (defaulted) evidence_paths = default_corpus({"corpus/paper", "corpus/hw"});
      evidence_said = !defaulted            ? ""
                      : evidence_paths.empty() ? "No --evidence given and no corpus/paper or corpus/hw folder here: "
                                                 "nothing judges the candidates.\n"
                                               : fmt::format("Evidence read from {} (the default; --evidence names others).\n",
                                                             fmt::join(evidence_paths, ", "));
      std::vector<model::Case> evidence;
      for (const auto& p : evidence_paths)
        for (auto& c : model::load_cases(p)) evidence.push_back(std::move(c));
      search::ContestOptions co;
      co.synthesize = !no_synthesis;
      co.judging = judging.options();
      contest = search::contest(sc, with_flag("--hypothesis", "--against", [&] { return model::resolve_hypotheses(against_spec); }),
                                evidence, co);
      for (const auto& s : contest->settling)
        if (s.witness && !settle_out.empty()) {
          const std::string path = (std::filesystem::path(settle_out) / (s.witness->id + ".json")).string();
          model::write_file_atomic(path, model::json_file_text(s.witness->to_json(), 1), /*no_overwrite=*/!force);
          written.push_back(path);
        }
    }
    // One hypothesis: the schedule's fields beside the envelope; several: {"schedules": [...]}, so the
    // document is always an object that starts with schema_version and tool.
    if (json) {
      nlohmann::json out = envelope();
      for (const auto& s : schedules) {
        nlohmann::json j = s.to_json();
        report::annotate_schedule_json(j, sc);  // priorities, partitions, clusters
        j["makespan"] = s.makespan();
        if (const auto& r = over_ranges[static_cast<size_t>(&s - schedules.data())]) j["threshold_intervals"] = r->to_json();
        if (schedules.size() == 1) out.update(j);
        else out["schedules"].push_back(j);
      }
      if (contest) {
        out["contested"] = contest->to_json();
        out["contested"]["evidence_paths"] = evidence_paths;
      }
      print_json(out);
      return undetermined ? kExitFailed : kExitOk;
    }
    for (size_t i = 0; i < schedules.size(); ++i) print_schedule(schedules[i], over_ranges[i], sc, static_cast<int>(i));
    if (contest)
      say("\nAgainst {} on {} ({}):\n{}{}", against_spec, sc.device.name, contest->architecture, evidence_said,
                 contest->text());
    for (const auto& w : written) say("wrote {} (tbcheck run {} --oracle cuda settles it)\n", w, w);
    if (!svg_path.empty()) say("wrote {}\n", svg_path);
    if (!trace_path.empty()) say("wrote {} (open in https://ui.perfetto.dev)\n", trace_path);
    return undetermined ? kExitFailed : kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> make_predict(CLI::App& app) {
  auto c = std::make_unique<Predict>();
  c->app = app.add_subcommand("predict", "Predict where every block of a scenario runs, and when");
  c->app->add_option("scenario", c->scenario_path, "Scenario or corpus-case JSON file")->required();
  c->app->add_option("--case", c->case_id, "The case of a collection file to predict (its id)");
  c->app->add_option(kHypothesisOption, c->hypothesis_spec,
                     "Shipped hypothesis name, comma list, 'all', or a hypothesis file (default alg1); a file may give a "
                     "threshold as an interval, \"(7936, 8192]\" (exit 1 when the schedule depends on the value inside)");
  c->app->add_flag("--json", c->json, "Print the schedule JSON");
  c->app->add_option("--svg", c->svg_path,
                     "Write an SVG timeline (SM rows, blocks coloured by kernel); with two hypotheses, a difference "
                     "picture marking the blocks that differ");
  c->app->add_option("--sms", c->sms_spec, "Draw only SMs A-B in the --svg picture (zoom), e.g. 0-15");
  c->app->add_flag("--no-fold", c->no_fold, "One --svg row per SM, also where consecutive SMs have identical rows");
  c->app->add_option("--trace", c->trace_path, "Write a Chrome trace-event JSON (one track per SM; opens in Perfetto)");
  c->app->add_flag("--contested", c->contested,
                   "Also say which blocks the hypotheses surviving the evidence agree on (settled) and which they "
                   "part on (contested), who takes which side, and a case that settles it");
  c->app->add_option("--evidence", c->evidence_paths,
                     "With --contested: recordings and paper cases (files, collections, directories) that judge the "
                     "candidates; the scenario's device's own, else its architecture's (default: corpus/paper and "
                     "corpus/hw, from the repository root)");
  c->app->add_option("--against", c->against_spec, "With --contested: the candidate hypotheses (default all)")
      ->each([p = c.get()](const std::string&) { p->against_given = true; });
  c->app->add_option("--settle-out", c->settle_out,
                     "With --contested: write distinguish's settling cases into this existing directory");
  add_judging_options(c->app, c->judging, "With --contested: ");
  c->app->add_flag("--no-synthesis", c->no_synthesis, "With --contested: do not ask distinguish for a smaller settling case");
  c->app->add_option("--us-per-unit", c->us_per_unit, "Microseconds per model time unit in the trace (default 1000)")
      ->check(number_above(0.0, 1e9));
  c->app->add_flag("--force", c->force, "Replace existing --svg/--trace files (never one under corpus/hw/)");
  return c;
}

}  // namespace tbcheck::cli
