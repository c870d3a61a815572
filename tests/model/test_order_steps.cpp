// Tests of the stepwise order search (model/judging/src/order_steps.cpp): it decides recordings whose tied
// retirements no short enumeration settles, and gives the enumeration's verdict wherever the enumeration decides.
#include <catch2/catch.hpp>

#include <random>

#include <fmt/format.h>

#include "helpers.hpp"
#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/oracle/oracle.hpp"

using namespace tbcheck;
using tbcheck::test::hyp;

namespace {

constexpr int kSms = 48;

// A wave of one block per SM (1024 threads fill an SM's warps) that retires at one recorded instant, then a second
// wave recorded, block by block, on the SM of the first-wave block listed: the order those retire in reproduces it.
model::Case wave_case(const std::vector<int>& freed_by) {
  const int second = static_cast<int>(freed_by.size());
  model::Case c;
  c.id = "wave";
  c.scenario = test::scenario(R"({"device": )" + test::mini_device(kSms) + R"(, "kernels": [{"name": "k1", "blocks": )" +
                              std::to_string(kSms + second) +
                              R"(, "threads": 1024, "regs": 32, "smem": 0, "duration": 1}]})");
  const model::Schedule sch = model::simulate(c.scenario, hyp("alg1"));
  model::Observation o;
  o.kind = model::ObservationKind::Hardware;
  auto& sms = o.sm_of_block["k1"];
  auto& starts = o.start_of_block["k1"];
  auto& ends = o.end_of_block["k1"];
  for (int b = 0; b < kSms; ++b) {
    sms.push_back(sch.kernels[0].blocks[static_cast<size_t>(b)].sm);
    starts.push_back(0);
    ends.push_back(10);
  }
  for (int first : freed_by) {
    sms.push_back(sch.kernels[0].blocks[static_cast<size_t>(first)].sm);
    starts.push_back(10);
    ends.push_back(20);
  }
  o.resolution = model::Resolution{1, 0};
  c.observation = std::move(o);
  return c;
}

model::JudgeOptions trace(int64_t max_orders, model::TieSearch how) {
  model::JudgeOptions o;
  o.timing = model::Timing::Trace;
  o.max_orders = max_orders;
  o.levels = model::JudgedLevels::Exact;
  o.tie_search = how;
  return o;
}

// A wave case judged stepwise within 100 simulations' worth of steps, where 100 whole simulations leave it unknown.
model::CaseResult stepwise_beyond_enumeration(const model::Case& c) {
  const model::CaseResult enumerated = model::evaluate(c, hyp("alg1"), trace(100, model::TieSearch::Enumerate));
  REQUIRE(enumerated.at(model::Level::Exact) == model::Verdict::Unknown);
  return model::evaluate(c, hyp("alg1"), trace(100, model::TieSearch::Stepwise));
}

}  // namespace

TEST_CASE("a second wave placed in the order the first wave's tied blocks freed their SMs is reproduced stepwise") {
  // Half the SMs, scrambled: only the retirements that free them in this order reproduce it, among 48! orders;
  // whole simulations settle one position at a time and reach their bound first.
  const model::CaseResult stepwise = stepwise_beyond_enumeration(
      wave_case({7, 2, 19, 0, 5, 9, 23, 12, 16, 3, 11, 20, 44, 31, 25, 40, 38, 29, 47, 33, 41, 27, 35, 30}));
  CHECK(stepwise.at(model::Level::Exact) == model::Verdict::Pass);
  // The order named is one a whole simulation passes under (the search checks that itself): k1[7] first.
  CHECK_THAT(stepwise.order(model::Level::Exact), Catch::StartsWith("retirements recorded at 10..10 in the order k1[7], k1[2], k1[19]"));
}

TEST_CASE("a second wave no order of the tied retirements can place is refuted stepwise under every order") {
  // Two second-wave blocks recorded on first-wave block 5's SM at one instant, where an SM holds one at a time.
  const model::CaseResult stepwise = stepwise_beyond_enumeration(
      wave_case({7, 2, 19, 0, 5, 5, 23, 12, 16, 3, 11, 20, 44, 31, 25, 40, 38, 29, 47, 33, 41, 27, 35, 30}));
  CHECK(stepwise.at(model::Level::Exact) == model::Verdict::Fail);
  CHECK_THAT(stepwise.first_failure(model::Level::Exact),
             Catch::Contains("under every admissible order (searched retirement by retirement"));
}

TEST_CASE("the stepwise order search bound gives unknown, as the enumeration's does") {
  // Two blocks per SM retire at one instant; a 1024-thread block of k2 fits an SM only once both have gone, so
  // most retirements dispatch nothing and the orders that matter are the subsets retired so far. Both k2 blocks
  // are recorded on one SM, where they cannot be together: no order reproduces it, and showing that takes far
  // more than the bound.
  model::Case c;
  c.id = "pairs";
  c.scenario = test::scenario(R"({"device": )" + test::mini_device(kSms) + R"(, "kernels": [
    {"name": "k1", "blocks": 96, "threads": 768, "regs": 32, "smem": 0, "duration": 1},
    {"name": "k2", "blocks": 2, "threads": 1024, "regs": 32, "smem": 0, "duration": 1}]})");
  model::Observation o = oracle::observation_of(model::simulate(c.scenario, hyp("alg1")), model::ObservationKind::Hardware);
  for (auto& e : o.end_of_block["k1"]) e = 10;
  o.start_of_block["k1"].assign(96, 0);
  const int last = o.sm_of_block["k1"].back();
  o.sm_of_block["k2"] = {last, last};
  o.start_of_block["k2"] = {10, 10};
  o.end_of_block["k2"] = {20, 20};
  o.resolution = model::Resolution{1, 0};
  c.observation = std::move(o);
  const model::CaseResult r = model::evaluate(c, hyp("alg1"), trace(60, model::TieSearch::Stepwise));
  CHECK(r.at(model::Level::Exact) == model::Verdict::Unknown);
  CHECK_THAT(r.first_failure(model::Level::Exact), Catch::Contains("bound reached: 60 simulation(s)"));
}

TEST_CASE("the stepwise order search gives the enumeration's verdict on random recordings with tied retirements") {
  // Verdict-only judgements (no whole simulations before the stepwise search) give the same verdicts again.
  // Small devices and short, equal durations: many blocks retire at one recorded instant (or within a tick of
  // each other), so the exact level searches many orders. The recordings come from a hypothesis's own schedule
  // under durations jittered by a unit, so some tie groups chain ends a unit apart.
  std::mt19937_64 rng(20261207);
  std::vector<model::Hypothesis> hs;
  for (const auto& h : model::builtin_hypotheses())
    if (h.selection != model::Selection::GpcPriority) hs.push_back(h);  // no trace timing under gpc-priority
  int compared = 0, engaged = 0, truth_passes = 0, cases = 0;
  const int threads[] = {256, 512, 1024};
  const int smem[] = {0, 16384, 40000};
  for (int n = 0; n < 100; ++n) {
    std::string kernels;
    const int nk = std::uniform_int_distribution<int>(1, 3)(rng);
    for (int k = 0; k < nk; ++k)
      kernels += fmt::format(R"({}{{"name": "k{}", "blocks": {}, "threads": {}, "regs": 32, "smem": {}, "duration": {}}})",
                             k ? ", " : "", k + 1, std::uniform_int_distribution<int>(2, 12)(rng),
                             threads[std::uniform_int_distribution<int>(0, 2)(rng)],
                             smem[std::uniform_int_distribution<int>(0, 2)(rng)],
                             4 * std::uniform_int_distribution<int>(1, 2)(rng));
    const model::Scenario s = test::scenario(R"({"device": )" + test::mini_device(4) + R"(, "kernels": [)" + kernels + "]}");
    const model::Hypothesis& truth = hs[std::uniform_int_distribution<size_t>(0, hs.size() - 1)(rng)];
    if (!model::check_feasibility(s, truth).runs()) continue;
    std::vector<std::vector<int>> jitter(s.kernels.size());
    for (size_t k = 0; k < s.kernels.size(); ++k)
      for (int b = 0; b < s.kernels[k].blocks; ++b) jitter[k].push_back(std::uniform_int_distribution<int>(0, 1)(rng));
    const model::EndTimeSource ends = [&](int k, int b, int64_t start) {
      return start + s.kernels[static_cast<size_t>(k)].duration + jitter[static_cast<size_t>(k)][static_cast<size_t>(b)];
    };
    model::Case c;
    c.id = fmt::format("random-{}", n);
    c.scenario = s;
    c.observation = oracle::observation_of(*model::try_simulate(s, truth, nullptr, &ends), model::ObservationKind::Hardware);
    const int tick = std::uniform_int_distribution<int>(1, 2)(rng);
    c.observation->resolution = model::Resolution{tick, 1};
    cases += tick == 1 ? 1 : 0;
    for (const auto& h : hs) {
      const model::CaseResult e = model::evaluate(c, h, trace(3000, model::TieSearch::Enumerate));
      if (!e.ran) continue;
      const model::Verdict ev = e.at(model::Level::Exact);
      const model::CaseResult st = model::evaluate(c, h, trace(3000, model::TieSearch::Stepwise));
      const model::Verdict sv = st.at(model::Level::Exact);
      model::JudgeOptions verdict_only = trace(3000, model::TieSearch::Stepwise);
      verdict_only.wording = model::Wording::VerdictOnly;
      const model::Verdict vv = model::evaluate(c, h, verdict_only).at(model::Level::Exact);
      CHECK(vv == sv);  // the words asked for never change a verdict
      // Under a tick of 2 a jittered end chains ends a unit apart, and blocks the truth retired together (equal
      // ends inside such a chain) are searched one at a time only: the truth may fail there, under either search.
      if (h.name == truth.name && tick == 1) {
        truth_passes += sv == model::Verdict::Pass;
        INFO(c.id << " truth " << truth.name << ": " << st.first_failure(model::Level::Exact));
        CHECK(sv == model::Verdict::Pass);
      }
      if (ev == model::Verdict::Unknown) continue;
      INFO(c.id << " " << h.name << " truth " << truth.name << ": enumerated " << e.first_failure(model::Level::Exact)
                << "; stepwise " << st.first_failure(model::Level::Exact));
      CHECK(sv == ev);
      ++compared;
      engaged += e.orders_tried > 8 ? 1 : 0;  // the stepwise search took over from the quick enumeration
    }
  }
  // Every recording at a tick of 1 comes from its truth's own schedule, so some order reproduces it.
  CHECK(truth_passes == cases);
  CHECK(compared > 500);
  CHECK(engaged >= 15);
}

TEST_CASE("a long recording of tied waves is judged within the bound without a pass it does not have") {
  // 2,100 one-per-SM blocks in waves of 48 that each retire at one instant: every retirement but the last
  // wave's dispatches a block, so a branch chooses some 2,000 retirements in a row (the search's recursion
  // bound); the step bound or that bound hands it to the enumeration, whose own bound ends it.
  model::Case c;
  c.id = "long";
  c.scenario = test::scenario(R"({"device": )" + test::mini_device(kSms) + R"(, "kernels": [{"name": "k1", "blocks": 2100, "threads": 1024, "regs": 32, "smem": 0, "duration": 1}]})");
  model::Observation o = oracle::observation_of(model::simulate(c.scenario, hyp("alg1")), model::ObservationKind::Hardware);
  // Blocks recorded one SM over from where the listed order puts them after the first wave.
  for (size_t b = kSms; b < o.sm_of_block["k1"].size(); ++b) o.sm_of_block["k1"][b] = (o.sm_of_block["k1"][b] + 1) % kSms;
  o.resolution = model::Resolution{1, 0};
  c.observation = std::move(o);
  const model::CaseResult r = model::evaluate(c, hyp("alg1"), trace(20, model::TieSearch::Stepwise));
  CHECK(r.at(model::Level::Exact) != model::Verdict::Pass);
}
