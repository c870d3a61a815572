// Internal to search/: witnesses for pairs that differ in a cluster mechanism. Structures
// with thread block clusters on small devices of two GPCs, sampled by both simulators and asked of Z3.
#pragma once
#include <array>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/smt/bounds.hpp"

namespace tbcheck::search::detail {

// Whether h1 and h2 choose differently in cluster_gpc or cluster_spread and both place clusters on `full`
// (CC 9.0 with a GPC map, and options the cluster rule is defined for).
bool cluster_pair(const model::Hypothesis& h1, const model::Hypothesis& h2, const model::Device& full);

// Small devices of `full`'s per-SM limits with two GPCs: one TPC of one GPC and one or two of another
// (GPCs of equal and of unequal room); empty when `full` has fewer than two GPCs.
std::vector<model::Device> cluster_devices(const model::Device& full);

// A clustered structure: an optional unclustered kernel first (its block count, 0: none), then one
// kernel of `clusters` clusters of `dims`. Its blocks and, as fixed parts of the pair query's bounds, its
// cluster dims and grid.
struct ClusterStructure {
  int before = 0;
  int clusters = 1;
  std::array<int, 3> dims{1, 1, 1};
  std::vector<int> blocks() const;
  smt::ParamBounds bounds(const smt::ParamBounds& base) const;
  std::string text() const;
};

// The clustered structures, fewest blocks first.
std::vector<ClusterStructure> cluster_structures();

// A scenario of structure `st` on `d` on which the two simulators disagree, among `samples` random
// parameter draws (re-checked by separates), shortened; none if no draw separates.
std::optional<model::Scenario> cluster_sample(const model::Hypothesis& h1, const model::Hypothesis& h2,
                                              const model::Device& d, const ClusterStructure& st, int samples,
                                              std::mt19937& rng);

}  // namespace tbcheck::search::detail
