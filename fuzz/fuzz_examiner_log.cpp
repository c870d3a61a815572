// libFuzzer target: a cuda_scheduling_examiner result log imported as import-examiner does, on one of the
// built-in devices; the cases made are simulated. Anything but an InputError is a finding.
#include "fuzz_common.hpp"
#include "tbcheck/oracle/examiner.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tbcheck;
  const std::string file = (fuzz::scratch_dir() / "log.json").string();
  fuzz::write_bytes(file, data, size);
  oracle::examiner::ImportOptions o;
  const auto [device, unit] = fuzz::device_and_unit(size);
  o.device = *device;
  o.time_unit_ms = unit;
  try {
    for (const auto& c : oracle::examiner::import_logs({file}, o)) fuzz::simulate_alg1_and_round_robin(c.scenario);
  } catch (const model::InputError&) {
  }
  return 0;
}
