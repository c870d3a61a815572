// Predictions that know their limits: which candidate hypotheses survive the evidence for a
// scenario's device, where the survivors' schedules of the scenario agree and where they part, and the case that settles it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/validate.hpp"

namespace tbcheck::search {

// Which evidence judged the candidates: the scenario's own device, other devices of its architecture
// (when the device has no case), or none (no case of either: every candidate stands).
enum class EvidenceScope { Device, Architecture, None };
std::string_view to_string(EvidenceScope);

struct Elimination {
  std::string hypothesis;
  std::string case_id;  // the first evidence case it fails (that another candidate passes)
  std::string detail;   // its first failure there
};

// One block on which the survivors part, and who takes which side ("SM 6 at 0": hypotheses).
struct ContestedBlock {
  std::string kernel;
  int block = 0;
  struct Side {
    int sm = 0;
    int64_t start = 0;
    std::vector<std::string> hypotheses;
  };
  std::vector<Side> sides;
};

// What settles two sides on hardware: distinguish's witness (a case smaller than the scenario, with
// both predictions), or the scenario itself when distinguish found none or was not asked.
enum class SettleBy { Witness, Scenario };
std::string_view to_string(SettleBy);

struct SettlingCase {
  std::string h1, h2;        // representatives of two sides (first of each in candidate order)
  SettleBy by = SettleBy::Scenario;
  std::string distinguish;   // distinguish_pair's outcome and route or reason ("" when not asked)
  std::optional<model::Case> witness;  // by == Witness: the case, on the full device
};

struct ContestReport {
  std::string device, architecture;
  EvidenceScope scope = EvidenceScope::None;
  std::vector<std::string> evidence_devices;  // devices whose cases judged the candidates
  size_t evidence_cases = 0;                   // cases of those devices with a hardware or paper observation
  std::vector<std::string> open_cases;         // evidence no candidate passes: it eliminates nobody
  std::vector<std::string> candidates;         // that can run the scenario
  std::vector<std::string> not_run;            // candidates that cannot run it ("name: reason")
  std::vector<Elimination> eliminated;
  std::vector<std::string> survivors;
  // Survivors with identical schedules of the scenario, largest group first; one group = settled.
  std::vector<std::vector<std::string>> groups;
  size_t blocks = 0, settled_blocks = 0;
  std::vector<ContestedBlock> contested;  // in kernel, block order
  std::vector<SettlingCase> settling;     // the first group against each other group

  bool settled() const { return contested.empty(); }
  model::json to_json() const;
  std::string text(size_t max_blocks = 12) const;  // the summary predict prints
};

struct ContestOptions {
  bool synthesize = true;  // ask distinguish for a smaller settling case (its default bounds)
  unsigned query_timeout_ms = 2000;  // per Z3 query
  unsigned pair_budget_ms = 4000;    // Z3 time per pair of sides
  model::JudgeOptions judging;       // how the evidence's recordings judge the candidates
};

// The judging half of contest(), once per device (validate --report asks it for many scenarios).
struct Judgement {
  std::string device, architecture;
  EvidenceScope scope = EvidenceScope::None;
  std::vector<std::string> evidence_devices;
  size_t evidence_cases = 0;
  std::vector<std::string> open_cases;
  std::vector<Elimination> eliminated;
  std::vector<std::string> survivors;  // candidate names, in candidate order
};
Judgement judge(const model::Device& d, const std::vector<model::Hypothesis>& candidates,
                const std::vector<model::Case>& evidence, const model::JudgeOptions& judging = {});

// Judges `candidates` on `evidence` (cases with a hardware or paper observation; synthetic ones are
// predictions, not evidence) of the scenario's device, else of its architecture, and compares the
// survivors' schedules of `sc`. A candidate survives when it passes (exact) every evidence case that
// some candidate passes.
ContestReport contest(const model::Scenario& sc, const std::vector<model::Hypothesis>& candidates,
                      const std::vector<model::Case>& evidence, const ContestOptions& o = {});
// The comparing half: `j` judged the candidates for sc's device.
ContestReport contest(const model::Scenario& sc, const std::vector<model::Hypothesis>& candidates, const Judgement& j,
                      const ContestOptions& o = {});

// validate --report: every case of the run that is a prediction (synthetic or no observation), contested
// among the run's hypotheses on the run's own evidence (judged once per device).
struct CaseContest {
  std::string case_id;
  ContestReport report;
};
std::vector<CaseContest> contest_predictions(const model::ValidationRun& run, const ContestOptions& o = {});

}  // namespace tbcheck::search
