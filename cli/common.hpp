// Shared pieces of the thin CLI: the JSON envelope (schema and tool version), output helpers,
// and the command entry points registered in main.cpp.
#pragma once
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tbcheck/model/observation.hpp"

namespace tbcheck::cli {

inline constexpr int kSchemaVersion = 1;
inline constexpr int kExitOk = 0, kExitFailed = 1, kExitBadInput = 2;

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

// The one case a command works on: the file's only case, or the one named by `--case ID` in a
// collection (ntbs files, paper collections). Anything else is bad input naming the file and field.
model::Case load_one_case(const std::string& path, const std::string& case_id, const std::string& command);

// Each command: registered on the app, run after parsing when its subcommand was chosen.
struct Command {
  CLI::App* app = nullptr;
  virtual ~Command() = default;
  virtual int run() = 0;
};

}  // namespace tbcheck::cli
