#!/usr/bin/env python3
# The table of a registered run (scripts/gpu_registered.sh): per hypothesis and timing, how many recordings pass at
# each level, with the stable ones (every repetition alike) apart, since only they can be predicted block for block.
# Usage: scripts/registered_table.py RUN_DIR [--markdown]
import argparse
import collections
import glob
import json
import os
import sys

LEVELS = ("counts", "sms", "exact")


def stable(path):
    """Whether every repetition the run kept put every block on the same SM (the run metadata's raw_ns)."""
    c = json.load(open(path))
    meta = c.get("run") or {}
    reps = meta.get("raw_ns") or []
    return all([k["sm"] for k in r["kernels"].values()] == [k["sm"] for k in reps[0]["kernels"].values()] for r in reps)


def tally(report, stable_ids):
    t = collections.defaultdict(lambda: {lv: [0, 0, 0, 0] for lv in LEVELS})  # pass, judged, stable pass, stable judged
    for case in report.get("cases", []):
        st = case["id"] in stable_ids
        for r in case["results"]:
            for lv, v in r.get("levels", {}).items():
                if lv in LEVELS and v["verdict"] in ("pass", "fail"):
                    cell = t[r["hypothesis"]][lv]
                    cell[1] += 1
                    cell[0] += v["verdict"] == "pass"
                    cell[3] += st
                    cell[2] += st and v["verdict"] == "pass"
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("run")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    stable_ids = set()
    for f in glob.glob(os.path.join(a.run, "raw", "*.json")):
        if stable(f):
            stable_ids.add(json.load(open(f))["id"])
    rows = []
    for timing in ("model", "trace"):
        path = os.path.join(a.run, "validate-{}.json".format(timing))
        if not os.path.exists(path):
            continue
        report = json.load(open(path))
        # retime renames a case <id>-<N>ns; its stability is the raw recording's
        ids = {c["id"] for c in report.get("cases", [])}
        st = stable_ids | {i for i in ids if i.rsplit("-", 1)[0] in stable_ids}
        for h, levels in tally(report, st).items():
            rows.append((timing, h, levels))
    if not rows:
        sys.exit("registered_table.py: no validate-*.json in {}".format(a.run))
    head = "| timing | hypothesis | " + " | ".join("{} (stable)".format(lv) for lv in LEVELS) + " |"
    print(head if a.markdown else head.replace("|", " ").strip())
    if a.markdown:
        print("| --- | --- | " + " | ".join("---:" for _ in LEVELS) + " |")
    for timing, h, levels in rows:
        cells = ["{}/{} ({}/{})".format(*levels[lv]) for lv in LEVELS]
        line = "| {} | {} | {} |".format(timing, os.path.basename(h), " | ".join(cells))
        print(line if a.markdown else line.replace("|", " ").strip())
    print("{} stable recordings of {}".format(len(stable_ids), len(glob.glob(os.path.join(a.run, "raw", "*.json")))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
