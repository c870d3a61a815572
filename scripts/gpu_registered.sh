#!/usr/bin/env bash
# The registered Hopper predictions on a lent GPU, first thing in a loan: each scenario of
# docs/results/h200/registered run in fresh CUDA contexts (ns times kept), retimed to 1 us, then validated under
# every Hopper rule in both timings, and the table printed. Bounded so that a short loan is never wasted.
# Usage: scripts/gpu_registered.sh [OUT_DIR] [ORACLE]   (ORACLE defaults to cuda; sim:hopper tries the path without a GPU)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-corpus/hw/h200/registered-$(date -u +%Y-%m-%d)}
oracle=${2:-cuda}
tb=${TBCHECK:-build/cli/tbcheck}
budget_s=${BUDGET_S:-420}   # leaves a minute of an 8-minute loan for retime, validate and the table
campaign=docs/results/h200/registered
mkdir -p "$out/raw"
start=$(date +%s)
ran=0 skipped=0
for f in "$campaign"/hopper-reg-*.json; do
  case "$f" in *.prediction.json) continue ;; esac
  if (( $(date +%s) - start > budget_s )); then skipped=$((skipped + 1)); continue; fi
  # Fresh contexts are the oracle's default (--settle context); 2 repetitions show which recordings are stable.
  if "$tb" run "$f" --oracle "$oracle" --repeat 2 --out "$out/raw" >/dev/null 2>>"$out/run-errors.txt"; then :; fi
  ran=$((ran + 1))
done
echo "ran $ran scenarios, $skipped left for lack of time ($(( $(date +%s) - start )) s)"
# The GPU timer's ns order decides the blocks that waited (trace timing); a simulated oracle keeps model units.
if [ "$oracle" = cuda ]; then
  "$tb" retime "$out"/raw/*.json --unit-ns 1000 --out "$out/us" || true
fi
hyps=hopper,$campaign/hopper-as-registered.json,docs/results/h200/hopper-spread-sm.json,docs/results/h200/gpc-spread.json,alg1
for timing in model trace; do
  dir="$out/raw"; [ -d "$out/us" ] && [ "$timing" = trace ] && dir="$out/us"
  "$tb" validate "$dir" --hypothesis "$hyps" --timing "$timing" --json > "$out/validate-$timing.json" || true
done
python3 scripts/registered_table.py "$out"
