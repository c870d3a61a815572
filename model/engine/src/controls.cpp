// The priority and partition options' shared rules: ranks, the stable priority order and the
// allowed SMs, so the simulator and the SMT encoder cannot read an option differently.
#include "tbcheck/model/controls.hpp"

#include <algorithm>
#include <numeric>

#include "tbcheck/model/scenario.hpp"

namespace tbcheck::model {

int priority_rank(std::optional<int> priority, const Device& d, Priority p) {
  // CUDA's default stream priority is 0, the least priority of every range the device files record.
  const int least = d.stream_priorities ? d.stream_priorities->least : 0;
  const int value = priority.value_or(0);
  switch (p) {
    case Priority::Ignore: return 0;
    case Priority::Strict: return value;
    case Priority::TwoLevel: return value < least ? 0 : 1;  // seed 002 Section III-B: high and low only
  }
  return 0;
}

std::vector<int> kernels_by_priority(const std::vector<std::optional<int>>& priorities, const Device& d, Priority p) {
  std::vector<int> order(priorities.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return priority_rank(priorities[static_cast<size_t>(a)], d, p) < priority_rank(priorities[static_cast<size_t>(b)], d, p);
  });
  return order;
}

bool sm_allowed(const std::vector<int>& tpcs, const Device& d, int sm, Partition p) {
  switch (p) {
    case Partition::Ignore: return true;
    case Partition::AllowedSms: break;
  }
  return tpcs.empty() || std::find(tpcs.begin(), tpcs.end(), d.tpc_of(sm)) != tpcs.end();
}

bool priorities_matter(const Scenario& s, Priority p) {
  for (const auto& k : s.kernels)
    if (priority_rank(k.priority, s.device, p) != priority_rank(s.kernels[0].priority, s.device, p)) return true;
  return false;
}

bool partition_matters(const Scenario& s, Partition p) {
  for (const auto& k : s.kernels)
    for (int sm = 0; sm < s.device.sms; ++sm)
      if (!sm_allowed(k.tpcs, s.device, sm, p)) return true;
  return false;
}

}  // namespace tbcheck::model
