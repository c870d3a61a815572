// Host logic of the CUDA oracle that runs without a GPU (so it is unit-tested with synthetic data):
// variant choice, ns -> units, launch-order check, device identity, MPS, launch plan, green-context split.
#include "tbcheck/oracle/cuda_host.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/error.hpp"
#include "tbcheck/model/text.hpp"

namespace tbcheck::oracle::cuda {

std::string_view to_string(Settle s) {
  switch (s) {
    case Settle::None: return "none";
    case Settle::Context: return "context";
  }
  return "?";
}

std::optional<Settle> settle_from_string(std::string_view s) {
  for (Settle v : {Settle::None, Settle::Context})
    if (to_string(v) == s) return v;
  return std::nullopt;
}

uint64_t unit_ns(const CudaOptions& o) {
  if (!(o.time_unit_ms > 0.0) || !std::isfinite(o.time_unit_ms) || o.time_unit_ms > 3.6e6)
    throw model::InputError("--time-unit-ms", "", fmt::format("{} is not a positive time unit in ms (at most one hour)",
                                                              o.time_unit_ms));
  const double ns = std::round(o.time_unit_ms * 1e6);
  if (ns < 1.0) throw model::InputError("--time-unit-ms", "", "the time unit must be at least 1 ns");
  return static_cast<uint64_t>(ns);
}


std::vector<Variant> nominal_variants() {
  std::vector<Variant> v;
  for (int r : probe_register_counts()) v.push_back(Variant{r, r, 0, 0, 1024});
  return v;
}

std::string_view to_string(VariantMatch m) {
  switch (m) {
    case VariantMatch::Exact: return "exact";
    case VariantMatch::SameAllocation: return "same-allocation";
    case VariantMatch::None: return "none";
  }
  return "?";
}

VariantChoice choose_variant(const std::vector<Variant>& variants, const model::Kernel& k, const model::Device& d) {
  VariantChoice c;
  auto per_warp = [&](int regs) {
    model::Kernel probe = k;
    probe.regs = regs;
    return probe.regs_per_warp(d);
  };
  // Exact first; then the fewest registers with the same per-warp allocation (least spilling
  // difference from the request); either must also allow the kernel's threads per block.
  for (size_t i = 0; i < variants.size(); ++i)
    if (variants[i].num_regs == k.regs && variants[i].max_threads >= k.threads) {
      c.match = VariantMatch::Exact;
      c.index = static_cast<int>(i);
      return c;
    }
  for (size_t i = 0; i < variants.size(); ++i) {
    if (variants[i].max_threads < k.threads || per_warp(variants[i].num_regs) != per_warp(k.regs)) continue;
    if (c.index < 0 || variants[i].num_regs < variants[static_cast<size_t>(c.index)].num_regs) {
      c.match = VariantMatch::SameAllocation;
      c.index = static_cast<int>(i);
    }
  }
  if (c.index >= 0) return c;
  std::vector<int> available;
  for (const auto& v : variants) available.push_back(v.num_regs);
  std::sort(available.begin(), available.end());
  available.erase(std::unique(available.begin(), available.end()), available.end());
  c.reason = fmt::format("kernel {} asks for {} registers per thread ({} threads per block); no probe variant "
                         "realizes it: the variants have {} registers (numRegs)",
                         k.name, k.regs, k.threads, model::format_int_list(available));
  return c;
}

int64_t ns_to_units(uint64_t ns, uint64_t origin_ns, uint64_t unit) {
  if (unit == 0) throw model::InputError("oracle", "time unit", "the time unit must be positive");
  if (ns <= origin_ns) return 0;
  const uint64_t d = ns - origin_ns;
  return static_cast<int64_t>(d / unit + (d % unit >= unit - unit / 2 ? 1 : 0));
}

int64_t timer_tick_units(std::vector<uint64_t> ns, uint64_t unit) {
  std::sort(ns.begin(), ns.end());
  uint64_t gap = 0;
  for (size_t i = 1; i < ns.size(); ++i)
    if (ns[i] != ns[i - 1] && (gap == 0 || ns[i] - ns[i - 1] < gap)) gap = ns[i] - ns[i - 1];
  if (gap == 0 || unit == 0) return 1;
  return std::max<int64_t>(1, static_cast<int64_t>((gap + unit - 1) / unit));
}

RecordedSchedule schedule_from_records(const model::Scenario& s, const std::vector<KernelRecord>& recs, uint64_t unit) {
  RecordedSchedule r;
  r.schedule.hypothesis = "cuda";
  r.schedule.device = s.device.name;
  r.schedule.sms = s.device.sms;
  if (recs.size() != s.kernels.size())
    throw model::InputError("oracle", "records", fmt::format("{} kernel records for {} kernels", recs.size(), s.kernels.size()));
  uint64_t origin = std::numeric_limits<uint64_t>::max();
  for (const auto& k : recs)
    for (const auto& b : k.blocks)
      if (b.start_ns != 0) origin = std::min(origin, b.start_ns);
  for (size_t ki = 0; ki < recs.size(); ++ki) {
    const model::Kernel& k = s.kernels[ki];
    const KernelRecord& kr = recs[ki];
    if (static_cast<int>(kr.blocks.size()) != k.blocks)
      throw model::InputError("oracle", "records", fmt::format("kernel {}: {} block records for {} blocks", k.name,
                                                               kr.blocks.size(), k.blocks));
    model::KernelSchedule ks;
    ks.name = k.name;
    for (size_t b = 0; b < kr.blocks.size(); ++b) {
      const BlockRecord& br = kr.blocks[b];
      model::BlockPlacement p;
      if (br.start_ns == 0) {
        r.problems.push_back(fmt::format("{} block {}: no record (the block did not run or did not finish)", k.name, b));
        ks.blocks.push_back(p);
        continue;
      }
      if (br.sm_start != br.sm_end)
        r.problems.push_back(fmt::format("{} block {}: SM {} at entry but {} at exit", k.name, b, br.sm_start, br.sm_end));
      if (br.sm_start < 0 || br.sm_start >= s.device.sms)
        r.problems.push_back(fmt::format("{} block {}: SM {} is outside the device's {} SMs", k.name, b, br.sm_start,
                                         s.device.sms));
      if (br.end_ns < br.start_ns)
        r.problems.push_back(fmt::format("{} block {}: ends ({} ns) before it starts ({} ns)", k.name, b, br.end_ns, br.start_ns));
      p.sm = br.sm_start;
      p.start = ns_to_units(br.start_ns, origin, unit);
      p.end = ns_to_units(br.end_ns, origin, unit);
      if (p.end - p.start != k.duration)
        r.notes.push_back(fmt::format("{} block {}: ran {} units ({} ns), the scenario says {}", k.name, b, p.end - p.start,
                                      br.end_ns - br.start_ns, k.duration));
      ks.blocks.push_back(p);
    }
    r.schedule.kernels.push_back(std::move(ks));
  }
  if (!r.problems.empty()) r.status = RecordCheck::Incomplete;
  return r;
}

std::string_view to_string(OrderCheck c) {
  switch (c) {
    case OrderCheck::Confirmed: return "confirmed";
    case OrderCheck::Tied: return "tied";
    case OrderCheck::Violated: return "violated";
    case OrderCheck::Unconfirmed: return "unconfirmed";
  }
  return "?";
}

OrderResult check_launch_order(const model::Scenario& s, const std::vector<KernelRecord>& recs) {
  OrderResult r;
  if (recs.size() != s.kernels.size()) {
    r.status = OrderCheck::Unconfirmed;
    r.reason = fmt::format("{} kernel records for {} kernels", recs.size(), s.kernels.size());
    return r;
  }
  const size_t n = recs.size();
  std::vector<uint64_t> first(n, std::numeric_limits<uint64_t>::max()), last_end(n, 0);
  for (size_t k = 0; k < n; ++k) {
    if (recs[k].blocks.empty()) continue;
    for (size_t b = 0; b < recs[k].blocks.size(); ++b) {
      const auto& br = recs[k].blocks[b];
      if (br.start_ns == 0) {
        r.status = OrderCheck::Unconfirmed;
        r.reason = fmt::format("{} block {} has no record, so the launch order cannot be confirmed", recs[k].name, b);
        return r;
      }
      first[k] = std::min(first[k], br.start_ns);
      last_end[k] = std::max(last_end[k], br.end_ns);
    }
  }
  // The stream predecessor of every kernel (the previous kernel with the same stream value).
  std::vector<int> pred(n, -1);
  std::map<int, int> last_in_stream;
  for (size_t k = 0; k < n; ++k) {
    if (!s.kernels[k].stream) continue;
    auto it = last_in_stream.find(*s.kernels[k].stream);
    if (it != last_in_stream.end()) pred[k] = it->second;
    last_in_stream[*s.kernels[k].stream] = static_cast<int>(k);
  }
  std::vector<std::string> violations;
  for (size_t j = 0; j < n; ++j) {
    if (pred[j] >= 0) {
      const auto p = static_cast<size_t>(pred[j]);
      if (first[j] < last_end[p])
        violations.push_back(fmt::format("{} started {} ns before its stream predecessor {} ended", recs[j].name,
                                         last_end[p] - first[j], recs[p].name));
      continue;
    }
    for (size_t i = 0; i < j; ++i) {
      if (pred[i] >= 0) continue;  // eligible later; its order against j is the dispatcher's business
      // Kernels released at different instants are ordered by their releases, and a later
      // high-priority kernel may rightly start first: only simultaneous launches are compared.
      if (s.kernels[i].release != s.kernels[j].release) continue;
      if (first[j] < first[i])
        violations.push_back(fmt::format("{} (launched after {}) started {} ns before it", recs[j].name, recs[i].name,
                                         first[i] - first[j]));
      else if (first[j] == first[i])
        ++r.ties;
    }
  }
  if (!violations.empty()) {
    r.status = OrderCheck::Violated;
    r.reason = fmt::format("launch order violated: {}", fmt::join(violations, "; "));
  } else if (r.ties > 0) {
    r.status = OrderCheck::Tied;
    r.reason = fmt::format("consistent with the launch order; {} pair(s) of kernels started at the same timestamp "
                           "(timer resolution)", r.ties);
  }
  return r;
}

nlohmann::json DeviceIdentity::to_json() const {
  return {{"name", name},
          {"cc", cc},
          {"sms", sms},
          {"max_blocks_per_sm", max_blocks_per_sm},
          {"max_warps_per_sm", max_warps_per_sm},
          {"regs_per_sm", regs_per_sm},
          {"max_threads_per_block", max_threads_per_block},
          {"smem_per_sm", smem_per_sm},
          {"smem_per_block_optin", smem_per_block_optin},
          {"reserved_smem_per_block", reserved_smem_per_block},
          {"driver_version", driver_version},
          {"runtime_version", runtime_version},
          {"uuid", uuid},
          {"pci_bus_id", pci_bus_id}};
}

IdentityCheck compare_identity(const model::Device& want, const DeviceIdentity& have) {
  IdentityCheck c;
  auto differ = [&](const char* what, int64_t w, int64_t h) {
    if (w != h)
      c.differences.push_back(fmt::format("{}: {} has {}, the GPU ({}) has {}", what, want.name, w, have.name, h));
  };
  if (want.cc != have.cc)
    c.differences.push_back(fmt::format("compute capability: {} is {}, the GPU ({}) is {}", want.name, want.cc, have.name, have.cc));
  differ("SM count", want.sms, have.sms);
  differ("max blocks per SM", want.max_blocks_per_sm, have.max_blocks_per_sm);
  differ("max warps per SM", want.max_warps_per_sm, have.max_warps_per_sm);
  differ("registers per SM", want.regs_per_sm, have.regs_per_sm);
  differ("max threads per block", want.max_threads_per_block, have.max_threads_per_block);
  differ("shared memory per SM (largest configuration, bytes)", want.max_smem_config_bytes(), have.smem_per_sm);
  differ("max shared memory per block (opt-in, bytes)", want.max_smem_per_block, have.smem_per_block_optin);
  differ("shared memory reserved per block (bytes)", want.smem_reserved_per_block, have.reserved_smem_per_block);
  if (!c.differences.empty()) c.status = IdentityMatch::Mismatch;
  return c;
}

MpsProbe detect_mps(const GetEnv& getenv, const PathExists& exists) {
  MpsProbe p;
  const std::string pipe_dir = getenv("CUDA_MPS_PIPE_DIRECTORY").value_or("/tmp/nvidia-mps");
  const std::string control = pipe_dir + "/control";
  if (exists(control)) {
    p.state = MpsState::Active;
    p.evidence = fmt::format("the MPS control pipe {} exists (an MPS daemon is running; stop it with "
                             "'echo quit | nvidia-cuda-mps-control')", control);
    return p;
  }
  for (const char* var : {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"})
    if (auto v = getenv(var); v && !v->empty()) {
      p.state = MpsState::Active;
      p.evidence = fmt::format("{}={} is set (an MPS client setting)", var, *v);
      return p;
    }
  return p;
}

MpsProbe detect_mps() {
  return detect_mps(
      [](const std::string& name) -> std::optional<std::string> {
        const char* v = std::getenv(name.c_str());
        return v ? std::optional<std::string>(v) : std::nullopt;
      },
      [](const std::string& path) {
        std::error_code ec;
        return std::filesystem::exists(path, ec);
      });
}

nlohmann::json LaunchPlan::to_json() const {
  nlohmann::json ks = nlohmann::json::array();
  for (const auto& k : kernels) {
    nlohmann::json j = {{"name", k.name},
                        {"launch_order", k.launch_order},
                        {"regs", k.regs},
                        {"variant", fmt::format("r{}", k.variant_regs)},
                        {"num_regs", k.num_regs},
                        {"match", to_string(k.match)},
                        {"local_bytes", k.local_bytes},
                        {"threads", k.threads},
                        {"grid", {k.grid_x, k.grid_y}},
                        {"static_smem", k.static_smem},
                        {"dynamic_smem", k.dynamic_smem},
                        {"smem_optin", k.smem_optin},
                        {"stream", k.stream},
                        {"duration_ns", k.duration_ns}};
    if (k.scenario_stream) j["scenario_stream"] = *k.scenario_stream;
    if (k.priority) j["priority"] = *k.priority;
    if (k.release_ns) j["release_ns"] = k.release_ns;
    if (k.cluster != std::array<int, 3>{1, 1, 1}) j["cluster"] = k.cluster;
    if (k.partition >= 0) j["partition"] = k.partition;
    ks.push_back(std::move(j));
  }
  nlohmann::json parts = nlohmann::json::array();
  for (const auto& p : partitions) parts.push_back({{"tpcs", p.tpcs}, {"sms", p.sms}});
  nlohmann::json j = {{"unit_ns", unit_ns},     {"watchdog_ns", watchdog_ns}, {"streams", streams},
                      {"nominal_registers", nominal}, {"kernels", std::move(ks)}, {"partitions", std::move(parts)},
                      {"notes", notes}};
  if (!partitions.empty()) j["green_contexts"] = green.to_json();
  if (!smem_attribute_of_variant.empty()) {
    nlohmann::json a = nlohmann::json::object();
    for (const auto& [regs, bytes] : smem_attribute_of_variant) a[fmt::format("r{}", regs)] = bytes;
    j["max_dynamic_smem_of_variant"] = std::move(a);
  }
  return j;
}

std::string LaunchPlan::to_text() const {
  std::string out = fmt::format("{:>5}  {:<12} {:>9} {:>7} {:>5} {:>8} {:>15} {:>6} {:>13}\n", "order", "kernel", "grid",
                                "threads", "regs", "variant", "smem st+dyn", "stream", "duration ns");
  for (const auto& k : kernels) {
    const std::string grid = k.grid_y > 1 ? fmt::format("{}x{}", k.grid_x, k.grid_y) : fmt::format("{}", k.grid_x);
    const std::string var = fmt::format("r{}{}", k.variant_regs, k.match == VariantMatch::SameAllocation ? "~" : "");
    out += fmt::format("{:>5}  {:<12} {:>9} {:>7} {:>5} {:>8} {:>15} {:>6} {:>13}\n", k.launch_order, k.name, grid, k.threads,
                       k.regs, var, fmt::format("{}+{}", k.static_smem, k.dynamic_smem), k.stream, k.duration_ns);
    std::vector<std::string> controls;
    if (k.priority) controls.push_back(fmt::format("priority {}", *k.priority));
    if (k.release_ns) controls.push_back(fmt::format("released at {} ns", k.release_ns));
    if (k.cluster != std::array<int, 3>{1, 1, 1})
      controls.push_back(fmt::format("clusters {}x{}x{} (cudaLaunchKernelEx)", k.cluster[0], k.cluster[1], k.cluster[2]));
    if (k.partition >= 0) controls.push_back(fmt::format("partition {}", k.partition));
    if (!controls.empty()) out += fmt::format("{:>7}{}\n", "", fmt::join(controls, ", "));
  }
  for (size_t i = 0; i < partitions.size(); ++i) {
    out += fmt::format("partition {}: TPCs [{}] = {} SMs (a green context; the SM set is the driver's, recorded)\n", i,
                       fmt::join(partitions[i].tpcs, ", "), partitions[i].sms);
    for (const auto& g : green.groups)
      if (g.partition == static_cast<int>(i))
        out += fmt::format("{:>7}cuDevSmResourceSplitByCount(minCount {}){}, cuGreenCtxCreate, a census of its SMs\n", "",
                           g.min_count, g.min_count != g.requested_sms ? fmt::format(" (rounded up from {})", g.requested_sms) : "");
  }
  if (!partitions.empty()) {
    const SmResource& r = green.resource;
    out += fmt::format("green contexts: {} SM resource of {} SMs, groups of at least {} in multiples of {}{}\n",
                       to_string(r.source), r.sm_count, r.min_partition, r.alignment,
                       r.source == SmResourceSource::Nominal ? " (cuda.h's guideline; the driver's own is read at run time)" : "");
    if (green.status != GreenSplitFit::Fits) out += "green contexts: " + green.reason + "\n";
  }
  out += fmt::format("streams: {}; time unit: {} ns; watchdog: {:.1f} s{}\n", streams, unit_ns,
                     static_cast<double>(watchdog_ns) / 1e9,
                     nominal ? "; register counts nominal (read with cudaFuncGetAttributes at run time)" : "");
  for (const auto& n : notes) out += "note: " + n + "\n";
  return out;
}

PlanResult build_launch_plan(const model::Scenario& s, const std::vector<Variant>& variants, const CudaOptions& o) {
  PlanResult r;
  LaunchPlan& p = r.plan;
  p.unit_ns = unit_ns(o);
  p.nominal = false;
  std::map<int, int> stream_of_value;  // scenario stream value -> oracle stream index
  // Worst case: every block of every kernel one after another (at least one block always runs).
  double serial_ns = 0.0;
  std::vector<std::string> refusals;
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    const model::Kernel& k = s.kernels[i];
    KernelLaunch l;
    l.name = k.name;
    l.launch_order = static_cast<int>(i);
    l.regs = k.regs;
    l.threads = k.threads;
    if (k.grid) {
      l.grid_x = k.grid->first;
      l.grid_y = k.grid->second;
    } else {
      l.grid_x = k.blocks;
    }
    l.duration_ns = static_cast<uint64_t>(k.duration) * p.unit_ns;
    serial_ns += static_cast<double>(k.blocks) * static_cast<double>(l.duration_ns);
    if (k.stream) {
      auto [it, inserted] = stream_of_value.try_emplace(*k.stream, p.streams);
      if (inserted) ++p.streams;
      l.stream = it->second;
      l.scenario_stream = k.stream;
    } else {
      l.stream = p.streams++;
    }
    const VariantChoice c = choose_variant(variants, k, s.device);
    if (c.match == VariantMatch::None) {
      refusals.push_back(c.reason);
    } else {
      const Variant& v = variants[static_cast<size_t>(c.index)];
      l.variant_regs = v.requested_regs;
      l.num_regs = v.num_regs;
      l.match = c.match;
      l.local_bytes = v.local_bytes;
      l.static_smem = v.static_smem;
      if (k.smem < v.static_smem)
        refusals.push_back(fmt::format("kernel {} asks for {} B of shared memory, below the probe variant r{}'s {} B of "
                                       "static shared memory", k.name, k.smem, v.requested_regs, v.static_smem));
      l.dynamic_smem = std::max(0, k.smem - v.static_smem);
      l.smem_optin = l.dynamic_smem > 48 * 1024;
      if (c.match == VariantMatch::SameAllocation)
        p.notes.push_back(fmt::format("{}: no variant has exactly {} registers; r{} ({} registers) allocates the same "
                                      "registers per warp", k.name, k.regs, v.requested_regs, v.num_regs));
      if (v.local_bytes != k.local)
        p.notes.push_back(fmt::format("{}: the scenario's local memory is {} B/thread, the variant uses {} B (spills); "
                                      "the variant's value is what the GPU sees", k.name, k.local, v.local_bytes));
    }
    l.priority = k.priority;
    l.release_ns = static_cast<uint64_t>(k.release) * p.unit_ns;
    if (k.cluster) l.cluster = *k.cluster;
    if (k.priority && s.device.stream_priorities) {
      const PriorityCheck pc = check_priority(k.name, *k.priority, s.device.stream_priorities->least,
                                              s.device.stream_priorities->greatest);
      if (pc.status != PriorityFit::Fits) refusals.push_back(pc.reason);
    }
    if (l.smem_optin) {
      int& bytes = p.smem_attribute_of_variant[l.variant_regs];
      bytes = std::max(bytes, l.dynamic_smem);
    }
    p.kernels.push_back(std::move(l));
  }
  {
    std::vector<int> part_of;
    const std::string why = plan_partitions(s, p.partitions, part_of);
    if (!why.empty()) refusals.push_back(why);
    for (size_t i = 0; i < p.kernels.size() && i < part_of.size(); ++i) p.kernels[i].partition = part_of[i];
    // A stream lives in one context: the primary one (the whole GPU) or one partition's green context.
    std::map<int, size_t> first_on_stream;
    for (size_t i = 0; i < p.kernels.size(); ++i) {
      auto [it, fresh] = first_on_stream.try_emplace(p.kernels[i].stream, i);
      const KernelLaunch& a = p.kernels[it->second];
      if (!fresh && a.partition != p.kernels[i].partition)
        refusals.push_back(fmt::format("kernels {} and {} share a stream but not their TPCs; a stream belongs to one "
                                       "green context (or to the whole GPU)", a.name, p.kernels[i].name));
    }
    p.green = plan_green_split(p.partitions, nominal_sm_resource(s.device));
  }
  // The run lasts at least until the last release; the watchdog must not fire before it.
  for (const auto& l : p.kernels) serial_ns += static_cast<double>(l.release_ns);
  if (p.streams > o.max_connections)
    refusals.push_back(fmt::format("{} streams exceed the {} hardware connections (CUDA_DEVICE_MAX_CONNECTIONS); "
                                   "streams would alias and serialize", p.streams, o.max_connections));
  p.watchdog_ns = static_cast<uint64_t>(serial_ns + o.watchdog_slack_s * 1e9);
  if (!refusals.empty()) {
    r.status = PlanStatus::Unsupported;
    r.reason = fmt::format("{}", fmt::join(refusals, "; "));
  }
  return r;
}

PriorityCheck check_priority(const std::string& kernel, int priority, int least, int greatest) {
  if (priority <= least && priority >= greatest) return {};
  return {PriorityFit::OutOfRange,
          fmt::format("kernel {} asks for stream priority {}, outside the GPU's range [{} (least), {} (greatest)]; CUDA "
                      "would clamp it silently",
                      kernel, priority, least, greatest)};
}

std::string plan_partitions(const model::Scenario& s, std::vector<Partition>& out, std::vector<int>& partition_of_kernel) {
  out.clear();
  partition_of_kernel.assign(s.kernels.size(), -1);
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    const auto& t = s.kernels[i].tpcs;
    if (t.empty()) continue;
    int found = -1;
    for (size_t p = 0; p < out.size() && found < 0; ++p) {
      if (out[p].tpcs == t) {
        found = static_cast<int>(p);
        break;
      }
      std::vector<int> common;
      std::set_intersection(t.begin(), t.end(), out[p].tpcs.begin(), out[p].tpcs.end(), std::back_inserter(common));
      if (!common.empty())
        return fmt::format("kernel {}'s TPCs overlap partition {} without equalling it (TPC {} in both); green contexts "
                           "split the GPU into disjoint SM groups",
                           s.kernels[i].name, p, common.front());
    }
    if (found < 0) {
      found = static_cast<int>(out.size());
      out.push_back({t, static_cast<int>(t.size()) * s.device.sms_per_tpc});
    }
    partition_of_kernel[i] = found;
  }
  return "";
}

GreenContextSupport green_context_support(int driver_version, bool built_with_green_contexts) {
  if (!built_with_green_contexts)
    return {GreenContexts::Unsupported, "this binary was built against a CUDA toolkit without green contexts (12.4 or later)"};
  if (driver_version < 12040)
    return {GreenContexts::Unsupported,
            fmt::format("the driver supports CUDA {}.{}; green contexts need 12.4 or later", driver_version / 1000,
                        driver_version % 1000 / 10)};
  return {GreenContexts::Available, ""};
}

std::string_view to_string(SmResourceSource s) {
  switch (s) {
    case SmResourceSource::Nominal: return "nominal";
    case SmResourceSource::Driver: return "driver";
  }
  return "?";
}

nlohmann::json SmResource::to_json() const {
  return {{"sm_count", sm_count}, {"min_partition", min_partition}, {"alignment", alignment}, {"source", to_string(source)}};
}

SmResource nominal_sm_resource(const model::Device& d) {
  SmResource r;
  r.sm_count = d.sms;
  const int major = std::atoi(d.cc.c_str());
  if (major >= 9) r.min_partition = 8, r.alignment = 8;
  else if (major == 8) r.min_partition = 4, r.alignment = 2;
  else r.min_partition = 2, r.alignment = 2;
  return r;
}

std::string_view to_string(GreenSplitFit f) {
  switch (f) {
    case GreenSplitFit::Fits: return "fits";
    case GreenSplitFit::TooLarge: return "too-large";
  }
  return "?";
}

nlohmann::json GreenSplitPlan::to_json() const {
  nlohmann::json gs = nlohmann::json::array();
  for (const auto& g : groups)
    gs.push_back({{"partition", g.partition}, {"requested_sms", g.requested_sms}, {"min_count", g.min_count}});
  nlohmann::json j = {{"status", to_string(status)}, {"sm_resource", resource.to_json()}, {"groups", std::move(gs)}};
  if (!reason.empty()) j["reason"] = reason;
  return j;
}

GreenSplitPlan plan_green_split(const std::vector<Partition>& partitions, const SmResource& r) {
  GreenSplitPlan g;
  g.resource = r;
  const int align = std::max(1, r.alignment);
  int total = 0;
  for (size_t i = 0; i < partitions.size(); ++i) {
    GreenGroup gg;
    gg.partition = static_cast<int>(i);
    gg.requested_sms = partitions[i].sms;
    const int at_least = std::max(gg.requested_sms, r.min_partition);
    gg.min_count = (at_least + align - 1) / align * align;
    total += gg.min_count;
    g.groups.push_back(gg);
  }
  if (total > r.sm_count) {
    g.status = GreenSplitFit::TooLarge;
    std::vector<std::string> each;
    for (const auto& gg : g.groups) each.push_back(fmt::format("{} for partition {}", gg.min_count, gg.partition));
    g.reason = fmt::format("the green contexts need {} SMs ({}; groups of at least {} in multiples of {}), the GPU has {}",
                           total, fmt::join(each, ", "), r.min_partition, align, r.sm_count);
  }
  return g;
}

std::string_view to_string(PartitionMatch m) {
  switch (m) {
    case PartitionMatch::Same: return "same";
    case PartitionMatch::Effective: return "effective";
    case PartitionMatch::Inexpressible: return "inexpressible";
  }
  return "?";
}

nlohmann::json GrantedPartition::to_json() const {
  nlohmann::json j = {{"partition", partition},       {"requested_tpcs", requested_tpcs}, {"requested_sms", requested_sms},
                      {"min_count", min_count},       {"granted_sms", granted_sms},       {"census_sms", census_sms},
                      {"block_sms", block_sms},       {"seen_sms", seen_sms},             {"effective_tpcs", effective_tpcs},
                      {"match", to_string(match)}};
  if (!reason.empty()) j["reason"] = reason;
  return j;
}

GrantedPartition map_granted_partition(const Partition& p, const GreenGroup& g, int granted_sms,
                                       const std::vector<int>& census_sms, const std::vector<int>& block_sms,
                                       const model::Device& d) {
  GrantedPartition r;
  r.partition = g.partition;
  r.requested_tpcs = p.tpcs;
  r.requested_sms = g.requested_sms;
  r.min_count = g.min_count;
  r.granted_sms = granted_sms;
  auto sorted_unique = [](std::vector<int> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  r.census_sms = sorted_unique(census_sms);
  r.block_sms = sorted_unique(block_sms);
  std::vector<int> seen = r.census_sms;
  seen.insert(seen.end(), r.block_sms.begin(), r.block_sms.end());
  r.seen_sms = sorted_unique(std::move(seen));
  std::vector<std::string> why;
  for (int sm : r.seen_sms)
    if (sm < 0 || sm >= d.sms) why.push_back(fmt::format("SM {} is outside {}'s SMs 0..{}", sm, d.name, d.sms - 1));
  if (static_cast<int>(r.census_sms.size()) < granted_sms)
    why.push_back(fmt::format("the census saw {} SMs of the {} granted, so the set is not known", r.census_sms.size(),
                              granted_sms));
  if (why.empty()) {
    const std::set<int> in(r.seen_sms.begin(), r.seen_sms.end());
    for (int sm : r.seen_sms) {
      const int t = d.tpc_of(sm);
      if (!r.effective_tpcs.empty() && r.effective_tpcs.back() == t) continue;
      r.effective_tpcs.push_back(t);
      for (int o = t * d.sms_per_tpc; o < (t + 1) * d.sms_per_tpc; ++o)
        if (!in.count(o))
          why.push_back(fmt::format("SM {} ran the partition's blocks but SM {} of the same TPC {} did not", sm, o, t));
    }
  }
  if (!why.empty()) {
    r.match = PartitionMatch::Inexpressible;
    r.effective_tpcs.clear();
    r.reason = fmt::format("partition {} cannot be written as TPCs: {}", g.partition, fmt::join(why, "; "));
    return r;
  }
  r.match = r.effective_tpcs == p.tpcs ? PartitionMatch::Same : PartitionMatch::Effective;
  if (r.match == PartitionMatch::Effective)
    r.reason = fmt::format("partition {} asked for TPCs [{}] ({} SMs); its green context ran on TPCs [{}] ({} SMs)",
                           g.partition, fmt::join(p.tpcs, ", "), g.requested_sms, fmt::join(r.effective_tpcs, ", "),
                           r.seen_sms.size());
  if (static_cast<int>(r.seen_sms.size()) > granted_sms)
    r.reason += fmt::format("{}the blocks ran on {} SMs, more than the {} provisioned (cuda.h allows it under MPS and "
                            "with dynamic parallelism)", r.reason.empty() ? "" : "; ", r.seen_sms.size(), granted_sms);
  return r;
}

void add_block_sms(const LaunchPlan& plan, const std::vector<KernelRecord>& recs, std::vector<std::vector<int>>& acc) {
  acc.resize(plan.partitions.size());
  for (size_t k = 0; k < plan.kernels.size() && k < recs.size(); ++k) {
    const int p = plan.kernels[k].partition;
    if (p < 0 || p >= static_cast<int>(acc.size())) continue;
    for (const auto& b : recs[k].blocks) {
      if (b.start_ns == 0) continue;  // never ran
      acc[static_cast<size_t>(p)].push_back(b.sm_start);
      acc[static_cast<size_t>(p)].push_back(b.sm_end);
    }
  }
}

model::Scenario effective_scenario(const model::Scenario& s, const LaunchPlan& plan, const std::vector<GrantedPartition>& g) {
  model::Scenario e = s;
  for (size_t k = 0; k < e.kernels.size() && k < plan.kernels.size(); ++k) {
    const int p = plan.kernels[k].partition;
    if (p < 0) continue;
    for (const auto& gp : g)
      if (gp.partition == p && gp.match != PartitionMatch::Inexpressible) e.kernels[k].tpcs = gp.effective_tpcs;
  }
  return e;
}

GpcMap gpc_map_from_clusters(int sms, int sms_per_tpc, const std::vector<std::vector<int>>& sms_of_each_cluster) {
  GpcMap m;
  std::vector<int> parent(static_cast<size_t>(sms));
  for (int i = 0; i < sms; ++i) parent[static_cast<size_t>(i)] = i;
  std::function<int(int)> root = [&](int x) {
    while (parent[static_cast<size_t>(x)] != x) x = parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
    return x;
  };
  std::vector<char> seen(static_cast<size_t>(sms), 0);
  for (size_t c = 0; c < sms_of_each_cluster.size(); ++c) {
    const auto& group = sms_of_each_cluster[c];
    for (int sm : group) {
      if (sm < 0 || sm >= sms) {
        m.problems.push_back(fmt::format("cluster {} reports SM {}, outside 0..{}", c, sm, sms - 1));
        continue;
      }
      seen[static_cast<size_t>(sm)] = 1;
      // Union by the smaller root, so a GPC's root is its lowest SM.
      int a = root(sm), b = root(group.front() >= 0 && group.front() < sms ? group.front() : sm);
      if (a != b) parent[static_cast<size_t>(std::max(a, b))] = std::min(a, b);
    }
  }
  for (int sm = 0; sm < sms; ++sm)
    if (!seen[static_cast<size_t>(sm)]) m.problems.push_back(fmt::format("SM {} ran no block of any cluster", sm));
  std::map<int, int> gpc_of_root;
  std::vector<int> gpc_of_sm(static_cast<size_t>(sms));
  for (int sm = 0; sm < sms; ++sm) {
    auto [it, fresh] = gpc_of_root.try_emplace(root(sm), static_cast<int>(gpc_of_root.size()));
    gpc_of_sm[static_cast<size_t>(sm)] = it->second;
  }
  for (int t = 0; t * sms_per_tpc < sms; ++t) {
    const int g = gpc_of_sm[static_cast<size_t>(t * sms_per_tpc)];
    for (int i = 1; i < sms_per_tpc && t * sms_per_tpc + i < sms; ++i)
      if (gpc_of_sm[static_cast<size_t>(t * sms_per_tpc + i)] != g)
        m.problems.push_back(fmt::format("the SMs of TPC {} fell into different groups", t));
    m.gpc_of_tpc.push_back(g);
  }
  std::map<int, std::vector<int>> members;
  for (int sm = 0; sm < sms; ++sm)
    if (seen[static_cast<size_t>(sm)]) members[root(sm)].push_back(sm);
  for (auto& [r, g] : members) m.sm_groups.push_back(std::move(g));
  if (!m.problems.empty()) m.status = GpcMapStatus::Incomplete;
  return m;
}

namespace {
// The scheduler's index of one %smid under an order (itself under none; -1 outside it).
int index_in_order(const std::vector<int>& smid_of_sm, int smid) {
  if (smid_of_sm.empty()) return smid;
  const auto it = std::find(smid_of_sm.begin(), smid_of_sm.end(), smid);
  return it == smid_of_sm.end() ? -1 : static_cast<int>(it - smid_of_sm.begin());
}
}  // namespace

int scheduler_sm(const model::Device& d, int smid) { return index_in_order(d.smid_of_sm, smid); }

void to_scheduler_order(const model::Device& d, std::vector<KernelRecord>& recs) {
  if (d.smid_of_sm.empty()) return;
  for (auto& k : recs)
    for (auto& b : k.blocks)
      if (b.start_ns != 0) {
        b.sm_start = scheduler_sm(d, b.sm_start);
        b.sm_end = scheduler_sm(d, b.sm_end);
      }
}

nlohmann::json raw_records_json(const std::vector<KernelRecord>& recs) {
  uint64_t origin = 0;
  for (const auto& k : recs)
    for (const auto& b : k.blocks)
      if (b.start_ns != 0 && (origin == 0 || b.start_ns < origin)) origin = b.start_ns;
  nlohmann::json kernels = nlohmann::json::object();
  const auto rel = [&](uint64_t ns) -> nlohmann::json { return ns == 0 ? nlohmann::json(nullptr) : nlohmann::json(ns - origin); };
  for (const auto& k : recs) {
    nlohmann::json sm = nlohmann::json::array(), start = nlohmann::json::array(), end = nlohmann::json::array();
    for (const auto& b : k.blocks) {
      sm.push_back(b.sm_start);
      start.push_back(rel(b.start_ns));
      end.push_back(rel(b.end_ns));
    }
    kernels[k.name] = {{"sm", sm}, {"start_ns", start}, {"end_ns", end}};
  }
  return {{"origin_ns", origin}, {"kernels", kernels}};
}

nlohmann::json gpc_probe_json(const GpcProbe& probe, const GpcMap& map) {
  nlohmann::json j;
  j["gpu"] = {{"name", probe.identity.name}, {"uuid", probe.identity.uuid}, {"cc", probe.identity.cc},
              {"sms", probe.identity.sms}, {"driver_version", probe.identity.driver_version}};
  j["cluster_sizes"] = probe.cluster_sizes;
  j["launches"] = probe.launches;
  j["map"] = map.status == GpcMapStatus::Complete ? "complete" : "incomplete";
  j["problems"] = map.problems;
  j["sm_groups"] = map.sm_groups;
  j["gpc_of_tpc"] = map.gpc_of_tpc;
  j["sms_of_each_cluster"] = probe.sms_of_each_cluster;
  j["first_waves"] = probe.first_waves;
  return j;
}

SmOrder sm_order_from_waves(int sms, const std::vector<std::vector<int>>& first_waves) {
  SmOrder o;
  if (first_waves.empty()) {
    o.status = SmOrderStatus::Unusable;
    o.problem = "no first wave was recorded";
    return o;
  }
  const auto& first = first_waves.front();
  std::vector<int> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> all(static_cast<size_t>(sms));
  for (int i = 0; i < sms; ++i) all[static_cast<size_t>(i)] = i;
  if (sorted != all) {
    o.status = SmOrderStatus::Unusable;
    o.problem = fmt::format("the first wave of {} blocks did not run one block on each of the {} SMs", first.size(), sms);
    return o;
  }
  o.smid_of_sm = first;
  for (size_t i = 0; i < first.size(); ++i)
    for (const auto& w : first_waves)
      if (i >= w.size() || w[i] != first[i]) {
        o.varying.push_back(static_cast<int>(i));
        break;
      }
  return o;
}

std::vector<std::vector<int>> clusters_in_order(const std::vector<int>& smid_of_sm, const std::vector<std::vector<int>>& clusters) {
  std::vector<std::vector<int>> out;
  for (const auto& c : clusters) {
    std::vector<int> m;
    for (int smid : c) m.push_back(index_in_order(smid_of_sm, smid));
    out.push_back(std::move(m));
  }
  return out;
}

model::Device device_with_gpc_map(const model::Device& base, const GpcProbe& probe, const GpcMap& map,
                                  const SmOrder& order) {
  if (map.status != GpcMapStatus::Complete)
    throw model::InputError("probe-gpc", "gpc_of_tpc",
                            fmt::format("the measured map is incomplete: {}", fmt::join(map.problems, "; ")));
  if (probe.identity.sms != base.sms)
    throw model::InputError("probe-gpc", "--base",
                            fmt::format("{} has {} SMs, the GPU {}", base.name, base.sms, probe.identity.sms));
  model::Device d = base;
  d.gpc_of_tpc = map.gpc_of_tpc;
  d.gpc_source = fmt::format("measured by tbcheck probe-gpc on {} (UUID {}, driver {}): {} launches of clusters of {} "
                             "blocks, one block per SM; SMs sharing a cluster share a GPC",
                             probe.identity.name, probe.identity.uuid, probe.identity.driver_version, probe.launches,
                             fmt::join(probe.cluster_sizes, ", "));
  if (order.status == SmOrderStatus::Measured) {
    d.smid_of_sm = order.smid_of_sm;
    d.smid_source = fmt::format(
        "measured by tbcheck probe-gpc on {} (UUID {}, driver {}): the first wave of one block per SM on the empty GPU, "
        "{} launch(es); {}",
        probe.identity.name, probe.identity.uuid, probe.identity.driver_version, probe.first_waves.size(),
        order.varying.empty() ? std::string("every launch took the SMs in this order")
                              : fmt::format("positions {} varied between launches (the first launch's order is kept)",
                                            fmt::join(order.varying, ", ")));
  }
  return d;
}

}  // namespace tbcheck::oracle::cuda
