// Commit and retirement of a block on the generic dispatcher: an allocation slot, GpuState's commit and
// release, and the block index the hand-out order gives it (smt/src/commit.cpp is the commit's twin).
#include "dispatcher.hpp"

namespace tbcheck::model {

int Dispatcher::take_slot() {
  if (n_free_ > 0) return free_slots_[static_cast<size_t>(--n_free_)];
  slots_.emplace_back();
  free_slots_.push_back(-1);  // room for this slot when it is freed
  return static_cast<int>(slots_.size()) - 1;
}

void Dispatcher::place_block(int k, int sm) {
  const int slot = take_slot();
  g_.commit(sm, plans_[static_cast<size_t>(k)].needs, slots_[static_cast<size_t>(slot)]);
  placed_.push_back({k, label(k, next_block_[static_cast<size_t>(k)]++), sm, slot});
}

void Dispatcher::retire(int slot, int kernel) {
  const Allocation& a = slots_[static_cast<size_t>(slot)];
  g_.release(a);
  touched(a.sm, tpc_coupled_ && g_.tpc_idle(g_.tpc_of(a.sm)));
  free_slots_[static_cast<size_t>(n_free_++)] = slot;
  if (--unretired_[static_cast<size_t>(kernel)] == 0 && successor_[static_cast<size_t>(kernel)] >= 0)
    satisfied(successor_[static_cast<size_t>(kernel)]);
}

}  // namespace tbcheck::model
