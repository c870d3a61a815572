// libFuzzer target: the files of a campaign folder others can write (state/<device>/<task>.rc and .started,
// results/<device>/<result>) under a fixed manifest, read by status and collect. A status detail must stay
// short and printable, and collect must copy only results that pass its check; anything but an InputError
// is a finding.
#include "fuzz_common.hpp"
#include "tbcheck/campaign/campaign.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tbcheck;
  namespace fs = std::filesystem;
  const fs::path dir = fuzz::scratch_dir() / "campaign", to = fuzz::scratch_dir() / "to";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::remove_all(to, ec);
  campaign::Manifest m;
  m.id = "fuzz-000000";
  m.oracle = "sim:alg1";
  m.tbcheck = "/usr/bin/tbcheck";
  campaign::DevicePlan d;
  d.target.name = "rtx3090";
  d.job_name = "tbcheck-fuzz-rtx3090";
  d.tasks = {{0, {{"/cases/a.json", "a", "a.sim-alg1.json"}}}, {1, {{"/cases/b.json", "b", "b.sim-alg1.json"}}}};
  m.devices = {d};
  const auto parts = fuzz::split_parts(data, size, 4);
  auto put = [&](const fs::path& p, const std::string& s) {
    fuzz::write_bytes(p, reinterpret_cast<const uint8_t*>(s.data()), s.size());
  };
  put(dir / "state/rtx3090/0.rc", parts[0]);
  put(dir / "state/rtx3090/1.started", parts[1]);
  if (!parts[2].empty()) put(dir / "results/rtx3090/a.sim-alg1.json", parts[2]);
  if (!parts[3].empty()) put(dir / "results/rtx3090/b.sim-alg1.json", parts[3]);
  for (const auto& st : campaign::campaign_status(m, dir.string(), campaign::SchedulerView{})) {
    if (st.detail.size() > 400) std::abort();
    for (const char ch : st.detail)
      if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) std::abort();
  }
  std::vector<std::string> copied;
  try {
    copied = campaign::collect(m, dir.string(), to.string()).copied;
  } catch (const model::InputError&) {
  }
  for (const auto& p : copied) {
    const auto& c = fs::path(p).filename() == "a.sim-alg1.json" ? d.tasks[0].cases[0] : d.tasks[1].cases[0];
    try {
      campaign::check_result(p, c, "rtx3090");  // what was copied passes the check it was copied under
    } catch (const model::InputError& e) {
      std::fprintf(stderr, "collect copied a result its own check refuses: %s\n", e.what());
      std::abort();
    }
  }
  return 0;
}
