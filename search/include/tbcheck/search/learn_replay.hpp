// `learn --oracle replay:<recordings>`: the version space judged against what a real GPU was recorded doing,
// without a GPU: which compositions fit, which mechanisms the recordings settle, and the cases that would settle the rest.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/thresholds.hpp"
#include "tbcheck/search/learn.hpp"

namespace tbcheck::search {

struct ReplayLearnOptions {
  model::JudgeOptions judging;  // how a candidate is judged against a recording (as validate: model timing)
  LearnSpace space = LearnSpace::List;
  size_t split_sample = 96;     // consistent groups a case's split is estimated on (as LearnOptions::split_sample)
  int campaign_cases = 12;      // at most this many cases in the proposed campaign
  int jobs = 1;                 // threads judging candidates against recordings; the answer does not depend on it
  // For progress: on_stage(what, units) as a stage of the work begins (units: judgements or cases it will
  // take, 0 when unknown), on_unit() as each unit ends. Called from the calling thread only.
  std::function<void(const std::string&, size_t)> on_stage;
  std::function<void()> on_unit;
};

// Why a recording took no part: recorded on another device, or nothing recorded to judge against.
enum class ReplaySkip { OtherDevice, NoRecording };
std::string_view to_string(ReplaySkip);
struct SkippedRecording {
  std::string file, case_id;
  ReplaySkip why = ReplaySkip::OtherDevice;
  std::string message;  // "<file>: case <id> was recorded on v100, not rtx3090"
};

// One recording applied: how many consistent groups it left, in the order the recordings were applied
// (the one refuting the most of a sample first, as learn chooses its next case).
struct ReplayStep {
  int index = 0;
  std::string case_id, file;
  size_t groups_before = 0, groups_after = 0;
  size_t undecided = 0;  // groups the judge could not decide (unknown over the admissible orders): kept
};

// A case of the proposed campaign: no recording yet; `splits` says how it divides the consistent groups.
struct CampaignCase {
  model::Case c;
  std::string origin;                // "corpus <file>" or "... retargeted from <device>"
  std::vector<size_t> class_sizes;   // predicted classes over the sample of consistent groups, largest first
};

// When no group fits every recording: a group near the device, judged against every recording it was not yet
// judged on. Ranked by recordings refuted (exact), then those refuted even in per-SM counts (under trace timing,
// counts searched within a short bound a recording: one the search leaves unknown is not counted).
struct ReplayNearMiss {
  std::vector<std::string> names;  // the group's members (the first few) and how many in all
  size_t members = 0;
  model::Hypothesis hypothesis;    // the group's first member: a base for the rule search (learn_rules.hpp)
  int recordings_refuted = 0, counts_refuted = 0;
  std::string first_case, first_file;  // the first recording (in applied order) it fails
  std::string where;                   // its first differing block there: "k1 block 3: predicted SM 4, observed SM 5"
};

// Recordings of the device's name whose device object differs from the one given (a measured SM order or
// GPC map, say): they are judged on their own device, but candidates are grouped and set aside on the given one.
struct DeviceDifference {
  size_t recordings = 0;                // how many differ
  std::vector<std::string> fields;      // the device fields that differ, in to_json() order
  std::string first_file, first_case;   // the first such recording
  model::Device carried;                // the device the first one carries
};

// What the recordings say. `consistent` holds every candidate that passes every applied recording; groups
// are candidates that act alike on the device (learn's one-machine rule), judged once for all their members.
struct ReplayLearnResult {
  LearnSpace space = LearnSpace::List;
  size_t candidates = 0, groups = 0;  // after those not applicable to the device
  size_t recordings = 0;              // recordings of the device taken part (not skipped)
  std::vector<std::string> not_applicable;
  std::vector<SkippedRecording> skipped;
  std::vector<ReplayStep> steps;
  std::vector<model::Hypothesis> consistent;
  std::vector<std::vector<std::string>> consistent_groups;  // names, per group
  std::vector<MechanismStatus> mechanisms;
  // The thresholds every recording allows for the first consistent group's representative (empty when none).
  std::string intervals_of;
  std::vector<model::ThresholdInterval> intervals;
  std::vector<CampaignCase> campaign;
  size_t campaign_sample = 0;      // consistent groups the campaign's splits were computed on
  size_t unsplit_groups = 0;       // largest predicted class left after the whole campaign (1: every group split)
  int evaluations = 0;             // candidate-recording judgements made
  std::vector<ReplayNearMiss> nearest;            // none fits: the nearest groups, nearest first
  std::optional<DeviceDifference> device_differs;  // some recordings carry another device of the same name
  // The oracle learner's outcome for the same state, so that a script reads both learners alike: none-survives
  // (no candidate fits), unconfirmed (one group fits; recordings cannot confirm it against its neighbours) or
  // undecided (several groups fit; the campaign lists cases that would split them).
  LearnOutcome outcome() const;
  // Why, in a sentence, as the oracle learner's `reason`; and what the answer was found among (its `scope`).
  std::string reason() const;
  std::string scope() const;
  // Beside the fields of its own, the keys both learners share: space, outcome, reason, candidates, survivors,
  // equivalence (the surviving groups, by name), mechanisms, thresholds, scope.
  nlohmann::json to_json() const;
  // Everything learn prints after its header: skipped recordings, steps, then the consistent groups with their
  // mechanisms, thresholds and campaign, or the nearest when none fits (learn_text.cpp). `device_file`: a file of
  // the command's that holds the device the recordings carry, where they carry another.
  std::string text(const std::string& device, const std::string& device_file = "") const;
};

// Recordings not on `device` are skipped with a message naming their file; bad input throws model::InputError
// (no recordings left, no candidate applicable).
ReplayLearnResult learn_from_recordings(const std::vector<model::Hypothesis>& candidates, const model::Device& device,
                                        const std::vector<model::Case>& recordings,
                                        const std::vector<model::Case>& corpus, const ReplayLearnOptions& o);

}  // namespace tbcheck::search
