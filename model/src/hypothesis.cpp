// Hypothesis files: the option registry (one table, with the paper section of every option),
// loading with `base`, validation of option combinations, and the shipped set.
#include "tbcheck/model/hypothesis.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/builtin.hpp"
#include "tbcheck/model/device.hpp"

namespace tbcheck::model {

const std::vector<OptionInfo>& option_table() {
  static const std::vector<OptionInfo> table = {
      {"selection", "round-robin", "seed 002 Section III-C (the 'default policy'); seed 000 Section IV-A",
       "a GPU-wide pointer over the order; the first SM at or after it with room for one block; the pointer moves past it"},
      {"selection", "most-room", "Gilman et al. 2020 (seed 000 ref. [19]); seed 000 Mechanism 1, Algorithm 1 lines 9-37",
       "the SM that can still hold the most blocks of the kernel; ties to the first SM in the order"},
      {"selection", "gpc-priority", "seed 003 Sections 3, 4.1 and 4.2 (Fermi pick_sm and pick_block)",
       "a first wave of min(blocks, residency x SMs) picks: the GPC of highest priority (residency x its SMs; lowest "
       "index on ties) gets one block on every SM while more blocks than SMs remain, else one block on its next SM "
       "in %smid order, and loses that many; later blocks go to SMs in the order blocks complete; 2-D grids are "
       "picked along U/n multirows; needs the device's GPC map"},
      {"order", "natural", "textbook order", "SMs scanned 0, 1, 2, ..., N-1"},
      {"order", "even-first", "seed 000 Mechanism 1, Algorithm 1 line 9; seed 002 Section III-C",
       "SMs scanned 0, 2, ..., N-2, 1, 3, ..., N-1"},
      {"warps", "sm", "seed 002 Equation 1", "one pool of warp slots per SM"},
      {"warps", "pb-strict-rr", "seed 000 Mechanism 2.1, Section IV-B, Algorithm 1 lines 14-23",
       "warp w of a block goes to PB (p + w) mod PBs with no redirect; p += W"},
      {"warps", "pb-any", "seed 000 Section IV-B (the redirect Mechanism 2.1 rules out)",
       "a warp goes to the first PB at or after the pointer that has room; no skip"},
      {"skip_on_multiple_of_4", "true", "seed 000 Mechanism 2.2, Section IV-B",
       "with pb-strict-rr, p moves one PB further when W is a multiple of the PB count"},
      {"registers", "sm", "seed 002 Equation 1", "one register pool per SM"},
      {"registers", "pb", "seed 000 Mechanism 4 (register renaming), Section IV-D and V-B",
       "a register pool per PB; freed fragments combine"},
      {"registers", "pb-contiguous", "seed 000 Section IV-D (the contiguous allocation renaming rules out)",
       "each warp's registers first fit at the lowest free address of its PB"},
      {"registers_ignore_at_or_below", "<int>", "seed 002 Section III-C2 (32-register threshold)",
       "registers neither checked nor allocated when regs per thread <= the value"},
      {"smem", "counted", "seed 002 Equation 1", "shared memory as a pool per SM"},
      {"smem", "contiguous-first-fit", "seed 000 Mechanism 4, Section IV-D and V-B",
       "a block takes the lowest-address hole that fits, within the SM's current configuration"},
      {"smem_ignore_below", "<int>", "seed 002 Section III-C2 (3 KB threshold)",
       "shared memory neither checked nor allocated when S (rounded, reserved included) is below the value"},
      {"smem_config", "none", "pre-Volta view", "every SM always has the device's largest configuration"},
      {"smem_config", "tpc", "seed 000 Mechanism 3, Section IV-C, Algorithm 1 lines 10-12 and 26-27",
       "the first block into an idle TPC sets both SMs to its kernel's config_s; a busy TPC takes only kernels whose config_s fits"},
      {"local", "ignore", "-", "local memory plays no part"},
      {"local", "gpu-config", "seed 000 Algorithm 1 lines 1-3, Section III-B",
       "the first block on an idle GPU sets the local configuration; a kernel needing more waits for an idle GPU"},
      {"capacity", "blocks", "seed 000 Algorithm 1 with limit_w divided by W (the evident intent)",
       "min(limit_b, floor(limit_w / W), limit_s) blocks"},
      {"capacity", "literal", "seed 000 Algorithm 1 line 28 as printed",
       "min(limit_b, limit_w, limit_s) mixing warps and blocks; 0 where one block does not fit"},
      {"issue", "single", "seed 000 Algorithm 1 (one block per decision)", "every block is placed by its own selection"},
      {"issue", "paired", "tbcheck issue 6, from the ntbs recordings (../shared/external/ntbs, RTX 3090 and A100 Test2)",
       "while a kernel that started with >= 2 x SMs + 5 blocks has >= 2 x SMs + 3 left, each selection places two "
       "consecutive blocks on the chosen SM (the second only if it fits there at the same instant)"},
      {"issue", "paired-cc8", "tbcheck issue 6 (as paired; the V100 Test2 recordings show no pairs)",
       "paired on devices of compute capability 8.0 or later, single before"},
      {"issue", "device", "tbcheck issue 14, from the ntbs recordings of V100, RTX 2080 Ti, RTX 3090 and A100 (Test2)",
       "paired where the device file says issue_pairs (same leaders as paired), and the decisions from "
       "issue_pass_from on handed out issue_pass at a time: their first blocks, then their second blocks"},
  };
  return table;
}

namespace {

template <typename E>
struct Names {
  std::vector<std::pair<std::string_view, E>> items;
  std::string_view name(E e) const {
    for (auto& [n, v] : items)
      if (v == e) return n;
    return "?";
  }
};

const Names<Selection> kSelection{{{"round-robin", Selection::RoundRobin},
                                   {"most-room", Selection::MostRoom},
                                   {"gpc-priority", Selection::GpcPriority}}};
const Names<Order> kOrder{{{"natural", Order::Natural}, {"even-first", Order::EvenFirst}}};
const Names<Warps> kWarps{{{"sm", Warps::Sm}, {"pb-strict-rr", Warps::PbStrictRR}, {"pb-any", Warps::PbAny}}};
const Names<Registers> kRegisters{
    {{"sm", Registers::Sm}, {"pb", Registers::Pb}, {"pb-contiguous", Registers::PbContiguous}}};
const Names<Smem> kSmem{{{"counted", Smem::Counted}, {"contiguous-first-fit", Smem::ContiguousFirstFit}}};
const Names<SmemConfig> kSmemConfig{{{"none", SmemConfig::None}, {"tpc", SmemConfig::Tpc}}};
const Names<Local> kLocal{{{"ignore", Local::Ignore}, {"gpu-config", Local::GpuConfig}}};
const Names<Capacity> kCapacity{{{"blocks", Capacity::Blocks}, {"literal", Capacity::Literal}}};
const Names<Issue> kIssue{{{"single", Issue::Single}, {"paired", Issue::Paired}, {"paired-cc8", Issue::PairedCc8},
                         {"device", Issue::FromDevice}}};

template <typename E>
void read_option(const ObjectReader& r, std::string_view key, const Names<E>& names, E& out) {
  if (!r.has(key)) return;
  std::string v = r.string(key);
  std::vector<std::string_view> valid;
  for (auto& [n, e] : names.items) {
    if (n == v) {
      out = e;
      return;
    }
    valid.push_back(n);
  }
  r.fail(key, fmt::format("unknown option '{}'; valid options are: {}", v, fmt::join(valid, ", ")));
}

const std::vector<std::string> kHypothesisKeys = {
    "name", "base", "source", "description", "selection", "order", "warps", "skip_on_multiple_of_4", "registers",
    "registers_ignore_at_or_below", "smem", "smem_ignore_below", "smem_config", "local", "capacity", "issue"};
// Required without a base; "issue" came later and defaults to single so older files stay valid.
const std::vector<std::string_view> kMechanismKeys = {
    "selection", "order", "warps", "skip_on_multiple_of_4", "registers", "registers_ignore_at_or_below",
    "smem", "smem_ignore_below", "smem_config", "local", "capacity"};

// The shipped set, in the order DESIGN.md lists them.
const std::vector<std::string_view> kShippedOrder = {
    "round-robin",       "most-room",       "olmedo",
    "alg1",              "alg1-literal",    "alg1-no-skip",
    "alg1-pb-any",       "alg1-counted-smem", "alg1-no-tpc-config",
    "alg1-natural-order", "alg1-contiguous-regs", "alg1-paired",
    "fermi"};

Hypothesis parse(const json& j, const std::string& where, const std::function<const Hypothesis*(const std::string&)>& base_of) {
  ObjectReader r(j, where, "", kHypothesisKeys);
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
    for (auto key : kMechanismKeys)
      if (!r.has(key)) r.fail(key, "required field is missing (give every mechanism, or a \"base\" to start from)");
  }
  h.name = r.string("name");
  if (h.name.empty() || h.name.find_first_of(", \t\n/") != std::string::npos)
    r.fail("name", fmt::format("'{}' is not a usable name (non-empty, no spaces, commas or slashes)", h.name));
  // A derived hypothesis without its own source says where it comes from.
  std::string inherited = has_base ? fmt::format("based on {}: {}", base_name, h.source) : "";
  h.source = r.opt_string("source").value_or(inherited);
  h.description = r.opt_string("description").value_or("");
  read_option(r, "selection", kSelection, h.selection);
  read_option(r, "order", kOrder, h.order);
  read_option(r, "warps", kWarps, h.warps);
  if (r.has("skip_on_multiple_of_4")) h.skip_on_multiple_of_4 = r.boolean("skip_on_multiple_of_4");
  read_option(r, "registers", kRegisters, h.registers);
  if (r.has("registers_ignore_at_or_below")) {
    auto v = r.opt_integer("registers_ignore_at_or_below", 0, 1024);
    h.registers_ignore_at_or_below = v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
  }
  read_option(r, "smem", kSmem, h.smem);
  if (r.has("smem_ignore_below")) {
    auto v = r.opt_integer("smem_ignore_below", 0, 1 << 24);
    h.smem_ignore_below = v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
  }
  read_option(r, "smem_config", kSmemConfig, h.smem_config);
  read_option(r, "local", kLocal, h.local);
  read_option(r, "capacity", kCapacity, h.capacity);
  read_option(r, "issue", kIssue, h.issue);

  // Combinations no engine can give a meaning to.
  // gpc-priority places blocks by the GPC map (seed 003 Section 4.1), so an SM scan order has no part in
  // it, and paired issue (issue 6) belongs to the generic dispatcher; a device without a GPC map is
  // rejected when the hypothesis meets it (model/src/fermi.cpp).
  if (h.selection == Selection::GpcPriority && h.order != Order::Natural)
    r.fail("order", fmt::format("selection 'gpc-priority' orders SMs by their GPCs (seed 003 Section 4.1); the "
                                "order must be 'natural', not '{}'",
                                to_string(h.order)));
  if (h.selection == Selection::GpcPriority && h.issue != Issue::Single)
    r.fail("issue", fmt::format("selection 'gpc-priority' places every block by the Fermi wave or completion order; "
                                "the issue must be 'single', not '{}'",
                                to_string(h.issue)));
  if (h.pb_registers() && !h.pb_warps())
    r.fail("registers", fmt::format("'{}' pools registers per processing block, which needs warps placed on PBs "
                                    "(warps: pb-strict-rr or pb-any), not warps: sm",
                                    to_string(h.registers)));
  if (h.skip_on_multiple_of_4 && h.warps != Warps::PbStrictRR)
    r.fail("skip_on_multiple_of_4", fmt::format("the skip (Mechanism 2.2) moves the strict round-robin PB pointer; it "
                                                "needs warps: pb-strict-rr, not '{}'",
                                                to_string(h.warps)));
  return h;
}

}  // namespace

std::string_view to_string(Selection e) { return kSelection.name(e); }
std::string_view to_string(Order e) { return kOrder.name(e); }
std::string_view to_string(Warps e) { return kWarps.name(e); }
std::string_view to_string(Registers e) { return kRegisters.name(e); }
std::string_view to_string(Smem e) { return kSmem.name(e); }
std::string_view to_string(SmemConfig e) { return kSmemConfig.name(e); }
std::string_view to_string(Local e) { return kLocal.name(e); }
std::string_view to_string(Capacity e) { return kCapacity.name(e); }
std::string_view to_string(Issue e) { return kIssue.name(e); }

bool Hypothesis::leads_pair(const Device& d, int n, int b) const {
  if (issue == Issue::Single || b % 2 != 0) return false;
  if (issue == Issue::PairedCc8 && std::atof(d.cc.c_str()) < 8.0) return false;
  if (issue == Issue::FromDevice && !d.issue_pairs) return false;
  // Fitted to the ntbs Test2 recordings (issue 6): N = 2M + 4 shows no pair and N = 2M + 5 two, and the
  // singles left at the end are 2M + 1 or 2M + 2 for every N >= 2M + 5 on RTX 3090 and A100.
  return n >= 2 * d.sms + 5 && n - b >= 2 * d.sms + 3;
}

std::vector<int> Hypothesis::hand_out_order(const Device& d, int n) const {
  if (issue != Issue::FromDevice || !d.issue_pairs || d.issue_pass <= 1) return {};
  // Issue 14 (RTX 2080 Ti Test2, 202-206 blocks: 0 0 2 2 4 4 6 8 6 8 10 12 10 12 ...): the decisions are
  // the paired ones; a pass of issue_pass consecutive decisions hands out each one's first block, then
  // each pair's second. Passes are aligned at issue_pass_from; the decisions before it go one at a time.
  struct Decision {
    int slot, size;
  };
  std::vector<Decision> dec;
  bool any_pair = false;
  for (int b = 0; b < n;) {
    const int size = leads_pair(d, n, b) && b + 1 < n ? 2 : 1;
    any_pair = any_pair || size == 2;
    dec.push_back({b, size});
    b += size;
  }
  if (!any_pair) return {};
  std::vector<int> out(static_cast<size_t>(n));
  int next = 0;
  for (size_t j = 0; j < dec.size();) {
    const size_t g = std::min(j < static_cast<size_t>(d.issue_pass_from) ? size_t{1} : static_cast<size_t>(d.issue_pass),
                              dec.size() - j);
    for (size_t i = j; i < j + g; ++i) out[static_cast<size_t>(dec[i].slot)] = next++;
    for (size_t i = j; i < j + g; ++i)
      if (dec[i].size == 2) out[static_cast<size_t>(dec[i].slot) + 1] = next++;
    j += g;
  }
  for (int b = 0; b < n; ++b)
    if (out[static_cast<size_t>(b)] != b) return out;
  return {};  // passes of single decisions (or none) keep the order
}

json Hypothesis::to_json() const {
  json j = {{"name", name},
            {"source", source},
            {"description", description},
            {"selection", to_string(selection)},
            {"order", to_string(order)},
            {"warps", to_string(warps)},
            {"skip_on_multiple_of_4", skip_on_multiple_of_4},
            {"registers", to_string(registers)},
            {"registers_ignore_at_or_below", nullptr},
            {"smem", to_string(smem)},
            {"smem_ignore_below", nullptr},
            {"smem_config", to_string(smem_config)},
            {"local", to_string(local)},
            {"capacity", to_string(capacity)},
            {"issue", to_string(issue)}};
  if (registers_ignore_at_or_below) j["registers_ignore_at_or_below"] = *registers_ignore_at_or_below;
  if (smem_ignore_below) j["smem_ignore_below"] = *smem_ignore_below;
  return j;
}

bool Hypothesis::same_options(const Hypothesis& o) const {
  return selection == o.selection && order == o.order && warps == o.warps &&
         skip_on_multiple_of_4 == o.skip_on_multiple_of_4 && registers == o.registers &&
         registers_ignore_at_or_below == o.registers_ignore_at_or_below && smem == o.smem &&
         smem_ignore_below == o.smem_ignore_below && smem_config == o.smem_config && local == o.local &&
         capacity == o.capacity && issue == o.issue;
}

const std::vector<Hypothesis>& builtin_hypotheses() {
  static const std::vector<Hypothesis> all = [] {
    std::vector<Hypothesis> out;
    std::function<const Hypothesis*(const std::string&)> load = [&](const std::string& name) -> const Hypothesis* {
      for (const auto& h : out)
        if (h.name == name) return &h;
      for (const auto& f : embedded_files()) {
        if (std::string_view(f.folder) != "hypotheses" || name != f.name) continue;
        std::string where = fmt::format("corpus/hypotheses/{}.json", f.name);
        Hypothesis h = parse(parse_json_text(f.text, where), where, load);
        if (h.name != f.name) throw InputError(where, "name", fmt::format("'{}' differs from the file name", h.name));
        h.file = "builtin:" + h.name;
        out.push_back(std::move(h));
        return &out.back();
      }
      return nullptr;
    };
    out.reserve(64);  // pointers handed to `base` lookups must stay valid while loading
    for (const auto& f : embedded_files())
      if (std::string_view(f.folder) == "hypotheses") load(f.name);
    auto rank = [](const std::string& n) {
      auto it = std::find(kShippedOrder.begin(), kShippedOrder.end(), n);
      return it == kShippedOrder.end() ? kShippedOrder.size() : static_cast<size_t>(it - kShippedOrder.begin());
    };
    std::stable_sort(out.begin(), out.end(), [&](const Hypothesis& a, const Hypothesis& b) {
      return std::pair(rank(a.name), a.name) < std::pair(rank(b.name), b.name);
    });
    return out;
  }();
  return all;
}

const Hypothesis* find_builtin_hypothesis(std::string_view name) {
  for (const auto& h : builtin_hypotheses())
    if (h.name == name) return &h;
  return nullptr;
}

Hypothesis hypothesis_from_json(const json& j, const std::string& where) {
  return parse(j, where, [](const std::string& n) { return find_builtin_hypothesis(n); });
}

Hypothesis load_hypothesis_file(const std::string& path) {
  Hypothesis h = hypothesis_from_json(read_json_file(path), path);
  h.file = path;
  return h;
}

std::vector<Hypothesis> resolve_hypotheses(const std::string& spec) {
  std::vector<Hypothesis> out;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    std::string item = spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? spec.size() + 1 : comma + 1;
    if (item.empty()) continue;
    if (item == "all") {
      for (const auto& h : builtin_hypotheses()) out.push_back(h);
    } else if (const Hypothesis* h = find_builtin_hypothesis(item)) {
      out.push_back(*h);
    } else if (item.find('/') != std::string::npos || item.ends_with(".json") || std::filesystem::exists(item)) {
      out.push_back(load_hypothesis_file(item));
    } else {
      std::vector<std::string> names;
      for (const auto& b : builtin_hypotheses()) names.push_back(b.name);
      throw InputError("--hypothesis", "",
                       fmt::format("unknown hypothesis '{}'; shipped hypotheses are: {}, all, or a path to a hypothesis "
                                   "file",
                                   item, fmt::join(names, ", ")));
    }
  }
  if (out.empty()) throw InputError("--hypothesis", "", "no hypothesis given");
  // Duplicate names would make result tables ambiguous.
  for (size_t i = 0; i < out.size(); ++i)
    for (size_t k = i + 1; k < out.size(); ++k)
      if (out[i].name == out[k].name)
        throw InputError("--hypothesis", "", fmt::format("hypothesis '{}' is given twice", out[i].name));
  return out;
}

}  // namespace tbcheck::model
