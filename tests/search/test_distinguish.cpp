// One-kernel structures decided by exhaustive simulation over parameter classes (search/src/classes.cpp):
// representatives schedule as every member of their class, planted witnesses are found, known
// inseparable structures are proved and agree with Z3, and distinguish uses the proofs for minimality.
#include <catch2/catch.hpp>

#include <random>

#include "../../search/src/classes.hpp"
#include "../../search/src/witness.hpp"
#include "helpers.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/distinguish.hpp"
#include "tbcheck/smt/synthesis.hpp"

using namespace tbcheck;

namespace {

// With a GPC map (one GPC), so that the hypotheses that spread over GPCs run too.
model::Device reduced(const std::string& device, int tpcs) {
  model::Device d = search::reduced_device(model::builtin_device(device, "", ""), tpcs);
  d.gpc_of_tpc.assign(static_cast<size_t>(tpcs), 0);
  d.gpc_source = "test";
  return d;
}

// Shipped hypotheses the enumeration covers, and copies with the thresholds the classes must respect.
std::vector<model::Hypothesis> covered_hypotheses() {
  std::vector<model::Hypothesis> out;
  for (const auto& h : model::builtin_hypotheses())
    if (h.selection != model::Selection::GpcPriority) out.push_back(h);
  model::Hypothesis s = test::hyp("alg1");
  s.name = "alg1-smem-below-20k";
  s.smem_ignore_below = 20 * 1024 + 384;
  out.push_back(s);
  model::Hypothesis r = test::hyp("alg1-literal");
  r.name = "alg1-literal-regs-at-or-below-64";
  r.registers_ignore_at_or_below = 64;
  out.push_back(r);
  return out;
}

// The schedule of one kernel as (SM, start) per block; empty when the hypothesis refuses the kernel.
std::vector<std::pair<int, int64_t>> placements(const model::Scenario& s, const model::Hypothesis& h) {
  std::vector<std::pair<int, int64_t>> out;
  if (auto sch = model::try_simulate(s, h))
    for (const auto& b : sch->kernels.front().blocks) out.emplace_back(b.sm, b.start);
  return out;
}

smt::ParamBounds domain() { return smt::ParamBounds{}; }

}  // namespace

TEST_CASE("a class representative schedules as any member of its class, scaled by the duration", "[distinguish][classes]") {
  const auto hs = covered_hypotheses();
  std::mt19937 rng(11);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const auto& regs = smt::realizable_regs();
  int compared = 0, ran = 0;
  for (const std::string device : {"rtx3090", "v100", "h100-sxm"})
    for (int tpcs : {1, 2}) {
      const model::Device d = reduced(device, tpcs);
      for (int round = 0; round < 150; ++round) {
        const auto& h1 = hs[static_cast<size_t>(pick(0, static_cast<int>(hs.size()) - 1))];
        const auto& h2 = hs[static_cast<size_t>(pick(0, static_cast<int>(hs.size()) - 1))];
        const auto classes = search::detail::smem_classes({&h1, &h2}, d, domain());
        model::Scenario member;
        member.device = d;
        member.device_builtin = false;
        model::Kernel k;
        k.name = "k1";
        k.blocks = pick(1, 5);
        k.threads = model::kThreadsPerWarp * pick(1, d.max_threads_per_block / model::kThreadsPerWarp);
        do k.regs = regs[static_cast<size_t>(pick(0, static_cast<int>(regs.size()) - 1))];
        while (k.regs > d.max_regs_per_thread);
        k.smem = 128 * pick(0, d.max_smem_per_block / 128);
        k.duration = pick(1, 7);
        member.kernels = {k};
        model::Scenario rep = member;
        rep.kernels.front() = search::detail::class_representative(k, classes);
        REQUIRE(rep.kernels.front().duration == 1);
        for (const auto* h : {&h1, &h2}) {
          INFO(h->name << " on " << d.name << ": " << member.to_json().dump() << " vs " << rep.to_json().dump());
          auto m = placements(member, *h);
          auto r = placements(rep, *h);
          for (auto& [sm, start] : r) start *= k.duration;
          CHECK(m == r);
          ++compared;
          ran += !m.empty();
        }
      }
    }
  CHECK(compared == 1800);
  CHECK(ran > 900);  // most members run, so the comparison is about schedules, not refusals
}

TEST_CASE("classes follow the thresholds of the hypotheses and the device's configurations", "[distinguish][classes]") {
  const model::Device d = reduced("rtx3090", 1);
  const model::Hypothesis& alg1 = test::hyp("alg1");
  model::Hypothesis t = alg1;
  t.smem_ignore_below = 20 * 1024 + 384;
  const auto plain = search::detail::smem_classes({&alg1}, d, domain());
  const auto with = search::detail::smem_classes({&alg1, &t}, d, domain());
  CHECK(with.size() > plain.size());  // the threshold splits a class
  CHECK(plain.size() < static_cast<size_t>(d.max_smem_per_block / 128 + 1));  // and classes do collapse values
  size_t members = 0;
  for (const auto& c : with) {
    members += c.size();
    // Every class lies on one side of the threshold (S includes the reserve and the rounding).
    model::Kernel a, b;
    a.smem = c.front();
    b.smem = c.back();
    CHECK((a.smem_per_block(d) < *t.smem_ignore_below) == (b.smem_per_block(d) < *t.smem_ignore_below));
  }
  CHECK(members == static_cast<size_t>(d.max_smem_per_block / 128 + 1));  // a partition of the domain
}

TEST_CASE("the enumeration finds a separating kernel planted in a narrow shared-memory band", "[distinguish][classes]") {
  // Ignoring shared memory below the threshold changes a schedule only where S lies between half an SM's
  // largest configuration and the threshold: a few dozen of the domain's values.
  const model::Device d = reduced("rtx3090", 1);
  const model::Hypothesis& h1 = test::hyp("alg1");
  model::Hypothesis h2 = h1;
  h2.name = "alg1-smem-below-52k";
  h2.smem_ignore_below = 52 * 1024;
  auto e = search::detail::enumerate_one_kernel(h1, h2, d, 3, domain());
  REQUIRE(e.outcome == search::detail::Enumerated::Separates);
  REQUIRE(e.witness);
  CHECK(search::detail::separates(*e.witness, h1, h2));
  const int s = e.witness->kernels.front().smem_per_block(d);
  CHECK(s < *h2.smem_ignore_below);
  CHECK(2 * s > d.max_smem_config_bytes());
  // The same answer through the shared tables.
  search::detail::OneKernelTables tables;
  auto t = search::detail::enumerate_one_kernel(h1, h2, d, 3, domain(), &tables);
  REQUIRE(t.outcome == search::detail::Enumerated::Separates);
  CHECK(t.witness->to_json() == e.witness->to_json());
  // Below the band nothing separates: one block never meets the threshold's difference.
  CHECK(search::detail::enumerate_one_kernel(h1, h2, d, 1, domain()).outcome == search::detail::Enumerated::Inseparable);
}

TEST_CASE("the enumeration and Z3 agree on one-kernel structures", "[distinguish][classes][smt]") {
  struct Row {
    const char* h1;
    const char* h2;
    int blocks;
    int tpcs;
  };
  // Z3 answers these within seconds (bench_distinguish's sort comparison); both answers occur.
  const std::vector<Row> rows = {{"round-robin", "most-room", 2, 1},      {"alg1", "alg1-no-skip", 2, 1},
                                 {"round-robin", "olmedo", 2, 1},         {"alg1", "alg1-counted-smem", 1, 1},
                                 {"alg1", "alg1-natural-order", 2, 2},    {"round-robin", "most-room", 1, 2}};
  search::detail::OneKernelTables tables;
  int separated = 0, proved = 0;
  for (const auto& row : rows) {
    INFO(row.h1 << " / " << row.h2 << " [" << row.blocks << "] on " << row.tpcs << " TPC(s)");
    const model::Device d = reduced("rtx3090", row.tpcs);
    smt::QueryOptions o;
    o.timeout_ms = 60000;
    const auto z3 = smt::distinguish_structure(test::hyp(row.h1), test::hyp(row.h2), d, {row.blocks}, o);
    const auto e = search::detail::enumerate_one_kernel(test::hyp(row.h1), test::hyp(row.h2), d, row.blocks, domain(), &tables);
    REQUIRE(z3.outcome != smt::QueryOutcome::Unknown);
    CHECK((z3.outcome == smt::QueryOutcome::Found) == (e.outcome == search::detail::Enumerated::Separates));
    CHECK((z3.outcome == smt::QueryOutcome::None) == (e.outcome == search::detail::Enumerated::Inseparable));
    if (e.witness) CHECK(search::detail::separates(*e.witness, test::hyp(row.h1), test::hyp(row.h2)));
    separated += e.outcome == search::detail::Enumerated::Separates;
    proved += e.outcome == search::detail::Enumerated::Inseparable;
  }
  CHECK(separated >= 1);
  CHECK(proved >= 1);
}

TEST_CASE("the enumeration declines what its argument does not cover", "[distinguish][classes]") {
  const model::Device d = reduced("rtx3090", 1);
  smt::ParamBounds local = domain();
  local.max_local = 16;
  auto e = search::detail::enumerate_one_kernel(test::hyp("alg1"), test::hyp("alg1-literal"), d, 2, local);
  CHECK(e.outcome == search::detail::Enumerated::NotCovered);
  CHECK(e.reason.find("local") != std::string::npos);
  smt::ParamBounds prio = domain();
  prio.priorities = {0};
  CHECK(search::detail::enumerate_one_kernel(test::hyp("alg1"), test::hyp("alg1-literal"), d, 2, prio).outcome ==
        search::detail::Enumerated::NotCovered);
  auto f = search::detail::enumerate_one_kernel(test::hyp("fermi"), test::hyp("alg1"), d, 2, domain());
  CHECK(f.outcome == search::detail::Enumerated::NotCovered);
  CHECK(f.reason.find("gpc-priority") != std::string::npos);
}

TEST_CASE("one-kernel proofs by enumeration make a witness proved minimal without Z3 time", "[distinguish][classes]") {
  // most-room vs alg1 first differ on one kernel of three blocks; [1] and [2] need proofs. With no
  // Z3 time and no lemmas only the enumeration can give them.
  search::DistinguishBounds b;
  b.reduced_tpcs = {1};
  b.max_kernels = 1;
  b.timeout_ms = 1;
  b.pair_budget_ms = 1;
  b.lemma_timeout_ms = 0;
  const auto& full = model::builtin_device("rtx3090", "", "");
  auto with = search::distinguish_pair(test::hyp("most-room"), test::hyp("alg1"), full, b);
  REQUIRE(with.outcome == search::PairOutcome::Separated);
  CHECK(with.structure == std::vector<int>{3});
  CHECK(with.minimal_proved);
  CHECK(with.structures_by_enumeration == 2);
  CHECK(with.unknown_structures.empty());
  b.enumerate_one_kernel = false;
  auto without = search::distinguish_pair(test::hyp("most-room"), test::hyp("alg1"), full, b);
  REQUIRE(without.outcome == search::PairOutcome::Separated);
  CHECK(without.structure == std::vector<int>{3});
  CHECK_FALSE(without.minimal_proved);
  CHECK(without.structures_by_enumeration == 0);
}

TEST_CASE("wide_first takes a witness found by simulation beyond the bounds before asking Z3 for the smallest",
          "[distinguish][learn]") {
  // alg1 against alg1 breaking its room ties by the most blocks held: one-kernel structures cannot separate them
  // (every SM holds the kernel's own blocks alike), so the search within the bounds spends Z3 time proving that.
  const auto& rtx = model::builtin_device("rtx3090", "test", "device");
  model::Hypothesis held = test::hyp("alg1");
  held.name = "alg1.room-max.held-max";
  held.selection = model::Selection::Rule;
  held.rule = {{{model::RuleFeature::Room, model::Prefer::Max}, {model::RuleFeature::Held, model::Prefer::Max}}};
  search::DistinguishBounds b;
  b.timeout_ms = 2000;
  b.wide_first = true;
  const auto wide = search::distinguish_pair(test::hyp("alg1"), held, rtx, b);
  REQUIRE(wide.outcome == search::PairOutcome::Separated);
  CHECK(wide.found_beyond_bounds);
  CHECK_FALSE(wide.minimal_proved);
  REQUIRE(wide.witness.has_value());
  CHECK(model::try_simulate(wide.witness->scenario, test::hyp("alg1")).has_value());
  b.wide_first = false;
  const auto smallest = search::distinguish_pair(test::hyp("alg1"), held, rtx, b);
  REQUIRE(smallest.outcome == search::PairOutcome::Separated);
  CHECK_FALSE(smallest.found_beyond_bounds);
}
