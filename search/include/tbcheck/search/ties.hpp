// Whether a case's predictions rest on retirements the model treats as simultaneous: each hypothesis
// re-simulated under the other reading of the `retirement` mechanism, and witnesses staggered until none does.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/scenario.hpp"

namespace tbcheck::search {

// What the other reading of tied retirements does to a hypothesis' schedule of a scenario: nothing, moves
// only start instants, or moves blocks to other SMs (the level synthesized witnesses are judged on).
enum class TieEffect { None, StartsMove, SmsMove };
std::string_view to_string(TieEffect);

struct TieCheck {
  TieEffect effect = TieEffect::None;
  std::string hypothesis;  // the first hypothesis whose schedule moves ("" when none does)
  std::string detail;      // its first moved block, as first_difference says it
  bool robust() const { return effect == TieEffect::None; }
  model::json to_json() const;
};

// The hypothesis with the other reading (all-then-dispatch <-> start-order).
model::Hypothesis other_reading(const model::Hypothesis& h);

// Each hypothesis simulated under its own reading and under the other one; the strongest effect found. A
// hypothesis the scenario does not run under, or one the other reading has no meaning for (gpc-priority
// queues its completions in dispatch order already), is unaffected.
TieCheck tie_robust(const model::Scenario& s, const std::vector<model::Hypothesis>& hs);

// Whether a pair stays separated whatever order its tied retirements take, as a trace-timed validate
// judges a recording: each side's recording (under both readings of the retirement mechanism) against
// every admissible order of the other side's retirements (model/judging/src/orders.cpp).
enum class OrderSeparation {
  Separated,   // every such recording refutes the other side under every admissible order
  Reproduced,  // some admissible order of the other side reproduces one of them
  Unknown,     // the order bound was reached, or a side's own recording did not pass it
};
std::string_view to_string(OrderSeparation);  // "separated", "reproduced", "unknown"

struct OrderCheck {
  OrderSeparation result = OrderSeparation::Unknown;
  std::string detail;       // the recording and order that decided it
  int64_t orders_tried = 0;  // simulations over admissible orders, every judgement together
  model::json to_json() const;
};

// The recordings are the simulated schedules with every block's SM, start and end, `resolution`
// {tick: 1, launch_window: 0}: equal ends unordered. `max_orders` bounds each judgement; every judgement is asked
// within kQuickOrders first, which decides alike where it decides (a reproduction, or no bound reached).
constexpr int64_t kQuickOrders = 50;
OrderCheck every_order_separates(const model::Scenario& s, const model::Hypothesis& a, const model::Hypothesis& b,
                                 int64_t max_orders = model::kDefaultMaxOrders);

// How a synthesized witness stands against tied retirements, written in its case file ("tied_retirements").
enum class WitnessTies {
  Robust,      // as found, both readings give each side the same schedule
  Staggered,   // kernel durations changed until they did, the pair still separated
  EveryOrder,  // not staggered, but every_order_separates proved: a trace-timed judgement separates the pair
  Dependent,   // neither: the separation may rest on tied retirements
  Compared,    // the pair differs in the retirement option itself: ties are what it compares
};
std::string_view to_string(WitnessTies);

struct RobustWitness {
  model::Scenario scenario;
  WitnessTies ties = WitnessTies::Robust;
  bool beyond_max_duration = false;  // staggered to a duration above `max_duration`
  OrderCheck orders;                 // every_order_separates on the witness as found, when staggering failed
};

// The witness of (a, b) made robust to tied retirements: kept when tie_robust already holds, else the
// kernels' durations that still separate the pair and are robust, fewest total first within
// [1, max_duration], then up to kStaggerDurationCap (at most kStaggerTries duration vectors in all); else
// the witness as found, `EveryOrder` when every_order_separates proves it, `Dependent` otherwise.
constexpr int kStaggerDurationCap = 12;
constexpr int kStaggerTries = 4000;
RobustWitness robust_witness(const model::Scenario& witness, const model::Hypothesis& a, const model::Hypothesis& b,
                             int max_duration);

// A case file's "tied_retirements": the witness' status, tie_robust's check, and for `EveryOrder` the
// proof and the judging it holds under (`--timing trace`, ties searched within the recording's tick). `orders`
// is every_order_separates on the witness (RobustWitness::orders), written for EveryOrder and Dependent.
model::json tied_retirements_json(const model::Scenario& witness, const model::Hypothesis& a, const model::Hypothesis& b,
                                  WitnessTies ties, bool beyond_max_duration, const OrderCheck& orders);

// A case to check: its scenario and the hypotheses its predictions are made under.
struct TieSubject {
  std::string id;
  model::Scenario scenario;
  std::vector<model::Hypothesis> hypotheses;
};
// The synthesized cases under `path` (a file or a folder, read recursively in path order) that carry
// "predictions": each with the hypotheses named there, a shipped name or `<dir>/<name>.json` in one of
// `hypothesis_dirs`. A name found nowhere is an InputError naming the file and "predictions".
std::vector<TieSubject> tie_subjects(const std::string& path, const std::vector<std::string>& hypothesis_dirs);

struct TieCount {
  int cases = 0, sms_move = 0, starts_move = 0;
  int compared = 0;  // of `cases`, witnesses of a pair that differs in the retirement option itself (not counted as moving)
  int every_order = 0;  // of `sms_move`, pairs every_order_separates proves separated
  // "id: hypothesis: first moved block; every order: result: detail" of each case whose SMs move and that
  // every_order_separates does not prove: the tie-dependent ones
  std::vector<std::string> dependent;
  int tie_dependent() const { return sms_move - every_order; }
};
TieCount count_tie_dependent(const std::vector<TieSubject>& subjects);

}  // namespace tbcheck::search
