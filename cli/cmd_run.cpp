// `tbcheck run`: run a scenario or case on an oracle (sim:<hypothesis>, replay, cuda) R times and
// write the observation as a new corpus case, atomically and never over an existing file.

#include <limits>
#include <fmt/format.h>

#include "commands.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/model/one_case.hpp"
#include "tbcheck/oracle/cuda_host.hpp"
#include "tbcheck/oracle/oracle.hpp"
#include "tbcheck/report/table.hpp"

namespace tbcheck::cli {
namespace {

using model::file_safe;

constexpr int kMaxRepeat = oracle::kMaxRepetitions;
// Upper bound of repetitions x blocks held in memory (about 24 bytes each: under a gigabyte).
constexpr int64_t kMaxRecordedPlacements = int64_t{1} << 25;

struct Run : Command {
  std::string case_path, case_id, oracle_spec, out_dir;
  double noise = 0.0;
  int repeat = 3;
  unsigned seed = 1;
  bool json = false;
  bool dry_run = false;
  std::string settle;  // --settle, cuda only
  oracle::cuda::CudaOptions cuda;

  // `--dry-run`: the cuda oracle's launch plan from the probe variants' nominal register counts;
  // needs no GPU (the real numRegs are read with cudaFuncGetAttributes when the run happens).
  int print_plan(const model::Case& in) {
    const oracle::cuda::PlanResult p = oracle::cuda::build_launch_plan(in.scenario, oracle::cuda::nominal_variants(), cuda);
    oracle::cuda::LaunchPlan plan = p.plan;
    plan.nominal = true;
    if (json) {
      auto j = envelope();
      j["case"] = in.id;
      j["device"] = in.scenario.device.name;
      j["status"] = p.status == oracle::cuda::PlanStatus::Ok ? "ok" : "unsupported";
      j["reason"] = p.reason;
      j["plan"] = plan.to_json();
      print_json(j);
    } else {
      say("launch plan of {} on {} (cuda oracle, dry run)\n{}", in.id, in.scenario.device.name, plan.to_text());
      if (p.status != oracle::cuda::PlanStatus::Ok) say("unsupported: {}\n", p.reason);
    }
    return p.status == oracle::cuda::PlanStatus::Ok ? kExitOk : kExitBadInput;
  }

  int run() override {
    const model::Case in = model::load_one_case(case_path, case_id, "run");
    const bool is_cuda = oracle_spec == "cuda";
    if ((dry_run || cuda.force_device || cuda.time_unit_ms != oracle::cuda::CudaOptions{}.time_unit_ms || !settle.empty()) &&
        !is_cuda)
      throw model::InputError("--oracle", "",
                              "--dry-run, --force-device, --time-unit-ms and --settle apply to --oracle cuda only");
    if (!settle.empty()) cuda.settle = *oracle::cuda::settle_from_string(settle);  // CLI::IsMember checked the name
    if (dry_run) return print_plan(in);
    // make_oracle checks the spec and the noise for every kind; cuda then gets its options.
    auto oracle = with_flag("--hypothesis", "--oracle", [&] { return oracle::make_oracle(oracle_spec, noise, seed, &in); });
    if (is_cuda) oracle = oracle::cuda::make_cuda_oracle(cuda);
    // Every repetition's schedule is held until they are compared; refuse before allocating them.
    if (static_cast<int64_t>(repeat) * in.scenario.total_blocks() > kMaxRecordedPlacements)
      throw model::InputError("--repeat", "",
                              fmt::format("{} repetitions of {} blocks exceed the {} (2^25) block placements a run holds",
                                          repeat, in.scenario.total_blocks(), kMaxRecordedPlacements));

    // The output is checked before the oracle runs (a GPU run is not wasted on an unwritable target).
    model::Case out;
    model::check_case_id(in.id, in.file.empty() ? case_path : in.file, "id");
    out.id = fmt::format("{}.{}", in.id, file_safe(oracle->name()));
    if (noise > 0.0) out.id += file_safe(fmt::format(".noise{}-seed{}", noise, seed));  // noisy runs never collide with clean ones
    std::string dir = out_dir;
    if (dir.empty())
      dir = default_output_dir(oracle->name() == "cuda" ? "corpus/hw/" + file_safe(in.scenario.device.name) : "corpus/sim",
                               "--out");
    const std::string path = new_case_files(dir, {out.id}, "--out").front();

    oracle::RunResult r;
    {
      report::Progress progress("run", static_cast<size_t>(repeat > 1 ? repeat : 0));
      oracle->set_progress([&] { progress.tick(); });
      r = oracle->run(in.scenario, repeat);
    }

    // Outcomes with no observation to record: the named status and its reason, nothing written.
    // No device / unsupported are the user's setup or input (exit 2); a timeout, an unconfirmed
    // launch order or a device failure is a failed run (exit 1).
    if (r.status != oracle::RunStatus::Ok && r.status != oracle::RunStatus::Unstable) {
      if (json) {
        auto j = envelope();
        j.update(r.to_json());
        print_json(j);
      } else {
        say("{} on {}: {}: {}\n", oracle->name(), case_path, oracle::to_string(r.status), r.reason);
      }
      const bool setup = r.status == oracle::RunStatus::NoDevice || r.status == oracle::RunStatus::Unsupported;
      return setup ? kExitBadInput : kExitFailed;
    }

    // The observation as a corpus case, the run's metadata in its `run` field.
    out.source = "oracle " + oracle->name();
    out.scenario = r.effective_scenario ? *r.effective_scenario : in.scenario;
    out.observation = r.observation;
    out.notes = fmt::format("tbcheck run of {}: {} over {} repetition(s)", in.id, oracle::to_string(r.status),
                            r.repetitions.size());
    if (!r.unstable_blocks.empty())
      out.notes += fmt::format("; unstable (the recording is the first repetition): {}", fmt::join(r.unstable_blocks, "; "));
    if (r.effective_scenario)
      out.notes += "; the scenario is the one that ran: its TPC partitions are the SMs the green contexts were granted "
                   "(the requested ones are in the run's partitions)";
    out.run = r.metadata;

    model::write_file_atomic(path, model::json_file_text(out.to_json(), 1), /*no_overwrite=*/true);

    if (json) {
      auto j = envelope();
      j.update(r.to_json());
      j["written"] = path;
      print_json(j);
    } else {
      say("{} on {} ({} repetitions): {}\n", oracle->name(), case_path, r.repetitions.size(),
                 oracle::to_string(r.status));
      if (!r.reason.empty()) say("  {}\n", r.reason);
      for (const auto& b : r.unstable_blocks) say("  {}\n", b);
      say("wrote {}\n", path);
    }
    return r.status == oracle::RunStatus::Ok ? kExitOk : kExitFailed;
  }
};

}  // namespace

std::unique_ptr<Command> make_run(CLI::App& app) {
  auto c = std::make_unique<Run>();
  c->app = app.add_subcommand("run", "Run a scenario on an oracle R times and record the observation as a corpus case");
  c->app->add_option("case", c->case_path, "Scenario or corpus-case JSON file (one case, or a collection with --case)")
      ->required();
  c->app->add_option("--case", c->case_id, "The id of the case to take from a collection file (e.g. an ntbs recording)");
  c->app->add_option("--oracle", c->oracle_spec, "Oracle: " + oracle::oracle_kinds())->required();
  c->app->add_option("--noise", c->noise, "sim only: fraction of runs perturbed (swap two blocks' SMs, delay a block)")
      ->check(number_in(0.0, 1.0));
  c->app->add_option("--repeat", c->repeat,
                     fmt::format("Repetitions, 1 to {}; disagreements are reported as unstable (default 3)", kMaxRepeat))
      ->check(integer_in(1, kMaxRepeat));
  c->app->add_option("--seed", c->seed, "sim only: seed of the noise (default 1)")
      ->check(integer_in(0, std::numeric_limits<unsigned>::max()));
  c->app->add_option("--out", c->out_dir,
                     "Directory for the written case, created when missing (default, from the repository root only: corpus/sim, "
                     "corpus/hw/<device> for cuda)");
  c->app->add_option("--time-unit-ms", c->cuda.time_unit_ms,
                     "cuda only: milliseconds of one model time unit of block duration (default 20)")
      ->check(number_above(0.0, 1e6));
  c->app->add_flag("--force-device", c->cuda.force_device,
                   "cuda only: run although the GPU differs from the scenario's device (the differences are recorded)");
  c->app->add_option("--settle", c->settle,
                     "cuda only: where each repetition starts from: context (a fresh CUDA context each, so no "
                     "repetition inherits where the previous one left the scheduler; default) or none")
      ->check(CLI::IsMember({"context", "none"}));
  c->app->add_flag("--dry-run", c->dry_run,
                   "cuda only: print the launch plan (variant, threads, smem, stream, duration, order) without a GPU");
  c->app->add_flag("--json", c->json, "Machine-readable output");
  return c;
}

}  // namespace tbcheck::cli
