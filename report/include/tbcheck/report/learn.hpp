// `tbcheck learn` as text: the run's header, each step as it is taken, and the result. The views are plain
// data the CLI fills from search::LearnResult, so report sees no search header (report depends on model only).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/thresholds.hpp"

namespace tbcheck::report {

struct LearnStepView {
  int index = 0;
  std::string purpose;  // "split", "confirm", "bracket"
  std::string case_id, origin;
  int kernels = 0, blocks = 0;
  std::vector<std::string> confirms;             // the neighbours a confirming case was chosen to separate
  std::vector<size_t> group_sizes;               // consistent candidates per predicted schedule
  std::vector<std::vector<std::string>> groups;  // their names, each group cut
  std::string oracle_status, oracle_note;
  double oracle_seconds = 0, device_seconds = 0;
  size_t dropped_count = 0, survivor_count = 0;
  std::vector<std::string> survivors;
};

struct LearnNearView {
  std::string name;
  int cases_refuted = 0, blocks_misplaced = 0;
  std::string first_case, where;
};
struct LearnPairView {
  std::string a, b, why;
};
struct LearnNeighbourView {  // a neighbour confirmation did not separate
  std::string name;
  std::vector<std::string> differences;
  std::string detail;
};
struct LearnMechanismView {
  std::string mechanism, state;  // state: "settled" or "open"
  bool settled = false;
  std::vector<std::string> values;
  std::string settled_by;
};
struct LearnSkippedView {
  std::string case_id, reason;
};

struct LearnView {
  std::string device;
  std::vector<std::string> not_applicable;  // "<name>: <reason>"
  std::vector<LearnSkippedView> skipped;    // the first ones listed
  size_t skipped_count = 0;
  std::string outcome, reason;
  std::vector<std::string> survivors;
  std::vector<model::ThresholdInterval> intervals;
  std::string scope;
  std::vector<LearnNearView> nearest;
  std::vector<std::vector<std::string>> equivalence;
  std::vector<LearnPairView> open_pairs;
  size_t open_pair_count = 0;
  std::vector<LearnNeighbourView> not_separated;
  std::vector<LearnMechanismView> mechanisms;
  size_t steps = 0;
  int oracle_runs = 0;
  double oracle_seconds = 0, device_seconds = 0, synthesis_seconds = 0;
  size_t written = 0;  // files written to out_dir
  std::string out_dir;
  std::optional<model::Case> open_question;
};

// "learn on <device> with oracle <spec>: <n> <what>, <m> corpus cases, <r> repetition(s) per run".
std::string learn_header_text(const std::string& device, const std::string& oracle, size_t candidates,
                              bool composition_space, size_t corpus_cases, int repetitions);
// One step, as learn prints it when the step is taken (several lines, each ending in a newline).
std::string learn_step_text(const LearnStepView& s);
// The result after the steps: outcome, thresholds, groups, open pairs, mechanisms and totals.
std::string learn_result_text(const LearnView& r);

}  // namespace tbcheck::report
