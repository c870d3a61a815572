#!/usr/bin/env python3
# What retiming the H200 recordings changes: each recording of corpus/hw/h200 that keeps the GPU's ns times
# judged under trace timing as recorded (20 ms units) and after `tbcheck retime --unit-ns 1000`, the exact
# verdicts tallied in pairs (as recorded -> retimed); then every repetition the runs kept (`--repetition
# all`), each recording counted by whether the hypothesis passes all, some or none of its repetitions.
# Cited in docs/results/h200.md.
# Usage: scripts/retime_verdicts.py [--tbcheck build/cli/tbcheck] [--hypothesis alg1-natural-order]
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter


def tbcheck(tb, *args):
    r = subprocess.run([tb, *args], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit("retime_verdicts.py: {} {} exited {}: {}".format(tb, args[0], r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)


def exact_verdicts(report):
    out = {}
    for case in report["cases"]:
        r = case["results"][0]
        out[case["id"]] = (r.get("levels") or {}).get("exact", {}).get("verdict", "not run")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tbcheck", default="build/cli/tbcheck")
    ap.add_argument("--hypothesis", default="alg1-natural-order")
    a = ap.parse_args()
    pairs = Counter()
    per_recording = Counter()
    repetitions = 0
    with tempfile.TemporaryDirectory() as tmp:
        for run in sorted(glob.glob("corpus/hw/h200/*/")):
            # Every repetition at once; the first repetition's case is the one without "-rep<n>".
            every = os.path.join(tmp, os.path.basename(run.rstrip("/")))
            r = subprocess.run([a.tbcheck, "retime", run, "--unit-ns", "1000", "--repetition", "all", "--out", every,
                                "--json"], capture_output=True, text=True)
            if r.returncode != 0:
                continue  # a run before raw_ns was recorded: nothing to retime
            coarse = exact_verdicts(tbcheck(a.tbcheck, "validate", run, "--hypothesis", a.hypothesis, "--timing",
                                            "trace", "--json"))
            retimed = exact_verdicts(tbcheck(a.tbcheck, "validate", every, "--hypothesis", a.hypothesis, "--timing",
                                             "trace", "--json"))
            by_recording = {}
            for rid, v in retimed.items():
                original, _, rep = rid.partition("-1000ns")
                by_recording.setdefault(original, []).append(v)
                repetitions += 1
                if not rep:
                    pairs[(coarse[original], v)] += 1
            for vs in by_recording.values():
                if all(v == "not run" for v in vs):
                    per_recording["not run"] += 1
                elif all(v == "pass" for v in vs):
                    per_recording["passes every repetition"] += 1
                elif "pass" in vs:
                    per_recording["passes some"] += 1
                else:
                    per_recording["passes none"] += 1
    print("{} under --timing trace, exact level: verdict as recorded (20 ms units) -> retimed (1 us units)"
          .format(a.hypothesis))
    for (before, after), n in sorted(pairs.items()):
        print("  {:>8} -> {:<8} {:>4}".format(before, after, n))
    print("  {} recordings with ns times".format(sum(pairs.values())))
    print("every repetition the runs kept ({} in all), retimed; recordings by the repetitions {} passes:"
          .format(repetitions, a.hypothesis))
    for k in ("passes every repetition", "passes some", "passes none", "not run"):
        print("  {:<24} {:>4}".format(k, per_recording[k]))


if __name__ == "__main__":
    main()
