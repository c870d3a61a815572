// The block scheduler as a stepping object for a simulator's own clock loop (docs/stepping.md): kernels
// launched, blocks placed and retired at the caller's times, by the same dispatcher simulate() runs.
#pragma once
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "tbcheck/model/feasibility.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"

namespace tbcheck::model {

// A launch: the kernel's handle (launch order from 0) when accepted, or -1 and why not (`check`):
// KernelNeverFits (one block fits no empty SM under the hypothesis), NoGpcMap (clusters on a device
// without a GPC map), Unsupported (a cluster option no rule models), TooLarge.
struct Launch {
  int kernel = -1;
  FeasibilityCheck check;
  bool accepted() const { return check.runs(); }
  json to_json() const;
};

// One block placed: the kernel's handle, the block's index in its grid (hand-out order applied), the SM.
struct Placement {
  int kernel = 0;
  int block = 0;
  int sm = 0;
  bool operator==(const Placement&) const = default;
};

// Placed: at least one block. NoneFits: an eligible kernel has blocks left but its next block fits
// nowhere now (head-of-line: later kernels wait too). NothingEligible: no launched kernel has blocks
// left that may start (all placed, or waiting for a stream predecessor).
enum class PlaceStatus { Placed, NoneFits, NothingEligible };
std::string_view to_string(PlaceStatus);

struct PlaceResult {
  PlaceStatus status = PlaceStatus::NothingEligible;
  std::vector<Placement> placements;  // in dispatch order
  json to_json() const;
};

// Times are the caller's (any unit, never decreasing from call to call). Calls at one instant follow the
// hypothesis' `retirement` option, which the caller expresses by the order of its calls:
// - all-then-dispatch: retire() every block that ends at t, launch() every kernel launched at t, then
//   place(t) once;
// - start-order: launch() the kernels of t; then for each block ending at t, in the order place()
//   returned them, retire() it and place(t); place(t) once if none ends at t.
// Bad input (a time before the last call's, an unknown kernel or block, a block retired twice, a
// kernel that breaks the device's limits) is an InputError from "scheduler" naming the field ("kernel.threads",
// "block", "now"). A moved-from Scheduler may only be assigned to or destroyed.
class Scheduler {
 public:
  // Whether the stepping scheduler runs this hypothesis: gpc-priority (seed 003's Fermi dispatcher plans
  // whole waves from block durations) is Unsupported, with the reason.
  static FeasibilityCheck support(const Device& d, const Hypothesis& h);
  // An InputError (field "selection", support()'s reason) when support() refuses.
  Scheduler(Device d, Hypothesis h);
  ~Scheduler();
  Scheduler(Scheduler&&) noexcept;
  Scheduler& operator=(Scheduler&&) noexcept;
  // A copy steps on from the same state, apart from the original: a search tries one choice on a copy and
  // keeps the original for the next.
  Scheduler(const Scheduler&);
  Scheduler& operator=(const Scheduler&);

  // Kernel k is launched at `now`: eligible at once, or when the last block of the kernel launched
  // before it on the same `stream` retires. Its `release` and `duration` are not read (the caller owns time).
  Launch launch(const Kernel& k, int64_t now);
  // Places blocks at `now` until the hypothesis answers "cannot schedule now".
  PlaceResult place(int64_t now);
  // The same, appending the placements to `out` (a simulator's own buffer, reused from call to call: no
  // allocation per call once it has grown).
  PlaceStatus place(int64_t now, std::vector<Placement>& out);
  // A placed block finished at `now`: its resources are free for the next place().
  void retire(int kernel, int block, int64_t now);

  int kernels() const;                      // launched and accepted
  int blocks_left(int kernel) const;        // not placed yet
  int in_flight() const;                    // placed and not retired, all kernels
  int64_t room(int sm, int kernel) const;   // blocks of `kernel` SM `sm` could take now
  const Device& device() const;
  const Hypothesis& hypothesis() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tbcheck::model
