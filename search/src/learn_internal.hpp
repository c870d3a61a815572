// Internal to learn: the case pool, the version space, the confirmation, refit and bracketing state, and the
// Learner over them whose steps the learn_*.cpp files implement (pool, split, step, confirm; learn.cpp the loop).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/effective.hpp"
#include "tbcheck/model/options.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/learn.hpp"
#include "tbcheck/search/learn_numeric.hpp"
#include "lemma_cache.hpp"

namespace tbcheck::search::learn_detail {

constexpr int kNotSimulated = -1, kCannotRun = -2, kDeferred = -3;
// Scenarios the PB-hole search may simulate per pair: covers the strict round-robin witnesses on the
// 4-PB devices with room to spare (docs/learn.md gives the tries they took).
constexpr int kPbHoleTries = 3000;
// Threshold refits learn tries when every candidate is refuted, before saying none fits: each simulates the
// cases seen once per combination of their kernels' cuts.
constexpr int kRescueFits = 300;
// When none fits: candidates replayed over every observed case (those refuted last), and the nearest listed.
constexpr size_t kNearestPool = 200, kNearestListed = 5;
// Boundary cases in a row without an observation before bracketing stops.
constexpr int kBracketBlind = 3;
// Consistent candidates at most for which a split's kernel quantities are moved onto a boundary question
// (sharpen_split): each move simulates every machine among them.
constexpr size_t kSharpenAlive = 64;
// Classes whose representatives' thresholds score a move of sharpen_split.
constexpr size_t kSharpenReps = 4;

// The candidates as machines on the device: their distinct options as they act there (model::effective_options),
// and each candidate's machine. Candidates of one machine predict one schedule for every case.
struct Machines {
  std::vector<model::Hypothesis> acting;            // per machine
  std::vector<uint32_t> of;                         // per candidate
  std::unordered_map<std::string, uint32_t> index;  // model::option_key of acting: the machine
  uint32_t add(const model::Hypothesis& acting_options);  // its machine, appended when new
};

// A case's class per slot (candidate or machine). Two bytes a slot until a class number does not fit, then
// four: every case of the pool keeps one entry per machine, tens of thousands on a clustered device.
class ClassTable {
 public:
  size_t size() const { return wide_ ? wide_values_.size() : narrow_values_.size(); }
  bool empty() const { return size() == 0; }
  int operator[](size_t i) const { return wide_ ? wide_values_[i] : narrow_values_[i]; }
  void set(size_t i, int v) {
    if (!wide_ && !fits(v)) widen();
    if (wide_) wide_values_[i] = v;
    else narrow_values_[i] = static_cast<int16_t>(v);
  }
  void resize(size_t n, int fill) {
    if (!wide_ && !fits(fill)) widen();
    if (wide_) wide_values_.resize(n, fill);
    else narrow_values_.resize(n, static_cast<int16_t>(fill));
  }

 private:
  static bool fits(int v) { return v >= INT16_MIN && v <= INT16_MAX; }
  void widen() {
    wide_values_.assign(narrow_values_.begin(), narrow_values_.end());
    std::vector<int16_t>().swap(narrow_values_);
    wide_ = true;
  }
  bool wide_ = false;
  std::vector<int16_t> narrow_values_;
  std::vector<int32_t> wide_values_;
};

// One case, the schedules its candidates predict, shared by the candidates predicting the same placements:
// a candidate is simulated at most once per case, and a class is compared with an observation once
// (learn_pool.cpp). With machines, a case is simulated once per machine, and machines whose options the case
// cannot tell apart (model::options_on) share one simulation.
struct CaseEntry {
  CaseEntry(std::string i, std::string o, model::Scenario s) : id(std::move(i)), origin(std::move(o)), scenario(std::move(s)) {}
  std::string id, origin;
  model::Scenario scenario;
  bool used = false;
  // Per candidate (per machine when shared): kNotSimulated, kDeferred (asked for, not simulated yet), kCannotRun
  // or a class. Classes are numbered as they are found, which a deferral can change: class_order numbers them
  // as classing every candidate asked for, in the order asked, would.
  ClassTable cls;
  std::vector<model::Schedule> schedule;  // per class
  std::unordered_map<size_t, std::vector<int>> by_hash;
  std::optional<model::ScenarioReach> reach;               // of `scenario`, once sharing asks for it
  std::unordered_map<std::string, int> by_options;         // model::option_key of options_on: the class

  std::vector<std::pair<size_t, size_t>> asked;  // with machines: (candidate, machine) as each machine is first asked for

  // `m`: the candidates' machines (null: every candidate simulated).
  int classify(const std::vector<model::Hypothesis>& hs, size_t i, const Machines* m);
  // With machines: i's machine is asked for, in order, and simulated only when classify or class_order needs it.
  void defer(size_t i, const Machines& m);
  // Per class, its number in the order the classes were first met over every candidate asked for (deferred
  // ones simulated now); the identity without machines, where nothing is deferred.
  std::vector<int> class_order(const std::vector<model::Hypothesis>& hs, const Machines* m);

 private:
  int evaluate(const model::Hypothesis& h, size_t slot, const Machines* m);
};

struct SplitScore {
  size_t largest = 0, groups = 0;
  int64_t cost = 0;  // longest predicted makespan: oracle time
  bool cut = false;  // stopped once a class outgrew stop_above: largest is then only a lower bound
};

// How `members` fall apart on case `c` (classes counted; kCannotRun is a class of its own). With machines,
// classing stops as soon as one class holds more than `stop_above` members (the rest are deferred): such a
// case cannot split better than one whose largest class is stop_above.
SplitScore score_of(CaseEntry& c, const std::vector<model::Hypothesis>& hs, const std::vector<size_t>& members,
                    const Machines* m, size_t stop_above = SIZE_MAX);

// Whether a and b place the blocks of their first `kernels` kernels alike.
bool same_prefix_placements(const model::Schedule& a, const model::Schedule& b, size_t kernels);
// Whether a threshold of h is off the enumerated values (threshold_set): found by refitting or bracketing.
bool thresholds_off_space(const model::Hypothesis& h);
// One key per machine: the options as they act on d (model::effective_options), as model::option_key.
std::string machine_key(const model::Hypothesis& h, const model::Device& d);
// Why two hypotheses with one machine_key act alike on d.
std::string why_one_machine(const model::Hypothesis& a, const model::Hypothesis& b, const model::Device& d);
// h's value of each mechanism field, as written ("off": no threshold).
std::vector<std::string> field_values(const model::Hypothesis& h, const std::vector<std::string>& fields);

struct UnionFind {
  std::vector<size_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  size_t find(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(size_t a, size_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

template <class T>
std::vector<T> first_n(const std::vector<T>& v, size_t n) {
  return std::vector<T>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(n, v.size())));
}

// The member lists of Learner::split_classes, largest first (ties in class order).
std::vector<const std::vector<size_t>*> largest_first(const std::map<int, std::vector<size_t>>& by_class);

struct Observed {
  size_t case_index;
  model::Observation obs;
};

// Each mechanism field's values as written, per candidate, and as they act on the device, per machine: indices
// into the field's value names, so that the values left among thousands of candidates are counted, not compared.
struct FieldValues {
  std::vector<std::string> fields;                    // model::mechanism_fields()
  std::vector<std::vector<std::string>> names;        // per field
  std::vector<uint16_t> written, acting;              // candidate x field, machine x field
  uint16_t id(size_t f, const std::string& v);
};

// The version space: every candidate, those still consistent, the groups proved to act alike (with why), the
// machines (candidates with one acting option set on the device) that share simulations, and each candidate's
// field values.
struct VersionSpace {
  std::vector<model::Hypothesis> candidates;
  std::vector<size_t> alive;
  UnionFind groups{0};
  std::map<size_t, std::string> proof;  // why a candidate joined its group
  Machines machines;
  FieldValues values;

  // The consistent candidates by group, keyed by each group's leader.
  std::map<size_t, std::vector<size_t>> groups_of_alive();
  // Candidate i's field values, and its machine's when new; after machines.of[i] is set.
  void set_values(size_t i);
  // Values of field f left among the consistent candidates, as they act on the device or as written.
  std::set<std::string> values_left(size_t f, bool as_acting = true) const;
};

// The cases learn can ask the oracle (corpus, retargeted, synthesized), each with its predicted classes, and the
// observations made so far, in step order.
struct CasePool {
  std::vector<CaseEntry> cases;
  std::vector<Observed> history;
  int witnesses = 0;  // witnesses found by simulation, numbered for their ids

  size_t add(const model::Case& w, std::string origin);  // its index
  std::vector<SeenCase> seen() const;                     // the observed cases, in step order
};

// Confirmation of the one group left, per representative: its neighbours, what was learned of each, which were
// given to Z3, and whether the neighbours' thresholds are refitted to the cases seen.
struct ConfirmationState {
  std::optional<size_t> of;
  std::vector<model::Hypothesis> neighbours;
  std::vector<NeighbourCheck> checks;
  std::set<size_t> synthesized;
  bool refit_neighbours = false;
  int synthesis_used = 0;
};

// Thresholds: candidates whose thresholds are refitted rather than dropped when a prediction fails (the last
// group while bracketing, and those rescued when every candidate was refuted); when each was dropped.
struct RefitState {
  std::vector<char> refittable, failed;
  std::vector<int> dropped_at;
  int rescue_fits = 0;
};

// Bracketing the representative's thresholds (learn_numeric.hpp): whom, whom it finished, each option's cut when
// it began, why an option is not bracketed further, the last boundary and combined cases asked per option.
struct BracketState {
  std::optional<size_t> of, done;
  std::vector<int> own_cut;
  std::vector<std::string> notes;
  std::vector<std::string> last_case;
  int blind = 0;  // boundary cases in a row that gave no observation
  // Combined cases (fold_bracket): how many of their kernels are the split's. A candidate whose placements of
  // those agree with the device is refuted only by the boundary kernels, so its thresholds are refitted.
  std::map<size_t, size_t> folded_split_kernels;
  std::vector<std::string> folded_case;
};

class Learner {
 public:
  // learn.cpp: refuses what cannot be learned from (InputError names the flag), sets aside candidates that
  // cannot run on the device, and groups those that are one machine there.
  // Takes the candidates: a composition space is the largest thing learn holds, and only those kept stay.
  Learner(std::vector<model::Hypothesis> candidates, const model::Device& device,
          const std::vector<model::Case>& corpus, const LearnOptions& o,
          const std::function<void(const LearnStep&)>& on_step);

  LearnResult run();

 private:
  // Observed: candidates judged. NoObservation: nobody dropped (timeout, no majority, ...). Skipped: the oracle
  // cannot run the case, which is set aside and counted, not a step. NoDevice: the oracle cannot run at all.
  enum class Ran { Observed, NoObservation, Skipped, NoDevice };
  enum class ConfirmStep { Finished, Stepped };
  // A candidate's thresholds against the cases seen: Fitted (some values fit them all; the candidate holds
  // them now), or NoneFits.
  enum class Refit { Fitted, NoneFits };
  // Bracketing the last group's representative: Asked (a boundary case ran; the set may have changed), or
  // Settled (no group of one, its thresholds as narrow as learn's cases make them, or the oracle is gone).
  enum class BracketStep { Asked, Settled };

  // learn.cpp
  std::optional<std::string> not_applicable(const model::Hypothesis& h) const;  // why h cannot place one block
  double synthesis_left() const { return o_.synthesis_budget_s - res_.synthesis_seconds; }
  void finish_undecided();
  // learn_split.cpp: the case that splits the consistent set best, from the pool or synthesized.
  std::optional<model::Case> quick_witness(const model::Hypothesis& a, const model::Hypothesis& b);
  std::optional<model::Case> lifted_witness(const model::Hypothesis& a, const model::Hypothesis& b);
  // any_witness: the first witness the simulation finds beyond the bounds, before Z3 seeks the smallest.
  PairResult synthesize(const model::Hypothesis& a, const model::Hypothesis& b, bool any_witness = false);
  std::optional<size_t> best_split();
  // The witness Z3 synthesizes between two groups' representatives that splits the consistent set; none when
  // synthesis is off, its budget spent, or no pair gives one.
  std::optional<size_t> split_by_synthesis();
  // learn_step.cpp: one case on the oracle, and who it drops.
  Ran run_case(size_t ci, StepPurpose purpose, const std::vector<std::string>& confirms);
  // learn_confirm.cpp. Confirmation of the one group left. Thresholds (learn_numeric.hpp): the cases seen so
  // far; candidate i's thresholds refitted to them; one boundary case for the last group's representative.
  ConfirmStep confirm();
  Refit refit(size_t i);
  BracketStep bracket();
  // The consistent candidates by the class case ci puts them in; none when some candidate cannot run it or all
  // fall into one class (the case would not split them).
  std::optional<std::map<int, std::vector<size_t>>> split_classes(size_t ci);
  // A split that leaves one group whatever the device does, with the boundary kernels bracketing would ask next
  // for each class's representative folded in (learn_numeric.hpp BoundaryPrefix): the combined case, or none.
  std::optional<size_t> fold_bracket(size_t ci);
  // The split with kernel quantities moved to values a boundary question would ask about, where every consistent
  // candidate still falls into the same classes: the same split, whose observation also narrows the thresholds of
  // the largest classes' representatives (no step of its own). None when no move narrows them.
  std::optional<size_t> sharpen_split(size_t ci);
  // r's thresholds fitted to the cases `before` and s, as if the device did on s what r predicts.
  // `makespan`, when given, is raised to r's predicted makespan of s.
  // `known`: fit_tables(space_.candidates[r], before), made once for the many fits of one representative over one `before`.
  std::optional<ThresholdFit> fit_after(const model::Scenario& s, size_t r, const std::vector<SeenCase>& before,
                                        int64_t* makespan = nullptr, const std::vector<FitTable>* known = nullptr) const;
  std::string scope_of(const std::vector<model::ThresholdInterval>& intervals) const;

  const model::Device& device_;
  model::Scenario probe_;
  LearnOptions o_;
  std::function<void(const LearnStep&)> on_step_;
  VersionSpace space_;
  CasePool pool_;
  std::map<std::pair<size_t, size_t>, PairResult> tried_;
  LemmaCache lemmas_;
  // What CaseEntry::classify takes: the machines, or null when LearnOptions::share_simulations is off.
  const Machines* sharing() const { return o_.share_simulations ? &space_.machines : nullptr; }
  std::vector<std::string> settled_by_;
  std::vector<bool> was_settled_;
  int unstable_in_a_row_ = 0, unsupported_in_a_row_ = 0, step_ = 0;
  LearnResult res_;
  ConfirmationState confirmation_;
  RefitState refit_;
  BracketState bracket_;
};

}  // namespace tbcheck::search::learn_detail
