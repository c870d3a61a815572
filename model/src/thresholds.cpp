// Thresholds as intervals (thresholds.hpp): the values a kernel quantity takes on a device, the cut a threshold
// makes among them, and the interval text learn reports.
#include "tbcheck/model/thresholds.hpp"

#include <algorithm>

#include <fmt/format.h>

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

}  // namespace tbcheck::model
