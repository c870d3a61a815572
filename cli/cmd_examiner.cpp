// `tbcheck import-examiner` / `export-examiner`: cuda_scheduling_examiner result logs to corpus
// cases with hardware observations, and a case to a multikernel-plugin config (logic in oracle/).
#include <filesystem>

#include <fmt/format.h>

#include "commands.hpp"
#include "tbcheck/model/device_spec.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/model/one_case.hpp"
#include "tbcheck/oracle/examiner.hpp"

namespace tbcheck::cli {
namespace {

struct ImportExaminer : Command {
  std::vector<std::string> files, configs;
  std::string device, out_dir;
  double time_unit_ms = 20.0;
  int regs = 32;
  bool json = false;

  int run() override {
    oracle::examiner::ImportOptions o;
    if (device.empty())
      throw model::InputError("--device", "", "the examiner logs do not name the GPU; give --device <built-in name or "
                                              "device JSON file>");
    o.device = model::device_from_spec(device, "--device");
    o.device_builtin = model::is_builtin(o.device);
    o.time_unit_ms = time_unit_ms;
    o.regs = regs;
    if (files.empty() == configs.empty())
      throw model::InputError("import-examiner", configs.empty() ? "logs" : "--config",
                              "give either result logs or --config files, not both and not neither");
    std::vector<model::Case> cases;
    if (!configs.empty()) {
      for (const auto& f : configs) cases.push_back(oracle::examiner::import_config(f, o));
      if (out_dir.empty())
        throw model::InputError("--out", "", "configs are scenarios, not recordings: give --out <directory>");
    } else {
      cases = oracle::examiner::import_logs(files, o);
    }

    const std::string dir = out_dir.empty() ? default_output_dir("corpus/hw/" + o.device.name, "--out") : out_dir;
    std::vector<std::string> ids;
    for (const auto& c : cases) ids.push_back(c.id);
    const std::vector<std::string> paths = new_case_files(dir, ids, "--out");
    std::vector<std::string> written;
    for (size_t i = 0; i < cases.size(); ++i) {
      model::write_file_atomic(paths[i], model::json_file_text(cases[i].to_json(), 1), /*no_overwrite=*/true);
      written.push_back(paths[i]);
    }
    if (json) {
      auto j = envelope();
      j["written"] = written;
      j["cases"] = nlohmann::json::array();
      for (const auto& c : cases) j["cases"].push_back(c.to_json());
      print_json(j);
    } else {
      for (size_t i = 0; i < cases.size(); ++i)
        say("{}: {} kernels, {} blocks -> {}\n", cases[i].id, cases[i].scenario.kernels.size(),
                   cases[i].scenario.total_blocks(), written[i]);
    }
    return kExitOk;
  }
};

struct ExportExaminer : Command {
  std::string case_path, case_id, out_path;
  bool force = false;
  oracle::examiner::ExportOptions o;

  int run() override {
    if (!out_path.empty()) model::check_output_file(out_path, force, "--out");
    model::check_json_text(o.plugin, "--plugin", "the plugin path");
    const nlohmann::json cfg = oracle::examiner::export_config(model::load_one_case(case_path, case_id, "export-examiner"), o);
    if (out_path.empty()) {
      fmt::print("{}", model::json_file_text(cfg, 2));
    } else {
      model::write_file_atomic(out_path, model::json_file_text(cfg, 2), /*no_overwrite=*/!force);
      fmt::print(stderr, "wrote {}\n", out_path);
    }
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> make_import_examiner(CLI::App& app) {
  auto c = std::make_unique<ImportExaminer>();
  c->app = app.add_subcommand("import-examiner",
                              "Read cuda_scheduling_examiner result logs (block_smids, block_times) or configs into corpus cases");
  c->app->add_option("logs", c->files, "Result logs of one examiner run (one per benchmark/stream)");
  c->app->add_option("--config", c->configs,
                     "Examiner config files to import as scenarios (priorities, release times, SM masks) instead of logs");
  c->app->add_option("--device", c->device, "The GPU the logs come from: a built-in device name or a device JSON file");
  c->app->add_option("--out", c->out_dir, "Directory for the cases (default, from the repository root only: corpus/hw/<device>)");
  c->app->add_option("--time-unit-ms", c->time_unit_ms, "Milliseconds of one model time unit (default 20)")
      ->check(number_above(0.0, 1e6));
  c->app->add_option("--regs", c->regs, "Registers per thread to record (the logs have none; default 32)")
      ->check(integer_in(1, 255));
  c->app->add_flag("--json", c->json, "Machine-readable output");
  return c;
}

std::unique_ptr<Command> make_export_examiner(CLI::App& app) {
  auto c = std::make_unique<ExportExaminer>();
  c->app = app.add_subcommand("export-examiner",
                              "Write a cuda_scheduling_examiner config (multikernel plugin) that runs a case's scenario");
  c->app->add_option("case", c->case_path, "Scenario or corpus-case JSON file (one case, or a collection with --case)")
      ->required();
  c->app->add_option("--case", c->case_id, "The id of the case to take from a collection file (e.g. an ntbs recording)");
  c->app->add_option("--out", c->out_path, "Config file to write (default: standard output)");
  c->app->add_flag("--force", c->force, "Replace an existing --out file (never one under corpus/hw/)");
  c->app->add_option("--time-unit-ms", c->o.time_unit_ms, "Milliseconds of one model time unit (default 20)")
      ->check(number_above(0.0, 1e6));
  c->app->add_option("--iterations", c->o.iterations, "max_iterations of the config (default 1)")
      ->check(integer_in(1, 1'000'000));
  c->app->add_option("--plugin", c->o.plugin, "Path of the multikernel plugin (default ./bin/multikernel.so)");
  return c;
}

}  // namespace tbcheck::cli
