// A scenario's plan under a hypothesis: the feasibility checks (scenario support, GPC map, kernels that never
// fit) and the per-kernel and per-scenario data both dispatchers read, computed once per simulation.
#include "plan.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "tbcheck/model/cluster.hpp"
#include "tbcheck/model/controls.hpp"
#include "tbcheck/model/fermi.hpp"
#include "tbcheck/model/options.hpp"

namespace tbcheck::model {

std::vector<int> sm_order(const Device& d, Order o) {
  std::vector<int> order;
  order.reserve(static_cast<size_t>(d.sms));
  switch (o) {
    case Order::Natural:
      for (int i = 0; i < d.sms; ++i) order.push_back(i);
      break;
    case Order::EvenFirst:  // Mechanism 1: 0, 2, ..., then 1, 3, ...
      for (int i = 0; i < d.sms; i += 2) order.push_back(i);
      for (int i = 1; i < d.sms; i += 2) order.push_back(i);
      break;
  }
  return order;
}

std::string_view to_string(Feasibility f) {
  switch (f) {
    case Feasibility::Runs: return "runs";
    case Feasibility::KernelNeverFits: return "kernel-never-fits";
    case Feasibility::NoGpcMap: return "no-gpc-map";
    case Feasibility::TooLarge: return "too-large";
    case Feasibility::Unsupported: return "unsupported";
  }
  return "?";
}

std::string FeasibilityCheck::message(const std::string& where) const { return input_error_message(where, field, reason); }

json FeasibilityCheck::to_json() const {
  json j = {{"status", to_string(status)}};
  if (kernel >= 0) j["kernel"] = kernel;
  if (!runs()) j["reason"] = reason;
  return j;
}

namespace {

// The first kernel one block of which fits no empty SM under h.
FeasibilityCheck kernel_feasibility(const Scenario& s, const Hypothesis& h) {
  FeasibilityCheck f;
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    std::string why = infeasibility_reason(s.kernels[i], s.device, h);
    if (why.empty()) why = cluster_never_fits(s.kernels[i], s.device, h);
    if (why.empty()) continue;
    f.status = Feasibility::KernelNeverFits;
    f.kernel = static_cast<int>(i);
    f.field = fmt::format("kernels[{}]", i);
    f.reason = fmt::format("kernel {} can never be placed on {} under {}: {}", s.kernels[i].name, s.device.name, h.name, why);
    return f;
  }
  return f;
}

// Most blocks one simulation takes: each block's placement is held in memory (about 24 bytes), so
// 2^24 blocks stay well below a gigabyte; larger scenarios are refused before anything is allocated.
constexpr int64_t kMaxSimulatedBlocks = int64_t{1} << 24;

// What no hypothesis can run, whatever its resources: too many blocks, or a control no option models.
FeasibilityCheck scenario_support(const Scenario& s, const Hypothesis& h) {
  FeasibilityCheck f;
  if (s.total_blocks() > kMaxSimulatedBlocks) {  // before any per-block allocation
    f.status = Feasibility::TooLarge;
    f.field = "kernels";
    f.reason = fmt::format("{} blocks in total; the simulator takes at most {} (2^24) blocks per scenario",
                           s.total_blocks(), kMaxSimulatedBlocks);
    return f;
  }
  // Clusters (model/engine/src/cluster.cpp): placed by the device's GPC map, never a guessed one.
  for (auto [status, why] : {std::pair{Feasibility::NoGpcMap, cluster_no_gpc_map(s)},
                             std::pair{Feasibility::Unsupported, cluster_unsupported(s, h)}}) {
    if (why.empty()) continue;
    const size_t colon = why.find(": ");
    f.status = status;
    f.field = why.substr(0, colon);
    f.reason = (status == Feasibility::Unsupported ? "unsupported: " : "") + why.substr(colon + 2);
    return f;
  }
  switch (h.selection) {
    case Selection::GpcPriority:
      // Seed 003's waves are planned per kernel in launch order over the whole GPC map; neither a priority
      // order nor a TPC mask has a reading there yet.
      if (const bool by_priority = priorities_matter(s, h.priority); by_priority || partition_matters(s, h.partition)) {
        size_t k = 0;  // the first kernel that sets the control
        while (k + 1 < s.kernels.size() && (by_priority ? !s.kernels[k].priority : s.kernels[k].tpcs.empty())) ++k;
        f.status = Feasibility::Unsupported;
        f.kernel = static_cast<int>(k);
        f.field = fmt::format("kernels[{}].{}", k, by_priority ? "priority" : "tpcs");
        f.reason = fmt::format("unsupported: {} under {}: the gpc-priority dispatcher (seed 003) has no priority order "
                               "(priority '{}') or TPC partition (partition '{}') yet",
                               s.kernels[k].name, h.name, to_string(h.priority), to_string(h.partition));
        return f;
      }
      switch (h.retirement) {  // combination_error refuses it in files; a hypothesis built in code meets it here
        case Retirement::AllThenDispatch: break;
        case Retirement::StartOrder:
          f.status = Feasibility::Unsupported;
          f.field = "retirement";
          f.reason = fmt::format("unsupported: {}: the gpc-priority dispatcher (seed 003) has no start-order "
                                 "retirement; it queues completions in dispatch order already",
                                 h.name);
          return f;
      }
      for (size_t k = 0; k < s.kernels.size(); ++k)
        if (s.kernels[k].release > 0) {
          f.status = Feasibility::Unsupported;
          f.kernel = static_cast<int>(k);
          f.field = fmt::format("kernels[{}].release_time", k);
          f.reason = fmt::format("unsupported: {} under {}: the gpc-priority dispatcher (seed 003) plans waves "
                                 "from time 0 and has no launch instants yet",
                                 s.kernels[k].name, h.name);
          return f;
        }
      break;
    case Selection::GpcSpread:
    case Selection::TpcPosition:
      if (s.device.gpc_of_tpc.empty()) {  // docs/results/h200.md, finding 8: the GPCs take turns
        f.status = Feasibility::NoGpcMap;
        f.field = "device";
        f.reason = fmt::format("hypothesis {} uses selection '{}', which needs the GPC of every SM; device {} "
                               "has no GPC map (gpc_of_tpc; tbcheck probe-gpc measures one on a GPU)",
                               h.name, to_string(h.selection), s.device.name);
        return f;
      }
      break;
    case Selection::Rule:
      if (const FeatureInfo* needs = gpc_map_feature(h.rule); needs && s.device.gpc_of_tpc.empty()) {
        f.status = Feasibility::NoGpcMap;
        f.field = "device";
        f.reason = fmt::format("hypothesis {} ranks by rule key '{}', which needs the GPC of every SM; device {} has no "
                               "GPC map (gpc_of_tpc; tbcheck probe-gpc measures one on a GPU)",
                               h.name, needs->name, s.device.name);
        return f;
      }
      break;
    case Selection::RoundRobin:
    case Selection::MostRoom: break;
  }
  return f;
}

}  // namespace

FeasibilityCheck check_feasibility(const Scenario& s, const Hypothesis& h) {
  FeasibilityCheck f = scenario_support(s, h);
  if (!f.runs()) return f;
  // The other selections' GPC map: scenario_support.
  if (is_fermi(h.selection) && s.device.gpc_of_tpc.empty()) {  // seed 003 Sections 2 and 4.1
    f.status = Feasibility::NoGpcMap;
    f.field = "device";
    f.reason = fermi_no_gpc_map_reason(s.device, h);
    return f;
  }
  return kernel_feasibility(s, h);
}

StreamOrder stream_order(const Scenario& s) {
  const size_t nk = s.kernels.size();
  StreamOrder o{std::vector<int>(nk, -1), std::vector<bool>(nk, true)};
  std::map<int, int> last_of_stream;
  for (size_t k = 0; k < nk; ++k) {
    if (!s.kernels[k].stream) continue;
    auto [it, fresh] = last_of_stream.try_emplace(*s.kernels[k].stream, static_cast<int>(k));
    if (!fresh) {
      o.successor[static_cast<size_t>(it->second)] = static_cast<int>(k);
      o.first_in_stream[k] = false;
      it->second = static_cast<int>(k);
    }
  }
  return o;
}

namespace {

// The index block t (in dispatch order) of kernel k gets in the schedule: the hand-out pass at the end.
std::vector<int> block_labels(const Kernel& kr, const Device& d, const Hypothesis& h) {
  return kr.cluster ? cluster_block_order(kr.blocks, kr.grid, kr.cluster) : h.hand_out_order(d, kr.blocks);
}

}  // namespace

KernelPlan plan_kernel(const Kernel& k, const Device& d, const Hypothesis& h) {
  KernelPlan p;
  p.needs = block_needs(k, d, h);
  p.blocks = k.blocks;
  p.rank = priority_rank(k.priority, d, h.priority);
  p.cluster_size = k.cluster ? k.cluster_size() : 0;
  if (!k.tpcs.empty()) {
    std::vector<char> a(static_cast<size_t>(d.sms));
    for (int sm = 0; sm < d.sms; ++sm) a[static_cast<size_t>(sm)] = sm_allowed(k.tpcs, d, sm, h.partition);
    if (std::find(a.begin(), a.end(), 0) != a.end()) p.allowed = std::move(a);
  }
  p.labels = is_fermi(h.selection) ? fermi_block_order(k) : block_labels(k, d, h);  // seed 003 Section 4.2
  return p;
}

ScenarioPlan make_plan(const Scenario& s, const Hypothesis& h) {
  ScenarioPlan p;
  p.feasibility = check_feasibility(s, h);
  if (!p.feasibility.runs()) return p;
  p.kernels.reserve(s.kernels.size());
  for (const Kernel& k : s.kernels) p.kernels.push_back(plan_kernel(k, s.device, h));
  p.streams = stream_order(s);
  p.gpc_of_sm = cluster_gpc_of_sm(s.device);
  return p;
}

}  // namespace tbcheck::model
