// Learn's case pool: corpus cases moved to the device, each case's candidates classed by the schedules they
// predict, and which candidates are one machine on the device (model::effective_options).
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/effective.hpp"
#include "tbcheck/model/options.hpp"
#include "learn_internal.hpp"

namespace tbcheck::search {

std::optional<model::Scenario> retarget(const model::Scenario& s, const model::Device& d) {
  if (s.device.name == d.name) return s;
  const int from = s.device.tpcs(), to = d.tpcs();
  if (from <= 0 || to <= 0) return std::nullopt;
  model::json j = s.to_json();
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    // Whole multiples of the TPC count fill TPCs and scale with them; other counts (the 1-block probe
    // kernels of seed 000's cases) and 2-D grids (their shape is the point) are kept.
    const auto& k = s.kernels[i];
    if (k.grid || k.blocks % from != 0) continue;
    j["kernels"][i]["blocks"] = static_cast<int64_t>(k.blocks) / from * to;
  }
  // nullopt: a kernel the device cannot run (threads, registers, shared memory).
  return model::try_scenario_from_json(j, d, false, "retargeted scenario");
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

uint32_t Machines::add(const model::Hypothesis& acting_options) {
  const auto [it, fresh] = index.emplace(model::option_key(acting_options), static_cast<uint32_t>(acting.size()));
  if (fresh) acting.push_back(acting_options);
  return it->second;
}

int CaseEntry::classify(const std::vector<model::Hypothesis>& hs, size_t i, const Machines* m) {
  const size_t slot = m ? m->of[i] : i;
  if (cls.size() <= slot) cls.resize(m ? m->acting.size() : hs.size(), kNotSimulated);
  if (cls[slot] >= 0 || cls[slot] == kCannotRun) return cls[slot];
  if (m && cls[slot] == kNotSimulated) asked.emplace_back(i, slot);
  return evaluate(hs[i], slot, m);
}

void CaseEntry::defer(size_t i, const Machines& m) {
  const size_t slot = m.of[i];
  if (cls.size() <= slot) cls.resize(m.acting.size(), kNotSimulated);
  if (cls[slot] != kNotSimulated) return;
  asked.emplace_back(i, slot);
  cls.set(slot, kDeferred);
}

std::vector<int> CaseEntry::class_order(const std::vector<model::Hypothesis>& hs, const Machines* m) {
  if (m)
    for (const auto& [i, slot] : asked)  // a candidate refitted since: its machine then is the one asked for
      if (cls[slot] == kDeferred) evaluate(m->of[i] == slot ? hs[i] : m->acting[slot], slot, m);
  std::vector<int> order(schedule.size(), -1);
  int next = 0;
  if (m)
    for (const auto& [i, slot] : asked)
      if (const int c = cls[slot]; c >= 0 && order[static_cast<size_t>(c)] < 0) order[static_cast<size_t>(c)] = next++;
  for (auto& o : order)  // without machines, every class in the order found
    if (o < 0) o = next++;
  return order;
}

int CaseEntry::evaluate(const model::Hypothesis& h, size_t slot, const Machines* m) {
  // Options the case cannot exercise make no difference to the simulation (model::options_on): a machine that
  // agrees with one simulated before on the others takes its class.
  std::string key;
  if (m) {
    if (!reach) reach.emplace(scenario);
    key = model::option_key(model::options_on(m->acting[slot], scenario, *reach));
    if (const auto it = by_options.find(key); it != by_options.end()) {
      cls.set(slot, it->second);
      return it->second;
    }
  }
  auto remember = [&](int c) {
    if (m) by_options.emplace(std::move(key), c);
    cls.set(slot, c);
    return c;
  };
  std::optional<model::Schedule> s = model::try_simulate(scenario, h);
  if (!s) return remember(kCannotRun);
  auto& bucket = by_hash[placement_hash(*s)];
  for (int c : bucket)
    if (same_placements(schedule[static_cast<size_t>(c)], *s)) return remember(c);
  schedule.push_back(std::move(*s));
  bucket.push_back(static_cast<int>(schedule.size() - 1));
  return remember(static_cast<int>(schedule.size() - 1));
}

SplitScore score_of(CaseEntry& c, const std::vector<model::Hypothesis>& hs, const std::vector<size_t>& members,
                    const Machines* m, size_t stop_above) {
  std::map<int, size_t> count;
  SplitScore s;
  for (size_t x = 0; x < members.size(); ++x) {
    if (++count[c.classify(hs, members[x], m)] <= stop_above || !m) continue;
    s.cut = true;
    // Asked for in order as an uncut classing would, so that class_order numbers the classes as it would.
    for (size_t y = x + 1; y < members.size(); ++y) c.defer(members[y], *m);
    break;
  }
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
  return model::option_key(model::effective_options(h, d));
}

std::string why_one_machine(const model::Hypothesis& a, const model::Hypothesis& b, const model::Device& d) {
  std::string why = "the same options where they can matter on " + d.name;
  if (a.warps != b.warps && !a.pb_registers())
    why += fmt::format(" (pb-any acts as sm with SM-pooled registers: {})", model::pb_any_as_sm(d).summary());
  return why;
}

std::vector<std::string> field_values(const model::Hypothesis& h, const std::vector<std::string>& fields) {
  // option_settings writes each mechanism as a file does ("off": no threshold), without building the JSON
  // object: this runs for every candidate of the composition space.
  const std::vector<model::OptionSetting> settings = model::option_settings(h);
  std::vector<std::string> v;
  v.reserve(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i < settings.size() && settings[i].mechanism == fields[i]) {
      v.push_back(settings[i].value);
      continue;
    }
    const auto it = std::find_if(settings.begin(), settings.end(), [&](const auto& x) { return x.mechanism == fields[i]; });
    v.push_back(it != settings.end() ? it->value : "off");
  }
  return v;
}

}  // namespace learn_detail

}  // namespace tbcheck::search
