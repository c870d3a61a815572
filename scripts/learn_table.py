#!/usr/bin/env python3
# The learn table of docs/results/learn.md: `tbcheck learn --json` for every shipped hypothesis playing
# each device, clean and under noise over ten seeds, so the table is regenerated, not retyped.
# Usage: scripts/learn_table.py [--tbcheck build/cli/tbcheck] [--corpus DIR ...] [--seeds 10]
import argparse
import json
import subprocess
import sys

PLAYS = {
    "rtx3090": ["round-robin", "most-room", "olmedo", "alg1", "alg1-literal", "alg1-no-skip", "alg1-pb-any",
                "alg1-counted-smem", "alg1-no-tpc-config", "alg1-natural-order", "alg1-contiguous-regs", "alg1-paired"],
    "h100-sxm": ["round-robin", "most-room", "olmedo", "alg1", "alg1-literal", "alg1-no-skip", "alg1-pb-any",
                 "alg1-counted-smem", "alg1-no-tpc-config", "alg1-natural-order", "alg1-contiguous-regs", "alg1-paired"],
    "quadro6000": ["fermi"],
}


def learn(tb, device, truth, corpus, noise=None, seed=None, repeat=5):
    cmd = [tb, "learn", "--device", device, "--oracle", "sim:" + truth, "--repeat", str(repeat), "--json"]
    for c in corpus:
        cmd += ["--corpus", c]
    if noise is not None:
        cmd += ["--noise", str(noise), "--seed", str(seed)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit("learn_table.py: {} exited {}: {}".format(" ".join(cmd), r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tbcheck", default="build/cli/tbcheck")
    ap.add_argument("--corpus", action="append", default=None, help="corpus folders (default: corpus)")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--noise", type=float, default=0.05)
    ap.add_argument("--device", action="append", default=None, help="only these devices (default: all three)")
    a = ap.parse_args()
    corpus = a.corpus or ["corpus"]
    print("| device | played by | outcome | steps | oracle runs | device s | synthesis s | noise {}, {} seeds |"
          .format(a.noise, a.seeds))
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | --- |")
    for device, truths in PLAYS.items():
        if a.device and device not in a.device:
            continue
        for truth in truths:
            d = learn(a.tbcheck, device, truth, corpus)
            identified = kept = unstable = steps = 0
            for seed in range(1, a.seeds + 1):
                n = learn(a.tbcheck, device, truth, corpus, a.noise, seed)
                identified += n["outcome"] == "identified" and n["survivors"] == [truth]
                kept += all(truth not in s["dropped"] for s in n["steps"])
                unstable += sum(s["oracle_status"] != "ok" for s in n["steps"])
                steps += len(n["steps"])
            print("| {} | {} | {} | {} | {} | {:.1f} | {:.1f} | {}/{} identified, true kept {}/{}, {} of {} steps unstable |"
                  .format(device, truth, d["outcome"], len(d["steps"]), d["oracle_runs"], d["device_seconds"],
                          d["synthesis_seconds"], identified, a.seeds, kept, a.seeds, unstable, steps))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
