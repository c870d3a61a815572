// Selection `gpc-priority`: Pai's Fermi thread-block scheduler (seed 003): pick_sm, pick_block and the GPC map;
// its own dispatcher (fermi_dispatch.cpp), since a planned first wave and SM reuse are not a per-block SM choice.
#include "tbcheck/model/fermi.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "tbcheck/model/error.hpp"
#include "tbcheck/model/resources.hpp"

namespace tbcheck::model {

// What this file implements, section by section of seed 003, and what it adds where Pai is silent.
//
// Residency r (Section 3, "maximum residency"): the blocks of the kernel one empty SM holds under the
//   hypothesis' resource options (GpuState::empty_sm_capacity), the factor of Section 4.1's priorities.
// First wave (Section 3 pseudo-code; Section 4): min(blocks, r x SMs) picks placed by pick_sm, all at
//   once. The picks take blocks in pick_block order (Section 4.2), so the wave is "not necessarily
//   consecutive" blocks.
// pick_sm (Section 4.1): GPC g starts at priority r x (SMs in g). Each step picks the GPC of highest
//   priority, the lowest index on ties ("priorities.index"), and
//   - while more blocks of the kernel remain to be picked (this one included) than there are SMs, sends
//     one block to every SM of that GPC in ascending %smid (28x1 table: GPC0 gets blocks 0-3 on SMs 0, 4,
//     8, 12). The count is of the kernel's blocks, not of the wave ("only when there are less than 14
//     thread blocks remaining overall", the 42x1 grid). Pai's "less than 14 remaining" is read as
//     remaining after the current pick: the 28x1 table switches at TB14 with 14 blocks left, and the
//     14-block grid is one-at-a-time from the start;
//   - otherwise sends one block to the next SM of that GPC in round-robin order of %smid, a pointer per
//     GPC that starts at the GPC's lowest SM and that whole-GPC steps leave where it was (TB14 goes to
//     SM0 after blocks 0-3 went to SMs 0, 4, 8, 12);
//   and lowers the GPC's priority by the blocks it sent.
// After the first wave (Section 3, "SMs are picked in the order of completing thread blocks"): each next
//   block goes to the SM where a block completed, oldest completion first, each completion used once.
//   Blocks completing at the same instant are ordered by when they were dispatched (the model has no
//   finer clock; of equal-duration blocks the earlier dispatched would finish first on hardware).
// pick_block (Section 4.2): see fermi_block_order.
//
// Not covered by Pai (Section 4.4: concurrent kernels), chosen here so that a lone kernel on an idle GPU is
// exactly the above:
// - Dispatch follows docs/design.md: stream eligibility, retire-then-dispatch per instant, and head-of-line
//   blocking (only the earliest-launched eligible kernel with blocks left dispatches).
// - A kernel plans its first wave when it first becomes the head, over the room the GPU has then: SM s
//   counts for min(r, blocks of the kernel s can take now); priorities are the sums of these per GPC, the
//   whole-GPC step sends one block to every SM of the GPC with room left in the plan, the single step
//   skips SMs without, and "SMs" in the switch rule is the number of SMs with room. On an idle GPU every
//   SM counts r and this is Pai's pick_sm.
// - Planning a wave forgets the completions seen before it (the wave already counts the room they
//   freed); later completions of any kernel feed one GPU-wide queue. A block after its kernel's wave
//   takes the oldest completion whose SM can hold it now (a completion of a smaller kernel's block may
//   not); if none can, it waits for the next instant (head-of-line).
// - A wave pick whose SM cannot hold the block (possible only when a resource option's capacity is not
//   additive) waits for the next instant likewise.

namespace {

// The multirow scan of Section 4.2 on a grid of `cols` x `rows` (x, y): pushes y * cols + x.
void scan_grid(int cols, int rows, std::vector<int>& out) {
  auto at = [&](int y, int x) { out.push_back(y * cols + x); };
  const int pairs = rows / 2;             // multirows of two grid rows
  const int even_cols = cols - cols % 2;  // columns covered by U / n primitives
  for (int m = 0; m < pairs; ++m) {
    const int top = 2 * m, bottom = 2 * m + 1;
    if (m % 2 == 0) {
      // "Even-numbered multirows are scanned by U from left-to-right": down, across, up.
      for (int c = 0; c < even_cols; c += 2) {
        at(top, c);
        at(bottom, c);
        at(bottom, c + 1);
        at(top, c + 1);
      }
      // "For grids with an odd number of columns, the last column contributes only vertical segments
      // each containing 4 thread blocks": down the last column over this multirow and the next (3x4
      // table: blocks (0..3, 2) are picks 4-7, between the U of multirow 0 and the n of multirow 1).
      // Where no odd multirow follows (rows mod 4 is 2 or 3) the segment has 2 blocks (not in 003).
      if (cols % 2 == 1) {
        const int last = m + 1 < pairs ? bottom + 2 : bottom;
        for (int y = top; y <= last; ++y) at(y, cols - 1);
      }
    } else {
      // "odd-numbered multirows are scanned by n from right-to-left": up, across, down, starting at the
      // bottom row (2x6 table: picks 4-7 are (3,1), (2,1), (2,0), (3,0)). The last column of an odd
      // column count was taken by the preceding even multirow's vertical segment.
      for (int c = even_cols - 2; c >= 0; c -= 2) {
        at(bottom, c + 1);
        at(top, c + 1);
        at(top, c);
        at(bottom, c);
      }
    }
  }
  if (rows % 2 == 1) {
    // "For grids with an odd number of rows, the last row is swept horizontally in the opposite
    // direction of the preceding multirow" (4x3 table: row 2 is picks 8-11 from right to left).
    const int y = rows - 1;
    const bool preceding_left_to_right = (pairs - 1) % 2 == 0;
    if (preceding_left_to_right) {
      for (int x = cols - 1; x >= 0; --x) at(y, x);
    } else {
      for (int x = 0; x < cols; ++x) at(y, x);
    }
  }
}

}  // namespace

std::vector<int> fermi_block_order(int x_size, int y_size) {
  std::vector<int> out;
  out.reserve(static_cast<size_t>(x_size) * static_cast<size_t>(y_size));
  if (y_size <= 1) {
    // Section 3: "For 1-D grids, thread blocks are picked in increasing order of thread block ID".
    for (int b = 0; b < x_size * y_size; ++b) out.push_back(b);
    return out;
  }
  scan_grid(x_size, y_size, out);
  return out;
}

std::vector<int> fermi_block_order(const Kernel& k) {
  if (!k.grid) return fermi_block_order(k.blocks, 1);
  return fermi_block_order(k.grid->first, k.grid->second);
}

std::string fermi_no_gpc_map_reason(const Device& d, const Hypothesis& h) {
  return fmt::format("hypothesis {} uses selection 'gpc-priority' (the Fermi scheduler of seed 003), which needs the "
                     "GPC of every SM; device {} has no GPC map (gpc_of_tpc)",
                     h.name, d.name);
}

std::vector<int> fermi_gpc_of_sm(const Device& d, const Hypothesis& h, const std::string& where) {
  if (d.gpc_of_tpc.empty()) throw InputError(where, "device", fermi_no_gpc_map_reason(d, h));
  std::vector<int> out(static_cast<size_t>(d.sms));
  for (int sm = 0; sm < d.sms; ++sm) out[static_cast<size_t>(sm)] = d.gpc_of_tpc[static_cast<size_t>(d.tpc_of(sm))];
  return out;
}

std::vector<int> fermi_first_wave(const std::vector<int>& gpc_of_sm, const std::vector<int>& room, int blocks) {
  const int sms = static_cast<int>(gpc_of_sm.size());
  const int gpcs = sms == 0 ? 0 : *std::max_element(gpc_of_sm.begin(), gpc_of_sm.end()) + 1;
  std::vector<std::vector<int>> members(static_cast<size_t>(gpcs));  // ascending %smid
  std::vector<int> left(room), priority(static_cast<size_t>(gpcs), 0), pointer(static_cast<size_t>(gpcs), 0);
  int total = 0, with_room = 0;
  for (int sm = 0; sm < sms; ++sm) {
    const size_t g = static_cast<size_t>(gpc_of_sm[static_cast<size_t>(sm)]);
    members[g].push_back(sm);
    priority[g] += left[static_cast<size_t>(sm)];  // Section 4.1: residency x SMs in the GPC
    total += left[static_cast<size_t>(sm)];
    with_room += left[static_cast<size_t>(sm)] > 0 ? 1 : 0;
  }
  const int wave = std::min(blocks, total);
  std::vector<int> out;
  out.reserve(static_cast<size_t>(wave));
  int remaining = blocks;  // blocks of the kernel still to pick, the current one included
  auto send = [&](size_t g, int sm) {
    out.push_back(sm);
    --left[static_cast<size_t>(sm)];
    --priority[g];
    --remaining;
  };
  while (static_cast<int>(out.size()) < wave) {
    // "max_cluster = priorities.index(max_prio)": the lowest-indexed GPC of highest priority. A GPC of
    // positive priority has an SM with room left: priority is exactly the room left in the GPC.
    const size_t g = static_cast<size_t>(std::max_element(priority.begin(), priority.end()) - priority.begin());
    const std::vector<int>& m = members[g];
    if (remaining > with_room) {
      // Whole-GPC step; never overruns the wave: it sends at most with_room < remaining blocks, and when
      // the wave is the room itself, at most the GPC's room.
      for (int sm : m)
        if (left[static_cast<size_t>(sm)] > 0) send(g, sm);
    } else {
      // One block, to the next SM of the GPC in round-robin order of %smid that still has room.
      int& p = pointer[g];
      const int n = static_cast<int>(m.size());
      for (int i = 0; i < n; ++i, p = (p + 1) % n)
        if (left[static_cast<size_t>(m[static_cast<size_t>(p)])] > 0) break;
      send(g, m[static_cast<size_t>(p)]);
      p = (p + 1) % n;
    }
  }
  return out;
}

}  // namespace tbcheck::model
