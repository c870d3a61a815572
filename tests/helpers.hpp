// Shared helpers for tests: paths to the repository and shared/, small scenario builders,
// and running the tbcheck binary for end-to-end checks.
#pragma once
#include "scratch.hpp"
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/model/scenario.hpp"

namespace tbcheck::test {

inline std::string source_path(const std::string& rel) { return std::string(TBCHECK_SOURCE_DIR) + "/" + rel; }
inline std::string shared_path(const std::string& rel) { return std::string(TBCHECK_SHARED_DIR) + "/" + rel; }
// The path of `rel` under ../shared, or "" after a visible WARN when it is missing (a fresh clone has
// no ../shared): `auto p = shared_or_skip("external/ntbs"); if (p.empty()) return;`.
inline std::string shared_or_skip(const std::string& rel) {
  const std::string p = shared_path(rel);
  if (std::filesystem::exists(p)) return p;
  WARN("SKIPPED: ../shared/" << rel << " is not present (" << p << "); this test needs the workspace's shared material");
  return "";
}


// A fresh folder per test (tests/scratch.hpp), under the name the docs and import tests use.
using TempDir = ScratchDir;

inline const model::Hypothesis& hyp(const std::string& name) {
  const model::Hypothesis* h = model::find_builtin_hypothesis(name);
  if (!h) throw std::runtime_error("no shipped hypothesis " + name);
  return *h;
}

// A shipped hypothesis with other cluster choices, named "<base>-<cluster_gpc>-<cluster_spread>".
inline model::Hypothesis cluster_variant(const std::string& base, model::ClusterGpc g, model::ClusterSpread s) {
  model::Hypothesis h = hyp(base);
  h.name = base + "-" + std::string(model::to_string(g)) + "-" + std::string(model::to_string(s));
  h.cluster_gpc = g;
  h.cluster_spread = s;
  return h;
}

// docs/design.md's "mini-ampere-2": full-size rtx3090 per-SM limits on `sms` SMs (JSON text).
inline std::string mini_device(int sms) {
  const std::string n = std::to_string(sms);
  return R"({"name": "mini-ampere-)" + n + R"(", "cc": "8.6", "sms": )" + n +
         R"(, "sms_per_tpc": 2, "pbs_per_sm": 4, "max_blocks_per_sm": 16, "max_warps_per_sm": 48,
         "max_threads_per_block": 1024, "regs_per_sm": 65536, "reg_alloc_unit": 256, "max_regs_per_thread": 255,
         "smem_configs_kb": [0, 8, 16, 32, 64, 100], "smem_alloc_unit": 128, "smem_reserved_per_block": 1024,
         "max_smem_per_block": 101376, "issue_pairs": true})";
}

// A scenario from inline JSON text (device + kernels).
inline model::Scenario scenario(const std::string& text) {
  return model::scenario_from_json(model::parse_json_text(text, "test"), "test");
}

// The InputError a loader call raises; fails the test when it raises none.
template <class F>
model::InputError error_of(F&& f) {
  try {
    f();
  } catch (const model::InputError& e) {
    return e;
  }
  FAIL("expected an InputError");
  return model::InputError("", "", "");
}

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};
// Runs the tbcheck binary with the given arguments (a shell string), from the repository root.
RunResult run_tbcheck(const std::string& args);
// The same at a terminal width: COLUMNS set to `columns` ("" for the default width, 100).
RunResult run_tbcheck(const std::string& args, const std::string& columns);

// Four kernels of one full-SM block each on two SMs: k2 (on SM 1 from 0) and k3 (on SM 0 from 1) both end
// at 3, where k4 waits: all-then-dispatch puts k4 on SM 0, start-order on SM 1 (the retirement mechanism's
// two readings part there).
inline model::Scenario tied_retirements_scenario() {
  return scenario(R"({"device": )" + mini_device(2) + R"(, "kernels": [
    {"name": "k1", "blocks": 1, "threads": 1024, "regs": 32, "duration": 1},
    {"name": "k2", "blocks": 1, "threads": 1024, "regs": 32, "duration": 3},
    {"name": "k3", "blocks": 1, "threads": 1024, "regs": 32, "duration": 2},
    {"name": "k4", "blocks": 1, "threads": 1024, "regs": 32, "duration": 1}]})");
}

}  // namespace tbcheck::test
