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

// OverLimit: covered by the argument, but the complete enumeration is larger than the caller allows.
enum class Enumerated { Separates, Inseparable, NotCovered, OverLimit };
std::string_view to_string(Enumerated);

struct EnumerationResult {
  Enumerated outcome = Enumerated::NotCovered;
  std::optional<model::Scenario> witness;  // Separates: the first separating representative
  std::string reason;                      // NotCovered: why the classes do not cover the structure
  long representatives = 0;                // kernels simulated (under both hypotheses)
  long long size = 0;                      // scenarios the complete enumeration needs (saturates at LLONG_MAX)
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

// Structures of several kernels (docs/synthesis.md "Structures of several kernels"): each kernel takes
// one representative per distinct pair (BlockNeeds under h1, BlockNeeds under h2), i.e. every warp count
// of the domain times one register count per distinct pair of registers per warp as the two hypotheses
// read them times one shared-memory amount per distinct pair of S as they read it; the durations take
// every tuple of 1..max_duration whose greatest common divisor is 1. The representatives of one kernel,
// as the product of three axes (a kernel each is built on demand: there may be far too many to list).
struct NeedsRepresentatives {
  int max_warps = 0;      // warps 1..max_warps, every one
  std::vector<int> regs;  // one register count per distinct (R under h1, R under h2), ascending
  std::vector<int> smem;  // one shared-memory amount per distinct (S under h1, S under h2), ascending
  long long size() const { return static_cast<long long>(max_warps) * static_cast<long long>(regs.size() * smem.size()); }
  // The i-th representative (0 <= i < size(): warps slowest, then registers, then shared memory), 1 block,
  // duration 1.
  model::Kernel kernel(long long i) const;
};
NeedsRepresentatives needs_representatives(const model::Hypothesis& h1, const model::Hypothesis& h2,
                                           const model::Device& d, const smt::ParamBounds& params);
// The duration tuples of `kernels` kernels the enumeration runs (gcd 1, smallest total first).
std::vector<std::vector<int>> duration_tuples(int kernels, int max_duration);
// The greatest common divisor of a tuple of durations. Every instant of a scenario released at 0 is a sum of
// durations, so scaling every duration by g scales every schedule by g: a tuple with gcd g > 1 acts as the tuple
// divided by g, in separation and in which retirements tie.
int common_divisor(const std::vector<int>& durations);

// Whether some scenario of the domain of `params` with the structure `blocks` (one entry per kernel, each
// in its own stream, released at 0) separates h1 from h2 on d (detail::separates), by simulating every
// combination of representatives and duration tuples. One kernel: enumerate_one_kernel (its classes are
// coarser). OverLimit, without simulating, when the product exceeds `max_scenarios`; NotCovered as for
// one kernel.
EnumerationResult enumerate_structure(const model::Hypothesis& h1, const model::Hypothesis& h2, const model::Device& d,
                                      const std::vector<int>& blocks, const smt::ParamBounds& params,
                                      long long max_scenarios, OneKernelTables* tables = nullptr);

}  // namespace tbcheck::search::detail
