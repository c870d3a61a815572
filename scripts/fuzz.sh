#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, TBCHECK_FUZZ=ON) and runs each for N seconds.
# Usage: scripts/fuzz.sh [seconds per target, default 60; 0: no time limit] [targets...]; prints exec counts,
# exits non-zero on a crash. FUZZ_RUNS=N stops each target after N executions instead (volume runs,
# scripts/long.sh); FUZZ_TIMEOUT=S sets libFuzzer's per-execution timeout (wall-clock seconds) for niced runs. fuzz_cli and fuzz_cli_bounded (the command line) count an exit 3 as a crash.
# Beside the wall-clock rate it prints the CPU seconds and executions per CPU second: on a shared machine
# (or under `nice -n 19`) the wall-clock rate says more about the load than about the target.
set -u -o pipefail

secs="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${TBCHECK_FUZZ_BUILD:-$root/build-fuzz}"
targets=(fuzz_scenario fuzz_case fuzz_device fuzz_hypothesis fuzz_ntbs_log fuzz_examiner_log fuzz_examiner_config
         fuzz_campaign_manifest fuzz_campaign_state fuzz_cli_bounded fuzz_cli)
runs="${FUZZ_RUNS:--1}"
shift || true
[ "$#" -gt 0 ] && targets=("$@")

# clang and its sanitizer/fuzzer runtime come from Debian; install them if missing.
"$root/scripts/deps.sh"
if ! command -v clang++ >/dev/null 2>&1 || ! dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null | grep -q "ok installed"; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang libclang-rt-14-dev >/dev/null || exit 2
fi
mkdir -p "$build"
# The instrumented build compiles every library again with clang: ccache, where installed, keeps a rebuild short.
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DTBCHECK_FUZZ=ON -DTBCHECK_BUILD_TESTS=OFF \
  -DTBCHECK_BUILD_BENCH=OFF "${launcher[@]}" >"$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 2; }
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" || exit 2

failed=0
printf '%-22s %12s %10s %9s %12s  %s\n' target execs exec/s cpu-s exec/cpu-s result
for t in "${targets[@]}"; do
  work="$build/fuzz-work/$t"            # the growing corpus; fuzz/seeds/ stays small and read-only
  artifacts="$build/fuzz-artifacts/$t/"
  mkdir -p "$work" "$artifacts"
  log="$build/fuzz-work/$t.log"
  extra=()
  # The CLI target prints tables and errors on every input (stderr closed for the target; libFuzzer's
  # own reports still appear) and may run the simulator or solver briefly.
  # Every target parses JSON or runs commands, allocation on allocation: ASan's allocation stacks are kept
  # short (about 15 % of the loaders' CPU time; a crash's own stack stays whole; rerun the saved input for
  # the allocation's).
  asan="malloc_context_size=2${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  # The bounded one must stay fast: an execution over a second is itself a finding there.
  case "$t" in
    fuzz_cli) extra=(-close_fd_mask=2 -timeout=120 -rss_limit_mb=4096) ;;
    fuzz_cli_bounded) extra=(-close_fd_mask=2 -timeout=10 -rss_limit_mb=2048) ;;
  esac
  # libFuzzer's timeout is wall-clock time: at `nice -n 19` beside busy cores an execution waits far longer
  # than it computes, so a niced run raises it (FUZZ_TIMEOUT=seconds; the later flag wins).
  [ -n "${FUZZ_TIMEOUT:-}" ] && extra+=(-timeout="$FUZZ_TIMEOUT")
  TIMEFORMAT='%R %U %S'
  { time ASAN_OPTIONS="$asan" "$build/fuzz/$t" -max_total_time="$secs" -runs="$runs" -print_final_stats=1 \
      -dict="$root/fuzz/tbcheck.dict" "${extra[@]}" -artifact_prefix="$artifacts" "$work" "$root/fuzz/seeds/$t" >"$log" 2>&1 ; } \
    2>"$log.time"
  rc=$?
  execs="$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -1)"
  rate="$(awk '/stat::average_exec_per_sec/ {print $2}' "$log" | tail -1)"
  cpu="$(awk '{printf "%.0f", $2 + $3}' "$log.time")"
  per_cpu="$(awk -v n="${execs:-0}" '{c = $2 + $3; if (c > 0) printf "%.0f", n / c; else print "?"}' "$log.time")"
  if [ "$rc" -eq 0 ]; then
    result=ok
  else
    result="CRASH (exit $rc; log $log; inputs in $artifacts)"
    failed=1
  fi
  printf '%-22s %12s %10s %9s %12s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cpu:-?}" "${per_cpu:-?}" "$result"
  if [ "$rc" -ne 0 ]; then
    grep -E 'ERROR|SUMMARY|runtime error|terminate|Test unit written' "$log" | head -20
  fi
done
exit "$failed"
