// SVG timelines (`tbcheck predict --svg`): one row per SM or per run of identical SMs, blocks as bars
// coloured by kernel; and the difference picture of two schedules with the differing blocks marked.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/schedule.hpp"

namespace tbcheck::report {

// Most blocks a picture (--svg) or a trace (--trace) draws: both are built whole in memory, so a larger
// schedule is refused before it is simulated instead of exhausting memory.
inline constexpr int64_t kMaxDrawnBlocks = int64_t{1} << 16;


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

// An inclusive range of SM indices (`--sms A-B`).
struct SmRange {
  int first = 0;
  int last = 0;
};
// "A-B" or "A" with 0 <= A <= B; anything else is an InputError naming `flag`.
SmRange parse_sm_range(const std::string& text, const std::string& flag);

struct TimelineOptions {
  // Zoom: draw only these SMs. A range beyond the rows drawn is an InputError naming --sms.
  std::optional<SmRange> sms;
  // Consecutive SMs whose rows are identical (same kernels, times and lanes; in a difference picture,
  // on both sides and with the same marks) share one row labelled "SM 12-40 (29 SMs, same)".
  bool fold = true;
};

// Which blocks of two schedules of one scenario differ. A block differs when its SM differs (an SM of -1,
// not recorded, never counts) or, with compare_times, its start or end does; a block one side lacks differs.
struct ScheduleDiff {
  std::vector<std::vector<bool>> differs;  // [kernel][block], over the longer of the two
  size_t count = 0;
  // The first difference as validate reports it: the earliest kernel in scenario order, then the lowest block.
  std::optional<std::pair<size_t, size_t>> first;
};
ScheduleDiff diff_schedules(const model::Schedule& a, const model::Schedule& b, bool compare_times = true);

// A self-contained SVG document (no external fonts or CSS). Every drawn bar is one
// <rect class="block"> carrying a <title> tooltip such as "k1 block 3: SM 4, 0-1"; a bar standing
// for the same block slot on a folded run of SMs reads "k1 blocks 12, 13, ..., 40: SMs 12-40, 0-1".
std::string render_timeline_svg(const model::Schedule& s, const model::Scenario& sc, const std::string& title,
                                const TimelineOptions& o = {});

// The difference picture: for every SM (or folded run), a's row above b's row (labelled with each
// schedule's hypothesis), blocks that differ outlined at full colour and the rest faded; the first
// difference is outlined in red, pointed at in the right margin and spelled out under the title.
std::string render_diff_svg(const model::Schedule& a, const model::Schedule& b, const model::Scenario& sc,
                            const std::string& title, const TimelineOptions& o = {}, bool compare_times = true);

}  // namespace tbcheck::report
