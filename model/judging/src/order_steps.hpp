// The exact level's order search under trace timing, retirement by retirement: a depth-first search that chooses
// which tied block retires next as the clock reaches it, and drops a choice at the first block it misplaces.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/scenario.hpp"

namespace tbcheck::model::detail {

// Recorded ends less than a tick apart, chained: their blocks may have retired in any order that keeps
// ends a tick or more apart in their recorded order (docs/recordings.md).
struct TieGroup {
  std::vector<std::pair<int, int>> members;  // (case kernel, block), by recorded end
  std::vector<int64_t> ends;                 // recorded, ascending
};

// One launch order of a recording, as the whole-simulation search (orders.cpp) arranged it. The p-th retirement
// of a tie group happens at scale * ends[p] + p; equal ends may also retire together at scale * ends[0].
struct StepProblem {
  const Scenario* arranged = nullptr;    // the case's kernels in the launch order, releases scaled
  const Hypothesis* h = nullptr;
  const Observation* o = nullptr;
  std::vector<int> case_index;           // arranged kernel -> case kernel
  const std::vector<TieGroup>* groups = nullptr;
  // Per tie group of equal ends: its members in start order (tried first); empty for the others.
  const std::vector<std::vector<int>>* by_start = nullptr;
  int64_t scale = 1, tick = 1;
  int64_t cross_gap = 1;  // recorded starts this far apart order dispatches across SMs (the dispatch skew + 1)
};

// Reproduced: some order places every block as recorded (its choices returned). NoOrder: none does, every order
// examined. BoundReached: the step bound ran out first. NotApplicable: the recording or the hypothesis is
// outside what the stepwise search models (a block recorded shorter than a tick, a gpc-pointer, a kernel the
// stepping scheduler refuses); the whole-simulation search judges it.
enum class StepOutcome { Reproduced, NoOrder, BoundReached, NotApplicable };

struct StepResult {
  StepOutcome outcome = StepOutcome::NotApplicable;
  std::vector<std::vector<int>> choice;  // Reproduced: per tie group, its members in retirement order (empty: together)
  int64_t steps = 0;                     // instants simulated and choices tried
};

// The search over p's tie orders, at most max_steps steps. Its verdict is the exact level's judge
// (compare within orders.cpp) applied to every order, decided as the blocks are dispatched.
StepResult search_orders_stepwise(const StepProblem& p, int64_t max_steps);

}  // namespace tbcheck::model::detail
