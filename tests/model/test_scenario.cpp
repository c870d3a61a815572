// Scenario and kernel loading: every rejection names the file, the field path and the reason;
// accepted kernels get the W, R, S of docs/design.md and the documented defaults.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "helpers.hpp"
#include "tbcheck/model/scenario.hpp"

using namespace tbcheck;
using namespace tbcheck::model;
using tbcheck::test::error_of;

namespace {

// The InputError `f` raises (fails the test when it raises none).
InputError scenario_error(const std::string& text) {
  return error_of([&] { scenario_from_json(parse_json_text(text, "s.json"), "s.json"); });
}

// A scenario on rtx3090 with one kernel whose fields are `fields`.
InputError kernel_error(const std::string& fields) {
  return scenario_error(R"({"device": "rtx3090", "kernels": [{"name": "a", "blocks": 1, "threads": 32, "regs": 32,
      "smem": 0, "duration": 1}, {)" + fields + "}]}");
}

}  // namespace

TEST_CASE("scenario: a valid scenario loads with the derived needs", "[loaders][scenario]") {
  Scenario s = test::scenario(R"({"device": "rtx3090", "kernels": [
      {"name": "k1", "blocks": 41, "threads": 512, "regs": 32, "smem": 0, "duration": 1},
      {"blocks": 2, "threads": 33, "regs": 33, "smem": 1, "duration": 7, "stream": 3, "local": 64},
      {"name": "g", "grid": [4, 3], "threads": 1024, "regs": 255, "duration": 2}]})");
  REQUIRE(s.kernels.size() == 3);
  CHECK(s.device.name == "rtx3090");
  CHECK(s.device_builtin);
  CHECK(s.total_blocks() == 41 + 2 + 12);
  CHECK(s.kernel_index("g") == 2);
  CHECK(s.kernel_index("nope") == -1);

  const Kernel& k1 = s.kernels[0];
  CHECK(k1.warps() == 16);
  CHECK(k1.regs_per_warp(s.device) == 1024);
  CHECK(k1.smem_per_block(s.device) == 1024);  // 0 + 1 KB reserved
  CHECK_FALSE(k1.stream.has_value());
  CHECK(k1.local == 0);

  const Kernel& k2 = s.kernels[1];
  CHECK(k2.name == "k2");  // default name: k<position>
  CHECK(k2.warps() == 2);
  CHECK(k2.regs_per_warp(s.device) == 1280);        // 33 x 32 = 1056 -> 1280
  CHECK(k2.smem_per_block(s.device) == 128 + 1024);  // 1 byte -> 128, + reserved
  CHECK(k2.stream == 3);
  CHECK(k2.local == 64);
  CHECK(k2.duration == 7);

  const Kernel& g = s.kernels[2];
  CHECK(g.blocks == 12);
  REQUIRE(g.grid.has_value());
  CHECK(g.grid->first == 4);
  CHECK(g.grid->second == 3);
  CHECK(g.smem == 0);  // smem defaults to 0
  CHECK(g.regs_per_warp(s.device) == 8192);

  // Written back: the device by name, the grid as a grid, defaults omitted.
  json j = s.to_json();
  CHECK(j["device"] == "rtx3090");
  CHECK(j["kernels"][2]["grid"] == json::array({4, 3}));
  CHECK_FALSE(j["kernels"][2].contains("blocks"));
  CHECK_FALSE(j["kernels"][0].contains("stream"));
  CHECK(j["kernels"][1]["stream"] == 3);
  Scenario again = scenario_from_json(j, "again");
  CHECK(again.to_json() == j);
}

TEST_CASE("scenario: a device that differs from the built-in of its name is written whole", "[loaders][scenario]") {
  Scenario s = test::scenario(R"({"device": "tx2", "kernels": [{"blocks": 1, "threads": 32, "regs": 32, "smem": 0, "duration": 1}]})");
  REQUIRE(s.device_builtin);
  CHECK(s.to_json()["device"] == "tx2");
  // A search that sets device_builtin cannot lose a measured SM order by writing the name alone.
  s.device.smid_of_sm = {1, 0};
  s.device.smid_source = "measured";
  CHECK(s.to_json()["device"]["smid_of_sm"] == json::array({1, 0}));
  CHECK(scenario_from_json(s.to_json(), "s.json").device.smid_of_sm == std::vector<int>{1, 0});
}

TEST_CASE("scenario: an inline device is used and written back whole", "[loaders][scenario]") {
  Scenario s = test::scenario(R"({"device": {"name": "tiny", "cc": "7.0", "sms": 2, "sms_per_tpc": 2, "pbs_per_sm": 4,
      "max_blocks_per_sm": 8, "max_warps_per_sm": 16, "max_threads_per_block": 512, "regs_per_sm": 32768,
      "reg_alloc_unit": 256, "max_regs_per_thread": 255, "smem_configs_kb": [16, 32], "smem_alloc_unit": 256,
      "smem_reserved_per_block": 0, "max_smem_per_block": 32768},
      "kernels": [{"blocks": 1, "threads": 512, "regs": 32, "smem": 300, "duration": 1}]})");
  CHECK_FALSE(s.device_builtin);
  CHECK(s.device.sms == 2);
  CHECK(s.kernels[0].smem_per_block(s.device) == 512);  // 300 -> 2 units of 256
  CHECK(s.to_json()["device"]["name"] == "tiny");
  // The inline device's limits apply: 513 threads exceed its 512.
  InputError e = scenario_error(R"({"device": {"name": "tiny", "cc": "7.0", "sms": 2, "sms_per_tpc": 2, "pbs_per_sm": 4,
      "max_blocks_per_sm": 8, "max_warps_per_sm": 16, "max_threads_per_block": 512, "regs_per_sm": 32768,
      "reg_alloc_unit": 256, "max_regs_per_thread": 255, "smem_configs_kb": [16, 32], "smem_alloc_unit": 256,
      "smem_reserved_per_block": 0, "max_smem_per_block": 32768},
      "kernels": [{"blocks": 1, "threads": 513, "regs": 32, "smem": 0, "duration": 1}]})");
  CHECK(e.field() == "kernels[0].threads");
  CHECK(e.reason() == "513 threads > 512 per block on tiny");
}

TEST_CASE("scenario: kernels read against a device the caller holds keep that device and its limits",
          "[loaders][scenario]") {
  // Search rewrites kernels of a scenario it holds; the held device (a measured SM order included) is the one
  // used, whatever `device` the JSON carries, and the kernels are checked against it as a file's would be.
  Device d = builtin_device("tx2", "t", "device");
  d.smid_of_sm = {1, 0};
  d.smid_source = "measured";
  const json one = parse_json_text(R"({"device": "rtx3090", "kernels": [{"blocks": 3, "threads": 1024, "regs": 32,
      "smem": 0, "duration": 2}]})", "s.json");
  const Scenario s = scenario_from_json(one, d, false, "s.json");
  CHECK(s.device.name == "tx2");
  CHECK(s.device.smid_of_sm == std::vector<int>{1, 0});
  CHECK_FALSE(s.device_builtin);
  CHECK(s.total_blocks() == 3);
  CHECK(scenario_from_json(one, d, true, "s.json").device_builtin);

  const json too_big = parse_json_text(R"({"kernels": [{"blocks": 1, "threads": 32, "regs": 32, "smem": 49153,
      "duration": 1}]})", "s.json");
  std::string why;
  CHECK_FALSE(try_scenario_from_json(too_big, d, false, "s.json", &why));
  CHECK(why.find("kernels[0].smem") != std::string::npos);
  CHECK(why.find("on tx2") != std::string::npos);
  // A loaded device is not parsed again, so a JSON without `kernels` is still the error it is for a file.
  CHECK(error_of([&] { scenario_from_json(json::object(), d, false, "s.json"); }).field() == "kernels");
}

TEST_CASE("scenario: malformed JSON names the byte offset", "[loaders][scenario]") {
  // `{"a": }`: the parser fails at the 7th byte, the closing brace.
  InputError e = error_of([] { parse_json_text(R"({"a": })", "bad.json"); });
  CHECK(e.where() == "bad.json");
  CHECK_THAT(e.reason(), Catch::StartsWith("malformed JSON at byte 7"));
  CHECK_THAT(std::string(e.what()), Catch::StartsWith("bad.json: malformed JSON at byte 7"));
  // A truncated file, read from disk: the offset is where the text ends.
  auto dir = std::filesystem::temp_directory_path() / "tbcheck-test-scenario";
  std::filesystem::create_directories(dir);
  auto path = (dir / "truncated.json").string();
  {
    std::ofstream out(path);
    out << R"({"device": "rtx3090")";  // 20 bytes, then end of input
  }
  InputError f = error_of([&] { load_scenario_file(path); });
  CHECK(f.where() == path);
  CHECK_THAT(f.reason(), Catch::StartsWith("malformed JSON at byte 21"));
  InputError g = error_of([&] { load_scenario_file((dir / "missing.json").string()); });
  CHECK(g.reason() == "no such file or directory");
  std::filesystem::remove_all(dir);
}

TEST_CASE("scenario: unknown fields list the valid ones", "[loaders][scenario]") {
  InputError e = kernel_error(R"("name": "b", "blocks": 1, "thread": 32, "regs": 32, "duration": 1)");
  CHECK(e.where() == "s.json");
  CHECK(e.field() == "kernels[1].thread");
  CHECK(e.reason() == "unknown field; valid fields are: name, blocks, grid, threads, regs, smem, local, stream, duration, "
                        "priority, release_time, tpcs, cluster");
  InputError top = scenario_error(R"({"device": "rtx3090", "kernel": []})");
  CHECK(top.field() == "kernels");  // "kernels" itself is missing
  // load_scenario_file rejects unknown top-level keys (it accepts the keys of a corpus case).
  auto dir = std::filesystem::temp_directory_path() / "tbcheck-test-scenario-keys";
  std::filesystem::create_directories(dir);
  auto path = (dir / "s.json").string();
  {
    std::ofstream out(path);
    out << R"({"device": "rtx3090", "kernels": [{"blocks": 1, "threads": 32, "regs": 32, "duration": 1}],
               "id": "x", "colour": "red"})";
  }
  InputError f = error_of([&] { load_scenario_file(path); });
  CHECK(f.field() == "colour");
  CHECK_THAT(f.reason(), Catch::StartsWith("unknown field; valid fields are: id, source, device, kernels"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("scenario: wrong types name the expected type", "[loaders][scenario]") {
  InputError e = kernel_error(R"("name": "b", "blocks": 1, "threads": "256", "regs": 32, "duration": 1)");
  CHECK(e.field() == "kernels[1].threads");
  CHECK(e.reason() == "expected an integer, found a string");
  InputError f = kernel_error(R"("name": "b", "blocks": 1, "threads": 32, "regs": 32, "duration": 1.5)");
  CHECK(f.field() == "kernels[1].duration");
  CHECK(f.reason() == "expected an integer, found a fractional number");
  InputError g = kernel_error(R"("name": 7, "blocks": 1, "threads": 32, "regs": 32, "duration": 1)");
  CHECK(g.field() == "kernels[1].name");
  CHECK(g.reason() == "expected a string, found an integer");
  InputError h = scenario_error(R"({"device": 3090, "kernels": []})");
  CHECK(h.field() == "device");
  CHECK(h.reason() == "expected a built-in device name or a device object, found an integer");
  InputError k = scenario_error(R"({"device": "rtx3090", "kernels": {}})");
  CHECK(k.field() == "kernels");
  CHECK(k.reason() == "expected an array, found an object");
  InputError top = scenario_error("[1, 2]");
  CHECK(top.reason() == "expected an object, found an array");
  InputError kobj = scenario_error(R"({"device": "rtx3090", "kernels": [3]})");
  CHECK(kobj.field() == "kernels[0]");
  CHECK(kobj.reason() == "expected an object, found an integer");
}

TEST_CASE("scenario: kernel limits against the device", "[loaders][scenario]") {
  InputError threads = kernel_error(R"("name": "b", "blocks": 1, "threads": 1200, "regs": 32, "duration": 1)");
  CHECK(threads.field() == "kernels[1].threads");
  CHECK(threads.reason() == "1200 threads > 1024 per block on rtx3090");
  CHECK_THAT(std::string(threads.what()), Catch::Contains("1200 threads > 1024 per block"));

  InputError regs = kernel_error(R"("name": "b", "blocks": 1, "threads": 32, "regs": 256, "duration": 1)");
  CHECK(regs.field() == "kernels[1].regs");
  CHECK(regs.reason() == "256 registers > 255 per thread on rtx3090");

  InputError smem = kernel_error(R"("name": "b", "blocks": 1, "threads": 32, "regs": 32, "smem": 101377, "duration": 1)");
  CHECK(smem.field() == "kernels[1].smem");
  CHECK(smem.reason() == "101377 bytes > 101376 bytes of shared memory per block on rtx3090");
  // The limit itself is accepted.
  CHECK_NOTHROW(test::scenario(R"({"device": "rtx3090", "kernels": [{"blocks": 1, "threads": 1024, "regs": 255,
      "smem": 101376, "duration": 1}]})"));

  InputError blocks = kernel_error(R"("name": "b", "blocks": 0, "threads": 32, "regs": 32, "duration": 1)");
  CHECK(blocks.field() == "kernels[1].blocks");
  CHECK(blocks.reason() == "0 is below the minimum 1");

  InputError duration = kernel_error(R"("name": "b", "blocks": 1, "threads": 32, "regs": 32, "duration": 0)");
  CHECK(duration.field() == "kernels[1].duration");
  CHECK(duration.reason() == "0 is below the minimum 1");

  InputError zero_threads = kernel_error(R"("name": "b", "blocks": 1, "threads": 0, "regs": 32, "duration": 1)");
  CHECK(zero_threads.field() == "kernels[1].threads");
  CHECK(zero_threads.reason() == "0 is below the minimum 1");

  InputError missing = kernel_error(R"("name": "b", "blocks": 1, "threads": 32, "duration": 1)");
  CHECK(missing.field() == "kernels[1].regs");
  CHECK(missing.reason() == "required field is missing");

  InputError no_blocks = kernel_error(R"("name": "b", "threads": 32, "regs": 32, "duration": 1)");
  CHECK(no_blocks.field() == "kernels[1].blocks");
  CHECK_THAT(no_blocks.reason(), Catch::StartsWith("required field is missing"));

  InputError grid = kernel_error(R"("name": "b", "grid": [2, 3], "blocks": 5, "threads": 32, "regs": 32, "duration": 1)");
  CHECK(grid.field() == "kernels[1].blocks");
  CHECK(grid.reason() == "disagrees with grid 2 x 3 = 6");
  InputError grid3 = kernel_error(R"("name": "b", "grid": [2, 3, 4], "threads": 32, "regs": 32, "duration": 1)");
  CHECK(grid3.field() == "kernels[1].grid");
  CHECK(grid3.reason() == "expected [x, y], found 3 numbers");

  InputError stream = kernel_error(R"("name": "b", "blocks": 1, "threads": 32, "regs": 32, "duration": 1, "stream": -1)");
  CHECK(stream.field() == "kernels[1].stream");
  CHECK(stream.reason() == "-1 is below the minimum 0");
}

TEST_CASE("scenario: device names, kernel names and empty lists", "[loaders][scenario]") {
  InputError dev = scenario_error(R"({"device": "rtx9090", "kernels": [{"blocks": 1, "threads": 32, "regs": 32, "duration": 1}]})");
  CHECK(dev.field() == "device");
  CHECK(dev.reason() ==
        "unknown device 'rtx9090'; built-in devices are: a100, b200, h100-pcie, h100-sxm-assumed-gpcs, h100-sxm, h200, quadro6000, rtx2080ti, "
        "rtx3090, tx2, v100, xavier");

  InputError dup = kernel_error(R"("name": "a", "blocks": 1, "threads": 32, "regs": 32, "duration": 1)");
  CHECK(dup.field() == "kernels[1].name");
  CHECK(dup.reason() == "kernel name 'a' is used twice");
  // A default name can collide with an explicit one too: the second kernel is "k2" by default.
  InputError dup2 = scenario_error(R"({"device": "rtx3090", "kernels": [
      {"name": "k2", "blocks": 1, "threads": 32, "regs": 32, "duration": 1},
      {"blocks": 1, "threads": 32, "regs": 32, "duration": 1}]})");
  CHECK(dup2.field() == "kernels[1].name");
  CHECK(dup2.reason() == "kernel name 'k2' is used twice");

  InputError empty_name = kernel_error(R"("name": "", "blocks": 1, "threads": 32, "regs": 32, "duration": 1)");
  CHECK(empty_name.field() == "kernels[1].name");
  CHECK(empty_name.reason() == "must not be empty");

  InputError none = scenario_error(R"({"device": "rtx3090", "kernels": []})");
  CHECK(none.field() == "kernels");
  CHECK(none.reason() == "a scenario needs at least one kernel");

  InputError no_device = scenario_error(R"({"kernels": []})");
  CHECK(no_device.field() == "device");
  CHECK(no_device.reason() == "required field is missing");
}

TEST_CASE("scenario: errors name the device field path of an inline device", "[loaders][scenario]") {
  InputError e = scenario_error(R"({"device": {"name": "tiny", "cc": "7.0", "sms": 0}, "kernels": []})");
  CHECK(e.field() == "device.sms");
  CHECK(e.reason() == "0 is below the minimum 1");
}

// The controls users set (priority, release_time, tpcs, cluster) and their input errors.
TEST_CASE("controls load, write back, and impossible values name the field", "[scenario][controls]") {
  auto s = test::scenario(R"({"device": "rtx2080ti", "kernels": [
      {"name": "a", "blocks": 4, "threads": 128, "regs": 32, "duration": 1, "stream": 0, "priority": 0},
      {"name": "b", "blocks": 4, "threads": 128, "regs": 32, "duration": 1, "stream": 1, "priority": -5, "release_time": 7,
       "tpcs": [3, 1]}]})");
  CHECK(s.kernels[0].priority == 0);
  CHECK(s.kernels[1].priority == -5);
  CHECK(s.kernels[1].release == 7);
  CHECK(s.kernels[1].tpcs == std::vector<int>{1, 3});
  auto back = scenario_from_json(s.to_json(), "again");
  CHECK(back.kernels[1].to_json() == s.kernels[1].to_json());

  auto err = [](const std::string& kernels, const std::string& device = "\"rtx2080ti\"") {
    return scenario_error(R"({"device": )" + device + R"(, "kernels": [)" + kernels + "]}");
  };
  const std::string k = R"("blocks": 4, "threads": 128, "regs": 32, "duration": 1)";
  auto e = err("{" + k + R"(, "priority": -6})");
  CHECK(e.field() == "kernels[0].priority");
  CHECK_THAT(e.reason(), Catch::Contains("outside rtx2080ti's range [0 (least), -5 (greatest)]"));
  CHECK_THAT(err("{" + k + R"(, "priority": 0})", "\"a100\"").reason(), Catch::Contains("has no stream priority range"));
  CHECK(err("{" + k + R"(, "tpcs": [34]})").field() == "kernels[0].tpcs");  // 68 SMs = TPCs 0..33
  CHECK_THAT(err("{" + k + R"(, "tpcs": [2, 2]})").reason(), Catch::Contains("listed twice"));
  CHECK_THAT(err("{" + k + R"(, "tpcs": []})").reason(), Catch::Contains("empty TPC set"));
  CHECK_THAT(err("{" + k + R"(, "cluster": [2]})").reason(), Catch::Contains("compute capability 9.0"));
  CHECK_THAT(err("{" + k + R"(, "cluster": [3]})", "\"h100-sxm\"").reason(), Catch::Contains("not a whole number of 3 x 1 x 1"));
  CHECK_THAT(err("{" + k + R"(, "cluster": [4, 4]})", "\"h100-sxm\"").reason(), Catch::Contains("portable limit of 8"));
  CHECK(err("{" + k + R"(, "release_time": -1})").field() == "kernels[0].release_time");
  auto order = err(R"({"name": "x", )" + k + R"(, "release_time": 5}, {"name": "y", )" + k + "}");
  CHECK(order.field() == "kernels[1].release_time");
  CHECK_THAT(order.reason(), Catch::Contains("launch order"));
  auto shared = err(R"({"name": "x", "stream": 1, "priority": 0, )" + k + R"(}, {"name": "y", "stream": 1, )" + k + "}");
  CHECK(shared.field() == "kernels[1].priority");
  auto ok = test::scenario(R"({"device": "h100-sxm", "kernels": [{"grid": [8, 4], "threads": 64, "regs": 32, "duration": 1, "cluster": [4, 2]}]})");
  CHECK(ok.kernels[0].cluster_size() == 8);
}


TEST_CASE("scenario: a kernel name with a control character is refused naming the field, never echoed",
          "[loaders][scenario]") {
  // Written as JSON escapes: the loader sees the raw ESC, NUL, newline and DEL.
  for (const std::string& name : {std::string(R"(a\u001b[2Jb)"), std::string(R"(a\u0000b)"), std::string(R"(a\nb)"),
                                  std::string(R"(a\u007fb)")}) {
    INFO(name);
    auto e = kernel_error(R"("name": ")" + name + R"(", "blocks": 1, "threads": 32, "regs": 32, "smem": 0, "duration": 1)");
    CHECK(e.field() == "kernels[1].name");
    CHECK_THAT(e.reason(), Catch::Contains("control character 0x"));
    for (char ch : std::string(e.what())) CHECK((static_cast<unsigned char>(ch) >= 0x20 && ch != 0x7f));
  }
}
