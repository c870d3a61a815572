// What a corpus case records: a full or partial recorded schedule and/or facts from a paper,
// plus the case wrapper (id, source, expect, notes) around a scenario.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/model/scenario.hpp"

namespace tbcheck::model {

enum class ObservationKind { Hardware, Paper, Synthetic };
std::string_view to_string(ObservationKind);

struct Fact {
  // ClustersCoscheduled (the CUDA programming guide's cluster guarantee): the blocks of each
  // cluster of the kernel start together, on SMs of one GPC where the device has a GPC map.
  enum class Kind { OnSms, BlockOnSm, StartsAt, StartsAfter, ConcurrentWith, ClustersCoscheduled };
  Kind kind = Kind::OnSms;
  std::string kernel;
  std::vector<int> sms;               // OnSms: the set of SMs the kernel's blocks use
  int block = 0, sm = 0;              // BlockOnSm
  int time = 0;                       // StartsAt: first block's start
  std::vector<std::string> kernels;   // StartsAfter / ConcurrentWith
  std::string describe() const;
  json to_json() const;
};

// The cluster (index in launch order) of each block of a kernel launched with clusters; 2-D grids
// number blocks row by row (x fastest), as blockIdx does.
std::vector<int> cluster_of_blocks(const Kernel& k);

// What a recording could not see (docs/recordings.md): two recorded times less than `tick` apart are
// unordered (the timer's resolution, in time units), and so are two kernels whose launches lie within
// `launch_window` of each other (launch_of_kernel where recorded, else the release times).
struct Resolution {
  int64_t tick = 1;
  int64_t launch_window = 0;
  json to_json() const;
};

struct Observation {
  ObservationKind kind = ObservationKind::Paper;
  std::map<std::string, std::vector<int>> sm_of_block;     // kernel name -> SM per block index
  std::map<std::string, std::vector<int>> start_of_block;  // kernel name -> start per block index
  std::map<std::string, std::vector<int>> end_of_block;    // kernel name -> end per block index
  std::map<std::string, int64_t> launch_of_kernel;         // kernel name -> launch call (time units)
  std::optional<Resolution> resolution;                    // absent: every recorded order was observed
  std::vector<Fact> facts;
  bool has_recording() const { return !sm_of_block.empty() || !start_of_block.empty(); }
  // Every kernel of s has its blocks' SMs, starts and ends: what trace-driven judging needs.
  bool has_block_times(const Scenario& s) const;
  json to_json() const;
};

enum class Expect { Pass, Fail };

struct Case {
  std::string id;
  std::string source;
  std::string file;  // where it was read from
  Scenario scenario;
  std::optional<Observation> observation;
  std::map<std::string, Expect> expect;  // hypothesis name -> what the source says
  std::string notes;
  // What the oracle that recorded it says about the run (`tbcheck run`: oracle, device identity, every
  // repetition's ns times, ...); an object, or null for a case no run wrote.
  json run;
  json to_json() const;
};

// A case object: a scenario plus id, source, observation, expect, notes, run. Observation kernels and
// block indices are checked against the scenario. Recordings written before `run` was a field of its own
// carry it at the end of their notes ("; metadata {...}"): read into `run`, the notes without it.
Case case_from_json(const json& j, const std::string& where, const std::string& default_source = "");
// A file holds one case, or a collection {"source": ..., "cases": [...]}; a directory is read
// recursively in path order. Non-case JSON files (devices, hypotheses) under a directory are
// skipped only when they lack "kernels".
std::vector<Case> load_cases(const std::string& path);

}  // namespace tbcheck::model
