#!/usr/bin/env bash
# bench_simulator at an earlier commit beside this tree's, run alternately on one machine, rates side by side:
# whether a change of rate between two days is the code's or the machine's. Usage: bench/compare_simulator.sh COMMIT [ROUNDS]
set -euo pipefail
commit=${1:?usage: bench/compare_simulator.sh COMMIT [ROUNDS]}
rounds=${2:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
old=$(mktemp -d /tmp/tbcheck-bench-XXXXXX)
new=$(mktemp -d /tmp/tbcheck-bench-XXXXXX)
trap 'git -C "$root" worktree remove --force "$old" >/dev/null 2>&1 || rm -rf "$old"; rm -rf "$new"' EXIT
git -C "$root" worktree add --detach --force "$old" "$commit" >/dev/null
# Both built alike (the tree's own build folder may carry other options, the Python module's -fPIC say).
build() {
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DTBCHECK_BUILD_TESTS=OFF -DTBCHECK_BUILD_BENCH=ON \
    -DTBCHECK_WITH_CUDA=OFF -DTBCHECK_WITH_PYTHON=OFF >/dev/null
  cmake --build "$2" -j2 --target bench_simulator >/dev/null
}
build "$old" "$old/build"
build "$root" "$new"
declare -A best_new best_old
rates() {  # hypothesis and M placements/s of one run's main table
  "$1" --reps 3 | awk '/^hypothesis/ {t = 1; next} t && NF >= 5 {print $1, $4}'
}
for ((r = 1; r <= rounds; r++)); do
  while read -r h v; do [[ -z ${best_new[$h]:-} || $(echo "$v > ${best_new[$h]}" | bc) == 1 ]] && best_new[$h]=$v; done \
    < <(rates "$new/bench/bench_simulator")
  while read -r h v; do [[ -z ${best_old[$h]:-} || $(echo "$v > ${best_old[$h]}" | bc) == 1 ]] && best_old[$h]=$v; done \
    < <(rates "$old/build/bench/bench_simulator")
done
printf '%-24s %12s %12s %8s\n' hypothesis "this tree" "$commit" ratio
for h in "${!best_new[@]}"; do
  printf '%-24s %12s %12s %8.2f\n' "$h" "${best_new[$h]}" "${best_old[$h]:--}" "$(echo "${best_new[$h]} / ${best_old[$h]:-1}" | bc -l)"
done | sort
echo "(M placements/s, best of $rounds alternate runs of 3 repetitions each)"
