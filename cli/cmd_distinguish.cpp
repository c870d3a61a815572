// `tbcheck distinguish`: a minimal distinguishing scenario for every pair of the chosen hypotheses,
// written as corpus cases (atomically), with a table of outcomes, sizes, solver time and route.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/device_spec.hpp"
#include "tbcheck/model/hypothesis_list.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/report/table.hpp"
#include "tbcheck/search/distinguish.hpp"
#include "tbcheck/search/shard.hpp"

namespace tbcheck::cli {
namespace {

const model::Hypothesis& hypothesis_named(const std::vector<model::Hypothesis>& hs, const std::string& name) {
  for (const auto& h : hs)
    if (h.name == name) return h;
  throw std::logic_error("distinguish: no hypothesis named " + name);  // results only name hypotheses of hs
}

struct Distinguish : Command {
  std::string device_name = "rtx3090", hypothesis_spec = "round-robin,most-room,olmedo,alg1", out_dir, shard_spec;
  search::DistinguishBounds bounds;
  // 2 s each: on 2 cores the 55 pairs of docs/design.md take about 50 s with 32 minimal proofs (bench/RESULTS.md).
  double timeout_s = 2, budget_s = 2;
  // Pairs answered at once; each worker has its own Z3 context. Default: one per hardware thread.
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool json = false, force = false;

  int run() override {
    const model::Device dev = model::device_from_spec(device_name, "--device");
    auto hs = model::resolve_hypotheses(hypothesis_spec);
    if (hs.size() < 2) throw model::InputError("--hypothesis", "", "need at least two hypotheses to distinguish");
    if (!out_dir.empty()) model::check_output_dir(out_dir, "--out");  // before the solver runs; created at the first write
    bounds.timeout_ms = static_cast<unsigned>(timeout_s * 1000);
    bounds.pair_budget_ms = static_cast<unsigned>(budget_s * 1000);
    const auto t0 = std::chrono::steady_clock::now();
    // --shard i/N: this part's pairs only, and a shard.json beside the cases for `tbcheck merge`.
    std::optional<search::ShardSpec> shard;
    if (!shard_spec.empty()) shard = search::parse_shard(shard_spec);
    if (shard && out_dir.empty()) throw model::InputError("--shard", "", "needs --out DIR (the shard's folder, for merge)");
    const auto every = search::all_pairs(hs.size());
    std::vector<size_t> positions(every.size());
    for (size_t k = 0; k < positions.size(); ++k) positions[k] = k;
    if (shard) positions = search::shard_pairs(every.size(), *shard);
    std::vector<std::pair<size_t, size_t>> chosen;
    for (size_t k : positions) chosen.push_back(every[k]);
    size_t pairs = chosen.size();
    std::vector<search::PairResult> results;
    {
      report::Progress progress("distinguish", pairs);
      results = search::distinguish_pairs(hs, chosen, dev, bounds, jobs, [&](const search::PairResult&) { progress.tick(); });
    }
    // Written once every pair is answered, in pair order, each file atomically; the names are known only
    // now, so all are checked (existing without --force, under corpus/hw/) before the first is written.
    std::vector<std::pair<std::string, const search::PairResult*>> targets;
    for (const auto& r : results)
      if (r.witness && !out_dir.empty())
        targets.emplace_back((std::filesystem::path(out_dir) / (r.witness->id + ".json")).string(), &r);
    for (const auto& [path, r] : targets) model::check_output_file(path, force, "--out");
    std::vector<std::string> written;
    for (const auto& [path, r] : targets) {
      model::write_file_atomic(
          path,
          search::case_file_text(search::case_json(*r, bounds, hypothesis_named(hs, r->h1), hypothesis_named(hs, r->h2))),
          /*no_overwrite=*/!force);
      written.push_back(path);
    }
    if (shard) {
      std::vector<nlohmann::json> rows;
      for (const auto& r : results)
        rows.push_back(search::pair_json(r, bounds, hypothesis_named(hs, r.h1), hypothesis_named(hs, r.h2)));
      std::string path = (std::filesystem::path(out_dir) / search::kShardFile).string();
      model::write_file_atomic(path, model::json_file_text(search::shard_json(*shard, TBCHECK_VERSION, dev, hs, bounds, positions, rows), 1),
                               /*no_overwrite=*/!force);
      written.push_back(path);
    }
    if (json) {
      auto j = envelope();
      j["device"] = dev.name;
      j["pairs"] = nlohmann::json::array();
      for (const auto& r : results)
        j["pairs"].push_back(search::pair_json(r, bounds, hypothesis_named(hs, r.h1), hypothesis_named(hs, r.h2)));
      print_json(j);
      return kExitOk;
    }
    report::Table t({"pair", "outcome", "reduced", "kernels", "blocks", "duration", "solver s", "wall s", "minimal",
                     "route / reason"});
    for (size_t c : {3u, 4u, 5u, 6u, 7u}) t.right_align(c);
    t.wrap(0);
    t.wrap(9);
    for (const auto& r : results) {
      bool sep = r.outcome == search::PairOutcome::Separated;
      t.add({r.h1 + " / " + r.h2, std::string(search::to_string(r.outcome)),
             sep ? fmt::format("[{}]", fmt::join(r.structure, ",")) : "", sep ? std::to_string(r.kernels) : "",
             sep ? std::to_string(r.blocks) : "", sep ? std::to_string(r.total_duration) : "",
             fmt::format("{:.1f}", r.solver_seconds), fmt::format("{:.1f}", r.wall_seconds),
             sep ? search::minimality_text(r) : "",
             sep ? r.route + (r.reason.empty() ? "" : "; " + r.reason) : r.reason});
    }
    say("{} on {}:\n{}", pairs == 1 ? "1 pair" : fmt::format("{} pairs", pairs), dev.name, t.render());
    double total = 0, wall = 0;
    for (const auto& r : results) {
      total += r.solver_seconds;
      wall += r.wall_seconds;
    }
    say("solver time {:.1f} s, pair wall time {:.1f} s summed, {:.1f} s elapsed on {} job(s)\n", total, wall,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), jobs);
    for (const auto& w : written) say("wrote {}\n", w);
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> make_distinguish(CLI::App& app) {
  auto c = std::make_unique<Distinguish>();
  c->app = app.add_subcommand("distinguish", "Synthesize minimal scenarios on which hypotheses disagree (Z3)");
  c->app->add_option("--device", c->device_name, "A built-in device name or a device JSON file (default rtx3090)");
  c->app->add_option(kHypothesisOption, c->hypothesis_spec, "Comma list, 'all', or hypothesis files (default round-robin,most-room,olmedo,alg1)");
  c->app->add_option("--out", c->out_dir, "Directory for the synthesized corpus cases (created when missing)");
  c->app->add_flag("--force", c->force, "Replace existing case files in --out (never one under corpus/hw/)");
  c->app->add_option("--max-kernels", c->bounds.max_kernels, "Most kernels in a scenario (default 3)")->check(integer_in(1, 8));
  c->app->add_option("--max-blocks", c->bounds.max_total_blocks, "Most blocks in a scenario on the reduced device (default 5)")
      ->check(integer_in(1, 24));
  c->app->add_option("--max-blocks-per-kernel", c->bounds.max_blocks_per_kernel, "Most blocks per kernel (default 3)")
      ->check(integer_in(1, 16));
  c->app->add_option("--max-duration", c->bounds.params.max_duration, "Longest block duration in units (default 3)")
      ->check(integer_in(1, 16));
  c->app->add_option("--timeout", c->timeout_s, "Seconds per solver query (default 2); beyond it: unknown")
      ->check(number_above(0.0, 86400.0));
  c->app->add_option("--pair-budget", c->budget_s,
                     "Solver seconds per pair, all queries together (default 2; 0: no limit); smaller structures left "
                     "undecided make minimality 'bounded'")
      ->check(number_in(0.0, 1e6));
  c->app->add_option("--samples", c->bounds.sim_samples,
                     "Random scenarios per structure run on both simulators before Z3 is asked (default 3000; 0: Z3 only)")
      ->check(integer_in(0, 10'000'000));
  c->app->add_option("--wide-samples", c->bounds.wide_samples,
                     "When nothing separates a pair within the bounds: random scenarios beyond them, by simulation only "
                     "(default 10000; 0: none)")
      ->check(integer_in(0, 10'000'000));
  c->app->add_option("--jobs,-j", c->jobs, "Pairs answered at once, each on its own thread (default: hardware threads)")
      ->check(integer_in(1, 64));
  c->app->add_option("--shard", c->shard_spec,
                     "i/N: answer part i of N of the pairs (every N-th from the i-th) and write shard.json into --out "
                     "for `tbcheck merge`");
  c->app->add_flag("--json", c->json, "Machine-readable output");
  return c;
}

}  // namespace tbcheck::cli
