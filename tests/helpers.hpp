// Shared helpers for tests: paths to the repository and shared/, small scenario builders,
// and running the tbcheck binary for end-to-end checks.
#pragma once
#include <string>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/model/scenario.hpp"

namespace tbcheck::test {

inline std::string source_path(const std::string& rel) { return std::string(TBCHECK_SOURCE_DIR) + "/" + rel; }
inline std::string shared_path(const std::string& rel) { return std::string(TBCHECK_SHARED_DIR) + "/" + rel; }

inline const model::Hypothesis& hyp(const std::string& name) {
  const model::Hypothesis* h = model::find_builtin_hypothesis(name);
  if (!h) throw std::runtime_error("no shipped hypothesis " + name);
  return *h;
}

// A scenario from inline JSON text (device + kernels).
inline model::Scenario scenario(const std::string& text) {
  return model::scenario_from_json(model::parse_json_text(text, "test"), "test");
}

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};
// Runs the tbcheck binary with the given arguments (a shell string), from the repository root.
RunResult run_tbcheck(const std::string& args);

}  // namespace tbcheck::test
