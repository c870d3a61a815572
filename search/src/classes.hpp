// Exhaustive simulation of one-kernel structures over parameter classes: every kernel of the synthesis
// query's parameter domain is covered by one simulated representative (docs/synthesis.md "Minimality").
#pragma once
#include <cstdint>
#include <future>
#include <memory>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/smt/bounds.hpp"

namespace tbcheck::search::detail {

// The kernel shared-memory values of the query's domain (bytes, 128-byte steps up to the device's
// per-block maximum; {0} when the bounds do not vary it) grouped into classes that no rule of the given
// hypotheses on d tells apart in a one-kernel structure: each class ascending, classes by their smallest member.
std::vector<std::vector<int>> smem_classes(const std::vector<const model::Hypothesis*>& hs, const model::Device& d,
                                           const smt::ParamBounds& params);

// One hypothesis' schedules of a one-kernel structure, one per (shared-memory class of that hypothesis
// alone, warps, registers), each packed exactly into 64 bits; computed once per run and shared by every
// pair of the hypothesis (a table another thread is filling is waited for). Usable from several threads.
class OneKernelTables {
 public:
  struct Table {
    std::vector<std::vector<int>> classes;  // smem_classes({h}, d, params)
    std::vector<int> regs;                  // the registers of the domain, ascending
    int max_warps = 0;
    std::vector<uint64_t> packed;           // [class][warps - 1][regs index]; kNotRun where h refuses it
    bool exact = true;                      // false: a schedule did not fit 64 bits (then no table is used)
  };
  static constexpr uint64_t kNotRun = ~uint64_t{0};
  const Table& table(const model::Hypothesis& h, const model::Device& d, int blocks, const smt::ParamBounds& params);

 private:
  std::mutex m_;
  std::map<std::string, std::shared_future<std::shared_ptr<const Table>>> tables_;
};

// The same kernel with the representative of its class: the smallest shared memory of its class and
// duration 1 (one kernel's schedule scales with its duration). For the property test of the classes.
model::Kernel class_representative(const model::Kernel& k, const std::vector<std::vector<int>>& classes);

enum class Enumerated { Separates, Inseparable, NotCovered };
std::string_view to_string(Enumerated);

struct EnumerationResult {
  Enumerated outcome = Enumerated::NotCovered;
  std::optional<model::Scenario> witness;  // Separates: the first separating representative
  std::string reason;                      // NotCovered: why the classes do not cover the structure
  long representatives = 0;                // kernels simulated (under both hypotheses)
};

// Whether some kernel of the domain of `params` launched as one kernel of `blocks` blocks on d separates
// h1 from h2 (detail::separates), decided by simulating every combination of warps, registers and
// shared-memory class at duration 1. NotCovered where the completeness argument does not hold: controls,
// local memory, or a dispatcher that reads the device's GPC map (gpc-priority).
// Whether one hypothesis gives a one-kernel structure one schedule for every kernel of the domain it runs
// (a constant-schedule lemma, proved by exhaustion over its table): Constant with the schedule as (SM,
// start) per block, Varies, or NotCovered (as enumerate_one_kernel declines, or a table beyond its packing).
enum class Constancy { Constant, Varies, NotCovered };
struct ConstantSchedule {
  Constancy outcome = Constancy::NotCovered;
  std::vector<std::pair<int, int64_t>> schedule;
};
ConstantSchedule constant_one_kernel_schedule(OneKernelTables& tables, const model::Hypothesis& h,
                                              const model::Device& d, int blocks, const smt::ParamBounds& params);

// `tables`: shared per-hypothesis schedules (null: simulate every representative under both hypotheses).
EnumerationResult enumerate_one_kernel(const model::Hypothesis& h1, const model::Hypothesis& h2,
                                       const model::Device& d, int blocks, const smt::ParamBounds& params,
                                       OneKernelTables* tables = nullptr);

}  // namespace tbcheck::search::detail
