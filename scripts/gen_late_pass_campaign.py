#!/usr/bin/env python3
# Writes the campaign that settles the late, growing hand-out passes (A100, Turing) and the B200 cluster
# rules: per GPU the cases that separate the surviving candidates, smallest first (docs/turing.md).
"""Generate corpus/campaigns/late-passes/<device>.json: cases without observations for `tbcheck campaign plan`.

What each GPU's cases separate (docs/turing.md, "The late passes"; docs/blackwell.md):
  a100       the onset of the growing passes: a deterministic function of the grid (the same decision in
             every repetition) or timing (it moves). 540 blocks (161 pairs, never departed) checks that no
             onset comes earlier; 617 is the smallest grid with 200 pairs (the earliest recorded onset is
             decision 198); 648, 756, 864 repeat the recorded grids; 972 and 1080 follow the queue's growth
             further (one decision wider every ~24.6 decisions if the drift is a device constant).
  rtx2080ti  the shipped passes of two against the drift models (pair decisions every 1.94-1.99 slots):
             they part at block 132-140 of the grids of 270 blocks and more.
  rtx3090    whether the effect exists at all on GA102: recorded up to 656 blocks (245 pairs) without it.
  h100-sxm, h200  pairs or not (alg1 vs alg1-paired part at block 1 of 2M + 5 = 269 blocks), then the
             onset in the long grids.
  b200       pairs or not (2M + 5 = 301 blocks); the GPC choice of clusters (round-robin vs lowest-index
             part at the fifth 2-cluster: 10 blocks of maximal shared memory); the stored launches again
             (is the order stable, is the 4-cluster second wave the same?); 8-clusters (the stored copy of
             the recording lacks them).
Every grid is one kernel of one-warp blocks (the ntbs Test2 shape) unless it is a B200 cluster case.

Usage: scripts/gen_late_pass_campaign.py [--check]   (--check: exit 1 if a file differs from what it writes)
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "corpus", "campaigns", "late-passes")
SMEM_B200 = 227 * 1024
SOURCE = "tbcheck campaign for the late hand-out passes and the B200 cluster rules (scripts/gen_late_pass_campaign.py)"


def grid(device, n, why):
    return {"id": f"late-{device}-grid-{n}", "source": SOURCE, "device": device,
            "kernels": [{"name": "K1", "blocks": n, "threads": 32, "regs": 32, "smem": 0, "duration": 1}],
            "notes": why}


def b200_clusters(n, size, why):
    k = {"name": "K1", "blocks": n, "threads": 1, "regs": 32, "smem": SMEM_B200, "duration": 1}
    if size > 1:
        k["cluster"] = [size]
    name = "unclustered" if size == 1 else f"cluster{size}"
    return {"id": f"late-b200-{name}-{n}", "source": SOURCE, "device": "b200", "kernels": [k], "notes": why}


def plan():
    m = {"a100": 108, "rtx2080ti": 68, "rtx3090": 82, "h100-sxm": 132, "h200": 132, "b200": 148}
    out = {}
    a = m["a100"]
    out["a100"] = [grid("a100", n, w) for n, w in [
        (5 * a, "161 pairs, never departed: an onset before decision 161 in any repetition rejects the queue's onset range"),
        (2 * a + 1 + 400, "the smallest grid with 200 pairs (earliest recorded onset: decision 198)"),
        (6 * a, "recorded once: onset decision 204; does it move between repetitions?"),
        (7 * a, "recorded once: onset decision 198"),
        (8 * a, "recorded once: onset decision 245, widths 2, 3, 4, 5 every 24 decisions"),
        (9 * a, "a longer pair phase: does the width keep growing by one every ~24.6 decisions?"),
        (10 * a, "a longer pair phase: does the width keep growing by one every ~24.6 decisions?")]]
    t = m["rtx2080ti"]
    out["rtx2080ti"] = [grid("rtx2080ti", n, "passes of two (shipped) against the drift models: they part at "
                             "block 132-140") for n in (4 * t - 2, 5 * t, 6 * t, 7 * t, 8 * t)]
    r = m["rtx3090"]
    out["rtx3090"] = [grid("rtx3090", n, f"{(n - 2 * r - 1) // 2} pairs: does a late onset exist on GA102 "
                           "(none up to 245 pairs)?") for n in (10 * r, 12 * r, 16 * r)]
    for h in ("h100-sxm", "h200"):
        k = m[h]
        out[h] = [grid(h, n, w) for n, w in [
            (2 * k + 4, "no pair under any candidate (the boundary below)"),
            (2 * k + 5, "alg1 and alg1-paired part at block 1: does Hopper pair?"),
            (6 * k, "long pair phase: onset and growth of the passes"),
            (8 * k, "long pair phase: onset and growth of the passes")]]
    b = m["b200"]
    out["b200"] = [
        b200_clusters(10, 2, "five 2-clusters, one block per SM: round-robin GPC choice puts the fifth on GPC 4 "
                      "(SMs 2, 3), lowest-index on GPC 3 (SMs 16, 17)"),
        b200_clusters(144, 8, "8-clusters (the stored recording lacks them): four TPCs of one GPC each"),
        b200_clusters(b, 1, "the recorded launch again: is the GPC-major order stable?"),
        b200_clusters(b, 2, "the recorded launch again"),
        b200_clusters(b, 4, "the recorded launch again: is the second wave (4 clusters) the same?"),
        grid("b200", 2 * b + 4, "no pair under any candidate"),
        grid("b200", 2 * b + 5, "alg1 and alg1-paired part at block 1: does Blackwell pair?"),
        grid("b200", 8 * b, "long pair phase: onset and growth of the passes")]
    return out


def main():
    check = "--check" in sys.argv[1:]
    os.makedirs(OUT_DIR, exist_ok=True)
    stale = []
    for device, cases in plan().items():
        text = json.dumps({"source": SOURCE, "cases": cases}, indent=1) + "\n"
        path = os.path.join(OUT_DIR, f"{device}.json")
        if check:
            if not os.path.exists(path) or open(path).read() != text:
                stale.append(path)
            continue
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    if stale:
        print("stale (rerun scripts/gen_late_pass_campaign.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
