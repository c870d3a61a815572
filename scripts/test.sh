#!/usr/bin/env bash
# One command: install what is missing, build everything (Release, warnings on) and run every
# test with CTest. Long runs (fuzzing, large conformance) are in scripts/long.sh, not here.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
cd build
ctest --output-on-failure -j"$(nproc)"
