// Numbering gpc-ring and gpc-carry (numbering.hpp): a sort of one batch of placements by the key the H200 and H100
// recordings show (pass, single-TPC GPCs first, ring position of the GPC, TPC, SM), and where gpc-carry starts a ring.
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

RingGpcs ring_gpcs(const Device& d, const std::vector<int>& gpc_of_sm) {
  RingGpcs r;
  for (int g : gpc_of_sm) {
    if (g >= static_cast<int>(r.sms.size())) r.sms.resize(static_cast<size_t>(g) + 1, 0);
    ++r.sms[static_cast<size_t>(g)];
  }
  r.tier_pos.assign(r.sms.size(), 0);
  for (size_t g = 0; g < r.sms.size(); ++g) {
    int& n = r.single(static_cast<int>(g), d) ? r.singles : r.multis;
    r.tier_pos[g] = n++;
  }
  return r;
}

std::vector<int> gpc_ring_sm_rank(const Device& d, const std::vector<int>& gpc_of_sm, RingStart start) {
  const RingGpcs r = ring_gpcs(d, gpc_of_sm);
  auto key = [&](int sm) {
    const int g = gpc_of_sm[static_cast<size_t>(sm)];
    const bool is_single = r.single(g, d);
    const int n = is_single ? r.singles : r.multis;
    const int ring = (r.tier_pos[static_cast<size_t>(g)] - (is_single ? start.single : start.multi) + n) % n;
    return std::array<int, 4>{is_single ? 0 : 1, ring, sm / d.sms_per_tpc, sm % d.sms_per_tpc};
  };
  std::vector<int> by_key(static_cast<size_t>(d.sms));
  std::iota(by_key.begin(), by_key.end(), 0);
  std::sort(by_key.begin(), by_key.end(), [&](int a, int b) { return key(a) < key(b); });
  std::vector<int> rank(static_cast<size_t>(d.sms));
  for (size_t r2 = 0; r2 < by_key.size(); ++r2) rank[static_cast<size_t>(by_key[r2])] = static_cast<int>(r2);
  return rank;
}

std::vector<int> gpc_ring_sm_rank(const Device& d, const std::vector<int>& gpc_of_sm, int launch, int gpc_pointer,
                                  int grid) {
  const RingGpcs r = ring_gpcs(d, gpc_of_sm);
  // The single-TPC GPCs of an H200 start at the third (scheduler order 2, 3, 0, 1) below the threshold: half-way
  // round their ring, which is how it is written so that a GPU with another count keeps the shape.
  RingStart start;
  start.single = grid > kRingWholeGridAbove || r.singles == 0 ? 0 : r.singles / 2;
  start.multi = r.multis == 0 ? 0 : (launch + gpc_pointer) % r.multis;
  return gpc_ring_sm_rank(d, gpc_of_sm, start);
}

int ring_carry_fresh_pointer(const Device& d, const std::vector<int>& gpc_of_sm, int gpc_pointer) {
  const RingGpcs r = ring_gpcs(d, gpc_of_sm);
  if (r.multis == 0) return 0;
  const int want = gpc_pointer % r.multis;
  for (size_t g = 0; g < r.sms.size(); ++g)
    if (!r.single(static_cast<int>(g), d) && r.tier_pos[g] == want) return static_cast<int>(g);
  return 0;
}

RingStart ring_carry_start(const Device& d, const std::vector<int>& gpc_of_sm, int pointer,
                           const std::vector<RingPlacement>& batch, int grid, bool first_launch) {
  const RingGpcs r = ring_gpcs(d, gpc_of_sm);
  const int n = static_cast<int>(r.sms.size());
  int64_t most = 0;
  for (const RingPlacement& p : batch) most = std::max(most, p.room);
  std::vector<char> any(static_cast<size_t>(n), 0), first_pass(static_cast<size_t>(n), 0);
  for (const RingPlacement& p : batch) {
    const size_t g = static_cast<size_t>(gpc_of_sm[static_cast<size_t>(p.sm)]);
    any[g] = 1;
    if (p.room == most) first_pass[g] = 1;
  }
  auto next_from = [&](const std::vector<char>& present, int from) {
    for (int i = 0; i < n; ++i)
      if (present[static_cast<size_t>((from + i) % n)]) return (from + i) % n;
    return from;
  };
  bool singles_first = false;  // a single-TPC GPC takes a block in the first pass
  for (int g = 0; g < n; ++g) singles_first = singles_first || (r.single(g, d) && first_pass[static_cast<size_t>(g)]);
  const bool whole = singles_first || grid > kRingWholeGridAbove;
  int start = 0;
  if (whole) {
    start = next_from(any, pointer);
  } else {
    const int at = next_from(first_pass, pointer);
    start = next_from(first_pass, (at + 1) % n);
  }
  RingStart out;
  out.single = r.singles == 0 || grid > kRingWholeGridAbove || (whole && !first_launch) ? 0 : r.singles / 2;
  // The multi-TPC ring starts at the first multi-TPC GPC from `start` on.
  for (int i = 0; i < n; ++i) {
    const int g = (start + i) % n;
    if (!r.single(g, d)) {
      out.multi = r.tier_pos[static_cast<size_t>(g)];
      break;
    }
  }
  return out;
}

std::vector<int> gpc_ring_ranks(const std::vector<int>& sm_rank, const std::vector<RingPlacement>& batch) {
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
