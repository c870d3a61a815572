// Learn's results as the terminal shows them: each result type renders itself here, beside its to_json()
// (learn_result.cpp, learn_replay.cpp, learn_rules.cpp), as ContestReport::text() does; the CLI only prints.
#include <algorithm>
#include <numeric>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/search/learn.hpp"
#include "tbcheck/search/learn_replay.hpp"
#include "tbcheck/search/learn_rules.hpp"

namespace tbcheck::search {

namespace {

// A step's classes: their sizes only when there are many (the members are thousands of long names).
std::string groups_text(const LearnStep& s) {
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

// The first `shown` groups, each by its first `names` members, then how many more there are and where to see them.
std::string groups_listing(const std::vector<std::vector<std::string>>& groups, size_t shown, size_t names,
                           std::string_view more) {
  std::string t;
  for (size_t i = 0; i < groups.size() && i < shown; ++i) {
    const auto& g = groups[i];
    t += fmt::format("  {}{}\n", first(g, names), g.size() > names ? fmt::format(", ... ({} in all)", g.size()) : "");
  }
  if (groups.size() > shown) t += fmt::format("  ... {} more groups ({})\n", groups.size() - shown, more);
  return t;
}

// One line per mechanism, settled or open: both learners' results list them alike.
std::string mechanisms_text(const std::vector<MechanismStatus>& ms) {
  std::string t;
  for (const auto& m : ms)
    t += fmt::format("  {:<30} {:<8} {}\n", m.mechanism, to_string(m.state),
                     m.state == Settledness::Settled
                         ? fmt::format("{}{}", fmt::join(m.values, " = "),
                                       m.settled_by.empty() ? "" : " (settled by " + m.settled_by + ")")
                         : fmt::format("still one of: {}", fmt::join(m.values, ", ")));
  return t;
}

std::string intervals_text(const std::vector<model::ThresholdInterval>& ivs) {
  std::string t;
  for (const auto& iv : ivs)
    t += fmt::format("  {:<30} {} ({} of the device's steps of {})\n", iv.option.key, iv.range_text(), iv.cuts(),
                     iv.granularity);
  return t;
}

}  // namespace

std::string LearnStep::text() const {
  std::string t = fmt::format("step {} ({}): {} ({} kernels, {} blocks) from {}\n", index, to_string(purpose), case_id,
                              kernels, blocks, origin);
  if (!confirms.empty())
    t += fmt::format("  chosen to separate the survivor from {} neighbour(s): {}{}\n", confirms.size(),
                     first(confirms, 4), confirms.size() > 4 ? ", ..." : "");
  t += fmt::format("  predictions split the {} consistent candidate(s) into {}\n",
                   std::accumulate(group_sizes.begin(), group_sizes.end(), size_t{0}), groups_text(*this));
  t += fmt::format("  oracle: {}{}; {:.3f} s wall, {:.1f} s of device time\n", oracle::to_string(status),
                   oracle_note.empty() ? "" : " (" + oracle_note + ")", oracle_seconds, device_seconds);
  t += fmt::format("  dropped {}; {} consistent{}\n", dropped_count, survivor_count,
                   survivor_count <= 6 ? fmt::format(": {}", fmt::join(survivors, ", ")) : "");
  return t;
}

std::string LearnResult::text(const std::string& device, size_t written, const std::string& out_dir) const {
  std::string t;
  if (not_applicable.size() <= 3)
    for (const auto& n : not_applicable) t += fmt::format("set aside (not applicable to {}): {}\n", device, n);
  else
    t += fmt::format("set aside {} candidates not applicable to {} (first: {})\n", not_applicable.size(), device,
                     not_applicable.front());
  if (skipped_count > 0)
    t += fmt::format("skipped {} case(s) the oracle cannot run (not steps; first: {}: {})\n", skipped_count,
                     skipped.front().case_id, skipped.front().reason);
  t += fmt::format("\n{}: {}\n", to_string(outcome),
                   survivors.empty()          ? std::string("no candidate fits")
                   : survivors.size() <= 8 ? fmt::format("{}", fmt::join(survivors, ", "))
                                           : fmt::format("{} consistent candidates", survivors.size()));
  if (!reason.empty()) t += reason + "\n";
  if (!intervals.empty()) t += "thresholds (the values every observation allows):\n" + intervals_text(intervals);
  if (!scope.empty()) t += fmt::format("scope: {}\n", scope);
  if (!nearest.empty()) {
    t += "nearest (fewest observed cases refuted, then fewest blocks misplaced):\n";
    for (const auto& n : nearest)
      t += fmt::format("  {}: {} case(s), {} block(s); first fails {} ({})\n", n.name, n.cases_refuted,
                       n.blocks_misplaced, n.first_case, n.where);
  }
  if (equivalence.size() > 1 || (equivalence.size() == 1 && equivalence[0].size() > 1)) {
    t += fmt::format("consistent set, grouped (members of a group proved equivalent on {}):\n", device);
    // A run without corpus or synthesis can leave thousands of groups: the terminal gets the first
    // few, --json and --out every one.
    t += groups_listing(equivalence, 20, 6, "--json or --out lists every one");
  }
  if (!open_pairs.empty()) {
    constexpr size_t kShownPairs = 20;
    t += "undecided pairs (no case splits them):\n";
    for (size_t i = 0; i < open_pairs.size() && i < kShownPairs; ++i)
      t += fmt::format("  {} / {}: {}\n", open_pairs[i].a, open_pairs[i].b, open_pairs[i].why);
    if (open_pair_count > kShownPairs)
      t += fmt::format("  ... {} more pairs (--json lists {})\n", open_pair_count - kShownPairs, open_pairs.size());
  }
  if (confirmation) {
    size_t shown = 0;
    for (const auto& n : confirmation->neighbours)
      if (n.verdict == NeighbourVerdict::NotSeparated && shown++ < 12)
        t += fmt::format("  not yet separated from {} ({}): {}\n", n.name, fmt::join(n.differences, "; "), n.detail);
  }
  if (!mechanisms.empty()) t += "mechanisms:\n" + mechanisms_text(mechanisms);
  t += fmt::format("{} step(s), {} oracle run(s), {:.3f} s oracle wall time, {:.1f} s device time, {:.1f} s synthesis\n",
                   steps.size(), oracle_runs, oracle_seconds, device_seconds, synthesis_seconds);
  if (written > 0) t += fmt::format("wrote {} file(s) to {}\n", written, out_dir);
  if (open_question)
    t += fmt::format("open question (case {}):\n{}\n", open_question->id, open_question->to_json().dump(1));
  return t;
}

std::string RuleSearchResult::text(size_t observed) const {
  std::string t = fmt::format("\nrule search: {}\nscope: {}\n{} rule candidate(s), {} consistent with the {} case(s) "
                              "observed\n",
                              method, scope, candidates, consistent, observed);
  if (!learned && !nearest.empty()) {
    t += "no rule within the bound fits; nearest (fewest observed cases refuted, then fewest blocks misplaced):\n";
    for (const auto& n : nearest)
      t += fmt::format("  {} ({}): {} case(s), {} block(s); first fails {} ({})\n", n.name,
                       model::rule_text(n.hypothesis.rule), n.cases_refuted, n.blocks_misplaced, n.first_case, n.where);
  }
  return t;
}

std::string ReplayLearnResult::text(const std::string& device, const std::string& device_file) const {
  std::string t;
  // One line per file: a folder of several devices' recordings skips whole files.
  for (size_t i = 0; i < skipped.size();) {
    size_t j = i;
    while (j < skipped.size() && skipped[j].file == skipped[i].file && skipped[j].why == skipped[i].why) ++j;
    if (j - i == 1) t += fmt::format("skipped {}\n", skipped[i].message);
    else t += fmt::format("skipped {} case(s) ({}), first: {}\n", j - i, to_string(skipped[i].why), skipped[i].message);
    i = j;
  }
  if (!not_applicable.empty())
    t += fmt::format("set aside {} candidates not applicable to {} (first: {})\n", not_applicable.size(), device,
                     not_applicable.front());
  for (const auto& s : steps)
    t += fmt::format("recording {:>2} {:<32} {:>6} -> {:>6} groups{}\n", s.index, s.case_id, s.groups_before,
                     s.groups_after, s.undecided ? fmt::format(" ({} undecided: kept)", s.undecided) : "");
  if (device_differs) {
    const auto& dd = *device_differs;
    t += fmt::format(
        "\nnote: {} of the {} recording(s) of {} carry a device that differs from the one given ({}; first: {}); "
        "candidates are grouped and set aside on the device given. {}\n",
        dd.recordings, recordings, device, fmt::join(dd.fields, ", "), dd.first_file,
        device_file.empty() ? fmt::format("Their device is the \"device\" object of {}: write it to a file and give it "
                                          "with --device FILE.",
                                          dd.first_file)
                            : fmt::format("It is {}: try --device {}", device_file, device_file));
  }
  if (consistent.empty()) {
    t += fmt::format("\nno candidate fits every recording of {}\n", device);
    if (!nearest.empty()) {
      t += "nearest (fewest recordings refuted exactly, then fewest refuted in per-SM counts; of the groups refuted "
           "last):\n";
      for (const auto& n : nearest)
        t += fmt::format("  {}{}: {} of {} recording(s) refuted ({} in counts); first fails {} ({}): {}\n",
                         n.names.front(),
                         n.members > 1 ? fmt::format(" (and {} more acting alike; --json names some)", n.members - 1) : "",
                         n.recordings_refuted, recordings, n.counts_refuted, n.first_case, n.first_file, n.where);
    }
    return t;
  }
  t += fmt::format("\nconsistent with every recording: {} candidates in {} groups\n", consistent.size(),
                   consistent_groups.size());
  t += groups_listing(consistent_groups, 6, 3, "--json lists every one");
  t += "mechanisms:\n" + mechanisms_text(mechanisms);
  if (!intervals.empty())
    t += fmt::format("thresholds of {} (the values every recording allows):\n", intervals_of) + intervals_text(intervals);
  if (campaign.empty()) {
    t += fmt::format("campaign: none{}\n", consistent_groups.size() > 1 ? " (no corpus case splits the groups left)" : "");
  } else {
    t += fmt::format("campaign to settle the rest on {} (smallest first; classes over {} of the {} groups):\n", device,
                     campaign_sample, consistent_groups.size());
    for (const auto& c : campaign)
      t += fmt::format("  {} ({} kernels, {} blocks; classes {}) from {}\n", c.c.id, c.c.scenario.kernels.size(),
                       c.c.scenario.total_blocks(), fmt::join(c.class_sizes, "/"), c.origin);
    t += fmt::format("  after them the largest class of the sample left together: {} group(s)\n", unsplit_groups);
  }
  return t;
}

std::string ReplayRuleSearchResult::text(const std::string& device) const {
  return fmt::format("\nrule search ({}): {}\nscope: {}\n", candidates ? "rules in place of the selection" : "nothing to search",
                     method, scope) +
         fmt::format("{} candidates in {} groups that act alike on {}\n", replay.candidates, replay.groups, device) +
         replay.text(device);
}

}  // namespace tbcheck::search
