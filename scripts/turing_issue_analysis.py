#!/usr/bin/env python3
# The issue-14 analysis: which block-issue rules reproduce the ntbs single-grid recordings (V100, A100,
# RTX 3090, RTX 2080 Ti), the recording that rejects each candidate, and the held-back Turing grids' forecasts.
"""Evaluate candidate block-issue rules on the ntbs Test2 / Test7 recordings.

Every Test2 / Test7 kernel is one grid of one-warp blocks that all fit at once, so the SM each *decision*
picks is most-room even-first on the blocks placed so far (the SM with the fewest blocks; ties to the
earlier SM of the order 0, 2, 4, ..., 1, 3, 5, ...). What the candidates differ in is (a) whether a
decision places two blocks (a pair) and (b) in what order the blocks of the decisions are handed out,
i.e. which block index each placement gets. Test8 (three register-limited kernels of M/2 blocks) has no
grid large enough to pair and is left to `tbcheck validate` (tests/model/test_issue_paired.cpp).

Usage: scripts/turing_issue_analysis.py [--ntbs ../shared/external/ntbs] [--json]   (needs build/python: the module)
Prints, per candidate, the recordings it matches exactly and the first one it fails (with the block);
then the forecasts of the surviving candidates for the Turing grids the artifact ran but the folder
keeps back (the Test2 sizes of the other GPUs, scaled: 4M-2 ... 4M+2, 5M, 6M, 7M, 8M).
"""
import functools
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMS = {"v100": 80, "a100": 108, "rtx3090": 82, "rtx2080ti": 68}
CC = {"v100": 7.0, "a100": 8.0, "rtx3090": 8.6, "rtx2080ti": 7.5}
# What the device files (corpus/devices/*.json) say under the device issue rule: pairs, and the hand-out pass.
DEVICE_RULE = {"v100": (False, 1, 0), "a100": (True, 1, 0), "rtx3090": (True, 1, 0), "rtx2080ti": (True, 2, 3)}


# The tbcheck Python module (built by the README's set-up command into build/python): the decisions are the engine's.
sys.path.insert(0, os.path.join(ROOT, "build", "python"))
import tbcheck  # noqa: E402


@functools.lru_cache(maxsize=None)
def decisions(g, n, pairs):
    """alg1's decisions on GPU g for one grid of n one-warp blocks that all fit at once, as tbcheck's engine makes
    them (alg1, or alg1 with issue paired): list of (sm, blocks) in decision order. The engine's most-room
    even-first places them and its pair rule (Hypothesis.leads_pair) says which blocks lead a pair; this script only
    varies how the decisions' blocks are handed out."""
    h = tbcheck.hypothesis("alg1+issue=paired" if pairs else "alg1")
    d = tbcheck.device(g)
    scenario = {"device": g, "kernels": [{"name": "K1", "blocks": n, "threads": 32, "regs": 16, "smem": 0,
                                          "duration": 1}]}
    sms = [r["sm"] for r in sorted(tbcheck.predict(scenario, h.name), key=lambda r: r["block"])]
    out, b = [], 0
    while b < n:
        k = 2 if h.leads_pair(d, n, b) else 1
        out.append((sms[b], k))
        b += k
    return out


def hand_out(dec, passes):
    """Block order from decisions: `passes(j)` groups decision j with the next ones into one pass;
    a pass hands out the first block of each of its decisions, then the second blocks."""
    out, j = [], 0
    while j < len(dec):
        g = max(1, passes(j))
        group = dec[j:j + g]
        out += [sm for sm, _ in group]
        out += [sm for sm, k in group if k == 2]
        j += g
    return out


def passes_from(size, first):
    """Passes of `size` decisions from decision `first` on (aligned there); single decisions before."""
    return lambda j: 1 if j < first else (size if (j - first) % size == 0 else 1)


def sliding(dec, lag):
    """A follower handed out `lag` decisions after its leader (a delay line, not passes)."""
    out, pending = [], []
    for sm, k in dec:
        out.append(sm)
        pending.append([lag, sm] if k == 2 else None)
        for p in pending:
            if p is not None:
                p[0] -= 1
        while pending and (pending[0] is None or pending[0][0] < 0):
            p = pending.pop(0)
            if p is not None:
                out.append(p[1])
    out += [p[1] for p in pending if p is not None]
    return out


def timing(dec, phase, pair_slots, single_slots=1.0):
    """Two-rate timing model (README): decision j is ready at phase + sum of its predecessors'
    decision times; a pass starts when the hand-out engine is free and takes every ready decision
    (at most one per SM), first blocks then second blocks; one block per hand-out slot."""
    ready, t = [], phase
    for sm, k in dec:
        ready.append(t)
        t += pair_slots if k == 2 else single_slots
    out, j, slot = [], 0, 0.0
    while j < len(dec):
        slot = max(slot, ready[j])
        group, seen = [], set()
        while j < len(dec) and ready[j] <= slot + 1e-9 and dec[j][0] not in seen:
            group.append(dec[j])
            seen.add(dec[j][0])
            j += 1
        out += [sm for sm, _ in group] + [sm for sm, k in group if k == 2]
        slot += sum(k for _, k in group)
    return out


def remaining_window(dec, n, lo):
    """Passes of two decisions while the blocks remaining at the decision are <= lo (a grid-position rule)."""
    out, j, left = [], 0, n
    while j < len(dec):
        g = 2 if left <= lo and dec[j][1] == 2 else 1
        group = dec[j:j + g]
        out += [sm for sm, _ in group] + [sm for sm, k in group if k == 2]
        left -= sum(k for _, k in group)
        j += g
    return out


def candidates():
    """name -> function(device, n) giving the SM of each block in index order."""
    c = {}
    c["alg1 (one block per decision)"] = lambda g, n: hand_out(decisions(g, n, False), lambda j: 1)
    c["paired-cc8 (pairs from CC 8.0, adjacent)"] = (
        lambda g, n: hand_out(decisions(g, n, CC[g] >= 8.0), lambda j: 1))
    c["paired on every GPU, adjacent"] = lambda g, n: hand_out(decisions(g, n, True), lambda j: 1)
    c["paired from CC 7.5, adjacent"] = lambda g, n: hand_out(decisions(g, n, CC[g] >= 7.5), lambda j: 1)
    for size, first in [(2, 0), (2, 1), (2, 2), (2, 4), (3, 3)]:
        c[f"pairs from CC 7.5, passes of {size} from decision {first} on every paired GPU"] = (
            lambda g, n, s=size, f=first: hand_out(decisions(g, n, CC[g] >= 7.5), passes_from(s, f)))
    for size, first in [(2, 0), (2, 1), (2, 2), (2, 4)]:
        c[f"device rule, but Turing passes of {size} from decision {first}"] = (
            lambda g, n, s=size, f=first: hand_out(decisions(g, n, DEVICE_RULE[g][0]),
                                                   passes_from(s, f) if g == "rtx2080ti" else lambda j: 1))
    c["device rule, Turing follower delayed one decision (delay line)"] = (
        lambda g, n: sliding(decisions(g, n, DEVICE_RULE[g][0]), 1 if g == "rtx2080ti" else 0))
    for lo in (196, 198, 200):
        c[f"device rule, Turing passes of 2 while <= {lo} blocks remain"] = (
            lambda g, n, lo=lo: remaining_window(decisions(g, n, DEVICE_RULE[g][0]), n, lo if g == "rtx2080ti" else -1))
    c["issue-14 rule (issue: device): pairs and pass from the device file"] = (
        lambda g, n: hand_out(decisions(g, n, DEVICE_RULE[g][0]), passes_from(*DEVICE_RULE[g][1:])))
    # Timing models fitted to the Turing recordings (a grid search over the rates and the phase: the fits
    # form a narrow band, pair decisions every 1.94-1.99 hand-out slots). They drift, so their passes grow.
    for ps, ss, ph in [(1.97, 1.5, -1.89), (1.99, 1.0, -1.96)]:
        c[f"timing model on Turing: pair decisions every {ps} slots, singles {ss}, phase {ph}"] = (
            lambda g, n, ps=ps, ss=ss, ph=ph: timing(decisions(g, n, True), ph, ps, ss) if g == "rtx2080ti"
            else hand_out(decisions(g, n, DEVICE_RULE[g][0]), lambda j: 1))
    c["timing model on Turing without drift: decisions every 2 slots, phase -2"] = (
        lambda g, n: timing(decisions(g, n, True), -2.0, 2.0, 2.0) if g == "rtx2080ti"
        else hand_out(decisions(g, n, DEVICE_RULE[g][0]), lambda j: 1))
    return c


def load(ntbs):
    rec = []
    for g in SMS:
        path = os.path.join(ntbs, f"{g}.json")
        if not os.path.exists(path):
            continue
        for case in json.load(open(path))["cases"]:
            if len(case["kernels"]) != 1:
                continue  # Test8: three kernels, no grid large enough to pair
            rec.append((g, case["kernels"][0]["blocks"], case["id"], case["observation"]["sm_of_block"]["K1"]))
    return rec


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def score(f, rec):
    """A candidate on recordings (gpu, n, id, sms): {gpu: [exact, of]} and (id, block, predicted, recorded)
    for each recording it misses, at its first differing block."""
    per_gpu, fails = {}, []
    for g, n, cid, obs in rec:
        got = f(g, n)
        d = first_diff(got, obs)
        ok = per_gpu.setdefault(g, [0, 0])
        ok[1] += 1
        if d is None:
            ok[0] += 1
        else:
            fails.append((cid, d, got[d] if d < len(got) else None, obs[d] if d < len(obs) else None))
    return per_gpu, fails


def main():
    args = sys.argv[1:]
    ntbs = args[args.index("--ntbs") + 1] if "--ntbs" in args else os.path.join(ROOT, "..", "shared", "external", "ntbs")
    rec = load(ntbs)
    if not rec:
        print(f"no recordings under {ntbs}", file=sys.stderr)
        return 2
    report = []
    for name, f in candidates().items():
        per_gpu, fails = score(f, rec)
        report.append({"candidate": name, "exact": per_gpu, "fails": fails})
    # Forecasts for the grids kept back: where the surviving candidates (every Turing recording exact)
    # agree and where they part.
    m = SMS["rtx2080ti"]
    held = [4 * m - 2, 4 * m - 1, 4 * m, 4 * m + 1, 4 * m + 2, 5 * m, 6 * m, 7 * m, 8 * m]
    turing_ok = [r for r in report if not any(c.startswith("ntbs-rtx2080ti") for c, *_ in r["fails"])]
    forecasts = []
    for n in held:
        outs = {r["candidate"]: candidates()[r["candidate"]]("rtx2080ti", n) for r in turing_ok}
        names = list(outs)
        split = [first_diff(outs[names[0]], outs[x]) for x in names[1:]]
        forecasts.append({"n": n, "first_disagreement": min([s for s in split if s is not None], default=None),
                          "candidates": names})
    if "--json" in args:
        print(json.dumps({"candidates": report, "held_back": forecasts}, indent=1))
        return 0
    for r in report:
        tot = " ".join(f"{g} {a}/{b}" for g, (a, b) in r["exact"].items())
        print(f"{r['candidate']}\n    exact (Test2+Test7): {tot}")
        if r["fails"]:
            cid, d, got, obs = r["fails"][0]
            turing = [f for f in r["fails"] if f[0].startswith("ntbs-rtx2080ti")]
            print(f"    rejected by {cid} (block {d}: predicted SM {got}, recorded {obs}); {len(r['fails'])} fail")
            if turing and turing[0] is not r["fails"][0]:
                cid, d, got, obs = turing[0]
                print(f"    first Turing rejection: {cid} (block {d}: predicted SM {got}, recorded {obs})")
    print("\nHeld-back Turing grids: candidates exact on every given Turing recording, first block where they part")
    for f in forecasts:
        print(f"  N = {f['n']}: {f['first_disagreement']}")
    print("  (" + "; ".join(forecasts[0]["candidates"]) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
