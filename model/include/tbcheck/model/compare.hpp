// Judging a predicted schedule against an observation: facts one by one, and recorded schedules
// at three levels (exact, counts, sms). Results are named verdicts, never bare bools.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/schedule.hpp"

namespace tbcheck::model {

enum class Verdict { Pass, Fail, Unknown, Unsupported };
std::string_view to_string(Verdict);

enum class Level { Exact, Counts, Sms };
std::string_view to_string(Level);
Level level_from_string(const std::string& s);  // InputError on an unknown name
inline constexpr Level kAllLevels[] = {Level::Exact, Level::Counts, Level::Sms};

struct Check {
  Verdict verdict = Verdict::Pass;
  std::string detail;  // the failed fact, or the first differing block
};

struct CaseResult {
  std::string case_id;
  std::string hypothesis;
  Verdict facts = Verdict::Unsupported;        // Unsupported when the case has no facts
  std::vector<Check> fact_checks;              // one per fact, in order
  std::optional<Check> exact, counts, sms;     // present when the case has a recording
  std::string reason;                          // for Unknown / Unsupported overall
  bool ran = false;                            // false when the hypothesis could not run the case

  // The case verdict at a level: every fact passes and the recording agrees at that level.
  Verdict at(Level l) const;
  const std::optional<Check>& level(Level l) const;
  // The first failure message at a level ("" if it passes).
  std::string first_failure(Level l) const;
};

Check check_fact(const Fact& f, const Scenario& s, const Schedule& sch);
Check compare_recording(const Observation& o, const Scenario& s, const Schedule& sch, Level l);

// Simulates the case under the hypothesis and judges it.
CaseResult evaluate(const Case& c, const Hypothesis& h);

json to_json(const CaseResult& r);

}  // namespace tbcheck::model
