// End-to-end tests of the first reliability pass, one per row: bad input is exit 2 naming the file/flag/field, nothing
// is written outside --out, no record is lost or replaced, and faults (kill, full disk, read-only) leave nothing partial.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

#include "helpers.hpp"
#include "scratch.hpp"
#include "shell.hpp"

using tbcheck::test::run_tbcheck;
namespace fs = std::filesystem;

namespace {

struct Tmp : tbcheck::test::ScratchDir {
  Tmp() : ScratchDir("rel") {}
};

// A bash script run from the repository root with $TB the tbcheck binary; stdout and stderr together.
tbcheck::test::RunResult sh(const std::string& script) {
  const std::string cmd = "cd '" + std::string(TBCHECK_SOURCE_DIR) + "' && TB='" + std::string(TBCHECK_BINARY) +
                          "' bash -c '" + [&] {
                            std::string q;
                            for (char c : script) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
                            return q;
                          }() + "' 2>&1";
  return tbcheck::test::run_shell(cmd);
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

size_t entries(const fs::path& dir) {
  size_t n = 0;
  if (fs::exists(dir))
    for ([[maybe_unused]] const auto& e : fs::recursive_directory_iterator(dir)) ++n;
  return n;
}

bool any_temporary(const fs::path& dir) {
  if (!fs::exists(dir)) return false;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (has(e.path().filename().string(), ".tbcheck-tmp.")) return true;
  return false;
}

bool valid_json_file(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return !tbcheck::model::json::parse(ss.str()).is_discarded();
  } catch (...) {
    return false;
  }
}

std::string small_case(const std::string& id, int blocks = 3) {
  return R"({"id": ")" + id + R"(", "device": "rtx3090", "kernels": [{"name": "k1", "blocks": )" + std::to_string(blocks) +
         R"(, "threads": 256, "regs": 32, "smem": 0, "duration": 2}, {"name": "k2", "blocks": 2, "threads": 64, "regs": 32, "smem": 0, "duration": 1}]})";
}

// Whether this environment lets a test mount (a private mount namespace as root).
bool can_mount() {
  static const bool ok = ::getuid() == 0 && sh("unshare -m true").exit_code == 0 &&
                         sh("d=$(mktemp -d) && unshare -m sh -c \"mount -t tmpfs -o size=64k tmpfs $d\"; r=$?; rmdir $d; exit $r")
                                 .exit_code == 0;
  return ok;
}

}  // namespace

TEST_CASE("row 1: a case id climbing out of --out is refused before any path is built", "[reliability][cli]") {
  Tmp t;
  for (const char* id : {"../../escaped", "/tmp/abs-escaped"}) {
    const std::string f = t.write("c.json", small_case(id));
    auto r = run_tbcheck("run " + f + " --oracle sim:alg1 --out " + (t / "a/b/out"));
    CHECK(r.exit_code == 2);
    CHECK(has(r.out, "id"));
    CHECK(has(r.out, "path separator"));
  }
  CHECK(entries(t.path) == 1);  // only c.json: nothing written anywhere
  CHECK_FALSE(fs::exists("/tmp/abs-escaped.sim-alg1.json"));
}

TEST_CASE("row 2: two runs into the same --out lose no record: one wins, the other exits 2 with its result kept", "[reliability][cli]") {
  Tmp t;
  const std::string f = t.write("c.json", small_case("c"));
  const std::string out = t / "out";
  // Both stall mid-write (the write fault hook), so both are past the output check when they place the file.
  auto r = sh("export TBCHECK_TEST_WRITE_STALL_MS=400; $TB run " + f + " --oracle sim:alg1 --out " + out +
              " > " + (t / "1.log") + " 2>&1 & p1=$!; $TB run " + f + " --oracle sim:alg1 --out " + out + " > " +
              (t / "2.log") + " 2>&1 & p2=$!; wait $p1; e1=$?; wait $p2; e2=$?; echo \"codes $e1 $e2\"");
  CHECK((has(r.out, "codes 0 2") || has(r.out, "codes 2 0")));
  CHECK(valid_json_file(out + "/c.sim-alg1.json"));
  CHECK(valid_json_file(out + "/c.sim-alg1.2.json"));
  std::ifstream l1(t / "1.log"), l2(t / "2.log");
  std::stringstream logs;
  logs << l1.rdbuf() << l2.rdbuf();
  CHECK(has(logs.str(), "kept as"));
  CHECK_FALSE(any_temporary(out));
}

TEST_CASE("row 3: outputs are never silently replaced: --force replaces, corpus/hw/ never", "[reliability][cli]") {
  Tmp t;
  const std::string f = t.write("c.json", small_case("c"));
  const std::string svg = t.write("p.svg", "mine");
  auto r = run_tbcheck("predict " + f + " --svg " + svg);
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "--svg"));
  CHECK(has(r.out, "--force"));
  CHECK(run_tbcheck("predict " + f + " --trace " + svg).exit_code == 2);
  CHECK(run_tbcheck("validate " + f + " -H alg1 --report " + svg).exit_code == 2);
  CHECK(run_tbcheck("export-examiner " + f + " --out " + svg).exit_code == 2);
  std::ifstream in(svg);
  std::string kept;
  std::getline(in, kept);
  CHECK(kept == "mine");
  CHECK(run_tbcheck("predict " + f + " --svg " + svg + " --force").exit_code == 0);
  const std::string hw = t.write("corpus/hw/rtx3090/rec.json", "recorded");
  auto h = run_tbcheck("export-examiner " + f + " --out " + hw + " --force");
  CHECK(h.exit_code == 2);
  CHECK(has(h.out, "corpus/hw/"));
  std::ifstream hin(hw);
  std::getline(hin, kept);
  CHECK(kept == "recorded");
}

TEST_CASE("row 3: distinguish --out refuses to replace an existing witness without --force", "[reliability][cli]") {
  Tmp t;
  const std::string bounds = " -H alg1,round-robin --max-kernels 2 --max-blocks 3 --timeout 2 --pair-budget 4 -j 1 --out " + (t / "s");
  auto first = run_tbcheck("distinguish" + bounds);
  REQUIRE(first.exit_code == 0);
  REQUIRE(entries(t / "s") == 1);
  auto again = run_tbcheck("distinguish" + bounds);
  CHECK(again.exit_code == 2);
  CHECK(has(again.out, "already exists"));
  CHECK(entries(t / "s") == 1);
  CHECK(run_tbcheck("distinguish" + bounds + " --force").exit_code == 0);
}

TEST_CASE("row 4: a corpus folder with a symbolic link loop is exit 2 naming the link, for every loader", "[reliability][cli]") {
  Tmp t;
  t.write("corp/ok.json", small_case("ok"));
  fs::create_symlink(t / "corp/b.json", t / "corp/a.json");
  fs::create_symlink(t / "corp/a.json", t / "corp/b.json");
  const std::string d = t / "corp";
  for (const std::string& cmd : {"validate " + d, "suite " + d, "learn --device rtx3090 --oracle sim:alg1 --no-synthesis --corpus " + d,
                                 "check alg1 --synthesize none --corpus " + d}) {
    auto r = run_tbcheck(cmd);
    CHECK(r.exit_code == 2);
    CHECK(has(r.out, "Too many levels of symbolic links"));
    CHECK(has(r.out, "corp/a.json"));
  }
  fs::remove(t / "corp/a.json");
  auto r = run_tbcheck("validate " + d);
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "dangling symbolic link"));
}

TEST_CASE("rows 5, 7, 16: floating flags reject nan, inf and meaningless values with a readable range", "[reliability][cli]") {
  Tmp t;
  const std::string f = t.write("c.json", small_case("c"));
  for (const std::string& cmd : std::vector<std::string>{std::string("distinguish --timeout nan --pair-budget nan"), std::string("distinguish --timeout inf"),
        std::string("distinguish --pair-budget -1"), std::string("distinguish --timeout 0"),
        "check alg1 --timeout nan", "predict " + f + " --trace " + (t / "t.json") + " --us-per-unit nan",
        "run " + f + " --oracle sim:alg1 --noise nan", "run " + f + " --oracle sim:alg1 --repeat 0",
        "learn --device rtx3090 --oracle sim:alg1 --timeout -inf"}) {
    auto r = run_tbcheck(cmd);
    INFO(cmd << "\n" << r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.size() < 400);  // no 300-digit range
    CHECK((has(r.out, "not a finite number") || has(r.out, "not between") || has(r.out, "not above")));
  }
  CHECK_FALSE(fs::exists(t / "t.json"));
}

TEST_CASE("row 6: --repeat has a documented upper bound, and repetitions x blocks are bounded before allocating", "[reliability][cli]") {
  Tmp t;
  const std::string f = t.write("c.json", small_case("c"));
  auto r = run_tbcheck("run " + f + " --oracle sim:alg1 --repeat 1000000000 --out " + (t / "o"));
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "10000"));
  CHECK(has(run_tbcheck("run --help").out, "1 to 10000"));
  const std::string big = t.write("big.json", small_case("big", 1 << 22));
  auto b = run_tbcheck("run " + big + " --oracle sim:alg1 --repeat 10 --out " + (t / "o"));
  CHECK(b.exit_code == 2);
  CHECK(has(b.out, "2^25"));
  CHECK_FALSE(fs::exists(t / "o"));
}

TEST_CASE("row 6: run --repeat draws progress when stderr is a terminal, and none otherwise", "[reliability][cli]") {
  Tmp t;
  const std::string f = t.write("c.json", small_case("c"));
  if (sh("command -v script").exit_code != 0) {
    WARN("no script(1) to give the command a terminal; the terminal half is skipped");
  } else {
    // script(1) runs the command on a pseudo-terminal, as a user at a shell would.
    auto tty = sh("script -qec \"$TB run " + f + " --oracle sim:alg1 --repeat 50 --out " + (t / "a") + "\" /dev/null");
    CHECK(tty.exit_code == 0);
    CHECK(has(tty.out, "50/50 (100%)"));
  }
  auto piped = run_tbcheck("run " + f + " --oracle sim:alg1 --repeat 50 --out " + (t / "b"));
  CHECK(piped.exit_code == 0);
  CHECK_FALSE(has(piped.out, "(50/50)"));
}

TEST_CASE("row 8 and 12: a directory where a file belongs is named as such", "[reliability][cli]") {
  Tmp t;
  const std::string f = t.write("c.json", small_case("c"));
  fs::create_directories(t / "d");
  auto out = run_tbcheck("predict " + f + " --trace " + (t / "d") + " --force");
  CHECK(out.exit_code == 2);
  CHECK(has(out.out, "is a directory"));
  auto in = run_tbcheck("predict " + (t / "d"));
  CHECK(in.exit_code == 2);
  CHECK(has(in.out, "is a directory"));
  CHECK_FALSE(has(in.out, "malformed"));
}

TEST_CASE("row 9: examiner block times beyond a run's span are rejected naming the field", "[reliability][cli]") {
  Tmp t;
  const std::string log = t.write("log.json", R"({"scenario_name": "s", "times": [{}, {"cpu_times": [0.1, 0.2]},
    {"kernel_name": "K1", "block_count": 2, "thread_count": 256, "block_times": [0.1, 1e12, 0.1, 0.12], "block_smids": [0, 2]}]})");
  auto r = run_tbcheck("import-examiner " + log + " --device rtx3090 --out " + (t / "o"));
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "block_times"));
  CHECK_FALSE(fs::exists(t / "o"));
}

TEST_CASE("row 10: a duplicate JSON key is exit 2 naming the key in every loader", "[reliability][cli]") {
  Tmp t;
  const std::string c = t.write("c.json", R"({"device": "rtx3090", "kernels": [{"name": "k1", "blocks": 41, "blocks": 2,
    "threads": 256, "regs": 32, "smem": 0, "duration": 2}]})");
  for (const std::string& cmd : {"predict " + c, "validate " + c, "run " + c + " --oracle sim:alg1 --out " + (t / "o")}) {
    auto r = run_tbcheck(cmd);
    CHECK(r.exit_code == 2);
    CHECK(has(r.out, "kernels[0].blocks"));
    CHECK(has(r.out, "duplicate key"));
  }
  const std::string h = t.write("h.json", R"({"name": "x", "base": "alg1", "name": "y"})");
  CHECK(has(run_tbcheck("predict " + t.write("ok.json", small_case("ok")) + " -H " + h).out, "duplicate key"));
  const std::string d = t.write("d.json", R"({"name": "x", "name": "y"})");
  CHECK(has(run_tbcheck("import-examiner " + c + " --device " + d).out, "duplicate key"));
}

TEST_CASE("row 11: a scenario too large to simulate is exit 2 naming the limit, before allocating", "[reliability][cli]") {
  Tmp t;
  std::string ks;
  for (int i = 0; i < 4; ++i)
    ks += std::string(i ? "," : "") + R"({"name": "k)" + std::to_string(i) +
          R"(", "blocks": 67108864, "threads": 32, "regs": 32, "smem": 0, "duration": 1})";
  const std::string f = t.write("big.json", R"({"device": "rtx3090", "kernels": [)" + ks + "]}");
  auto r = run_tbcheck("predict " + f);
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "2^24"));
}

TEST_CASE("row 13: a file symbolic link loop is named as one", "[reliability][cli]") {
  Tmp t;
  fs::create_symlink(t / "f2", t / "f1");
  fs::create_symlink(t / "f1", t / "f2");
  auto r = run_tbcheck("predict " + (t / "f1"));
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "Too many levels of symbolic links"));
}

TEST_CASE("row 14: SIGTERM mid-write removes the temporary and writes no target", "[reliability][fault][cli]") {
  Tmp t;
  const std::string f = t.write("c.json", small_case("c", 20000));
  const std::string out = t / "out";
  auto r = sh("TBCHECK_TEST_WRITE_STALL_MS=5000 $TB run " + f + " --oracle sim:alg1 --out " + out +
              " & p=$!; for i in $(seq 100); do ls -a " + out + " 2>/dev/null | grep -q tbcheck-tmp && break; sleep 0.1; done; "
              "ls -a " + out + " | grep -c tbcheck-tmp; kill -TERM $p; wait $p; echo \"status $?\"");
  CHECK(has(r.out, "1\n"));  // a temporary existed mid-write
  CHECK(has(r.out, "status 143"));
  CHECK_FALSE(any_temporary(out));
  CHECK_FALSE(fs::exists(out + "/c.sim-alg1.json"));
}

TEST_CASE("fault: kill -9 of run, minimize and distinguish mid-write leaves nothing partial, and the rerun succeeds", "[reliability][fault][cli]") {
  Tmp t;
  const std::string f = t.write("c.json", small_case("c", 20000));
  const std::string m = t.write("m.json", small_case("m", 100));
  struct Cmd {
    std::string args, target, watch;
  };
  const std::vector<Cmd> cmds = {
      {"run " + f + " --oracle sim:alg1 --out " + (t / "run"), t / "run/c.sim-alg1.json", t / "run"},
      {"minimize " + m + " --keep-disagreement alg1,round-robin --out " + (t / "min/m.json"), t / "min/m.json", t / "min"},
      {"distinguish -H alg1,round-robin --max-kernels 2 --max-blocks 3 --timeout 2 --pair-budget 4 -j 1 --out " + (t / "dis"), "",
       t / "dis"}};
  for (const auto& c : cmds) {
    INFO(c.args);
    auto r = sh("TBCHECK_TEST_WRITE_STALL_MS=20000 $TB " + c.args + " & p=$!; for i in $(seq 600); do ls -a " + c.watch +
                " 2>/dev/null | grep -q tbcheck-tmp && break; sleep 0.1; done; kill -KILL $p; wait $p; echo \"status $?\"");
    CHECK(has(r.out, "status 137"));
    CHECK(any_temporary(c.watch));  // killed mid-write: the stale temporary is there, the target is not
    if (!c.target.empty()) CHECK_FALSE(fs::exists(c.target));
    auto again = run_tbcheck(c.args);
    CHECK(again.exit_code == 0);
    CHECK_FALSE(any_temporary(c.watch));  // removed by the rerun's write
    if (!c.target.empty()) CHECK(valid_json_file(c.target));
    for (const auto& e : fs::directory_iterator(c.watch)) CHECK(valid_json_file(e.path().string()));
  }
}

TEST_CASE("fault: a full disk is exit 2 with the reason and leaves nothing partial", "[reliability][fault][cli]") {
  Tmp t;
  const std::string f = t.write("c.json", small_case("c", 20000));
  const std::string out = t / "small";
  fs::create_directories(out);
  std::string script;
  if (can_mount()) {
    script = "unshare -m bash -c 'mount -t tmpfs -o size=64k tmpfs " + out + " && $TB run " + f + " --oracle sim:alg1 --out " + out +
             "; echo \"status $?\"; ls -a " + out + " | wc -l'";
  } else {
    WARN("cannot mount a tmpfs here: the full disk is emulated with a 64 KiB file size limit (ulimit -f)");
    script = "ulimit -f 64; $TB run " + f + " --oracle sim:alg1 --out " + out + "; echo \"status $?\"; ls -a " + out + " | wc -l";
  }
  auto r = sh(script);
  INFO(r.out);
  CHECK(has(r.out, "status 2"));
  CHECK((has(r.out, "No space left on device") || has(r.out, "File too large")));
  CHECK(has(r.out, "\n2\n"));  // only . and ..: neither a temporary nor a partial target
}

TEST_CASE("fault: a read-only corpus is exit 2 before the work, with nothing written", "[reliability][fault][cli]") {
  Tmp t;
  const std::string f = t.write("c.json", small_case("c"));
  const std::string ro = t / "ro";
  t.write("ro/keep.json", small_case("keep"));
  const std::string cmds = "$TB run " + f + " --oracle sim:alg1 --out " + ro + "; echo \"status $?\"; $TB random --count 2 --out " + ro +
                           "/sub; echo \"status $?\"; ls -a " + ro + " | wc -l";
  std::string script;
  if (can_mount()) {
    // Root ignores permission bits, so the folder is made read-only by a read-only bind mount.
    script = "unshare -m bash -c 'mount --bind -o ro " + ro + " " + ro + " && " + cmds + "'";
  } else if (::getuid() != 0) {
    script = "chmod a-w " + ro + "; " + cmds + "; chmod u+w " + ro;
  } else {
    WARN("running as root without mount rights: a read-only folder cannot be made; skipped");
    return;
  }
  auto r = sh(script);
  INFO(r.out);
  CHECK(has(r.out, "status 2\n"));
  CHECK_FALSE(has(r.out, "status 0"));
  CHECK((has(r.out, "Read-only file system") || has(r.out, "Permission denied")));
  CHECK(has(r.out, "\n3\n"));  // ., .. and keep.json
}

TEST_CASE("row 15: predict -H all skips the hypotheses that cannot run the case, saying so", "[reliability][cli]") {
  Tmp t;
  const std::string f = t.write("c.json", small_case("c"));
  auto r = run_tbcheck("predict " + f + " -H all");
  CHECK(r.exit_code == 0);
  CHECK(has(r.out, "skipped (not applicable) fermi"));
  CHECK(has(r.out, "alg1 on rtx3090"));
  CHECK(run_tbcheck("predict " + f + " -H fermi").exit_code == 2);
}

TEST_CASE("row 17: errors name the flag or field the user gave", "[reliability][cli]") {
  Tmp t;
  const std::string f = t.write("c.json", small_case("c"));
  auto r = run_tbcheck("run " + f + " --oracle sim:nosuch --out " + (t / "o"));
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "--oracle"));
  CHECK_FALSE(has(r.out, "--hypothesis"));
  auto m = run_tbcheck("minimize " + f + " --keep-disagreement alg1,alg1");
  CHECK(m.exit_code == 2);
  CHECK(has(m.out, "--keep-disagreement"));
  const std::string log = t.write("log.json", R"({"scenario_name": "s", "times": [{}, {"cpu_times": [0.1, 0.2]},
    {"kernel_name": "K1", "block_count": 2, "thread_count": 5000, "block_times": [0.1, 0.12, 0.1, 0.12], "block_smids": [0, 2]}]})");
  auto e = run_tbcheck("import-examiner " + log + " --device rtx3090 --out " + (t / "o"));
  CHECK(e.exit_code == 2);
  CHECK(has(e.out, "times[2].thread_count"));
}

TEST_CASE("row 18: a command failing on bad input creates nothing, and --out is created when missing", "[reliability][cli]") {
  Tmp t;
  auto r = run_tbcheck("random --judge nosuch --out " + (t / "rnd"));
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "--judge"));
  CHECK_FALSE(fs::exists(t / "rnd"));
  CHECK(run_tbcheck("random --count 2 --out " + (t / "new/deeper")).exit_code == 0);
  CHECK(entries(t / "new/deeper") == 2);
  const std::string f = t.write("c.json", small_case("c"));
  CHECK(run_tbcheck("run " + f + " --oracle sim:alg1 --out " + (t / "made/here")).exit_code == 0);
  CHECK(fs::exists(t / "made/here/c.sim-alg1.json"));
}

TEST_CASE("row 19: outputs are checked before the work starts", "[reliability][cli]") {
  Tmp t;
  const std::string blocker = t.write("file", "x");
  auto d = run_tbcheck("distinguish --out " + blocker + "/sub");
  CHECK(d.exit_code == 2);
  CHECK(has(d.out, "--out"));
  CHECK_FALSE(has(d.out, "pairs on"));  // no solver table: stopped before the work
  const std::string f = t.write("c.json", small_case("c"));
  REQUIRE(run_tbcheck("run " + f + " --oracle sim:alg1 --out " + (t / "o")).exit_code == 0);
  auto again = run_tbcheck("run " + f + " --oracle sim:alg1 --out " + (t / "o"));
  CHECK(again.exit_code == 2);
  CHECK(has(again.out, "already exists"));
  CHECK_FALSE(has(again.out, "repetitions"));
  auto cuda = run_tbcheck("run " + f + " --oracle cuda --out " + blocker);
  CHECK(cuda.exit_code == 2);
  CHECK(has(cuda.out, "not a folder"));
}

TEST_CASE("a FIFO or device as --svg or --trace target is refused, --force or not, and stays what it was", "[reliability][cli]") {
  Tmp t;
  const std::string f = t.write("c.json", small_case("c"));
  const std::string fifo = t / "pipe";
  REQUIRE(sh("mkfifo " + fifo).exit_code == 0);
  for (const std::string flag : {"--svg", "--trace"})
    for (const std::string force : {"", " --force"}) {
      auto r = run_tbcheck("predict " + f + " " + flag + " " + fifo + force);
      INFO(flag << force << "\n" << r.out);
      CHECK(r.exit_code == 2);
      CHECK(has(r.out, flag + ": is not a regular file"));
    }
  CHECK(fs::is_fifo(fs::symlink_status(fifo)));
  // A device node of our own (the null device's numbers), where mknod is allowed: a regression replaces
  // it, never the machine's /dev/null, as reproducing this row as root once did.
  const std::string node = t / "null";
  if (sh("mknod " + node + " c 1 3 2>/dev/null").exit_code == 0) {
    auto r = run_tbcheck("predict " + f + " --svg " + node + " --force");
    CHECK(r.exit_code == 2);
    CHECK(fs::is_character_file(fs::symlink_status(node)));
  } else {
    WARN("mknod is not allowed here (not root): the device-node half of this test did not run");
  }
}

TEST_CASE("pictures and traces refuse a schedule above their stated size before simulating", "[reliability][cli]") {
  Tmp t;
  const std::string big = t.write("big.json", small_case("big", (1 << 16) + 1));
  for (const std::string flag : {"--svg", "--trace"}) {
    auto r = run_tbcheck("predict " + big + " " + flag + " " + (t / "p.out"));
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK(has(r.out, flag + ": the scenario has 65539 blocks; pictures and traces draw at most 65536"));
  }
  CHECK_FALSE(fs::exists(t / "p.out"));
  const std::string fits = t.write("fits.json", small_case("fits", (1 << 16) - 2));
  CHECK(run_tbcheck("predict " + fits + " --svg " + (t / "p.svg")).exit_code == 0);
}

TEST_CASE("predict --json refuses a schedule above its stated size before simulating", "[reliability][cli]") {
  Tmp t;
  // 2^20 blocks in all: one hypothesis fits at 2^20 - 2 + 2 blocks, two do not.
  const std::string at_limit = t.write("limit.json", small_case("limit", (1 << 20) - 2));
  const std::string one_more = t.write("more.json", small_case("more", (1 << 20) - 1));
  auto r = run_tbcheck("predict " + one_more + " --json");
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "--json: 1048577 blocks under 1 hypothesis(es); the schedule JSON holds at most 1048576"));
  r = run_tbcheck("predict " + at_limit + " --json -H alg1,most-room");
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "--json: 1048576 blocks under 2 hypothesis(es)"));
  CHECK(run_tbcheck("predict " + t.write("small.json", small_case("small", 1000)) + " --json -H alg1,most-room").exit_code == 0);
}

TEST_CASE("learn refuses an oracle that cannot play the device before any step, naming --oracle", "[reliability][cli]") {
  for (const std::string& cmd : {std::string("learn --device rtx3090 --oracle sim:fermi --no-synthesis --corpus corpus/paper"),
                                 std::string("learn --device rtx3090 --oracle sim:nosuch --no-synthesis --corpus corpus/paper")}) {
    auto r = run_tbcheck(cmd);
    INFO(cmd << "\n" << r.out);
    CHECK(r.exit_code == 2);
    CHECK(has(r.out, "--oracle: "));
    CHECK_FALSE(has(r.out, "step 1"));
    CHECK_FALSE(has(r.out, "--hypothesis"));
  }
}

TEST_CASE("learn skips and counts the cases an oracle cannot run instead of stopping", "[reliability][cli]") {
  // sim:fermi has no TPC masks: the masked case splits fermi from its twin that ignores masks, but the
  // oracle cannot run it. It is set aside, not a step, and the run ends as undecided (exit 1), not with exit 2.
  Tmp t;
  const std::string twin = t.write("fermi-masks-ignored.json", R"({"name": "fermi-masks-ignored", "base": "fermi", "partition": "ignore"})");
  const std::string args = "learn --device quadro6000 --oracle sim:fermi --no-synthesis --hypotheses fermi," + twin +
                           " --corpus corpus/synth/synth-rtx3090-alg1-vs-alg1-partition-ignore.json";
  auto text = run_tbcheck(args);
  INFO(text.out);
  CHECK(text.exit_code == 1);
  CHECK(has(text.out, "skipped 1 case(s) the oracle cannot run (not steps; first: synth-rtx3090-alg1-vs-alg1-partition-ignore: "));
  CHECK_FALSE(has(text.out, "step 1"));
  CHECK(has(text.out, "undecided: fermi, fermi-masks-ignored"));
  auto j = run_tbcheck(args + " --json");
  REQUIRE(j.exit_code == 1);
  const auto doc = nlohmann::json::parse(j.out.substr(j.out.find('{')));
  CHECK(doc["skipped_count"] == 1);
  CHECK(doc["skipped"][0]["case"] == "synth-rtx3090-alg1-vs-alg1-partition-ignore");
  CHECK(doc["steps"].empty());
}

TEST_CASE("errors name the flag the user typed", "[reliability][cli]") {
  Tmp t;
  const std::string f = t.write("c.json", small_case("c"));
  const std::vector<std::pair<std::string, std::string>> said = {
      {"predict " + f + " --contested --against nosuch --no-synthesis --evidence " + f, "--against: unknown hypothesis 'nosuch'"},
      {"campaign plan --cases corpus/synth --device rtx3090 --oracle sim:nosuch --out " + (t / "camp"),
       "--oracle: unknown hypothesis 'nosuch'"},
      {"run " + f + " --oracle sim:fermi --out " + (t / "o"), "sim:fermi cannot run this scenario (device: "},
      {"random --judge all --out " + (t / "rnd"), "--judge: 'all': the judge is one shipped hypothesis"},
  };
  for (const auto& [cmd, message] : said) {
    auto r = run_tbcheck(cmd);
    INFO(cmd << "\n" << r.out);
    CHECK(r.exit_code == 2);
    CHECK(has(r.out, message));
    CHECK_FALSE(has(r.out, "--hypothesis"));
  }
  CHECK_FALSE(fs::exists(t / "rnd"));
}

TEST_CASE("predict --contested without --evidence reads the repository's corpus and says so", "[reliability][cli]") {
  auto r = run_tbcheck("predict corpus/paper/000-wang/case-1.2.json --contested --no-synthesis");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "Evidence read from corpus/paper"));
  CHECK(has(r.out, "(the default; --evidence names others)"));
  CHECK_FALSE(has(r.out, "no case of rtx3090 or of any"));
}

TEST_CASE("predict reads its input as validate does: a collection asks for --case, an observation is checked", "[reliability][cli]") {
  Tmp t;
  const std::string coll = t.write("coll.json", "{\"cases\": [" + small_case("a") + ", " + small_case("b") + "]}");
  auto r = run_tbcheck("predict " + coll);
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "--case ID picks one"));
  CHECK(run_tbcheck("predict " + coll + " --case b").exit_code == 0);
  std::string magic = small_case("m");
  magic.insert(magic.size() - 1, R"(, "observation": {"kind": "magic"})");
  const std::string m = t.write("m.json", magic);
  for (const std::string& cmd : {"predict " + m, "validate " + m}) {
    r = run_tbcheck(cmd);
    INFO(cmd << "\n" << r.out);
    CHECK(r.exit_code == 2);
    CHECK(has(r.out, "observation.kind: unknown kind 'magic'"));
  }
  for (const std::string& flag : {std::string("--against alg1"), "--evidence " + coll, std::string("--no-synthesis")}) {
    r = run_tbcheck("predict " + t.write("c.json", small_case("c")) + " " + flag);
    INFO(flag);
    CHECK(r.exit_code == 2);
    CHECK(has(r.out, "needs --contested"));
  }
}

TEST_CASE("validate refuses an expect entry naming no shipped hypothesis and none given", "[reliability][cli]") {
  Tmp t;
  std::string c = small_case("e");
  c.insert(c.size() - 1, R"(, "expect": {"alg-one": "pass"})");
  const std::string f = t.write("e.json", c);
  auto r = run_tbcheck("validate " + f + " -H alg1");
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "expect.alg-one: names no shipped hypothesis and none given"));
  const std::string h = t.write("alg-one.json", R"({"name": "alg-one", "base": "alg1"})");
  CHECK(run_tbcheck("validate " + f + " -H " + h).exit_code != 2);  // judged (no observation: not bad input)
}

TEST_CASE("row 20: SIGINT and SIGTERM stop synthesis, learning and a suite within a second, leaving no temporary",
          "[reliability][fault][cli]") {
  Tmp t;
  // A suite long enough to be stopped: large random cases, each simulated under every hypothesis.
  const std::string suite_corpus = t / "suite";
  REQUIRE(sh("$TB random --device rtx3090 --count 20 --max-blocks 200000 --out " + suite_corpus + " >/dev/null").exit_code == 0);
  struct Cmd {
    std::string what, line, out;
  };
  // A grace of 30 s (a test hook) leaves the stop to the loops' polls and the Z3 interrupts; the last run
  // is as shipped, where the watcher ends what does not stop by itself.
  const std::string own = "TBCHECK_TEST_STOP_GRACE_MS=30000 ";
  const std::vector<Cmd> cmds = {
      {"synthesis", own + "$TB distinguish --device h200 --hypotheses all --out " + (t / "d"), t / "d"},
      {"learning", own + "$TB learn --device rtx3090 --oracle sim:alg1 --out " + (t / "l"), t / "l"},
      {"suite", own + "$TB suite " + suite_corpus + " --hypotheses all", suite_corpus},
      {"synthesis as shipped", "$TB distinguish --device h200 --hypotheses all --out " + (t / "d"), t / "d"},
  };
  for (const auto& c : cmds)
    for (const auto& [sig, status] : std::vector<std::pair<std::string, int>>{{"INT", 130}, {"TERM", 143}}) {
      // Signalled once it has surely started its work (after loading), timed from the signal to its end.
      // Job control (set -m): without it a shell starts background jobs with SIGINT ignored.
      auto r = sh("set -m; " + c.line + " >/dev/null 2>&1 & p=$!; sleep 1.2; kill -0 $p && echo running; s=$(date +%s%N); kill -" + sig +
                  " $p; wait $p; echo \"status $?\"; echo \"ms $(( ($(date +%s%N) - s) / 1000000 ))\"");
      INFO(c.what << " SIG" << sig << "\n" << r.out);
      CHECK(has(r.out, "running\n"));
      CHECK(has(r.out, "status " + std::to_string(status) + "\n"));
      const size_t at = r.out.find("ms ");
      REQUIRE(at != std::string::npos);
      CHECK(std::stol(r.out.substr(at + 3)) < 1500);  // within a second, with room for a loaded machine
      CHECK_FALSE(any_temporary(c.out));
    }
}
