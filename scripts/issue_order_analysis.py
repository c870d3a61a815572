#!/usr/bin/env python3
# Why the hand-out passes widen late in long grids: the A100 departures from the device issue rule, read
# from the raw ntbs logs, and every candidate rule scored on every given recording with what rejects it.
"""Characterise the late, growing hand-out passes of the long A100 grids and score candidate rules.

Input: ../shared/external/ntbs-raw/my-result/{V100,A100,RTX3090}/*.log (the artifact's logs, unchanged) and
../shared/external/ntbs/rtx2080ti.json (the 13 given Turing recordings; no raw log of them is given).
A clone without ../shared has neither: the script says so and exits 0.

The decisions (which SM, one block or a pair) are the device rule's (scripts/turing_issue_analysis.py:
most-room even-first over one-warp blocks, pairs while >= 2M + 3 blocks remain in grids of >= 2M + 5).
Each recorded block is labelled with its decision (the i-th block recorded on SM s is the i-th placement
the decisions give s), so a departure is visible as a *pass*: decisions whose first blocks are handed out
together, then their second blocks.

Usage: scripts/issue_order_analysis.py [--shared DIR] [--quick]
  Part 1 prints, per A100 grid, where the order departs and the passes after it (decision ranges, widths,
  how long each width lasts, blocks and pairs left), and the three grids' common prefixes.
  Part 2 scores every candidate on every given recording (79: Test2, Test7, and Test8, whose kernels are
  too small to pair, so every candidate is the device rule there) and names the recording that rejects it.
  Part 3 fits the one model that reproduces the departures (a hand-out queue) with a free onset per
  recording, to show which part is a device constant (the drift) and which is not (the onset).
  --quick skips the slow grid searches of parts 2 and 3 (a test of the script's plumbing).
"""
import functools
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from turing_issue_analysis import (CC, DEVICE_RULE, SMS, decisions, first_diff, hand_out, passes_from,  # noqa: E402
                                   score)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RAW = {"v100": "V100", "a100": "A100", "rtx3090": "RTX3090"}
# The A100 queue's rates in hand-out slots per decision, fitted by part 3 on the three long grids (each with
# its own onset): the only pair rate that reproduces all three, and a single rate inside the common range.
P_PAIR, P_SINGLE = 1.922, 2.4


# ---- the recordings ----

def parse_log(path, gpu):
    """(gpu, N, id, sms) per single-kernel Test2 / Test7 experiment, and the number of Test8 experiments."""
    out, test8, test, kernels = [], 0, None, {}
    for line in open(path, errors="replace"):
        m = re.match(r"^Test(\d+) =+", line)
        if m:
            test, kernels = int(m.group(1)), {}
            continue
        m = re.match(r"^K(\d+) = K\((\d+),", line)
        if m:
            kernels[int(m.group(1))] = int(m.group(2))
            continue
        m = re.match(r"^K(\d+) smid =(.*)$", line)
        if m and test is not None:
            sms = [int(x) for x in m.group(2).split(",") if x.strip()]
            if test == 8:
                test8 += int(m.group(1)) == 1
            elif len(kernels) == 1 and test in (2, 7):
                n = kernels[1]
                assert len(sms) == n, f"{path}: Test{test} of {n} blocks records {len(sms)}"
                out.append((gpu, n, f"ntbs-{gpu}-test{test}-{n}", sms))
    return out, test8


def load(shared):
    rec, test8 = [], {}
    for gpu, folder in RAW.items():
        d = os.path.join(shared, "ntbs-raw", "my-result", folder)
        for f in sorted(os.listdir(d)):
            if f.endswith(".log"):
                r, t8 = parse_log(os.path.join(d, f), gpu)
                rec += r
                test8[gpu] = test8.get(gpu, 0) + t8
    turing = json.load(open(os.path.join(shared, "ntbs", "rtx2080ti.json")))["cases"]
    for c in turing:
        if len(c["kernels"]) == 1:
            rec.append(("rtx2080ti", c["kernels"][0]["blocks"], c["id"], c["observation"]["sm_of_block"]["K1"]))
        else:
            test8["rtx2080ti"] = test8.get("rtx2080ti", 0) + 1
    return rec, test8


def labels(dec, obs):
    """(decision, 0 for its first block / 1 for its second) of every recorded block."""
    per = {}
    for j, (sm, k) in enumerate(dec):
        per.setdefault(sm, []).extend([(j, 0)] + ([(j, 1)] if k == 2 else []))
    seen, out = {}, []
    for sm in obs:
        i = seen.get(sm, 0)
        seen[sm] = i + 1
        out.append(per[sm][i])
    return out


def passes_of(lab):
    """The recorded passes: runs of first blocks, then the second blocks that follow them."""
    out, i = [], 0
    while i < len(lab):
        firsts, seconds = [], []
        while i < len(lab) and lab[i][1] == 0:
            firsts.append(lab[i][0])
            i += 1
        while i < len(lab) and lab[i][1] == 1:
            seconds.append(lab[i][0])
            i += 1
        out.append((firsts, seconds))
    return out


# ---- part 1: the effect ----

def characterise(rec):
    m = SMS["a100"]
    long = {n: obs for g, n, _, obs in rec if g == "a100"}
    print("Part 1. A100: where the recorded order departs from the device rule (passes of one decision)")
    onsets = {}
    for n in sorted(long):
        dec = decisions("a100", n, True)
        pairs = sum(k == 2 for _, k in dec)
        d = first_diff(hand_out(dec, lambda j: 1), long[n])
        if d is None:
            print(f"  {n:4d} blocks: {pairs:3d} pairs, matched block for block")
            continue
        lab = labels(dec, long[n])
        groups = [(f, s) for f, s in passes_of(lab) if s and len(f) > 1]
        onset = groups[0][0][0]
        onsets[n] = onset
        print(f"  {n:4d} blocks: {pairs:3d} pairs; first departure at block {d} (predicted SM "
              f"{hand_out(dec, lambda j: 1)[d]}, recorded {long[n][d]}), decision {onset}: {2 * onset} blocks "
              f"handed out, {n - 2 * onset} left, {pairs - onset} pairs left, pair round {onset // m} "
              f"(each SM then holds {2 * (onset // m)} blocks)")
        runs = []  # (width, first decision, passes)
        for f, s in groups:
            w = len(f)
            if runs and runs[-1][0] == w:
                runs[-1][2] += 1
            else:
                runs.append([w, f[0], 1])
        for w, first, count in runs:
            print(f"      passes of {w}: from decision {first}, {count} passes = {w * count} decisions")
        for f, s in passes_of(lab):
            if s and f != list(range(f[0], f[0] + len(f))):
                skipped = [j for j in range(f[0], f[-1]) if j not in f]
                print(f"      the pass of decisions {f} (SMs {[dec[j][0] for j in f]}) leaves out {skipped} "
                      f"(SM {[dec[j][0] for j in skipped]}, already in the pass): it follows, after the second "
                      f"blocks {s}")
    names = sorted(onsets)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            print(f"  {a} and {b} blocks: identical to block {first_diff(long[a], long[b]) - 1}")
    j = min(onsets.values())
    at = {n: (n - 2 * j, "departs" if onsets[n] == j else "does not") for n in names}
    print(f"  At decision {j} (identical history in all three) the grid with "
          + ", ".join(f"{left} blocks left {what}" for n, (left, what) in sorted(at.items())) + ":")
    print("  no onset rule monotone in the decisions so far and the blocks left fits (the middle one departs, "
          "the ones with fewer and with more blocks left do not).")
    return onsets


# ---- part 2: candidates ----

def pass_order(dec, start, in_pass, cost):
    """Block order of passes over the pending decisions (in decision order) from decision `start` on, one
    decision per pass before it. A pass looks at pending decisions while in_pass(j, first, slot, looked)
    holds; it takes one per SM (a decision whose SM is already in the pass stays pending for the next) and
    hands out their first blocks, then their second blocks; `cost(blocks)` advances the hand-out slot."""
    out = [sm for sm, k in dec[:start] for _ in range(k)]
    deferred, nxt, slot = [], start, 0.0
    while deferred or nxt < len(dec):
        first = deferred[0] if deferred else nxt
        slot = in_pass(first, first, slot, -1)  # the pass starts when its first decision is ready
        group, seen, keep, looked = [], set(), [], 0
        for j in deferred:
            if in_pass(j, first, slot, looked) is None:
                keep.append(j)
                continue
            looked += 1
            (keep if dec[j][0] in seen else group).append(j)
            seen.add(dec[j][0])
        while nxt < len(dec) and in_pass(nxt, first, slot, looked) is not None:
            looked += 1
            (keep if dec[nxt][0] in seen else group).append(nxt)
            seen.add(dec[nxt][0])
            nxt += 1
        deferred = keep
        out += [dec[j][0] for j in group] + [dec[j][0] for j in group if dec[j][1] == 2]
        slot += cost(sum(dec[j][1] for j in group))
    return out


def hand_out_windows(dec, width):
    """Passes over a window of the next `width(j)` pending decisions (j: the first pending one); one block
    per SM in a pass, so a decision whose SM is already in it waits for the next pass."""
    def in_pass(j, first, slot, looked):
        if looked < 0:
            return slot
        return slot if looked < max(1, width(first)) else None
    return pass_order(dec, 0, in_pass, lambda b: b)


def queue(dec, p_pair, p_single, start=0, phase=0.0, overhead=0.0):
    """A hand-out queue fed at one rate and drained at another: decisions are one at a time (a pass each) up
    to decision `start`; from it on a decision joins the queue every p_pair (pair) or p_single (single)
    hand-out slots (`phase`: how long before the pass that takes decision start + 1 it arrived), the hand-out
    engine drains one block per slot (plus `overhead` per pass), and each pass takes every queued decision,
    one per SM (a decision whose SM is already in the pass waits), first blocks then second blocks."""
    ready, t = [0.0] * len(dec), -phase - p_pair
    for j in range(start, len(dec)):
        ready[j] = t
        t += p_pair if dec[j][1] == 2 else p_single

    def in_pass(j, first, slot, looked):
        if looked < 0:
            return max(slot, ready[j])
        return slot if ready[j] <= slot + 1e-9 else None
    return pass_order(dec, start, in_pass, lambda b: b + overhead)


def growing(start, stage):
    """Passes of 2 decisions from decision `start`, one decision wider every `stage` decisions."""
    return lambda j: 1 if j < start else 2 + (j - start) // stage


def candidates(quick):
    """name -> (degrees of freedom, {a100 parameter sets}, factory(params) -> f(gpu, n) -> SM per block).

    Only the A100's constants are searched: on the other devices each family contains the device rule
    (no onset within their pairs), which matches all their recordings, so the score there is the rule's."""
    @functools.lru_cache(maxsize=None)
    def rule(g, n):
        pairs, w, first = DEVICE_RULE[g]
        return hand_out(decisions(g, n, pairs), passes_from(w, first))

    def on_a100(f):
        return lambda g, n: f(n) if g == "a100" else rule(g, n)

    dec = functools.lru_cache(maxsize=None)(lambda n: tuple(decisions("a100", n, True)))
    step = 8 if quick else 1
    c = {}
    c["the device rule (issue_pass 1 on Ampere): alg1-paired today"] = (0, [()], lambda: rule)
    c["passes of a fixed width w from decision D (Turing's form)"] = (
        2, [(w, d) for w in (2, 3) for d in range(0, 330, step)],
        lambda w, d: on_a100(lambda n: hand_out_windows(dec(n), lambda j: 1 if j < d else w)))
    c["passes of 2 from decision D, one wider every L decisions"] = (
        2, [(d, l) for d in range(150, 330, step) for l in (20, 22, 24, 26, 28)],
        lambda d, l: on_a100(lambda n: hand_out_windows(dec(n), growing(d, l))))

    # The queue of part 3 (its drift fitted there: a pair decision every P_PAIR slots, singles every P_SINGLE)
    # with a deterministic onset: the candidates differ in what starts it. phase: in tenths of P_PAIR.
    phases = range(0, 10, 2 if quick else 1)

    def onset_queue(start_of):
        return lambda *a: on_a100(lambda n: queue(dec(n), P_PAIR, P_SINGLE, start_of(dec(n), n, *a[:-1]),
                                                  a[-1] * P_PAIR / 10))

    def left_at_most(dd, n, r, first=0):
        """The first decision from `first` on at which at most r blocks are left (none in a grid that
        starts with r or fewer: the count is of blocks still to come, not of the grid)."""
        if n <= r:
            return len(dd)
        left = n
        for j, (_, k) in enumerate(dd):
            if j >= first and left <= r:
                return j
            left -= k
        return len(dd)

    c["the queue from decision D"] = (
        2, [(d, ph) for d in range(150, 330, step) for ph in phases], onset_queue(lambda dd, n, d: d))
    c["the queue once at most R blocks remain"] = (
        2, [(r, ph) for r in range(200, 480, 2 * step) for ph in phases],
        onset_queue(lambda dd, n, r: left_at_most(dd, n, r)))
    c["the queue from a fraction q of the pair decisions"] = (
        2, [(q / 100, ph) for q in range(50, 100, step) for ph in phases],
        onset_queue(lambda dd, n, q: int(q * sum(k == 2 for _, k in dd))))
    c["the queue once D decisions are made and at most R blocks remain"] = (
        3, [(d, r, ph) for d in range(190, 212, 2 * step) for r in range(300, 480, 2 * step) for ph in phases[::2]],
        onset_queue(lambda dd, n, d, r: left_at_most(dd, n, r, d)))
    c["a hand-out queue from the launch (no onset): a decision every p slots (pairs), q (singles)"] = (
        2, [(p / 1000, q / 10) for p in range(1900, 2001, 2 * step) for q in (10, 15, 20, 25)],
        lambda p, q: on_a100(lambda n: queue(dec(n), p, q)))

    def overhead(p, o):
        # a pass of g decisions costs 2g + o slots: the width settles near o / (p - 2) instead of growing
        return lambda n: queue(dec(n), p, 2.0, overhead=o)
    c["a hand-out queue whose passes cost a fixed overhead o (the width converges)"] = (
        2, [(p / 100, o / 2) for p in range(200, 240, 2 * step) for o in range(1, 12, step)],
        lambda p, o: on_a100(overhead(p, o)))
    return c


RULE_DEPARTS = {}  # recording id -> the device rule's first differing block (filled by part2)


def rank(exact, fails):
    """More recordings exact first; then more of the rule's misses followed further than the rule does;
    then later departures overall."""
    better = sum(d > RULE_DEPARTS.get(cid, 10 ** 9) for cid, d, _, _ in fails)
    better += sum(1 for cid in RULE_DEPARTS if cid not in {c for c, *_ in fails})
    return (sum(a for a, _ in exact.values()), better, sum(d for _, d, _, _ in fails))


def part2(rec, test8, quick):
    print("\nPart 2. Candidates, scored on every given recording (exact block for block). The A100 constants "
          "are fitted by a grid search; the best fit is shown with the recordings that reject it")
    a100 = [r for r in rec if r[0] == "a100"]
    _, rule_fails = score(next(iter(candidates(True).values()))[2](), a100)
    RULE_DEPARTS.update({cid: d for cid, d, _, _ in rule_fails})
    rows = []
    long = [cid for cid in RULE_DEPARTS]
    for name, (dof, grid, make) in candidates(quick).items():
        best, fitted = None, {}
        for params in grid:
            f = make(*params)
            ex, fails = score(f, a100)
            key = rank(ex, fails)
            if best is None or key > best[0]:
                best = (key, params)
            missed = {c for c, *_ in fails}
            for cid in long:  # the first constants that reproduce one of the rule's misses
                if cid not in missed and cid not in fitted:
                    fitted[cid] = params
        f = make(*best[1])
        exact, fails = score(f, rec)
        for g, k in test8.items():  # Test8: no grid pairs, every candidate is the device rule (validate: exact)
            exact[g][0] += k
            exact[g][1] += k
        total = sum(a for a, _ in exact.values())
        out = sum(b for _, b in exact.values())
        per = ", ".join(f"{g} {a}/{b}" for g, (a, b) in exact.items())
        print(f"  {name}\n      {dof} constant(s) on the A100, best {best[1] if best[1] else '-'}: {total}/{out} exact ({per})")
        for cid, d, got, obs in fails[:4]:
            print(f"      rejected by {cid}: block {d} predicted SM {got}, recorded {obs}")
        for cid in long:
            if cid not in fitted:
                print(f"      no constants reproduce {cid}")
                continue
            _, fl = score(make(*fitted[cid]), rec)
            first = ", ".join(f"{c} (block {d})" for c, d, _, _ in fl[:3])
            print(f"      fitted to {cid} with {fitted[cid]}: rejected by {first or 'none'}")
        rows.append((name, total, out, fails))
    return rows


# ---- part 3: the queue with a free onset ----

def part3(rec, onsets, quick):
    print("\nPart 3. The hand-out queue with its onset read off each recording (not a rule: the onset is a "
          "parameter of the recording)")
    a100 = {n: obs for g, n, _, obs in rec if g == "a100" and n in onsets}
    ps = [1.922] if quick else [x / 1000 for x in range(1900, 1961, 2)]
    qs = [2.4] if quick else [x / 10 for x in range(10, 31)]
    fits = {}
    for n, obs in a100.items():
        dec = decisions("a100", n, True)
        for p in ps:
            for q in qs:
                for i in range(10):
                    phase = i * p / 10
                    if first_diff(queue(dec, p, q, onsets[n], phase), obs) is None:
                        fits.setdefault(n, set()).add((p, q))
    common = set.intersection(*fits.values()) if len(fits) == len(a100) else set()
    for n in sorted(a100):
        got = sorted(fits.get(n, ()))
        print(f"  {n} blocks, onset decision {onsets[n]}: exact for {len(got)} (pair, single) rates"
              + (f", pair rate {got[0][0]}-{got[-1][0]} slots" if got else ""))
    if common:
        pr = sorted({p for p, _ in common})
        qr = sorted({q for _, q in common})
        print(f"  one device constant fits all three: a pair decision every {pr[0]}-{pr[-1]} hand-out slots "
              f"(singles every {qr[0]}-{qr[-1]}), i.e. the queue grows by one decision every "
              f"{pr[0] / (2 - pr[0]):.1f}-{pr[-1] / (2 - pr[-1]):.1f} decisions; only the onset differs")
    else:
        print("  no common rate")
    return common


def main():
    args = sys.argv[1:]
    shared = args[args.index("--shared") + 1] if "--shared" in args else os.path.join(ROOT, "..", "shared", "external")
    if not os.path.isdir(os.path.join(shared, "ntbs-raw")) or not os.path.isdir(os.path.join(shared, "ntbs")):
        print(f"skipped: the ntbs recordings are not at {shared} (they are kept beside the repository, in "
              "../shared/external; a clone has none: import them with tbcheck import-ntbs, docs/oracle.md)")
        return 0
    rec, test8 = load(shared)
    print(f"{len(rec) + sum(test8.values())} recordings: " + ", ".join(
        f"{g} (CC {CC[g]}) {sum(r[0] == g for r in rec) + test8.get(g, 0)}" for g in SMS) + "\n")
    onsets = characterise(rec)
    quick = "--quick" in args
    part2(rec, test8, quick)
    part3(rec, onsets, quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
