// Greedy set cover over cases: each case covers the hypothesis pairs whose simulated schedules
// differ on it; the greedy choice is within ln(n) of optimal and is what docs/design.md asks for.
#include "tbcheck/search/suite.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "tbcheck/model/simulator.hpp"
#include "tbcheck/model/stop.hpp"

namespace tbcheck::search {

std::vector<std::pair<size_t, size_t>> separated_pairs(const model::Case& c, const std::vector<model::Hypothesis>& hs) {
  std::vector<std::optional<model::Schedule>> s(hs.size());
  // A hypothesis the case cannot run under separates nothing for it (nullopt).
  for (size_t i = 0; i < hs.size(); ++i) s[i] = model::try_simulate(c.scenario, hs[i]);
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < hs.size(); ++i)
    for (size_t j = i + 1; j < hs.size(); ++j) {
      if (!s[i] || !s[j]) continue;
      bool differ = false;
      for (size_t k = 0; k < s[i]->kernels.size() && !differ; ++k)
        differ = s[i]->kernels[k].blocks != s[j]->kernels[k].blocks;
      if (differ) out.emplace_back(i, j);
    }
  return out;
}

SuiteResult greedy_suite(const std::vector<model::Case>& cases, const std::vector<model::Hypothesis>& hs,
                         const std::function<void()>& on_case_done) {
  SuiteResult r;
  std::vector<std::set<std::pair<size_t, size_t>>> covers;
  std::set<std::pair<size_t, size_t>> uncovered;
  for (const auto& c : cases) {
    model::throw_if_stopped();
    auto p = separated_pairs(c, hs);
    covers.emplace_back(p.begin(), p.end());
    uncovered.insert(p.begin(), p.end());
    if (on_case_done) on_case_done();
  }
  r.separable_pairs = uncovered.size();
  for (size_t i = 0; i < hs.size(); ++i)
    for (size_t j = i + 1; j < hs.size(); ++j)
      if (!uncovered.count({i, j})) r.unseparated.emplace_back(i, j);
  while (!uncovered.empty()) {
    size_t best = cases.size(), best_gain = 0;
    for (size_t c = 0; c < cases.size(); ++c) {
      size_t gain = 0;
      for (const auto& p : covers[c]) gain += uncovered.count(p);
      bool better = gain > best_gain ||
                    (gain == best_gain && gain > 0 && best < cases.size() &&
                     cases[c].scenario.total_blocks() < cases[best].scenario.total_blocks());
      if (better) {
        best = c;
        best_gain = gain;
      }
    }
    if (best == cases.size()) break;
    std::vector<std::pair<size_t, size_t>> now;
    for (const auto& p : covers[best])
      if (uncovered.erase(p)) now.push_back(p);
    r.chosen.push_back(best);
    r.covers.push_back(now);
  }
  return r;
}

}  // namespace tbcheck::search
