// Campaign planning, the generated sbatch scripts, and status / resume / collect read from the
// campaign folder's files (the scheduler's view only refines what the files cannot tell).
#include "tbcheck/campaign/campaign.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <regex>
#include <sstream>

#include <sys/stat.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/oracle/oracle.hpp"

namespace tbcheck::campaign {

namespace fs = std::filesystem;

namespace {

constexpr const char* kManifestFile = "manifest.json";

bool is_word(const std::string& s) { return !s.empty() && model::file_safe(s) == s && s[0] != '.'; }

// A value for an #SBATCH line (gres, partition, time): Slurm's own characters, nothing a script line
// or a shell could read otherwise.
bool is_sbatch_value(const std::string& s) {
  return !s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:,._+-") == std::string::npos;
}

fs::path results_dir(const std::string& dir, const std::string& device) { return fs::path(dir) / "results" / device; }
fs::path state_dir(const std::string& dir, const std::string& device) { return fs::path(dir) / "state" / device; }
fs::path logs_dir(const std::string& dir, const std::string& device) { return fs::path(dir) / "logs" / device; }

// One line of the state folder's records ("<task>.started" holds the job id, "<task>.rc" the exit code),
// as the script writes it: digits. Anything else (a file the script did not write) is said to be so, cut
// short and without its control characters, never printed whole.
std::optional<std::string> read_marker(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  constexpr size_t kMost = 24;
  std::string s;
  {
    std::ifstream in(p, std::ios::binary);
    s.resize(kMost + 2);
    in.read(s.data(), static_cast<std::streamsize>(s.size()));
    s.resize(static_cast<size_t>(in.gcount()));
  }
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  if (!s.empty() && s.size() <= kMost && s.find_first_not_of("0123456789") == std::string::npos) return s;
  std::string shown;
  for (char ch : s.substr(0, kMost)) shown += (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f) ? '?' : ch;
  return fmt::format("unreadable record {} ('{}{}')", p.filename().string(), shown, s.size() > kMost ? "..." : "");
}

// A Slurm --time: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS (or UNLIMITED), not zero.
bool is_slurm_time(const std::string& t) {
  static const std::regex kTime(R"(^(\d{1,5}(:\d{1,2}){0,2}|\d{1,4}-\d{1,2}(:\d{1,2}){0,2}|UNLIMITED|INFINITE)$)");
  return std::regex_match(t, kTime) && t.find_first_of("123456789UI") != std::string::npos;
}

// The binary the scripts run sits inside double quotes in a bash line: an absolute path of plain characters.
bool is_script_path(const std::string& p) {
  return p.size() > 1 && p[0] == '/' &&
         p.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-@, ") == std::string::npos;
}

}  // namespace

void check_settings(int repeat, int chunk, const std::string& time_limit, const std::string& tbcheck,
                    const std::function<void(const char* flag, const char* field, const std::string& why)>& fail) {
  if (repeat < 1 || repeat > oracle::kMaxRepetitions)
    fail("--repeat", "repeat", fmt::format("{} is not between 1 and {}", repeat, oracle::kMaxRepetitions));
  if (chunk < 1 || chunk > kMaxChunk) fail("--chunk", "chunk", fmt::format("{} is not between 1 and {}", chunk, kMaxChunk));
  if (!time_limit.empty() && !is_slurm_time(time_limit))
    fail("--time", "time_limit",
         fmt::format("'{}' is not a Slurm time limit (minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]], above 0)", time_limit));
  if (!is_script_path(tbcheck))
    fail("--tbcheck", "tbcheck",
         fmt::format("'{}' is not an absolute path of letters, digits and / . _ + - @ , or spaces (the tasks run it "
                     "from their own folders)", tbcheck));
}

DeviceTarget parse_device_target(const std::string& spec) {
  DeviceTarget t;
  const auto eq = spec.find('=');
  t.name = spec.substr(0, eq);
  if (eq != std::string::npos) t.gres = spec.substr(eq + 1);
  if (!is_word(t.name))
    throw model::InputError("--device", "", fmt::format("'{}': the device name must be letters, digits, '.', '_' or '-' "
                                                        "(NAME or NAME=GRES, e.g. a100=gpu:a100:1)", spec));
  if (eq != std::string::npos && !is_sbatch_value(t.gres))
    throw model::InputError("--device", "", fmt::format("'{}': the gres after '=' must be one word like gpu:a100:1", spec));
  return t;
}

model::json Manifest::to_json() const {
  model::json devs = model::json::array();
  for (const auto& d : devices) {
    model::json tasks = model::json::array();
    for (const auto& t : d.tasks) {
      model::json cs = model::json::array();
      for (const auto& c : t.cases) cs.push_back({{"file", c.file}, {"id", c.id}, {"result", c.result}});
      tasks.push_back({{"index", t.index}, {"cases", cs}});
    }
    devs.push_back({{"name", d.target.name},
                    {"gres", d.target.gres},
                    {"partition", d.target.partition},
                    {"job_name", d.job_name},
                    {"script", d.target.name + ".sbatch"},
                    {"tasks", tasks}});
  }
  model::json skip = model::json::array();
  for (const auto& s : skipped) skip.push_back({{"file", s.file}, {"id", s.id}, {"device", s.device}});
  return {{"schema_version", kManifestSchema},
          {"tool", {{"name", "tbcheck"}, {"version", tool_version}}},
          {"kind", "tbcheck-campaign"},
          {"id", id},
          {"created", created},
          {"oracle", oracle},
          {"repeat", repeat},
          {"chunk", chunk},
          {"time_limit", time_limit},
          {"tbcheck", tbcheck},
          {"devices", devs},
          {"skipped", skip}};
}

std::string manifest_text(const Manifest& m) {
  // The schema and tool version first (a reader decides from them how to read the rest).
  const model::json j = m.to_json();
  nlohmann::ordered_json o;
  o["schema_version"] = j.at("schema_version");
  o["tool"] = nlohmann::ordered_json::parse(j.at("tool").dump());
  for (const auto& [key, value] : j.items())
    if (key != "schema_version" && key != "tool") o[key] = nlohmann::ordered_json::parse(value.dump());
  return o.dump(1) + "\n";
}

namespace {

// A manifest's whole numbers: get<int>() converts any JSON number, and a float out of int's range
// has no defined int value, nor does a wider integer keep its value.
int int_field(const model::json& v, const std::string& where, const std::string& field) {
  if (!v.is_number_integer()) throw model::InputError(where, field, fmt::format("{} is not a whole number", v.dump()));
  const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t{INT_MAX}
                                           : v.get<int64_t>() >= INT_MIN && v.get<int64_t>() <= INT_MAX;
  if (!fits) throw model::InputError(where, field, fmt::format("{} is out of range", v.dump()));
  return static_cast<int>(v.get<int64_t>());
}

}  // namespace

Manifest manifest_from_json(const model::json& j, const std::string& where) {
  Manifest m;
  // The manifest is written by plan; a hand edit that breaks it is named by field.
  std::string field;
  try {
    field = "schema_version";
    if (int_field(j.at("schema_version"), where, field) != kManifestSchema)
      throw model::InputError(where, field, fmt::format("this tbcheck reads campaign manifests of schema {}", kManifestSchema));
    field = "kind";
    if (j.at("kind").get<std::string>() != "tbcheck-campaign") throw model::InputError(where, field, "not a tbcheck campaign manifest");
    field = "tool.version";
    m.tool_version = j.at("tool").at("version").get<std::string>();
    for (auto [key, dst] : {std::pair{"id", &m.id}, {"created", &m.created}, {"oracle", &m.oracle},
                            {"time_limit", &m.time_limit}, {"tbcheck", &m.tbcheck}}) {
      field = key;
      *dst = j.at(key).get<std::string>();
    }
    field = "repeat";
    m.repeat = int_field(j.at("repeat"), where, field);
    field = "chunk";
    m.chunk = int_field(j.at("chunk"), where, field);
    // The scripts were written from these; a hand edit is held to what plan accepts.
    check_settings(m.repeat, m.chunk, m.time_limit, m.tbcheck, [&](const char*, const char* f, const std::string& why) {
      throw model::InputError(where, f, why);
    });
    if (m.oracle != "cuda" && m.oracle.rfind("sim:", 0) != 0)
      throw model::InputError(where, "oracle", fmt::format("'{}': a campaign runs cuda or sim:<hypothesis>", m.oracle));
    const auto& devs = j.at("devices");
    for (size_t i = 0; i < devs.size(); ++i) {
      field = fmt::format("devices[{}]", i);
      DevicePlan d;
      d.target.name = devs[i].at("name").get<std::string>();
      d.target.gres = devs[i].at("gres").get<std::string>();
      d.target.partition = devs[i].at("partition").get<std::string>();
      d.job_name = devs[i].at("job_name").get<std::string>();
      if (!is_word(d.target.name)) throw model::InputError(where, field + ".name", "not a file-safe device name");
      std::set<int> indices;
      for (const auto& t : devs[i].at("tasks")) {
        Task task;
        task.index = int_field(t.at("index"), where, field + ".tasks");
        if (task.index < 0 || !indices.insert(task.index).second)
          throw model::InputError(where, field + ".tasks",
                                  fmt::format("task index {} is {}; each array task has its own index from 0", task.index,
                                              task.index < 0 ? "negative" : "given twice"));
        for (const auto& c : t.at("cases")) {
          CaseRef r{c.at("file").get<std::string>(), c.at("id").get<std::string>(), c.at("result").get<std::string>()};
          model::check_case_id(r.id, where, field + ".tasks");
          if (!is_word(r.result)) throw model::InputError(where, field + ".tasks", fmt::format("result name '{}' is not a plain file name", r.result));
          task.cases.push_back(r);
        }
        d.tasks.push_back(task);
      }
      m.devices.push_back(d);
    }
    field = "skipped";
    for (const auto& s : j.at("skipped"))
      m.skipped.push_back({s.at("file").get<std::string>(), s.at("id").get<std::string>(), s.at("device").get<std::string>()});
  } catch (const model::json::exception& e) {
    throw model::InputError(where, field, fmt::format("malformed campaign manifest: {}", e.what()));
  }
  return m;
}

Manifest make_plan(const PlanOptions& o) {
  if (o.devices.empty()) throw model::InputError("--device", "", "name at least one device (NAME or NAME=GRES)");
  if (o.case_paths.empty()) throw model::InputError("--cases", "", "name at least one case file or folder");
  check_settings(o.repeat, o.chunk, o.time_limit, o.tbcheck,
                 [](const char* flag, const char*, const std::string& why) { throw model::InputError(flag, "", why); });
  // Campaigns record runs of a device (cuda) or of a hypothesis playing one (sim, to test the
  // campaign itself); replay has nothing to record.
  if (o.oracle.rfind("sim:", 0) != 0 && o.oracle != "cuda")
    throw model::InputError("--oracle", "", fmt::format("'{}': a campaign runs cuda or sim:<hypothesis>", o.oracle));
  const std::string oracle_name = oracle::make_oracle(o.oracle, 0.0, 1, nullptr)->name();  // names --oracle itself
  for (const auto& t : o.devices)
    if (!t.partition.empty() && !is_sbatch_value(t.partition))
      throw model::InputError("--partition", "", fmt::format("'{}' is not a partition name", t.partition));

  Manifest m;
  m.tool_version = o.tool_version;
  m.created = o.created;
  m.oracle = o.oracle;
  m.repeat = o.repeat;
  m.chunk = o.chunk;
  m.time_limit = o.time_limit;
  m.tbcheck = o.tbcheck;
  const fs::path abs_out = fs::absolute(o.out_dir).lexically_normal();
  std::string base = abs_out.filename().string();
  if (base.empty()) base = abs_out.parent_path().filename().string();
  m.id = fmt::format("{}-{:06x}", model::file_safe(base), std::hash<std::string>{}(abs_out.string()) & 0xffffff);

  std::map<std::string, std::vector<CaseRef>> by_device;
  std::map<std::string, std::map<std::string, std::string>> seen;  // device -> result -> file
  for (const auto& t : o.devices) {
    if (by_device.count(t.name)) throw model::InputError("--device", "", fmt::format("'{}' named twice", t.name));
    by_device[t.name];
  }
  for (const auto& p : o.case_paths) {
    auto cases = model::load_cases(p);
    if (cases.empty()) throw model::InputError(p, "", "no corpus cases found");
    for (const auto& c : cases) {
      const std::string dev = c.scenario.device.name;
      const std::string file = fs::absolute(c.file.empty() ? p : c.file).lexically_normal().string();
      // The manifest names each case by its path and the cluster's tasks open it by that name: JSON holds only UTF-8.
      model::check_json_text(file, "--cases", "a case file's path");
      if (!by_device.count(dev)) {
        m.skipped.push_back({file, c.id, dev});
        continue;
      }
      CaseRef r{file, c.id, fmt::format("{}.{}.json", c.id, model::file_safe(oracle_name))};
      if (!is_word(r.result)) throw model::InputError(file, "id", fmt::format("case id '{}' is not file-safe", c.id));
      auto [it, fresh] = seen[dev].emplace(r.result, file);
      if (!fresh)
        throw model::InputError(file, "id", fmt::format("case '{}' is also in {}: one result per case and device", c.id, it->second));
      by_device[dev].push_back(r);
    }
  }
  for (const auto& t : o.devices) {
    const auto& cases = by_device[t.name];
    if (cases.empty())
      throw model::InputError("--device", "", fmt::format("no case targets device '{}' (a case runs on the device its scenario names)", t.name));
    DevicePlan d;
    d.target = t;
    d.job_name = fmt::format("tbcheck-{}-{}", m.id, t.name);
    for (size_t i = 0; i < cases.size(); i += static_cast<size_t>(o.chunk)) {
      Task task;
      task.index = static_cast<int>(d.tasks.size());
      task.cases.assign(cases.begin() + static_cast<long>(i),
                        cases.begin() + static_cast<long>(std::min(cases.size(), i + static_cast<size_t>(o.chunk))));
      d.tasks.push_back(task);
    }
    m.devices.push_back(d);
  }
  return m;
}

std::string sbatch_script(const Manifest& m, const DevicePlan& d, const std::string& campaign_dir) {
  const std::string dir = fs::absolute(campaign_dir).lexically_normal().string();
  const std::string& dev = d.target.name;
  std::string s;
  s += "#!/bin/bash\n";
  s += fmt::format("# tbcheck campaign {}, device {}: {} array task(s) of up to {} case(s), oracle {}, {} repetition(s).\n",
                   m.id, dev, d.tasks.size(), m.chunk, m.oracle, m.repeat);
  s += "# Written by `tbcheck campaign plan`. Submit with sbatch; `tbcheck campaign resume` resubmits the\n";
  s += "# failed and missing tasks (sbatch --array=<list>), `tbcheck campaign status` reports them.\n";
  s += fmt::format("#SBATCH --job-name={}\n", d.job_name);
  s += fmt::format("#SBATCH --array=0-{}\n", d.tasks.size() - 1);
  s += "#SBATCH --ntasks=1\n";
  if (!d.target.gres.empty()) s += fmt::format("#SBATCH --gres={}\n", d.target.gres);
  if (!d.target.partition.empty()) s += fmt::format("#SBATCH --partition={}\n", d.target.partition);
  if (!m.time_limit.empty()) s += fmt::format("#SBATCH --time={}\n", m.time_limit);
  s += fmt::format("#SBATCH --output={}/%a.%A.out\n", logs_dir(dir, dev).string());
  s += "set -u\n";
  s += fmt::format("TBCHECK=\"${{TBCHECK:-{}}}\"\n", m.tbcheck);
  s += fmt::format("RESULTS={}\n", shell_quote(results_dir(dir, dev).string()));
  s += fmt::format("STATE={}\n", shell_quote(state_dir(dir, dev).string()));
  s += "task=\"${SLURM_ARRAY_TASK_ID:?submit this script with sbatch}\"\n";
  s += "# Start and exit records (written whole, then renamed) tell status what the files alone cannot.\n";
  s += "mark() { printf '%s\\n' \"$2\" > \"$STATE/.$task.$1.part\" && mv -f \"$STATE/.$task.$1.part\" \"$STATE/$task.$1\"; }\n";
  s += "rc=0\n";
  s += "trap 'rc=143; exit 143' TERM INT\n";
  s += "trap 'mark rc \"$rc\"' EXIT\n";
  s += "rm -f \"$STATE/$task.rc\"\n";
  s += "mark started \"${SLURM_ARRAY_JOB_ID:-0}\"\n";
  s += "# One case: skipped when its result exists (a resumed chunk); tbcheck run never overwrites one.\n";
  s += "one() {\n";
  s += "  [ -e \"$RESULTS/$3\" ] && return 0\n";
  s += fmt::format("  \"$TBCHECK\" run \"$1\" --case \"$2\" --oracle {} --repeat {} --out \"$RESULTS\" || rc=$?\n",
                   shell_quote(m.oracle), m.repeat);
  s += "}\n";
  s += "case \"$task\" in\n";
  for (const auto& t : d.tasks) {
    s += fmt::format("  {})\n", t.index);
    for (const auto& c : t.cases)
      s += fmt::format("    one {} {} {}\n", shell_quote(c.file), shell_quote(c.id), shell_quote(c.result));
    s += "    ;;\n";
  }
  s += "  *) echo \"task $task is not in this campaign\" >&2; rc=2 ;;\n";
  s += "esac\n";
  s += "exit \"$rc\"\n";
  return s;
}

std::vector<std::string> write_campaign(const Manifest& m, const std::string& campaign_dir) {
  std::error_code ec;
  if (fs::exists(campaign_dir, ec) && !(fs::is_directory(campaign_dir, ec) && fs::is_empty(campaign_dir, ec)))
    throw model::InputError(campaign_dir, "--out", "exists and is not empty: a campaign is planned into a new folder");
  std::vector<std::string> written;
  for (const auto& d : m.devices)
    for (const auto& p : {results_dir(campaign_dir, d.target.name), state_dir(campaign_dir, d.target.name),
                          logs_dir(campaign_dir, d.target.name)}) {
      fs::create_directories(p, ec);
      if (ec) throw model::InputError(p.string(), "--out", fmt::format("cannot create: {}", ec.message()));
    }
  for (const auto& d : m.devices) {
    const std::string script = (fs::path(campaign_dir) / (d.target.name + ".sbatch")).string();
    model::write_file_atomic(script, sbatch_script(m, d, campaign_dir), /*no_overwrite=*/true);
    fs::permissions(script, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add, ec);
    written.push_back(script);
  }
  // The manifest last: a folder with one is a complete plan.
  const std::string manifest = (fs::path(campaign_dir) / kManifestFile).string();
  model::write_file_atomic(manifest, manifest_text(m), /*no_overwrite=*/true);
  written.push_back(manifest);
  return written;
}

Manifest load_manifest(const std::string& campaign_dir) {
  const std::string path = (fs::path(campaign_dir) / kManifestFile).string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw model::InputError(campaign_dir, "", "is not a campaign folder (no manifest.json; see tbcheck campaign plan)");
  return manifest_from_json(model::read_json_file(path), path);
}

std::string_view to_string(TaskState s) {
  switch (s) {
    case TaskState::Done: return "done";
    case TaskState::Queued: return "queued";
    case TaskState::Running: return "running";
    case TaskState::Failed: return "failed";
    case TaskState::Missing: return "missing";
  }
  return "?";
}

std::vector<TaskStatus> campaign_status(const Manifest& m, const std::string& campaign_dir, const SchedulerView& sched) {
  std::vector<TaskStatus> out;
  for (const auto& d : m.devices) {
    const fs::path results = results_dir(campaign_dir, d.target.name), state = state_dir(campaign_dir, d.target.name);
    for (const auto& t : d.tasks) {
      TaskStatus st;
      st.device = d.target.name;
      st.index = t.index;
      st.cases = static_cast<int>(t.cases.size());
      std::error_code ec;
      for (const auto& c : t.cases) st.results += fs::is_regular_file(results / c.result, ec);
      const auto rc = read_marker(state / fmt::format("{}.rc", t.index));
      const auto started = read_marker(state / fmt::format("{}.started", t.index));
      const TaskRecord* rec = sched.find(d.job_name, t.index);
      if (st.results == st.cases) {
        st.state = TaskState::Done;
      } else if (rec && rec->state != SlurmState::Ended) {
        st.state = rec->state == SlurmState::Pending ? TaskState::Queued : TaskState::Running;
        st.detail = fmt::format("job {}: {}", rec->job, rec->raw);
      } else if (rc) {
        st.state = TaskState::Failed;
        st.detail = fmt::format("exit {}; log {}", *rc, (logs_dir(campaign_dir, d.target.name) / fmt::format("{}.*.out", t.index)).string());
      } else if (rec) {
        st.state = TaskState::Failed;
        st.detail = fmt::format("job {}: {}, no exit record", rec->job, rec->raw);
      } else if (started) {
        // Started, neither finished nor live: killed hard (or the node went away) when a scheduler
        // answered; without one there is no telling it from a task still at work.
        st.state = sched.available ? TaskState::Failed : TaskState::Running;
        st.detail = sched.available ? fmt::format("started in job {}, no longer queued, no exit record", *started)
                                    : fmt::format("started in job {}; no scheduler to ask", *started);
      } else {
        st.state = TaskState::Missing;
      }
      out.push_back(st);
    }
  }
  return out;
}

std::vector<Resubmission> plan_resume(const Manifest& m, const std::vector<TaskStatus>& status, const std::string& campaign_dir) {
  std::vector<Resubmission> out;
  for (const auto& d : m.devices) {
    Resubmission r;
    r.device = d.target.name;
    r.script = (fs::absolute(campaign_dir) / (d.target.name + ".sbatch")).lexically_normal().string();
    for (const auto& s : status)
      if (s.device == d.target.name && (s.state == TaskState::Failed || s.state == TaskState::Missing)) r.tasks.push_back(s.index);
    if (r.tasks.empty()) continue;
    r.array = array_list(r.tasks);
    out.push_back(r);
  }
  return out;
}

std::vector<std::string> clear_for_resubmission(const Manifest& m, const Resubmission& r, const std::string& campaign_dir) {
  std::vector<std::string> removed;
  const DevicePlan* d = nullptr;
  for (const auto& x : m.devices)
    if (x.target.name == r.device) d = &x;
  if (!d) return removed;
  const fs::path results = results_dir(campaign_dir, d->target.name), state = state_dir(campaign_dir, d->target.name);
  std::set<int> tasks(r.tasks.begin(), r.tasks.end());
  std::set<std::string> prefixes;  // write_file_atomic's temporaries of these results: ".<result>.<...>"
  for (const auto& t : d->tasks)
    if (tasks.count(t.index)) {
      for (const char* kind : {"rc", "started"}) {
        fs::path p = state / fmt::format("{}.{}", t.index, kind);
        std::error_code ec;
        if (fs::remove(p, ec)) removed.push_back(p.string());
      }
      for (const auto& c : t.cases) prefixes.insert("." + c.result + ".");
    }
  std::error_code ec;
  std::vector<fs::path> stale;
  for (const auto& e : fs::directory_iterator(results, ec)) {
    const std::string name = e.path().filename().string();
    if (!model::is_temporary_name(name)) continue;
    for (const auto& p : prefixes)
      if (name.rfind(p, 0) == 0) stale.push_back(e.path());
  }
  for (const auto& p : stale)
    if (fs::remove(p, ec)) removed.push_back(p.string());
  return removed;
}

void check_result(const std::string& path, const CaseRef& c, const std::string& device) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) throw model::InputError(path, "", std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw model::InputError(path, "", "is not a regular file (tbcheck run writes one; a link or other file is not its result)");
  auto cases = model::load_cases(path);
  if (cases.size() != 1) throw model::InputError(path, "", fmt::format("holds {} cases; a result holds one", cases.size()));
  const model::Case& r = cases[0];
  const std::string want = c.result.ends_with(".json") ? c.result.substr(0, c.result.size() - 5) : c.result;
  if (r.id != want) throw model::InputError(path, "id", fmt::format("'{}', but this result is of case '{}' ('{}')", r.id, c.id, want));
  if (r.scenario.device.name != device)
    throw model::InputError(path, "device", fmt::format("'{}', but the campaign ran this case on '{}'", r.scenario.device.name, device));
  if (!r.observation) throw model::InputError(path, "observation", "missing; a result records what the oracle observed");
}

CollectResult collect(const Manifest& m, const std::string& campaign_dir, const std::string& to_root) {
  CollectResult r;
  struct Item {
    fs::path from, to;
  };
  std::vector<Item> items;
  // Every result is checked before anything is copied: a tampered one stops the collect and leaves the
  // target untouched (under corpus/hw/ it could never be replaced).
  for (const auto& d : m.devices) {
    const fs::path from = results_dir(campaign_dir, d.target.name), to = fs::path(to_root) / d.target.name;
    for (const auto& t : d.tasks)
      for (const auto& c : t.cases) {
        std::error_code ec;
        if (!fs::exists(fs::symlink_status(from / c.result, ec))) {
          ++r.missing;
          continue;
        }
        try {
          check_result((from / c.result).string(), c, d.target.name);
        } catch (const model::InputError& e) {
          throw model::InputError(e.where(), e.field(),
                                  e.reason() + "; nothing was collected (remove the file and `tbcheck campaign resume` "
                                               "runs the case again)");
        }
        items.push_back({from / c.result, to / c.result});
      }
  }
  std::set<std::string> dirs;
  for (const auto& it : items) {
    const std::string content = model::read_input_file(it.from.string(), "");
    const fs::path& target = it.to;
    dirs.insert(target.parent_path().string());
    // Written only where nothing is; identical bytes already there (an earlier or a concurrent collect)
    // are "already there", different ones a conflict, never overwritten.
    std::error_code ec;
    const bool taken = fs::exists(fs::symlink_status(target, ec));
    if (!taken && model::write_file_if_absent(target.string(), content)) {
      r.copied.push_back(target.string());
      continue;
    }
    if (!fs::is_regular_file(fs::symlink_status(target, ec))) {  // a link, a folder: not the same result
      r.conflicts.push_back(target.string());
      continue;
    }
    (model::read_input_file(target.string(), "--to") == content ? r.already : r.conflicts).push_back(target.string());
  }
  r.collected_dirs.assign(dirs.begin(), dirs.end());
  return r;
}

}  // namespace tbcheck::campaign
