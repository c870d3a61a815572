// Tests of the oracle layer: the simulated device with and without noise, replay, the
// no-CUDA outcome, and `tbcheck run` writing cases atomically that load and validate back.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "helpers.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/model/validate.hpp"
#include "tbcheck/oracle/cuda_host.hpp"
#include "tbcheck/oracle/oracle.hpp"

using namespace tbcheck;
using oracle::RunStatus;
namespace fs = std::filesystem;

namespace {

struct OracleTempDir {
  fs::path path;
  OracleTempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("tbcheck-oracle-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~OracleTempDir() { fs::remove_all(path); }
};

const char* kCase22 = "corpus/paper/000-wang/case-2.2.json";

model::Case case22() { return model::load_cases(test::source_path(kCase22)).at(0); }

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void check_matches(const model::Observation& o, const model::Schedule& sch) {
  for (const auto& k : sch.kernels)
    for (size_t b = 0; b < k.blocks.size(); ++b) {
      CHECK(o.sm_of_block.at(k.name)[b] == k.blocks[b].sm);
      CHECK(o.start_of_block.at(k.name)[b] == k.blocks[b].start);
    }
}

}  // namespace

TEST_CASE("sim without noise reproduces simulate() and is stable", "[oracle]") {
  auto c = case22();
  auto o = oracle::make_oracle("sim:alg1", 0.0, 1, nullptr);
  CHECK(o->name() == "sim:alg1");
  auto r = o->run(c.scenario, 3);
  CHECK(r.status == RunStatus::Ok);
  CHECK(oracle::to_string(r.status) == "ok");
  CHECK(r.unstable_blocks.empty());
  REQUIRE(r.repetitions.size() == 3);
  const model::Schedule want = model::simulate(c.scenario, test::hyp("alg1"));
  for (const auto& rep : r.repetitions) {
    REQUIRE(rep.kernels.size() == want.kernels.size());
    for (size_t k = 0; k < want.kernels.size(); ++k) CHECK(rep.kernels[k].blocks == want.kernels[k].blocks);
  }
  CHECK(r.observation.kind == model::ObservationKind::Synthetic);
  check_matches(r.observation, want);
  CHECK(r.metadata["oracle"] == "sim:alg1");
  CHECK(r.metadata["repetitions"] == 3);
  CHECK(r.to_json()["status"] == "ok");
}

TEST_CASE("a run's effective scenario (what the device really ran) is in its JSON only when set", "[oracle]") {
  auto c = case22();
  auto r = oracle::make_oracle("sim:alg1", 0.0, 1, nullptr)->run(c.scenario, 1);
  CHECK_FALSE(r.to_json().contains("effective_scenario"));
  model::Scenario e = c.scenario;
  e.kernels[0].tpcs = {1};
  r.effective_scenario = e;
  CHECK(r.to_json()["effective_scenario"]["kernels"][0]["tpcs"] == std::vector<int>{1});
}

TEST_CASE("sim with full noise reports instability per block, never averaged", "[oracle]") {
  auto c = case22();
  auto r = oracle::make_oracle("sim:alg1", 1.0, 7, nullptr)->run(c.scenario, 5);
  CHECK(r.status == RunStatus::Unstable);
  CHECK(r.to_json()["status"] == "unstable");
  REQUIRE_FALSE(r.unstable_blocks.empty());
  CHECK_THAT(r.unstable_blocks[0], Catch::Contains("across repetitions"));
  CHECK(r.metadata["perturbations"].size() == 5);
  REQUIRE(r.repetitions.size() == 5);
  // The observation is one real repetition (the first), not a blend of them.
  check_matches(r.observation, r.repetitions[0]);
}

TEST_CASE("sim is deterministic given the seed", "[oracle]") {
  auto c = case22();
  auto a = oracle::make_oracle("sim:alg1", 0.5, 42, nullptr)->run(c.scenario, 6);
  auto b = oracle::make_oracle("sim:alg1", 0.5, 42, nullptr)->run(c.scenario, 6);
  CHECK(a.to_json() == b.to_json());
  for (size_t i = 0; i < a.repetitions.size(); ++i) CHECK(a.repetitions[i].to_json() == b.repetitions[i].to_json());
  auto other = oracle::make_oracle("sim:alg1", 0.5, 43, nullptr)->run(c.scenario, 6);
  CHECK(other.metadata["perturbations"] != a.metadata["perturbations"]);
}

TEST_CASE("oracle specs: unknown kinds and replay without a recording are input errors", "[oracle]") {
  CHECK_THROWS_WITH(oracle::make_oracle("gpu", 0.0, 1, nullptr), Catch::Contains("replay, sim:") && Catch::Contains("cuda"));
  CHECK_THROWS_AS(oracle::make_oracle("sim:", 0.0, 1, nullptr), model::InputError);
  CHECK_THROWS_AS(oracle::make_oracle("sim:alg1,alg2", 0.0, 1, nullptr), model::InputError);
  CHECK_THROWS_AS(oracle::make_oracle("sim:alg1", 1.5, 1, nullptr), model::InputError);
  CHECK_THROWS_AS(oracle::make_oracle("replay", 0.0, 1, nullptr), model::InputError);
  auto c = case22();  // paper facts only
  CHECK_THROWS_WITH(oracle::make_oracle("replay", 0.0, 1, &c), Catch::Contains("case-2.2.json"));
}

TEST_CASE("cuda without a usable GPU is the named outcome no-device, exit 2", "[oracle]") {
  // Without CUDA the stub answers; with CUDA but no GPU or driver (CI, this machine) the real oracle
  // does. A machine with a GPU runs the case instead, which other tests cover.
  const bool cuda = oracle::cuda::built_with_cuda();
  auto r = oracle::make_oracle("cuda", 0.0, 1, nullptr)->run(case22().scenario, 3);
  if (cuda && r.status != RunStatus::NoDevice) {
    WARN("a CUDA device is present (" << oracle::to_string(r.status) << "); the no-device path is not exercised");
    return;
  }
  const char* why = cuda ? "no usable CUDA device" : "built without CUDA";
  CHECK(r.status == RunStatus::NoDevice);
  CHECK(oracle::to_string(r.status) == "no-device");
  CHECK_THAT(r.reason, Catch::Contains(why));
  auto cli = test::run_tbcheck(std::string("run ") + kCase22 + " --oracle cuda");
  CHECK(cli.exit_code == 2);
  CHECK_THAT(cli.out, Catch::Contains("no-device") && Catch::Contains(why));
}

TEST_CASE("run writes a sim case that validates exactly under its hypothesis and not under another", "[oracle]") {
  OracleTempDir dir;
  auto r = test::run_tbcheck(std::string("run ") + kCase22 + " --oracle sim:alg1 --out '" + dir.path.string() + "'");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const fs::path written = dir.path / "case-2.2.sim-alg1.json";
  REQUIRE(fs::exists(written));
  auto cases = model::load_cases(written.string());
  REQUIRE(cases.size() == 1);
  CHECK(cases[0].source == "oracle sim:alg1");
  REQUIRE(cases[0].observation);
  CHECK(cases[0].observation->kind == model::ObservationKind::Synthetic);

  auto run = model::run_validation(cases, {test::hyp("alg1"), test::hyp("alg1-no-skip")});
  CHECK(run.results[0][0].at(model::Level::Exact) == model::Verdict::Pass);
  CHECK(run.results[0][1].at(model::Level::Exact) == model::Verdict::Fail);
  auto v = test::run_tbcheck("validate '" + written.string() + "' --hypothesis alg1 --level exact");
  CHECK(v.exit_code == 0);

  SECTION("a second run refuses to overwrite it, leaving the file and no temporaries") {
    const std::string before = slurp(written);
    auto again = test::run_tbcheck(std::string("run ") + kCase22 + " --oracle sim:alg1 --out '" + dir.path.string() + "'");
    CHECK(again.exit_code == 2);
    CHECK_THAT(again.out, Catch::Contains("never overwritten"));
    CHECK(slurp(written) == before);
    size_t entries = 0;
    for (const auto& e : fs::directory_iterator(dir.path)) {
      ++entries;
      CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
    }
    CHECK(entries == 1);
  }

  SECTION("replay returns the recording, and the replayed case validates under the hypothesis that played the device") {
    auto rep = oracle::make_oracle("replay", 0.0, 1, &cases[0])->run(cases[0].scenario, 2);
    CHECK(rep.status == RunStatus::Ok);
    CHECK(rep.observation.sm_of_block == cases[0].observation->sm_of_block);
    CHECK(rep.observation.start_of_block == cases[0].observation->start_of_block);
    check_matches(rep.observation, rep.repetitions.at(1));

    auto cli = test::run_tbcheck("run '" + written.string() + "' --oracle replay --out '" + dir.path.string() + "'");
    INFO(cli.out);
    REQUIRE(cli.exit_code == 0);
    auto replayed = model::load_cases((dir.path / "case-2.2.sim-alg1.replay.json").string());
    auto vr = model::run_validation(replayed, {test::hyp("alg1")});
    CHECK(vr.results[0][0].at(model::Level::Exact) == model::Verdict::Pass);
  }

  SECTION("a noisy run is reported unstable with exit 1 and its blocks listed") {
    auto noisy = test::run_tbcheck(std::string("run ") + kCase22 + " --oracle sim:alg1 --noise 1 --repeat 5 --seed 7 --out '" +
                                   dir.path.string() + "'");
    CHECK(noisy.exit_code == 1);
    CHECK_THAT(noisy.out, Catch::Contains("unstable") && Catch::Contains("across repetitions"));
    auto back = model::load_cases((dir.path / "case-2.2.sim-alg1.noise1-seed7.json").string());
    REQUIRE(back.size() == 1);
    CHECK_THAT(back[0].notes, Catch::Contains("unstable"));
  }
}

TEST_CASE("a sim oracle whose hypothesis cannot run a scenario says unsupported, naming itself", "[oracle]") {
  const model::Case c = case22();  // an rtx3090 case: fermi runs Fermi devices only
  auto o = oracle::make_oracle("sim:fermi", 0.0, 1, nullptr);
  const auto r = o->run(c.scenario, 2);
  CHECK(r.status == RunStatus::Unsupported);
  CHECK(r.reason.find("sim:fermi cannot run this scenario (device: ") == 0);
  CHECK(r.repetitions.empty());
  // An unknown hypothesis names the flag the user typed.
  CHECK(test::error_of([] { oracle::make_oracle("sim:nosuch", 0.0, 1, nullptr); }).where() == "--oracle");
}
