#!/usr/bin/env python3
# Registers predictions for the next Hopper GPU run: new random multi-kernel scenarios on the measured H200 device
# (some whose blocks must wait) and two clustered ones, each with the `hopper` hypothesis' prediction, written
# before any GPU runs them (docs/results/h200/registered/; run them with scripts/gpu_registered.sh).
# A later rule registers its own predictions for the same scenarios beside the first ones, before any GPU ran them
# (--add-predictions TAG: NAME.TAG.prediction.json and an entry in the manifest's registrations; never rewritten).
# Usage: scripts/gen_hopper_campaign.py --tbcheck build/cli/tbcheck [--seed 27] [--out docs/results/h200/registered]
#        scripts/gen_hopper_campaign.py --add-predictions carry [--rule hopper] [--out docs/results/h200/registered]
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DEVICE = "docs/results/h200/h200-measured.json"  # run 3's probe-gpc: SM order and GPC map of every H200 and H100 measured
RULE = "hopper"
WANT_FIT, WANT_WAIT = 34, 8  # scenarios whose blocks all start at once, and scenarios where some must wait


def tb(args, tbcheck):
    r = subprocess.run([tbcheck, *args], capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        sys.exit("gen_hopper_campaign.py: tbcheck {} exited {}: {}".format(" ".join(args[:2]), r.returncode, r.stderr.strip()))
    return r.stdout


def predict(tbcheck, path):
    return json.loads(tb(["predict", path, "--hypothesis", RULE, "--json"], tbcheck))


def waits(prediction):
    return any(b["start"] > 0 for k in prediction["kernels"] for b in k["blocks"])


def clustered(device):
    """Two scenarios with thread block clusters (hopper refuses clusters: its prediction says so and the
    recording judges the cluster rules of the other hypotheses)."""
    def k(name, blocks, cluster, smem, stream):
        kr = {"name": name, "blocks": blocks, "threads": 128, "regs": 32, "smem": smem, "duration": 1, "stream": stream}
        if cluster:
            kr["cluster"] = cluster
        return kr
    return [
        ("hopper-reg-cluster-2-then-plain", {"device": device, "kernels": [k("k1", 24, [2, 1, 1], 0, 0),
                                                                            k("k2", 40, None, 65536, 1)]}),
        ("hopper-reg-cluster-4-beside-4", {"device": device, "kernels": [k("k1", 32, [4, 1, 1], 32768, 0),
                                                                          k("k2", 16, [4, 1, 1], 100000, 1)]}),
    ]


def add_predictions(tbcheck, out, tag, rule):
    """Another rule's predictions for the registered scenarios, beside the first ones."""
    manifest_path = os.path.join(out, "MANIFEST.json")
    manifest = json.load(open(manifest_path))
    if any(r.get("tag") == tag for r in manifest.get("registrations", [])):
        sys.exit("gen_hopper_campaign.py: predictions tagged {} are registered already: never rewritten".format(tag))
    written = 0
    for case in manifest["cases"]:
        path = os.path.join(out, case["id"] + ".json")
        target = os.path.join(out, "{}.{}.prediction.json".format(case["id"], tag))
        if os.path.exists(target):
            sys.exit("gen_hopper_campaign.py: {} exists: registered predictions are never rewritten".format(target))
        rel = os.path.relpath(path, ROOT)
        r = subprocess.run([tbcheck, "predict", rel, "--hypothesis", rule, "--json"], capture_output=True, text=True, cwd=ROOT)
        pred = json.loads(r.stdout) if r.returncode == 0 else {"not_run": r.stderr.strip()}
        with open(target, "w") as fh:
            json.dump(pred, fh, indent=1)
            fh.write("\n")
        written += 1
    manifest.setdefault("registrations", []).append(
        {"tag": tag, "rule": rule, "predictions": "NAME.{}.prediction.json".format(tag),
         "registered": "written by scripts/gen_hopper_campaign.py --add-predictions before any GPU ran these scenarios; "
                       "the commit that adds them is the registration"})
    with open(manifest_path + ".tmp", "w") as fh:
        json.dump(manifest, fh, indent=1)
        fh.write("\n")
    os.replace(manifest_path + ".tmp", manifest_path)
    print("{} predictions of {} tagged {} in {}".format(written, rule, tag, os.path.relpath(out, ROOT)))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tbcheck", default="build/cli/tbcheck")
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument("--out", default="docs/results/h200/registered")
    ap.add_argument("--add-predictions", metavar="TAG", help="register another rule's predictions for the scenarios")
    ap.add_argument("--rule", default=RULE, help="the hypothesis whose predictions --add-predictions registers")
    a = ap.parse_args()
    out = os.path.join(ROOT, a.out)
    if a.add_predictions:
        return add_predictions(a.tbcheck, out, a.add_predictions, a.rule)
    if os.path.exists(out):
        sys.exit("gen_hopper_campaign.py: {} exists: registered predictions are never rewritten".format(a.out))
    device = json.load(open(os.path.join(ROOT, DEVICE)))
    chosen = []
    with tempfile.TemporaryDirectory() as tmp:
        tb(["random", "--device", "h200", "--seed", str(a.seed), "--count", "200", "--max-duration", "1",
            "--out", tmp], a.tbcheck)
        fit = wait = 0
        for f in sorted(glob.glob(os.path.join(tmp, "*.json"))):
            s = json.load(open(f))
            kernels = s["kernels"][:4]
            if len(kernels) < 2:
                continue
            for i, kr in enumerate(kernels):  # every kernel in a stream of its own, launched in list order
                kr["stream"] = i
            scenario = {"device": device, "kernels": kernels}
            path = os.path.join(tmp, "cut.json")
            json.dump(scenario, open(path, "w"))
            w = waits(predict(a.tbcheck, path))
            if (w and wait < WANT_WAIT) or (not w and fit < WANT_FIT):
                wait += w
                fit += not w
                name = "hopper-reg-s{}-{:04d}".format(a.seed, int(os.path.basename(f).rsplit("-", 1)[1].split(".")[0]))
                chosen.append((name, scenario))
            if fit >= WANT_FIT and wait >= WANT_WAIT:
                break
    chosen += clustered(device)
    os.makedirs(out)
    manifest = []
    for name, scenario in chosen:
        scenario = dict(scenario, id=name)
        path = os.path.join(out, name + ".json")
        with open(path, "w") as fh:
            json.dump(scenario, fh, indent=1)
            fh.write("\n")
        rel = os.path.relpath(path, ROOT)  # messages name the file as a user of the repository sees it
        r = subprocess.run([a.tbcheck, "predict", rel, "--hypothesis", RULE, "--json"], capture_output=True, text=True, cwd=ROOT)
        pred = json.loads(r.stdout) if r.returncode == 0 else {"not_run": r.stderr.strip()}
        with open(os.path.join(out, name + ".prediction.json"), "w") as fh:
            json.dump(pred, fh, indent=1)
            fh.write("\n")
        manifest.append({"id": name, "kernels": len(scenario["kernels"]),
                         "blocks": [k["blocks"] for k in scenario["kernels"]],
                         "waits": None if "not_run" in pred else waits(pred),
                         "clusters": any(k.get("cluster") for k in scenario["kernels"])})
    with open(os.path.join(out, "MANIFEST.json"), "w") as fh:
        json.dump({"rule": RULE, "device": DEVICE, "seed": a.seed,
                   "registered": "predictions written by scripts/gen_hopper_campaign.py before any GPU ran these scenarios (commit f79a0ea, then in corpus/campaigns/hopper-registered); "
                                 "the commit that adds this folder is the registration",
                   "cases": manifest}, fh, indent=1)
        fh.write("\n")
    print("{} scenarios ({} wait under {}, {} clustered) in {}".format(
        len(manifest), sum(1 for m in manifest if m["waits"]), RULE, sum(1 for m in manifest if m["clusters"]), a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
