// The Z3 encoding of thread block clusters (smt/src/cluster_pick.cpp) against the simulator: random clustered
// scenarios under every cluster option, the cluster cases, a wrong schedule, and the refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <random>

#include <fmt/format.h>

#include "helpers.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/testing/conformance.hpp"
#include "tbcheck/smt/encoding.hpp"
#include "tbcheck/smt/synthesis.hpp"

using namespace tbcheck;

namespace {


std::vector<model::Hypothesis> variants() {
  std::vector<model::Hypothesis> out;
  for (auto base : {"most-room", "round-robin"})
    for (auto g : {model::ClusterGpc::MostRoom, model::ClusterGpc::LowestIndex})
      for (auto s : {model::ClusterSpread::Selection, model::ClusterSpread::OnePerSm}) out.push_back(test::cluster_variant(base, g, s));
  return out;
}

// n random clustered scenarios under h, simulator against SMT block for block.
void check_cluster_conformance(const model::Hypothesis& h, int n, unsigned seed) {
  INFO(h.name);
  auto report = smt::run_cluster_conformance(h, n, seed, /*timeout_ms=*/60000);
  REQUIRE_FALSE(report.unsupported);
  for (const auto& m : report.mismatches) FAIL_CHECK(m);
  CHECK(report.checked == n);
  CHECK(report.not_unique == 0);
}

}  // namespace

TEST_CASE("SMT clusters conform with the simulator on random clustered scenarios", "[smt][cluster][conformance]") {
  // Each option value is in half of the eight variants. The default run checks 50 scenarios per variant
  // (200 per option value); scripts/long.sh sets TBCHECK_CLUSTER_SCENARIOS=200 (800 per option value).
  const char* env = std::getenv("TBCHECK_CLUSTER_SCENARIOS");
  const int n = env && std::atoi(env) > 0 ? std::atoi(env) : 50;
  for (const auto& h : variants()) check_cluster_conformance(h, n, /*seed=*/4242);
}

// The alg1 family with clusters : each newly placed option value (warps pb-strict-rr and pb-any,
// registers pb and pb-contiguous, smem contiguous-first-fit, smem_config tpc, capacity literal, issue device)
// is in at least one of these. The default run checks a few scenarios per hypothesis; scripts/long.sh sets
// TBCHECK_CLUSTER_ALG1_SCENARIOS=200.
TEST_CASE("SMT clusters conform with the simulator under the alg1 family", "[smt][cluster][conformance][alg1]") {
  const char* env = std::getenv("TBCHECK_CLUSTER_ALG1_SCENARIOS");
  const int n = env && std::atoi(env) > 0 ? std::atoi(env) : 6;
  std::vector<model::Hypothesis> hs;
  for (const char* name : {"alg1", "alg1-priority", "alg1-pb-any", "alg1-contiguous-regs", "alg1-literal", "alg1-paired",
                           "alg1-no-tpc-config", "alg1-counted-smem", "alg1-no-skip"})
    hs.push_back(test::hyp(name));
  hs.push_back(test::cluster_variant("alg1", model::ClusterGpc::LowestIndex, model::ClusterSpread::OnePerSm));
  model::Hypothesis rr = test::hyp("alg1");
  rr.selection = model::Selection::RoundRobin;
  rr.name = "alg1+selection=round-robin";
  hs.push_back(rr);
  for (const auto& h : hs) check_cluster_conformance(h, n, /*seed=*/5151);
}

TEST_CASE("random clustered scenarios have clusters, several GPCs and run", "[smt][cluster]") {
  const auto& base = model::builtin_device("h100-sxm-assumed-gpcs", "test", "device");
  int clustered = 0, two_d = 0, unequal = 0;
  for (unsigned i = 0; i < 50; ++i) {
    auto sc = smt::random_cluster_scenario(7 + i * 31, base, test::hyp("most-room"));
    CHECK(model::check_feasibility(sc, test::hyp("most-room")).runs());
    for (const auto& k : sc.kernels) {
      clustered += k.cluster.has_value();
      two_d += k.cluster && (*k.cluster)[1] > 1;
    }
    const auto& m = sc.device.gpc_of_tpc;
    unequal += std::count(m.begin(), m.end(), 0) != std::count(m.begin(), m.end(), m.back());
  }
  CHECK(clustered > 30);
  CHECK(two_d > 5);
  CHECK(unequal > 10);
}

TEST_CASE("SMT clusters: a wrong schedule is caught", "[smt][cluster]") {
  const auto& base = model::builtin_device("h100-sxm-assumed-gpcs", "test", "device");
  const auto h = test::cluster_variant("most-room", model::ClusterGpc::LowestIndex, model::ClusterSpread::OnePerSm);
  // A scenario with a cluster of two or more blocks; move its second block to another SM.
  for (unsigned i = 0;; ++i) {
    REQUIRE(i < 100);
    auto sc = smt::random_cluster_scenario(99 + i, base, h);
    auto want = model::simulate(sc, h);
    size_t k = 0;
    while (k < sc.kernels.size() && !(sc.kernels[k].cluster && sc.kernels[k].cluster_size() >= 2)) ++k;
    if (k == sc.kernels.size()) continue;
    auto wrong = want;
    auto& b = wrong.kernels[k].blocks[1];
    b.sm = (b.sm + 1) % sc.device.sms;
    CHECK_FALSE(smt::check_schedule(sc, h, wrong, 60000).empty());
    break;
  }
}

TEST_CASE("SMT clusters: no GPC map and unsupported options are Unsupported, as in the simulator", "[smt][cluster]") {
  auto cs = model::load_cases(test::source_path("corpus/paper/controls/cuda-guide-cluster-coscheduled.json"));
  REQUIRE(cs.size() == 1);
  z3::context c;
  auto s = smt::SymbolicScenario::make_fixed(c, cs[0].scenario);
  auto d = smt::Decisions::fresh(c, s.total_blocks(), "d");
  CHECK_THROWS_AS(smt::encode(s, test::hyp("most-room"), d, "h"), smt::Unsupported);
  auto small = smt::random_cluster_scenario(5, model::builtin_device("h100-sxm-assumed-gpcs", "test", "device"),
                                            test::hyp("most-room"));
  auto s2 = smt::SymbolicScenario::make_fixed(c, small);
  auto d2 = smt::Decisions::fresh(c, s2.total_blocks(), "e");
  if (std::any_of(small.kernels.begin(), small.kernels.end(), [](const auto& k) { return k.cluster.has_value(); })) {
    CHECK_THROWS_AS(smt::encode(s2, test::hyp("fermi"), d2, "h"), smt::Unsupported);
    CHECK_NOTHROW(smt::encode(s2, test::hyp("alg1"), d2, "h"));
  }
}

// Clusters meet the other controls: a clustered kernel confined to some TPCs takes only their SMs,
// and a higher-priority kernel goes first, in both engines alike (the encoder's priority-ordered view of
// the kernels must carry the clusters along).
TEST_CASE("SMT clusters conform with priorities and TPC masks beside them", "[smt][cluster][conformance][controls]") {
  const auto& base = model::builtin_device("h100-sxm-assumed-gpcs", "test", "device");
  std::mt19937 rng(99);
  int masked = 0, reordered = 0;
  for (const char* name : {"most-room", "round-robin"}) {
    model::Hypothesis h = test::hyp(name);
    h.priority = model::Priority::Strict;
    auto report = smt::check_scenarios(h, 40, 77, 60000, [&](unsigned sd) {
      model::Scenario s = smt::random_cluster_scenario(sd, base, h);
      s.device.stream_priorities = model::PriorityRange{0, -1, "test"};
      const int n = static_cast<int>(s.kernels.size());
      s.kernels[static_cast<size_t>(n - 1)].priority = -1;  // the last launched kernel is the urgent one
      s.kernels[static_cast<size_t>(n - 1)].stream = 1;
      // Confine one kernel to the TPCs of the first GPC with room for one of its clusters, if any.
      model::Kernel& k = s.kernels[static_cast<size_t>(sd % static_cast<unsigned>(n))];
      std::vector<int> tpcs;
      for (int t = 0; t < s.device.tpcs(); ++t)
        if (s.device.gpc_of_tpc[static_cast<size_t>(t)] == s.device.gpc_of_tpc[0]) tpcs.push_back(t);
      k.tpcs = tpcs;
      if (!model::check_feasibility(s, h).runs()) return smt::random_cluster_scenario(sd, base, h);
      ++masked;
      reordered += n > 1;
      return s;
    });
    INFO(name);
    for (const auto& m : report.mismatches) FAIL_CHECK(m);
    CHECK(report.checked == 40);
  }
  CHECK(masked > 20);
  CHECK(reordered > 20);
}

TEST_CASE("the pair query asks clustered structures, and its answers agree with the simulators", "[smt][cluster][synthesis]") {
  // Two GPCs of one TPC each (equal room) and of one and two TPCs: most-room and lowest-index pick the
  // same GPC for a one-block cluster on the first, and can differ on the second.
  const auto& full = model::builtin_device("h100-sxm-assumed-gpcs", "test", "device");
  auto two_gpcs = [&](int a, int b) {
    model::Device d = full;
    d.name = fmt::format("test-gpcs{}{}", a, b);
    d.sms = (a + b) * full.sms_per_tpc;
    d.gpc_of_tpc.assign(static_cast<size_t>(a), 0);
    d.gpc_of_tpc.insert(d.gpc_of_tpc.end(), static_cast<size_t>(b), 1);
    return d;
  };
  const auto most = test::cluster_variant("most-room", model::ClusterGpc::MostRoom, model::ClusterSpread::Selection);
  const auto lowest = test::cluster_variant("most-room", model::ClusterGpc::LowestIndex, model::ClusterSpread::Selection);
  smt::QueryOptions o;
  o.timeout_ms = 30000;
  o.bounds.clusters = {std::array<int, 3>{1, 1, 1}};
  o.bounds.grids = {std::nullopt};
  const auto none = smt::distinguish_structure(most, lowest, two_gpcs(1, 1), {1}, o);
  CHECK(none.outcome == smt::QueryOutcome::None);
  const auto found = smt::distinguish_structure(most, lowest, two_gpcs(1, 2), {1}, o);
  REQUIRE(found.outcome == smt::QueryOutcome::Found);
  REQUIRE(found.scenario.kernels.size() == 1);
  CHECK(found.scenario.kernels[0].cluster == std::array<int, 3>{1, 1, 1});
  const auto a = model::simulate(found.scenario, most), b = model::simulate(found.scenario, lowest);
  CHECK(a.kernels[0].blocks[0].sm != b.kernels[0].blocks[0].sm);
}
