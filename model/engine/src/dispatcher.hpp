// The generic dispatcher (round-robin and most-room selection) as one object shared by simulate() and the
// stepping Scheduler: eligibility and head (state.cpp), capacity index (capacity.cpp), clusters (cluster_pick.cpp), commit (commit.cpp), decisions (dispatch.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "plan.hpp"
#include "tbcheck/model/numbering.hpp"
#include "tbcheck/model/resources.hpp"

namespace tbcheck::model {

// Max-capacity with lowest-position tie-break, and first position with positive capacity. Each
// position holds one key: the value in the high 32 bits and (2^32 - 1 - position) in the low ones,
// so the largest key is the highest value at the lowest position ("strictly greater replaces").
// Two levels (groups of kGroup positions and their maxima) make an update one short scan of a
// group, cheaper than the log2(SMs) dependent steps of a binary tree at GPU sizes.
class CapacityIndex {
 public:
  explicit CapacityIndex(int n);
  // Capacities are at most max_blocks_per_sm (an int) and at least -1 (padding), so keys never overflow.
  static int64_t key(int64_t value, int p) { return value * kSpan + (kSpan - 1 - p); }
  void set(int p, int64_t v) {
    const int64_t k = key(v, p);
    int64_t& slot = key_[static_cast<size_t>(p)];
    const int64_t old = slot;
    if (old == k) return;
    slot = k;
    // Keys are distinct, so the group maximum changes only when this key becomes it or was it.
    int64_t& gm = group_max_[static_cast<size_t>(p / kGroup)];
    if (k > gm) gm = k;
    else if (old == gm) pull(p / kGroup);
  }
  // Sets every position p to values[p], then recomputes the group maxima once.
  void assign(const std::vector<int64_t>& values);
  int64_t value(int p) const { return key_[static_cast<size_t>(p)] >> 32; }
  // (value, position) of the maximum; lowest position wins ties.
  std::pair<int64_t, int> best() const {
    int64_t k = group_max_[0];
    for (int g = 1; g < groups_; ++g) k = std::max(k, group_max_[static_cast<size_t>(g)]);
    return {k >> 32, static_cast<int>(kSpan - 1 - (k & (kSpan - 1)))};
  }
  // Appends every position whose value (exact or a bound) is at least v to `out`, ascending; groups whose maximum is
  // below v are skipped whole.
  void at_least(int64_t v, std::vector<int>& out) const {
    for (int g = 0; g < groups_; ++g) {
      if ((group_max_[static_cast<size_t>(g)] >> 32) < v) continue;
      for (int p = g * kGroup; p < (g + 1) * kGroup; ++p)
        if ((key_[static_cast<size_t>(p)] >> 32) >= v) out.push_back(p);  // padding is -1, below any v >= 1
    }
  }
  // First position >= from (wrapping around) with a positive value; -1 if none.
  int first_positive_from(int from) const {
    int p = first_positive(from);
    if (p < 0 && from > 0) p = first_positive(0);
    return p;
  }

 private:
  static constexpr int kGroup = 16;
  static constexpr int64_t kSpan = int64_t{1} << 32;
  static bool positive(int64_t k) { return k >= kSpan; }  // value >= 1
  void pull(int g) {
    const int64_t* k = key_.data() + static_cast<size_t>(g) * kGroup;
    int64_t m = k[0];
    for (int i = 1; i < kGroup; ++i) m = std::max(m, k[i]);
    group_max_[static_cast<size_t>(g)] = m;
  }
  int first_positive(int from) const {
    for (int g = from / kGroup; g < groups_; ++g) {
      if (!positive(group_max_[static_cast<size_t>(g)])) continue;
      for (int p = std::max(from, g * kGroup); p < (g + 1) * kGroup; ++p)
        if (positive(key_[static_cast<size_t>(p)])) return p;  // padding is never positive
    }
    return -1;
  }
  int n_, groups_;
  std::vector<int64_t> key_;
  std::vector<int64_t> group_max_;
};

// One block the dispatcher placed: its kernel, its block index (after relabelling), its SM, and the
// allocation slot it holds until retire(slot).
struct Dispatched {
  int kernel;
  int block;
  int sm;
  int slot;
};

// Kernels are added in launch order (their index is the order of adding) and become eligible when nothing
// holds them back any more (a release, a stream predecessor); the caller owns time and retirements.
class Dispatcher {
 public:
  // d and h must outlive the dispatcher.
  Dispatcher(const Device& d, const Hypothesis& h);

  // --- eligibility and head (state.cpp) ---
  // Adds a kernel; it waits for `waiting_for` satisfied() calls (0: eligible now). Returns its index.
  int add_kernel(KernelPlan p, int waiting_for);
  // When kernel k's last block retires, `next` is satisfied once.
  void set_successor(int k, int next) { successor_[static_cast<size_t>(k)] = next; }
  void satisfied(int k) {
    if (--waiting_for_[static_cast<size_t>(k)] == 0) ready_push(k);
  }
  bool has_eligible() const { return !ready_.empty(); }
  int kernels() const { return static_cast<int>(plans_.size()); }
  const KernelPlan& plan(int k) const { return plans_[static_cast<size_t>(k)]; }
  int dispatched(int k) const { return next_block_[static_cast<size_t>(k)]; }
  int unretired(int k) const { return unretired_[static_cast<size_t>(k)]; }
  int waiting_for(int k) const { return waiting_for_[static_cast<size_t>(k)]; }

  // --- commit and retirement (commit.cpp) ---
  // Frees the allocation in `slot` (a block of kernel `kernel`); the kernel's stream successor is satisfied
  // when this was its last block.
  void retire(int slot, int kernel);

  // --- decisions (dispatch.cpp) ---
  // Dispatches from the head kernel at `now` until the hypothesis answers CANNOT_SCHEDULE_NOW or no kernel
  // is eligible; returns the blocks placed, in dispatch order (valid until the next call).
  const std::vector<Dispatched>& dispatch(int64_t now);

  // --- capacity (capacity.cpp) ---
  // Blocks of kernel k SM `sm` holds now (0 outside its TPC mask).
  int64_t capacity_of(int sm, int k) const {
    const std::vector<char>& a = plans_[static_cast<size_t>(k)].allowed;
    return a.empty() || a[static_cast<size_t>(sm)] ? g_.capacity(sm, plans_[static_cast<size_t>(k)].needs) : 0;
  }
  const GpuState& gpu() const { return g_; }
  // The launch-to-launch state numbering gpc-ring starts from (Scenario::gpc_pointer); before the first dispatch.
  void set_gpc_pointer(int p) { gpc_pointer_ = p; }

 private:
  void ready_push(int k) { ready_.push({plans_[static_cast<size_t>(k)].rank, k}); }

  // capacity.cpp
  void set_head(int k);
  void mark(int sm) {
    if (!is_dirty_[static_cast<size_t>(sm)]) {
      is_dirty_[static_cast<size_t>(sm)] = 1;
      dirty_[static_cast<size_t>(n_dirty_++)] = sm;
    }
  }
  void cl_mark(int sm) {
    if (any_cluster_ && !cl_dirty_[static_cast<size_t>(sm)]) {
      cl_dirty_[static_cast<size_t>(sm)] = 1;
      cl_dirty_list_.push_back(sm);
    }
  }
  // An SM's state changed: its capacities are stale, and so are its TPC's other SMs' when the TPC went
  // idle or busy (TPC configuration).
  void touched(int sm, bool tpc_flipped) {
    if (tpc_flipped) {
      const int first = g_.tpc_of(sm) * d_.sms_per_tpc;
      for (int i = first; i < first + d_.sms_per_tpc; ++i) {
        mark(i);
        cl_mark(i);
      }
    } else {
      mark(sm);
      cl_mark(sm);
    }
  }
  void refresh(int sm) {
    stale_[static_cast<size_t>(sm)] = 0;
    index_.set(pos_of_[static_cast<size_t>(sm)], capacity_of(sm, head_));
  }
  void refresh_dirty() {
    for (int i = 0; i < n_dirty_; ++i) {
      const int sm = dirty_[static_cast<size_t>(i)];
      is_dirty_[static_cast<size_t>(sm)] = 0;
      refresh(sm);
    }
    n_dirty_ = 0;
  }

  // commit.cpp
  int take_slot();
  // The block index of kernel k's t-th dispatched block.
  int label(int k, int t) const {
    const std::vector<int>& l = plans_[static_cast<size_t>(k)].labels;
    return l.empty() ? t : l[static_cast<size_t>(t)];
  }
  // Commits kernel k's next block on sm and records it in placed_; the capacity bookkeeping is the caller's.
  void place_block(int k, int sm);

  // dispatch.cpp: the position (in order_) of the SM gpc-spread or tpc-position chooses for kernel k's next block,
  // -1 if none fits.
  int spread_pick(int k) const;
  // rule_pick.cpp: the position of the SM the hypothesis' rule ranks first for the head kernel (whose capacities the
  // index holds), -1 if none fits; that position's index entry is exact on return.
  int rule_pick();
  void rule_setup();
  // The SM among `sms` (in scan order) with blocks >= 1 that the rule ranks first, room being `value`: a cluster's
  // block inside its GPC (cluster_spread selection); -1 if none.
  int rule_pick_in(const std::vector<int>& sms, const std::vector<int64_t>& blocks, const std::vector<int64_t>& value);
  // The key-by-key comparison over rule_cand_ (positions, ascending) from key `first_key` on, rule_room_ holding
  // every candidate's room (every SM's when a key reads TPC room); the position it leaves first.
  int rule_rank(size_t first_key);
  // dispatch.cpp: numbering gpc-ring, one batch (one kernel's placements at one instant) at a time.
  void batch_add(int k, int sm, int64_t room);
  void number_batch();

  // cluster_pick.cpp
  void cl_set(int sm, int k);
  bool place_cluster(int k);

  const Device& d_;
  const Hypothesis& h_;
  GpuState g_;
  std::vector<int> order_, pos_of_;  // SMs in the hypothesis' scan order, and each SM's position there
  bool tpc_coupled_ = false;         // an SM's capacity depends on the other SMs of its TPC
  bool paired_ = false;              // some blocks may lead a pair
  bool literal_ = false;             // capacity literal: the value is not a block count

  // Per kernel.
  std::vector<KernelPlan> plans_;
  std::vector<int> next_block_, unretired_, waiting_for_, successor_;
  // Eligible kernels with blocks left, by (priority rank, index): the head is the highest-priority one,
  // launch order among equals.
  std::priority_queue<std::pair<int, int>, std::vector<std::pair<int, int>>, std::greater<>> ready_;

  // Allocations of resident blocks only, in slots reused as blocks retire (commit writes into a
  // slot, reusing its storage). free_slots_[0..n_free_) are the slots not in use.
  std::vector<Allocation> slots_;
  std::vector<int> free_slots_;
  int n_free_ = 0;

  // The index holds the head kernel's capacity of every SM, exact or (after a commit) an upper bound.
  // - An SM whose state changed by a retirement is marked dirty and recomputed once, just before the
  //   next selection, however many blocks it retired meanwhile. Under TPC configuration an SM's
  //   capacity also depends on its TPC's configuration, which changes only when the TPC goes idle or
  //   stops being idle: only then are the other SMs of the TPC marked too.
  // - A commit lowers the SM's capacity by at least one under every mechanism (one block slot, W warps
  //   in sequence from the PB pointer, one first-fit hole's worth of S or R), so the index keeps
  //   old - 1 as an upper bound, marked stale, and recomputes it only if it reaches the selection
  //   (never when the bound is 0). Selection takes the best key; a stale one is made exact and the
  //   selection repeats: every other key is an upper bound of its exact value, so the result is the
  //   one a fully exact index gives.
  CapacityIndex index_;
  int head_ = -1;  // kernel whose capacities the index holds
  std::vector<int> dirty_;  // dirty_[0..n_dirty_): each SM at most once
  int n_dirty_ = 0;
  std::vector<char> is_dirty_;
  std::vector<char> stale_;  // the index holds an upper bound
  std::vector<int64_t> all_capacities_;
  int rr_pointer_ = 0;
  // Numbering gpc-ring (model/numbering.hpp): the context's GPC pointer, and the current batch's placements
  // (their place in placed_ and their SM and room).
  bool numbered_by_ring_ = false;
  int gpc_pointer_ = 0;
  int batch_kernel_ = -1;
  std::vector<size_t> batch_at_;
  std::vector<RingPlacement> batch_;
  // Numbering gpc-carry: the context's GPC pointer (-1 before the first launch), the launches seen, and each
  // kernel's ring start once its first batch is numbered.
  bool ring_carry_ = false;
  int ring_pointer_ = -1;
  int ring_launches_ = 0;
  std::vector<RingStart> ring_start_;
  std::vector<char> ring_started_;
  std::vector<int> tpc_position_;  // each TPC's place among its GPC's TPCs (tpc-position)
  // Selection rule (rule_pick.cpp). A leading key the capacity index answers by itself: the round-robin pointer's
  // distance or the scan position (unique per SM, so later keys never act), or room alone.
  // MostRoom: room:max leads other keys, so only the SMs of the most room are candidates (the index names them) unless
  // a key sums room over a TPC and needs every SM's.
  enum class RuleLead { None, Pointer, First, Room, MostRoom };
  RuleLead rule_lead_ = RuleLead::None;
  template <class F>
  void rule_keep_best(F&& value);
  std::vector<int> rule_cand_;                      // candidate positions, ascending
  std::vector<int64_t> rule_room_, rule_tpc_room_;  // room per SM and TPC at this pick
  std::vector<int> rule_gpc_of_tpc_;
  std::vector<std::vector<int>> rule_gpc_tpcs_;      // each GPC's TPCs
  // Paired issue: after a pair leader, the kernel's next block goes to the leader's SM if it
  // fits there at the same instant; otherwise it is placed by the selection like any block.
  int pair_sm_ = -1, pair_kernel_ = -1;
  int64_t pair_time_ = -1;

  // Thread block clusters (model/engine/src/cluster.cpp) keep their own capacities apart from the index, for one
  // kernel at a time, recomputed for the SMs whose state changed since (cl_mark); tracked once a clustered
  // kernel is added on a device with a GPC map.
  std::vector<int> gpc_of_sm_;
  std::vector<std::vector<int>> gpc_sms_;
  bool any_cluster_ = false;
  std::vector<char> cl_dirty_;
  std::vector<int> cl_dirty_list_;
  // cluster_cap_: blocks (the unit rooms are counted in); cluster_val_: the hypothesis' capacity value, which
  // most-room ranks SMs by (the same numbers unless capacity is literal).
  std::vector<int64_t> cluster_cap_, cluster_val_, gpc_room_;
  std::vector<int> on_sm_;
  int cl_kernel_ = -1;  // the kernel cluster_cap_ and gpc_room_ are for

  std::vector<Dispatched> placed_;  // the current dispatch() call's placements
};

}  // namespace tbcheck::model
