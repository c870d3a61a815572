// Thread block clusters on the generic dispatcher: a clustered head kernel places one whole cluster at a time
// on one GPC, or waits (model/engine/src/cluster.cpp holds the choices; smt/src/cluster_pick.cpp is the twin).
#include <algorithm>
#include <stdexcept>

#include "dispatcher.hpp"
#include "tbcheck/model/cluster.hpp"

namespace tbcheck::model {

void Dispatcher::cl_set(int sm, int k) {
  int64_t blocks = capacity_of(sm, k), value = blocks;
  if (literal_ && blocks > 0) {
    const CapacityParts p = g_.capacity_parts(sm, plans_[static_cast<size_t>(k)].needs);
    blocks = p.blocks;
    value = p.value;
  }
  int64_t& c = cluster_cap_[static_cast<size_t>(sm)];
  gpc_room_[static_cast<size_t>(gpc_of_sm_[static_cast<size_t>(sm)])] += blocks - c;
  c = blocks;
  cluster_val_[static_cast<size_t>(sm)] = value;
}

bool Dispatcher::place_cluster(int k) {
  if (cl_kernel_ != k) {
    cl_kernel_ = k;
    std::fill(cluster_cap_.begin(), cluster_cap_.end(), 0);
    std::fill(gpc_room_.begin(), gpc_room_.end(), 0);
    for (int sm = 0; sm < d_.sms; ++sm) cl_set(sm, k);
  } else {
    for (int sm : cl_dirty_list_) cl_set(sm, k);
  }
  for (int sm : cl_dirty_list_) cl_dirty_[static_cast<size_t>(sm)] = 0;
  cl_dirty_list_.clear();
  const int size = plans_[static_cast<size_t>(k)].cluster_size;
  const int gpc = choose_cluster_gpc(h_, gpc_room_, size);
  if (gpc < 0) return false;
  const std::vector<int>& sms = gpc_sms_[static_cast<size_t>(gpc)];
  for (int c = 0; c < size; ++c) {
    const std::vector<int64_t>& value = literal_ ? cluster_val_ : cluster_cap_;
    const bool by_rule = h_.selection == Selection::Rule && h_.cluster_spread == ClusterSpread::Selection;
    const int sm = by_rule ? rule_pick_in(sms, cluster_cap_, value)
                           : choose_cluster_sm(h_, sms, pos_of_, cluster_cap_, value, on_sm_, rr_pointer_);
    if (sm < 0) throw std::logic_error("a cluster's GPC ran out of room: its resources are not additive");
    place_block(k, sm);
    if (literal_) {
      cl_set(sm, k);  // the literal value is not additive: recomputed
    } else {
      // Additive (cluster_room_additivity, checked for every resource option): the block took one block of
      // room on this SM and none elsewhere, its TPC's other SM included, so no capacity is recomputed.
      --cluster_cap_[static_cast<size_t>(sm)];
      cluster_val_[static_cast<size_t>(sm)] = cluster_cap_[static_cast<size_t>(sm)];
      --gpc_room_[static_cast<size_t>(gpc)];
    }
    ++on_sm_[static_cast<size_t>(sm)];
    rr_pointer_ = (pos_of_[static_cast<size_t>(sm)] + 1) % d_.sms;
  }
  for (int sm : sms) on_sm_[static_cast<size_t>(sm)] = 0;
  head_ = -1;  // the index was not kept up to date: rebuilt for the next unclustered head
  return true;
}

}  // namespace tbcheck::model
