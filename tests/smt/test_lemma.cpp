// Constant-schedule lemmas (smt/lemma.cpp) and their use by distinguish: proved and refuted lemmas,
// the cache shared by the pairs of a run, minimality they prove, and pairs answered on worker threads.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/distinguish.hpp"
#include "../../search/src/lemma_cache.hpp"  // search's private header: it speaks smt's query types
#include "tbcheck/smt/lemma.hpp"

using namespace tbcheck;

namespace {
model::Device one_tpc() { return search::reduced_device(model::builtin_device("rtx3090", "", ""), 1); }
smt::QueryOptions lemma_options() {
  smt::QueryOptions o;
  o.timeout_ms = 60000;
  return o;
}
smt::FixedSchedule placements(const model::Schedule& s) {
  smt::FixedSchedule out;
  for (const auto& k : s.kernels)
    for (const auto& b : k.blocks) out.emplace_back(b.sm, b.start);
  return out;
}
}  // namespace

TEST_CASE("prove_schedule: two blocks of one kernel on one TPC always go to SMs 0 and 1 at 0", "[smt][lemma]") {
  for (const char* h : {"round-robin", "most-room", "alg1"}) {
    auto r = smt::prove_schedule(test::hyp(h), one_tpc(), {2}, {{0, 0}, {1, 0}}, lemma_options());
    INFO(h);
    CHECK(r.outcome == smt::QueryOutcome::None);
  }
}

TEST_CASE("prove_schedule: a wrong schedule and a parameter-dependent one get a real counterexample", "[smt][lemma]") {
  // Both blocks on SM 0 is never alg1's answer on an idle TPC.
  auto wrong = smt::prove_schedule(test::hyp("alg1"), one_tpc(), {2}, {{0, 0}, {0, 0}}, lemma_options());
  REQUIRE(wrong.outcome == smt::QueryOutcome::Found);
  CHECK(placements(model::simulate(wrong.scenario, test::hyp("alg1"))) != smt::FixedSchedule{{0, 0}, {0, 0}});
  // Three blocks on two SMs: the third shares SM 0 at 0 when two fit, else it waits for the first to
  // retire, so its start depends on the parameters.
  model::Scenario smallest = test::scenario(
      R"({"device": "rtx3090", "kernels": [{"name": "k1", "blocks": 3, "threads": 32, "regs": 32, "smem": 0, "duration": 1}]})");
  smallest.device = one_tpc();
  smt::FixedSchedule candidate = placements(model::simulate(smallest, test::hyp("alg1")));
  auto r = smt::prove_schedule(test::hyp("alg1"), one_tpc(), {3}, candidate, lemma_options());
  REQUIRE(r.outcome == smt::QueryOutcome::Found);
  CHECK(placements(model::simulate(r.scenario, test::hyp("alg1"))) != candidate);
}

TEST_CASE("LemmaCache asks Z3 once per set of options, device and structure", "[smt][lemma]") {
  search::LemmaCache cache;
  model::Hypothesis copy = test::hyp("most-room");
  copy.name = "most-room-copy";  // same options: the same lemma
  double first = 0, second = 0, third = 0;
  auto a = cache.constant_schedule(test::hyp("most-room"), one_tpc(), {2}, lemma_options(), first);
  auto b = cache.constant_schedule(copy, one_tpc(), {2}, lemma_options(), second);
  auto c = cache.constant_schedule(test::hyp("most-room"), one_tpc(), {1}, lemma_options(), third);
  REQUIRE(a);
  CHECK(*a == smt::FixedSchedule{{0, 0}, {1, 0}});
  CHECK(b == a);
  CHECK(first > 0);
  CHECK(second == 0);  // served from the cache
  REQUIRE(c);
  CHECK(cache.asked() == 2);
}

TEST_CASE("lemmas prove a witness minimal where the pair queries cannot", "[smt][lemma]") {
  // most-room vs alg1 first differ on one kernel of three blocks; minimality needs [1] and [2]
  // proved inseparable. With no Z3 budget for pair queries only the lemmas can do it.
  search::DistinguishBounds b;
  b.reduced_tpcs = {1};
  b.max_kernels = 1;
  b.timeout_ms = 1;
  b.pair_budget_ms = 1;
  b.lemma_timeout_ms = 60000;
  b.enumerate_one_kernel = false;  // which would prove them by simulation first (test_distinguish.cpp)
  const auto& full = model::builtin_device("rtx3090", "", "");
  auto with = search::distinguish_pair(test::hyp("most-room"), test::hyp("alg1"), full, b);
  REQUIRE(with.outcome == search::PairOutcome::Separated);
  CHECK(with.structure == std::vector<int>{3});
  CHECK(with.minimal_proved);
  CHECK(with.structures_by_lemma == 2);
  b.lemma_timeout_ms = 0;  // lemmas off: the same witness, minimality only bounded
  auto without = search::distinguish_pair(test::hyp("most-room"), test::hyp("alg1"), full, b);
  REQUIRE(without.outcome == search::PairOutcome::Separated);
  CHECK(without.structure == std::vector<int>{3});
  CHECK_FALSE(without.minimal_proved);
  CHECK(without.structures_by_lemma == 0);
}

TEST_CASE("distinguish_all on two threads answers every pair, in pair order, as one thread does", "[smt][lemma]") {
  std::vector<model::Hypothesis> hs = {test::hyp("round-robin"), test::hyp("most-room"), test::hyp("alg1")};
  search::DistinguishBounds b;
  b.reduced_tpcs = {1};
  b.max_kernels = 2;
  b.timeout_ms = 500;
  b.pair_budget_ms = 500;
  const auto& full = model::builtin_device("rtx3090", "", "");
  int calls = 0;
  auto two = search::distinguish_all(hs, full, b, 2, [&](const search::PairResult&) { ++calls; });
  auto one = search::distinguish_all(hs, full, b, 1);
  CHECK(calls == 3);
  REQUIRE(two.size() == 3);
  REQUIRE(one.size() == 3);
  const std::vector<std::pair<std::string, std::string>> order = {
      {"round-robin", "most-room"}, {"round-robin", "alg1"}, {"most-room", "alg1"}};
  for (size_t i = 0; i < 3; ++i) {
    INFO(i);
    CHECK(std::make_pair(two[i].h1, two[i].h2) == order[i]);
    CHECK(two[i].outcome == search::PairOutcome::Separated);
    CHECK(two[i].structure == one[i].structure);
    REQUIRE(two[i].witness);
    REQUIRE(one[i].witness);
    CHECK(two[i].witness->scenario.to_json() == one[i].witness->scenario.to_json());
  }
}

TEST_CASE("a proved prefix schedule, stated as facts, keeps the pair query's answers", "[smt][lemma]") {
  // [2] is fixed for every hypothesis on one TPC, so [3] and [2,1] queries may assume it.
  smt::QueryOptions o = lemma_options();
  o.prefix = smt::FixedSchedule{{0, 0}, {1, 0}};
  auto same = smt::distinguish_structure(test::hyp("alg1"), test::hyp("alg1-literal"), one_tpc(), {3}, o);
  CHECK(same.outcome == smt::QueryOutcome::None);  // [3] cannot separate them (their witness is [1,1])
  auto differ = smt::distinguish_structure(test::hyp("round-robin"), test::hyp("alg1"), one_tpc(), {3}, o);
  REQUIRE(differ.outcome == smt::QueryOutcome::Found);
  CHECK(!search::first_difference(model::simulate(differ.scenario, test::hyp("round-robin")),
                                  model::simulate(differ.scenario, test::hyp("alg1")))
             .empty());
  o.prefix = smt::FixedSchedule{{0, 0}};  // the wrong length is a programming error, not a silent answer
  CHECK_THROWS_AS(smt::distinguish_structure(test::hyp("alg1"), test::hyp("alg1-literal"), one_tpc(), {3}, o),
                  std::logic_error);
}
