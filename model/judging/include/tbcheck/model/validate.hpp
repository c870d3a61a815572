// The validation run behind `tbcheck validate`: every case under every hypothesis, with the
// expectation mismatches (a case's `expect` contradicted) that make the command exit 1.
#pragma once
#include <functional>
#include <vector>

#include "tbcheck/model/compare.hpp"

namespace tbcheck::model {

struct Mismatch {
  size_t case_index = 0, hypothesis_index = 0;
  Expect expected = Expect::Pass;
  Verdict got = Verdict::Pass;
};

struct ValidationRun {
  std::vector<Case> cases;
  std::vector<Hypothesis> hypotheses;
  std::vector<std::vector<CaseResult>> results;  // [case][hypothesis]
  JudgeOptions judging;                           // what was asked; each result says what judged it

  // Expectations are judged at `l` (facts-only cases are the same at every level).
  std::vector<Mismatch> mismatches(Level l) const;
  // Per hypothesis: cases passing / failing / unknown (undecided within the order search's bound) / not
  // applicable (the hypothesis cannot run the case) at a level. Unknown is no pass and no "n/a": summaries
  // count it apart so that a run with one never reads as complete.
  struct Tally {
    size_t pass = 0, fail = 0, unknown = 0, other = 0;
  };
  Tally tally(size_t hypothesis_index, Level l) const;
  json to_json(const std::vector<Level>& levels, Level expect_level) const;
};

ValidationRun run_validation(std::vector<Case> cases, std::vector<Hypothesis> hypotheses,
                             const std::function<void()>& on_case_done = {}, const JudgeOptions& judging = {});

}  // namespace tbcheck::model
