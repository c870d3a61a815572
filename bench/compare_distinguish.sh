#!/usr/bin/env bash
# `tbcheck distinguish` at an earlier commit beside this tree's, run alternately on one machine: elapsed seconds side
# by side, their ratio, and whether both found the same witnesses (each case file's scenario and predictions; its
# other fields too but for timings, simulation counts and the texts that carry them).
# Usage: bench/compare_distinguish.sh COMMIT [DEVICE=h200] [ROUNDS=1] [HYPOTHESES=all]; KEEP=DIR keeps both runs'
# case files and output in DIR/this-tree and DIR/COMMIT.
set -euo pipefail
commit=${1:?usage: bench/compare_distinguish.sh COMMIT [DEVICE] [ROUNDS] [HYPOTHESES]}
device=${2:-h200}
rounds=${3:-1}
hypotheses=${4:-all}
root=$(cd "$(dirname "$0")/.." && pwd)
old=$(mktemp -d "${TMPDIR:-/tmp}/tbcheck-bench-XXXXXX")
new=$(mktemp -d "${TMPDIR:-/tmp}/tbcheck-bench-XXXXXX")
trap 'git -C "$root" worktree remove --force "$old" >/dev/null 2>&1 || rm -rf "$old"; rm -rf "$new"' EXIT
git -C "$root" worktree add --detach --force "$old" "$commit" >/dev/null
cache=()
if command -v ccache >/dev/null; then cache=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# Both built alike, the command only, each as its own CMake files say (the allocator included).
build() {
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DTBCHECK_BUILD_TESTS=OFF -DTBCHECK_BUILD_BENCH=OFF \
    -DTBCHECK_WITH_CUDA=OFF -DTBCHECK_WITH_PYTHON=OFF "${cache[@]}" >/dev/null
  cmake --build "$2" -j"$(nproc)" --target tbcheck >/dev/null
}
build "$old" "$old/build"
build "$root" "$new/build"
best_new="" best_old=""
run() {  # binary, output folder: elapsed seconds
  rm -rf "$2"
  local t0 t1
  t0=$(date +%s.%N)
  "$1" distinguish --device "$device" --hypotheses "$hypotheses" --out "$2" >"$2.txt" 2>&1
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}
for ((r = 1; r <= rounds; r++)); do
  t=$(run "$new/build/cli/tbcheck" "$new/out")
  [[ -z $best_new || $(echo "$t < $best_new" | bc) == 1 ]] && best_new=$t
  t=$(run "$old/build/cli/tbcheck" "$old/out")
  [[ -z $best_old || $(echo "$t < $best_old" | bc) == 1 ]] && best_old=$t
done
same=$(python3 - "$new/out" "$old/out" <<'EOF'
import json, os, sys
def witness(j):  # the scenario and what each side predicts of it
    return {k: j.get(k) for k in ("device", "kernels", "predictions")}
def rest(x):  # the rest, timings and simulation counts aside
    if isinstance(x, dict):
        return {k: rest(v) for k, v in x.items() if "seconds" not in k and k not in ("orders_tried", "detail")}
    if isinstance(x, list):
        return [rest(v) for v in x]
    return x
a, b = sys.argv[1], sys.argv[2]
fa, fb = sorted(os.listdir(a)), sorted(os.listdir(b))
if fa != fb:
    print(f"no: the case files differ ({len(fa)} here, {len(fb)} there)")
    sys.exit()
load = lambda d, f: json.load(open(os.path.join(d, f)))
moved = [f for f in fa if witness(load(a, f)) != witness(load(b, f))]
other = [f for f in fa if f not in moved and rest(load(a, f)) != rest(load(b, f))]
print(f"{len(fa) - len(moved)} of {len(fa)} alike" + (f" (first that differs: {moved[0]})" if moved else "") +
      (f"; {len(other)} alike but in other fields (first: {other[0]})" if other else ""))
EOF
)
printf '%-36s %10s %10s %8s\n' "distinguish --device $device" "this tree" "$commit" ratio
printf '%-36s %10.1f %10.1f %8.2f\n' "--hypotheses $hypotheses (s elapsed)" "$best_new" "$best_old" "$(echo "$best_new / $best_old" | bc -l)"
echo "witnesses (scenario and predictions): $same"
if [[ -n ${KEEP:-} ]]; then
  mkdir -p "$KEEP"
  cp -r "$new/out" "$KEEP/this-tree" && cp "$new/out.txt" "$KEEP/this-tree.txt"
  cp -r "$old/out" "$KEEP/$commit" && cp "$old/out.txt" "$KEEP/$commit.txt"
fi
echo "(best of $rounds alternate runs, $(nproc) hardware threads; each run's summary line:)"
grep -m1 'elapsed on' "$new/out.txt" | sed 's/^/  this tree: /'
grep -m1 'elapsed on' "$old/out.txt" | sed "s/^/  $commit: /"
