// The oracle interface: run a scenario R times on something that schedules blocks (a GPU, a
// recording, a hypothesis playing the device) and return the schedules, their agreement and metadata.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/schedule.hpp"

namespace tbcheck::oracle {

// Ok: every repetition agreed. Unstable: repetitions disagree on some block (listed, never averaged).
// NoDevice: no device to run on (e.g. built without CUDA). Unsupported: the oracle cannot realize the scenario.
// Timeout: the watchdog ended a run that overran its bound. OrderUnconfirmed: the launch order could
// not be confirmed from the timestamps after the retries. DeviceError: the device failed mid-run
// (the reason names the CUDA call, file and line).
// Most repetitions of one run (`run --repeat`, campaign plans): they are compared block by block, so all
// are held at once.
inline constexpr int kMaxRepetitions = 10000;

enum class RunStatus { Ok, Unstable, NoDevice, Unsupported, Timeout, OrderUnconfirmed, DeviceError };
// "ok", "unstable", "no-device", "unsupported", "timeout", "order-unconfirmed", "device-error"
std::string_view to_string(RunStatus);

struct RunResult {
  RunStatus status = RunStatus::Ok;
  std::string reason;                          // why, for NoDevice / Unsupported / Unstable
  std::vector<model::Schedule> repetitions;    // one per repetition, in run order
  // Kind hardware for cuda, the recording's kind for replay, synthetic for sim; sm_of_block and
  // start_of_block from the agreed schedule, or from the first repetition when unstable.
  model::Observation observation;
  std::vector<std::string> unstable_blocks;    // "k1 block 3: SMs 2, 4 across repetitions"
  nlohmann::json metadata = nlohmann::json::object();  // oracle, repetitions, noise, seed, tool_version, ...
  // The scenario as it ran, when the oracle could not run it as written but measured what ran
  // instead (a green context granted other SMs than the kernel's TPCs: docs/oracle.md); the
  // recorded case carries it, so predictions are made for what the device really did.
  std::optional<model::Scenario> effective_scenario;
  nlohmann::json to_json() const;              // status, reason, repetitions (count), unstable_blocks, observation, metadata, effective_scenario
};

class Oracle {
 public:
  virtual ~Oracle();
  virtual std::string name() const = 0;
  virtual RunResult run(const model::Scenario& s, int repetitions) = 0;
  // Called once per finished repetition (the CLI draws progress on a terminal with it).
  void set_progress(std::function<void()> tick) { progress_ = std::move(tick); }

 protected:
  void repetition_done() const {
    if (progress_) progress_();
  }

 private:
  std::function<void()> progress_;
};

// The recording of one schedule (sm_of_block, start_of_block per kernel) as an observation of `kind`.
model::Observation observation_of(const model::Schedule& sch, model::ObservationKind kind);

// Compares repetitions block by block (SM and start): Ok with the agreed observation, or Unstable
// with every disagreeing block named. `repetitions` must be non-empty and all of `s`'s shape.
RunResult combine_repetitions(const model::Scenario& s, std::vector<model::Schedule> repetitions,
                              model::ObservationKind kind, nlohmann::json metadata);

// The oracle kinds, in one explicit table: "replay" (needs `replay_case` with a recording),
// "sim:<hypothesis name or file>" (noise p in [0,1] perturbs that fraction of runs; deterministic
// given `seed`), "cuda". Unknown kinds and bad arguments are InputErrors listing the valid kinds.
std::unique_ptr<Oracle> make_oracle(const std::string& spec, double noise, unsigned seed,
                                    const model::Case* replay_case);

// The kinds as shown in errors and --help: "replay, sim:<hypothesis>, cuda".
std::string oracle_kinds();

}  // namespace tbcheck::oracle
