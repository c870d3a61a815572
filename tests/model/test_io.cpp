// Tests of model/core/src/io.cpp: atomic writes that never replace a record (also under a race), never
// replace corpus/hw/, leave no temporary, and input reads that give the real reason for a refusal.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "helpers.hpp"
#include "scratch.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/observation.hpp"

using namespace tbcheck;
using tbcheck::test::error_of;
namespace fs = std::filesystem;

namespace {

using Scratch = tbcheck::test::ScratchDir;

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t entries(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST_CASE("no-overwrite write keeps the existing record and the new content under another name", "[io]") {
  Scratch s;
  const std::string f = s / "r.json";
  model::write_file_atomic(f, "first", true);
  auto e = error_of([&] { model::write_file_atomic(f, "second", true); });
  CHECK(slurp(f) == "first");
  CHECK(slurp(s / "r.2.json") == "second");
  CHECK(std::string(e.what()).find("r.2.json") != std::string::npos);
  CHECK(entries(s.path) == 2);  // no temporary left
}

TEST_CASE("no-overwrite write is atomic across processes: of two racing writers one wins, none is lost", "[io]") {
  Scratch s;
  const std::string f = s / "race.json";
  // Both children stall mid-write (the tests' fault hook) so both are past any existence check.
  ::setenv("TBCHECK_TEST_WRITE_STALL_MS", "200", 1);
  pid_t kids[2];
  for (int i = 0; i < 2; ++i) {
    kids[i] = ::fork();
    if (kids[i] == 0) {
      try {
        model::write_file_atomic(f, i == 0 ? "child0" : "child1", true);
        std::_Exit(0);
      } catch (const model::InputError&) {
        std::_Exit(2);
      }
    }
  }
  ::unsetenv("TBCHECK_TEST_WRITE_STALL_MS");
  int codes[2];
  for (int i = 0; i < 2; ++i) {
    int st = 0;
    ::waitpid(kids[i], &st, 0);
    codes[i] = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  CHECK(codes[0] + codes[1] == 2);  // one 0, one 2
  const std::string a = slurp(f), b = slurp(s / "race.2.json");
  CHECK(((a == "child0" && b == "child1") || (a == "child1" && b == "child0")));
}

TEST_CASE("a file under corpus/hw/ is never replaced, even by a replacing write", "[io]") {
  Scratch s;
  const std::string f = s / "corpus/hw/rtx3090/case.json";
  model::write_file_atomic(f, "recorded", true);  // the missing folders are created by the write
  CHECK(model::is_hardware_record(f));
  auto e = error_of([&] { model::write_file_atomic(f, "other", false); });
  CHECK(e.reason().find("corpus/hw/") != std::string::npos);
  CHECK(slurp(f) == "recorded");
  auto e2 = error_of([&] { model::check_output_file(f, /*force=*/true, "--out"); });
  CHECK(e2.field() == "--out");
  CHECK_FALSE(model::is_hardware_record(s / "corpus/hwx/case.json"));
}

TEST_CASE("an output path that is a directory is refused with that reason", "[io]") {
  Scratch s;
  fs::create_directories(s / "d");
  auto e = error_of([&] { model::write_file_atomic(s / "d", "x", false); });
  CHECK(e.reason() == "is a directory");
  auto e2 = error_of([&] { model::check_output_file(s / "d", true, "--svg"); });
  CHECK(e2.reason() == "is a directory");
  CHECK(e2.field() == "--svg");
}

TEST_CASE("check_output_file refuses an existing file without force and accepts a creatable folder", "[io]") {
  Scratch s;
  model::write_file_atomic(s / "f.svg", "x");
  auto e = error_of([&] { model::check_output_file(s / "f.svg", false, "--svg"); });
  CHECK(e.reason().find("--force") != std::string::npos);
  model::check_output_file(s / "f.svg", true, "--svg");
  model::check_output_file(s / "new/deeper/f.svg", false, "--svg");
  CHECK_FALSE(fs::exists(s / "new"));  // checking creates nothing
  model::write_file_atomic(s / "plain", "x");
  auto e3 = error_of([&] { model::check_output_dir(s / "plain/sub", "--out"); });
  CHECK(e3.reason().find("not a folder") != std::string::npos);
}

TEST_CASE("temporaries are hidden, named after the process, and stale ones are removed by the next write", "[io]") {
  Scratch s;
  // A temporary of a process that no longer exists (pid 2^22 + 1 is above the default pid_max).
  const std::string stale = s / ".c.json.tbcheck-tmp.4194305.0";
  std::ofstream(stale) << "{\"kernels\": [";
  const std::string live = s / (".c.json.tbcheck-tmp." + std::to_string(::getppid()) + ".0");
  std::ofstream(live) << "x";
  CHECK(model::is_temporary_name(".c.json.tbcheck-tmp.4194305.0"));
  CHECK_FALSE(model::is_temporary_name("c.json"));
  model::write_file_atomic(s / "c.json", "{}", true);
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(live));  // its process is alive: not ours to remove
  fs::remove(live);
}

TEST_CASE("temporaries of a killed writer are never read as cases", "[io]") {
  Scratch s;
  std::ofstream(s / "k.json") << R"({"device": "rtx3090", "kernels": [{"name": "k", "blocks": 1, "threads": 32, "regs": 32, "smem": 0, "duration": 1}]})";
  std::ofstream(s / ".k2.json.tbcheck-tmp.4194305.0.json") << R"({"device": "rtx3090", "kernels": [)";
  auto cases = model::load_cases(s.path.string());
  REQUIRE(cases.size() == 1);
  CHECK(cases[0].id == "k");
}

TEST_CASE("case ids that would climb out of the output folder are refused", "[io]") {
  for (const char* bad : {"../../x", "/abs/x", "a/b", "..", ".", ""})
    CHECK(error_of([&] { model::check_case_id(bad, "f.json", "id"); }).field() == "id");
  model::check_case_id("case-3.sim-alg1", "f.json", "id");
}

TEST_CASE("input reads give the real reason: directory, symbolic link loop, dangling link, FIFO", "[io]") {
  Scratch s;
  fs::create_directories(s / "d");
  CHECK(error_of([&] { model::read_json_file(s / "d"); }).reason().find("is a directory") != std::string::npos);
  fs::create_symlink(s / "l1", s / "l2");
  fs::create_symlink(s / "l2", s / "l1");
  CHECK(error_of([&] { model::read_json_file(s / "l1"); }).reason() == "Too many levels of symbolic links");
  fs::create_symlink(s / "gone.json", s / "dangling.json");
  CHECK(error_of([&] { model::read_json_file(s / "dangling.json"); }).reason().find("dangling symbolic link") !=
        std::string::npos);
  REQUIRE(::mkfifo((s / "fifo").c_str(), 0600) == 0);
  CHECK(error_of([&] { model::read_json_file(s / "fifo"); }).reason().find("not a regular file") != std::string::npos);
}

TEST_CASE("an input file over the size limit is refused before it is read", "[io]") {
  Scratch s;
  {
    std::ofstream(s / "huge.json") << "";
  }
  fs::resize_file(s / "huge.json", static_cast<uintmax_t>(model::kMaxInputBytes) + 1);  // sparse: no disk used
  CHECK(error_of([&] { model::read_json_file(s / "huge.json"); }).reason().find("limited to") != std::string::npos);
}

TEST_CASE("a corpus folder with a symbolic link loop or a dangling link is bad input naming the link", "[io]") {
  Scratch s;
  std::ofstream(s / "ok.json") << R"({"device": "rtx3090", "kernels": [{"name": "k", "blocks": 1, "threads": 32, "regs": 32, "smem": 0, "duration": 1}]})";
  fs::create_symlink(s / "b.json", s / "a.json");
  fs::create_symlink(s / "a.json", s / "b.json");
  auto e = error_of([&] { model::load_cases(s.path.string()); });
  CHECK(e.where().find(".json") != std::string::npos);
  CHECK(e.reason() == "Too many levels of symbolic links");
  fs::remove(s / "a.json");
  auto e2 = error_of([&] { model::load_cases(s.path.string()); });
  CHECK(e2.where() == s / "b.json");
  CHECK(e2.reason().find("dangling") != std::string::npos);
}

TEST_CASE("only regular files or new paths are written: a FIFO or device is refused, --force or not", "[io]") {
  Scratch s;
  const std::string fifo = s / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (bool force : {false, true}) {
    const auto e = error_of([&] { model::check_output_file(fifo, force, "--svg"); });
    CHECK(e.field() == "--svg");
    CHECK(e.reason().find("not a regular file") != std::string::npos);
  }
  CHECK(error_of([&] { model::write_file_atomic(fifo, "x", false); }).reason().find("not a regular file") != std::string::npos);
  CHECK(error_of([&] { model::write_file_atomic(fifo, "x", true); }).reason().find("not a regular file") != std::string::npos);
  CHECK(fs::is_fifo(fs::symlink_status(fifo)));  // still the FIFO
  if (fs::exists("/dev/null")) {
    CHECK(error_of([&] { model::check_output_file("/dev/null", true, "--trace"); }).reason().find("not a regular file") !=
          std::string::npos);
    CHECK(fs::is_character_file("/dev/null"));
  }
  // A link to a FIFO is judged by what it names; a link to a regular file may be replaced (the link itself).
  fs::create_symlink(fifo, s / "to-pipe");
  CHECK_THROWS_AS(model::check_output_file(s / "to-pipe", true, "--svg"), model::InputError);
  model::write_file_atomic(s / "plain", "x");
  fs::create_symlink(s / "plain", s / "to-plain");
  model::write_file_atomic(s / "to-plain", "y");
  CHECK(slurp(s / "plain") == "x");
  CHECK(slurp(s / "to-plain") == "y");
}

TEST_CASE("write_file_if_absent writes only where nothing is, and says so", "[io]") {
  Scratch s;
  CHECK(model::write_file_if_absent(s / "r.json", "first"));
  CHECK_FALSE(model::write_file_if_absent(s / "r.json", "second"));
  CHECK(slurp(s / "r.json") == "first");
  CHECK(entries(s.path) == 1);  // no r.2.json, no temporary
}

TEST_CASE("case ids with a control character are refused without echoing it", "[io]") {
  for (const std::string& bad : {std::string("a\nb"), std::string("a\033[31mb"), std::string("a\0b", 3), std::string("a\x7f")}) {
    const auto e = error_of([&] { model::check_case_id(bad, "f.json", "id"); });
    CHECK(e.field() == "id");
    CHECK(e.reason().find("control character") != std::string::npos);
    CHECK(std::string(e.what()).find(bad) == std::string::npos);
  }
}

TEST_CASE("a write that fails removes the folders it created, and only those", "[io]") {
  Scratch t;
  fs::create_directories(t.path / "existing");
  // In a child: a file size limit makes every write fail (EFBIG, as a full disk does with ENOSPC).
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim {1, 1};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    int bad = 0;
    for (const std::string& p : {t / "new/a/b/x.json", t / "existing/y.json"}) {
      try {
        model::write_file_atomic(p, std::string(4096, 'x'));
        bad |= 1;  // the write should have failed
      } catch (const model::InputError&) {
      }
    }
    if (fs::exists(t.path / "new")) bad |= 2;
    if (!fs::is_directory(t.path / "existing") || !fs::is_empty(t.path / "existing")) bad |= 4;
    ::_exit(bad);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  REQUIRE(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 0);
}
