// One dispatch pass of the generic dispatcher at an instant: the head kernel's blocks go one by one to the SM
// the selection answers (round-robin, most-room; paired issue) until none fits (smt/src/dispatch.cpp's twin).
#include <algorithm>
#include <array>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "dispatcher.hpp"
#include "tbcheck/model/numbering.hpp"
#include "tbcheck/model/options.hpp"

namespace tbcheck::model {

const std::vector<Dispatched>& Dispatcher::dispatch(int64_t now) {
  placed_.clear();
  batch_kernel_ = -1;
  // Dispatch from the head until the hypothesis answers CANNOT_SCHEDULE_NOW.
  while (!ready_.empty()) {
    const int k = ready_.top().second;
    const KernelPlan& kp = plans_[static_cast<size_t>(k)];
    if (kp.cluster_size > 0) {
      if (!g_.local_allows(kp.needs) || !place_cluster(k)) break;
      if (next_block_[static_cast<size_t>(k)] == kp.blocks) ready_.pop();
      continue;
    }
    if (k != head_) set_head(k);
    const BlockNeeds& n = kp.needs;
    if (!g_.local_allows(n)) break;
    refresh_dirty();
    int pos = -1;
    int64_t value = 0;
    bool follower = false;  // issue paired: this block joins its leader's SM, no selection of its own
    if (pair_sm_ >= 0) {
      if (pair_kernel_ == k && pair_time_ == now) {
        const int64_t cap = g_.capacity(pair_sm_, n);
        if (cap > 0) {
          pos = pos_of_[static_cast<size_t>(pair_sm_)];
          value = cap;
          follower = true;
        }
      }
      pair_sm_ = -1;
    }
    // follower: placed below on the leader's SM; the round-robin pointer already moved past it
    if (!follower) {
      bool none = false;  // CANNOT_SCHEDULE_NOW
      switch (h_.selection) {
        case Selection::RoundRobin:
          while ((pos = index_.first_positive_from(rr_pointer_)) >= 0 && stale_[static_cast<size_t>(order_[static_cast<size_t>(pos)])])
            refresh(order_[static_cast<size_t>(pos)]);
          none = pos < 0;
          if (!none) {
            value = index_.value(pos);
            rr_pointer_ = (pos + 1) % d_.sms;
          }
          break;
        case Selection::MostRoom:
          std::tie(value, pos) = index_.best();
          while (value > 0 && stale_[static_cast<size_t>(order_[static_cast<size_t>(pos)])]) {
            refresh(order_[static_cast<size_t>(pos)]);
            std::tie(value, pos) = index_.best();
          }
          none = value <= 0;
          break;
        case Selection::GpcPriority: throw std::logic_error("gpc-priority reached the generic dispatcher");
        case Selection::GpcSpread:
        case Selection::TpcPosition:
          pos = spread_pick(k);
          none = pos < 0;
          if (!none) value = capacity_of(order_[static_cast<size_t>(pos)], k);  // exact, as the index expects
          break;
        case Selection::Rule:
          pos = rule_pick();
          none = pos < 0;
          if (!none) {
            value = index_.value(pos);
            rr_pointer_ = (pos + 1) % d_.sms;  // the rule's state: rr_distance reads it
          }
          break;
      }
      if (none) break;
    }
    const int sm = order_[static_cast<size_t>(pos)];
    const int b = next_block_[static_cast<size_t>(k)];
    const bool tpc_was_idle = tpc_coupled_ && g_.tpc_idle(g_.tpc_of(sm));
    place_block(k, sm);
    if (numbered_by_ring_) batch_add(k, sm, value);
    if (tpc_was_idle) {
      touched(sm, true);
    } else {
      index_.set(pos, value - 1);
      stale_[static_cast<size_t>(sm)] = value > 1;  // a bound of 0 is exact: capacities are never negative
      cl_mark(sm);
    }
    if (paired_ && h_.leads_pair(d_, kp.blocks, b)) {
      pair_sm_ = sm;
      pair_kernel_ = k;
      pair_time_ = now;
    }
    if (b + 1 == kp.blocks) ready_.pop();
  }
  number_batch();
  return placed_;
}

// Numbering gpc-ring: the blocks one kernel placed at this instant form a batch, numbered as a whole when the
// dispatcher moves on to another kernel or stops (model/numbering.hpp). Durations belong to the kernel, so only
// which SM holds which index changes, never when a block ends under model timing.
void Dispatcher::batch_add(int k, int sm, int64_t room) {
  if (k != batch_kernel_) {
    number_batch();
    batch_kernel_ = k;
  }
  batch_at_.push_back(placed_.size() - 1);
  batch_.push_back({sm, room});
}

void Dispatcher::number_batch() {
  if (batch_.empty()) return;
  const size_t k = static_cast<size_t>(batch_kernel_);
  const int grid = plans_[k].blocks;
  bool leaves_pointer = false;
  std::vector<int> sm_rank;
  if (ring_carry_) {
    if (!ring_started_[k]) {
      if (ring_pointer_ < 0) ring_pointer_ = ring_carry_fresh_pointer(d_, gpc_of_sm_, gpc_pointer_);
      ring_start_[k] = ring_carry_start(d_, gpc_of_sm_, ring_pointer_, batch_, grid, ring_launches_ == 0);
      ring_started_[k] = 1;
      ++ring_launches_;
      leaves_pointer = true;
    }
    sm_rank = gpc_ring_sm_rank(d_, gpc_of_sm_, ring_start_[k]);
  } else {
    sm_rank = gpc_ring_sm_rank(d_, gpc_of_sm_, batch_kernel_, gpc_pointer_, grid);
  }
  const std::vector<int> rank = gpc_ring_ranks(sm_rank, batch_);
  if (batch_.size() > 1) {
    std::vector<int> labels;
    labels.reserve(batch_at_.size());
    for (size_t at : batch_at_) labels.push_back(placed_[at].block);
    std::sort(labels.begin(), labels.end());
    for (size_t i = 0; i < batch_at_.size(); ++i)
      placed_[batch_at_[i]].block = labels[static_cast<size_t>(rank[i])];
  }
  if (leaves_pointer) {
    // The launch leaves the pointer at the GPC after the one of its last-numbered block.
    const size_t last = static_cast<size_t>(std::max_element(rank.begin(), rank.end()) - rank.begin());
    const int gpcs = *std::max_element(gpc_of_sm_.begin(), gpc_of_sm_.end()) + 1;
    ring_pointer_ = (gpc_of_sm_[static_cast<size_t>(batch_[last].sm)] + 1) % gpcs;
  }
  batch_.clear();
  batch_at_.clear();
}

// gpc-spread, measured on H200s (docs/results/h200.md, findings 8 and 10): the SM with the most room for this kernel
// (one block on every SM before a second on any, for a kernel alone); the single-TPC GPCs before the others;
// the TPC with the most room; among GPCs the one that has served the fewest of its TPCs at that room, so
// that the GPCs take turns; then the lowest GPC, TPC and scan position. Room, not blocks held: a second
// kernel that fits beside the first one's blocks lands on the same SMs (finding 10).
// A key per SM with room, the least one wins: the twin of smt/src/dispatch.cpp's spread_pick.
int Dispatcher::spread_pick(int k) const {
  // The GPC map as the cluster rule keeps it (gpc_of_sm_, gpc_sms_); check_feasibility refuses a device without one.
  const int per = d_.sms_per_tpc;
  std::vector<int> room(static_cast<size_t>(d_.sms), 0), tpc_room(static_cast<size_t>(d_.tpcs()), 0);
  for (int sm = 0; sm < d_.sms; ++sm) {
    room[static_cast<size_t>(sm)] = static_cast<int>(std::max<int64_t>(0, capacity_of(sm, k)));
    tpc_room[static_cast<size_t>(g_.tpc_of(sm))] += room[static_cast<size_t>(sm)];
  }
  std::array<int, 7> best{};
  int best_pos = -1;
  for (int pos = 0; pos < d_.sms; ++pos) {
    const int sm = order_[static_cast<size_t>(pos)];
    if (room[static_cast<size_t>(sm)] <= 0) continue;
    const int t = g_.tpc_of(sm);
    const int g = gpc_of_sm_[static_cast<size_t>(sm)];
    const int level = tpc_room[static_cast<size_t>(t)];
    const std::vector<int>& members = gpc_sms_[static_cast<size_t>(g)];
    int past = 0;  // SMs of this GPC whose TPC is past the level (less room): its turns taken at it, `per` SMs a turn
    for (int m : members)
      if (tpc_room[static_cast<size_t>(g_.tpc_of(m))] < level) ++past;
    const int tier = static_cast<int>(members.size()) == per ? 0 : 1;  // GPCs of one TPC first
    std::array<int, 7> key{};
    switch (h_.selection) {
      case Selection::GpcSpread: key = {-room[static_cast<size_t>(sm)], tier, -level, past / per, g, t, pos}; break;
      // tpc-position: the SM's place in its TPC, then the TPC's place in its GPC (tpc_position_), whatever
      // room the TPC has: a later kernel takes the free second SMs of busy TPCs at low positions before the
      // first SM of empty TPCs at high ones (finding 14).
      case Selection::TpcPosition:
        key = {-room[static_cast<size_t>(sm)], tier, sm - t * per, tpc_position_[static_cast<size_t>(t)], g, t, pos};
        break;
      case Selection::RoundRobin:
      case Selection::MostRoom:
      case Selection::GpcPriority:
      case Selection::Rule: throw std::logic_error("spread_pick for a selection that does not spread");
    }
    if (best_pos < 0 || key < best) {
      best = key;
      best_pos = pos;
    }
  }
  return best_pos;
}

}  // namespace tbcheck::model
