// Internal to search/: the stream priorities and TPC masks a distinguish structure is tried with, when
// two hypotheses differ in the priority or partition option (control_variants.cpp).
#pragma once
#include <vector>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/smt/bounds.hpp"

namespace tbcheck::search::detail {

// `params` with each assignment of controls to `kernels` kernels on `d` that can make h1 and h2 differ,
// the plain one (no controls) first: priority vectors over the device's least, next and greatest levels
// whose kernel orders differ between the two; one-TPC masks that leave some SM out. Without the plain
// one when the two differ in these mechanisms only (it cannot separate them), so possibly none.
// `mask_tpcs` > 0 draws the masks from the first that many TPCs only (learn on a full device).
std::vector<smt::ParamBounds> control_variants(const model::Hypothesis& h1, const model::Hypothesis& h2,
                                               const model::Device& d, int kernels, const smt::ParamBounds& params,
                                               int mask_tpcs = 0);

// Whether the device can tell the options apart: priorities need a range of two levels (three for
// two-level against strict), masks a second TPC. same_machine_on treats them as equal where it cannot.
bool priority_exercised(const model::Device& d, model::Priority a, model::Priority b);
bool partition_exercised(const model::Device& d);

}  // namespace tbcheck::search::detail
