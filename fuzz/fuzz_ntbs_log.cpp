// libFuzzer target: an nicolaswilde/thread-block-scheduling log read by import-ntbs's parser, and every
// case it makes simulated; anything but an InputError (a std::stoi out_of_range, a crash) is a finding.
#include "fuzz_common.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/oracle/ntbs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tbcheck;
  const auto& devices = model::builtin_devices();
  const model::Device& d = devices[size % devices.size()];
  try {
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (const auto& c : oracle::ntbs::parse_log(text, d.name, "fuzz.log", "fuzz.log"))
      fuzz::simulate_alg1_and_round_robin(model::case_from_json(c, "fuzz").scenario);
  } catch (const model::InputError&) {
  }
  return 0;
}
