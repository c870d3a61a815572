// Scenarios (a device and an ordered list of kernels, each launched at its release time) and their
// loading. Per-block resource needs (W, R, S of docs/design.md) are derived here, once.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/model/device.hpp"

namespace tbcheck::model {

struct Kernel {
  std::string name;
  int blocks = 1;
  std::optional<std::pair<int, int>> grid;  // 2-D grid (x, y); blocks = x * y
  int threads = 32;
  int regs = 32;
  int smem = 0;   // bytes per block, static + dynamic
  int local = 0;  // bytes of local memory per thread
  std::optional<int> stream;
  int duration = 1;  // time units, every block of the kernel
  // Controls users set. The list order is the launch order, so release times never
  // decrease along it; a kernel is launched (becomes eligible) at its release time.
  std::optional<int> priority;              // CUDA stream priority: lower is higher, in the device's range
  int64_t release = 0;                      // "release_time", time units
  std::vector<int> tpcs;                    // TPCs the kernel may use; empty: all
  std::optional<std::array<int, 3>> cluster;  // thread block cluster dimensions (CC >= 9.0)

  int cluster_size() const { return cluster ? (*cluster)[0] * (*cluster)[1] * (*cluster)[2] : 1; }

  int warps() const { return (threads + kThreadsPerWarp - 1) / kThreadsPerWarp; }                 // W
  int regs_per_warp(const Device& d) const;                           // R
  int smem_per_block(const Device& d) const;                          // S (rounded + reserved)
  json to_json() const;
};

struct Scenario {
  Device device;
  bool device_builtin = true;  // written back by name when true
  std::vector<Kernel> kernels;
  // The launch-to-launch state of the CUDA context the scenario starts in (docs/results/h200.md, finding 7):
  // numbering gpc-ring starts the first launch at this multi-TPC GPC (counted in the SM order, modulo their
  // number) instead of the first. 0 is a fresh context, which the CUDA oracle gives every repetition.
  int gpc_pointer = 0;

  int total_blocks() const;
  int kernel_index(const std::string& name) const;  // -1 if absent
  json to_json() const;
};

// Largest gpc_pointer a scenario may give (it counts GPCs, so any GPU's fit far below).
inline constexpr int kMaxGpcPointer = 255;

// Most blocks a thread block cluster may have: the portable limit of the CUDA programming guide
// (larger clusters need cudaFuncAttributeNonPortableClusterSizeAllowed, which tbcheck does not set).
inline constexpr int kMaxPortableClusterBlocks = 8;

// The register counts the probe kernel is compiled for (seed 000 Section III-B): 24, 32, ..., 248, 255.
// Synthesis, the random generator and the CUDA oracle all draw from this one list.
const std::vector<int>& probe_register_counts();

// Keys a scenario object may have; cases add theirs.
extern const std::vector<std::string> kScenarioKeys;
// Keys a corpus case may have (scenario keys included); one list for the case loader and for
// scenario files that are whole cases. Synthesized cases add their provenance keys.
extern const std::vector<std::string> kCaseKeys;

// Reads device + kernels from an object (other keys are the caller's business) and checks every
// kernel against the device limits (threads, regs, smem, blocks, duration) with named reasons.
Scenario scenario_from_json(const json& j, const std::string& where);
// scenario_from_json without the exception, for scenarios search builds as JSON (a corpus case retargeted
// to another device, a lifted or boundary case), where "the device cannot run it" is an answer: nullopt,
// with `why` (when given) set to the message the InputError would carry.
std::optional<Scenario> try_scenario_from_json(const json& j, const std::string& where, std::string* why = nullptr);
// The same checks of j's kernels against a device the caller already holds (j's `device` is not read):
// search rewrites kernels of a scenario hundreds of times, and parsing its device again each time was a
// measurable part of learn.
Scenario scenario_from_json(const json& j, Device device, bool device_builtin, const std::string& where);
std::optional<Scenario> try_scenario_from_json(const json& j, const Device& device, bool device_builtin,
                                               const std::string& where, std::string* why = nullptr);
Scenario load_scenario_file(const std::string& path);

}  // namespace tbcheck::model
