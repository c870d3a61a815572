// Conformance of the cluster encoding (cluster_pick.cpp) with the simulator: random clustered scenarios on
// small CC 9.0 devices with random GPC maps, each checked block by block by check_one.
#include <random>

#include <fmt/format.h>

#include "tbcheck/model/builtin.hpp"
#include "tbcheck/model/cluster.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/testing/conformance.hpp"

namespace tbcheck::smt {

model::Scenario random_cluster_scenario(unsigned seed, const model::Device& base, const model::Hypothesis& h) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int attempt = 0;; ++attempt) {
    model::Scenario s;
    s.device = base;
    s.device_builtin = false;
    const int tpcs = pick(2, 4);
    s.device.name = fmt::format("{}-{}tpc", base.name, tpcs);
    s.device.sms_per_tpc = 2;
    s.device.sms = 2 * tpcs;
    // GPCs of consecutive TPCs, of random (often unequal) sizes: the GPC choices differ only then.
    s.device.gpc_of_tpc.clear();
    int gpc = 0;
    for (int t = 0; t < tpcs; ++t) {
      if (t > 0 && gpc < 2 && pick(0, 1) == 0) ++gpc;
      s.device.gpc_of_tpc.push_back(gpc);
    }
    s.device.gpc_source = "random (conformance test)";
    const int kernels = pick(1, 3);
    // The alg1 family's per-PB, contiguous and TPC-configuration terms cost the solver tens of times what SM
    // pools do per block: half the blocks keep its scenarios as quick.
    const bool pooled = !h.pb_warps() && h.smem == model::Smem::Counted && h.smem_config == model::SmemConfig::None;
    int budget = pooled ? 12 : 6;
    for (int k = 0; k < kernels && budget > 0; ++k) {
      model::Kernel kr;
      kr.name = fmt::format("k{}", k + 1);
      // Residency bound by warps or by shared memory; warp counts off multiples of 4 move the alg1 family's PB
      // pointers unevenly (Mechanism 2.1), and 8 KB gives a TPC configuration below the others' (Mechanism 3).
      static const int kWarps[] = {4, 8, 16, 24, 32, 3, 6};
      static const int kSmemKb[] = {0, 0, 0, 40, 70, 110, 200, 8};
      kr.threads = model::kThreadsPerWarp * kWarps[pick(0, 6)];
      kr.smem = 1024 * kSmemKb[pick(0, 7)];
      kr.regs = pick(0, 1) ? 32 : 64;
      kr.duration = pick(1, 3);
      kr.local = pick(0, 3) == 0 ? pick(0, 2) * 16 : 0;
      if (pick(0, 3) > 0) {
        if (pick(0, 2) == 0) {  // 2-D grid of 2-D clusters
          const int cx = pick(1, 2), cy = pick(1, 2);
          const int nx = pick(1, 2), ny = pick(1, 2);
          kr.grid = std::make_pair(cx * nx, cy * ny);
          kr.blocks = cx * nx * cy * ny;
          kr.cluster = std::array<int, 3>{cx, cy, 1};
        } else {
          const int c = pick(1, 4);
          kr.blocks = c * pick(1, 3);
          kr.cluster = std::array<int, 3>{c, 1, 1};
        }
      } else {
        kr.blocks = pick(1, 4);
      }
      if (kr.blocks > budget) continue;
      budget -= kr.blocks;
      s.kernels.push_back(kr);
    }
    if (!s.kernels.empty() && model::check_feasibility(s, h).runs()) return s;
    if (attempt > 1000) throw std::logic_error("random_cluster_scenario found no feasible scenario");
  }
}

ConformanceReport run_cluster_conformance(const model::Hypothesis& h, int scenarios, unsigned seed, unsigned timeout_ms) {
  ConformanceReport r;
  const model::Device& base = model::builtin_device("h100-sxm-assumed-gpcs", "", "");
  if (std::string why = model::cluster_unsupported_options(h); !why.empty()) {
    r.unsupported = true;
    r.unsupported_reason = fmt::format("clusters under {}: {}", h.name, why);
    return r;
  }
  return check_scenarios(h, scenarios, seed, timeout_ms,
                         [&](unsigned sd) { return random_cluster_scenario(sd, base, h); });
}

}  // namespace tbcheck::smt
