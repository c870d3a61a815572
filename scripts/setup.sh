#!/usr/bin/env bash
# One command on a fresh Debian machine: install what is missing, build tbcheck (Release),
# and run the main job on built-in data: validate the paper corpus under every hypothesis.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
echo
echo "== tbcheck validate corpus/paper --hypothesis all =="
./build/cli/tbcheck validate corpus/paper --hypothesis all
