#!/usr/bin/env python3
# Writes alg1-paired's predictions for the ntbs tests (Test2, Test7, Test8) that no recording answers yet
# (the nine Turing grids kept back, every H100 SXM test) as corpus cases of kind synthetic, expect left open.
"""Generate corpus/predictions/ntbs-<device>.json with `tbcheck predict --hypothesis alg1-paired --json`.

The scenarios are the artifact's (nicolaswilde/thread-block-scheduling, ../shared/external/ntbs): on a GPU
of M SMs, Test2 launches single grids of one-warp blocks of N = 2M, 2M+4 ... 2M+8, 3M-2 ... 3M+2,
4M-2 ... 4M+2, 5M, 6M, 7M, 8M blocks (the V100, A100 and RTX 3090 logs all follow it), Test7 one block per
SM, and Test8 three register-limited kernels of M/2, M/2 and 1 block. For the RTX 2080 Ti only the nine
Test2 grids the folder keeps back (N > 3M+2) are written: the other 13 are recorded. The observation is
alg1-paired's prediction (the device's block-issue rule), so the cases pass under it by
construction; `tbcheck run --oracle cuda` on the GPU answers them, and `tbcheck predict --contested`
says which of their blocks the surviving hypotheses dispute.

Usage: scripts/gen_ntbs_predictions.py [--tbcheck build/cli/tbcheck] [--check]
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "corpus", "predictions")
DEVICES = {"h100-sxm": 132, "rtx2080ti": 68}
HYPOTHESIS = "alg1-paired"


def test2_sizes(m):
    return ([2 * m] + list(range(2 * m + 4, 2 * m + 9)) + list(range(3 * m - 2, 3 * m + 3)) +
            list(range(4 * m - 2, 4 * m + 3)) + [5 * m, 6 * m, 7 * m, 8 * m])


def scenarios(device, m):
    def one(name, kernels):
        return {"id": f"ntbs-{device}-{name}", "device": device, "kernels": kernels}

    def warp_grid(n):
        return [{"name": "K1", "blocks": n, "threads": 32, "regs": 32, "smem": 0, "duration": 1}]

    if device == "rtx2080ti":  # the 13 others are recorded (../shared/external/ntbs/rtx2080ti.json)
        return [one(f"test2-{n}", warp_grid(n)) for n in test2_sizes(m) if n > 3 * m + 2]
    out = [one(f"test2-{n}", warp_grid(n)) for n in test2_sizes(m)]
    out.append(one(f"test7-{m}", warp_grid(m)))
    h = m // 2
    out.append(one(f"test8-{h}-{h}-1", [
        {"name": "K1", "blocks": h, "threads": 256, "regs": 128, "smem": 0, "duration": 1},
        {"name": "K2", "blocks": h, "threads": 128, "regs": 128, "smem": 0, "duration": 1},
        {"name": "K3", "blocks": 1, "threads": 128, "regs": 128, "smem": 0, "duration": 1}]))
    return out


def predict(tbcheck, scenario):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"device": scenario["device"], "kernels": scenario["kernels"]}, f)
        path = f.name
    try:
        out = subprocess.run([tbcheck, "predict", path, "--hypothesis", HYPOTHESIS, "--json"], check=True,
                             capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    sched = json.loads(out)
    sched = sched.get("schedule", sched)
    return {
        "kind": "synthetic",
        "sm_of_block": {k["name"]: [b["sm"] for b in k["blocks"]] for k in sched["kernels"]},
        "start_of_block": {k["name"]: [b["start"] for b in k["blocks"]] for k in sched["kernels"]},
    }


def collection(tbcheck, device, m):
    cases = []
    for s in scenarios(device, m):
        c = dict(s)
        c["observation"] = predict(tbcheck, s)
        c["notes"] = (f"prediction of {HYPOTHESIS} for the ntbs experiment on {device} (M = {m}); no recording yet: "
                      "run it with tbcheck run --oracle cuda and replace this observation with the hardware's")
        cases.append(c)
    return {"source": f"tbcheck: {HYPOTHESIS}'s predictions (scripts/gen_ntbs_predictions.py)", "cases": cases}


def main():
    args = sys.argv[1:]
    tbcheck = os.path.join(ROOT, "build", "cli", "tbcheck")
    if "--tbcheck" in args:
        tbcheck = args[args.index("--tbcheck") + 1]
    check = "--check" in args
    os.makedirs(OUT_DIR, exist_ok=True)
    stale = []
    for device, m in DEVICES.items():
        text = json.dumps(collection(tbcheck, device, m), indent=1) + "\n"
        path = os.path.join(OUT_DIR, f"ntbs-{device}.json")
        if check:
            if not os.path.exists(path) or open(path).read() != text:
                stale.append(path)
        else:
            tmp = path + ".tmp"
            with open(tmp, "w") as f:
                f.write(text)
            os.replace(tmp, path)
            print(f"wrote {path}")
    if stale:
        print("out of date: " + ", ".join(stale))
        sys.exit(1)


if __name__ == "__main__":
    main()
