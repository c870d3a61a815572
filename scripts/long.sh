#!/usr/bin/env bash
# Long runs kept out of the default test run: libFuzzer on every JSON loader, importer and campaign file and
# on the command line at volume (figures in bench/RESULTS.md), SMT-vs-simulator conformance
# on many random scenarios per hypothesis (and per priority / partition option, with random priorities,
# TPC masks and release times; clustered scenarios under the alg1 family), the cluster room additivity
# walks at length, learn on 24 seeded compositions (the learn acceptance) and on 16 planted rules.
# Usage: scripts/long.sh [fuzz-seconds] [scenarios]
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds="${1:-60}"
scenarios="${2:-1000}"
scripts/fuzz.sh "$fuzz_seconds"
# The volume runs need a core each: at the executions per CPU-second bench/RESULTS.md gives (ASan + UBSan:
# about 2,100 for fuzz_ntbs_log and fuzz_campaign_state, 7,400-9,400 for the examiner and manifest targets),
# 10 M of one target take 18-78 CPU-minutes, all five about 3.6 CPU-hours; under `nice -n 19` beside other
# work a fuzzer gets 0.3-2 % of a core and reaches a few % of these goals. The command-line targets are the long
# ones: fuzz_cli_bounded runs about 59 executions per CPU-second under the sanitizers (2 M: about 9.4 CPU-hours),
# fuzz_cli about 4.6 (50 k: about 3 CPU-hours), each on a core of its own.
echo "== fuzzing at volume: 2 M bounded and 50 k full command lines, 10 M of each importer and campaign file =="
FUZZ_RUNS=10000000 scripts/fuzz.sh 0 fuzz_ntbs_log fuzz_examiner_log fuzz_examiner_config fuzz_campaign_manifest fuzz_campaign_state
FUZZ_RUNS=2000000 scripts/fuzz.sh 0 fuzz_cli_bounded
FUZZ_RUNS=50000 scripts/fuzz.sh 0 fuzz_cli
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target tbcheck_tests
echo "== SMT conformance: ${scenarios} random scenarios per hypothesis =="
TBCHECK_CONFORMANCE_SCENARIOS="$scenarios" ./build/tests/tbcheck_tests "[conformance]" --durations yes
echo "== SMT conformance with release times: 200 random scenarios per priority option =="
TBCHECK_RELEASE_SCENARIOS=200 ./build/tests/tbcheck_tests "[smt][conformance][release]" --durations yes
echo "== SMT conformance with thread block clusters: 200 random clustered scenarios per cluster variant and alg1-family hypothesis =="
TBCHECK_CLUSTER_SCENARIOS=200 TBCHECK_CLUSTER_ALG1_SCENARIOS=200 ./build/tests/tbcheck_tests "[smt][cluster][conformance]" --durations yes
echo "== cluster room additivity: walks 5 times as long per resource option and built-in device =="
TBCHECK_ADDITIVITY_STEPS=30000 ./build/tests/tbcheck_tests "[cluster][additivity]" --durations yes
echo "== learn acceptance: 24 seeded non-shipped compositions on rtx3090 and h100-sxm =="
cmake --build build -j"$(nproc)" --target bench_learn
./build/bench/bench_learn --devices rtx3090,h100-sxm --distances 2,3 --per-distance 6 --seed 1 --no-noise --check
echo "== learn beyond the space: 8 planted rules per device, never a wrong identification =="
./build/bench/bench_learn --planted-rules 8 --devices rtx3090,h100-sxm --budget 30 --check
