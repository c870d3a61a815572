// One synthesis query: for a fixed structure (blocks per kernel) on a device, parameters such that
// two hypotheses' schedules agree on every block but the last and differ on the last one (any block, gpc-priority).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/smt/encoding.hpp"

namespace tbcheck::smt {

enum class QueryOutcome { Found, None, Unknown, Unsupported };
std::string_view to_string(QueryOutcome);

struct QueryResult {
  QueryOutcome outcome = QueryOutcome::Unknown;
  std::string reason;        // for Unknown / Unsupported
  model::Scenario scenario;  // for Found (decoded parameters; kernels k1..kN)
  double seconds = 0;
};

// Per block in list order: the SM and the start instant.
using FixedSchedule = std::vector<std::pair<int, int64_t>>;

struct QueryOptions {
  ParamBounds bounds;
  unsigned timeout_ms = 10000;
  unsigned resource_limit = 0;  // Z3's rlimit, 0 for none: a load-independent bound (make_solver)
  std::optional<int> max_total_duration;  // strictly: sum of durations <= this
  bool realizable = true;  // distinct completion instants unless kernels start together with one duration
  Sort sort = Sort::Int;   // integer terms (measured faster) or bit-vectors
  bool share_terms = true;  // one variable for a term both encodings compute alike (SharedTerms)
  unsigned arith_solver = kArithSolver;  // Z3's smt.arith.solver (see make_solver); 6 for Z3's default
  // The schedule of every block but the last, when it is known to be the same for every launchable
  // parameter choice under both hypotheses (a proved constant-schedule lemma of the structure without
  // its last block: the dispatcher does not look ahead). Stated as facts, it spares Z3 from rediscovering
  // them: UNSAT answers on [3] came 6-10x faster in measurement. Ignored for gpc-priority (looks ahead).
  std::optional<FixedSchedule> prefix;
};

// The decisions of the first sched.size() blocks are exactly `sched` (SM and start per block): the
// prefix facts of a pair query, and (negated) the "some block differs" of a constant-schedule lemma.
z3::expr follows_schedule(const SymbolicScenario& s, const Decisions& d, const FixedSchedule& sched);

// Runs solver.check() and records the answer in r: sat -> Found with the scenario decoded from the
// model, unsat -> None, unknown -> Unknown with Z3's reason; Z3 exceptions (resource limits) -> Unknown.
void solve_into(z3::solver& solver, const SymbolicScenario& s, QueryResult& r);

// Why the dispatcher never looks ahead makes "differ on the last block" enough: a minimal witness
// first differs at its last block (remove later blocks and it still differs). gpc-priority looks ahead
// (seed 003's wave depends on the block count), so a pair with it asks for a difference at any block.
// A structure whose last kernel has 1-D clusters (o.bounds.clusters) asks for one in its last cluster,
// since structures are cut between whole clusters; other clustered structures ask for any block.
QueryResult distinguish_structure(const model::Hypothesis& h1, const model::Hypothesis& h2, const model::Device& d,
                                  const std::vector<int>& blocks, const QueryOptions& o);

}  // namespace tbcheck::smt
