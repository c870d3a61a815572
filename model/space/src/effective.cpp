// effective_options and options_on (effective.hpp): options normalised to what a device or a scenario lets them
// show, from the option predicates (options.hpp), the SM order and the pb-any state check (compositions.hpp).
#include "tbcheck/model/effective.hpp"

#include <algorithm>

#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/controls.hpp"
#include "tbcheck/model/feasibility.hpp"
#include "tbcheck/model/scenario.hpp"

namespace tbcheck::model {

bool order_is_natural_on(Order o, const Device& d) { return sm_order(d, o) == sm_order(d, Order::Natural); }

Hypothesis effective_options(Hypothesis h, const Device& d) {
  if (order_is_natural_on(h.order, d)) h.order = Order::Natural;
  h.issue = issue_on(h.issue, d);
  if (!ranks_by_capacity(h.selection)) h.capacity = Capacity::Blocks;
  h.priority = priority_on(h.priority, d);
  if (!masks_act_on(d)) h.partition = Partition::AllowedSms;
  // With one register pool per SM, pb-any places exactly what sm does on a device where the check over
  // every SM state proves their capacity rules equal (docs/learn.md).
  if (pb_any_acts_as_sm(h, d)) h.warps = Warps::Sm;
  h.name.clear();
  h.source.clear();
  h.description.clear();
  h.file.clear();
  return h;
}

ScenarioReach::ScenarioReach(const Scenario& s) {
  for (const auto& k : s.kernels) {
    regs.push_back(k.regs);
    smem.push_back(k.smem_per_block(s.device));
    clusters = clusters || k.cluster.has_value();
    local = local || k.local != 0;
    // Hypothesis::leads_pair: a kernel too small for its first block to lead has no pair at all.
    Hypothesis paired;
    paired.issue = Issue::Paired;
    pairs = pairs || paired.leads_pair(s.device, k.blocks, 0);
    skips = skips || k.warps() % s.device.pbs_per_sm == 0;
  }
  masks = partition_matters(s, Partition::AllowedSms);
  for (auto* v : {&regs, &smem}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
}

Hypothesis options_on(Hypothesis h, const Scenario& s, const ScenarioReach& r) {
  // The dispatcher compares ranks only with each other (a stable order by rank): one rank for all is ignore.
  if (!priorities_matter(s, h.priority)) h.priority = Priority::Ignore;
  if (!r.masks) h.partition = Partition::AllowedSms;
  // The cluster rules choose a GPC and its SMs for a cluster; nothing else reads them.
  if (!r.clusters) {
    h.cluster_gpc = ClusterGpc::MostRoom;
    h.cluster_spread = ClusterSpread::Selection;
  }
  // Without local memory, gpu-config's one configuration is 0 bytes, which every block fits.
  if (!r.local) h.local = Local::Ignore;
  // Without a pair leader every issue rule places single blocks in order (hand_out_order is the identity).
  if (!r.pairs) h.issue = Issue::Single;
  if (!r.skips) h.skip_on_multiple_of_4 = false;
  // A threshold acts only through which kernels it ignores (block_needs): regs <= t and S < t.
  if (const auto t = h.registers_ignore_at_or_below) {
    const auto above = std::upper_bound(r.regs.begin(), r.regs.end(), *t);
    h.registers_ignore_at_or_below = above == r.regs.begin() ? std::nullopt : std::optional<int>(*std::prev(above));
  }
  if (const auto t = h.smem_ignore_below) {
    const auto at = std::lower_bound(r.smem.begin(), r.smem.end(), *t);
    if (at == r.smem.begin()) h.smem_ignore_below.reset();
    else h.smem_ignore_below = at == r.smem.end() ? r.smem.back() + 1 : *at;
  }
  // A rule for a resource every kernel's blocks leave at 0 allocates nothing and refuses nothing.
  if (!r.regs.empty() && h.registers_ignore_at_or_below == r.regs.back()) {
    h.registers = Registers::Sm;
    h.registers_ignore_at_or_below = 0;  // every kernel ignored, as one value
  }
  if (!r.smem.empty() && h.smem_ignore_below == r.smem.back() + 1) {
    h.smem = Smem::Counted;
    h.smem_config = SmemConfig::None;
  }
  return h;
}

Hypothesis effective_options(Hypothesis h, const Scenario& s) {
  return options_on(effective_options(h, s.device), s, ScenarioReach(s));
}

}  // namespace tbcheck::model
