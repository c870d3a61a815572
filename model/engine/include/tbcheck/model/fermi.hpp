// The Fermi thread-block scheduler of seed 003 (S. Pai) as selection `gpc-priority`: a first wave
// placed by GPC priorities (pick_sm), later blocks on SMs in completion order, 2-D block order (pick_block).
#pragma once
#include <string>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"

namespace tbcheck::model {

// GPC of every SM (from the device's gpc_of_tpc); an InputError naming the device and the hypothesis
// when the device has no GPC map, which gpc-priority cannot do without (seed 003 Sections 2 and 4.1).
std::vector<int> fermi_gpc_of_sm(const Device& d, const Hypothesis& h, const std::string& where);
// The reason fermi_gpc_of_sm gives for a device without a GPC map.
std::string fermi_no_gpc_map_reason(const Device& d, const Hypothesis& h);

// seed 003 Section 4.2 (pick_block): the block indices (y * x_size + x) of a grid in the order the
// scheduler picks them. A 1-D grid (or y_size 1) is 0, 1, 2, ...; a 2-D grid follows the multirow
// U/n pattern. The result is a permutation of 0 .. x_size * y_size - 1.
std::vector<int> fermi_block_order(int x_size, int y_size);
std::vector<int> fermi_block_order(const Kernel& k);

// seed 003 Sections 3 and 4.1 (pick_sm): the SM of each pick of a first wave of `blocks` blocks, where
// SM s may take room[s] blocks (on an idle GPU room[s] is the residency r for every SM). The wave has
// min(blocks, sum of room) picks. `gpc_of_sm` as from fermi_gpc_of_sm.
std::vector<int> fermi_first_wave(const std::vector<int>& gpc_of_sm, const std::vector<int>& room, int blocks);

}  // namespace tbcheck::model
