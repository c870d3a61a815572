#!/usr/bin/env python3
# The verdict table of docs/results/h200.md: every H200 recording of corpus/hw/h200 judged by the shipped
# hypotheses as recorded (%smid) and relabeled into the scheduler's SM order measured on the same GPU.
# Usage: scripts/h200_table.py [--tbcheck build/cli/tbcheck]   (scripts/update_results.py runs it for the page)
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

HYPOTHESES = ["round-robin", "most-room", "olmedo", "alg1", "alg1-no-skip", "alg1-pb-any", "alg1-natural-order",
              "alg1-contiguous-regs", "alg1-paired"]
ORDER_CASE = "corpus/hw/h200/2026-11-26-run2/h200-wave-one-per-sm-132.cuda.json"


def scheduler_order():
    """%smid of each block of a one-block-per-SM first wave on the empty GPU, stable over ten repetitions:
    the order in which the scheduler hands out SMs. Logical SM i is the i-th SM of that order."""
    d = json.load(open(ORDER_CASE))
    order = d["observation"]["sm_of_block"]["k1"]
    if sorted(order) != list(range(132)):
        sys.exit("h200_table.py: {} is not one block per SM".format(ORDER_CASE))
    return order


def relabel(files, order, into):
    logical = {smid: i for i, smid in enumerate(order)}
    for f in files:
        d = json.load(open(f))
        d["observation"]["sm_of_block"] = {k: [logical[s] for s in v] for k, v in d["observation"]["sm_of_block"].items()}
        name = os.path.basename(os.path.dirname(f)) + "-" + os.path.basename(f)
        with open(os.path.join(into, name), "w") as out:
            json.dump(d, out)


def microseconds(tb, files, order, into):
    """The recordings whose metadata keeps the first repetition's ns times (raw_ns), in units of one
    microsecond (`tbcheck retime --unit-ns 1000`: durations scaled from the run's time unit, starts and ends
    from the GPU's timer), SMs relabeled into the scheduler order. Tied retirements of the 20 ms recording
    are then ordered as the GPU ordered them."""
    with tempfile.TemporaryDirectory() as retimed:
        cmd = [tb, "retime", *files, "--unit-ns", "1000", "--out", retimed, "--json"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("h200_table.py: {} retime exited {}: {}".format(tb, r.returncode, r.stderr.strip()))
        written = [w["file"] for w in json.loads(r.stdout)["written"]]
        relabel(written, order, into)
    return len(written)


def validate(tb, paths, timing, hypotheses=HYPOTHESES, extra=()):
    cmd = [tb, "validate", *paths, "--hypothesis", ",".join(hypotheses), "--timing", timing, "--json", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit("h200_table.py: {} exited {}: {}".format(" ".join(cmd[:4]), r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)


def tally(report):
    """hypothesis -> level -> (passed, judged) over the cases without clusters (no GPC map on h200)."""
    t = {h: {lv: [0, 0] for lv in ("exact", "counts", "sms")} for h in HYPOTHESES}
    for case in report["cases"]:
        for r in case["results"]:
            for lv, v in r.get("levels", {}).items():
                if lv in t[r["hypothesis"]] and v["verdict"] in ("pass", "fail"):
                    t[r["hypothesis"]][lv][1] += 1
                    t[r["hypothesis"]][lv][0] += v["verdict"] == "pass"
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tbcheck", default="build/cli/tbcheck")
    a = ap.parse_args()
    # Recordings under the built-in h200 keep %smid; those on a measured device (its smid_of_sm carried in
    # the case) are in the scheduler's order already and are judged as they are, not here.
    files = sorted(f for f in glob.glob("corpus/hw/h200/*/*.cuda.json") if json.load(open(f))["device"] == "h200")
    order = scheduler_order()
    rows = []
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as fine:
        relabel(files, order, tmp)
        n_fine = microseconds(a.tbcheck, files, order, fine)
        for label, paths in (("%smid as recorded", files), ("scheduler order", [tmp]),
                             ("scheduler order, µs times ({} with raw_ns)".format(n_fine), [fine])):
            for timing in ("model", "trace"):
                rows.append((label, timing, tally(validate(a.tbcheck, paths, timing))))
    judged = max(c[1] for _, _, t in rows for h in t.values() for c in h.values())
    lines = ["{} recordings; cells: cases passed at exact / counts / sms of those judged ({} at most; clustered "
             "kernels are not judged: `h200` has no GPC map).".format(len(files), judged), "",
             "| SMs | timing | " + " | ".join(HYPOTHESES) + " |",
             "| --- | --- | " + " | ".join("---:" for _ in HYPOTHESES) + " |"]
    for label, timing, t in rows:
        cells = ["{}/{}/{}".format(t[h]["exact"][0], t[h]["counts"][0], t[h]["sms"][0]) for h in HYPOTHESES]
        lines.append("| {} | {} | {} |".format(label, timing, " | ".join(cells)))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
