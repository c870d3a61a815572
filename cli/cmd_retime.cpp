// `tbcheck retime`: CUDA-oracle recordings in a finer time unit from the GPU timer's own times, one case
// file each (logic in oracle/retime).
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iterator>
#include <optional>

#include <fmt/format.h>

#include "commands.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/oracle/retime.hpp"

namespace tbcheck::cli {
namespace {

struct Retime : Command {
  std::vector<std::string> inputs;
  std::string out_dir;
  int64_t unit_ns = 0;
  std::string repetition = "1";
  bool json = false;

  // --repetition N as a 0-based index; none for "all".
  std::optional<size_t> parsed_repetition() const {
    if (repetition == "all") return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const long long n = std::strtoll(repetition.c_str(), &end, 10);
    if (repetition.empty() || *end != '\0' || errno != 0 || n < 1 || n > 1'000'000)
      throw model::InputError("--repetition", "", fmt::format("'{}' is neither a repetition number (1, 2, ...) nor 'all'",
                                                              repetition));
    return static_cast<size_t>(n - 1);
  }

  int run() override {
    const std::optional<size_t> chosen = parsed_repetition();  // a bad value is refused before any work
    model::check_output_dir(out_dir, "--out");
    std::vector<model::Case> retimed;
    std::vector<std::pair<std::string, std::string>> skipped;  // case, reason
    for (const auto& in : inputs)
      for (const auto& c : model::load_cases(in)) {
        // A folder of recordings holds runs that cannot be retimed (older runs, other oracles, fewer
        // repetitions than asked): listed, not fatal. A recording that is malformed stops the command.
        const std::string name = c.file.empty() ? c.id : c.file + " (" + c.id + ")";
        const size_t kept = oracle::kept_repetitions(c);
        if (auto refusal = oracle::retime_refusal(c)) {
          skipped.emplace_back(name, refusal->what());
        } else if (chosen && *chosen >= kept) {
          skipped.emplace_back(name, fmt::format("--repetition: the run keeps the ns times of {} repetition(s), not "
                                                 "of repetition {}",
                                                 kept, *chosen + 1));
        } else if (chosen) {
          retimed.push_back(oracle::retime_recording(c, unit_ns, *chosen));
        } else {
          auto every = oracle::retime_every_repetition(c, unit_ns);
          std::move(every.begin(), every.end(), std::back_inserter(retimed));
        }
      }
    if (retimed.empty())
      throw model::InputError(inputs.front(), "",
                              skipped.empty() ? "no cases" : fmt::format("no case could be retimed; first: {}", skipped.front().second));
    std::vector<std::string> ids;
    for (const auto& c : retimed) ids.push_back(c.id);
    const std::vector<std::string> paths = new_case_files(out_dir, ids, "--out");
    for (size_t i = 0; i < retimed.size(); ++i)
      model::write_file_atomic(paths[i], model::json_file_text(retimed[i].to_json(), 1), /*no_overwrite=*/true);
    if (json) {
      auto j = envelope();
      j["unit_ns"] = unit_ns;
      j["written"] = nlohmann::json::array();
      for (size_t i = 0; i < retimed.size(); ++i)
        j["written"].push_back({{"id", retimed[i].id},
                                {"file", paths[i]},
                                {"tick", retimed[i].observation->resolution->tick}});
      j["skipped"] = nlohmann::json::array();
      for (const auto& [c, why] : skipped) j["skipped"].push_back({{"case", c}, {"reason", why}});
      print_json(j);
    } else {
      for (size_t i = 0; i < retimed.size(); ++i)
        say("{} -> {} (tick {} x {} ns)\n", retimed[i].id, paths[i], retimed[i].observation->resolution->tick,
                   unit_ns);
      for (const auto& [c, why] : skipped) say("skipped {}: {}\n", c, why);
    }
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> make_retime(CLI::App& app) {
  auto c = std::make_unique<Retime>();
  c->app = app.add_subcommand("retime",
                              "Write CUDA-oracle recordings in a finer time unit from the GPU timer's own ns times, so "
                              "that retirements one model unit holds keep the order the GPU saw (for --timing trace)");
  c->app->add_option("cases", c->inputs, "Recordings `tbcheck run --oracle cuda` wrote (files or folders)")->required();
  c->app->add_option("--unit-ns", c->unit_ns, "The new time unit in ns; it must divide the run's unit (1000: microseconds)")
      ->required()
      ->check(integer_in(1, 1'000'000'000'000));  // the coarsest unit a run takes (--time-unit-ms 10^6)
  c->app->add_option("--repetition", c->repetition,
                     "Which repetition's SMs and times (1, the default, is the one the recording's observation is; "
                     "'all': one case per repetition the run kept, <id>-<unit>ns-rep<n> after the first)");
  c->app->add_option("--out", c->out_dir, "Directory for <id>-<unit>ns.json (created when missing)")->required();
  c->app->add_flag("--json", c->json, "Machine-readable output");
  return c;
}

}  // namespace tbcheck::cli
