// `tbcheck learn` as text (report/learn.hpp): the wording of the header, the steps and the result, moved
// here from the CLI so that the command only fills the views.
#include "tbcheck/report/learn.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tbcheck::report {

namespace {

std::string groups_text(const LearnStepView& s) {
  // Many classes: their sizes only (the members are thousands of long names).
  if (s.groups.size() > 4) {
    std::vector<size_t> sizes = s.group_sizes;
    std::sort(sizes.rbegin(), sizes.rend());
    return fmt::format("{} classes of sizes {}", sizes.size(), fmt::join(sizes, ", "));
  }
  std::vector<std::string> g;
  for (size_t i = 0; i < s.groups.size(); ++i) {
    const size_t n = i < s.group_sizes.size() ? s.group_sizes[i] : s.groups[i].size();
    if (n <= 3)
      g.push_back(fmt::format("{{{}}}", fmt::join(s.groups[i], ", ")));
    else
      g.push_back(fmt::format("{{{} candidates, e.g. {}}}", n, s.groups[i].front()));
  }
  return fmt::format("{}", fmt::join(g, " "));
}

template <class T>
auto first(const std::vector<T>& v, size_t n) {
  return fmt::join(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(n, v.size())), ", ");
}

}  // namespace

std::string learn_header_text(const std::string& device, const std::string& oracle, size_t candidates,
                              bool composition_space, size_t corpus_cases, int repetitions) {
  return fmt::format("learn on {} with oracle {}: {} {}, {} corpus cases, {} repetition(s) per run\n", device, oracle,
                     candidates, composition_space ? "compositions (every valid one)" : "hypotheses", corpus_cases,
                     repetitions);
}

std::string learn_step_text(const LearnStepView& s) {
  std::string t = fmt::format("step {} ({}): {} ({} kernels, {} blocks) from {}\n", s.index, s.purpose, s.case_id,
                              s.kernels, s.blocks, s.origin);
  if (!s.confirms.empty())
    t += fmt::format("  chosen to separate the survivor from {} neighbour(s): {}{}\n", s.confirms.size(),
                     first(s.confirms, 4), s.confirms.size() > 4 ? ", ..." : "");
  t += fmt::format("  predictions split the {} consistent candidate(s) into {}\n",
                   std::accumulate(s.group_sizes.begin(), s.group_sizes.end(), size_t{0}), groups_text(s));
  t += fmt::format("  oracle: {}{}; {:.3f} s wall, {:.1f} s of device time\n", s.oracle_status,
                   s.oracle_note.empty() ? "" : " (" + s.oracle_note + ")", s.oracle_seconds, s.device_seconds);
  t += fmt::format("  dropped {}; {} consistent{}\n", s.dropped_count, s.survivor_count,
                   s.survivor_count <= 6 ? fmt::format(": {}", fmt::join(s.survivors, ", ")) : "");
  return t;
}

std::string learn_result_text(const LearnView& r) {
  std::string t;
  if (r.not_applicable.size() <= 3)
    for (const auto& n : r.not_applicable) t += fmt::format("set aside (not applicable to {}): {}\n", r.device, n);
  else
    t += fmt::format("set aside {} candidates not applicable to {} (first: {})\n", r.not_applicable.size(), r.device,
                     r.not_applicable.front());
  if (r.skipped_count > 0)
    t += fmt::format("skipped {} case(s) the oracle cannot run (not steps; first: {}: {})\n", r.skipped_count,
                     r.skipped.front().case_id, r.skipped.front().reason);
  t += fmt::format("\n{}: {}\n", r.outcome,
                   r.survivors.empty()          ? std::string("no candidate fits")
                   : r.survivors.size() <= 8 ? fmt::format("{}", fmt::join(r.survivors, ", "))
                                           : fmt::format("{} consistent candidates", r.survivors.size()));
  if (!r.reason.empty()) t += r.reason + "\n";
  if (!r.intervals.empty()) {
    t += "thresholds (the values every observation allows):\n";
    for (const auto& iv : r.intervals)
      t += fmt::format("  {:<30} {} ({} of the device's steps of {})\n", iv.option.key, iv.range_text(), iv.cuts(),
                       iv.granularity);
  }
  if (!r.scope.empty()) t += fmt::format("scope: {}\n", r.scope);
  if (!r.nearest.empty()) {
    t += "nearest (fewest observed cases refuted, then fewest blocks misplaced):\n";
    for (const auto& n : r.nearest)
      t += fmt::format("  {}: {} case(s), {} block(s); first fails {} ({})\n", n.name, n.cases_refuted,
                       n.blocks_misplaced, n.first_case, n.where);
  }
  if (r.equivalence.size() > 1 || (r.equivalence.size() == 1 && r.equivalence[0].size() > 1)) {
    t += fmt::format("consistent set, grouped (members of a group proved equivalent on {}):\n", r.device);
    // A run without corpus or synthesis can leave thousands of groups: the terminal gets the first
    // few, --json and --out every one.
    constexpr size_t kShownGroups = 20;
    for (size_t i = 0; i < r.equivalence.size() && i < kShownGroups; ++i) {
      const auto& g = r.equivalence[i];
      t += fmt::format("  {}{}\n", first(g, 6), g.size() > 6 ? fmt::format(", ... ({} in all)", g.size()) : "");
    }
    if (r.equivalence.size() > kShownGroups)
      t += fmt::format("  ... {} more groups (--json or --out lists every one)\n", r.equivalence.size() - kShownGroups);
  }
  if (!r.open_pairs.empty()) {
    constexpr size_t kShownPairs = 20;
    t += "undecided pairs (no case splits them):\n";
    for (size_t i = 0; i < r.open_pairs.size() && i < kShownPairs; ++i)
      t += fmt::format("  {} / {}: {}\n", r.open_pairs[i].a, r.open_pairs[i].b, r.open_pairs[i].why);
    if (r.open_pair_count > kShownPairs)
      t += fmt::format("  ... {} more pairs (--json lists {})\n", r.open_pair_count - kShownPairs, r.open_pairs.size());
  }
  for (size_t i = 0; i < r.not_separated.size() && i < 12; ++i)
    t += fmt::format("  not yet separated from {} ({}): {}\n", r.not_separated[i].name,
                     fmt::join(r.not_separated[i].differences, "; "), r.not_separated[i].detail);
  if (!r.mechanisms.empty()) {
    t += "mechanisms:\n";
    for (const auto& m : r.mechanisms)
      t += fmt::format("  {:<30} {:<8} {}\n", m.mechanism, m.state,
                       m.settled ? fmt::format("{}{}", fmt::join(m.values, " = "),
                                               m.settled_by.empty() ? "" : " (settled by " + m.settled_by + ")")
                                 : fmt::format("still one of: {}", fmt::join(m.values, ", ")));
  }
  t += fmt::format("{} step(s), {} oracle run(s), {:.3f} s oracle wall time, {:.1f} s device time, {:.1f} s synthesis\n",
                   r.steps, r.oracle_runs, r.oracle_seconds, r.device_seconds, r.synthesis_seconds);
  if (r.written > 0) t += fmt::format("wrote {} file(s) to {}\n", r.written, r.out_dir);
  if (r.open_question)
    t += fmt::format("open question (case {}):\n{}\n", r.open_question->id, r.open_question->to_json().dump(1));
  return t;
}

}  // namespace tbcheck::report
