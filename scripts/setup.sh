#!/usr/bin/env bash
# One command on a fresh Debian machine: install what is missing, build the tbcheck command and the Python
# module (Release), and run the main job on built-in data: validate the paper corpus under every hypothesis.
set -euo pipefail
cd "$(dirname "$0")/.."
# What the main job needs and what `cmake --install` brings: the command, its libraries and the Python
# module (built for Debian's python3, the one deps.sh installed pybind11 for, also where another python3
# comes first on the PATH). Tests and benchmarks come with scripts/test.sh. The CUDA probe kernels are
# built for the GPU of this machine alone (its compute capability as nvidia-smi reports it); with no GPU
# to run them on, the cuda oracle is the no-device stub.
cuda=(-DTBCHECK_WITH_CUDA=OFF)
if cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1) && [ -n "$cc" ]; then
  cuda=(-DTBCHECK_WITH_CUDA=ON "-DTBCHECK_CUDA_ARCHS=${cc//./}")
fi
python=(-DTBCHECK_WITH_PYTHON=ON -DPython3_EXECUTABLE=/usr/bin/python3)  # deps.sh installs it (python3-dev)
# A compiler cache, where the machine has one (it is not installed for this), makes a rebuild after a pull
# take seconds instead of minutes.
cache=()
if command -v ccache >/dev/null; then cache=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
configure=(cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${cuda[@]}" "${python[@]}" "${cache[@]}")
# `setup.sh --print-configure` prints the configure command and stops, installing nothing (the setup_install
# test reads it).
if [ "${1:-}" = --print-configure ]; then
  echo "${configure[*]}"
  exit 0
fi
scripts/deps.sh
# CMake's progress lines are left out; its warnings and errors (stderr) and tbcheck's own notices (what
# was found or left out: CUDA, the Python module) are shown.
"${configure[@]}" | { grep -E '^-- tbcheck:' || true; }
cmake --build build -j"$(nproc)" --target tbcheck tbcheck_python
echo
echo "== tbcheck validate corpus/paper --hypothesis all =="
./build/cli/tbcheck validate corpus/paper --hypothesis all
