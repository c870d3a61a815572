// Distinguish benchmark: every pair of two sets of shipped hypotheses on one device (per-pair Z3 and wall
// time, route, minimality, totals; with --compare also without the enumeration of structures), then the
// same Z3 queries with integer and bit-vector terms, without shared terms, and Z3's default arithmetic solver.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/hypothesis_list.hpp"
#include "tbcheck/search/distinguish.hpp"
#include "tbcheck/smt/synthesis.hpp"

using namespace tbcheck;

namespace {

struct Options {
  std::string device = "rtx3090";
  unsigned timeout_ms = 2000;    // per Z3 query in the pair run (tbcheck distinguish default)
  unsigned budget_ms = 2000;     // Z3 time per pair (tbcheck distinguish default)
  int samples = 3000;            // simulator pre-pass, per structure
  int max_kernels = 3;
  unsigned sort_timeout_ms = 5000;  // per query in the sort comparison
  bool pairs = true, sorts = true;
  bool queries = false;  // per-query instrumentation after the pair table
  int jobs = 2;  // the 2-core machine of the target
  // The sets whose pairs run, one after the other: the first 11 shipped hypotheses (the 55 first-round
  // pairs), then the 13 shipped ones that run on rtx3090 (all but fermi, which needs a GPC map: 78 pairs).
  // --hypotheses replaces both by one list ("all" adds fermi).
  std::vector<std::string> sets = {
      "round-robin,most-room,olmedo,alg1,alg1-literal,alg1-no-skip,alg1-pb-any,alg1-counted-smem,alg1-no-tpc-config,"
      "alg1-natural-order,alg1-contiguous-regs",
      "round-robin,most-room,olmedo,alg1,alg1-literal,alg1-no-skip,alg1-pb-any,alg1-counted-smem,alg1-no-tpc-config,"
      "alg1-natural-order,alg1-contiguous-regs,alg1-paired,alg1-priority"};
  bool compare = false;  // each set also without the enumeration (lemmas and Z3 only), side by side
};

const model::Hypothesis& hyp(const std::string& name) {
  for (const auto& h : model::builtin_hypotheses())
    if (h.name == name) return h;
  throw std::runtime_error("no shipped hypothesis " + name);
}

// Where the Z3 time went: per purpose and answer, count and seconds; then every undecided query.
void print_queries(const std::vector<search::PairResult>& results) {
  std::map<std::pair<std::string, std::string>, std::pair<int, double>> by;
  for (const auto& r : results)
    for (const auto& q : r.queries) {
      auto& cell = by[{std::string(search::to_string(q.purpose)), std::string(search::to_string(q.answer))}];
      ++cell.first;
      cell.second += q.seconds;
    }
  fmt::print("Z3 queries by purpose and answer:\n");
  for (const auto& [k, v] : by) fmt::print("  {:<8} {:<12} {:>5} queries {:>8.2f} s\n", k.first, k.second, v.first, v.second);
  fmt::print("undecided queries:\n");
  for (const auto& r : results)
    for (const auto& q : r.queries)
      if (q.answer == search::StructureAnswer::Undecided)
        fmt::print("  {:<44} {:<8} {:<28} {:>6.2f} s\n", r.h1 + " / " + r.h2, search::to_string(q.purpose), q.structure,
                   q.seconds);
  fmt::print("\n");
}

// One set's pairs: a row per pair, then the totals.
void run_pairs(const Options& o, const std::string& set, bool enumerate) {
  const model::Device& dev = model::builtin_device(o.device, "--device", "");
  search::DistinguishBounds b;
  b.enumerate_one_kernel = enumerate;
  if (!enumerate) b.max_enumerated = 0;
  b.timeout_ms = o.timeout_ms;
  b.pair_budget_ms = o.budget_ms;
  b.sim_samples = o.samples;
  b.max_kernels = o.max_kernels;
  const std::vector<model::Hypothesis> hs = model::resolve_hypotheses(set);
  fmt::print("all pairs of {} hypotheses on {} (Z3 timeout {} ms per query, budget {} ms per pair, {} simulator samples "
             "per structure, kernels <= {}, structures by {})\n",
             hs.size(), dev.name, o.timeout_ms, o.budget_ms, o.samples, o.max_kernels,
             enumerate ? fmt::format("exhaustive simulation over classes where it needs <= {} scenarios", b.max_enumerated)
                       : std::string("lemmas and Z3 only"));
  fmt::print("{:<44} {:<11} {:<9} {:>7} {:>7} {:>6} {:>6}  {}\n", "pair", "outcome", "reduced", "kernels", "blocks",
             "z3 s", "wall s", "found by / minimal");
  double z3 = 0, wall = 0, enumeration = 0;
  int by_enumeration = 0, over_limit = 0;
  size_t r_count = hs.size() * (hs.size() - 1) / 2;
  int separated = 0, inseparable = 0, unknown = 0, proved = 0;
  auto t0 = std::chrono::steady_clock::now();
  const std::clock_t cpu0 = std::clock();  // the process's CPU time, all threads: what load on a shared machine leaves
  // Pairs run on o.jobs worker threads; rows print in pair order once all are answered.
  const std::vector<search::PairResult> results = search::distinguish_all(hs, dev, b, o.jobs);
  for (const auto& r : results) {
    z3 += r.solver_seconds;
    enumeration += r.enumeration_seconds;
    by_enumeration += r.structures_by_enumeration;
    over_limit += r.structures_over_limit;
    wall += r.wall_seconds;
    bool sep = r.outcome == search::PairOutcome::Separated;
    separated += sep;
    inseparable += r.outcome == search::PairOutcome::Inseparable;
    unknown += !sep && r.outcome != search::PairOutcome::Inseparable;
    proved += sep && r.minimal_proved;
    fmt::print("{:<44} {:<11} {:<9} {:>7} {:>7} {:>6.2f} {:>6.2f}  {}\n", r.h1 + " / " + r.h2,
               sep ? "separated" : std::string(search::to_string(r.outcome)).substr(0, 11),
               sep ? fmt::format("[{}]", fmt::join(r.structure, ",")) : "", sep ? std::to_string(r.kernels) : "",
               sep ? std::to_string(r.blocks) : "", r.solver_seconds, r.wall_seconds,
               sep ? fmt::format("{} / {}", search::to_string(r.found_by),
                                 search::minimality_text(r))
                   : r.reason.substr(0, 90));
  }
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
  fmt::print("total on {}: {} pairs, {} separated ({} proved minimal), {} inseparable within bounds, {} unknown/unsupported; "
             "Z3 {:.1f} s, exhaustive simulation {:.1f} s ({} structures proved, {} over the limit), pair wall times "
             "summed {:.1f} s, elapsed {:.1f} s on {} job(s), CPU {:.1f} s\n\n",
             dev.name, r_count, separated, proved, inseparable, unknown, z3, enumeration, by_enumeration, over_limit, wall, elapsed,
             o.jobs, cpu);
  if (o.queries) print_queries(results);
}

// The same queries with integer and with bit-vector terms (and integers without shared terms, the
// encoding before SharedTerms; and integers on Z3 4.8's default arithmetic solver, arith.solver=6,
// against the legacy one tbcheck uses), one after the other in one run so the load is comparable.
void run_sorts(const Options& o) {
  struct Q {
    const char* h1;
    const char* h2;
    std::vector<int> blocks;
    int tpcs;
  };
  const std::vector<Q> queries = {
      {"round-robin", "most-room", {1}, 1},       {"round-robin", "most-room", {1, 1}, 1},
      {"round-robin", "most-room", {2}, 1},       {"most-room", "olmedo", {1, 1}, 1},
      {"round-robin", "olmedo", {2}, 1},          {"olmedo", "alg1", {1, 1}, 1},
      {"alg1", "alg1-no-skip", {1}, 1},           {"alg1", "alg1-no-skip", {2}, 1},
      {"alg1", "alg1-literal", {1, 1}, 1},        {"alg1", "alg1-counted-smem", {1}, 1},
      {"alg1", "alg1-natural-order", {1}, 2},    {"alg1", "alg1-counted-smem", {1, 1}, 1},
      {"alg1", "alg1-counted-smem", {2, 1}, 1},
  };
  const model::Device& full = model::builtin_device(o.device, "--device", "");
  fmt::print("Z3 sort comparison on the same queries ({} ms timeout each; reduced devices of {}):\n", o.sort_timeout_ms,
             full.name);
  constexpr int kVariants = 4;
  fmt::print("{:<34} {:<10} {:>18} {:>18} {:>18} {:>18}\n", "pair", "structure", "int", "bit-vector (32)",
             "int, unshared", "int, arith.solver=6");
  double tot[kVariants] = {0, 0, 0, 0};
  for (const auto& q : queries) {
    model::Device d = search::reduced_device(full, q.tpcs);
    std::string cells[kVariants];
    for (int v = 0; v < kVariants; ++v) {
      smt::QueryOptions qo;
      qo.timeout_ms = o.sort_timeout_ms;
      qo.sort = v == 1 ? smt::Sort::BitVec : smt::Sort::Int;
      qo.share_terms = v != 2;
      qo.arith_solver = v == 3 ? 6u : smt::kArithSolver;
      auto r = smt::distinguish_structure(hyp(q.h1), hyp(q.h2), d, q.blocks, qo);
      tot[v] += r.seconds;
      cells[v] = fmt::format("{} {:.2f} s", smt::to_string(r.outcome), r.seconds);
    }
    fmt::print("{:<34} {:<10} {:>18} {:>18} {:>18} {:>18}\n", fmt::format("{} / {}", q.h1, q.h2),
               fmt::format("[{}]x{}", fmt::join(q.blocks, ","), q.tpcs), cells[0], cells[1], cells[2], cells[3]);
    std::fflush(stdout);
  }
  fmt::print("{:<45} {:>16.2f} s {:>16.2f} s {:>16.2f} s {:>16.2f} s\n", "total (a timeout counts as its limit)", tot[0],
             tot[1], tot[2], tot[3]);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--device") o.device = next();
    else if (a == "--timeout-ms") o.timeout_ms = static_cast<unsigned>(std::stoul(next()));
    else if (a == "--budget-ms") o.budget_ms = static_cast<unsigned>(std::stoul(next()));
    else if (a == "--samples") o.samples = std::stoi(next());
    else if (a == "--max-kernels") o.max_kernels = std::stoi(next());
    else if (a == "--sort-timeout-ms") o.sort_timeout_ms = static_cast<unsigned>(std::stoul(next()));
    else if (a == "--jobs") o.jobs = std::max(1, std::stoi(next()));
    else if (a == "--hypotheses") o.sets = {next()};
    else if (a == "--compare") o.compare = true;
    else if (a == "--pairs-only") o.sorts = false;
    else if (a == "--queries") o.queries = true;
    else if (a == "--sorts-only") o.pairs = false;
    else {
      std::fprintf(stderr,
                   "usage: bench_distinguish [--device NAME] [--timeout-ms N] [--budget-ms N] [--samples N] "
                   "[--max-kernels N] [--sort-timeout-ms N] [--jobs N] [--hypotheses LIST|all] [--pairs-only | --sorts-only] [--queries] [--compare]\n");
      return 2;
    }
  }
  try {
    if (o.pairs)
      for (const auto& set : o.sets) {
        run_pairs(o, set, true);
        if (o.compare) run_pairs(o, set, false);
      }
    if (o.sorts) run_sorts(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_distinguish: %s\n", e.what());
    return 2;
  }
  return 0;
}
