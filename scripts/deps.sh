#!/usr/bin/env bash
# Installs the Debian packages tbcheck builds with, only those missing (idempotent).
# Used by setup.sh and test.sh so a fresh Debian machine needs nothing else.
set -euo pipefail
# The build, the Python module (python/, built by setup.sh too, so that `cmake --install` brings it) included.
# libgoogle-perftools-dev: tcmalloc for the tbcheck command (optional at configure time; cli/CMakeLists.txt).
pkgs=(build-essential cmake pkg-config libz3-dev libfmt-dev nlohmann-json3-dev catch2 libcli11-dev
      python3-dev python3-pybind11 pybind11-dev libgoogle-perftools-dev)
# `deps.sh --test` (scripts/test.sh) adds what the tests run besides the build: a one-node Slurm for the
# campaign test (scripts/slurm_test.sh), jq, which that test reads JSON with, and pytest for the Python
# module's tests; its pandas and matplotlib tests skip, saying so, where those are missing.
if [ "${1:-}" = --test ]; then pkgs+=(slurm-wlm munge jq python3-pytest); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "tbcheck: installing missing packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
