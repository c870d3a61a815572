#!/usr/bin/env python3
# bench_predict_memory: the peak memory (max RSS) of `tbcheck predict` on one kernel of 2,000,000 blocks under
# each shipped hypothesis alone and under all of them in one call, side by side: the plain tables stream each
# schedule, so all together should need about what the largest one alone needs, not the sum.
# Usage: bench/bench_predict_memory.py [--tbcheck build/cli/tbcheck] [--blocks 2000000] [--device rtx3090]
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def peak(cmd):
    """Max resident set of `cmd` in MiB (GNU time's %M, in KiB) and its wall seconds; None where the command
    refuses the scenario (exit 2: a hypothesis that cannot run on the device); exits on any other failure."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        start = time.monotonic()
        r = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", t.name, *cmd], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - start
        if r.returncode == 2:
            return None
        if r.returncode not in (0, 1):
            sys.exit("bench_predict_memory: {} exited {}: {}".format(" ".join(cmd[:3]), r.returncode, r.stderr.strip()))
        return int(t.read().strip().splitlines()[-1]) / 1024.0, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tbcheck", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "cli", "tbcheck"))
    ap.add_argument("--blocks", type=int, default=2000000)
    ap.add_argument("--device", default="rtx3090")
    a = ap.parse_args()
    if not os.path.exists("/usr/bin/time"):
        sys.exit("bench_predict_memory: needs GNU time (/usr/bin/time; Debian package time)")
    with tempfile.TemporaryDirectory() as tmp:
        scenario = os.path.join(tmp, "one-kernel.json")
        json.dump({"device": a.device, "kernels": [{"name": "k1", "blocks": a.blocks, "threads": 128, "regs": 32,
                                                    "smem": 0, "duration": 1}]}, open(scenario, "w"))
        listed = subprocess.run([a.tbcheck, "hypotheses", "--json"], capture_output=True, text=True, check=True)
        names = [h["name"] for h in json.loads(listed.stdout)["hypotheses"]]
        rows = []
        for name in names + ["all"]:
            got = peak([a.tbcheck, "predict", scenario, "--hypothesis", name])
            if got:
                rows.append((name, *got))
    print("one kernel of {:,} blocks on {}: tbcheck predict, text output".format(a.blocks, a.device))
    print("{:<26} {:>12} {:>9}".format("hypotheses", "max RSS MiB", "wall s"))
    for name, mib, wall in rows:
        print("{:<26} {:>12.0f} {:>9.1f}".format(name, mib, wall))
    alone = rows[:-1]
    largest = max(alone, key=lambda r: r[1])
    print("sum of the hypotheses alone: {:.0f} MiB; largest alone: {} {:.0f} MiB".format(
        sum(r[1] for r in alone), largest[0], largest[1]))
    print("ratio all / largest alone: {:.2f}x memory".format(rows[-1][1] / largest[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
