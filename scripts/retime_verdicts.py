#!/usr/bin/env python3
# What retiming the H200 recordings changes: each recording of corpus/hw/h200 that keeps the GPU's ns times
# judged under trace timing as recorded (20 ms units) and after `tbcheck retime --unit-ns 1000`, the exact
# verdicts tallied in pairs (as recorded -> retimed). Cited in docs/results/h200.md.
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
    with tempfile.TemporaryDirectory() as tmp:
        for run in sorted(glob.glob("corpus/hw/h200/*/")):
            fine = os.path.join(tmp, os.path.basename(run.rstrip("/")))
            r = subprocess.run([a.tbcheck, "retime", run, "--unit-ns", "1000", "--out", fine, "--json"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                continue  # a run before raw_ns was recorded: nothing to retime
            written = json.loads(r.stdout)["written"]
            coarse = exact_verdicts(tbcheck(a.tbcheck, "validate", run, "--hypothesis", a.hypothesis, "--timing",
                                            "trace", "--json"))
            retimed = exact_verdicts(tbcheck(a.tbcheck, "validate", fine, "--hypothesis", a.hypothesis, "--timing",
                                             "trace", "--json"))
            for w in written:
                original = w["id"][: -len("-1000ns")]
                pairs[(coarse[original], retimed[w["id"]])] += 1
    print("{} under --timing trace, exact level: verdict as recorded (20 ms units) -> retimed (1 us units)"
          .format(a.hypothesis))
    for (before, after), n in sorted(pairs.items()):
        print("  {:>8} -> {:<8} {:>4}".format(before, after, n))
    print("  {} recordings with ns times".format(sum(pairs.values())))


if __name__ == "__main__":
    main()
