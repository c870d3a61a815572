// cuda_scheduling_examiner interop: result logs (block_times in seconds, block_smids) to corpus
// cases, and cases to multikernel-plugin configs. Field names follow the examiner's README and runner.
#include "tbcheck/oracle/examiner.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/model/limits.hpp"
#include "tbcheck/model/text.hpp"
#include "tbcheck/oracle/cuda_host.hpp"

namespace tbcheck::oracle::examiner {
namespace {

using nlohmann::json;

// One kernel entry of a log, read and checked.
struct LoggedKernel {
  std::string name;
  int blocks = 0, threads = 0, smem = 0;
  std::optional<double> launch_s;       // cuda_launch_times[0]: the CPU time just before the launch call
  std::optional<double> launch_end_s;   // cuda_launch_times[1]: just after it returned
  std::vector<double> start_s, end_s;   // per block
  std::vector<int> smids;
  int file = 0, order_in_file = 0;
  std::string at;  // "times[i]", for errors found after reading
};

struct Log {
  std::string path, label;
  std::string scenario_name;
  std::vector<std::vector<LoggedKernel>> iterations;
};

[[noreturn]] void bad(const std::string& file, const std::string& field, const std::string& why) {
  throw model::InputError(file, field, why);
}

int as_int(const json& v, const std::string& file, const std::string& field, int64_t lo, int64_t hi) {
  return static_cast<int>(model::ObjectReader::as_integer(v, lo, hi, file, field));
}

double as_seconds(const json& v, const std::string& file, const std::string& field) {
  if (!v.is_number()) bad(file, field, fmt::format("expected a number of seconds, found {}", model::json_type_name(v)));
  const double d = v.get<double>();
  if (!std::isfinite(d)) bad(file, field, "not a finite number of seconds");
  return d;
}

LoggedKernel read_kernel(const json& e, const std::string& file, const std::string& at) {
  LoggedKernel k;
  k.at = at;
  auto need = [&](const char* key) -> const json& {
    auto it = e.find(key);
    if (it == e.end()) bad(file, at, fmt::format("a kernel entry has no \"{}\"", key));
    return *it;
  };
  const json& smids = need("block_smids");
  const json& times = need("block_times");
  if (!smids.is_array()) bad(file, at + ".block_smids", "expected an array of SM ids");
  if (!times.is_array()) bad(file, at + ".block_times", "expected an array of [start, end, ...] seconds");
  k.blocks = static_cast<int>(smids.size());
  if (auto it = e.find("block_count"); it != e.end()) {
    const int bc = as_int(*it, file, at + ".block_count", 1, 1 << 30);
    if (bc != k.blocks)
      bad(file, at + ".block_smids", fmt::format("{} SM ids for block_count {}", smids.size(), bc));
  }
  if (k.blocks == 0) bad(file, at + ".block_smids", "a kernel with no blocks");
  if (times.size() != 2 * smids.size())
    bad(file, at + ".block_times",
        fmt::format("{} times for {} blocks; expected a start and an end per block ({})", times.size(), k.blocks, 2 * k.blocks));
  k.threads = as_int(need("thread_count"), file, at + ".thread_count", 1, 1 << 20);
  if (auto it = e.find("shared_memory"); it != e.end()) k.smem = as_int(*it, file, at + ".shared_memory", 0, 1 << 30);
  if (auto it = e.find("kernel_name"); it != e.end() && !it->is_null()) {
    if (!it->is_string()) bad(file, at + ".kernel_name", "expected a string");
    k.name = it->get<std::string>();
    if (auto why = model::unprintable_name_reason(k.name); !why.empty()) bad(file, at + ".kernel_name", why);
  }
  if (auto it = e.find("cuda_launch_times"); it != e.end()) {
    if (!it->is_array() || it->empty()) bad(file, at + ".cuda_launch_times", "expected an array of CPU times");
    k.launch_s = as_seconds((*it)[0], file, at + ".cuda_launch_times[0]");
    if (it->size() > 1) {
      k.launch_end_s = as_seconds((*it)[1], file, at + ".cuda_launch_times[1]");
      if (*k.launch_end_s < *k.launch_s)
        bad(file, at + ".cuda_launch_times[1]", "the launch call returns before it was made");
    }
  }
  for (size_t b = 0; b < smids.size(); ++b)
    k.smids.push_back(as_int(smids[b], file, fmt::format("{}.block_smids[{}]", at, b), 0, 65535));
  for (size_t b = 0; b < smids.size(); ++b) {
    const double s = as_seconds(times[2 * b], file, fmt::format("{}.block_times[{}]", at, 2 * b));
    const double t = as_seconds(times[2 * b + 1], file, fmt::format("{}.block_times[{}]", at, 2 * b + 1));
    if (t < s) bad(file, fmt::format("{}.block_times[{}]", at, 2 * b + 1), fmt::format("block {} ends before it starts", b));
    k.start_s.push_back(s);
    k.end_s.push_back(t);
  }
  return k;
}

Log read_log(const json& j, const std::string& path, int file_index) {
  if (!j.is_object()) bad(path, "", "an examiner result log is a JSON object");
  Log log;
  log.path = path;
  if (auto it = j.find("scenario_name"); it != j.end() && it->is_string()) log.scenario_name = it->get<std::string>();
  if (auto it = j.find("label"); it != j.end() && it->is_string()) log.label = it->get<std::string>();
  auto times = j.find("times");
  if (times == j.end()) bad(path, "times", "missing; not a cuda_scheduling_examiner result log");
  if (!times->is_array()) bad(path, "times", "expected an array");
  int iteration = -1, in_file = 0;
  for (size_t i = 0; i < times->size(); ++i) {
    const json& e = (*times)[i];
    const std::string at = fmt::format("times[{}]", i);
    if (!e.is_object()) bad(path, at, "expected an object");
    if (e.empty()) continue;  // the blank first entry
    if (e.contains("cpu_times")) {  // a CPU-times object opens an iteration
      ++iteration;
      log.iterations.emplace_back();
      continue;
    }
    if (!e.contains("block_times") && !e.contains("block_smids")) continue;  // other per-iteration records
    if (iteration < 0) {
      iteration = 0;
      log.iterations.emplace_back();
    }
    LoggedKernel k = read_kernel(e, path, at);
    k.file = file_index;
    k.order_in_file = in_file++;
    log.iterations[static_cast<size_t>(iteration)].push_back(std::move(k));
  }
  std::erase_if(log.iterations, [](const auto& it) { return it.empty(); });
  if (log.iterations.empty()) bad(path, "times", "no kernel entries (block_times / block_smids) in the log");
  return log;
}

std::string file_stem(const std::string& p) { return std::filesystem::path(p).stem().string(); }

// file_safe with each run of replaced characters one dash and none at either end, so that a scenario
// named "tx2 race (illustration)" gives tx2-race-illustration, not tx2-race--illustration-.
std::string id_safe(const std::string& s) {
  std::string out;
  for (const char ch : model::file_safe(s))
    if (ch != '-' || (!out.empty() && out.back() != '-')) out.push_back(ch);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// Longest time span an import takes (about 11.5 days): beyond it nanoseconds leave uint64 arithmetic
// safely and a log is surely not one examiner run.
constexpr double kMaxSpanSeconds = 1e6;

// Half up, as the cuda oracle maps nanoseconds (cuda_host ns_to_units).
int64_t seconds_to_units(double seconds_since_origin, uint64_t unit, const std::string& file, const std::string& field) {
  if (!(seconds_since_origin <= kMaxSpanSeconds))
    bad(file, field, fmt::format("{} s after the earliest block start; a log spans at most {:g} s", seconds_since_origin,
                                 kMaxSpanSeconds));
  const double ns = std::max(0.0, std::round(seconds_since_origin * 1e9));
  return cuda::ns_to_units(static_cast<uint64_t>(ns), 0, unit);
}

// The cases of logs already read (at least one), the first log's path naming the cases.
std::vector<model::Case> cases_of_logs(const std::vector<Log>& logs, const ImportOptions& o) {
  cuda::CudaOptions co;
  co.time_unit_ms = o.time_unit_ms;
  const uint64_t unit = cuda::unit_ns(co);
  size_t iterations = logs[0].iterations.size();
  for (const auto& l : logs) iterations = std::min(iterations, l.iterations.size());
  std::vector<std::string> names_of_files;
  for (const auto& l : logs) names_of_files.push_back(l.path);
  // A name of punctuation alone slugs to nothing: the file's stem names the case then, else "log".
  std::string scenario_slug = id_safe(logs[0].scenario_name);
  if (scenario_slug.empty()) scenario_slug = id_safe(file_stem(logs[0].path));
  if (scenario_slug.empty()) scenario_slug = "log";

  std::vector<model::Case> out;
  for (size_t it = 0; it < iterations; ++it) {
    std::vector<LoggedKernel> ks;
    std::map<int, int> kernels_per_file;
    for (const auto& l : logs)
      for (const auto& k : l.iterations[it]) {
        ks.push_back(k);
        ++kernels_per_file[k.file];
      }
    const bool by_launch_time = std::all_of(ks.begin(), ks.end(), [](const LoggedKernel& k) { return k.launch_s.has_value(); });
    std::stable_sort(ks.begin(), ks.end(), [&](const LoggedKernel& a, const LoggedKernel& b) {
      if (by_launch_time && *a.launch_s != *b.launch_s) return *a.launch_s < *b.launch_s;
      return std::pair(a.file, a.order_in_file) < std::pair(b.file, b.order_in_file);
    });
    double origin = ks[0].start_s[0];
    for (const auto& k : ks)
      for (double s : k.start_s) origin = std::min(origin, s);
    // Launch calls are CPU times, on another clock than the blocks': kept relative to the first call.
    double launch_origin = 0;
    if (by_launch_time) {
      launch_origin = *ks[0].launch_s;
      for (const auto& k : ks) launch_origin = std::min(launch_origin, *k.launch_s);
    }
    std::vector<uint64_t> stamps_ns;  // every block time, for the timer's resolution

    json kernels = json::array();
    json sm_of_block = json::object(), start_of_block = json::object(), end_of_block = json::object();
    json launch_of_kernel = json::object();
    double longest_call_s = 0;  // the longest launch call: a launch lands somewhere inside its call
    std::set<std::string> used;
    for (const auto& k : ks) {
      const Log& l = logs[static_cast<size_t>(k.file)];
      const std::string label_slug = id_safe(l.label);
      std::string name = !k.name.empty() ? k.name
                                         : fmt::format("{}.k{}", !label_slug.empty() ? label_slug : id_safe(file_stem(l.path)),
                                                       k.order_in_file);
      const std::string base = name;
      for (int n = 2; used.count(name); ++n) name = fmt::format("{}.{}", base, n);
      used.insert(name);
      // Duration: the median block run time in units (at least 1); the probe spins a fixed time.
      std::vector<double> runs;
      for (size_t b = 0; b < k.start_s.size(); ++b) runs.push_back(k.end_s[b] - k.start_s[b]);
      std::nth_element(runs.begin(), runs.begin() + static_cast<long>(runs.size() / 2), runs.end());
      const int64_t duration =
          std::max<int64_t>(1, seconds_to_units(runs[runs.size() / 2], unit, l.path, k.at + ".block_times"));
      if (k.threads > o.device.max_threads_per_block)
        bad(l.path, k.at + ".thread_count",
            fmt::format("{} threads per block; {} allows at most {}", k.threads, o.device.name, o.device.max_threads_per_block));
      if (k.smem > o.device.max_smem_per_block)
        bad(l.path, k.at + ".shared_memory",
            fmt::format("{} bytes per block; {} allows at most {}", k.smem, o.device.name, o.device.max_smem_per_block));
      json kj = {{"name", name}, {"blocks", k.blocks}, {"threads", k.threads}, {"regs", o.regs},
                 {"smem", k.smem}, {"duration", duration}};
      if (kernels_per_file[k.file] > 1) kj["stream"] = k.file;
      kernels.push_back(std::move(kj));
      for (size_t b = 0; b < k.smids.size(); ++b) {
        if (k.smids[b] >= o.device.sms)
          throw model::InputError(l.path, fmt::format("block_smids[{}]", b),
                                  fmt::format("kernel {} block {} is on SM {}, outside {}'s {} SMs; is --device right?",
                                              name, b, k.smids[b], o.device.name, o.device.sms));
        sm_of_block[name].push_back(k.smids[b]);
        const int64_t start =
            seconds_to_units(k.start_s[b] - origin, unit, l.path, fmt::format("{}.block_times[{}]", k.at, 2 * b));
        const int64_t end =
            seconds_to_units(k.end_s[b] - origin, unit, l.path, fmt::format("{}.block_times[{}]", k.at, 2 * b + 1));
        start_of_block[name].push_back(start);
        end_of_block[name].push_back(std::max(end, start + 1));  // a block shorter than a unit still ends after it starts
        stamps_ns.push_back(static_cast<uint64_t>(std::llround((k.start_s[b] - origin) * 1e9)));
        stamps_ns.push_back(static_cast<uint64_t>(std::llround((k.end_s[b] - origin) * 1e9)));
      }
      if (by_launch_time) {
        launch_of_kernel[name] =
            seconds_to_units(*k.launch_s - launch_origin, unit, l.path, k.at + ".cuda_launch_times[0]");
        if (k.launch_end_s) longest_call_s = std::max(longest_call_s, *k.launch_end_s - *k.launch_s);
      }
    }
    // What the log did not observe: the timer's step, and which launch came first where launches raced
    // (each benchmark launches from its own CPU thread). Without launch times every order is open.
    const int64_t tick = cuda::timer_tick_units(std::move(stamps_ns), unit);
    const int64_t window =
        !by_launch_time ? int64_t{INT32_MAX}
                        : (static_cast<int64_t>(std::llround(longest_call_s * 1e9)) + static_cast<int64_t>(unit) - 1) /
                              static_cast<int64_t>(unit);
    json observation = {{"kind", "hardware"},
                        {"sm_of_block", sm_of_block},
                        {"start_of_block", start_of_block},
                        {"end_of_block", end_of_block},
                        {"resolution", {{"tick", tick}, {"launch_window", window}}}};
    if (by_launch_time) observation["launch_of_kernel"] = launch_of_kernel;
    json cj = {{"id", fmt::format("examiner-{}{}", scenario_slug, iterations > 1 ? fmt::format(".it{}", it + 1) : "")},
               {"source", fmt::format("cuda_scheduling_examiner log(s): {}", fmt::join(names_of_files, ", "))},
               {"device", o.device_builtin ? json(o.device.name) : o.device.to_json()},
               {"kernels", kernels},
               {"observation", observation},
               {"notes", fmt::format("imported from cuda_scheduling_examiner, iteration {} of {}; time unit {} ms (block "
                                     "times rounded half up from the earliest block start); registers not logged, {} "
                                     "assumed; kernels listed by {}; the timer resolves {} unit(s) and launches within {} "
                                     "unit(s) of each other are unordered (observation.resolution)",
                                     it + 1, iterations, o.time_unit_ms, o.regs,
                                     by_launch_time ? "cuda_launch_times" : "the file order", tick,
                                     window)}};
    out.push_back(model::case_from_json(cj, logs[0].path));
  }
  return out;
}

}  // namespace

std::vector<model::Case> import_logs(const std::vector<std::string>& files, const ImportOptions& o) {
  if (files.empty()) throw model::InputError("import-examiner", "", "no result logs given");
  std::vector<Log> logs;
  for (size_t f = 0; f < files.size(); ++f) logs.push_back(read_log(model::read_json_file(files[f]), files[f], static_cast<int>(f)));
  return cases_of_logs(logs, o);
}

std::vector<model::Case> import_log_texts(const std::vector<LogText>& logs, const ImportOptions& o) {
  if (logs.empty()) throw model::InputError("import-examiner", "", "no result logs given");
  std::vector<Log> read;
  for (size_t f = 0; f < logs.size(); ++f)
    read.push_back(read_log(model::parse_json_text(logs[f].text, logs[f].path), logs[f].path, static_cast<int>(f)));
  return cases_of_logs(read, o);
}

json export_config(const model::Case& c, const ExportOptions& o) {
  cuda::CudaOptions co;
  co.time_unit_ms = o.time_unit_ms;
  const uint64_t unit = cuda::unit_ns(co);
  if (o.iterations < 1) throw model::InputError("--iterations", "", "at least one iteration is needed");
  // The plugin's shared memory sizes, in 32-bit words.
  static const int kWords[] = {0, 4096, 8192, 10240};
  std::vector<std::vector<size_t>> groups;  // kernel indices per benchmark (= stream)
  std::map<int, size_t> group_of_stream;
  std::vector<std::string> caveats;
  for (size_t i = 0; i < c.scenario.kernels.size(); ++i) {
    const auto& k = c.scenario.kernels[i];
    if (k.stream) {
      auto [it, inserted] = group_of_stream.try_emplace(*k.stream, groups.size());
      if (inserted) groups.emplace_back();
      groups[it->second].push_back(i);
    } else {
      groups.push_back({i});
    }
  }
  const std::string where = c.file.empty() ? c.id : c.file;
  auto refuse = [&](size_t i, const std::string& field, const std::string& why) {
    throw model::InputError(where, fmt::format("kernels[{}].{}", i, field), why);
  };
  json benchmarks = json::array();
  for (size_t g = 0; g < groups.size(); ++g) {
    json kernels = json::array();
    // import-examiner reads a stream priority and a release time per benchmark (one stream), and an SM
    // mask per kernel: what the config cannot say is refused, so the exported run is this experiment.
    const auto& first = c.scenario.kernels[groups[g].front()];
    for (size_t i : groups[g]) {
      const auto& k = c.scenario.kernels[i];
      if (k.cluster)
        refuse(i, "cluster", fmt::format("kernel {} is launched in thread block clusters; the multikernel plugin "
                                         "launches none (and import-examiner reads none)", k.name));
      if (k.priority != first.priority)
        refuse(i, "priority", fmt::format("kernel {} has another stream priority than {} in its stream; a config "
                                          "gives one priority per benchmark (stream)", k.name, first.name));
      if (k.release != first.release)
        refuse(i, "release_time", fmt::format("kernel {} is released at {}, {} at {}, in one stream; a config gives "
                                              "one release time per benchmark (stream)", k.name, k.release, first.name,
                                              first.release));
    }
    for (size_t i : groups[g]) {
      const auto& k = c.scenario.kernels[i];
      const int* w = std::find(std::begin(kWords), std::end(kWords), k.smem / 4);
      if (k.smem % 4 != 0 || w == std::end(kWords))
        throw model::InputError(where, fmt::format("kernels[{}].smem", i),
                                fmt::format("kernel {} uses {} B of shared memory; the multikernel plugin offers only 0, "
                                            "16384, 32768 or 40960 B", k.name, k.smem));
      if (k.grid) caveats.push_back(fmt::format("{}: the {}x{} grid is launched 1-D ({} blocks)", k.name, k.grid->first,
                                                k.grid->second, k.blocks));
      if (k.local) caveats.push_back(fmt::format("{}: {} B of local memory per thread", k.name, k.local));
      json kj = {{"kernel_label", k.name},
                 {"duration", static_cast<uint64_t>(k.duration) * unit},
                 {"block_count", k.blocks},
                 {"thread_count", k.threads},
                 {"shared_memory_size", *w}};
      if (!k.tpcs.empty()) {
        // libsmctrl's mask: bit t set disables TPC t, over 64 TPCs (tpcs_from_sm_mask reads it back).
        uint64_t disabled = 0;
        for (int t = 0; t < std::min(c.scenario.device.tpcs(), 64); ++t) disabled |= uint64_t{1} << t;
        for (int t : k.tpcs) {
          if (t >= 64)
            refuse(i, "tpcs", fmt::format("kernel {} uses TPC {}; an SM mask covers TPCs 0 to 63", k.name, t));
          disabled &= ~(uint64_t{1} << t);
        }
        kj["sm_mask"] = fmt::format("0x{:x}", disabled);
      }
      kernels.push_back(std::move(kj));
    }
    const std::string label = fmt::format("stream {}", g);
    json bench = {{"filename", o.plugin},
                  {"log_name", fmt::format("{}.s{}.json", id_safe(c.id), g)},
                  {"label", label},
                  {"thread_count", 0},
                  {"block_count", 0},
                  {"data_size", 0},
                  {"additional_info", std::move(kernels)}};
    if (first.priority) bench["stream_priority"] = *first.priority;
    if (first.release) bench["release_time"] = static_cast<double>(first.release) * static_cast<double>(unit) * 1e-9;
    benchmarks.push_back(std::move(bench));
  }
  std::vector<std::string> regs;
  for (const auto& k : c.scenario.kernels) regs.push_back(fmt::format("{} {}", k.name, k.regs));
  caveats.push_back(fmt::format("registers are the plugin kernel's own, not the case's ({})", fmt::join(regs, ", ")));
  if (groups.size() > 1)
    caveats.push_back("benchmarks start together in separate threads, so the launch order across streams is not "
                      "enforced; import-examiner reads the actual order from cuda_launch_times");
  return {{"name", c.id},
          {"comment", fmt::format("tbcheck export of {} on {} (time unit {} ms). Not expressed: {}", c.id,
                                  c.scenario.device.name, o.time_unit_ms, fmt::join(caveats, "; "))},
          {"max_iterations", o.iterations},
          {"max_time", 0},
          {"cuda_device", 0},
          {"pin_cpus", true},
          {"base_result_directory", o.result_directory},
          {"benchmarks", std::move(benchmarks)}};
}

std::vector<int> tpcs_from_sm_mask(const std::string& mask, int tpcs, const std::string& file, const std::string& field) {
  std::string m = mask;
  const bool invert = !m.empty() && m[0] == '~';
  if (invert) m.erase(0, 1);
  uint64_t bits = 0;
  size_t used = 0;
  try {
    bits = std::stoull(m, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (m.empty() || used != m.size())
    bad(file, field, fmt::format("'{}' is not a mask like \"0x3\" or \"~0xaaaa\"", mask));
  if (invert) bits = ~bits;
  // libsmctrl: bit t set disables TPC t; the mask covers 64 TPCs.
  std::vector<int> out;
  for (int t = 0; t < std::min(tpcs, 64); ++t)
    if (!(bits >> t & 1)) out.push_back(t);
  if (out.empty()) bad(file, field, fmt::format("mask '{}' disables every TPC of the device", mask));
  return out;
}

model::Case import_config(const std::string& file, const ImportOptions& o) {
  return import_config_text(model::read_input_file(file, ""), file, o);
}

model::Case import_config_text(const std::string& text, const std::string& file, const ImportOptions& o) {
  const json cfg = model::parse_json_text(text, file);
  if (!cfg.is_object()) bad(file, "(top level)", "expected an examiner config object");
  auto bs = cfg.find("benchmarks");
  if (bs == cfg.end() || !bs->is_array() || bs->empty()) bad(file, "benchmarks", "expected a non-empty array");
  const double unit_s = o.time_unit_ms / 1000.0;
  // Range checked in floating point before any conversion: a huge or non-finite value (or a tiny
  // --time-unit-ms) would otherwise wrap when narrowed to the scenario's integer fields.
  auto units = [&](double seconds, const std::string& field, int64_t lo, int64_t hi) -> int64_t {
    const double u = seconds / unit_s;
    if (!std::isfinite(u) || u > static_cast<double>(hi) + 0.5 || u < static_cast<double>(lo) - 0.5) {
      if (lo >= 1 && std::isfinite(u) && u >= 0 && u < static_cast<double>(lo) - 0.5)
        bad(file, field, fmt::format("{} s is shorter than one {} ms time unit", seconds, o.time_unit_ms));
      bad(file, field, fmt::format("{} s is {:g} time units of {} ms; {} to {} units are expressible", seconds, u,
                                   o.time_unit_ms, lo, hi));
    }
    const double r = std::round(u);
    if (std::abs(u - r) > 1e-6 * std::max(1.0, std::abs(u)))
      bad(file, field, fmt::format("{} s is not a whole number of {} ms time units (choose --time-unit-ms)", seconds,
                                   o.time_unit_ms));
    return static_cast<int64_t>(r);
  };
  auto ns_of = [&](const json& v, const std::string& field) -> double {
    // timer_spin reads additional_info as a number or as a string holding one.
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      try {
        size_t used = 0;
        double d = std::stod(v.get<std::string>(), &used);
        if (used == v.get<std::string>().size()) return d;
      } catch (const std::exception&) {
      }
    }
    bad(file, field, "expected a number of nanoseconds");
  };
  struct Entry {
    model::Kernel k;
    size_t bench, order;
    std::string at;  // where the config gives it: "benchmarks[b]" or "benchmarks[b].additional_info[i]"
  };
  std::vector<Entry> entries;
  for (size_t b = 0; b < bs->size(); ++b) {
    const json& e = (*bs)[b];
    const std::string at = fmt::format("benchmarks[{}]", b);
    if (!e.is_object()) bad(file, at, "expected an object");
    const auto filename = e.find("filename");
    if (filename != e.end() && !filename->is_string()) bad(file, at + ".filename", "expected a string (the plugin's path)");
    const std::string plugin = filename != e.end() ? filename->get<std::string>() : "";
    const std::string label = e.contains("label") && e["label"].is_string() ? e["label"].get<std::string>() : fmt::format("b{}", b + 1);
    if (auto why = model::unprintable_name_reason(label); !why.empty()) bad(file, at + ".label", why);
    std::optional<int> priority;
    if (auto it = e.find("stream_priority"); it != e.end())
      priority = as_int(*it, file, at + ".stream_priority", -1024, 1024);
    int64_t release = 0;
    if (auto it = e.find("release_time"); it != e.end())
      release = units(as_seconds(*it, file, at + ".release_time"), at + ".release_time", 0, model::kMaxReleaseUnits);
    std::vector<int> tpcs;
    auto mask_of = [&](const json& m, const std::string& field) {
      if (!m.is_string()) bad(file, field, "expected a mask string");
      return tpcs_from_sm_mask(m.get<std::string>(), o.device.tpcs(), file, field);
    };
    if (auto it = e.find("sm_mask"); it != e.end()) tpcs = mask_of(*it, at + ".sm_mask");
    for (const char* unsupported : {"mps_thread_percentage", "use_processes"})
      if (e.contains(unsupported)) bad(file, at + "." + unsupported, "not expressible as a tbcheck scenario");
    auto base = [&](const std::string& name) {
      model::Kernel k;
      k.name = name;
      k.regs = o.regs;
      k.stream = static_cast<int>(b);
      k.priority = priority;
      k.release = release;
      k.tpcs = tpcs;
      return k;
    };
    if (plugin.ends_with("timer_spin.so")) {
      model::Kernel k = base(label);
      k.blocks = as_int(e.value("block_count", json()), file, at + ".block_count", 1, 1 << 26);
      k.threads = as_int(e.value("thread_count", json()), file, at + ".thread_count", 1, 1 << 20);
      if (!e.contains("additional_info")) bad(file, at + ".additional_info", "timer_spin needs its spin duration (ns)");
      k.duration = static_cast<int>(units(ns_of(e["additional_info"], at + ".additional_info") * 1e-9,
                                          at + ".additional_info", 1, model::kMaxDurationUnits));
      entries.push_back({k, b, 0, at});
    } else if (plugin.ends_with("multikernel.so")) {
      const json& list = e.value("additional_info", json());
      if (!list.is_array() || list.empty()) bad(file, at + ".additional_info", "multikernel needs a non-empty kernel list");
      for (size_t i = 0; i < list.size(); ++i) {
        const std::string ka = fmt::format("{}.additional_info[{}]", at, i);
        const json& x = list[i];
        if (!x.is_object()) bad(file, ka, "expected a kernel object");
        if (x.contains("kernel_label") && x["kernel_label"].is_string())
          if (auto why = model::unprintable_name_reason(x["kernel_label"].get<std::string>()); !why.empty())
            bad(file, ka + ".kernel_label", why);
        if (x.contains("delay") && !(x["delay"].is_number() && x["delay"].get<double>() == 0.0))
          bad(file, ka + ".delay", "a delay after the previous kernel's end is not a fixed launch instant; not expressible");
        model::Kernel k = base(x.contains("kernel_label") && x["kernel_label"].is_string() ? x["kernel_label"].get<std::string>()
                                                                                      : fmt::format("{}.{}", label, i + 1));
        k.blocks = as_int(x.value("block_count", json()), file, ka + ".block_count", 1, 1 << 26);
        k.threads = as_int(x.value("thread_count", json()), file, ka + ".thread_count", 1, 1 << 20);
        k.duration = static_cast<int>(
            units(ns_of(x.value("duration", json()), ka + ".duration") * 1e-9, ka + ".duration", 1, model::kMaxDurationUnits));
        if (x.contains("shared_memory_size"))
          k.smem = 4 * as_int(x["shared_memory_size"], file, ka + ".shared_memory_size", 0, 1 << 20);
        if (x.contains("sm_mask")) k.tpcs = mask_of(x["sm_mask"], ka + ".sm_mask");
        if (i > 0) k.release = release;  // later kernels follow in the stream; the release is the benchmark's
        entries.push_back({k, b, i, ka});
      }
    } else {
      bad(file, at + ".filename",
          fmt::format("plugin '{}': only timer_spin.so and multikernel.so kernels have known shapes and durations", plugin));
    }
  }
  // The scenario lists kernels in launch order: by release, then benchmark, then stream order.
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.k.release < b.k.release; });
  json j;
  j["device"] = o.device_builtin ? json(o.device.name) : o.device.to_json();
  j["kernels"] = json::array();
  std::set<std::string> names;
  for (auto& en : entries) {
    std::string n = en.k.name;
    for (int i = 2; !names.insert(n).second; ++i) n = fmt::format("{} ({})", en.k.name, i);
    en.k.name = n;
    json kj = en.k.to_json();
    if (en.k.tpcs.size() == static_cast<size_t>(o.device.tpcs())) kj.erase("tpcs");
    j["kernels"].push_back(kj);
  }
  if (cfg.contains("name") && !cfg["name"].is_string()) bad(file, "name", "expected a string");
  const std::string stem = std::filesystem::path(file).stem().string();
  j["id"] = stem;
  j["source"] = fmt::format("cuda_scheduling_examiner config {} ({}), imported with a time unit of {} ms",
                            std::filesystem::path(file).filename().string(), cfg.value("name", std::string("unnamed")),
                            o.time_unit_ms);
  // Loading it back checks every field against the device (priority range, TPCs, limits); an error names
  // the config's own field, not the scenario's "kernels[i]" the user never wrote.
  try {
    return model::case_from_json(j, file);
  } catch (const model::InputError& e) {
    const std::string& f = e.field();
    size_t i = 0, close = 0;
    if (f.rfind("kernels[", 0) != 0 || (close = f.find(']')) == std::string::npos) throw;
    try {
      i = std::stoul(f.substr(8, close - 8));
    } catch (const std::exception&) {
      throw e;
    }
    if (i >= entries.size()) throw;
    std::string rest = f.substr(close + 1);
    static const std::pair<const char*, const char*> kNames[] = {
        {".blocks", ".block_count"}, {".threads", ".thread_count"}, {".smem", ".shared_memory_size"},
        {".tpcs", ".sm_mask"}, {".priority", ".stream_priority"}};
    for (const auto& [ours, theirs] : kNames)
      if (rest.rfind(ours, 0) == 0) rest = theirs + rest.substr(std::strlen(ours));
    throw model::InputError(file, entries[i].at + rest, e.reason());
  }
}

}  // namespace tbcheck::oracle::examiner
