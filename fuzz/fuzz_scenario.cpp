// libFuzzer target: scenario_from_json on arbitrary text, then (when it loads and is small) the
// simulator under alg1 and round-robin. InputError is expected; anything else is a finding.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tbcheck;
  try {
    model::Scenario s = model::scenario_from_json(fuzz::parse(data, size), "fuzz");
    fuzz::simulate_alg1_and_round_robin(s);
  } catch (const model::InputError&) {
  }
  return 0;
}
