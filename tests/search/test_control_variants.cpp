// The priority vectors and TPC masks distinguish tries on a structure (search/src/control_variants.cpp):
// only assignments that can separate the pair, and none where the device cannot exercise the options.
#include <catch2/catch.hpp>

#include "../../search/src/control_variants.hpp"
#include "helpers.hpp"
#include "tbcheck/model/controls.hpp"

using namespace tbcheck;

TEST_CASE("control variants: priority vectors whose orders differ, one-TPC masks", "[search][controls]") {
  const auto& ti = model::builtin_device("rtx2080ti", "", "");  // range [0, -5]
  const auto& xavier = model::builtin_device("xavier", "", "");  // range [0, -1]
  const auto& ampere = model::builtin_device("rtx3090", "", "");  // no range
  model::Hypothesis ignore = test::hyp("alg1"), strict = test::hyp("alg1-priority"), two = strict, off = ignore;
  two.priority = model::Priority::TwoLevel;
  off.partition = model::Partition::Ignore;
  CHECK(search::detail::priority_exercised(ti, model::Priority::Strict, model::Priority::TwoLevel));
  CHECK_FALSE(search::detail::priority_exercised(xavier, model::Priority::Strict, model::Priority::TwoLevel));
  CHECK(search::detail::priority_exercised(xavier, model::Priority::Strict, model::Priority::Ignore));
  CHECK_FALSE(search::detail::priority_exercised(ampere, model::Priority::Strict, model::Priority::Ignore));

  // Two kernels over the levels {0, -1, -5}: the plain structure cannot separate ignore from strict.
  auto v = search::detail::control_variants(ignore, strict, ti, 2, {});
  REQUIRE_FALSE(v.empty());
  for (const auto& p : v) {
    REQUIRE(p.priorities.size() == 2);
    CHECK(model::kernels_by_priority(p.priorities, ti, model::Priority::Strict) == std::vector<int>{1, 0});
  }
  CHECK(v.size() == 3);  // (0, -1), (0, -5), (-1, -5)
  // Strict against two-level: only (-1, -5), which strict serves second first and two-level in launch order.
  v = search::detail::control_variants(strict, two, ti, 2, {});
  CHECK(v.size() == 1);
  CHECK(search::detail::control_variants(ignore, strict, ti, 1, {}).empty());  // one kernel: nothing to order
  CHECK(search::detail::control_variants(ignore, strict, ampere, 2, {}).empty());

  // Masks on a 2-TPC device: each of 2 kernels unmasked or on TPC 0 or 1, at least one masked.
  model::Device two_tpc = ampere;
  two_tpc.sms = 4;
  v = search::detail::control_variants(ignore, off, two_tpc, 2, {});
  CHECK(v.size() == 8);
  for (const auto& p : v) CHECK((!p.tpcs[0].empty() || !p.tpcs[1].empty()));
  // A pair that differs elsewhere too keeps the plain structure first.
  v = search::detail::control_variants(test::hyp("alg1-no-skip"), off, two_tpc, 2, {});
  CHECK(v.front().tpcs.empty());
  CHECK(v.size() == 9);
}
