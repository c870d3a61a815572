// Judging schedules: each fact kind passing and failing with its detail, recordings at the exact,
// counts and sms levels (which can disagree), and how CaseResult::at combines facts and levels.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "helpers.hpp"
#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/simulator.hpp"

using namespace tbcheck;
using namespace tbcheck::model;

namespace {

const char* kMiniDevice = R"({"name": "mini-ampere-4", "cc": "8.6", "sms": 4, "sms_per_tpc": 2, "pbs_per_sm": 4,
    "max_blocks_per_sm": 16, "max_warps_per_sm": 48, "max_threads_per_block": 1024, "regs_per_sm": 65536,
    "reg_alloc_unit": 256, "max_regs_per_thread": 255, "smem_configs_kb": [0, 8, 16, 32, 64, 100],
    "smem_alloc_unit": 128, "smem_reserved_per_block": 1024, "max_smem_per_block": 101376})";

// k1: 3 blocks, k2: 1 block, k3: 1 block; the schedule below is written by hand (it need not be
// one a hypothesis would produce: compare judges any schedule).
Scenario three_kernels() {
  return test::scenario(std::string(R"({"device": )") + kMiniDevice + R"(, "kernels": [
      {"name": "k1", "blocks": 3, "threads": 32, "regs": 32, "duration": 2},
      {"name": "k2", "blocks": 1, "threads": 32, "regs": 32, "duration": 1},
      {"name": "k3", "blocks": 1, "threads": 32, "regs": 32, "duration": 1}]})");
}

// k1: SM0 [0,2), SM1 [0,2), SM0 [2,4); k2: SM1 [2,3); k3: SM0 [4,5).
Schedule hand_schedule() {
  Schedule s;
  s.hypothesis = "hand";
  s.device = "mini-ampere-4";
  s.sms = 4;
  s.kernels = {{"k1", {{0, 0, 2}, {1, 0, 2}, {0, 2, 4}}}, {"k2", {{1, 2, 3}}}, {"k3", {{0, 4, 5}}}};
  return s;
}

Fact on_sms(const std::string& k, std::vector<int> sms) {
  Fact f;
  f.kind = Fact::Kind::OnSms;
  f.kernel = k;
  f.sms = std::move(sms);
  return f;
}
Fact block_on(const std::string& k, int block, int sm) {
  Fact f;
  f.kind = Fact::Kind::BlockOnSm;
  f.kernel = k;
  f.block = block;
  f.sm = sm;
  return f;
}
Fact starts_at(const std::string& k, int t) {
  Fact f;
  f.kind = Fact::Kind::StartsAt;
  f.kernel = k;
  f.time = t;
  return f;
}
Fact relation(Fact::Kind kind, const std::string& k, std::vector<std::string> others) {
  Fact f;
  f.kind = kind;
  f.kernel = k;
  f.kernels = std::move(others);
  return f;
}

Observation recording(std::vector<int> k1_sms, std::vector<int> k1_starts = {}) {
  Observation o;
  o.kind = ObservationKind::Hardware;
  o.sm_of_block["k1"] = std::move(k1_sms);
  if (!k1_starts.empty()) o.start_of_block["k1"] = std::move(k1_starts);
  return o;
}

}  // namespace

TEST_CASE("facts: on_sms", "[compare][facts]") {
  Scenario s = three_kernels();
  Schedule sch = hand_schedule();
  Check pass = check_fact(on_sms("k1", {1, 0}), s, sch);  // a set: order does not matter
  CHECK(pass.verdict == Verdict::Pass);
  CHECK(pass.detail.empty());
  Check fail = check_fact(on_sms("k1", {0}), s, sch);
  CHECK(fail.verdict == Verdict::Fail);
  CHECK(fail.detail == "k1 blocks predicted on SMs [0, 1], observed [0]");
  Check extra = check_fact(on_sms("k2", {1, 3}), s, sch);
  CHECK(extra.verdict == Verdict::Fail);
  CHECK(extra.detail == "k2 blocks predicted on SMs [1], observed [1, 3]");
}

TEST_CASE("facts: block on SM", "[compare][facts]") {
  Scenario s = three_kernels();
  Schedule sch = hand_schedule();
  CHECK(check_fact(block_on("k1", 2, 0), s, sch).verdict == Verdict::Pass);
  CHECK(check_fact(block_on("k1", 1, 1), s, sch).verdict == Verdict::Pass);
  Check fail = check_fact(block_on("k1", 2, 1), s, sch);
  CHECK(fail.verdict == Verdict::Fail);
  CHECK(fail.detail == "k1 block 2 predicted on SM 0, observed SM 1");
}

TEST_CASE("facts: starts at", "[compare][facts]") {
  Scenario s = three_kernels();
  Schedule sch = hand_schedule();
  CHECK(check_fact(starts_at("k2", 2), s, sch).verdict == Verdict::Pass);
  CHECK(check_fact(starts_at("k1", 0), s, sch).verdict == Verdict::Pass);  // the first block's start
  Check fail = check_fact(starts_at("k2", 0), s, sch);
  CHECK(fail.verdict == Verdict::Fail);
  CHECK(fail.detail == "k2 predicted to start at 2, observed 0");
}

TEST_CASE("facts: starts after", "[compare][facts]") {
  Scenario s = three_kernels();
  Schedule sch = hand_schedule();
  // k3 starts at 4: k1 finished at 4 (equal instants count as after), k2 at 3.
  CHECK(check_fact(relation(Fact::Kind::StartsAfter, "k3", {"k1", "k2"}), s, sch).verdict == Verdict::Pass);
  Check fail = check_fact(relation(Fact::Kind::StartsAfter, "k2", {"k1"}), s, sch);
  CHECK(fail.verdict == Verdict::Fail);
  CHECK(fail.detail == "k2 predicted to start at 2, before k1 finished at 4; observed only after");
  // The first kernel of the list that is violated is named.
  Check second = check_fact(relation(Fact::Kind::StartsAfter, "k2", {"k3", "k1"}), s, sch);
  CHECK(second.verdict == Verdict::Fail);
  CHECK(second.detail == "k2 predicted to start at 2, before k3 finished at 5; observed only after");
}

TEST_CASE("facts: concurrent with", "[compare][facts]") {
  Scenario s = three_kernels();
  Schedule sch = hand_schedule();
  // k2 [2,3) overlaps k1's block 2 [2,4).
  CHECK(check_fact(relation(Fact::Kind::ConcurrentWith, "k2", {"k1"}), s, sch).verdict == Verdict::Pass);
  CHECK(check_fact(relation(Fact::Kind::ConcurrentWith, "k1", {"k2"}), s, sch).verdict == Verdict::Pass);
  // k3 [4,5) only touches k1's end at 4: not concurrent.
  Check touch = check_fact(relation(Fact::Kind::ConcurrentWith, "k3", {"k1"}), s, sch);
  CHECK(touch.verdict == Verdict::Fail);
  CHECK(touch.detail == "k3 predicted never to run at the same time as k1 (4-5 vs 0-4); observed concurrent");
  // The other way round: k3 starts exactly when k1's last block ends.
  Check touch2 = check_fact(relation(Fact::Kind::ConcurrentWith, "k1", {"k3"}), s, sch);
  CHECK(touch2.verdict == Verdict::Fail);
  CHECK(touch2.detail == "k1 predicted never to run at the same time as k3 (0-4 vs 4-5); observed concurrent");
  Check fail = check_fact(relation(Fact::Kind::ConcurrentWith, "k2", {"k1", "k3"}), s, sch);
  CHECK(fail.verdict == Verdict::Fail);
  CHECK(fail.detail == "k2 predicted never to run at the same time as k3 (2-3 vs 4-5); observed concurrent");
}

TEST_CASE("recordings: exact, counts and sms levels", "[compare][levels]") {
  Scenario s = three_kernels();
  Schedule sch = hand_schedule();  // k1 on SMs 0, 1, 0

  SECTION("identical recording passes every level") {
    Observation o = recording({0, 1, 0}, {0, 0, 2});
    for (Level l : kAllLevels) {
      INFO(to_string(l));
      CHECK(compare_recording(o, s, sch, l).verdict == Verdict::Pass);
    }
  }
  SECTION("the same counts per SM in another block order: counts and sms pass, exact fails") {
    Observation o = recording({1, 0, 0});
    Check exact = compare_recording(o, s, sch, Level::Exact);
    CHECK(exact.verdict == Verdict::Fail);
    CHECK(exact.detail == "k1 block 0: predicted SM 0, observed SM 1");
    CHECK(compare_recording(o, s, sch, Level::Counts).verdict == Verdict::Pass);
    CHECK(compare_recording(o, s, sch, Level::Sms).verdict == Verdict::Pass);
  }
  SECTION("the same SMs with other counts: sms passes, counts and exact fail") {
    Observation o = recording({0, 1, 1});
    Check counts = compare_recording(o, s, sch, Level::Counts);
    CHECK(counts.verdict == Verdict::Fail);
    CHECK(counts.detail == "k1 on SM 0: predicted 2 blocks, observed 1");
    CHECK(compare_recording(o, s, sch, Level::Sms).verdict == Verdict::Pass);
    Check exact = compare_recording(o, s, sch, Level::Exact);
    CHECK(exact.verdict == Verdict::Fail);
    CHECK(exact.detail == "k1 block 2: predicted SM 0, observed SM 1");
  }
  SECTION("other SMs: every level fails") {
    Observation o = recording({0, 2, 0});
    Check sms = compare_recording(o, s, sch, Level::Sms);
    CHECK(sms.verdict == Verdict::Fail);
    CHECK(sms.detail == "k1 SM 1: predicted used, observed unused");
    Check counts = compare_recording(o, s, sch, Level::Counts);
    CHECK(counts.verdict == Verdict::Fail);
    CHECK(counts.detail == "k1 on SM 1: predicted 1 blocks, observed 0");
    CHECK(compare_recording(o, s, sch, Level::Exact).detail == "k1 block 1: predicted SM 1, observed SM 2");
  }
  SECTION("a start that differs fails exact only") {
    Observation o = recording({0, 1, 0}, {0, 0, 3});
    Check exact = compare_recording(o, s, sch, Level::Exact);
    CHECK(exact.verdict == Verdict::Fail);
    CHECK(exact.detail == "k1 block 2: predicted start 2, observed 3");
    CHECK(compare_recording(o, s, sch, Level::Counts).verdict == Verdict::Pass);
  }
  SECTION("starts only: counts and sms are unsupported") {
    Observation o;
    o.start_of_block["k2"] = {2};
    CHECK(compare_recording(o, s, sch, Level::Exact).verdict == Verdict::Pass);
    Check counts = compare_recording(o, s, sch, Level::Counts);
    CHECK(counts.verdict == Verdict::Unsupported);
    CHECK(counts.detail == "no SM recording");
    CHECK(compare_recording(o, s, sch, Level::Sms).verdict == Verdict::Unsupported);
    o.start_of_block["k2"] = {1};
    CHECK(compare_recording(o, s, sch, Level::Exact).detail == "k2 block 0: predicted start 2, observed 1");
  }
  SECTION("the first difference is in the earliest kernel") {
    Observation o = recording({0, 1, 0});
    o.sm_of_block["k3"] = {3};
    o.sm_of_block["k2"] = {2};
    CHECK(compare_recording(o, s, sch, Level::Exact).detail == "k2 block 0: predicted SM 1, observed SM 2");
  }
}

TEST_CASE("levels: names", "[compare][levels]") {
  CHECK(level_from_string("exact") == Level::Exact);
  CHECK(level_from_string("counts") == Level::Counts);
  CHECK(level_from_string("sms") == Level::Sms);
  CHECK_THROWS_AS(level_from_string("approximately"), InputError);
  CHECK(to_string(Verdict::Unsupported) == "unsupported");
}

TEST_CASE("CaseResult::at combines facts and the recording level", "[compare][result]") {
  CaseResult r;
  r.ran = true;
  r.facts = Verdict::Pass;
  r.fact_checks = {Check{}};
  r.exact = Check{Verdict::Fail, "k1 block 0: predicted SM 0, observed SM 1"};
  r.counts = Check{};
  r.sms = Check{};
  CHECK(r.at(Level::Exact) == Verdict::Fail);
  CHECK(r.at(Level::Counts) == Verdict::Pass);
  CHECK(r.at(Level::Sms) == Verdict::Pass);
  CHECK(r.first_failure(Level::Exact) == "k1 block 0: predicted SM 0, observed SM 1");
  CHECK(r.first_failure(Level::Counts) == "");

  // A failed fact fails every level, and it is the first failure reported.
  r.facts = Verdict::Fail;
  r.fact_checks = {Check{}, Check{Verdict::Fail, "k3 blocks predicted on SMs [0], observed [1]"}};
  for (Level l : kAllLevels) CHECK(r.at(l) == Verdict::Fail);
  CHECK(r.first_failure(Level::Counts) == "k3 blocks predicted on SMs [0], observed [1]");
  CHECK(r.first_failure(Level::Exact) == "k3 blocks predicted on SMs [0], observed [1]");

  // Facts only.
  CaseResult f;
  f.ran = true;
  f.facts = Verdict::Pass;
  CHECK(f.at(Level::Exact) == Verdict::Pass);
  // A recording only.
  CaseResult g;
  g.ran = true;
  g.exact = Check{};
  g.counts = Check{Verdict::Unsupported, "no SM recording"};
  CHECK(g.at(Level::Exact) == Verdict::Pass);
  CHECK(g.at(Level::Counts) == Verdict::Unsupported);  // nothing judged at that level
  CHECK(g.at(Level::Sms) == Verdict::Unsupported);
  // Nothing to judge, or not run.
  CaseResult e;
  e.ran = true;
  CHECK(e.at(Level::Exact) == Verdict::Unsupported);
  CaseResult n;
  n.ran = false;
  n.facts = Verdict::Pass;
  n.reason = "kernel k can never be placed";
  CHECK(n.at(Level::Exact) == Verdict::Unsupported);
  CHECK(n.first_failure(Level::Exact) == "kernel k can never be placed");
}

TEST_CASE("evaluate: a case judged under two hypotheses", "[compare][result]") {
  // k2 follows k1 in one stream on an idle GPU at t=1: round-robin's pointer sends it to SM1,
  // most-room to SM0. The case records SM1.
  json j = json::parse(std::string(R"({"id": "rr-pointer", "source": "test", "device": )") + kMiniDevice + R"(,
      "kernels": [{"name": "k1", "blocks": 1, "threads": 32, "regs": 32, "duration": 1, "stream": 0},
                  {"name": "k2", "blocks": 1, "threads": 32, "regs": 32, "duration": 1, "stream": 0}],
      "observation": {"kind": "hardware", "sm_of_block": {"k1": [0], "k2": [1]}, "start_of_block": {"k1": [0], "k2": [1]},
                      "facts": [{"kernel": "k2", "on_sms": [1]}, {"kernel": "k2", "starts_after": ["k1"]}]}})");
  Case c = case_from_json(j, "rr.json");

  CaseResult rr = evaluate(c, test::hyp("round-robin"));
  CHECK(rr.ran);
  CHECK(rr.case_id == "rr-pointer");
  CHECK(rr.hypothesis == "round-robin");
  CHECK(rr.facts == Verdict::Pass);
  for (Level l : kAllLevels) CHECK(rr.at(l) == Verdict::Pass);

  CaseResult mr = evaluate(c, test::hyp("most-room"));
  CHECK(mr.ran);
  CHECK(mr.facts == Verdict::Fail);
  REQUIRE(mr.fact_checks.size() == 2);
  CHECK(mr.fact_checks[0].detail == "k2 blocks predicted on SMs [0], observed [1]");
  CHECK(mr.fact_checks[1].verdict == Verdict::Pass);
  REQUIRE(mr.exact.has_value());
  CHECK(mr.exact->detail == "k2 block 0: predicted SM 0, observed SM 1");
  CHECK(mr.counts->detail == "k2 on SM 0: predicted 1 blocks, observed 0");
  CHECK(mr.sms->detail == "k2 SM 0: predicted used, observed unused");
  for (Level l : kAllLevels) CHECK(mr.at(l) == Verdict::Fail);
  json out = to_json(mr);
  CHECK(out["levels"]["exact"]["verdict"] == "fail");
  CHECK(out["levels"]["exact"]["first_difference"] == "k2 blocks predicted on SMs [0], observed [1]");
  CHECK(out["facts"] == "fail");
}

TEST_CASE("evaluate: cases that cannot be judged", "[compare][result]") {
  json j = json::parse(std::string(R"({"id": "huge", "device": )") + kMiniDevice + R"(,
      "kernels": [{"name": "big", "blocks": 1, "threads": 1024, "regs": 255, "duration": 1}],
      "observation": {"facts": [{"kernel": "big", "on_sms": [0]}]}})");
  Case c = case_from_json(j, "huge.json");
  CaseResult r = evaluate(c, test::hyp("alg1"));
  CHECK_FALSE(r.ran);
  CHECK_THAT(r.reason, Catch::Contains("kernel big can never be placed"));
  CHECK(r.at(Level::Exact) == Verdict::Unsupported);
  CHECK(to_json(r)["verdict"] == "unsupported");

  j.erase("observation");
  CaseResult none = evaluate(case_from_json(j, "huge.json"), test::hyp("alg1"));
  CHECK_FALSE(none.ran);
  CHECK(none.reason == "the case has no observation");
}
