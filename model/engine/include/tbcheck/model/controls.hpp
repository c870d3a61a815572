// The priority and partition options as the two engines share them: the order in which stream
// priorities serve kernels, and the SMs a TPC mask leaves a kernel (docs/controls.md).
#pragma once
#include <optional>
#include <vector>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"

namespace tbcheck::model {

struct Scenario;

// The rank the dispatcher serves a kernel of stream priority `priority` at (lower first; launch order
// among equal ranks). A kernel without a priority has CUDA's default, 0 (the least on every device
// CUDA documents). ignore: every kernel 0; strict: the priority itself; two-level: 0 above the device's
// least priority, 1 at it.
int priority_rank(std::optional<int> priority, const Device& d, Priority p);

// Kernel indices in the order a dispatcher with every kernel released at 0 serves them: a stable sort by
// priority_rank (the SMT engine's one head in list order, applied to this order).
std::vector<int> kernels_by_priority(const std::vector<std::optional<int>>& priorities, const Device& d, Priority p);

// Whether the kernel's TPC mask (`tpcs`, empty: all) lets it use `sm` under the partition option.
bool sm_allowed(const std::vector<int>& tpcs, const Device& d, int sm, Partition p);

// Whether the options change anything for the scenario: some kernels' ranks differ; some mask binds.
bool priorities_matter(const Scenario& s, Priority p);
bool partition_matters(const Scenario& s, Partition p);

}  // namespace tbcheck::model
