// Wording and JSON of the controls a kernel sets, shared by predict, the SVG legend and the trace so that
// the three never disagree on how a priority, a partition or a cluster shape is written.
#include "tbcheck/report/controls.hpp"

#include <fmt/format.h>

#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/text.hpp"

namespace tbcheck::report {

std::string controls_text(const model::Kernel& k) {
  std::vector<std::string> parts;
  if (k.priority) parts.push_back(fmt::format("priority {}", *k.priority));
  if (!k.tpcs.empty()) parts.push_back(fmt::format("TPCs {}", model::format_int_list(k.tpcs)));
  if (k.cluster) {
    const auto& c = *k.cluster;
    parts.push_back(fmt::format("clusters of {} x {} x {} ({})", c[0], c[1], c[2], k.blocks / k.cluster_size()));
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

nlohmann::json controls_json(const model::Kernel& k) {
  nlohmann::json j = nlohmann::json::object();
  if (k.priority) j["priority"] = *k.priority;
  if (!k.tpcs.empty()) j["tpcs"] = k.tpcs;
  if (k.cluster) {
    j["cluster"] = *k.cluster;
    j["clusters"] = k.blocks / k.cluster_size();
  }
  return j;
}

std::vector<bool> allowed_sms(const model::Kernel& k, const model::Device& d) {
  if (k.tpcs.empty()) return {};
  std::vector<bool> out(static_cast<size_t>(d.sms), false);
  for (int sm = 0; sm < d.sms; ++sm)
    for (int t : k.tpcs) out[static_cast<size_t>(sm)] = out[static_cast<size_t>(sm)] || d.tpc_of(sm) == t;
  return out;
}

void annotate_schedule_json(nlohmann::json& schedule, const model::Scenario& sc) {
  if (!schedule.contains("kernels")) return;
  size_t at = 0;
  for (auto& kj : schedule["kernels"]) {
    // A schedule lists the scenario's kernels in order: the name search (linear) only where it does not.
    const std::string name = kj.value("name", std::string());
    const int i = at < sc.kernels.size() && sc.kernels[at].name == name ? static_cast<int>(at) : sc.kernel_index(name);
    ++at;
    if (i < 0) continue;
    const model::Kernel& k = sc.kernels[static_cast<size_t>(i)];
    nlohmann::json c = controls_json(k);
    if (c.empty()) continue;
    kj["controls"] = std::move(c);
    if (!k.cluster) continue;
    const std::vector<int> id = model::cluster_of_blocks(k);
    auto& blocks = kj["blocks"];
    for (size_t b = 0; b < blocks.size() && b < id.size(); ++b) blocks[b]["cluster"] = id[b];
  }
}

}  // namespace tbcheck::report
