#!/usr/bin/env python3
# How an H200 spreads one kernel's blocks over its GPCs, the engines' gpc-spread rule checked against the
# one-kernel grids of corpus/hw/h200 (fresh context per repetition): tbcheck predicts, this compares per SM.
# Usage: scripts/h200_spread.py [--markdown] [--tbcheck PATH]   (the table of docs/results/h200.md)
import argparse
import collections
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
RUNS = ["corpus/hw/h200/2026-11-26-run5", "corpus/hw/h200/2026-11-26-run6", "corpus/hw/h200/2026-11-26-run7"]
# The rule is the engines' own (selection: gpc-spread); this script only compares its predictions per SM.
RULE = "docs/results/h200/gpc-spread.json"


def predicted(tbcheck, path):
    """tbcheck predict's schedule of a scenario file under the rule, as blocks (sm, start)."""
    r = subprocess.run([tbcheck, "predict", path, "--hypothesis", os.path.join(ROOT, RULE), "--json"],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["kernels"][0]["blocks"]


def per_sm_at_most(tbcheck, case):
    """How many blocks of the kernel one SM holds at once, as the engine's resource rule says: the blocks of
    a grid larger than the device holds that start at once on the fullest SM."""
    c = {"device": case["device"], "kernels": [dict(case["kernels"][0])]}
    c["kernels"][0]["blocks"] = case["device"]["max_blocks_per_sm"] * case["device"]["sms"] + 1
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(c, f)
        f.flush()
        blocks = predicted(tbcheck, f.name)
    return max(collections.Counter(b["sm"] for b in blocks if b["start"] == 0).values())


def recordings(tbcheck):
    for run in RUNS:
        for f in sorted(glob.glob(os.path.join(ROOT, run, "*.json"))):
            c = json.load(open(f))
            # The experiments made for it: one kernel whose shared memory alone bounds the blocks per SM.
            if not (c["id"].startswith("h200-spread") or c["id"].startswith("h200-rotation")):
                continue
            if len(c["kernels"]) != 1 or not isinstance(c["device"], dict) or "gpc_of_tpc" not in c["device"]:
                continue
            blocks = predicted(tbcheck, f)
            if any(b["start"] > 0 for b in blocks):
                continue  # a second wave: where it goes depends on which SM frees first
            yield f, c, c["kernels"][0], per_sm_at_most(tbcheck, c), blocks


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--markdown", action="store_true", help="a Markdown table (for docs/results/h200.md)")
    ap.add_argument("--tbcheck", default=os.path.join(ROOT, "build/cli/tbcheck"))
    a = ap.parse_args()
    rows, agree = [], 0
    for f, c, k, cap, blocks in recordings(a.tbcheck):
        observed = [0] * c["device"]["sms"]
        for sm in c["observation"]["sm_of_block"][k["name"]]:
            observed[sm] += 1
        predicted = [0] * c["device"]["sms"]
        for b in blocks:
            predicted[b["sm"]] += 1
        in_order = c["observation"]["sm_of_block"][k["name"]] == list(range(k["blocks"]))
        ok = predicted == observed
        agree += ok
        wrong = sum(1 for p, o in zip(predicted, observed) if p != o)
        rows.append((k["blocks"], cap, os.path.relpath(f, ROOT), ok, wrong, in_order))
    rows.sort()
    if a.markdown:
        print("| blocks | per SM at most | recording | spread rule | SMs whose count differs | blocks in the measured SM order |")
        print("| ---: | ---: | --- | --- | ---: | --- |")
        for b, cap, f, ok, wrong, seq in rows:
            print("| {} | {} | `{}` | {} | {} | {} |".format(b, cap, os.path.basename(f), "reproduces" if ok else "differs",
                                                         wrong, "yes" if seq else "no"))
        print()
        print("{} of {} one-kernel single-wave recordings reproduced per SM by the spread rule.".format(agree, len(rows)))
    else:
        for b, cap, f, ok, wrong, seq in rows:
            print("{:4d} blocks, <= {} per SM  {:10s} {:3d} SMs differ  {}  {}".format(
                b, cap, "reproduces" if ok else "differs", wrong, "in SM order" if seq else "           ", f))
        print("{} of {} reproduced".format(agree, len(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
