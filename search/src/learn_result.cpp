// Learn's result: the names and JSON forms of its enums, the confirmation summary, the result's JSON, and
// how an answer stands against the composition that played the device.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/compositions.hpp"
#include "tbcheck/search/learn.hpp"

namespace tbcheck::search {

std::string_view to_string(LearnSpace s) {
  switch (s) {
    case LearnSpace::Compositions: return "compositions";
    case LearnSpace::List: return "list";
  }
  return "?";
}

std::string_view to_string(LearnOutcome o) {
  switch (o) {
    case LearnOutcome::Identified: return "identified";
    case LearnOutcome::Equivalent: return "equivalent";
    case LearnOutcome::Unconfirmed: return "unconfirmed";
    case LearnOutcome::Undecided: return "undecided";
    case LearnOutcome::NoneSurvives: return "none-survives";
    case LearnOutcome::Unstable: return "unstable";
    case LearnOutcome::NoDevice: return "no-device";
    case LearnOutcome::Unsupported: return "unsupported";
  }
  return "?";
}

std::string_view to_string(StepPurpose p) {
  switch (p) {
    case StepPurpose::Split: return "split";
    case StepPurpose::Confirm: return "confirm";
    case StepPurpose::Bracket: return "bracket";
  }
  return "?";
}

std::string_view to_string(NeighbourVerdict v) {
  switch (v) {
    case NeighbourVerdict::Separated: return "separated";
    case NeighbourVerdict::Equivalent: return "equivalent";
    case NeighbourVerdict::NotSeparated: return "not-separated";
  }
  return "?";
}

std::string_view to_string(Settledness s) {
  switch (s) {
    case Settledness::Settled: return "settled";
    case Settledness::Open: return "open";
  }
  return "?";
}

nlohmann::json MechanismStatus::to_json() const {
  return {{"mechanism", mechanism},
          {"state", to_string(state)},
          {"values", values},
          {"settled_by", settled_by.empty() ? nlohmann::json() : nlohmann::json(settled_by)}};
}

size_t Confirmation::count(NeighbourVerdict v) const {
  return static_cast<size_t>(
      std::count_if(neighbours.begin(), neighbours.end(), [&](const NeighbourCheck& n) { return n.verdict == v; }));
}

std::vector<std::string> Confirmation::not_separated() const {
  std::vector<std::string> out;
  for (const auto& n : neighbours)
    if (n.verdict == NeighbourVerdict::NotSeparated) out.push_back(n.name);
  return out;
}

std::string Confirmation::summary() const {
  std::string s = fmt::format("{} agrees with {} case(s); separated from {} of its {} neighbours", survivor,
                              cases_agreed, count(NeighbourVerdict::Separated), neighbours.size());
  if (const size_t e = count(NeighbourVerdict::Equivalent)) s += fmt::format("; {} proved equivalent on this device", e);
  const auto open = not_separated();
  if (!open.empty()) s += fmt::format("; not yet separated from: {}", fmt::join(open, ", "));
  return s;
}

nlohmann::json LearnResult::to_json() const {
  nlohmann::json steps_j = nlohmann::json::array();
  for (const auto& s : steps)
    steps_j.push_back({{"step", s.index},
                       {"purpose", to_string(s.purpose)},
                       {"case", s.case_id},
                       {"origin", s.origin},
                       {"kernels", s.kernels},
                       {"blocks", s.blocks},
                       {"group_sizes", s.group_sizes},
                       {"groups", s.groups},
                       {"oracle_status", oracle::to_string(s.status)},
                       {"oracle_note", s.oracle_note},
                       {"dropped_count", s.dropped_count},
                       {"dropped", s.dropped},
                       {"survivor_count", s.survivor_count},
                       {"survivors", s.survivors},
                       {"confirms", s.confirms},
                       {"oracle_seconds", s.oracle_seconds},
                       {"device_seconds", s.device_seconds}});
  nlohmann::json mech = nlohmann::json::array();
  for (const auto& m : mechanisms)
    mech.push_back(m.to_json());
  nlohmann::json open = nlohmann::json::array();
  for (const auto& p : open_pairs) open.push_back({{"a", p.a}, {"b", p.b}, {"why", p.why}});
  nlohmann::json j = {{"space", to_string(space)},
                      {"outcome", to_string(outcome)},
                      {"reason", reason},
                      {"candidates", candidates},
                      {"survivors", survivors},
                      {"equivalence", equivalence},
                      {"open_pairs", open},
                      {"open_pair_count", open_pair_count},
                      {"mechanisms", mech},
                      {"steps", steps_j},
                      {"oracle_runs", oracle_runs},
                      {"oracle_seconds", oracle_seconds},
                      {"device_seconds", device_seconds},
                      {"synthesis_seconds", synthesis_seconds},
                      {"not_applicable", not_applicable},
                      {"skipped_count", skipped_count}};
  nlohmann::json sk = nlohmann::json::array();
  for (const auto& c : skipped) sk.push_back({{"case", c.case_id}, {"reason", c.reason}});
  j["skipped"] = sk;
  nlohmann::json iv = nlohmann::json::array();
  for (const auto& i : intervals) iv.push_back(i.to_json());
  j["thresholds"] = iv;
  j["scope"] = scope;
  if (confirmation) {
    nlohmann::json nb = nlohmann::json::array();
    for (const auto& n : confirmation->neighbours)
      nb.push_back({{"name", n.name},
                    {"differences", n.differences},
                    {"verdict", to_string(n.verdict)},
                    {"case", n.case_id},
                    {"detail", n.detail}});
    j["confirmation"] = {{"survivor", confirmation->survivor},
                         {"cases_agreed", confirmation->cases_agreed},
                         {"neighbours", confirmation->neighbours.size()},
                         {"separated", confirmation->count(NeighbourVerdict::Separated)},
                         {"equivalent", confirmation->count(NeighbourVerdict::Equivalent)},
                         {"not_separated", confirmation->not_separated()},
                         {"summary", confirmation->summary()},
                         {"checks", nb}};
  }
  if (open_question) {
    j["open_question"] = open_question->to_json();
    j["closest"] = closest;
    nlohmann::json nm = nlohmann::json::array();
    for (const auto& n : nearest) nm.push_back(n.to_json());
    j["nearest"] = nm;
  }
  return j;
}

nlohmann::json NearMiss::to_json() const {
  nlohmann::json j = {{"name", name},
                      {"cases_refuted", cases_refuted},
                      {"blocks_misplaced", blocks_misplaced},
                      {"first_case", first_case},
                      {"where", where}};
  if (hypothesis.selection == model::Selection::Rule) j["rule"] = model::rule_text(hypothesis.rule);
  return j;
}

std::string_view to_string(AnswerGrade g) {
  switch (g) {
    case AnswerGrade::Named: return "named";
    case AnswerGrade::NoneFits: return "none-fits";
    case AnswerGrade::Wrong: return "WRONG";
    case AnswerGrade::Open: return "open";
  }
  return "?";
}

AnswerGrade grade_answer(const LearnResult& r, const model::Hypothesis& truth) {
  if (r.outcome == LearnOutcome::NoneSurvives) return AnswerGrade::NoneFits;
  if (r.outcome != LearnOutcome::Identified && r.outcome != LearnOutcome::Equivalent) return AnswerGrade::Open;
  // Thresholds are judged as intervals: named when the other options agree and every interval holds the truth's.
  const auto& opts = model::threshold_options();
  auto without_thresholds = [&](model::Hypothesis h) {
    for (const auto& o : opts) model::set_threshold(h, o, std::nullopt);
    return h;
  };
  bool within = true;
  for (const auto& iv : r.intervals) within = within && iv.contains(model::threshold_of(truth, iv.option));
  for (const auto& h : r.consistent)
    if (r.intervals.empty() ? h.same_options(truth)
                            : within && without_thresholds(h).same_options(without_thresholds(truth)))
      return AnswerGrade::Named;
  // The truth as a neighbour proved to make the same decisions on this device is named too.
  if (r.confirmation)
    for (const auto& n : r.confirmation->neighbours)
      if (n.verdict == NeighbourVerdict::Equivalent && n.name == model::composition_name(truth)) return AnswerGrade::Named;
  return AnswerGrade::Wrong;
}

}  // namespace tbcheck::search
