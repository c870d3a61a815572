// Regression tests for crashes the libFuzzer targets (fuzz/, scripts/fuzz.sh) found in model/:
// each input that once escaped as something other than InputError is replayed here.
#include <catch2/catch.hpp>

#include <string>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/model/scenario.hpp"

using namespace tbcheck::model;

// fuzz_device, crash-7de09946: "regs_per_sm": 6E5536 made nlohmann::json throw out_of_range (406,
// number overflow), which parse_json_text did not turn into an InputError.
TEST_CASE("a number too large for a double is an InputError", "[fuzz]") {
  CHECK_THROWS_AS(parse_json_text("6E5536", "fuzz"), InputError);
  CHECK_THROWS_AS(parse_json_text("{\"sms\": -1e400}", "fuzz"), InputError);
  try {
    parse_json_text("{\"regs_per_sm\": 6E5536}", "fuzz");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.where() == "fuzz");
    CHECK(std::string(e.what()).find("6E5536") != std::string::npos);
  }
  // The same through the loaders the fuzzers drive.
  CHECK_THROWS_AS(device_from_json(parse_json_text("{\"name\": \"x\", \"sms\": 6E5536}", "fuzz"), "fuzz"), InputError);
  const std::string scenario = "{\"device\": \"rtx3090\", \"kernels\": [{\"blocks\": 1e999}]}";
  CHECK_THROWS_AS(scenario_from_json(parse_json_text(scenario, "fuzz"), "fuzz"), InputError);
}
