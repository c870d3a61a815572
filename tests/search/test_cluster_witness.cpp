// Witnesses for pairs that differ in a cluster mechanism (search/src/cluster_witness.cpp, through
// distinguish_pair): every pair of cluster choices separated on a two-GPC device, none without clusters;
// the shipped witnesses confirmed by both engines.
#include <catch2/catch.hpp>

#include <algorithm>

#include <fmt/format.h>

#include "helpers.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/distinguish.hpp"
#include "tbcheck/testing/conformance.hpp"

using namespace tbcheck;

namespace {

std::vector<model::Hypothesis> cluster_variants(const std::string& base) {
  std::vector<model::Hypothesis> out;
  for (auto g : {model::ClusterGpc::MostRoom, model::ClusterGpc::LowestIndex})
    for (auto s : {model::ClusterSpread::Selection, model::ClusterSpread::OnePerSm}) out.push_back(test::cluster_variant(base, g, s));
  return out;
}

search::DistinguishBounds quick() {
  search::DistinguishBounds b;
  b.sim_samples = 2000;
  b.wide_samples = 0;
  b.timeout_ms = 2000;
  b.pair_budget_ms = 4000;
  b.lemma_timeout_ms = 0;
  return b;
}

}  // namespace

TEST_CASE("distinguish separates every pair of cluster choices with a simulator-checked witness", "[distinguish][cluster]") {
  const auto& dev = model::builtin_device("h100-sxm-assumed-gpcs", "test", "device");
  for (const char* base : {"most-room", "round-robin", "alg1"}) {
    const auto hs = cluster_variants(base);
    for (size_t i = 0; i < hs.size(); ++i)
      for (size_t j = i + 1; j < hs.size(); ++j) {
        INFO(hs[i].name << " vs " << hs[j].name);
        const auto r = search::distinguish_pair(hs[i], hs[j], dev, quick());
        REQUIRE(r.outcome == search::PairOutcome::Separated);
        REQUIRE(r.witness);
        const auto& sc = r.witness->scenario;
        // The witness launches clusters, on two GPCs, and the simulators place some block differently.
        CHECK(std::any_of(sc.kernels.begin(), sc.kernels.end(), [](const auto& k) { return k.cluster.has_value(); }));
        CHECK(sc.device.gpc_of_tpc.front() != sc.device.gpc_of_tpc.back());
        const auto a = model::simulate(sc, hs[i]), b = model::simulate(sc, hs[j]);
        bool differ = false;
        for (size_t k = 0; k < a.kernels.size(); ++k)
          for (size_t x = 0; x < a.kernels[k].blocks.size(); ++x)
            differ = differ || a.kernels[k].blocks[x].sm != b.kernels[k].blocks[x].sm ||
                     a.kernels[k].blocks[x].start != b.kernels[k].blocks[x].start;
        CHECK(differ);
        CHECK_FALSE(r.first_difference.empty());
      }
  }
}

TEST_CASE("cluster choices are one machine on a device without clusters or without a GPC map", "[distinguish][cluster]") {
  const auto hs = cluster_variants("most-room");
  for (const char* name : {"h100-sxm", "rtx3090"}) {
    INFO(name);
    const auto& dev = model::builtin_device(name, "test", "device");
    CHECK(search::same_machine_on(hs[0], hs[3], search::reduced_device(dev, 2), 3));
    auto b = quick();
    b.max_kernels = 1;
    b.max_total_blocks = 2;
    const auto r = search::distinguish_pair(hs[0], hs[3], dev, b);
    CHECK(r.outcome == search::PairOutcome::Inseparable);
  }
}

TEST_CASE("the shipped cluster witnesses still separate their pairs", "[distinguish][cluster]") {
  // corpus/synth-cluster: `tbcheck distinguish` over tests/data/cluster/most-room-*.json and alg1-*.json
  // (docs/controls.md). The SMT encoder confirms each side's schedule block for block (both engines agree).
  const auto cases = model::load_cases(test::source_path("corpus/synth-cluster"));
  REQUIRE(cases.size() == 12);
  int alg1 = 0;
  const std::string prefix = "synth-h100-sxm-assumed-gpcs-";
  for (const auto& c : cases) {
    INFO(c.id);
    REQUIRE(c.id.rfind(prefix, 0) == 0);
    const std::string pair = c.id.substr(prefix.size());
    const size_t vs = pair.find("-vs-");
    REQUIRE(vs != std::string::npos);
    const auto h1 = model::load_hypothesis_file(test::source_path("tests/data/cluster/" + pair.substr(0, vs) + ".json"));
    const auto h2 = model::load_hypothesis_file(test::source_path("tests/data/cluster/" + pair.substr(vs + 4) + ".json"));
    CHECK(std::any_of(c.scenario.kernels.begin(), c.scenario.kernels.end(), [](const auto& k) { return k.cluster.has_value(); }));
    const auto a = model::simulate(c.scenario, h1), b = model::simulate(c.scenario, h2);
    CHECK(search::first_difference(a, b) != "");
    CHECK(smt::check_schedule(c.scenario, h1, a, 60000) == "");
    CHECK(smt::check_schedule(c.scenario, h2, b, 60000) == "");
    alg1 += h1.warps == model::Warps::PbStrictRR && h2.warps == model::Warps::PbStrictRR;
  }
  CHECK(alg1 == 6);
}

TEST_CASE("a cluster witness past the smallest structure is proved minimal by Z3's answers on the smaller ones", "[distinguish][cluster]") {
  const auto& dev = model::builtin_device("h100-sxm-assumed-gpcs", "test", "device");
  const auto a = test::cluster_variant("most-room", model::ClusterGpc::LowestIndex, model::ClusterSpread::Selection);
  const auto b = test::cluster_variant("most-room", model::ClusterGpc::LowestIndex, model::ClusterSpread::OnePerSm);
  auto bounds = quick();
  bounds.timeout_ms = 30000;
  bounds.pair_budget_ms = 0;
  const auto r = search::distinguish_pair(a, b, dev, bounds);
  REQUIRE(r.outcome == search::PairOutcome::Separated);
  // One block cannot show how a cluster spreads: Z3 says so for the one-block structures, then the
  // two-block cluster separates.
  CHECK(r.blocks == 2);
  CHECK(r.structures_unsat > 0);
  CHECK(r.minimal_proved);
  CHECK_THAT(r.reason, Catch::Contains("the smallest clustered structure"));
}
