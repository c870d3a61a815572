// libFuzzer target: device_from_json on arbitrary text; a device that loads must run a small fixed
// workload through the simulator under alg1 and round-robin without a crash. InputError is expected.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tbcheck;
  try {
    model::Device d = model::device_from_json(fuzz::parse(data, size), "fuzz");
    fuzz::simulate_alg1_and_round_robin(fuzz::probe_scenario(d));
  } catch (const model::InputError&) {
  }
  return 0;
}
