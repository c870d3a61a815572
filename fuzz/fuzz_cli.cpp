// libFuzzer target on the command line itself: the input picks a subcommand, its flags and values (edge
// numbers, names, small generated files, raw bytes) and runs tbcheck_main; exit 3 or a crash is a finding.
// Built twice: fuzz_cli runs what the input asks at full cost; fuzz_cli_bounded (TBCHECK_FUZZ_BOUNDED) keeps
// every execution to milliseconds (tiny devices, a short hypothesis list, one or two steps) for volume.
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tbcheck/model/stop.hpp"
#include "tbcheck_main.hpp"

namespace {

namespace fs = std::filesystem;

#ifdef TBCHECK_FUZZ_BOUNDED
constexpr bool kBounded = true;
#else
constexpr bool kBounded = false;
#endif

// One option of a subcommand and the values worth trying for it (beside the shared pool).
struct Opt {
  const char* name;  // "" for a positional argument, a flag when `values` is empty and `is_flag`
  bool is_flag;
  std::vector<const char*> values;
};
struct Sub {
  const char* name;
  std::vector<Opt> opts;
  std::vector<const char*> fixed;  // bounds that keep one execution short (solver time, search size)
};

// The number parser's edges (docs/errors.md): hex, exponents, fractions, signs, spaces and values too large
// for any integer are refused with the flag and its range.
const std::vector<const char*> kNumbers = {"0", "1", "2", "3", "-1", "nan", "inf", "-inf", "1e300", "0.5", "1e-9",
                                           "10001", "2147483648", "0x10", "", "abc", "1.5", "1e3", "+1", "-0",
                                           " 1", "1 ", "0x", "99999999999999999999", "1,5", "0b1"};
// A stop (SIGINT) at the n-th poll of the stop flag: not a flag of the command, the harness requests it
// (model::request_stop_at_poll_for_test), so a command is cut short at a point the input chooses.
const std::vector<const char*> kStops = {"1", "2", "3", "5", "10", "40", "200", "1000"};
const std::vector<const char*> kTimings = {"model", "trace", "x", ""};
const std::vector<const char*> kFiles = {"case.json", "rec.json", "coll.json", "hyp.json", "dev.json", "log.json",
                                         "bad.json", "dup.json", "big.json", "dir", "loop.json", "dangling.json",
                                         "empty.json", "id.json", "nosuch.json", "corpus/hw/x.json", "/dev/null",
                                         "out", "out/sub/f.json", "cuda.json"};
const std::vector<const char*> kHyps = {"alg1", "round-robin", "alg1,round-robin", "fermi", "nosuch", "hyp.json",
                                        "alg1,alg1", "alg1,hyp.json", "sim:alg1", ","};

const std::vector<Sub>& subs() {
  static const std::vector<Sub> s = {
      {"devices", {{"--json", true, {}}}, {}},
      {"hypotheses", {{"--json", true, {}}, {"--options", true, {}}}, {}},
      {"predict",
       {{"", false, kFiles},
        {"-H", false, {"alg1", "all", "fermi", "hyp.json", "nosuch", "alg1,round-robin"}},
        {"--json", true, {}},
        {"--svg", false, kFiles},
        {"--trace", false, kFiles},
        {"--us-per-unit", false, kNumbers},
        {"--force", true, {}}},
       {}},
      {"validate",
       {{"", false, kFiles},
        {"-H", false, {"alg1", "all", "fermi", "hyp.json", "nosuch"}},
        {"--level", false, {"exact", "counts", "sms", "all", "x"}},
        {"--json", true, {}},
        {"--all-rows", true, {}},
        {"--details", true, {}},
        {"--report", false, kFiles},
        {"--force", true, {}},
        {"--timing", false, kTimings},
        {"--max-orders", false, kNumbers},
        {"@stop", false, kStops}},
       {}},
      {"distinguish",
       {{"--device", false, {"rtx3090", "v100", "nosuch", "dev.json"}},
        {"-H", false, kHyps},
        {"--out", false, kFiles},
        {"--wide-samples", false, kNumbers},
        {"--json", true, {}},
        {"--force", true, {}},
        {"--shard", false, {"1/2", "2/2", "0/2", "3/2", "1/0", "x", "", "1/1"}},
        {"@stop", false, kStops}},
       {"--max-kernels", "2", "--max-blocks", "2", "--max-blocks-per-kernel", "2", "--max-duration", "2", "--timeout",
        "0.2", "--pair-budget", "0.4", "-j", "1", "--samples", "30"}},
      {"suite", {{"", false, kFiles}, {"-H", false, kHyps}, {"--json", true, {}}, {"@stop", false, kStops}}, {}},
      {"run",
       {{"", false, kFiles},
        {"--case", false, {"a", "b", "case-3", ""}},
        {"--oracle", false, {"sim:alg1", "sim:nosuch", "sim:", "replay", "cuda", "sim:hyp.json", "x"}},
        {"--noise", false, kNumbers},
        {"--repeat", false, kNumbers},
        {"--seed", false, kNumbers},
        {"--out", false, kFiles},
        {"--time-unit-ms", false, kNumbers},
        {"--settle", false, kNumbers},
        {"--force-device", true, {}},
        {"--dry-run", true, {}},
        {"--json", true, {}}},
       {}},
      {"learn",
       {{"--device", false, {"rtx3090", "v100", "nosuch"}},
        {"--hypotheses", false, kHyps},
        {"--oracle", false, {"sim:alg1", "sim:round-robin", "cuda", "sim:nosuch", "replay:rec.json",
                             "replay:cuda.json,rec.json", "replay:", "replay:nosuch", "replay:dir", "replay:,"}},
        {"--corpus", false, kFiles},
        {"--noise", false, kNumbers},
        {"--repeat", false, {"1", "2", "0", "nan"}},
        {"--seed", false, kNumbers},
        {"--max-steps", false, {"1", "2", "0", "-1"}},
        {"--time-unit-ms", false, kNumbers},
        {"--json", true, {}},
        {"--timing", false, kTimings},
        {"--max-orders", false, {"1", "2", "0", "nan", "0x10"}},
        {"@stop", false, kStops}},
       {"--no-synthesis", "--timeout", "0.2"}},
      {"random",
       {{"--device", false, {"rtx3090", "xavier", "nosuch"}},
        {"--count", false, {"0", "1", "3", "-1", "10000001", "nan"}},
        {"--seed", false, kNumbers},
        {"--out", false, kFiles},
        {"--max-blocks", false, {"0", "1", "4", "-1", "1048577"}},
        {"--max-duration", false, {"1", "3", "0", "nan"}},
        {"--judge", false, {"alg1", "round-robin", "nosuch", "all", "hyp.json", "fermi"}},
        {"--must-run", false, {"all", "none", "alg1", "nosuch", "hyp.json"}},
        {"--force", true, {}},
        {"--json", true, {}}},
       {}},
      {"minimize",
       {{"", false, kFiles},
        {"--case", false, {"a", "b", "case-3"}},
        {"--keep-disagreement", false, kHyps},
        {"--keep-failure", false, kHyps},
        {"--level", false, {"exact", "counts", "sms", "x"}},
        {"--out", false, kFiles},
        {"--force", true, {}},
        {"--json", true, {}}},
       {}},
      {"check",
       {{"", false, kHyps},
        {"--corpus", false, kFiles},
        {"-H", false, {"alg1", "round-robin", "alg1,round-robin", "nosuch", "hyp.json"}},
        {"--device", false, {"rtx3090", "nosuch", "dev.json"}},
        {"--timeout", false, kNumbers},
        {"--json", true, {}},
        {"@stop", false, kStops}},
       {"--synthesize", "none"}},
      {"import-examiner",
       {{"", false, kFiles},
        {"--device", false, {"rtx3090", "v100", "nosuch", "dev.json", "dir", "bad.json"}},
        {"--out", false, kFiles},
        {"--time-unit-ms", false, kNumbers},
        {"--regs", false, kNumbers},
        {"--json", true, {}},
        {"--config", false, kFiles}},
       {}},
      {"export-examiner",
       {{"", false, kFiles},
        {"--case", false, {"a", "b"}},
        {"--out", false, kFiles},
        {"--time-unit-ms", false, kNumbers},
        {"--iterations", false, kNumbers},
        {"--plugin", false, {"x.so", ""}},
        {"--force", true, {}}},
       {}},
      {"retime",
       {{"", false, kFiles},
        {"--unit-ns", false, {"1000", "1", "32", "3000", "0", "-1", "20000000", "40000000", "nan", "", "0x10", "1e3", "1.5"}},
        {"--repetition", false, {"1", "2", "all", "0", "-1", "x", "", "1000001"}},
        {"--out", false, kFiles},
        {"--json", true, {}}},
       {}},
  };
  return s;
}

// The small files every execution starts from (recreated each time: a command may replace them).
const std::map<std::string, std::string>& fixtures() {
  static const std::map<std::string, std::string> f = {
      {"case.json",
       R"({"id": "a", "device": "rtx3090", "kernels": [{"name": "k1", "blocks": 3, "threads": 256, "regs": 32, "smem": 0, "duration": 2},
          {"name": "k2", "blocks": 2, "threads": 64, "regs": 32, "smem": 1024, "duration": 1}]})"},
      {"rec.json",
       R"({"id": "b", "device": "rtx3090", "kernels": [{"name": "k1", "blocks": 2, "threads": 32, "regs": 32, "smem": 0, "duration": 1}],
          "observation": {"kind": "hardware", "sm_of_block": {"k1": [0, 2]}, "start_of_block": {"k1": [0, 0]}}})"},
      // Case c separates alg1 from round-robin on the 2-SM fixture device (distinguish's witness), so learn has
      // a split to make there.
      {"coll.json",
       R"({"cases": [{"id": "a", "device": "v100", "kernels": [{"name": "k", "blocks": 2, "threads": 32, "regs": 32, "smem": 0, "duration": 1}]},
          {"id": "b", "device": "rtx3090", "kernels": [{"name": "k", "blocks": 1, "threads": 32, "regs": 32, "smem": 0, "duration": 1}]},
          {"id": "c", "device": "rtx3090", "kernels": [{"name": "k", "blocks": 3, "threads": 96, "regs": 40, "smem": 0, "duration": 1}]}]})"},
      {"hyp.json", R"({"name": "mine", "base": "alg1", "order": "natural"})"},
      // Bounded: a device with few block shapes, since distinguish's exhaustive one-kernel tables grow with every
      // warp count, register count and shared-memory size a block may have (0.4 s an execution natively with
      // rtx3090's ranges, 0.02 s with these), and learn bisects a threshold over every shared-memory size (a
      // 1 KB unit halves a split's boundary search).
      {"dev.json",
       kBounded
           ? R"({"name": "mini", "cc": "8.6", "sms": 2, "sms_per_tpc": 2, "pbs_per_sm": 4, "max_blocks_per_sm": 16, "max_warps_per_sm": 8,
          "max_threads_per_block": 128, "regs_per_sm": 8192, "reg_alloc_unit": 256, "max_regs_per_thread": 64,
          "smem_configs_kb": [0, 8, 16], "smem_alloc_unit": 1024, "smem_reserved_per_block": 1024, "max_smem_per_block": 15360})"
           : R"({"name": "mini", "cc": "8.6", "sms": 2, "sms_per_tpc": 2, "pbs_per_sm": 4, "max_blocks_per_sm": 16, "max_warps_per_sm": 48,
          "max_threads_per_block": 1024, "regs_per_sm": 65536, "reg_alloc_unit": 256, "max_regs_per_thread": 255,
          "smem_configs_kb": [0, 8, 16, 32, 64, 100], "smem_alloc_unit": 128, "smem_reserved_per_block": 1024, "max_smem_per_block": 101376})"},
      {"log.json",
       R"({"scenario_name": "s", "times": [{}, {"cpu_times": [0.1, 0.2]},
          {"kernel_name": "K1", "block_count": 2, "thread_count": 256, "block_times": [0.1, 0.12, 0.1, 0.12], "block_smids": [0, 2]}]})"},
      // A CUDA-oracle recording that keeps its ns times (retime's input): k1's two blocks end 3 us apart.
      {"cuda.json",
       R"({"id": "g", "device": "rtx3090", "kernels": [{"name": "k1", "blocks": 2, "threads": 32, "regs": 32, "smem": 0, "duration": 1}],
          "observation": {"kind": "hardware", "sm_of_block": {"k1": [0, 2]}, "start_of_block": {"k1": [0, 0]}, "end_of_block": {"k1": [1, 1]}},
          "notes": "tbcheck run of g; metadata {\"time_unit_ms\": 20.0, \"raw_ns\": [{\"origin_ns\": 7, \"kernels\": {\"k1\": {\"sm\": [0, 2], \"start_ns\": [0, 32], \"end_ns\": [20003040, 20000032]}}}]}"})"},
      {"bad.json", R"({"device": "rtx3090", "kernels": [)"},
      {"dup.json", R"({"device": "rtx3090", "device": "v100", "kernels": []})"},
      {"big.json",
       R"({"device": "rtx3090", "kernels": [{"name": "k1", "blocks": 16777216, "threads": 32, "regs": 32, "smem": 0, "duration": 1},
          {"name": "k2", "blocks": 16777216, "threads": 32, "regs": 32, "smem": 0, "duration": 1}]})"},
      {"id.json",
       R"({"id": "../../escape", "device": "rtx3090", "kernels": [{"name": "k", "blocks": 1, "threads": 32, "regs": 32, "smem": 0, "duration": 1}]})"},
      {"empty.json", ""},
      {"dir/c.json",
       R"({"device": "rtx3090", "kernels": [{"name": "k", "blocks": 1, "threads": 32, "regs": 32, "smem": 0, "duration": 1}]})"},
  };
  return f;
}

// The bounded mode's caps: the work a command does grows with the device's SMs, the hypotheses compared and
// the oracle steps; each is held to a size that runs in milliseconds. Values the input chose that are refused
// anyway (bad numbers, unknown names) are kept, so the error paths stay fuzzed.
void bound_work(const std::string& sub, std::vector<std::string>& positionals,
                std::map<std::string, std::string>& options) {
  auto cap = [&](const char* flag, long most, const char* otherwise) {
    auto it = options.find(flag);
    if (it == options.end()) {
      if (otherwise) options[flag] = otherwise;
      return;
    }
    char* end = nullptr;
    const long v = std::strtol(it->second.c_str(), &end, 10);
    if (end != it->second.c_str() && *end == '\0' && v > most) it->second = std::to_string(most);
  };
  auto small_list = [&](const char* flag) {
    auto it = options.find(flag);
    if (it == options.end() || it->second.find("all") != std::string::npos) options[flag] = "alg1,round-robin";
  };
  if (sub == "learn") {
    // The 2-SM fixture device: learn's boundary cases range over every block shape the device allows
    // (2 s an execution under ASan on tx2's ranges, with a corpus case that splits). Replay learning runs
    // nothing and judges the fixture recordings, which are of rtx3090: there the input's device is kept.
    const auto oracle = options.find("--oracle");
    const bool replay = oracle != options.end() && oracle->second.rfind("replay:", 0) == 0;
    if (!replay || !options.count("--device")) options["--device"] = replay ? "rtx3090" : "dev.json";
    small_list("--hypotheses");
    cap("--max-steps", 2, "2");
    cap("--repeat", 2, nullptr);
    if (!options.count("--corpus")) options["--corpus"] = "coll.json";
    options["-j"] = "1";
  } else if (sub == "check") {
    small_list("-H");  // with synthesis off the device costs nothing: the input's choice is kept
    if (!options.count("--corpus")) options["--corpus"] = "coll.json";
  } else if (sub == "distinguish") {
    options["--device"] = "dev.json";
    small_list("-H");
    cap("--wide-samples", 200, "200");  // an inseparable pair ran 10,000 random scenarios: 3 s under ASan
  } else if (sub == "random") {
    cap("--count", 3, "3");
    cap("--max-blocks", 8, nullptr);
  } else if (sub == "run") {
    cap("--repeat", 3, nullptr);
  } else if (sub == "predict" || sub == "validate" || sub == "suite") {
    // Every shipped hypothesis on every case of up to 12 files ran 140 ms under ASan; three files still
    // repeat one, and two hypotheses still compare.
    if (positionals.size() > 3) positionals.resize(3);
    auto it = options.find("-H");
    if (sub != "predict" && it == options.end()) options["-H"] = "alg1,round-robin";
    else if (it != options.end() && it->second == "all") it->second = "alg1,round-robin";
  }
}

fs::path g_root, g_start;  // the scratch root, and the folder libFuzzer works in (its corpus paths are relative)

void reset_work() {
  std::error_code ec;
  fs::current_path(g_root, ec);
  fs::remove_all(g_root / "w", ec);
  fs::create_directories(g_root / "w/dir", ec);
  fs::current_path(g_root / "w", ec);
  for (const auto& [name, text] : fixtures()) std::ofstream(name) << text;
  fs::create_symlink("loop.json", "loop.json", ec);
  fs::create_symlink("gone.json", "dangling.json", ec);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_start = fs::current_path();
  // Every execution rewrites the fixtures: on a disk file system inode creation alone costs more than
  // most commands, so a RAM-backed folder is preferred where the machine has one.
  std::error_code ec;
  const fs::path base = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
  const std::string prefix = "tbcheck-fuzz-cli-";
  // libFuzzer leaves without running atexit handlers when it stops on a finding (and -fork workers are
  // killed), so folders of earlier runs whose process is gone are removed here.
  for (const auto& e : fs::directory_iterator(base, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid = name.substr(prefix.size());
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (!fs::exists(fs::path("/proc") / pid, ec)) fs::remove_all(e.path(), ec);
  }
  g_root = base / (prefix + std::to_string(::getpid()));
  fs::create_directories(g_root);
  std::atexit([] {  // a RAM-backed scratch folder must not outlive the run
    std::error_code e;
    fs::remove_all(g_root, e);
  });
  // The commands print tables and JSON; only findings matter here.
  if (std::FILE* f = std::freopen("/dev/null", "w", stdout); !f) std::abort();
  // The composition space and its option rows are built once per process, by the first `check` or `learn`:
  // built here, so that the first such input is not charged with them (libFuzzer times each input).
  reset_work();
  std::vector<std::string> warm = {"tbcheck", "check", "alg1", "--corpus", "coll.json", "--device", "tx2",
                                   "-H", "alg1", "--synthesize", "none"};
  std::vector<char*> argv;
  for (auto& a : warm) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (const int rc = tbcheck::cli::tbcheck_main(static_cast<int>(warm.size()), argv.data()); rc != 0) {
    std::fprintf(stderr, "fuzz_cli: the warm-up check exited %d\n", rc);
    std::abort();
  }
  fs::current_path(g_start, ec);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t at = 0;
  auto next = [&]() -> int { return at < size ? data[at++] : -1; };
  const Sub& sub = subs()[static_cast<size_t>(next()) % subs().size()];
  std::vector<std::string> positionals;
  std::map<std::string, std::string> options;  // one value per option: a repeated one is a parse error only
  std::vector<std::string> flags;
  for (int steps = 0; steps < 12; ++steps) {
    const int o = next();
    if (o < 0) break;
    const Opt& opt = sub.opts[static_cast<size_t>(o) % sub.opts.size()];
    if (opt.is_flag) {
      flags.push_back(opt.name);
      continue;
    }
    const int v = next();
    if (v < 0) break;
    std::string value;
    if (v & 0x80) {  // raw bytes from the input
      const size_t n = std::min<size_t>(static_cast<size_t>(v & 0x0f), size - at);
      value.assign(reinterpret_cast<const char*>(data + at), n);
      at += n;
      if (value.find('\0') != std::string::npos) value.resize(value.find('\0'));  // argv strings end at NUL
    } else if (!opt.values.empty()) {
      value = opt.values[static_cast<size_t>(v) % opt.values.size()];
    }
    if (*opt.name == '\0') positionals.push_back(value);
    else options[opt.name] = value;
  }
  // distinguish's default is four hypotheses (six pairs) on an 82-SM device: under ASan that takes
  // seconds per execution. Unless the input chooses, one pair on the 2-SM fixture device.
  if (std::string(sub.name) == "distinguish") {
    if (!options.count("-H")) options["-H"] = "alg1,round-robin";
    if (!options.count("--device")) options["--device"] = "dev.json";
  }
  if (kBounded) bound_work(sub.name, positionals, options);
  long stop_at = 0;  // the harness's own "option": a stop at that poll, not an argument
  if (auto it = options.find("@stop"); it != options.end()) {
    stop_at = std::strtol(it->second.c_str(), nullptr, 10);
    options.erase(it);
  }
  std::vector<std::string> args = {"tbcheck", sub.name};
  for (const auto& p : positionals) args.push_back(p);
  for (const auto& [k, v] : options) {
    args.push_back(k);
    args.push_back(v);
  }
  for (const auto& f : flags) args.push_back(f);
  for (const char* f : sub.fixed) args.emplace_back(f);

  // TBCHECK_FUZZ_ECHO=1: print each command line, to read what a saved input (a slow unit, say) runs.
  if (std::getenv("TBCHECK_FUZZ_ECHO")) {
    std::fprintf(stderr, "fuzz_cli: running:");
    for (const auto& a : args) std::fprintf(stderr, " '%s'", a.c_str());
    std::fprintf(stderr, "\n");
  }
  reset_work();
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (stop_at > 0) tbcheck::model::request_stop_at_poll_for_test(SIGINT, stop_at);
  const int rc = tbcheck::cli::tbcheck_main(static_cast<int>(args.size()), argv.data());
  const bool stopped = tbcheck::model::stop_requested();
  tbcheck::model::request_stop_for_test(0);  // the next input starts without a stop, pending or raised
  std::error_code ec;
  fs::current_path(g_start, ec);
  // A stop the harness asked for ends the command with 128 + SIGINT (without the handlers main() installs,
  // tbcheck_main returns it); any other exit outside 0-2 is a finding.
  if (stopped && rc == 128 + SIGINT) return 0;
  if (rc < 0 || rc > 2) {
    std::fprintf(stderr, "fuzz_cli: exit %d from:", rc);
    for (const auto& a : args) std::fprintf(stderr, " '%s'", a.c_str());
    std::fprintf(stderr, "\n");
    std::abort();
  }
  return 0;
}
