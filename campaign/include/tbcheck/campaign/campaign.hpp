// An oracle campaign: cases x devices run by Slurm job arrays, one `tbcheck run` per case, each
// result written once (no overwrite) into the campaign folder; judged by its files, resumed, collected.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "tbcheck/campaign/slurm.hpp"
#include "tbcheck/model/observation.hpp"

namespace tbcheck::campaign {

inline constexpr int kManifestSchema = 1;
// Most cases one array task runs (--chunk).
inline constexpr int kMaxChunk = 100000;

// What plan accepts and a manifest must hold: repeat as `tbcheck run --repeat`, a chunk in range, a Slurm
// time limit, the binary as an absolute path the scripts can quote. `fail(flag, manifest field, why)` throws.
void check_settings(int repeat, int chunk, const std::string& time_limit, const std::string& tbcheck,
                    const std::function<void(const char* flag, const char* field, const std::string& why)>& fail);

// One GPU model of the cluster: the device name the cases target, and how Slurm finds its nodes.
struct DeviceTarget {
  std::string name;
  std::string gres;       // "gpu:a100:1" (sbatch --gres); empty: none asked for
  std::string partition;  // sbatch --partition; empty: the cluster's default
};

// "a100=gpu:a100:1" or "a100" (no gres). The name must be a file-safe word; InputError otherwise.
DeviceTarget parse_device_target(const std::string& spec);

struct CaseRef {
  std::string file;    // absolute path of the case (or collection) file
  std::string id;      // the case id (`tbcheck run --case`)
  std::string result;  // result file name inside results/<device>/: "<id>.<oracle>.json"
};

struct Task {
  int index = 0;  // SLURM_ARRAY_TASK_ID
  std::vector<CaseRef> cases;
};

struct DevicePlan {
  DeviceTarget target;
  std::string job_name;  // "tbcheck-<campaign id>-<device>": how squeue/sacct find its tasks
  std::vector<Task> tasks;
};

struct Skipped {
  std::string file, id, device;  // a case whose device is not in the campaign
};

struct Manifest {
  std::string tool_version;
  std::string id;         // folder name and a hash of its absolute path (unique job names)
  std::string created;    // UTC, YYYY-MM-DDTHH:MM:SS (sacct looks from here on)
  std::string oracle;     // "cuda" or "sim:<hypothesis>"
  int repeat = 5;
  int chunk = 1;          // cases per array task
  std::string time_limit; // sbatch --time; empty: the partition's default
  std::string tbcheck;    // the binary the scripts run (overridable by $TBCHECK at submission)
  std::vector<DevicePlan> devices;
  std::vector<Skipped> skipped;
  model::json to_json() const;
};
Manifest manifest_from_json(const model::json& j, const std::string& where);
// The manifest file's text: schema_version and tool first.
std::string manifest_text(const Manifest& m);

struct PlanOptions {
  std::vector<std::string> case_paths;   // files and folders, as `validate` reads them
  std::vector<DeviceTarget> devices;
  std::string oracle = "cuda";
  int repeat = 5;
  int chunk = 1;
  std::string time_limit;
  std::string tbcheck;       // absolute path of the binary
  std::string tool_version;
  std::string out_dir;       // the campaign folder (absent or empty)
  std::string created;       // UTC timestamp
};

// Cases grouped by the device their scenario targets (a case runs on the GPU model it names); cases
// of a device not in the campaign are listed as skipped. InputError: no cases, a device no case
// targets, a case id twice for one device, an oracle other than cuda or sim:H, a bad repeat or chunk.
Manifest make_plan(const PlanOptions& o);

// The sbatch script of one device: a job array, one task per chunk, each case a `tbcheck run`
// (skipped when its result exists), start and exit recorded under state/<device>/.
std::string sbatch_script(const Manifest& m, const DevicePlan& d, const std::string& campaign_dir);

// Creates the campaign folder (refused when it exists and is not empty): manifest.json, one
// <device>.sbatch per device, results/, logs/ and state/ per device. Returns the files written.
std::vector<std::string> write_campaign(const Manifest& m, const std::string& campaign_dir);
Manifest load_manifest(const std::string& campaign_dir);

// A task is done when every result file of its cases exists (whatever its exit code: an unstable
// run is recorded too); queued or running while the scheduler has it live; failed when it ended
// without all its results; missing when it never started.
enum class TaskState { Done, Queued, Running, Failed, Missing };
std::string_view to_string(TaskState);

struct TaskStatus {
  std::string device;
  int index = 0;
  TaskState state = TaskState::Missing;
  int results = 0, cases = 0;  // result files present, cases of the task
  std::string detail;          // "exit 143", "CANCELLED by 0", "started in job 12, no exit record"
};

std::vector<TaskStatus> campaign_status(const Manifest& m, const std::string& campaign_dir, const SchedulerView& s);

// Tasks to submit again per device: the failed and the missing ones.
struct Resubmission {
  std::string device, script, array;  // array: "3,7-9"
  std::vector<int> tasks;
};
std::vector<Resubmission> plan_resume(const Manifest& m, const std::vector<TaskStatus>& status,
                                      const std::string& campaign_dir);
// Before a resubmission: a failed task's exit record and its temporaries (a run killed between
// writing and renaming) are removed, so the new run starts clean. Returns the paths removed.
std::vector<std::string> clear_for_resubmission(const Manifest& m, const Resubmission& r, const std::string& campaign_dir);

// Result files to corpus/hw/<device>/: a result is copied when the target is absent, left when the
// target holds the same bytes, and never overwritten when it differs (a conflict).
struct CollectResult {
  std::vector<std::string> copied, already, conflicts;  // target paths
  std::vector<std::string> collected_dirs;               // <to>/<device> holding collected results
  int missing = 0;                                       // cases without a result yet
};
// Every present result is checked first (check_result); one that fails stops the collect before any copy.
CollectResult collect(const Manifest& m, const std::string& campaign_dir, const std::string& to_root);
// The check: a regular file (not a link), one case whose id is the case's own with the oracle's suffix, on the
// device the campaign ran it on, with an observation. InputError naming the file and the field otherwise.
void check_result(const std::string& path, const CaseRef& c, const std::string& device);

}  // namespace tbcheck::campaign
