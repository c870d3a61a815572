// Numbering gpc-ring: which block index each of the blocks a kernel places at one instant gets, on GPUs that hand a
// grid out GPC by GPC (docs/results/h200.md, findings 12 and 14). Both the simulator and the tests use this one rule.
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

// Every SM's place in the order gpc-ring numbers the blocks of one pass (equal room): the single-TPC GPCs first
// (from the third, or from the first when the grid has more than kRingWholeGridAbove blocks), then the
// multi-TPC GPCs in a ring from the one `launch + gpc_pointer` places after the first, each GPC by TPC and then SM.
// A permutation of 0..sms-1; both engines rank a batch by (more room first, this rank).
std::vector<int> gpc_ring_sm_rank(const Device& d, const std::vector<int>& gpc_of_sm, int launch, int gpc_pointer,
                                  int grid);

// The rank (0-based) of each placement of `batch` in the order the GPU numbers them: pass by pass (more room
// first), the single-TPC GPCs first (from the third, or from the first when the grid has more than
// kRingWholeGridAbove blocks), then the multi-TPC GPCs in a ring from the one `launch + gpc_pointer` places after
// the first, each GPC's blocks by TPC and then SM. `gpc_of_sm` is the device's map (cluster_gpc_of_sm); `grid` the
// kernel's number of blocks.
std::vector<int> gpc_ring_ranks(const Device& d, const std::vector<int>& gpc_of_sm, int launch, int gpc_pointer,
                                int grid, const std::vector<RingPlacement>& batch);

}  // namespace tbcheck::model
