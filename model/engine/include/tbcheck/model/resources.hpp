// The resource mechanisms of docs/design.md: per-SM and per-PB accounting of block slots, warp slots,
// registers and shared memory, the TPC shared-memory configuration and the GPU local-memory
// configuration. Each option's rule lives in exactly one function here (see resources.cpp).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"

namespace tbcheck::model {

inline constexpr int kMaxPbs = 8;
inline constexpr int64_t kUnlimited = int64_t{1} << 40;

// smem_config sm-floor: no configuration below the device's smallest of at least this many bytes. An H200 put
// 19 KB blocks beside blocks of kernels without shared memory (docs/results/h200.md, finding 14), which the
// bare Mechanism 3 configures at a few KB; the recordings bound the floor to 32-100 KB, and 32 KB is the least.
inline constexpr int64_t kSmemConfigFloorBytes = 32 * 1024;

// What one block of a kernel needs under a hypothesis (thresholds already applied).
struct BlockNeeds {
  int warps = 1;            // W
  int regs_per_warp = 0;    // R; 0 when registers are ignored
  int smem = 0;             // S in bytes; 0 when shared memory is ignored
  int config_s = 0;         // TB.config_s in bytes (Mechanism 3)
  int local = 0;            // TB.config_l
};

BlockNeeds block_needs(const Kernel& k, const Device& d, const Hypothesis& h);

// An address interval [offset, offset + size) in a contiguous allocator.
struct Interval {
  int offset = 0;
  int size = 0;
};

// Sorted, non-overlapping allocations inside [0, limit): first fit at the lowest hole.
class ContiguousSpace {
 public:
  int64_t fits(int size, int limit) const;   // how many `size` chunks fit in the holes
  int allocate(int size, int limit);         // offset; -1 if no hole fits
  // `count` chunks of `size`, each where allocate() would put it, with the chunks that land next to each other kept
  // as one interval (released at once, by its first offset): appends (tag, offset) for each interval kept to `out`.
  // False if a chunk fits no hole. The holes are those of `count` allocate() calls; the intervals are fewer.
  bool allocate_run(int size, int count, int limit, int tag, std::vector<std::pair<int, int>>& out);
  void release(int offset);
  int used() const { return used_; }
  bool empty() const { return allocs_.empty(); }
  std::vector<Interval> holes(int limit) const;

 private:
  static constexpr size_t kReservedIntervals = 8;  // a PB's warps of a few blocks, an SM's blocks
  std::vector<Interval> allocs_;
  int used_ = 0;
};

struct SmState {
  int blocks = 0;
  int warps = 0;                      // SM pool (warps: sm)
  int regs = 0;                       // SM pool (registers: sm)
  int smem = 0;                       // bytes in use
  int pb_pointer = 0;                 // Mechanism 2.1 round-robin pointer; never reset
  std::array<int, kMaxPbs> pb_warps{};
  std::array<int, kMaxPbs> pb_regs{};
  std::vector<ContiguousSpace> pb_reg_space;  // registers: pb-contiguous
  ContiguousSpace smem_space;                 // smem: contiguous-first-fit
};

// Where a committed block's resources went, so that its retirement frees exactly those.
struct Allocation {
  int sm = -1;
  int warps = 0;
  int regs_per_warp = 0;
  int smem = 0;
  std::array<int, kMaxPbs> pb_warps{};
  int smem_offset = -1;
  // Registers, pb-contiguous only: the PB each interval of the block's warps' registers went to and its offset there
  // (a PB's warps next to each other are one interval). One vector, kept by the slot it lives in (Dispatcher), so a
  // reused slot allocates nothing.
  std::vector<std::pair<int, int>> reg_pieces;  // (pb, offset)
};

// Capacity of one SM for a block, with the parts that make it up (for explanations and tests).
struct CapacityParts {
  int64_t limit_b = 0;        // free block slots
  int64_t limit_w = 0;        // warps placeable (Algorithm 1's limit_w, registers folded in)
  int64_t limit_regs_w = 0;   // warps allowed by SM-pooled registers (kUnlimited if not pooled)
  int64_t limit_s = 0;        // blocks allowed by shared memory
  bool config_blocked = false;  // TPC busy with a smaller configuration (Mechanism 3)
  int64_t blocks = 0;         // blocks that fit: min(limit_b, limit_w / W, limit_s)
  int64_t value = 0;          // the ranking value under the hypothesis' capacity units
};

// Device limits the capacity and commit rules read on every call, computed once per GpuState
// (the per-PB ones are divisions).
struct SmLimits {
  int pbs = 4;
  int warp_slots_per_pb = 0;
  int regs_per_pb = 0;
  int max_blocks = 0;
  int max_warps = 0;
  int regs_per_sm = 0;
  explicit SmLimits(const Device& d);
};

// The capacity rule on an SM state given directly (not reached by commits): for checks that compare
// two options over every state of a bounded space (model/compositions.hpp, acts_alike_on).
CapacityParts capacity_of_state(const SmLimits& l, const Hypothesis& h, const SmState& s, const BlockNeeds& n,
                                int64_t smem_limit, bool config_blocked);

class GpuState {
 public:
  GpuState(const Device& d, const Hypothesis& h);

  CapacityParts capacity_parts(int sm, const BlockNeeds& n) const;
  // The value of capacity_parts(sm, n), by code specialised for the hypothesis' warps, registers and
  // shared-memory options and the PB count (chosen at construction): the simulator's hot path.
  int64_t capacity(int sm, const BlockNeeds& n) const { return (this->*ops_.capacity)(sm, n); }
  // Algorithm 1 lines 1-3: false when the local-memory configuration forbids any placement now.
  bool local_allows(const BlockNeeds& n) const {
    return h_.local == Local::Ignore || resident_ == 0 || n.local <= gpu_local_;
  }
  Allocation commit(int sm, const BlockNeeds& n);
  // As commit(sm, n), into an allocation whose storage is reused (no allocation per block).
  void commit(int sm, const BlockNeeds& n, Allocation& a) { (this->*ops_.commit)(sm, n, a); }
  void release(const Allocation& a) { (this->*ops_.release)(a); }

  bool tpc_idle(int tpc) const { return tpc_blocks_[tpc] == 0; }
  int tpc_of(int sm) const { return tpc_of_[sm]; }  // d.tpc_of without its division
  // Mechanism 3's unit holding one configuration: the TPC (seed 000), or the SM (smem_config sm).
  int config_of(int sm) const { return config_[static_cast<size_t>(config_unit(sm))]; }
  bool config_idle(int sm) const;
  const SmState& sm(int i) const { return sms_[i]; }
  const Device& device() const { return d_; }
  const Hypothesis& hypothesis() const { return h_; }

  // Blocks of this kernel one empty SM holds (pointer 0, largest configuration): the factor of
  // config_s (Mechanism 3) and the feasibility check of a kernel.
  static CapacityParts empty_sm_capacity(const Device& d, const Hypothesis& h, const BlockNeeds& n);

 private:
  // The instances of capacity, commit and release for this hypothesis and device.
  struct Ops {
    int64_t (GpuState::*capacity)(int, const BlockNeeds&) const;
    void (GpuState::*commit)(int, const BlockNeeds&, Allocation&);
    void (GpuState::*release)(const Allocation&);
  };
  template <Warps kW, Registers kR, Smem kS, int kPbs>
  int64_t capacity_value(int sm, const BlockNeeds& n) const;
  template <Warps kW, Registers kR, Smem kS, int kPbs>
  void commit_as(int sm, const BlockNeeds& n, Allocation& a);
  template <Warps kW, Registers kR, Smem kS, int kPbs>
  void release_as(const Allocation& a);
  int64_t smem_limit(int sm, const BlockNeeds& n) const;
  int config_unit(int sm) const { return config_per_sm_ ? sm : tpc_of_[sm]; }
  const Device& d_;
  const Hypothesis& h_;
  SmLimits lim_;
  int max_config_;                // bytes: the device's largest shared-memory configuration
  bool config_per_sm_;            // Mechanism 3 held per SM (options.hpp config_per_sm), else per TPC
  Ops ops_;
  std::vector<SmState> sms_;
  std::vector<int> tpc_of_;
  std::vector<int> config_;       // bytes, per configuration unit (config_unit)
  std::vector<int> tpc_blocks_;   // resident blocks per TPC
  int gpu_local_ = 0;
  int resident_ = 0;
};

// Why a kernel fits no empty SM under a hypothesis ("" when it fits).
std::string infeasibility_reason(const Kernel& k, const Device& d, const Hypothesis& h);

}  // namespace tbcheck::model
