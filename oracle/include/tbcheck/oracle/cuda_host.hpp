// The CUDA oracle's host logic that needs no GPU: probe variant choice, nanoseconds to model time
// units, the launch-order check, device identity, MPS, the launch plan and green contexts (pure functions).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/schedule.hpp"
#include "tbcheck/oracle/oracle.hpp"

namespace tbcheck::oracle::cuda {

// Where each repetition starts from. The GPU keeps, from one launch to the next, where it last placed
// blocks (an H200 begins a launch at the GPC after the one its context last dispatched to,
// docs/results/h200.md), so repetitions in one context differ by history; a fresh context starts from
// the same state every time. Context: each repetition in a fresh primary context (cudaDeviceReset);
// None: all repetitions in one context, each from the state the last one left.
enum class Settle { None, Context };
std::string_view to_string(Settle s);
std::optional<Settle> settle_from_string(std::string_view s);

// How the cuda oracle runs; `tbcheck run --time-unit-ms / --force-device / --settle` set the first three.
struct CudaOptions {
  Settle settle = Settle::Context;
  double time_unit_ms = 20.0;   // one model time unit of block duration, in milliseconds
  bool force_device = false;    // run although the GPU differs from the scenario's device (recorded)
  int device_index = 0;         // CUDA device ordinal
  int order_retries = 3;        // extra attempts of a repetition whose launch order is not confirmed
  double watchdog_slack_s = 10.0;  // added to the worst-case serial run time before a run is abandoned
  int max_connections = 32;     // CUDA_DEVICE_MAX_CONNECTIONS (32 is the hardware's maximum)
};

// The model time unit in ns (rounded to a whole ns); an InputError when not positive.
uint64_t unit_ns(const CudaOptions& o);

// The probe kernel's register variants (seed 000 Section III-B): 24, 32, ..., 248, 255.
using model::probe_register_counts;

// One compiled probe variant as the device reports it (cudaFuncGetAttributes).
struct Variant {
  int requested_regs = 0;  // the variant's -maxrregcount
  int num_regs = 0;        // numRegs: what the scheduler allocates per thread
  int local_bytes = 0;     // localSizeBytes per thread (spills grow as the cap shrinks)
  int static_smem = 0;     // sharedSizeBytes (0 by design of the probe)
  int max_threads = 1024;  // maxThreadsPerBlock of the compiled function
};
// The variants with their nominal numbers (numRegs = the cap, no local, no static smem): what a
// dry run shows without a GPU; a real run replaces them with the attributes the device reports.
std::vector<Variant> nominal_variants();

// Exact: a variant has numRegs == regs. SameAllocation: none does, but one allocates the same
// registers per warp (ceil(n x 32 / unit) x unit), which every shipped hypothesis treats alike
// (the Olmedo threshold 32 is a multiple of the 8-register granule). None: refused.
enum class VariantMatch { Exact, SameAllocation, None };
std::string_view to_string(VariantMatch);
struct VariantChoice {
  VariantMatch match = VariantMatch::None;
  int index = -1;       // into the variant list
  std::string reason;   // for None: the kernel, its regs and the register counts available
};
VariantChoice choose_variant(const std::vector<Variant>& variants, const model::Kernel& k, const model::Device& d);

// Nanoseconds since `origin_ns` to model units: round half up, (ns - origin + unit/2) / unit.
// Nearest, not truncation: a block's timestamp lags the instant it models by its dispatch latency
// (microseconds, against a unit of milliseconds), so nearest puts it on the intended instant.
// Timestamps before the origin map to 0 (the origin is the earliest start, so none should be).
int64_t ns_to_units(uint64_t ns, uint64_t origin_ns, uint64_t unit);

// The timer's resolution as the data shows it (docs/recordings.md): the smallest positive gap between
// two distinct timestamps, in units rounded up, at least 1. Shared by the CUDA oracle and import-examiner.
int64_t timer_tick_units(std::vector<uint64_t> timestamps_ns, uint64_t unit);

// What the probe recorded for one block (start_ns == 0: the block never wrote its record).
struct BlockRecord {
  uint64_t start_ns = 0, end_ns = 0;
  int sm_start = -1, sm_end = -1;
  int cluster_id = -1, cluster_rank = -1;  // %clusterid (linear) and %cluster_ctarank; -1: not recorded
};
// One per scenario kernel, in scenario order; blocks in block-index order.
struct KernelRecord {
  std::string name;
  std::vector<BlockRecord> blocks;
};

// The GPU reports %smid; tbcheck numbers SMs in the scheduler's order (model::Device::smid_of_sm).
// scheduler_sm maps one %smid (itself where the device has no order; -1 for one outside the order,
// which schedule_from_records then reports); to_scheduler_order maps every record in place.
int scheduler_sm(const model::Device& d, int smid);
void to_scheduler_order(const model::Device& d, std::vector<KernelRecord>& recs);

// One repetition as the GPU recorded it, before rounding to model units: per kernel, every block's SM
// and its start and end in ns after the repetition's earliest start (the origin, absolute, kept too).
// Model units of milliseconds hide the order of events microseconds apart; this keeps it.
nlohmann::json raw_records_json(const std::vector<KernelRecord>& recs);

enum class RecordCheck { Complete, Incomplete };
struct RecordedSchedule {
  RecordCheck status = RecordCheck::Complete;
  std::vector<std::string> problems;  // Incomplete: missing records, SM changes, SMs out of range
  std::vector<std::string> notes;     // Complete but worth recording: durations off by a unit or more
  model::Schedule schedule;           // starts and ends in units relative to the earliest block start
};
RecordedSchedule schedule_from_records(const model::Scenario& s, const std::vector<KernelRecord>& recs, uint64_t unit);

// Confirmed: every pair of kernels launched at time 0 started in list order and every stream
// successor started after its predecessor's last block. Tied: consistent, but some first blocks
// carry the same timestamp (timer resolution); accepted and counted. Violated: a later kernel
// started first. Unconfirmed: records are missing. Violated and Unconfirmed runs are repeated.
enum class OrderCheck { Confirmed, Tied, Violated, Unconfirmed };
std::string_view to_string(OrderCheck);
struct OrderResult {
  OrderCheck status = OrderCheck::Confirmed;
  std::string reason;
  int ties = 0;
};
OrderResult check_launch_order(const model::Scenario& s, const std::vector<KernelRecord>& recs);

// The GPU as cudaGetDeviceProperties and the driver/runtime version calls describe it.
struct DeviceIdentity {
  std::string name;
  std::string cc;  // "8.6"
  int sms = 0;
  int max_blocks_per_sm = 0;
  int max_warps_per_sm = 0;
  int regs_per_sm = 0;
  int max_threads_per_block = 0;
  int64_t smem_per_sm = 0;             // sharedMemPerMultiprocessor (the largest configuration)
  int64_t smem_per_block_optin = 0;    // sharedMemPerBlockOptin
  int64_t reserved_smem_per_block = 0;  // reservedSharedMemPerBlock
  int driver_version = 0;              // cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;             // cudaRuntimeGetVersion
  std::string uuid;
  std::string pci_bus_id;
  nlohmann::json to_json() const;
};

enum class IdentityMatch { Match, Mismatch };
struct IdentityCheck {
  IdentityMatch status = IdentityMatch::Match;
  std::vector<std::string> differences;  // "SM count: rtx3090 has 82, the GPU has 84"
};
// The scheduler-relevant limits must agree (CC, SMs, blocks, warps, registers, threads, shared
// memory); the marketing name is recorded, never compared.
IdentityCheck compare_identity(const model::Device& want, const DeviceIdentity& have);

// MPS changes how blocks reach the SMs, so a run under it is refused. Evidence: the MPS control
// pipe in $CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps), or a client-side MPS setting.
enum class MpsState { Absent, Active };
struct MpsProbe {
  MpsState state = MpsState::Absent;
  std::string evidence;
};
using GetEnv = std::function<std::optional<std::string>(const std::string&)>;
using PathExists = std::function<bool(const std::string&)>;
MpsProbe detect_mps(const GetEnv& getenv, const PathExists& exists);
MpsProbe detect_mps();  // the process environment and file system

struct KernelLaunch {
  std::string name;
  int launch_order = 0;      // position in the scenario list: launches are issued in this order
  int regs = 0;              // what the scenario asks for
  int variant_regs = 0;      // the chosen variant's -maxrregcount
  int num_regs = 0;          // its numRegs
  VariantMatch match = VariantMatch::Exact;
  int local_bytes = 0;       // the variant's localSizeBytes (the scenario's `local` is not settable)
  int threads = 0;
  int grid_x = 1, grid_y = 1;
  int static_smem = 0, dynamic_smem = 0;
  bool smem_optin = false;   // dynamic > 48 KB: cudaFuncSetAttribute(MaxDynamicSharedMemorySize)
  int stream = 0;            // index of the oracle's stream
  std::optional<int> scenario_stream;
  uint64_t duration_ns = 0;
  // Controls: the stream's priority (cudaStreamCreateWithPriority), the launch instant
  // after the run's origin (the host waits until then), the cluster dimensions (cudaLaunchKernelEx
  // with cudaLaunchAttributeClusterDimension; {1,1,1}: a plain launch) and the partition index.
  std::optional<int> priority;
  uint64_t release_ns = 0;
  std::array<int, 3> cluster = {1, 1, 1};
  int partition = -1;  // into LaunchPlan::partitions; -1: the whole GPU
};
// A set of TPCs some kernels are confined to, run as one green context of `sms` SMs.
struct Partition {
  std::vector<int> tpcs;
  int sms = 0;
};
// The SM resource a green-context split starts from: CUdevSmResource's smCount, minSmPartitionSize
// (the smallest group a split makes) and smCoscheduledAlignment (groups are multiples of it).
// Nominal: the per-architecture guideline of cuda.h's green-context section (what a dry run shows);
// Driver: read with cuDeviceGetDevResource(CU_DEV_RESOURCE_TYPE_SM) at run time.
enum class SmResourceSource { Nominal, Driver };
std::string_view to_string(SmResourceSource);
struct SmResource {
  int sm_count = 0;
  int min_partition = 1;
  int alignment = 1;
  SmResourceSource source = SmResourceSource::Nominal;
  nlohmann::json to_json() const;
};
// cuda.h (CUDA 12.4+, "Green Contexts"): CC 6.x and 7.x: at least 2 SMs, multiples of 2; 8.x: at
// least 4, multiples of 2; 9.0 and later: at least 8, multiples of 8.
SmResource nominal_sm_resource(const model::Device& d);

// One green context per partition, in partition order: cuDevSmResourceSplitByCount asks for one
// group of `min_count` SMs (the request rounded up to the minimum and the alignment) and the rest
// is split again for the next partition (through a carrier green context: a split's output cannot
// be split directly). TooLarge: the rounded groups need more SMs than the GPU has.
enum class GreenSplitFit { Fits, TooLarge };
std::string_view to_string(GreenSplitFit);
struct GreenGroup {
  int partition = 0;
  int requested_sms = 0;  // the partition's TPCs x SMs per TPC
  int min_count = 0;      // what the split is asked for
};
struct GreenSplitPlan {
  GreenSplitFit status = GreenSplitFit::Fits;
  std::string reason;
  SmResource resource;
  std::vector<GreenGroup> groups;
  nlohmann::json to_json() const;
};
GreenSplitPlan plan_green_split(const std::vector<Partition>& partitions, const SmResource& r);
struct LaunchPlan {
  uint64_t unit_ns = 0;
  uint64_t watchdog_ns = 0;
  int streams = 0;
  bool nominal = true;  // register counts from nominal_variants(), not yet read from a device
  std::vector<KernelLaunch> kernels;
  // cudaFuncAttributeMaxDynamicSharedMemorySize is a property of the variant, not of a launch:
  // kernels sharing a variant need the largest of their opt-in requests, set once before any
  // launch (the last kernel's value would make a larger one's launch fail: cudaErrorInvalidValue).
  std::map<int, int> smem_attribute_of_variant;  // variant_regs -> bytes, opt-in kernels only
  std::vector<Partition> partitions;
  GreenSplitPlan green;  // with nominal_sm_resource (no groups when there is no partition)
  std::vector<std::string> notes;
  nlohmann::json to_json() const;
  std::string to_text() const;  // a human table
};
enum class PlanStatus { Ok, Unsupported };
struct PlanResult {
  PlanStatus status = PlanStatus::Ok;
  std::string reason;
  LaunchPlan plan;
};
// One stream per kernel unless the scenario shares streams; more streams than the hardware's
// connections alias and are refused; so are registers no variant realizes and shared memory the
// probe's static part exceeds. Watchdog: every block run one after another, plus the slack.
PlanResult build_launch_plan(const model::Scenario& s, const std::vector<Variant>& variants, const CudaOptions& o);

// Stream priorities: the scenario's value must lie in the range the GPU reports
// (cudaDeviceGetStreamPriorityRange), since CUDA silently clamps values outside it.
enum class PriorityFit { Fits, OutOfRange };
struct PriorityCheck {
  PriorityFit status = PriorityFit::Fits;
  std::string reason;
};
PriorityCheck check_priority(const std::string& kernel, int priority, int least, int greatest);

// Partitions: the distinct TPC sets of the scenario's kernels, each either identical to or
// disjoint from every other (green contexts split the GPU into disjoint SM groups); "" or why not.
std::string plan_partitions(const model::Scenario& s, std::vector<Partition>& out, std::vector<int>& partition_of_kernel);

// Green contexts (cuGreenCtxCreate over cuDevSmResourceSplitByCount) exist from CUDA 12.4 on; they
// choose how many SMs a context gets, not which, so the SM set is recorded, not requested.
enum class GreenContexts { Available, Unsupported };
struct GreenContextSupport {
  GreenContexts status = GreenContexts::Unsupported;
  std::string reason;
};
GreenContextSupport green_context_support(int driver_version, bool built_with_green_contexts);

// Green contexts choose which SMs they get and the driver does not say which (only how many), so
// the oracle measures them: a census kernel of one block per SM (the whole shared memory per
// block), twice as many blocks as granted SMs, runs in each green context before the scenario, and
// the SMs its blocks ran on, with those of the scenario's own blocks, are the partition's SM set.
// Same: that set is exactly the scenario's TPCs. Effective: it is a different whole set of TPCs
// (rounding to the minimum, or another placement); the recorded case carries it as the kernels'
// `tpcs` (the requested ones stay in the metadata), so `validate` predicts with the partition the
// GPU really used. Inexpressible: it is no set of whole TPCs, or the census saw fewer SMs than
// were granted; the run ends `unsupported` with the sets recorded.
enum class PartitionMatch { Same, Effective, Inexpressible };
std::string_view to_string(PartitionMatch);
struct GrantedPartition {
  int partition = 0;
  std::vector<int> requested_tpcs;
  int requested_sms = 0, min_count = 0, granted_sms = 0;  // granted: the group's smCount
  std::vector<int> census_sms;  // SMs the census blocks ran on
  std::vector<int> block_sms;   // SMs the scenario's blocks of this partition ran on
  std::vector<int> seen_sms;    // the union: the partition's measured SM set
  std::vector<int> effective_tpcs;
  PartitionMatch match = PartitionMatch::Same;
  std::string reason;
  nlohmann::json to_json() const;
};
GrantedPartition map_granted_partition(const Partition& p, const GreenGroup& g, int granted_sms,
                                       const std::vector<int>& census_sms, const std::vector<int>& block_sms,
                                       const model::Device& d);
// The SMs the blocks of each partition's kernels ran on (plan.partitions order), added to `acc`.
void add_block_sms(const LaunchPlan& plan, const std::vector<KernelRecord>& recs, std::vector<std::vector<int>>& acc);
// The scenario as it ran: every partitioned kernel's `tpcs` replaced by its partition's effective TPCs.
model::Scenario effective_scenario(const model::Scenario& s, const LaunchPlan& plan, const std::vector<GrantedPartition>& g);

// The GPC-map probe (CC 9.0): each launched cluster's blocks share a GPC, so SMs that ever share a
// cluster share a GPC. From the SMs of every cluster, the GPC of every TPC (GPCs numbered by their
// lowest SM). Incomplete when some SM never ran a block or the two SMs of a TPC land in different
// groups (then the map would be a guess).
enum class GpcMapStatus { Complete, Incomplete };
struct GpcMap {
  GpcMapStatus status = GpcMapStatus::Complete;
  std::vector<int> gpc_of_tpc;
  std::vector<std::vector<int>> sm_groups;  // the SMs found together in clusters, each group ascending
  std::vector<std::string> problems;
};
GpcMap gpc_map_from_clusters(int sms, int sms_per_tpc, const std::vector<std::vector<int>>& sms_of_each_cluster);

// `tbcheck probe-gpc` on the GPU: clusters of every size from the largest the GPU allows down to 2,
// of a block that fills an SM's shared memory (so a cluster's blocks are on distinct SMs), launched
// repeatedly; the SMs of every cluster as recorded. One size is not enough: a GPC whose SM count is no
// multiple of the size keeps the same SMs idle in every wave, and those SMs never join a group. NoDevice without a GPU or CUDA build, Unsupported below CC 9.0.
struct GpcProbe {
  RunStatus status = RunStatus::Ok;
  std::string reason;
  DeviceIdentity identity;
  std::vector<int> cluster_sizes;  // largest first
  int launches = 0;
  std::vector<std::vector<int>> sms_of_each_cluster;  // %smid
  // %smid of each block of a one-block-per-SM first wave on the empty GPU, per launch: the order in
  // which the scheduler hands out SMs (docs/results/h200.md).
  std::vector<std::vector<int>> first_waves;
};

// The scheduler's SM order from first waves: the first launch's, when it lists every SM once; the
// positions where later launches differ are named (an H200 alternates its first SMs between launches).
enum class SmOrderStatus { Measured, Unusable };
struct SmOrder {
  SmOrderStatus status = SmOrderStatus::Measured;
  std::vector<int> smid_of_sm;
  std::vector<int> varying;  // positions whose %smid differs between launches
  std::string problem;       // Unusable: why
};
SmOrder sm_order_from_waves(int sms, const std::vector<std::vector<int>>& first_waves);
// Cluster SM lists from %smid into the scheduler's order (unknown %smid kept as -1).
std::vector<std::vector<int>> clusters_in_order(const std::vector<int>& smid_of_sm, const std::vector<std::vector<int>>& clusters);
// The raw measurement (identity, sizes, every cluster's SMs, the groups and problems found), written
// beside the device file and also when the map is incomplete, so a GPU run is never lost.
nlohmann::json gpc_probe_json(const GpcProbe& probe, const GpcMap& map);
GpcProbe probe_gpc(const CudaOptions& o);

// The device file probe-gpc writes: `base` (the built-in device the GPU matches) with the measured
// map and its source (GPU name, UUID, driver, cluster size); an InputError when the map is
// incomplete or the base's SM count differs from the GPU's.
model::Device device_with_gpc_map(const model::Device& base, const GpcProbe& probe, const GpcMap& map,
                                  const SmOrder& order);

// The cuda oracle with options (make_oracle("cuda") uses the defaults). In a build without CUDA
// every run is NoDevice with the reason.
std::unique_ptr<Oracle> make_cuda_oracle(const CudaOptions& o);
// Whether this binary has the CUDA oracle (TBCHECK_WITH_CUDA on and nvcc found at configure time).
bool built_with_cuda();

}  // namespace tbcheck::oracle::cuda
