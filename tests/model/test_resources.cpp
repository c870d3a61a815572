// The resource mechanisms of docs/design.md: every option changes a small hand-derived schedule, and the
// building blocks (ContiguousSpace, strict round-robin capacity, config_s, thresholds) on their own.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/resources.hpp"
#include "tbcheck/model/simulator.hpp"

using namespace tbcheck;
using namespace tbcheck::model;
using tbcheck::test::mini_device;

namespace {

// One kernel object; `extra` adds fields such as "stream" or "local".
std::string kernel(const std::string& name, int blocks, int threads, int regs, int smem, int duration,
                   const std::string& extra = "") {
  return R"({"name": ")" + name + R"(", "blocks": )" + std::to_string(blocks) + R"(, "threads": )" +
         std::to_string(threads) + R"(, "regs": )" + std::to_string(regs) + R"(, "smem": )" + std::to_string(smem) +
         R"(, "duration": )" + std::to_string(duration) + (extra.empty() ? "" : ", " + extra) + "}";
}

Scenario mini(int sms, const std::vector<std::string>& kernels) {
  std::string ks;
  for (const auto& k : kernels) ks += (ks.empty() ? "" : ", ") + k;
  return test::scenario(R"({"device": )" + mini_device(sms) + R"(, "kernels": [)" + ks + "]}");
}

// A shipped hypothesis with some fields changed (the "base" mechanism of hypothesis files).
Hypothesis variant(const std::string& base, json changes) {
  changes["name"] = "variant";
  changes["base"] = base;
  return hypothesis_from_json(changes, "test");
}

std::vector<int> sms_of(const Schedule& s, const std::string& kernel) {
  for (const auto& k : s.kernels)
    if (k.name == kernel) {
      std::vector<int> v;
      for (const auto& b : k.blocks) v.push_back(b.sm);
      return v;
    }
  FAIL("no kernel " << kernel << " in the schedule");
  return {};
}

std::vector<int64_t> starts_of(const Schedule& s, const std::string& kernel) {
  for (const auto& k : s.kernels)
    if (k.name == kernel) {
      std::vector<int64_t> v;
      for (const auto& b : k.blocks) v.push_back(b.start);
      return v;
    }
  FAIL("no kernel " << kernel << " in the schedule");
  return {};
}

// "k<i>" (built by append: GCC 12 warns falsely on "literal" + std::string&&, bug 105329).
std::string kname(int i) {
  std::string s = "k";
  s += std::to_string(i);
  return s;
}

using Ints = std::vector<int>;
using Times = std::vector<int64_t>;

}  // namespace

// ---------------------------------------------------------------- selection

TEST_CASE("selection: round-robin keeps its pointer, most-room takes the roomiest (first) SM", "[resources][selection]") {
  // k1 (1 warp, long) lands on SM0 under both. k2 is one 32-warp block: round-robin's pointer has
  // moved past SM0, so SM1; most-room sees capacity 1 on both SMs (47 and 48 free warps / 32) and
  // the tie goes to SM0.
  Scenario s = mini(2, {kernel("k1", 1, 32, 32, 0, 10), kernel("k2", 1, 1024, 32, 0, 1)});
  const Hypothesis& rr = test::hyp("round-robin");
  Hypothesis mr = variant("round-robin", {{"selection", "most-room"}});
  CHECK(mr.same_options(test::hyp("most-room")));

  Schedule a = simulate(s, rr), b = simulate(s, mr);
  CHECK(sms_of(a, "k1") == Ints{0});
  CHECK(sms_of(a, "k2") == Ints{1});
  CHECK(sms_of(b, "k1") == Ints{0});
  CHECK(sms_of(b, "k2") == Ints{0});
  CHECK(starts_of(a, "k2") == Times{0});
  CHECK(starts_of(b, "k2") == Times{0});
}

TEST_CASE("selection: round-robin pointer survives an idle GPU, most-room restarts at SM0", "[resources][selection]") {
  // k2 follows k1 in one stream and starts at t=1 on an idle GPU.
  Scenario s = mini(2, {kernel("k1", 1, 32, 32, 0, 1, R"("stream": 0)"), kernel("k2", 1, 32, 32, 0, 1, R"("stream": 0)")});
  Schedule a = simulate(s, test::hyp("round-robin"));
  Schedule b = simulate(s, variant("round-robin", {{"selection", "most-room"}}));
  CHECK(sms_of(a, "k2") == Ints{1});
  CHECK(sms_of(b, "k2") == Ints{0});
  CHECK(starts_of(a, "k2") == Times{1});
  CHECK(starts_of(b, "k2") == Times{1});
}

// ---------------------------------------------------------------- order

TEST_CASE("order: even-first scans 0, 2, 1, 3 on four SMs", "[resources][order]") {
  CHECK(sm_order(mini(4, {kernel("k", 1, 32, 32, 0, 1)}).device, Order::EvenFirst) == Ints{0, 2, 1, 3});
  CHECK(sm_order(mini(4, {kernel("k", 1, 32, 32, 0, 1)}).device, Order::Natural) == Ints{0, 1, 2, 3});
  // On two SMs the two orders coincide (docs/design.md: that pair needs 4 SMs).
  CHECK(sm_order(mini(2, {kernel("k", 1, 32, 32, 0, 1)}).device, Order::EvenFirst) == Ints{0, 1});

  // Four equal blocks: most-room ties go to the first SM of the order with the most room.
  Scenario s = mini(4, {kernel("k1", 4, 32, 32, 0, 1)});
  Hypothesis even = variant("most-room", {{"order", "even-first"}});
  CHECK(sms_of(simulate(s, test::hyp("most-room")), "k1") == Ints{0, 1, 2, 3});
  CHECK(sms_of(simulate(s, even), "k1") == Ints{0, 2, 1, 3});
  // Round-robin walks the order too.
  Hypothesis rr_even = variant("round-robin", {{"order", "even-first"}});
  CHECK(sms_of(simulate(s, test::hyp("round-robin")), "k1") == Ints{0, 1, 2, 3});
  CHECK(sms_of(simulate(s, rr_even), "k1") == Ints{0, 2, 1, 3});
  // alg1 against alg1-natural-order, one mechanism apart.
  CHECK(sms_of(simulate(s, test::hyp("alg1")), "k1") == Ints{0, 2, 1, 3});
  CHECK(sms_of(simulate(s, test::hyp("alg1-natural-order")), "k1") == Ints{0, 1, 2, 3});
}

// ---------------------------------------------------------------- warps

TEST_CASE("warps: strict PB round-robin leaves warp slots unusable that an SM pool would use", "[resources][warps]") {
  // Per SM: A (1 warp) takes PB0 for 10 units; B (3 warps, PBs 1-3) leaves at t=1 with the PB
  // pointer back at 0. C has 15-warp blocks. SM pool: 47 free warps = 3 blocks per SM, all at t=1.
  // Strict RR from pointer 0 with rooms [11,12,12,12]: 11*4 + 0 = 44 warps = 2 blocks per SM;
  // the third 15-warp block on an SM would put a 13th warp on PB0, so C's blocks 4 and 5 wait
  // for t=2.
  Scenario s = mini(2, {kernel("A", 2, 32, 32, 0, 10), kernel("B", 2, 96, 32, 0, 1, R"("stream": 1)"),
                        kernel("C", 6, 480, 32, 0, 1, R"("stream": 1)")});
  Hypothesis pool = test::hyp("most-room");
  Hypothesis strict = variant("most-room", {{"warps", "pb-strict-rr"}});
  Schedule a = simulate(s, pool), b = simulate(s, strict);
  for (const Schedule* x : {&a, &b}) {
    CHECK(sms_of(*x, "A") == Ints{0, 1});
    CHECK(sms_of(*x, "B") == Ints{0, 1});
    CHECK(sms_of(*x, "C") == Ints{0, 1, 0, 1, 0, 1});
  }
  CHECK(starts_of(a, "C") == Times{1, 1, 1, 1, 1, 1});
  CHECK(starts_of(b, "C") == Times{1, 1, 1, 1, 2, 2});
}

TEST_CASE("warps: pb-any redirects warps to PBs with room, strict RR does not (mini Case 2.1)", "[resources][warps]") {
  // 255 registers: two warps per PB. Per SM, k1..k4 (2 warps each) fill PBs 0,1 / 2,3 / 0,1 / 2,3;
  // k2 and k4 leave at t=1 with the pointer at PB0, PBs 0 and 1 still full. k5 (4 warps) fits only
  // with redirect (PBs 2,3,2,3) at t=1; strictly it needs PB0 and waits for t=2.
  Scenario s = mini(2, {kernel("k1", 2, 64, 255, 0, 2), kernel("k2", 2, 64, 255, 0, 1), kernel("k3", 2, 64, 255, 0, 2),
                        kernel("k4", 2, 64, 255, 0, 1), kernel("k5", 2, 128, 255, 0, 1)});
  Hypothesis strict = variant("alg1", {{"skip_on_multiple_of_4", false}});
  Hypothesis any = variant("alg1", {{"warps", "pb-any"}, {"skip_on_multiple_of_4", false}});
  CHECK(strict.same_options(test::hyp("alg1-no-skip")));
  CHECK(any.same_options(test::hyp("alg1-pb-any")));
  Schedule a = simulate(s, strict), b = simulate(s, any);
  for (const Schedule* x : {&a, &b})
    for (const char* k : {"k1", "k2", "k3", "k4", "k5"}) {
      INFO(k);
      CHECK(sms_of(*x, k) == Ints{0, 1});
    }
  CHECK(starts_of(a, "k4") == Times{0, 0});
  CHECK(starts_of(a, "k5") == Times{2, 2});
  CHECK(starts_of(b, "k5") == Times{1, 1});
}

TEST_CASE("skip_on_multiple_of_4: the extra pointer step blocks a 3-warp block (mini Case 2.2)", "[resources][warps]") {
  // Per SM: k1's warp on PB0 (pointer 1); k2's 4 warps on PBs 1,2,3,0 (PB0 now full at 2 warps of
  // 255 registers). With the skip the pointer goes to 2 and k3 needs PBs 2,3,0: it waits for t=1.
  // Without it the pointer is 1 and k3 takes PBs 1,2,3 at t=0.
  Scenario s = mini(2, {kernel("k1", 2, 32, 255, 0, 1), kernel("k2", 2, 128, 255, 0, 1), kernel("k3", 2, 96, 255, 0, 1)});
  Schedule a = simulate(s, test::hyp("alg1")), b = simulate(s, variant("alg1", {{"skip_on_multiple_of_4", false}}));
  CHECK(sms_of(a, "k3") == Ints{0, 1});
  CHECK(sms_of(b, "k3") == Ints{0, 1});
  CHECK(starts_of(a, "k3") == Times{1, 1});
  CHECK(starts_of(b, "k3") == Times{0, 0});
  CHECK(starts_of(a, "k2") == Times{0, 0});
}

// ---------------------------------------------------------------- registers

TEST_CASE("registers: PB pools against one SM pool (PB warps in both)", "[resources][registers]") {
  // The mini Case 2.1 scenario: with an SM register pool k2 and k4 free 4 warps of registers at
  // t=1 and k5 (4 warps, PB warp slots plentiful) starts at t=1; per-PB pools keep PBs 0/1 full.
  Scenario s = mini(2, {kernel("k1", 2, 64, 255, 0, 2), kernel("k2", 2, 64, 255, 0, 1), kernel("k3", 2, 64, 255, 0, 2),
                        kernel("k4", 2, 64, 255, 0, 1), kernel("k5", 2, 128, 255, 0, 1)});
  Schedule pb = simulate(s, test::hyp("alg1")), sm = simulate(s, variant("alg1", {{"registers", "sm"}}));
  CHECK(sms_of(pb, "k5") == Ints{0, 1});
  CHECK(sms_of(sm, "k5") == Ints{0, 1});
  CHECK(starts_of(pb, "k5") == Times{2, 2});
  CHECK(starts_of(sm, "k5") == Times{1, 1});
}

TEST_CASE("registers: renaming combines fragments, pb-contiguous needs a hole (mini Case 4.1)", "[resources][registers]") {
  // Per SM, k1..k8 (4 warps x 64 registers = 2048 per warp) fill every PB with eight fragments;
  // k2/k4/k6/k8 leave at t=1: four separate 2048-register holes per PB. k9's warps need 8192
  // registers: pooled (pb) it starts at t=1, contiguous at t=2.
  std::vector<std::string> ks;
  for (int i = 1; i <= 8; ++i) ks.push_back(kernel(kname(i), 2, 128, 64, 0, i % 2 == 1 ? 2 : 1));
  ks.push_back(kernel("k9", 2, 128, 255, 0, 1));
  Scenario s = mini(2, ks);
  Hypothesis contiguous = variant("alg1", {{"registers", "pb-contiguous"}});
  CHECK(contiguous.same_options(test::hyp("alg1-contiguous-regs")));
  Schedule a = simulate(s, test::hyp("alg1")), b = simulate(s, contiguous);
  for (int i = 1; i <= 8; ++i) {
    INFO("k" << i);
    CHECK(sms_of(a, kname(i)) == Ints{0, 1});
    CHECK(sms_of(b, kname(i)) == Ints{0, 1});
  }
  CHECK(sms_of(a, "k9") == Ints{0, 1});
  CHECK(sms_of(b, "k9") == Ints{0, 1});
  CHECK(starts_of(a, "k9") == Times{1, 1});
  CHECK(starts_of(b, "k9") == Times{2, 2});
}

TEST_CASE("registers_ignore_at_or_below 32: 32-register blocks run beside a register-full SM", "[resources][registers]") {
  // k1: one 32-warp block x 64 registers uses all 65536 registers of its SM. k2 (1 warp, 32
  // registers): counted, it waits for t=2; ignored, it starts at t=0.
  Scenario s = mini(2, {kernel("k1", 2, 1024, 64, 0, 2), kernel("k2", 2, 32, 32, 0, 1)});
  Schedule a = simulate(s, test::hyp("most-room"));
  Schedule b = simulate(s, variant("most-room", {{"registers_ignore_at_or_below", 32}}));
  CHECK(sms_of(a, "k1") == Ints{0, 1});
  CHECK(sms_of(a, "k2") == Ints{0, 1});
  CHECK(sms_of(b, "k2") == Ints{0, 1});
  CHECK(starts_of(a, "k2") == Times{2, 2});
  CHECK(starts_of(b, "k2") == Times{0, 0});
  // 33 registers are above the threshold: counted again.
  Scenario s33 = mini(2, {kernel("k1", 2, 1024, 64, 0, 2), kernel("k2", 2, 32, 33, 0, 1)});
  CHECK(starts_of(simulate(s33, variant("most-room", {{"registers_ignore_at_or_below", 32}})), "k2") == Times{2, 2});
}

// ---------------------------------------------------------------- shared memory

TEST_CASE("smem: contiguous first fit against a counted pool (mini Case 4.2)", "[resources][smem]") {
  // Per SM, k1..k8 take 11 KB each (10 KB + 1 KB reserved) in a 100 KB configuration; k2/4/6/8
  // leave at t=1: holes 11, 11, 11 and 23 KB, 56 KB free. k9 needs 41 KB: counted it starts at t=1,
  // contiguous at t=2.
  std::vector<std::string> ks;
  for (int i = 1; i <= 8; ++i) ks.push_back(kernel(kname(i), 2, 32, 32, 10240, i % 2 == 1 ? 2 : 1));
  ks.push_back(kernel("k9", 2, 32, 32, 40960, 1));
  Scenario s = mini(2, ks);
  Hypothesis counted = variant("alg1", {{"smem", "counted"}});
  CHECK(counted.same_options(test::hyp("alg1-counted-smem")));
  Schedule a = simulate(s, test::hyp("alg1")), b = simulate(s, counted);
  CHECK(sms_of(a, "k8") == Ints{0, 1});
  CHECK(sms_of(a, "k9") == Ints{0, 1});
  CHECK(sms_of(b, "k9") == Ints{0, 1});
  CHECK(starts_of(a, "k9") == Times{2, 2});
  CHECK(starts_of(b, "k9") == Times{1, 1});
}

TEST_CASE("smem contiguous: limit_s sums floor(hole / S) over the free holes, not the largest hole only",
          "[resources][smem]") {
  // 100 KB on both SMs (no TPC configuration). t=0: kA (30 KB) -> SM0 [0,30); kB (50 KB: SM0 room
  // for 1, SM1 for 2) -> SM1 [0,50); kM (40 KB: 1 and 1, tie to the first) -> SM0 [30,70). kA retires at t=1: SM0 has holes of 30 and 30 KB, SM1 one of 50 KB. kX (15 KB, in
  // kA's stream) then sees SM0 2 + 2 = 4 blocks and SM1 3: it goes to SM0. Reading line 26 as
  // floor(largest hole / S) would give SM0 2 and send it to SM1.
  auto kb = [](int kb_with_reserve) { return kb_with_reserve * 1024 - 1024; };  // smem for S = that many KB
  Scenario s = mini(2, {kernel("kA", 1, 32, 32, kb(30), 1, R"("stream": 1)"), kernel("kB", 1, 32, 32, kb(50), 5),
                        kernel("kM", 1, 32, 32, kb(40), 5), kernel("kX", 1, 32, 32, kb(15), 1, R"("stream": 1)")});
  const Hypothesis& h = test::hyp("alg1-no-tpc-config");
  REQUIRE(h.smem == Smem::ContiguousFirstFit);
  Schedule a = simulate(s, h);
  CHECK(sms_of(a, "kA") == Ints{0});
  CHECK(sms_of(a, "kB") == Ints{1});
  CHECK(sms_of(a, "kM") == Ints{0});
  CHECK(sms_of(a, "kX") == Ints{0});
  CHECK(starts_of(a, "kX") == Times{1});

  // The same state in the allocator: the two readings differ exactly here.
  const int limit = 100 * 1024, S = 15 * 1024;
  ContiguousSpace sm0, sm1;
  REQUIRE(sm0.allocate(30 * 1024, limit) == 0);
  REQUIRE(sm0.allocate(40 * 1024, limit) == 30 * 1024);
  sm0.release(0);
  REQUIRE(sm1.allocate(50 * 1024, limit) == 0);
  auto largest_hole_blocks = [&](const ContiguousSpace& c) {
    int best = 0;
    for (const auto& hole : c.holes(limit)) best = std::max(best, hole.size);
    return best / S;
  };
  CHECK(sm0.fits(S, limit) == 4);
  CHECK(sm1.fits(S, limit) == 3);
  CHECK(largest_hole_blocks(sm0) == 2);
  CHECK(largest_hole_blocks(sm1) == 3);
}

TEST_CASE("ContiguousSpace: a run of chunks lands where one allocation per chunk puts it and leaves the same holes",
          "[resources][registers]") {
  // A block's warps in one PB take their register chunks as one run, chunks next to each other kept as one interval
  // and freed together: on random runs and releases, the same holes as allocating and freeing chunk by chunk.
  const int limit = 64;
  std::mt19937 rng(7);
  ContiguousSpace by_run, by_chunk;
  std::vector<std::vector<int>> run_offsets, chunk_offsets;  // per live block
  auto holes = [&](const ContiguousSpace& c) {
    std::vector<std::pair<int, int>> out;
    for (const auto& h : c.holes(limit)) out.emplace_back(h.offset, h.size);
    return out;
  };
  int merged = 0, refused = 0;
  for (int step = 0; step < 3000; ++step) {
    if (!run_offsets.empty() && rng() % 3 == 0) {
      const size_t b = rng() % run_offsets.size();
      for (int off : run_offsets[b]) by_run.release(off);
      for (int off : chunk_offsets[b]) by_chunk.release(off);
      run_offsets.erase(run_offsets.begin() + static_cast<long>(b));
      chunk_offsets.erase(chunk_offsets.begin() + static_cast<long>(b));
    } else {
      const int size = 1 + static_cast<int>(rng() % 6), count = 1 + static_cast<int>(rng() % 5);
      std::vector<std::pair<int, int>> pieces;
      if (by_chunk.fits(size, limit) < count) {  // equal chunks fill each hole in turn: fits() is how many go
        ContiguousSpace trial = by_run;
        CHECK_FALSE(trial.allocate_run(size, count, limit, 3, pieces));
        ++refused;
        continue;
      }
      REQUIRE(by_run.allocate_run(size, count, limit, 3, pieces));
      std::vector<int> chunks, runs;
      for (int c = 0; c < count; ++c) chunks.push_back(by_chunk.allocate(size, limit));
      for (const auto& [tag, off] : pieces) {
        CHECK(tag == 3);
        runs.push_back(off);
      }
      // Every interval starts at a chunk, and the first chunk starts the first interval.
      CHECK(runs.front() == chunks.front());
      for (int off : runs) CHECK(std::find(chunks.begin(), chunks.end(), off) != chunks.end());
      if (runs.size() < chunks.size()) ++merged;
      run_offsets.push_back(runs);
      chunk_offsets.push_back(chunks);
    }
    REQUIRE(holes(by_run) == holes(by_chunk));
    REQUIRE(by_run.used() == by_chunk.used());
  }
  CHECK(merged > 100);  // neighbouring chunks were kept as one interval
  CHECK(refused > 10);  // and runs that did not fit were refused
}

TEST_CASE("smem_ignore_below 3072: small blocks run beside an SM whose shared memory is full", "[resources][smem]") {
  // k1: 99 KB + 1 KB reserved = the whole 100 KB of its SM. k2: 0 + 1 KB reserved = 1024 bytes,
  // below 3 KB: counted it waits for t=3; ignored it starts at t=0.
  Scenario s = mini(2, {kernel("k1", 2, 32, 32, 101376, 3), kernel("k2", 2, 32, 32, 0, 1)});
  Schedule a = simulate(s, test::hyp("most-room"));
  Schedule b = simulate(s, variant("most-room", {{"smem_ignore_below", 3072}}));
  CHECK(sms_of(a, "k1") == Ints{0, 1});
  CHECK(sms_of(a, "k2") == Ints{0, 1});
  CHECK(sms_of(b, "k2") == Ints{0, 1});
  CHECK(starts_of(a, "k2") == Times{3, 3});
  CHECK(starts_of(b, "k2") == Times{0, 0});
  // 2048 + 1024 reserved = 3072 is not below the threshold: counted again.
  Scenario s3k = mini(2, {kernel("k1", 2, 32, 32, 101376, 3), kernel("k2", 2, 32, 32, 2048, 1)});
  CHECK(starts_of(simulate(s3k, variant("most-room", {{"smem_ignore_below", 3072}})), "k2") == Times{3, 3});
}

TEST_CASE("smem_config tpc: a busy TPC configured smaller makes a kernel wait (mini Case 3)", "[resources][smem]") {
  // k1 (1 thread, 0 smem: S = 1 KB, 16 blocks per SM) configures TPC 0 to 16 KB. k2 (S = 2 KB) needs
  // 32 KB: under tpc it waits until TPC 0 is idle (t=1, SM0); without it, it goes to SM1 at t=0.
  Scenario s = mini(2, {kernel("k1", 1, 1, 32, 0, 1), kernel("k2", 1, 1, 32, 1024, 1)});
  Hypothesis none = variant("alg1", {{"smem_config", "none"}});
  CHECK(none.same_options(test::hyp("alg1-no-tpc-config")));
  Schedule a = simulate(s, test::hyp("alg1")), b = simulate(s, none);
  CHECK(sms_of(a, "k1") == Ints{0});
  CHECK(sms_of(a, "k2") == Ints{0});
  CHECK(starts_of(a, "k2") == Times{1});
  CHECK(sms_of(b, "k2") == Ints{1});
  CHECK(starts_of(b, "k2") == Times{0});
}

TEST_CASE("smem_config sm: only the SM its first block configured closes, not the other SM of its TPC", "[resources][smem]") {
  // As mini Case 3: k1 configures SM 0 to 16 KB and k2 needs 32 KB. Under tpc SM 1 closes too and k2
  // waits; under sm SM 1 is configured apart and takes k2 at once.
  Scenario s = mini(2, {kernel("k1", 1, 1, 32, 0, 1), kernel("k2", 1, 1, 32, 1024, 1)});
  Hypothesis sm = variant("alg1", {{"smem_config", "sm"}});
  Schedule a = simulate(s, test::hyp("alg1")), b = simulate(s, sm);
  CHECK(starts_of(a, "k2") == Times{1});
  CHECK(sms_of(b, "k2") == Ints{1});
  CHECK(starts_of(b, "k2") == Times{0});
  // With a k1 block on each SM both are configured to 16 KB: k2 waits under sm, not without configurations.
  Scenario full = mini(2, {kernel("k1", 2, 1, 32, 0, 1), kernel("k2", 1, 1, 32, 1024, 1)});
  CHECK(starts_of(simulate(full, sm), "k2") == Times{1});
  CHECK(starts_of(simulate(full, variant("alg1", {{"smem_config", "none"}})), "k2") == Times{0});
}

TEST_CASE("smem_config sm: as many blocks wait as waited on an H200 behind SMs a 0 KB kernel configured", "[resources][smem]") {
  // Registered random scenarios (run 9): a kernel without shared memory takes most SMs, then a kernel of
  // 161 or 173 KB blocks. The GPU made 1 and 30 of them wait; without configurations none would.
  Hypothesis sm = load_hypothesis_file(test::source_path("docs/results/h200/gpc-spread.json"));
  sm.smem_config = SmemConfig::Sm;
  Hypothesis none = sm;
  none.smem_config = SmemConfig::None;
  for (const char* id : {"h200-random1w-s26-0014", "h200-random1w-s26-0048"}) {
    const Case c = load_cases(test::source_path(std::string("corpus/hw/h200/2026-11-26-run9/") + id + ".cuda.json")).at(0);
    auto waiting = [](const Schedule& s) {
      int n = 0;
      for (const auto& k : s.kernels)
        for (const auto& b : k.blocks) n += b.start > 0;
      return n;
    };
    int observed = 0;
    for (const auto& [kernel, starts] : c.observation->start_of_block)
      for (auto t : starts) observed += t > 0;
    INFO(id);
    CHECK(observed > 0);
    CHECK(waiting(simulate(c.scenario, sm)) == observed);
    CHECK(waiting(simulate(c.scenario, none)) == 0);
  }
}

TEST_CASE("smem_config tpc: the TPC takes the configuration of its first block", "[resources][smem]") {
  Scenario s = mini(4, {kernel("k1", 1, 1, 32, 0, 1), kernel("k2", 1, 1, 32, 1024, 1)});
  const Hypothesis& h = test::hyp("alg1");
  GpuState g(s.device, h);
  BlockNeeds n1 = block_needs(s.kernels[0], s.device, h), n2 = block_needs(s.kernels[1], s.device, h);
  CHECK(g.config_of(0) == 100 * 1024);  // idle TPCs start at the device maximum
  Allocation a = g.commit(0, n1);
  CHECK(g.config_of(0) == 16 * 1024);
  CHECK_FALSE(g.tpc_idle(0));
  CHECK(g.tpc_idle(1));
  // Both SMs of TPC 0 are closed to k2 (config_s 32 KB > 16 KB); TPC 1 is idle and open.
  CHECK(g.capacity_parts(0, n2).config_blocked);
  CHECK(g.capacity_parts(1, n2).config_blocked);
  CHECK(g.capacity(1, n2) == 0);
  CHECK_FALSE(g.capacity_parts(2, n2).config_blocked);
  CHECK(g.capacity(2, n2) == 16);
  // SM1 of the busy TPC keeps k1's configuration: 16 KB / 1 KB = 16 blocks of k1.
  CHECK(g.capacity_parts(1, n1).limit_s == 16);
  g.release(a);
  CHECK(g.tpc_idle(0));
  CHECK_FALSE(g.capacity_parts(0, n2).config_blocked);
  CHECK(g.capacity(0, n2) == 16);
}

// ---------------------------------------------------------------- local memory

TEST_CASE("local gpu-config: a kernel needing more local memory waits for an idle GPU", "[resources][local]") {
  Scenario s = mini(2, {kernel("k1", 1, 32, 32, 0, 2), kernel("k2", 1, 32, 32, 0, 1, R"("local": 1024)")});
  Hypothesis ignore = variant("alg1", {{"local", "ignore"}});
  Schedule a = simulate(s, test::hyp("alg1")), b = simulate(s, ignore);
  CHECK(sms_of(a, "k2") == Ints{0});  // the idle GPU at t=2: the tie goes to SM0
  CHECK(starts_of(a, "k2") == Times{2});
  CHECK(sms_of(b, "k2") == Ints{1});
  CHECK(starts_of(b, "k2") == Times{0});
  // The other way round the configuration is large enough for the later kernel.
  Scenario r = mini(2, {kernel("k1", 1, 32, 32, 0, 2, R"("local": 1024)"), kernel("k2", 1, 32, 32, 0, 1)});
  CHECK(starts_of(simulate(r, test::hyp("alg1")), "k2") == Times{0});
  CHECK(sms_of(simulate(r, test::hyp("alg1")), "k2") == Ints{1});
}

TEST_CASE("local gpu-config: GpuState::local_allows", "[resources][local]") {
  Scenario s = mini(2, {kernel("k1", 1, 32, 32, 0, 1, R"("local": 512)"), kernel("k2", 1, 32, 32, 0, 1, R"("local": 1024)"),
                        kernel("k3", 1, 32, 32, 0, 1, R"("local": 256)")});
  const Hypothesis& h = test::hyp("alg1");
  BlockNeeds n1 = block_needs(s.kernels[0], s.device, h), n2 = block_needs(s.kernels[1], s.device, h),
             n3 = block_needs(s.kernels[2], s.device, h);
  CHECK(n2.local == 1024);
  GpuState g(s.device, h);
  CHECK(g.local_allows(n2));  // idle GPU: anything
  Allocation a = g.commit(0, n1);
  CHECK_FALSE(g.local_allows(n2));
  CHECK(g.local_allows(n3));
  CHECK(g.local_allows(n1));
  g.release(a);
  CHECK(g.local_allows(n2));
  // Under local: ignore the need is 0 and nothing waits.
  Hypothesis ignore = variant("alg1", {{"local", "ignore"}});
  CHECK(block_needs(s.kernels[1], s.device, ignore).local == 0);
}

// ---------------------------------------------------------------- capacity units

TEST_CASE("capacity: blocks against literal min(limit_b, limit_w, limit_s) (mini Case 1.2)", "[resources][capacity]") {
  // k1 (16 warps) on SM0 sets TPC 0 to 8 KB; k2 (8 warps) goes to SM1. For k3: blocks gives SM0 4
  // (32 warps / 8) and SM1 5 (40 / 8) -> SM1; literal gives min(15, 32, 7) = 7 and min(15, 40, 7) = 7
  // -> the tie goes to SM0.
  Scenario s = mini(2, {kernel("k1", 1, 512, 32, 0, 1), kernel("k2", 1, 256, 32, 0, 1), kernel("k3", 1, 256, 32, 0, 1)});
  Hypothesis literal = variant("alg1", {{"capacity", "literal"}});
  CHECK(literal.same_options(test::hyp("alg1-literal")));
  Schedule a = simulate(s, test::hyp("alg1")), b = simulate(s, literal);
  for (const Schedule* x : {&a, &b}) {
    CHECK(sms_of(*x, "k1") == Ints{0});
    CHECK(sms_of(*x, "k2") == Ints{1});
  }
  CHECK(sms_of(a, "k3") == Ints{1});
  CHECK(sms_of(b, "k3") == Ints{0});
}

TEST_CASE("capacity literal: an SM where one block does not fit has capacity 0", "[resources][capacity]") {
  // A 32-warp block fills one SM's warp slots to 32 of 48: another 32-warp block does not fit,
  // though min(limit_b 15, limit_w 16 warps, limit_s) is positive.
  Scenario s = mini(2, {kernel("k1", 1, 1024, 32, 0, 1)});
  const Hypothesis& h = test::hyp("alg1-literal");
  BlockNeeds n = block_needs(s.kernels[0], s.device, h);
  GpuState g(s.device, h);
  g.commit(0, n);
  CapacityParts p = g.capacity_parts(0, n);
  // 8 warps on each PB: rooms [4,4,4,4] -> 16 warps; TPC 0 configured to 8 KB (config_s: one
  // block x 1 KB), 1 KB used -> 7 blocks of shared memory.
  CHECK(p.limit_b == 15);
  CHECK(p.limit_w == 16);
  CHECK(p.limit_s == 7);
  CHECK(p.blocks == 0);
  CHECK(p.value == 0);
}

// ---------------------------------------------------------------- unit: ContiguousSpace

TEST_CASE("ContiguousSpace: first fit, holes, fits and merging on release", "[resources][contiguous]") {
  ContiguousSpace c;
  CHECK(c.empty());
  CHECK(c.used() == 0);
  REQUIRE(c.holes(100).size() == 1);
  CHECK(c.holes(100)[0].offset == 0);
  CHECK(c.holes(100)[0].size == 100);
  CHECK(c.fits(30, 100) == 3);
  CHECK(c.fits(0, 100) == kUnlimited);

  CHECK(c.allocate(30, 100) == 0);
  CHECK(c.allocate(20, 100) == 30);
  CHECK(c.allocate(40, 100) == 50);
  CHECK(c.used() == 90);
  CHECK_FALSE(c.empty());
  auto h = c.holes(100);
  REQUIRE(h.size() == 1);
  CHECK(h[0].offset == 90);
  CHECK(h[0].size == 10);
  CHECK(c.allocate(20, 100) == -1);  // 10 free, no room
  CHECK(c.used() == 90);

  c.release(30);  // a 20-unit hole in the middle
  h = c.holes(100);
  REQUIRE(h.size() == 2);
  CHECK(h[0].offset == 30);
  CHECK(h[0].size == 20);
  CHECK(h[1].offset == 90);
  CHECK(h[1].size == 10);
  CHECK(c.fits(10, 100) == 3);  // 2 in the middle hole, 1 at the tail
  CHECK(c.fits(20, 100) == 1);
  CHECK(c.fits(25, 100) == 0);  // 30 units free, but no hole of 25
  CHECK(c.allocate(25, 100) == -1);
  CHECK(c.allocate(15, 100) == 30);  // lowest hole that fits
  CHECK(c.allocate(10, 100) == 90);  // 5 left in the middle, so the tail
  CHECK(c.used() == 95);

  c.release(50);  // the 5 free units at 45 and the freed [50, 90) form one hole
  h = c.holes(100);
  REQUIRE(h.size() == 1);
  CHECK(h[0].offset == 45);
  CHECK(h[0].size == 45);
  c.release(90);  // now [45, 100) is one hole: the freed neighbours merge
  h = c.holes(100);
  REQUIRE(h.size() == 1);
  CHECK(h[0].offset == 45);
  CHECK(h[0].size == 55);
  CHECK(c.fits(55, 100) == 1);
  c.release(0);
  c.release(30);
  CHECK(c.empty());
  CHECK(c.used() == 0);
  CHECK(c.holes(100).size() == 1);
  CHECK_THROWS_AS(c.release(30), std::logic_error);
}

TEST_CASE("ContiguousSpace: a smaller limit hides the tail", "[resources][contiguous]") {
  ContiguousSpace c;
  CHECK(c.allocate(50, 100) == 0);
  CHECK(c.holes(50).empty());
  CHECK(c.holes(40).empty());
  CHECK(c.fits(1, 50) == 0);
  CHECK(c.allocate(1, 50) == -1);
  CHECK(c.fits(10, 80) == 3);
}

// ---------------------------------------------------------------- unit: strict round-robin capacity

TEST_CASE("strict RR capacity is min x 4 + j, and the PB pointer is never reset", "[resources][warps]") {
  Scenario s = mini(2, {kernel("w1", 1, 32, 32, 0, 1), kernel("w2", 1, 64, 32, 0, 1), kernel("w3", 1, 96, 32, 0, 1)});
  const Hypothesis& h = test::hyp("alg1-no-skip");
  const Device& d = s.device;
  BlockNeeds w1 = block_needs(s.kernels[0], d, h), w2 = block_needs(s.kernels[1], d, h),
             w3 = block_needs(s.kernels[2], d, h);
  GpuState g(d, h);
  CHECK(g.capacity_parts(0, w1).limit_w == 48);
  Allocation a = g.commit(0, w1);  // PB0, pointer 1
  CHECK(g.sm(0).pb_pointer == 1);
  // rooms [11,12,12,12], pointer 1: PBs 1, 2, 3 before the minimal PB0 -> 11*4 + 3.
  CHECK(g.capacity_parts(0, w1).limit_w == 47);
  Allocation b = g.commit(0, w2);  // PBs 1, 2, pointer 3
  CHECK(g.sm(0).pb_pointer == 3);
  CHECK(g.sm(0).pb_warps[0] == 1);
  CHECK(g.sm(0).pb_warps[1] == 1);
  CHECK(g.sm(0).pb_warps[2] == 1);
  CHECK(g.sm(0).pb_warps[3] == 0);
  // rooms [11,11,11,12], pointer 3: only PB3 before PB0 -> 11*4 + 1.
  CHECK(g.capacity_parts(0, w1).limit_w == 45);
  CHECK(g.capacity_parts(0, w1).blocks == 14);  // limit_b 16 - 2 binds
  g.release(a);
  g.release(b);
  // The SM is idle; its pointer stays at 3 (DESIGN fine point).
  CHECK(g.sm(0).blocks == 0);
  CHECK(g.sm(0).pb_pointer == 3);
  CHECK(g.capacity_parts(0, w1).limit_w == 48);
  g.commit(0, w3);  // from PB3: PBs 3, 0, 1; pointer 2
  CHECK(g.sm(0).pb_warps[3] == 1);
  CHECK(g.sm(0).pb_warps[0] == 1);
  CHECK(g.sm(0).pb_warps[1] == 1);
  CHECK(g.sm(0).pb_warps[2] == 0);
  CHECK(g.sm(0).pb_pointer == 2);
  // rooms [11,11,12,11], pointer 2: PB2 before PB3 -> 11*4 + 1.
  CHECK(g.capacity_parts(0, w1).limit_w == 45);
  // The other SM was never touched.
  CHECK(g.sm(1).pb_pointer == 0);
}

TEST_CASE("strict RR capacity with registers per PB binding", "[resources][warps]") {
  // 255 registers: R = 8192, two warps per PB. After one 1-warp block: rooms [1,2,2,2] pointer 1
  // -> 1*4 + 3 = 7 warps. After a 4-warp block with the skip (pointer 1 -> 2): rooms [0,1,1,1]
  // pointer 2 -> 0*4 + 2 = 2 warps (PBs 2 and 3 before the full PB0).
  Scenario s = mini(2, {kernel("a", 1, 32, 255, 0, 1), kernel("b", 1, 128, 255, 0, 1), kernel("c", 1, 96, 255, 0, 1)});
  const Hypothesis& h = test::hyp("alg1");
  BlockNeeds na = block_needs(s.kernels[0], s.device, h), nb = block_needs(s.kernels[1], s.device, h),
             nc = block_needs(s.kernels[2], s.device, h);
  CHECK(na.regs_per_warp == 8192);
  GpuState g(s.device, h);
  g.commit(0, na);
  CHECK(g.capacity_parts(0, na).limit_w == 7);
  g.commit(0, nb);
  CHECK(g.sm(0).pb_pointer == 2);
  CHECK(g.capacity_parts(0, na).limit_w == 2);
  CHECK(g.capacity(0, nc) == 0);  // 3 warps would need PB0
  // pb-any sums the rooms instead: 3 warps fit.
  const Hypothesis& any = test::hyp("alg1-pb-any");
  GpuState g2(s.device, any);
  g2.commit(0, block_needs(s.kernels[0], s.device, any));
  g2.commit(0, block_needs(s.kernels[1], s.device, any));
  CHECK(g2.capacity_parts(0, block_needs(s.kernels[0], s.device, any)).limit_w == 3);
  CHECK(g2.capacity(0, block_needs(s.kernels[2], s.device, any)) == 1);
}

TEST_CASE("PB pointer steps: W, one more for multiples of 4 with the skip, pb-any moves past the last PB used",
          "[resources][warps]") {
  Scenario s = mini(2, {kernel("w4", 1, 128, 32, 0, 1), kernel("w8", 1, 256, 32, 0, 1), kernel("w3", 1, 96, 32, 0, 1)});
  const Device& d = s.device;
  {
    const Hypothesis& h = test::hyp("alg1");
    GpuState g(d, h);
    g.commit(0, block_needs(s.kernels[0], d, h));
    CHECK(g.sm(0).pb_pointer == 1);  // 0 + 4 + 1
    g.commit(0, block_needs(s.kernels[1], d, h));
    CHECK(g.sm(0).pb_pointer == 2);  // 1 + 8 + 1
    g.commit(0, block_needs(s.kernels[2], d, h));
    CHECK(g.sm(0).pb_pointer == 1);  // 2 + 3
  }
  {
    const Hypothesis& h = test::hyp("alg1-no-skip");
    GpuState g(d, h);
    g.commit(0, block_needs(s.kernels[0], d, h));
    CHECK(g.sm(0).pb_pointer == 0);
    g.commit(0, block_needs(s.kernels[2], d, h));
    CHECK(g.sm(0).pb_pointer == 3);
  }
  {
    const Hypothesis& h = test::hyp("alg1-pb-any");
    GpuState g(d, h);
    g.commit(0, block_needs(s.kernels[0], d, h));
    CHECK(g.sm(0).pb_pointer == 0);  // last warp on PB3, no skip
    g.commit(0, block_needs(s.kernels[2], d, h));
    CHECK(g.sm(0).pb_pointer == 3);
    for (int q = 0; q < 4; ++q) CHECK(g.sm(0).pb_warps[q] == (q < 3 ? 2 : 1));
  }
}

// ---------------------------------------------------------------- unit: config_s and block needs

TEST_CASE("config_s (Mechanism 3) on rtx3090", "[resources][smem]") {
  Scenario s = test::scenario(R"({"device": "rtx3090", "kernels": [
      {"name": "one-thread", "blocks": 41, "threads": 1, "regs": 32, "smem": 0, "duration": 1},
      {"name": "one-thread-1k", "blocks": 1, "threads": 1, "regs": 32, "smem": 1024, "duration": 1},
      {"name": "full-warps", "blocks": 1, "threads": 1024, "regs": 32, "smem": 0, "duration": 1},
      {"name": "big-smem", "blocks": 1, "threads": 32, "regs": 32, "smem": 40960, "duration": 1},
      {"name": "odd-smem", "blocks": 1, "threads": 32, "regs": 32, "smem": 1, "duration": 1}]})");
  const Hypothesis& h = test::hyp("alg1");
  const Device& d = s.device;
  // Case 3 of seed 000: 16 blocks (block slots bind) x 1 KB reserved = 16 KB.
  BlockNeeds n0 = block_needs(s.kernels[0], d, h);
  CHECK(n0.smem == 1024);
  CHECK(n0.config_s == 16 * 1024);
  // 16 x (1 KB + 1 KB reserved) = 32 KB.
  BlockNeeds n1 = block_needs(s.kernels[1], d, h);
  CHECK(n1.smem == 2048);
  CHECK(n1.config_s == 32 * 1024);
  // One 32-warp block per SM (48 warps): 1 KB, rounded up to the 8 KB configuration.
  CHECK(block_needs(s.kernels[2], d, h).config_s == 8 * 1024);
  // 41 KB blocks: two fit in 100 KB, 82 KB rounds up to 100 KB.
  BlockNeeds n3 = block_needs(s.kernels[3], d, h);
  CHECK(n3.smem == 41 * 1024);
  CHECK(n3.config_s == 100 * 1024);
  // 1 byte rounds to 128, plus 1 KB: 1152 x 16 = 18 KB -> 32 KB.
  BlockNeeds n4 = block_needs(s.kernels[4], d, h);
  CHECK(n4.smem == 1152);
  CHECK(n4.config_s == 32 * 1024);
  // Without Mechanism 3 there is no config_s.
  CHECK(block_needs(s.kernels[0], d, test::hyp("alg1-no-tpc-config")).config_s == 0);
}

TEST_CASE("block_needs: W, R, S and Olmedo's thresholds", "[resources][thresholds]") {
  Scenario s = test::scenario(R"({"device": "rtx3090", "kernels": [
      {"name": "r32", "blocks": 1, "threads": 33, "regs": 32, "smem": 0, "duration": 1},
      {"name": "r33", "blocks": 1, "threads": 64, "regs": 33, "smem": 1920, "duration": 1},
      {"name": "s1921", "blocks": 1, "threads": 64, "regs": 255, "smem": 1921, "duration": 1},
      {"name": "s2048", "blocks": 1, "threads": 64, "regs": 40, "smem": 2048, "duration": 1}]})");
  const Device& d = s.device;
  const Hypothesis& olmedo = test::hyp("olmedo");
  const Hypothesis& alg1 = test::hyp("alg1");

  BlockNeeds a = block_needs(s.kernels[0], d, alg1);
  CHECK(a.warps == 2);                 // ceil(33 / 32)
  CHECK(a.regs_per_warp == 1024);      // 32 x 32
  CHECK(a.smem == 1024);               // 0 + 1 KB reserved
  BlockNeeds oa = block_needs(s.kernels[0], d, olmedo);
  CHECK(oa.warps == 2);
  CHECK(oa.regs_per_warp == 0);        // 32 registers: ignored
  CHECK(oa.smem == 0);                 // 1 KB < 3 KB: ignored

  // 33 registers: 1056 per warp rounds up to 1280; 1920 + 1024 = 2944 < 3072.
  CHECK(block_needs(s.kernels[1], d, alg1).regs_per_warp == 1280);
  CHECK(block_needs(s.kernels[1], d, olmedo).regs_per_warp == 1280);
  CHECK(block_needs(s.kernels[1], d, alg1).smem == 2944);
  CHECK(block_needs(s.kernels[1], d, olmedo).smem == 0);
  // 1921 bytes round up to 2048, + 1024 = 3072: not below 3 KB, counted. 255 registers -> 8192.
  CHECK(block_needs(s.kernels[2], d, olmedo).smem == 3072);
  CHECK(block_needs(s.kernels[2], d, olmedo).regs_per_warp == 8192);
  // 40 registers: 1280 per warp.
  CHECK(block_needs(s.kernels[3], d, olmedo).regs_per_warp == 1280);
  CHECK(block_needs(s.kernels[3], d, olmedo).smem == 3072);
}

TEST_CASE("ignored resources are neither checked nor allocated", "[resources][thresholds]") {
  Scenario s = test::scenario(R"({"device": "rtx3090", "kernels": [
      {"name": "small", "blocks": 1, "threads": 1024, "regs": 32, "smem": 1024, "duration": 1}]})");
  const Hypothesis& h = test::hyp("olmedo");
  GpuState g(s.device, h);
  BlockNeeds n = block_needs(s.kernels[0], s.device, h);
  g.commit(0, n);
  CHECK(g.sm(0).regs == 0);
  CHECK(g.sm(0).smem == 0);
  CHECK(g.sm(0).warps == 32);
  CapacityParts p = g.capacity_parts(0, n);
  CHECK(p.limit_regs_w == kUnlimited);
  CHECK(p.limit_s == kUnlimited);
  // Under most-room the same block is counted: 32 x 1024 registers and 2 KB.
  const Hypothesis& mr = test::hyp("most-room");
  GpuState g2(s.device, mr);
  g2.commit(0, block_needs(s.kernels[0], s.device, mr));
  CHECK(g2.sm(0).regs == 32 * 1024);
  CHECK(g2.sm(0).smem == 2048);
}

TEST_CASE("empty_sm_capacity and infeasibility reasons", "[resources]") {
  Scenario s = test::scenario(R"({"device": "rtx3090", "kernels": [
      {"name": "ok", "blocks": 1, "threads": 256, "regs": 32, "smem": 0, "duration": 1},
      {"name": "regs", "blocks": 1, "threads": 1024, "regs": 255, "smem": 0, "duration": 1},
      {"name": "pb", "blocks": 1, "threads": 448, "regs": 144, "smem": 0, "duration": 1}]})");
  const Device& d = s.device;
  // 8 warps: 48 / 8 = 6 blocks under every rule here.
  CHECK(GpuState::empty_sm_capacity(d, test::hyp("alg1"), block_needs(s.kernels[0], d, test::hyp("alg1"))).blocks == 6);
  CHECK(infeasibility_reason(s.kernels[0], d, test::hyp("alg1")).empty());
  // 32 warps x 8192 registers = 262144 > 65536.
  std::string why = infeasibility_reason(s.kernels[1], d, test::hyp("most-room"));
  CHECK_THAT(why, Catch::Contains("32 warps x 8192 registers = 262144 registers > 65536 per SM"));
  // 14 warps x 4608 registers = 64512 fit an SM pool, but 4 warps on one PB need 18432 > 16384.
  CHECK(infeasibility_reason(s.kernels[2], d, test::hyp("most-room")).empty());
  CHECK_THAT(infeasibility_reason(s.kernels[2], d, test::hyp("alg1")),
             Catch::Contains("4 warps x 4608 registers on a processing block > 16384 registers per PB"));
}
