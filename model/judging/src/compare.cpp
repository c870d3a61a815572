// Judging predictions against observations: paper facts one by one, recorded schedules at the
// exact / counts / sms levels, each failure reported with the first place it differs.
#include "tbcheck/model/compare.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/simulator.hpp"
#include "tbcheck/model/text.hpp"

namespace tbcheck::model {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::Pass: return "pass";
    case Verdict::Fail: return "fail";
    case Verdict::Unknown: return "unknown";
    case Verdict::Unsupported: return "unsupported";
  }
  return "?";
}

std::string_view to_string(Level l) {
  switch (l) {
    case Level::Exact: return "exact";
    case Level::Counts: return "counts";
    case Level::Sms: return "sms";
  }
  return "?";
}

std::string_view to_string(Timing t) {
  switch (t) {
    case Timing::Model: return "model";
    case Timing::Trace: return "trace";
  }
  return "?";
}

Timing timing_from_string(const std::string& s, const std::string& flag) {
  for (Timing t : kAllTimings)
    if (to_string(t) == s) return t;
  throw InputError(flag, "", fmt::format("unknown timing '{}'; valid timings are: model, trace", s));
}

Level level_from_string(const std::string& s) {
  for (Level l : kAllLevels)
    if (to_string(l) == s) return l;
  throw InputError("--level", "", fmt::format("unknown level '{}'; valid levels are: exact, counts, sms, all", s));
}

namespace {

std::vector<int> sorted(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v;
}

const KernelSchedule& kernel_of(const Schedule& sch, const Scenario& s, const std::string& name) {
  return sch.kernels[static_cast<size_t>(s.kernel_index(name))];
}

int64_t first_start(const KernelSchedule& k) {
  int64_t t = k.blocks.front().start;
  for (const auto& b : k.blocks) t = std::min(t, b.start);
  return t;
}
int64_t last_end(const KernelSchedule& k) {
  int64_t t = 0;
  for (const auto& b : k.blocks) t = std::max(t, b.end);
  return t;
}

// True when some block of a and some block of b are resident at the same instant.
bool overlap(const KernelSchedule& a, const KernelSchedule& b) {
  std::vector<std::pair<int64_t, int64_t>> iv;
  for (const auto& x : b.blocks) iv.emplace_back(x.start, x.end);
  std::sort(iv.begin(), iv.end());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (auto& p : iv) {
    if (!merged.empty() && p.first <= merged.back().second) merged.back().second = std::max(merged.back().second, p.second);
    else merged.push_back(p);
  }
  for (const auto& x : a.blocks) {
    auto it = std::upper_bound(merged.begin(), merged.end(), std::pair<int64_t, int64_t>{x.start, INT64_MAX});
    if (it != merged.end() && it->first < x.end) return true;              // starts inside x
    if (it != merged.begin() && std::prev(it)->second > x.start) return true;  // covers x.start
  }
  return false;
}

}  // namespace

Check check_fact(const Fact& f, const Scenario& s, const Schedule& sch) {
  const KernelSchedule& k = kernel_of(sch, s, f.kernel);
  switch (f.kind) {
    case Fact::Kind::OnSms: {
      std::set<int> got;
      for (const auto& b : k.blocks) got.insert(b.sm);
      std::set<int> want(f.sms.begin(), f.sms.end());
      if (got == want) return {};
      return {Verdict::Fail, fmt::format("{} blocks predicted on SMs [{}], observed [{}]", f.kernel,
                                         format_int_list({got.begin(), got.end()}), format_int_list(sorted(f.sms)))};
    }
    case Fact::Kind::BlockOnSm: {
      int got = k.blocks[static_cast<size_t>(f.block)].sm;
      if (got == f.sm) return {};
      return {Verdict::Fail, fmt::format("{} block {} predicted on SM {}, observed SM {}", f.kernel, f.block, got, f.sm)};
    }
    case Fact::Kind::StartsAt: {
      int64_t got = first_start(k);
      if (got == f.time) return {};
      return {Verdict::Fail, fmt::format("{} predicted to start at {}, observed {}", f.kernel, got, f.time)};
    }
    case Fact::Kind::StartsAfter: {
      int64_t start = first_start(k);
      for (const auto& j : f.kernels) {
        int64_t end = last_end(kernel_of(sch, s, j));
        if (start < end)
          return {Verdict::Fail, fmt::format("{} predicted to start at {}, before {} finished at {}; observed only after",
                                             f.kernel, start, j, end)};
      }
      return {};
    }
    case Fact::Kind::ConcurrentWith: {
      for (const auto& j : f.kernels)
        if (!overlap(k, kernel_of(sch, s, j)))
          return {Verdict::Fail, fmt::format("{} predicted never to run at the same time as {} ({}-{} vs {}-{}); observed "
                                             "concurrent",
                                             f.kernel, j, first_start(k), last_end(k), first_start(kernel_of(sch, s, j)),
                                             last_end(kernel_of(sch, s, j)))};
      return {};
    }
    case Fact::Kind::ClustersCoscheduled: {
      const Kernel& kern = s.kernels[static_cast<size_t>(s.kernel_index(f.kernel))];
      const std::vector<int> cluster = cluster_of_blocks(kern);
      std::map<int, std::pair<int64_t, int>> first;  // cluster -> (start, GPC or SM) of its first block
      for (size_t b = 0; b < k.blocks.size(); ++b) {
        const auto& x = k.blocks[b];
        const int place = s.device.gpc_of_tpc.empty() ? -1 : s.device.gpc_of_tpc[static_cast<size_t>(s.device.tpc_of(x.sm))];
        auto [it, fresh] = first.try_emplace(cluster[b], x.start, place);
        if (fresh) continue;
        if (it->second.first != x.start)
          return {Verdict::Fail, fmt::format("{} block {} of cluster {} predicted to start at {}, its cluster at {}",
                                             f.kernel, b, cluster[b], x.start, it->second.first)};
        if (it->second.second != place)
          return {Verdict::Fail, fmt::format("{} block {} of cluster {} predicted on GPC {}, its cluster on GPC {}",
                                             f.kernel, b, cluster[b], place, it->second.second)};
      }
      return {};
    }
  }
  return {Verdict::Unknown, "unknown fact kind"};
}

Check compare_recording(const Observation& o, const Scenario& s, const Schedule& sch, Level l, int64_t tick) {
  if (l != Level::Exact && o.sm_of_block.empty()) return {Verdict::Unsupported, "no SM recording"};
  // Walk kernels in scenario order so "first difference" means the earliest kernel.
  for (size_t ki = 0; ki < s.kernels.size(); ++ki) {
    const std::string& name = s.kernels[ki].name;
    const KernelSchedule& pred = sch.kernels[ki];
    auto sms = o.sm_of_block.find(name);
    auto starts = o.start_of_block.find(name);
    if (l == Level::Exact) {
      for (size_t b = 0; b < pred.blocks.size(); ++b) {
        if (sms != o.sm_of_block.end() && sms->second[b] != pred.blocks[b].sm)
          return {Verdict::Fail, fmt::format("{} block {}: predicted SM {}, observed SM {}", name, b, pred.blocks[b].sm,
                                             sms->second[b])};
        if (starts != o.start_of_block.end() && std::abs(starts->second[b] - pred.blocks[b].start) >= tick)
          return {Verdict::Fail, fmt::format("{} block {}: predicted start {}, observed {}", name, b,
                                             pred.blocks[b].start, starts->second[b])};
      }
      continue;
    }
    if (sms == o.sm_of_block.end()) continue;
    std::map<int, int> got, want;
    for (const auto& b : pred.blocks) got[b.sm] += 1;
    for (int sm : sms->second) want[sm] += 1;
    if (l == Level::Counts) {
      for (int sm = 0; sm < s.device.sms; ++sm) {
        int g = got.count(sm) ? got[sm] : 0, w = want.count(sm) ? want[sm] : 0;
        if (g != w)
          return {Verdict::Fail, fmt::format("{} on SM {}: predicted {} blocks, observed {}", name, sm, g, w)};
      }
    } else {
      for (int sm = 0; sm < s.device.sms; ++sm) {
        bool g = got.count(sm) > 0, w = want.count(sm) > 0;
        if (g != w)
          return {Verdict::Fail, fmt::format("{} SM {}: predicted {}, observed {}", name, sm, g ? "used" : "unused",
                                             w ? "used" : "unused")};
      }
    }
  }
  return {};
}

const std::optional<Check>& CaseResult::level(Level l) const {
  switch (l) {
    case Level::Exact: return exact;
    case Level::Counts: return counts;
    case Level::Sms: return sms;
  }
  return exact;
}

bool judges(JudgedLevels levels, Level l) {
  switch (levels) {
    case JudgedLevels::All: return true;
    case JudgedLevels::Exact:
      switch (l) {
        case Level::Exact: return true;
        case Level::Counts:
        case Level::Sms: return false;
      }
      return false;
    case JudgedLevels::ExactAndCounts:
      switch (l) {
        case Level::Exact:
        case Level::Counts: return true;
        case Level::Sms: return false;
      }
      return false;
  }
  return true;
}

Verdict CaseResult::at(Level l) const {
  if (!ran) return Verdict::Unsupported;
  bool any_pass = facts == Verdict::Pass;
  if (facts == Verdict::Fail) return Verdict::Fail;
  if (const auto& c = level(l); c) {
    if (c->verdict == Verdict::Fail) return Verdict::Fail;
    if (c->verdict == Verdict::Unknown) return Verdict::Unknown;
    any_pass = any_pass || c->verdict == Verdict::Pass;
  }
  return any_pass ? Verdict::Pass : Verdict::Unsupported;
}

std::string CaseResult::first_failure(Level l) const {
  if (!ran) return reason;
  for (const auto& c : fact_checks)
    if (c.verdict == Verdict::Fail) return c.detail;
  if (const auto& c = level(l); c && (c->verdict == Verdict::Fail || c->verdict == Verdict::Unknown)) return c->detail;
  return "";
}

json to_json(const CaseResult& r) {
  json j = {{"case", r.case_id}, {"hypothesis", r.hypothesis}};
  if (!r.ran) {
    j["verdict"] = to_string(Verdict::Unsupported);
    j["reason"] = r.reason;
    return j;
  }
  if (!r.fact_checks.empty()) {
    j["facts"] = to_string(r.facts);
    json fs = json::array();
    for (const auto& c : r.fact_checks) {
      json x = {{"verdict", to_string(c.verdict)}};
      if (!c.detail.empty()) x["detail"] = c.detail;
      fs.push_back(x);
    }
    j["fact_checks"] = fs;
  }
  if (r.orders_tried > 0) {
    j["timing"] = to_string(r.timing);
    j["orders_tried"] = r.orders_tried;
  }
  if (r.skew) j["dispatch_skew"] = {{"units", r.skew->units}, {"basis", r.skew->basis}};
  json levels = json::object();
  for (Level l : kAllLevels) {
    json x = {{"verdict", to_string(r.at(l))}};
    std::string why = r.first_failure(l);
    if (!why.empty()) x[r.at(l) == Verdict::Unknown ? "reason" : "first_difference"] = why;
    if (!r.order(l).empty()) x["order"] = r.order(l);
    levels[std::string(to_string(l))] = x;
  }
  j["levels"] = levels;
  return j;
}

}  // namespace tbcheck::model
