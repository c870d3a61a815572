// `learn`: the refutation loop. Run, on an oracle, the case that best splits the surviving hypotheses,
// drop every hypothesis the observation refutes, and repeat until one survives, none can be split, or none survives.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/oracle/oracle.hpp"
#include "tbcheck/search/distinguish.hpp"

namespace tbcheck::search {

struct LearnOptions {
  std::string oracle_spec;  // "sim:<h>", "cuda", ...
  double noise = 0.0;       // sim only
  unsigned seed = 1;        // step i runs with seed + i, so noisy steps are independent
  int repetitions = 3;
  int max_steps = 100;
  double time_unit_ms = 20.0;  // device seconds = observed makespan x unit x repetitions
  bool synthesize = true;      // ask Z3 for a splitting case when the corpus has none
  DistinguishBounds bounds;
};

// Identified: one survivor. Equivalent: every pair of survivors is proved inseparable within bounds.
// Undecided: some pair has no splitting case in the corpus and Z3 found none (gave up, or synthesis is off).
// NoneSurvives: the last observation refutes every survivor (an open question). Unstable: the oracle never
// agreed with itself on the cases left. NoDevice / Unsupported: the oracle could not run at all.
enum class LearnOutcome { Identified, Equivalent, Undecided, NoneSurvives, Unstable, NoDevice, Unsupported };
std::string_view to_string(LearnOutcome);

struct LearnStep {
  int index = 0;
  std::string case_id;
  std::string origin;  // "corpus <file>", "retargeted from <device> (blocks x a/b)", "synthesized (<pair>)"
  int kernels = 0, blocks = 0;
  std::vector<std::vector<std::string>> groups;  // survivors grouped by identical prediction
  oracle::RunStatus status = oracle::RunStatus::Ok;
  std::string oracle_note;  // majority used, unstable blocks, reason
  std::vector<std::string> dropped, survivors;
  double oracle_seconds = 0;  // wall clock of the oracle run
  double device_seconds = 0;  // modelled GPU time: makespan x unit x repetitions
};

struct LearnResult {
  LearnOutcome outcome = LearnOutcome::Equivalent;
  std::string reason;
  std::vector<std::string> survivors;
  std::vector<std::string> not_applicable;  // "<name>: <reason>": cannot run on the device at all
  std::vector<LearnStep> steps;
  int oracle_runs = 0;  // repetitions summed over steps
  double oracle_seconds = 0, device_seconds = 0, synthesis_seconds = 0;
  std::optional<model::Case> open_question;  // NoneSurvives: the contradicting case with its observation
  std::string closest;                       // NoneSurvives: the survivor that matched the most blocks
  nlohmann::json to_json() const;
};

// The scenario moved to `d`: as is when it is already on `d`; else each kernel whose blocks are a whole
// multiple of the source's TPC count gets that multiple of d's (how seed 000's cases scale with the TPC
// count), other kernels keep their blocks. nullopt when some kernel is not valid on `d`.
std::optional<model::Scenario> retarget(const model::Scenario& s, const model::Device& d);

LearnResult learn(const std::vector<model::Hypothesis>& hypotheses, const model::Device& device,
                  const std::vector<model::Case>& corpus, const LearnOptions& o,
                  const std::function<void(const LearnStep&)>& on_step = {});

}  // namespace tbcheck::search
