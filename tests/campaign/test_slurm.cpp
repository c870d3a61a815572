// Tests of campaign/slurm.cpp: sbatch array lists, squeue/sacct line parsing, which scheduler
// record wins, shell quoting and running a command (no Slurm needed).
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "tbcheck/campaign/slurm.hpp"

using namespace tbcheck::campaign;

TEST_CASE("array_list joins runs of task indices", "[campaign][slurm]") {
  CHECK(array_list({5, 0, 1, 2, 7, 9, 10, 2}) == "0-2,5,7,9-10");
  CHECK(array_list({3}) == "3");
  CHECK(array_list({}).empty());
}

TEST_CASE("task lines of squeue and sacct: array tasks of the job name only", "[campaign][slurm]") {
  const std::string text =
      "120_3|tbcheck-c1-rtx3090|CANCELLED by 0\n"
      "120_4|tbcheck-c1-rtx3090|COMPLETED\n"
      "120_4.batch|tbcheck-c1-rtx3090|COMPLETED\n"  // a step: skipped
      "121_[5-9]|tbcheck-c1-rtx3090|PENDING\n"      // an unexpanded range: skipped
      "122_1|other-job|RUNNING\n"                   // another job name: skipped
      "123|tbcheck-c1-rtx3090|RUNNING\n"            // not an array task: skipped
      "124_2|tbcheck-c1-rtx3090|RUNNING\r\n"
      "125_6|tbcheck-c1-rtx3090|NO_SUCH_STATE\n"    // an unknown state is not guessed at
      "garbage\n";
  auto recs = parse_task_lines(text, "tbcheck-c1-rtx3090");
  REQUIRE(recs.size() == 3);
  CHECK(recs[0].job == 120);
  CHECK(recs[0].task == 3);
  CHECK(recs[0].state == SlurmState::Ended);
  CHECK(recs[0].raw == "CANCELLED by 0");
  CHECK(recs[1].task == 4);
  CHECK(recs[2].job == 124);
  CHECK(recs[2].state == SlurmState::Running);
  CHECK(parse_slurm_state("PENDING") == SlurmState::Pending);
  CHECK(parse_slurm_state("TIMEOUT") == SlurmState::Ended);
  CHECK_FALSE(parse_slurm_state("done").has_value());
}

TEST_CASE("sacct looks from the day before the campaign was planned", "[campaign][slurm]") {
  CHECK(day_before("2026-03-01T00:30:00") == "2026-02-28");
  CHECK(day_before("2024-03-01T23:59:59") == "2024-02-29");
  CHECK(day_before("yesterday") == "2000-01-01");
}

TEST_CASE("scheduler view: a live record beats an ended one, then the newer job", "[campaign][slurm]") {
  SchedulerView v;
  const std::string n = "tbcheck-c1-a100";
  v.add(n, {{10, 1, SlurmState::Ended, "CANCELLED"}, {10, 2, SlurmState::Ended, "FAILED"}}, false);
  v.add(n, {{11, 1, SlurmState::Pending, "PENDING"}, {9, 2, SlurmState::Ended, "COMPLETED"}}, true);
  REQUIRE(v.find(n, 1));
  CHECK(v.find(n, 1)->state == SlurmState::Pending);  // resubmitted: the queue entry counts
  CHECK(v.find(n, 2)->job == 10);                      // the older job's record does not replace the newer
  v.add(n, {{8, 1, SlurmState::Ended, "COMPLETED"}}, false);
  CHECK(v.find(n, 1)->state == SlurmState::Pending);
  CHECK(v.find(n, 3) == nullptr);
  CHECK(v.find("other", 1) == nullptr);
}

TEST_CASE("shell_quote survives the shell, and run_command captures output and exit codes", "[campaign][slurm]") {
  const std::string tricky = "it's a \"path\" with $HOME and `x`";
  auto r = run_command({"bash", "-c", "printf %s " + shell_quote(tricky)});
  REQUIRE(r);
  CHECK(r->exit_code == 0);
  CHECK(r->out == tricky);
  auto f = run_command({"bash", "-c", "echo out; echo err >&2; exit 3"});
  REQUIRE(f);
  CHECK(f->exit_code == 3);
  CHECK(f->out == "out\n");
  CHECK_FALSE(run_command({"tbcheck-no-such-program-xyz"}).has_value());
}
