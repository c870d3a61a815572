// Tied retirements (search/src/ties.cpp): a witness whose schedule moves under the other reading is found,
// a staggered one is accepted, distinguish's witnesses hold under both readings, and the shipped ones do.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/distinguish.hpp"
#include "tbcheck/search/ties.hpp"

using namespace tbcheck;

TEST_CASE("tie_robust finds a schedule that moves under the other reading of tied retirements", "[ties]") {
  const model::Scenario s = test::tied_retirements_scenario();
  const search::TieCheck c = search::tie_robust(s, {test::hyp("alg1")});
  CHECK(c.effect == search::TieEffect::SmsMove);
  CHECK(c.hypothesis == "alg1");
  CHECK(c.detail.find("k4 block 0") != std::string::npos);
  CHECK(c.to_json().at("effect") == "sms-move");
  // Either reading is checked against the other: a start-order hypothesis moves too.
  CHECK_FALSE(search::tie_robust(s, {search::other_reading(test::hyp("alg1"))}).robust());
  // k3 a unit longer: nothing ends together, nothing moves.
  model::Scenario staggered = s;
  staggered.kernels[2].duration = 3;
  CHECK(search::tie_robust(staggered, {test::hyp("alg1"), test::hyp("most-room")}).robust());
}

TEST_CASE("robust_witness staggers a tie-dependent witness and keeps the pair separated", "[ties]") {
  // distinguish's witness of this pair before it staggered durations: k1's blocks all end at 1, and under
  // start-order k2's blocks take SMs as k1's retire one by one.
  const model::Scenario s = test::scenario(R"({"device": "rtx3090", "kernels": [
    {"name": "k1", "blocks": 82, "threads": 32, "regs": 255, "smem": 19456, "duration": 1},
    {"name": "k2", "blocks": 123, "threads": 128, "regs": 40, "smem": 47232, "duration": 2}]})");
  const model::Hypothesis& a = test::hyp("alg1-counted-smem");
  const model::Hypothesis& b = test::hyp("alg1-natural-order");
  REQUIRE_FALSE(search::tie_robust(s, {a, b}).robust());
  const search::RobustWitness r = search::robust_witness(s, a, b, 3);
  REQUIRE(r.ties == search::WitnessTies::Staggered);
  CHECK(search::tie_robust(r.scenario, {a, b}).robust());
  CHECK_FALSE(search::first_difference(model::simulate(r.scenario, a), model::simulate(r.scenario, b)).empty());
  CHECK_FALSE(r.beyond_max_duration);
  for (const auto& k : r.scenario.kernels) CHECK(k.duration <= 3);
  // A pair that differs in the retirement option itself compares the readings: kept as found.
  const model::Scenario p = test::tied_retirements_scenario();
  const search::RobustWitness c = search::robust_witness(p, test::hyp("alg1"), search::other_reading(test::hyp("alg1")), 3);
  CHECK(c.ties == search::WitnessTies::Compared);
  CHECK(c.scenario.kernels[2].duration == 2);
}

TEST_CASE("durations scaled by a common factor scale every schedule and keep which retirements tie", "[ties]") {
  // The staggering skips a duration vector with a common divisor because it acts as its quotient, tried before it:
  // true while every instant is a sum of durations, which this protects for both readings of every hypothesis.
  // quadro6000 has a GPC map, where the gpc-priority dispatcher (fermi) runs.
  const std::vector<model::Scenario> scenarios = {test::tied_retirements_scenario(), test::scenario(R"({"device": "rtx3090",
    "kernels": [{"name": "k1", "blocks": 82, "threads": 32, "regs": 255, "smem": 19456, "duration": 1},
                {"name": "k2", "blocks": 123, "threads": 128, "regs": 40, "smem": 47232, "duration": 2}]})"),
    test::scenario(R"({"device": "quadro6000", "kernels": [
      {"name": "k1", "blocks": 40, "threads": 256, "regs": 32, "smem": 0, "duration": 1},
      {"name": "k2", "blocks": 30, "threads": 128, "regs": 20, "smem": 1024, "duration": 2}]})")};
  int compared = 0;
  std::set<std::string> ran;  // hypotheses compared
  for (const model::Scenario& s : scenarios)
    for (const model::Hypothesis& h : model::builtin_hypotheses())
      for (const model::Hypothesis& r : {h, search::other_reading(h)}) {
        if (model::combination_error(r)) continue;  // gpc-priority has one reading
        const auto base = model::try_simulate(s, r);
        if (!base) continue;
        for (int g : {2, 3}) {
          model::Scenario scaled = s;
          for (auto& k : scaled.kernels) k.duration *= g;
          const auto sch = model::try_simulate(scaled, r);
          REQUIRE(sch);
          for (size_t k = 0; k < sch->kernels.size(); ++k)
            for (size_t b = 0; b < sch->kernels[k].blocks.size(); ++b) {
              const auto& x = base->kernels[k].blocks[b];
              const auto& y = sch->kernels[k].blocks[b];
              REQUIRE(y.sm == x.sm);
              REQUIRE(y.start == g * x.start);
              REQUIRE(y.end == g * x.end);
            }
          CHECK(search::tie_robust(scaled, {r}).effect == search::tie_robust(s, {r}).effect);
          ++compared;
          ran.insert(h.name);
        }
      }
  CHECK(compared >= 40);
  CHECK(ran.count("fermi") == 1);  // the gpc-priority dispatcher as well as the generic one
  CHECK_FALSE(search::tie_robust(scenarios[0], {test::hyp("alg1")}).robust());  // a tie that matters, scaled alike
}

TEST_CASE("distinguish's witness of a small pair holds under both readings of tied retirements", "[ties][distinguish]") {
  search::DistinguishBounds b;
  b.pair_budget_ms = 20000;
  const model::Device& d = model::builtin_device("rtx3090", "", "");
  const search::PairResult r = search::distinguish_pair(test::hyp("alg1"), test::hyp("alg1-literal"), d, b);
  REQUIRE(r.outcome == search::PairOutcome::Separated);
  REQUIRE(r.witness);
  CHECK(r.ties != search::WitnessTies::Dependent);
  CHECK(search::tie_robust(r.witness->scenario, {test::hyp("alg1"), test::hyp("alg1-literal")}).robust());
  const model::json j = search::case_json(r, b, test::hyp("alg1"), test::hyp("alg1-literal"));
  CHECK(j.at("tied_retirements").at("check").at("effect") == "none");
  // The case file still loads (the field is one the case reader knows).
  CHECK_NOTHROW(model::case_from_json(j, "distinguish"));
}

TEST_CASE("the shipped synthesized witnesses that rest on tied retirements say so in their files", "[ties][corpus]") {
  const std::vector<std::string> dirs = {test::source_path("corpus/hypotheses-extra"), test::source_path("tests/data/cluster")};
  for (const char* folder : {"corpus/synth", "corpus/synth-cluster"}) {
    INFO(folder);
    const auto subjects = search::tie_subjects(test::source_path(folder), dirs);
    CHECK(subjects.size() > 5);
    int marked = 0, every_order = 0;
    for (const auto& e : std::filesystem::directory_iterator(test::source_path(folder))) {
      const model::json j = model::read_json_file(e.path().string());
      if (!j.contains("tied_retirements")) continue;
      const model::json& t = j.at("tied_retirements");
      marked += t.at("witness") == "tie-dependent";
      if (t.at("witness") == "separated-under-every-order") {
        ++every_order;
        CHECK(t.at("judge").at("timing") == "trace");
        CHECK(t.at("every_order").at("result") == "separated");
      }
    }
    // Every case whose predicted SMs move under the other reading is marked: separated under every order
    // where every_order_separates proves it, tie-dependent otherwise; no other case is.
    const search::TieCount c = search::count_tie_dependent(subjects);
    CHECK(c.tie_dependent() == marked);
    CHECK(c.every_order == every_order);
  }
}

TEST_CASE("every_order_separates proves a lifted witness whose blocks end together on every SM", "[ties]") {
  // Every block of k1 ends at one instant on many SMs, so the readings move blocks and durations cannot
  // stagger them; yet no order of either side's retirements reproduces the other side's recording.
  const model::Case w = model::load_cases(test::source_path("corpus/synth/synth-rtx3090-alg1-vs-alg1-no-tpc-config.json")).front();
  const model::Hypothesis& a = test::hyp("alg1");
  const model::Hypothesis& b = test::hyp("alg1-no-tpc-config");
  REQUIRE_FALSE(search::tie_robust(w.scenario, {a, b}).robust());
  const search::OrderCheck o = search::every_order_separates(w.scenario, a, b);
  CHECK(o.result == search::OrderSeparation::Separated);
  CHECK(o.orders_tried >= 4);  // at least each side's two recordings judged against the other
  CHECK(o.to_json().at("result") == "separated");
  const model::json j = search::tied_retirements_json(w.scenario, a, b, search::WitnessTies::EveryOrder, false, o);
  CHECK(j.at("witness") == "separated-under-every-order");
  CHECK(j.at("judge").at("timing") == "trace");
  CHECK(j.at("judge").at("resolution").at("tick") == 1);
  CHECK(j.at("every_order") == o.to_json());  // the proof as given, not searched again
  // A bound of one simulation per judgement cannot decide it: unknown, never separated.
  const search::OrderCheck bounded = search::every_order_separates(w.scenario, a, b, 1);
  CHECK(bounded.result == search::OrderSeparation::Unknown);
  CHECK_THAT(bounded.detail, Catch::Contains("bound reached"));
}

TEST_CASE("a reproduction within a few orders ends the check where another judgement would search to the bound", "[ties]") {
  // alg1 / alg1-contiguous-regs' smallest witness, [2,3] on one TPC, lifted x66 to the H200: each kernel's blocks
  // end together on many SMs. One side's recording is searched to the bound without a reproduction, another is
  // reproduced within a few orders; asked in loop order alone, the check took two bounds of simulations.
  const model::Scenario s = test::scenario(R"({"device": "h200", "kernels": [
    {"name": "k1", "blocks": 132, "threads": 128, "regs": 136, "smem": 20693, "duration": 1},
    {"name": "k2", "blocks": 198, "threads": 480, "regs": 64, "smem": 8192, "duration": 2}]})");
  const model::Hypothesis& a = test::hyp("alg1");
  const model::Hypothesis& b = test::hyp("alg1-contiguous-regs");
  const search::OrderCheck o = search::every_order_separates(s, a, b);
  CHECK(o.result == search::OrderSeparation::Reproduced);
  CHECK(o.orders_tried < model::kDefaultMaxOrders);
  // The bound decides nothing here: a larger one finds the same reproduction after as many simulations.
  const search::OrderCheck far = search::every_order_separates(s, a, b, 10 * model::kDefaultMaxOrders);
  CHECK(far.result == search::OrderSeparation::Reproduced);
  CHECK(far.orders_tried == o.orders_tried);
  CHECK(far.detail == o.detail);
}

TEST_CASE("a pair only the readings of tied retirements separate is reproduced under some order", "[ties]") {
  const model::Scenario s = test::tied_retirements_scenario();
  const model::Hypothesis& a = test::hyp("alg1");
  const search::OrderCheck o = search::every_order_separates(s, a, search::other_reading(a));
  CHECK(o.result == search::OrderSeparation::Reproduced);
  CHECK_THAT(o.detail, Catch::Contains("reproduces"));
}

TEST_CASE("tie_subjects names the file and field of a hypothesis it cannot find", "[ties][errors]") {
  test::TempDir d;
  const std::string f = (d / "w.json");
  {
    std::ofstream out(f);
    out << R"({"id": "w", "device": "rtx3090", "kernels": [{"name": "k1", "blocks": 1, "threads": 32, "regs": 32,
      "duration": 1}], "predictions": {"alg1": {}, "no-such-hypothesis": {}}})";
  }
  const auto e = test::error_of([&] { search::tie_subjects(f, {}); });
  CHECK(e.where() == f);
  CHECK(e.field() == "predictions");
  CHECK(e.reason().find("no-such-hypothesis") != std::string::npos);
}

namespace {
// The pair whose smallest witness within distinguish's bounds, [2,3] on one TPC lifted to every TPC,
// separates only through tied retirements: one side starts k2's block a unit earlier on the same SM.
search::DistinguishBounds quick_bounds() {
  search::DistinguishBounds b;
  b.timeout_ms = 500;
  b.pair_budget_ms = 2000;
  b.lemma_timeout_ms = 0;
  b.reduced_tpcs = {1};
  return b;
}
}  // namespace

TEST_CASE("distinguish takes a larger robust witness over a smaller one that rests on tied retirements", "[ties][distinguish]") {
  const model::Hypothesis& a = test::hyp("alg1");
  const model::Hypothesis& b = test::hyp("alg1-counted-smem");
  const search::DistinguishBounds bounds = quick_bounds();
  const search::PairResult r = search::distinguish_pair(a, b, model::builtin_device("rtx3090", "", ""), bounds);
  REQUIRE(r.outcome == search::PairOutcome::Separated);
  REQUIRE(r.witness);
  CHECK(r.ties != search::WitnessTies::Dependent);
  CHECK(r.ties != search::WitnessTies::Compared);
  // The witness holds under both readings or under every order, and still separates.
  const bool robust = search::tie_robust(r.witness->scenario, {a, b}).robust();
  CHECK((robust || search::every_order_separates(r.witness->scenario, a, b).result == search::OrderSeparation::Separated));
  CHECK_FALSE(search::first_difference(model::simulate(r.witness->scenario, a), model::simulate(r.witness->scenario, b)).empty());
  // Both labels: not the smallest witness (the smaller one is named), the smallest robust one within bounds.
  CHECK(r.smaller_tie_dependent == "[2,3] on rtx3090-1tpc");
  CHECK_FALSE(r.minimal_proved);
  CHECK(r.structure != std::vector<int>{2, 3});
  CHECK_THAT(search::minimality_text(r), Catch::StartsWith("not minimal ([2,3] on rtx3090-1tpc"));
  CHECK_THAT(search::minimality_text(r), Catch::Contains("smallest robust: bounded"));
  const model::json j = search::case_json(r, bounds, a, b);
  CHECK(j.at("tied_retirements").at("minimality") == "smallest robust");
  CHECK(j.at("tied_retirements").at("smaller_tie_dependent") == "[2,3] on rtx3090-1tpc");
  CHECK_FALSE(j.at("tied_retirements").contains("robust_search"));
  bool listed = false;  // the smaller structure is listed among the undecided ones, with why
  for (const auto& u : r.unknown_structures) listed = listed || u.find("[2,3] on rtx3090-1tpc: separates, but only through tied retirements") == 0;
  CHECK(listed);
}

TEST_CASE("a pair whose every witness within the bounds rests on tied retirements is reported tie-dependent", "[ties][distinguish]") {
  // Two kernels at most and no search beyond the bounds: [2,3] is the only structure that separates.
  const model::Hypothesis& a = test::hyp("alg1");
  const model::Hypothesis& b = test::hyp("alg1-counted-smem");
  search::DistinguishBounds bounds = quick_bounds();
  bounds.max_kernels = 2;
  bounds.wide_samples = 0;
  const search::PairResult r = search::distinguish_pair(a, b, model::builtin_device("rtx3090", "", ""), bounds);
  REQUIRE(r.outcome == search::PairOutcome::Separated);
  REQUIRE(r.witness);
  CHECK(r.ties == search::WitnessTies::Dependent);
  CHECK(r.structure == std::vector<int>{2, 3});
  CHECK_FALSE(search::tie_robust(r.witness->scenario, {a, b}).robust());
  CHECK(search::every_order_separates(r.witness->scenario, a, b).result != search::OrderSeparation::Separated);
  CHECK(r.smaller_tie_dependent.empty());
  CHECK_THAT(r.robust_search, Catch::StartsWith("none found"));
  // Its undecided structures are those smaller than it, not the ones searched after it.
  for (const auto& u : r.unknown_structures) CHECK(u.find("only through tied retirements") == std::string::npos);
  const model::json j = search::case_json(r, bounds, a, b);
  CHECK(j.at("tied_retirements").at("witness") == "tie-dependent");
  CHECK_THAT(j.at("tied_retirements").at("robust_search").get<std::string>(), Catch::StartsWith("none found"));
  CHECK_FALSE(j.at("tied_retirements").contains("minimality"));
}
