#!/usr/bin/env bash
# One command on a fresh Debian machine: install what is missing, build the tbcheck command (Release),
# and run the main job on built-in data: validate the paper corpus under every hypothesis.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
# Only what the main job needs: the command and its libraries. Tests and benchmarks come with
# scripts/test.sh. The CUDA probe kernels are built for the GPU of this machine alone (its compute
# capability as nvidia-smi reports it); with no GPU to run them on, the cuda oracle is the no-device stub.
cuda=(-DTBCHECK_WITH_CUDA=OFF)
if cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1) && [ -n "$cc" ]; then
  cuda=(-DTBCHECK_WITH_CUDA=ON "-DTBCHECK_CUDA_ARCHS=${cc//./}")
fi
# A compiler cache, where the machine has one (it is not installed for this), makes a rebuild after a pull
# take seconds instead of minutes.
cache=()
if command -v ccache >/dev/null; then cache=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${cuda[@]}" "${cache[@]}" >/dev/null
cmake --build build -j"$(nproc)" --target tbcheck
echo
echo "== tbcheck validate corpus/paper --hypothesis all =="
./build/cli/tbcheck validate corpus/paper --hypothesis all
