// Tied retirements (ties.hpp): the two readings of the retirement mechanism side by side on one scenario,
// and the staggering that makes a synthesized witness hold under both.
#include "tbcheck/search/ties.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/error.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/distinguish.hpp"
#include "witness.hpp"

namespace tbcheck::search {

std::string_view to_string(TieEffect e) {
  switch (e) {
    case TieEffect::None: return "none";
    case TieEffect::StartsMove: return "starts-move";
    case TieEffect::SmsMove: return "sms-move";
  }
  return "?";
}

std::string_view to_string(WitnessTies t) {
  switch (t) {
    case WitnessTies::Robust: return "robust";
    case WitnessTies::Staggered: return "staggered";
    case WitnessTies::Dependent: return "tie-dependent";
    case WitnessTies::Compared: return "readings-compared";
  }
  return "?";
}

model::json TieCheck::to_json() const {
  model::json j = {{"effect", to_string(effect)}};
  if (!robust()) {
    j["hypothesis"] = hypothesis;
    j["detail"] = detail;
  }
  return j;
}

model::Hypothesis other_reading(const model::Hypothesis& h) {
  model::Hypothesis o = h;
  switch (h.retirement) {
    case model::Retirement::AllThenDispatch: o.retirement = model::Retirement::StartOrder; break;
    case model::Retirement::StartOrder: o.retirement = model::Retirement::AllThenDispatch; break;
  }
  return o;
}

namespace {

// What the other reading does to h's schedule of s.
TieEffect effect_on(const model::Scenario& s, const model::Hypothesis& h, std::string* detail) {
  const model::Hypothesis o = other_reading(h);
  if (model::combination_error(o)) return TieEffect::None;  // gpc-priority: one reading only
  auto mine = model::try_simulate(s, h);
  auto other = mine ? model::try_simulate(s, o) : std::nullopt;
  if (!mine || !other) return TieEffect::None;
  TieEffect e = TieEffect::None;
  for (size_t k = 0; k < mine->kernels.size(); ++k)
    for (size_t b = 0; b < mine->kernels[k].blocks.size(); ++b) {
      const auto& x = mine->kernels[k].blocks[b];
      const auto& y = other->kernels[k].blocks[b];
      if (x.sm != y.sm) {
        if (detail)
          *detail = fmt::format("{} block {}: SM {} at {} ({}), SM {} at {} ({})", mine->kernels[k].name, b, x.sm, x.start,
                                to_string(h.retirement), y.sm, y.start, to_string(o.retirement));
        return TieEffect::SmsMove;
      }
      if (x.start != y.start && e == TieEffect::None) {
        e = TieEffect::StartsMove;
        if (detail)
          *detail = fmt::format("{} block {}: starts at {} ({}), at {} ({})", mine->kernels[k].name, b, x.start,
                                to_string(h.retirement), y.start, to_string(o.retirement));
      }
    }
  return e;
}

}  // namespace

TieCheck tie_robust(const model::Scenario& s, const std::vector<model::Hypothesis>& hs) {
  TieCheck c;
  for (const auto& h : hs) {
    std::string detail;
    const TieEffect e = effect_on(s, h, &detail);
    if (static_cast<int>(e) > static_cast<int>(c.effect)) {
      c.effect = e;
      c.hypothesis = h.name;
      c.detail = detail;
    }
  }
  return c;
}

RobustWitness robust_witness(const model::Scenario& witness, const model::Hypothesis& a, const model::Hypothesis& b,
                             int max_duration) {
  RobustWitness r{witness, WitnessTies::Robust, false};
  if (a.retirement != b.retirement) {
    r.ties = WitnessTies::Compared;
    return r;
  }
  const std::vector<model::Hypothesis> pair = {a, b};
  if (tie_robust(witness, pair).robust()) return r;
  // Duration vectors over the kernels, fewest total first, those within max_duration before the others.
  const size_t nk = witness.kernels.size();
  const int cap = std::max(max_duration, kStaggerDurationCap);
  std::vector<std::vector<int>> candidates;
  std::vector<int> d(nk, 1);
  const size_t most = static_cast<size_t>(kStaggerTries) * 8;  // enumerated before sorting, then cut to the tries
  std::function<void(size_t)> all = [&](size_t k) {
    if (candidates.size() >= most) return;
    if (k == nk) {
      candidates.push_back(d);
      return;
    }
    for (int x = 1; x <= cap; ++x) {
      d[k] = x;
      all(k + 1);
    }
  };
  all(0);
  auto key = [&](const std::vector<int>& v) {
    const int top = *std::max_element(v.begin(), v.end());
    return std::make_pair(top > max_duration, std::accumulate(v.begin(), v.end(), 0));
  };
  std::stable_sort(candidates.begin(), candidates.end(), [&](const auto& x, const auto& y) { return key(x) < key(y); });
  if (candidates.size() > static_cast<size_t>(kStaggerTries)) candidates.resize(static_cast<size_t>(kStaggerTries));
  for (const auto& v : candidates) {
    model::Scenario s = witness;
    for (size_t k = 0; k < nk; ++k) s.kernels[k].duration = v[k];
    if (!detail::separates(s, a, b) || !tie_robust(s, pair).robust()) continue;
    r.scenario = std::move(s);
    r.ties = WitnessTies::Staggered;
    r.beyond_max_duration = *std::max_element(v.begin(), v.end()) > max_duration;
    return r;
  }
  r.ties = WitnessTies::Dependent;
  return r;
}

std::vector<TieSubject> tie_subjects(const std::string& path, const std::vector<std::string>& hypothesis_dirs) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  if (fs::is_directory(path)) {
    for (const auto& e : fs::recursive_directory_iterator(path))
      if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  std::vector<TieSubject> out;
  for (const auto& f : files) {
    const model::json j = model::read_json_file(f);
    if (!j.is_object() || !j.contains("predictions")) continue;
    TieSubject t;
    t.scenario = model::case_from_json(j, f).scenario;
    t.id = j.value("id", f);
    for (const auto& [name, unused] : j.at("predictions").items()) {
      (void)unused;
      if (const auto* h = model::find_builtin_hypothesis(name)) {
        t.hypotheses.push_back(*h);
        continue;
      }
      bool found = false;
      for (const auto& dir : hypothesis_dirs) {
        const fs::path p = fs::path(dir) / (name + ".json");
        if (!fs::exists(p)) continue;
        t.hypotheses.push_back(model::load_hypothesis_file(p.string()));
        found = true;
        break;
      }
      if (!found)
        throw model::InputError(f, "predictions",
                                fmt::format("hypothesis '{}' is neither shipped nor a file <name>.json in {}", name,
                                            hypothesis_dirs.empty() ? std::string("(no folder given)")
                                                                    : fmt::format("{}", fmt::join(hypothesis_dirs, ", "))));
    }
    out.push_back(std::move(t));
  }
  return out;
}

TieCount count_tie_dependent(const std::vector<TieSubject>& subjects) {
  TieCount c;
  for (const auto& t : subjects) {
    ++c.cases;
    if (t.hypotheses.size() == 2 && t.hypotheses[0].retirement != t.hypotheses[1].retirement) {
      ++c.compared;
      continue;
    }
    const TieCheck r = tie_robust(t.scenario, t.hypotheses);
    switch (r.effect) {
      case TieEffect::None: break;
      case TieEffect::StartsMove: ++c.starts_move; break;
      case TieEffect::SmsMove:
        ++c.sms_move;
        c.dependent.push_back(fmt::format("{}: {}: {}", t.id, r.hypothesis, r.detail));
        break;
    }
  }
  return c;
}

}  // namespace tbcheck::search
