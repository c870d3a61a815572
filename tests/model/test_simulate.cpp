// The dispatcher of docs/design.md on hand-derived corner cases: streams, head-of-line blocking,
// retire-then-dispatch, block order, pointers and ties, infeasible kernels and the schedule JSON.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/resources.hpp"
#include "tbcheck/model/simulator.hpp"

using namespace tbcheck;
using namespace tbcheck::model;
using tbcheck::test::mini_device;

namespace {

std::string kernel(const std::string& name, int blocks, int threads, int duration, const std::string& extra = "") {
  return R"({"name": ")" + name + R"(", "blocks": )" + std::to_string(blocks) + R"(, "threads": )" +
         std::to_string(threads) + R"(, "regs": 32, "smem": 0, "duration": )" + std::to_string(duration) +
         (extra.empty() ? "" : ", " + extra) + "}";
}

Scenario mini(int sms, const std::vector<std::string>& kernels) {
  std::string ks;
  for (const auto& k : kernels) ks += (ks.empty() ? "" : ", ") + k;
  return test::scenario(R"({"device": )" + mini_device(sms) + R"(, "kernels": [)" + ks + "]}");
}

const KernelSchedule& of(const Schedule& s, const std::string& name) {
  for (const auto& k : s.kernels)
    if (k.name == name) return k;
  throw std::runtime_error("no kernel " + name);
}

std::vector<int> sms(const Schedule& s, const std::string& name) {
  std::vector<int> v;
  for (const auto& b : of(s, name).blocks) v.push_back(b.sm);
  return v;
}

std::vector<int64_t> starts(const Schedule& s, const std::string& name) {
  std::vector<int64_t> v;
  for (const auto& b : of(s, name).blocks) v.push_back(b.start);
  return v;
}

using Ints = std::vector<int>;
using Times = std::vector<int64_t>;

}  // namespace

TEST_CASE("stream order: the second kernel starts when the first one's last block retires", "[simulator][streams]") {
  // k1: three 32-warp blocks (one per SM at a time): blocks 0 and 1 run [0,2), block 2 runs [2,4).
  // k2 shares the stream: eligible at t=4, not at t=2 when k1's first blocks end.
  Scenario s = mini(2, {kernel("k1", 3, 1024, 2, R"("stream": 5)"), kernel("k2", 1, 32, 1, R"("stream": 5)")});
  Schedule sch = simulate(s, test::hyp("most-room"));
  CHECK(sms(sch, "k1") == Ints{0, 1, 0});
  CHECK(starts(sch, "k1") == Times{0, 0, 2});
  CHECK(of(sch, "k1").blocks[2].end == 4);
  CHECK(starts(sch, "k2") == Times{4});
  CHECK(sms(sch, "k2") == Ints{0});
  CHECK(sch.makespan() == 5);
}

TEST_CASE("stream order: equal streams chain in list order, other kernels do not wait", "[simulator][streams]") {
  // k1 and k3 share stream 7; k2 (no stream) runs concurrently with k1; k3 waits for k1 only.
  Scenario s = mini(2, {kernel("k1", 1, 32, 3, R"("stream": 7)"), kernel("k2", 1, 32, 5),
                        kernel("k3", 1, 32, 1, R"("stream": 7)"), kernel("k4", 1, 32, 1, R"("stream": 7)")});
  Schedule sch = simulate(s, test::hyp("most-room"));
  CHECK(starts(sch, "k1") == Times{0});
  CHECK(starts(sch, "k2") == Times{0});
  CHECK(starts(sch, "k3") == Times{3});
  CHECK(starts(sch, "k4") == Times{4});
}

TEST_CASE("kernels without a stream, or in different streams, run concurrently", "[simulator][streams]") {
  for (const auto& extras : std::vector<std::pair<std::string, std::string>>{
           {"", ""}, {R"("stream": 1)", R"("stream": 2)"}, {R"("stream": 1)", ""}}) {
    INFO(extras.first << " / " << extras.second);
    Scenario s = mini(2, {kernel("k1", 1, 32, 5, extras.first), kernel("k2", 1, 32, 5, extras.second)});
    Schedule sch = simulate(s, test::hyp("most-room"));
    CHECK(starts(sch, "k1") == Times{0});
    CHECK(starts(sch, "k2") == Times{0});
    CHECK(sms(sch, "k2") == Ints{1});
  }
}

TEST_CASE("head-of-line: a later kernel that would fit waits behind a head that cannot be placed",
          "[simulator][dispatch]") {
  // k1 takes 32 of 48 warps on both SMs until t=5. k2 (32 warps) cannot be placed; k3 (1 warp)
  // would fit but is not the head: both start at t=5.
  Scenario s = mini(2, {kernel("k1", 2, 1024, 5), kernel("k2", 1, 1024, 1), kernel("k3", 1, 32, 1)});
  Schedule sch = simulate(s, test::hyp("most-room"));
  CHECK(sms(sch, "k1") == Ints{0, 1});
  CHECK(starts(sch, "k2") == Times{5});
  CHECK(sms(sch, "k2") == Ints{0});
  CHECK(starts(sch, "k3") == Times{5});
  CHECK(sms(sch, "k3") == Ints{1});  // SM0 took k2: 15 blocks of room against 16
  // Without the blocked head, k3 starts at once.
  Scenario alone = mini(2, {kernel("k1", 2, 1024, 5), kernel("k3", 1, 32, 1)});
  CHECK(starts(simulate(alone, test::hyp("most-room")), "k3") == Times{0});
  // The same under round-robin.
  Schedule rr = simulate(s, test::hyp("round-robin"));
  CHECK(starts(rr, "k2") == Times{5});
  CHECK(starts(rr, "k3") == Times{5});
}

TEST_CASE("retire-then-dispatch: a block ending at t frees room for a block starting at t", "[simulator][dispatch]") {
  Scenario s = mini(2, {kernel("k1", 2, 1024, 3), kernel("k2", 1, 1024, 1)});
  Schedule sch = simulate(s, test::hyp("alg1"));
  CHECK(of(sch, "k1").blocks[0].end == 3);
  CHECK(starts(sch, "k2") == Times{3});
  CHECK(of(sch, "k2").blocks[0].end == 4);
}

TEST_CASE("blocks are dispatched and listed in block-index order", "[simulator][dispatch]") {
  // One 32-warp block per SM at a time, 2 SMs, 5 blocks of duration 1.
  Scenario s = mini(2, {kernel("k1", 5, 1024, 1)});
  Schedule sch = simulate(s, test::hyp("most-room"));
  CHECK(sms(sch, "k1") == Ints{0, 1, 0, 1, 0});
  CHECK(starts(sch, "k1") == Times{0, 0, 1, 1, 2});
  for (const auto& b : of(sch, "k1").blocks) CHECK(b.end == b.start + 1);
  // Round-robin: block i on SM i mod 4 when everything fits.
  Schedule rr = simulate(mini(4, {kernel("k1", 6, 32, 1)}), test::hyp("round-robin"));
  CHECK(sms(rr, "k1") == Ints{0, 1, 2, 3, 0, 1});
}

TEST_CASE("round-robin: one pointer for the GPU, kept across kernels", "[simulator][selection]") {
  Scenario s = mini(4, {kernel("k1", 3, 32, 1), kernel("k2", 2, 32, 1)});
  Schedule sch = simulate(s, test::hyp("round-robin"));
  CHECK(sms(sch, "k1") == Ints{0, 1, 2});
  CHECK(sms(sch, "k2") == Ints{3, 0});
}

TEST_CASE("round-robin: the first SM at or after the pointer that fits, wrapping", "[simulator][selection]") {
  // k1 holds 32 warps of SM0 until t=10 (pointer 1). k2's 32-warp blocks go to SMs 1, 2, 3 (pointer
  // 0); block 3 fits nowhere at t=0; at t=1, scanning from SM0 (full), SM1 is the first with room.
  Scenario s = mini(4, {kernel("k1", 1, 1024, 10), kernel("k2", 4, 1024, 1)});
  Schedule sch = simulate(s, test::hyp("round-robin"));
  CHECK(sms(sch, "k1") == Ints{0});
  CHECK(sms(sch, "k2") == Ints{1, 2, 3, 1});
  CHECK(starts(sch, "k2") == Times{0, 0, 0, 1});
}

TEST_CASE("most-room: ties go to the first SM in the order", "[simulator][selection]") {
  // After k1 on SM0, SMs 1, 2, 3 tie at 16 blocks: natural order picks SM1, even-first SM2.
  Scenario s = mini(4, {kernel("k1", 1, 32, 1), kernel("k2", 1, 32, 1)});
  CHECK(sms(simulate(s, test::hyp("most-room")), "k2") == Ints{1});
  CHECK(sms(simulate(s, test::hyp("olmedo")), "k2") == Ints{2});
  CHECK(sms(simulate(s, test::hyp("alg1")), "k2") == Ints{2});
  // Strictly more room wins over the order: k1 puts 32 warps on SM0 and SM2 (even-first); k2's
  // 16-warp block ranks SM0/SM2 at 1 and SM1/SM3 at 3 -> SM1, the first of the roomiest.
  Scenario t = mini(4, {kernel("k1", 2, 1024, 1), kernel("k2", 1, 512, 1)});
  Schedule o = simulate(t, test::hyp("olmedo"));
  CHECK(sms(o, "k1") == Ints{0, 2});
  CHECK(sms(o, "k2") == Ints{1});
}

TEST_CASE("a kernel that can never fit is an InputError naming the kernel and the reason", "[simulator][errors]") {
  Scenario s = mini(2, {kernel("fine", 1, 32, 1),
                        R"({"name": "huge", "blocks": 1, "threads": 1024, "regs": 255, "smem": 0, "duration": 1})"});
  for (const char* h : {"alg1", "most-room", "round-robin"}) {
    INFO(h);
    try {
      simulate(s, test::hyp(h));
      FAIL("no InputError");
    } catch (const InputError& e) {
      CHECK(e.field() == "kernels[1]");
      CHECK_THAT(e.reason(), Catch::Contains("kernel huge"));
      CHECK_THAT(e.reason(), Catch::Contains(h));
      CHECK_THAT(e.reason(), Catch::Contains("mini-ampere-2"));
      CHECK_THAT(e.reason(), Catch::Contains("32 warps x 8192 registers = 262144 registers > 65536 per SM"));
    }
  }
  // predict names the scenario's file (model::predict_all).
  const auto none = [](size_t, Schedule&&) {};
  CHECK_THROWS_AS(predict_all(s, {test::hyp("alg1")}, "file.json", none), InputError);
  try {
    predict_all(s, {test::hyp("alg1")}, "file.json", none);
  } catch (const InputError& e) {
    CHECK(e.where() == "file.json");
    CHECK_THAT(std::string(e.what()), Catch::StartsWith("file.json: kernels[1]: kernel huge"));
  }
}

TEST_CASE("a kernel infeasible only under per-PB registers", "[simulator][errors]") {
  // 14 warps x 144 registers (4608 per warp): 64512 registers fit one SM pool, but strict RR puts 4
  // warps (18432 registers) on one PB of 16384.
  Scenario s = mini(2, {R"({"name": "wide", "blocks": 2, "threads": 448, "regs": 144, "smem": 0, "duration": 1})"});
  Schedule ok = simulate(s, test::hyp("most-room"));
  CHECK(sms(ok, "wide") == Ints{0, 1});
  CHECK_THROWS_WITH(simulate(s, test::hyp("alg1")),
                    Catch::Contains("kernel wide") &&
                        Catch::Contains("4 warps x 4608 registers on a processing block > 16384 registers per PB"));
  CHECK(check_feasibility(s, test::hyp("most-room")).runs());
}

TEST_CASE("Schedule::to_json has the docs/design.md shape", "[simulator][json]") {
  Scenario s = mini(2, {kernel("a", 3, 1024, 2), kernel("b", 1, 32, 1)});
  Schedule sch = simulate(s, test::hyp("most-room"));
  CHECK(sch.hypothesis == "most-room");
  CHECK(sch.device == "mini-ampere-2");
  CHECK(sch.sms == 2);
  json j = sch.to_json();
  REQUIRE(j.is_object());
  CHECK(j.size() == 3);
  CHECK(j["hypothesis"] == "most-room");
  CHECK(j["device"] == "mini-ampere-2");
  REQUIRE(j["kernels"].is_array());
  REQUIRE(j["kernels"].size() == 2);
  CHECK(j["kernels"][0]["name"] == "a");
  CHECK(j["kernels"][1]["name"] == "b");
  REQUIRE(j["kernels"][0]["blocks"].size() == 3);
  REQUIRE(j["kernels"][1]["blocks"].size() == 1);
  // a: blocks 0 and 1 on SMs 0 and 1 over [0,2); block 2 cannot be placed at t=0, so b waits
  // behind it (head-of-line). At t=2 block 2 goes to SM0 and b to SM1 (16 blocks of room vs 15).
  CHECK(j["kernels"][0]["blocks"][0] == json({{"sm", 0}, {"start", 0}, {"end", 2}}));
  CHECK(j["kernels"][0]["blocks"][1] == json({{"sm", 1}, {"start", 0}, {"end", 2}}));
  CHECK(j["kernels"][0]["blocks"][2] == json({{"sm", 0}, {"start", 2}, {"end", 4}}));
  CHECK(j["kernels"][1]["blocks"][0] == json({{"sm", 1}, {"start", 2}, {"end", 3}}));
  CHECK(sch.makespan() == 4);
}

TEST_CASE("the dispatcher is deterministic and does not depend on previous runs", "[simulator]") {
  Scenario s = mini(4, {kernel("a", 7, 512, 3), kernel("b", 5, 96, 2, R"("stream": 1)"),
                        kernel("c", 9, 64, 1, R"("stream": 1)")});
  for (const auto& h : builtin_hypotheses()) {
    INFO(h.name);
    if (needs_gpc_map(h)) continue;  // mini devices have none (test_fermi.cpp, test_dispatch.cpp)
    json first = simulate(s, h).to_json();
    CHECK(simulate(s, h).to_json() == first);
    // Every block gets an SM and an end after its start.
    for (const auto& k : first["kernels"])
      for (const auto& b : k["blocks"]) {
        CHECK(b["sm"].get<int>() >= 0);
        CHECK(b["sm"].get<int>() < 4);
        CHECK(b["end"].get<int64_t>() > b["start"].get<int64_t>());
      }
  }
}

// ---------------------------------------------------------------- reference dispatcher

namespace {

// docs/design.md's dispatcher written the plain way (scan every SM for every block), over the same
// GpuState mechanisms: the simulator's cached capacities and event queue must agree with it.
Schedule reference_simulate(const Scenario& s, const Hypothesis& h) {
  const Device& d = s.device;
  const size_t nk = s.kernels.size();
  GpuState g(d, h);
  const std::vector<int> order = sm_order(d, h.order);
  std::vector<BlockNeeds> needs;
  for (const auto& k : s.kernels) needs.push_back(block_needs(k, d, h));
  // Stream predecessor: the previous kernel in the list with the same stream value.
  std::vector<int> pred(nk, -1);
  for (size_t k = 0; k < nk; ++k)
    for (size_t j = 0; j < k && s.kernels[k].stream; ++j)
      if (s.kernels[j].stream == s.kernels[k].stream) pred[k] = static_cast<int>(j);
  Schedule out;
  out.hypothesis = h.name;
  out.device = d.name;
  out.sms = d.sms;
  for (const auto& k : s.kernels) out.kernels.push_back({k.name, std::vector<BlockPlacement>(static_cast<size_t>(k.blocks))});
  std::vector<int> next(nk, 0), left(nk);
  for (size_t k = 0; k < nk; ++k) left[k] = s.kernels[k].blocks;
  struct Res {
    int64_t end;
    size_t kernel;
    Allocation a;
  };
  std::vector<Res> resident;
  int rr = 0;
  int64_t now = 0;
  // Issue paired: the block after a leader goes to the leader's SM when it fits there at that instant.
  int pair_sm = -1;
  size_t pair_kernel = 0;
  int64_t pair_time = -1;
  while (true) {
    for (size_t i = 0; i < resident.size();) {
      if (resident[i].end <= now) {
        g.release(resident[i].a);
        --left[resident[i].kernel];
        resident.erase(resident.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
    }
    while (true) {
      int head = -1;
      for (size_t k = 0; k < nk && head < 0; ++k)
        if (next[k] < s.kernels[k].blocks && (pred[k] < 0 || left[static_cast<size_t>(pred[k])] == 0))
          head = static_cast<int>(k);
      if (head < 0) break;
      const BlockNeeds& n = needs[static_cast<size_t>(head)];
      if (!g.local_allows(n)) break;
      int pos = -1;
      const int leader_sm = pair_sm;
      const bool follows = leader_sm >= 0 && pair_kernel == static_cast<size_t>(head) && pair_time == now &&
                           g.capacity(leader_sm, n) > 0;
      pair_sm = -1;
      if (follows) {
        pos = static_cast<int>(std::find(order.begin(), order.end(), leader_sm) - order.begin());
      } else if (h.selection == Selection::RoundRobin) {
        for (int j = 0; j < d.sms && pos < 0; ++j)
          if (g.capacity(order[static_cast<size_t>((rr + j) % d.sms)], n) > 0) pos = (rr + j) % d.sms;
        if (pos >= 0) rr = (pos + 1) % d.sms;
      } else {
        int64_t best = 0;
        for (int p = 0; p < d.sms; ++p) {
          int64_t c = g.capacity(order[static_cast<size_t>(p)], n);
          if (c > best) {
            best = c;
            pos = p;
          }
        }
      }
      if (pos < 0) break;
      const size_t k = static_cast<size_t>(head);
      const int sm = order[static_cast<size_t>(pos)];
      const int64_t end = now + s.kernels[k].duration;
      if (h.leads_pair(d, s.kernels[k].blocks, next[k])) {
        pair_sm = sm;
        pair_kernel = k;
        pair_time = now;
      }
      out.kernels[k].blocks[static_cast<size_t>(next[k]++)] = {sm, now, end};
      resident.push_back({end, k, g.commit(sm, n)});
    }
    if (resident.empty()) break;
    now = resident.front().end;
    for (const auto& r : resident) now = std::min(now, r.end);
  }
  for (size_t k = 0; k < nk; ++k)
    if (next[k] < s.kernels[k].blocks) throw std::logic_error("reference dispatcher stalled");
  // Device issue: a pass of the device's issue_pass decisions hands out their first
  // placements, then their followers; written out here placement by placement.
  if (h.issue == Issue::FromDevice && d.issue_pairs && d.issue_pass > 1)
    for (size_t k = 0; k < nk; ++k) {
      const int n = s.kernels[k].blocks;
      std::vector<std::vector<int>> decisions;  // the placements of each decision
      for (int b = 0; b < n; ++b) {
        if (b > 0 && h.leads_pair(d, n, b - 1)) decisions.back().push_back(b);
        else decisions.push_back({b});
      }
      std::vector<BlockPlacement> relabelled(out.kernels[k].blocks.size());
      int label = 0;
      for (size_t j = 0; j < decisions.size();) {
        const size_t pass = j < static_cast<size_t>(d.issue_pass_from) ? 1 : static_cast<size_t>(d.issue_pass);
        const size_t end = std::min(decisions.size(), j + pass);
        for (size_t half = 0; half < 2; ++half)
          for (size_t i = j; i < end; ++i)
            if (half < decisions[i].size()) relabelled[static_cast<size_t>(label++)] = out.kernels[k].blocks[static_cast<size_t>(decisions[i][half])];
        j = end;
      }
      out.kernels[k].blocks = relabelled;
    }
  return out;
}

}  // namespace

TEST_CASE("the simulator agrees with a plain reference dispatcher on random scenarios", "[simulator][reference]") {
  std::mt19937 rng(20240611);
  auto pick = [&](const std::vector<int>& v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
  auto between = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int compared = 0, infeasible = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const int sms = pick({2, 4, 6});
    std::vector<std::string> ks;
    const int nk = between(1, 6);
    for (int k = 0; k < nk; ++k) {
      std::string extra;
      const int stream = between(-1, 1);
      if (stream >= 0) extra = R"("stream": )" + std::to_string(stream);
      const int local = pick({0, 0, 0, 512, 1024});
      if (local > 0) extra += std::string(extra.empty() ? "" : ", ") + R"("local": )" + std::to_string(local);
      std::string name = "k";
      name += std::to_string(k);
      ks.push_back(R"({"name": ")" + name + R"(", "blocks": )" + std::to_string(between(1, 14)) + R"(, "threads": )" +
                   std::to_string(pick({1, 32, 64, 96, 128, 160, 256, 480, 512, 1024})) + R"(, "regs": )" +
                   std::to_string(pick({16, 32, 33, 64, 128, 255})) + R"(, "smem": )" +
                   std::to_string(pick({0, 0, 1024, 2047, 4096, 10240, 40960})) + R"(, "duration": )" +
                   std::to_string(between(1, 3)) + (extra.empty() ? "" : ", " + extra) + "}");
    }
    Scenario s = mini(sms, ks);
    // The block issue of the device: pairs on mini-ampere; every third iteration also
    // Turing-like hand-out passes, of 2 or 3 decisions from decision 0-3.
    if (iter % 3 == 0) {
      s.device.issue_pass = between(2, 3);
      s.device.issue_pass_from = between(0, 3);
    }
    for (const auto& h : builtin_hypotheses()) {
      // gpc-priority is another algorithm (a planned first wave, then completion order; model/engine/src/fermi.cpp),
      // not a per-block SM choice this reference mirrors; tests/model/test_fermi.cpp checks it against seed 003.
      // The spreads (gpc-spread, tpc-position) need a GPC map, which mini devices lack (test_dispatch.cpp).
      if (needs_gpc_map(h)) continue;
      bool feasible = true;
      for (const auto& k : s.kernels) feasible = feasible && infeasibility_reason(k, s.device, h).empty();
      if (!feasible) {
        ++infeasible;
        CHECK_THROWS_AS(simulate(s, h), InputError);
        continue;
      }
      INFO("iteration " << iter << " under " << h.name << ": " << s.to_json().dump());
      Schedule a = simulate(s, h);
      Schedule b = reference_simulate(s, h);
      CHECK(a.to_json() == b.to_json());
      ++compared;
    }
  }
  CHECK(compared > 2000);  // the generator mostly produces feasible kernels
  CHECK(infeasible > 0);   // and some that no SM can hold (e.g. 1024 threads x 255 registers)
}

// A kernel with a release time becomes eligible at that instant (launch order = list order).
TEST_CASE("release_time: kernels become eligible at their launch instant", "[simulator][controls]") {
  // One SM, one block at a time (1024 threads of 1536): b waits for its release, then for a's block.
  auto s = test::scenario(R"({"device": )" + test::mini_device(2) + R"(, "kernels": [
      {"name": "a", "blocks": 2, "threads": 1024, "regs": 32, "duration": 10},
      {"name": "b", "blocks": 2, "threads": 1024, "regs": 32, "duration": 10, "release_time": 4},
      {"name": "c", "blocks": 1, "threads": 32, "regs": 32, "duration": 3, "release_time": 25}]})");
  auto sch = simulate(s, test::hyp("alg1"));
  CHECK(sch.kernels[0].blocks[0].start == 0);
  CHECK(sch.kernels[0].blocks[1].start == 0);   // a fills both SMs at 0
  CHECK(sch.kernels[1].blocks[0].start == 10);  // released at 4, room at 10
  CHECK(sch.kernels[2].blocks[0].start == 25);  // the GPU is idle from 20: c waits for its release
  // Without releases c follows b in launch order and starts when b's blocks end: the release moves it to 25.
  auto plain = s;
  plain.kernels[2].release = 0;
  plain.kernels[1].release = 0;
  CHECK(simulate(plain, test::hyp("alg1")).kernels[2].blocks[0].start == 20);
  // A released kernel behind a stream predecessor waits for both.
  auto st = test::scenario(R"({"device": )" + test::mini_device(2) + R"(, "kernels": [
      {"name": "a", "blocks": 1, "threads": 32, "regs": 32, "duration": 10, "stream": 0},
      {"name": "b", "blocks": 1, "threads": 32, "regs": 32, "duration": 1, "stream": 0, "release_time": 2},
      {"name": "c", "blocks": 1, "threads": 32, "regs": 32, "duration": 1, "stream": 1, "release_time": 12}]})");
  auto sst = simulate(st, test::hyp("alg1"));
  CHECK(sst.kernels[1].blocks[0].start == 10);
  CHECK(sst.kernels[2].blocks[0].start == 12);
}

TEST_CASE("the simulator refuses clusters without a GPC map or under gpc-priority and gpc-priority refuses release times", "[simulator][controls]") {
  // priority and tpcs are modelled (tests/model/test_controls.cpp); clusters need a GPC map, and gpc-priority has no
  // cluster rule (tests/model/test_cluster.cpp).
  auto s = test::scenario(R"({"device": "h100-sxm", "kernels": [{"blocks": 2, "threads": 32, "regs": 32, "duration": 1, "cluster": [2]}]})");
  auto e = test::error_of([&] { simulate(s, test::hyp("alg1")); });
  CHECK(e.field() == "kernels[0].cluster");
  CHECK_THAT(e.reason(), Catch::Contains("no GPC map"));
  s.device = builtin_device("h100-sxm-assumed-gpcs", "test", "device");
  CHECK_NOTHROW(simulate(s, test::hyp("alg1")));
  auto g = test::error_of([&] { simulate(s, test::hyp("fermi")); });
  CHECK(g.field() == "kernels[0].cluster");
  CHECK_THAT(g.reason(), Catch::StartsWith("unsupported") && Catch::Contains("gpc-priority"));
  auto f = test::scenario(R"({"device": "quadro6000", "kernels": [{"blocks": 1, "threads": 32, "regs": 32, "duration": 1, "release_time": 2}]})");
  CHECK(test::error_of([&] { simulate(f, test::hyp("fermi")); }).field() == "kernels[0].release_time");
}

TEST_CASE("try_simulate answers infeasibility with a named result instead of an exception", "[simulator][errors]") {
  Scenario s = mini(2, {kernel("fine", 1, 32, 1),
                        R"({"name": "huge", "blocks": 1, "threads": 1024, "regs": 255, "smem": 0, "duration": 1})"});
  FeasibilityCheck why;
  CHECK_FALSE(try_simulate(s, test::hyp("alg1"), &why).has_value());
  CHECK(why.status == Feasibility::KernelNeverFits);
  CHECK(why.kernel == 1);
  CHECK(why.field == "kernels[1]");
  CHECK(to_string(why.status) == "kernel-never-fits");
  CHECK(why.to_json()["status"] == "kernel-never-fits");
  // The reason is the one simulate() raises, word for word.
  try {
    simulate(s, test::hyp("alg1"));
    FAIL("no InputError");
  } catch (const InputError& e) {
    CHECK(e.reason() == why.reason);
  }
  // Without the huge kernel it runs, and gives simulate()'s schedule.
  s.kernels.pop_back();
  auto ok = try_simulate(s, test::hyp("alg1"), &why);
  REQUIRE(ok.has_value());
  CHECK(why.runs());
  CHECK(ok->kernels.at(0).blocks == simulate(s, test::hyp("alg1")).kernels.at(0).blocks);
  // gpc-priority on a device without a GPC map: NoGpcMap, blamed on the device.
  CHECK_FALSE(try_simulate(s, test::hyp("fermi"), &why).has_value());
  CHECK(why.status == Feasibility::NoGpcMap);
  CHECK(why.field == "device");
  CHECK_THAT(why.reason, Catch::Contains("GPC map"));
}

TEST_CASE("retirement start-order dispatches after the first tied retirement, all-then-dispatch after all of them", "[simulator][retirement]") {
  const model::Scenario s = test::tied_retirements_scenario();
  model::Hypothesis start = test::hyp("alg1");
  start.retirement = model::Retirement::StartOrder;
  const model::Schedule all = model::simulate(s, test::hyp("alg1")), one = model::simulate(s, start);
  // Both readings agree up to the tie: k2 on SM 1 from 0, k3 on SM 0 from 1, both ending at 3.
  for (const auto* sch : {&all, &one}) {
    CHECK(sch->kernels[1].blocks[0].sm == 1);
    CHECK(sch->kernels[2].blocks[0].sm == 0);
    CHECK(sch->kernels[2].blocks[0].start == 1);
    CHECK(sch->kernels[3].blocks[0].start == 3);
  }
  // Every block retired: both SMs empty, most room ties to the first SM in the order.
  CHECK(all.kernels[3].blocks[0].sm == 0);
  // k2 started first, so it retires first, and k4 takes its SM before k3 has retired.
  CHECK(one.kernels[3].blocks[0].sm == 1);
}

TEST_CASE("retirement start-order changes nothing where no two blocks end together", "[simulator][retirement]") {
  model::Scenario s = test::tied_retirements_scenario();
  s.kernels[2].duration = 3;  // k3 now ends at 4, after k2
  model::Hypothesis start = test::hyp("alg1");
  start.retirement = model::Retirement::StartOrder;
  const model::Schedule a = model::simulate(s, start), b = model::simulate(s, test::hyp("alg1"));
  for (size_t k = 0; k < s.kernels.size(); ++k) CHECK(a.kernels[k].blocks == b.kernels[k].blocks);
}

TEST_CASE("predict_all streams each schedule and skips the hypotheses that cannot run the scenario", "[simulator]") {
  // fermi needs a GPC map rtx3090 has not: with others it is skipped and named; alone, or with only others that
  // cannot run the scenario either, it is an error naming the scenario's file.
  const model::Scenario s = test::scenario(R"({"device": "rtx3090", "kernels": [
    {"name": "k", "blocks": 100, "threads": 128, "regs": 32, "duration": 1}]})");
  const std::vector<model::Hypothesis> hs = {test::hyp("alg1"), test::hyp("fermi"), test::hyp("round-robin")};
  std::vector<size_t> seen;
  const model::PredictAllResult r = model::predict_all(s, hs, "in.json", [&](size_t i, model::Schedule&& sch) {
    seen.push_back(i);
    CHECK(sch.hypothesis == hs[i].name);
    CHECK(sch.to_json() == model::simulate(s, hs[i]).to_json());
  });
  CHECK(seen == std::vector<size_t>{0, 2});
  CHECK(r.ran == 2);
  REQUIRE(r.skipped.size() == 1);
  CHECK(r.skipped[0].rfind("fermi: ", 0) == 0);
  try {
    model::predict_all(s, {test::hyp("fermi")}, "in.json", [](size_t, model::Schedule&&) {});
    FAIL("fermi alone ran on a device without a GPC map");
  } catch (const model::InputError& e) {
    CHECK(e.where() == "in.json");
  }
  try {
    model::predict_all(s, {test::hyp("fermi"), test::hyp("fermi")}, "in.json", [](size_t, model::Schedule&&) {});
    FAIL("no hypothesis could run the scenario, yet no error");
  } catch (const model::InputError& e) {
    CHECK(e.field() == "--hypothesis");
    CHECK(std::string(e.what()).find("no hypothesis can run this scenario") != std::string::npos);
  }
}
