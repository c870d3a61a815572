// The SMT twin of numbering gpc-ring and gpc-carry (smt/src/numbering.cpp): the encoding's block indices are the
// simulator's, and unique, on random scenarios over a GPC map with two GPCs in each tier; a synthesized witness
// separates gpc-ring from placement order, and gpc-carry's twin refutes the launch ring where the two part.
#include <catch2/catch.hpp>

#include <string>

#include "helpers.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/smt/synthesis.hpp"
#include "smt/conformance_checks.hpp"
#include "tbcheck/testing/conformance.hpp"

using namespace tbcheck;

namespace {

// Six TPCs of two SMs: single-TPC GPCs 0 and 2, two-TPC GPCs 1 and 3, so that the single tier starts half-way
// round and the multi-TPC ring turns with the launch and the pointer.
model::Device two_tier_device() {
  model::Device d = model::builtin_device("rtx3090", "test", "device");
  d.sms = 12;
  d.gpc_of_tpc = {0, 1, 1, 2, 3, 3};
  d.gpc_source = "test";
  return d;
}

model::Hypothesis hopper() { return test::hyp("hopper"); }

// hopper numbered by the launch-indexed ring (the i-th launch at the i-th multi-TPC GPC).
model::Hypothesis launch_ring() {
  model::Hypothesis h = hopper();
  h.numbering = model::Numbering::GpcRing;
  h.name = "hopper-launch-ring";
  return h;
}

model::Scenario random_two_tier(unsigned seed) {
  const model::Device dev = two_tier_device();
  model::Scenario s = smt::random_small_scenario(seed, dev);
  s.device = dev;
  s.gpc_pointer = static_cast<int>(seed % 3);
  return s;
}

// Both engines agree block for block on 24 random scenarios over the two tiers (a few may time out).
void check_conforms(const model::Hypothesis& h) {
  test::check_mostly_conforms(smt::check_scenarios(h, 24, 4211, 60000, random_two_tier), 24, 20);
}

bool same_blocks(const model::Schedule& a, const model::Schedule& b) {
  if (a.kernels.size() != b.kernels.size()) return false;
  for (size_t k = 0; k < a.kernels.size(); ++k)
    if (a.kernels[k].blocks != b.kernels[k].blocks) return false;
  return true;
}

}  // namespace

TEST_CASE("SMT numbering gpc-ring conforms with the simulator block for block over two GPC tiers",
          "[smt][gpc-ring][conformance]") {
  check_conforms(launch_ring());
}

TEST_CASE("SMT numbering gpc-carry conforms with the simulator block for block over two GPC tiers",
          "[smt][gpc-carry][conformance]") {
  const model::Hypothesis h = hopper();
  REQUIRE(h.numbering == model::Numbering::GpcCarry);
  check_conforms(h);
  // Not vacuous: on some of these scenarios the carried pointer numbers blocks otherwise than the launch ring.
  int differ = 0;
  for (unsigned seed = 4211; seed < 4211 + 24; ++seed) {
    const model::Scenario s = random_two_tier(seed);
    differ += !same_blocks(model::simulate(s, h), model::simulate(s, launch_ring()));
  }
  CHECK(differ >= 3);
}

TEST_CASE("SMT numbering gpc-ring: the conformance check catches a numbering that is not the simulator's",
          "[smt][gpc-ring][conformance]") {
  // The same scenario judged against the placement-order schedule: the ring labels a batch otherwise, so the
  // check must fail (a check that could not would prove nothing above).
  const model::Hypothesis h = launch_ring();
  model::Hypothesis by_dispatch = h;
  by_dispatch.numbering = model::Numbering::Dispatch;
  model::Scenario s;
  s.device = two_tier_device();
  model::Kernel k;
  k.name = "k1";
  k.blocks = 8;
  k.threads = 256;
  k.regs = 32;
  k.duration = 2;
  s.kernels = {k};
  const model::Schedule ring = model::simulate(s, h), placed = model::simulate(s, by_dispatch);
  REQUIRE_FALSE(same_blocks(ring, placed));
  bool unknown = false, not_unique = false;
  const std::string right = smt::check_schedule(s, h, ring, 60000, &unknown, &not_unique);
  INFO(right);
  CHECK(right.empty());
  CHECK_FALSE(smt::check_schedule(s, h, placed, 60000, &unknown, &not_unique).empty());
  CHECK_FALSE(unknown);
}

TEST_CASE("Z3 separates numbering gpc-ring from placement order with a witness the simulator confirms",
          "[smt][gpc-ring][synthesis]") {
  const model::Hypothesis ring = launch_ring();
  model::Hypothesis by_dispatch = ring;
  by_dispatch.numbering = model::Numbering::Dispatch;
  by_dispatch.name = "hopper-dispatch-numbering";
  // Two blocks suffice: the placement goes to GPC 0 first, the numbering starts the single-TPC tier half-way round.
  smt::QueryOptions o;
  o.timeout_ms = 60000;
  const smt::QueryResult r = smt::distinguish_structure(ring, by_dispatch, two_tier_device(), {2}, o);
  INFO(r.reason);
  REQUIRE(r.outcome == smt::QueryOutcome::Found);
  CHECK_FALSE(same_blocks(model::simulate(r.scenario, ring), model::simulate(r.scenario, by_dispatch)));
}

TEST_CASE("the SMT twin of gpc-carry accepts its own numbering and refutes the launch ring's where they part",
          "[smt][gpc-carry][conformance]") {
  // Z3 does not synthesize a gpc-carry witness within a test's time (the carried pointer chains each launch's
  // start through the previous launch's placements); distinguish finds them by its simulator search. Here the
  // first random scenario on which the two rules part: the encoding accepts gpc-carry's schedule and refutes
  // the launch ring's.
  const model::Hypothesis carry = hopper(), ring = launch_ring();
  for (unsigned seed = 4211; seed < 4211 + 64; ++seed) {
    const model::Scenario s = random_two_tier(seed);
    const model::Schedule mine = model::simulate(s, carry), other = model::simulate(s, ring);
    if (same_blocks(mine, other)) continue;
    bool unknown = false, not_unique = false;
    const std::string right = smt::check_schedule(s, carry, mine, 60000, &unknown, &not_unique);
    INFO("seed " << seed << ": " << right);
    CHECK(right.empty());
    CHECK_FALSE(smt::check_schedule(s, carry, other, 60000, &unknown, &not_unique).empty());
    CHECK_FALSE(unknown);
    return;
  }
  FAIL("no random scenario parts gpc-carry from the launch ring");
}
