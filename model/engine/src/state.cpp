// The generic dispatcher's state between decisions: the GPU, the kernels added so far, and which of them are
// eligible and which is the head (smt/src/state.cpp and release.cpp are the twins).
#include <algorithm>

#include "dispatcher.hpp"
#include "tbcheck/model/cluster.hpp"

namespace tbcheck::model {

Dispatcher::Dispatcher(const Device& d, const Hypothesis& h)
    : d_(d),
      h_(h),
      g_(d, h),
      order_(sm_order(d, h.order)),
      pos_of_(static_cast<size_t>(d.sms)),
      index_(d.sms),
      dirty_(static_cast<size_t>(d.sms)),
      is_dirty_(static_cast<size_t>(d.sms), 0),
      stale_(static_cast<size_t>(d.sms), 0),
      all_capacities_(static_cast<size_t>(d.sms)),
      gpc_of_sm_(cluster_gpc_of_sm(d)),
      cl_dirty_(static_cast<size_t>(d.sms), 0),
      cluster_cap_(static_cast<size_t>(d.sms)),
      cluster_val_(static_cast<size_t>(d.sms)),
      on_sm_(static_cast<size_t>(d.sms), 0) {
  for (int p = 0; p < d.sms; ++p) pos_of_[static_cast<size_t>(order_[static_cast<size_t>(p)])] = p;
  gpc_sms_ = gpc_sms_in_order(gpc_of_sm_, order_);
  gpc_room_.resize(gpc_sms_.size());
  switch (h.smem_config) {
    case SmemConfig::None: break;
    case SmemConfig::Tpc: tpc_coupled_ = d.sms_per_tpc > 1; break;
    case SmemConfig::Sm:
    case SmemConfig::SmFloor: break;  // an SM's configuration follows its own blocks only
  }
  switch (h.issue) {
    case Issue::Single: break;
    case Issue::Paired:
    case Issue::PairedCc8:
    case Issue::FromDevice: paired_ = true; break;  // leads_pair reads the device's issue_pairs
  }
  switch (h.capacity) {
    case Capacity::Blocks: break;
    case Capacity::Literal: literal_ = true; break;
  }
  switch (h.numbering) {
    case Numbering::Dispatch: break;
    case Numbering::GpcRing: numbered_by_ring_ = !gpc_of_sm_.empty(); break;  // check_feasibility needs the map
    case Numbering::GpcCarry: numbered_by_ring_ = ring_carry_ = !gpc_of_sm_.empty(); break;
  }
  tpc_position_ = tpc_positions(d.gpc_of_tpc);
  if (h.selection == Selection::Rule) rule_setup();
  slots_.reserve(static_cast<size_t>(d.sms) * static_cast<size_t>(std::max(d.max_blocks_per_sm, 1)));
}

int Dispatcher::add_kernel(KernelPlan p, int waiting_for) {
  const int k = static_cast<int>(plans_.size());
  // Clusters are placed by the GPC map; make_plan and the Scheduler refuse a clustered kernel without one.
  if (p.cluster_size > 0 && !gpc_of_sm_.empty()) any_cluster_ = true;
  next_block_.push_back(0);
  ring_start_.push_back({});
  ring_started_.push_back(0);
  unretired_.push_back(p.blocks);
  waiting_for_.push_back(waiting_for);
  successor_.push_back(-1);
  plans_.push_back(std::move(p));
  if (waiting_for == 0) ready_push(k);
  return k;
}

}  // namespace tbcheck::model
