// The additivity check behind the cluster room rule (testing/src/cluster_additivity.cpp): every resource option
// on every built-in device, at alg1's and at SM-pooled values of the rest, and a unit it must refute.
#include <catch2/catch.hpp>

#include <cstdlib>

#include <fmt/format.h>

#include "helpers.hpp"
#include "tbcheck/testing/cluster_additivity.hpp"
#include "tbcheck/model/device.hpp"

using namespace tbcheck;

namespace {

// Every combination of the options the capacity rule reads, on top of `base` (the rest at its values).
std::vector<model::Hypothesis> resource_variants(const model::Hypothesis& base) {
  std::vector<model::Hypothesis> out;
  for (auto w : {model::Warps::Sm, model::Warps::PbStrictRR, model::Warps::PbAny})
    for (auto r : {model::Registers::Sm, model::Registers::Pb, model::Registers::PbContiguous})
      for (auto sm : {model::Smem::Counted, model::Smem::ContiguousFirstFit})
        for (auto cfg : {model::SmemConfig::None, model::SmemConfig::Tpc, model::SmemConfig::Sm})
          for (auto skip : {false, true}) {
            if (r != model::Registers::Sm && w == model::Warps::Sm) continue;  // PB registers need PB warps
            if (skip && w != model::Warps::PbStrictRR) continue;                // Mechanism 2.2 is strict-rr's
            model::Hypothesis h = base;
            h.warps = w;
            h.registers = r;
            h.smem = sm;
            h.smem_config = cfg;
            h.skip_on_multiple_of_4 = skip;
            h.name = fmt::format("{}+warps={}+registers={}+smem={}+smem_config={}+skip={}", base.name, to_string(w),
                                 to_string(r), to_string(sm), to_string(cfg), skip);
            for (auto cap : {model::Capacity::Blocks, model::Capacity::Literal}) {
              h.capacity = cap;
              out.push_back(h);
            }
          }
  return out;
}

}  // namespace

TEST_CASE("cluster additivity: a block takes one unit of room on its own SM under every resource option",
          "[cluster][additivity]") {
  // scripts/long.sh sets TBCHECK_ADDITIVITY_STEPS for walks 5 times as long.
  const char* env = std::getenv("TBCHECK_ADDITIVITY_STEPS");
  const int steps = env && std::atoi(env) > 0 ? std::atoi(env) : 6000;
  int checked = 0;
  for (const char* base : {"alg1", "most-room"})
    for (const auto& h : resource_variants(test::hyp(base)))
      for (const auto& d : model::builtin_devices()) {
        model::AdditivityOptions o;
        o.seed = 17 + static_cast<uint64_t>(checked);
        o.steps = d.cc == "9.0" ? steps : steps / 4;
        const auto r = model::cluster_room_additivity(d, h, o);
        INFO(h.name << " on " << d.name << ": " << r.counterexample);
        CHECK(r.verdict == model::StateCheck::Proved);
        CHECK(r.compared > o.steps / 5);  // the walk commits, not only retires or skips
        ++checked;
      }
  CHECK(checked > 100);
}

TEST_CASE("cluster additivity: capacity literal's ranking value is not a block count, and the check says so",
          "[cluster][additivity]") {
  model::Hypothesis h = test::hyp("alg1");
  h.capacity = model::Capacity::Literal;
  model::AdditivityOptions o;
  o.unit = model::RoomUnit::Value;
  const auto r = model::cluster_room_additivity(model::builtin_device("h100-sxm-assumed-gpcs", "test", "device"), h, o);
  CHECK(r.verdict == model::StateCheck::Refuted);
  CHECK_THAT(r.counterexample, Catch::Contains("capacity value"));
  // The same walk in blocks, the unit the GPC room is counted in, holds.
  o.unit = model::RoomUnit::Blocks;
  CHECK(model::cluster_room_additivity(model::builtin_device("h100-sxm-assumed-gpcs", "test", "device"), h, o).verdict ==
        model::StateCheck::Proved);
}
