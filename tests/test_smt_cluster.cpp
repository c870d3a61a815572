// The Z3 encoding of thread block clusters (smt/src/cluster_pick.cpp) against the simulator: random clustered
// scenarios under every cluster option, the cluster cases, a wrong schedule, and the refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "helpers.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/smt/conformance.hpp"
#include "tbcheck/smt/encoding.hpp"

using namespace tbcheck;

namespace {


std::vector<model::Hypothesis> variants() {
  std::vector<model::Hypothesis> out;
  for (auto base : {"most-room", "round-robin"})
    for (auto g : {model::ClusterGpc::MostRoom, model::ClusterGpc::LowestIndex})
      for (auto s : {model::ClusterSpread::Selection, model::ClusterSpread::OnePerSm}) out.push_back(test::cluster_variant(base, g, s));
  return out;
}

}  // namespace

TEST_CASE("SMT clusters conform with the simulator on random clustered scenarios", "[smt][cluster][conformance]") {
  // Each option value is in half of the eight variants. The default run checks 50 scenarios per variant
  // (200 per option value); scripts/long.sh sets TBCHECK_CLUSTER_SCENARIOS=200 (800 per option value).
  const char* env = std::getenv("TBCHECK_CLUSTER_SCENARIOS");
  const int n = env && std::atoi(env) > 0 ? std::atoi(env) : 50;
  for (const auto& h : variants()) {
    INFO(h.name);
    auto report = smt::run_cluster_conformance(h, n, /*seed=*/4242, /*timeout_ms=*/60000);
    REQUIRE_FALSE(report.unsupported);
    for (const auto& m : report.mismatches) FAIL_CHECK(m);
    CHECK(report.checked == n);
    CHECK(report.not_unique == 0);
  }
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
  if (std::any_of(small.kernels.begin(), small.kernels.end(), [](const auto& k) { return k.cluster.has_value(); }))
    CHECK_THROWS_AS(smt::encode(s2, test::hyp("alg1"), d2, "h"), smt::Unsupported);
}
