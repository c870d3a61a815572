// `tbcheck check my-hypothesis.json`: explain a user's hypothesis, validate it on the whole corpus at
// the three levels, and tell it apart from every shipped hypothesis (corpus case, Z3 witness, or bounds).
#include <filesystem>

#include <fmt/format.h>

#include "commands.hpp"
#include "tbcheck/model/device_spec.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/hypothesis_list.hpp"
#include "tbcheck/model/thresholds.hpp"
#include "tbcheck/report/table.hpp"
#include "tbcheck/search/check.hpp"

namespace tbcheck::cli {
namespace {

struct Check : Command {
  std::string hypothesis_spec, against_spec = "all", device_name = "rtx3090", synthesis = "unseparated";
  std::vector<std::string> corpus_paths;
  double timeout_s = 5.0;
  bool json = false, details = false;
  JudgingFlags judging;

  // What Z3 said for the pair, also when a corpus case already separated it (--synthesize all).
  static std::string synthesis_cell(const search::PairCheck& p) {
    if (!p.synthesis) return "-";
    const search::PairResult& s = *p.synthesis;
    if (s.outcome == search::PairOutcome::Separated)
      return fmt::format("{} kernels, {} blocks, {:.1f} s", s.kernels, s.blocks, s.solver_seconds);
    return fmt::format("{}, {:.1f} s", search::to_string(s.outcome), s.solver_seconds);
  }

  int run() override {
    // A file may give thresholds as intervals (model/thresholds.hpp): judged at the interval's upper end, and
    // each case's prediction checked over the interval's pieces.
    auto mine = with_flag("--hypothesis", "hypothesis", [&] { return model::resolve_ranged_hypotheses(hypothesis_spec); });
    if (mine.size() != 1)
      throw model::InputError(hypothesis_spec, "hypothesis", fmt::format("check takes one hypothesis, got {}", mine.size()));
    const model::Hypothesis& h = mine[0].h;
    auto against = model::resolve_hypotheses(against_spec);
    // Resolved before the corpus is read, so a wrong --device is the first error, not the last.
    const model::Device device = model::device_from_spec(device_name, "--device");
    const std::vector<std::string> paths =
        corpus_paths.empty() ? require_default_corpus({"corpus/paper", "corpus/synth", "corpus/hw"}, "--corpus") : corpus_paths;
    std::vector<model::Case> cases;
    for (const auto& p : paths)
      for (auto& c : model::load_cases(p)) cases.push_back(std::move(c));

    search::CheckOptions o;
    o.judging = judging.options();
    o.device = device;
    o.bounds = search::default_check_bounds();
    o.bounds.timeout_ms = static_cast<unsigned>(timeout_s * 1000);
    o.synthesis = synthesis == "none" ? search::SynthesisMode::None
                  : synthesis == "all" ? search::SynthesisMode::All
                                       : search::SynthesisMode::Unseparated;
    report::Progress progress("check", against.size());
    search::CheckReport r = search::check_hypothesis(h, cases, against, o, [&](const std::string&) { progress.tick(); });
    // Exit 1 as in validate: a case's expectation contradicted (kExitCodesHelp), not any failure.
    const int rc = r.expectation_mismatches.empty() ? kExitOk : kExitFailed;
    // Per corpus case with an observation: does its prediction depend on where a threshold lies in its interval?
    std::vector<std::pair<std::string, model::RangedPrediction>> depends;
    size_t independent = 0, over = 0;
    if (!mine[0].ranges.empty())
      for (const auto& c : cases) {
        if (!c.observation) continue;
        auto p = model::predict_over_ranges(c.scenario, mine[0]);
        if (!p || !p->failure.empty()) continue;  // cannot run: the tallies above say so
        ++over;
        if (p->independent()) ++independent;
        else depends.emplace_back(c.id, std::move(*p));
      }
    std::string ranges_text;
    for (const auto& [key, range] : mine[0].ranges)
      for (const auto& opt : model::threshold_options())
        if (opt.key == key) ranges_text += fmt::format("{}{} in {}", ranges_text.empty() ? "" : " and ", key, model::threshold_range_text(opt, range));

    if (json) {
      auto j = envelope();
      j.update(r.to_json());
      if (!mine[0].ranges.empty()) {
        nlohmann::json dj = nlohmann::json::array();
        for (const auto& [id, p] : depends) dj.push_back({{"case", id}, {"summary", p.summary()}});
        j["threshold_intervals"] = {{"ranges", ranges_text},
                                    {"judged_at", "each interval's upper end"},
                                    {"cases", over},
                                    {"independent", independent},
                                    {"dependent", dj}};
      }
      j["corpus"]["paths"] = paths;
      print_json(j);
      return rc;
    }
    say("Hypothesis {} ({})\n", h.name, h.file);
    if (!h.description.empty()) say("  {}\n", h.description);
    if (r.same_as) say("  Same options as the shipped hypothesis {}.\n", *r.same_as);
    report::Table opts({"mechanism", "option", "cites", "meaning"});
    opts.wrap(2);
    opts.wrap(3);
    for (const auto& e : r.options) opts.add({e.mechanism, e.value, e.cites, e.meaning});
    say("\nOptions:\n{}", opts.render());

    say("\nCorpus ({} cases from {}; timing {}{}): passing / failing / unknown / not applicable\n", r.cases,
               fmt::join(paths, ", "), model::to_string(r.timing),
               r.timing == model::Timing::Trace ? fmt::format(", trace-driven for {} of them", r.traced) : "");
    report::Table lv({"level", "pass", "fail", "unknown", "n/a"});
    for (const auto& t : r.tallies)
      lv.add({std::string(model::to_string(t.level)), std::to_string(t.pass), std::to_string(t.fail), std::to_string(t.unknown),
              std::to_string(t.other)});
    say("{}", lv.render());
    const size_t shown = details ? r.failures.size() : std::min<size_t>(r.failures.size(), 15);
    if (shown) say("Failures (strictest failing level; {} of {}{}):\n", shown, r.failures.size(),
                   shown < r.failures.size() ? "; --details shows all" : "");
    for (size_t i = 0; i < shown; ++i)
      say("  {} ({}): {}\n", r.failures[i].case_id, r.failures[i].level, r.failures[i].detail);
    for (const auto& m : r.expectation_mismatches) say("  expectation mismatch: {}\n", m);
    if (!mine[0].ranges.empty()) {
      say("Thresholds given as intervals ({}): the tallies judge each interval's upper end; {} of {} cases "
                 "predict the same placements over the whole interval{}\n",
                 ranges_text, independent, over, depends.empty() ? " (independent of the value inside)" : "; the others:");
      for (const auto& [id, p] : depends) say("  {}: {}\n", id, p.summary());
    }
    if (r.expectation_mismatches.empty() && !r.failures.empty())
      say("No case's expectation for {} is contradicted: the {} failure(s) above are findings (exit 0).\n", h.name,
                 r.failures.size());

    say("\nAgainst the shipped hypotheses (synthesis: {}, {} s per query, solver {:.1f} s in all):\n", synthesis,
               timeout_s, r.solver_seconds);
    report::Table t({"against", "options that differ", "verdict", "witness", "synthesis", "detail"});
    t.wrap(1);
    t.wrap(5);
    for (const auto& p : r.pairs)
      t.add({p.other, p.differences.empty() ? "-" : fmt::format("{}", fmt::join(p.differences, "; ")),
             std::string(search::to_string(p.verdict)), p.witness_case.empty() ? "-" : p.witness_case, synthesis_cell(p),
             p.detail});
    say("{}", t.render());

    size_t apart = 0;
    for (const auto& n : r.neighbours) apart += n.cases.empty() ? 0 : 1;
    say("\nNeighbours (valid compositions one or two option changes away): {} of {} separated by a corpus case\n",
               apart, r.neighbours.size());
    report::Table nt({"neighbour", "options that differ", "separating corpus cases"});
    nt.wrap(1);
    nt.wrap(2);
    // A neighbour many cases separate: the first few and a count, unless --details.
    constexpr size_t kShownCases = 4;
    for (const auto& n : r.neighbours) {
      const std::vector<std::string> listed(
          n.cases.begin(),
          n.cases.begin() + static_cast<std::ptrdiff_t>(details ? n.cases.size() : std::min(n.cases.size(), kShownCases)));
      nt.add({n.name, fmt::format("{}", fmt::join(n.differences, "; ")),
              n.cases.empty() ? "none in the corpus"
                              : fmt::format("{}{}", fmt::join(listed, ", "),
                                            listed.size() < n.cases.size()
                                                ? fmt::format(", ... {} more (--details shows all)", n.cases.size() - listed.size())
                                                : "")});
    }
    say("{}", nt.render());
    return rc;
  }
};

}  // namespace

std::unique_ptr<Command> make_check(CLI::App& app) {
  auto c = std::make_unique<Check>();
  c->app = app.add_subcommand("check", "Explain a new hypothesis, validate it on the corpus and separate it from the shipped ones");
  c->app->add_option("hypothesis", c->hypothesis_spec,
                     "A hypothesis file (or a shipped name); a threshold may be an interval, \"(7936, 8192]\"")
      ->required();
  c->app->add_option("--corpus", c->corpus_paths,
                     "Case files or directories (default: corpus/paper, corpus/synth, corpus/hw where present)");
  c->app->add_option(kHypothesisOption, c->against_spec, "Hypotheses to separate it from: names, comma list, 'all' (default) or files");
  c->app->add_option("--device", c->device_name, "Device that synthesized cases target: a built-in name or a device JSON file (default rtx3090)");
  c->app->add_option("--synthesize", c->synthesis,
                     "Z3 synthesis: 'unseparated' (default: pairs no corpus case separates), 'all', 'none'")
      ->check(CLI::IsMember({"none", "unseparated", "all"}));
  c->app->add_option("--timeout", c->timeout_s, "Seconds per solver query (default 5); beyond it: unknown")
      ->check(number_in(0.1, 3600.0));
  add_judging_options(c->app, c->judging);
  c->app->add_flag("--json", c->json, "Machine-readable output");
  c->app->add_flag("--details", c->details, "List every failure and every separating case (default: the first 15 failures, 4 cases per neighbour)");
  c->app->footer(kExitCodesHelp);
  return c;
}

}  // namespace tbcheck::cli
