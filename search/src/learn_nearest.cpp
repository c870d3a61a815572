// Near misses when none fits (learn_nearest.hpp): every observed case replayed on each candidate of a pool,
// mispredicted cases and misplaced blocks counted, the first difference kept as the place to look.
#include "tbcheck/search/learn_nearest.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "tbcheck/model/simulator.hpp"

namespace tbcheck::search {

std::vector<NearMiss> nearest_misses(const std::vector<model::Hypothesis>& pool, const std::vector<SeenCase>& seen,
                                     const std::vector<std::string>& case_ids, size_t keep) {
  std::vector<NearMiss> out;
  for (const auto& h : pool) {
    NearMiss n;
    n.name = h.name;
    n.hypothesis = h;
    for (size_t c = 0; c < seen.size(); ++c) {
      const model::Scenario& s = *seen[c].scenario;
      const model::Observation& o = *seen[c].observation;
      const std::optional<model::Schedule> predicted = model::try_simulate(s, h);
      int misplaced = 0;
      std::string where;
      if (!predicted) {
        misplaced = s.total_blocks();
        where = "predicts the case cannot run";
      } else {
        for (const auto& k : predicted->kernels) {
          const auto sms = o.sm_of_block.find(k.name);
          const auto starts = o.start_of_block.find(k.name);
          for (size_t b = 0; b < k.blocks.size(); ++b) {
            const bool sm_known = sms != o.sm_of_block.end() && b < sms->second.size();
            const bool start_known = starts != o.start_of_block.end() && b < starts->second.size();
            const bool wrong = (sm_known && sms->second[b] != k.blocks[b].sm) ||
                               (start_known && starts->second[b] != k.blocks[b].start);
            if (!wrong) continue;
            ++misplaced;
            if (where.empty())
              where = fmt::format("kernel {} block {}: predicted SM {} at {}, observed SM {} at {}", k.name, b,
                                  k.blocks[b].sm, k.blocks[b].start, sm_known ? fmt::to_string(sms->second[b]) : "?",
                                  start_known ? fmt::to_string(starts->second[b]) : "?");
          }
        }
      }
      if (misplaced == 0) continue;
      ++n.cases_refuted;
      n.blocks_misplaced += misplaced;
      if (n.first_case.empty()) {
        n.first_case = c < case_ids.size() ? case_ids[c] : fmt::to_string(c);
        n.where = where;
      }
    }
    out.push_back(std::move(n));
  }
  std::stable_sort(out.begin(), out.end(), [](const NearMiss& a, const NearMiss& b) {
    return a.cases_refuted != b.cases_refuted ? a.cases_refuted < b.cases_refuted : a.blocks_misplaced < b.blocks_misplaced;
  });
  if (out.size() > keep) out.resize(keep);
  return out;
}

}  // namespace tbcheck::search
