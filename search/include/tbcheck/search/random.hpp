// `random`: the kernel generator of seed 000 Section III-A, the baseline that synthesis must beat.
// Random kernels within the device limits are appended until the device cannot hold the next one.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/observation.hpp"

namespace tbcheck::search {

// A portable, fully specified random source: std::mt19937_64's output sequence is fixed by the
// standard, but std::uniform_int_distribution's mapping is not (libstdc++ and libc++ differ), so
// integers are drawn here by rejection sampling on the raw 64-bit output. A seed gives the same
// files with every standard library.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  // Uniform in [lo, hi] (lo <= hi), unbiased.
  int64_t uniform(int64_t lo, int64_t hi);
  // True with probability num/den.
  bool chance(int64_t num, int64_t den) { return uniform(0, den - 1) < num; }

 private:
  std::mt19937_64 engine_;
};

// The register counts the probe kernel is compiled for (seed 000 III-B: 24, 32, ..., 248, 255),
// limited to the device's maximum per thread.
std::vector<int> realizable_regs(const model::Device& d);

struct RandomOptions {
  int min_blocks = 1;
  int max_blocks = 0;        // 0: the device's SM count (Table II's kernels have 1 to 82 blocks on 82 SMs)
  int max_duration = 10;     // durations uniform in 1..max_duration time units
  int max_kernels = 32;      // a cap that the fill rule reaches only on pathological devices
  // The hypothesis that plays the device when deciding whether the next kernel still fits
  // (the paper's final predictor, which it reports agrees with the RTX 3090).
  std::string judge = "alg1";
  // Every generated kernel must fit an empty SM under each of these (so every case runs under each).
  std::vector<model::Hypothesis> must_run;
};

enum class FillEnd { DeviceFull, KernelCap };
std::string_view to_string(FillEnd);

struct RandomCase {
  model::Case c;
  FillEnd end = FillEnd::DeviceFull;
};

// Case `index` of the stream for `seed`: its own generator is seeded from (seed, index) by
// splitmix64, so case i is the same whether 10 or 1000 cases are asked for. The case has no
// observation (it is input for `run`, `predict`, `validate` of expectations, or `minimize`).
RandomCase random_case(const model::Device& d, uint64_t seed, int index, const RandomOptions& o);

// Deterministic file stem: random-<device>-s<seed>-<index padded to the width of count - 1>.
std::string random_case_id(const model::Device& d, uint64_t seed, int index, int count);

}  // namespace tbcheck::search
