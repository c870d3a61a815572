// Interop with cuda_scheduling_examiner (yalue): its per-benchmark result logs become corpus cases
// with hardware observations, and a case becomes an examiner config for its multikernel plugin.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/observation.hpp"

namespace tbcheck::oracle::examiner {

struct ImportOptions {
  model::Device device;           // the GPU the logs were recorded on (the logs do not say)
  bool device_builtin = true;     // written back by name
  double time_unit_ms = 20.0;     // one model time unit
  int regs = 32;                  // the examiner's kernels do not report registers; assumed
};

// One result log per benchmark (= one CUDA stream of the multikernel plugin). Its "times" array
// holds a blank {}, then per iteration a CPU-times object ("cpu_times") followed by one object per
// kernel: kernel_name?, block_count, thread_count, shared_memory?, cuda_launch_times?,
// block_times [start, end, ...] (seconds), block_smids [...]. Iteration i of every log forms one
// case (kernels in launch order by cuda_launch_times[0] when every kernel has it, else file
// order); a log that launches several kernels gives them one shared stream. The observation keeps
// every block's SM, start and end, each kernel's launch call (launch_of_kernel, relative to the first
// call: CPU times are another clock) and the resolution the data shows: the timer's smallest step as
// `tick`, the longest launch call as `launch_window` (every order open when the log has no launch
// times), so the judge tries the launch orders the log did not observe (docs/recordings.md). Any
// malformed field is an InputError naming the file, the field path and the reason.
std::vector<model::Case> import_logs(const std::vector<std::string>& files, const ImportOptions& o);

// A result log already in memory: the path its errors, case ids and source name, and its text.
struct LogText {
  std::string path;
  std::string text;
};
// import_logs on texts already read (the fuzz target's entry: no file per input); the same checks of the
// content, the file checks (a folder, a FIFO, the size limit) being import_logs' own.
std::vector<model::Case> import_log_texts(const std::vector<LogText>& logs, const ImportOptions& o);

// One examiner config (its "benchmarks": timer_spin or multikernel plugins) as a scenario case
// without observation: per benchmark one stream, with "stream_priority" as the kernels' priority,
// "release_time" (seconds) as the first kernel's release, "sm_mask" (libsmctrl's convention: a set
// bit disables that TPC; "~0x..." allowed) as the TPCs the kernels may use; timer_spin's
// additional_info and multikernel's "duration" (ns) as durations. Times must be whole numbers of
// time units; a multikernel "delay" (relative to the previous kernel's end) or another plugin is an
// InputError naming the field. Kernels are listed in release order (benchmark order on ties).
model::Case import_config(const std::string& file, const ImportOptions& o);
// import_config on a config's text already read; `file` names it in errors and gives the case id.
model::Case import_config_text(const std::string& text, const std::string& file, const ImportOptions& o);

// The TPCs an examiner/libsmctrl mask string leaves enabled on a device with `tpcs` TPCs.
std::vector<int> tpcs_from_sm_mask(const std::string& mask, int tpcs, const std::string& file, const std::string& field);

struct ExportOptions {
  double time_unit_ms = 20.0;
  int iterations = 1;
  std::string plugin = "./bin/multikernel.so";
  std::string result_directory = "./results";
};
// An examiner config running the case's scenario with the multikernel plugin: one benchmark per
// stream (kernels with a shared `stream` in one benchmark, in list order; others alone), each
// kernel as {kernel_label, duration (ns), block_count, thread_count, shared_memory_size (32-bit
// words)}. What the plugin cannot express is an InputError (shared memory other than 0, 16, 32 or
// 40 KB) or, for registers, local memory, 2-D grids and cross-stream launch order, a "comment".
nlohmann::json export_config(const model::Case& c, const ExportOptions& o);

}  // namespace tbcheck::oracle::examiner
