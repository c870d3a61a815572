// Whether the cluster room rule is exact under a hypothesis on a device: a random walk of commits and
// retirements over real GPU states, checking that one block lowers only its own SM's capacity, by one.
#pragma once
#include <cstdint>

#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"

namespace tbcheck::model {

// What the walk compares: the block count (the unit a GPC's room is counted in) or the hypothesis'
// ranking value (capacity literal's min(limit_b, limit_w, limit_s), not a block count).
enum class RoomUnit { Blocks, Value };

struct AdditivityOptions {
  uint64_t seed = 1;
  int steps = 4000;   // commits and retirements, over several walks from an empty GPU
  int sms = 6;        // SMs of the device kept (whole TPCs): SMs interact only through their TPC
  RoomUnit unit = RoomUnit::Blocks;
};

// The cluster rule (model/engine/src/cluster.cpp) counts a GPC's room as the sum of its SMs' capacities for the
// kernel, which is exact when committing one block of kernel k on SM s lowers capacity(s, k) by exactly one
// and leaves every other SM's capacity for k unchanged ("additive"). This walks random kernels (warps,
// registers, shared memory, local memory drawn over the device's limits) through GpuState's own commit and
// release, so every state compared is one the simulator reaches, and checks that property before and after
// every commit. Proved means no counterexample in `compared` commits (a bounded check, not a proof for
// every state); Refuted carries the first counterexample.
StateCheckResult cluster_room_additivity(const Device& d, const Hypothesis& h, const AdditivityOptions& o = {});

}  // namespace tbcheck::model
