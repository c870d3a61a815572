// Tests of the CUDA oracle's host logic with synthetic timestamps (no GPU needed): variant choice,
// ns -> units, launch order, instability, identity, MPS, launch plan, green contexts, no-device, dry run.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "helpers.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/oracle/cuda_host.hpp"
#include "tbcheck/oracle/oracle.hpp"
#include "tbcheck/smt/encoding.hpp"

using namespace tbcheck;
using namespace tbcheck::oracle::cuda;
namespace fs = std::filesystem;

namespace {

model::Kernel kernel(const std::string& name, int regs, int threads = 256) {
  model::Kernel k;
  k.name = name;
  k.regs = regs;
  k.threads = threads;
  return k;
}

const model::Device& rtx3090() { return model::builtin_device("rtx3090", "test", "device"); }

// Two kernels on a 4-SM mini device: k1 (2 blocks), k2 (1 block), duration 1 unit each.
model::Scenario two_kernels(const std::string& extra_k2 = "") {
  return test::scenario(R"({"device": )" + test::mini_device(4) + R"(, "kernels": [
      {"name": "k1", "blocks": 2, "threads": 256, "regs": 32, "smem": 0, "duration": 1},
      {"name": "k2", "blocks": 1, "threads": 256, "regs": 32, "smem": 0, "duration": 1)" + extra_k2 + "}]}");
}

constexpr uint64_t kT0 = 1'700'000'000'000'000'000ULL;  // a realistic %globaltimer value (ns)
constexpr uint64_t kUnit = 20'000'000;                    // 20 ms

BlockRecord rec(uint64_t start_offset_ns, uint64_t run_ns, int sm) {
  return BlockRecord{kT0 + start_offset_ns, kT0 + start_offset_ns + run_ns, sm, sm};
}

std::vector<KernelRecord> good_records() {
  return {KernelRecord{"k1", {rec(0, kUnit + 3'000, 0), rec(900, kUnit + 2'000, 2)}},
          KernelRecord{"k2", {rec(1'800, kUnit + 1'000, 1)}}};
}

}  // namespace

TEST_CASE("the probe variants are the realizable register counts of the SMT encoding", "[cuda-host]") {
  CHECK(probe_register_counts() == smt::realizable_regs());
  CHECK(probe_register_counts().front() == 24);
  CHECK(probe_register_counts().back() == 255);
  CHECK(probe_register_counts().size() == 30);
  for (const auto& v : nominal_variants()) CHECK(v.num_regs == v.requested_regs);
}

TEST_CASE("variant choice: exact numRegs, then the same per-warp allocation, else refused with the counts", "[cuda-host]") {
  // As a device might report them: the r32 build came out at 30 registers.
  const std::vector<Variant> vs = {{24, 24, 1024, 0, 1024}, {32, 30, 992, 0, 1024}, {48, 48, 800, 0, 1024},
                                   {64, 64, 700, 0, 1024}, {128, 128, 600, 0, 512}};
  SECTION("exact") {
    auto c = choose_variant(vs, kernel("k", 48), rtx3090());
    CHECK(c.match == VariantMatch::Exact);
    CHECK(c.index == 2);
  }
  SECTION("same allocation: 32 and 30 registers both take 1024 registers per warp") {
    auto c = choose_variant(vs, kernel("k", 32), rtx3090());
    CHECK(c.match == VariantMatch::SameAllocation);
    CHECK(c.index == 1);
    CHECK(to_string(c.match) == "same-allocation");
  }
  SECTION("none: 40 registers (1280 per warp) has no variant; the reason names the kernel and the counts") {
    auto c = choose_variant(vs, kernel("k7", 40), rtx3090());
    CHECK(c.match == VariantMatch::None);
    CHECK(c.index == -1);
    CHECK_THAT(c.reason, Catch::Contains("k7") && Catch::Contains("40 registers") && Catch::Contains("24, 30, 48, 64, 128"));
  }
  SECTION("a variant whose maxThreadsPerBlock is below the kernel's threads is not chosen") {
    auto c = choose_variant(vs, kernel("big", 128, 1024), rtx3090());
    CHECK(c.match == VariantMatch::None);
    CHECK(choose_variant(vs, kernel("small", 128, 512), rtx3090()).match == VariantMatch::Exact);
  }
}

TEST_CASE("the timer tick is the smallest step between distinct timestamps, in units rounded up", "[cuda-host]") {
  CHECK(timer_tick_units({0, 0, 1000, 2000, 2000, 5000}, 1000) == 1);
  CHECK(timer_tick_units({0, 3000, 9000}, 1000) == 3);
  CHECK(timer_tick_units({0, 2500}, 1000) == 3);  // a step of 2.5 units: rounded up
  CHECK(timer_tick_units({7, 7}, 1000) == 1);     // no step seen: the unit itself
  CHECK(timer_tick_units({}, 1000) == 1);
}

TEST_CASE("ns to time units: relative to the origin, rounded half up", "[cuda-host]") {
  CHECK(ns_to_units(1000, 1000, 20) == 0);
  CHECK(ns_to_units(1009, 1000, 20) == 0);
  CHECK(ns_to_units(1010, 1000, 20) == 1);  // exactly half: up
  CHECK(ns_to_units(1029, 1000, 20) == 1);
  CHECK(ns_to_units(1030, 1000, 20) == 2);
  CHECK(ns_to_units(500, 1000, 20) == 0);   // before the origin: clamped
  CHECK(ns_to_units(1001, 1000, 3) == 0);   // odd unit: 1/3 down
  CHECK(ns_to_units(1002, 1000, 3) == 1);   // 2/3 up
  CHECK(ns_to_units(kT0 + 3 * kUnit + 9'000'000, kT0, kUnit) == 3);
  CHECK(ns_to_units(kT0 + 3 * kUnit + 10'000'000, kT0, kUnit) == 4);
  CHECK_THROWS_AS(ns_to_units(1, 0, 0), model::InputError);
  CudaOptions o;
  CHECK(unit_ns(o) == kUnit);
  o.time_unit_ms = 0.5;
  CHECK(unit_ns(o) == 500'000);
  o.time_unit_ms = -1;
  CHECK_THROWS_AS(unit_ns(o), model::InputError);
}

TEST_CASE("records become a schedule in units from the earliest block start", "[cuda-host]") {
  const auto s = two_kernels();
  auto recs = good_records();
  recs[1].blocks[0] = rec(kUnit + 4'000, kUnit + 500, 0);  // k2 starts one unit later, on SM 0
  auto r = schedule_from_records(s, recs, kUnit);
  CHECK(r.status == RecordCheck::Complete);
  CHECK(r.problems.empty());
  CHECK(r.notes.empty());
  REQUIRE(r.schedule.kernels.size() == 2);
  CHECK(r.schedule.kernels[0].blocks[0] == model::BlockPlacement{0, 0, 1});
  CHECK(r.schedule.kernels[0].blocks[1] == model::BlockPlacement{2, 0, 1});
  CHECK(r.schedule.kernels[1].blocks[0] == model::BlockPlacement{0, 1, 2});

  SECTION("a block that ran a unit too long is a note, not a failure") {
    recs[0].blocks[1] = rec(900, 2 * kUnit, 2);
    auto r2 = schedule_from_records(s, recs, kUnit);
    CHECK(r2.status == RecordCheck::Complete);
    REQUIRE(r2.notes.size() == 1);
    CHECK_THAT(r2.notes[0], Catch::Contains("k1 block 1") && Catch::Contains("ran 2 units"));
  }
  SECTION("missing records, SM changes and SMs off the device make it incomplete") {
    recs[0].blocks[0] = BlockRecord{};
    recs[0].blocks[1].sm_end = 3;
    recs[1].blocks[0].sm_start = recs[1].blocks[0].sm_end = 9;
    auto r3 = schedule_from_records(s, recs, kUnit);
    CHECK(r3.status == RecordCheck::Incomplete);
    REQUIRE(r3.problems.size() == 3);
    CHECK_THAT(r3.problems[0], Catch::Contains("k1 block 0: no record"));
    CHECK_THAT(r3.problems[1], Catch::Contains("SM 2 at entry but 3 at exit"));
    CHECK_THAT(r3.problems[2], Catch::Contains("SM 9 is outside"));
  }
}

TEST_CASE("launch order from the first block timestamps", "[cuda-host]") {
  const auto s = two_kernels();
  SECTION("confirmed") {
    auto o = check_launch_order(s, good_records());
    CHECK(o.status == OrderCheck::Confirmed);
    CHECK(o.ties == 0);
  }
  SECTION("violated: the later kernel started first") {
    auto recs = good_records();
    recs[1].blocks[0] = rec(0, kUnit, 1);
    recs[0].blocks[0] = rec(500, kUnit, 0);
    auto o = check_launch_order(s, recs);
    CHECK(o.status == OrderCheck::Violated);
    CHECK_THAT(o.reason, Catch::Contains("k2 (launched after k1) started 500 ns before it"));
    CHECK(to_string(o.status) == "violated");
  }
  SECTION("tied first timestamps are consistent but counted") {
    auto recs = good_records();
    recs[1].blocks[0] = rec(0, kUnit, 1);
    auto o = check_launch_order(s, recs);
    CHECK(o.status == OrderCheck::Tied);
    CHECK(o.ties == 1);
  }
  SECTION("a missing record leaves it unconfirmed") {
    auto recs = good_records();
    recs[0].blocks[1] = BlockRecord{};
    CHECK(check_launch_order(s, recs).status == OrderCheck::Unconfirmed);
  }
  SECTION("a stream successor must start after its predecessor's last block") {
    const auto shared = test::scenario(R"({"device": )" + test::mini_device(4) + R"(, "kernels": [
      {"name": "k1", "blocks": 2, "threads": 256, "regs": 32, "smem": 0, "duration": 1, "stream": 5},
      {"name": "k2", "blocks": 1, "threads": 256, "regs": 32, "smem": 0, "duration": 1, "stream": 5}]})");
    auto recs = good_records();
    CHECK(check_launch_order(shared, recs).status == OrderCheck::Violated);
    recs[1].blocks[0] = rec(kUnit + 10'000, kUnit, 1);
    CHECK(check_launch_order(shared, recs).status == OrderCheck::Confirmed);
  }
}

TEST_CASE("repetitions that disagree are unstable per block, through combine_repetitions", "[cuda-host]") {
  const auto s = two_kernels();
  auto a = schedule_from_records(s, good_records(), kUnit).schedule;
  auto recs = good_records();
  recs[0].blocks[1] = rec(900, kUnit, 3);  // block 1 of k1 lands on SM 3 this time
  auto b = schedule_from_records(s, recs, kUnit).schedule;
  auto r = oracle::combine_repetitions(s, {a, a, b}, model::ObservationKind::Hardware, nlohmann::json::object());
  CHECK(r.status == oracle::RunStatus::Unstable);
  REQUIRE(r.unstable_blocks.size() == 1);
  CHECK(r.unstable_blocks[0] == "k1 block 1: SMs 2, 2, 3 across repetitions");
  CHECK(r.observation.kind == model::ObservationKind::Hardware);
  CHECK(r.observation.sm_of_block.at("k1") == std::vector<int>{0, 2});
  auto ok = oracle::combine_repetitions(s, {a, a}, model::ObservationKind::Hardware, nlohmann::json::object());
  CHECK(ok.status == oracle::RunStatus::Ok);
}

TEST_CASE("device identity is compared on scheduler limits, never on the name", "[cuda-host]") {
  DeviceIdentity id;
  id.name = "NVIDIA GeForce RTX 3090";
  id.cc = "8.6";
  id.sms = 82;
  id.max_blocks_per_sm = 16;
  id.max_warps_per_sm = 48;
  id.regs_per_sm = 65536;
  id.max_threads_per_block = 1024;
  id.smem_per_sm = 102400;
  id.smem_per_block_optin = 101376;
  id.reserved_smem_per_block = 1024;
  id.driver_version = 13000;
  id.runtime_version = 13000;
  auto c = compare_identity(rtx3090(), id);
  CHECK(c.status == IdentityMatch::Match);
  CHECK(c.differences.empty());
  CHECK(id.to_json()["driver_version"] == 13000);

  id.sms = 84;
  id.cc = "8.9";
  c = compare_identity(rtx3090(), id);
  CHECK(c.status == IdentityMatch::Mismatch);
  REQUIRE(c.differences.size() == 2);
  CHECK_THAT(c.differences[0], Catch::Contains("compute capability") && Catch::Contains("8.9"));
  CHECK_THAT(c.differences[1], Catch::Contains("SM count: rtx3090 has 82") && Catch::Contains("has 84"));
}

TEST_CASE("MPS is detected from its control pipe or client settings", "[cuda-host]") {
  std::map<std::string, std::string> env;
  std::set<std::string> files;
  auto getenv = [&](const std::string& k) -> std::optional<std::string> {
    auto it = env.find(k);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  auto exists = [&](const std::string& p) { return files.count(p) > 0; };
  CHECK(detect_mps(getenv, exists).state == MpsState::Absent);
  files.insert("/tmp/nvidia-mps/control");
  auto p = detect_mps(getenv, exists);
  CHECK(p.state == MpsState::Active);
  CHECK_THAT(p.evidence, Catch::Contains("/tmp/nvidia-mps/control"));
  env["CUDA_MPS_PIPE_DIRECTORY"] = "/run/mps";  // the pipe elsewhere: the default path no longer counts
  CHECK(detect_mps(getenv, exists).state == MpsState::Absent);
  env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = "50";
  CHECK(detect_mps(getenv, exists).state == MpsState::Active);
}

TEST_CASE("launch plan: kernels sharing a variant get the largest shared-memory opt-in of them all", "[cuda-host]") {
  // The attribute belongs to the variant: set to the last kernel's 100000 B, the first kernel's
  // 164224 B launch failed on an H200 with cudaErrorInvalidValue.
  const auto s = test::scenario(R"({"device": "h200", "kernels": [
      {"name": "big", "blocks": 30, "threads": 128, "regs": 32, "smem": 164224, "duration": 1, "stream": 0},
      {"name": "small", "blocks": 50, "threads": 128, "regs": 32, "smem": 100000, "duration": 1, "stream": 1},
      {"name": "plain", "blocks": 5, "threads": 128, "regs": 32, "smem": 1024, "duration": 1},
      {"name": "other", "blocks": 5, "threads": 128, "regs": 64, "smem": 60000, "duration": 1}]})");
  auto pr = build_launch_plan(s, nominal_variants(), CudaOptions{});
  REQUIRE(pr.status == PlanStatus::Ok);
  const auto& p = pr.plan;
  REQUIRE(p.kernels.size() == 4);
  REQUIRE(p.kernels[0].variant_regs == p.kernels[1].variant_regs);
  CHECK(p.smem_attribute_of_variant.size() == 2);
  CHECK(p.smem_attribute_of_variant.at(p.kernels[0].variant_regs) == p.kernels[0].dynamic_smem);
  CHECK(p.smem_attribute_of_variant.at(p.kernels[3].variant_regs) == p.kernels[3].dynamic_smem);
  CHECK(p.to_json()["max_dynamic_smem_of_variant"]["r" + std::to_string(p.kernels[0].variant_regs)] == p.kernels[0].dynamic_smem);
}

TEST_CASE("launch plan: streams, variants, shared memory opt-in, watchdog, refusals", "[cuda-host]") {
  const auto s = test::scenario(R"({"device": "rtx3090", "kernels": [
      {"name": "a", "blocks": 4, "threads": 128, "regs": 40, "smem": 65536, "duration": 2, "stream": 7},
      {"name": "b", "grid": [3, 2], "threads": 64, "regs": 255, "smem": 1024, "duration": 1},
      {"name": "c", "blocks": 1, "threads": 32, "regs": 24, "smem": 0, "duration": 1, "stream": 7}]})");
  CudaOptions o;
  auto pr = build_launch_plan(s, nominal_variants(), o);
  REQUIRE(pr.status == PlanStatus::Ok);
  const auto& p = pr.plan;
  CHECK(p.streams == 2);
  REQUIRE(p.kernels.size() == 3);
  CHECK(p.kernels[0].stream == 0);
  CHECK(p.kernels[2].stream == 0);  // shares stream 7 with a
  CHECK(p.kernels[1].stream == 1);
  CHECK(p.kernels[0].variant_regs == 40);
  CHECK(p.kernels[0].dynamic_smem == 65536);
  CHECK(p.kernels[0].smem_optin);
  CHECK_FALSE(p.kernels[1].smem_optin);
  CHECK(p.kernels[1].grid_x == 3);
  CHECK(p.kernels[1].grid_y == 2);
  CHECK(p.kernels[0].duration_ns == 2 * kUnit);
  CHECK(p.kernels[2].launch_order == 2);
  // Every block one after another: (4 x 2 + 6 + 1) units, plus 10 s.
  CHECK(p.watchdog_ns == 15 * kUnit + 10'000'000'000ULL);
  const auto j = p.to_json();
  CHECK(j["kernels"][1]["variant"] == "r255");
  CHECK(j["kernels"][0]["scenario_stream"] == 7);
  CHECK_THAT(p.to_text(), Catch::Contains("r40") && Catch::Contains("0+65536"));

  SECTION("registers no variant realizes are refused with the kernel named") {
    auto bad = s;
    bad.kernels[1].regs = 16;
    auto r = build_launch_plan(bad, nominal_variants(), o);
    CHECK(r.status == PlanStatus::Unsupported);
    CHECK_THAT(r.reason, Catch::Contains("kernel b asks for 16 registers") && Catch::Contains("24, 32"));
  }
  SECTION("more streams than hardware connections are refused") {
    o.max_connections = 2;
    auto many = s;
    many.kernels[2].stream.reset();
    auto r = build_launch_plan(many, nominal_variants(), o);
    CHECK(r.status == PlanStatus::Unsupported);
    CHECK_THAT(r.reason, Catch::Contains("3 streams exceed the 2 hardware connections"));
  }
  SECTION("static shared memory above the scenario's smem is refused") {
    auto vs = nominal_variants();
    for (auto& v : vs) v.static_smem = 512;
    auto r = build_launch_plan(s, vs, o);
    CHECK(r.status == PlanStatus::Unsupported);
    CHECK_THAT(r.reason, Catch::Contains("kernel c asks for 0 B"));
  }
}

TEST_CASE("cuda oracle without a GPU is the named outcome no-device, and run exits 2", "[cuda-host]") {
  const char* kCase = "corpus/paper/000-wang/case-1.1.json";
  auto c = model::load_cases(test::source_path(kCase)).at(0);
  auto r = oracle::make_oracle("cuda", 0.0, 1, nullptr)->run(c.scenario, 3);
  // This suite runs where there is no GPU (CI); with one, the run is real and this test says so.
  if (oracle::cuda::built_with_cuda() && r.status != oracle::RunStatus::NoDevice) {
    WARN("a CUDA device is present; the no-device checks are skipped: " << r.reason);
    return;
  }
  CHECK(r.status == oracle::RunStatus::NoDevice);
  CHECK(r.observation.kind == model::ObservationKind::Hardware);
  CHECK(r.metadata["cuda"] == oracle::cuda::built_with_cuda());
  CHECK_THAT(r.reason, Catch::Contains(oracle::cuda::built_with_cuda() ? "no usable CUDA device" : "built without CUDA"));
  auto cli = test::run_tbcheck(std::string("run ") + kCase + " --oracle cuda --time-unit-ms 5");
  CHECK(cli.exit_code == 2);
  CHECK_THAT(cli.out, Catch::Contains("no-device"));
}

TEST_CASE("run --dry-run prints the cuda launch plan without a GPU", "[cuda-host]") {
  auto text = test::run_tbcheck("run corpus/paper/000-wang/case-1.1.json --oracle cuda --dry-run");
  INFO(text.out);
  CHECK(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("launch plan of case-1.1") && Catch::Contains("r32") &&
                           Catch::Contains("20000000"));
  auto js = test::run_tbcheck("run corpus/paper/000-wang/case-1.1.json --oracle cuda --dry-run --json --time-unit-ms 1");
  REQUIRE(js.exit_code == 0);
  const auto j = nlohmann::json::parse(js.out);
  CHECK(j["status"] == "ok");
  CHECK(j["plan"]["unit_ns"] == 1000000);
  CHECK(j["plan"]["nominal_registers"] == true);
  REQUIRE(j["plan"]["kernels"].size() == 3);
  CHECK(j["plan"]["kernels"][2]["launch_order"] == 2);
  CHECK(j["plan"]["kernels"][0]["stream"] != j["plan"]["kernels"][1]["stream"]);

  test::TempDir dir;
  const fs::path f = dir.path / "regs16.json";
  std::ofstream(f) << R"({"device": "rtx3090", "kernels": [{"name": "k", "blocks": 1, "threads": 32, "regs": 16, "smem": 0, "duration": 1}]})";
  auto bad = test::run_tbcheck("run '" + f.string() + "' --oracle cuda --dry-run");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.out, Catch::Contains("unsupported") && Catch::Contains("16 registers"));
  auto wrong = test::run_tbcheck("run corpus/paper/000-wang/case-1.1.json --oracle sim:alg1 --dry-run");
  CHECK(wrong.exit_code == 2);
  CHECK_THAT(wrong.out, Catch::Contains("--oracle cuda only"));
}

// Priorities, release times, clusters and partitions in the launch plan; the GPC map.
TEST_CASE("the launch plan carries priorities, releases, clusters and partitions", "[cuda][controls]") {
  using namespace tbcheck::oracle::cuda;
  auto s = test::scenario(R"({"device": "rtx2080ti", "kernels": [
      {"name": "lo", "blocks": 4, "threads": 128, "regs": 32, "duration": 1, "stream": 0, "priority": 0, "tpcs": [0, 1]},
      {"name": "hi", "blocks": 4, "threads": 128, "regs": 32, "duration": 1, "stream": 1, "priority": -5, "release_time": 3,
       "tpcs": [2]},
      {"name": "x", "blocks": 2, "threads": 128, "regs": 32, "duration": 1, "release_time": 3, "tpcs": [1, 0]}]})");
  CudaOptions o;
  const PlanResult r = build_launch_plan(s, nominal_variants(), o);
  REQUIRE(r.status == PlanStatus::Ok);
  const auto& k = r.plan.kernels;
  CHECK(k[0].priority == 0);
  CHECK(k[1].priority == -5);
  CHECK(k[1].release_ns == 3 * unit_ns(o));
  REQUIRE(r.plan.partitions.size() == 2);
  CHECK(r.plan.partitions[0].tpcs == std::vector<int>{0, 1});
  CHECK(r.plan.partitions[0].sms == 4);
  CHECK(k[2].partition == 0);  // the same TPC set shares a green context
  CHECK(k[1].partition == 1);
  const auto j = r.plan.to_json();
  CHECK(j["kernels"][1]["release_ns"] == 3 * unit_ns(o));
  CHECK(j["partitions"].size() == 2);
  CHECK_THAT(r.plan.to_text(), Catch::Contains("priority -5, released at") && Catch::Contains("partition 1: TPCs [2]"));

  auto overlap = s;
  overlap.kernels[1].tpcs = {1, 2};
  const PlanResult bad = build_launch_plan(overlap, nominal_variants(), o);
  CHECK(bad.status == PlanStatus::Unsupported);
  CHECK_THAT(bad.reason, Catch::Contains("overlap partition 0"));

  auto cl = test::scenario(R"({"device": "h100-sxm", "kernels": [{"grid": [4, 2], "threads": 64, "regs": 32, "duration": 1, "cluster": [2, 2]}]})");
  const PlanResult c = build_launch_plan(cl, nominal_variants(), o);
  CHECK(c.plan.kernels[0].cluster == std::array<int, 3>{2, 2, 1});
  CHECK_THAT(c.plan.to_text(), Catch::Contains("clusters 2x2x1 (cudaLaunchKernelEx)"));
}

TEST_CASE("priority ranges, green-context support and the launch order with releases", "[cuda][controls]") {
  using namespace tbcheck::oracle::cuda;
  CHECK(check_priority("k", -1, 0, -5).status == PriorityFit::Fits);
  auto out = check_priority("k", -5, 0, -1);
  CHECK(out.status == PriorityFit::OutOfRange);
  CHECK_THAT(out.reason, Catch::Contains("clamp"));
  CHECK(green_context_support(12040, true).status == GreenContexts::Available);
  CHECK_THAT(green_context_support(12020, true).reason, Catch::Contains("12.4"));
  CHECK(green_context_support(13000, false).status == GreenContexts::Unsupported);
  // A later-released kernel that starts first is no launch-order violation; a simultaneous one is.
  auto s = test::scenario(R"({"device": "rtx2080ti", "kernels": [
      {"name": "a", "blocks": 1, "threads": 32, "regs": 32, "duration": 1},
      {"name": "b", "blocks": 1, "threads": 32, "regs": 32, "duration": 1, "release_time": 1},
      {"name": "c", "blocks": 1, "threads": 32, "regs": 32, "duration": 1, "release_time": 1}]})");
  std::vector<KernelRecord> recs = {{"a", {{500, 900, 0, 0}}}, {"b", {{400, 800, 1, 1}}}, {"c", {{450, 850, 2, 2}}}};
  CHECK(check_launch_order(s, recs).status == OrderCheck::Confirmed);
  recs[2].blocks[0].start_ns = 300;  // c launched with b but started before it
  CHECK(check_launch_order(s, recs).status == OrderCheck::Violated);
}

TEST_CASE("the GPC map from cluster placements groups SMs that share a cluster", "[cuda][controls]") {
  using namespace tbcheck::oracle::cuda;
  // 8 SMs, TPCs of 2: GPC A = SMs 0, 1, 4, 5; GPC B = SMs 2, 3, 6, 7.
  const GpcMap m = gpc_map_from_clusters(8, 2, {{0, 1}, {4, 5, 0}, {2, 3}, {6, 7}, {3, 7}});
  CHECK(m.status == GpcMapStatus::Complete);
  CHECK(m.gpc_of_tpc == std::vector<int>{0, 1, 0, 1});
  const GpcMap partial = gpc_map_from_clusters(8, 2, {{0, 1}, {2, 3}, {4}});
  CHECK(partial.status == GpcMapStatus::Incomplete);
  CHECK_THAT(partial.problems.front(), Catch::Contains("SM 5 ran no block"));
  const GpcMap split = gpc_map_from_clusters(4, 2, {{0, 2}, {1, 3}});
  CHECK(split.status == GpcMapStatus::Incomplete);
  CHECK_THAT(split.problems.front(), Catch::Contains("TPC 0"));
}

TEST_CASE("raw records keep every block's SM and its ns times after the repetition's first start", "[cuda-host]") {
  using namespace tbcheck::oracle::cuda;
  std::vector<KernelRecord> recs(2);
  recs[0].name = "k1";
  recs[0].blocks = {BlockRecord{5'000'300, 25'000'300, 124, 124}, BlockRecord{5'000'000, 25'000'000, 0, 0}};
  recs[1].name = "k2";
  recs[1].blocks = {BlockRecord{25'001'000, 45'001'000, 16, 16}, BlockRecord{}};
  const auto j = raw_records_json(recs);
  CHECK(j.at("origin_ns") == 5'000'000);
  CHECK(j.at("kernels").at("k1").at("sm") == nlohmann::json::array({124, 0}));
  CHECK(j.at("kernels").at("k1").at("start_ns") == nlohmann::json::array({300, 0}));
  CHECK(j.at("kernels").at("k2").at("end_ns").at(0) == 40'001'000);
  // A block that wrote no record stays visible as null, never as time 0.
  CHECK(j.at("kernels").at("k2").at("start_ns").at(1).is_null());
}

TEST_CASE("the scheduler's SM order comes from first waves and numbers records and clusters", "[cuda-host]") {
  using namespace tbcheck::oracle::cuda;
  // 4 SMs handed out as %smid 2, 3, 0, 1; a later launch swaps the first two.
  const SmOrder o = sm_order_from_waves(4, {{2, 3, 0, 1}, {3, 2, 0, 1}, {2, 3, 0, 1}});
  REQUIRE(o.status == SmOrderStatus::Measured);
  CHECK(o.smid_of_sm == std::vector<int>{2, 3, 0, 1});
  CHECK(o.varying == std::vector<int>{0, 1});
  CHECK(sm_order_from_waves(4, {{2, 2, 0, 1}}).status == SmOrderStatus::Unusable);
  CHECK(sm_order_from_waves(4, {}).status == SmOrderStatus::Unusable);
  model::Device d = model::builtin_device("tx2", "t", "device");
  d.sms = 4;
  d.smid_of_sm = o.smid_of_sm;
  CHECK(scheduler_sm(d, 0) == 2);
  CHECK(scheduler_sm(d, 3) == 1);
  CHECK(scheduler_sm(d, 7) == -1);
  std::vector<KernelRecord> recs(1);
  recs[0].name = "k1";
  recs[0].blocks = {BlockRecord{10, 20, 2, 2}, BlockRecord{}};
  to_scheduler_order(d, recs);
  CHECK(recs[0].blocks[0].sm_start == 0);
  CHECK(recs[0].blocks[1].sm_start == -1);  // a block that never ran stays unrecorded
  CHECK(clusters_in_order(o.smid_of_sm, {{0, 1}, {2, 9}}) == std::vector<std::vector<int>>{{2, 3}, {0, -1}});
  // Without an order %smid is the scheduler's.
  CHECK(scheduler_sm(model::builtin_device("tx2", "t", "device"), 1) == 1);
}

TEST_CASE("SMs one cluster size leaves idle in every wave are grouped by a smaller size", "[cuda][controls]") {
  using namespace tbcheck::oracle::cuda;
  // Two GPCs of 6 SMs (3 TPCs): clusters of 4 take SMs 0-3 and 6-9 in every wave and leave 4, 5, 10
  // and 11 idle, as a GPU whose GPC size is no multiple of the cluster size does.
  const std::vector<std::vector<int>> fours = {{0, 1, 2, 3}, {6, 7, 8, 9}, {0, 1, 2, 3}, {6, 7, 8, 9}};
  const GpcMap alone = gpc_map_from_clusters(12, 2, fours);
  CHECK(alone.status == GpcMapStatus::Incomplete);
  CHECK_THAT(alone.problems.front(), Catch::Contains("SM 4 ran no block"));
  auto all = fours;
  for (const auto& three : std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 10, 11}}) all.push_back(three);
  const GpcMap both = gpc_map_from_clusters(12, 2, all);
  CHECK(both.status == GpcMapStatus::Complete);
  CHECK(both.gpc_of_tpc == std::vector<int>{0, 0, 0, 1, 1, 1});
  CHECK(both.sm_groups == std::vector<std::vector<int>>{{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}});
}

TEST_CASE("probe-gpc writes the base device with the measured map, and refuses gaps", "[cuda][controls]") {
  using namespace tbcheck::oracle::cuda;
  model::Device base = model::builtin_device("h100-sxm", "", "");
  GpcProbe p;
  p.identity.sms = base.sms;
  p.identity.name = "NVIDIA H100 80GB HBM3";
  p.identity.uuid = "abc";
  p.cluster_sizes = {3, 2};
  p.launches = 8;
  // Two GPCs of 66 SMs: SMs [0, 66) and [66, 132); each cluster pairs an SM with its GPC's first.
  for (int sm = 1; sm < base.sms; ++sm)
    if (sm != 66) p.sms_of_each_cluster.push_back({sm < 66 ? 0 : 66, sm});
  const GpcMap m = gpc_map_from_clusters(base.sms, base.sms_per_tpc, p.sms_of_each_cluster);
  REQUIRE(m.status == GpcMapStatus::Complete);
  const model::Device d = device_with_gpc_map(base, p, m, SmOrder{SmOrderStatus::Unusable, {}, {}, "not measured"});
  CHECK(d.smid_of_sm.empty());
  CHECK(d.gpc_of_tpc.front() == 0);
  CHECK(d.gpc_of_tpc.back() == 1);
  CHECK_THAT(d.gpc_source, Catch::Contains("probe-gpc on NVIDIA H100 80GB HBM3"));
  CHECK_THAT(d.gpc_source, Catch::Contains("clusters of 3, 2 blocks"));
  // The raw measurement keeps every cluster and names the groups found.
  const auto raw = gpc_probe_json(p, m);
  CHECK(raw.at("map") == "complete");
  CHECK(raw.at("sm_groups").size() == 2);
  CHECK(raw.at("sms_of_each_cluster").size() == p.sms_of_each_cluster.size());
  // The written file loads back as a device with its source.
  CHECK(model::device_from_json(d.to_json(), "d.json").gpc_source == d.gpc_source);
  GpcProbe gap = p;
  gap.sms_of_each_cluster.pop_back();
  auto e = test::error_of([&] { device_with_gpc_map(base, gap, gpc_map_from_clusters(base.sms, 2, gap.sms_of_each_cluster), SmOrder{}); });
  CHECK_THAT(e.reason(), Catch::Contains("incomplete"));
  if (!built_with_cuda()) {
    test::TempDir t;
    auto r = test::run_tbcheck("probe-gpc --out " + t.path.string());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Catch::Contains("built without CUDA"));
  }
}

// The green-context path's host logic (split plan, census mapping, effective partition).
TEST_CASE("green contexts: nominal SM resources per architecture and the split plan", "[cuda-host][green]") {
  using namespace tbcheck::oracle::cuda;
  const auto& turing = model::builtin_device("rtx2080ti", "test", "device");
  const auto& ampere = model::builtin_device("rtx3090", "test", "device");
  const auto& hopper = model::builtin_device("h100-sxm", "test", "device");
  CHECK(nominal_sm_resource(turing).min_partition == 2);
  CHECK(nominal_sm_resource(turing).alignment == 2);
  CHECK(nominal_sm_resource(ampere).min_partition == 4);
  CHECK(nominal_sm_resource(ampere).alignment == 2);
  CHECK(nominal_sm_resource(hopper).min_partition == 8);
  CHECK(nominal_sm_resource(hopper).alignment == 8);
  CHECK(nominal_sm_resource(hopper).sm_count == hopper.sms);
  CHECK(nominal_sm_resource(hopper).source == SmResourceSource::Nominal);

  const std::vector<Partition> parts = {{{0, 1}, 4}, {{5}, 2}, {{7, 8, 9}, 6}};
  SECTION("Turing: every request is already whole and aligned") {
    const GreenSplitPlan p = plan_green_split(parts, nominal_sm_resource(turing));
    CHECK(p.status == GreenSplitFit::Fits);
    REQUIRE(p.groups.size() == 3);
    CHECK(p.groups[0].min_count == 4);
    CHECK(p.groups[1].min_count == 2);
    CHECK(p.groups[2].min_count == 6);
    CHECK(p.groups[2].partition == 2);
  }
  SECTION("Ampere: below the minimum of 4 rounds up") {
    const GreenSplitPlan p = plan_green_split(parts, nominal_sm_resource(ampere));
    CHECK(p.groups[1].requested_sms == 2);
    CHECK(p.groups[1].min_count == 4);
    CHECK(p.groups[2].min_count == 6);
  }
  SECTION("Hopper: groups of 8") {
    const GreenSplitPlan p = plan_green_split(parts, nominal_sm_resource(hopper));
    for (const auto& g : p.groups) CHECK(g.min_count == 8);
    CHECK(p.to_json()["status"] == "fits");
    CHECK(p.to_json()["sm_resource"]["source"] == "nominal");
  }
  SECTION("more rounded SMs than the GPU has is the named outcome too-large") {
    const GreenSplitPlan p = plan_green_split(parts, SmResource{16, 8, 8, SmResourceSource::Driver});
    CHECK(p.status == GreenSplitFit::TooLarge);
    CHECK(p.to_json()["status"] == "too-large");
    CHECK_THAT(p.reason, Catch::Contains("need 24 SMs") && Catch::Contains("the GPU has 16"));
  }
}

TEST_CASE("green contexts: the census set becomes the same, an effective or an inexpressible partition", "[cuda-host][green]") {
  using namespace tbcheck::oracle::cuda;
  const auto& d = model::builtin_device("rtx2080ti", "test", "device");  // SMs 2t, 2t+1 form TPC t
  const Partition want{{2, 3}, 4};
  const GreenGroup g{0, 4, 4};
  SECTION("same: the census saw exactly the requested TPCs' SMs") {
    auto r = map_granted_partition(want, g, 4, {4, 5, 6, 7, 7, 4, 5, 6}, {5, 6}, d);
    CHECK(r.match == PartitionMatch::Same);
    CHECK(r.effective_tpcs == std::vector<int>{2, 3});
    CHECK(r.seen_sms == std::vector<int>{4, 5, 6, 7});
    CHECK(r.reason.empty());
    CHECK(r.to_json()["match"] == "same");
  }
  SECTION("effective: other whole TPCs, recorded with the requested ones") {
    auto r = map_granted_partition(want, g, 4, {10, 11, 12, 13}, {}, d);
    CHECK(r.match == PartitionMatch::Effective);
    CHECK(r.effective_tpcs == std::vector<int>{5, 6});
    CHECK_THAT(r.reason, Catch::Contains("asked for TPCs [2, 3]") && Catch::Contains("ran on TPCs [5, 6]"));
    const auto j = r.to_json();
    CHECK(j["requested_tpcs"] == std::vector<int>{2, 3});
    CHECK(j["effective_tpcs"] == std::vector<int>{5, 6});
    CHECK(j["granted_sms"] == 4);
  }
  SECTION("effective: a request rounded up to the minimum group") {
    auto r = map_granted_partition({{2}, 2}, GreenGroup{0, 2, 4}, 4, {4, 5, 6, 7}, {4}, d);
    CHECK(r.match == PartitionMatch::Effective);
    CHECK(r.effective_tpcs == std::vector<int>{2, 3});
  }
  SECTION("blocks on more SMs than provisioned widen the set and are named") {
    auto r = map_granted_partition(want, g, 4, {4, 5, 6, 7}, {8, 9}, d);
    CHECK(r.match == PartitionMatch::Effective);
    CHECK(r.effective_tpcs == std::vector<int>{2, 3, 4});
    CHECK_THAT(r.reason, Catch::Contains("more than the 4 provisioned"));
  }
  SECTION("inexpressible: half a TPC") {
    auto r = map_granted_partition(want, g, 4, {4, 5, 6, 8}, {}, d);
    CHECK(r.match == PartitionMatch::Inexpressible);
    CHECK(r.effective_tpcs.empty());
    CHECK_THAT(r.reason, Catch::Contains("SM 7 of the same TPC 3") && Catch::Contains("SM 9 of the same TPC 4"));
  }
  SECTION("inexpressible: the census saw fewer SMs than were granted") {
    auto r = map_granted_partition(want, g, 4, {4, 5}, {}, d);
    CHECK(r.match == PartitionMatch::Inexpressible);
    CHECK_THAT(r.reason, Catch::Contains("saw 2 SMs of the 4 granted"));
  }
  SECTION("inexpressible: an SM the device does not have") {
    auto r = map_granted_partition(want, g, 4, {4, 5, 6, 7, 200}, {}, d);
    CHECK(r.match == PartitionMatch::Inexpressible);
    CHECK_THAT(r.reason, Catch::Contains("SM 200 is outside"));
  }
}

TEST_CASE("green contexts: block SMs per partition and the effective scenario a case records", "[cuda-host][green]") {
  using namespace tbcheck::oracle::cuda;
  auto s = test::scenario(R"({"device": "rtx2080ti", "kernels": [
      {"name": "a", "blocks": 2, "threads": 128, "regs": 32, "duration": 1, "tpcs": [0, 1]},
      {"name": "free", "blocks": 1, "threads": 128, "regs": 32, "duration": 1},
      {"name": "b", "blocks": 1, "threads": 128, "regs": 32, "duration": 1, "tpcs": [4]}]})");
  const PlanResult pr = build_launch_plan(s, nominal_variants(), CudaOptions{});
  REQUIRE(pr.status == PlanStatus::Ok);
  const LaunchPlan& plan = pr.plan;
  REQUIRE(plan.partitions.size() == 2);
  std::vector<KernelRecord> recs = {{"a", {{10, 20, 8, 8}, {0, 0, -1, -1}}}, {"free", {{10, 20, 30, 30}}},
                                    {"b", {{10, 20, 13, 13}}}};
  std::vector<std::vector<int>> acc;
  add_block_sms(plan, recs, acc);
  REQUIRE(acc.size() == 2);
  CHECK(acc[0] == std::vector<int>{8, 8});  // the block that never ran adds nothing; `free` is no partition's
  CHECK(acc[1] == std::vector<int>{13, 13});

  std::vector<GrantedPartition> g = {
      map_granted_partition(plan.partitions[0], plan.green.groups[0], 4, {8, 9, 10, 11}, acc[0], s.device),
      map_granted_partition(plan.partitions[1], plan.green.groups[1], 2, {12, 13}, acc[1], s.device)};
  CHECK(g[0].match == PartitionMatch::Effective);
  CHECK(g[1].match == PartitionMatch::Effective);
  const model::Scenario e = effective_scenario(s, plan, g);
  CHECK(e.kernels[0].tpcs == std::vector<int>{4, 5});
  CHECK(e.kernels[1].tpcs.empty());
  CHECK(e.kernels[2].tpcs == std::vector<int>{6});
  // The rewritten scenario is a valid scenario (what the recorded case is loaded as).
  const model::Scenario back = model::scenario_from_json(e.to_json(), "effective");
  CHECK(back.kernels[0].tpcs == std::vector<int>{4, 5});
  CHECK(back.kernels[2].tpcs == std::vector<int>{6});
}

TEST_CASE("green contexts in the launch plan: stream conflicts, the split in the dry run", "[cuda-host][green]") {
  using namespace tbcheck::oracle::cuda;
  auto s = test::scenario(R"({"device": "h100-sxm", "kernels": [
      {"name": "a", "blocks": 2, "threads": 128, "regs": 32, "duration": 1, "stream": 1, "tpcs": [0, 1]},
      {"name": "b", "blocks": 2, "threads": 128, "regs": 32, "duration": 1, "stream": 1, "tpcs": [0, 1]},
      {"name": "c", "blocks": 1, "threads": 128, "regs": 32, "duration": 1, "tpcs": [10, 11, 12, 13, 14]}]})");
  const PlanResult ok = build_launch_plan(s, nominal_variants(), CudaOptions{});
  REQUIRE(ok.status == PlanStatus::Ok);
  CHECK(ok.plan.green.groups.size() == 2);
  CHECK(ok.plan.green.groups[0].min_count == 8);
  CHECK(ok.plan.green.groups[1].min_count == 16);  // 10 SMs rounded to multiples of 8
  const std::string text = ok.plan.to_text();
  CHECK_THAT(text, Catch::Contains("cuDevSmResourceSplitByCount(minCount 8) (rounded up from 4)") &&
                       Catch::Contains("minCount 16) (rounded up from 10)") &&
                       Catch::Contains("nominal SM resource of 132 SMs, groups of at least 8 in multiples of 8"));
  CHECK(ok.plan.to_json()["green_contexts"]["groups"].size() == 2);

  auto shared = s;
  shared.kernels[2].stream = 1;  // c on a's stream, in another partition
  const PlanResult bad = build_launch_plan(shared, nominal_variants(), CudaOptions{});
  CHECK(bad.status == PlanStatus::Unsupported);
  CHECK_THAT(bad.reason, Catch::Contains("kernels a and c share a stream but not their TPCs"));
  auto mixed = s;
  mixed.kernels[1].tpcs.clear();  // b on a's stream without a partition
  CHECK(build_launch_plan(mixed, nominal_variants(), CudaOptions{}).status == PlanStatus::Unsupported);

  // No partition: no green-context section.
  auto plain = s;
  for (auto& k : plain.kernels) k.tpcs.clear();
  const PlanResult p = build_launch_plan(plain, nominal_variants(), CudaOptions{});
  CHECK_FALSE(p.plan.to_json().contains("green_contexts"));
  CHECK_THAT(p.plan.to_text(), !Catch::Contains("green contexts"));
}

TEST_CASE("run --dry-run shows the green-context split of a partitioned case", "[cuda-host][green]") {
  auto r = test::run_tbcheck("run corpus/paper/controls/demo-sm-masking-xavier.json --oracle cuda --dry-run");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("cuDevSmResourceSplitByCount(minCount") && Catch::Contains("green contexts: nominal"));
}

TEST_CASE("settle: each way a repetition can start has a name that parses back, and a fresh context is the default", "[cuda-host]") {
  for (Settle s : {Settle::None, Settle::Context}) CHECK(settle_from_string(to_string(s)) == s);
  CHECK_FALSE(settle_from_string("wave").has_value());
  // Repetitions in one context inherit where the last one left the scheduler (docs/results/h200.md).
  CHECK(CudaOptions{}.settle == Settle::Context);
}
