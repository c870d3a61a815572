// The pair query: shared symbolic parameters, shared decisions for every block but the last, both
// hypotheses' encodings, and a difference on the last block (on any block for gpc-priority, which looks
// ahead). Every check() answer is handled.
#include "tbcheck/smt/synthesis.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include <fmt/format.h>

#include "tbcheck/model/controls.hpp"
#include "tbcheck/model/options.hpp"
#include "tbcheck/model/stop.hpp"

namespace tbcheck::smt {

std::string_view to_string(QueryOutcome o) {
  switch (o) {
    case QueryOutcome::Found: return "found";
    case QueryOutcome::None: return "none";
    case QueryOutcome::Unknown: return "unknown";
    case QueryOutcome::Unsupported: return "unsupported";
  }
  return "?";
}

namespace {

// Kernel completion instants must be distinct on hardware unless the kernels start together and
// share a duration (their order of completion is otherwise a race the model cannot predict).
void add_realizability(z3::solver& solver, const SymbolicScenario& s, const Decisions& d) {
  const size_t nk = s.blocks.size();
  std::vector<z3::expr> first, last;
  int i = 0;
  for (size_t k = 0; k < nk; ++k) {
    i += s.blocks[k];  // starts are monotone, so a kernel's last block ends last
    first.push_back(d.start[static_cast<size_t>(i - s.blocks[k])]);
    last.push_back(d.start[static_cast<size_t>(i - 1)] + s.duration[k]);
  }
  for (size_t a = 0; a < nk; ++a)
    for (size_t b = a + 1; b < nk; ++b)
      solver.add(last[a] != last[b] || (first[a] == first[b] && s.duration[a] == s.duration[b]));
}

}  // namespace

z3::expr follows_schedule(const SymbolicScenario& s, const Decisions& d, const FixedSchedule& sched) {
  z3::expr_vector same(s.domain.ctx());
  for (size_t i = 0; i < sched.size(); ++i) {
    const auto& [sm, start] = sched[i];
    same.push_back(d.sm[i] == s.num(sm) && d.start[i] == s.num(start));
  }
  return z3::mk_and(same);
}

void solve_into(z3::solver& solver, const SymbolicScenario& s, QueryResult& r) {
  model::throw_if_stopped();
  try {
    // A stop interrupts the query, which then returns unknown; that unknown is no answer, so it ends
    // in model::Stopped below rather than in the result.
    z3::context& ctx = solver.ctx();
    model::InterruptScope interrupt([&ctx] { ctx.interrupt(); });
    switch (solver.check()) {
      case z3::sat:
        r.outcome = QueryOutcome::Found;
        r.scenario = s.decode(solver.get_model());
        break;
      case z3::unsat:
        r.outcome = QueryOutcome::None;
        break;
      case z3::unknown:
        r.outcome = QueryOutcome::Unknown;
        r.reason = solver.reason_unknown();
        break;
    }
  } catch (const z3::exception& e) {
    // Z3 reports some resource limits (memory, cancellation) as exceptions: the same as giving up.
    r.outcome = QueryOutcome::Unknown;
    r.reason = std::string("z3: ") + e.msg();
  }
  model::throw_if_stopped();
}

QueryResult distinguish_structure(const model::Hypothesis& h1, const model::Hypothesis& h2, const model::Device& dev,
                                  const std::vector<int>& blocks, const QueryOptions& o) {
  QueryResult r;
  auto t0 = std::chrono::steady_clock::now();
  auto done = [&] {
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  try {
    check_encodable(h1);
    check_encodable(h2);
  } catch (const Unsupported& e) {
    r.outcome = QueryOutcome::Unsupported;
    r.reason = e.what();
    return done();
  }
  // The query below asks for a first difference at the last block, which is sound because the
  // dispatcher never looks ahead. The paired issue does (its leaders depend on the grid size), so a
  // structure with leaders could differ earlier and an UNSAT here would prove nothing.
  for (int nb : blocks)
    for (int b = 0; b < nb; ++b)
      if (h1.leads_pair(dev, nb, b) || h2.leads_pair(dev, nb, b)) {
        r.outcome = QueryOutcome::Unsupported;
        r.reason = fmt::format("a {}-block kernel on {} SMs has pair leaders (issue paired looks ahead at the grid size), "
                               "so a first difference need not be at the last block; only the simulator search applies",
                               nb, dev.sms);
        return done();
      }
  // gpc-priority looks ahead too: the wave size and the whole-GPC / single step switch of seed 003
  // Section 4.1 depend on the kernel's block count, so an earlier block can be where two hypotheses
  // first differ. Its query asks for a difference at any block, with separate decisions per hypothesis.
  // Stream priorities reorder the kernels, so the block dispatched last need not be the last
  // in list order: such structures ask for a difference at any block too.
  std::vector<std::optional<int>> prio = o.bounds.priorities;
  prio.resize(blocks.size());
  auto reorders = [&](const model::Hypothesis& h) {
    const std::vector<int> order = model::kernels_by_priority(prio, dev, h.priority);
    return !std::is_sorted(order.begin(), order.end());
  };
  // A clustered kernel is cut only between whole clusters (cluster_witness.cpp's structures): a first
  // difference has a smaller structure that shows it in its last cluster. With one 1-D clustered kernel,
  // the last, that cluster is its last blocks in list order; any other clustering asks for any block.
  int tail = 1;  // the blocks at the end whose decisions the two hypotheses make separately
  int clustered = 0;
  for (size_t k = 0; k < o.bounds.clusters.size() && k < blocks.size(); ++k)
    if (const auto& cl = o.bounds.clusters[k]) {
      ++clustered;
      tail = k + 1 == blocks.size() && (*cl)[1] == 1 && (*cl)[2] == 1 ? (*cl)[0] : 0;
    }
  // Numbering gpc-ring labels a batch by where all of it landed: a first difference in placement need not be
  // the last block index, so the two hypotheses share no prefix.
  auto renumbers = [](const model::Hypothesis& h) { return model::ring_numbered(h.numbering); };
  const bool any_block = model::is_fermi(h1.selection) || model::is_fermi(h2.selection) || reorders(h1) || reorders(h2) ||
                         renumbers(h1) || renumbers(h2) || clustered > 1 || tail == 0;
  z3::context c;
  SymbolicScenario s = SymbolicScenario::make_symbolic(c, dev, blocks, o.bounds, "p", o.sort);
  const int n = s.total_blocks();
  if (any_block) tail = n;
  Decisions d1 = Decisions::fresh(c, n, "a", o.sort);
  Decisions d2 = d1;  // shared prefix: the same decision variables ...
  for (int i = n - tail; i < n; ++i) {  // ... except for the tail
    d2.sm[static_cast<size_t>(i)] = s.var(fmt::format("b_sm_{}", i));
    d2.start[static_cast<size_t>(i)] = s.var(fmt::format("b_start_{}", i));
  }
  z3::solver solver = make_solver(c, o.timeout_ms, o.arith_solver, o.resource_limit);
  SharedTerms shared;
  SharedTerms* sh = o.share_terms ? &shared : nullptr;
  try {
    for (const auto& x : encode(s, h1, d1, "h1", sh)) solver.add(x);
    for (const auto& x : encode(s, h2, d2, "h2", sh)) solver.add(x);
  } catch (const Unsupported& e) {  // an option encodable in general but not on this structure
    r.outcome = QueryOutcome::Unsupported;
    r.reason = e.what();
    return done();
  }
  z3::expr_vector differ(c);
  for (int i = n - tail; i < n; ++i)
    differ.push_back(d1.sm[static_cast<size_t>(i)] != d2.sm[static_cast<size_t>(i)] ||
                     d1.start[static_cast<size_t>(i)] != d2.start[static_cast<size_t>(i)]);
  solver.add(z3::mk_or(differ));
  if (o.prefix && tail == 1) {
    if (static_cast<int>(o.prefix->size()) != n - 1)
      throw std::logic_error(fmt::format("distinguish_structure: a prefix of {} blocks for {} blocks", o.prefix->size(), n));
    solver.add(follows_schedule(s, d1, *o.prefix));
  }
  if (o.realizable) {
    add_realizability(solver, s, d1);
    add_realizability(solver, s, d2);
  }
  if (o.max_total_duration) {
    z3::expr total = s.num(0);
    for (const auto& x : s.duration) total = total + x;
    solver.add(total <= *o.max_total_duration);
  }
  solve_into(solver, s, r);
  return done();
}

}  // namespace tbcheck::smt
