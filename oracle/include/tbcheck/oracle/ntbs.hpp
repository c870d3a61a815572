// Import of the public recordings of nicolaswilde/thread-block-scheduling: each GPU's
// my-result/<GPU>/<GPU>.log becomes one collection of corpus cases with hardware observations.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tbcheck::oracle::ntbs {

// One GPU's recordings: a collection {"source": ..., "cases": [...]} for the built-in device named
// by the lower-cased folder (V100 -> v100, RTX2080TI -> rtx2080ti).
struct Collection {
  std::string gpu;     // folder name under my-result/
  std::string device;  // built-in device name
  std::string log;     // path of the log read
  nlohmann::json collection;
};

// A GPU folder that was not imported, and why (no built-in device of that name).
struct Skipped {
  std::string gpu;
  std::string reason;
};

struct Import {
  std::vector<Collection> collections;  // in folder-name order
  std::vector<Skipped> skipped;
};

// The cases of one log. An experiment ("TestN ====" header, then "Ki = K(blocks, threads, regs,
// smem Bytes), all blocks Ds, streamS" lines) becomes a case when the log records its blocks'
// SMs ("Ki smid = a, b, ..."); experiments without smid lines (profiler-only tests) are left out.
// Test8's header misprints K2 and K3; its source (test8/test8.cu) launches K1 = (N/2, 256, 128, 0),
// K2 = (N/2, 128, 128, 0), K3 = (1, 128, 128, 0), which is what is recorded. `display` is the path
// written into each case's source ("my-result/V100/V100.log"); `file` is the path named in errors.
// A malformed line is an InputError naming file:line and the reason; every case is checked with
// the corpus-case loader against `device`.
std::vector<nlohmann::json> parse_log(const std::string& text, const std::string& device, const std::string& display,
                                      const std::string& file);

// Every my-result/<GPU>/<GPU>.log of a clone. A missing folder, a GPU folder without its log or a
// clone with no importable GPU is an InputError naming the path.
Import import_clone(const std::string& clone_dir);

}  // namespace tbcheck::oracle::ntbs
