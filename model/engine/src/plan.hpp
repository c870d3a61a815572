// A scenario's plan under one hypothesis, computed once before dispatch: feasibility, every kernel's block
// needs, priority rank, allowed SMs and block labels, the stream FIFOs and the GPC map.
#pragma once
#include <vector>

#include "tbcheck/model/feasibility.hpp"
#include "tbcheck/model/resources.hpp"

namespace tbcheck::model {

// What a dispatcher needs of one kernel, derived from it, the device and the hypothesis alone.
struct KernelPlan {
  BlockNeeds needs;
  int blocks = 0;
  int rank = 0;            // priority_rank: the ready order is (rank, kernel)
  int cluster_size = 0;    // 0: not clustered
  std::vector<char> allowed;  // per SM under the TPC mask; empty: every SM
  // The block index the t-th block dispatched gets (hand-out order, cluster order, or under gpc-priority
  // pick_block); empty: t itself.
  std::vector<int> labels;
};
KernelPlan plan_kernel(const Kernel& k, const Device& d, const Hypothesis& h);

struct ScenarioPlan {
  FeasibilityCheck feasibility;
  std::vector<KernelPlan> kernels;  // empty unless the scenario runs
  StreamOrder streams;
  std::vector<int> gpc_of_sm;  // from the device's map; empty without one
};
// The plan; when the scenario does not run only `feasibility` is filled.
ScenarioPlan make_plan(const Scenario& s, const Hypothesis& h);

}  // namespace tbcheck::model
