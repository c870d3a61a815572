// Scenario and kernel loading: every kernel is checked against the device limits so that
// impossible kernels are rejected with the field and the reason before any simulation.
#include "tbcheck/model/scenario.hpp"

#include "tbcheck/model/device_spec.hpp"
#include "tbcheck/model/text.hpp"
#include "tbcheck/model/limits.hpp"

#include <climits>
#include <cstdint>
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace tbcheck::model {

const std::vector<std::string> kScenarioKeys = {"device", "kernels", "gpc_pointer"};

const std::vector<int>& probe_register_counts() {
  static const std::vector<int> regs = [] {
    std::vector<int> r;
    for (int x = 24; x <= 248; x += 8) r.push_back(x);
    r.push_back(255);
    return r;
  }();
  return regs;
}
const std::vector<std::string> kCaseKeys = {"id",          "source", "device",         "kernels", "observation",
                                            "expect",      "notes",  "predictions",    "bounds",  "solver_seconds",
                                            "route",       "first_difference", "tied_retirements", "gpc_pointer", "run"};

int Kernel::regs_per_warp(const Device& d) const {
  // Algorithm 1 line 5: ceil(regs x 32 / unit) x unit.
  return (regs * kThreadsPerWarp + d.reg_alloc_unit - 1) / d.reg_alloc_unit * d.reg_alloc_unit;
}

int Kernel::smem_per_block(const Device& d) const {
  // Algorithm 1 line 6: ceil(smem / unit) x unit + runtime reserve.
  return (smem + d.smem_alloc_unit - 1) / d.smem_alloc_unit * d.smem_alloc_unit + d.smem_reserved_per_block;
}

json Kernel::to_json() const {
  json j = {{"name", name}};
  if (grid) j["grid"] = {grid->first, grid->second};
  else j["blocks"] = blocks;
  j["threads"] = threads;
  j["regs"] = regs;
  j["smem"] = smem;
  if (local) j["local"] = local;
  if (stream) j["stream"] = *stream;
  j["duration"] = duration;
  if (priority) j["priority"] = *priority;
  if (release) j["release_time"] = release;
  if (!tpcs.empty()) j["tpcs"] = tpcs;
  if (cluster) j["cluster"] = *cluster;
  return j;
}

int Scenario::total_blocks() const {
  int n = 0;
  for (const auto& k : kernels) n += k.blocks;
  return n;
}

int Scenario::kernel_index(const std::string& name) const {
  for (size_t i = 0; i < kernels.size(); ++i)
    if (kernels[i].name == name) return static_cast<int>(i);
  return -1;
}

json Scenario::to_json() const {
  json j;
  // By name only where the name means this very device: a measured GPU keeps its built-in's name.
  j["device"] = device_builtin && is_builtin(device) ? json(device.name) : device.to_json();
  j["kernels"] = json::array();
  for (const auto& k : kernels) j["kernels"].push_back(k.to_json());
  if (gpc_pointer != 0) j["gpc_pointer"] = gpc_pointer;
  return j;
}

static const std::vector<std::string> kKernelKeys = {"name",  "blocks",   "grid",         "threads", "regs",
                                                     "smem",  "local",    "stream",       "duration", "priority",
                                                     "release_time", "tpcs", "cluster"};

// The controls, checked against the device: priority in its range, TPCs that exist,
// clusters only where the hardware has them and only of shapes CUDA would launch.
static void read_controls(ObjectReader& r, Kernel& k, const Device& d) {
  if (r.has("priority")) {
    const int64_t p = r.integer("priority", -1024, 1024);
    if (!d.stream_priorities)
      r.fail("priority", fmt::format("device {} has no stream priority range (add \"stream_priorities\" with its "
                                     "source to a device file; `tbcheck run` records the range on a GPU)",
                                     d.name));
    if (!d.stream_priorities->contains(static_cast<int>(p)))
      r.fail("priority", fmt::format("{} is outside {}'s range [{} (least), {} (greatest)]; CUDA's convention: the "
                                     "lower number is the higher priority",
                                     p, d.name, d.stream_priorities->least, d.stream_priorities->greatest));
    k.priority = static_cast<int>(p);
  }
  k.release = r.opt_integer("release_time", 0, kMaxReleaseUnits).value_or(0);
  if (r.has("tpcs")) {
    std::set<int64_t> seen;
    for (int64_t t : r.int_array("tpcs", 0, INT32_MAX)) {
      if (t >= d.tpcs())
        r.fail("tpcs", fmt::format("TPC {} does not exist: {} has TPCs 0..{}", t, d.name, d.tpcs() - 1));
      if (!seen.insert(t).second) r.fail("tpcs", fmt::format("TPC {} is listed twice", t));
      k.tpcs.push_back(static_cast<int>(t));
    }
    if (k.tpcs.empty()) r.fail("tpcs", "an empty TPC set: the kernel could never run");
    std::sort(k.tpcs.begin(), k.tpcs.end());
  }
  if (r.has("cluster")) {
    if (!d.has_clusters())
      r.fail("cluster", fmt::format("thread block clusters need compute capability 9.0 or later; {} is CC {}", d.name, d.cc));
    auto c = r.int_array("cluster", 1, kMaxPortableClusterBlocks);
    if (c.empty() || c.size() > 3) r.fail("cluster", fmt::format("expected [x], [x, y] or [x, y, z], found {} numbers", c.size()));
    std::array<int, 3> dims = {1, 1, 1};
    for (size_t i = 0; i < c.size(); ++i) dims[i] = static_cast<int>(c[i]);
    const int64_t size = int64_t{dims[0]} * dims[1] * dims[2];
    if (size > kMaxPortableClusterBlocks)
      r.fail("cluster", fmt::format("{} blocks per cluster exceed the portable limit of {}", size, kMaxPortableClusterBlocks));
    // cudaLaunchKernelEx rejects a grid that is not a whole number of clusters in every dimension.
    const int gx = k.grid ? k.grid->first : k.blocks, gy = k.grid ? k.grid->second : 1;
    if (gx % dims[0] != 0 || gy % dims[1] != 0 || dims[2] != 1)
      r.fail("cluster", fmt::format("grid {} x {} x 1 is not a whole number of {} x {} x {} clusters", gx, gy, dims[0],
                                    dims[1], dims[2]));
    k.cluster = dims;
  }
}

static Kernel kernel_from_json(const json& j, const Device& d, const std::string& where, const std::string& path,
                               size_t index) {
  ObjectReader r(j, where, path, kKernelKeys);
  Kernel k;
  k.name = r.opt_string("name").value_or(fmt::format("k{}", index + 1));
  if (k.name.empty()) r.fail("name", "must not be empty");
  if (auto why = unprintable_name_reason(k.name); !why.empty()) r.fail("name", why);
  constexpr int64_t kMaxBlocks = int64_t{1} << 26;
  if (r.has("grid")) {
    auto g = r.int_array("grid", 1, kMaxBlocks);
    if (g.size() != 2) r.fail("grid", fmt::format("expected [x, y], found {} numbers", g.size()));
    if (g[0] * g[1] > kMaxBlocks) r.fail("grid", fmt::format("{} x {} blocks exceed {}", g[0], g[1], kMaxBlocks));
    k.grid = {static_cast<int>(g[0]), static_cast<int>(g[1])};
    k.blocks = static_cast<int>(g[0] * g[1]);
    if (r.has("blocks") && r.integer("blocks", 1, kMaxBlocks) != k.blocks)
      r.fail("blocks", fmt::format("disagrees with grid {} x {} = {}", g[0], g[1], k.blocks));
  } else {
    if (!r.has("blocks")) r.fail("blocks", "required field is missing (or give a 2-D \"grid\")");
    k.blocks = static_cast<int>(r.integer("blocks", 1, kMaxBlocks));
  }
  const json& t = r.require("threads");
  int64_t threads = ObjectReader::as_integer(t, 1, INT32_MAX, where, r.field("threads"));
  if (threads > d.max_threads_per_block)
    r.fail("threads", fmt::format("{} threads > {} per block on {}", threads, d.max_threads_per_block, d.name));
  k.threads = static_cast<int>(threads);
  int64_t regs = ObjectReader::as_integer(r.require("regs"), 1, INT32_MAX, where, r.field("regs"));
  if (regs > d.max_regs_per_thread)
    r.fail("regs", fmt::format("{} registers > {} per thread on {}", regs, d.max_regs_per_thread, d.name));
  k.regs = static_cast<int>(regs);
  int64_t smem = r.has("smem") ? ObjectReader::as_integer(r.require("smem"), 0, INT32_MAX, where, r.field("smem")) : 0;
  if (smem > d.max_smem_per_block)
    r.fail("smem", fmt::format("{} bytes > {} bytes of shared memory per block on {}", smem, d.max_smem_per_block, d.name));
  k.smem = static_cast<int>(smem);
  k.local = static_cast<int>(r.opt_integer("local", 0, 512 * 1024).value_or(0));
  if (auto s = r.opt_integer("stream", 0, INT32_MAX)) k.stream = static_cast<int>(*s);
  k.duration = static_cast<int>(r.integer("duration", 1, kMaxDurationUnits));
  read_controls(r, k, d);
  return k;
}

Scenario scenario_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(where, "(top level)", fmt::format("expected an object, found {}", json_type_name(j)));
  auto dev = j.find("device");
  if (dev == j.end()) throw InputError(where, "device", "required field is missing");
  if (dev->is_string()) return scenario_from_json(j, builtin_device(dev->get<std::string>(), where, "device"), true, where);
  if (dev->is_object()) return scenario_from_json(j, device_from_json(*dev, where, "device"), false, where);
  throw InputError(where, "device",
                   fmt::format("expected a built-in device name or a device object, found {}", json_type_name(*dev)));
}

Scenario scenario_from_json(const json& j, Device device, bool device_builtin, const std::string& where) {
  if (!j.is_object()) throw InputError(where, "(top level)", fmt::format("expected an object, found {}", json_type_name(j)));
  Scenario s;
  s.device = std::move(device);
  s.device_builtin = device_builtin;
  auto ks = j.find("kernels");
  if (ks == j.end()) throw InputError(where, "kernels", "required field is missing");
  if (!ks->is_array()) throw InputError(where, "kernels", fmt::format("expected an array, found {}", json_type_name(*ks)));
  if (ks->empty()) throw InputError(where, "kernels", "a scenario needs at least one kernel");
  std::set<std::string> names;
  std::map<int, size_t> first_of_stream;
  int64_t total = 0;
  for (size_t i = 0; i < ks->size(); ++i) {
    std::string path = fmt::format("kernels[{}]", i);
    Kernel k = kernel_from_json((*ks)[i], s.device, where, path, i);
    if (!names.insert(k.name).second)
      throw InputError(where, path + ".name", fmt::format("kernel name '{}' is used twice", k.name));
    // The list is the launch order; a kernel released earlier than the one before it would be a
    // second, contradictory order.
    if (!s.kernels.empty() && k.release < s.kernels.back().release)
      throw InputError(where, path + ".release_time",
                       fmt::format("{} is released at {}, before the kernel listed before it ({} at {}); list kernels "
                                   "in launch order",
                                   k.name, k.release, s.kernels.back().name, s.kernels.back().release));
    // A stream's priority is the stream's, not the kernel's: CUDA has no way to say otherwise.
    // The stream's first kernel stands for all its kernels (each one before was checked against it).
    if (k.stream)
      if (auto [it, fresh] = first_of_stream.try_emplace(*k.stream, s.kernels.size()); !fresh) {
        const Kernel& o = s.kernels[it->second];
        if (o.priority != k.priority)
          throw InputError(where, path + ".priority",
                           fmt::format("{} and {} share stream {} but not its priority ({} vs {})", o.name, k.name,
                                       *k.stream, o.priority ? std::to_string(*o.priority) : "unset",
                                       k.priority ? std::to_string(*k.priority) : "unset"));
      }
    total += k.blocks;
    if (total > (int64_t{1} << 28))
      throw InputError(where, path + ".blocks", "the scenario has more than 2^28 blocks in total");
    s.kernels.push_back(std::move(k));
  }
  if (auto p = j.find("gpc_pointer"); p != j.end()) {
    if (!p->is_number_integer() || p->get<int64_t>() < 0 || p->get<int64_t>() > kMaxGpcPointer)
      throw InputError(where, "gpc_pointer",
                       fmt::format("expected an integer in [0, {}] (a multi-TPC GPC, counted from 0), found {}",
                                   kMaxGpcPointer, p->dump()));
    s.gpc_pointer = static_cast<int>(p->get<int64_t>());
  }
  return s;
}

namespace {

// The loader's own refusal returned as a value.
template <class Load>
std::optional<Scenario> refusal_as_value(Load&& load, std::string* why) {
  try {
    return load();
  } catch (const InputError& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

}  // namespace

std::optional<Scenario> try_scenario_from_json(const json& j, const std::string& where, std::string* why) {
  return refusal_as_value([&] { return scenario_from_json(j, where); }, why);
}

std::optional<Scenario> try_scenario_from_json(const json& j, const Device& device, bool device_builtin,
                                               const std::string& where, std::string* why) {
  return refusal_as_value([&] { return scenario_from_json(j, device, device_builtin, where); }, why);
}

Scenario load_scenario_file(const std::string& path) {
  json j = read_json_file(path);
  // A scenario file may be a full corpus case; only the scenario part matters here, but unknown
  // keys are still errors.
  ObjectReader r(j, path, "", kCaseKeys);
  return scenario_from_json(j, path);
}

}  // namespace tbcheck::model
