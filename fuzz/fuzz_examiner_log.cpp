// libFuzzer target: a cuda_scheduling_examiner result log imported as import-examiner does, on one of the
// built-in devices; the cases made are simulated. Anything but an InputError is a finding.
#include "fuzz_common.hpp"
#include "tbcheck/oracle/examiner.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tbcheck;
  const auto& devices = model::builtin_devices();
  const std::string file = (fuzz::scratch_dir() / "log.json").string();
  fuzz::write_bytes(file, data, size);
  oracle::examiner::ImportOptions o;
  o.device = devices[size % devices.size()];
  static const double kUnits[] = {20.0, 1e-300, 1e6, 0.001};
  o.time_unit_ms = kUnits[(size / devices.size()) % 4];
  try {
    for (const auto& c : oracle::examiner::import_logs({file}, o)) fuzz::simulate_alg1_and_round_robin(c.scenario);
  } catch (const model::InputError&) {
  }
  return 0;
}
