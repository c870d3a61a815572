// Tests of search/learn_numeric.cpp: a boundary case splits a threshold's values at one value whatever the other
// thresholds are, and the joint fit keeps exactly the thresholds that agree with what the device did.
#include <catch2/catch.hpp>

#include <algorithm>

#include "helpers.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/oracle/oracle.hpp"
#include "tbcheck/search/learn_numeric.hpp"

using namespace tbcheck;
using tbcheck::test::hyp;
using tbcheck::search::same_placements;

namespace {

size_t index_of(std::string_view key) {
  const auto& opts = model::threshold_options();
  for (size_t i = 0; i < opts.size(); ++i)
    if (opts[i].key == key) return i;
  FAIL("no threshold option " << key);
  return 0;
}

model::Hypothesis with(model::Hypothesis h, std::optional<int> regs, std::optional<int> smem) {
  h.registers_ignore_at_or_below = regs;
  h.smem_ignore_below = smem;
  return h;
}

// The cut (1-based) whose value is v.
int cut_at(const model::ThresholdInterval& iv, int v) {
  auto it = std::find(iv.values.begin(), iv.values.end(), v);
  REQUIRE(it != iv.values.end());
  return static_cast<int>(it - iv.values.begin()) + 1;
}

}  // namespace

TEST_CASE("a boundary case splits a threshold at one value whatever the other threshold is", "[learn][numeric]") {
  for (const std::string dev : {"rtx3090", "h100-sxm"}) {
    const auto& d = model::builtin_device(dev, "test", "device");
    for (const std::string base : {"alg1", "alg1-literal", "round-robin", "alg1-contiguous-regs"}) {
      const model::Hypothesis h = hyp(base);
      auto fit = search::fit_thresholds(h, d, {});  // nothing seen: every value allowed
      REQUIRE(fit);
      const size_t s = index_of("smem_ignore_below"), r = index_of("registers_ignore_at_or_below");
      CHECK(fit->intervals[s].lo_cut == 0);
      CHECK(fit->intervals[s].hi_cut == static_cast<int>(fit->intervals[s].values.size()));
      for (int v : {1152, 3072, 8192, 20480}) {
        INFO(dev << " " << base << " smem " << v);
        auto bc = search::boundary_case(h, d, fit->intervals, s, cut_at(fit->intervals[s], v));
        REQUIRE(bc);
        for (std::optional<int> regs : {std::optional<int>(), std::optional<int>(24), std::optional<int>(64),
                                        std::optional<int>(255)}) {
          CHECK(same_placements(model::simulate(bc->scenario, with(h, regs, v)), bc->below));      // keeps v
          CHECK(same_placements(model::simulate(bc->scenario, with(h, regs, v + 1)), bc->above));  // ignores v
          CHECK(same_placements(model::simulate(bc->scenario, with(h, regs, std::nullopt)), bc->below));
        }
      }
      // Registers with shared memory known to be counted (smem off): a per-TPC configuration reads S, so a
      // register case must agree on it whatever the register threshold does.
      auto narrowed = fit->intervals;
      narrowed[s].lo_cut = narrowed[s].hi_cut = 0;
      for (int v : {24, 64, 128, 255}) {
        INFO(dev << " " << base << " regs " << v);
        auto bc = search::boundary_case(h, d, narrowed, r, cut_at(fit->intervals[r], v));
        REQUIRE(bc);
        for (std::optional<int> smem : {std::optional<int>(), std::optional<int>(1000)}) {
          CHECK(same_placements(model::simulate(bc->scenario, with(h, v - 1, smem)), bc->below));
          CHECK(same_placements(model::simulate(bc->scenario, with(h, v, smem)), bc->above));
        }
      }
    }
  }
}

TEST_CASE("fitting thresholds keeps the side a boundary observation showed and refutes what no threshold fits",
          "[learn][numeric]") {
  const auto& d = model::builtin_device("rtx3090", "test", "device");
  const model::Hypothesis truth = with(hyp("alg1"), std::nullopt, 8192);
  const model::Hypothesis named = with(hyp("alg1"), std::nullopt, 3072);  // what the enumerated space offers
  auto all = search::fit_thresholds(named, d, {});
  REQUIRE(all);
  const size_t s = index_of("smem_ignore_below");
  std::vector<model::Scenario> scenarios;
  std::vector<model::Observation> observations;
  for (int v : {3072, 8064, 8192}) {
    auto bc = search::boundary_case(named, d, all->intervals, s, cut_at(all->intervals[s], v));
    REQUIRE(bc);
    scenarios.push_back(bc->scenario);
  }
  for (const auto& sc : scenarios)
    observations.push_back(oracle::observation_of(model::simulate(sc, truth), model::ObservationKind::Synthetic));
  std::vector<search::SeenCase> seen;
  for (size_t i = 0; i < scenarios.size(); ++i) seen.push_back({&scenarios[i], &observations[i]});
  auto fit = search::fit_thresholds(named, d, seen);
  REQUIRE(fit);
  const auto& iv = fit->intervals[s];
  CHECK(iv.cuts() == 1);
  CHECK(iv.range_text() == "in (8064, 8192] B");
  CHECK(iv.contains(8192));
  CHECK_FALSE(iv.contains(3072));
  CHECK(fit->fitted.smem_ignore_below == 8192);
  CHECK(fit->fitted.registers_ignore_at_or_below == std::nullopt);  // h's own, which fits
  // A start no threshold predicts: h's other options are refuted.
  model::Observation wrong = observations.back();
  for (auto& [kernel, starts] : wrong.start_of_block) starts.front() += 100;
  seen.back().observation = &wrong;
  CHECK_FALSE(search::fit_thresholds(named, d, seen));
}

TEST_CASE("a two-value boundary case answers both questions next to a threshold in one run", "[learn][numeric]") {
  const auto& d = model::builtin_device("rtx3090", "test", "device");
  const model::Hypothesis h = with(hyp("alg1"), std::nullopt, 3072);
  auto fit = search::fit_thresholds(h, d, {});
  REQUIRE(fit);
  const size_t s = index_of("smem_ignore_below");
  const auto& iv = fit->intervals[s];
  // 3072 keeps a block of S = 3072 B counted and ignores 2944 B: the questions are those two values.
  const int m1 = cut_at(iv, 2944), m2 = cut_at(iv, 3072);
  auto bc = search::boundary_pair_case(h, d, fit->intervals, s, m1, m2);
  REQUIRE(bc);
  // Neither ignored, only 2944 B, both: three different placements, whatever the register threshold is.
  for (std::optional<int> regs : {std::optional<int>(), std::optional<int>(24), std::optional<int>(128)}) {
    const auto none = model::simulate(bc->scenario, with(h, regs, 2944));
    const auto lower = model::simulate(bc->scenario, with(h, regs, 3072));
    const auto both = model::simulate(bc->scenario, with(h, regs, 3073));
    CHECK(same_placements(none, bc->below));
    CHECK(same_placements(both, bc->above));
    CHECK_FALSE(same_placements(none, lower));
    CHECK_FALSE(same_placements(lower, both));
    CHECK_FALSE(same_placements(none, both));
  }
  // The cuts must be two in order inside the interval.
  CHECK_FALSE(search::boundary_pair_case(h, d, fit->intervals, s, m2, m1));
}

TEST_CASE("a boundary case after a split keeps the split's placements and still asks its question", "[learn][numeric]") {
  const auto& d = model::builtin_device("rtx3090", "test", "device");
  const model::Hypothesis h = with(hyp("alg1"), std::nullopt, 3072);
  const model::Hypothesis other = hyp("round-robin");  // a candidate the split tells apart from h
  auto fit = search::fit_thresholds(h, d, {});
  REQUIRE(fit);
  const size_t s = index_of("smem_ignore_below");
  // As after the corpus: blocks of 2048 B seen counted, so the split's own blocks (1024 B) are on one side.
  auto intervals = fit->intervals;
  intervals[s].lo_cut = cut_at(intervals[s], 2048);
  const auto& iv = intervals[s];
  const model::Scenario split = model::scenario_from_json(
      {{"device", "rtx3090"},
       {"kernels", {{{"name", "a"}, {"blocks", 90}, {"threads", 256}, {"regs", 32}, {"smem", 0}, {"duration", 3}},
                    {{"name", "b"}, {"blocks", 20}, {"threads", 64}, {"regs", 32}, {"smem", 0}, {"duration", 1}}}}},
      "split");
  const auto alone = model::simulate(split, h), alone_other = model::simulate(split, other);
  REQUIRE_FALSE(same_placements(alone, alone_other));
  int64_t end = 0;
  for (const auto* sch : {&alone, &alone_other}) end = std::max(end, sch->makespan());
  for (int64_t release : {int64_t(0), end}) {
    INFO("release " << release);
    const search::BoundaryPrefix prefix{&split, release, {}};
    auto bc = search::boundary_pair_case(h, d, intervals, s, cut_at(iv, 2944), cut_at(iv, 3072), prefix);
    if (!bc) bc = search::boundary_case(h, d, intervals, s, cut_at(iv, 3072), prefix);
    // Beside the split's tail a shape may not exist (the split's blocks take the room it asks about); after the
    // split ends, one does.
    if (release == 0 && !bc) continue;
    REQUIRE(bc);
    const auto& k = bc->scenario.kernels;
    REQUIRE(k.size() > split.kernels.size());
    for (size_t i = 0; i < split.kernels.size(); ++i) CHECK(k[i].name == split.kernels[i].name);
    for (size_t i = split.kernels.size(); i < k.size(); ++i) {
      CHECK(k[i].name.rfind("boundary-", 0) == 0);
      CHECK(k[i].release == release);
    }
    // Released after the split ends, the split's kernels run as they do alone, for h and for the other candidate.
    if (release == end)
      for (const auto& [hh, before] : {std::pair{&h, &alone}, std::pair{&other, &alone_other}}) {
        const auto both = model::simulate(bc->scenario, *hh);
        for (size_t i = 0; i < split.kernels.size(); ++i)
          for (size_t b = 0; b < before->kernels[i].blocks.size(); ++b) {
            CHECK(both.kernels[i].blocks[b].sm == before->kernels[i].blocks[b].sm);
            CHECK(both.kernels[i].blocks[b].start == before->kernels[i].blocks[b].start);
          }
      }
    // Whatever the register threshold, the boundary kernels tell 3072 from the values on either side of it.
    for (std::optional<int> regs : {std::optional<int>(), std::optional<int>(64)}) {
      CHECK(same_placements(model::simulate(bc->scenario, with(h, regs, 2944)), bc->below));
      CHECK(same_placements(model::simulate(bc->scenario, with(h, regs, 3073)), bc->above));
      CHECK_FALSE(same_placements(model::simulate(bc->scenario, with(h, regs, 3072)), bc->above));
    }
  }
}
