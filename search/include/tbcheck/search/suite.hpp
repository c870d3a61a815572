// `suite`: the fewest corpus cases such that every pair of hypotheses that some case separates is
// separated by at least one chosen case (greedy set cover, smaller cases first on ties).
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/observation.hpp"

namespace tbcheck::search {

struct SuiteResult {
  std::vector<size_t> chosen;                      // indices into the cases, in the order picked
  std::vector<std::vector<std::pair<size_t, size_t>>> covers;  // pairs each chosen case newly separates
  std::vector<std::pair<size_t, size_t>> unseparated;          // pairs no case separates
  size_t separable_pairs = 0;
};

// Pairs (i < j, indices into hs) whose schedules differ on the case; a case one of them cannot
// run separates nothing for that pair.
std::vector<std::pair<size_t, size_t>> separated_pairs(const model::Case& c, const std::vector<model::Hypothesis>& hs);

// on_case_done is called once per case simulated (for progress; the cover itself takes no time to speak of).
SuiteResult greedy_suite(const std::vector<model::Case>& cases, const std::vector<model::Hypothesis>& hs,
                         const std::function<void()>& on_case_done = {});

}  // namespace tbcheck::search
