// Numbering gpc-ring (numbering.hpp): a sort of one batch of placements by the key the H200 and H100 recordings show:
// (pass, single-TPC GPCs first, ring position of the GPC, TPC, SM).
#include "tbcheck/model/numbering.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <utility>

namespace tbcheck::model {

std::vector<int> tpc_positions(const std::vector<int>& gpc_of_tpc) {
  std::vector<int> seen, out;
  out.reserve(gpc_of_tpc.size());
  for (int g : gpc_of_tpc) {
    if (g >= static_cast<int>(seen.size())) seen.resize(static_cast<size_t>(g) + 1, 0);
    out.push_back(seen[static_cast<size_t>(g)]++);
  }
  return out;
}

std::vector<int> gpc_ring_sm_rank(const Device& d, const std::vector<int>& gpc_of_sm, int launch, int gpc_pointer,
                                  int grid) {
  // A GPC's SMs, to tell single-TPC GPCs from the others; GPCs are numbered in the SM order (cluster_gpc_of_sm).
  std::vector<int> gpc_sms;
  for (int g : gpc_of_sm) {
    if (g >= static_cast<int>(gpc_sms.size())) gpc_sms.resize(static_cast<size_t>(g) + 1, 0);
    ++gpc_sms[static_cast<size_t>(g)];
  }
  std::vector<int> single, multi;  // ring position of each GPC within its tier
  std::vector<int> tier_pos(gpc_sms.size(), 0);
  for (size_t g = 0; g < gpc_sms.size(); ++g) {
    std::vector<int>& tier = gpc_sms[g] <= d.sms_per_tpc ? single : multi;
    tier_pos[g] = static_cast<int>(tier.size());
    tier.push_back(static_cast<int>(g));
  }
  // The single-TPC GPCs of an H200 start at the third (scheduler order 2, 3, 0, 1) below the threshold: half-way
  // round their ring, which is how it is written so that a GPU with another count keeps the shape.
  const int single_start = grid > kRingWholeGridAbove || single.empty() ? 0 : static_cast<int>(single.size()) / 2;
  const int multi_start = multi.empty() ? 0 : (launch + gpc_pointer) % static_cast<int>(multi.size());
  auto key = [&](int sm) {
    const int g = gpc_of_sm[static_cast<size_t>(sm)];
    const bool is_single = gpc_sms[static_cast<size_t>(g)] <= d.sms_per_tpc;
    const int n = static_cast<int>((is_single ? single : multi).size());
    const int ring = (tier_pos[static_cast<size_t>(g)] - (is_single ? single_start : multi_start) + n) % n;
    return std::array<int, 4>{is_single ? 0 : 1, ring, sm / d.sms_per_tpc, sm % d.sms_per_tpc};
  };
  std::vector<int> by_key(static_cast<size_t>(d.sms));
  std::iota(by_key.begin(), by_key.end(), 0);
  std::sort(by_key.begin(), by_key.end(), [&](int a, int b) { return key(a) < key(b); });
  std::vector<int> rank(static_cast<size_t>(d.sms));
  for (size_t r = 0; r < by_key.size(); ++r) rank[static_cast<size_t>(by_key[r])] = static_cast<int>(r);
  return rank;
}

std::vector<int> gpc_ring_ranks(const Device& d, const std::vector<int>& gpc_of_sm, int launch, int gpc_pointer,
                                int grid, const std::vector<RingPlacement>& batch) {
  const std::vector<int> sm_rank = gpc_ring_sm_rank(d, gpc_of_sm, launch, gpc_pointer, grid);
  auto key = [&](const RingPlacement& p) { return std::pair<int64_t, int>{-p.room, sm_rank[static_cast<size_t>(p.sm)]}; };
  std::vector<int> order(batch.size());
  std::iota(order.begin(), order.end(), 0);
  // Stable: two placements on one SM in one pass keep their placement order.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return key(batch[static_cast<size_t>(a)]) < key(batch[static_cast<size_t>(b)]);
  });
  std::vector<int> rank(batch.size());
  for (size_t r = 0; r < order.size(); ++r) rank[static_cast<size_t>(order[r])] = static_cast<int>(r);
  return rank;
}

}  // namespace tbcheck::model
