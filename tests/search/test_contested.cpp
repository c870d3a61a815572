// Tests of search/src/contested.cpp: which evidence judges the candidates (device, architecture, none),
// eliminations and open cases, settled and contested blocks with their sides, and the settling case.
#include <catch2/catch.hpp>

#include <filesystem>

#include "helpers.hpp"
#include "tbcheck/model/hypothesis_list.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/contested.hpp"

using namespace tbcheck;
using tbcheck::test::hyp;

namespace {

model::Scenario grid(const std::string& device_json, int blocks) {
  return test::scenario(R"({"device": )" + device_json + R"(, "kernels": [{"name": "K1", "blocks": )" +
                        std::to_string(blocks) + R"(, "threads": 32, "regs": 32, "smem": 0, "duration": 1}]})");
}

std::string builtin(const std::string& name) { return "\"" + name + "\""; }

// A case whose recording is what `h` predicts (kind hardware, or synthetic for a prediction).
model::Case recorded(const std::string& id, const model::Scenario& sc, const model::Hypothesis& h,
                     model::ObservationKind kind = model::ObservationKind::Hardware) {
  model::Case c;
  c.id = id;
  c.scenario = sc;
  model::Observation o;
  o.kind = kind;
  for (const auto& k : model::simulate(sc, h).kernels)
    for (const auto& b : k.blocks) o.sm_of_block[k.name].push_back(b.sm);
  c.observation = o;
  return c;
}

}  // namespace

TEST_CASE("contested: with no case of the device or its architecture every candidate stands, and the blocks split", "[contested]") {
  // H100 (Hopper): the evidence is a V100 recording (Volta), so it judges nothing here.
  const std::vector<model::Hypothesis> candidates = {hyp("alg1"), hyp("alg1-paired")};
  std::vector<model::Case> evidence = {recorded("v100-640", grid(builtin("v100"), 640), hyp("alg1"))};
  search::ContestOptions o;
  o.synthesize = false;
  auto r = search::contest(grid(builtin("h100-sxm"), 269), candidates, evidence, o);  // 2M + 5
  CHECK(r.scope == search::EvidenceScope::None);
  CHECK(r.architecture == "Hopper");
  CHECK(r.evidence_cases == 0);
  CHECK(r.survivors == std::vector<std::string>{"alg1", "alg1-paired"});
  CHECK_FALSE(r.settled());
  CHECK(r.groups.size() == 2);
  CHECK(r.blocks == 269);
  CHECK(r.settled_blocks + r.contested.size() == 269);
  CHECK(r.settled_blocks >= 1);  // block 0 goes to SM 0 either way
  REQUIRE_FALSE(r.contested.empty());
  const auto& first = r.contested.front();
  CHECK(first.block == 1);
  REQUIRE(first.sides.size() == 2);
  CHECK(first.sides[0].sm == 0);  // the pair's second block
  CHECK(first.sides[0].hypotheses == std::vector<std::string>{"alg1-paired"});
  CHECK(first.sides[1].sm == 2);
  CHECK(first.sides[1].hypotheses == std::vector<std::string>{"alg1"});
  REQUIRE(r.settling.size() == 1);
  CHECK(r.settling[0].by == search::SettleBy::Scenario);
  const std::string text = r.text();
  CHECK(text.find("every candidate stands") != std::string::npos);
  CHECK(text.find("K1 block 1: SM 0 at 0 [2], SM 2 at 0 [1]") != std::string::npos);
  CHECK(text.find("Contested: 133 of 269 blocks (136 settled): K1 1-") != std::string::npos);
  CHECK(r.to_json()["evidence"]["scope"] == "none");
  CHECK(r.to_json()["verdict"] == "contested");
}

TEST_CASE("contested: a prediction fewer than two candidates run has every block settled and counted", "[contested]") {
  // 2^25 blocks of 2048 threads: no candidate runs it (rtx3090 takes 1024 per block), so nothing is contested,
  // and every block is still counted (from the kernels: walking 33 million blocks took seconds under ASan).
  model::Scenario sc = grid(builtin("rtx3090"), 1 << 24);
  sc.kernels[0].threads = 2048;
  sc.kernels.push_back(sc.kernels[0]);
  sc.kernels[1].name = "K2";
  search::ContestOptions o;
  o.synthesize = false;
  const std::vector<model::Hypothesis> candidates = {hyp("alg1"), hyp("round-robin")};
  auto r = search::contest(sc, candidates, std::vector<model::Case>{}, o);
  CHECK(r.not_run.size() == 2);
  CHECK(r.survivors.empty());
  CHECK(r.blocks == size_t{1} << 25);
  CHECK(r.settled_blocks == r.blocks);
  CHECK(r.contested.empty());
}

TEST_CASE("contested: the device's own recording eliminates a candidate and settles the prediction", "[contested]") {
  const std::vector<model::Hypothesis> candidates = {hyp("alg1"), hyp("alg1-paired")};
  // An RTX 3090 recording that pairs (what alg1-paired predicts) rejects alg1; a synthetic case (a
  // prediction) and a case of another architecture are not evidence.
  std::vector<model::Case> evidence = {
      recorded("rtx3090-169", grid(builtin("rtx3090"), 169), hyp("alg1-paired")),
      recorded("rtx3090-prediction", grid(builtin("rtx3090"), 170), hyp("alg1"), model::ObservationKind::Synthetic),
      recorded("v100-165", grid(builtin("v100"), 165), hyp("alg1"))};
  search::ContestOptions o;
  o.synthesize = false;
  auto r = search::contest(grid(builtin("rtx3090"), 300), candidates, evidence, o);
  CHECK(r.scope == search::EvidenceScope::Device);
  CHECK(r.evidence_cases == 1);
  REQUIRE(r.eliminated.size() == 1);
  CHECK(r.eliminated[0].hypothesis == "alg1");
  CHECK(r.eliminated[0].case_id == "rtx3090-169");
  CHECK(r.survivors == std::vector<std::string>{"alg1-paired"});
  CHECK(r.settled());
  CHECK(r.settled_blocks == 300);
  CHECK(r.text().find("Settled") != std::string::npos);
}

TEST_CASE("contested: another device of the architecture judges, and a case no candidate passes stays open", "[contested]") {
  // Xavier (CC 7.2, Volta) has no case; the V100's (CC 7.0) judge. One V100 "recording" puts every block
  // on SM 79, which no candidate predicts: it is open and eliminates nobody.
  model::Hypothesis any = hyp("alg1-paired");
  any.name = "alg1-paired-any";
  any.issue = model::Issue::Paired;
  const std::vector<model::Hypothesis> candidates = {hyp("alg1"), hyp("alg1-paired"), any};
  std::vector<model::Case> evidence = {recorded("v100-640", grid(builtin("v100"), 640), hyp("alg1")),
                                       recorded("v100-odd", grid(builtin("v100"), 400), hyp("round-robin"))};
  for (auto& sm : evidence[1].observation->sm_of_block["K1"]) sm = 79;
  search::ContestOptions o;
  o.synthesize = false;
  auto r = search::contest(grid(builtin("xavier"), 21), candidates, evidence, o);  // 8 SMs: 2M + 5 = 21
  CHECK(r.scope == search::EvidenceScope::Architecture);
  CHECK(r.evidence_devices == std::vector<std::string>{"v100"});
  CHECK(r.open_cases == std::vector<std::string>{"v100-odd"});
  REQUIRE(r.eliminated.size() == 1);
  CHECK(r.eliminated[0].hypothesis == "alg1-paired-any");  // pairs the V100's 640 blocks
  CHECK(r.eliminated[0].case_id == "v100-640");
  CHECK(r.survivors == std::vector<std::string>{"alg1", "alg1-paired"});
  CHECK(r.settled());  // Xavier's file has no issue_pairs: alg1-paired is alg1 there
  CHECK(r.text().find("other Volta devices (v100)") != std::string::npos);
}

TEST_CASE("contested: distinguish supplies a smaller case that settles the two sides", "[contested][distinguish]") {
  // Two SMs (a mini Ampere with issue_pairs): alg1-paired and alg1 part on a 9-block grid (2M + 5);
  // distinguish finds a case smaller than the 30-block scenario that still separates them.
  const std::vector<model::Hypothesis> candidates = {hyp("alg1"), hyp("alg1-paired")};
  auto r = search::contest(grid(test::mini_device(2), 30), candidates, std::vector<model::Case>{});
  REQUIRE_FALSE(r.settled());
  REQUIRE(r.settling.size() == 1);
  const auto& s = r.settling[0];
  INFO(s.distinguish);
  REQUIRE(s.by == search::SettleBy::Witness);
  REQUIRE(s.witness);
  CHECK(s.witness->scenario.total_blocks() < 30);
  // The witness separates the two, re-checked here by the simulators.
  CHECK(model::simulate(s.witness->scenario, hyp("alg1")).to_json()["kernels"] !=
        model::simulate(s.witness->scenario, hyp("alg1-paired")).to_json()["kernels"]);
  CHECK(r.to_json()["settling"][0]["by"] == "distinguish-witness");
}

TEST_CASE("contested: validate's predictions are judged on the run's own evidence", "[contested]") {
  model::ValidationRun run;
  run.hypotheses = {hyp("alg1"), hyp("alg1-paired")};
  run.cases = {recorded("rtx3090-169", grid(builtin("rtx3090"), 169), hyp("alg1-paired")),
               recorded("rtx3090-prediction", grid(builtin("rtx3090"), 200), hyp("alg1-paired"), model::ObservationKind::Synthetic),
               recorded("h100-prediction", grid(builtin("h100-sxm"), 300), hyp("alg1-paired"), model::ObservationKind::Synthetic)};
  search::ContestOptions o;
  o.synthesize = false;
  auto all = search::contest_predictions(run, o);
  REQUIRE(all.size() == 2);  // the recording is evidence, not a prediction
  CHECK(all[0].case_id == "rtx3090-prediction");
  CHECK(all[0].report.settled());
  CHECK(all[1].case_id == "h100-prediction");
  CHECK(all[1].report.scope == search::EvidenceScope::None);
  CHECK_FALSE(all[1].report.settled());
}

TEST_CASE("contested: the held-back Turing grids under the ntbs evidence", "[contested][external]") {
  const std::string dir = test::shared_path("external/ntbs");
  if (!std::filesystem::exists(dir)) {
    WARN("../shared/external/ntbs is not present; skipped");
    return;
  }
  auto evidence = model::load_cases(dir);
  search::ContestOptions o;
  o.synthesize = false;
  // The RTX 2080 Ti's 13 recordings leave one shipped hypothesis, alg1-paired (the three A100 grids are
  // another device's): its prediction of a held-back grid is settled among the shipped candidates.
  auto r = search::contest(grid(builtin("rtx2080ti"), 272), model::resolve_hypotheses("all"), evidence, o);
  CHECK(r.scope == search::EvidenceScope::Device);
  CHECK(r.evidence_cases == 13);
  CHECK(r.survivors == std::vector<std::string>{"alg1-paired"});
  CHECK(r.settled());
  // The A100's three unexplained grids are open there, not eliminations.
  auto a = search::contest(grid(builtin("a100"), 540), model::resolve_hypotheses("alg1,alg1-paired"), evidence, o);
  CHECK(a.open_cases.size() == 3);
  CHECK(a.survivors == std::vector<std::string>{"alg1-paired"});
}
