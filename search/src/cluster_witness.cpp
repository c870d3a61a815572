// Cluster witnesses (cluster_witness.hpp): two-GPC devices cut from the full device's map, clustered
// structures smallest first, random parameters re-checked by both simulators (separates).
#include "cluster_witness.hpp"

#include <algorithm>
#include <array>
#include <random>

#include <fmt/format.h>

#include "tbcheck/model/cluster.hpp"
#include "witness.hpp"

namespace tbcheck::search::detail {

bool cluster_pair(const model::Hypothesis& h1, const model::Hypothesis& h2, const model::Device& full) {
  if (!full.has_clusters() || full.gpc_of_tpc.empty()) return false;
  if (h1.cluster_gpc == h2.cluster_gpc && h1.cluster_spread == h2.cluster_spread) return false;
  return model::cluster_unsupported_options(h1).empty() && model::cluster_unsupported_options(h2).empty();
}

std::vector<model::Device> cluster_devices(const model::Device& full) {
  // The TPCs of each GPC, in TPC order.
  std::vector<std::vector<int>> tpcs_of;
  for (int t = 0; t < static_cast<int>(full.gpc_of_tpc.size()); ++t) {
    const size_t g = static_cast<size_t>(full.gpc_of_tpc[static_cast<size_t>(t)]);
    if (tpcs_of.size() <= g) tpcs_of.resize(g + 1);
    tpcs_of[g].push_back(t);
  }
  tpcs_of.erase(std::remove_if(tpcs_of.begin(), tpcs_of.end(), [](const auto& v) { return v.empty(); }), tpcs_of.end());
  std::vector<model::Device> out;
  if (tpcs_of.size() < 2) return out;
  // GPC sizes (in TPCs) of the small devices: equal, then the larger GPC second and first.
  for (auto [a, b] : {std::pair{1, 1}, std::pair{1, 2}, std::pair{2, 1}}) {
    if (static_cast<int>(tpcs_of[0].size()) < a || static_cast<int>(tpcs_of[1].size()) < b) continue;
    model::Device d = full;
    d.name = fmt::format("{}-gpcs{}{}", full.name, a, b);
    d.sms = (a + b) * full.sms_per_tpc;
    d.gpc_of_tpc.assign(static_cast<size_t>(a), 0);
    d.gpc_of_tpc.insert(d.gpc_of_tpc.end(), static_cast<size_t>(b), 1);
    d.gpc_source = fmt::format("two GPCs of {} ({} and {} TPCs) for cluster witnesses; {}", full.name, a, b, full.gpc_source);
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<int> ClusterStructure::blocks() const {
  std::vector<int> out;
  if (before > 0) out.push_back(before);
  out.push_back(clusters * dims[0] * dims[1] * dims[2]);
  return out;
}

smt::ParamBounds ClusterStructure::bounds(const smt::ParamBounds& base) const {
  smt::ParamBounds b = base;
  const size_t n = before > 0 ? 2 : 1;
  b.clusters.assign(n, std::nullopt);
  b.grids.assign(n, std::nullopt);
  b.clusters.back() = dims;
  if (dims[1] > 1) b.grids.back() = std::make_pair(dims[0] * clusters, dims[1]);
  return b;
}

std::string ClusterStructure::text() const {
  const std::string c = fmt::format("{} cluster(s) of {}x{}x{}", clusters, dims[0], dims[1], dims[2]);
  return before > 0 ? fmt::format("{} block(s), then {}", before, c) : c;
}

std::vector<ClusterStructure> cluster_structures() {
  std::vector<ClusterStructure> out;
  for (int before = 0; before <= 2; ++before)
    for (int size = 1; size <= 4; ++size)
      for (int clusters = 1; clusters <= 2; ++clusters) out.push_back({before, clusters, {size, 1, 1}});
  for (int before = 0; before <= 2; ++before) out.push_back({before, 2, {2, 2, 1}});
  std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
    return x.before + x.clusters * x.dims[0] * x.dims[1] < y.before + y.clusters * y.dims[0] * y.dims[1];
  });
  return out;
}

std::optional<model::Scenario> cluster_sample(const model::Hypothesis& h1, const model::Hypothesis& h2,
                                              const model::Device& d, const ClusterStructure& st, int samples,
                                              std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int max_w = d.max_threads_per_block / model::kThreadsPerWarp;
  for (int n = 0; n < samples; ++n) {
    model::Scenario s;
    s.device = d;
    s.device_builtin = false;
    auto kernel = [&](const std::string& name, int blocks) {
      model::Kernel k;
      k.name = name;
      k.blocks = blocks;
      // Residency from 1 to many blocks per SM, by warps or by shared memory.
      k.threads = model::kThreadsPerWarp * (pick(0, 1) ? std::min(max_w, 4 * pick(1, 8)) : pick(1, max_w));
      k.regs = 32;
      k.smem = pick(0, 2) == 0 ? 1024 * pick(1, d.max_smem_per_block / 1024 - 1) : 0;
      k.duration = pick(1, 3);
      return k;
    };
    if (st.before > 0) s.kernels.push_back(kernel("k1", st.before));
    model::Kernel c = kernel(fmt::format("k{}", s.kernels.size() + 1), st.blocks().back());
    if (st.dims[1] > 1) c.grid = std::make_pair(st.dims[0] * st.clusters, st.dims[1]);
    c.cluster = st.dims;
    s.kernels.push_back(c);
    if (separates(s, h1, h2)) return shorten(s, h1, h2);
  }
  return std::nullopt;
}

}  // namespace tbcheck::search::detail
