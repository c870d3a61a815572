// Shared by the libFuzzer targets: parse the input as JSON text, and run the simulator on what loaded.
// InputError is the expected rejection of bad input; any other exception or a broken schedule aborts.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/simulator.hpp"

namespace tbcheck::fuzz {

inline constexpr int kMaxSimulatedBlocks = 2000;

inline model::json parse(const uint8_t* data, size_t size) {
  return model::parse_json_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
}

// The schedule must place every block of every kernel on a real SM, for exactly its duration.
inline void check_schedule(const model::Scenario& s, const model::Schedule& sch) {
  if (sch.kernels.size() != s.kernels.size()) std::abort();
  for (size_t k = 0; k < s.kernels.size(); ++k) {
    const auto& blocks = sch.kernels[k].blocks;
    if (blocks.size() != static_cast<size_t>(s.kernels[k].blocks)) std::abort();
    for (const auto& b : blocks)
      if (b.sm < 0 || b.sm >= s.device.sms || b.start < 0 || b.end != b.start + s.kernels[k].duration) std::abort();
  }
}

// Simulates the scenario under one hypothesis when it is small enough; a kernel infeasible under the
// hypothesis (InputError) is a fine outcome.
inline void simulate_checked(const model::Scenario& s, const model::Hypothesis& h) {
  if (s.total_blocks() > kMaxSimulatedBlocks) return;
  try {
    check_schedule(s, model::simulate(s, h));
  } catch (const model::InputError&) {
  }
}

inline void simulate_alg1_and_round_robin(const model::Scenario& s) {
  for (const char* name : {"alg1", "round-robin"}) simulate_checked(s, *model::find_builtin_hypothesis(name));
}

// A small fixed workload (mixed sizes, shared memory, local memory, a shared stream) for running
// a fuzzed device or hypothesis through the simulator.
inline model::Scenario probe_scenario(const model::Device& d) {
  model::Scenario s;
  s.device = d;
  s.device_builtin = false;
  const int threads[] = {32, 256, 96, 1024, 64};
  const int regs[] = {32, 64, 24, 16, 255};
  const int smem[] = {0, 4096, 200, 40000, 0};
  for (int i = 0; i < 5; ++i) {
    model::Kernel k;
    k.name = "p" + std::to_string(i);
    k.blocks = 3 + 2 * i;
    k.threads = std::min(threads[i], d.max_threads_per_block);
    k.regs = std::min(regs[i], d.max_regs_per_thread);
    k.smem = std::min(smem[i], d.max_smem_per_block);
    k.local = i == 2 ? 1024 : 0;
    if (i >= 3) k.stream = 7;
    k.duration = 1 + i % 3;
    s.kernels.push_back(k);
  }
  return s;
}

// A folder of this process for the targets that read files (the campaign folder): RAM-backed where the
// machine has /dev/shm, removed at exit.
inline std::filesystem::path& scratch_path() {
  static std::filesystem::path p;
  return p;
}
inline const std::filesystem::path& scratch_dir() {
  std::filesystem::path& d = scratch_path();
  if (d.empty()) {
    std::error_code ec;
    const std::filesystem::path base =
        std::filesystem::is_directory("/dev/shm", ec) ? std::filesystem::path("/dev/shm") : std::filesystem::temp_directory_path();
    d = base / ("tbcheck-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::atexit([] {
      std::error_code e;
      std::filesystem::remove_all(scratch_path(), e);
    });
  }
  return d;
}

// The importers' targets: a built-in device and a time unit picked by the input's size (the unit among the
// edges: a tiny one once made every duration 0), so one input runs under several.
inline std::pair<const model::Device*, double> device_and_unit(size_t size) {
  static const double kUnits[] = {20.0, 1e-300, 1e6, 0.001};
  const auto& devices = model::builtin_devices();
  return {&devices[size % devices.size()], kUnits[(size / devices.size()) % 4]};
}

// The input cut at a separator line into at most `n` parts (the last takes the rest), so one input can
// give several files.
inline std::vector<std::string> split_parts(const uint8_t* data, size_t size, size_t n) {
  const std::string text(reinterpret_cast<const char*>(data), size), sep = "\n--\n";
  std::vector<std::string> parts;
  size_t at = 0;
  while (parts.size() + 1 < n) {
    const size_t next = text.find(sep, at);
    if (next == std::string::npos) break;
    parts.push_back(text.substr(at, next - at));
    at = next + sep.size();
  }
  parts.push_back(text.substr(at));
  parts.resize(n);
  return parts;
}

}  // namespace tbcheck::fuzz
