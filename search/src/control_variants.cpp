// Which stream priorities and TPC masks distinguish tries on a structure: the synthesis
// structure enumerates them, and both engines treat them as constants of the structure.
#include "control_variants.hpp"

#include <algorithm>
#include <optional>

#include "tbcheck/model/controls.hpp"
#include "tbcheck/model/options.hpp"

namespace tbcheck::search::detail {

bool priority_exercised(const model::Device& d, model::Priority a, model::Priority b) {
  return model::priority_on(a, d) != model::priority_on(b, d);
}

bool partition_exercised(const model::Device& d) { return model::masks_act_on(d); }

std::vector<smt::ParamBounds> control_variants(const model::Hypothesis& h1, const model::Hypothesis& h2,
                                               const model::Device& d, int kernels, const smt::ParamBounds& params,
                                               int mask_tpcs) {
  std::vector<smt::ParamBounds> out = {params};
  const size_t nk = static_cast<size_t>(kernels);
  if (priority_exercised(d, h1.priority, h2.priority) && kernels >= 2) {
    const int least = d.stream_priorities->least, greatest = d.stream_priorities->greatest;
    std::vector<int> levels = {least, least - 1, greatest};
    levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
    std::vector<size_t> digit(nk, 0);
    for (bool more = true; more;) {
      std::vector<std::optional<int>> prio(nk);
      for (size_t k = 0; k < nk; ++k) prio[k] = levels[digit[k]];
      if (model::kernels_by_priority(prio, d, h1.priority) != model::kernels_by_priority(prio, d, h2.priority)) {
        smt::ParamBounds p = params;
        p.priorities = prio;
        out.push_back(std::move(p));
      }
      more = false;
      for (size_t k = 0; k < nk && !more; ++k) {
        if (++digit[k] < levels.size()) more = true;
        else digit[k] = 0;
      }
    }
  }
  if (h1.partition != h2.partition && partition_exercised(d)) {
    // Each kernel either unmasked or confined to one TPC; at least one mask.
    const size_t choices = static_cast<size_t>(mask_tpcs > 0 ? std::min(mask_tpcs, d.tpcs()) : d.tpcs()) + 1;
    std::vector<size_t> digit(nk, 0);
    for (bool more = true; more;) {
      std::vector<std::vector<int>> tpcs(nk);
      bool any = false;
      for (size_t k = 0; k < nk; ++k)
        if (digit[k] > 0) {
          tpcs[k] = {static_cast<int>(digit[k]) - 1};
          any = true;
        }
      if (any) {
        smt::ParamBounds p = params;
        p.tpcs = tpcs;
        out.push_back(std::move(p));
      }
      more = false;
      for (size_t k = 0; k < nk && !more; ++k) {
        if (++digit[k] < choices) more = true;
        else digit[k] = 0;
      }
    }
  }
  // Without controls the two options act alike: when nothing else differs, the plain structure is
  // settled by the options and needs no query.
  model::Hypothesis a = h1;
  a.priority = h2.priority;
  a.partition = h2.partition;
  if (a.same_options(h2)) out.erase(out.begin());  // none left: the structure cannot separate them
  return out;
}

}  // namespace tbcheck::search::detail
