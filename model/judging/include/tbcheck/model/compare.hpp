// Judging a predicted schedule against an observation: facts one by one, and recorded schedules
// at three levels (exact, counts, sms). Results are named verdicts, never bare bools.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/schedule.hpp"

namespace tbcheck::model {

enum class Verdict { Pass, Fail, Unknown, Unsupported };
std::string_view to_string(Verdict);

enum class Level { Exact, Counts, Sms };
std::string_view to_string(Level);
Level level_from_string(const std::string& s);  // InputError on an unknown name
inline constexpr Level kAllLevels[] = {Level::Exact, Level::Counts, Level::Sms};

// How a recording judges a hypothesis (docs/recordings.md). Model: the hypothesis predicts the whole
// schedule from the kernels' durations. Trace: blocks retire at their recorded ends and the hypothesis
// only chooses where each next block goes; needs every block's recorded SM, start and end.
enum class Timing { Model, Trace };
std::string_view to_string(Timing);  // "model", "trace"
Timing timing_from_string(const std::string& s, const std::string& flag);  // InputError naming the flag
inline constexpr Timing kAllTimings[] = {Timing::Model, Timing::Trace};

// Simulations one case may take over the orders its recording did not observe before it is `unknown`.
inline constexpr int64_t kDefaultMaxOrders = 2000;

// Which levels a judgement searches the admissible orders for: every level; Exact alone, for callers that read
// only Exact (validate --level exact, the order search over a separating witness, learning from recordings); or
// Exact and per-SM counts (validate --level exact,counts, the words of learning's near misses). Exact is searched
// first in each and the coarser levels start from its closest order, so a level's verdict and order are the same
// under every choice that searches it; a level not searched is absent from the result.
enum class JudgedLevels { All, Exact, ExactAndCounts };
bool judges(JudgedLevels levels, Level l);

// How the exact level searches the orders of tied retirements under trace timing (docs/recordings.md). Stepwise:
// whole simulations over the orders for a few dozen, then, when they decide nothing, a search that chooses each
// tied retirement as the clock reaches it and drops a choice at the first block it dispatches against the recording
// (its bound: max_orders simulations' worth of steps). Enumerate: whole simulations alone, as before the stepwise
// search; kept to check one against the other. Both answer the same question; Stepwise decides far more within a bound.
enum class TieSearch { Stepwise, Enumerate };

// What a judgement's failures say. Words (the default): each failure under the closest order whole simulations
// found, which the stepwise search is preceded by a few of. VerdictOnly, for callers that read verdicts alone
// (learning from recordings): the stepwise search starts at once and a failure it
// decides names no closest order. The verdicts are the same either way; a pass names its order either way.
enum class Wording { Words, VerdictOnly };

struct JudgeOptions {
  // Trace judges the cases whose recordings have block times (the others on model durations); the
  // result names the timing that judged each.
  Timing timing = Timing::Model;
  int64_t max_orders = kDefaultMaxOrders;
  JudgedLevels levels = JudgedLevels::All;
  TieSearch tie_search = TieSearch::Stepwise;
  Wording wording = Wording::Words;
};

// How far apart the first timer reads of blocks dispatched together lie on this recording
// (docs/recordings.md): a dispatch latency that differs between SMs lets a block dispatched later read
// the timer first on another SM, so under trace timing two recorded starts on different SMs order their
// dispatches only when they lie more than `units` apart (and a tick or more). Measured as the widest
// spread of starts among blocks of one kernel that no recorded retirement separates (each such group
// was dispatchable at once, so its spread is the reads' and the dispatcher's, not the rule's).
struct DispatchSkew {
  int64_t units = 0;
  std::string basis;  // which blocks showed it, e.g. "K4 blocks 0-4 started 3..4"; empty when 0
  std::string describe() const;  // "N unit(s) (basis)" or "0 units (...)"
};
// Needs every kernel's sm_of_block, start_of_block and end_of_block (Observation::has_block_times).
DispatchSkew dispatch_skew(const Observation& o, const Scenario& s, int64_t tick);

struct Check {
  Verdict verdict = Verdict::Pass;
  std::string detail;  // the failed fact, or the first differing block
};

struct CaseResult {
  std::string case_id;
  std::string hypothesis;
  Verdict facts = Verdict::Unsupported;        // Unsupported when the case has no facts
  std::vector<Check> fact_checks;              // one per fact, in order
  std::optional<Check> exact, counts, sms;     // present when the case has a recording
  // Per level (exact, counts, sms): the admissible order (docs/recordings.md) that reproduced the
  // recording (pass) or came closest (fail, unknown); empty when it is the order the case lists.
  std::array<std::string, 3> orders;
  std::string reason;                          // for Unknown / Unsupported overall
  bool ran = false;                            // false when the hypothesis could not run the case
  Timing timing = Timing::Model;               // what judged the recording
  int64_t orders_tried = 0;                    // simulations over admissible orders (0: facts only)
  std::optional<DispatchSkew> skew;            // under trace timing: the skew that cross-SM start orders allow

  // The case verdict at a level: every fact passes and the recording agrees at that level.
  Verdict at(Level l) const;
  const std::optional<Check>& level(Level l) const;
  const std::string& order(Level l) const { return orders[static_cast<size_t>(l)]; }
  // The first failure message at a level ("" if it passes).
  std::string first_failure(Level l) const;
};

Check check_fact(const Fact& f, const Scenario& s, const Schedule& sch);
// Exact compares SMs and starts; starts less than `tick` apart agree (the recording's timer resolution).
Check compare_recording(const Observation& o, const Scenario& s, const Schedule& sch, Level l, int64_t tick = 1);

// Simulates the case under the hypothesis and judges it, over every order its recording admits
// (model/judging/src/orders.cpp).
CaseResult evaluate(const Case& c, const Hypothesis& h, const JudgeOptions& o = {});

json to_json(const CaseResult& r);

}  // namespace tbcheck::model
