// The priority and partition options (model/engine/src/controls.cpp) and what the simulator does with
// them: ranks and orders, allowed SMs, block-boundary priority, two levels, TPC masks.
#include <catch2/catch.hpp>

#include <set>

#include "helpers.hpp"
#include "tbcheck/model/controls.hpp"
#include "tbcheck/model/simulator.hpp"

using namespace tbcheck;
using namespace tbcheck::model;

namespace {

Hypothesis with(const std::string& base, Priority p, Partition q = Partition::AllowedSms) {
  Hypothesis h = test::hyp(base);
  h.name = base + "-" + std::string(to_string(p)) + "-" + std::string(to_string(q));
  h.priority = p;
  h.partition = q;
  return h;
}

std::set<int> sms_of(const KernelSchedule& k) {
  std::set<int> out;
  for (const auto& b : k.blocks) out.insert(b.sm);
  return out;
}

}  // namespace

TEST_CASE("priority ranks: ignore, strict and two-level, in a stable order", "[controls][priority]") {
  const Device& d = builtin_device("rtx2080ti", "", "");  // range [0, -5]
  CHECK(priority_rank(-5, d, Priority::Ignore) == 0);
  CHECK(priority_rank(-5, d, Priority::Strict) == -5);
  CHECK(priority_rank(std::nullopt, d, Priority::Strict) == 0);  // CUDA's default priority
  CHECK(priority_rank(-1, d, Priority::TwoLevel) == priority_rank(-5, d, Priority::TwoLevel));
  CHECK(priority_rank(0, d, Priority::TwoLevel) > priority_rank(-1, d, Priority::TwoLevel));
  const std::vector<std::optional<int>> p = {0, -1, std::nullopt, -5};
  CHECK(kernels_by_priority(p, d, Priority::Ignore) == std::vector<int>{0, 1, 2, 3});
  CHECK(kernels_by_priority(p, d, Priority::Strict) == std::vector<int>{3, 1, 0, 2});
  CHECK(kernels_by_priority(p, d, Priority::TwoLevel) == std::vector<int>{1, 3, 0, 2});
}

TEST_CASE("allowed SMs: a TPC mask confines the kernel under allowed-sms only", "[controls][partition]") {
  const Device& d = builtin_device("xavier", "", "");  // 2 SMs per TPC
  CHECK(sm_allowed({}, d, 5, Partition::AllowedSms));
  CHECK(sm_allowed({1, 3}, d, 2, Partition::AllowedSms));
  CHECK(sm_allowed({1, 3}, d, 7, Partition::AllowedSms));
  CHECK_FALSE(sm_allowed({1, 3}, d, 4, Partition::AllowedSms));
  CHECK(sm_allowed({1, 3}, d, 4, Partition::Ignore));
}

TEST_CASE("strict priority: the high-priority kernel is the head from time 0", "[controls][priority][simulator]") {
  // xavier: 8 SMs of 2048 threads; `low` fills the GPU twice, `high` is listed after it.
  auto s = test::scenario(R"({"device": "xavier", "kernels": [
      {"name": "low", "blocks": 32, "threads": 1024, "regs": 32, "duration": 10, "stream": 0, "priority": 0},
      {"name": "high", "blocks": 2, "threads": 1024, "regs": 32, "duration": 10, "stream": 1, "priority": -1}]})");
  const Schedule ignore = simulate(s, with("alg1", Priority::Ignore));
  const Schedule strict = simulate(s, with("alg1", Priority::Strict));
  CHECK(ignore.kernels[1].blocks[0].start == 20);  // after low's second wave is dispatched
  CHECK(strict.kernels[1].blocks[0].start == 0);
  CHECK(strict.kernels[0].blocks[0].start == 0);   // low still starts at once beside it
  CHECK(strict.kernels[0].blocks.back().start == 20);
}

TEST_CASE("strict priority: a later high-priority kernel takes SMs at block boundaries, never evicting", "[controls][priority][simulator]") {
  auto s = test::scenario(R"({"device": "xavier", "kernels": [
      {"name": "low", "blocks": 32, "threads": 1024, "regs": 32, "duration": 10, "stream": 0, "priority": 0},
      {"name": "high", "blocks": 8, "threads": 1024, "regs": 32, "duration": 10, "stream": 1, "priority": -1,
       "release_time": 5}]})");
  const Schedule strict = simulate(s, test::hyp("alg1-priority"));
  for (int b = 0; b < 16; ++b) CHECK(strict.kernels[0].blocks[static_cast<size_t>(b)].end == 10);  // never evicted
  for (const auto& b : strict.kernels[1].blocks) CHECK(b.start == 10);  // the first boundary after its release
  CHECK(strict.kernels[0].blocks[16].start == 10);  // low keeps the room high leaves (8 of 16 slots)
  CHECK(strict.kernels[0].blocks[24].start == 20);
  CHECK(simulate(s, test::hyp("alg1")).kernels[1].blocks[0].start == 20);
}

TEST_CASE("two-level priority: priorities above the least share one level", "[controls][priority][simulator]") {
  // rtx2080ti: 68 SMs of 1024 threads; a is -1, b is -5 and listed later; each fills the GPU.
  auto s = test::scenario(R"({"device": "rtx2080ti", "kernels": [
      {"name": "a", "blocks": 68, "threads": 1024, "regs": 32, "duration": 1, "stream": 0, "priority": -1},
      {"name": "b", "blocks": 68, "threads": 1024, "regs": 32, "duration": 1, "stream": 1, "priority": -5}]})");
  const Schedule strict = simulate(s, with("alg1", Priority::Strict));
  const Schedule two = simulate(s, with("alg1", Priority::TwoLevel));
  CHECK(strict.kernels[1].blocks[0].start == 0);
  CHECK(strict.kernels[0].blocks[0].start == 1);
  CHECK(two.kernels[0].blocks[0].start == 0);  // launch order within the high level
  CHECK(two.kernels[1].blocks[0].start == 1);
}

TEST_CASE("partition allowed-sms: selection runs over the mask's SMs, and ignore spreads", "[controls][partition][simulator]") {
  auto s = test::scenario(R"({"device": "xavier", "kernels": [
      {"name": "k", "blocks": 6, "threads": 1024, "regs": 32, "duration": 2, "tpcs": [1]}]})");
  for (const char* base : {"alg1", "most-room", "round-robin", "olmedo"}) {
    INFO(base);
    const Schedule in = simulate(s, with(base, Priority::Ignore, Partition::AllowedSms));
    CHECK(sms_of(in.kernels[0]) == std::set<int>{2, 3});
    CHECK(in.kernels[0].blocks[4].start == 2);  // 2 blocks per SM: the third wave waits for the mask's SMs
    const Schedule out = simulate(s, with(base, Priority::Ignore, Partition::Ignore));
    CHECK(sms_of(out.kernels[0]).size() > 2);
    CHECK(out.kernels[0].blocks[5].start == 0);
  }
}

TEST_CASE("gpc-priority refuses priorities and masks it has no reading of", "[controls][simulator]") {
  auto s = test::scenario(R"({"device": "quadro6000", "kernels": [
      {"name": "k", "blocks": 2, "threads": 64, "regs": 16, "duration": 1, "tpcs": [0]}]})");
  FeasibilityCheck f = check_feasibility(s, test::hyp("fermi"));
  CHECK(f.status == Feasibility::Unsupported);
  CHECK_THAT(f.reason, Catch::StartsWith("unsupported: ") && Catch::Contains("partition"));
  CHECK(f.field == "kernels[0].tpcs");
  CHECK(check_feasibility(s, with("fermi", Priority::Ignore, Partition::Ignore)).runs());
}
