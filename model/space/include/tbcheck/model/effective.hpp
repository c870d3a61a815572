// effective_options, the one normaliser of "the options as they act on this device" (or this scenario), so that
// hypotheses differing only where nothing can tell them apart compare equal without a solver.
#pragma once
#include <vector>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/options.hpp"

namespace tbcheck::model {

struct Scenario;

// Whether `o` scans the SMs of `d` as the natural order does (the simulator's sm_order, compared).
bool order_is_natural_on(Order o, const Device& d);
// h with every option that cannot matter on d set to one value, so that hypotheses differing only there
// compare equal with same_options (no solver needed): the order (order_is_natural_on), the issue rule
// (issue_on), the capacity rule where the selection does not rank by it, the priority rule (priority_on),
// the partition rule where masks cannot act, and pb-any where it acts as sm (pb_any_acts_as_sm). The
// descriptive fields (name, source, description, file) are cleared.
Hypothesis effective_options(Hypothesis h, const Device& d);

// What one scenario lets the options show, read once from its kernels: the register counts and the rounded
// shared memory S (ascending, distinct) that a threshold can cut between, and the controls it sets.
struct ScenarioReach {
  explicit ScenarioReach(const Scenario& s);
  std::vector<int> regs, smem;
  bool masks = false;     // some TPC mask leaves a kernel fewer SMs (partition_matters under allowed-sms)
  bool clusters = false;  // some kernel is launched in clusters
  bool local = false;     // some kernel uses local memory
  bool pairs = false;     // some kernel is large enough to lead block pairs under a paired issue rule
  bool skips = false;     // some kernel's warps are a multiple of the PB count (the skip's condition)
};

// h with every option the scenario cannot exercise set to one value, so that two hypotheses the scenario
// cannot tell apart compare equal with same_options: the priority rule where every kernel gets one rank, the
// partition rule where no mask binds, the cluster rules without clusters, the local rule without local
// memory, the issue rule without a kernel large enough to lead pairs, the skip without a kernel whose warps are
// a multiple of the PB count, and each threshold moved to the kernel quantity that ignores the same kernels (off where it
// ignores none; where it ignores every kernel, its resource's rules too). `r` is ScenarioReach(s), kept by callers that ask for many hypotheses. Apply it to
// effective_options(h, s.device), as the overload below does: the simulator reads these options only there.
Hypothesis options_on(Hypothesis h, const Scenario& s, const ScenarioReach& r);
Hypothesis effective_options(Hypothesis h, const Scenario& s);

}  // namespace tbcheck::model
