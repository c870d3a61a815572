// Learn's case pool: corpus cases moved to the device, each case's candidates classed by the schedules they
// predict, and which candidates are one machine on the device (model::effective_options).
#include <set>

#include <fmt/format.h>

#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/options.hpp"
#include "learn_internal.hpp"

namespace tbcheck::search {

std::optional<model::Scenario> retarget(const model::Scenario& s, const model::Device& d) {
  if (s.device.name == d.name) return s;
  const int from = s.device.tpcs(), to = d.tpcs();
  if (from <= 0 || to <= 0) return std::nullopt;
  model::json j = s.to_json();
  j["device"] = d.to_json();
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    // Whole multiples of the TPC count fill TPCs and scale with them; other counts (the 1-block probe
    // kernels of seed 000's cases) and 2-D grids (their shape is the point) are kept.
    const auto& k = s.kernels[i];
    if (k.grid || k.blocks % from != 0) continue;
    j["kernels"][i]["blocks"] = static_cast<int64_t>(k.blocks) / from * to;
  }
  // nullopt: a kernel the device cannot run (threads, registers, shared memory).
  return model::try_scenario_from_json(j, "retargeted scenario");
}

namespace {

std::string file_of(const model::Case& c) { return c.file.empty() ? c.id : c.file; }

}  // namespace

std::vector<DeviceCase> device_cases(const std::vector<model::Case>& corpus, const model::Device& d) {
  std::vector<DeviceCase> out;
  std::set<std::string> seen;  // scenario JSON: the corpus repeats scenarios
  for (const auto& c : corpus) {
    auto s = retarget(c.scenario, d);
    if (!s) continue;
    if (!seen.insert(s->to_json().dump()).second) continue;
    std::string origin = c.scenario.device.name == d.name
                             ? "corpus " + file_of(c)
                             : fmt::format("corpus {} retargeted from {} (blocks x {}/{})", file_of(c),
                                           c.scenario.device.name, d.tpcs(), c.scenario.device.tpcs());
    out.push_back({c.id, std::move(origin), std::move(*s)});
  }
  return out;
}

namespace learn_detail {

namespace {

size_t placement_hash(const model::Schedule& s) {
  size_t h = 1469598103934665603ull;
  auto mix = [&](int64_t v) { h = (h ^ static_cast<size_t>(v)) * 1099511628211ull; };
  for (const auto& k : s.kernels)
    for (const auto& b : k.blocks) {
      mix(b.sm);
      mix(b.start);
    }
  return h;
}

}  // namespace

int CaseEntry::classify(const std::vector<model::Hypothesis>& hs, size_t i) {
  if (cls.empty()) cls.assign(hs.size(), kNotSimulated);
  if (cls[i] != kNotSimulated) return cls[i];
  std::optional<model::Schedule> s = model::try_simulate(scenario, hs[i]);
  if (!s) return cls[i] = kCannotRun;
  auto& bucket = by_hash[placement_hash(*s)];
  for (int c : bucket)
    if (same_placements(schedule[static_cast<size_t>(c)], *s)) return cls[i] = c;
  schedule.push_back(std::move(*s));
  bucket.push_back(static_cast<int>(schedule.size() - 1));
  return cls[i] = static_cast<int>(schedule.size() - 1);
}

SplitScore score_of(CaseEntry& c, const std::vector<model::Hypothesis>& hs, const std::vector<size_t>& members) {
  std::map<int, size_t> count;
  for (size_t i : members) ++count[c.classify(hs, i)];
  SplitScore s;
  s.groups = count.size();
  for (const auto& [k, n] : count) {
    s.largest = std::max(s.largest, n);
    if (k >= 0) s.cost = std::max(s.cost, c.schedule[static_cast<size_t>(k)].makespan());
  }
  return s;
}

bool thresholds_off_space(const model::Hypothesis& h) {
  for (const auto& o : model::threshold_options()) {
    const auto t = model::threshold_of(h, o);
    if (!t) continue;
    bool listed = false;
    for (const auto& row : model::threshold_set())
      if (row.mechanism == o.key)
        for (const auto& v : row.values) listed = listed || (v.is_number_integer() && v.get<int>() == *t);
    if (!listed) return true;
  }
  return false;
}

std::string machine_key(const model::Hypothesis& h, const model::Device& d) {
  return model::effective_options(h, d).to_json().dump();
}

std::string why_one_machine(const model::Hypothesis& a, const model::Hypothesis& b, const model::Device& d) {
  std::string why = "the same options where they can matter on " + d.name;
  if (a.warps != b.warps && !a.pb_registers())
    why += fmt::format(" (pb-any acts as sm with SM-pooled registers: {})", model::pb_any_as_sm(d).summary());
  return why;
}

std::vector<std::string> field_values(const model::Hypothesis& h, const std::vector<std::string>& fields) {
  const auto j = h.to_json();
  std::vector<std::string> v;
  for (const auto& f : fields) {
    const auto& x = j.contains(f) ? j[f] : model::json();
    v.push_back(x.is_string() ? x.get<std::string>() : x.is_null() ? "off" : x.dump());
  }
  return v;
}

}  // namespace learn_detail

}  // namespace tbcheck::search
