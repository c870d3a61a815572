// `tbcheck learn`: which hypothesis is the device? Runs splitting cases on an oracle and drops the
// refuted hypotheses step by step, printing each step; exit 0 when exactly one survives.
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/report/table.hpp"
#include "tbcheck/search/learn.hpp"

namespace tbcheck::cli {
namespace {

std::string groups_text(const std::vector<std::vector<std::string>>& groups) {
  std::vector<std::string> g;
  for (const auto& x : groups) g.push_back(fmt::format("{{{}}}", fmt::join(x, ", ")));
  return fmt::format("{}", fmt::join(g, " "));
}

struct Learn : Command {
  std::string device_name, hypothesis_spec = "all";
  std::vector<std::string> corpus_paths;
  search::LearnOptions opt;
  double timeout_s = 10;
  bool no_synthesis = false, json = false;

  int run() override {
    const model::Device& dev = model::builtin_device(device_name, "--device", "");
    auto hs = model::resolve_hypotheses(hypothesis_spec);
    // Default corpus: every case this checkout holds when run from its root (paper, synthesized, predictions,
    // hardware runs), and the shared recordings beside it when present.
    if (corpus_paths.empty())
      for (const char* p : {"corpus", "../shared/external"})
        if (std::filesystem::exists(p)) corpus_paths.emplace_back(p);
    std::vector<model::Case> corpus;
    for (const auto& p : corpus_paths) {
      auto cs = model::load_cases(p);
      corpus.insert(corpus.end(), cs.begin(), cs.end());
    }
    opt.synthesize = !no_synthesis;
    opt.bounds.timeout_ms = static_cast<unsigned>(timeout_s * 1000);
    if (!json)
      fmt::print("learn on {} with oracle {}: {} hypotheses, {} corpus cases, {} repetition(s) per run\n", dev.name,
                 opt.oracle_spec, hs.size(), corpus.size(), opt.repetitions);
    auto print_step = [&](const search::LearnStep& s) {
      if (json) return;
      fmt::print("step {}: {} ({} kernels, {} blocks) from {}\n", s.index, s.case_id, s.kernels, s.blocks, s.origin);
      fmt::print("  predictions split the survivors into {}\n", groups_text(s.groups));
      fmt::print("  oracle: {}{}; {:.3f} s wall, {:.1f} s of device time\n", oracle::to_string(s.status),
                 s.oracle_note.empty() ? "" : " (" + s.oracle_note + ")", s.oracle_seconds, s.device_seconds);
      fmt::print("  dropped: {}; survivors: {}\n", s.dropped.empty() ? "none" : fmt::format("{}", fmt::join(s.dropped, ", ")),
                 fmt::join(s.survivors, ", "));
    };
    search::LearnResult r = search::learn(hs, dev, corpus, opt, print_step);
    if (!json)
      for (const auto& n : r.not_applicable) fmt::print("set aside (not applicable to {}): {}\n", dev.name, n);
    if (json) {
      auto j = envelope();
      j["device"] = dev.name;
      j["oracle"] = opt.oracle_spec;
      j.update(r.to_json());
      print_json(j);
    } else {
      fmt::print("{}: {}\n", search::to_string(r.outcome), fmt::join(r.survivors, ", "));
      if (!r.reason.empty()) fmt::print("  {}\n", r.reason);
      fmt::print("{} step(s), {} oracle run(s), {:.3f} s oracle wall time, {:.1f} s device time, {:.1f} s synthesis\n",
                 r.steps.size(), r.oracle_runs, r.oracle_seconds, r.device_seconds, r.synthesis_seconds);
      if (r.open_question) fmt::print("open question (case {}):\n{}\n", r.open_question->id, r.open_question->to_json().dump(1));
    }
    switch (r.outcome) {
      case search::LearnOutcome::Identified: return kExitOk;
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
  c->app = app.add_subcommand("learn", "Identify the device's hypothesis: run splitting cases on an oracle, drop the refuted");
  c->app->add_option("--device", c->device_name, "Built-in device the oracle is")->required();
  c->app->add_option(kHypothesisOption, c->hypothesis_spec, "Comma list of names or files, or 'all' (default all)");
  c->app->add_option("--oracle", c->opt.oracle_spec, "Oracle: sim:<hypothesis> or cuda")->required();
  c->app->add_option("--corpus", c->corpus_paths,
                     "Case files or folders to draw splitting cases from (default corpus and ../shared/external)");
  c->app->add_option("--noise", c->opt.noise, "sim only: fraction of runs perturbed")->check(number_in(0.0, 1.0));
  c->app->add_option("--repeat", c->opt.repetitions, "Repetitions per oracle run, 1 to 10000 (default 3)")
      ->check(integer_in(1, 10000));
  c->app->add_option("--seed", c->opt.seed, "sim only: seed of the noise (default 1)");
  c->app->add_option("--max-steps", c->opt.max_steps, "Stop after this many oracle steps (default 100)")
      ->check(integer_in(1, 1'000'000));
  c->app->add_option("--time-unit-ms", c->opt.time_unit_ms, "Milliseconds per model time unit for device time (default 20)")
      ->check(number_above(0.0, 1e6));
  c->app->add_option("--timeout", c->timeout_s, "Z3 seconds per query when synthesizing (default 10)")
      ->check(number_above(0.0, 86400.0));
  c->app->add_flag("--no-synthesis", c->no_synthesis, "Use corpus cases only");
  c->app->add_flag("--json", c->json, "Machine-readable output");
  return c;
}

}  // namespace tbcheck::cli
