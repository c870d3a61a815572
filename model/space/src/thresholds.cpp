// Thresholds as intervals (thresholds.hpp): the values a kernel quantity takes on a device, the cut a threshold
// makes among them, and the interval text learn reports.
#include "tbcheck/model/thresholds.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/error.hpp"
#include "tbcheck/model/simulator.hpp"

namespace tbcheck::model {

std::vector<int> threshold_values(ThresholdQuantity q, const Device& d) {
  std::vector<int> v;
  switch (q) {
    case ThresholdQuantity::RegsPerThread:
      for (int r : probe_register_counts())
        if (r <= d.max_regs_per_thread) v.push_back(r);
      break;
    case ThresholdQuantity::SmemPerBlock:
      for (int s = 0; s <= d.max_smem_per_block; s += d.smem_alloc_unit) v.push_back(s + d.smem_reserved_per_block);
      break;
  }
  return v;
}

int quantity_of(ThresholdQuantity q, const Kernel& k, const Device& d) {
  switch (q) {
    case ThresholdQuantity::RegsPerThread: return k.regs;
    case ThresholdQuantity::SmemPerBlock: return k.smem_per_block(d);
  }
  return 0;
}

void set_quantity(ThresholdQuantity q, Kernel& k, int value, const Device& d) {
  switch (q) {
    case ThresholdQuantity::RegsPerThread: k.regs = value; break;
    case ThresholdQuantity::SmemPerBlock: k.smem = value - d.smem_reserved_per_block; break;
  }
}

std::string_view unit_of(ThresholdQuantity q) {
  switch (q) {
    case ThresholdQuantity::RegsPerThread: return "registers per thread";
    case ThresholdQuantity::SmemPerBlock: return "B";
  }
  return "";
}

std::string granularity_of(ThresholdQuantity q, const Device& d) {
  switch (q) {
    case ThresholdQuantity::RegsPerThread:
      return fmt::format("{} registers per thread (the register allocation unit; the probe kernels' counts)",
                         d.reg_alloc_unit / kThreadsPerWarp);
    case ThresholdQuantity::SmemPerBlock:
      return fmt::format("{} B (the shared-memory allocation unit)", d.smem_alloc_unit);
  }
  return "";
}

std::optional<int> threshold_of(const Hypothesis& h, const ThresholdOption& o) { return h.*o.field; }
void set_threshold(Hypothesis& h, const ThresholdOption& o, std::optional<int> t) { h.*o.field = t; }

int cut_of(const ThresholdOption& o, std::optional<int> t, const std::vector<int>& values) {
  if (!t) return 0;
  switch (o.side) {
    case ThresholdSide::AtOrBelow:
      return static_cast<int>(std::upper_bound(values.begin(), values.end(), *t) - values.begin());
    case ThresholdSide::Below: return static_cast<int>(std::lower_bound(values.begin(), values.end(), *t) - values.begin());
  }
  return 0;
}

std::optional<int> threshold_at_cut(const ThresholdOption& o, int cut, const std::vector<int>& values) {
  if (cut <= 0 || values.empty()) return std::nullopt;
  const size_t c = static_cast<size_t>(cut);
  switch (o.side) {
    case ThresholdSide::AtOrBelow: return values[std::min(c, values.size()) - 1];
    case ThresholdSide::Below: return c < values.size() ? values[c] : values.back() + 1;
  }
  return std::nullopt;
}

bool ThresholdInterval::contains(std::optional<int> t) const {
  const int c = cut_of(option, t, values);
  return c >= lo_cut && c <= hi_cut;
}

std::string ThresholdInterval::range_text() const {
  const int n = static_cast<int>(values.size());
  const auto u = unit_of(option.quantity);
  const auto v = [&](int i) { return values[static_cast<size_t>(i)]; };  // 0-based
  switch (option.side) {
    case ThresholdSide::AtOrBelow: {
      // Cut c: t in [v_c, v_{c+1} - 1] (1-based values).
      if (lo_cut == 0 && hi_cut == 0) return fmt::format("off (or below {} {}: nothing ignored)", v(0), u);
      if (lo_cut == 0) return hi_cut >= n ? "off or any value" : fmt::format("off or at most {} {}", v(hi_cut) - 1, u);
      if (hi_cut >= n) return fmt::format("at least {} {}", v(lo_cut - 1), u);
      return fmt::format("in [{}, {}] {}", v(lo_cut - 1), v(hi_cut) - 1, u);
    }
    case ThresholdSide::Below: {
      // Cut c: t in (v_c, v_{c+1}].
      if (lo_cut == 0 && hi_cut == 0) return fmt::format("off (or at most {} {}: nothing ignored)", v(0), u);
      if (lo_cut == 0) return hi_cut >= n ? "off or any value" : fmt::format("off or at most {} {}", v(hi_cut), u);
      if (hi_cut >= n) return fmt::format("above {} {}", v(lo_cut - 1), u);
      return fmt::format("in ({}, {}] {}", v(lo_cut - 1), v(hi_cut), u);
    }
  }
  return "";
}

std::string ThresholdInterval::text() const { return fmt::format("{} {}", option.key, range_text()); }

json ThresholdInterval::to_json() const {
  // point: the threshold the written hypothesis carries (threshold_at_cut), once one cut is left.
  const auto point = threshold_at_cut(option, lo_cut, values);
  return {{"mechanism", option.key},
          {"range", range_text()},
          {"cuts", cuts()},
          {"granularity", granularity},
          {"point", cuts() == 1 && point ? json(*point) : json()}};
}

std::optional<ThresholdRange> threshold_range_from_json(const json& v, std::string& error) {
  // Bounds as learn prints them: "(" and ")" exclude their value, "[" and "]" include it.
  auto make = [&](int64_t lo, int64_t hi) -> std::optional<ThresholdRange> {
    if (lo < 0 || hi > (1 << 24) || lo > hi) {
      error = fmt::format("the interval holds no threshold in [0, {}]", 1 << 24);
      return std::nullopt;
    }
    return ThresholdRange{static_cast<int>(lo), static_cast<int>(hi)};
  };
  if (v.is_string()) {
    const std::string t = v.get<std::string>();
    long a = 0, b = 0;
    char open = 0, close = 0;
    char tail = 0;
    if (std::sscanf(t.c_str(), " %c %ld , %ld %c %c", &open, &a, &b, &close, &tail) != 4 || (open != '(' && open != '[') ||
        (close != ')' && close != ']')) {
      error = fmt::format("'{}' is not an interval such as \"(7936, 8192]\" or \"[72, 79]\"", t);
      return std::nullopt;
    }
    return make(open == '(' ? a + 1 : a, close == ')' ? b - 1 : b);
  }
  if (v.is_object()) {
    std::optional<int64_t> lo, hi;
    for (const auto& [k, x] : v.items()) {
      if (!x.is_number_integer()) {
        error = fmt::format("'{}' is not an integer", k);
        return std::nullopt;
      }
      const int64_t n = x.get<int64_t>();
      if (k == "above" && !lo) lo = n + 1;
      else if (k == "at_least" && !lo) lo = n;
      else if (k == "at_most" && !hi) hi = n;
      else if (k == "below" && !hi) hi = n - 1;
      else {
        error = fmt::format("unexpected key '{}' (an interval takes one of above / at_least and one of at_most / below)", k);
        return std::nullopt;
      }
    }
    if (!lo || !hi) {
      error = "an interval takes one of above / at_least and one of at_most / below";
      return std::nullopt;
    }
    return make(*lo, *hi);
  }
  error = "not null, an integer, or an interval";
  return std::nullopt;
}

std::string threshold_range_text(const ThresholdOption& o, const ThresholdRange& r) {
  switch (o.side) {
    case ThresholdSide::Below: return fmt::format("({}, {}]", r.lo - 1, r.hi);
    case ThresholdSide::AtOrBelow: return fmt::format("[{}, {}]", r.lo, r.hi);
  }
  return "";
}

json ranged_to_json(const RangedHypothesis& r) {
  json j = r.h.to_json();
  for (const auto& o : threshold_options())
    if (auto it = r.ranges.find(std::string(o.key)); it != r.ranges.end()) j[std::string(o.key)] = threshold_range_text(o, it->second);
  return j;
}

std::optional<ThresholdRange> range_of(const ThresholdInterval& iv) {
  const int n = static_cast<int>(iv.values.size());
  if (iv.lo_cut < 1 || iv.hi_cut >= n) return std::nullopt;
  const auto v = [&](int i) { return iv.values[static_cast<size_t>(i)]; };  // 0-based, as range_text
  switch (iv.option.side) {
    case ThresholdSide::Below: return ThresholdRange{v(iv.lo_cut - 1) + 1, v(iv.hi_cut)};
    case ThresholdSide::AtOrBelow: return ThresholdRange{v(iv.lo_cut - 1), v(iv.hi_cut) - 1};
  }
  return std::nullopt;
}

namespace {

// The pieces of r over which every value in `quantities` stays on one side of the threshold: a value v is
// ignored from t = v + 1 on ("below") or from t = v on ("at or below").
std::vector<ThresholdRange> pieces_of(const ThresholdOption& o, const ThresholdRange& r, const std::set<int>& quantities) {
  std::vector<int> starts = {r.lo};
  for (int v : quantities) {
    const int64_t from = o.side == ThresholdSide::Below ? int64_t{v} + 1 : int64_t{v};
    if (from > r.lo && from <= r.hi) starts.push_back(static_cast<int>(from));
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  std::vector<ThresholdRange> out;
  for (size_t i = 0; i < starts.size(); ++i) out.push_back({starts[i], i + 1 < starts.size() ? starts[i + 1] - 1 : r.hi});
  return out;
}

bool same_sm_and_start(const Schedule& a, const Schedule& b) {
  if (a.kernels.size() != b.kernels.size()) return false;
  for (size_t k = 0; k < a.kernels.size(); ++k) {
    if (a.kernels[k].blocks.size() != b.kernels[k].blocks.size()) return false;
    for (size_t i = 0; i < a.kernels[k].blocks.size(); ++i)
      if (a.kernels[k].blocks[i].sm != b.kernels[k].blocks[i].sm ||
          a.kernels[k].blocks[i].start != b.kernels[k].blocks[i].start)
        return false;
  }
  return true;
}

}  // namespace

std::optional<RangedPrediction> predict_over_ranges(const Scenario& s, const RangedHypothesis& rh) {
  if (rh.ranges.empty()) return std::nullopt;
  const Hypothesis& h = rh.h;
  RangedPrediction p;
  for (const auto& o : threshold_options()) {
    auto it = rh.ranges.find(std::string(o.key));
    if (it == rh.ranges.end()) continue;
    RangedPrediction::Option opt;
    opt.option = o;
    opt.range = it->second;
    std::set<int> quantities;
    for (const auto& k : s.kernels) {
      const int q = quantity_of(o.quantity, k, s.device);
      quantities.insert(q);
      // Inside the range: the threshold's value decides whether this kernel's quantity is ignored.
      const bool decided_inside = o.side == ThresholdSide::Below ? q >= opt.range.lo && q < opt.range.hi
                                                                   : q >= opt.range.lo + 1 && q <= opt.range.hi;
      if (decided_inside) opt.kernels.push_back(fmt::format("{} ({} = {} {})", k.name,
                                                            o.quantity == ThresholdQuantity::SmemPerBlock ? "S" : "registers",
                                                            q, unit_of(o.quantity)));
    }
    opt.pieces = pieces_of(o, opt.range, quantities);
    p.options.push_back(std::move(opt));
  }
  // Every combination of pieces, option 0 fastest.
  std::vector<size_t> idx(p.options.size(), 0);
  while (true) {
    Hypothesis x = h;
    for (size_t i = 0; i < p.options.size(); ++i) set_threshold(x, p.options[i].option, p.options[i].pieces[idx[i]].hi);
    FeasibilityCheck why;
    auto sch = try_simulate(s, x, &why);
    if (!sch) {
      p.failure = why.reason;
      return p;
    }
    RangedPrediction::Outcome* into = nullptr;
    for (auto& out : p.outcomes)
      if (same_sm_and_start(out.schedule, *sch)) into = &out;
    if (!into) {
      p.outcomes.push_back({std::vector<std::vector<ThresholdRange>>(p.options.size()), std::move(*sch)});
      into = &p.outcomes.back();
    }
    for (size_t i = 0; i < p.options.size(); ++i) {
      auto& list = into->pieces[i];
      const auto& piece = p.options[i].pieces[idx[i]];
      if (std::none_of(list.begin(), list.end(), [&](const ThresholdRange& r) { return r.lo == piece.lo; }))
        list.push_back(piece);
    }
    size_t i = 0;
    for (; i < idx.size(); ++i) {
      if (++idx[i] < p.options[i].pieces.size()) break;
      idx[i] = 0;
    }
    if (i == idx.size()) break;
  }
  for (auto& out : p.outcomes)
    for (auto& list : out.pieces)
      std::sort(list.begin(), list.end(), [](const ThresholdRange& a, const ThresholdRange& b) { return a.lo < b.lo; });
  return p;
}

std::string RangedPrediction::summary() const {
  std::vector<std::string> ranges;
  for (const auto& o : options) ranges.push_back(fmt::format("{} in {}", o.option.key, threshold_range_text(o.option, o.range)));
  if (!failure.empty()) return fmt::format("cannot run at some value of {}: {}", fmt::join(ranges, " and "), failure);
  if (independent()) return fmt::format("independent of {}", fmt::join(ranges, " and "));
  std::vector<std::string> through;
  for (const auto& o : options)
    if (!o.kernels.empty()) through.push_back(fmt::format("{} through {}", o.option.key, fmt::join(o.kernels, ", ")));
  std::vector<std::string> outs;
  for (size_t n = 0; n < outcomes.size(); ++n) {
    std::vector<std::string> where;
    for (size_t i = 0; i < options.size(); ++i) {
      std::vector<std::string> texts;
      for (const auto& r : outcomes[n].pieces[i]) texts.push_back(threshold_range_text(options[i].option, r));
      where.push_back(fmt::format("{} in {}", options[i].option.key, fmt::join(texts, " or ")));
    }
    outs.push_back(fmt::format("outcome {}: {}", n + 1, fmt::join(where, ", ")));
  }
  return fmt::format("depends on {} ({}): {} outcomes; {}", fmt::join(ranges, " and "), fmt::join(through, "; "),
                     outcomes.size(), fmt::join(outs, "; "));
}

json RangedPrediction::to_json() const {
  json opts = json::array();
  for (const auto& o : options) {
    json pieces = json::array();
    for (const auto& r : o.pieces) pieces.push_back(threshold_range_text(o.option, r));
    opts.push_back({{"mechanism", o.option.key},
                    {"range", threshold_range_text(o.option, o.range)},
                    {"pieces", pieces},
                    {"kernels", o.kernels}});
  }
  json outs = json::array();
  for (const auto& out : outcomes) {
    json where = json::object();
    for (size_t i = 0; i < options.size(); ++i) {
      json texts = json::array();
      for (const auto& r : out.pieces[i]) texts.push_back(threshold_range_text(options[i].option, r));
      where[std::string(options[i].option.key)] = texts;
    }
    outs.push_back({{"where", where}, {"schedule", out.schedule.to_json()}});
  }
  return {{"independent", failure.empty() && independent()},
          {"summary", summary()},
          {"options", opts},
          {"outcomes", outs},
          {"failure", failure.empty() ? json() : json(failure)}};
}

}  // namespace tbcheck::model
