// Tests of model/core/src/stop.cpp: a requested stop reaches the polls, the interrupt callbacks registered at
// the time or later, and writes (none starts, none half-done is placed, no folder is left behind).
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>

#include "scratch.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/stop.hpp"

using namespace tbcheck;
namespace fs = std::filesystem;

namespace {

// The request is process-wide: every test clears it again, whatever it checks.
struct StopRequest {
  explicit StopRequest(int sig) { model::request_stop_for_test(sig); }
  ~StopRequest() { model::request_stop_for_test(0); }
};

int stop_thrown() {
  try {
    model::throw_if_stopped();
  } catch (const model::Stopped& s) {
    return s.signal;
  }
  return 0;
}

}  // namespace

TEST_CASE("throw_if_stopped throws only once a stop was requested, with the signal", "[model][stop]") {
  CHECK(stop_thrown() == 0);
  CHECK_FALSE(model::stop_requested());
  {
    StopRequest r(SIGTERM);
    CHECK(model::stop_requested());
    CHECK(stop_thrown() == SIGTERM);
  }
  CHECK(stop_thrown() == 0);
}

TEST_CASE("a stop requested at a poll arrives at that poll and not before", "[model][stop]") {
  // The CLI fuzzer's way to cut a command short at a point its input chooses, the same on every run.
  model::request_stop_at_poll_for_test(SIGINT, 3);
  CHECK(stop_thrown() == 0);
  CHECK(stop_thrown() == 0);
  CHECK_FALSE(model::stop_requested());
  CHECK(stop_thrown() == SIGINT);
  CHECK(stop_thrown() == SIGINT);  // raised, it stays until cleared
  model::request_stop_for_test(0);
  CHECK(stop_thrown() == 0);
  // Cleared before it arrives, it never does.
  model::request_stop_at_poll_for_test(SIGTERM, 2);
  model::request_stop_for_test(0);
  for (int i = 0; i < 4; ++i) CHECK(stop_thrown() == 0);
  // The tests run the library without the command's handlers: a stop cannot end this process.
  CHECK_FALSE(model::stop_handlers_installed());
}

TEST_CASE("an interrupt scope begun after the stop is interrupted at once, one begun before is not", "[model][stop]") {
  int calls = 0;
  {
    model::InterruptScope before([&] { ++calls; });
    CHECK(calls == 0);
  }
  StopRequest r(SIGINT);
  model::InterruptScope after([&] { ++calls; });
  CHECK(calls == 1);
}

TEST_CASE("a stop keeps writes from starting and leaves no temporary nor a new folder", "[model][stop][io]") {
  test::ScratchDir t("stop");
  const std::string kept = t / "kept.json";
  model::write_file_atomic(kept, "{}\n");
  StopRequest r(SIGINT);
  CHECK_THROWS_AS(model::write_file_atomic(t / "new/folder/x.json", "{}\n"), model::Stopped);
  CHECK_FALSE(fs::exists(t / "new"));
  CHECK(fs::exists(kept));  // what was completely written stays
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::recursive_directory_iterator(t.path)) ++n;
  CHECK(n == 1);
}
