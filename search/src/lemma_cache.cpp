// The constant-schedule lemma cache (lemma_cache.hpp): one Z3 lemma per hypothesis' options, device and
// structure, computed once by whichever pair asks first and waited for by the others.
#include "lemma_cache.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/simulator.hpp"
#include "tbcheck/smt/lemma.hpp"

namespace tbcheck::search {

std::optional<smt::FixedSchedule> LemmaCache::constant_schedule(const model::Hypothesis& h, const model::Device& d,
                                                                const std::vector<int>& blocks,
                                                                const smt::QueryOptions& o, double& spent) {
  spent = 0;
  // Keyed by what the answer depends on: the options (not the name), the device's limits, the
  // structure and the parameter ranges.
  std::string options;
  for (const auto& x : model::option_settings(h)) options += fmt::format("{}={};", x.mechanism, x.value);
  const std::string key = fmt::format("{}|{}|{}|{}|{},{},{},{},{}|{}|{}", options, d.to_json().dump(),
                                      fmt::join(blocks, ","), o.timeout_ms, o.bounds.max_warps, o.bounds.max_duration,
                                      o.bounds.vary_regs, o.bounds.vary_smem, o.bounds.max_local, smt::to_string(o.sort),
                                      o.arith_solver);
  std::promise<std::optional<smt::FixedSchedule>> mine;
  {
    std::unique_lock<std::mutex> lock(m_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      auto answer = it->second;
      lock.unlock();  // wait for another thread's answer without holding the cache
      return answer.get();
    }
    cache_.emplace(key, mine.get_future().share());
  }
  std::optional<smt::FixedSchedule> answer;
  {
    // The candidate: h's schedule of the smallest kernels of this structure.
    model::Scenario s;
    s.device = d;
    s.device_builtin = false;
    for (size_t k = 0; k < blocks.size(); ++k) {
      model::Kernel kr;
      kr.name = fmt::format("k{}", k + 1);
      kr.blocks = blocks[k];
      kr.threads = model::kThreadsPerWarp;
      kr.regs = 32;
      kr.smem = 0;
      kr.duration = 1;
      s.kernels.push_back(kr);
    }
    // The smallest kernels may not run under h on d: then no lemma.
    if (auto sch = model::try_simulate(s, h)) {
      smt::FixedSchedule expected;
      for (const auto& k : sch->kernels)
        for (const auto& p : k.blocks) expected.emplace_back(p.sm, p.start);
      smt::QueryResult q = smt::prove_schedule(h, d, blocks, expected, o);
      spent = q.seconds;
      if (q.outcome == smt::QueryOutcome::None) answer = expected;
    }
  }
  mine.set_value(answer);
  return answer;
}

int LemmaCache::asked() const {
  std::lock_guard<std::mutex> lock(m_);
  return static_cast<int>(cache_.size());
}

}  // namespace tbcheck::search
