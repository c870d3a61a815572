// `check`: the third job of docs/design.md. A user's hypothesis is explained (each option with its paper
// citation), validated on every corpus case at the three levels, and told apart from each shipped one.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/search/distinguish.hpp"

namespace tbcheck::search {

struct OptionExplanation {
  std::string mechanism, value, cites, meaning;
};

// One row per mechanism field of the hypothesis-file shape, with the option_table row it chose; a field
// that is off (skip false, no threshold) reads "off" with the meaning of not having it.
std::vector<OptionExplanation> explain(const model::Hypothesis& h);

// Mechanism fields on which two hypotheses choose differently ("smem: counted vs contiguous-first-fit").
std::vector<std::string> option_differences(const model::Hypothesis& a, const model::Hypothesis& b);

// How the synthesis step is used: never; only for shipped hypotheses no corpus case separates from the
// user's (the default: a corpus case is already a witness, found in milliseconds); or for every one.
enum class SynthesisMode { None, Unseparated, All };
std::string_view to_string(SynthesisMode);

struct CheckOptions {
  model::Device device = model::builtin_device("rtx3090", "check", "--device");  // the device synthesis targets
  DistinguishBounds bounds;        // small by default: see default_check_bounds()
  SynthesisMode synthesis = SynthesisMode::Unseparated;
  model::JudgeOptions judging;     // how the corpus' recordings judge the hypothesis
};
// Bounds that keep one pair to seconds: up to 2 kernels of up to 2 blocks (3 in all), 1 TPC, short queries.
DistinguishBounds default_check_bounds();

enum class PairVerdict { SameOptions, SeparatedByCorpus, SeparatedBySynthesis, EquivalentWithinBounds, Unknown, Unsupported };
std::string_view to_string(PairVerdict);

struct PairCheck {
  std::string other;
  std::vector<std::string> differences;
  PairVerdict verdict = PairVerdict::Unknown;
  std::string witness_case;   // the separating corpus case, or the synthesized case's id
  std::string detail;         // first difference, the bounds, or why unknown
  std::optional<PairResult> synthesis;
};

// A composition one or two option changes from the checked one, and corpus cases on which they differ.
struct NeighbourSeparation {
  std::string name;
  std::vector<std::string> differences;
  std::vector<std::string> cases;  // the first few separating corpus cases, in corpus order; empty: none
};

struct LevelTally {
  model::Level level = model::Level::Exact;
  size_t pass = 0, fail = 0, unknown = 0, other = 0;  // other: not applicable
};

struct CheckReport {
  model::Hypothesis hypothesis;
  std::vector<OptionExplanation> options;
  std::optional<std::string> same_as;  // a shipped hypothesis with the very same options
  size_t cases = 0;
  model::Timing timing = model::Timing::Model;  // asked for
  size_t traced = 0;  // cases judged trace-driven (recorded ends)
  std::vector<LevelTally> tallies;  // exact, counts, sms
  struct Failure {
    std::string case_id, file, level, detail;
  };
  std::vector<Failure> failures;  // at the strictest failing level, one per failing case
  std::vector<std::string> expectation_mismatches;  // a case's `expect` for this hypothesis' name contradicted
  std::vector<PairCheck> pairs;
  std::vector<NeighbourSeparation> neighbours;
  double solver_seconds = 0;
  nlohmann::json to_json() const;
};

// Runs the whole check. `against` are the hypotheses to tell apart from (normally the shipped ones);
// on_pair is called before each pair's work (for progress).
CheckReport check_hypothesis(const model::Hypothesis& h, const std::vector<model::Case>& corpus,
                             const std::vector<model::Hypothesis>& against, const CheckOptions& o,
                             const std::function<void(const std::string& other)>& on_pair = {});

}  // namespace tbcheck::search
