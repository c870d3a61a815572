// The head kernel's capacity of every SM in a two-level index, recomputed lazily and only for SMs whose
// state changed since the last selection (smt/src/capacity.cpp is the capacity rule's twin).
#include <algorithm>

#include "dispatcher.hpp"

namespace tbcheck::model {

CapacityIndex::CapacityIndex(int n) : n_(n), groups_((n + kGroup - 1) / kGroup) {
  key_.resize(static_cast<size_t>(groups_ * kGroup));
  for (int p = 0; p < groups_ * kGroup; ++p) key_[static_cast<size_t>(p)] = key(-1, p);  // padding
  group_max_.assign(static_cast<size_t>(groups_), key(-1, 0));
  for (int g = 0; g < groups_; ++g) pull(g);
}

void CapacityIndex::assign(const std::vector<int64_t>& values) {
  for (int p = 0; p < n_; ++p) key_[static_cast<size_t>(p)] = key(values[static_cast<size_t>(p)], p);
  for (int g = 0; g < groups_; ++g) pull(g);
}

void Dispatcher::set_head(int k) {
  head_ = k;
  for (int sm = 0; sm < d_.sms; ++sm) all_capacities_[static_cast<size_t>(pos_of_[static_cast<size_t>(sm)])] = capacity_of(sm, k);
  index_.assign(all_capacities_);
  for (int i = 0; i < n_dirty_; ++i) is_dirty_[static_cast<size_t>(dirty_[static_cast<size_t>(i)])] = 0;
  n_dirty_ = 0;
  std::fill(stale_.begin(), stale_.end(), 0);
}

}  // namespace tbcheck::model
