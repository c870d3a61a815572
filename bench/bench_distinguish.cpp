// Distinguish benchmark: every pair of the shipped hypotheses on one device (per-pair Z3 and wall
// time, route, total), then the same Z3 queries with integer and bit-vector terms, without shared
// terms, and with Z3's default arithmetic solver, side by side.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
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
  int jobs = 2;  // the 2-core machine of the target
  // the first 11 shipped hypotheses (the 55 first-round pairs); "all" adds alg1-paired and fermi.
  std::string hypotheses =
      "round-robin,most-room,olmedo,alg1,alg1-literal,alg1-no-skip,alg1-pb-any,alg1-counted-smem,alg1-no-tpc-config,"
      "alg1-natural-order,alg1-contiguous-regs";
};

const model::Hypothesis& hyp(const std::string& name) {
  for (const auto& h : model::builtin_hypotheses())
    if (h.name == name) return h;
  throw std::runtime_error("no shipped hypothesis " + name);
}

void run_pairs(const Options& o) {
  const model::Device& dev = model::builtin_device(o.device, "--device", "");
  search::DistinguishBounds b;
  b.timeout_ms = o.timeout_ms;
  b.pair_budget_ms = o.budget_ms;
  b.sim_samples = o.samples;
  b.max_kernels = o.max_kernels;
  const std::vector<model::Hypothesis> hs = model::resolve_hypotheses(o.hypotheses);
  fmt::print("all pairs of {} hypotheses on {} (Z3 timeout {} ms per query, budget {} ms per pair, {} simulator samples "
             "per structure, kernels <= {})\n",
             hs.size(), dev.name, o.timeout_ms, o.budget_ms, o.samples, o.max_kernels);
  fmt::print("{:<44} {:<11} {:<9} {:>7} {:>7} {:>6} {:>6}  {}\n", "pair", "outcome", "reduced", "kernels", "blocks",
             "z3 s", "wall s", "found by / minimal");
  double z3 = 0, wall = 0;
  size_t r_count = hs.size() * (hs.size() - 1) / 2;
  int separated = 0, inseparable = 0, unknown = 0, proved = 0;
  auto t0 = std::chrono::steady_clock::now();
  // Pairs run on o.jobs worker threads; rows print in pair order once all are answered.
  for (const auto& r : search::distinguish_all(hs, dev, b, o.jobs)) {
    z3 += r.solver_seconds;
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
  fmt::print("total on {}: {} pairs, {} separated ({} proved minimal), {} inseparable within bounds, {} unknown/unsupported; "
             "Z3 {:.1f} s, pair wall times summed {:.1f} s, elapsed {:.1f} s on {} job(s)\n\n",
             dev.name, r_count, separated, proved, inseparable, unknown, z3, wall, elapsed, o.jobs);
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
    else if (a == "--hypotheses") o.hypotheses = next();
    else if (a == "--pairs-only") o.sorts = false;
    else if (a == "--sorts-only") o.pairs = false;
    else {
      std::fprintf(stderr,
                   "usage: bench_distinguish [--device NAME] [--timeout-ms N] [--budget-ms N] [--samples N] "
                   "[--max-kernels N] [--sort-timeout-ms N] [--jobs N] [--hypotheses LIST|all] [--pairs-only | --sorts-only]\n");
      return 2;
    }
  }
  try {
    if (o.pairs) run_pairs(o);
    if (o.sorts) run_sorts(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_distinguish: %s\n", e.what());
    return 2;
  }
  return 0;
}
