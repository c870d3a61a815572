// `tbcheck probe-gpc`: measure a CC 9.0 GPU's GPC map with thread block clusters and write a device
// file with it (the measurement is oracle/'s probe_gpc; the grouping is cuda_host's, unit-tested).
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/oracle/cuda_host.hpp"

namespace tbcheck::cli {
namespace {

struct ProbeGpc : Command {
  std::string out_dir, base;
  int device_index = 0;

  int run() override {
    if (out_dir.empty()) throw model::InputError("--out", "", "give the directory for the device file");
    model::check_output_dir(out_dir, "--out");
    oracle::cuda::CudaOptions o;
    o.device_index = device_index;
    const oracle::cuda::GpcProbe p = oracle::cuda::probe_gpc(o);
    if (p.status != oracle::RunStatus::Ok) {
      say("probe-gpc: {}: {}\n", oracle::to_string(p.status), p.reason);
      const bool setup = p.status == oracle::RunStatus::NoDevice || p.status == oracle::RunStatus::Unsupported;
      return setup ? kExitBadInput : kExitFailed;
    }
    // The built-in device the GPU is (by its scheduler limits), unless --base names one.
    const model::Device* d = nullptr;
    if (!base.empty()) {
      d = &model::builtin_device(base, "--base", "");
    } else {
      for (const auto& b : model::builtin_devices())
        if (oracle::cuda::compare_identity(b, p.identity).status == oracle::cuda::IdentityMatch::Match) d = &b;
      if (!d) throw model::InputError("--base", "", fmt::format("no built-in device matches {}; name one", p.identity.name));
    }
    // The scheduler's SM order first: the GPC map is written in it, as every SM index tbcheck uses.
    const auto order = oracle::cuda::sm_order_from_waves(p.identity.sms, p.first_waves);
    const bool ordered = order.status == oracle::cuda::SmOrderStatus::Measured;
    const auto map = oracle::cuda::gpc_map_from_clusters(
        p.identity.sms, d->sms_per_tpc,
        ordered ? oracle::cuda::clusters_in_order(order.smid_of_sm, p.sms_of_each_cluster) : p.sms_of_each_cluster);
    // The raw measurement first, complete map or not: a GPU run is never lost.
    nlohmann::json raw_json = oracle::cuda::gpc_probe_json(p, map);
    raw_json["sm_order"] = {{"status", ordered ? "measured" : "unusable"}, {"smid_of_sm", order.smid_of_sm},
                            {"varying_positions", order.varying}, {"problem", order.problem},
                            {"note", "sm_groups and gpc_of_tpc number SMs in this order when it was measured; "
                                     "sms_of_each_cluster and first_waves are %smid"}};
    const std::string raw = (std::filesystem::path(out_dir) / ("probe-gpc-" + d->name + ".json")).string();
    model::write_file_atomic(raw, model::json_file_text(raw_json, 1), /*no_overwrite=*/true);
    say("raw measurement -> {}\n", raw);
    const model::Device measured = oracle::cuda::device_with_gpc_map(*d, p, map, order);
    const std::string path = (std::filesystem::path(out_dir) / (measured.name + ".json")).string();
    model::write_file_atomic(path, model::json_file_text(measured.to_json(), 2), /*no_overwrite=*/true);
    if (!ordered) say("scheduler SM order not measured: {}; the map numbers SMs as %smid\n", order.problem);
    else if (!order.varying.empty())
      say("scheduler SM order: positions {} varied between launches; the first launch's order is kept\n",
                 fmt::join(order.varying, ", "));
    say("{}: {} GPCs over {} TPCs (clusters of {} blocks, {} launches) -> {}\n", measured.name,
               *std::max_element(map.gpc_of_tpc.begin(), map.gpc_of_tpc.end()) + 1, map.gpc_of_tpc.size(),
               fmt::join(p.cluster_sizes, ", "), p.launches, path);
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> make_probe_gpc(CLI::App& app) {
  auto c = std::make_unique<ProbeGpc>();
  c->app = app.add_subcommand("probe-gpc",
                              "Measure a CC 9.0 GPU's GPC map with thread block clusters and write a device file with it");
  c->app->add_option("--out", c->out_dir, "Directory for the device file <device>.json")->required();
  c->app->add_option("--base", c->base, "Built-in device the GPU is (default: the one whose limits match)");
  c->app->add_option("--device-index", c->device_index, "CUDA device ordinal (default 0)")->check(integer_in(0, 64));
  return c;
}

}  // namespace tbcheck::cli
