// `minimize`: delta debugging of a case while a predicate holds: two hypotheses still disagree, or a
// hypothesis' prediction still contradicts the case's observation. The result is 1-minimal (see below).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/observation.hpp"

namespace tbcheck::search {

enum class MinimizeGoal {
  // The two hypotheses' schedules differ (some block on another SM or at another start).
  KeepDisagreement,
  // The case's observation contradicts the hypothesis at a level. An observation belongs to the scenario
  // it was made on, so only reductions that leave its meaning intact are allowed: dropping kernels from
  // the end of the launch order (the dispatcher never looks ahead, so earlier kernels' blocks were placed
  // exactly as if the later ones did not exist) together with the facts and recorded blocks about them.
  // Blocks of a kept kernel are never cut (the hardware may treat a block by its kernel's grid size, as
  // paired issue does) and no parameter is changed (the device was never observed on that).
  KeepFailure,
};

// The one-step reductions of a scenario (kernel removal and each parameter lowered by one step).
enum class Param { Blocks, Threads, Regs, Smem, Duration, Local };
inline constexpr Param kAllParams[] = {Param::Blocks, Param::Threads, Param::Regs, Param::Smem, Param::Duration, Param::Local};
std::string_view to_string(Param);

// Steps a parameter of a kernel can still be lowered: blocks to 1, threads a warp at a time (to 32 x
// (W - 1)), registers down the probe's realizable set (24, 32, ..., 248, 255), shared memory in 128-byte
// steps to 0, duration to 1, local memory a byte at a time to 0.
int steps_down(const model::Kernel& k, const model::Device& d, Param p);
// The kernel with parameter p lowered by `steps` (1 <= steps <= steps_down).
model::Kernel lowered(const model::Kernel& k, const model::Device& d, Param p, int steps);

enum class PredicateResult { Holds, Broken };
std::string_view to_string(PredicateResult);

struct MinimizeOptions {
  MinimizeGoal goal = MinimizeGoal::KeepDisagreement;
  std::vector<model::Hypothesis> hypotheses;  // two (disagreement) or one (failure)
  // KeepFailure: the level at which a recording is compared. nullopt: the coarsest level at which the
  // input case fails (sms, then counts, then exact), so the kept contradiction is the most robust one.
  std::optional<model::Level> level;
  long max_evaluations = 1'000'000;  // a safety net; the fixpoint is normally reached long before
};

enum class MinimizeOutcome { Reduced, AlreadyMinimal, EvaluationCap };
std::string_view to_string(MinimizeOutcome);

struct CaseSize {
  int kernels = 0, blocks = 0;
  long long duration = 0;  // summed kernel durations
};
CaseSize size_of(const model::Scenario& s);

struct MinimizeResult {
  MinimizeOutcome outcome = MinimizeOutcome::AlreadyMinimal;
  model::Case result;
  CaseSize before, after;
  long evaluations = 0;
  std::optional<model::Level> level;  // KeepFailure on a recording: the level used
  std::string scope;                  // which reductions were allowed, in words
  std::string witness;                // the first difference / first failure on the result
};

// Whether the predicate holds on a case (the observation is used only by KeepFailure).
PredicateResult evaluate_predicate(const model::Case& c, const MinimizeOptions& o, std::string* witness = nullptr);

// Minimizes. An InputError (naming c.file) when the predicate does not hold on the input, when the
// hypotheses are not two (disagreement) or one (failure), or when KeepFailure has no observation.
// KeepDisagreement: ddmin over kernels, then each parameter shrunk by halving steps down to single steps,
// repeated until nothing changes; the result is 1-minimal: removing any one kernel or lowering any one
// parameter of one kernel by one step breaks the predicate. KeepFailure: the shortest kernel prefix (see
// MinimizeGoal), 1-minimal for the reductions allowed there. The result's observation is dropped for
// KeepDisagreement (it was made on another scenario) and restricted to the kept kernels for KeepFailure.
MinimizeResult minimize(const model::Case& c, const MinimizeOptions& o);

}  // namespace tbcheck::search
