// libFuzzer target: a campaign manifest.json as `campaign status|resume|collect` read it. A manifest that
// loads must write back to text that loads to the same text, and give sbatch scripts; anything but an
// InputError is a finding.
#include "fuzz_common.hpp"
#include "tbcheck/campaign/campaign.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tbcheck;
  campaign::Manifest m;
  try {
    m = campaign::manifest_from_json(fuzz::parse(data, size), "fuzz");
  } catch (const model::InputError&) {
    return 0;
  }
  const std::string text = campaign::manifest_text(m);
  try {
    const campaign::Manifest again = campaign::manifest_from_json(model::parse_json_text(text, "again"), "again");
    if (campaign::manifest_text(again) != text) std::abort();
  } catch (const model::InputError& e) {
    std::fprintf(stderr, "a loaded manifest does not load again: %s\n", e.what());
    std::abort();
  }
  for (const auto& d : m.devices) {
    if (d.tasks.empty()) continue;
    (void)campaign::sbatch_script(m, d, "/fuzz/campaign");
  }
  return 0;
}
