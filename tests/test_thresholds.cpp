// Tests of model/thresholds.cpp: the values a threshold's quantity takes on a device, the cut a threshold makes
// among them, and the interval text, for both sides (at or below, below).
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/thresholds.hpp"

using namespace tbcheck;

namespace {

const model::ThresholdOption& option(std::string_view key) {
  for (const auto& o : model::threshold_options())
    if (o.key == key) return o;
  FAIL("no threshold option " << key);
  throw 0;
}

}  // namespace

TEST_CASE("threshold options come from the mechanism descriptors with their side and quantity", "[thresholds]") {
  REQUIRE(model::threshold_options().size() == 2);
  CHECK(option("registers_ignore_at_or_below").side == model::ThresholdSide::AtOrBelow);
  CHECK(option("registers_ignore_at_or_below").quantity == model::ThresholdQuantity::RegsPerThread);
  CHECK(option("smem_ignore_below").side == model::ThresholdSide::Below);
  CHECK(option("smem_ignore_below").quantity == model::ThresholdQuantity::SmemPerBlock);
  model::Hypothesis h = tbcheck::test::hyp("alg1");
  model::set_threshold(h, option("smem_ignore_below"), 8192);
  CHECK(h.smem_ignore_below == 8192);
  CHECK(model::threshold_of(h, option("smem_ignore_below")) == 8192);
}

TEST_CASE("a threshold's values on a device are the probe register counts and the rounded shared memory", "[thresholds]") {
  const auto& d = model::builtin_device("rtx3090", "test", "device");
  const auto regs = model::threshold_values(model::ThresholdQuantity::RegsPerThread, d);
  CHECK(regs.front() == 24);
  CHECK(regs[1] == 32);
  CHECK(regs.back() == 255);
  const auto smem = model::threshold_values(model::ThresholdQuantity::SmemPerBlock, d);
  CHECK(smem.front() == d.smem_reserved_per_block);
  CHECK(smem[1] - smem[0] == d.smem_alloc_unit);
  CHECK(smem.back() == d.max_smem_per_block / d.smem_alloc_unit * d.smem_alloc_unit + d.smem_reserved_per_block);
  model::Kernel k;
  model::set_quantity(model::ThresholdQuantity::SmemPerBlock, k, 8192, d);
  CHECK(model::quantity_of(model::ThresholdQuantity::SmemPerBlock, k, d) == 8192);
}

TEST_CASE("a cut counts the values a threshold ignores and a threshold at a cut ignores exactly them", "[thresholds]") {
  const std::vector<int> v = {1024, 1152, 1280, 8064, 8192, 8320};
  const auto& below = option("smem_ignore_below");
  CHECK(model::cut_of(below, std::nullopt, v) == 0);
  CHECK(model::cut_of(below, 1024, v) == 0);  // 1024 < 1024 is false: nothing ignored, as off
  CHECK(model::cut_of(below, 8192, v) == 4);  // 8064 and below
  CHECK(model::cut_of(below, 8100, v) == 4);
  CHECK(model::cut_of(below, 8193, v) == 5);
  for (int c = 0; c <= 6; ++c) CHECK(model::cut_of(below, model::threshold_at_cut(below, c, v), v) == c);
  CHECK(model::threshold_at_cut(below, 4, v) == 8192);  // the least value kept: the boundary the device has
  const auto& at = option("registers_ignore_at_or_below");
  const std::vector<int> r = {24, 32, 40, 64, 72};
  CHECK(model::cut_of(at, 64, r) == 4);
  CHECK(model::cut_of(at, 70, r) == 4);
  CHECK(model::cut_of(at, 20, r) == 0);
  for (int c = 0; c <= 5; ++c) CHECK(model::cut_of(at, model::threshold_at_cut(at, c, r), r) == c);
  CHECK(model::threshold_at_cut(at, 4, r) == 64);
}

TEST_CASE("an interval holds exactly the thresholds of its cuts and says so in the mechanism's unit", "[thresholds]") {
  model::ThresholdInterval iv;
  iv.option = option("smem_ignore_below");
  iv.values = {1024, 1152, 1280, 8064, 8192, 8320};
  iv.lo_cut = iv.hi_cut = 4;
  CHECK(iv.cuts() == 1);
  CHECK(iv.range_text() == "in (8064, 8192] B");
  CHECK(iv.contains(8192));
  CHECK(iv.contains(8065));
  CHECK_FALSE(iv.contains(8064));
  CHECK_FALSE(iv.contains(3072));
  CHECK_FALSE(iv.contains(std::nullopt));
  CHECK(iv.to_json()["point"] == 8192);
  iv.lo_cut = 0;
  iv.hi_cut = 0;
  CHECK(iv.contains(std::nullopt));
  CHECK(iv.contains(1000));
  CHECK(iv.range_text().rfind("off", 0) == 0);
  model::ThresholdInterval r;
  r.option = option("registers_ignore_at_or_below");
  r.values = {24, 32, 40, 64, 72};
  r.lo_cut = 4;
  r.hi_cut = 4;
  CHECK(r.range_text() == "in [64, 71] registers per thread");
  CHECK(r.contains(64));
  CHECK(r.contains(71));
  CHECK_FALSE(r.contains(72));
  r.hi_cut = 5;
  CHECK(r.cuts() == 2);
  CHECK(r.range_text() == "at least 64 registers per thread");
}
