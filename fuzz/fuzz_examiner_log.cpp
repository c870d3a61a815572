// libFuzzer target: a cuda_scheduling_examiner result log imported as import-examiner does, on one of the
// built-in devices; the cases made are simulated. Anything but an InputError is a finding.
#include "fuzz_common.hpp"
#include "tbcheck/oracle/examiner.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tbcheck;
  oracle::examiner::ImportOptions o;
  const auto [device, unit] = fuzz::device_and_unit(size);
  o.device = *device;
  o.time_unit_ms = unit;
  try {
    // In memory: a file written and read back per input cost more than the import; the file checks
    // (read_input_file's) stay on import_logs' path.
    const std::vector<oracle::examiner::LogText> logs = {{"log.json", std::string(reinterpret_cast<const char*>(data), size)}};
    for (const auto& c : oracle::examiner::import_log_texts(logs, o)) fuzz::simulate_alg1_and_round_robin(c.scenario);
  } catch (const model::InputError&) {
  }
  return 0;
}
