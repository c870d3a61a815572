// Thread block clusters: the GPC map, what the cluster rule supports, the placement order
// and the two choices (GPC, SM) that the simulator makes and smt/src/cluster_pick.cpp encodes.
#include "tbcheck/model/cluster.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/resources.hpp"

namespace tbcheck::model {

bool has_clusters(const Scenario& s) {
  return std::any_of(s.kernels.begin(), s.kernels.end(), [](const Kernel& k) { return k.cluster.has_value(); });
}

std::vector<int> cluster_gpc_of_sm(const Device& d) {
  std::vector<int> out;
  if (d.gpc_of_tpc.empty()) return out;
  for (int sm = 0; sm < d.sms; ++sm) out.push_back(d.gpc_of_tpc[static_cast<size_t>(d.tpc_of(sm))]);
  return out;
}

int gpc_count(const std::vector<int>& gpc_of_sm) {
  int n = 0;
  for (int g : gpc_of_sm) n = std::max(n, g + 1);
  return n;
}

namespace {
int first_clustered(const Scenario& s) {
  for (size_t i = 0; i < s.kernels.size(); ++i)
    if (s.kernels[i].cluster) return static_cast<int>(i);
  return -1;
}
}  // namespace

std::string cluster_no_gpc_map(const Scenario& s) {
  const int i = first_clustered(s);
  if (i < 0 || !s.device.gpc_of_tpc.empty()) return "";
  return fmt::format("kernels[{}].cluster: kernel {} is launched with clusters, whose blocks share one GPC, but device "
                     "{} has no GPC map (gpc_of_tpc); measure one on the GPU with `tbcheck probe-gpc --out DIR` "
                     "(CC 9.0, CUDA build) or give a device file with gpc_of_tpc and gpc_source",
                     i, s.kernels[static_cast<size_t>(i)].name, s.device.name);
}

std::string cluster_unsupported_options(const Hypothesis& h) {
  // The resource options (warps, registers, shared memory, its TPC configuration, capacity units) are all
  // placed by the room rule: cluster_room_additivity (testing/src/cluster_additivity.cpp) finds a block taking
  // exactly one block of room on its own SM under each of them, and the room counts blocks even where the
  // hypothesis ranks SMs by another value (capacity literal). Issue is settled per scenario (cluster_unsupported).
  switch (h.selection) {
    case Selection::RoundRobin:
    case Selection::MostRoom: return "";
    case Selection::GpcPriority: return "selection gpc-priority (a Fermi dispatcher)";
    case Selection::GpcSpread: return "selection gpc-spread (measured on grids without clusters)";
    case Selection::TpcPosition: return "selection tpc-position (measured on grids without clusters)";
    case Selection::Rule: return "";  // ranks the chosen GPC's SMs (Dispatcher::rule_pick_in)
  }
  return "";
}

std::string cluster_unsupported(const Scenario& s, const Hypothesis& h) {
  const int i = first_clustered(s);
  if (i < 0) return "";
  if (const std::string why = cluster_unsupported_options(h); !why.empty())
    return fmt::format("kernels[{}].cluster: kernel {} is launched with clusters, which {} cannot place: it has {}", i,
                       s.kernels[static_cast<size_t>(i)].name, h.name, why);
  // Paired issue sends a pair leader's follower to the leader's SM; no recording or paper
  // says how a pair meets a cluster, so a clustered kernel large enough to lead pairs is refused. A smaller
  // one issues single blocks under the pair rule itself, and is placed.
  for (size_t k = 0; k < s.kernels.size(); ++k) {
    const Kernel& kr = s.kernels[k];
    if (!kr.cluster || !h.leads_pair(s.device, kr.blocks, 0)) continue;
    return fmt::format("kernels[{}].cluster: kernel {} is launched with clusters and, with {} blocks on {}, leads "
                       "block pairs under {}'s issue {}; no source says how a pair is spread over a cluster's GPC",
                       k, kr.name, kr.blocks, s.device.name, h.name, to_string(h.issue));
  }
  return "";
}

std::string cluster_never_fits(const Kernel& k, const Device& d, const Hypothesis& h) {
  if (!k.cluster || d.gpc_of_tpc.empty()) return "";
  const int64_t per_sm = GpuState::empty_sm_capacity(d, h, block_needs(k, d, h)).blocks;
  const std::vector<int> gpc_of_sm = cluster_gpc_of_sm(d);
  std::vector<int64_t> room(static_cast<size_t>(gpc_count(gpc_of_sm)), 0);
  for (int g : gpc_of_sm) room[static_cast<size_t>(g)] += per_sm;
  const int64_t best = room.empty() ? 0 : *std::max_element(room.begin(), room.end());
  if (best >= k.cluster_size()) return "";
  return fmt::format("a cluster of {} blocks needs one GPC to hold them all; the largest GPC of empty SMs holds {}",
                     k.cluster_size(), best);
}

std::vector<int> cluster_block_order(int blocks, const std::optional<std::pair<int, int>>& grid,
                                     const std::optional<std::array<int, 3>>& cluster) {
  if (!cluster || !grid || (*cluster)[1] == 1) return {};  // 1-D clusters are consecutive block indices
  Kernel k;
  k.blocks = blocks;
  k.grid = grid;
  k.cluster = cluster;
  const std::vector<int> id = cluster_of_blocks(k);
  std::vector<int> out(static_cast<size_t>(blocks));
  for (int b = 0; b < blocks; ++b) out[static_cast<size_t>(b)] = b;
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) { return id[static_cast<size_t>(a)] < id[static_cast<size_t>(b)]; });
  for (int b = 0; b < blocks; ++b)
    if (out[static_cast<size_t>(b)] != b) return out;
  return {};
}

std::vector<std::vector<int>> gpc_sms_in_order(const std::vector<int>& gpc_of_sm, const std::vector<int>& order) {
  std::vector<std::vector<int>> out(static_cast<size_t>(gpc_count(gpc_of_sm)));
  if (gpc_of_sm.empty()) return out;  // no map: no GPCs
  for (int sm : order) out[static_cast<size_t>(gpc_of_sm[static_cast<size_t>(sm)])].push_back(sm);
  return out;
}

int choose_cluster_gpc(const Hypothesis& h, const std::vector<int64_t>& room, int size) {
  int best = -1;
  for (int g = 0; g < static_cast<int>(room.size()); ++g) {
    if (room[static_cast<size_t>(g)] < size) continue;
    switch (h.cluster_gpc) {
      case ClusterGpc::LowestIndex: return g;
      case ClusterGpc::MostRoom:
        if (best < 0 || room[static_cast<size_t>(g)] > room[static_cast<size_t>(best)]) best = g;
        break;
    }
  }
  return best;
}

int choose_cluster_sm(const Hypothesis& h, const std::vector<int>& sms, const std::vector<int>& pos_of,
                      const std::vector<int64_t>& blocks, const std::vector<int64_t>& value, const std::vector<int>& on_sm,
                      int rr_pointer) {
  auto ok = [&](int sm) { return blocks[static_cast<size_t>(sm)] >= 1; };
  int best = -1;
  switch (h.cluster_spread) {
    case ClusterSpread::OnePerSm:
      for (int sm : sms)
        if (ok(sm) && (best < 0 || on_sm[static_cast<size_t>(sm)] < on_sm[static_cast<size_t>(best)])) best = sm;
      return best;
    case ClusterSpread::Selection: break;
  }
  switch (h.selection) {
    case Selection::RoundRobin: {
      // The first SM at or after the pointer in the order; `sms` is in that order, so the first one at or
      // after it, else (wrapping) the first one.
      int wrapped = -1;
      for (int sm : sms) {
        if (!ok(sm)) continue;
        if (pos_of[static_cast<size_t>(sm)] >= rr_pointer) return sm;
        if (wrapped < 0) wrapped = sm;
      }
      return wrapped;
    }
    case Selection::MostRoom:
    case Selection::GpcPriority:  // refused with clusters (cluster_unsupported); most-room keeps this total
    case Selection::GpcSpread:
    case Selection::TpcPosition:
    case Selection::Rule:  // the dispatcher ranks by the rule itself (Dispatcher::rule_pick_in)
      for (int sm : sms)
        if (ok(sm) && (best < 0 || value[static_cast<size_t>(sm)] > value[static_cast<size_t>(best)])) best = sm;
      return best;
  }
  return best;
}

}  // namespace tbcheck::model
