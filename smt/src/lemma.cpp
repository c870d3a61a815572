// Constant-schedule lemmas: one hypothesis' encoding over symbolic parameters, the expected schedule
// fixed, and a difference at any block asked for; every check() answer is handled.
#include "tbcheck/smt/lemma.hpp"

#include <chrono>

#include <fmt/format.h>

namespace tbcheck::smt {

QueryResult prove_schedule(const model::Hypothesis& h, const model::Device& d, const std::vector<int>& blocks,
                           const FixedSchedule& expected, const QueryOptions& o) {
  QueryResult r;
  const auto t0 = std::chrono::steady_clock::now();
  auto done = [&] {
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  z3::context c;
  try {
    check_encodable(h);
    SymbolicScenario s = SymbolicScenario::make_symbolic(c, d, blocks, o.bounds, "p", o.sort);
    const int n = s.total_blocks();
    if (static_cast<int>(expected.size()) != n)
      throw std::logic_error(fmt::format("prove_schedule: {} expected placements for {} blocks", expected.size(), n));
    Decisions dec = Decisions::fresh(c, n, "a", o.sort);
    z3::solver solver = make_solver(c, o.timeout_ms, o.arith_solver);
    for (const auto& x : encode(s, h, dec, "h")) solver.add(x);
    solver.add(!follows_schedule(s, dec, expected));  // some block differs from the candidate
    solve_into(solver, s, r);
  } catch (const Unsupported& e) {
    r.outcome = QueryOutcome::Unsupported;
    r.reason = e.what();
  } catch (const z3::exception& e) {
    r.outcome = QueryOutcome::Unknown;  // resource limits while encoding: the same as giving up
    r.reason = std::string("z3: ") + e.msg();
  }
  return done();
}

}  // namespace tbcheck::smt
