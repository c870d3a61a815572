// Thread block clusters in the simulator (model/engine/src/cluster.cpp and the dispatcher): whole clusters on one
// GPC, the GPC choices, the spread choices, head-of-line waiting, and the refusals (no GPC map, options).
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include <fmt/format.h>

#include "helpers.hpp"
#include "tbcheck/model/cluster.hpp"
#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/simulator.hpp"

using namespace tbcheck;

namespace {


// 4 SMs in 2 TPCs, one TPC per GPC; CC 9.0 limits as h100-sxm.
std::string two_gpc_scenario(const std::string& kernels) {
  return R"({"device": {"name": "cc90-2gpc", "cc": "9.0", "sms": 4, "sms_per_tpc": 2, "pbs_per_sm": 4,
    "max_blocks_per_sm": 32, "max_warps_per_sm": 64, "max_threads_per_block": 1024, "regs_per_sm": 65536,
    "reg_alloc_unit": 256, "max_regs_per_thread": 255, "smem_configs_kb": [0, 8, 16, 32, 64, 100, 132, 164, 196, 228],
    "smem_alloc_unit": 128, "smem_reserved_per_block": 1024, "max_smem_per_block": 232448,
    "gpc_of_tpc": [0, 1], "gpc_source": "test"}, "kernels": )" +
         kernels + "}";
}

// A 32-warp block on SM 0 (GPC 0), then one cluster of two 4-warp blocks: GPC 0 has room 8 + 16, GPC 1 32.
const char* kImbalanced = R"([
  {"name": "big", "blocks": 1, "threads": 1024, "regs": 32, "duration": 5},
  {"name": "c", "blocks": 2, "threads": 128, "regs": 32, "duration": 1, "cluster": [2]}])";

std::vector<int> sms_of(const model::Schedule& s, size_t k) {
  std::vector<int> out;
  for (const auto& b : s.kernels[k].blocks) out.push_back(b.sm);
  return out;
}

}  // namespace

TEST_CASE("cluster: the GPC choice and the spread choice place one cluster differently", "[cluster][simulator]") {
  const auto sc = test::scenario(two_gpc_scenario(kImbalanced));
  using G = model::ClusterGpc;
  using S = model::ClusterSpread;
  // most-room GPC: GPC 1 (room 32 > 24); most-room selection alternates SMs 2 and 3 (16, then 15 < 16).
  CHECK(sms_of(model::simulate(sc, test::cluster_variant("most-room", G::MostRoom, S::Selection)), 1) == std::vector<int>{2, 3});
  CHECK(sms_of(model::simulate(sc, test::cluster_variant("most-room", G::MostRoom, S::OnePerSm)), 1) == std::vector<int>{2, 3});
  // lowest-index GPC: GPC 0; SM 1 has 16 against SM 0's 8, so most-room puts both there; one-per-SM puts one
  // on each, the first on SM 0 (the first in the order with room).
  CHECK(sms_of(model::simulate(sc, test::cluster_variant("most-room", G::LowestIndex, S::Selection)), 1) == std::vector<int>{1, 1});
  CHECK(sms_of(model::simulate(sc, test::cluster_variant("most-room", G::LowestIndex, S::OnePerSm)), 1) == std::vector<int>{0, 1});
  // round-robin: the pointer stands after SM 0 (big's block), so GPC 0's first SM from it is SM 1, then SM 0.
  CHECK(sms_of(model::simulate(sc, test::cluster_variant("round-robin", G::LowestIndex, S::Selection)), 1) == std::vector<int>{1, 0});
}

TEST_CASE("cluster: a cluster that fits no GPC waits, and blocks the kernels behind it", "[cluster][simulator]") {
  // 32-warp blocks, two per SM: a GPC of 2 SMs holds 4, so a cluster of 5... the portable limit allows 8.
  const auto never = test::scenario(two_gpc_scenario(
      R"([{"name": "c", "blocks": 5, "threads": 1024, "regs": 32, "duration": 1, "cluster": [5]}])"));
  const auto f = model::check_feasibility(never, test::hyp("most-room"));
  CHECK(f.status == model::Feasibility::KernelNeverFits);
  CHECK_THAT(f.reason, Catch::Contains("one GPC"));

  // a and a2 (32-warp blocks, two per SM) take SMs 0-2 and 3, 0, 1; a cluster of 4 such blocks needs a whole
  // GPC empty, so it waits; "late" (no cluster) would fit at 0 but waits behind it.
  const auto sc = test::scenario(two_gpc_scenario(R"([
    {"name": "a", "blocks": 3, "threads": 1024, "regs": 32, "duration": 4},
    {"name": "a2", "blocks": 3, "threads": 1024, "regs": 32, "duration": 2},
    {"name": "c", "blocks": 4, "threads": 1024, "regs": 32, "duration": 1, "cluster": [4]},
    {"name": "late", "blocks": 1, "threads": 32, "regs": 32, "duration": 1}])"));
  const auto s = model::simulate(sc, test::hyp("most-room"));
  // Clusters of 4 blocks of 32 warps need both SMs of a GPC empty; a2 frees SMs at 2, a at 4.
  std::set<int64_t> starts;
  for (const auto& b : s.kernels[2].blocks) starts.insert(b.start);
  REQUIRE(starts.size() == 1);
  const int64_t t = *starts.begin();
  CHECK(t > 0);
  std::set<int> gpcs;
  for (const auto& b : s.kernels[2].blocks) gpcs.insert(b.sm / 2);
  CHECK(gpcs.size() == 1);
  // head-of-line: "late" fits anywhere at 0 but waits for the cluster
  CHECK(s.kernels[3].blocks[0].start >= t);
}

TEST_CASE("cluster: every cluster starts together on one GPC under every cluster option", "[cluster][simulator]") {
  auto cs = model::load_cases(test::source_path("corpus/paper/controls/cuda-guide-cluster-coscheduled-assumed-gpcs.json"));
  REQUIRE(cs.size() == 1);
  for (auto base : {"most-room", "round-robin", "olmedo"})
    for (auto g : {model::ClusterGpc::MostRoom, model::ClusterGpc::LowestIndex})
      for (auto sp : {model::ClusterSpread::Selection, model::ClusterSpread::OnePerSm}) {
        const auto h = test::cluster_variant(base, g, sp);
        INFO(h.name);
        const auto s = model::simulate(cs[0].scenario, h);
        for (const auto& f : cs[0].observation->facts) CHECK(model::check_fact(f, cs[0].scenario, s).verdict == model::Verdict::Pass);
      }
}

TEST_CASE("cluster: no GPC map is its own refusal, pointing at probe-gpc", "[cluster][simulator]") {
  auto cs = model::load_cases(test::source_path("corpus/paper/controls/cuda-guide-cluster-coscheduled.json"));
  REQUIRE(cs.size() == 1);
  const auto f = model::check_feasibility(cs[0].scenario, test::hyp("most-room"));
  CHECK(f.status == model::Feasibility::NoGpcMap);
  CHECK(f.field == "kernels[0].cluster");
  CHECK_THAT(f.reason, Catch::Contains("probe-gpc") && Catch::Contains("h100-sxm"));
  const auto e = test::error_of([&] { model::simulate(cs[0].scenario, test::hyp("most-room")); });
  CHECK_THAT(std::string(e.what()), Catch::Contains("gpc_of_tpc"));
}

TEST_CASE("cluster: the alg1 family places clusters while gpc-priority and pair-leading kernels are refused", "[cluster][simulator]") {
  const auto sc = test::scenario(two_gpc_scenario(kImbalanced));
  for (const char* name : {"alg1", "alg1-priority", "alg1-pb-any", "alg1-contiguous-regs", "alg1-literal", "alg1-paired",
                           "alg1-no-tpc-config", "alg1-counted-smem", "alg1-no-skip", "alg1-natural-order"}) {
    INFO(name);
    REQUIRE(model::check_feasibility(sc, test::hyp(name)).runs());
    const auto s = model::simulate(sc, test::hyp(name));
    CHECK(s.kernels[1].blocks[0].start == s.kernels[1].blocks[1].start);
    CHECK(s.kernels[1].blocks[0].sm / 2 == s.kernels[1].blocks[1].sm / 2);  // one GPC
  }
  CHECK(model::cluster_unsupported_options(test::hyp("alg1")).empty());
  CHECK_THAT(model::cluster_unsupported_options(test::hyp("fermi")), Catch::Contains("gpc-priority"));
  // Paired issue: a clustered kernel of 2 x SMs + 5 blocks or more would lead pairs, which no source spreads
  // over a cluster; one block fewer issues singles under the pair rule itself and is placed.
  const auto pairs = [](int blocks) {
    return test::scenario(two_gpc_scenario(fmt::format(
        R"([{{"name": "c", "blocks": {}, "threads": 32, "regs": 32, "duration": 1, "cluster": [1]}}])", blocks)));
  };
  model::Hypothesis paired = test::hyp("alg1");
  paired.issue = model::Issue::Paired;
  const auto f = model::check_feasibility(pairs(2 * 4 + 5), paired);
  CHECK(f.status == model::Feasibility::Unsupported);
  CHECK(f.field == "kernels[0].cluster");
  CHECK_THAT(f.reason, Catch::StartsWith("unsupported:") && Catch::Contains("pairs") && Catch::Contains("issue paired"));
  CHECK(model::check_feasibility(pairs(2 * 4 + 4), paired).runs());
  CHECK(model::check_feasibility(pairs(2 * 4 + 5), test::hyp("alg1")).runs());  // single issue
}

TEST_CASE("cluster: capacity literal counts a GPC's room in blocks, not in its ranking value", "[cluster][simulator]") {
  // fill: three 32-warp blocks confined to TPC 0 (GPC 0), leaving GPC 0 one block of room but a literal value
  // of 30 (free block slots); the 2-block cluster must go to GPC 1 even under lowest-index.
  const auto sc = test::scenario(two_gpc_scenario(R"([
    {"name": "fill", "blocks": 3, "threads": 1024, "regs": 32, "duration": 5, "tpcs": [0]},
    {"name": "c", "blocks": 2, "threads": 1024, "regs": 32, "duration": 1, "cluster": [2]}])"));
  model::Hypothesis h = test::cluster_variant("most-room", model::ClusterGpc::LowestIndex, model::ClusterSpread::Selection);
  h.capacity = model::Capacity::Literal;
  const auto s = model::simulate(sc, h);
  CHECK(sms_of(s, 1) == std::vector<int>{2, 3});
  CHECK(s.kernels[1].blocks[0].start == 0);
}

TEST_CASE("cluster: TPC configuration counts a busy TPC's SMs out of a larger kernel's cluster room", "[cluster][simulator]") {
  // small: one 32-warp block of 8 KB (two per SM: a 32 KB configuration) on TPC 0; big needs 100 KB per block
  // (a 228 KB configuration), so both SMs of TPC 0 are blocked (Mechanism 3) and the 2-block cluster goes to
  // GPC 1. Without TPC configuration GPC 0 has room for it (lowest-index).
  const auto sc = test::scenario(two_gpc_scenario(R"([
    {"name": "small", "blocks": 1, "threads": 1024, "regs": 32, "smem": 8192, "duration": 5},
    {"name": "big", "blocks": 2, "threads": 1024, "regs": 32, "smem": 102400, "duration": 1, "cluster": [2]}])"));
  model::Hypothesis h = test::hyp("alg1");
  h.cluster_gpc = model::ClusterGpc::LowestIndex;
  const auto s = model::simulate(sc, h);
  REQUIRE(s.kernels[0].blocks[0].sm / 2 == 0);
  CHECK(s.kernels[1].blocks[0].sm / 2 == 1);
  CHECK(s.kernels[1].blocks[1].sm / 2 == 1);
  h.smem_config = model::SmemConfig::None;
  const auto plain = model::simulate(sc, h);
  CHECK(plain.kernels[1].blocks[0].sm / 2 == 0);
}

TEST_CASE("cluster: 2-D clusters are placed cluster by cluster, blocks numbered row by row", "[cluster][simulator]") {
  // grid 4 x 2 of 2 x 2 clusters: cluster 0 holds blocks 0, 1, 4, 5 and goes first.
  CHECK(model::cluster_block_order(8, std::make_pair(4, 2), std::array<int, 3>{2, 2, 1}) ==
        std::vector<int>{0, 1, 4, 5, 2, 3, 6, 7});
  CHECK(model::cluster_block_order(8, std::nullopt, std::array<int, 3>{2, 1, 1}).empty());
  const auto sc = test::scenario(two_gpc_scenario(R"([
    {"name": "q", "grid": [4, 2], "threads": 1024, "regs": 32, "duration": 1, "cluster": [2, 2]}])"));
  const auto s = model::simulate(sc, test::hyp("most-room"));
  // 32-warp blocks, 2 per SM: a cluster of 4 fills one GPC; the second cluster takes the other GPC.
  const auto& b = s.kernels[0].blocks;
  CHECK(b[0].sm / 2 == b[5].sm / 2);
  CHECK(b[2].sm / 2 == b[7].sm / 2);
  CHECK(b[0].sm / 2 != b[2].sm / 2);
}

TEST_CASE("cluster: the CUDA guide cases under validate's evaluation", "[cluster][paper]") {
  // h100-sxm without a map: every hypothesis reports the case as not runnable, naming probe-gpc.
  auto plain = model::load_cases(test::source_path("corpus/paper/controls/cuda-guide-cluster-coscheduled.json"));
  REQUIRE(plain.size() == 1);
  CHECK(plain[0].expect.empty());
  for (const char* h : {"alg1", "most-room"}) {
    const auto r = model::evaluate(plain[0], test::hyp(h));
    CHECK_FALSE(r.ran);
    CHECK_THAT(r.reason, Catch::Contains("probe-gpc"));
  }
  // The assumed map: the guarantee holds under the hypotheses that place clusters, as the case expects
  // (the alg1 family among them).
  auto assumed = model::load_cases(test::source_path("corpus/paper/controls/cuda-guide-cluster-coscheduled-assumed-gpcs.json"));
  REQUIRE(assumed.size() == 1);
  for (const auto& [name, want] : assumed[0].expect) {
    INFO(name);
    const auto r = model::evaluate(assumed[0], test::hyp(name));
    REQUIRE(r.ran);
    CHECK(want == model::Expect::Pass);
    CHECK(r.facts == model::Verdict::Pass);
  }
  CHECK(assumed[0].expect.count("alg1") == 1);
  const auto r = model::evaluate(assumed[0], test::hyp("fermi"));
  CHECK_FALSE(r.ran);
  CHECK_THAT(r.reason, Catch::StartsWith("unsupported: ") && Catch::Contains("gpc-priority"));
}
