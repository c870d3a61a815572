// Internal to search/: witnesses for pairs that differ in a cluster mechanism (issue 17 part B). Structures
// with thread block clusters on small devices of two GPCs, searched by both simulators.
#pragma once
#include <optional>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"

namespace tbcheck::search::detail {

// Whether h1 and h2 choose differently in cluster_gpc or cluster_spread and both place clusters on `full`
// (CC 9.0 with a GPC map, and options the cluster rule is defined for).
bool cluster_pair(const model::Hypothesis& h1, const model::Hypothesis& h2, const model::Device& full);

// Small devices of `full`'s per-SM limits with two GPCs: one TPC of one GPC and one or two of another
// (GPCs of equal and of unequal room); empty when `full` has fewer than two GPCs.
std::vector<model::Device> cluster_devices(const model::Device& full);

// A clustered scenario on one of cluster_devices(full) on which the two simulators disagree: structures
// smallest first (one clustered kernel, then an unclustered kernel before it), `samples` random parameter
// draws each. Not proved minimal: the SMT pair query has no clustered structures.
std::optional<model::Scenario> cluster_witness(const model::Hypothesis& h1, const model::Hypothesis& h2,
                                               const model::Device& full, int samples, unsigned seed);

}  // namespace tbcheck::search::detail
