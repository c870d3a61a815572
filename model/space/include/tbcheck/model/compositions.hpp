// The space of mechanism compositions: every valid choice of one option per mechanism of option_table(),
// with thresholds from a small documented set, and the neighbours of a composition (one or two changes).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"

namespace tbcheck::model {

// The values a numeric or flag mechanism takes in the enumerated space. option_table() lists such a
// mechanism with the value "<int>" (a threshold) or "true" (a flag); "off" (null / false) is always in.
// The thresholds are the ones the papers name: 32 registers per thread and 3 KB of shared memory (seed 002
// Section III-C2). A file may use any other value; the enumeration stays small on purpose.
struct ThresholdChoices {
  std::string mechanism;
  std::vector<json> values;  // null / false first
};
const std::vector<ThresholdChoices>& threshold_set();

// The mechanism fields of the hypothesis-file shape, in option_table() order.
std::vector<std::string> mechanism_fields();

// Every valid composition (hypothesis_from_json accepts it), in a fixed order. A composition with the same
// options as a shipped hypothesis carries the shipped name; the others are named by their changes from
// alg1 ("alg1+registers=pb-contiguous+smem=counted"), so the name says what it is.
const std::vector<Hypothesis>& all_compositions();

// all_compositions keeps the cluster mechanisms (cluster_gpc, cluster_spread) at their defaults; on a device
// with thread block clusters (CC 9.0) and a GPC map this adds every other cluster choice to the compositions
// whose resources the cluster rule is defined for (model/cluster.hpp). Elsewhere it is all_compositions.
struct Device;
std::vector<Hypothesis> compositions_for(const Device& d);

// The canonical name of h's options in that scheme (ignores h.name).
std::string composition_name(const Hypothesis& h);

// Number of mechanism fields on which the two choose differently.
int option_distance(const Hypothesis& a, const Hypothesis& b);

// Valid compositions 1..max_distance option changes away from h (h itself excluded), nearest first.
std::vector<Hypothesis> neighbours(const Hypothesis& h, int max_distance = 2);

// `count` distinct valid compositions that are not shipped and lie min..max option changes from `from`,
// drawn with std::mt19937_64 seeded by `seed` (its output sequence is fixed by the standard, so a seed
// names the same compositions everywhere). A draw that `keep` (when given) rejects is dropped and the
// drawing goes on, so the draws before it stay the same. Fewer when the space has fewer.
std::vector<Hypothesis> sample_compositions(const Hypothesis& from, uint64_t seed, int count, int min_distance,
                                            int max_distance, const std::function<bool(const Hypothesis&)>& keep = {});

// Whether two options act alike on a device, settled by comparing their capacity rule on every state
// of a bounded space that provably covers what the simulator can reach.
enum class StateCheck { Proved, Refuted };
std::string_view to_string(StateCheck c);

struct StateCheckResult {
  StateCheck verdict = StateCheck::Refuted;
  int64_t compared = 0;         // (SM state, block) pairs compared
  std::string counterexample;   // the first state where they differ; empty when proved
  std::string summary() const;  // one line for reports
  json to_json() const;
};

// warps: pb-any against warps: sm once registers are one pool per SM (registers: sm), on d
// (docs/learn.md, "Options that act alike"). The simulator reads the warp option only through the
// capacity rule (commit and release keep the state that rule reads), and a pb-any SM holds at most the
// PB's warp slots on each PB. So the rule is compared on every per-PB warp count 0..slots, every
// round-robin pointer, every block size 1..max threads per block / 32, with and without SM-pooled
// registers binding, pb-any's state holding the same warps as sm's pool. Memoised per device.
StateCheckResult pb_any_as_sm(const Device& d);

// Whether h is pb-any with registers: sm on a device where pb_any_as_sm proved that it acts as sm:
// then learn and distinguish treat h as its warps: sm twin.
bool pb_any_acts_as_sm(const Hypothesis& h, const Device& d);

}  // namespace tbcheck::model
