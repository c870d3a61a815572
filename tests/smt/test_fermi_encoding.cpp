// The Z3 encoding of selection gpc-priority (seed 003, Pai's Fermi scheduler) against simulate_fermi on
// quadro6000: the paper's cases, random scenarios under fermi and option variants, wrong schedules, synthesis.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>

#include "helpers.hpp"
#include "tbcheck/model/fermi.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/distinguish.hpp"
#include "tbcheck/testing/conformance.hpp"
#include "tbcheck/smt/encoding.hpp"
#include "tbcheck/smt/synthesis.hpp"

using namespace tbcheck;

namespace {

const model::Device& quadro() { return model::builtin_device("quadro6000", "test", "device"); }

// One scenario: the schedule the encoding forces is the simulator's, and it is the only one.
void conforms(const model::Scenario& sc, const model::Hypothesis& h) {
  bool unknown = false, not_unique = false;
  CHECK(smt::check_one(sc, h, 120000, &unknown, &not_unique) == "");
  CHECK_FALSE(unknown);
  CHECK_FALSE(not_unique);
}

}  // namespace

TEST_CASE("SMT gpc-priority conforms on the seed 003 cases", "[smt][fermi][conformance]") {
  auto cases = model::load_cases(test::source_path("corpus/paper/003-pai"));
  REQUIRE(cases.size() == 9);
  for (const auto& c : cases) {
    INFO(c.id);
    conforms(c.scenario, test::hyp("fermi"));
  }
}


TEST_CASE("SMT gpc-priority conforms on random scenarios", "[smt][fermi][conformance]") {
  // 1-3 kernels, some 2-D grids, residency 1..8, durations 1-3, some local memory, on the 14 SMs of
  // quadro6000. The default run keeps to 28 blocks in all (the cost grows with their square);
  // scripts/long.sh sets TBCHECK_CONFORMANCE_SCENARIOS and runs run_conformance's 40.
  const char* env = std::getenv("TBCHECK_CONFORMANCE_SCENARIOS");
  const int forced = env ? std::atoi(env) : 0;
  if (forced > 0) {
    auto report = smt::run_conformance(test::hyp("fermi"), forced, /*seed=*/1234, /*timeout_ms=*/120000);
    REQUIRE_FALSE(report.unsupported);
    for (const auto& m : report.mismatches) FAIL_CHECK(m);
    CHECK(report.checked == forced);
    CHECK(report.not_unique == 0);
    return;
  }
  for (int i = 0; i < 60; ++i) {
    auto sc = smt::random_fermi_scenario(1234u + static_cast<unsigned>(i) * 7919u, quadro(), test::hyp("fermi"), 28);
    conforms(sc, test::hyp("fermi"));
  }
}

TEST_CASE("SMT gpc-priority conforms under the other mechanism options", "[smt][fermi][conformance]") {
  // gpc-priority combines with every other option (order natural and issue single aside): PB warps
  // and registers, contiguous shared memory (capacity not additive: a wave pick can wait), TPC
  // configurations, the local-memory wait before a kernel plans its wave, literal capacity.
  const char* env = std::getenv("TBCHECK_CONFORMANCE_SCENARIOS");
  const int forced = env ? std::atoi(env) : 0;
  struct Variant {
    const char* options;
    int scenarios, max_blocks;
  };
  const std::vector<Variant> variants = {{R"({"warps": "pb-strict-rr", "registers": "pb", "skip_on_multiple_of_4": true})", 8, 16},
                                         {R"({"warps": "pb-any"})", 4, 12},
                                         {R"({"warps": "pb-strict-rr", "registers": "pb-contiguous"})", 2, 8},
                                         {R"({"smem": "contiguous-first-fit"})", 6, 10},
                                         {R"({"smem_config": "tpc", "smem_ignore_below": 3072})", 8, 16},
                                         {R"({"local": "gpu-config"})", 10, 16},
                                         {R"({"capacity": "literal", "registers_ignore_at_or_below": 32})", 8, 16}};
  for (const auto& v : variants) {
    auto j = model::parse_json_text(v.options, "variant");
    j["name"] = "fermi-variant";
    j["base"] = "fermi";
    const model::Hypothesis h = model::hypothesis_from_json(j, "variant");
    INFO(v.options);
    const int n = forced > 0 ? std::max(1, forced / 10) : v.scenarios;
    for (int i = 0; i < n; ++i) {
      auto sc = smt::random_fermi_scenario(777u + static_cast<unsigned>(i) * 104729u, quadro(), h, v.max_blocks);
      conforms(sc, h);
    }
  }
}

TEST_CASE("SMT gpc-priority conformance fails on wrong schedules", "[smt][fermi]") {
  // The check is only worth something if it can fail: schedules of a mutated scheduler, each differing
  // from seed 003's rules in one point, must be refused.
  auto cases = model::load_cases(test::source_path("corpus/paper/003-pai"));
  auto find = [&](const std::string& id) {
    for (const auto& c : cases)
      if (c.id == id) return c.scenario;
    FAIL("no case " << id);
    return model::Scenario{};
  };
  const model::Hypothesis& fermi = test::hyp("fermi");
  {
    // Tie-break flipped (the highest-indexed GPC of highest priority): simulate with GPC ids reversed.
    auto sc = find("pai-28x1-residency2");
    auto flipped = sc;
    for (int& g : flipped.device.gpc_of_tpc) g = 3 - g;
    auto wrong = model::simulate(flipped, fermi);
    REQUIRE(wrong.kernels[0].blocks[0].sm != model::simulate(sc, fermi).kernels[0].blocks[0].sm);
    CHECK_THAT(smt::check_schedule(sc, fermi, wrong, 60000), Catch::Contains("simulator SM"));
  }
  {
    // pick_block ignored (a 2-D grid picked in block-index order): blocks 14 and 15 would wait, not 8 and 12.
    auto sc = find("pai-4x4-blocks-8-12-wait");
    auto flat = sc;
    flat.kernels[0].grid.reset();
    CHECK_THAT(smt::check_schedule(sc, fermi, model::simulate(flat, fermi), 60000), Catch::Contains("simulator SM"));
  }
  {
    // Completion order not followed: the first two blocks after the wave swap their SMs.
    auto sc = find("pai-42x1-residency2");
    auto wrong = model::simulate(sc, fermi);
    auto& b = wrong.kernels[0].blocks;
    REQUIRE(b[28].start == b[29].start);
    REQUIRE(b[28].sm != b[29].sm);
    std::swap(b[28].sm, b[29].sm);
    CHECK_THAT(smt::check_schedule(sc, fermi, wrong, 60000), Catch::Contains("k block 28"));
  }
  // And the right schedule passes the very same check.
  CHECK(smt::check_schedule(find("pai-42x1-residency2"), fermi, model::simulate(find("pai-42x1-residency2"), fermi), 60000) == "");
}

TEST_CASE("SMT gpc-priority on a device without a GPC map is unsupported, naming the device", "[smt][fermi]") {
  auto sc = test::scenario(R"({"device": "rtx3090", "kernels": [{"name": "k", "blocks": 2, "threads": 64, "regs": 32, "smem": 0, "duration": 1}]})");
  z3::context c;
  auto s = smt::SymbolicScenario::make_fixed(c, sc);
  auto d = smt::Decisions::fresh(c, s.total_blocks(), "d");
  CHECK_NOTHROW(smt::check_encodable(test::hyp("fermi")));
  try {
    smt::encode(s, test::hyp("fermi"), d, "h");
    FAIL("expected smt::Unsupported");
  } catch (const smt::Unsupported& e) {
    CHECK_THAT(e.what(), Catch::Contains("rtx3090") && Catch::Contains("gpc-priority"));
  }
  // The synthesis query says so too, instead of throwing.
  smt::QueryOptions o;
  auto q = smt::distinguish_structure(test::hyp("fermi"), test::hyp("alg1"), sc.device, {2}, o);
  CHECK(q.outcome == smt::QueryOutcome::Unsupported);
  CHECK_THAT(q.reason, Catch::Contains("rtx3090"));
}

TEST_CASE("reduced devices keep the GPC map of their TPCs", "[smt][fermi][synthesis]") {
  CHECK(search::reduced_device(quadro(), 1).gpc_of_tpc == std::vector<int>{0});
  CHECK(search::reduced_device(quadro(), 2).gpc_of_tpc == std::vector<int>{0, 1});
  CHECK(search::reduced_device(quadro(), 5).gpc_of_tpc == std::vector<int>{0, 1, 2, 3, 0});
  model::Device d = quadro();
  d.sms = 3;
  d.gpc_of_tpc = {2, 0, 2};
  CHECK(search::reduced_device(d, 2).gpc_of_tpc == std::vector<int>{1, 0});  // dense, original order kept
  CHECK(search::reduced_device(model::builtin_device("rtx3090", "", ""), 2).gpc_of_tpc.empty());
}

TEST_CASE("SMT synthesis separates a Fermi pair and not fermi from a copy of itself", "[smt][fermi][synthesis]") {
  smt::QueryOptions o;
  o.timeout_ms = 120000;
  const model::Hypothesis& fermi = test::hyp("fermi");
  {
    // Two kernels on one SM: the query asks for a difference at any block (the Fermi wave looks ahead).
    const model::Device one = search::reduced_device(quadro(), 1);
    auto q = smt::distinguish_structure(fermi, test::hyp("most-room"), one, {1, 2}, o);
    REQUIRE(q.outcome == smt::QueryOutcome::Found);
    q.scenario.device = one;
    auto a = model::simulate(q.scenario, fermi), b = model::simulate(q.scenario, test::hyp("most-room"));
    CHECK_FALSE(search::first_difference(a, b).empty());  // the simulators agree with Z3
  }
  {
    // A renamed copy has the same schedule on every scenario: UNSAT, on two GPCs and on one.
    model::Hypothesis copy = fermi;
    copy.name = "fermi-copy";
    CHECK(smt::distinguish_structure(fermi, copy, search::reduced_device(quadro(), 2), {3}, o).outcome == smt::QueryOutcome::None);
    CHECK(smt::distinguish_structure(fermi, copy, search::reduced_device(quadro(), 1), {1, 2}, o).outcome == smt::QueryOutcome::None);
    search::DistinguishBounds b;
    auto r = search::distinguish_pair(fermi, copy, quadro(), b);
    CHECK(r.outcome == search::PairOutcome::Inseparable);
  }
}
