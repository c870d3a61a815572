#!/usr/bin/env python3
# How an H200 spreads one kernel's blocks over its GPCs, as a rule checked against the recordings: the
# one-kernel grids of corpus/hw/h200 (fresh context per repetition), predicted per SM and compared.
# Usage: scripts/h200_spread.py [--markdown]   (the table of docs/results/h200.md, "How a grid spreads")
import argparse
import collections
import glob
import json
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
RUNS = ["corpus/hw/h200/2026-11-26-run5", "corpus/hw/h200/2026-11-26-run6", "corpus/hw/h200/2026-11-26-run7"]
SMEM_PER_SM = 228 * 1024  # the largest shared-memory configuration of the device (smem_configs_kb)


def blocks_per_sm(device, kernel):
    """One kernel alone on an SM: the shared-memory bound (the sweep's kernels are small in every other resource)."""
    per_block = kernel["smem"] + device["smem_reserved_per_block"]
    return min(device["max_blocks_per_sm"], SMEM_PER_SM // per_block) if kernel["smem"] else device["max_blocks_per_sm"]


def spread(device, blocks, cap):
    """The rule: one block per SM everywhere before a second on any; at each depth the GPCs of one TPC
    first, then the others; within a tier, level by level (a TPC's block count), the GPCs in turn, each
    turn one block on the GPC's first TPC at the current level, on that TPC's SM with fewer blocks.
    Per-SM block counts, in the scheduler's SM order."""
    gpc_of_tpc = device["gpc_of_tpc"]
    per_tpc = device["sms_per_tpc"]
    tpcs_of = collections.OrderedDict()
    for t, g in enumerate(gpc_of_tpc):
        tpcs_of.setdefault(g, []).append(t)
    small = [g for g, ts in tpcs_of.items() if len(ts) == 1]
    large = [g for g, ts in tpcs_of.items() if len(ts) > 1]
    on_sm = [0] * device["sms"]
    on_tpc = [0] * len(gpc_of_tpc)
    left = [blocks]

    def turn(g, level):
        t = next((t for t in tpcs_of[g] if on_tpc[t] == level), None)
        if t is None or not left[0]:
            return False
        sm = min(range(t * per_tpc, (t + 1) * per_tpc), key=lambda s: (on_sm[s], s))
        on_sm[sm] += 1
        on_tpc[t] += 1
        left[0] -= 1
        return True

    for depth in range(cap):
        for tier in (small, large):
            for level in range(depth * per_tpc, (depth + 1) * per_tpc):
                while any([turn(g, level) for g in tier]):
                    pass
    return on_sm


def recordings():
    for run in RUNS:
        for f in sorted(glob.glob(os.path.join(ROOT, run, "*.json"))):
            c = json.load(open(f))
            # The experiments made for it: one kernel whose shared memory alone bounds the blocks per SM.
            if not (c["id"].startswith("h200-spread") or c["id"].startswith("h200-rotation")):
                continue
            if len(c["kernels"]) != 1 or not isinstance(c["device"], dict) or "gpc_of_tpc" not in c["device"]:
                continue
            k = c["kernels"][0]
            cap = blocks_per_sm(c["device"], k)
            if k["blocks"] > cap * c["device"]["sms"]:
                continue  # a second wave: where it goes depends on which SM frees first
            yield f, c, k, cap


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--markdown", action="store_true", help="a Markdown table (for docs/results/h200.md)")
    a = ap.parse_args()
    rows, agree = [], 0
    for f, c, k, cap in recordings():
        observed = [0] * c["device"]["sms"]
        for sm in c["observation"]["sm_of_block"][k["name"]]:
            observed[sm] += 1
        predicted = spread(c["device"], k["blocks"], cap)
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
