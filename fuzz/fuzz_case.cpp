// libFuzzer target: case_from_json (scenario, observation, expect) on arbitrary text, then (when it
// loads and is small) the simulator under alg1 and round-robin. InputError is expected.
#include "fuzz_common.hpp"
#include "tbcheck/model/observation.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tbcheck;
  try {
    model::Case c = model::case_from_json(fuzz::parse(data, size), "fuzz");
    fuzz::simulate_alg1_and_round_robin(c.scenario);
  } catch (const model::InputError&) {
  }
  return 0;
}
