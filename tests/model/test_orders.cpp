// Tests of judging over unobserved orders (model/judging/src/orders.cpp): launches within the launch window,
// retirements within a tick under trace-driven timing, the bound that gives `unknown`, and the timing names.
#include <catch2/catch.hpp>

#include <algorithm>

#include "helpers.hpp"
#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/oracle/oracle.hpp"

using namespace tbcheck;
using tbcheck::test::hyp;

namespace {

// Two SMs that hold one 1024-thread block each, so which block retires first decides where the next goes.
model::Scenario two_sm(const std::string& kernels) {
  return test::scenario(R"({"device": )" + test::mini_device(2) + R"(, "kernels": )" + kernels + "}");
}

model::Observation recording_of(const model::Schedule& sch) {
  return oracle::observation_of(sch, model::ObservationKind::Hardware);
}

model::Case case_of(model::Scenario s, model::Observation o) {
  model::Case c;
  c.id = "t";
  c.scenario = std::move(s);
  c.observation = std::move(o);
  return c;
}

// A and B, one block each, launched together; the recording is B's launch first.
model::Case raced_launch() {
  const model::Scenario listed = two_sm(R"([{"name": "A", "blocks": 1, "threads": 1024, "regs": 32, "smem": 0, "duration": 5},
                                            {"name": "B", "blocks": 1, "threads": 1024, "regs": 32, "smem": 0, "duration": 5}])");
  model::Scenario swapped = listed;
  std::swap(swapped.kernels[0], swapped.kernels[1]);
  return case_of(listed, recording_of(model::simulate(swapped, hyp("alg1"))));
}

}  // namespace

TEST_CASE("a recording only an unobserved launch order reproduces passes under that order, which the verdict names") {
  model::Case c = raced_launch();
  // As listed (the launch order taken as observed) the recording refutes the right rule.
  REQUIRE(model::evaluate(c, hyp("alg1")).at(model::Level::Exact) == model::Verdict::Fail);
  c.observation->resolution = model::Resolution{1, 1};
  const model::CaseResult r = model::evaluate(c, hyp("alg1"));
  CHECK(r.at(model::Level::Exact) == model::Verdict::Pass);
  CHECK(r.order(model::Level::Exact) == "launch order B, A");
  CHECK(r.orders_tried >= 2);
}

TEST_CASE("launches recorded further apart than the window keep their order") {
  model::Case c = raced_launch();
  c.observation->resolution = model::Resolution{1, 1};
  c.observation->launch_of_kernel = {{"A", 0}, {"B", 3}};
  const model::CaseResult r = model::evaluate(c, hyp("alg1"));
  CHECK(r.at(model::Level::Exact) == model::Verdict::Fail);
}

TEST_CASE("a recording no admissible order reproduces fails under every order, with the closest one") {
  model::Case c = raced_launch();
  c.observation->resolution = model::Resolution{1, 1};
  // Both blocks on SM 1 at once: no launch order puts two one-per-SM blocks on one SM.
  c.observation->sm_of_block = {{"A", {1}}, {"B", {1}}};
  const model::CaseResult r = model::evaluate(c, hyp("alg1"));
  REQUIRE(r.at(model::Level::Exact) == model::Verdict::Fail);
  CHECK_THAT(r.first_failure(model::Level::Exact), Catch::Contains("under every admissible order (2 simulated"));
  CHECK_THAT(r.first_failure(model::Level::Exact), Catch::Contains("1 blocks on their recorded SM"));
}

TEST_CASE("the order bound reached gives unknown with the reason, not a verdict") {
  model::Case c = raced_launch();
  c.observation->resolution = model::Resolution{1, 1};
  model::JudgeOptions o;
  o.max_orders = 1;  // the listed order only, which fails
  const model::CaseResult r = model::evaluate(c, hyp("alg1"), o);
  CHECK(r.at(model::Level::Exact) == model::Verdict::Unknown);
  CHECK_THAT(r.first_failure(model::Level::Exact), Catch::Contains("bound reached: 1 simulation(s)"));
  CHECK(model::to_json(r)["levels"]["exact"]["verdict"] == "unknown");
}

TEST_CASE("trace timing passes the true rule on a jittered recording that model durations refute") {
  // Six blocks through two one-block SMs; durations 100 jittered by up to 10% per block.
  const model::Scenario s = two_sm(R"([{"name": "K", "blocks": 6, "threads": 1024, "regs": 32, "smem": 0, "duration": 100}])");
  const std::vector<int> jittered = {108, 93, 101, 96, 110, 91};
  const model::EndTimeSource ends = [&](int, int b, int64_t start) { return start + jittered[static_cast<size_t>(b)]; };
  const auto recorded = model::try_simulate(s, hyp("alg1"), nullptr, &ends);
  REQUIRE(recorded);
  const model::Case c = case_of(s, recording_of(*recorded));
  const model::CaseResult by_model = model::evaluate(c, hyp("alg1"));
  CHECK(by_model.at(model::Level::Exact) == model::Verdict::Fail);
  CHECK(by_model.timing == model::Timing::Model);
  model::JudgeOptions trace;
  trace.timing = model::Timing::Trace;
  const model::CaseResult by_trace = model::evaluate(c, hyp("alg1"), trace);
  CHECK(by_trace.timing == model::Timing::Trace);
  CHECK(by_trace.at(model::Level::Exact) == model::Verdict::Pass);
  CHECK(model::to_json(by_trace)["timing"] == "trace");
}

TEST_CASE("trace timing tries the orders of retirements within one tick and names the one that reproduces") {
  // Blocks 0 and 1 end in the same tick; block 2 took SM 1, so block 1 retired first.
  const model::Scenario s = two_sm(R"([{"name": "K", "blocks": 3, "threads": 1024, "regs": 32, "smem": 0, "duration": 100}])");
  model::Observation o;
  o.kind = model::ObservationKind::Hardware;
  o.sm_of_block["K"] = {0, 1, 1};
  o.start_of_block["K"] = {0, 0, 101};
  o.end_of_block["K"] = {100, 100, 200};
  const model::Case c = case_of(s, o);
  model::JudgeOptions trace;
  trace.timing = model::Timing::Trace;
  const model::CaseResult r = model::evaluate(c, hyp("alg1"), trace);
  CHECK(r.at(model::Level::Exact) == model::Verdict::Pass);
  CHECK_THAT(r.order(model::Level::Exact), Catch::Contains("retirements recorded at 100..100 in the order K[1], K[0]"));
  // Ends a tick apart are ordered: the recording then says block 0 retired first, and alg1 is refuted.
  model::Case apart = c;
  apart.observation->end_of_block["K"] = {100, 102, 200};
  apart.observation->start_of_block["K"] = {0, 0, 103};
  const model::CaseResult f = model::evaluate(apart, hyp("alg1"), trace);
  CHECK(f.at(model::Level::Exact) == model::Verdict::Fail);
  CHECK_THAT(f.first_failure(model::Level::Exact), Catch::Contains("K block 2: predicted SM 0, observed SM 1"));
}

TEST_CASE("orders of a tie group that keep the retirements a first difference waited for are not simulated again") {
  // Eight one-per-SM blocks of k1; seven end together at 1, the one on SM 7 at 5. The recording has k2's
  // block on SM 7 from 1, which no order of the seven gives: k2 goes where the first of them retires, so
  // each first choice settles every order that begins with it (7! orders, about 8 simulations).
  const model::Scenario s = test::scenario(R"({"device": )" + test::mini_device(8) + R"(, "kernels": [
    {"name": "k1", "blocks": 8, "threads": 1024, "regs": 32, "smem": 0, "duration": 1},
    {"name": "k2", "blocks": 1, "threads": 1024, "regs": 32, "smem": 0, "duration": 1}]})");
  model::Observation o = recording_of(model::simulate(s, hyp("alg1")));
  const auto& sms = o.sm_of_block.at("k1");
  const size_t on7 = static_cast<size_t>(std::find(sms.begin(), sms.end(), 7) - sms.begin());
  REQUIRE(on7 < sms.size());
  o.end_of_block.at("k1")[on7] = 5;
  o.sm_of_block.at("k2") = {7};
  o.start_of_block.at("k2") = {1};
  o.end_of_block.at("k2") = {2};
  model::JudgeOptions trace;
  trace.timing = model::Timing::Trace;
  trace.max_orders = 100;
  trace.tie_search = model::TieSearch::Enumerate;  // the enumeration's pruning (the stepwise search: test_order_steps)
  const model::CaseResult r = model::evaluate(case_of(s, o), hyp("alg1"), trace);
  CHECK(r.at(model::Level::Exact) == model::Verdict::Fail);
  CHECK_THAT(r.first_failure(model::Level::Exact), Catch::Contains("k2 block 0: predicted SM") && Catch::Contains("pruned"));
  // The same recording with k2 on SM 3: the order whose first retirement is SM 3's reproduces it.
  o.sm_of_block.at("k2") = {3};
  const model::CaseResult p = model::evaluate(case_of(s, o), hyp("alg1"), trace);
  CHECK(p.at(model::Level::Exact) == model::Verdict::Pass);
  CHECK_THAT(p.order(model::Level::Exact), Catch::Contains("in the order k1["));
}

namespace {

// A (two blocks, one per SM) launched before B and C (one block each), all launches observed in order:
// B takes A's room on SM 0 and C SM 1's, B dispatched first. The recording has C starting at c_start
// and B at b_start (a cross-SM inversion when c_start < b_start) and A's second block at a1_start.
model::Case cross_sm_inversion(int a1_start, int b_start, int c_start) {
  const model::Scenario s = two_sm(R"([{"name": "A", "blocks": 2, "threads": 1024, "regs": 32, "smem": 0, "duration": 100},
                                       {"name": "B", "blocks": 1, "threads": 1024, "regs": 32, "smem": 0, "duration": 100},
                                       {"name": "C", "blocks": 1, "threads": 1024, "regs": 32, "smem": 0, "duration": 100}])");
  model::Observation o = recording_of(model::simulate(s, hyp("alg1")));
  REQUIRE(o.sm_of_block.at("A") == std::vector<int>{0, 1});
  REQUIRE(o.sm_of_block.at("B") == std::vector<int>{0});
  REQUIRE(o.sm_of_block.at("C") == std::vector<int>{1});
  o.resolution = model::Resolution{1, 0};
  o.launch_of_kernel = {{"A", 0}, {"B", 1}, {"C", 2}};
  o.start_of_block.at("A")[1] = a1_start;
  o.start_of_block.at("B") = {b_start};
  o.start_of_block.at("C") = {c_start};
  return case_of(s, o);
}

model::JudgeOptions trace_timing() {
  model::JudgeOptions o;
  o.timing = model::Timing::Trace;
  return o;
}

}  // namespace

TEST_CASE("the dispatch skew is the widest spread of starts of one kernel's blocks that no retirement separates") {
  const model::Case c = cross_sm_inversion(5, 105, 101);
  const model::DispatchSkew k = model::dispatch_skew(*c.observation, c.scenario, 1);
  CHECK(k.units == 5);
  CHECK_THAT(k.basis, Catch::Contains("2 blocks of A on SM(s) 0, 1 started 0..5"));
  // B and C start after A's retirements (recorded at 100): they are no group of A's, nor of each other.
  const model::DispatchSkew none = model::dispatch_skew(*cross_sm_inversion(0, 105, 101).observation, c.scenario, 1);
  CHECK(none.units == 0);
  // A retirement read in the later start's tick may be what let that block in (ends at 100, tick 2): a
  // start at 99 is no group with one at 0; a start at 97, which the timer places before the ends, is.
  model::Case wide = cross_sm_inversion(0, 105, 101);
  wide.observation->start_of_block.at("A") = {0, 99};
  CHECK(model::dispatch_skew(*wide.observation, wide.scenario, 2).units == 0);
  wide.observation->start_of_block.at("A") = {0, 97};
  CHECK(model::dispatch_skew(*wide.observation, wide.scenario, 2).units == 97);
}

TEST_CASE("under trace timing a cross-SM start inversion within the dispatch skew is no refutation, beyond it it is") {
  // The recording's own skew is 0 (A's blocks started together): C's start 4 units before B's, on the
  // other SM, orders their dispatches, and alg1 (B first) is refuted under every admissible order.
  const model::CaseResult beyond = model::evaluate(cross_sm_inversion(0, 105, 101), hyp("alg1"), trace_timing());
  REQUIRE(beyond.at(model::Level::Exact) == model::Verdict::Fail);
  CHECK_THAT(beyond.first_failure(model::Level::Exact),
             Catch::Contains("B block 0 is dispatched before C block 0, which the recording shows starting more than "
                             "the dispatch skew (0 units") &&
                 Catch::Contains("(101 on SM 1 vs 105 on SM 0)"));
  REQUIRE(beyond.skew);
  CHECK(beyond.skew->units == 0);
  // The coarser levels compare SMs only: the closest order exact found (every block on its SM) passes them.
  CHECK(beyond.at(model::Level::Counts) == model::Verdict::Pass);
  CHECK(beyond.at(model::Level::Sms) == model::Verdict::Pass);
  // A's blocks, dispatched together, started 5 units apart across the SMs: a 4-unit inversion is within
  // what the recording shows a dispatch latency doing, so alg1 passes, and the verdict states the skew.
  const model::CaseResult within = model::evaluate(cross_sm_inversion(5, 105, 101), hyp("alg1"), trace_timing());
  CHECK(within.at(model::Level::Exact) == model::Verdict::Pass);
  REQUIRE(within.skew);
  CHECK(within.skew->units == 5);
  CHECK(model::to_json(within)["dispatch_skew"]["units"] == 5);
  // The same skew, an inversion of 6 units: refuted again.
  const model::CaseResult past = model::evaluate(cross_sm_inversion(5, 107, 101), hyp("alg1"), trace_timing());
  CHECK(past.at(model::Level::Exact) == model::Verdict::Fail);
  CHECK_THAT(past.first_failure(model::Level::Exact), Catch::Contains("the dispatch skew (5 unit(s)"));
  // Model timing compares start instants outright and knows no skew.
  CHECK_FALSE(model::evaluate(cross_sm_inversion(5, 105, 101), hyp("alg1")).skew);
}

TEST_CASE("counts and sms start from the order exact came closest with") {
  // A and B race (either launch order admissible); the recording has B on SM 0 and A on SM 1, so only
  // the launch order B, A puts them there, but A's start 3 units before B's, on the other SM, refutes
  // that order's dispatch order at exact (the recording's skew is 0). Counts and sms simulate exact's
  // closest order first and pass on it: one simulation each, not the listed order first.
  model::Case c = raced_launch();
  c.observation->resolution = model::Resolution{1, 1};
  c.observation->start_of_block = {{"A", {0}}, {"B", {3}}};
  c.observation->end_of_block = {{"A", {5}}, {"B", {8}}};
  REQUIRE(c.observation->sm_of_block.at("A") == std::vector<int>{1});
  const model::CaseResult r = model::evaluate(c, hyp("alg1"), trace_timing());
  REQUIRE(r.at(model::Level::Exact) == model::Verdict::Fail);
  CHECK_THAT(r.first_failure(model::Level::Exact), Catch::Contains("launch order B, A"));
  CHECK(r.at(model::Level::Counts) == model::Verdict::Pass);
  CHECK(r.at(model::Level::Sms) == model::Verdict::Pass);
  CHECK(r.order(model::Level::Counts) == "launch order B, A");
  CHECK(r.orders_tried == 2 + 1 + 1);  // exact tried both launch orders; the others the closest alone
}

TEST_CASE("trace timing falls back to model durations where the recording has no block ends") {
  model::Case c = raced_launch();
  c.observation->end_of_block.clear();
  model::JudgeOptions trace;
  trace.timing = model::Timing::Trace;
  CHECK(model::evaluate(c, hyp("alg1"), trace).timing == model::Timing::Model);
}

TEST_CASE("timings have names and an unknown one is an error naming the flag") {
  for (model::Timing t : model::kAllTimings) CHECK(model::timing_from_string(std::string(model::to_string(t)), "--timing") == t);
  const auto e = test::error_of([] { model::timing_from_string("exact", "--timing"); });
  CHECK_THAT(std::string(e.what()), Catch::Contains("--timing") && Catch::Contains("model, trace"));
}

namespace {

// The raced launch with every block's times, judged under trace timing at the given levels: exact fails after both
// launch orders, so counts and sms search again where they are judged.
model::CaseResult timed_race_judged(model::JudgedLevels levels) {
  model::Case c = raced_launch();
  c.observation->resolution = model::Resolution{1, 1};
  c.observation->start_of_block = {{"A", {0}}, {"B", {3}}};
  c.observation->end_of_block = {{"A", {5}}, {"B", {8}}};
  model::JudgeOptions o = trace_timing();
  o.levels = levels;
  return model::evaluate(c, hyp("alg1"), o);
}

}  // namespace

TEST_CASE("judging exact alone gives exact's verdict and order and searches no coarser level") {
  const model::CaseResult all = timed_race_judged(model::JudgedLevels::All);
  const model::CaseResult exact = timed_race_judged(model::JudgedLevels::Exact);
  CHECK(exact.at(model::Level::Exact) == all.at(model::Level::Exact));
  CHECK(exact.first_failure(model::Level::Exact) == all.first_failure(model::Level::Exact));
  CHECK(exact.order(model::Level::Exact) == all.order(model::Level::Exact));
  CHECK(exact.orders_tried == 2);  // both launch orders, nothing for counts and sms
  CHECK_FALSE(exact.counts.has_value());
  CHECK_FALSE(exact.sms.has_value());
  CHECK(model::judges(model::JudgedLevels::All, model::Level::Sms));
  CHECK_FALSE(model::judges(model::JudgedLevels::Exact, model::Level::Counts));
}

TEST_CASE("judging exact and counts gives their verdicts and orders of judging all and searches no sms") {
  const model::CaseResult all = timed_race_judged(model::JudgedLevels::All);
  const model::CaseResult two = timed_race_judged(model::JudgedLevels::ExactAndCounts);
  for (model::Level l : {model::Level::Exact, model::Level::Counts}) {
    CHECK(two.at(l) == all.at(l));
    CHECK(two.order(l) == all.order(l));
  }
  REQUIRE(all.sms.has_value());
  CHECK_FALSE(two.sms.has_value());
  CHECK(model::judges(model::JudgedLevels::ExactAndCounts, model::Level::Counts));
  CHECK_FALSE(model::judges(model::JudgedLevels::ExactAndCounts, model::Level::Sms));
}
