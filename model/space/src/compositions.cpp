// The composition space (compositions.hpp): the cartesian product of option_table()'s options, without
// the combinations a hypothesis file is refused for (combination_error).
#include "tbcheck/model/compositions.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/cluster.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/resources.hpp"
#include "tbcheck/model/stop.hpp"
#include "tbcheck/model/thresholds.hpp"

namespace tbcheck::model {

const std::vector<ThresholdChoices>& threshold_set() {
  static const std::vector<ThresholdChoices> set = [] {
    std::vector<ThresholdChoices> out;
    for (const auto& m : mechanism_space()) {
      const auto& opts = threshold_options();
      const bool threshold = std::any_of(opts.begin(), opts.end(), [&](const auto& o) { return o.key == m.mechanism; });
      if (threshold || m.values.front().is_boolean()) out.push_back({std::string(m.mechanism), m.values});
    }
    return out;
  }();
  return set;
}

std::vector<std::string> mechanism_fields() {
  std::vector<std::string> out;
  for (const auto& m : mechanism_space()) out.emplace_back(m.mechanism);
  return out;
}

namespace {

// The values of each mechanism in all_compositions, in the descriptor order: every value, or only the
// default where the descriptor holds it there (model/hypothesis.hpp, Enumeration).
std::vector<std::vector<json>> space_values() {
  std::vector<std::vector<json>> out;
  for (const auto& m : mechanism_space()) {
    switch (m.enumeration) {
      case Enumeration::Every: out.push_back(m.values); break;
      case Enumeration::HeldAtDefault:
      case Enumeration::WhereNeedsMet: out.push_back({m.values.front()}); break;
    }
  }
  return out;
}

bool device_meets(OptionNeeds n, const Device& d) {
  switch (n) {
    case OptionNeeds::Nothing: return true;
    case OptionNeeds::GpcMap: return !d.gpc_of_tpc.empty();
    case OptionNeeds::ClustersAndGpcMap: return d.has_clusters() && !d.gpc_of_tpc.empty();
  }
  return false;
}

}  // namespace

std::string composition_name(const Hypothesis& h) {
  for (const auto& b : builtin_hypotheses())
    if (b.same_options(h)) return b.name;
  static const Hypothesis* base = find_builtin_hypothesis("alg1");
  if (!base) return "composition";
  // option_settings rather than to_json: this runs for every composition of the space. An unset
  // threshold is named as its JSON form, null.
  static const std::vector<OptionSetting> theirs = option_settings(*base);
  const std::vector<OptionSetting> mine = option_settings(h);
  std::string name = "alg1";
  for (size_t i = 0; i < mine.size() && i < theirs.size(); ++i)
    if (mine[i].value != theirs[i].value)
      name += fmt::format("+{}={}", mine[i].mechanism, mine[i].on || mine[i].value != "off" ? mine[i].value : "null");
  return name;
}

const std::vector<Hypothesis>& all_compositions() {
  static const std::vector<Hypothesis> all = [] {
    const auto fields = mechanism_fields();
    const std::vector<std::vector<json>> values = space_values();
    std::vector<Hypothesis> out;
    if (fields.empty()) return out;
    // An odometer over the fields that sets only the fields whose value changed; combination_error
    // leaves out what a hypothesis file with these fields would be refused for.
    Hypothesis h;
    h.source = "composition space (tbcheck learn)";
    std::vector<size_t> idx(fields.size(), 0);
    for (size_t i = 0; i < fields.size(); ++i) set_option(h, fields[i], values[i][0]);
    while (true) {
      throw_if_stopped();  // a throw leaves the static to be built by the next call
      if (!combination_error(h)) {
        Hypothesis c = h;
        c.name = composition_name(c);
        c.file = "composition:" + c.name;
        out.push_back(std::move(c));
      }
      size_t i = fields.size();
      while (i > 0) {
        --i;
        if (++idx[i] < values[i].size()) {
          set_option(h, fields[i], values[i][idx[i]]);
          break;
        }
        idx[i] = 0;
        set_option(h, fields[i], values[i][0]);
        if (i == 0) return out;
      }
    }
  }();
  return all;
}

std::vector<Hypothesis> compositions_for(const Device& d) {
  std::vector<Hypothesis> out = all_compositions();
  // The mechanisms all_compositions holds at their default until a device has what they need: every
  // combination of their values that a hypothesis file would be accepted with (combination_error: a ring
  // numbering needs a GPC-by-GPC selection), the cluster choices only on the compositions the cluster rule is
  // defined for (every generic selection: cluster_unsupported_options; the alg1 family included).
  std::vector<const MechanismSpace*> varied;
  for (const auto& m : mechanism_space()) {
    switch (m.enumeration) {
      case Enumeration::Every:
      case Enumeration::HeldAtDefault: break;
      case Enumeration::WhereNeedsMet:
        if (device_meets(m.needs, d)) varied.push_back(&m);
        break;
    }
  }
  if (varied.empty()) return out;
  const size_t n = out.size();
  for (size_t i = 0; i < n; ++i) {
    throw_if_stopped();  // tens of thousands of compositions: a second of work on a busy machine
    const bool clusters_defined = cluster_unsupported_options(out[i]).empty();
    // An odometer over the varied mechanisms, the first outermost.
    std::vector<size_t> idx(varied.size(), 0);
    while (true) {
      Hypothesis h = out[i];
      bool takes_clusters = true;
      for (size_t v = 0; v < varied.size(); ++v) {
        set_option(h, varied[v]->mechanism, varied[v]->values[idx[v]]);
        if (idx[v] != 0 && varied[v]->needs == OptionNeeds::ClustersAndGpcMap) takes_clusters = clusters_defined;
      }
      if (takes_clusters && !h.same_options(out[i]) && !combination_error(h)) {
        h.name = composition_name(h);
        h.file = "composition:" + h.name;
        out.push_back(std::move(h));
      }
      size_t v = varied.size();
      while (v > 0 && ++idx[v - 1] == varied[v - 1]->values.size()) idx[--v] = 0;
      if (v == 0) break;
    }
  }
  return out;
}

namespace {

// What a hypothesis chooses per mechanism, as text, in the descriptor order (option_settings): comparing
// these is what comparing the mechanism fields of to_json() does, without building JSON objects, which
// neighbours() would otherwise do for every composition of the space.
std::vector<std::string> option_values(const Hypothesis& h) {
  std::vector<std::string> v;
  for (auto& s : option_settings(h)) v.push_back(std::move(s.value));
  return v;
}

int distance_of(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  int d = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) d += a[i] != b[i] ? 1 : 0;
  return d;
}

// The option values of every composition of all_compositions(), built once per process like the space
// itself: neighbours() and sample_compositions() compare one hypothesis with the whole space on every call,
// and rebuilding these rows, then comparing them as text, was nearly all of their cost. Each value is coded
// as its index among the values its mechanism takes in the space, so a row compares as small integers.
struct CodedRows {
  static constexpr uint16_t kOffSpace = UINT16_MAX;  // a value no composition has (a file's own threshold)
  std::vector<std::map<std::string, uint16_t, std::less<>>> codes;  // per mechanism: value -> code
  size_t width = 0;
  std::vector<uint16_t> cells;  // composition i's codes at [i * width, (i + 1) * width)

  std::vector<uint16_t> row_of(const Hypothesis& h) const {
    const std::vector<std::string> v = option_values(h);
    std::vector<uint16_t> row(width, kOffSpace);
    for (size_t f = 0; f < width && f < v.size(); ++f)
      if (auto it = codes[f].find(v[f]); it != codes[f].end()) row[f] = it->second;
    return row;
  }
  int distance(const std::vector<uint16_t>& row, size_t i) const {
    const uint16_t* c = cells.data() + i * width;
    int d = 0;
    for (size_t f = 0; f < width; ++f) d += row[f] != c[f] ? 1 : 0;
    return d;
  }
};

const CodedRows& composition_rows() {
  static const CodedRows rows = [] {
    CodedRows r;
    const auto& all = all_compositions();
    // Coded one composition at a time: holding every composition's texts at once cost more memory than
    // the rows themselves. option_settings gives every hypothesis one value per mechanism.
    r.width = all.empty() ? 0 : option_values(all.front()).size();
    r.codes.resize(r.width);
    r.cells.reserve(all.size() * r.width);
    for (const auto& c : all) {
      const std::vector<std::string> v = option_values(c);
      for (size_t f = 0; f < r.width; ++f) {
        auto& code = r.codes[f];
        const std::string& text = f < v.size() ? v[f] : std::string();
        auto it = code.find(text);
        if (it == code.end()) it = code.emplace(text, static_cast<uint16_t>(code.size())).first;
        r.cells.push_back(it->second);
      }
    }
    return r;
  }();
  return rows;
}

}  // namespace

int option_distance(const Hypothesis& a, const Hypothesis& b) { return distance_of(option_values(a), option_values(b)); }

std::vector<Hypothesis> neighbours(const Hypothesis& h, int max_distance) {
  std::vector<std::pair<int, const Hypothesis*>> near;
  const auto& all = all_compositions();
  const CodedRows& rows = composition_rows();
  const std::vector<uint16_t> mine = rows.row_of(h);
  for (size_t i = 0; i < all.size(); ++i) {
    const int d = rows.distance(mine, i);
    if (d >= 1 && d <= max_distance) near.emplace_back(d, &all[i]);
  }
  std::stable_sort(near.begin(), near.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<Hypothesis> out;
  for (const auto& [d, c] : near) out.push_back(*c);
  return out;
}

std::vector<Hypothesis> sample_compositions(const Hypothesis& from, uint64_t seed, int count, int min_distance,
                                            int max_distance, const std::function<bool(const Hypothesis&)>& keep) {
  std::vector<const Hypothesis*> pool;
  const auto& all = all_compositions();
  const CodedRows& rows = composition_rows();
  const std::vector<uint16_t> mine = rows.row_of(from);
  for (size_t i = 0; i < all.size(); ++i) {
    if (find_builtin_hypothesis(all[i].name)) continue;  // shipped: named by its own file
    const int d = rows.distance(mine, i);
    if (d >= min_distance && d <= max_distance) pool.push_back(&all[i]);
  }
  std::mt19937_64 rng(seed);
  std::vector<Hypothesis> out;
  while (static_cast<int>(out.size()) < count && !pool.empty()) {
    const size_t k = static_cast<size_t>(rng() % pool.size());
    if (!keep || keep(*pool[k])) out.push_back(*pool[k]);
    pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(k));
  }
  return out;
}

std::string_view to_string(StateCheck c) {
  switch (c) {
    case StateCheck::Proved: return "proved";
    case StateCheck::Refuted: return "refuted";
  }
  return "?";
}

std::string StateCheckResult::summary() const {
  if (verdict == StateCheck::Proved) return fmt::format("the capacity rules agree on all {} (SM state, block) pairs", compared);
  return fmt::format("the capacity rules differ: {}", counterexample);
}

json StateCheckResult::to_json() const {
  json j = {{"verdict", to_string(verdict)}, {"compared", compared}};
  if (!counterexample.empty()) j["counterexample"] = counterexample;
  return j;
}

namespace {

bool same_parts(const CapacityParts& a, const CapacityParts& b) {
  return a.limit_b == b.limit_b && a.limit_w == b.limit_w && a.limit_regs_w == b.limit_regs_w && a.limit_s == b.limit_s &&
         a.config_blocked == b.config_blocked && a.blocks == b.blocks && a.value == b.value;
}

StateCheckResult check_pb_any_as_sm(const Device& d) {
  StateCheckResult r;
  Hypothesis any;
  any.registers = Registers::Sm;
  any.warps = Warps::PbAny;
  any.skip_on_multiple_of_4 = false;
  any.smem = Smem::Counted;
  // Literal capacity: its value is min(limit_b, limit_w, limit_s), and `blocks` (the value under
  // capacity: blocks) is compared too, so both capacity options are covered.
  any.capacity = Capacity::Literal;
  Hypothesis sm = any;
  sm.warps = Warps::Sm;
  const SmLimits lim(d);
  const int pbs = d.pbs_per_sm, slots = lim.warp_slots_per_pb;
  if (pbs < 1 || pbs > kMaxPbs) {
    r.counterexample = fmt::format("{} PBs per SM is outside 1..{}", pbs, kMaxPbs);
    return r;
  }
  if (int64_t{slots} * pbs != d.max_warps_per_sm) {
    // The SM pool would hold warps the PBs cannot: a state the enumeration below does not reach.
    r.counterexample = fmt::format("on {}: {} PBs x {} warp slots != {} warps per SM", d.name, pbs, slots,
                                   d.max_warps_per_sm);
    return r;
  }
  const int max_w = d.max_threads_per_block / kThreadsPerWarp;
  // A register demand that binds at half the SM's warps, and none.
  const int binding_regs = std::max(1, d.regs_per_sm / std::max(1, d.max_warps_per_sm) * 2);
  SmState a, s;
  std::vector<int> v(static_cast<size_t>(pbs), 0);
  while (true) {
    int total = 0;
    for (int j = 0; j < pbs; ++j) {
      a.pb_warps[static_cast<size_t>(j)] = v[static_cast<size_t>(j)];
      total += v[static_cast<size_t>(j)];
    }
    s.warps = total;
    for (int regs : {0, binding_regs}) {
      a.regs = s.regs = std::min(d.regs_per_sm, total * regs);
      for (int w = 1; w <= max_w; ++w) {
        BlockNeeds n;
        n.warps = w;
        n.regs_per_warp = regs;
        const CapacityParts want = capacity_of_state(lim, sm, s, n, d.max_smem_config_bytes(), false);
        for (int p = 0; p < (regs == 0 ? pbs : 1); ++p) {
          a.pb_pointer = p;
          ++r.compared;
          const CapacityParts got = capacity_of_state(lim, any, a, n, d.max_smem_config_bytes(), false);
          if (same_parts(want, got)) continue;
          r.counterexample = fmt::format("on {}: PB warps [{}], pointer {}, a block of {} warps x {} registers: pb-any "
                                         "places {} warps ({} blocks), sm {} ({} blocks)",
                                         d.name, fmt::join(v, ", "), p, w, regs, got.limit_w, got.blocks, want.limit_w,
                                         want.blocks);
          return r;
        }
      }
    }
    int j = 0;
    while (j < pbs && ++v[static_cast<size_t>(j)] > slots) v[static_cast<size_t>(j++)] = 0;
    if (j == pbs) break;
  }
  r.verdict = StateCheck::Proved;
  return r;
}

}  // namespace

StateCheckResult pb_any_as_sm(const Device& d) {
  // Keyed by the device itself: effective_options asks for every candidate of a composition space, and
  // writing the device as JSON per call cost more than the learner's first split.
  static std::mutex mu;
  static std::vector<std::pair<Device, StateCheckResult>> memo;  // a process meets a handful of devices
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& [dev, r] : memo)
      if (dev == d) return r;
  }
  StateCheckResult r = check_pb_any_as_sm(d);
  std::lock_guard<std::mutex> lock(mu);
  for (const auto& [dev, known] : memo)
    if (dev == d) return known;
  memo.emplace_back(d, r);
  return r;
}

bool pb_any_acts_as_sm(const Hypothesis& h, const Device& d) {
  return h.registers == Registers::Sm && h.warps == Warps::PbAny && pb_any_as_sm(d).verdict == StateCheck::Proved;
}

}  // namespace tbcheck::model
