// Internal to smt/: the Fermi first wave (seed 003 Sections 3 and 4.1, model::fermi_first_wave) over a
// symbolic per-SM room vector, unrolled one pick at a time so that the encoder can place pick p by plan[p].
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <z3++.h>

namespace tbcheck::smt::detail {

// What the encoder lends the unrolling: constants of the scenario's sort, and a named variable equal
// to a term (its `define`, which keeps the per-pick state shared instead of copied into every use).
struct TermSource {
  std::function<z3::expr(int64_t)> num;
  std::function<z3::expr(const std::string&, const z3::expr&)> define;
};

// The SM of each pick p < blocks of a first wave over `room` (one term per SM, 0..r). Only the picks
// p < min(blocks, sum of room) are part of the wave; the terms for later picks are defined but meaningless.
// `gpc_of_sm` as from model::fermi_gpc_of_sm. Exactly fermi_first_wave when the room is concrete.
std::vector<z3::expr> fermi_wave_plan(const TermSource& t, const std::vector<int>& gpc_of_sm,
                                      const std::vector<z3::expr>& room, int blocks);

}  // namespace tbcheck::smt::detail
