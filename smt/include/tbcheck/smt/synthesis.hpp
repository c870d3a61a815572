// One synthesis query: for a fixed structure (blocks per kernel) on a device, parameters such that
// two hypotheses' schedules agree on every block but the last and differ on the last one (any block, gpc-priority).
#pragma once
#include <optional>
#include <string>
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

struct QueryOptions {
  ParamBounds bounds;
  unsigned timeout_ms = 10000;
  std::optional<int> max_total_duration;  // strictly: sum of durations <= this
  bool realizable = true;  // distinct completion instants unless kernels start together with one duration
  Sort sort = Sort::Int;   // integer terms (measured faster) or bit-vectors
  bool share_terms = true;  // one variable for a term both encodings compute alike (SharedTerms)
};

// Why the dispatcher never looks ahead makes "differ on the last block" enough: a minimal witness
// first differs at its last block (remove later blocks and it still differs). gpc-priority looks ahead
// (seed 003's wave depends on the block count), so a pair with it asks for a difference at any block.
QueryResult distinguish_structure(const model::Hypothesis& h1, const model::Hypothesis& h2, const model::Device& d,
                                  const std::vector<int>& blocks, const QueryOptions& o);

}  // namespace tbcheck::smt
