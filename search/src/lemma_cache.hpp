// The constant-schedule lemma cache of distinguish and learn: private to search, because it speaks smt's query
// types (and so includes Z3's headers), which search's public headers never reach.
#pragma once
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/smt/synthesis.hpp"

namespace tbcheck::search {

// Constant-schedule lemmas (smt/lemma.hpp), asked once per hypothesis, device and structure and shared
// by every pair of a run; usable from several threads (a lemma another thread is computing is waited for).
class LemmaCache {
 public:
  // h's schedule of `blocks` on d if Z3 proves it the same for every launchable parameter choice within
  // o.bounds; the candidate is h's schedule of the smallest kernels (1 warp, 32 registers, no shared
  // memory, duration 1). `spent` gets the Z3 seconds when this call asked Z3 (0 when cached).
  std::optional<smt::FixedSchedule> constant_schedule(const model::Hypothesis& h, const model::Device& d,
                                                      const std::vector<int>& blocks, const smt::QueryOptions& o,
                                                      double& spent);
  int asked() const;  // lemmas Z3 was asked for (not cache hits)

 private:
  mutable std::mutex m_;
  std::map<std::string, std::shared_future<std::optional<smt::FixedSchedule>>> cache_;
};

}  // namespace tbcheck::search
