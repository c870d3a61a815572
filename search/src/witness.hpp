// Internal to search/: what distinguish does with a witness once found: re-check by both simulators
// (separates), truncation after the first difference, shorter durations, lifting to the full device.
#pragma once
#include <string>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/schedule.hpp"

namespace tbcheck::search::detail {

int total_duration(const model::Scenario& s);

// Replicates the scenario per TPC: every kernel's block count times `factor`.
model::Scenario lift(const model::Scenario& s, const model::Device& full, int factor);

// Kernel completion instants of a schedule are distinct unless the kernels start together and share
// a duration (the same rule the Z3 query states): otherwise hardware order of completion is a race.
bool realizable(const model::Scenario& s, const model::Schedule& sch);

// Their schedules of s differ, and both are realizable: what separates asks of two schedules.
bool schedules_separate(const model::Scenario& s, const model::Schedule& x, const model::Schedule& y);

// Both simulators accept it, their schedules differ, and both are realizable.
bool separates(const model::Scenario& s, const model::Hypothesis& a, const model::Hypothesis& b);

// Lowers each kernel's duration while the scenario still separates (greedy, by simulation only).
model::Scenario shorten(model::Scenario s, const model::Hypothesis& a, const model::Hypothesis& b);

// Drops every block after the first one on which the schedules differ (the dispatcher never looks
// ahead, so the prefix still differs there); kept only when the shorter scenario still separates.
model::Scenario truncate_after_difference(const model::Scenario& s, const model::Hypothesis& a, const model::Hypothesis& b);

}  // namespace tbcheck::search::detail
