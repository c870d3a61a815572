// Selection gpc-priority against seed 003 (Pai, the Fermi scheduler): pick_sm on the 28x1 table, pick_block
// on the 12-block 2-D tables, the 4x4 wait, SM reuse in completion order, and devices without a GPC map.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "helpers.hpp"
#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/fermi.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/resources.hpp"
#include "tbcheck/model/simulator.hpp"

using namespace tbcheck;
using namespace tbcheck::model;

namespace {

const Device& quadro() { return builtin_device("quadro6000", "test", "device"); }

std::vector<int> quadro_gpcs() { return fermi_gpc_of_sm(quadro(), test::hyp("fermi"), "test"); }

// One kernel on quadro6000: residency 1 (32 KB of shared memory of 48) or 2 (24 KB).
std::string kernel(const std::string& name, int residency, const std::string& shape, int duration = 1,
                   const std::string& extra = "") {
  return R"({"name": ")" + name + R"(", )" + shape + R"(, "threads": 256, "regs": 16, "smem": )" +
         (residency == 1 ? "32768" : "24576") + R"(, "duration": )" + std::to_string(duration) +
         (extra.empty() ? "" : ", " + extra) + "}";
}

Scenario on_quadro(const std::vector<std::string>& kernels) {
  std::string ks;
  for (const auto& k : kernels) ks += (ks.empty() ? "" : ", ") + k;
  return test::scenario(R"({"device": "quadro6000", "kernels": [)" + ks + "]}");
}

std::vector<int> sms_of(const KernelSchedule& k) {
  std::vector<int> v;
  for (const auto& b : k.blocks) v.push_back(b.sm);
  return v;
}

// Pick order of each block (row y, column x of the seed's order tables), from fermi_block_order.
std::vector<std::vector<int>> pick_table(int x_size, int y_size) {
  std::vector<int> order = fermi_block_order(x_size, y_size);
  std::vector<std::vector<int>> t(static_cast<size_t>(y_size), std::vector<int>(static_cast<size_t>(x_size), -1));
  for (size_t pick = 0; pick < order.size(); ++pick)
    t[static_cast<size_t>(order[pick] / x_size)][static_cast<size_t>(order[pick] % x_size)] = static_cast<int>(pick);
  return t;
}

}  // namespace

TEST_CASE("fermi: quadro6000 has the GPC map of seed 003 Section 2", "[fermi]") {
  const std::vector<int> g = quadro_gpcs();
  std::vector<std::vector<int>> members(4);
  for (int sm = 0; sm < 14; ++sm) members[static_cast<size_t>(g[static_cast<size_t>(sm)])].push_back(sm);
  CHECK(members[0] == std::vector<int>{0, 4, 8, 12});
  CHECK(members[1] == std::vector<int>{1, 5, 9});
  CHECK(members[2] == std::vector<int>{2, 6, 10});
  CHECK(members[3] == std::vector<int>{3, 7, 11, 13});
}

TEST_CASE("fermi: pick_sm reproduces the 28x1 residency-2 table", "[fermi]") {
  // The %smid column of seed 003 Section 4.1's table, order 0 to 27.
  const std::vector<int> table = {0, 4, 8, 12, 3, 7, 11, 13, 1, 5, 9, 2, 6, 10,
                                  0, 3, 4, 1, 2, 7, 8, 5, 6, 11, 12, 9, 10, 13};
  CHECK(fermi_first_wave(quadro_gpcs(), std::vector<int>(14, 2), 28) == table);
  // The simulator derives residency 2 from the kernel (24 KB of 48 KB shared memory) and places all 28 at once.
  Schedule s = simulate(on_quadro({kernel("k", 2, R"("blocks": 28)")}), test::hyp("fermi"));
  CHECK(sms_of(s.kernels[0]) == table);
  for (const auto& b : s.kernels[0].blocks) CHECK(b.start == 0);
}

TEST_CASE("fermi: a 14-block residency-2 grid goes one block at a time from the start", "[fermi]") {
  // Section 4.1: GPC0 thrice and GPC3 twice before GPC1; the rest follows from priorities [8, 6, 6, 8].
  const std::vector<int> wave = fermi_first_wave(quadro_gpcs(), std::vector<int>(14, 2), 14);
  CHECK(wave == std::vector<int>{0, 3, 4, 7, 8, 1, 2, 11, 12, 5, 6, 13, 0, 9});
}

TEST_CASE("fermi: the whole-GPC step lasts while more blocks than SMs remain overall", "[fermi]") {
  // Section 4.1, the 42x1 grid: the first wave is 28 blocks, but TB14-17 still go to all of GPC0.
  const std::vector<int> wave = fermi_first_wave(quadro_gpcs(), std::vector<int>(14, 2), 42);
  REQUIRE(wave.size() == 28);
  CHECK(std::vector<int>(wave.begin() + 14, wave.begin() + 22) == std::vector<int>{0, 4, 8, 12, 3, 7, 11, 13});
  // Every SM gets exactly its residency.
  for (int sm = 0; sm < 14; ++sm) CHECK(std::count(wave.begin(), wave.end(), sm) == 2);
  // Residency 1, 12 blocks (Section 4.2's 1-D order of SMs).
  CHECK(fermi_first_wave(quadro_gpcs(), std::vector<int>(14, 1), 12) ==
        std::vector<int>{0, 3, 4, 1, 2, 7, 8, 5, 6, 11, 12, 9});
}

TEST_CASE("fermi: pick_block reproduces the 2-D order tables of Section 4.2", "[fermi]") {
  using T = std::vector<std::vector<int>>;
  CHECK(pick_table(2, 6) == T{{0, 3}, {1, 2}, {6, 5}, {7, 4}, {8, 11}, {9, 10}});
  CHECK(pick_table(3, 4) == T{{0, 3, 4}, {1, 2, 5}, {10, 9, 6}, {11, 8, 7}});
  CHECK(pick_table(4, 3) == T{{0, 3, 4, 7}, {1, 2, 5, 6}, {11, 10, 9, 8}});
  CHECK(pick_table(6, 2) == T{{0, 3, 4, 7, 8, 11}, {1, 2, 5, 6, 9, 10}});
  T four = pick_table(4, 4);
  // The 4x4 table prints '-' for the two blocks that wait: picks 14 and 15.
  CHECK(std::min(four[2][0], four[3][0]) == 14);
  CHECK(std::max(four[2][0], four[3][0]) == 15);
  four[2][0] = four[3][0] = -1;
  CHECK(four == T{{0, 3, 4, 7}, {1, 2, 5, 6}, {-1, 13, 10, 9}, {-1, 12, 11, 8}});
  // 1-D grids keep block order; every shape gives a permutation.
  CHECK(fermi_block_order(12, 1) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  for (int x = 1; x <= 9; ++x)
    for (int y = 1; y <= 9; ++y) {
      INFO(x << "x" << y);
      std::vector<int> o = fermi_block_order(x, y);
      std::sort(o.begin(), o.end());
      std::vector<int> ids(static_cast<size_t>(x * y));
      std::iota(ids.begin(), ids.end(), 0);
      CHECK(o == ids);
    }
}

TEST_CASE("fermi: the 12-block shapes land on the SMs of Section 4.2's tables", "[fermi]") {
  // Seed tables: row y, column x; block y * x_size + x. TB11 is on 9, 12, 5, 6, 12 (the text's row).
  struct Shape {
    int x, y;
    std::vector<int> sms;
  };
  const Shape shapes[] = {{12, 1, {0, 3, 4, 1, 2, 7, 8, 5, 6, 11, 12, 9}},
                          {2, 6, {0, 1, 3, 4, 8, 7, 5, 2, 6, 9, 11, 12}},
                          {3, 4, {0, 1, 2, 3, 4, 7, 12, 11, 8, 9, 6, 5}},
                          {4, 3, {0, 1, 2, 5, 3, 4, 7, 8, 9, 12, 11, 6}},
                          {6, 2, {0, 1, 2, 5, 6, 9, 3, 4, 7, 8, 11, 12}}};
  for (const auto& sh : shapes) {
    INFO(sh.x << "x" << sh.y);
    const std::string grid = R"("grid": [)" + std::to_string(sh.x) + ", " + std::to_string(sh.y) + "]";
    Schedule s = simulate(on_quadro({kernel("k", 1, grid)}), test::hyp("fermi"));
    CHECK(sms_of(s.kernels[0]) == sh.sms);
  }
}

TEST_CASE("fermi: in the 4x4 residency-1 grid blocks 8 and 12 wait", "[fermi]") {
  Schedule s = simulate(on_quadro({kernel("k", 1, R"("grid": [4, 4])", 5)}), test::hyp("fermi"));
  const auto& b = s.kernels[0].blocks;
  for (int i = 0; i < 16; ++i) {
    INFO("block " << i);
    CHECK(b[static_cast<size_t>(i)].start == (i == 8 || i == 12 ? 5 : 0));
  }
  // The first wave: GPC0 whole (16 > 14 blocks left), then one at a time by priority.
  std::vector<int> wave;
  for (int blk : fermi_block_order(4, 4)) wave.push_back(b[static_cast<size_t>(blk)].sm);
  CHECK(std::vector<int>(wave.begin(), wave.begin() + 14) ==
        std::vector<int>{0, 4, 8, 12, 3, 1, 2, 7, 5, 6, 11, 9, 10, 13});
  // All 14 complete at once: the earliest dispatched first, so picks 14 and 15 reuse SMs 0 and 4.
  CHECK(b[8].sm == 0);
  CHECK(b[12].sm == 4);
}

TEST_CASE("fermi: after the first wave blocks reuse SMs in the order blocks complete", "[fermi]") {
  SECTION("one kernel: completion order, not %smid order") {
    // Residency 1, 20 blocks: the wave is GPC0 and GPC3 whole, then GPC1 / GPC2 one at a time.
    Schedule s = simulate(on_quadro({kernel("k", 1, R"("blocks": 20)", 3)}), test::hyp("fermi"));
    const std::vector<int> got = sms_of(s.kernels[0]);
    CHECK(std::vector<int>(got.begin(), got.begin() + 14) ==
          std::vector<int>{0, 4, 8, 12, 3, 7, 11, 13, 1, 2, 5, 6, 9, 10});
    CHECK(std::vector<int>(got.begin() + 14, got.end()) == std::vector<int>{0, 4, 8, 12, 3, 7});
    for (int i = 14; i < 20; ++i) CHECK(s.kernels[0].blocks[static_cast<size_t>(i)].start == 3);
  }
  SECTION("two kernels: the later wave covers the free SMs, completions of both are reused") {
    // a: 7 blocks of duration 3 on SMs 0, 3, 4, 1, 2, 7, 8. b (another stream) plans its wave over the 7
    // free SMs: GPC1 {5, 9}, GPC2 {6, 10}, GPC3 {11, 13} whole (priority 2 each), then GPC0 {12}.
    Schedule s = simulate(on_quadro({kernel("a", 1, R"("blocks": 7)", 3, R"("stream": 1)"),
                                     kernel("b", 1, R"("blocks": 30)", 1, R"("stream": 2)")}),
                          test::hyp("fermi"));
    CHECK(sms_of(s.kernels[0]) == std::vector<int>{0, 3, 4, 1, 2, 7, 8});
    const std::vector<int> b = sms_of(s.kernels[1]);
    const std::vector<int> wave = {5, 9, 6, 10, 11, 13, 12};
    for (int t = 0; t < 3; ++t) {  // b's blocks of times 0, 1, 2 cycle over its own completions
      INFO("time " << t);
      CHECK(std::vector<int>(b.begin() + 7 * t, b.begin() + 7 * t + 7) == wave);
    }
    // At time 3 a's blocks (dispatched first) and b's complete together: a's SMs come first.
    CHECK(std::vector<int>(b.begin() + 21, b.end()) == std::vector<int>{0, 3, 4, 1, 2, 7, 8, 5, 9});
    CHECK(s.kernels[1].blocks[21].start == 3);
  }
}

TEST_CASE("fermi: gpc-priority needs a device with a GPC map", "[fermi][hypothesis]") {
  Scenario s = test::scenario(R"({"device": )" + test::mini_device(4) +
                              R"(, "kernels": [{"name": "k", "blocks": 4, "threads": 64, "regs": 32, "smem": 0, "duration": 1}]})");
  InputError e = test::error_of([&] { simulate(s, test::hyp("fermi")); });
  CHECK(e.field() == "device");
  CHECK_THAT(e.reason(), Catch::Contains("device mini-ampere-4 has no GPC map (gpc_of_tpc)"));
  CHECK_THAT(e.reason(), Catch::Contains("hypothesis fermi uses selection 'gpc-priority'"));
  // A validation run reports the case as unsupported with that reason instead of failing.
  Case c;
  c.id = "x";
  c.scenario = s;
  c.observation = Observation{};
  c.observation->facts.push_back(Fact{});
  c.observation->facts.back().kernel = "k";
  c.observation->facts.back().sms = {0};
  CaseResult r = evaluate(c, test::hyp("fermi"));
  CHECK_FALSE(r.ran);
  CHECK_THAT(r.reason, Catch::Contains("no GPC map"));
  // Other hypotheses do not care.
  CHECK_NOTHROW(simulate(s, test::hyp("round-robin")));
}

TEST_CASE("fermi: gpc-priority options that have no meaning are rejected", "[fermi][hypothesis]") {
  auto err = [](const json& j) { return test::error_of([&] { hypothesis_from_json(j, "h.json"); }); };
  InputError order = err(json{{"name", "x"}, {"base", "fermi"}, {"order", "even-first"}});
  CHECK(order.field() == "order");
  CHECK_THAT(order.reason(), Catch::Contains("must be 'natural'"));
  InputError issue = err(json{{"name", "x"}, {"base", "fermi"}, {"issue", "paired"}});
  CHECK(issue.field() == "issue");
  // Resource options combine freely with the Fermi placement.
  Hypothesis h = hypothesis_from_json(json{{"name", "x"}, {"base", "fermi"}, {"smem", "contiguous-first-fit"}}, "h.json");
  CHECK(h.selection == Selection::GpcPriority);
}

TEST_CASE("fermi passes every seed 003 corpus case", "[fermi][paper]") {
  auto cases = load_cases(test::source_path("corpus/paper/003-pai"));
  CHECK(cases.size() == 9);
  for (const auto& c : cases) {
    INFO(c.id);
    CHECK(c.expect.at("fermi") == Expect::Pass);
    CaseResult r = evaluate(c, test::hyp("fermi"));
    CHECK(r.at(Level::Exact) == Verdict::Pass);
    CHECK(r.first_failure(Level::Exact) == "");
  }
}

TEST_CASE("fermi: random scenarios on quadro6000 place every block where it fits", "[fermi]") {
  // Replays each schedule over the same resource state: retire-then-dispatch per instant, and every block
  // must fit its SM when it starts. Covers streams, preemption of the head and mixed kernel sizes.
  std::mt19937 rng(20250317);
  auto between = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const Hypothesis& h = test::hyp("fermi");
  for (int iter = 0; iter < 200; ++iter) {
    std::vector<std::string> ks;
    const int nk = between(1, 4);
    for (int k = 0; k < nk; ++k) {
      const int x = between(1, 7), y = between(1, 7);
      const std::string shape = between(0, 2) == 0 ? R"("grid": [)" + std::to_string(x) + ", " + std::to_string(y) + "]"
                                                   : R"("blocks": )" + std::to_string(between(1, 60));
      const int stream = between(-1, 1);
      ks.push_back(R"({"name": "k)" + std::to_string(k) + R"(", )" + shape + R"(, "threads": )" +
                   std::to_string(32 * between(1, 32)) + R"(, "regs": )" + std::to_string(between(8, 40)) +
                   R"(, "smem": )" + std::to_string(1024 * between(0, 48)) + R"(, "duration": )" +
                   std::to_string(between(1, 4)) + (stream >= 0 ? R"(, "stream": )" + std::to_string(stream) : "") + "}");
    }
    Scenario s = on_quadro(ks);
    bool feasible = true;
    for (const auto& k : s.kernels) feasible = feasible && infeasibility_reason(k, s.device, h).empty();
    if (!feasible) continue;
    INFO("iteration " << iter << ": " << s.to_json().dump());
    Schedule sch = simulate(s, h);
    struct Event {
      int64_t time;
      int order;  // retirements (0) before starts (1) at the same instant
      size_t kernel, block;
    };
    std::vector<Event> ev;
    for (size_t k = 0; k < sch.kernels.size(); ++k)
      for (size_t b = 0; b < sch.kernels[k].blocks.size(); ++b) {
        ev.push_back({sch.kernels[k].blocks[b].start, 1, k, b});
        ev.push_back({sch.kernels[k].blocks[b].end, 0, k, b});
      }
    std::sort(ev.begin(), ev.end(),
              [](const Event& a, const Event& b) { return std::tie(a.time, a.order) < std::tie(b.time, b.order); });
    GpuState g(s.device, h);
    std::map<std::pair<size_t, size_t>, Allocation> live;
    for (const auto& e : ev) {
      const BlockPlacement& p = sch.kernels[e.kernel].blocks[e.block];
      if (e.order == 0) {
        g.release(live.at({e.kernel, e.block}));
        continue;
      }
      const BlockNeeds n = block_needs(s.kernels[e.kernel], s.device, h);
      REQUIRE(g.capacity_parts(p.sm, n).blocks > 0);
      live[{e.kernel, e.block}] = g.commit(p.sm, n);
      CHECK(p.end == p.start + s.kernels[e.kernel].duration);
    }
  }
}
