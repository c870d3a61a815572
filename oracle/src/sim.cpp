// The simulated device `sim:<hypothesis>`: a hypothesis plays the GPU; noise perturbs a fraction of
// runs (swap the SMs of two blocks, or delay one block by one instant), deterministically given the seed.
#include <cstdint>

#include <fmt/format.h>

#include "kinds.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/hypothesis_list.hpp"
#include "tbcheck/model/simulator.hpp"

namespace tbcheck::oracle::detail {
namespace {

// splitmix64: portable and fully specified, so a seed means the same runs on every platform.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
};

struct BlockRef {
  size_t kernel, block;
};

// Perturbs one run in place and says how; a swap needs two blocks on different SMs, else a delay.
std::string perturb(model::Schedule& sch, Rng& rng) {
  std::vector<BlockRef> all;
  for (size_t k = 0; k < sch.kernels.size(); ++k)
    for (size_t b = 0; b < sch.kernels[k].blocks.size(); ++b) all.push_back({k, b});
  if (all.empty()) return "nothing to perturb";
  auto at = [&](BlockRef r) -> model::BlockPlacement& { return sch.kernels[r.kernel].blocks[r.block]; };
  auto label = [&](BlockRef r) { return fmt::format("{} block {}", sch.kernels[r.kernel].name, r.block); };
  const bool want_swap = rng.below(2) == 0;
  if (want_swap) {
    BlockRef a = all[rng.below(all.size())];
    std::vector<BlockRef> others;
    for (const auto& r : all)
      if (at(r).sm != at(a).sm) others.push_back(r);
    if (!others.empty()) {
      BlockRef b = others[rng.below(others.size())];
      std::swap(at(a).sm, at(b).sm);
      return fmt::format("swapped the SMs of {} and {}", label(a), label(b));
    }
  }
  BlockRef a = all[rng.below(all.size())];
  at(a).start += 1;
  at(a).end += 1;
  return fmt::format("delayed {} by one instant", label(a));
}

class SimOracle : public Oracle {
 public:
  SimOracle(model::Hypothesis h, double noise, unsigned seed) : h_(std::move(h)), noise_(noise), seed_(seed) {}
  std::string name() const override { return "sim:" + h_.name; }

  RunResult run(const model::Scenario& s, int repetitions) override {
    if (repetitions < 1) throw model::InputError("--repeat", "", "at least one repetition is needed");
    // A scenario the hypothesis cannot run (fermi off Fermi, an unmodelled control) is the oracle's
    // "unsupported", as the cuda oracle says of a case it cannot launch: learn skips such a case and counts
    // it, run reports it naming the oracle the user gave.
    model::FeasibilityCheck why;
    std::optional<model::Schedule> simulated = model::try_simulate(s, h_, &why);
    if (!simulated) {
      RunResult r;
      r.status = RunStatus::Unsupported;
      r.reason = fmt::format("{} cannot run this scenario ({}{}{})", name(), why.field, why.field.empty() ? "" : ": ", why.reason);
      return r;
    }
    model::Schedule base = std::move(*simulated);
    std::vector<model::Schedule> reps;
    nlohmann::json perturbations = nlohmann::json::array();
    for (int i = 0; i < repetitions; ++i) {
      // One stream per repetition, so repetition i is the same whatever R is.
      Rng rng{static_cast<uint64_t>(seed_) * 0x100000001b3ULL + static_cast<uint64_t>(i) + 1};
      model::Schedule sch = base;
      sch.hypothesis = name();
      if (rng.unit() < noise_) perturbations.push_back({{"repetition", i}, {"perturbation", perturb(sch, rng)}});
      reps.push_back(std::move(sch));
      repetition_done();
    }
    nlohmann::json meta = base_metadata(name(), repetitions);
    meta["hypothesis"] = h_.name;
    meta["noise"] = noise_;
    meta["seed"] = seed_;
    meta["perturbations"] = perturbations;
    return combine_repetitions(s, std::move(reps), model::ObservationKind::Synthetic, std::move(meta));
  }

 private:
  model::Hypothesis h_;
  double noise_;
  unsigned seed_;
};

}  // namespace

std::unique_ptr<Oracle> make_sim(const std::string& arg, double noise, unsigned seed) {
  std::vector<model::Hypothesis> hs = model::resolve_hypotheses(arg, "--oracle");
  if (hs.size() != 1)
    throw model::InputError("--oracle", "", fmt::format("sim:{} names {} hypotheses; the device is played by exactly one",
                                                        arg, hs.size()));
  return std::make_unique<SimOracle>(std::move(hs[0]), noise, seed);
}

}  // namespace tbcheck::oracle::detail
