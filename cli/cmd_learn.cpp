// `tbcheck learn`: which composition of mechanisms is the device? Runs splitting cases on an oracle over
// the version space (every valid composition, or a --hypotheses list), then confirms the survivor.
#include <limits>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cmd_learn_replay.hpp"
#include "commands.hpp"
#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/device_spec.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/hypothesis_list.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/report/table.hpp"
#include "tbcheck/search/learn.hpp"
#include "tbcheck/search/learn_rules.hpp"

namespace tbcheck::cli {
namespace {

struct Learn : Command {
  std::string device_name, hypothesis_spec, out_dir;
  std::vector<std::string> corpus_paths;
  search::LearnOptions opt;
  double timeout_s = 2;
  bool no_synthesis = false, json = false;
  JudgingFlags judging;  // replay oracle only
  RuleSearchFlags rules;

  int run() override {
    const model::Device dev = model::device_from_spec(device_name, "--device");
    opt.space = hypothesis_spec.empty() ? search::LearnSpace::Compositions : search::LearnSpace::List;
    std::vector<model::Hypothesis> hs;
    // Given but empty (an unset shell variable, say) is refused as every command refuses it, not read as
    // "left out", which would learn over the whole composition space.
    if (!hypothesis_spec.empty() || app->get_option("--hypotheses")->count() > 0)
      hs = model::resolve_hypotheses(hypothesis_spec);
    if (!out_dir.empty()) model::check_output_dir(out_dir, "--out");  // before the oracle runs; created at the first write
    // Default corpus: every case this checkout holds when run from its root (paper, synthesized, predictions,
    // hardware runs and imported recordings).
    if (corpus_paths.empty()) corpus_paths = require_default_corpus({"corpus"}, "--corpus");
    std::vector<model::Case> corpus;
    if (hypothesis_spec.empty()) {
      auto both = search::composition_space_and_corpus(dev, corpus_paths);
      hs = std::move(both.space);
      corpus = std::move(both.corpus);
    } else {
      for (const auto& p : corpus_paths) {
        auto cs = model::load_cases(p);
        corpus.insert(corpus.end(), cs.begin(), cs.end());
      }
    }
    if (is_replay_learning(opt.oracle_spec)) {  // recordings are judged, not run (cmd_learn_replay.cpp)
      search::ReplayLearnOptions ro;
      ro.judging = judging.options();
      ro.space = opt.space;
      ro.split_sample = opt.split_sample;
      ro.jobs = opt.jobs;
      return learn_from_recordings_command(dev, hs, corpus, opt.oracle_spec, ro, out_dir, json, rules);
    }
    if (judging.options().timing != model::Timing::Model)
      throw model::InputError("--timing", "", "applies to --oracle replay:<recordings> only");
    opt.synthesize = !no_synthesis;
    // Confirmation separates a survivor from the rules of the same bound (off: from compositions only).
    opt.rule_neighbour_keys = rules.parsed() == RuleSearchMode::Off ? 0 : rules.bound.max_keys;
    opt.bounds.timeout_ms = static_cast<unsigned>(timeout_s * 1000);
    if (!json)
      say("learn on {} with oracle {}: {} {}, {} corpus cases, {} repetition(s) per run\n", dev.name, opt.oracle_spec,
          hs.size(), opt.space == search::LearnSpace::Compositions ? "compositions (every valid one)" : "hypotheses",
          corpus.size(), opt.repetitions);
    report::Progress progress("learn");
    auto steps_printer = [&](size_t start_candidates) {
      const auto began = std::chrono::steady_clock::now();
      progress.stage(fmt::format("step 1 of at most {}: choosing a splitting case and asking the oracle", opt.max_steps));
      progress.note(fmt::format("{} candidates", start_candidates));
      // Progress per step (report::Progress, staged: a step's length is known only once it is done): what the
      // step does, the candidates left, and an estimate from the time per step so far, were each step to halve
      // the candidates (a good split does; learn stops at one, or at --max-steps).
      return [&, start_candidates, began](const search::LearnStep& s) {
        // The stage first: on a terminal it erases the live line, so the step's report starts a line.
        progress.stage(fmt::format("step {} of at most {}: choosing a splitting case and asking the oracle",
                                   s.index + 1, opt.max_steps));
        if (!json) say("{}", s.text());
        const double per_step =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count() / std::max(1, s.index);
        const int left = std::min(opt.max_steps - s.index,
                                  static_cast<int>(std::ceil(std::log2(std::max<size_t>(1, s.survivor_count)))) + 1);
        progress.note(fmt::format("{}{} candidates consistent; about {} s left if each step halves them", s.survivor_count,
                                  start_candidates ? fmt::format(" of {}", start_candidates) : "",
                                  static_cast<long>(per_step * std::max(0, left))));
      };
    };
    const size_t start_candidates = hs.size();
    search::LearnResult r = search::learn(std::move(hs), dev, corpus, opt, steps_printer(start_candidates));
    // Nothing in the space fits (or --rules always): rules of the language in place of the selection.
    std::optional<search::RuleSearchResult> rule_search;
    if (rules.wanted(opt.space, !r.consistent.empty()) && r.outcome != search::LearnOutcome::NoDevice &&
        r.outcome != search::LearnOutcome::Unsupported) {
      if (!json) say("{}", r.text(dev.name));
      progress.stage("rule search: judging the rules on the cases observed", 0);
      search::RuleSearchResult rs = search::learn_rules(r, dev, corpus, opt, rules.bound, steps_printer(0));
      if (!json) say("{}", rs.text(r.observed.size()));
      rule_search = std::move(rs);
    }
    const search::LearnResult& last = rule_search && rule_search->learned ? *rule_search->learned : r;

    std::vector<std::string> written;
    if (!out_dir.empty())
      for (const auto& h : last.consistent) {
        const std::string path = (std::filesystem::path(out_dir) / (h.name + ".json")).string();
        // Each threshold as the interval the observations allow where it lies in one (model/thresholds.hpp).
        model::RangedHypothesis rh{h, {}};
        for (const auto& iv : last.intervals)
          if (const auto range = model::range_of(iv); range && iv.contains(model::threshold_of(h, iv.option)))
            rh.ranges[std::string(iv.option.key)] = *range;
        model::write_file_atomic(path, model::json_file_text(model::ranged_to_json(rh), 2));
        written.push_back(path);
      }
    // No rule fits: the nearest rules as files, their standing in the source, to be judged elsewhere.
    if (!out_dir.empty() && rule_search && last.consistent.empty()) {
      const std::vector<search::NearMiss>& near = rule_search->learned ? rule_search->learned->nearest : rule_search->nearest;
      for (const auto& n : near) {
        model::Hypothesis h = n.hypothesis;
        h.source += fmt::format("; nearest, not fitting: {} observed case(s) refuted, {} block(s) misplaced",
                                n.cases_refuted, n.blocks_misplaced);
        const std::string path = (std::filesystem::path(out_dir) / (h.name + ".json")).string();
        model::write_file_atomic(path, model::json_file_text(h.to_json(), 2));
        written.push_back(path);
      }
    }
    if (!out_dir.empty() && r.open_question) {
      const std::string path = (std::filesystem::path(out_dir) / (r.open_question->id + ".json")).string();
      model::write_file_atomic(path, model::json_file_text(r.open_question->to_json(), 1));
      written.push_back(path);
    }
    if (json) {
      auto j = envelope();
      j["device"] = dev.name;
      j["oracle"] = opt.oracle_spec;
      j.update(r.to_json());
      j["rule_search"] = rule_search ? rule_search->to_json() : nlohmann::json(nullptr);
      j["written"] = written;
      print_json(j);
    } else if (!rule_search || rule_search->learned) {
      say("{}", last.text(dev.name, written.size(), out_dir));
    }
    const search::LearnOutcome outcome = rule_search && !rule_search->learned ? search::LearnOutcome::NoneSurvives
                                                                              : last.outcome;
    switch (outcome) {
      case search::LearnOutcome::Identified:
      case search::LearnOutcome::Equivalent: return kExitOk;
      case search::LearnOutcome::NoDevice:
      case search::LearnOutcome::Unsupported:
        if (!json) fmt::print(stderr, "tbcheck: error: oracle {}: {}\n", opt.oracle_spec, r.reason);
        return kExitBadInput;
      default: return kExitFailed;
    }
  }
};

}  // namespace

std::unique_ptr<Command> make_learn(CLI::App& app) {
  auto c = std::make_unique<Learn>();
  c->app = app.add_subcommand("learn",
                              "Identify the device's composition of mechanisms: run splitting cases on an oracle, drop "
                              "the refuted, confirm the survivor against its neighbours");
  c->app->add_option("--device", c->device_name, "The device the oracle is: a built-in name or a device JSON file (one `probe-gpc` measured)")->required();
  c->app->add_option(kHypothesisOption, c->hypothesis_spec,
                     "Restrict to a comma list of names or files, or 'all' shipped (default: every valid composition)");
  c->app->add_option("--oracle", c->opt.oracle_spec, "Oracle: sim:<hypothesis name or file>, cuda, or replay:<recordings: folders or files, "
                     "comma-separated> (judges the space against what a GPU was recorded doing; no GPU)")->required();
  c->app->add_option("--corpus", c->corpus_paths,
                     "Case files or folders to draw splitting cases from (default: corpus, from the repository root)");
  c->app->add_option("--out", c->out_dir, "Write each consistent candidate here as a hypothesis file (created when missing)");
  c->app->add_option("--noise", c->opt.noise, "sim only: fraction of runs perturbed")->check(number_in(0.0, 1.0));
  c->app->add_option("--repeat", c->opt.repetitions, "Repetitions per oracle run, 1 to 10000 (default 3)")
      ->check(integer_in(1, 10000));
  c->app->add_option("--seed", c->opt.seed, "sim only: seed of the noise (default 1)")
      ->check(integer_in(0, std::numeric_limits<unsigned>::max()));
  c->app->add_option("--max-steps", c->opt.max_steps, "Stop after this many oracle steps (default 100)")
      ->check(integer_in(1, 1'000'000));
  c->app->add_option("--time-unit-ms", c->opt.time_unit_ms, "Milliseconds per model time unit for device time (default 20)")
      ->check(number_above(0.0, 1e6));
  c->app->add_option("--timeout", c->timeout_s, "Z3 seconds per query when synthesizing (default 2)")
      ->check(number_above(0.0, 86400.0));
  c->app->add_option("--synthesis-budget", c->opt.synthesis_budget_s,
                     "Z3 seconds for the whole run, splitting and confirming (default 120)")
      ->check(number_above(0.0, 1e7));
  c->app->add_option("--confirm-pairs", c->opt.confirm_synthesis_pairs,
                     "Neighbours Z3 is asked about when no corpus case separates them (default 12)")
      ->check(integer_in(0, 100000));
  c->app->add_flag("--no-synthesis", c->no_synthesis, "Use corpus cases only");
  c->opt.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  c->app->add_option("--jobs,-j", c->opt.jobs,
                     "Worker threads for a step's simulations (cases classed for a split, a sharpened split's moves; "
                     "with --oracle replay:, candidates judged against recordings); "
                     "the answer does not depend on it (default: hardware threads)")
      ->check(integer_in(1, 64));
  add_judging_options(c->app, c->judging, "replay:<recordings> only: ");
  add_rule_search_options(c->app, c->rules);
  c->app->add_flag("--json", c->json, "Machine-readable output");
  return c;
}

}  // namespace tbcheck::cli
