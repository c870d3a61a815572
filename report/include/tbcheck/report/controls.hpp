// The controls a kernel sets (stream priority, TPC partition, thread block clusters) as predict, the SVG
// timeline and the Chrome trace show them: one wording and one JSON shape for all three.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbcheck/model/scenario.hpp"

namespace tbcheck::report {

// "priority -5", "TPCs 0-3", "clusters of 2 x 1 x 1 (132)", joined by ", "; "" when the kernel sets none.
std::string controls_text(const model::Kernel& k);
// {"priority": -5, "tpcs": [0, 1], "cluster": [2, 1, 1], "clusters": 132} with only the fields set; {} when none.
nlohmann::json controls_json(const model::Kernel& k);
// The SMs a kernel with a TPC partition may use, as flags per SM of the device; empty when it has none.
std::vector<bool> allowed_sms(const model::Kernel& k, const model::Device& d);
// Adds "controls" to every kernel of a schedule JSON (docs/design.md shape) that sets one, matched by name,
// and "cluster" (the cluster index, x fastest) to every block of a clustered kernel.
void annotate_schedule_json(nlohmann::json& schedule, const model::Scenario& sc);

}  // namespace tbcheck::report
