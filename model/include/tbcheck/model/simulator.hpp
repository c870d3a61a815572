// The dispatcher of docs/design.md (stream eligibility, retire-then-dispatch per instant, head-of-line
// blocking, block-index order) with a hypothesis plugged in for SM selection and resources.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/schedule.hpp"

namespace tbcheck::model {

// SMs in the order a hypothesis scans them (natural, or Mechanism 1's even-first).
std::vector<int> sm_order(const Device& d, Order o);

// docs/design.md's streams: kernels with equal `stream` form one FIFO in list order; the others have their own.
// Shared by the generic dispatcher and the Fermi one.
struct StreamOrder {
  std::vector<int> successor;         // the next kernel of the same stream, -1 if none
  std::vector<bool> first_in_stream;  // eligible from the start
};
StreamOrder stream_order(const Scenario& s);

// Whether a scenario can run under a hypothesis at all, and if not, why: a kernel one block of which
// fits no empty SM, or gpc-priority on a device without a GPC map. Search asks this of scenarios it
// made up, where "cannot run" is an answer, not an error.
// TooLarge: more blocks than the simulator holds; Unsupported: a control (priority, TPC mask, cluster,
// or a release time under gpc-priority) that no option models yet. Both are the scenario's, whatever
// the hypothesis' resources.
enum class Feasibility { Runs, KernelNeverFits, NoGpcMap, TooLarge, Unsupported };
std::string_view to_string(Feasibility);

struct FeasibilityCheck {
  Feasibility status = Feasibility::Runs;
  int kernel = -1;     // KernelNeverFits: the first such kernel (index in the scenario)
  std::string field;   // the input field to blame ("kernels[2]", "device"); empty when it runs
  std::string reason;  // the message InputError carries; empty when it runs
  bool runs() const { return status == Feasibility::Runs; }
  // The refusal as InputError(where, field, reason) would word it.
  std::string message(const std::string& where) const;
  json to_json() const;
};
FeasibilityCheck check_feasibility(const Scenario& s, const Hypothesis& h);

// Trace-driven judging's extension point (docs/recordings.md): when given, a block retires at
// ends(kernel, block, start) (block: its index in the schedule; at least start + 1) instead of start +
// the kernel's duration, so a recording's retirements time the dispatcher and the hypothesis only
// places blocks. The generic dispatcher only; gpc-priority's (seed 003) plans waves from durations.
using EndTimeSource = std::function<int64_t(int kernel, int block, int64_t start)>;

// The schedule, or std::nullopt with `why` (when given) filled: simulate() without the exception.
std::optional<Schedule> try_simulate(const Scenario& s, const Hypothesis& h, FeasibilityCheck* why = nullptr,
                                     const EndTimeSource* ends = nullptr);

// Simulates the scenario under the hypothesis. A scenario check_feasibility rejects is an InputError
// (from `where`, naming the field and the reason): for input a user gave.
Schedule simulate(const Scenario& s, const Hypothesis& h);

// Raises the InputError simulate() would raise for a kernel that never fits (KernelNeverFits; a missing
// GPC map is raised by simulate itself); `where` names the file.
void check_feasible(const Scenario& s, const Hypothesis& h, const std::string& where);

}  // namespace tbcheck::model
