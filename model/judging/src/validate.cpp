// Runs cases x hypotheses and summarises: tallies per level and expectation mismatches.
// The CLI only formats what this produces, so tests can check the same numbers.
#include "tbcheck/model/validate.hpp"

#include <algorithm>

#include "tbcheck/model/error.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/stop.hpp"

namespace tbcheck::model {

ValidationRun run_validation(std::vector<Case> cases, std::vector<Hypothesis> hypotheses,
                             const std::function<void()>& on_case_done, const JudgeOptions& judging) {
  // An expectation of a hypothesis nobody knows (a typo, a file not given) would be silently never judged.
  for (const auto& c : cases)
    for (const auto& entry : c.expect)
      if (const std::string& name = entry.first;
          !find_builtin_hypothesis(name) &&
          std::none_of(hypotheses.begin(), hypotheses.end(), [&](const Hypothesis& h) { return h.name == name; }))
        throw InputError(c.file.empty() ? c.id : c.file, "expect." + name,
                         "names no shipped hypothesis and none given (-H): this expectation would never be judged");
  ValidationRun run;
  run.judging = judging;
  run.cases = std::move(cases);
  run.hypotheses = std::move(hypotheses);
  for (const auto& c : run.cases) {
    std::vector<CaseResult> row;
    row.reserve(run.hypotheses.size());
    for (const auto& h : run.hypotheses) {
      throw_if_stopped();
      row.push_back(evaluate(c, h, judging));
    }
    run.results.push_back(std::move(row));
    if (on_case_done) on_case_done();
  }
  return run;
}

std::vector<Mismatch> ValidationRun::mismatches(Level l) const {
  std::vector<Mismatch> out;
  for (size_t c = 0; c < cases.size(); ++c)
    for (size_t h = 0; h < hypotheses.size(); ++h) {
      auto it = cases[c].expect.find(hypotheses[h].name);
      if (it == cases[c].expect.end()) continue;
      Verdict got = results[c][h].at(l);
      bool ok = (it->second == Expect::Pass && got == Verdict::Pass) || (it->second == Expect::Fail && got == Verdict::Fail);
      if (!ok) out.push_back({c, h, it->second, got});
    }
  return out;
}

ValidationRun::Tally ValidationRun::tally(size_t h, Level l) const {
  Tally t;
  for (const auto& row : results) {
    Verdict v = row[h].at(l);
    if (v == Verdict::Pass) ++t.pass;
    else if (v == Verdict::Fail) ++t.fail;
    else if (v == Verdict::Unknown) ++t.unknown;
    else ++t.other;
  }
  return t;
}

json ValidationRun::to_json(const std::vector<Level>& levels, Level expect_level) const {
  json j;
  j["levels"] = json::array();
  for (Level l : levels) j["levels"].push_back(to_string(l));
  j["hypotheses"] = json::array();
  for (const auto& h : hypotheses) j["hypotheses"].push_back(h.name);
  j["cases"] = json::array();
  for (size_t c = 0; c < cases.size(); ++c) {
    json row = {{"id", cases[c].id}, {"file", cases[c].file}, {"source", cases[c].source}, {"results", json::array()}};
    for (size_t h = 0; h < hypotheses.size(); ++h) {
      json r = tbcheck::model::to_json(results[c][h]);
      auto it = cases[c].expect.find(hypotheses[h].name);
      if (it != cases[c].expect.end()) r["expect"] = it->second == Expect::Pass ? "pass" : "fail";
      row["results"].push_back(r);
    }
    j["cases"].push_back(row);
  }
  j["summary"] = json::array();
  for (size_t h = 0; h < hypotheses.size(); ++h) {
    json s = {{"hypothesis", hypotheses[h].name}};
    for (Level l : levels) {
      Tally t = tally(h, l);
      s[std::string(to_string(l))] = {{"pass", t.pass}, {"fail", t.fail}, {"unknown", t.unknown}, {"not_applicable", t.other}};
    }
    j["summary"].push_back(s);
  }
  j["timing"] = to_string(judging.timing);
  j["max_orders"] = judging.max_orders;
  j["expect_level"] = to_string(expect_level);
  j["mismatches"] = json::array();
  for (const auto& m : mismatches(expect_level))
    j["mismatches"].push_back({{"case", cases[m.case_index].id},
                               {"hypothesis", hypotheses[m.hypothesis_index].name},
                               {"expected", m.expected == Expect::Pass ? "pass" : "fail"},
                               {"got", to_string(m.got)}});
  return j;
}

}  // namespace tbcheck::model
