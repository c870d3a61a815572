// libFuzzer target: hypothesis_from_json on arbitrary text; a hypothesis that loads must run a small
// fixed workload on two built-in devices through the simulator without a crash. InputError is expected.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tbcheck;
  try {
    model::Hypothesis h = model::hypothesis_from_json(fuzz::parse(data, size), "fuzz");
    for (const char* device : {"rtx3090", "xavier"})
      fuzz::simulate_checked(fuzz::probe_scenario(model::builtin_device(device, "fuzz", "device")), h);
  } catch (const model::InputError&) {
  }
  return 0;
}
