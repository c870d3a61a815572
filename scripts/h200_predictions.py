#!/usr/bin/env python3
# How the H200 rules predicted recordings they were not read from: run 8's held-out grids and witnesses, run 9's
# random scenarios registered before the run (hopper-spread), the same held-out grids on an H100, judged per SM
# (counts level) by `tbcheck validate`.
# Usage: scripts/h200_predictions.py [--tbcheck PATH] [--markdown] [--waiting | --gpc-order]   (docs/results/h200.md,
# findings 11 and 12)
import argparse
import glob
import itertools
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h200_table import validate  # noqa: E402  (the sibling script's `tbcheck validate --json` call)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
HYPOTHESES = ["docs/results/h200/hopper-spread.json", "docs/results/h200/gpc-spread.json", "alg1-no-tpc-config",
              "alg1", "alg1-natural-order", "round-robin", "most-room", "olmedo"]
GROUPS = [  # (label, run folder, which cases)
    ("run 8: one-kernel grids held out from the spread rule", "corpus/hw/h200/2026-11-26-run8",
     lambda c: not c.startswith("synth-") and "two-streams" not in c),
    ("run 8: two kernels in two streams", "corpus/hw/h200/2026-11-26-run8", lambda c: "two-streams" in c),
    ("run 8: witnesses (gpc-spread and four shipped rules)", "corpus/hw/h200/2026-11-26-run8", lambda c: c.startswith("synth-")),
    ("run 9: random scenarios that fit at once, registered before the run", "corpus/hw/h200/2026-11-26-run9",
     lambda c: c.startswith("h200-random1w-")),
    ("run 9: a 164 KB and a 100 KB kernel in two streams", "corpus/hw/h200/2026-11-26-run9", lambda c: "two-streams" in c),
    ("run 9: witnesses (hopper-spread, gpc-spread and two shipped rules)", "corpus/hw/h200/2026-11-26-run9",
     lambda c: c.startswith("synth-")),
    ("H100 run 1: run 8's held-out one-kernel grids", "corpus/hw/h100/2026-11-26-run1",
     lambda c: not c.startswith("synth-") and "two-streams" not in c),
    ("H100 run 1: two kernels in two streams (run 8's and run 9's)", "corpus/hw/h100/2026-11-26-run1",
     lambda c: "two-streams" in c),
    ("H100 run 1: witnesses (hopper-spread, gpc-spread, alg1, alg1-natural-order)", "corpus/hw/h100/2026-11-26-run1",
     lambda c: c.startswith("synth-")),
    ("H100 run 2 (another H100): the rest of run 8's held-out grids", "corpus/hw/h100/2026-11-26-run2",
     lambda c: c.startswith("h100-spread")),
    ("H100 run 2: run 9's random scenarios (34 of 36 before the time limit)", "corpus/hw/h100/2026-11-26-run2",
     lambda c: c.startswith("h100-random1w-")),
]


def judge(tbcheck, folder):
    hypotheses = [os.path.join(ROOT, h) if h.endswith(".json") else h for h in HYPOTHESES]
    return validate(tbcheck, [os.path.join(ROOT, folder)], "model", hypotheses)


WAITING_HYPOTHESES = [("hopper-spread with smem_config sm", {"base": "alg1", "selection": "gpc-spread", "smem_config": "sm"}),
                      ("hopper-spread (smem_config none)", "docs/results/h200/hopper-spread.json"),
                      ("alg1 (smem_config tpc)", "alg1")]
WAITING_RUNS = [("run 9 (H200)", "corpus/hw/h200/2026-11-26-run9"), ("H100 run 2", "corpus/hw/h100/2026-11-26-run2")]


def late_blocks(starts):
    return sum(1 for ts in starts.values() for t in ts if t > 0)


def waiting_table(tbcheck, markdown):
    """How many blocks of each registered random scenario start after the first instant: observed, and predicted."""
    names = [n for n, _ in WAITING_HYPOTHESES]
    print("| recordings | scenarios | with waiting blocks | " + " | ".join(names) + " |")
    print("| --- | ---: | ---: |" + " ---: |" * len(names))
    with tempfile.TemporaryDirectory() as tmp:
        hyps = []
        for i, (name, h) in enumerate(WAITING_HYPOTHESES):
            if isinstance(h, dict):
                path = os.path.join(tmp, f"h{i}.json")
                json.dump(dict(h, name=f"h{i}"), open(path, "w"))
                hyps.append(path)
            else:
                hyps.append(h)
        for label, run in WAITING_RUNS:
            files = sorted(glob.glob(os.path.join(ROOT, run, "*random1w-*.json")))
            right = [0] * len(hyps)
            waiting = 0
            for f in files:
                observed = late_blocks(json.load(open(f))["observation"]["start_of_block"])
                waiting += observed > 0
                for i, h in enumerate(hyps):
                    out = subprocess.run([tbcheck, "predict", f, "-H", h, "--json"], capture_output=True, text=True, cwd=ROOT)
                    if out.returncode != 0:
                        sys.exit(f"tbcheck predict {f}: exit {out.returncode}: {out.stderr.strip()}")
                    p = json.loads(out.stdout)
                    predicted = sum(1 for k in p["kernels"] for b in k["blocks"] if b["start"] > 0)
                    right[i] += predicted == observed
            print(f"| {label} | {len(files)} | {waiting} | " + " | ".join(f"{r}/{len(files)}" for r in right) + " |")
    if not markdown:
        print("\ncells: scenarios whose number of blocks starting after the first instant the hypothesis predicts exactly")


def gpc_order_table(markdown):
    """Which GPCs took each kernel's blocks, in block-index order: the recordings alone, no hypothesis."""
    if markdown:
        print("| recordings | kernels on a multi-TPC GPC | the i-th kernel's first multi-TPC GPC is the i-th of them | "
              "each GPC's blocks one run of indices |")
        print("| --- | ---: | ---: | ---: |")
    for label, run in WAITING_RUNS:
        kernels = first_is_ith = one_run = 0
        for f in sorted(glob.glob(os.path.join(ROOT, run, "*random1w-*.json"))):
            case = json.load(open(f))
            gpc_of_tpc = case["device"]["gpc_of_tpc"]
            per = case["device"]["sms_per_tpc"]
            gpcs = sorted(set(gpc_of_tpc))
            multi = [g for g in gpcs if gpc_of_tpc.count(g) > 1]  # the single-TPC GPCs are served first (finding 8)
            lines = []
            for i, k in enumerate(case["kernels"]):
                seq = [gpc_of_tpc[sm // per] for sm in case["observation"]["sm_of_block"][k["name"]]]
                runs = [(g, len(list(r))) for g, r in itertools.groupby(seq)]
                lines.append(f"{k['name']} ({k['blocks']}): " + " ".join(f"g{g}x{n}" for g, n in runs))
                on_multi = [g for g in seq if g in multi]
                if not on_multi:
                    continue
                kernels += 1
                first_is_ith += i < len(multi) and on_multi[0] == multi[i]
                one_run += len(runs) == len(set(seq))
            if not markdown:
                print(f"{os.path.basename(f)}: " + "; ".join(lines))
        if markdown:
            print(f"| {label} | {kernels} | {first_is_ith} | {one_run} |")
        else:
            print(f"{label}: {kernels} kernels on a multi-TPC GPC; the i-th kernel starts at the i-th multi-TPC GPC: "
                  f"{first_is_ith}; each GPC's blocks one run of indices: {one_run}\n")


HOPPER = ["hopper", "docs/results/h200/hopper-spread-sm.json"]
HOPPER_GROUPS = [  # (label, fit or check, folder, which cases)
    ("runs 5-7: one-kernel grids", "fitted", ["corpus/hw/h200/2026-11-26-run5", "corpus/hw/h200/2026-11-26-run6",
                                              "corpus/hw/h200/2026-11-26-run7"], lambda c: not c.startswith("synth-")),
    ("run 8: one-kernel grids and two-stream cases", "fitted", ["corpus/hw/h200/2026-11-26-run8"],
     lambda c: not c.startswith("synth-")),
    ("run 9: random scenarios", "fitted", ["corpus/hw/h200/2026-11-26-run9"], lambda c: c.startswith("h200-random1w-")),
    ("H100 run 1: one-kernel grids and two-stream cases", "check", ["corpus/hw/h100/2026-11-26-run1"],
     lambda c: not c.startswith("synth-")),
    ("H100 run 2: one-kernel grids", "check", ["corpus/hw/h100/2026-11-26-run2"], lambda c: c.startswith("h100-spread")),
    ("H100 run 2: run 9's random scenarios", "check", ["corpus/hw/h100/2026-11-26-run2"],
     lambda c: c.startswith("h100-random1w-")),
]


def hopper_table(tbcheck):
    """hopper against hopper-spread-sm, per SM (counts) and block for block (exact), model durations."""
    print("| cases | rule read from them? | recordings | hopper per SM | hopper block for block | hopper-spread-sm per SM | hopper-spread-sm block for block |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for label, kind, folders, pick in HOPPER_GROUPS:
        d = validate(tbcheck, [os.path.join(ROOT, f) for f in folders], "model", [os.path.join(ROOT, h) if h.endswith(".json") else h for h in HOPPER])
        names = [h if isinstance(h, str) else h["name"] for h in d["hypotheses"]]
        cases = [c for c in d["cases"] if pick(c["id"])]
        cells = []
        for n in names:
            for lv in ("counts", "exact"):
                cells.append(str(sum(1 for c in cases for r in c["results"]
                                     if r["hypothesis"] == n and r["levels"][lv]["verdict"] == "pass")))
        print("| {} | {} | {} | {} |".format(label, "fitted" if kind == "fitted" else "no: the check", len(cases), " | ".join(cells)))
    # The random scenarios again under trace timing, retimed from the GPU timer's ns (tbcheck retime). At 1 us the
    # blocks that waited start on the SMs the GPU's own retirement order freed. At the run's own unit (one kernel
    # duration, 20 ms) every block ends where the model's durations end it, and the retirements one unit holds
    # may come in any order: model durations judged without the simulator's reading of simultaneous ends.
    # There the bound is 20000 orders a case (one unit holds up to 131 retirements) and hopper-spread-sm is left
    # out (its failing orders run into the bound for minutes; "-" in its cells).
    # Over every repetition (retime --repetition all) a scenario counts when all its repetitions pass, so an
    # unstable one is judged on every order its blocks took, not on the first alone.
    for label, kind, folder, prefix, unit_ns, every, hypotheses in (
            ("run 9: random scenarios, trace timing (1 us)", "fitted", "corpus/hw/h200/2026-11-26-run9", "h200-random1w-", 1000, False, HOPPER),
            ("H100 run 2: random scenarios, trace timing (1 us)", "check", "corpus/hw/h100/2026-11-26-run2", "h100-random1w-", 1000, False, HOPPER),
            ("run 9: random scenarios, trace timing (1 us), every repetition", "fitted", "corpus/hw/h200/2026-11-26-run9", "h200-random1w-", 1000, True, HOPPER),
            ("H100 run 2: random scenarios, trace timing (1 us), every repetition", "check", "corpus/hw/h100/2026-11-26-run2", "h100-random1w-", 1000, True, HOPPER),
            ("run 9: random scenarios, trace timing at the run's unit (20 ms), every repetition", "fitted", "corpus/hw/h200/2026-11-26-run9", "h200-random1w-", 20000000, True, HOPPER[:1]),
            ("H100 run 2: random scenarios, trace timing at the run's unit (20 ms), every repetition", "check", "corpus/hw/h100/2026-11-26-run2", "h100-random1w-", 20000000, True, HOPPER[:1])):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "retimed")
            files = sorted(glob.glob(os.path.join(ROOT, folder, prefix + "*.json")))
            subprocess.run([tbcheck, "retime", *files, "--unit-ns", str(unit_ns), *(["--repetition", "all"] if every else []),
                            "--out", out], capture_output=True, check=True)
            d = validate(tbcheck, [out], "trace", [os.path.join(ROOT, h) if h.endswith(".json") else h for h in hypotheses],
                         extra=["--max-orders", "20000"] if unit_ns > 1000 else [])
        names = [h if isinstance(h, str) else h["name"] for h in d["hypotheses"]]
        scenario = lambda case_id: case_id.split(f"-{unit_ns}ns")[0]  # noqa: E731  (-UNITns, -UNITns-repN: one scenario)
        scenarios = sorted({scenario(c["id"]) for c in d["cases"]})
        cells = []
        for n in names:
            for lv in ("counts", "exact"):
                failed = {scenario(c["id"]) for c in d["cases"] for r in c["results"]
                          if r["hypothesis"] == n and r["levels"][lv]["verdict"] != "pass"}
                cells.append(str(len(scenarios) - len(failed)))
        cells += ["-"] * (2 * (len(HOPPER) - len(names)))
        print("| {} | {} | {} | {} |".format(label, "fitted" if kind == "fitted" else "no: the check", len(scenarios), " | ".join(cells)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tbcheck", default=os.environ.get("TBCHECK", os.path.join(ROOT, "build/cli/tbcheck")))
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--waiting", action="store_true", help="the table of blocks that wait (finding 11) instead")
    ap.add_argument("--gpc-order", action="store_true",
                    help="the GPCs of each random scenario's kernels in block-index order (finding 12) instead")
    ap.add_argument("--hopper", action="store_true", help="hopper against hopper-spread-sm, per SM and block for block")
    a = ap.parse_args()
    if a.hopper:
        hopper_table(a.tbcheck)
        return
    if a.gpc_order:
        gpc_order_table(a.markdown)
        return
    if a.waiting:
        waiting_table(a.tbcheck, a.markdown)
        return
    judged = {}
    names = None
    rows = []
    for label, folder, pick in GROUPS:
        if folder not in judged:
            judged[folder] = judge(a.tbcheck, folder)
        d = judged[folder]
        names = names or [h if isinstance(h, str) else h["name"] for h in d["hypotheses"]]
        cases = [c for c in d["cases"] if pick(c["id"])]
        cells = []
        for n in names:
            counts = sum(1 for c in cases for r in c["results"] if r["hypothesis"] == n and r["levels"]["counts"]["verdict"] == "pass")
            cells.append(f"{counts}/{len(cases)}")
        rows.append((label, cells))
    sep = " | "
    print("| cases" + sep + sep.join(names) + " |")
    print("| ---" + " | ---:" * len(names) + " |")
    for label, cells in rows:
        print("| " + label + sep + sep.join(cells) + " |")
    if not a.markdown:
        print("\ncells: cases whose blocks per SM (counts level, model durations) the hypothesis predicts, of those in the group")


if __name__ == "__main__":
    main()
