// Thresholds as intervals: on a device a threshold acts only through which of the kernel quantities it
// compares (registers per thread, rounded shared memory) fall on its ignored side, so what can be learned is an interval.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/schedule.hpp"

namespace tbcheck::model {

// The threshold mechanisms themselves (ThresholdOption, threshold_options) are the registry's: model/hypothesis.hpp.

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

// A threshold a hypothesis file gives as an interval of values (read by check and predict): the text learn
// prints, "(7936, 8192]" or "[72, 79]", or {"above": 7936, "at_most": 8192} / {"at_least": 72, "at_most": 79}.
// The range is the inclusive [lo, hi] of integer thresholds; nullopt with `error` set when `v` is no such form.
struct ThresholdRange {
  int lo = 0, hi = 0;
};
std::optional<ThresholdRange> threshold_range_from_json(const json& v, std::string& error);
// As learn prints it for the option's side: "(lo - 1, hi]" for "below", "[lo, hi]" for "at or below".
std::string threshold_range_text(const ThresholdOption& o, const ThresholdRange& r);
// The thresholds a learned interval allows as a range; nullopt when it is open at either end (off, or no upper
// value on the device), where a file keeps a point.
std::optional<ThresholdRange> range_of(const ThresholdInterval& iv);

// A hypothesis whose thresholds may be intervals: each such option's field holds the interval's upper end, and
// `ranges` the intervals by option key (empty: a plain hypothesis).
struct RangedHypothesis {
  Hypothesis h;
  std::map<std::string, ThresholdRange> ranges;
};
// The hypothesis-file object with each ranged threshold written as its interval (what learn --out writes).
json ranged_to_json(const RangedHypothesis& r);

// What a hypothesis with threshold intervals predicts for s: the range of each ranged option cut into the pieces
// over which the scenario's kernels fall on the same sides, every combination of pieces simulated once (at the
// piece's upper end), and combinations with the same placements (SM and start of every block) one outcome.
struct RangedPrediction {
  struct Option {
    ThresholdOption option{};
    ThresholdRange range;
    std::vector<ThresholdRange> pieces;
    std::vector<std::string> kernels;  // the kernels whose quantity lies inside the range: "k1 (S = 8064 B)"
  };
  struct Outcome {
    std::vector<std::vector<ThresholdRange>> pieces;  // per option, the pieces giving this schedule
    Schedule schedule;
  };
  std::vector<Option> options;
  std::vector<Outcome> outcomes;
  std::string failure;  // the hypothesis cannot run s at some piece (FeasibilityCheck's reason)
  bool independent() const { return outcomes.size() == 1; }
  std::string summary() const;  // "independent of smem_ignore_below in (7936, 8192]" or what it depends on
  json to_json() const;
};
// nullopt when h has no threshold ranges.
std::optional<RangedPrediction> predict_over_ranges(const Scenario& s, const RangedHypothesis& h);

}  // namespace tbcheck::model
