// Constant-schedule lemmas: Z3 proves that one hypothesis gives a structure the same schedule for every
// launchable parameter choice; two hypotheses proved to give one schedule there cannot be separated.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/smt/synthesis.hpp"

namespace tbcheck::smt {

// Whether h schedules `blocks` on d as `expected` for every parameter choice within o.bounds under
// which every kernel is launchable: None = proved (UNSAT of "launchable and some block differs"),
// Found = a counterexample in `scenario`, Unknown / Unsupported with the reason. Every block is
// compared, so the answer needs no "the dispatcher never looks ahead" argument (the paired issue and
// gpc-priority do look ahead). Why it pays: a pair query carries two encodings and asks about a
// difference, which Z3 often cannot refute within a second even on 2 blocks; this query carries one
// encoding and a fixed answer, is asked once per hypothesis rather than once per pair, and for the
// one-kernel structures of 1-2 blocks that the pair queries left undecided it is answered in 0.01-1 s.
QueryResult prove_schedule(const model::Hypothesis& h, const model::Device& d, const std::vector<int>& blocks,
                           const FixedSchedule& expected, const QueryOptions& o);

}  // namespace tbcheck::smt
