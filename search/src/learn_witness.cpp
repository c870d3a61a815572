// Witnesses for pairs that differ in how warps meet processing blocks (learn.hpp, pb_hole_search): every
// kernel puts one block on each SM, so short kernels leave holes on particular PBs of every SM at once.
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "tbcheck/search/learn.hpp"
#include "witness.hpp"

namespace tbcheck::search {

bool differ_in_warp_placement(const model::Hypothesis& a, const model::Hypothesis& b) {
  return a.warps != b.warps || a.skip_on_multiple_of_4 != b.skip_on_multiple_of_4;
}

std::optional<PbHoleWitness> pb_hole_search(const model::Hypothesis& a, const model::Hypothesis& b,
                                            const model::Device& d, int max_tries) {
  const int max_w = d.max_threads_per_block / model::kThreadsPerWarp, sm_warps = d.max_warps_per_sm;
  constexpr int kShort = 1, kLong = 3;  // kernels that retire early, and those that hold their warps
  struct Part {
    int warps, duration;
  };
  // Prefixes: one or two small kernels (1-3 warps), each retiring early or late; the first on PB 0.
  std::vector<std::vector<Part>> prefixes;
  for (int w1 = 1; w1 <= 3; ++w1)
    for (int d1 : {kLong, kShort}) prefixes.push_back({{w1, d1}});
  for (int w1 = 1; w1 <= 3; ++w1)
    for (int d1 : {kLong, kShort})
      for (int w2 = 1; w2 <= 3; ++w2)
        for (int d2 : {kShort, kLong}) prefixes.push_back({{w1, d1}, {w2, d2}});
  model::Scenario s;
  s.device = d;
  s.device_builtin = true;
  int tries = 0;
  for (const auto& prefix : prefixes) {
    int used = 0;
    for (const auto& p : prefix) used += p.warps;
    // Free warps once the fillers are in, largest first (fewest filler kernels), and a probe kernel of
    // about that many warps: whether it fits depends on where the holes are and on the pointer.
    for (int free = std::min(max_w, sm_warps - used); free >= 1; --free) {
      const int fill = sm_warps - used - free;
      for (int probe = free - 1; probe <= std::min(max_w, free + 3); ++probe) {
        if (probe < 1) continue;
        for (int probe_duration : {1, 2}) {
          if (++tries > max_tries) return std::nullopt;
          std::vector<Part> parts = prefix;
          for (int left = fill; left > 0; left -= std::min(left, max_w)) parts.push_back({std::min(left, max_w), kLong});
          parts.push_back({probe, probe_duration});
          s.kernels.assign(parts.size(), model::Kernel{});
          for (size_t k = 0; k < parts.size(); ++k) {
            auto& kr = s.kernels[k];
            kr.name = fmt::format("k{}", k + 1);
            kr.blocks = d.sms;
            kr.threads = parts[k].warps * model::kThreadsPerWarp;
            kr.regs = 32;
            kr.duration = parts[k].duration;
          }
          if (detail::separates(s, a, b)) return PbHoleWitness{s, tries};
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace tbcheck::search
