// What a hypothesis does beyond its options (its PB pools, the pairs its issue rule leads, their hand-out order) and
// where hypotheses come from: the shipped set and hypothesis files, read by the registry's parser (mechanisms.cpp).
#include "tbcheck/model/hypothesis.hpp"

#include <algorithm>
#include <functional>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "mechanisms.hpp"
#include "tbcheck/model/builtin.hpp"
#include "tbcheck/model/device.hpp"

namespace tbcheck::model {

bool Hypothesis::pb_warps() const {
  switch (warps) {
    case Warps::Sm: return false;
    case Warps::PbStrictRR:
    case Warps::PbAny: return true;
  }
  return false;
}

bool Hypothesis::pb_registers() const {
  switch (registers) {
    case Registers::Sm: return false;
    case Registers::Pb:
    case Registers::PbContiguous: return true;
  }
  return false;
}

bool Hypothesis::leads_pair(const Device& d, int n, int b) const {
  switch (issue) {
    case Issue::Single: return false;
    case Issue::Paired: break;
    case Issue::PairedCc8:
      if (std::atof(d.cc.c_str()) < 8.0) return false;
      break;
    case Issue::FromDevice:
      if (!d.issue_pairs) return false;
      break;
  }
  if (b % 2 != 0) return false;
  // Fitted to the ntbs Test2 recordings: N = 2M + 4 shows no pair and N = 2M + 5 two, and the
  // singles left at the end are 2M + 1 or 2M + 2 for every N >= 2M + 5 on RTX 3090 and A100.
  return n >= 2 * d.sms + 5 && n - b >= 2 * d.sms + 3;
}

std::vector<int> Hypothesis::hand_out_order(const Device& d, int n) const {
  if (issue != Issue::FromDevice || !d.issue_pairs || d.issue_pass <= 1) return {};
  // The device issue rule (RTX 2080 Ti Test2, 202-206 blocks: 0 0 2 2 4 4 6 8 6 8 10 12 10 12 ...): the decisions are
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

// The shipped set, in the order docs/design.md lists them.
const std::vector<std::string_view> kShippedOrder = {
    "round-robin",       "most-room",       "olmedo",
    "alg1",              "alg1-literal",    "alg1-no-skip",
    "alg1-pb-any",       "alg1-counted-smem", "alg1-no-tpc-config",
    "alg1-natural-order", "alg1-contiguous-regs", "alg1-paired",
    "fermi",             "alg1-priority",   "hopper"};

const std::vector<Hypothesis>& builtin_hypotheses() {
  static const std::vector<Hypothesis> all = [] {
    std::vector<Hypothesis> out;
    std::function<const Hypothesis*(const std::string&)> load = [&](const std::string& name) -> const Hypothesis* {
      for (const auto& h : out)
        if (h.name == name) return &h;
      for (const auto& f : embedded_files()) {
        if (std::string_view(f.folder) != "hypotheses" || name != f.name) continue;
        std::string where = fmt::format("corpus/hypotheses/{}.json", f.name);
        Hypothesis h = parse_hypothesis(parse_json_text(f.text, where), where, load);
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
  return parse_hypothesis(j, where, [](const std::string& n) { return find_builtin_hypothesis(n); });
}

Hypothesis load_hypothesis_file(const std::string& path) {
  Hypothesis h = hypothesis_from_json(read_json_file(path), path);
  // Results, tables and a case's "expect" entries know a hypothesis by its name: a file taking a shipped
  // name for other options would be judged as the shipped one.
  auto options = [](const Hypothesis& x) {
    json j = x.to_json();
    j.erase("source");
    j.erase("description");
    return j;
  };
  if (const Hypothesis* shipped = find_builtin_hypothesis(h.name); shipped && options(*shipped) != options(h))
    throw InputError(path, "name",
                     fmt::format("'{}' is the name of a shipped hypothesis with other options; a hypothesis file takes a "
                                 "name of its own",
                                 h.name));
  h.file = path;
  return h;
}
}  // namespace tbcheck::model
