#!/usr/bin/env bash
# One command: install what is missing, build everything (Release, warnings on; the CUDA oracle and probe
# kernels too where nvcc is found) and run every test with CTest. Long runs (fuzzing, large conformance)
# are in scripts/long.sh, not here.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test
# A compiler cache where the machine has one, as in scripts/setup.sh.
cache=()
if command -v ccache >/dev/null; then cache=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# Explicit, so a build folder configured by scripts/setup.sh (the command only, CUDA only for this
# machine's GPU) gets the tests, the benchmarks, the CUDA oracle and the Python module added.
# The Python module is built for and tested with Debian's python3 (the one deps.sh installed pytest for),
# also where another python3 (pyenv, a virtual environment) comes first on the PATH.
python=()
if [ -x /usr/bin/python3 ]; then python=(-DPython3_EXECUTABLE=/usr/bin/python3); fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTBCHECK_WITH_CUDA=ON -DTBCHECK_BUILD_TESTS=ON \
  -DTBCHECK_BUILD_BENCH=ON -DTBCHECK_WITH_PYTHON=ON "${python[@]}" "${cache[@]}" >/dev/null
cmake --build build -j"$(nproc)"
cd build
ctest --output-on-failure -j"$(nproc)"
