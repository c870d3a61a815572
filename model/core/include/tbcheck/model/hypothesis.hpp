// A hypothesis is one option per scheduler mechanism (docs/design.md "Mechanisms and hypotheses").
// Every mechanism has one descriptor (mechanisms.cpp) from which its names, table rows and JSON form come.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/model/rule.hpp"

namespace tbcheck::model {

struct Device;

// The mechanisms' options. Each value has one row, with its JSON name and the paper section it comes
// from, in its mechanism's descriptor (mechanisms.cpp); the engines check them in exhaustive switches
// (no default, -Werror=switch), so a value added here does not compile until both the simulator and
// the SMT encoder handle it (docs/extending.md).
// Rule: the selection is the hypothesis' own ranking (Hypothesis::rule, docs/rules.md), given in a file as
// "selection": {"rule": [...]}.
enum class Selection { RoundRobin, MostRoom, GpcPriority, GpcSpread, TpcPosition, Rule };
enum class Order { Natural, EvenFirst };
enum class Warps { Sm, PbStrictRR, PbAny };
enum class Registers { Sm, Pb, PbContiguous };
enum class Smem { Counted, ContiguousFirstFit };
enum class SmemConfig { None, Tpc, Sm, SmFloor };
enum class Local { Ignore, GpuConfig };
enum class Capacity { Blocks, Literal };
enum class Issue { Single, Paired, PairedCc8, FromDevice };
// How stream priorities order the kernels, and whether TPC masks confine the selection
// (model/engine/include/tbcheck/model/controls.hpp has the helpers both engines share).
enum class Priority { Ignore, Strict, TwoLevel };
enum class Partition { AllowedSms, Ignore };
// Thread block clusters (model/engine/src/cluster.cpp): which GPC takes a cluster, and how its
// blocks spread over that GPC's SMs.
enum class ClusterGpc { MostRoom, LowestIndex };
enum class ClusterSpread { Selection, OnePerSm };
// Blocks whose ends fall on one model instant: every one retires before the next dispatch, or they retire in
// the order they started, each followed at once by dispatch (docs/design.md "Retirements at one instant").
enum class Retirement { AllThenDispatch, StartOrder };
// Which block index each placement of a kernel gets: the order of placement (every paper), or, on GPUs that hand a
// grid out GPC by GPC, the blocks placed at one instant numbered pass by pass and GPC by GPC from a pointer each
// launch moves on (model/engine/include/tbcheck/model/numbering.hpp): from the launch's place in the context (gpc-ring), or
// from where the context's last launch left off (gpc-carry).
enum class Numbering { Dispatch, GpcRing, GpcCarry };
// Whether the numbering renumbers each batch of placements by the GPC ring (both engines switch on this).
constexpr bool ring_numbered(Numbering n) {
  switch (n) {
    case Numbering::Dispatch: return false;
    case Numbering::GpcRing:
    case Numbering::GpcCarry: return true;
  }
  return false;
}

struct Hypothesis {
  std::string name;
  std::string source;
  std::string description;
  std::string file;  // where it was loaded from ("builtin:alg1" for shipped ones)

  Selection selection = Selection::MostRoom;
  Rule rule;  // the ranking when selection is Rule (never empty then); empty otherwise
  Order order = Order::Natural;
  Warps warps = Warps::Sm;
  bool skip_on_multiple_of_4 = false;
  Registers registers = Registers::Sm;
  std::optional<int> registers_ignore_at_or_below;
  Smem smem = Smem::Counted;
  std::optional<int> smem_ignore_below;
  SmemConfig smem_config = SmemConfig::None;
  Local local = Local::Ignore;
  Capacity capacity = Capacity::Blocks;
  Issue issue = Issue::Single;  // optional in files (default single), so files written before it stay valid
  Priority priority = Priority::Ignore;        // optional in files, like issue
  Partition partition = Partition::AllowedSms;  // optional in files: masks honoured, as docs/controls.md documents
  ClusterGpc cluster_gpc = ClusterGpc::MostRoom;            // optional in files, like issue
  ClusterSpread cluster_spread = ClusterSpread::Selection;  // optional in files, like issue
  Retirement retirement = Retirement::AllThenDispatch;      // optional in files, like issue
  Numbering numbering = Numbering::Dispatch;                // optional in files, like issue

  bool pb_warps() const;      // warps placed on processing blocks (not one SM pool)
  bool pb_registers() const;  // registers pooled per processing block
  // Whether block `b` (0-based) of a kernel of `n` blocks leads a pair on `d` (issue paired*): b is even,
  // the kernel started with at least 2 x SMs + 5 blocks and at least 2 x SMs + 3 are still to be placed.
  // Block b + 1 then goes to the leader's SM if it fits there at the leader's instant. The set of leaders
  // depends only on (n, b), so both engines know it before placing anything.
  bool leads_pair(const Device& d, int n, int b) const;
  // The block index each placement of a kernel of `n` blocks gets, in placement order (issue device on a
  // device with issue_pass > 1: a pass hands out its decisions' first blocks, then their second blocks).
  // Empty when it is the identity (no pass holds a pair). Like the leaders, it depends only on (d, n).
  std::vector<int> hand_out_order(const Device& d, int n) const;
  json to_json() const;  // the hypothesis-file shape, every field present
  // True when the two choose the same option for every mechanism (names may differ).
  bool same_options(const Hypothesis& o) const;
};

// The options as a compact key, equal for two hypotheses exactly when same_options is: a hash key for
// sharing one simulation among candidates (search/src/learn_pool.cpp).
std::string option_key(const Hypothesis& h);

// A numeric mechanism (a threshold) compares one kernel quantity with its value: a block's quantity v is
// ignored when v <= T (AtOrBelow) or v < T (Below). Each comes from its mechanism's descriptor
// (mechanisms.cpp), so a later threshold plugs in there.
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

// What an option needs of a device before it can act there: nothing, a GPC map (gpc-priority), or thread
// block clusters and a GPC map (the cluster mechanisms).
enum class OptionNeeds { Nothing, GpcMap, ClustersAndGpcMap };
std::string_view to_string(OptionNeeds);

// One row per option of every mechanism (enumerated values, the skip flag's "true", a threshold's
// "<int>"), derived from the mechanism descriptors in mechanisms.cpp: the registry of pluggable units.
struct OptionInfo {
  std::string_view mechanism;  // JSON field
  std::string_view value;      // JSON value
  std::string_view cites;      // paper section it comes from
  std::string_view meaning;
  OptionNeeds needs = OptionNeeds::Nothing;
};
const std::vector<OptionInfo>& option_table();

// How the composition space (model/compositions.hpp) takes a mechanism: every value of `values`; only the
// first (the default) because no recorded case decides it and it would double the space; or the first,
// and every value on a device that has what the mechanism `needs`.
enum class Enumeration { Every, HeldAtDefault, WhereNeedsMet };
std::string_view to_string(Enumeration);
struct MechanismSpace {
  std::string_view mechanism;  // JSON field
  Enumeration enumeration = Enumeration::Every;
  OptionNeeds needs = OptionNeeds::Nothing;  // of the mechanism as a whole
  // The JSON values the space enumerates, the default or off first: every option name; false and true for
  // a flag; null and the sample values a paper names for a threshold.
  std::vector<json> values;
};
// One per mechanism, in the hypothesis-file order, from the same descriptors as option_table().
const std::vector<MechanismSpace>& mechanism_space();

// The option table of docs/design.md ("Mechanisms and hypotheses"), generated from the descriptors:
// `tbcheck hypotheses --options --markdown` prints it and a test keeps the document in step.
std::string option_table_markdown();

// The JSON fields of the mechanisms, in the hypothesis-file order.
const std::vector<std::string_view>& mechanism_keys();

// What a hypothesis chooses for one mechanism, in the hypothesis-file order. `value` is the JSON value as
// text ("pb-strict-rr", "true"/"false", "32", or "off" for an absent threshold); `row` the option_table row
// it chose, or the mechanism's row when the choice is off (a false flag, no threshold: `on` false).
struct OptionSetting {
  std::string_view mechanism;
  std::string value;
  const OptionInfo* row = nullptr;
  bool on = true;
};
std::vector<OptionSetting> option_settings(const Hypothesis& h);

// Whether h acts only on a device with a GPC map: some option it takes needs one (gpc-priority, the spreads,
// gpc-ring, a rule with a GPC key), whatever its kernels. The cluster mechanisms need one only where a kernel has clusters.
bool needs_gpc_map(const Hypothesis& h);

// A combination of options no engine gives a meaning to: the field to blame and why. Hypothesis files
// fail with it (exit 2); the composition space leaves such combinations out.
struct CombinationError {
  std::string field, reason;
};
std::optional<CombinationError> combination_error(const Hypothesis& h);
// Sets one mechanism as a hypothesis file's field would (an option name; true/false for a flag; null or an
// integer in range for a threshold). A key or value the descriptor does not have is a programming error
// here (std::invalid_argument): files go through hypothesis_from_json, which names the field.
void set_option(Hypothesis& h, std::string_view key, const json& value);

// The hypotheses table: one column per enumerated mechanism, a flag or threshold shown in the column of
// the mechanism it qualifies ("pb-strict-rr +skip", "sm (ignored <= 32)").
struct OptionColumn {
  std::string_view header;
  std::string cell;
};
std::vector<OptionColumn> option_columns(const Hypothesis& h);

std::string_view to_string(Selection);
// The shipped selections that are rankings (all but gpc-priority), written as rules (model/core/src/rule.cpp); and
// the table of them that `tbcheck hypotheses --options --markdown` prints after the option table.
std::optional<Rule> selection_as_rule(Selection s);
std::string shipped_rules_markdown();
std::string_view to_string(Order);
std::string_view to_string(Warps);
std::string_view to_string(Registers);
std::string_view to_string(Smem);
std::string_view to_string(SmemConfig);
std::string_view to_string(Local);
std::string_view to_string(Capacity);
std::string_view to_string(Issue);
std::string_view to_string(Priority);
std::string_view to_string(Partition);
std::string_view to_string(ClusterGpc);
std::string_view to_string(ClusterSpread);
std::string_view to_string(Retirement);
std::string_view to_string(Numbering);

// Reads a hypothesis object. `base` (optional) names a shipped hypothesis whose options are
// taken first. Unknown fields or option values are errors listing the valid ones; option
// combinations no engine can give a meaning to are rejected with the reason.
Hypothesis hypothesis_from_json(const json& j, const std::string& where);
Hypothesis load_hypothesis_file(const std::string& path);

const std::vector<Hypothesis>& builtin_hypotheses();  // the shipped set, in a fixed order
const Hypothesis* find_builtin_hypothesis(std::string_view name);
}  // namespace tbcheck::model
