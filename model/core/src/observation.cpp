// Observations and corpus cases: loading (single cases, collections, directories) with every
// kernel name, block index and SM id checked against the case's own scenario.
#include "tbcheck/model/observation.hpp"

#include "tbcheck/model/io.hpp"
#include "tbcheck/model/one_case.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <exception>
#include <iterator>
#include <string_view>
#include <thread>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tbcheck::model {

std::string_view to_string(ObservationKind k) {
  switch (k) {
    case ObservationKind::Hardware: return "hardware";
    case ObservationKind::Paper: return "paper";
    case ObservationKind::Synthetic: return "synthetic";
  }
  return "?";
}

std::string Fact::describe() const {
  switch (kind) {
    case Kind::OnSms: return fmt::format("{} blocks are on SMs [{}]", kernel, fmt::join(sms, ", "));
    case Kind::BlockOnSm: return fmt::format("{} block {} is on SM {}", kernel, block, sm);
    case Kind::StartsAt: return fmt::format("{} starts at time {}", kernel, time);
    case Kind::StartsAfter: return fmt::format("{} starts only after {} finished", kernel, fmt::join(kernels, ", "));
    case Kind::ConcurrentWith: return fmt::format("{} runs concurrently with {}", kernel, fmt::join(kernels, ", "));
    case Kind::ClustersCoscheduled: return fmt::format("the blocks of each cluster of {} start together on one GPC", kernel);
  }
  return "?";
}

json Fact::to_json() const {
  json j = {{"kernel", kernel}};
  switch (kind) {
    case Kind::OnSms: j["on_sms"] = sms; break;
    case Kind::BlockOnSm: j["block"] = block; j["sm"] = sm; break;
    case Kind::StartsAt: j["starts_at"] = time; break;
    case Kind::StartsAfter: j["starts_after"] = kernels; break;
    case Kind::ConcurrentWith: j["concurrent_with"] = kernels; break;
    case Kind::ClustersCoscheduled: j["clusters_coscheduled"] = true; break;
  }
  return j;
}

json Resolution::to_json() const { return {{"tick", tick}, {"launch_window", launch_window}}; }

bool Observation::has_block_times(const Scenario& s) const {
  for (const auto& k : s.kernels)
    if (!sm_of_block.count(k.name) || !start_of_block.count(k.name) || !end_of_block.count(k.name)) return false;
  return !s.kernels.empty();
}

json Observation::to_json() const {
  json j = {{"kind", to_string(kind)}};
  if (!sm_of_block.empty()) j["sm_of_block"] = sm_of_block;
  if (!start_of_block.empty()) j["start_of_block"] = start_of_block;
  if (!end_of_block.empty()) j["end_of_block"] = end_of_block;
  if (!launch_of_kernel.empty()) j["launch_of_kernel"] = launch_of_kernel;
  if (resolution) j["resolution"] = resolution->to_json();
  if (!facts.empty()) {
    j["facts"] = json::array();
    for (const auto& f : facts) j["facts"].push_back(f.to_json());
  }
  return j;
}

json Case::to_json() const {
  json j = {{"id", id}, {"source", source}};
  json s = scenario.to_json();
  j["device"] = s["device"];
  j["kernels"] = s["kernels"];
  if (observation) j["observation"] = observation->to_json();
  if (!expect.empty()) {
    json e = json::object();
    for (const auto& [h, x] : expect) e[h] = x == Expect::Pass ? "pass" : "fail";
    j["expect"] = e;
  }
  if (!notes.empty()) j["notes"] = notes;
  if (!run.is_null()) j["run"] = run;
  return j;
}

namespace {

void check_kernel_name(const Scenario& s, const std::string& name, const std::string& where, const std::string& field) {
  if (s.kernel_index(name) >= 0) return;
  std::vector<std::string> names;
  for (const auto& k : s.kernels) {
    if (names.size() == 10) {
      names.push_back(fmt::format("... ({} in all)", s.kernels.size()));
      break;
    }
    names.push_back(k.name);
  }
  throw InputError(where, field, fmt::format("no kernel named '{}' in this case; kernels are: {}", name, fmt::join(names, ", ")));
}

std::vector<std::string> name_list(const ObjectReader& r, std::string_view key, const Scenario& s) {
  const json& v = r.require(key);
  if (!v.is_array() || v.empty()) r.fail(key, "expected a non-empty array of kernel names");
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    std::string f = fmt::format("{}[{}]", r.field(key), i);
    if (!v[i].is_string()) throw InputError(r.where(), f, fmt::format("expected a kernel name, found {}", json_type_name(v[i])));
    check_kernel_name(s, v[i].get<std::string>(), r.where(), f);
    out.push_back(v[i].get<std::string>());
  }
  return out;
}


Fact fact_from_json(const json& j, const Scenario& s, const std::string& where, const std::string& path) {
  ObjectReader r(j, where, path, {"kernel", "on_sms", "block", "sm", "starts_at", "starts_after", "concurrent_with",
                                        "clusters_coscheduled", "note"});
  Fact f;
  f.kernel = r.string("kernel");
  check_kernel_name(s, f.kernel, where, r.field("kernel"));
  const Kernel& k = s.kernels[s.kernel_index(f.kernel)];
  int kinds = int(r.has("on_sms")) + int(r.has("block") || r.has("sm")) + int(r.has("starts_at")) +
              int(r.has("starts_after")) + int(r.has("concurrent_with")) + int(r.has("clusters_coscheduled"));
  if (kinds != 1)
    throw InputError(where, path,
                     "a fact needs exactly one of: on_sms, block + sm, starts_at, starts_after, concurrent_with, "
                     "clusters_coscheduled");
  if (r.has("on_sms")) {
    f.kind = Fact::Kind::OnSms;
    for (int64_t sm : r.int_array("on_sms", 0, s.device.sms - 1)) f.sms.push_back(static_cast<int>(sm));
    if (f.sms.empty()) r.fail("on_sms", "must list at least one SM");
  } else if (r.has("block") || r.has("sm")) {
    f.kind = Fact::Kind::BlockOnSm;
    f.block = static_cast<int>(r.integer("block", 0, k.blocks - 1));
    f.sm = static_cast<int>(r.integer("sm", 0, s.device.sms - 1));
  } else if (r.has("starts_at")) {
    f.kind = Fact::Kind::StartsAt;
    f.time = static_cast<int>(r.integer("starts_at", 0, INT32_MAX));
  } else if (r.has("starts_after")) {
    f.kind = Fact::Kind::StartsAfter;
    f.kernels = name_list(r, "starts_after", s);
  } else if (r.has("clusters_coscheduled")) {
    f.kind = Fact::Kind::ClustersCoscheduled;
    if (r.require("clusters_coscheduled") != json(true)) r.fail("clusters_coscheduled", "the only value is true");
    if (!k.cluster) r.fail("clusters_coscheduled", fmt::format("kernel {} is not launched with clusters", k.name));
  } else {
    f.kind = Fact::Kind::ConcurrentWith;
    f.kernels = name_list(r, "concurrent_with", s);
  }
  return f;
}

std::map<std::string, std::vector<int>> per_block(const ObjectReader& r, std::string_view key, const Scenario& s,
                                                  int64_t lo, int64_t hi) {
  const json& v = r.require(key);
  if (!v.is_object()) r.fail(key, fmt::format("expected an object of kernel name -> list, found {}", json_type_name(v)));
  std::map<std::string, std::vector<int>> out;
  // One lookup per listed kernel: a search per name would make a case of many kernels quadratic.
  std::map<std::string_view, size_t> index;
  for (size_t i = 0; i < s.kernels.size(); ++i) index.emplace(s.kernels[i].name, i);
  for (const auto& [name, list] : v.items()) {
    std::string f = r.field(key) + "." + name;
    const auto at = index.find(name);
    if (at == index.end()) check_kernel_name(s, name, r.where(), f);
    const Kernel& k = s.kernels[at->second];
    if (!list.is_array()) throw InputError(r.where(), f, fmt::format("expected an array, found {}", json_type_name(list)));
    if (static_cast<int>(list.size()) != k.blocks)
      throw InputError(r.where(), f, fmt::format("lists {} blocks but kernel {} has {}", list.size(), name, k.blocks));
    std::vector<int> vals;
    vals.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i)
      vals.push_back(static_cast<int>(ObjectReader::as_integer(list[i], lo, hi, r.where(), fmt::format("{}[{}]", f, i))));
    out[name] = std::move(vals);
  }
  return out;
}

// A recording whose blocks overlap on one SM beyond what the SM can physically hold: no device of this
// kind could have produced it, and judging it would only end in an order search that cannot succeed
// ("unknown after N simulations"). Only overlaps the timer resolves count (each block's interval shrunk
// by one tick at both ends), and only limits no hypothesis can relax: resident blocks, warps, and shared
// memory against the largest configuration. Registers are not checked: an imported log records a
// default register count, not the kernel's.
void check_recording_fits(const Observation& o, const Scenario& s, const std::string& where) {
  const int64_t shrink = o.resolution ? o.resolution->tick : 0;
  struct Event {
    int64_t t;
    int delta;  // +1 start, -1 end; ends first at one instant (a block retiring frees room for the next)
    size_t kernel;
    int block;
  };
  std::map<int, std::vector<Event>> per_sm;
  for (size_t k = 0; k < s.kernels.size(); ++k) {
    const auto& name = s.kernels[k].name;
    auto sm = o.sm_of_block.find(name), st = o.start_of_block.find(name), en = o.end_of_block.find(name);
    if (sm == o.sm_of_block.end() || st == o.start_of_block.end() || en == o.end_of_block.end()) continue;
    for (size_t b = 0; b < sm->second.size(); ++b) {
      const int64_t a = int64_t{st->second[b]} + shrink, e = int64_t{en->second[b]} - shrink;
      if (a >= e) continue;  // too short for the timer to say it overlapped anything
      auto& ev = per_sm[sm->second[b]];
      ev.push_back({a, +1, k, static_cast<int>(b)});
      ev.push_back({e, -1, k, static_cast<int>(b)});
    }
  }
  const Device& d = s.device;
  const int64_t smem_limit = d.smem_configs_kb.empty() ? INT64_MAX : int64_t{d.max_smem_config_bytes()};
  for (auto& [sm, ev] : per_sm) {
    std::stable_sort(ev.begin(), ev.end(), [](const Event& x, const Event& y) { return x.t != y.t ? x.t < y.t : x.delta < y.delta; });
    int64_t blocks = 0, warps = 0, smem = 0;
    for (const auto& e : ev) {
      const Kernel& k = s.kernels[e.kernel];
      blocks += e.delta;
      warps += e.delta * k.warps();
      smem += e.delta * (int64_t{k.smem} + d.smem_reserved_per_block);
      if (e.delta < 0) continue;
      std::string over;
      if (d.max_blocks_per_sm > 0 && blocks > d.max_blocks_per_sm)
        over = fmt::format("{} blocks; an SM of {} holds at most {}", blocks, d.name, d.max_blocks_per_sm);
      else if (d.max_warps_per_sm > 0 && warps > d.max_warps_per_sm)
        over = fmt::format("{} warps; an SM of {} holds at most {}", warps, d.name, d.max_warps_per_sm);
      else if (smem > smem_limit)
        over = fmt::format("{} bytes of shared memory (the runtime's {} per block included); an SM of {} has at most {}",
                           smem, d.smem_reserved_per_block, d.name, smem_limit);
      if (!over.empty())
        throw InputError(where, fmt::format("observation.start_of_block.{}[{}]", k.name, e.block),
                         fmt::format("impossible recording: from time {} SM {} would run {} (blocks overlapping by more "
                                     "than the timer's tick on one SM)",
                                     e.t - shrink, sm, over));
    }
  }
}

Observation observation_from_json(const json& j, const Scenario& s, const std::string& where) {
  ObjectReader r(j, where, "observation",
                 {"kind", "sm_of_block", "start_of_block", "end_of_block", "launch_of_kernel", "resolution", "facts",
                  "metadata"});
  Observation o;
  std::string kind = r.opt_string("kind").value_or("paper");
  if (kind == "hardware") o.kind = ObservationKind::Hardware;
  else if (kind == "paper") o.kind = ObservationKind::Paper;
  else if (kind == "synthetic") o.kind = ObservationKind::Synthetic;
  else r.fail("kind", fmt::format("unknown kind '{}'; valid kinds are: hardware, paper, synthetic", kind));
  if (r.has("sm_of_block")) o.sm_of_block = per_block(r, "sm_of_block", s, 0, s.device.sms - 1);
  if (r.has("start_of_block")) o.start_of_block = per_block(r, "start_of_block", s, 0, INT32_MAX);
  if (r.has("end_of_block")) {
    o.end_of_block = per_block(r, "end_of_block", s, 0, INT32_MAX);
    for (const auto& [name, ends] : o.end_of_block) {
      auto starts = o.start_of_block.find(name);
      if (starts == o.start_of_block.end())
        r.fail("end_of_block", fmt::format("kernel {} has ends but no start_of_block", name));
      for (size_t b = 0; b < ends.size(); ++b)
        if (ends[b] <= starts->second[b])
          throw InputError(where, fmt::format("observation.end_of_block.{}[{}]", name, b),
                           fmt::format("block {} ends at {}, not after its start {}", b, ends[b], starts->second[b]));
    }
  }
  if (r.has("launch_of_kernel")) {
    const json& v = r.require("launch_of_kernel");
    if (!v.is_object()) r.fail("launch_of_kernel", "expected an object of kernel name -> launch time");
    for (const auto& [name, t] : v.items()) {
      const std::string f = r.field("launch_of_kernel") + "." + name;
      check_kernel_name(s, name, where, f);
      o.launch_of_kernel[name] = ObjectReader::as_integer(t, 0, INT32_MAX, where, f);
    }
  }
  if (r.has("resolution")) {
    ObjectReader rr(r.require("resolution"), where, "observation.resolution", {"tick", "launch_window"});
    Resolution res;
    if (rr.has("tick")) res.tick = rr.integer("tick", 1, INT32_MAX);
    if (rr.has("launch_window")) res.launch_window = rr.integer("launch_window", 0, INT32_MAX);
    o.resolution = res;
  }
  if (r.has("facts")) {
    const json& fs = r.require("facts");
    if (!fs.is_array()) r.fail("facts", fmt::format("expected an array, found {}", json_type_name(fs)));
    for (size_t i = 0; i < fs.size(); ++i)
      o.facts.push_back(fact_from_json(fs[i], s, where, fmt::format("observation.facts[{}]", i)));
  }
  check_recording_fits(o, s, where);
  return o;
}

}  // namespace

std::vector<int> cluster_of_blocks(const Kernel& k) {
  std::vector<int> out(static_cast<size_t>(k.blocks), 0);
  if (!k.cluster) {
    for (int b = 0; b < k.blocks; ++b) out[static_cast<size_t>(b)] = b;
    return out;
  }
  const int gx = k.grid ? k.grid->first : k.blocks;
  const int cx = (*k.cluster)[0], cy = (*k.cluster)[1];
  for (int b = 0; b < k.blocks; ++b) out[static_cast<size_t>(b)] = (b / gx / cy) * (gx / cx) + (b % gx) / cx;
  return out;
}

namespace {

// The form of recordings written before `run` was a field: "<notes>; metadata {...}". Read, never written.
void split_old_run_metadata(Case& c) {
  constexpr std::string_view mark = "; metadata ";
  const size_t at = c.notes.find(mark);
  if (at == std::string::npos) return;
  json m = json::parse(c.notes.substr(at + mark.size()), nullptr, /*allow_exceptions=*/false);
  if (!m.is_object()) return;  // text that only looks like the mark stays notes
  c.run = std::move(m);
  c.notes.resize(at);
}

}  // namespace

Case case_from_json(const json& j, const std::string& where, const std::string& default_source) {
  ObjectReader r(j, where, "", kCaseKeys);
  Case c;
  c.file = where;
  c.scenario = scenario_from_json(j, where);
  c.id = r.opt_string("id").value_or("");
  if (r.has("id")) check_case_id(c.id, where, "id");
  c.source = r.opt_string("source").value_or(default_source);
  c.notes = r.opt_string("notes").value_or("");
  if (const json* run = r.get("run"); run && !run->is_null()) {
    if (!run->is_object()) r.fail("run", fmt::format("expected an object (the run's metadata), found {}", json_type_name(*run)));
    c.run = *run;
  } else {
    split_old_run_metadata(c);
  }
  if (const json* o = r.get("observation"); o && !o->is_null()) c.observation = observation_from_json(*o, c.scenario, where);
  if (const json* e = r.get("expect"); e && !e->is_null()) {
    if (!e->is_object()) r.fail("expect", "expected an object of hypothesis name -> \"pass\" or \"fail\"");
    for (const auto& [h, v] : e->items()) {
      if (v == "pass") c.expect[h] = Expect::Pass;
      else if (v == "fail") c.expect[h] = Expect::Fail;
      else throw InputError(where, "expect." + h, "expected \"pass\" or \"fail\"");
    }
  }
  return c;
}

static void load_file_cases(const std::string& path, bool from_directory, std::vector<Case>& out) {
  json j = read_json_file(path);
  std::string stem = std::filesystem::path(path).stem().string();
  if (j.is_object() && j.contains("cases")) {
    ObjectReader r(j, path, "", {"source", "description", "cases"});
    std::string source = r.opt_string("source").value_or("");
    const json& cs = r.require("cases");
    if (!cs.is_array()) r.fail("cases", fmt::format("expected an array of cases, found {}", json_type_name(cs)));
    for (size_t i = 0; i < cs.size(); ++i) {
      std::string where = fmt::format("{}: cases[{}]", path, i);
      Case c = case_from_json(cs[i], where, source);
      if (c.id.empty()) c.id = fmt::format("{}#{}", stem, i);
      c.file = path;
      out.push_back(std::move(c));
    }
    return;
  }
  if (!(j.is_object() && j.contains("kernels"))) {
    if (from_directory) return;  // devices, hypotheses, other data beside the cases
    throw InputError(path, "", "not a corpus case: it has neither \"kernels\" nor \"cases\" (a device or hypothesis file?)");
  }
  Case c = case_from_json(j, path);
  if (c.id.empty()) c.id = stem;
  out.push_back(std::move(c));
}

std::vector<Case> load_cases(const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<Case> out;
  if (input_kind(path, "") == InputKind::File) {
    load_file_cases(path, false, out);
    return out;
  }
  // A folder: every *.json below it, in name order. Hidden names (write_file_atomic's temporaries
  // among them) are never cases; a broken symbolic link, a FIFO, socket or device, or an unreadable
  // folder is an error, not a silently smaller corpus. Linked folders are not followed, so a link loop
  // cannot recurse.
  std::vector<std::string> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(path, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    if (!name.empty() && name[0] == '.') {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      ec.clear();
      continue;
    }
    if (it->is_symlink(ec)) {
      // Throws for dangling links, loops and links to a FIFO, socket or device.
      if (input_kind(p.string(), "") == InputKind::Directory) continue;
    } else if (!it->is_directory(ec) && !it->is_regular_file(ec)) {
      // A FIFO, socket or device: named like a dangling link, never silently skipped (a corpus that reads
      // smaller than it looks). input_kind says which without opening it, so a FIFO cannot block.
      input_kind(p.string(), "");
    }
    ec.clear();
    if (p.extension() == ".json" && it->is_regular_file(ec)) files.push_back(p.string());
    ec.clear();
  }
  if (ec) throw InputError(path, "", fmt::format("cannot list the folder: {}", ec.message()));
  std::sort(files.begin(), files.end());
  // Files are read on a few threads (parsing JSON is most of a large corpus's cost); the cases come out in name
  // order, and the first bad file in that order is the error, as reading them one by one would report.
  std::vector<std::vector<Case>> per_file(files.size());
  std::vector<std::exception_ptr> failed(files.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      try {
        load_file_cases(files[i], true, per_file[i]);
      } catch (...) {
        failed[i] = std::current_exception();
      }
    }
  };
  constexpr size_t kFilesPerThread = 16, kMaxThreads = 8;  // a thread is worth starting for a few files
  const size_t threads = std::min({static_cast<size_t>(std::max(1u, std::thread::hardware_concurrency())), kMaxThreads,
                                   files.size() / kFilesPerThread + 1});
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (size_t i = 0; i < files.size(); ++i) {
    if (failed[i]) std::rethrow_exception(failed[i]);
    std::move(per_file[i].begin(), per_file[i].end(), std::back_inserter(out));
  }
  return out;
}

Case load_one_case(const std::string& path, const std::string& case_id, const std::string& command) {
  // load_cases reads a folder as a corpus; one case comes from a file.
  if (input_kind(path, "") == InputKind::Directory)
    throw InputError(path, "", "is a directory (a scenario or case file is expected here)");
  auto cases = load_cases(path);
  if (!case_id.empty()) {
    std::erase_if(cases, [&](const Case& c) { return c.id != case_id; });
    if (cases.empty()) throw InputError(path, "--case", fmt::format("no case with id '{}'", case_id));
  }
  if (cases.size() != 1)
    throw InputError(path, "",
                     fmt::format("{} takes one scenario or case; this holds {} (--case ID picks one)", command, cases.size()));
  return std::move(cases[0]);
}

}  // namespace tbcheck::model
