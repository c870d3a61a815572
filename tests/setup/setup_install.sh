#!/usr/bin/env bash
# The set-up path as the README gives it: scripts/setup.sh configures the Python module for Debian's python3,
# and `cmake --install` of the build brings the module, importable with the PYTHONPATH the README names.
# Usage: setup_install.sh SOURCE_DIR BUILD_DIR (CTest: setup_install). Exit 77 (skip) without /usr/bin/python3.
set -euo pipefail
src=$1 build=$2
fail() { echo "setup_install: $*" >&2; exit 1; }
[ -x /usr/bin/python3 ] || { echo "setup_install skipped: no /usr/bin/python3"; exit 77; }

configure=$("$src/scripts/setup.sh" --print-configure)
case "$configure" in *"-DTBCHECK_WITH_PYTHON=ON"*) ;; *) fail "setup.sh does not configure the Python module: $configure" ;; esac
case "$configure" in *"-DPython3_EXECUTABLE=/usr/bin/python3"*) ;; *) fail "setup.sh does not build for /usr/bin/python3: $configure" ;; esac
grep -q -- '--target tbcheck tbcheck_python' "$src/scripts/setup.sh" || fail "setup.sh does not build tbcheck_python"
grep -q 'python3-pybind11' "$src/scripts/deps.sh" || fail "deps.sh does not install pybind11"
# deps.sh's packages for setup (not --test) include pybind11: the line before the --test additions.
sed -n '/^pkgs=(/,/)/p' "$src/scripts/deps.sh" | grep -q 'pybind11-dev' || fail "pybind11-dev is not in deps.sh's set-up packages"

prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
site="$prefix/lib/python3/dist-packages"
[ -f "$site/tbcheck/__init__.py" ] || fail "cmake --install put no Python package at $site/tbcheck"
# As the README says: PYTHONPATH=<prefix>/lib/python3/dist-packages, Debian's python3, from another folder.
got=$(cd "$prefix" && env -u PYTHONHOME PYTHONPATH="$site" /usr/bin/python3 -c \
  'import tbcheck; print(tbcheck.__file__); print(len(tbcheck.devices()))')
case "$got" in "$site/tbcheck/__init__.py"*) ;; *) fail "imported tbcheck from elsewhere: $got" ;; esac
grep -q 'PYTHONPATH="$HOME/.local/lib/python3/dist-packages"' "$src/README.md" || fail "README.md does not say how to import the installed module"
"$prefix/bin/tbcheck" --version >/dev/null || fail "the installed tbcheck does not run"
echo "setup_install: setup.sh configures the module; installed and imported from $site"
