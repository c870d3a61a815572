// Chrome trace-event export: metadata events name one track per SM lane, complete events carry
// the blocks. Lanes come from the SVG's assignment so both pictures agree on who overlaps whom.
#include "tbcheck/report/trace.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "tbcheck/model/observation.hpp"
#include "tbcheck/report/controls.hpp"
#include "tbcheck/report/svg.hpp"

namespace tbcheck::report {

namespace {

constexpr int kPid = 1;  // pid 0 reads as the idle/swapper process in some trace viewers
constexpr int kMinStride = 64;

nlohmann::json metadata(const char* what, int tid, nlohmann::json args) {
  return {{"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"name", what}, {"args", std::move(args)}};
}

int stride_for(const Lanes& lanes) {
  int most = 0;
  for (int n : lanes.per_sm) most = std::max(most, n);
  return std::max(kMinStride, most);
}

}  // namespace

int trace_tid_stride(const model::Schedule& s, const model::Scenario& sc) {
  return stride_for(assign_lanes(s, timeline_rows(s, sc)));
}

nlohmann::json chrome_trace(const model::Schedule& s, const model::Scenario& sc, double us_per_unit) {
  if (!(us_per_unit > 0) || !std::isfinite(us_per_unit))
    throw std::invalid_argument(fmt::format("chrome_trace: us_per_unit must be positive and finite, got {}", us_per_unit));
  const int rows = timeline_rows(s, sc);
  const Lanes lanes = assign_lanes(s, rows);
  const int stride = stride_for(lanes);

  nlohmann::json events = nlohmann::json::array();
  const std::string device = s.device.empty() ? sc.device.name : s.device;
  const std::string process =
      s.hypothesis.empty() ? fmt::format("GPU {}", device) : fmt::format("GPU {} (hypothesis {})", device, s.hypothesis);
  events.push_back(metadata("process_name", 0, {{"name", process}}));
  events.push_back(metadata("process_sort_index", 0, {{"sort_index", 0}}));
  // Idle SMs get their track too: an empty row is itself a finding about the scheduler.
  for (int sm = 0; sm < rows; ++sm) {
    const int n = std::max(lanes.per_sm[static_cast<size_t>(sm)], 1);
    for (int lane = 0; lane < n; ++lane) {
      const int tid = sm * stride + lane;
      events.push_back(metadata("thread_name", tid,
                                {{"name", lane == 0 ? fmt::format("SM {}", sm) : fmt::format("SM {} / lane {}", sm, lane)}}));
      events.push_back(metadata("thread_sort_index", tid, {{"sort_index", tid}}));
    }
  }

  for (size_t k = 0; k < s.kernels.size(); ++k) {
    const auto& ks = s.kernels[k];
    // The kernel's controls on each of its blocks, and the cluster a block belongs to.
    const int ki = sc.kernel_index(ks.name);
    const model::Kernel* kernel = ki < 0 ? nullptr : &sc.kernels[static_cast<size_t>(ki)];
    const nlohmann::json controls = kernel ? controls_json(*kernel) : nlohmann::json::object();
    const std::vector<int> cluster = kernel && kernel->cluster ? model::cluster_of_blocks(*kernel) : std::vector<int>{};
    for (size_t b = 0; b < ks.blocks.size(); ++b) {
      const int lane = lanes.of_block[k][b];
      if (lane < 0) continue;
      const auto& p = ks.blocks[b];
      events.push_back({{"ph", "X"},
                        {"pid", kPid},
                        {"tid", p.sm * stride + lane},
                        {"name", ks.name},
                        {"cat", "block"},
                        {"ts", static_cast<double>(p.start) * us_per_unit},
                        {"dur", static_cast<double>(p.end - p.start) * us_per_unit},
                        {"args", {{"block", b}, {"sm", p.sm}, {"lane", lane}, {"start", p.start}, {"end", p.end}}}});
      auto& args = events.back()["args"];
      if (!controls.empty()) args["controls"] = controls;
      if (b < cluster.size()) args["cluster"] = cluster[b];
    }
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

}  // namespace tbcheck::report
