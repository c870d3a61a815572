// The replay oracle: returns the recorded schedule of a corpus case, as if the device had run it.
// Deterministic by nature: every repetition is the recording; the observation is the case's own (block
// ends, launch times and resolution included, so a trace-timed judgement of it sees what was recorded).
#include <fmt/format.h>

#include "kinds.hpp"
#include "tbcheck/model/error.hpp"

namespace tbcheck::oracle::detail {
namespace {

class ReplayOracle : public Oracle {
 public:
  explicit ReplayOracle(model::Case c) : c_(std::move(c)) {}
  std::string name() const override { return "replay"; }

  RunResult run(const model::Scenario& s, int repetitions) override {
    if (repetitions < 1) throw model::InputError("--repeat", "", "at least one repetition is needed");
    const model::Observation& o = *c_.observation;
    model::Schedule sch;
    sch.hypothesis = "replay";
    sch.device = s.device.name;
    sch.sms = s.device.sms;
    for (const auto& k : s.kernels) {
      const int ci = c_.scenario.kernel_index(k.name);
      if (ci < 0 || c_.scenario.kernels[ci].blocks != k.blocks)
        throw model::InputError(c_.file, "kernels", fmt::format("the recording has no kernel {} with {} blocks to replay",
                                                                k.name, k.blocks));
      model::KernelSchedule ks;
      ks.name = k.name;
      auto sms = o.sm_of_block.find(k.name);
      auto starts = o.start_of_block.find(k.name);
      auto ends = o.end_of_block.find(k.name);  // recorded ends where the recording has them
      for (int b = 0; b < k.blocks; ++b) {
        model::BlockPlacement p;
        if (sms != o.sm_of_block.end()) p.sm = sms->second[b];
        if (starts != o.start_of_block.end()) p.start = starts->second[b];
        p.end = ends != o.end_of_block.end() ? ends->second[b] : p.start + k.duration;
        ks.blocks.push_back(p);
      }
      sch.kernels.push_back(std::move(ks));
    }
    RunResult r;
    r.status = RunStatus::Ok;
    r.repetitions.assign(static_cast<size_t>(repetitions), sch);
    r.observation = o;
    r.metadata = base_metadata(name(), repetitions);
    r.metadata["replayed_file"] = c_.file;
    r.metadata["replayed_case"] = c_.id;
    r.metadata["recorded_kind"] = model::to_string(o.kind);
    return r;
  }

 private:
  model::Case c_;
};

}  // namespace

std::unique_ptr<Oracle> make_replay(const model::Case& c) {
  if (!c.observation || !c.observation->has_recording())
    throw model::InputError(c.file, "observation",
                            fmt::format("case {} has no recording (sm_of_block / start_of_block) to replay", c.id));
  return std::make_unique<ReplayOracle>(c);
}

}  // namespace tbcheck::oracle::detail
