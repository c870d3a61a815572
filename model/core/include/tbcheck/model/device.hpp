// A GPU's per-SM limits as the scheduler sees them (the fields of corpus/devices/*.json).
// Loading validates every field; built-in devices are embedded from corpus/devices.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/model/json_reader.hpp"

namespace tbcheck::model {

// Threads in a warp on every GPU the seeds study (seed 000 Section II, seed 002 Equation 1): the unit of
// W = ceil(threads / 32), of register allocation per warp and of every synthesized thread count.
inline constexpr int kThreadsPerWarp = 32;

// The stream priorities a device offers, as cudaDeviceGetStreamPriorityRange reports them: CUDA's
// convention, `greatest` (the highest priority) is the lower number. Where the range comes from.
struct PriorityRange {
  int least = 0;
  int greatest = 0;
  std::string source;
  bool contains(int p) const { return p <= least && p >= greatest; }
  bool operator==(const PriorityRange&) const = default;
};

struct Device {
  std::string name;
  std::string description;
  std::string cc;  // compute capability, "8.6"
  int sms = 0;
  int sms_per_tpc = 2;  // SMs 2t and 2t+1 form TPC t
  int pbs_per_sm = 4;   // processing blocks (warp schedulers) per SM
  int max_blocks_per_sm = 0;
  int max_warps_per_sm = 0;
  int max_threads_per_block = 0;
  int regs_per_sm = 0;
  int reg_alloc_unit = 0;  // registers per warp allocation step (256 = 8 regs x 32 threads)
  int max_regs_per_thread = 0;
  std::vector<int> smem_configs_kb;  // ascending
  int smem_alloc_unit = 0;
  int smem_reserved_per_block = 0;  // bytes the runtime adds to every block
  int max_smem_per_block = 0;       // bytes, excluding the reserved part
  std::vector<int> gpc_of_tpc;      // optional
  std::string gpc_source;           // where the GPC map comes from (required with gpc_of_tpc)
  // Every SM index tbcheck uses (schedules, TPCs, the GPC map, recordings) is the scheduler's: the order
  // in which the GPU hands SMs out. Where the GPU's %smid numbers SMs otherwise (an H200 interleaves its
  // GPCs), smid_of_sm[i] is the %smid of scheduler SM i, measured per GPU (floor-sweeping differs from
  // die to die); empty: %smid is the scheduler's order. smid_source says where the order comes from.
  std::vector<int> smid_of_sm;
  std::string smid_source;
  std::optional<PriorityRange> stream_priorities;  // optional
  // How the front end issues the blocks of a large grid (read by hypotheses with `issue: device`,
  // optional in files): whether a decision places a pair of blocks, and how many consecutive decisions
  // are handed out as one pass (their first blocks, then their second blocks) from which decision on.
  bool issue_pairs = false;
  int issue_pass = 1;
  int issue_pass_from = 0;

  // The architecture a compute capability belongs to ("Volta" for 7.0 and 7.2, "Turing" for 7.5, ...):
  // what `predict` falls back to when a device has no recording of its own.
  std::string architecture() const;

  int tpcs() const { return sms / sms_per_tpc; }
  int cc_major() const;  // 9 for "9.0"
  bool has_clusters() const { return cc_major() >= 9; }  // thread block clusters: CC 9.0 and later
  int tpc_of(int sm) const { return sm / sms_per_tpc; }
  int max_smem_config_bytes() const { return smem_configs_kb.back() * 1024; }
  int warp_slots_per_pb() const { return max_warps_per_sm / pbs_per_sm; }
  int regs_per_pb() const { return regs_per_sm / pbs_per_sm; }
  // Smallest supported configuration (bytes) >= bytes; nullopt if none.
  std::optional<int> config_at_least(int64_t bytes) const;

  json to_json() const;
  // Every field alike (what to_json() writes): memos keyed by a device compare with this, not with its JSON.
  bool operator==(const Device&) const = default;
};

// Reads and validates a device object. `where` names the file, `path` the field prefix.
Device device_from_json(const json& j, const std::string& where, const std::string& path = "device");

// Built-in devices (embedded from corpus/devices/*.json), in name order.
const std::vector<Device>& builtin_devices();
// A built-in device by name; an unknown name is an InputError listing the valid ones.
const Device& builtin_device(const std::string& name, const std::string& where, const std::string& field);

}  // namespace tbcheck::model
