// Tests of search/learn_witness.cpp: the shaped simulated search separates the PB warp rules once
// registers are one SM pool (rtx3090, h100-sxm), and finds nothing between options proved alike.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/learn.hpp"

using namespace tbcheck;
using tbcheck::test::hyp;

namespace {

model::Hypothesis pooled(model::Warps w, bool skip) {
  model::Hypothesis h = hyp("alg1");
  h.registers = model::Registers::Sm;
  h.warps = w;
  h.skip_on_multiple_of_4 = skip;
  h.name = "test";
  return h;
}

bool same_placements(const model::Schedule& a, const model::Schedule& b) {
  for (size_t k = 0; k < a.kernels.size(); ++k)
    for (size_t i = 0; i < a.kernels[k].blocks.size(); ++i)
      if (a.kernels[k].blocks[i].sm != b.kernels[k].blocks[i].sm ||
          a.kernels[k].blocks[i].start != b.kernels[k].blocks[i].start)
        return false;
  return true;
}

}  // namespace

TEST_CASE("the PB-hole search separates the PB warp rules under SM-pooled registers", "[learn][witness]") {
  const auto sm = pooled(model::Warps::Sm, false), rr = pooled(model::Warps::PbStrictRR, true),
             rr_no_skip = pooled(model::Warps::PbStrictRR, false);
  for (const std::string dev : {"rtx3090", "h100-sxm"}) {
    const model::Device& d = model::builtin_device(dev, "test", "device");
    for (const auto& [a, b] : {std::pair{sm, rr}, std::pair{sm, rr_no_skip}, std::pair{rr, rr_no_skip}}) {
      INFO(dev << ": " << model::to_string(a.warps) << " skip " << a.skip_on_multiple_of_4 << " vs "
               << model::to_string(b.warps) << " skip " << b.skip_on_multiple_of_4);
      REQUIRE(search::differ_in_warp_placement(a, b));
      auto w = search::pb_hole_search(a, b, d, 3000);
      REQUIRE(w);
      CHECK(w->tries >= 1);
      for (const auto& k : w->scenario.kernels) CHECK(k.blocks == d.sms);  // one block per SM
      CHECK_FALSE(same_placements(model::simulate(w->scenario, a), model::simulate(w->scenario, b)));
    }
  }
}

TEST_CASE("the PB-hole search finds nothing between pb-any and sm under SM-pooled registers", "[learn][witness]") {
  const auto sm = pooled(model::Warps::Sm, false), any = pooled(model::Warps::PbAny, false);
  const model::Device& d = model::builtin_device("rtx3090", "test", "device");
  CHECK_FALSE(search::pb_hole_search(sm, any, d, 200));
  // With registers per PB, pb-any does differ from strict round-robin, and the search says so.
  auto rr_pb = pooled(model::Warps::PbStrictRR, true), any_pb = any;
  rr_pb.registers = any_pb.registers = model::Registers::Pb;
  CHECK(search::pb_hole_search(rr_pb, any_pb, d, 3000));
}
