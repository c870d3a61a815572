// The `cuda` oracle: runs a scenario's kernels as probe-kernel variants on the GPU and reads back
// every block's %smid and %globaltimer. Host code only; the kernels and their launches are in kernels/.
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>

#include <cuda.h>  // driver types only: driver calls go through cudaGetDriverEntryPoint (no libcuda link)
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kinds.hpp"
#include "probe_abi.h"
#include "tbcheck/model/error.hpp"
#include "tbcheck/oracle/cuda_host.hpp"

namespace tbcheck::oracle {
namespace cuda {
namespace {

#include "probe_variants.inc"

// A failed CUDA call: what, where (file:line) and the runtime's error name and text.
class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const char* call, const char* file, int line)
      : std::runtime_error(fmt::format("{} failed at {}:{}: {} ({})", call, file, line, cudaGetErrorName(code),
                                       cudaGetErrorString(code))),
        code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

void check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess) throw CudaError(e, call, file, line);
}
#define TBCHECK_CUDA(call) check((call), #call, __FILE__, __LINE__)

// Green contexts (SM partitions) are in the driver API from CUDA 12.4 on. The binary does not link
// libcuda (the static runtime loads it, so a machine without a driver gets an error, not a failed
// start); the driver functions are looked up through the runtime, and a driver without one of them
// is an `unsupported` outcome naming it.
#if defined(CUDA_VERSION) && CUDA_VERSION >= 12040
#define TBCHECK_GREEN_CONTEXTS 1
#else
#define TBCHECK_GREEN_CONTEXTS 0
#endif
constexpr bool kBuiltWithGreenContexts = TBCHECK_GREEN_CONTEXTS;

#if TBCHECK_GREEN_CONTEXTS
// A failed driver-API call: what, where (file:line) and the driver's error name and text.
class DriverError : public std::runtime_error {
 public:
  DriverError(CUresult code, const std::string& what) : std::runtime_error(what), code_(code) {}
  CUresult code() const { return code_; }

 private:
  CUresult code_;
};

// The driver functions the green-context path calls, resolved at run time.
struct DriverApi {
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;
  CUresult (*get_error_string)(CUresult, const char**) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_dev_resource)(CUdevice, CUdevResource*, CUdevResourceType) = nullptr;
  CUresult (*sm_resource_split_by_count)(CUdevResource*, unsigned*, const CUdevResource*, CUdevResource*, unsigned,
                                         unsigned) = nullptr;
  CUresult (*dev_resource_generate_desc)(CUdevResourceDesc*, CUdevResource*, unsigned) = nullptr;
  CUresult (*green_ctx_create)(CUgreenCtx*, CUdevResourceDesc, CUdevice, unsigned) = nullptr;
  CUresult (*green_ctx_destroy)(CUgreenCtx) = nullptr;
  CUresult (*green_ctx_get_dev_resource)(CUgreenCtx, CUdevResource*, CUdevResourceType) = nullptr;
  // CUDA 12.5 on; under a 12.4 driver the stream is made inside the green context converted to a
  // CUcontext (cuCtxFromGreenCtx, cuCtxPushCurrent, cuStreamCreateWithPriority, cuCtxPopCurrent).
  CUresult (*green_ctx_stream_create)(CUstream*, CUgreenCtx, unsigned, int) = nullptr;
  CUresult (*ctx_from_green_ctx)(CUcontext*, CUgreenCtx) = nullptr;
  CUresult (*ctx_push_current)(CUcontext) = nullptr;
  CUresult (*ctx_pop_current)(CUcontext*) = nullptr;
  CUresult (*stream_create_with_priority)(CUstream*, unsigned, int) = nullptr;
  CUresult (*stream_destroy)(CUstream) = nullptr;
};

// The driver function `name` in its CUDA `version` ABI; false when the driver lacks it.
template <class F>
bool resolve(F& fn, const char* name, unsigned version) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  const cudaError_t e = cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &q);
#else
  (void)version;
  const cudaError_t e = cudaGetDriverEntryPoint(name, &p, cudaEnableDefault, &q);
#endif
  if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || p == nullptr) {
    cudaGetLastError();
    return false;
  }
  fn = reinterpret_cast<F>(p);
  return true;
}

// Every function or the names of those the driver lacks ("" when all resolved).
std::string load_driver_api(DriverApi& api) {
  std::vector<std::string> missing;
  auto need = [&](auto& fn, const char* name) {
    if (!resolve(fn, name, 12040)) missing.push_back(name);
  };
  need(api.get_error_name, "cuGetErrorName");
  need(api.get_error_string, "cuGetErrorString");
  need(api.device_get, "cuDeviceGet");
  need(api.device_get_dev_resource, "cuDeviceGetDevResource");
  need(api.sm_resource_split_by_count, "cuDevSmResourceSplitByCount");
  need(api.dev_resource_generate_desc, "cuDevResourceGenerateDesc");
  need(api.green_ctx_create, "cuGreenCtxCreate");
  need(api.green_ctx_destroy, "cuGreenCtxDestroy");
  need(api.green_ctx_get_dev_resource, "cuGreenCtxGetDevResource");
  need(api.ctx_from_green_ctx, "cuCtxFromGreenCtx");
  need(api.ctx_push_current, "cuCtxPushCurrent");
  need(api.ctx_pop_current, "cuCtxPopCurrent");
  need(api.stream_create_with_priority, "cuStreamCreateWithPriority");
  need(api.stream_destroy, "cuStreamDestroy");
  if (!resolve(api.green_ctx_stream_create, "cuGreenCtxStreamCreate", 12050)) api.green_ctx_stream_create = nullptr;
  return missing.empty() ? "" : fmt::format("{}", fmt::join(missing, ", "));
}

void check_driver(const DriverApi& api, CUresult e, const char* call, const char* file, int line) {
  if (e == CUDA_SUCCESS) return;
  const char* name = "?";
  const char* text = "?";
  if (api.get_error_name) api.get_error_name(e, &name);
  if (api.get_error_string) api.get_error_string(e, &text);
  throw DriverError(e, fmt::format("{} failed at {}:{}: {} ({})", call, file, line, name ? name : "?", text ? text : "?"));
}
#define TBCHECK_CU(api, call) check_driver((api), (call), #call, __FILE__, __LINE__)

// The green contexts of a run, one per partition (plus the carriers their splits went through),
// destroyed after every stream in them (declare before Streams).
struct GreenSet {
  const DriverApi& api;
  std::vector<CUgreenCtx> contexts;  // per partition
  std::vector<int> granted;          // smCount of each partition's group
  std::vector<CUgreenCtx> carriers;
  explicit GreenSet(const DriverApi& a) : api(a) {}
  ~GreenSet() {
    for (auto it = contexts.rbegin(); it != contexts.rend(); ++it) api.green_ctx_destroy(*it);
    for (auto it = carriers.rbegin(); it != carriers.rend(); ++it) api.green_ctx_destroy(*it);
  }
  GreenSet(const GreenSet&) = delete;
  GreenSet& operator=(const GreenSet&) = delete;

  // A non-blocking stream of partition p's green context with the scenario's priority (0: default).
  cudaStream_t make_stream(size_t p, int priority) const {
    CUstream st = nullptr;
    if (api.green_ctx_stream_create) {
      TBCHECK_CU(api, api.green_ctx_stream_create(&st, contexts[p], CU_STREAM_NON_BLOCKING, priority));
      return st;
    }
    CUcontext c = nullptr;
    TBCHECK_CU(api, api.ctx_from_green_ctx(&c, contexts[p]));
    TBCHECK_CU(api, api.ctx_push_current(c));
    const CUresult e = api.stream_create_with_priority(&st, CU_STREAM_NON_BLOCKING, priority);
    CUcontext popped = nullptr;
    api.ctx_pop_current(&popped);
    TBCHECK_CU(api, e);
    return st;
  }
};

// Driver errors that mean "this split cannot be made here", not a failing device.
bool is_configuration_error(CUresult e) {
  return e == CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION || e == CUDA_ERROR_INVALID_RESOURCE_TYPE ||
         e == CUDA_ERROR_NOT_SUPPORTED || e == CUDA_ERROR_INVALID_VALUE;
}

// A green context over one split's output (a descriptor of that one resource).
CUgreenCtx green_context_of(const DriverApi& api, CUdevResource& r, CUdevice dev) {
  CUdevResourceDesc desc = nullptr;
  TBCHECK_CU(api, api.dev_resource_generate_desc(&desc, &r, 1));
  CUgreenCtx ctx = nullptr;
  TBCHECK_CU(api, api.green_ctx_create(&ctx, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  return ctx;
}

// One green context per group of the split plan, in order: split one group of min_count SMs off
// the current resource; the rest becomes a carrier green context whose resource the next split
// starts from. "" or why the driver could not make them (a named outcome, not a device failure).
std::string make_green_contexts(const DriverApi& api, CUdevice dev, const GreenSplitPlan& sp, CUdevResource current,
                                GreenSet& out) {
  for (size_t i = 0; i < sp.groups.size(); ++i) {
    const GreenGroup& g = sp.groups[i];
    CUdevResource group{}, rest{};
    unsigned n = 1;
    const CUresult e = api.sm_resource_split_by_count(&group, &n, &current, &rest, 0, static_cast<unsigned>(g.min_count));
    if (e != CUDA_SUCCESS && is_configuration_error(e)) {
      const char* name = "?";
      api.get_error_name(e, &name);
      return fmt::format("cuDevSmResourceSplitByCount cannot make a group of {} SMs for partition {} from {} SMs: {}",
                         g.min_count, g.partition, current.sm.smCount, name ? name : "?");
    }
    TBCHECK_CU(api, e);
    if (n < 1 || group.sm.smCount == 0)
      return fmt::format("cuDevSmResourceSplitByCount made no group of {} SMs for partition {} from {} SMs", g.min_count,
                         g.partition, current.sm.smCount);
    out.contexts.push_back(green_context_of(api, group, dev));
    out.granted.push_back(static_cast<int>(group.sm.smCount));
    if (i + 1 == sp.groups.size()) break;
    if (rest.sm.smCount == 0)
      return fmt::format("no SMs are left for partition {} after partition {} took {}", sp.groups[i + 1].partition,
                         g.partition, group.sm.smCount);
    out.carriers.push_back(green_context_of(api, rest, dev));
    TBCHECK_CU(api, api.green_ctx_get_dev_resource(out.carriers.back(), &current, CU_DEV_RESOURCE_TYPE_SM));
  }
  return "";
}
#endif  // TBCHECK_GREEN_CONTEXTS

// RAII for the few CUDA objects a run owns; destructors ignore errors (they run during unwinding).
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { TBCHECK_CUDA(cudaMalloc(&p, bytes)); }
  ~DeviceBuffer() { if (p) cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};
struct MappedFlag {
  uint32_t* host = nullptr;
  uint32_t* device = nullptr;
  MappedFlag() {
    TBCHECK_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&host), sizeof(uint32_t), cudaHostAllocMapped));
    TBCHECK_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device), host, 0));
    *host = 0;
  }
  ~MappedFlag() { if (host) cudaFreeHost(host); }
  MappedFlag(const MappedFlag&) = delete;
  MappedFlag& operator=(const MappedFlag&) = delete;
  void set(uint32_t v) { __atomic_store_n(host, v, __ATOMIC_SEQ_CST); }
};
struct Streams {
  std::vector<cudaStream_t> s;
  // priority[i]: the stream's CUDA priority (cudaStreamCreateWithPriority), absent: the default.
  // in_green(i): a stream of a partition's green context (made by the caller), or nullptr.
  Streams(int n, const std::vector<std::optional<int>>& priority,
          const std::function<cudaStream_t(int, int)>& in_green = nullptr) {
    for (int i = 0; i < n; ++i) {
      cudaStream_t st = nullptr;
      const auto& pr = priority[static_cast<size_t>(i)];
      if (in_green) st = in_green(i, pr.value_or(0));
      if (!st) {
        if (pr) TBCHECK_CUDA(cudaStreamCreateWithPriority(&st, cudaStreamNonBlocking, *pr));
        else TBCHECK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
      }
      s.push_back(st);
    }
  }
  ~Streams() {
    for (auto st : s) cudaStreamDestroy(st);
  }
  Streams(const Streams&) = delete;
  Streams& operator=(const Streams&) = delete;
};

// Environment the driver reads once, when the context is created: it must be set before the first
// CUDA call of the process. More connections keep streams from aliasing onto one hardware queue;
// eager module loading keeps the first launch of a variant from paying for its loading.
nlohmann::json prepare_environment(const CudaOptions& o) {
  nlohmann::json env;
  const char* had = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  if (!had || std::atoi(had) < o.max_connections) setenv("CUDA_DEVICE_MAX_CONNECTIONS", std::to_string(o.max_connections).c_str(), 1);
  env["CUDA_DEVICE_MAX_CONNECTIONS"] = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  if (!std::getenv("CUDA_MODULE_LOADING")) setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  env["CUDA_MODULE_LOADING"] = std::getenv("CUDA_MODULE_LOADING");
  return env;
}

DeviceIdentity identity_of(int dev) {
  cudaDeviceProp p{};
  TBCHECK_CUDA(cudaGetDeviceProperties(&p, dev));
  DeviceIdentity id;
  id.name = p.name;
  id.cc = fmt::format("{}.{}", p.major, p.minor);
  id.sms = p.multiProcessorCount;
  id.max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
  id.max_warps_per_sm = p.maxThreadsPerMultiProcessor / model::kThreadsPerWarp;
  id.regs_per_sm = p.regsPerMultiprocessor;
  id.max_threads_per_block = p.maxThreadsPerBlock;
  id.smem_per_sm = static_cast<int64_t>(p.sharedMemPerMultiprocessor);
  id.smem_per_block_optin = static_cast<int64_t>(p.sharedMemPerBlockOptin);
  id.reserved_smem_per_block = static_cast<int64_t>(p.reservedSharedMemPerBlock);
  TBCHECK_CUDA(cudaDriverGetVersion(&id.driver_version));
  TBCHECK_CUDA(cudaRuntimeGetVersion(&id.runtime_version));
  std::string uuid;
  for (size_t i = 0; i < sizeof(p.uuid.bytes); ++i) uuid += fmt::format("{:02x}", static_cast<unsigned char>(p.uuid.bytes[i]));
  id.uuid = uuid;
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof(bus), dev) == cudaSuccess) id.pci_bus_id = bus;
  return id;
}

// A run that produced no schedule: the named status, its reason and the metadata gathered so far.
RunResult hardware_outcome(RunStatus st, std::string reason, const nlohmann::json& meta) {
  RunResult r;
  r.status = st;
  r.reason = std::move(reason);
  r.observation.kind = model::ObservationKind::Hardware;
  r.metadata = meta;
  return r;
}

class CudaOracle : public Oracle {
 public:
  explicit CudaOracle(CudaOptions o) : o_(o) {}
  std::string name() const override { return "cuda"; }

  RunResult run(const model::Scenario& s, int repetitions) override {
    if (repetitions < 1) throw model::InputError("--repeat", "", "at least one repetition is needed");
    nlohmann::json meta = detail::base_metadata(name(), repetitions);
    meta["cuda"] = true;
    meta["time_unit_ms"] = o_.time_unit_ms;
    meta["probe_archs"] = kProbeArchs;
    auto outcome = [&](RunStatus st, std::string reason) { return hardware_outcome(st, std::move(reason), meta); };
    const MpsProbe mps = detect_mps();
    if (mps.state == MpsState::Active)
      return outcome(RunStatus::Unsupported, "MPS is active, and it changes how blocks reach the SMs: " + mps.evidence);
    meta["environment"] = prepare_environment(o_);

    int count = 0;
    if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
      cudaGetLastError();  // clear, so a later call in this process starts clean
      return outcome(RunStatus::NoDevice, fmt::format("no usable CUDA device: cudaGetDeviceCount: {} ({}); check the "
                                                      "GPU and its driver, or use --oracle sim:<hypothesis> or replay",
                                                      cudaGetErrorName(e), cudaGetErrorString(e)));
    }
    if (count == 0) return outcome(RunStatus::NoDevice, "no CUDA device is visible (cudaGetDeviceCount returned 0)");
    if (o_.device_index < 0 || o_.device_index >= count)
      return outcome(RunStatus::NoDevice, fmt::format("CUDA device {} does not exist; {} device(s) are visible",
                                                      o_.device_index, count));
    try {
      return run_on_device(s, repetitions, meta);
    } catch (const CudaError& e) {
      return outcome(RunStatus::DeviceError, e.what());  // meta as run_on_device left it
    }
#if TBCHECK_GREEN_CONTEXTS
    catch (const DriverError& e) {
      return outcome(RunStatus::DeviceError, e.what());
    }
#endif
  }

 private:
  RunResult run_on_device(const model::Scenario& s, int repetitions, nlohmann::json& meta) {
    auto outcome = [&](RunStatus st, std::string reason) { return hardware_outcome(st, std::move(reason), meta); };
    const int dev = o_.device_index;
    int mode = 0;
    TBCHECK_CUDA(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, dev));
    if (mode == cudaComputeModeProhibited)
      return outcome(RunStatus::NoDevice, fmt::format("CUDA device {} is in compute-prohibited mode", dev));
    const DeviceIdentity id = identity_of(dev);
    meta["device"] = id.to_json();
    const IdentityCheck ic = compare_identity(s.device, id);
    meta["device_matches"] = ic.status == IdentityMatch::Match;
    if (ic.status == IdentityMatch::Mismatch) {
      meta["device_differences"] = ic.differences;
      if (!o_.force_device)
        return outcome(RunStatus::Unsupported,
                       fmt::format("the GPU does not match the scenario's device {}: {} (--force-device runs anyway and "
                                   "records the differences)", s.device.name, fmt::join(ic.differences, "; ")));
      meta["device_forced"] = true;
    }
    TBCHECK_CUDA(cudaSetDevice(dev));

    Gathered acc;
    // Settle::Context: each repetition in a fresh primary context, since the GPU begins a launch where the
    // previous launches of the context left off (docs/results/h200.md); None: all in one context.
    if (o_.settle == Settle::Context) {
      for (int rep = 0; rep < repetitions; ++rep) {
        if (rep > 0) {
          TBCHECK_CUDA(cudaDeviceReset());
          TBCHECK_CUDA(cudaSetDevice(dev));
        }
        if (auto r = run_in_context(s, rep, 1, id, meta, acc)) return *r;
      }
    } else if (auto r = run_in_context(s, 0, repetitions, id, meta, acc)) {
      return *r;
    }
    const LaunchPlan& plan = acc.plan;
    auto& census = acc.census;
    auto& split = acc.split;
    auto& block_sms = acc.block_sms;
    auto& reps = acc.reps;
    const int64_t tick = acc.tick;
    const auto& attempts_log = acc.attempts_log;
    const auto& notes = acc.notes;
    const auto& raw = acc.raw;
    meta["attempts"] = attempts_log;
    meta["settle"] = to_string(o_.settle);
    meta["notes"] = notes;
    meta["raw_ns"] = raw;
    meta["sm_numbering"] = s.device.smid_of_sm.empty() ? "%smid" : "scheduler order (the device's smid_of_sm); raw_ns keeps %smid";
    // Partitions: the SMs each green context really used, against the TPCs the scenario asked for.
    std::vector<GrantedPartition> granted;
    nlohmann::json pj = nlohmann::json::array();
    for (size_t p = 0; p < census.size() && p < split.groups.size(); ++p) {
      block_sms.resize(plan.partitions.size());
#if TBCHECK_GREEN_CONTEXTS
      const int granted_sms = p < acc.granted_sms.size() ? acc.granted_sms[p] : 0;
#else
      const int granted_sms = 0;
#endif
      granted.push_back(map_granted_partition(plan.partitions[p], split.groups[p], granted_sms, census[p], block_sms[p],
                                              s.device));
      pj.push_back(granted.back().to_json());
    }
    if (!granted.empty()) meta["partitions"] = pj;
    for (const auto& g : granted)
      if (g.match == PartitionMatch::Inexpressible) return outcome(RunStatus::Unsupported, g.reason);
    RunResult result = combine_repetitions(s, std::move(reps), model::ObservationKind::Hardware, meta);
    // Launch order is confirmed (check_launch_order) before a repetition is used: no launch window.
    result.observation.resolution = model::Resolution{std::max<int64_t>(tick, 1), 0};
    for (const auto& g : granted)
      if (g.match == PartitionMatch::Effective) result.effective_scenario = effective_scenario(s, plan, granted);
    return result;
  }

  // What the repetitions of one run gather, over one CUDA context or several (Settle::Context).
  struct Gathered {
    LaunchPlan plan;
    std::vector<std::vector<int>> census;  // per partition: the SMs its green context's census ran on
    GreenSplitPlan split;
    std::vector<int> granted_sms;          // per partition: the SMs the driver granted
    std::vector<std::vector<int>> block_sms;  // per partition, over every usable repetition
    std::vector<model::Schedule> reps;
    int64_t tick = 0;  // the finest timer step any usable repetition shows (units)
    nlohmann::json attempts_log = nlohmann::json::array();
    nlohmann::json notes = nlohmann::json::array();
    nlohmann::json raw = nlohmann::json::array();  // every used repetition, in ns (raw_records_json)
  };

  // Repetitions first_rep .. first_rep + count - 1 in the current context: the variants read back, the
  // plan, streams (and green contexts) made, each repetition launched until its launch order is
  // confirmed. Every CUDA object made here is released before it returns. An outcome when the run
  // cannot go on.
  std::optional<RunResult> run_in_context(const model::Scenario& s, int first_rep, int count, const DeviceIdentity& id,
                                          nlohmann::json& meta, Gathered& acc) {
    auto outcome_of = [&](RunStatus st, std::string reason) { return hardware_outcome(st, std::move(reason), meta); };
    const int dev = o_.device_index;
    // The variants as this device sees them: numRegs and localSizeBytes are the compiler's, read back.
    std::vector<Variant> variants;
    nlohmann::json vj = nlohmann::json::array();
    for (const auto& e : kProbeVariants) {
      cudaFuncAttributes a{};
      if (cudaError_t err = cudaFuncGetAttributes(&a, e.func()); err != cudaSuccess) {
        cudaGetLastError();
        return outcome_of(RunStatus::Unsupported,
                       fmt::format("probe variant r{} cannot run on {} (CC {}): {} ({}); the probes were built for CUDA "
                                   "architectures {}; rebuild with -DTBCHECK_CUDA_ARCHS=<this CC>",
                                   e.requested_regs, id.name, id.cc, cudaGetErrorName(err), cudaGetErrorString(err),
                                   kProbeArchs));
      }
      variants.push_back(Variant{e.requested_regs, a.numRegs, static_cast<int>(a.localSizeBytes),
                                 static_cast<int>(a.sharedSizeBytes), a.maxThreadsPerBlock});
      vj.push_back({{"variant", fmt::format("r{}", e.requested_regs)}, {"num_regs", a.numRegs},
                    {"local_bytes", a.localSizeBytes}, {"static_smem", a.sharedSizeBytes},
                    {"max_threads", a.maxThreadsPerBlock}});
    }
    meta["variants"] = vj;
    const PlanResult pr = build_launch_plan(s, variants, o_);
    meta["plan"] = pr.plan.to_json();
    if (pr.status == PlanStatus::Unsupported) return outcome_of(RunStatus::Unsupported, pr.reason);
    acc.plan = pr.plan;
    const LaunchPlan& plan = acc.plan;
    // Controls: the GPU's own priority range is read and recorded, and a priority outside it is
    // refused (CUDA would clamp it). Clusters and partitions have no GPU path in this build yet.
    int least = 0, greatest = 0;
    TBCHECK_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    meta["stream_priority_range"] = {{"least", least}, {"greatest", greatest}};
    std::vector<std::optional<int>> stream_priority(static_cast<size_t>(plan.streams));
    for (const auto& k : plan.kernels) {
      if (k.priority) {
        const PriorityCheck pc = check_priority(k.name, *k.priority, least, greatest);
        if (pc.status != PriorityFit::Fits) return outcome_of(RunStatus::Unsupported, pc.reason);
        stream_priority[static_cast<size_t>(k.stream)] = k.priority;
      }
    }
    DeviceBuffer sink(sizeof(int32_t));
    MappedFlag abort_flag;
    // Partitions: one green context each, made before the streams that live in them; the census
    // measures each context's SMs (the driver grants a count, not a set).
    std::function<cudaStream_t(int, int)> green_stream;
    auto& census = acc.census;
    auto& split = acc.split;
    census.clear();
#if TBCHECK_GREEN_CONTEXTS
    DriverApi api;
    std::optional<GreenSet> green;
#endif
    if (!plan.partitions.empty()) {
      const GreenContextSupport g = green_context_support(id.driver_version, kBuiltWithGreenContexts);
      if (g.status != GreenContexts::Available)
        return outcome_of(RunStatus::Unsupported, "TPC partitions run as green contexts: " + g.reason);
#if TBCHECK_GREEN_CONTEXTS
      if (const std::string missing = load_driver_api(api); !missing.empty())
        return outcome_of(RunStatus::Unsupported,
                       fmt::format("TPC partitions run as green contexts: the driver (CUDA {}.{}) lacks {}",
                                   id.driver_version / 1000, id.driver_version % 1000 / 10, missing));
      {
        CUdevice cudev = 0;
        TBCHECK_CU(api, api.device_get(&cudev, dev));
        CUdevResource whole{};
        TBCHECK_CU(api, api.device_get_dev_resource(cudev, &whole, CU_DEV_RESOURCE_TYPE_SM));
        SmResource r;
        r.sm_count = static_cast<int>(whole.sm.smCount);
        r.min_partition = static_cast<int>(whole.sm.minSmPartitionSize);
        r.alignment = static_cast<int>(whole.sm.smCoscheduledAlignment);
        r.source = SmResourceSource::Driver;
        split = plan_green_split(plan.partitions, r);
        meta["green_contexts"] = split.to_json();
        meta["green_contexts"]["stream_create"] =
            api.green_ctx_stream_create ? "cuGreenCtxStreamCreate" : "cuCtxFromGreenCtx + cuStreamCreateWithPriority";
        if (split.status != GreenSplitFit::Fits) return outcome_of(RunStatus::Unsupported, split.reason);
        green.emplace(api);
        if (std::string why = make_green_contexts(api, cudev, split, whole, *green); !why.empty())
          return outcome_of(RunStatus::Unsupported, "TPC partitions run as green contexts: " + why);
        meta["green_contexts"]["granted_sms"] = green->granted;
        acc.granted_sms = green->granted;
        for (size_t p = 0; p < green->contexts.size(); ++p)
          census.push_back(census_of(*green, p, id, s.device, sink, abort_flag));
      }
      std::vector<int> partition_of_stream(static_cast<size_t>(plan.streams), -1);
      for (const auto& k : plan.kernels) partition_of_stream[static_cast<size_t>(k.stream)] = k.partition;
      green_stream = [&green, partition_of_stream](int stream, int priority) -> cudaStream_t {
        const int p = partition_of_stream[static_cast<size_t>(stream)];
        return p < 0 ? nullptr : green->make_stream(static_cast<size_t>(p), priority);
      };
#endif
    }
    for (const auto& [variant_regs, bytes] : plan.smem_attribute_of_variant)
      TBCHECK_CUDA(cudaFuncSetAttribute(variant_entry(variant_regs).func(), cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));

    std::vector<std::unique_ptr<DeviceBuffer>> records;
    for (const auto& k : s.kernels) records.push_back(std::make_unique<DeviceBuffer>(sizeof(TbcheckProbeRecord) * static_cast<size_t>(k.blocks)));
    Streams streams(plan.streams, stream_priority, green_stream);
    auto& block_sms = acc.block_sms;
    auto& reps = acc.reps;
    auto& tick = acc.tick;
    auto& attempts_log = acc.attempts_log;
    auto& notes = acc.notes;
    auto& raw = acc.raw;
    for (int rep = first_rep; rep < first_rep + count; ++rep) {
      for (int attempt = 0;; ++attempt) {
        std::vector<KernelRecord> recs;
        const RunStatus st = run_once(s, plan, records, sink, abort_flag, streams, recs);
        // What the GPU reported (%smid, ns) first; then SMs in the scheduler's order for everything else.
        const nlohmann::json raw_rep = raw_records_json(recs);
        to_scheduler_order(s.device, recs);
        if (st == RunStatus::Timeout)
          return outcome_of(RunStatus::Timeout,
                         fmt::format("repetition {} overran the watchdog ({:.1f} s: every block one after another plus "
                                     "{} s); the spinning blocks were told to stop and the run was abandoned",
                                     rep + 1, static_cast<double>(plan.watchdog_ns) / 1e9, o_.watchdog_slack_s));
        const OrderResult order = check_launch_order(s, recs);
        const RecordedSchedule rs = schedule_from_records(s, recs, plan.unit_ns);
        attempts_log.push_back({{"repetition", rep}, {"attempt", attempt}, {"order", to_string(order.status)},
                                {"order_reason", order.reason}, {"record_problems", rs.problems}});
        const bool usable = (order.status == OrderCheck::Confirmed || order.status == OrderCheck::Tied) &&
                            rs.status == RecordCheck::Complete;
        if (usable) {
          for (const auto& n : rs.notes) notes.push_back(fmt::format("repetition {}: {}", rep + 1, n));
          // %clusterid / %cluster_ctarank beside %smid, per clustered kernel (the last repetition's).
          for (size_t k = 0; k < plan.kernels.size(); ++k) {
            if (plan.kernels[k].cluster == std::array<int, 3>{1, 1, 1}) continue;
            nlohmann::json ids = nlohmann::json::array(), ranks = nlohmann::json::array();
            for (const auto& b : recs[k].blocks) {
              ids.push_back(b.cluster_id);
              ranks.push_back(b.cluster_rank);
            }
            meta["clusters"][recs[k].name] = {{"cluster_id", ids}, {"cluster_rank", ranks}};
          }
          add_block_sms(plan, recs, block_sms);
          raw.push_back(raw_rep);
          std::vector<uint64_t> stamps;
          for (const auto& k : recs)
            for (const auto& b : k.blocks) {
              stamps.push_back(b.start_ns);
              stamps.push_back(b.end_ns);
            }
          const int64_t t = timer_tick_units(std::move(stamps), plan.unit_ns);
          tick = tick == 0 ? t : std::min(tick, t);
          model::Schedule sch = rs.schedule;
          sch.hypothesis = name();
          reps.push_back(std::move(sch));
          repetition_done();
          break;
        }
        if (attempt >= o_.order_retries) {
          meta["attempts"] = attempts_log;
          const std::string why = rs.status == RecordCheck::Incomplete ? fmt::format("{}", fmt::join(rs.problems, "; "))
                                                                       : order.reason;
          return outcome_of(RunStatus::OrderUnconfirmed,
                         fmt::format("repetition {}: the launch order could not be confirmed in {} attempt(s): {}", rep + 1,
                                     attempt + 1, why));
        }
      }
    }
    return std::nullopt;
  }

#if TBCHECK_GREEN_CONTEXTS
  // The census of partition p's green context: one block per SM (each takes the whole opt-in
  // shared memory), twice as many blocks as granted SMs, each spinning long enough that the first
  // wave holds every SM at once; the SMs its blocks ran on.
  std::vector<int> census_of(const GreenSet& g, size_t p, const DeviceIdentity& id, const model::Device& dev, DeviceBuffer& sink,
                             MappedFlag& abort_flag) {
    const ProbeVariantEntry& v = variant_entry(32);
    const int smem = static_cast<int>(id.smem_per_block_optin);
    TBCHECK_CUDA(cudaFuncSetAttribute(v.func(), cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const unsigned blocks = static_cast<unsigned>(std::max(1, g.granted[p]) * 2);
    DeviceBuffer records(sizeof(TbcheckProbeRecord) * blocks);
    TBCHECK_CUDA(cudaMemset(records.p, 0, sizeof(TbcheckProbeRecord) * blocks));
    TBCHECK_CUDA(cudaDeviceSynchronize());  // the memset is on the legacy stream, the census on a non-blocking one
    const cudaStream_t st = g.make_stream(p, 0);
    struct StreamGuard {
      cudaStream_t s;
      ~StreamGuard() { cudaStreamDestroy(s); }
    } guard{st};
    abort_flag.set(0);
    TbcheckProbeArgs args{};
    args.records = static_cast<TbcheckProbeRecord*>(records.p);
    args.duration_ns = 2'000'000;
    args.abort = abort_flag.device;
    args.pressure_rounds = 1;
    args.sink = static_cast<int32_t*>(sink.p);
    check(static_cast<cudaError_t>(v.launch(&args, blocks, 1, 32, static_cast<size_t>(smem), st)),
          fmt::format("census launch in the green context of partition {}", p).c_str(), __FILE__, __LINE__);
    TBCHECK_CUDA(cudaStreamSynchronize(st));
    std::vector<TbcheckProbeRecord> host(blocks);
    TBCHECK_CUDA(cudaMemcpy(host.data(), records.p, sizeof(TbcheckProbeRecord) * blocks, cudaMemcpyDeviceToHost));
    std::vector<int> sms;
    for (const auto& r : host)
      if (r.start_ns != 0) {
        sms.push_back(scheduler_sm(dev, static_cast<int>(r.sm_start)));
        sms.push_back(scheduler_sm(dev, static_cast<int>(r.sm_end)));
      }
    return sms;
  }
#endif

  static const ProbeVariantEntry& variant_entry(int requested_regs) {
    for (const auto& e : kProbeVariants)
      if (e.requested_regs == requested_regs) return e;
    throw std::logic_error(fmt::format("no probe variant r{} in this build", requested_regs));
  }

  // One launch of the whole scenario: zero the records, launch in list order, wait under the
  // watchdog (polling, never a blocking synchronize), read the records back.
  RunStatus run_once(const model::Scenario& s, const LaunchPlan& plan, const std::vector<std::unique_ptr<DeviceBuffer>>& records,
                     DeviceBuffer& sink, MappedFlag& abort_flag, Streams& streams, std::vector<KernelRecord>& out) {
    for (size_t k = 0; k < s.kernels.size(); ++k)
      TBCHECK_CUDA(cudaMemset(records[k]->p, 0, sizeof(TbcheckProbeRecord) * static_cast<size_t>(s.kernels[k].blocks)));
    abort_flag.set(0);
    TBCHECK_CUDA(cudaDeviceSynchronize());
    const auto origin = std::chrono::steady_clock::now();
    for (const auto& l : plan.kernels) {
      // Kernels are listed in release order: wait for this one's launch instant (host clock).
      if (l.release_ns > 0) std::this_thread::sleep_until(origin + std::chrono::nanoseconds(l.release_ns));
      TbcheckProbeArgs args{};
      args.records = static_cast<TbcheckProbeRecord*>(records[static_cast<size_t>(l.launch_order)]->p);
      args.duration_ns = l.duration_ns;
      args.abort = abort_flag.device;
      args.pressure_rounds = 1;
      args.sink = static_cast<int32_t*>(sink.p);
      const ProbeVariantEntry& v = variant_entry(l.variant_regs);
      const bool clustered = l.cluster != std::array<int, 3>{1, 1, 1};
      const int err =
          clustered ? v.launch_cluster(&args, static_cast<unsigned>(l.grid_x), static_cast<unsigned>(l.grid_y),
                                       static_cast<unsigned>(l.threads), static_cast<size_t>(l.dynamic_smem),
                                       streams.s[static_cast<size_t>(l.stream)], static_cast<unsigned>(l.cluster[0]),
                                       static_cast<unsigned>(l.cluster[1]))
                    : v.launch(&args, static_cast<unsigned>(l.grid_x), static_cast<unsigned>(l.grid_y),
                               static_cast<unsigned>(l.threads), static_cast<size_t>(l.dynamic_smem),
                               streams.s[static_cast<size_t>(l.stream)]);
      check(static_cast<cudaError_t>(err), fmt::format("launch of {} (variant r{})", l.name, l.variant_regs).c_str(), __FILE__, __LINE__);
    }

    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + std::chrono::nanoseconds(plan.watchdog_ns);
    for (;;) {
      bool all = true;
      // Stream queries, not events: a stream of a green context lives in another context than an
      // event made in the primary one, and cuEventRecord wants both in the same context.
      for (auto st : streams.s) {
        const cudaError_t q = cudaStreamQuery(st);
        if (q == cudaErrorNotReady) {
          all = false;
          break;
        }
        TBCHECK_CUDA(q);
      }
      if (all) break;
      if (std::chrono::steady_clock::now() > deadline) {
        // Tell every spinning block to stop, and give them a moment to drain so the process can exit.
        abort_flag.set(1);
        const auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (std::chrono::steady_clock::now() < grace) {
          bool drained = true;
          for (auto st : streams.s) drained = drained && cudaStreamQuery(st) != cudaErrorNotReady;
          if (drained) break;
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return RunStatus::Timeout;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }

    out.clear();
    for (size_t k = 0; k < s.kernels.size(); ++k) {
      std::vector<TbcheckProbeRecord> host(static_cast<size_t>(s.kernels[k].blocks));
      TBCHECK_CUDA(cudaMemcpy(host.data(), records[k]->p, sizeof(TbcheckProbeRecord) * host.size(), cudaMemcpyDeviceToHost));
      KernelRecord kr;
      kr.name = s.kernels[k].name;
      for (const auto& h : host)
        kr.blocks.push_back(BlockRecord{h.start_ns, h.end_ns, static_cast<int>(h.sm_start), static_cast<int>(h.sm_end),
                                        static_cast<int>(h.cluster_id), static_cast<int>(h.cluster_rank)});
      out.push_back(std::move(kr));
    }
    return RunStatus::Ok;
  }

  CudaOptions o_;
};

}  // namespace

std::unique_ptr<Oracle> make_cuda_oracle(const CudaOptions& o) {
  unit_ns(o);  // a bad time unit is an input error before anything runs
  return std::make_unique<CudaOracle>(o);
}
GpcProbe probe_gpc(const CudaOptions& o) {
  GpcProbe p;
  prepare_environment(o);
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count <= o.device_index || o.device_index < 0) {
    cudaGetLastError();
    p.status = RunStatus::NoDevice;
    p.reason = fmt::format("no CUDA device {} ({} visible)", o.device_index, count);
    return p;
  }
  try {
    const int dev = o.device_index;
    TBCHECK_CUDA(cudaSetDevice(dev));
    p.identity = identity_of(dev);
    if (std::atoi(p.identity.cc.c_str()) < 9) {
      p.status = RunStatus::Unsupported;
      p.reason = fmt::format("{} is CC {}; thread block clusters need 9.0 or later", p.identity.name, p.identity.cc);
      return p;
    }
    // r32 variant, 128 threads, the largest dynamic shared memory: one block per SM, so the blocks of
    // a cluster sit on distinct SMs of one GPC.
    const ProbeVariantEntry* v = nullptr;
    for (const auto& e : kProbeVariants)
      if (e.requested_regs == 32) v = &e;
    if (!v) throw std::logic_error("no probe variant r32 in this build");
    const int smem = static_cast<int>(p.identity.smem_per_block_optin);
    TBCHECK_CUDA(cudaFuncSetAttribute(v->func(), cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(static_cast<unsigned>(p.identity.sms));
    cfg.blockDim = dim3(128);
    cfg.dynamicSmemBytes = static_cast<size_t>(smem);
    int largest = 0;
    TBCHECK_CUDA(cudaOccupancyMaxPotentialClusterSize(&largest, v->func(), &cfg));
    if (largest < 2) {
      p.status = RunStatus::Unsupported;
      p.reason = fmt::format("the largest cluster of one-block-per-SM blocks has {} block(s): nothing to group", largest);
      return p;
    }
    // Every size down to 2: an SM left idle by one size (its GPC's SM count is no multiple of it)
    // is grouped by another.
    for (int size = largest; size >= 2; --size) p.cluster_sizes.push_back(size);
    const auto blocks_of = [&](int size) { return static_cast<unsigned>(p.identity.sms / size + 1) * 2u * static_cast<unsigned>(size); };
    unsigned most_blocks = static_cast<unsigned>(p.identity.sms);
    for (const int size : p.cluster_sizes) most_blocks = std::max(most_blocks, blocks_of(size));
    DeviceBuffer records(sizeof(TbcheckProbeRecord) * most_blocks);
    DeviceBuffer sink(sizeof(int32_t));
    MappedFlag abort_flag;
    std::vector<TbcheckProbeRecord> host(most_blocks);
    // One launch of `blocks` blocks (in clusters of `cluster` when above 1), 128 threads each, spinning 2 ms
    // (long enough that the blocks of one wave overlap); the records copied back into `host`.
    const auto run_wave = [&](unsigned blocks, int cluster) {
      TBCHECK_CUDA(cudaMemset(records.p, 0, sizeof(TbcheckProbeRecord) * blocks));
      TbcheckProbeArgs args{};
      args.records = static_cast<TbcheckProbeRecord*>(records.p);
      args.duration_ns = 2'000'000;
      args.abort = abort_flag.device;
      args.pressure_rounds = 1;
      args.sink = static_cast<int32_t*>(sink.p);
      if (cluster > 1)
        check(static_cast<cudaError_t>(v->launch_cluster(&args, blocks, 1, 128, static_cast<size_t>(smem), nullptr,
                                                         static_cast<unsigned>(cluster), 1)),
              "cluster launch of the GPC probe", __FILE__, __LINE__);
      else
        check(static_cast<cudaError_t>(v->launch(&args, blocks, 1, 128, static_cast<size_t>(smem), nullptr)),
              "first-wave launch of the SM-order probe", __FILE__, __LINE__);
      TBCHECK_CUDA(cudaDeviceSynchronize());
      TBCHECK_CUDA(cudaMemcpy(host.data(), records.p, sizeof(TbcheckProbeRecord) * blocks, cudaMemcpyDeviceToHost));
    };
    // The scheduler's order: a first wave of one block per SM on the empty GPU, block i on the i-th SM
    // handed out (blocks start within a microsecond and spin 2 ms, so no SM frees before the wave ends).
    for (int launch = 0; launch < 4; ++launch) {
      const unsigned blocks = static_cast<unsigned>(p.identity.sms);
      run_wave(blocks, 1);
      std::vector<int> wave;
      for (unsigned b = 0; b < blocks; ++b) wave.push_back(host[b].start_ns != 0 ? static_cast<int>(host[b].sm_start) : -1);
      p.first_waves.push_back(std::move(wave));
    }
    for (const int size : p.cluster_sizes) {
      const unsigned blocks = blocks_of(size);
      for (int launch = 0; launch < 4; ++launch) {
        run_wave(blocks, size);
        std::map<uint32_t, std::vector<int>> by_cluster;
        for (unsigned b = 0; b < blocks; ++b)
          if (host[b].start_ns != 0) by_cluster[host[b].cluster_id].push_back(static_cast<int>(host[b].sm_start));
        for (auto& [id, sms] : by_cluster) p.sms_of_each_cluster.push_back(std::move(sms));
        ++p.launches;
      }
    }
  } catch (const CudaError& e) {
    p.status = RunStatus::DeviceError;
    p.reason = e.what();
  }
  return p;
}

bool built_with_cuda() { return true; }

}  // namespace cuda

namespace detail {
std::unique_ptr<Oracle> make_cuda() { return cuda::make_cuda_oracle(cuda::CudaOptions{}); }
}  // namespace detail

}  // namespace tbcheck::oracle
