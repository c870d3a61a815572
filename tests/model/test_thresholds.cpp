// Tests of model/thresholds.cpp: the values a threshold's quantity takes on a device, the cut a threshold makes
// among them, and the interval text, for both sides (at or below, below).
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis_list.hpp"
#include "tbcheck/model/simulator.hpp"
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

TEST_CASE("a threshold interval is read from learn's text or an object and refused with the reason otherwise",
          "[thresholds][ranges]") {
  std::string error;
  auto r = model::threshold_range_from_json(model::json("(7936, 8192]"), error);
  REQUIRE(r);
  CHECK(r->lo == 7937);
  CHECK(r->hi == 8192);
  CHECK(model::threshold_range_text(option("smem_ignore_below"), *r) == "(7936, 8192]");
  r = model::threshold_range_from_json(model::json{{"above", 7936}, {"at_most", 8192}}, error);
  REQUIRE(r);
  CHECK(r->lo == 7937);
  CHECK(r->hi == 8192);
  r = model::threshold_range_from_json(model::json("[72, 79]"), error);
  REQUIRE(r);
  CHECK(r->lo == 72);
  CHECK(r->hi == 79);
  CHECK(model::threshold_range_text(option("registers_ignore_at_or_below"), *r) == "[72, 79]");
  CHECK_FALSE(model::threshold_range_from_json(model::json("(7936, 8192"), error));
  CHECK(error.find("(7936, 8192") != std::string::npos);
  CHECK_FALSE(model::threshold_range_from_json(model::json{{"above", 7936}}, error));
  CHECK_FALSE(model::threshold_range_from_json(model::json("(8192, 8192]"), error));
}

namespace {

// alg1 on rtx3090 with every SM filled by one kernel of shared memory S per block (S = smem + the 1 KB reserve):
// counted, S = 8064 B holds 12 blocks per SM; ignored, the block limit (16) binds.
model::Scenario smem_scenario(int smem) {
  return tbcheck::test::scenario(R"({"device": "rtx3090", "kernels": [
    {"name": "k1", "blocks": 1312, "threads": 32, "regs": 32, "smem": )" + std::to_string(smem) + R"(, "duration": 1}]})");
}

model::RangedHypothesis alg1_with_smem_range() {
  model::RangedHypothesis r{tbcheck::test::hyp("alg1"), {}};
  r.ranges["smem_ignore_below"] = {7937, 8192};
  model::set_threshold(r.h, option("smem_ignore_below"), 8192);
  return r;
}

}  // namespace

TEST_CASE("a prediction that no kernel quantity inside the interval decides is independent of the value",
          "[thresholds][ranges]") {
  const auto p = model::predict_over_ranges(smem_scenario(0), alg1_with_smem_range());
  REQUIRE(p);
  CHECK(p->failure.empty());
  REQUIRE(p->options.size() == 1);
  CHECK(p->options[0].pieces.size() == 1);
  CHECK(p->options[0].kernels.empty());
  CHECK(p->independent());
  CHECK(p->summary() == "independent of smem_ignore_below in (7936, 8192]");
}

TEST_CASE("a prediction that a kernel inside the interval decides names it and the sub-intervals of each outcome",
          "[thresholds][ranges]") {
  const model::Scenario s = smem_scenario(8064 - 1024);
  const auto p = model::predict_over_ranges(s, alg1_with_smem_range());
  REQUIRE(p);
  CHECK(p->failure.empty());
  REQUIRE(p->options[0].pieces.size() == 2);
  REQUIRE(p->outcomes.size() == 2);
  CHECK_FALSE(p->independent());
  // The two outcomes are what the threshold at each side of S = 8064 B predicts.
  auto at = [&](int t) {
    model::Hypothesis h = tbcheck::test::hyp("alg1");
    model::set_threshold(h, option("smem_ignore_below"), t);
    return model::simulate(s, h).makespan();
  };
  CHECK(at(8064) != at(8065));
  CHECK(p->outcomes[0].schedule.makespan() == at(8064));
  CHECK(p->outcomes[1].schedule.makespan() == at(8065));
  const std::string text = p->summary();
  CHECK(text.find("k1 (S = 8064 B)") != std::string::npos);
  CHECK(text.find("(7936, 8064]") != std::string::npos);
  CHECK(text.find("(8064, 8192]") != std::string::npos);
}

TEST_CASE("predict and check read a hypothesis file whose threshold is an interval", "[thresholds][ranges][cli]") {
  tbcheck::test::TempDir dir("ranges");
  model::json h = tbcheck::test::hyp("alg1").to_json();
  h["name"] = "alg1-smem-range";
  h["smem_ignore_below"] = "(7936, 8192]";
  const std::string hf = dir.write("h.json", h.dump(1));
  const std::string dependent = dir.write("dep.json", smem_scenario(8064 - 1024).to_json().dump(1));
  const std::string independent = dir.write("ind.json", smem_scenario(0).to_json().dump(1));
  auto r = tbcheck::test::run_tbcheck("predict " + independent + " --hypothesis " + hf);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("independent of smem_ignore_below in (7936, 8192]") != std::string::npos);
  r = tbcheck::test::run_tbcheck("predict " + dependent + " --hypothesis " + hf);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("depends on smem_ignore_below in (7936, 8192]") != std::string::npos);
  CHECK(r.out.find("outcome 2 (smem_ignore_below in (8064, 8192])") != std::string::npos);
  r = tbcheck::test::run_tbcheck("check " + hf + " --synthesize none --corpus corpus/paper/000-wang");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Thresholds given as intervals (smem_ignore_below in (7936, 8192])") != std::string::npos);
  h["smem_ignore_below"] = "(7936, 8192";
  const std::string bad = dir.write("bad.json", h.dump(1));
  r = tbcheck::test::run_tbcheck("predict " + independent + " --hypothesis " + bad);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("smem_ignore_below") != std::string::npos);
}

TEST_CASE("a hypothesis file with a threshold interval cannot take a shipped name or be given twice",
          "[thresholds][ranges][errors]") {
  tbcheck::test::TempDir dir("ranges-names");
  model::json h = tbcheck::test::hyp("alg1").to_json();
  h["smem_ignore_below"] = "(7936, 8192]";
  const std::string shipped = dir.write("shipped.json", h.dump(1));
  CHECK_THROWS_WITH(model::resolve_ranged_hypotheses(shipped),
                    Catch::Contains("'alg1' is the name of a shipped hypothesis") && Catch::Contains("shipped.json"));
  h["name"] = "alg1-smem-range";
  const std::string own = dir.write("own.json", h.dump(1));
  CHECK(model::resolve_ranged_hypotheses(own).size() == 1);
  CHECK_THROWS_WITH(model::resolve_ranged_hypotheses(own + "," + own), Catch::Contains("'alg1-smem-range' is given twice"));
}
