// libFuzzer target: a cuda_scheduling_examiner config imported as `import-examiner --config` does, then
// exported back (export-examiner) and simulated. Anything but an InputError is a finding, and so is an
// exported config that import-examiner refuses (the export must write what the importer reads).
#include "fuzz_common.hpp"
#include "tbcheck/oracle/examiner.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tbcheck;
  oracle::examiner::ImportOptions o;
  const auto [device, unit] = fuzz::device_and_unit(size);
  o.device = *device;
  o.time_unit_ms = unit;
  model::Case c;
  try {
    // In memory, as the export is read back below: no file per input; the file checks (read_input_file's)
    // stay on import_config's path.
    c = oracle::examiner::import_config_text(std::string(reinterpret_cast<const char*>(data), size), "config.json", o);
  } catch (const model::InputError&) {
    return 0;
  }
  fuzz::simulate_alg1_and_round_robin(c.scenario);
  oracle::examiner::ExportOptions eo;
  eo.time_unit_ms = o.time_unit_ms;
  model::json cfg;
  try {
    cfg = oracle::examiner::export_config(c, eo);
  } catch (const model::InputError&) {
    return 0;  // a field the plugin cannot express, refused by name
  }
  try {
    const model::Case again = oracle::examiner::import_config_text(cfg.dump(), "exported.json", o);
    if (again.scenario.kernels.size() != c.scenario.kernels.size()) std::abort();
  } catch (const model::InputError& e) {
    std::fprintf(stderr, "the exported config is refused by the importer: %s\n", e.what());
    std::abort();
  }
  return 0;
}
