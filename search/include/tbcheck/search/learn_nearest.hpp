// When no candidate fits: how near each of a pool of candidates comes to what the device did, so a user sees
// which mechanism to question (the first observation each fails and the block where it goes wrong).
#pragma once
#include <string>
#include <vector>

#include "tbcheck/search/learn.hpp"
#include "tbcheck/search/learn_numeric.hpp"

namespace tbcheck::search {

// The `keep` nearest of `pool` over the seen cases (named by `case_ids`, in the same order): fewest cases
// refuted, then fewest blocks misplaced, then pool order. A case a candidate cannot run counts every block.
std::vector<NearMiss> nearest_misses(const std::vector<model::Hypothesis>& pool, const std::vector<SeenCase>& seen,
                                     const std::vector<std::string>& case_ids, size_t keep);

}  // namespace tbcheck::search
