#!/usr/bin/env bash
# Long runs kept out of the default test run: libFuzzer on every JSON loader, and SMT-vs-simulator
# conformance on many random scenarios per hypothesis. Usage: scripts/long.sh [fuzz-seconds] [scenarios]
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds="${1:-60}"
scenarios="${2:-1000}"
scripts/fuzz.sh "$fuzz_seconds"
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target tbcheck_tests
echo "== SMT conformance: ${scenarios} random scenarios per hypothesis =="
TBCHECK_CONFORMANCE_SCENARIOS="$scenarios" ./build/tests/tbcheck_tests "[conformance]" --durations yes
