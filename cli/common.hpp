// Shared pieces of the thin CLI: the JSON envelope (schema and tool version), output helpers,
// and the command entry points registered in main.cpp.
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/observation.hpp"

namespace tbcheck::cli {

inline constexpr int kSchemaVersion = 1;
inline constexpr int kExitOk = 0, kExitFailed = 1, kExitBadInput = 2, kExitInternal = 3;

// The one parser of numeric flags, every one of which takes one of these checks (tests/cli checks the
// command table for it): plain decimal only (no hex, no blanks), a readable range in every refusal
// ("between 0.001 and 86400"), "too large" for what fits no number. Floating ones reject nan and inf as
// well: a non-finite timeout or budget would mean "run forever". Integer ones take digits only (no
// fraction, no exponent). The accepted value reaches CLI11 rewritten as plain decimal ("010" is 10).
inline constexpr const char* kNumberValidator = "tbcheck-number";
CLI::Validator number_in(double lo, double hi);
CLI::Validator number_above(double lo, double hi);  // lo itself excluded (a positive quantity)
CLI::Validator integer_in(long long lo, unsigned long long hi);

// Runs `f`, renaming the flag an InputError names from `from` to `to`: library functions name their
// own parameter ("--hypothesis"), the user gave another flag ("--oracle sim:...").
template <class F>
auto with_flag(const std::string& from, const std::string& to, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const model::InputError& e) {
    if (e.where() == from) throw model::InputError(to, e.field(), e.reason());
    if (e.field() == from) throw model::InputError(e.where(), to, e.reason());
    throw;
  }
}

// validate and check mean the same by exit 1: a case's `expect` entry for a hypothesis was contradicted.
// A failure no expectation covers is a finding, printed, not an exit status.
inline constexpr const char* kExitCodesHelp =
    "Exit status: 0 no case's expectation (its \"expect\" entry for a hypothesis) is contradicted, failures "
    "without one included; 1 an expectation is contradicted; 2 bad input.";

// Every command that takes hypotheses names the option the same way; the plural is an alias.
inline constexpr const char* kHypothesisOption = "--hypothesis,--hypotheses,-H";

// Every --json document is an object that starts with the schema version and the tool identity:
// envelope() supplies them, print_json prints them first.
nlohmann::json envelope();
void print_json(const nlohmann::json& j);

// The corpus read when none is given: those of `folders` (inside the repository's own corpus/, the user's
// imported recordings under corpus/hw/ among them) that exist from the current folder, the repository root.
// Never a path outside the repository.
std::vector<std::string> default_corpus(const std::vector<std::string>& folders);
// The same, refusing (naming `flag`) when none exists, so that no command silently reads an empty corpus.
std::vector<std::string> require_default_corpus(const std::vector<std::string>& folders, const std::string& flag);

// The folder a command writes to when `flag` (--out) is not given: `dir` (corpus/sim, corpus/hw/<device>),
// only from the repository root, recognised by its shipped corpus/paper. Elsewhere the command stops
// naming `flag`, rather than creating ./corpus/ in whatever folder the user stands in.
std::string default_output_dir(const std::string& dir, const std::string& flag);

// The paths <dir>/<id>.json of recorded cases about to be written, every one checked before the first is
// written (an import is all or nothing): none may exist (a recording is never overwritten), two ids may not
// share one, and each must be writable. The InputError names the path and `flag`.
std::vector<std::string> new_case_files(const std::string& dir, const std::vector<std::string>& ids,
                                        const std::string& flag);

// --timing and --max-orders (docs/recordings.md): how recordings judge hypotheses. One set of flags for
// validate, check and predict --contested; `prefix` starts their help ("With --contested: ").
struct JudgingFlags {
  std::string timing = "model";
  int64_t max_orders = model::kDefaultMaxOrders;
  model::JudgeOptions options() const;
};
void add_judging_options(CLI::App* app, JudgingFlags& f, const std::string& prefix = "");

// Each command: registered on the app, run after parsing when its subcommand was chosen.
struct Command {
  CLI::App* app = nullptr;
  virtual ~Command() = default;
  virtual int run() = 0;
};

}  // namespace tbcheck::cli
