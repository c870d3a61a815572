// libFuzzer target: the files of a campaign folder others can write (state/<device>/<task>.rc and .started,
// results/<device>/<result>) under a fixed manifest, read by status and collect. A status detail must stay
// short and printable, and collect must copy only results that pass its check; anything but an InputError
// is a finding.
#include "fuzz_common.hpp"
#include <fcntl.h>

#include "tbcheck/campaign/campaign.hpp"

namespace {

namespace fs = std::filesystem;

// The fixed manifest: two tasks of one case each on rtx3090.
const tbcheck::campaign::Manifest& manifest() {
  static const tbcheck::campaign::Manifest m = [] {
    tbcheck::campaign::Manifest x;
    x.id = "fuzz-000000";
    x.oracle = "sim:alg1";
    x.tbcheck = "/usr/bin/tbcheck";
    tbcheck::campaign::DevicePlan d;
    d.target.name = "rtx3090";
    d.job_name = "tbcheck-fuzz-rtx3090";
    d.tasks = {{0, {{"/cases/a.json", "a", "a.sim-alg1.json"}}}, {1, {{"/cases/b.json", "b", "b.sim-alg1.json"}}}};
    x.devices = {d};
    return x;
  }();
  return m;
}

// One file replaced by `text`, or removed when `text` is absent. Plain POSIX calls in folders made once:
// removing and recreating the whole campaign folder per input cost more than status and collect together.
void put(const fs::path& p, const std::string* text) {
  ::unlink(p.c_str());
  if (!text) return;
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) std::abort();  // the harness's own folder: not a finding of the code under test
  if (!text->empty() && ::write(fd, text->data(), text->size()) != static_cast<ssize_t>(text->size())) std::abort();
  ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tbcheck;
  static const fs::path dir = fuzz::scratch_dir() / "campaign", to = fuzz::scratch_dir() / "to";
  static const bool made = [] {
    fs::create_directories(dir / "state/rtx3090");
    fs::create_directories(dir / "results/rtx3090");
    return true;
  }();
  (void)made;
  const campaign::Manifest& m = manifest();
  const campaign::DevicePlan& d = m.devices[0];
  const auto parts = fuzz::split_parts(data, size, 4);
  put(dir / "state/rtx3090/0.rc", &parts[0]);
  put(dir / "state/rtx3090/1.started", &parts[1]);
  put(dir / "results/rtx3090/a.sim-alg1.json", parts[2].empty() ? nullptr : &parts[2]);
  put(dir / "results/rtx3090/b.sim-alg1.json", parts[3].empty() ? nullptr : &parts[3]);
  // What the last input's collect copied: every input collects into an empty target.
  put(to / "rtx3090/a.sim-alg1.json", nullptr);
  put(to / "rtx3090/b.sim-alg1.json", nullptr);
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
