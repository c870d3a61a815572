// Progress on stderr for the long commands issue 44 names beyond validate, check and distinguish: suite,
// learn with an oracle and with recordings, and campaign collect; lines off a terminal, none with --quiet.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <sys/wait.h>
#include <thread>

#include <fmt/format.h>

#include "helpers.hpp"
#include "shell.hpp"
#include "tbcheck/report/table.hpp"

using namespace tbcheck;
namespace fs = std::filesystem;

namespace {

struct Run {
  int exit_code = -1;
  std::string err;  // stderr alone: progress must not reach stdout
};

// Runs tbcheck from the repository root with stdout discarded and stderr captured, progress lines every
// 10 ms (TBCHECK_PROGRESS_SECONDS) so that a command of a fraction of a second shows some.
Run run_for_stderr(const std::string& args) {
  const test::RunResult r = test::run_shell("cd '" + std::string(TBCHECK_SOURCE_DIR) +
                                            "' && TBCHECK_PROGRESS_SECONDS=0.01 '" + std::string(TBCHECK_BINARY) +
                                            "' " + args + " 2>&1 >/dev/null");
  return {r.exit_code, r.out};
}

bool found(const std::string& text, const std::string& pattern) { return std::regex_search(text, std::regex(pattern)); }

// The command with progress shows lines matching `pattern`; with --quiet it writes nothing on stderr.
void check_progress(const std::string& args, int exit_code, const std::string& pattern) {
  const Run shown = run_for_stderr(args);
  INFO(args << "\n" << shown.err);
  CHECK(shown.exit_code == exit_code);
  CHECK(found(shown.err, pattern));
  const Run quiet = run_for_stderr(args + " --quiet");
  INFO(quiet.err);
  CHECK(quiet.exit_code == exit_code);
  CHECK(quiet.err.empty());
}

}  // namespace

TEST_CASE("suite reports cases simulated on stderr off a terminal and nothing with --quiet", "[cli][progress]") {
  // 2,052 cases (002-olmedo's collections): about a second of simulations.
  check_progress("suite corpus/paper/002-olmedo --hypotheses alg1,round-robin,most-room", 0, R"(suite: \d+/\d+ \(\d+%\), \d+ s elapsed, (about \d+ s left|estimating|finishing))");
}

TEST_CASE("learn with an oracle reports its step and the candidates left", "[cli][progress][learn]") {
  // Without synthesis learn stays unconfirmed (exit 1) after five steps over seed 000's cases.
  check_progress("learn --device rtx3090 --hypotheses all --oracle sim:alg1 --corpus corpus/paper/000-wang --no-synthesis", 1,
                 R"(learn: step \d+ of at most 100: choosing a splitting case and asking the oracle: \d+ s elapsed; \d+ (of \d+ )?candidates)");
}

TEST_CASE("learn from recordings reports the recording it applies and the judgements counted", "[cli][progress][learn]") {
  // The measured H100 recordings against the shipped hypotheses (model timing): none fits (exit 1), and the
  // nearest are judged after the recordings.
  // The first recording refutes the whole sample at once here (the stage ends before a tick): either stage counts.
  check_progress("learn --device h100-sxm --hypotheses all --oracle replay:corpus/hw/h100 --corpus corpus/paper/000-wang", 1,
                 R"(learn \(replay\): (recording \d+ of \d+ \(\d+ groups left\)|the nearest candidates): \d+/\d+ \(\d+%\))");
  CHECK(found(run_for_stderr("learn --device h100-sxm --hypotheses all --oracle replay:corpus/hw/h100 --corpus corpus/paper/000-wang").err,
              R"(learn \(replay\): the nearest candidates: \d+/\d+)"));
}

TEST_CASE("campaign collect reports the validation of what it collected", "[cli][progress][campaign]") {
  test::ScratchDir d("progress");
  const std::string tb = fmt::format("'{}'", TBCHECK_BINARY);  // fmt: GCC 12 warns falsely (-Wrestrict) on "'" + std::string
  // Three cases of 100,000 blocks: collect validates them under every shipped hypothesis (about a second),
  // long enough for lines however loaded the machine. One array task runs them, as slurmd would.
  for (int i = 1; i <= 3; ++i)
    d.write(fmt::format("cases/big-{}.json", i),
            fmt::format(R"({{"id": "big-{}", "device": "rtx3090", "kernels": [{{"name": "k", "blocks": 100000,
              "threads": 256, "regs": 32, "smem": 0, "duration": {}}}]}})", i, i));
  const std::string plan = tb + " campaign plan --cases '" + (d / "cases") +
                           "' --device rtx3090 --oracle sim:alg1 --repeat 1 --chunk 3 --out '" + (d / "c") +
                           "' >/dev/null && SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_JOB_ID=1 bash '" + (d / "c/rtx3090.sbatch") +
                           "' >/dev/null 2>&1";
  REQUIRE(std::system(plan.c_str()) == 0);
  const Run shown = run_for_stderr("campaign collect '" + (d / "c") + "' --to '" + (d / "hw") + "'");
  INFO(shown.err);
  CHECK(found(shown.err, R"(campaign collect: validating: \d+/\d+ \(\d+%\))"));
  fs::remove_all(d / "hw");
  const Run quiet = run_for_stderr("campaign collect '" + (d / "c") + "' --to '" + (d / "hw") + "' --quiet");
  CHECK(quiet.exit_code == shown.exit_code);
  CHECK(quiet.err.empty());
}

TEST_CASE("staged progress names the stage and restarts its count", "[report][progress]") {
  // stderr to a file (not a terminal); the interval from the environment, as the commands read it.
  ::setenv("TBCHECK_PROGRESS_SECONDS", "0.05", 1);
  std::fflush(stderr);
  FILE* tmp = std::tmpfile();
  const int saved = dup(2);
  dup2(fileno(tmp), 2);
  {
    report::Progress p("work");
    // Several intervals each, so that a loaded machine still wakes the timer in time.
    std::this_thread::sleep_for(std::chrono::milliseconds(400));  // before any stage: the time alone
    p.stage("first", 4);
    p.tick(3);
    p.note("2 left");
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
  }
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  ::unsetenv("TBCHECK_PROGRESS_SECONDS");
  std::rewind(tmp);
  std::string out;
  for (int c; (c = std::fgetc(tmp)) != EOF;) out.push_back(static_cast<char>(c));
  std::fclose(tmp);
  INFO(out);
  CHECK(found(out, R"(work: 0 s elapsed\n)"));
  CHECK(found(out, R"(work: first: 3/4 \(75%\), 0 s elapsed, about 0 s left; 2 left\n)"));
}
