// The gpc-priority dispatcher (seed 003, model/engine/src/fermi_dispatch.cpp) as simulate() calls it, on a plan
// make_plan accepted.
#pragma once
#include "plan.hpp"
#include "tbcheck/model/schedule.hpp"

namespace tbcheck::model {

// The whole scenario under a gpc-priority hypothesis (docs/design.md dispatcher: streams, retire-then-dispatch,
// head-of-line blocking; Fermi placement); `p` is make_plan(s, h) and runs.
Schedule simulate_fermi(const Scenario& s, const Hypothesis& h, const ScenarioPlan& p);

}  // namespace tbcheck::model
