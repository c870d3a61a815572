// `distinguish`: for each pair of hypotheses, the smallest scenario on which their schedules differ
// (fewest kernels, then blocks, then total duration), synthesized on a reduced device, lifted to the
// full device and re-verified by the simulators; or a bounded proof that none exists; or unknown.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/search/ties.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/schedule.hpp"
#include "tbcheck/smt/bounds.hpp"  // plain settings only: Z3's headers do not reach users of search

namespace tbcheck::search {

struct DistinguishBounds {
  int max_kernels = 3;
  int max_blocks_per_kernel = 3;
  int max_total_blocks = 5;
  smt::ParamBounds params;
  unsigned timeout_ms = 10000;  // per solver query (tbcheck distinguish: 2 s)
  std::vector<int> reduced_tpcs = {1, 2};  // reduced devices tried, in order
  // Simulator pre-pass: random concrete scenarios per structure, run on both simulators before Z3 is
  // asked (a witness costs microseconds there); 0 turns the pre-pass off (Z3 only).
  int sim_samples = 3000;
  // Before a witness is accepted, smaller structures left undecided are sampled this hard.
  int deep_samples = 20000;
  // When nothing separates within the bounds: random structures beyond them (kernels of up to
  // 4 x SMs + 8 blocks), by simulation only; 0 turns it off.
  int wide_samples = 10000;
  // Search beyond the bounds by simulation before the structures within them: any witness, not the smallest
  // (learn's confirmation against the many rule neighbours, where proving minimality cost seconds a pair).
  bool wide_first = false;
  unsigned seed = 1;
  // Z3 time for one pair, all queries together (0: no limit). Once spent, the remaining smaller
  // structures are listed as undecided and minimality is reported as bounded.
  unsigned pair_budget_ms = 0;  // tbcheck distinguish: 2 s
  smt::Sort sort = smt::Sort::Int;  // term sort of the encoding (bench: Int against BitVec)
  // Constant-schedule lemmas (LemmaCache) for one-kernel structures Z3 left undecided as a pair query:
  // the Z3 time of each (0 turns them off). Longer than a pair query's because one lemma serves every
  // pair of a run; its time counts against the pair that asked first, beyond the pair budget.
  unsigned lemma_timeout_ms = 10000;
  // One-kernel structures decided by exhaustive simulation over parameter classes (search/src/classes.hpp)
  // before any lemma or Z3 query; false leaves them to the lemmas and Z3.
  bool enumerate_one_kernel = true;
  // Structures of several kernels decided the same way where the complete enumeration has at most this
  // many scenarios (classes.hpp enumerate_structure); larger ones, and all of them at 0, go to Z3.
  long long max_enumerated = 200'000;
};

enum class PairOutcome { Separated, Inseparable, Unknown, Unsupported };
std::string_view to_string(PairOutcome);

// Which engine found a separating witness: the simulator pre-pass (random concrete scenarios) or
// the Z3 query. Either way the witness is re-checked by both simulators before it is used.
enum class Finder { None, Simulator, Smt };
std::string_view to_string(Finder);

// What one query about a structure of a pair answered, and why it was asked (instrumentation:
// bench_distinguish --queries lists where the time of undecided structures goes).
enum class QueryPurpose { Pair, Shorter, Lemma, Cluster };
std::string_view to_string(QueryPurpose);
enum class StructureAnswer { Separates, Inseparable, Undecided };
std::string_view to_string(StructureAnswer);
struct QueryTime {
  std::string structure;  // "[1,1] on rtx3090-1tpc"
  QueryPurpose purpose = QueryPurpose::Pair;
  StructureAnswer answer = StructureAnswer::Undecided;
  double seconds = 0;
};

struct PairResult {
  std::string h1, h2;
  PairOutcome outcome = PairOutcome::Unknown;
  std::string reason;               // unknown / unsupported: why; inseparable: the bounds
  std::optional<model::Case> witness;  // on the full device, re-verified
  std::string route;                // "lifted x41 from 1 TPC", ...
  int kernels = 0, blocks = 0, total_duration = 0;
  bool minimal_proved = false;      // every smaller structure answered UNSAT
  bool found_beyond_bounds = false; // by the wide simulator search, after nothing within the bounds separated
  std::vector<std::string> unknown_structures;  // smaller structures Z3 could not decide
  double solver_seconds = 0;        // Z3 time
  double wall_seconds = 0;          // all of it: simulator pre-pass, Z3, lifting, re-verification
  std::string first_difference;     // "k2 block 0: SM 1 vs SM 0"
  Finder found_by = Finder::None;   // which engine produced the witness
  std::vector<int> structure;       // blocks per kernel of the witness on the reduced device
  int structures_unsat = 0;         // structures Z3 proved (or a theorem showed) inseparable
  int structures_by_lemma = 0;      // of those, proved by constant-schedule lemmas (LemmaCache)
  int structures_sampled = 0;       // structures the simulator pre-pass sampled
  int structures_by_enumeration = 0;  // of structures_unsat, proved by exhaustive simulation over classes
  int structures_over_limit = 0;      // structures of several kernels whose enumeration exceeded max_enumerated
  double enumeration_seconds = 0;     // spent in that simulation
  // The witness against tied retirements (robust_witness): as found, staggered, or still dependent.
  WitnessTies ties = WitnessTies::Robust;
  bool ties_beyond_max_duration = false;  // staggered to a duration above the bounds' max_duration
  OrderCheck ties_orders;                 // every_order_separates on the witness, where staggering failed
  // A robust witness taken over a smaller one that separates only through tied retirements: that one's
  // structure ("[2,3] on rtx3090-1tpc"); the witness is then the smallest robust one, not the smallest.
  std::string smaller_tie_dependent;
  // A tie-dependent witness (ties == Dependent): what the search for a robust one covered before giving up.
  std::string robust_search;
  std::vector<QueryTime> queries;  // every Z3 query this pair asked, in order
};

// A device with the same per-SM limits and `tpcs` TPCs; a GPC map is kept for those TPCs (GPCs renumbered densely).
model::Device reduced_device(const model::Device& full, int tpcs);

// Whether the two hypotheses make the same decisions on every scenario of `d` by their options alone
// (same options once the ones that cannot matter on `d` are set equal: with at most 2 SMs the
// even-first order is the natural order; the issue rule has no pair leader in kernels of at most
// `max_blocks_per_kernel` blocks; pb-any is sm under SM-pooled registers where model::pb_any_as_sm
// proves it). Then no query is needed on `d`.
bool same_machine_on(const model::Hypothesis& h1, const model::Hypothesis& h2, const model::Device& d,
                     int max_blocks_per_kernel);

// Random concrete scenarios of the given structure on `d` within the bounds' parameter ranges, run on
// both simulators; the first on which the schedules differ (realizable: distinct kernel completion
// instants unless kernels start together with one duration) is returned.
std::optional<model::Scenario> simulator_search(const model::Hypothesis& h1, const model::Hypothesis& h2,
                                                const model::Device& d, const std::vector<int>& blocks,
                                                const smt::ParamBounds& params, int samples, unsigned seed);

// Constant-schedule lemmas shared by the pairs of a run (search/src/lemma_cache.hpp).
class LemmaCache;

// Per-hypothesis schedules of one-kernel structures shared by the pairs of a run (search/src/classes.hpp).
namespace detail {
class OneKernelTables;
}

// `lemmas`, `tables`: shared constant-schedule lemmas and one-kernel schedules (distinguish_all passes
// one of each to every pair); null: private to this pair.
PairResult distinguish_pair(const model::Hypothesis& h1, const model::Hypothesis& h2, const model::Device& full,
                            const DistinguishBounds& b, LemmaCache* lemmas = nullptr,
                            detail::OneKernelTables* tables = nullptr);

// Every pair (i < j in list order) of `hs`: distinguish_pair on `jobs` worker threads (each query has
// its own Z3 context, the simulator is pure), so a 2-core machine answers the pairs in about half the
// wall time. Results come back in pair order whatever the finishing order; `done` is called once per
// pair as it finishes, never from two threads at once (for a progress bar). jobs < 1 means 1.
std::vector<PairResult> distinguish_all(const std::vector<model::Hypothesis>& hs, const model::Device& full,
                                        const DistinguishBounds& b, int jobs,
                                        const std::function<void(const PairResult&)>& done = {});
// The same for the given pairs (indices into hs) only, in the given order (distinguish --shard).
std::vector<PairResult> distinguish_pairs(const std::vector<model::Hypothesis>& hs,
                                          const std::vector<std::pair<size_t, size_t>>& pairs, const model::Device& full,
                                          const DistinguishBounds& b, int jobs,
                                          const std::function<void(const PairResult&)>& done = {});

// How far a separated pair's witness is shown minimal: "proved", "bounded (N undecided)" (smaller
// structures Z3 could not decide), or "not claimed (found beyond the bounds)" (a wide simulator search
// found it after nothing within the bounds separated).
std::string minimality_text(const PairResult& r);

// The first block where two schedules of one scenario part ("" when they agree).
std::string first_difference(const model::Schedule& a, const model::Schedule& b);

// The corpus case written for a separated pair: scenario, source "synthesized", bounds, solver time,
// route, each hypothesis' predicted schedule and the first difference.
model::json case_json(const PairResult& r, const DistinguishBounds& b, const model::Hypothesis& h1,
                      const model::Hypothesis& h2);

}  // namespace tbcheck::search
