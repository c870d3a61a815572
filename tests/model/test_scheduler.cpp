// The stepping Scheduler against simulate(): driven with a schedule's own end times it must place every block
// exactly where and when simulate() did; plus its refusals, its none-fits answer and its bad-input errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <string>
#include <sys/wait.h>
#include <vector>

#include "helpers.hpp"
#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/scheduler.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/random.hpp"
#include "tbcheck/testing/conformance.hpp"

using namespace tbcheck;
using model::Scheduler;

namespace {

// What a cycle-level simulator does with the Scheduler (docs/stepping.md), with each block's end taken from
// `ref` (the schedule being reproduced): kernels launched at their release times, blocks retired at their
// ends as the hypothesis' retirement option says, placements asked for at every instant something happened.
model::Schedule step_through(const model::Scenario& s, const model::Hypothesis& h, const model::Schedule& ref) {
  Scheduler sch(s.device, h);
  model::Schedule out;
  out.hypothesis = h.name;
  out.device = s.device.name;
  out.sms = s.device.sms;
  for (const auto& k : s.kernels) out.kernels.push_back({k.name, std::vector<model::BlockPlacement>(static_cast<size_t>(k.blocks))});
  std::map<int64_t, std::vector<std::pair<int, int>>> ending;  // end -> (kernel, block) in placement order
  auto place = [&](int64_t t) {
    const model::PlaceResult r = sch.place(t);
    CHECK((r.status == model::PlaceStatus::Placed) == !r.placements.empty());
    for (const auto& p : r.placements) {
      const int64_t end = ref.kernels[static_cast<size_t>(p.kernel)].blocks[static_cast<size_t>(p.block)].end;
      out.kernels[static_cast<size_t>(p.kernel)].blocks[static_cast<size_t>(p.block)] = {p.sm, t, end};
      ending[end].push_back({p.kernel, p.block});
    }
  };
  size_t launched = 0;
  int64_t t = 0;
  while (true) {
    while (launched < s.kernels.size() && s.kernels[launched].release <= t) {
      const model::Launch l = sch.launch(s.kernels[launched], t);
      REQUIRE(l.accepted());
      REQUIRE(l.kernel == static_cast<int>(launched));
      ++launched;
    }
    std::vector<std::pair<int, int>> now;
    if (auto it = ending.find(t); it != ending.end()) {
      now = std::move(it->second);
      ending.erase(it);
    }
    switch (h.retirement) {
      case model::Retirement::AllThenDispatch:
        for (auto [k, b] : now) sch.retire(k, b, t);
        place(t);
        break;
      case model::Retirement::StartOrder:
        if (now.empty()) place(t);
        for (auto [k, b] : now) {
          sch.retire(k, b, t);
          place(t);
        }
        break;
    }
    const bool more_launches = launched < s.kernels.size();
    if (ending.empty() && !more_launches) break;
    t = ending.empty() ? s.kernels[launched].release
        : more_launches ? std::min(ending.begin()->first, s.kernels[launched].release)
                        : ending.begin()->first;
  }
  CHECK(sch.in_flight() == 0);
  return out;
}

// Every block's (SM, start, end), kernel by kernel.
std::vector<std::vector<model::BlockPlacement>> blocks_of(const model::Schedule& sch) {
  std::vector<std::vector<model::BlockPlacement>> out;
  for (const auto& k : sch.kernels) out.push_back(k.blocks);
  return out;
}

// Steps s under h and compares with the simulator, with durations and with jittered recorded ends; returns
// whether the scenario ran (false: refused by check_feasibility, nothing compared).
bool conforms(const model::Scenario& s, const model::Hypothesis& h) {
  model::FeasibilityCheck why;
  const auto plain = model::try_simulate(s, h, &why);
  if (!plain) return false;
  INFO(h.name << " on " << s.to_json().dump());
  CHECK(blocks_of(step_through(s, h, *plain)) == blocks_of(*plain));
  // Ends that are not start + duration (a recording's): the stepping caller owns time.
  const model::EndTimeSource jitter = [&](int k, int b, int64_t start) {
    return start + s.kernels[static_cast<size_t>(k)].duration + (k * 7 + b * 3 + start) % 4 - 1;
  };
  const auto jittered = model::try_simulate(s, h, nullptr, &jitter);
  REQUIRE(jittered);
  CHECK(blocks_of(step_through(s, h, *jittered)) == blocks_of(*jittered));
  return true;
}

std::vector<model::Hypothesis> steppable_hypotheses(const model::Device& d) {
  std::vector<model::Hypothesis> out;
  for (const auto& h : model::builtin_hypotheses())
    if (Scheduler::support(d, h).runs()) out.push_back(h);
  // A few compositions besides: every 97th of the composition space, and start-order retirement on
  // shipped bases.
  const auto& all = model::all_compositions();
  for (size_t i = 0; i < all.size(); i += 97)
    if (Scheduler::support(d, all[i]).runs()) out.push_back(all[i]);
  for (const char* base : {"alg1", "most-room", "round-robin"}) {
    model::Hypothesis h = test::hyp(base);
    h.name = std::string(base) + "-start-order";
    h.retirement = model::Retirement::StartOrder;
    out.push_back(h);
  }
  return out;
}

}  // namespace

TEST_CASE("scheduler: stepping with simulate's end times reproduces simulate on random scenarios for every steppable hypothesis",
          "[scheduler][conformance]") {
  const model::Device rtx = model::builtin_device("rtx3090", "test", "device");
  const model::Device h100 = model::builtin_device("h100-sxm-assumed-gpcs", "test", "device");
  const auto hyps = steppable_hypotheses(rtx);
  // Clustered scenarios only for hypotheses the cluster rule is defined for.
  const auto pair = test::scenario(R"({"device": "h100-sxm-assumed-gpcs", "kernels": [
    {"name": "c", "blocks": 2, "threads": 32, "regs": 32, "duration": 1, "cluster": [2]}]})");
  REQUIRE(hyps.size() > model::builtin_hypotheses().size());
  int compared = 0;
  for (const auto& h : hyps) {
    search::RandomOptions o;
    o.max_duration = 4;  // short durations: many tied retirements
    for (int i = 0; i < 3; ++i) compared += conforms(search::random_case(rtx, 11, i, o).c.scenario, h);
    for (unsigned seed = 1; seed <= 4; ++seed) {
      compared += conforms(smt::random_control_scenario(seed, rtx), h);
      compared += conforms(smt::random_release_scenario(seed * 13, rtx), h);
      compared += conforms(smt::random_tie_scenario(seed * 7, rtx), h);
      if (model::check_feasibility(pair, h).runs())
        compared += conforms(smt::random_cluster_scenario(seed * 5, h100, h), h);
    }
  }
  // Most scenarios run under most hypotheses: the comparison is not vacuous.
  CHECK(compared > static_cast<int>(hyps.size()) * 10);
}

TEST_CASE("scheduler: a stream successor launched early waits for its predecessor's last retirement", "[scheduler]") {
  const auto s = test::scenario(R"({"device": )" + test::mini_device(2) + R"(, "kernels": [
    {"name": "a", "blocks": 2, "threads": 32, "regs": 32, "duration": 5, "stream": 1},
    {"name": "b", "blocks": 1, "threads": 32, "regs": 32, "duration": 1, "stream": 1}]})");
  Scheduler sch(s.device, test::hyp("alg1"));
  REQUIRE(sch.launch(s.kernels[0], 0).kernel == 0);
  REQUIRE(sch.launch(s.kernels[1], 0).kernel == 1);
  const auto first = sch.place(0);
  CHECK(first.placements.size() == 2);
  CHECK(sch.blocks_left(1) == 1);
  sch.retire(0, 0, 5);
  CHECK(sch.place(5).status == model::PlaceStatus::NothingEligible);
  sch.retire(0, 1, 5);
  const auto second = sch.place(5);
  REQUIRE(second.placements.size() == 1);
  CHECK(second.placements[0].kernel == 1);
}

TEST_CASE("scheduler: none fits now and then fits after a retirement", "[scheduler]") {
  // One block of 1024 threads fills an SM's warps (48 per SM): on 2 SMs the third block waits.
  const auto s = test::scenario(R"({"device": )" + test::mini_device(2) + R"(, "kernels": [
    {"name": "big", "blocks": 3, "threads": 1024, "regs": 32, "duration": 1}]})");
  Scheduler sch(s.device, test::hyp("alg1"));
  const model::Launch l = sch.launch(s.kernels[0], 0);
  REQUIRE(l.accepted());
  const auto r0 = sch.place(0);
  CHECK(r0.status == model::PlaceStatus::Placed);
  REQUIRE(r0.placements.size() == 2);
  CHECK(sch.room(0, l.kernel) == 0);
  const auto r1 = sch.place(1);
  CHECK(r1.status == model::PlaceStatus::NoneFits);
  CHECK(r1.placements.empty());
  CHECK(r1.to_json()["status"] == "none-fits");
  sch.retire(r0.placements[1].kernel, r0.placements[1].block, 2);
  CHECK(sch.room(r0.placements[1].sm, l.kernel) == 1);
  const auto r2 = sch.place(2);
  REQUIRE(r2.placements.size() == 1);
  CHECK(r2.placements[0] == model::Placement{0, 2, r0.placements[1].sm});
  CHECK(sch.blocks_left(0) == 0);
  CHECK(sch.in_flight() == 2);
  CHECK(sch.place(2).status == model::PlaceStatus::NothingEligible);
}

TEST_CASE("scheduler: place into a caller's buffer appends what place() returns", "[scheduler]") {
  const auto s = test::scenario(R"({"device": )" + test::mini_device(2) + R"(, "kernels": [
    {"name": "big", "blocks": 3, "threads": 1024, "regs": 32, "duration": 1},
    {"name": "small", "blocks": 2, "threads": 32, "regs": 32, "duration": 1}]})");
  Scheduler by_value(s.device, test::hyp("alg1")), by_buffer(s.device, test::hyp("alg1"));
  for (Scheduler* sch : {&by_value, &by_buffer})
    for (const auto& k : s.kernels) REQUIRE(sch->launch(k, 0).accepted());
  const model::Placement kept{7, 7, 7};
  std::vector<model::Placement> buffer{kept};
  const model::PlaceResult r0 = by_value.place(0);
  CHECK(by_buffer.place(0, buffer) == r0.status);
  REQUIRE(buffer.size() == r0.placements.size() + 1);
  CHECK(buffer[0] == kept);
  CHECK(std::equal(r0.placements.begin(), r0.placements.end(), buffer.begin() + 1));
  buffer.clear();
  CHECK(by_buffer.place(1, buffer) == model::PlaceStatus::NoneFits);
  CHECK(buffer.empty());
  by_value.retire(0, 0, 2);
  by_buffer.retire(0, 0, 2);
  const model::PlaceResult r2 = by_value.place(2);
  CHECK(by_buffer.place(2, buffer) == model::PlaceStatus::Placed);
  CHECK(buffer == r2.placements);
}

TEST_CASE("scheduler: retire refuses a block never placed and a time before the last call", "[scheduler]") {
  const auto s = test::scenario(R"({"device": )" + test::mini_device(2) + R"(, "kernels": [
    {"name": "big", "blocks": 3, "threads": 1024, "regs": 32, "duration": 1}]})");
  Scheduler sch(s.device, test::hyp("alg1"));
  REQUIRE(sch.launch(s.kernels[0], 0).accepted());
  REQUIRE(sch.place(1).placements.size() == 2);
  auto e = test::error_of([&] { sch.retire(0, 2, 1); });  // the third block waits: never placed
  CHECK(e.field() == "block");
  CHECK_THAT(e.reason(), Catch::Contains("block 2 of kernel 0 was never placed"));
  e = test::error_of([&] { sch.retire(0, -1, 1); });
  CHECK(e.field() == "block");
  CHECK_THAT(e.reason(), Catch::Contains("no block -1"));
  e = test::error_of([&] { sch.retire(-1, 0, 1); });
  CHECK(e.field() == "kernel");
  e = test::error_of([&] { sch.retire(0, 0, 0); });
  CHECK(e.field() == "now");
  CHECK_THAT(e.reason(), Catch::Contains("retire at time 0, before the previous call's time 1"));
  CHECK(sch.in_flight() == 2);
  sch.retire(0, 0, 1);
  CHECK(sch.in_flight() == 1);
}

TEST_CASE("scheduler: gpc-priority is refused at construction with its reason", "[scheduler][fermi]") {
  const model::Device quadro = model::builtin_device("quadro6000", "test", "device");
  const model::FeasibilityCheck f = Scheduler::support(quadro, test::hyp("fermi"));
  CHECK(f.status == model::Feasibility::Unsupported);
  CHECK(f.field == "selection");
  CHECK_THAT(f.reason, Catch::Contains("no stepping form"));
  const model::InputError e = test::error_of([&] { Scheduler s(quadro, test::hyp("fermi")); });
  CHECK(e.where() == "scheduler");
  CHECK(e.field() == "selection");
  CHECK(Scheduler::support(quadro, test::hyp("alg1")).runs());
}

TEST_CASE("scheduler: a kernel that never fits is a refusal value, not a launch", "[scheduler]") {
  Scheduler sch(model::builtin_device("rtx3090", "test", "device"), test::hyp("alg1"));
  model::Kernel k;
  k.name = "huge";
  k.threads = 1024;
  k.regs = 255;  // 1024 x 255 registers exceed an SM's 65536
  const model::Launch l = sch.launch(k, 0);
  CHECK_FALSE(l.accepted());
  CHECK(l.kernel == -1);
  CHECK(l.check.status == model::Feasibility::KernelNeverFits);
  CHECK(l.check.field == "kernel");
  CHECK(l.to_json()["check"]["status"] == "kernel-never-fits");
  CHECK(sch.kernels() == 0);
}

TEST_CASE("scheduler: bad input is an InputError naming the field", "[scheduler]") {
  const auto s = test::scenario(R"({"device": )" + test::mini_device(2) + R"(, "kernels": [
    {"name": "k", "blocks": 2, "threads": 32, "regs": 32, "duration": 1}]})");
  Scheduler sch(s.device, test::hyp("alg1"));
  REQUIRE(sch.launch(s.kernels[0], 3).accepted());
  const auto placed = sch.place(3);
  REQUIRE(placed.placements.size() == 2);
  auto e = test::error_of([&] { sch.retire(4, 0, 3); });
  CHECK(e.field() == "kernel");
  CHECK_THAT(e.reason(), Catch::Contains("no kernel 4"));
  e = test::error_of([&] { sch.retire(0, 9, 3); });
  CHECK(e.field() == "block");
  sch.retire(0, 0, 4);
  e = test::error_of([&] { sch.retire(0, 0, 4); });
  CHECK_THAT(e.reason(), Catch::Contains("already retired"));
  e = test::error_of([&] { sch.place(2); });
  CHECK(e.field() == "now");
  CHECK_THAT(e.reason(), Catch::Contains("before the previous call's time 4"));
  model::Kernel wide = s.kernels[0];
  wide.threads = 4096;
  e = test::error_of([&] { sch.launch(wide, 5); });
  CHECK(e.field() == "kernel.threads");
  CHECK_THAT(e.reason(), Catch::Contains("4096 threads"));
  e = test::error_of([&] { sch.room(7, 0); });
  CHECK(e.field() == "sm");
  // The failed calls changed nothing: the second block still retires.
  sch.retire(0, 1, 5);
  CHECK(sch.in_flight() == 0);
}

TEST_CASE("scheduler: the docs' stepping example builds runs and matches simulate", "[scheduler][docs]") {
  std::string out;
  FILE* p = popen((std::string("'") + TBCHECK_STEPPING_EXAMPLE + "' 2>&1").c_str(), "r");
  REQUIRE(p);
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  INFO(out);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_THAT(out, Catch::Contains("matches simulate(): yes"));
}

TEST_CASE("a copied scheduler steps on alone from the state it was copied in") {
  // Two SMs of one 1024-thread block each: which block retires first decides where the third goes.
  const model::Scenario s = test::scenario(R"({"device": )" + test::mini_device(2) + R"(, "kernels": [
    {"name": "k1", "blocks": 3, "threads": 1024, "regs": 32, "smem": 0, "duration": 1}]})");
  Scheduler sch(s.device, *model::find_builtin_hypothesis("alg1"));
  REQUIRE(sch.launch(s.kernels[0], 0).accepted());
  const model::PlaceResult first = sch.place(0);
  REQUIRE(first.placements.size() == 2);
  Scheduler copy = sch;
  // The copy retires the block on the first wave's second SM, the original the one on its first.
  copy.retire(0, first.placements[1].block, 1);
  sch.retire(0, first.placements[0].block, 1);
  const model::PlaceResult from_copy = copy.place(1), from_original = sch.place(1);
  REQUIRE(from_copy.placements.size() == 1);
  REQUIRE(from_original.placements.size() == 1);
  CHECK(from_copy.placements[0].sm == first.placements[1].sm);
  CHECK(from_original.placements[0].sm == first.placements[0].sm);
  CHECK(copy.in_flight() == 2);
  CHECK(sch.in_flight() == 2);
  // The copy outlives the original: the device and hypothesis they share stay.
  sch = Scheduler(s.device, *model::find_builtin_hypothesis("round-robin"));
  CHECK(copy.hypothesis().name == "alg1");
  CHECK(copy.room(first.placements[0].sm, 0) == 0);
}
