// Slurm's side of a campaign: array lists, squeue/sacct parsing and the optional scheduler view.
// Nothing here is required: without squeue and sacct a campaign is judged by its files alone.
#include "tbcheck/campaign/slurm.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <iomanip>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

extern char** environ;

namespace tbcheck::campaign {

std::string array_list(std::vector<int> tasks) {
  std::sort(tasks.begin(), tasks.end());
  tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
  std::vector<std::string> parts;
  for (size_t i = 0; i < tasks.size();) {
    size_t j = i;
    while (j + 1 < tasks.size() && tasks[j + 1] == tasks[j] + 1) ++j;
    parts.push_back(j == i ? std::to_string(tasks[i]) : fmt::format("{}-{}", tasks[i], tasks[j]));
    i = j + 1;
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

std::string_view to_string(SlurmState s) {
  switch (s) {
    case SlurmState::Pending: return "pending";
    case SlurmState::Running: return "running";
    case SlurmState::Ended: return "ended";
  }
  return "?";
}

std::optional<SlurmState> parse_slurm_state(const std::string& text) {
  const std::string word = text.substr(0, text.find(' '));  // "CANCELLED by 0"
  // Slurm's job states (squeue(1) JOB STATE CODES); a state not listed is not guessed at.
  static const std::pair<const char*, SlurmState> kStates[] = {
      {"PENDING", SlurmState::Pending},      {"REQUEUED", SlurmState::Pending},    {"REQUEUE_HOLD", SlurmState::Pending},
      {"REQUEUE_FED", SlurmState::Pending},  {"RESV_DEL_HOLD", SlurmState::Pending}, {"RUNNING", SlurmState::Running},
      {"CONFIGURING", SlurmState::Running},  {"COMPLETING", SlurmState::Running},  {"SUSPENDED", SlurmState::Running},
      {"STOPPED", SlurmState::Running},      {"SIGNALING", SlurmState::Running},   {"STAGE_OUT", SlurmState::Running},
      {"RESIZING", SlurmState::Running},     {"COMPLETED", SlurmState::Ended},     {"CANCELLED", SlurmState::Ended},
      {"FAILED", SlurmState::Ended},         {"TIMEOUT", SlurmState::Ended},       {"NODE_FAIL", SlurmState::Ended},
      {"PREEMPTED", SlurmState::Ended},      {"BOOT_FAIL", SlurmState::Ended},     {"DEADLINE", SlurmState::Ended},
      {"OUT_OF_MEMORY", SlurmState::Ended},  {"REVOKED", SlurmState::Ended},       {"SPECIAL_EXIT", SlurmState::Ended}};
  for (const auto& [name, state] : kStates)
    if (word == name) return state;
  return std::nullopt;
}

std::vector<TaskRecord> parse_task_lines(const std::string& text, const std::string& job_name) {
  std::vector<TaskRecord> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto bar1 = line.find('|');
    const auto bar2 = bar1 == std::string::npos ? bar1 : line.find('|', bar1 + 1);
    if (bar2 == std::string::npos) continue;
    const std::string id = line.substr(0, bar1), name = line.substr(bar1 + 1, bar2 - bar1 - 1);
    std::string state = line.substr(bar2 + 1);
    while (!state.empty() && (state.back() == '\r' || state.back() == ' ')) state.pop_back();
    if (name != job_name) continue;
    const auto us = id.find('_');
    if (us == std::string::npos || id.find('.') != std::string::npos) continue;  // not an array task, or a step
    TaskRecord r;
    try {
      size_t used = 0;
      r.job = std::stol(id.substr(0, us), &used);
      if (used != us) continue;
      const std::string task = id.substr(us + 1);
      r.task = std::stoi(task, &used);
      if (used != task.size() || r.task < 0) continue;  // "123_[4-9]": a pending range not expanded
    } catch (const std::exception&) {
      continue;
    }
    auto s = parse_slurm_state(state);
    if (!s) continue;
    r.state = *s;
    r.raw = state;
    out.push_back(r);
  }
  return out;
}

void SchedulerView::add(const std::string& job_name, const std::vector<TaskRecord>& records, bool live) {
  auto& m = tasks[job_name];
  for (const auto& r : records) {
    auto it = m.find(r.task);
    if (it == m.end()) {
      m.emplace(r.task, r);
      continue;
    }
    const bool it_live = it->second.state != SlurmState::Ended, r_live = r.state != SlurmState::Ended;
    // A live entry is the truth about now; otherwise the newer job wins, and for one job the queue
    // (fresher than accounting).
    if ((r_live && !it_live) || (r_live == it_live && (r.job > it->second.job || (live && r.job == it->second.job))))
      it->second = r;
  }
}

const TaskRecord* SchedulerView::find(const std::string& job_name, int task) const {
  auto j = tasks.find(job_name);
  if (j == tasks.end()) return nullptr;
  auto t = j->second.find(task);
  return t == j->second.end() ? nullptr : &t->second;
}

std::optional<CommandOutput> run_command(const std::vector<std::string>& argv) {
  if (argv.empty()) return std::nullopt;
  int fd[2];
  if (pipe(fd) != 0) return std::nullopt;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fd[0]);
  posix_spawn_file_actions_addclose(&fa, fd[1]);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int err = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fd[1]);
  if (err != 0) {
    close(fd[0]);
    return std::nullopt;
  }
  CommandOutput r;
  char buf[4096];
  for (ssize_t n; (n = read(fd[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    r.out.append(buf, static_cast<size_t>(n));
  }
  close(fd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  // posix_spawnp reports a missing program as exit 127 from the child on some libcs.
  if (r.exit_code == 127 && r.out.empty()) return std::nullopt;
  return r;
}

std::string day_before(const std::string& utc) {
  std::tm tm{};
  std::istringstream in(utc);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return "2000-01-01";
  const std::time_t t = timegm(&tm) - 24 * 3600;
  std::tm back{};
  gmtime_r(&t, &back);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &back);
  return buf;
}

SchedulerView ask_scheduler(const std::vector<std::string>& job_names, const std::string& created) {
  SchedulerView v;
  if (job_names.empty()) return v;
  // sacct reads -S in the cluster's local time; a day's margin covers every time zone.
  const std::string since = day_before(created);
  const std::string names = fmt::format("{}", fmt::join(job_names, ","));
  // Accounting first, so that the queue's live entries are added on top of it.
  auto acct = run_command({"sacct", "-n", "-P", "-X", "--array", "-S", since, "--name=" + names, "-o", "JobID,JobName,State"});
  if (acct && acct->exit_code == 0) {
    v.available = true;
    for (const auto& n : job_names) v.add(n, parse_task_lines(acct->out, n), false);
  }
  auto queue = run_command({"squeue", "-h", "-r", "--name=" + names, "-o", "%i|%j|%T"});
  if (queue && queue->exit_code == 0) {
    v.available = true;
    for (const auto& n : job_names) v.add(n, parse_task_lines(queue->out, n), true);
  }
  return v;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out.push_back(c);
  }
  return out + "'";
}

}  // namespace tbcheck::campaign
