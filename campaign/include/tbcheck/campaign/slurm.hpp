// What tbcheck asks of Slurm and reads back: array lists for sbatch, the states of array tasks
// from squeue and sacct output (both optional), and running a command with its output captured.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tbcheck::campaign {

// Task indices as an sbatch --array list: sorted, runs joined ("0-3,7,9-10").
std::string array_list(std::vector<int> tasks);

// A Slurm job state reduced to what a campaign needs. Live: pending or running in the queue.
// Ended: the scheduler says the task is over (any end state; whether it succeeded is read from
// the result files, never from the scheduler).
enum class SlurmState { Pending, Running, Ended };
std::string_view to_string(SlurmState);
// "PENDING", "RUNNING", "CANCELLED by 0", "COMPLETED", ... (squeue %T and sacct State columns).
std::optional<SlurmState> parse_slurm_state(const std::string& text);

struct TaskRecord {
  long job = 0;  // the array job id
  int task = 0;
  SlurmState state = SlurmState::Ended;
  std::string raw;  // the scheduler's word for it
};

// Lines "JOBID_TASK|JOBNAME|STATE" (squeue -h -r -o '%i|%j|%T'; sacct -n -P -X --array
// -o JobID,JobName,State). Lines for other jobs, job steps and unparsable lines are skipped.
std::vector<TaskRecord> parse_task_lines(const std::string& text, const std::string& job_name);

// The scheduler's view of one job name's array tasks: the live queue (squeue) ahead of the
// accounting record (sacct), and among records the newest job. `available`: some scheduler answered.
struct SchedulerView {
  bool available = false;
  std::map<std::string, std::map<int, TaskRecord>> tasks;  // job name -> task index -> record
  void add(const std::string& job_name, const std::vector<TaskRecord>& records, bool live);
  const TaskRecord* find(const std::string& job_name, int task) const;
};

// Runs argv (no shell) and returns the exit code and standard output; nullopt when the program is
// not on PATH. Standard error is discarded.
struct CommandOutput {
  int exit_code = -1;
  std::string out;
};
std::optional<CommandOutput> run_command(const std::vector<std::string>& argv);

// Asks squeue and sacct (each when present and working) about the given job names; sacct from the
// day before `created` (UTC, YYYY-MM-DDTHH:MM:SS) on.
SchedulerView ask_scheduler(const std::vector<std::string>& job_names, const std::string& created);
// "2026-03-01T00:30:00" -> "2026-02-28" (an unreadable time: "2000-01-01").
std::string day_before(const std::string& utc);

// A word safe inside single quotes in a POSIX shell script.
std::string shell_quote(const std::string& s);

}  // namespace tbcheck::campaign
