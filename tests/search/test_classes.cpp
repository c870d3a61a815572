// Structures of several kernels decided by exhaustive simulation (search/src/classes.cpp): a planted
// two-kernel separation is found, the answers agree with Z3, and skipped structures never count as proofs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <tuple>

#include "../../search/src/classes.hpp"
#include "../../search/src/witness.hpp"
#include "helpers.hpp"
#include "tbcheck/model/resources.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/distinguish.hpp"
#include "tbcheck/smt/synthesis.hpp"

using namespace tbcheck;

namespace {

// One TPC of the rtx3090 with at most 4 KB of shared memory per block, so that a two-kernel enumeration
// over every shared-memory step stays small enough for a test (33 values per kernel).
model::Device small_device() {
  model::Device d = search::reduced_device(model::builtin_device("rtx3090", "", ""), 1);
  d.max_smem_per_block = 4 * 1024;
  return d;
}

// Four warp counts, the default registers, every shared-memory step, durations 1..2.
smt::ParamBounds small_domain() {
  smt::ParamBounds p;
  p.max_warps = 4;
  p.vary_regs = false;
  p.max_duration = 2;
  return p;
}

// alg1 ignoring shared memory below 4 KB of S: a kernel it ignores sets its TPC to the 0 KB configuration,
// so a second kernel meets another configuration than under alg1; one kernel alone never notices.
model::Hypothesis planted() {
  model::Hypothesis h = test::hyp("alg1");
  h.name = "alg1-smem-below-4k";
  h.smem_ignore_below = 4096;
  return h;
}

constexpr long long kNoLimit = 100'000'000;

}  // namespace

TEST_CASE("representatives keep every pair of needs the two hypotheses read and nothing twice", "[distinguish][classes]") {
  const model::Device d = small_device();
  const model::Hypothesis& h1 = test::hyp("alg1");
  const model::Hypothesis h2 = planted();
  const auto reps = search::detail::needs_representatives(h1, h2, d, small_domain());
  // alg1 reads every shared-memory step; the planted copy reads one of them more coarsely, which does
  // not merge any of alg1's: 4 warp counts x 1 register count x 33 steps.
  REQUIRE(reps.size() == 4 * 33);
  std::set<std::tuple<int, int, int, int, int, int, int>> seen;
  for (long long i = 0; i < reps.size(); ++i) {
    const model::Kernel k = reps.kernel(i);
    const auto a = model::block_needs(k, d, h1), b = model::block_needs(k, d, h2);
    CHECK(seen.emplace(a.warps, a.regs_per_warp, a.smem, a.config_s, b.regs_per_warp, b.smem, b.config_s).second);
  }
  // And every kernel of the domain reads as one of them.
  for (int w = 1; w <= 4; ++w)
    for (int smem = 0; smem <= d.max_smem_per_block; smem += 128) {
      model::Kernel k;
      k.threads = w * model::kThreadsPerWarp;
      k.smem = smem;
      const auto a = model::block_needs(k, d, h1), b = model::block_needs(k, d, h2);
      CHECK(seen.count({a.warps, a.regs_per_warp, a.smem, a.config_s, b.regs_per_warp, b.smem, b.config_s}) == 1);
    }
  // Two copies that ignore the same band read it as one value.
  const auto same = search::detail::needs_representatives(h2, h2, d, small_domain());
  CHECK(same.size() < reps.size());
}

TEST_CASE("duration tuples leave out the multiples of smaller tuples", "[distinguish][classes]") {
  const auto two = search::detail::duration_tuples(2, 3);
  CHECK(two.size() == 7u);  // 9 tuples less (2,2) and (3,3)
  CHECK(two.front() == std::vector<int>{1, 1});
  CHECK(std::find(two.begin(), two.end(), std::vector<int>{2, 2}) == two.end());
  CHECK(std::find(two.begin(), two.end(), std::vector<int>{2, 3}) != two.end());
  CHECK(search::detail::duration_tuples(3, 2).size() == 7u);  // 8 less (2,2,2)
  CHECK(search::detail::duration_tuples(2, 1).size() == 1u);
}

TEST_CASE("the enumeration finds a two-kernel separation planted where one kernel never separates", "[distinguish][classes]") {
  const model::Device d = small_device();
  const model::Hypothesis& h1 = test::hyp("alg1");
  const model::Hypothesis h2 = planted();
  for (int blocks = 1; blocks <= 3; ++blocks)
    CHECK(search::detail::enumerate_structure(h1, h2, d, {blocks}, small_domain(), kNoLimit).outcome ==
          search::detail::Enumerated::Inseparable);
  const auto e = search::detail::enumerate_structure(h1, h2, d, {1, 1}, small_domain(), kNoLimit);
  REQUIRE(e.outcome == search::detail::Enumerated::Separates);
  REQUIRE(e.witness);
  CHECK(search::detail::separates(*e.witness, h1, h2));
  // The planted difference: the copy ignores the first kernel's S, so its TPC configuration is not alg1's
  // when the second kernel arrives.
  CHECK(e.witness->kernels[0].smem_per_block(d) < 4096);
  CHECK(e.size == 4LL * 33 * 4 * 33 * 3);
  // Over the limit nothing is simulated and nothing is claimed.
  const auto over = search::detail::enumerate_structure(h1, h2, d, {1, 1}, small_domain(), e.size - 1);
  CHECK(over.outcome == search::detail::Enumerated::OverLimit);
  CHECK(over.representatives == 0);
  CHECK(over.reason.find("over the limit") != std::string::npos);
  CHECK_FALSE(over.witness);
}

TEST_CASE("the enumeration and Z3 agree on structures of two kernels", "[distinguish][classes][smt]") {
  struct Row {
    const char* h2;
    std::vector<int> blocks;
  };
  const model::Device d = small_device();
  const model::Hypothesis& h1 = test::hyp("alg1");
  const model::Hypothesis p = planted();
  const std::vector<Row> rows = {{"alg1-smem-below-4k", {1, 1}}, {"alg1-counted-smem", {1, 1}},
                                 {"alg1-no-skip", {1, 1}},       {"alg1-literal", {1, 1}},
                                 {"alg1-contiguous-regs", {1, 1}}, {"alg1-no-tpc-config", {1, 1}}};
  int separated = 0, proved = 0;
  for (const auto& row : rows) {
    const model::Hypothesis& h2 = row.h2 == p.name ? p : test::hyp(row.h2);
    INFO("alg1 / " << row.h2);
    smt::QueryOptions o;
    o.bounds = small_domain();
    o.timeout_ms = 60000;
    const auto z3 = smt::distinguish_structure(h1, h2, d, row.blocks, o);
    const auto e = search::detail::enumerate_structure(h1, h2, d, row.blocks, small_domain(), kNoLimit);
    REQUIRE(z3.outcome != smt::QueryOutcome::Unknown);
    CHECK((z3.outcome == smt::QueryOutcome::Found) == (e.outcome == search::detail::Enumerated::Separates));
    CHECK((z3.outcome == smt::QueryOutcome::None) == (e.outcome == search::detail::Enumerated::Inseparable));
    if (z3.outcome == smt::QueryOutcome::Found) CHECK(search::detail::separates(z3.scenario, h1, h2));
    separated += e.outcome == search::detail::Enumerated::Separates;
    proved += e.outcome == search::detail::Enumerated::Inseparable;
  }
  CHECK(separated >= 1);
  CHECK(proved >= 1);
}

TEST_CASE("a structure the enumeration skips is never part of a proof", "[distinguish][classes]") {
  // alg1 / alg1-no-skip on a narrow domain: no structure of at most two kernels and three blocks
  // separates them, which only proofs of all five structures can claim. Without Z3 time (1 ms for the
  // pair) the two-kernel structures rest on the enumeration alone.
  search::DistinguishBounds b;
  b.reduced_tpcs = {1};
  b.max_kernels = 2;
  b.max_blocks_per_kernel = 2;
  b.max_total_blocks = 3;
  b.params = small_domain();
  b.timeout_ms = 1;
  b.pair_budget_ms = 1;
  b.lemma_timeout_ms = 0;
  b.sim_samples = 0;
  b.deep_samples = 0;
  b.wide_samples = 0;
  model::Device full = model::builtin_device("rtx3090", "", "");
  full.max_smem_per_block = 2 * 1024;  // 17 shared-memory steps: 68 representatives per kernel
  const model::Hypothesis& h1 = test::hyp("alg1");
  const model::Hypothesis& h2 = test::hyp("alg1-no-skip");
  b.max_enumerated = kNoLimit;
  const auto all = search::distinguish_pair(h1, h2, full, b);
  INFO(all.reason);
  CHECK(all.outcome == search::PairOutcome::Inseparable);
  CHECK(all.minimal_proved);
  CHECK(all.structures_by_enumeration == 5);  // [1], [2], [1,1], [2,1], [1,2]
  CHECK(all.structures_over_limit == 0);
  CHECK(all.unknown_structures.empty());
  // Each two-kernel structure needs 68 x 68 x 3 scenarios: over a limit below that, Z3 (with no time)
  // must prove it or it is listed undecided, and then nothing is claimed.
  b.max_enumerated = 68 * 68 * 3 - 1;
  const auto skipped = search::distinguish_pair(h1, h2, full, b);
  CHECK(skipped.structures_by_enumeration == 2);
  CHECK(skipped.structures_over_limit == 3);
  int by_z3 = 0;
  for (const auto& q : skipped.queries) by_z3 += q.answer == search::StructureAnswer::Inseparable;
  CHECK(by_z3 + static_cast<int>(skipped.unknown_structures.size()) == 3);
  for (const auto& u : skipped.unknown_structures) CHECK(u.find("not enumerated") != std::string::npos);
  REQUIRE_FALSE(skipped.unknown_structures.empty());  // 1 ms of Z3 does not prove three structures
  CHECK(skipped.outcome != search::PairOutcome::Inseparable);
  CHECK_FALSE(skipped.minimal_proved);
}
