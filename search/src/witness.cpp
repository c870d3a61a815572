// Witness post-processing for distinguish (witness.hpp): every witness is re-checked by both simulators
// before it is used, made smaller by simulation, and lifted from the reduced device to the full one.
#include "witness.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/distinguish.hpp"

namespace tbcheck::search::detail {

int total_duration(const model::Scenario& s) {
  int t = 0;
  for (const auto& k : s.kernels) t += k.duration;
  return t;
}

model::Scenario lift(const model::Scenario& s, const model::Device& full, int factor) {
  model::Scenario out = s;
  out.device = full;
  out.device_builtin = true;
  for (auto& k : out.kernels) k.blocks *= factor;
  return out;
}

bool realizable(const model::Scenario& s, const model::Schedule& sch) {
  const size_t nk = s.kernels.size();
  std::vector<int64_t> first(nk), last(nk);
  for (size_t k = 0; k < nk; ++k) {
    first[k] = sch.kernels[k].blocks.front().start;
    last[k] = 0;
    for (const auto& b : sch.kernels[k].blocks) last[k] = std::max(last[k], b.end);
  }
  for (size_t a = 0; a < nk; ++a)
    for (size_t b = a + 1; b < nk; ++b)
      if (last[a] == last[b] && !(first[a] == first[b] && s.kernels[a].duration == s.kernels[b].duration)) return false;
  return true;
}

bool schedules_separate(const model::Scenario& s, const model::Schedule& x, const model::Schedule& y) {
  return !first_difference(x, y).empty() && realizable(s, x) && realizable(s, y);
}

bool separates(const model::Scenario& s, const model::Hypothesis& a, const model::Hypothesis& b) {
  auto x = model::try_simulate(s, a);
  auto y = x ? model::try_simulate(s, b) : std::nullopt;
  if (!x || !y) return false;  // infeasible under one of them: not a usable witness
  return schedules_separate(s, *x, *y);
}

model::Scenario shorten(model::Scenario s, const model::Hypothesis& a, const model::Hypothesis& b) {
  for (bool again = true; again;) {
    again = false;
    for (auto& k : s.kernels)
      while (k.duration > 1) {
        --k.duration;
        if (separates(s, a, b)) {
          again = true;
          continue;
        }
        ++k.duration;
        break;
      }
  }
  return s;
}

model::Scenario truncate_after_difference(const model::Scenario& s, const model::Hypothesis& a, const model::Hypothesis& b) {
  model::Schedule x = model::simulate(s, a), y = model::simulate(s, b);
  for (size_t k = 0; k < s.kernels.size(); ++k)
    for (size_t i = 0; i < x.kernels[k].blocks.size(); ++i)
      if (!(x.kernels[k].blocks[i] == y.kernels[k].blocks[i])) {
        model::Scenario t = s;
        t.kernels.resize(k + 1);
        t.kernels[k].blocks = static_cast<int>(i) + 1;
        return separates(t, a, b) ? t : s;
      }
  return s;
}

}  // namespace tbcheck::search::detail
