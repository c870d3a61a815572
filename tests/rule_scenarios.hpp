// Random scenarios for the rule tests (test_rule_pick.cpp, test_learn_rules.cpp): larger devices than the
// conformance suites' 2-TPC ones, so that rooms, TPCs and GPCs differ and a ranking key can decide.
#pragma once
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/scenario.hpp"

namespace tbcheck::test {

// rtx3090's per-SM limits on 16 SMs (8 TPCs) with a GPC map.
inline model::Device device_with_map(std::vector<int> gpc_of_tpc) {
  model::Device d = model::builtin_device("rtx3090", "test", "device");
  d.name = "rtx3090-16";
  d.sms = 16;
  d.gpc_of_tpc = std::move(gpc_of_tpc);
  d.gpc_source = "test";
  return d;
}

// 1-5 kernels of up to 3 x SMs + 8 blocks (so that paired issue leads pairs and rooms differ), mixed resources,
// some in streams, some confined to a few TPCs, some launched later; only scenarios every engine runs.
inline model::Scenario random_scenario(unsigned seed, const model::Device& d) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1)); };
  model::Scenario s;
  s.device = d;
  const int nk = pick(1, 5);
  for (int i = 0; i < nk; ++i) {
    model::Kernel k;
    k.name = fmt::format("k{}", i);
    k.blocks = pick(1, 3 * d.sms + 8);
    k.threads = 32 * pick(1, 16);
    k.regs = std::vector<int>{16, 32, 40, 64}[static_cast<size_t>(pick(0, 3))];
    k.smem = pick(0, 2) == 0 ? 0 : pick(0, 48 * 1024);
    k.duration = pick(1, 6);
    if (pick(0, 2) == 0) k.stream = pick(0, 1);
    if (pick(0, 4) == 0) k.tpcs = {pick(0, d.tpcs() / 2 - 1), pick(d.tpcs() / 2, d.tpcs() - 1)};
    if (pick(0, 5) == 0) k.release = pick(1, 8);
    s.kernels.push_back(std::move(k));
  }
  return s;
}

}  // namespace tbcheck::test
