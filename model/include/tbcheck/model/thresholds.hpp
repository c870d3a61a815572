// Thresholds as intervals: on a device a threshold acts only through which of the kernel quantities it
// compares (registers per thread, rounded shared memory) fall on its ignored side, so what can be learned is an interval.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"

namespace tbcheck::model {

// A numeric mechanism (a threshold) compares one kernel quantity with its value: a block's quantity v is
// ignored when v <= T (AtOrBelow) or v < T (Below). Each comes from its mechanism's descriptor
// (hypothesis.cpp), so a later threshold plugs in there.
enum class ThresholdSide { AtOrBelow, Below };
enum class ThresholdQuantity { RegsPerThread, SmemPerBlock };
struct ThresholdOption {
  std::string_view key;
  ThresholdSide side;
  ThresholdQuantity quantity;
  std::string_view cites;
  std::optional<int> Hypothesis::*field;
};
const std::vector<ThresholdOption>& threshold_options();  // in the hypothesis-file order

// The values a kernel's quantity can take on d, ascending: registers per thread the CUDA oracle's probe
// kernels are built with (one allocation unit per thread apart, and the most a thread may have), or
// S = shared memory rounded to the allocation unit plus the runtime's reserve, up to the largest block.
std::vector<int> threshold_values(ThresholdQuantity q, const Device& d);
int quantity_of(ThresholdQuantity q, const Kernel& k, const Device& d);
void set_quantity(ThresholdQuantity q, Kernel& k, int value, const Device& d);  // value from threshold_values
std::string_view unit_of(ThresholdQuantity q);                                     // "registers per thread", "B"
std::string granularity_of(ThresholdQuantity q, const Device& d);  // "128 B (the shared-memory allocation unit)"

std::optional<int> threshold_of(const Hypothesis& h, const ThresholdOption& o);
void set_threshold(Hypothesis& h, const ThresholdOption& o, std::optional<int> t);

// How many of the ascending `values` threshold t ignores (t off: none); the values ignored are always the
// smallest ones, so this number (the cut) is all a run on the device can reveal about t.
int cut_of(const ThresholdOption& o, std::optional<int> t, const std::vector<int>& values);
// A threshold that ignores exactly the first `cut` of `values` (0: off): the greatest value ignored for
// "at or below", the least one kept for "below", so a bracketed point reads as the boundary the device has.
std::optional<int> threshold_at_cut(const ThresholdOption& o, int cut, const std::vector<int>& values);

// The thresholds that ignore the first c of `values`, for c in [lo_cut, hi_cut]: what the observations left.
struct ThresholdInterval {
  ThresholdOption option{};
  std::vector<int> values;
  int lo_cut = 0, hi_cut = 0;
  std::string granularity;  // granularity_of the device

  int cuts() const { return hi_cut - lo_cut + 1; }  // 1: one step of the device's granularity
  bool contains(std::optional<int> t) const;
  std::string range_text() const;  // "in (8064, 8192] B", "off (or at most 1024 B: nothing ignored)"
  std::string text() const;        // the mechanism, then range_text
  json to_json() const;
};

}  // namespace tbcheck::model
