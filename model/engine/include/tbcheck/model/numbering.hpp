// Numbering gpc-ring and gpc-carry: which block index each of the blocks a kernel places at one instant gets, on GPUs
// that hand a grid out GPC by GPC (docs/results/h200.md, findings 12, 14 and 15). Both engines use these functions.
#pragma once
#include <cstdint>
#include <vector>

#include "tbcheck/model/device.hpp"

namespace tbcheck::model {

// One placement of a batch: the SM (in the scheduler's order) and the room the kernel had on it when it was chosen.
struct RingPlacement {
  int sm = 0;
  int64_t room = 0;
};

// Each TPC's place among its GPC's TPCs, in the TPC order (selection tpc-position ranks by it; both engines).
std::vector<int> tpc_positions(const std::vector<int>& gpc_of_tpc);

// Grids of more blocks than this number their single-TPC GPCs from the first (runs 5 to 8: 128 blocks and fewer
// start at the third, 129 and more at the first, whatever their shared memory).
inline constexpr int kRingWholeGridAbove = 128;

// The GPCs as the ring sees them: each one's SMs, and its place in its tier (single-TPC GPCs, the others).
struct RingGpcs {
  std::vector<int> sms, tier_pos;
  int singles = 0, multis = 0;
  bool single(int g, const Device& d) const { return sms[static_cast<size_t>(g)] <= d.sms_per_tpc; }
};
RingGpcs ring_gpcs(const Device& d, const std::vector<int>& gpc_of_sm);

// Where a launch's ring starts, as places in the two tiers.
struct RingStart {
  int single = 0;
  int multi = 0;
};

// Every SM's place in the order the ring numbers the blocks of one pass from `start`: the single-TPC GPCs first,
// then the multi-TPC GPCs, each tier in a ring from its start, each GPC by TPC and then SM.
std::vector<int> gpc_ring_sm_rank(const Device& d, const std::vector<int>& gpc_of_sm, RingStart start);

// Every SM's place in the order gpc-ring numbers the blocks of one pass (equal room): the single-TPC GPCs first
// (from the third, or from the first when the grid has more than kRingWholeGridAbove blocks), then the
// multi-TPC GPCs in a ring from the one `launch + gpc_pointer` places after the first, each GPC by TPC and then SM.
// A permutation of 0..sms-1; both engines rank a batch by (more room first, this rank).
std::vector<int> gpc_ring_sm_rank(const Device& d, const std::vector<int>& gpc_of_sm, int launch, int gpc_pointer,
                                  int grid);

// The rank (0-based) of each placement of `batch` in the order the GPU numbers them: pass by pass (more room
// first), then by `sm_rank` (one of the gpc_ring_sm_rank orders), placement order among equals.
std::vector<int> gpc_ring_ranks(const std::vector<int>& sm_rank, const std::vector<RingPlacement>& batch);

// Numbering gpc-carry: the context's pointer is a GPC; a fresh context's is the multi-TPC GPC `gpc_pointer` places
// after the first.
int ring_carry_fresh_pointer(const Device& d, const std::vector<int>& gpc_of_sm, int gpc_pointer);
// Where a launch's ring starts under gpc-carry, from the pointer and the launch's first batch: when a single-TPC
// GPC takes a block of the batch's first pass (the most room), or the grid is larger than kRingWholeGridAbove, at
// the first GPC from the pointer that holds a block of the batch; otherwise at the one after the first GPC from
// the pointer that holds a block of the first pass, among those that hold one. The single-TPC GPCs from the first
// where the ring started at the pointer and the launch is not the context's first, else half-way round.
RingStart ring_carry_start(const Device& d, const std::vector<int>& gpc_of_sm, int pointer,
                           const std::vector<RingPlacement>& batch, int grid, bool first_launch);

}  // namespace tbcheck::model
