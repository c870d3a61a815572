// The additivity check behind the cluster room rule (cluster_additivity.hpp): random walks of commits and
// retirements through GpuState, comparing every SM's capacity for the committed kernel before and after.
#include "tbcheck/testing/cluster_additivity.hpp"

#include <algorithm>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/resources.hpp"
#include "tbcheck/model/scenario.hpp"

namespace tbcheck::model {

namespace {

// A kernel with random needs that fits an empty SM of d under h; most draws are small, so that several
// kernels share an SM and the per-PB pointers, holes and TPC configurations take many values.
Kernel random_kernel(std::mt19937_64& rng, const Device& d, const Hypothesis& h, int id) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, std::max(lo, hi))(rng); };
  const int max_warps = std::max(1, d.max_threads_per_block / kThreadsPerWarp);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    Kernel k;
    k.name = fmt::format("k{}", id);
    const int w = pick(0, 3) == 0 ? pick(1, max_warps) : pick(1, std::min(max_warps, 12));
    k.threads = w * kThreadsPerWarp - (pick(0, 3) == 0 ? pick(0, kThreadsPerWarp - 1) : 0);
    static const int kRegs[] = {0, 16, 24, 32, 40, 64, 96, 128, 168, 255};
    k.regs = std::min(kRegs[pick(0, 9)], std::max(1, d.max_regs_per_thread));
    const int smax = std::max(0, d.max_smem_per_block);
    switch (pick(0, 3)) {
      case 0: k.smem = 0; break;
      case 1: k.smem = pick(1, std::max(1, smax / 16)); break;
      case 2: k.smem = pick(1, std::max(1, smax / 3)); break;
      default: k.smem = pick(0, smax); break;
    }
    k.local = pick(0, 2) == 0 ? 16 * pick(0, 3) : 0;
    if (GpuState::empty_sm_capacity(d, h, block_needs(k, d, h)).blocks >= 1) return k;
  }
  Kernel k;  // one warp, nothing else: fits every device
  k.name = fmt::format("k{}", id);
  k.regs = 0;
  return k;
}

std::vector<int64_t> capacities(const GpuState& g, const BlockNeeds& n, RoomUnit unit) {
  std::vector<int64_t> out;
  for (int sm = 0; sm < g.device().sms; ++sm) {
    const CapacityParts p = g.capacity_parts(sm, n);
    out.push_back(unit == RoomUnit::Blocks ? p.blocks : p.value);
  }
  return out;
}

}  // namespace

StateCheckResult cluster_room_additivity(const Device& full, const Hypothesis& h, const AdditivityOptions& o) {
  StateCheckResult r;
  Device d = full;
  const int per_tpc = std::max(1, d.sms_per_tpc);
  d.sms = std::min(full.sms, std::max(per_tpc, o.sms / per_tpc * per_tpc));
  d.gpc_of_tpc.clear();  // the capacity rule never reads the GPC map
  std::mt19937_64 rng(o.seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int steps = 0;
  while (steps < o.steps) {
    // One walk: a fresh GPU, a few kernels, commits and retirements until the GPU has filled and drained.
    GpuState g(d, h);
    std::vector<Kernel> kernels;
    std::vector<BlockNeeds> needs;
    for (int i = 0, nk = pick(1, 4); i < nk; ++i) {
      kernels.push_back(random_kernel(rng, d, h, i));
      needs.push_back(block_needs(kernels.back(), d, h));
    }
    std::vector<Allocation> resident;
    const int walk = std::min(o.steps - steps, pick(20, 400));
    for (int t = 0; t < walk; ++t, ++steps) {
      const bool retire = !resident.empty() && pick(0, 99) < (resident.size() > 3 * static_cast<size_t>(d.sms) ? 60 : 30);
      if (retire) {
        const size_t i = static_cast<size_t>(pick(0, static_cast<int>(resident.size()) - 1));
        g.release(resident[i]);
        resident[i] = std::move(resident.back());
        resident.pop_back();
        continue;
      }
      const int k = pick(0, static_cast<int>(kernels.size()) - 1);
      const BlockNeeds& n = needs[static_cast<size_t>(k)];
      if (!g.local_allows(n)) continue;
      const std::vector<int64_t> before = capacities(g, n, o.unit);
      std::vector<int> open;
      for (int sm = 0; sm < d.sms; ++sm)
        if (before[static_cast<size_t>(sm)] >= 1) open.push_back(sm);
      if (open.empty()) continue;
      const int sm = open[static_cast<size_t>(pick(0, static_cast<int>(open.size()) - 1))];
      resident.push_back(g.commit(sm, n));
      const std::vector<int64_t> after = capacities(g, n, o.unit);
      ++r.compared;
      std::vector<int64_t> want = before;
      want[static_cast<size_t>(sm)] -= 1;
      if (after == want) continue;
      const Kernel& kr = kernels[static_cast<size_t>(k)];
      r.counterexample = fmt::format(
          "on {} ({} SMs kept) under {}: one block of {} threads x {} registers, {} bytes of shared memory on SM {} "
          "changed the {} of each SM for that kernel from [{}] to [{}] (additive: [{}])",
          full.name, d.sms, h.name, kr.threads, kr.regs, kr.smem, sm,
          o.unit == RoomUnit::Blocks ? "blocks" : "capacity value", fmt::join(before, ", "), fmt::join(after, ", "),
          fmt::join(want, ", "));
      return r;
    }
  }
  r.verdict = StateCheck::Proved;
  return r;
}

}  // namespace tbcheck::model
