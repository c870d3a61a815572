// Synthesis of distinguishing scenarios: a known separable pair yields a case the simulators
// confirm, a renamed copy cannot be separated (UNSAT), and a tiny timeout is reported as unknown.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/distinguish.hpp"
#include "tbcheck/smt/synthesis.hpp"

using namespace tbcheck;

namespace {
smt::QueryOptions small_options() {
  smt::QueryOptions o;
  o.bounds.max_warps = 8;
  o.bounds.max_duration = 2;
  o.timeout_ms = 60000;
  return o;
}
model::Device one_tpc() { return search::reduced_device(model::builtin_device("rtx3090", "", ""), 1); }
}  // namespace

TEST_CASE("round-robin vs most-room: the witness separates the simulators", "[smt][synthesis]") {
  auto r = smt::distinguish_structure(test::hyp("round-robin"), test::hyp("most-room"), one_tpc(), {1, 1}, small_options());
  REQUIRE(r.outcome == smt::QueryOutcome::Found);
  auto a = model::simulate(r.scenario, test::hyp("round-robin"));
  auto b = model::simulate(r.scenario, test::hyp("most-room"));
  CHECK(!search::first_difference(a, b).empty());
  // They agree on every block but the last (the shape the query asks for).
  CHECK(a.kernels[0].blocks[0] == b.kernels[0].blocks[0]);
}

TEST_CASE("a single block cannot separate round-robin from most-room", "[smt][synthesis]") {
  auto r = smt::distinguish_structure(test::hyp("round-robin"), test::hyp("most-room"), one_tpc(), {1}, small_options());
  CHECK(r.outcome == smt::QueryOutcome::None);
}

TEST_CASE("a hypothesis and a renamed copy of itself are inseparable (UNSAT)", "[smt][synthesis]") {
  model::Hypothesis copy = test::hyp("olmedo");
  copy.name = "olmedo-copy";
  for (std::vector<int> st : {std::vector<int>{1, 1}, std::vector<int>{2, 1}}) {
    auto r = smt::distinguish_structure(test::hyp("olmedo"), copy, one_tpc(), st, small_options());
    CHECK(r.outcome == smt::QueryOutcome::None);
  }
}

TEST_CASE("a solver timeout is reported as unknown with Z3's reason", "[smt][synthesis]") {
  auto o = small_options();
  o.bounds.max_warps = 32;
  o.timeout_ms = 1;
  auto r = smt::distinguish_structure(test::hyp("alg1"), test::hyp("alg1-no-skip"), one_tpc(), {1, 1, 1}, o);
  CHECK(r.outcome == smt::QueryOutcome::Unknown);
  CHECK(!r.reason.empty());
}

TEST_CASE("distinguish_pair lifts a witness to the full device and re-verifies it", "[smt][synthesis]") {
  search::DistinguishBounds b;
  b.max_kernels = 2;
  b.max_total_blocks = 2;
  b.max_blocks_per_kernel = 2;
  b.params.max_warps = 8;
  b.params.max_duration = 2;
  b.timeout_ms = 60000;
  b.reduced_tpcs = {1};
  const auto& full = model::builtin_device("rtx3090", "", "");
  auto r = search::distinguish_pair(test::hyp("round-robin"), test::hyp("most-room"), full, b);
  REQUIRE(r.outcome == search::PairOutcome::Separated);
  REQUIRE(r.witness);
  CHECK(r.witness->scenario.device.sms == 82);
  CHECK(r.blocks == 82);  // two kernels of one block each, lifted x41
  CHECK(r.minimal_proved);
  CHECK(!search::first_difference(model::simulate(r.witness->scenario, test::hyp("round-robin")),
                                  model::simulate(r.witness->scenario, test::hyp("most-room")))
             .empty());
}
