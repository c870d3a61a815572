// The oracle interface: status names, the agreement of repetitions (instability is reported per
// block, never averaged), the JSON form of a run, and the explicit table of oracle kinds.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kinds.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/text.hpp"

namespace tbcheck::oracle {

Oracle::~Oracle() = default;

std::string_view to_string(RunStatus s) {
  switch (s) {
    case RunStatus::Ok: return "ok";
    case RunStatus::Unstable: return "unstable";
    case RunStatus::NoDevice: return "no-device";
    case RunStatus::Unsupported: return "unsupported";
    case RunStatus::Timeout: return "timeout";
    case RunStatus::OrderUnconfirmed: return "order-unconfirmed";
    case RunStatus::DeviceError: return "device-error";
  }
  return "?";
}

nlohmann::json RunResult::to_json() const {
  nlohmann::json j = {{"status", to_string(status)},
                      {"reason", reason},
                      {"repetitions", repetitions.size()},
                      {"unstable_blocks", unstable_blocks},
                      {"metadata", metadata}};
  if (observation.has_recording()) j["observation"] = observation.to_json();
  if (effective_scenario) j["effective_scenario"] = effective_scenario->to_json();
  return j;
}

namespace detail {

nlohmann::json base_metadata(const std::string& oracle_name, int repetitions) {
  return {{"oracle", oracle_name}, {"repetitions", repetitions}, {"tool_version", TBCHECK_ORACLE_TOOL_VERSION}};
}


}  // namespace detail

model::Observation observation_of(const model::Schedule& sch, model::ObservationKind kind) {
  model::Observation o;
  o.kind = kind;
  for (const auto& k : sch.kernels) {
    auto& sms = o.sm_of_block[k.name];
    auto& starts = o.start_of_block[k.name];
    auto& ends = o.end_of_block[k.name];
    for (const auto& b : k.blocks) {
      sms.push_back(b.sm);
      starts.push_back(static_cast<int>(b.start));
      // A block shorter than a unit still ends after it starts (a recorded end is read back that way).
      ends.push_back(static_cast<int>(std::max(b.end, b.start + 1)));
    }
  }
  return o;
}

RunResult combine_repetitions(const model::Scenario& s, std::vector<model::Schedule> repetitions,
                              model::ObservationKind kind, nlohmann::json metadata) {
  if (repetitions.empty()) throw model::InputError("oracle", "repetitions", "at least one repetition is needed");
  RunResult r;
  r.metadata = std::move(metadata);
  for (const auto& rep : repetitions)
    if (rep.kernels.size() != s.kernels.size())
      throw model::InputError("oracle", "repetitions", "a repetition does not have the scenario's kernels");
  const model::Schedule& first = repetitions[0];
  for (size_t k = 0; k < first.kernels.size(); ++k) {
    const auto& name = first.kernels[k].name;
    for (size_t b = 0; b < first.kernels[k].blocks.size(); ++b) {
      std::vector<int> sms;
      std::vector<int64_t> starts;
      for (const auto& rep : repetitions) {
        if (rep.kernels[k].blocks.size() != first.kernels[k].blocks.size())
          throw model::InputError("oracle", "repetitions", fmt::format("kernel {} has a different block count", name));
        sms.push_back(rep.kernels[k].blocks[b].sm);
        starts.push_back(rep.kernels[k].blocks[b].start);
      }
      bool sm_differs = std::any_of(sms.begin(), sms.end(), [&](int v) { return v != sms[0]; });
      bool start_differs = std::any_of(starts.begin(), starts.end(), [&](int64_t v) { return v != starts[0]; });
      if (sm_differs)
        r.unstable_blocks.push_back(fmt::format("{} block {}: SMs {} across repetitions", name, b, fmt::join(sms, ", ")));
      if (start_differs)
        r.unstable_blocks.push_back(
            fmt::format("{} block {}: starts {} across repetitions", name, b, fmt::join(starts, ", ")));
    }
  }
  r.observation = observation_of(first, kind);
  if (!r.unstable_blocks.empty()) {
    r.status = RunStatus::Unstable;
    r.reason = fmt::format("{} repetitions disagree on {} block placement(s); the observation is the first repetition",
                           repetitions.size(), r.unstable_blocks.size());
  }
  r.repetitions = std::move(repetitions);
  return r;
}

namespace {

// The explicit table of kinds. `prefix` matches the spec exactly, or as "prefix:<argument>".
struct Kind {
  std::string_view prefix;
  bool takes_argument;
  std::string_view shown;
};
constexpr Kind kKinds[] = {{"replay", false, "replay"}, {"sim", true, "sim:<hypothesis name or file>"}, {"cuda", false, "cuda"}};

}  // namespace

std::string oracle_kinds() {
  std::vector<std::string> v;
  for (const auto& k : kKinds) v.emplace_back(k.shown);
  return fmt::format("{}", fmt::join(v, ", "));
}

std::unique_ptr<Oracle> make_oracle(const std::string& spec, double noise, unsigned seed, const model::Case* replay_case) {
  if (!(noise >= 0.0 && noise <= 1.0))
    throw model::InputError("--noise", "", fmt::format("{} is not a fraction of runs in [0, 1]", noise));
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : spec.substr(colon + 1);
  for (const auto& k : kKinds) {
    if (kind != k.prefix) continue;
    if (k.takes_argument && arg.empty())
      throw model::InputError("--oracle", "", fmt::format("'{}' needs an argument: {}", spec, k.shown));
    if (!k.takes_argument && colon != std::string::npos)
      throw model::InputError("--oracle", "", fmt::format("'{}' takes no argument: {}", spec, k.shown));
    if (kind != "sim" && noise > 0.0)
      throw model::InputError("--noise", "", fmt::format("noise is only injected by the sim oracle, not by '{}'", spec));
    if (kind == "sim") return detail::make_sim(arg, noise, seed);
    if (kind == "cuda") return detail::make_cuda();
    if (!replay_case) throw model::InputError("--oracle", "", "replay needs a corpus case to replay");
    return detail::make_replay(*replay_case);
  }
  throw model::InputError("--oracle", "", fmt::format("unknown oracle '{}'; valid kinds: {}", spec, oracle_kinds()));
}

}  // namespace tbcheck::oracle
