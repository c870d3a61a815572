// The option registry: one descriptor per mechanism, one row per option value with the paper section it comes
// from, and everything derived from them (names, tables, the parser with `base`, combinations, JSON, keys).
#include "mechanisms.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <tuple>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/options.hpp"
#include "tbcheck/model/text.hpp"

namespace tbcheck::model {

namespace {

// ---- the mechanism descriptors: the one place an option value is named ----

// One value of an enumerated mechanism. A table lists its enum's values in declaration order
// (checked at compile time below), so each value has exactly one row.
template <typename E>
struct Choice {
  E value;
  std::string_view name;
  std::string_view cites;
  std::string_view meaning;
  OptionNeeds needs = OptionNeeds::Nothing;  // what a device must have for the option to act there
  // Taken by the composition space learn searches: false for an option measured on one GPU and not yet
  // tested beyond the recordings it was read from, and for one the recordings replaced with a refinement
  // (gpc-spread by tpc-position, smem_config sm by sm-floor, gpc-ring by gpc-carry).
  bool in_space = true;
};

constexpr Choice<Selection> kSelectionChoices[] = {
    {Selection::RoundRobin, "round-robin", "seed 002 Section III-C (the 'default policy'); seed 000 Section IV-A",
     "a GPU-wide pointer over the order; the first SM at or after it with room for one block; the pointer moves past it"},
    {Selection::MostRoom, "most-room", "Gilman et al. 2020 (seed 000 ref. [19]); seed 000 Mechanism 1, Algorithm 1 lines 9-37",
     "the SM that can still hold the most blocks of the kernel; ties to the first SM in the order"},
    {Selection::GpcPriority, "gpc-priority", "seed 003 Sections 3, 4.1 and 4.2 (Fermi pick_sm and pick_block)",
     "a first wave of min(blocks, residency x SMs) picks: the GPC of highest priority (residency x its SMs; lowest "
     "index on ties) gets one block on every SM while more blocks than SMs remain, else one block on its next SM "
     "in %smid order, and loses that many; later blocks go to SMs in the order blocks complete; 2-D grids are "
     "picked along U/n multirows; needs the device's GPC map",
     OptionNeeds::GpcMap},
    {Selection::GpcSpread, "gpc-spread", "measured on H200s: docs/results/h200.md, findings 8 and 10 (scripts/h200_spread.py)",
     "the SM with the most room for the kernel; then single-TPC GPCs first; then the TPC with the most room; then the "
     "GPC that has served the fewest TPCs at that room (GPCs take turns); then the lowest GPC, TPC and SM in the order; "
     "needs the device's GPC map",
     OptionNeeds::GpcMap, false},
    {Selection::TpcPosition, "tpc-position",
     "measured on H200s: docs/results/h200.md, finding 14 (corpus/hw/h200/2026-11-26-run9, h200-random1w-s26-0001, "
     "-0003, -0013 and -0032)",
     "the SM with the most room for the kernel; then single-TPC GPCs first; then the SM's place in its TPC (the "
     "first SM of every TPC before a second); then its TPC's place in its GPC; then the lowest GPC, TPC and SM in "
     "the order: the GPCs fill their TPCs position by position, whatever the blocks held elsewhere; needs the "
     "device's GPC map",
     OptionNeeds::GpcMap},
    {Selection::Rule, "rule", "tbcheck's rule language (docs/rules.md): a hypothesis' own ranking, written in its file",
     "the file gives \"selection\": {\"rule\": [{\"key\": ..., \"prefer\": \"min\" or \"max\"}, ...]}: among the SMs "
     "with room for a block, the one whose features rank first, key by key, then the first in the order; needs a "
     "GPC map where a key does",
     OptionNeeds::Nothing, false},
};
constexpr Choice<Order> kOrderChoices[] = {
    {Order::Natural, "natural", "textbook order", "SMs scanned 0, 1, 2, ..., N-1"},
    {Order::EvenFirst, "even-first", "seed 000 Mechanism 1, Algorithm 1 line 9; seed 002 Section III-C",
     "SMs scanned 0, 2, ..., N-2, 1, 3, ..., N-1"},
};
constexpr Choice<Warps> kWarpsChoices[] = {
    {Warps::Sm, "sm", "seed 002 Equation 1", "one pool of warp slots per SM"},
    {Warps::PbStrictRR, "pb-strict-rr", "seed 000 Mechanism 2.1, Section IV-B, Algorithm 1 lines 14-23",
     "warp w of a block goes to PB (p + w) mod PBs with no redirect; p += W"},
    {Warps::PbAny, "pb-any", "seed 000 Section IV-B (the redirect Mechanism 2.1 rules out)",
     "a warp goes to the first PB at or after the pointer that has room; no skip"},
};
constexpr Choice<Registers> kRegistersChoices[] = {
    {Registers::Sm, "sm", "seed 002 Equation 1", "one register pool per SM"},
    {Registers::Pb, "pb", "seed 000 Mechanism 4 (register renaming), Section IV-D and V-B",
     "a register pool per PB; freed fragments combine"},
    {Registers::PbContiguous, "pb-contiguous", "seed 000 Section IV-D (the contiguous allocation renaming rules out)",
     "each warp's registers first fit at the lowest free address of its PB"},
};
constexpr Choice<Smem> kSmemChoices[] = {
    {Smem::Counted, "counted", "seed 002 Equation 1", "shared memory as a pool per SM"},
    {Smem::ContiguousFirstFit, "contiguous-first-fit", "seed 000 Mechanism 4, Section IV-D and V-B",
     "a block takes the lowest-address hole that fits, within the SM's current configuration"},
};
constexpr Choice<SmemConfig> kSmemConfigChoices[] = {
    {SmemConfig::None, "none", "pre-Volta view", "every SM always has the device's largest configuration"},
    {SmemConfig::Tpc, "tpc", "seed 000 Mechanism 3, Section IV-C, Algorithm 1 lines 10-12 and 26-27",
     "the first block into an idle TPC sets both SMs to its kernel's config_s; a busy TPC takes only kernels whose "
     "config_s fits"},
    {SmemConfig::Sm, "sm", "Mechanism 3 per SM, measured on H200s: docs/results/h200.md, finding 11",
     "the first block into an idle SM sets it to its kernel's config_s; a busy SM takes only kernels whose config_s "
     "fits; the other SM of its TPC is configured apart",
     OptionNeeds::Nothing, false},
    {SmemConfig::SmFloor, "sm-floor",
     "measured on H200s: docs/results/h200.md, finding 14 (h200-random1w-s26-0026: 19 KB blocks joined SMs that "
     "two kernels without shared memory had opened)",
     "as sm, but no configuration is smaller than the smallest the device has of at least 32 KB: a kernel that "
     "needs little or no shared memory leaves its SMs room for a later kernel's small blocks"},
};
constexpr Choice<Local> kLocalChoices[] = {
    {Local::Ignore, "ignore", "-", "local memory plays no part"},
    {Local::GpuConfig, "gpu-config", "seed 000 Algorithm 1 lines 1-3, Section III-B",
     "the first block on an idle GPU sets the local configuration; a kernel needing more waits for an idle GPU"},
};
constexpr Choice<Capacity> kCapacityChoices[] = {
    {Capacity::Blocks, "blocks", "seed 000 Algorithm 1 with limit_w divided by W (the evident intent)",
     "min(limit_b, floor(limit_w / W), limit_s) blocks"},
    {Capacity::Literal, "literal", "seed 000 Algorithm 1 line 28 as printed",
     "min(limit_b, limit_w, limit_s) mixing warps and blocks; 0 where one block does not fit"},
};
constexpr Choice<Issue> kIssueChoices[] = {
    {Issue::Single, "single", "seed 000 Algorithm 1 (one block per decision)", "every block is placed by its own selection"},
    {Issue::Paired, "paired", "tbcheck's fit to the ntbs recordings (RTX 3090 and A100 Test2)",
     "while a kernel that started with >= 2 x SMs + 5 blocks has >= 2 x SMs + 3 left, each selection places two "
     "consecutive blocks on the chosen SM (the second only if it fits there at the same instant)"},
    {Issue::PairedCc8, "paired-cc8", "tbcheck's fit (as paired; the V100 Test2 recordings show no pairs)",
     "paired on devices of compute capability 8.0 or later, single before"},
    {Issue::FromDevice, "device", "tbcheck's fit to the ntbs recordings of V100, RTX 2080 Ti, RTX 3090 and A100 (Test2)",
     "paired where the device file says issue_pairs (same leaders as paired), and the decisions from "
     "issue_pass_from on handed out issue_pass at a time: their first blocks, then their second blocks"},
};

constexpr Choice<Priority> kPriorityChoices[] = {
    {Priority::Ignore, "ignore", "tbcheck's original dispatcher (launch order)",
     "stream priorities play no part: eligible kernels are served in launch (list) order"},
    {Priority::Strict, "strict", "Amert et al., RTSS 2017, the stream priority rules (stream queues, one EE queue per priority); seed 002 Section III-B",
     "the head is the eligible kernel of the highest priority (lowest number; launch order among equals); a "
     "lower-priority kernel is served only when no higher-priority kernel has blocks left; running blocks are "
     "never evicted, so a later high-priority kernel takes SMs at block boundaries"},
    {Priority::TwoLevel, "two-level", "seed 002 Section III-B (Maxwell to Turing have only two levels, high and low)",
     "as strict, but every priority above the device's least counts as one high level: the API's range (six "
     "values on the RTX 2080 Ti) is wider than the hardware's two queues"},
};
constexpr Choice<Partition> kPartitionChoices[] = {
    {Partition::AllowedSms, "allowed-sms", "Bakita and Anderson, RTAS 2023 (libsmctrl: a TPC mask per stream or launch)",
     "a kernel with `tpcs` is placed only on the SMs of those TPCs: the selection (order, round-robin pointer, "
     "most room) runs over the allowed SMs, the others count as full"},
    {Partition::Ignore, "ignore", "Bakita and Anderson, RTAS 2023 (the mask is applied by libsmctrl, not by CUDA: without it, none)",
     "TPC masks play no part: what a GPU or driver on which the mask is not applied does"},
};
// Clusters. The guarantee is the CUDA C++ Programming Guide's ("Thread Block Clusters": the blocks
// of a cluster are guaranteed to be co-scheduled on a GPC); which GPC and which SMs is left open by NVIDIA,
// so both axes below are assumptions that the options make testable.
constexpr Choice<ClusterGpc> kClusterGpcChoices[] = {
    {ClusterGpc::MostRoom, "most-room",
     "CUDA C++ Programming Guide, Thread Block Clusters (co-scheduling on one GPC); the GPC choice is an "
     "assumption: most-room selection (seed 000 Mechanism 1) lifted from SMs to GPCs",
     "a cluster is dispatched whole when a GPC has room for all its blocks (the sum of its SMs' capacities in "
     "blocks, additive under every resource option: model::cluster_room_additivity); the "
     "GPC with the most room takes it (ties to the lowest GPC index); a cluster that fits no GPC waits "
     "(head-of-line)"},
    {ClusterGpc::LowestIndex, "lowest-index",
     "CUDA C++ Programming Guide, Thread Block Clusters (co-scheduling on one GPC); the GPC choice is an "
     "assumption: first fit over GPCs, as the NVIDIA Hopper whitepaper's GPC-level hardware scheduling "
     "leaves open",
     "as most-room, but the lowest-indexed GPC with room for the whole cluster takes it"},
};
constexpr Choice<ClusterSpread> kClusterSpreadChoices[] = {
    {ClusterSpread::Selection, "selection",
     "assumption: the hypothesis' own SM selection (seed 000 Mechanism 1 or seed 002 Section III-C) restricted "
     "to the chosen GPC's SMs",
     "the cluster's blocks are placed one by one, in rank order, by the hypothesis' selection over the chosen "
     "GPC's SMs only (most-room ranks by the hypothesis' capacity value, literal included: tbcheck's assumption)"},
    {ClusterSpread::OnePerSm, "one-per-sm",
     "assumption: distributed shared memory favours spreading a cluster over distinct SMs (NVIDIA Hopper "
     "whitepaper, thread block clusters and DSMEM)",
     "each block of the cluster goes to the SM of the GPC (with room) holding the fewest blocks of this cluster, "
     "ties to the first SM in the hypothesis' order"},
};

// No recorded case decides this mechanism: tbcheck's open question (docs/design.md "Retirements at one
// instant"); the paper cases of seeds 000 and 002 predict the same under both options.
constexpr Choice<Retirement> kRetirementChoices[] = {
    {Retirement::AllThenDispatch, "all-then-dispatch",
     "tbcheck's open question; the model's reading of seed 000 Section IV-B (Kernels 2 and 4 complete together at "
     "t=1 and are released together before the next decision)",
     "every block whose end has come retires, then blocks are dispatched"},
    {Retirement::StartOrder, "start-order",
     "tbcheck's open question; seed 003 Section 3 (after the first wave SMs are picked in the order blocks complete: "
     "completions are a sequence, not a set)",
     "blocks ending at one instant retire one at a time in the order they started (dispatch order among equal "
     "starts), each followed at once by dispatch; launches at that instant count before its first retirement"},
};

constexpr Choice<Numbering> kNumberingChoices[] = {
    {Numbering::Dispatch, "dispatch", "seed 000 Listing 1 and every paper (block i is the i-th placed)",
     "a kernel's blocks are numbered in the order they are placed"},
    {Numbering::GpcRing, "gpc-ring",
     "measured on H200s and H100s: docs/results/h200.md, findings 12 and 14 (runs 5 to 9: each GPC takes one run "
     "of consecutive block indices)",
     "the blocks a kernel places at one instant are numbered pass by pass (more room first), the single-TPC GPCs "
     "first (from the third, or from the first for grids of more than 128 blocks), then GPC by GPC from the "
     "launch's pointer (the i-th launch of a context starts at its i-th multi-TPC GPC after the scenario's "
     "gpc_pointer), each GPC's blocks by TPC and SM; needs the device's GPC map",
     OptionNeeds::GpcMap, false},
    {Numbering::GpcCarry, "gpc-carry",
     "measured on H200s: docs/results/h200.md, finding 15 (run 9: -0003 starts its second launch a GPC on where the "
     "first multi-TPC GPC has no room, -0017 and -0026 at the pointer where single-TPC GPCs take blocks in the "
     "first pass, -0050 after the fourth GPC where the first launch ended)",
     "gpc-ring's numbering, but the context's pointer is a GPC: a launch leaves it after the GPC of its last-numbered "
     "block; the next starts at the first GPC from it that takes a block when a single-TPC GPC takes one in its "
     "first pass (the most room) or the grid has more than 128 blocks (the single-TPC GPCs then from the first, "
     "except on the context's first launch), otherwise at the one after the first GPC from it that takes a block "
     "in the first pass; a fresh context's pointer is the multi-TPC GPC gpc_pointer places after the first; needs "
     "the device's GPC map",
     OptionNeeds::GpcMap},
};

template <typename E, size_t N>
constexpr bool in_enum_order(const Choice<E> (&rows)[N]) {
  for (size_t i = 0; i < N; ++i)
    if (static_cast<size_t>(rows[i].value) != i) return false;
  return true;
}
static_assert(in_enum_order(kSelectionChoices) && in_enum_order(kOrderChoices) && in_enum_order(kWarpsChoices) &&
                  in_enum_order(kRegistersChoices) && in_enum_order(kSmemChoices) &&
                  in_enum_order(kSmemConfigChoices) && in_enum_order(kLocalChoices) &&
                  in_enum_order(kCapacityChoices) && in_enum_order(kIssueChoices) &&
                  in_enum_order(kPriorityChoices) && in_enum_order(kPartitionChoices) &&
                  in_enum_order(kClusterGpcChoices) && in_enum_order(kClusterSpreadChoices) &&
                  in_enum_order(kRetirementChoices) && in_enum_order(kNumberingChoices),
              "each Choice table lists its enum's values once, in declaration order");

// An enumerated mechanism: a JSON field, the Hypothesis member it sets, its values, and its column in
// the hypotheses table. `required`: a file without a base must give it ("issue" came later and
// defaults to single, so files written before it stay valid). `enumeration` and `needs`: how the
// composition space takes it (model/compositions.hpp).
template <typename E, size_t N>
struct EnumMechanism {
  std::string_view key;
  E Hypothesis::*field;
  const Choice<E> (&choices)[N];
  std::string_view column;
  bool required = true;
  Enumeration enumeration = Enumeration::Every;
  OptionNeeds needs = OptionNeeds::Nothing;
};
// A flag that qualifies another mechanism (shown in its column with `suffix` when on).
struct FlagMechanism {
  std::string_view key;
  bool Hypothesis::*field;
  std::string_view cites, meaning;
  std::string_view column, suffix;
};
// An optional threshold in [0, max] (null: off), shown in its column as " (ignored <= N)" etc. `side` and
// `quantity` say which kernel quantity it compares and how: what learn brackets it by (model/thresholds.hpp).
struct ThresholdMechanism {
  std::string_view key;
  std::optional<int> Hypothesis::*field;
  int max;
  std::string_view cites, meaning;
  std::string_view column, suffix_format;
  ThresholdSide side;
  ThresholdQuantity quantity;
  std::vector<int> samples;  // the values the composition space takes besides off: the ones the papers name
};

// Every mechanism, in the hypothesis-file order: option_table, parse, to_json, same_options and the
// hypotheses table all walk this tuple.
const auto kMechanisms = std::make_tuple(
    EnumMechanism<Selection, std::size(kSelectionChoices)>{"selection", &Hypothesis::selection, kSelectionChoices, "selection"},
    EnumMechanism<Order, std::size(kOrderChoices)>{"order", &Hypothesis::order, kOrderChoices, "order"},
    EnumMechanism<Warps, std::size(kWarpsChoices)>{"warps", &Hypothesis::warps, kWarpsChoices, "warps"},
    FlagMechanism{"skip_on_multiple_of_4", &Hypothesis::skip_on_multiple_of_4, "seed 000 Mechanism 2.2, Section IV-B",
                  "with pb-strict-rr, p moves one PB further when W is a multiple of the PB count", "warps", " +skip"},
    EnumMechanism<Registers, std::size(kRegistersChoices)>{"registers", &Hypothesis::registers, kRegistersChoices,
                                                           "registers"},
    ThresholdMechanism{"registers_ignore_at_or_below", &Hypothesis::registers_ignore_at_or_below, 1024,
                       "seed 002 Section III-C2 (32-register threshold)",
                       "registers neither checked nor allocated when regs per thread <= the value", "registers",
                       " (ignored <= {})", ThresholdSide::AtOrBelow, ThresholdQuantity::RegsPerThread, {32}},
    EnumMechanism<Smem, std::size(kSmemChoices)>{"smem", &Hypothesis::smem, kSmemChoices, "smem"},
    ThresholdMechanism{"smem_ignore_below", &Hypothesis::smem_ignore_below, 1 << 24,
                       "seed 002 Section III-C2 (3 KB threshold)",
                       "shared memory neither checked nor allocated when S (rounded, reserved included) is below the value",
                       "smem", " (ignored < {} B)", ThresholdSide::Below, ThresholdQuantity::SmemPerBlock, {3072}},
    EnumMechanism<SmemConfig, std::size(kSmemConfigChoices)>{"smem_config", &Hypothesis::smem_config,
                                                             kSmemConfigChoices, "smem config"},
    EnumMechanism<Local, std::size(kLocalChoices)>{"local", &Hypothesis::local, kLocalChoices, "local"},
    EnumMechanism<Capacity, std::size(kCapacityChoices)>{"capacity", &Hypothesis::capacity, kCapacityChoices,
                                                         "capacity"},
    EnumMechanism<Issue, std::size(kIssueChoices)>{"issue", &Hypothesis::issue, kIssueChoices, "issue", false},
    EnumMechanism<Priority, std::size(kPriorityChoices)>{"priority", &Hypothesis::priority, kPriorityChoices, "priority",
                                                         false},
    EnumMechanism<Partition, std::size(kPartitionChoices)>{"partition", &Hypothesis::partition, kPartitionChoices,
                                                           "partition", false},
    EnumMechanism<ClusterGpc, std::size(kClusterGpcChoices)>{"cluster_gpc", &Hypothesis::cluster_gpc,
                                                             kClusterGpcChoices, "cluster gpc", false,
                                                             Enumeration::WhereNeedsMet, OptionNeeds::ClustersAndGpcMap},
    EnumMechanism<ClusterSpread, std::size(kClusterSpreadChoices)>{"cluster_spread", &Hypothesis::cluster_spread,
                                                                   kClusterSpreadChoices, "cluster spread", false,
                                                                   Enumeration::WhereNeedsMet,
                                                                   OptionNeeds::ClustersAndGpcMap},
    EnumMechanism<Retirement, std::size(kRetirementChoices)>{"retirement", &Hypothesis::retirement, kRetirementChoices,
                                                             "retirement", false,
                                                             Enumeration::HeldAtDefault},
    EnumMechanism<Numbering, std::size(kNumberingChoices)>{"numbering", &Hypothesis::numbering, kNumberingChoices,
                                                           "numbering", false, Enumeration::WhereNeedsMet,
                                                           OptionNeeds::GpcMap});

template <class F>
void for_each_mechanism(F&& f) {
  std::apply([&](const auto&... m) { (f(m), ...); }, kMechanisms);
}

template <typename E, size_t N>
std::string_view name_in(const Choice<E> (&rows)[N], E e) {
  const auto i = static_cast<size_t>(e);
  if (i < N) return rows[i].name;  // rows are in enum order (static_assert above)
  throw std::logic_error("an option value without a row in its mechanism's Choice table (model/core/src/mechanisms.cpp)");
}

}  // namespace

const std::vector<OptionInfo>& option_table() {
  static const std::vector<OptionInfo> table = [] {
    std::vector<OptionInfo> out;
    for_each_mechanism([&](const auto& m) {
      using M = std::decay_t<decltype(m)>;
      if constexpr (std::is_same_v<M, FlagMechanism>) {
        out.push_back({m.key, "true", m.cites, m.meaning});
      } else if constexpr (std::is_same_v<M, ThresholdMechanism>) {
        out.push_back({m.key, "<int>", m.cites, m.meaning});
      } else {
        for (const auto& c : m.choices)
          out.push_back({m.key, c.name, c.cites, c.meaning, c.needs == OptionNeeds::Nothing ? m.needs : c.needs});
      }
    });
    return out;
  }();
  return table;
}

std::string_view to_string(OptionNeeds n) {
  switch (n) {
    case OptionNeeds::Nothing: return "nothing";
    case OptionNeeds::GpcMap: return "a GPC map";
    case OptionNeeds::ClustersAndGpcMap: return "thread block clusters and a GPC map";
  }
  return "?";
}

std::string_view to_string(Enumeration e) {
  switch (e) {
    case Enumeration::Every: return "every value";
    case Enumeration::HeldAtDefault: return "held at the default";
    case Enumeration::WhereNeedsMet: return "the default; every value where the device has what it needs";
  }
  return "?";
}

const std::vector<MechanismSpace>& mechanism_space() {
  static const std::vector<MechanismSpace> space = [] {
    std::vector<MechanismSpace> out;
    for_each_mechanism([&](const auto& m) {
      using M = std::decay_t<decltype(m)>;
      MechanismSpace s;
      s.mechanism = m.key;
      if constexpr (std::is_same_v<M, FlagMechanism>) {
        s.values = {json(false), json(true)};
      } else if constexpr (std::is_same_v<M, ThresholdMechanism>) {
        s.values = {json()};
        for (int v : m.samples) s.values.emplace_back(v);
      } else {
        s.enumeration = m.enumeration;
        s.needs = m.needs;
        for (const auto& c : m.choices)
          if (c.in_space) s.values.emplace_back(std::string(c.name));
      }
      out.push_back(std::move(s));
    });
    return out;
  }();
  return space;
}

std::string option_table_markdown() {
  // One row per option; a mechanism's name, and the values the composition space takes of it, only on its
  // first row. An option that needs something of a device says so on its own row.
  std::string out =
      "| mechanism (JSON field) | option | meaning | source | composition space |\n| --- | --- | --- | --- | --- |\n";
  auto cell = [](std::string_view text) {
    std::string s(text);
    for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
    return s;
  };
  std::string_view last;
  for (const auto& r : option_table()) {
    const MechanismSpace* space = nullptr;
    for (const auto& m : mechanism_space())
      if (m.mechanism == r.mechanism) space = &m;
    std::string key;
    if (r.mechanism != last) {
      key = fmt::format("`{}`", r.mechanism);
      for_each_mechanism([&](const auto& m) {
        using M = std::decay_t<decltype(m)>;
        if constexpr (!std::is_same_v<M, FlagMechanism> && !std::is_same_v<M, ThresholdMechanism>)
          if (m.key == r.mechanism && !m.required) key += fmt::format(" (optional, default `{}`)", m.choices[0].name);
      });
      last = r.mechanism;
    }
    std::string value = r.value == "<int>" ? "integer or null" : fmt::format("`{}`", r.value);
    std::string taken;
    if (space && !key.empty()) {
      std::vector<std::string> vs;
      for (const auto& v : space->values) vs.push_back(v.dump());
      switch (space->enumeration) {
        case Enumeration::Every: taken = fmt::format("{}", fmt::join(vs, ", ")); break;
        case Enumeration::HeldAtDefault: taken = fmt::format("held at {}", vs.front()); break;
        case Enumeration::WhereNeedsMet:
          taken = fmt::format("{}; all of {} where the device has {}", vs.front(), fmt::join(vs, ", "),
                              to_string(space->needs));
          break;
      }
    }
    const bool in_space = !space || r.value == "<int>" || r.value == "true" ||
                          std::find(space->values.begin(), space->values.end(), json(std::string(r.value))) !=
                              space->values.end();
    if (!in_space)
      taken += fmt::format("{}not in the space", taken.empty() ? "" : "; ");
    else if (r.needs != OptionNeeds::Nothing && (!space || space->needs != r.needs))
      taken += fmt::format("{}needs {}", taken.empty() ? "" : "; ", to_string(r.needs));
    out += fmt::format("| {} | {} | {} | {} | {} |\n", key, value, cell(r.meaning), cell(r.cites), cell(taken));
  }
  return out;
}

const std::vector<std::string_view>& mechanism_keys() {
  static const std::vector<std::string_view> keys = [] {
    std::vector<std::string_view> out;
    for_each_mechanism([&](const auto& m) { out.push_back(m.key); });
    return out;
  }();
  return keys;
}

const std::vector<ThresholdOption>& threshold_options() {
  static const std::vector<ThresholdOption> out = [] {
    std::vector<ThresholdOption> v;
    for_each_mechanism([&](const auto& m) {
      if constexpr (std::is_same_v<std::decay_t<decltype(m)>, ThresholdMechanism>)
        v.push_back({m.key, m.side, m.quantity, m.cites, m.field});
    });
    return v;
  }();
  return out;
}

namespace {

// The JSON fields a hypothesis object may have: the descriptive ones, then every mechanism's.
const std::vector<std::string>& hypothesis_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out = {"name", "base", "source", "description"};
    for (auto k : mechanism_keys()) out.emplace_back(k);
    return out;
  }();
  return keys;
}

template <typename E, size_t N>
void read_option(const ObjectReader& r, const EnumMechanism<E, N>& m, Hypothesis& h) {
  std::string v = r.string(m.key);
  std::vector<std::string_view> valid;
  for (const auto& c : m.choices) {
    if (c.name == v) {
      h.*m.field = c.value;
      return;
    }
    if constexpr (std::is_same_v<E, Selection>)
      if (c.value == Selection::Rule) continue;  // not a string value: the object form below
    valid.push_back(c.name);
  }
  if constexpr (std::is_same_v<E, Selection>)
    r.fail(m.key, fmt::format("unknown option '{}'; valid options are: {}, or a rule {{\"rule\": [...]}} (docs/rules.md)",
                              v, fmt::join(valid, ", ")));
  r.fail(m.key, fmt::format("unknown option '{}'; valid options are: {}", v, fmt::join(valid, ", ")));
}
void read_option(const ObjectReader& r, const FlagMechanism& m, Hypothesis& h) { h.*m.field = r.boolean(m.key); }
void read_option(const ObjectReader& r, const ThresholdMechanism& m, Hypothesis& h) {
  auto v = r.opt_integer(m.key, 0, m.max);
  h.*m.field = v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

}  // namespace

Hypothesis parse_hypothesis(const json& j, const std::string& where,
                            const std::function<const Hypothesis*(const std::string&)>& base_of) {
  ObjectReader r(j, where, "", hypothesis_keys());
  Hypothesis h;
  bool has_base = false;
  std::string base_name;
  if (auto base = r.opt_string("base")) {
    const Hypothesis* b = base_of(*base);
    if (!b) {
      std::vector<std::string> names;
      for (const auto& s : builtin_hypotheses()) names.push_back(s.name);
      r.fail("base", fmt::format("unknown hypothesis '{}'; shipped hypotheses are: {}", *base, fmt::join(names, ", ")));
    }
    h = *b;
    has_base = true;
    base_name = b->name;
  } else {
    for_each_mechanism([&](const auto& m) {
      using M = std::decay_t<decltype(m)>;
      bool required = true;
      if constexpr (!std::is_same_v<M, FlagMechanism> && !std::is_same_v<M, ThresholdMechanism>) required = m.required;
      if (required && !r.has(m.key))
        r.fail(m.key, "required field is missing (give every mechanism, or a \"base\" to start from)");
    });
  }
  h.name = r.string("name");
  if (auto why = unprintable_name_reason(h.name); !why.empty()) r.fail("name", why);
  if (h.name.empty() || h.name.find_first_of(", \t\n/") != std::string::npos)
    r.fail("name", fmt::format("'{}' is not a usable name (non-empty, no spaces, commas or slashes)", h.name));
  // A derived hypothesis without its own source says where it comes from.
  std::string inherited = has_base ? fmt::format("based on {}: {}", base_name, h.source) : "";
  h.source = r.opt_string("source").value_or(inherited);
  h.description = r.opt_string("description").value_or("");
  // The selection's object form is a rule (docs/rules.md); its string form names a built-in selection and drops
  // any rule a base had.
  const json* selection = r.get("selection");
  const bool by_rule = selection && selection->is_object();
  if (by_rule) {
    h.rule = rule_from_json(*selection, where, r.field("selection"));
    h.selection = Selection::Rule;
  }
  for_each_mechanism([&](const auto& m) {
    if (r.has(m.key) && !(by_rule && m.key == "selection")) read_option(r, m, h);
  });
  if (selection && !by_rule) {
    if (h.selection == Selection::Rule)
      r.fail("selection", "'rule' is given as an object: \"selection\": {\"rule\": [{\"key\": \"room\", \"prefer\": "
                          "\"max\"}, ...]} (docs/rules.md)");
    h.rule = Rule{};
  }

  if (auto e = combination_error(h)) r.fail(e->field, e->reason);
  return h;
}

std::string_view to_string(Selection e) { return name_in(kSelectionChoices, e); }
std::string_view to_string(Order e) { return name_in(kOrderChoices, e); }
std::string_view to_string(Warps e) { return name_in(kWarpsChoices, e); }
std::string_view to_string(Registers e) { return name_in(kRegistersChoices, e); }
std::string_view to_string(Smem e) { return name_in(kSmemChoices, e); }
std::string_view to_string(SmemConfig e) { return name_in(kSmemConfigChoices, e); }
std::string_view to_string(Local e) { return name_in(kLocalChoices, e); }
std::string_view to_string(Capacity e) { return name_in(kCapacityChoices, e); }
std::string_view to_string(Issue e) { return name_in(kIssueChoices, e); }
std::string_view to_string(Priority e) { return name_in(kPriorityChoices, e); }
std::string_view to_string(Partition e) { return name_in(kPartitionChoices, e); }
std::string_view to_string(ClusterGpc e) { return name_in(kClusterGpcChoices, e); }
std::string_view to_string(ClusterSpread e) { return name_in(kClusterSpreadChoices, e); }
std::string_view to_string(Retirement e) { return name_in(kRetirementChoices, e); }
std::string_view to_string(Numbering e) { return name_in(kNumberingChoices, e); }

std::optional<CombinationError> combination_error(const Hypothesis& h) {
  // gpc-priority places blocks by the GPC map (seed 003 Section 4.1), so an SM scan order has no part in
  // it, and paired issue belongs to the generic dispatcher; a device without a GPC map is
  // rejected when the hypothesis meets it (model/engine/src/fermi.cpp).
  if (is_fermi(h.selection) && h.order != Order::Natural)
    return CombinationError{"order", fmt::format("selection 'gpc-priority' orders SMs by their GPCs (seed 003 Section "
                                                 "4.1); the order must be 'natural', not '{}'",
                                                 to_string(h.order))};
  if (is_fermi(h.selection) && h.issue != Issue::Single)
    return CombinationError{"issue", fmt::format("selection 'gpc-priority' places every block by the Fermi wave or "
                                                 "completion order; the issue must be 'single', not '{}'",
                                                 to_string(h.issue))};
  if (is_fermi(h.selection) && h.retirement != Retirement::AllThenDispatch)
    return CombinationError{"retirement", fmt::format("selection 'gpc-priority' already queues completions in "
                                                      "dispatch order (seed 003 Section 3) and plans its waves "
                                                      "between instants; the retirement must be "
                                                      "'all-then-dispatch', not '{}'",
                                                      to_string(h.retirement))};
  if (h.selection == Selection::Rule && h.rule.keys.empty())
    return CombinationError{"selection", "the rule is empty: give at least one key (docs/rules.md)"};
  if (ring_numbered(h.numbering) && !uses_gpc_spread(h.selection) &&
      !(h.selection == Selection::Rule && gpc_map_feature(h.rule)))
    return CombinationError{"numbering", fmt::format("'{}' numbers the blocks a GPC-by-GPC spread placed; it "
                                                     "needs selection 'gpc-spread', 'tpc-position' or a rule ranking by the GPC map, not '{}'",
                                                     to_string(h.numbering), to_string(h.selection))};
  if (ring_numbered(h.numbering) && h.issue != Issue::Single)
    return CombinationError{"issue", fmt::format("numbering '{}' gives the block indices itself; the issue "
                                                 "must be 'single', not '{}'",
                                                 to_string(h.numbering), to_string(h.issue))};
  if (h.pb_registers() && !h.pb_warps())
    return CombinationError{"registers", fmt::format("'{}' pools registers per processing block, which needs warps "
                                                     "placed on PBs (warps: pb-strict-rr or pb-any), not warps: sm",
                                                     to_string(h.registers))};
  if (h.skip_on_multiple_of_4 && h.warps != Warps::PbStrictRR)
    return CombinationError{"skip_on_multiple_of_4",
                            fmt::format("the skip (Mechanism 2.2) moves the strict round-robin PB pointer; it needs "
                                        "warps: pb-strict-rr, not '{}'",
                                        to_string(h.warps))};
  return std::nullopt;
}

void set_option(Hypothesis& h, std::string_view key, const json& value) {
  bool found = false;
  for_each_mechanism([&](const auto& m) {
    using M = std::decay_t<decltype(m)>;
    if (found || m.key != key) return;
    found = true;
    if constexpr (std::is_same_v<M, FlagMechanism>) {
      if (!value.is_boolean()) throw std::invalid_argument(fmt::format("{}: not true or false", key));
      h.*m.field = value.get<bool>();
    } else if constexpr (std::is_same_v<M, ThresholdMechanism>) {
      if (value.is_null()) h.*m.field = std::nullopt;
      else if (value.is_number_integer() && value.get<int64_t>() >= 0 && value.get<int64_t>() <= m.max)
        h.*m.field = static_cast<int>(value.get<int64_t>());
      else throw std::invalid_argument(fmt::format("{}: not null or an integer in [0, {}]", key, m.max));
    } else {
      if constexpr (std::is_same_v<M, EnumMechanism<Selection, std::size(kSelectionChoices)>>)
        if (value.is_object()) {  // a rule, as a file's selection gives it
          try {
            h.rule = rule_from_json(value, "set_option", "selection");
          } catch (const InputError& e) {
            throw std::invalid_argument(e.what());
          }
          h.selection = Selection::Rule;
          return;
        }
      for (const auto& c : m.choices)
        if (value.is_string() && c.name == value.get<std::string>()) {
          if constexpr (std::is_same_v<M, EnumMechanism<Selection, std::size(kSelectionChoices)>>) {
            if (c.value == Selection::Rule)
              throw std::invalid_argument("selection: a rule is given as an object {\"rule\": [...]}");
            h.rule = Rule{};
          }
          h.*m.field = c.value;
          return;
        }
      throw std::invalid_argument(fmt::format("{}: no option {}", key, value.dump()));
    }
  });
  if (!found) throw std::invalid_argument(fmt::format("no mechanism {}", key));
}

std::vector<OptionSetting> option_settings(const Hypothesis& h) {
  // Each mechanism's option-table rows, gathered once: this runs for every composition of the space, and
  // scanning the whole table per mechanism was most of its cost.
  static const std::vector<std::vector<const OptionInfo*>> rows = [] {
    std::vector<std::vector<const OptionInfo*>> out;
    for_each_mechanism([&](const auto& m) {
      auto& mine = out.emplace_back();
      for (const auto& r : option_table())
        if (r.mechanism == m.key) mine.push_back(&r);
    });
    return out;
  }();
  std::vector<OptionSetting> out;
  out.reserve(rows.size());
  for_each_mechanism([&](const auto& m) {
    using M = std::decay_t<decltype(m)>;
    const auto& mine = rows[out.size()];
    auto row = [&](std::string_view value) -> const OptionInfo* {
      for (const auto* r : mine)
        if (r->value == value) return r;
      return nullptr;
    };
    OptionSetting s{m.key, "", nullptr, true};
    if constexpr (std::is_same_v<M, FlagMechanism>) {
      s.on = h.*m.field;
      s.value = s.on ? "true" : "false";
      s.row = row("true");
    } else if constexpr (std::is_same_v<M, ThresholdMechanism>) {
      s.on = (h.*m.field).has_value();
      s.value = s.on ? std::to_string(*(h.*m.field)) : "off";
      s.row = row("<int>");
    } else {
      s.value = std::string(name_in(m.choices, h.*m.field));
      s.row = row(s.value);
      // Two rules differ as options do: the lemma cache and check's differences read the rule's keys.
      if constexpr (std::is_same_v<M, EnumMechanism<Selection, std::size(kSelectionChoices)>>)
        if (h.selection == Selection::Rule) s.value = fmt::format("rule {}", rule_text(h.rule));
    }
    out.push_back(std::move(s));
  });
  return out;
}

bool needs_gpc_map(const Hypothesis& h) {
  if (h.selection == Selection::Rule && gpc_map_feature(h.rule)) return true;  // a rule file's key (docs/rules.md)
  // A mechanism's default acts everywhere (its row may carry the mechanism's needs, as numbering's dispatch does).
  const std::vector<OptionSetting> settings = option_settings(h);
  const std::vector<MechanismSpace>& space = mechanism_space();
  for (size_t i = 0; i < settings.size() && i < space.size(); ++i) {
    const OptionSetting& s = settings[i];
    const bool is_default = space[i].values.front() == json(s.value);
    if (s.on && !is_default && s.row && s.row->needs == OptionNeeds::GpcMap) return true;
  }
  return false;
}

std::vector<OptionColumn> option_columns(const Hypothesis& h) {
  std::vector<OptionColumn> out;
  for_each_mechanism([&](const auto& m) {
    using M = std::decay_t<decltype(m)>;
    if constexpr (std::is_same_v<M, FlagMechanism>) {
      for (auto& c : out)
        if (c.header == m.column && h.*m.field) c.cell += m.suffix;
    } else if constexpr (std::is_same_v<M, ThresholdMechanism>) {
      for (auto& c : out)
        if (c.header == m.column && h.*m.field) c.cell += fmt::format(fmt::runtime(m.suffix_format), *(h.*m.field));
    } else {
      std::string cell(name_in(m.choices, h.*m.field));
      if constexpr (std::is_same_v<M, EnumMechanism<Selection, std::size(kSelectionChoices)>>)
        if (h.selection == Selection::Rule) cell = fmt::format("rule {}", rule_text(h.rule));
      out.push_back({m.column, std::move(cell)});
    }
  });
  return out;
}

json Hypothesis::to_json() const {
  json j = {{"name", name}, {"source", source}, {"description", description}};
  for_each_mechanism([&](const auto& m) {
    using M = std::decay_t<decltype(m)>;
    if constexpr (std::is_same_v<M, FlagMechanism>) {
      j[std::string(m.key)] = this->*m.field;
    } else if constexpr (std::is_same_v<M, ThresholdMechanism>) {
      const auto& v = this->*m.field;
      j[std::string(m.key)] = v ? json(*v) : json(nullptr);
    } else {
      j[std::string(m.key)] = name_in(m.choices, this->*m.field);
    }
  });
  if (selection == Selection::Rule) j["selection"] = rule_to_json(rule);
  return j;
}

bool Hypothesis::same_options(const Hypothesis& o) const {
  bool same = true;
  for_each_mechanism([&](const auto& m) { same = same && this->*m.field == o.*m.field; });
  return same && rule == o.rule;
}

std::string option_key(const Hypothesis& h) {
  std::string key;
  auto put = [&](int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  for_each_mechanism([&](const auto& m) {
    const auto& v = h.*m.field;
    using V = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<V, std::optional<int>>)
      put(v ? int64_t{*v} : int64_t{-1} << 40);  // off sorts apart from every value a file may give
    else
      put(static_cast<int64_t>(v));
  });
  for (const auto& k : h.rule.keys) put(static_cast<int64_t>(k.feature) * 2 + static_cast<int64_t>(k.prefer));
  return key;
}

}  // namespace tbcheck::model
