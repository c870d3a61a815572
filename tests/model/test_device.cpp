// Device specs: validation of every inconsistent field with its reason, and the nine built-in
// devices against the numbers docs/design.md gives (Table I of seed 000, the CUDA occupancy limits).
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/device_spec.hpp"
#include "tbcheck/model/observation.hpp"

using namespace tbcheck;
using namespace tbcheck::model;
using tbcheck::test::error_of;

namespace {

json mini_ampere() {
  return json::parse(R"({"name": "mini-ampere-2", "cc": "8.6", "sms": 2, "sms_per_tpc": 2, "pbs_per_sm": 4,
      "max_blocks_per_sm": 16, "max_warps_per_sm": 48, "max_threads_per_block": 1024, "regs_per_sm": 65536,
      "reg_alloc_unit": 256, "max_regs_per_thread": 255, "smem_configs_kb": [0, 8, 16, 32, 64, 100],
      "smem_alloc_unit": 128, "smem_reserved_per_block": 1024, "max_smem_per_block": 101376})");
}

// The error of loading mini-ampere-2 with one field replaced.
InputError device_error(const std::string& key, const json& value) {
  json j = mini_ampere();
  j[key] = value;
  return error_of([&] { device_from_json(j, "dev.json", "device"); });
}

}  // namespace

TEST_CASE("device: the docs/design.md example loads", "[loaders][device]") {
  Device d = device_from_json(mini_ampere(), "dev.json");
  CHECK(d.name == "mini-ampere-2");
  CHECK(d.sms == 2);
  CHECK(d.tpcs() == 1);
  CHECK(d.tpc_of(1) == 0);
  CHECK(d.warp_slots_per_pb() == 12);
  CHECK(d.regs_per_pb() == 16384);
  CHECK(d.max_smem_config_bytes() == 102400);
  CHECK(d.config_at_least(0) == 0);
  CHECK(d.config_at_least(1) == 8192);
  CHECK(d.config_at_least(8192) == 8192);
  CHECK(d.config_at_least(8193) == 16384);
  CHECK(d.config_at_least(102400) == 102400);
  CHECK_FALSE(d.config_at_least(102401).has_value());
  CHECK(d.gpc_of_tpc.empty());
  // to_json round-trips.
  CHECK(device_from_json(d.to_json(), "again").to_json() == d.to_json());
}

TEST_CASE("device: inconsistent limits are rejected with the reason", "[loaders][device]") {
  InputError warps = device_error("max_warps_per_sm", 46);
  CHECK(warps.where() == "dev.json");
  CHECK(warps.field() == "device.max_warps_per_sm");
  CHECK(warps.reason() == "46 warps cannot be split evenly among 4 processing blocks");

  InputError regs = device_error("regs_per_sm", 65534);
  CHECK(regs.field() == "device.regs_per_sm");
  CHECK(regs.reason() == "65534 registers cannot be split evenly among 4 processing blocks");

  InputError order = device_error("smem_configs_kb", json::array({0, 16, 8, 100}));
  CHECK(order.field() == "device.smem_configs_kb");
  CHECK(order.reason() == "must be strictly ascending, found [0, 16, 8, 100]");
  InputError repeated = device_error("smem_configs_kb", json::array({0, 8, 8, 100}));
  CHECK(repeated.reason() == "must be strictly ascending, found [0, 8, 8, 100]");
  InputError empty = device_error("smem_configs_kb", json::array());
  CHECK(empty.reason() == "must list at least one configuration");

  InputError gpc = device_error("gpc_of_tpc", json::array({0, 1, 2}));
  CHECK(gpc.field() == "device.gpc_of_tpc");
  CHECK(gpc.reason() == "lists 3 TPCs but the device has 1");
  json ok = mini_ampere();
  ok["gpc_of_tpc"] = json::array({3});
  CHECK(device_from_json(ok, "dev.json").gpc_of_tpc == std::vector<int>{3});

  InputError tpc = device_error("sms", 3);
  CHECK(tpc.field() == "device.sms_per_tpc");
  CHECK(tpc.reason() == "3 SMs cannot be split into TPCs of 2");

  InputError unit = device_error("reg_alloc_unit", 100);
  CHECK(unit.field() == "device.reg_alloc_unit");
  CHECK(unit.reason() == "100 is not a whole number of registers per thread of a warp (multiple of 32)");

  InputError big = device_error("max_smem_per_block", 101377);
  CHECK(big.field() == "device.max_smem_per_block");
  CHECK(big.reason() == "101377 bytes plus 1024 reserved exceed the largest configuration (100 KB)");

  InputError cc = device_error("cc", "ampere");
  CHECK(cc.field() == "device.cc");
  CHECK(cc.reason() == "'ampere' is not a compute capability like \"8.6\"");

  InputError name = device_error("name", "");
  CHECK(name.field() == "device.name");
  CHECK(name.reason() == "must not be empty");

  InputError pbs = device_error("pbs_per_sm", 0);
  CHECK(pbs.field() == "device.pbs_per_sm");
  CHECK(pbs.reason() == "0 is below the minimum 1");

  InputError type = device_error("sms", "two");
  CHECK(type.field() == "device.sms");
  CHECK(type.reason() == "expected an integer, found a string");

  InputError unknown = device_error("sm_count", 2);
  CHECK(unknown.field() == "device.sm_count");
  CHECK_THAT(unknown.reason(), Catch::StartsWith("unknown field; valid fields are: name, description, cc, sms"));

  json missing = mini_ampere();
  missing.erase("regs_per_sm");
  InputError m = error_of([&] { device_from_json(missing, "dev.json", "device"); });
  CHECK(m.field() == "device.regs_per_sm");
  CHECK(m.reason() == "required field is missing");
}

TEST_CASE("device: the block-issue properties and the architecture of a compute capability", "[loaders][device]") {
  InputError pass = device_error("issue_pass", 2);
  CHECK(pass.field() == "device.issue_pass");
  CHECK(pass.reason() == "groups pair decisions into hand-out passes, so it needs \"issue_pairs\": true");
  CHECK(device_error("issue_pass_from", 3).field() == "device.issue_pass_from");
  CHECK(device_error("issue_pairs", "yes").field() == "device.issue_pairs");
  const Device& turing = builtin_device("rtx2080ti", "t", "device");
  CHECK(turing.issue_pairs);
  CHECK(turing.issue_pass == 2);
  CHECK(turing.issue_pass_from == 3);
  CHECK(device_from_json(turing.to_json(), "t").issue_pass_from == 3);  // round trip
  CHECK_FALSE(builtin_device("v100", "t", "device").issue_pairs);
  CHECK(builtin_device("a100", "t", "device").issue_pass == 1);
  std::map<std::string, std::string> arch;
  for (const auto& d : builtin_devices()) arch[d.name] = d.architecture();
  CHECK(arch == std::map<std::string, std::string>{{"a100", "Ampere"}, {"b200", "Blackwell"}, {"h100-pcie", "Hopper"}, {"h100-sxm", "Hopper"}, {"h100-sxm-assumed-gpcs", "Hopper"},
                                                   {"h200", "Hopper"}, {"quadro6000", "Fermi"}, {"rtx2080ti", "Turing"},
                                                   {"rtx3090", "Ampere"}, {"tx2", "Pascal"}, {"v100", "Volta"}, {"xavier", "Volta"}});
}

TEST_CASE("device: the built-in devices with the docs/design.md numbers", "[loaders][device]") {
  const auto& all = builtin_devices();
  std::vector<std::string> names;
  for (const auto& d : all) names.push_back(d.name);
  CHECK(names == std::vector<std::string>{"a100", "b200", "h100-pcie", "h100-sxm-assumed-gpcs", "h100-sxm", "h200", "quadro6000", "rtx2080ti", "rtx3090",
                                          "tx2", "v100", "xavier"});

  const Device& rtx3090 = builtin_device("rtx3090", "t", "device");
  CHECK(rtx3090.cc == "8.6");
  CHECK(rtx3090.sms == 82);
  CHECK(rtx3090.max_blocks_per_sm == 16);
  CHECK(rtx3090.max_warps_per_sm == 48);
  CHECK(rtx3090.regs_per_sm == 65536);
  CHECK(rtx3090.smem_configs_kb == std::vector<int>{0, 8, 16, 32, 64, 100});
  CHECK(rtx3090.smem_reserved_per_block == 1024);
  CHECK(rtx3090.pbs_per_sm == 4);
  CHECK(rtx3090.sms_per_tpc == 2);
  CHECK(rtx3090.reg_alloc_unit == 256);
  CHECK(rtx3090.max_regs_per_thread == 255);
  CHECK(rtx3090.smem_alloc_unit == 128);
  CHECK(rtx3090.max_threads_per_block == 1024);

  const Device& turing = builtin_device("rtx2080ti", "t", "device");
  CHECK(turing.cc == "7.5");
  CHECK(turing.sms == 68);
  CHECK(turing.max_blocks_per_sm == 16);
  CHECK(turing.max_warps_per_sm == 32);
  CHECK(turing.smem_configs_kb == std::vector<int>{32, 64});
  CHECK(turing.smem_reserved_per_block == 0);

  const Device& a100 = builtin_device("a100", "t", "device");
  CHECK(a100.cc == "8.0");
  CHECK(a100.sms == 108);
  CHECK(a100.max_blocks_per_sm == 32);
  CHECK(a100.max_warps_per_sm == 64);
  CHECK(a100.smem_configs_kb.back() == 164);
  CHECK(a100.smem_reserved_per_block == 1024);

  const std::vector<int> hopper_configs{0, 8, 16, 32, 64, 100, 132, 164, 196, 228};
  for (auto [name, sms] : std::vector<std::pair<std::string, int>>{{"h100-sxm", 132}, {"h100-pcie", 114}, {"h200", 132}}) {
    INFO(name);
    const Device& h = builtin_device(name, "t", "device");
    CHECK(h.cc == "9.0");
    CHECK(h.sms == sms);
    CHECK(h.max_blocks_per_sm == 32);
    CHECK(h.max_warps_per_sm == 64);
    CHECK(h.smem_configs_kb == hopper_configs);
    CHECK(h.smem_reserved_per_block == 1024);
  }

  const Device& v100 = builtin_device("v100", "t", "device");
  CHECK(v100.cc == "7.0");
  CHECK(v100.sms == 80);

  const Device& xavier = builtin_device("xavier", "t", "device");
  CHECK(xavier.sms == 8);
  CHECK(xavier.max_warps_per_sm == 64);
  CHECK(xavier.cc == "7.2");

  const Device& fermi = builtin_device("quadro6000", "t", "device");
  CHECK(fermi.sms == 14);
  CHECK(fermi.cc == "2.0");
  CHECK(fermi.gpc_of_tpc.size() == static_cast<size_t>(fermi.tpcs()));

  // Every built-in device is self-consistent (it re-validates from its own JSON).
  for (const auto& d : all) {
    INFO(d.name);
    CHECK_NOTHROW(device_from_json(d.to_json(), "again"));
    CHECK(d.max_smem_per_block + d.smem_reserved_per_block <= d.max_smem_config_bytes());
  }
}

TEST_CASE("device: an unknown built-in name lists the built-in ones", "[loaders][device]") {
  InputError e = error_of([] { builtin_device("gtx480", "case.json", "device"); });
  CHECK(e.where() == "case.json");
  CHECK(e.field() == "device");
  CHECK(e.reason() ==
        "unknown device 'gtx480'; built-in devices are: a100, b200, h100-pcie, h100-sxm-assumed-gpcs, h100-sxm, h200, quadro6000, rtx2080ti, "
        "rtx3090, tx2, v100, xavier");
}

// Stream priority ranges and GPC maps carry their sources; bad ranges name the field.
TEST_CASE("device: stream priority ranges and GPC-map sources", "[loaders][device][controls]") {
  const Device& tu = builtin_device("rtx2080ti", "t", "device");
  REQUIRE(tu.stream_priorities.has_value());
  CHECK(tu.stream_priorities->least == 0);
  CHECK(tu.stream_priorities->greatest == -5);
  CHECK_THAT(tu.stream_priorities->source, Catch::Contains("Test5"));
  const Device& tx2 = builtin_device("tx2", "t", "device");
  CHECK(tx2.cc == "6.2");
  CHECK(tx2.sms == 2);
  CHECK_FALSE(tx2.has_clusters());
  CHECK(builtin_device("h100-sxm", "t", "device").has_clusters());
  CHECK_THAT(builtin_device("quadro6000", "t", "device").gpc_source, Catch::Contains("seed 003"));
  json j = tu.to_json();
  CHECK(device_from_json(j, "d.json").stream_priorities->source == tu.stream_priorities->source);
  j["stream_priorities"]["greatest"] = 1;
  InputError e = test::error_of([&] { device_from_json(j, "d.json"); });
  CHECK(e.field() == "device.stream_priorities.greatest");
  json k = tu.to_json();
  k["gpc_source"] = "a paper";
  CHECK(test::error_of([&] { device_from_json(k, "d.json"); }).field() == "device.gpc_source");  // no map
}

TEST_CASE("device: a scheduler SM order is a permutation of the SMs with its source, and survives a round trip", "[loaders][device]") {
  json j = builtin_device("tx2", "t", "device").to_json();  // 2 SMs
  j["smid_of_sm"] = {1, 0};
  j["smid_source"] = "measured";
  const Device d = device_from_json(j, "d.json");
  CHECK(d.smid_of_sm == std::vector<int>{1, 0});
  CHECK(device_from_json(d.to_json(), "d.json").smid_of_sm == d.smid_of_sm);
  json twice = j;
  twice["smid_of_sm"] = {1, 1};
  CHECK_THAT(test::error_of([&] { device_from_json(twice, "d.json"); }).reason(), Catch::Contains("twice"));
  json short_ = j;
  short_["smid_of_sm"] = {1};
  CHECK(test::error_of([&] { device_from_json(short_, "d.json"); }).field() == "device.smid_of_sm");
  json outside = j;
  outside["smid_of_sm"] = {0, 2};
  CHECK_THAT(test::error_of([&] { device_from_json(outside, "d.json"); }).field(), Catch::StartsWith("device.smid_of_sm"));
  json unsourced = j;
  unsourced.erase("smid_source");
  CHECK(test::error_of([&] { device_from_json(unsourced, "d.json"); }).field() == "device.smid_source");
  CHECK(builtin_device("h200", "t", "device").smid_of_sm.empty());  // measured per GPU, never built in
}

TEST_CASE("device: b200's inferred GPC map keeps every recorded cluster on one GPC and orders the launch without clusters GPC by GPC", "[loaders][device]") {
  const Device& b200 = builtin_device("b200", "t", "device");
  REQUIRE(b200.gpc_of_tpc.size() == 74);
  CHECK(b200.gpc_source.find("inferred") != std::string::npos);  // never passed off as measured
  const auto cases = load_cases(test::source_path("corpus/hw/b200/097-threadblock-allocation.json"));
  REQUIRE(cases.size() == 3);
  for (const auto& c : cases) {
    INFO(c.id);
    REQUIRE(c.observation.has_value());
    const auto& sms = c.observation->sm_of_block.at("K1");
    const auto gpc = [&](int sm) { return b200.gpc_of_tpc[static_cast<size_t>(sm / b200.sms_per_tpc)]; };
    const int size = c.scenario.kernels.front().cluster_size();
    for (size_t b = 0; b < sms.size(); b += static_cast<size_t>(size))
      for (int r = 1; r < size; ++r) CHECK(gpc(sms[b + static_cast<size_t>(r)]) == gpc(sms[b]));
    if (size == 1) {
      // Each GPC is visited in one run, in index order: the map was cut from this order, so this
      // guards the file against an edit that breaks it.
      for (size_t b = 1; b < sms.size(); ++b) CHECK(gpc(sms[b]) >= gpc(sms[b - 1]));
    }
  }
}

TEST_CASE("device: a flag takes a built-in name or a device file, and only an unchanged built-in counts as built in", "[loaders][device]") {
  CHECK(device_from_spec("rtx3090", "--device").sms == 82);
  CHECK(test::error_of([] { device_from_spec("nosuch", "--device"); }).where() == "--device");
  // A measured GPU keeps its built-in's name but not its numbers: it is not the built-in.
  json measured = builtin_device("tx2", "t", "device").to_json();
  measured["smid_of_sm"] = {1, 0};
  measured["smid_source"] = "measured";
  test::TempDir dir("device-spec");
  const std::string file = (dir.path / "tx2-measured.json").string();
  {
    std::ofstream(file) << measured.dump();
  }
  const Device d = device_from_spec(file, "--device");
  CHECK(d.name == "tx2");
  CHECK(d.smid_of_sm == std::vector<int>{1, 0});
  CHECK_FALSE(is_builtin(d));
  CHECK(is_builtin(builtin_device("tx2", "t", "device")));
  // A missing file is an error naming the file, not a lookup among the built-in names.
  CHECK(test::error_of([&] { device_from_spec((dir.path / "none.json").string(), "--device"); }).where() ==
        (dir.path / "none.json").string());
}

TEST_CASE("device: a search over a folder's files tells a device file from the other JSON beside it", "[loaders][device]") {
  test::TempDir dir("device-file-if-valid");
  const auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = (dir.path / name).string();
    std::ofstream(path) << text;
    return path;
  };
  const Device rtx = builtin_device("rtx3090", "t", "device");
  const auto d = device_file_if_valid(write("device.json", rtx.to_json().dump()));
  REQUIRE(d.has_value());
  CHECK(*d == rtx);
  // A learn result, a device missing a field, a file that is not JSON, and no file at all: not a device.
  CHECK_FALSE(device_file_if_valid(write("learn.json", R"({"outcome": "identified", "survivors": ["alg1"]})")));
  json partial = rtx.to_json();
  partial.erase("sms");
  CHECK_FALSE(device_file_if_valid(write("partial.json", partial.dump())));
  CHECK_FALSE(device_file_if_valid(write("log.json", "probe-gpc log, not JSON")));
  CHECK_FALSE(device_file_if_valid((dir.path / "none.json").string()));
}
