// `learn`: the refutation loop over a version space. Run, on an oracle, the case that best splits the
// candidates still consistent with every observation, drop the refuted, and accept a survivor only once it
// has predicted a confirmation suite that separates it from its neighbours in the composition space.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/thresholds.hpp"
#include "tbcheck/oracle/oracle.hpp"
#include "tbcheck/search/distinguish.hpp"

namespace tbcheck::search {

// Where the candidates come from: every valid composition (model/compositions.hpp), or a given list.
enum class LearnSpace { Compositions, List };
std::string_view to_string(LearnSpace);

// Small synthesis bounds for learn (1-2 TPCs, up to 2 kernels of 2 blocks, local memory varied, 2 s per
// query, 5 s per pair); learn tries a simulated witness before asking Z3.
DistinguishBounds learn_bounds();

// True when the two differ in how warps are placed on PBs (the warps option or the skip).
bool differ_in_warp_placement(const model::Hypothesis& a, const model::Hypothesis& b);

// A witness between two hypotheses that differ in warp placement, by simulation over a small family
// shaped for it (learn_witness.cpp): kernels of one block per SM, so every SM holds the same blocks;
// one or two small kernels first (1-3 warps, retiring early or late), fillers up to a chosen number of
// free warp slots, then a probe kernel of about that many warps. Once registers are one SM pool, only
// such states separate the PB warp rules: per-PB warp slots must bind, and early retirements leave holes
// on particular PBs that the strict round-robin pointer may not reach (docs/learn.md). Deterministic:
// the first of at most `max_tries` scenarios that separates (detail::separates), with its index.
struct PbHoleWitness {
  model::Scenario scenario;
  int tries = 0;
};
std::optional<PbHoleWitness> pb_hole_search(const model::Hypothesis& a, const model::Hypothesis& b,
                                            const model::Device& d, int max_tries);

struct LearnOptions {
  std::string oracle_spec;  // "sim:<h>", "cuda", ...
  double noise = 0.0;       // sim only
  unsigned seed = 1;        // step i runs with seed + i, so noisy steps are independent
  int repetitions = 3;
  int max_steps = 100;
  double time_unit_ms = 20.0;  // device seconds = observed makespan x unit x repetitions
  bool synthesize = true;      // ask Z3 for a splitting or confirming case when the corpus has none
  DistinguishBounds bounds = learn_bounds();  // of each synthesis
  LearnSpace space = LearnSpace::List;  // labels the result; the candidates are what the caller passes
  // Confirmation: neighbours are the valid compositions this many option changes away.
  bool confirm = true;
  int neighbour_distance = 2;
  // ... and its selection replaced by each rule of the ranking language of up to this many keys (0: none), so a
  // device playing a rule outside the space is not identified as a composition that agreed on the cases seen.
  int rule_neighbour_keys = 2;
  int confirm_synthesis_pairs = 12;  // neighbours Z3 is asked about when no corpus case separates them
  double synthesis_budget_s = 120;   // Z3 wall time of the whole run (splitting and confirming)
  // With more consistent candidates than this, a case's split is estimated on an evenly spread sample
  // of them (the chosen case is then simulated for all); keeps a step cheap over thousands.
  size_t split_sample = 96;
  // Candidates whose options a case cannot tell apart share one simulation of it (model::options_on), and a
  // case stops being classed for a split once it cannot beat the best so far. Off: every candidate is simulated
  // on every case it is classed on, and every case in full: the reference the shared run must equal.
  bool share_simulations = true;
  // Worker threads for a step's simulations: cases classed for a split (with share_simulations), a sharpened
  // split's moves and its representatives' threshold tables. The answer does not depend on it.
  int jobs = 1;
};

// Identified: one survivor that predicted its confirmation suite and is separated from every neighbour.
// Equivalent: as Identified, for a set of survivors proved to make the same decisions on this device.
// Unconfirmed: survivors agree with every observation, but some neighbour is not yet separated (no case
// within the budget). Undecided: survivors that no case splits and Z3 did not prove equivalent.
// NoneSurvives: an observation refutes every candidate (an open question). Unstable: the oracle never
// agreed with itself on the cases left. NoDevice / Unsupported: the oracle could not run at all.
enum class LearnOutcome { Identified, Equivalent, Unconfirmed, Undecided, NoneSurvives, Unstable, NoDevice, Unsupported };
std::string_view to_string(LearnOutcome);

// Why a step ran: to split the consistent set, to confirm a survivor against its neighbours, or to bracket
// one of its thresholds with a boundary case (search/learn_numeric.hpp).
enum class StepPurpose { Split, Confirm, Bracket };
std::string_view to_string(StepPurpose);

struct LearnStep {
  int index = 0;
  StepPurpose purpose = StepPurpose::Split;
  std::string case_id;
  std::string origin;  // "corpus <file>", "... retargeted from <device> (blocks x a/b)", "synthesized (<pair>)"
  int kernels = 0, blocks = 0;
  std::vector<size_t> group_sizes;               // consistent candidates per predicted schedule
  std::vector<std::vector<std::string>> groups;  // their names, each group cut to its first 8
  oracle::RunStatus status = oracle::RunStatus::Ok;
  std::string oracle_note;  // majority used, unstable blocks, reason
  size_t dropped_count = 0, survivor_count = 0;
  std::vector<std::string> dropped, survivors;  // names, each cut to its first 20
  std::vector<std::string> confirms;            // Confirm: the neighbours this case was chosen to separate
  double oracle_seconds = 0;  // wall clock of the oracle run
  double device_seconds = 0;  // modelled GPU time: makespan x unit x repetitions
  std::string text() const;   // as learn prints the step when it is taken (learn_text.cpp)
};

// A neighbour of the accepted survivor, and what confirmation learned about it.
enum class NeighbourVerdict { Separated, Equivalent, NotSeparated };
std::string_view to_string(NeighbourVerdict);
struct NeighbourCheck {
  std::string name;
  std::vector<std::string> differences;  // "registers: pb vs pb-contiguous"
  NeighbourVerdict verdict = NeighbourVerdict::NotSeparated;
  std::string case_id;  // the observed case its prediction contradicts
  std::string detail;   // equivalent: how proved; not separated: why
};

struct Confirmation {
  std::string survivor;  // the representative confirmed
  int cases_agreed = 0;  // observed cases it predicted
  std::vector<NeighbourCheck> neighbours;
  size_t count(NeighbourVerdict v) const;
  std::vector<std::string> not_separated() const;
  std::string summary() const;  // "agrees with N cases; separated from K of its M neighbours; ..."
};

// Per mechanism field: settled (the consistent candidates left act alike on it on this device, e.g. issue
// paired and paired-cc8 on a compute capability 8.x device) or open.
enum class Settledness { Settled, Open };
std::string_view to_string(Settledness);
struct MechanismStatus {
  std::string mechanism;
  Settledness state = Settledness::Open;
  std::vector<std::string> values;  // left among the consistent candidates, as written ("off": no threshold)
  std::string settled_by;           // the case after which one value was left ("" if the list had one)
  nlohmann::json to_json() const;   // the same object in learn's and learn-replay's results
};

// Two consistent candidates no case separated, and what Z3 said.
struct OpenPair {
  std::string a, b;
  std::string why;
};

inline constexpr size_t kListedOpenPairs = 100;

// A case the oracle cannot run (sim:fermi and a kernel with a TPC mask, say): set aside, not a step.
struct SkippedCase {
  std::string case_id, reason;
};
inline constexpr size_t kListedSkipped = 100;

// When none fits: a candidate near the device, what it gets wrong over every observed case (learn_nearest.cpp).
struct NearMiss {
  std::string name;
  model::Hypothesis hypothesis;  // the candidate itself: a base for the rule search (search/learn_rules.hpp)
  int cases_refuted = 0;     // observed cases whose placements it mispredicts
  int blocks_misplaced = 0;  // blocks on another SM or at another start, summed over those cases
  std::string first_case;    // the first observed case it mispredicts
  std::string where;         // its first differing block there: "kernel k1 block 3: predicted SM 4 at 0, observed SM 5 at 2"
  nlohmann::json to_json() const;  // a rule's keys as "rule" when the candidate's selection is one
};

struct LearnResult {
  LearnSpace space = LearnSpace::List;
  LearnOutcome outcome = LearnOutcome::Undecided;
  std::string reason;
  size_t candidates = 0;  // at the start, after those not applicable to the device
  std::vector<std::string> survivors;
  std::vector<model::Hypothesis> consistent;          // every survivor, in candidate order
  std::vector<std::vector<std::string>> equivalence;  // survivors grouped: proved equivalent on this device
  // Undecided: pairs of group representatives left apart. Thousands of groups make millions of pairs, so
  // at most kListedOpenPairs are listed (those Z3 was asked about first); open_pair_count counts them all.
  std::vector<OpenPair> open_pairs;
  size_t open_pair_count = 0;
  std::optional<Confirmation> confirmation;
  std::vector<MechanismStatus> mechanisms;
  std::vector<std::string> not_applicable;  // "<name>: <reason>": cannot run on the device at all
  std::vector<LearnStep> steps;
  // Cases the oracle could not run, in the order they came up: the first kListedSkipped, and how many in all.
  std::vector<SkippedCase> skipped;
  size_t skipped_count = 0;
  int oracle_runs = 0;  // repetitions summed over steps
  double oracle_seconds = 0, device_seconds = 0, synthesis_seconds = 0;
  // Per threshold option of the survivor (model::threshold_options() order): the values every observation
  // allows, at the granularity the device can tell apart (docs/learn.md, "Thresholds are intervals").
  std::vector<model::ThresholdInterval> intervals;
  std::string scope;  // what an identified answer was identified among, and what confirmation covered
  std::optional<model::Case> open_question;  // NoneSurvives: the contradicting case with its observation
  std::string closest;                       // NoneSurvives: the candidate that matched the most blocks
  // NoneSurvives: the nearest candidates, fewest observed cases refuted, then fewest blocks misplaced.
  std::vector<NearMiss> nearest;
  // Every case the oracle ran and answered, with the observation learn judged it by, in step order: what a
  // later search over other candidates (search/learn_rules.hpp) must also agree with.
  std::vector<model::Case> observed;
  nlohmann::json to_json() const;
  // The result as learn prints it after the steps (learn_text.cpp); `written` files went to `out_dir`.
  std::string text(const std::string& device, size_t written = 0, const std::string& out_dir = "") const;
};

// The scenario moved to `d`: as is when it is already on `d`; else each kernel whose blocks are a whole
// multiple of the source's TPC count gets that multiple of d's (how seed 000's cases scale with the TPC
// count), other kernels keep their blocks. nullopt when some kernel is not valid on `d`.
std::optional<model::Scenario> retarget(const model::Scenario& s, const model::Device& d);

// The corpus moved to `d` (retarget), scenarios deduplicated: the cases learn and check draw from.
struct DeviceCase {
  std::string id, origin;
  model::Scenario scenario;
};
std::vector<DeviceCase> device_cases(const std::vector<model::Case>& corpus, const model::Device& d);

// What learn starts from over the composition space: model::compositions_for(d), built (with the device proofs
// effective_options asks for each candidate, model::pb_any_as_sm) on a thread of its own while the corpus is
// read from `corpus_paths` (model::load_cases each, in order).
struct SpaceAndCorpus {
  std::vector<model::Hypothesis> space;
  std::vector<model::Case> corpus;
};
SpaceAndCorpus composition_space_and_corpus(const model::Device& d, const std::vector<std::string>& corpus_paths);

// Takes the candidates by value: pass a composition space with std::move, so learn holds one copy of it.
LearnResult learn(std::vector<model::Hypothesis> candidates, const model::Device& device,
                  const std::vector<model::Case>& corpus, const LearnOptions& o,
                  const std::function<void(const LearnStep&)>& on_step = {});

// Equal for two hypotheses exactly when learn treats them as one machine on `d` (options that cannot matter
// there set to one value); the key is that canonical composition's JSON.
std::string acting_key(const model::Hypothesis& h, const model::Device& d);

// How an answer stands against the composition that played the device (sim oracle; for tests and benches):
// Named: identified or equivalent with the truth among the survivors; NoneFits: none survives; Wrong:
// identified or equivalent without the truth; Open: unconfirmed, undecided or the oracle failed.
enum class AnswerGrade { Named, NoneFits, Wrong, Open };
std::string_view to_string(AnswerGrade);
AnswerGrade grade_answer(const LearnResult& r, const model::Hypothesis& truth);

}  // namespace tbcheck::search
