// SVG timeline of a schedule (`tbcheck predict --svg`): one row per SM, blocks as bars coloured
// by kernel, so a prediction can be eyeballed against a paper figure or a hardware recording.
#pragma once
#include <string>
#include <vector>

#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/schedule.hpp"

namespace tbcheck::report {

// Blocks resident on one SM at the same time must each stay visible, in the SVG as in the
// Chrome trace, so both renderings share this greedy interval partitioning (optimal: an SM uses
// exactly as many lanes as it has blocks resident at its busiest instant).
struct Lanes {
  std::vector<std::vector<int>> of_block;  // [kernel][block] -> lane within its SM; -1 when unplaced
  std::vector<int> per_sm;                 // lanes each SM row needs; 0 for an idle SM
};

// Rows to draw: every SM of the device, widened if the schedule names a larger SM index (a
// hand-written or recorded schedule may disagree with the scenario's device).
int timeline_rows(const model::Schedule& s, const model::Scenario& sc);

// Lanes for `rows` SMs. Blocks of one SM are taken by start time, then kernel and block index,
// so the result is deterministic; a block with sm outside [0, rows) gets lane -1.
Lanes assign_lanes(const model::Schedule& s, int rows);

// XML text/attribute escaping (& < > " '); control characters XML 1.0 forbids become '?'.
std::string xml_escape(const std::string& text);

// A self-contained SVG document (no external fonts or CSS). Every block is one
// <rect class="block"> carrying a <title> tooltip such as "k1 block 3: SM 4, 0-1".
std::string render_timeline_svg(const model::Schedule& s, const model::Scenario& sc, const std::string& title);

}  // namespace tbcheck::report
