// `tbcheck learn`: which composition of mechanisms is the device? Runs splitting cases on an oracle over
// the version space (every valid composition, or a --hypotheses list), then confirms the survivor.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cmd_learn_replay.hpp"
#include "commands.hpp"
#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/search/learn.hpp"

namespace tbcheck::cli {
namespace {

std::string groups_text(const search::LearnStep& s) {
  // Many classes: their sizes only (the members are thousands of long names).
  if (s.groups.size() > 4) {
    std::vector<size_t> sizes = s.group_sizes;
    std::sort(sizes.rbegin(), sizes.rend());
    return fmt::format("{} classes of sizes {}", sizes.size(), fmt::join(sizes, ", "));
  }
  std::vector<std::string> g;
  for (size_t i = 0; i < s.groups.size(); ++i) {
    const size_t n = i < s.group_sizes.size() ? s.group_sizes[i] : s.groups[i].size();
    if (n <= 3)
      g.push_back(fmt::format("{{{}}}", fmt::join(s.groups[i], ", ")));
    else
      g.push_back(fmt::format("{{{} candidates, e.g. {}}}", n, s.groups[i].front()));
  }
  return fmt::format("{}", fmt::join(g, " "));
}

struct Learn : Command {
  std::string device_name, hypothesis_spec, out_dir;
  std::vector<std::string> corpus_paths;
  search::LearnOptions opt;
  double timeout_s = 2;
  bool no_synthesis = false, json = false;
  JudgingFlags judging;  // replay oracle only

  int run() override {
    const model::Device& dev = model::builtin_device(device_name, "--device", "");
    opt.space = hypothesis_spec.empty() ? search::LearnSpace::Compositions : search::LearnSpace::List;
    const std::vector<model::Hypothesis> hs =
        hypothesis_spec.empty() ? model::compositions_for(dev) : model::resolve_hypotheses(hypothesis_spec);
    if (!out_dir.empty()) model::check_output_dir(out_dir, "--out");  // before the oracle runs; created at the first write
    // Default corpus: every case this checkout holds when run from its root (paper, synthesized, predictions,
    // hardware runs and imported recordings).
    if (corpus_paths.empty()) corpus_paths = require_default_corpus({"corpus"}, "--corpus");
    std::vector<model::Case> corpus;
    for (const auto& p : corpus_paths) {
      auto cs = model::load_cases(p);
      corpus.insert(corpus.end(), cs.begin(), cs.end());
    }
    if (is_replay_learning(opt.oracle_spec)) {  // recordings are judged, not run (cmd_learn_replay.cpp)
      search::ReplayLearnOptions ro;
      ro.judging = judging.options();
      ro.space = opt.space;
      ro.split_sample = opt.split_sample;
      return learn_from_recordings_command(dev, hs, corpus, opt.oracle_spec, ro, out_dir, json);
    }
    if (judging.options().timing != model::Timing::Model)
      throw model::InputError("--timing", "", "applies to --oracle replay:<recordings> only");
    opt.synthesize = !no_synthesis;
    opt.bounds.timeout_ms = static_cast<unsigned>(timeout_s * 1000);
    if (!json)
      fmt::print("learn on {} with oracle {}: {} {}, {} corpus cases, {} repetition(s) per run\n", dev.name,
                 opt.oracle_spec, hs.size(),
                 opt.space == search::LearnSpace::Compositions ? "compositions (every valid one)" : "hypotheses",
                 corpus.size(), opt.repetitions);
    // Progress on a terminal only: one line on stderr, rewritten, cleared before each step's report.
    const bool tty = isatty(STDERR_FILENO) != 0;
    auto progress = [&](const std::string& text) {
      if (tty) fmt::print(stderr, "\r\033[K{}", text);
    };
    progress("learn: choosing the first case...");
    auto print_step = [&](const search::LearnStep& s) {
      progress("");
      if (!json) {
        fmt::print("step {} ({}): {} ({} kernels, {} blocks) from {}\n", s.index, search::to_string(s.purpose), s.case_id,
                   s.kernels, s.blocks, s.origin);
        if (!s.confirms.empty())
          fmt::print("  chosen to separate the survivor from {} neighbour(s): {}{}\n", s.confirms.size(),
                     fmt::join(s.confirms.begin(), s.confirms.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(4, s.confirms.size())), ", "),
                     s.confirms.size() > 4 ? ", ..." : "");
        fmt::print("  predictions split the {} consistent candidate(s) into {}\n",
                   std::accumulate(s.group_sizes.begin(), s.group_sizes.end(), size_t{0}), groups_text(s));
        fmt::print("  oracle: {}{}; {:.3f} s wall, {:.1f} s of device time\n", oracle::to_string(s.status),
                   s.oracle_note.empty() ? "" : " (" + s.oracle_note + ")", s.oracle_seconds, s.device_seconds);
        fmt::print("  dropped {}; {} consistent{}\n", s.dropped_count, s.survivor_count,
                   s.survivor_count <= 6 ? fmt::format(": {}", fmt::join(s.survivors, ", ")) : "");
      }
      progress(fmt::format("learn: step {} done, {} consistent; choosing the next case...", s.index, s.survivor_count));
    };
    search::LearnResult r = search::learn(hs, dev, corpus, opt, print_step);
    progress("");
    if (tty) fmt::print(stderr, "\r\033[K");

    std::vector<std::string> written;
    if (!out_dir.empty())
      for (const auto& h : r.consistent) {
        const std::string path = (std::filesystem::path(out_dir) / (h.name + ".json")).string();
        // Each threshold as the interval the observations allow where it lies in one (model/thresholds.hpp).
        model::RangedHypothesis rh{h, {}};
        for (const auto& iv : r.intervals)
          if (const auto range = model::range_of(iv); range && iv.contains(model::threshold_of(h, iv.option)))
            rh.ranges[std::string(iv.option.key)] = *range;
        model::write_file_atomic(path, model::ranged_to_json(rh).dump(2) + "\n");
        written.push_back(path);
      }
    if (!out_dir.empty() && r.open_question) {
      const std::string path = (std::filesystem::path(out_dir) / (r.open_question->id + ".json")).string();
      model::write_file_atomic(path, r.open_question->to_json().dump(1) + "\n");
      written.push_back(path);
    }
    if (json) {
      auto j = envelope();
      j["device"] = dev.name;
      j["oracle"] = opt.oracle_spec;
      j.update(r.to_json());
      j["written"] = written;
      print_json(j);
    } else {
      if (r.not_applicable.size() <= 3)
        for (const auto& n : r.not_applicable) fmt::print("set aside (not applicable to {}): {}\n", dev.name, n);
      else
        fmt::print("set aside {} candidates not applicable to {} (first: {})\n", r.not_applicable.size(), dev.name,
                   r.not_applicable.front());
      fmt::print("\n{}: {}\n", search::to_string(r.outcome),
                 r.survivors.empty()          ? std::string("no candidate fits")
                 : r.survivors.size() <= 8 ? fmt::format("{}", fmt::join(r.survivors, ", "))
                                         : fmt::format("{} consistent candidates", r.survivors.size()));
      if (!r.reason.empty()) fmt::print("{}\n", r.reason);
      if (!r.intervals.empty()) {
        fmt::print("thresholds (the values every observation allows):\n");
        for (const auto& iv : r.intervals)
          fmt::print("  {:<30} {} ({} of the device's steps of {})\n", iv.option.key, iv.range_text(), iv.cuts(),
                     iv.granularity);
      }
      if (!r.scope.empty()) fmt::print("scope: {}\n", r.scope);
      if (!r.nearest.empty()) {
        fmt::print("nearest (fewest observed cases refuted, then fewest blocks misplaced):\n");
        for (const auto& n : r.nearest)
          fmt::print("  {}: {} case(s), {} block(s); first fails {} ({})\n", n.name, n.cases_refuted,
                     n.blocks_misplaced, n.first_case, n.where);
      }
      if (r.equivalence.size() > 1 || (r.equivalence.size() == 1 && r.equivalence[0].size() > 1)) {
        fmt::print("consistent set, grouped (members of a group proved equivalent on {}):\n", dev.name);
        // A run without corpus or synthesis can leave thousands of groups: the terminal gets the first
        // few, --json and --out every one.
        constexpr size_t kShownGroups = 20;
        for (size_t i = 0; i < r.equivalence.size() && i < kShownGroups; ++i) {
          const auto& g = r.equivalence[i];
          fmt::print("  {}{}\n", fmt::join(g.begin(), g.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(g.size(), 6)), ", "),
                     g.size() > 6 ? fmt::format(", ... ({} in all)", g.size()) : "");
        }
        if (r.equivalence.size() > kShownGroups)
          fmt::print("  ... {} more groups (--json or --out lists every one)\n", r.equivalence.size() - kShownGroups);
      }
      if (!r.open_pairs.empty()) {
        constexpr size_t kShownPairs = 20;
        fmt::print("undecided pairs (no case splits them):\n");
        for (size_t i = 0; i < r.open_pairs.size() && i < kShownPairs; ++i)
          fmt::print("  {} / {}: {}\n", r.open_pairs[i].a, r.open_pairs[i].b, r.open_pairs[i].why);
        if (r.open_pair_count > kShownPairs)
          fmt::print("  ... {} more pairs (--json lists {})\n", r.open_pair_count - kShownPairs, r.open_pairs.size());
      }
      if (r.confirmation) {
        size_t shown = 0;
        for (const auto& n : r.confirmation->neighbours)
          if (n.verdict == search::NeighbourVerdict::NotSeparated && shown++ < 12)
            fmt::print("  not yet separated from {} ({}): {}\n", n.name, fmt::join(n.differences, "; "), n.detail);
      }
      if (!r.mechanisms.empty()) {
        fmt::print("mechanisms:\n");
        for (const auto& m : r.mechanisms)
          fmt::print("  {:<30} {:<8} {}\n", m.mechanism, search::to_string(m.state),
                     m.state == search::Settledness::Settled
                         ? fmt::format("{}{}", fmt::join(m.values, " = "),
                                       m.settled_by.empty() ? "" : " (settled by " + m.settled_by + ")")
                         : fmt::format("still one of: {}", fmt::join(m.values, ", ")));
      }
      fmt::print("{} step(s), {} oracle run(s), {:.3f} s oracle wall time, {:.1f} s device time, {:.1f} s synthesis\n",
                 r.steps.size(), r.oracle_runs, r.oracle_seconds, r.device_seconds, r.synthesis_seconds);
      if (!written.empty()) fmt::print("wrote {} file(s) to {}\n", written.size(), out_dir);
      if (r.open_question)
        fmt::print("open question (case {}):\n{}\n", r.open_question->id, r.open_question->to_json().dump(1));
    }
    switch (r.outcome) {
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
  c->app->add_option("--device", c->device_name, "Built-in device the oracle is")->required();
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
  c->app->add_option("--seed", c->opt.seed, "sim only: seed of the noise (default 1)");
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
  add_judging_options(c->app, c->judging, "replay:<recordings> only: ");
  c->app->add_flag("--json", c->json, "Machine-readable output");
  return c;
}

}  // namespace tbcheck::cli
