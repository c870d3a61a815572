// `tbcheck random`: the random kernel generator of seed 000 Section III-A, writing one corpus case
// (no observation) per generated sequence, named deterministically and written atomically.
#include <limits>
#include <filesystem>

#include <fmt/format.h>

#include "commands.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/hypothesis_list.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/report/table.hpp"
#include "tbcheck/search/random.hpp"

namespace tbcheck::cli {
namespace {

struct Random : Command {
  std::string device_name = "rtx3090", out_dir, judge = "alg1", must_run_spec = "all";
  int count = 10, max_blocks = 0, max_duration = 10;
  uint64_t seed = 1;
  bool force = false, json = false;

  int run() override {
    if (out_dir.empty()) throw model::InputError("random", "--out", "an output directory is required");
    const model::Device& d = model::builtin_device(device_name, "random", "--device");
    search::RandomOptions o;
    o.max_blocks = max_blocks;
    o.max_duration = max_duration;
    o.judge = judge;
    if (must_run_spec != "none")
      o.must_run = with_flag("--hypothesis", "--must-run", [&] { return model::resolve_hypotheses(must_run_spec); });
    // Bad input stops here, before anything is created: the judge, the folder, existing case files.
    // The folder itself is created by the first write.
    // The resolver's message lists 'all' and files as valid; the judge is one shipped hypothesis.
    if (with_flag("--hypothesis", "--judge", [&] { return model::resolve_hypotheses(judge); }).size() != 1 ||
        !model::find_builtin_hypothesis(judge))
      throw model::InputError("--judge", "", fmt::format("'{}': the judge is one shipped hypothesis (e.g. alg1), not a "
                                                         "list, 'all' or a file", judge));
    model::check_output_dir(out_dir, "--out");
    if (!force)
      for (int i = 0; i < count; ++i) {
        const std::string path = (std::filesystem::path(out_dir) / (search::random_case_id(d, seed, i, count) + ".json")).string();
        std::error_code ec;
        if (std::filesystem::exists(std::filesystem::symlink_status(path, ec))) model::check_output_file(path, false, "--out");
      }

    report::Progress progress("random", static_cast<size_t>(count));
    nlohmann::json written = nlohmann::json::array();
    long kernels = 0, blocks = 0, capped = 0;
    int most = 0, fewest = 1 << 30;
    for (int i = 0; i < count; ++i) {
      search::RandomCase rc = search::random_case(d, seed, i, o);
      rc.c.id = search::random_case_id(d, seed, i, count);
      const std::string path = (std::filesystem::path(out_dir) / (rc.c.id + ".json")).string();
      model::write_file_atomic(path, model::json_file_text(rc.c.to_json(), 1), /*no_overwrite=*/!force);
      const int k = static_cast<int>(rc.c.scenario.kernels.size());
      kernels += k;
      blocks += rc.c.scenario.total_blocks();
      capped += rc.end == search::FillEnd::KernelCap;
      most = std::max(most, k);
      fewest = std::min(fewest, k);
      written.push_back({{"file", path}, {"kernels", k}, {"blocks", rc.c.scenario.total_blocks()},
                         {"end", search::to_string(rc.end)}});
      progress.tick();
    }
    if (json) {
      auto j = envelope();
      j["device"] = d.name;
      j["seed"] = seed;
      j["judge"] = judge;
      j["cases"] = written;
      print_json(j);
      return kExitOk;
    }
    say("{} cases for {} (seed {}, fill judged by {}) written to {}\n", count, d.name, seed, judge, out_dir);
    if (count > 0)
      say("kernels per case: {} to {} (mean {:.1f}); blocks per case: mean {:.1f}; {} stopped at the kernel cap\n",
                 fewest, most, double(kernels) / count, double(blocks) / count, capped);
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> make_random(CLI::App& app) {
  auto c = std::make_unique<Random>();
  c->app = app.add_subcommand("random", "Random kernel sequences (seed 000 Section III-A), appended until the device is full");
  c->app->add_option("--device", c->device_name, "Built-in device (default rtx3090)");
  c->app->add_option("--count", c->count, "Number of cases (default 10)")->check(integer_in(0, 10'000'000));
  c->app->add_option("--seed", c->seed, "Seed (default 1); case i of a seed is the same for every --count")
      ->check(integer_in(0, std::numeric_limits<uint64_t>::max()));
  c->app->add_option("--out", c->out_dir, "Directory for the cases, created when missing (random-<device>-s<seed>-<i>.json)")
      ->required();
  c->app->add_option("--max-blocks", c->max_blocks, "Most blocks per kernel (default: the SM count)")->check(integer_in(0, 1 << 20));
  c->app->add_option("--max-duration", c->max_duration, "Longest block duration in units (default 10)")
      ->check(integer_in(1, 1'000'000));
  c->app->add_option("--judge", c->judge, "Shipped hypothesis that plays the device for 'full' (default alg1)");
  c->app->add_option("--must-run", c->must_run_spec,
                     "Hypotheses under which every kernel must fit an empty SM ('all' default, 'none', or a list)");
  c->app->add_flag("--force", c->force, "Replace existing files of the same name");
  c->app->add_flag("--json", c->json, "Machine-readable output");
  return c;
}

}  // namespace tbcheck::cli
