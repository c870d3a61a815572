#!/usr/bin/env python3
# Converts the B200 block-placement table of StuartSul/gpu-experiments (blackwell/097-threadblock-allocation)
# into tbcheck cases, and derives from the same numbers the GPC map that corpus/devices/b200.json ships.
"""Convert blackwell/097-threadblock-allocation.csv (public repository StuartSul/gpu-experiments) to tbcheck cases.

The generator (097-threadblock-allocation.cu beside the CSV) launches, one after the other on a B200
(148 SMs), kernels of one thread with MAX_SHARED_MEMORY (ThunderKittens: 227 KB = 232448 bytes) of dynamic
shared memory, so one block per SM: 148 blocks without clusters, then 148 in clusters of 2 and of 4
(__cluster_dims__), then 144 in clusters of 8 and 16. Each block prints its block id, %smid and cluster id;
the CSV has one row per block: cluster_size,block_id,sm_id,cluster_id. The one stored copy holds cluster
sizes 1, 2 and 4 only (the 8 and 16 launches are not in it).

The repository has no licence file, so tbcheck ships its own conversion of the numbers (a case collection,
corpus/hw/b200/097-threadblock-allocation.json), not the file. Run:

  scripts/import_b200_threadblock.py CSV --out corpus/hw/b200/097-threadblock-allocation.json
  scripts/import_b200_threadblock.py CSV --gpcs       # the GPC map the recordings imply, with the evidence
  scripts/import_b200_threadblock.py CSV --explain    # candidate rules (SM order, GPC choice) on each launch

--explain asks tbcheck's Python module (PYTHONPATH=build/python) how the shipped hypotheses and the engine's
cluster GPC choices place each launch; only the candidate no engine option has (round-robin GPC choice) is
placed here.

Checks made on the input (exit 2 with the row named otherwise): the header; every cluster size's blocks
are 0..N-1 once each; cluster_id = block_id // cluster_size; every cluster's blocks are on distinct SMs.

The GPC map (--gpcs): SMs 2t and 2t+1 form TPC t (every cluster of 2 takes such a pair). A cluster of
four blocks is co-scheduled on one GPC (CUDA Programming Guide, Thread Block Clusters), so the TPCs of
each 4-cluster share a GPC. The launch without clusters visits the TPCs in one order, both SMs of a TPC
together; within a GPC the TPC ids ascend (ids are dealt round-robin over GPCs), so the order is cut into
GPCs where the TPC id drops. A segment that hosted no 4-cluster although clusters waited for a second
wave cannot hold two free TPCs of one GPC: its TPCs are given one GPC each. The result is checked: every
4-cluster, of both waves, lies in one GPC. The map is inferred, not measured (no probe-gpc run).
"""
import csv
import json
import os
import sys
import tempfile

SMS = 148
SMEM = 227 * 1024  # ThunderKittens' MAX_SHARED_MEMORY for Blackwell (include/common/util.cuh)
SOURCE = ("StuartSul/gpu-experiments blackwell/097-threadblock-allocation.csv and .cu (B200, 148 SMs; "
          "converted by scripts/import_b200_threadblock.py)")


def fail(msg):
    print(f"import_b200_threadblock: {msg}", file=sys.stderr)
    sys.exit(2)


def read(path):
    """{cluster_size: [sm of block 0, 1, ...]} after the consistency checks."""
    try:
        f = open(path, newline="")
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    with f:
        rows = list(csv.reader(f))
    if not rows or [c.strip() for c in rows[0]] != ["cluster_size", "block_id", "sm_id", "cluster_id"]:
        fail(f"{path}: line 1: expected the header cluster_size,block_id,sm_id,cluster_id")
    launches = {}
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != 4:
            fail(f"{path}: line {line}: expected 4 fields, found {len(row)}")
        try:
            size, block, sm, cluster = (int(x) for x in row)
        except ValueError:
            fail(f"{path}: line {line}: the fields must be integers")
        if size < 1 or not 0 <= sm < SMS or block < 0:
            fail(f"{path}: line {line}: cluster size {size}, SM {sm} or block {block} out of range")
        if cluster != block // size:
            fail(f"{path}: line {line}: cluster id {cluster} is not block {block} // {size}")
        launch = launches.setdefault(size, {})
        if block in launch:
            fail(f"{path}: line {line}: block {block} of cluster size {size} recorded twice")
        launch[block] = sm
    out = {}
    for size, launch in sorted(launches.items()):
        n = len(launch)
        if sorted(launch) != list(range(n)):
            fail(f"{path}: cluster size {size}: block ids are not 0..{n - 1}")
        if n % size:
            fail(f"{path}: cluster size {size}: {n} blocks are not whole clusters")
        sms = [launch[b] for b in range(n)]
        for c in range(n // size):
            if len(set(sms[c * size:(c + 1) * size])) != size:
                fail(f"{path}: cluster size {size}: cluster {c} has two blocks on one SM")
        out[size] = sms
    return out


def cases(launches):
    out = []
    for size, sms in launches.items():
        kernel = {"name": "K1", "blocks": len(sms), "threads": 1, "regs": 32, "smem": SMEM, "duration": 1}
        if size > 1:
            kernel["cluster"] = [size]
        name = "unclustered" if size == 1 else f"cluster{size}"
        out.append({
            "id": f"b200-097-{name}-{len(sms)}",
            "source": SOURCE,
            "device": "b200",
            "kernels": [kernel],
            "observation": {"kind": "hardware", "sm_of_block": {"K1": sms}},
            "notes": ("one block per SM (maximal dynamic shared memory); blocks print and exit, so durations are "
                      "unknown and short: blocks beyond one per SM wait for a block to finish (a second wave)"),
        })
    return {"source": SOURCE, "cases": out}


def tpc_order(sms):
    """The TPCs in the order a launch first uses them; None unless both SMs of each TPC come together."""
    order = []
    for i in range(0, len(sms) - 1, 2):
        a, b = sms[i], sms[i + 1]
        if a // 2 != b // 2 or a == b:
            return None
        order.append(a // 2)
    return order


def gpc_map(launches):
    """(gpc_of_tpc, evidence lines) from the launch without clusters and the 4-cluster launch."""
    tpcs = SMS // 2
    order = tpc_order(launches.get(1, []))
    if order is None or sorted(order) != list(range(tpcs)):
        fail("the launch without clusters does not visit every TPC once, both SMs together")
    four = launches.get(4)
    if four is None:
        fail("no launch of cluster size 4")
    clusters = [sorted({sm // 2 for sm in four[c:c + 4]}) for c in range(0, len(four), 4)]
    segments, cur = [], [order[0]]
    for t in order[1:]:
        if t < cur[-1]:
            segments.append(cur)
            cur = []
        cur.append(t)
    segments.append(cur)
    used = {t for c in clusters for t in c}
    waited = len(clusters) * 4 > len(set(four))  # some cluster ran in a second wave
    gpcs = []
    for s in segments:
        if waited and not used & set(s) and len(s) > 1:
            gpcs += [[t] for t in s]  # two free TPCs of one GPC would have taken a waiting cluster
        else:
            gpcs.append(s)
    gpc_of_tpc = [0] * tpcs
    for g, s in enumerate(gpcs):
        for t in s:
            gpc_of_tpc[t] = g
    bad = [c for c in clusters if len({gpc_of_tpc[t] for t in c}) != 1]
    if bad:
        fail(f"4-clusters {bad} span GPCs of the inferred map")
    lines = [f"{len(gpcs)} GPCs, TPCs per GPC {[len(s) for s in gpcs]}"]
    lines += [f"  GPC {g}: TPCs {s}" for g, s in enumerate(gpcs)]
    lines.append(f"every one of the {len(clusters)} 4-clusters (both waves) lies in one GPC")
    return gpc_of_tpc, lines


# The shipped hypotheses the explanation asks the engine about: the SM orders natural (alg1-natural-order),
# even-first (alg1) and GPC-major (hopper's numbering), and round-robin and most-room selection.
ENGINE_BASES = ["alg1", "alg1-natural-order", "round-robin", "most-room", "hopper"]
# The cluster GPC choices the engine has (mechanism `cluster_gpc`); the shipped hypotheses take most-room.
ENGINE_GPC_CHOICES = ["most-room", "lowest-index"]


def round_robin_clusters(size, n, gpc_of_tpc):
    """The one candidate no engine option has: one block per SM (all SMs free, no block finishes), clusters
    whole, in cluster order; the GPC is chosen round-robin (a pointer over GPC indices, the first GPC at or
    after it with room for the whole cluster; the pointer moves past it); the cluster's blocks take the GPC's
    free SMs in ascending order (TPC by TPC, both SMs of a TPC together). Returns the SMs of the blocks placed
    before the first that must wait."""
    gpcs = max(gpc_of_tpc) + 1
    free = [True] * SMS
    members = [[sm for sm in range(SMS) if gpc_of_tpc[sm // 2] == g] for g in range(gpcs)]
    out, pointer = [], 0
    for _ in range(n // size):
        fits = [g for g in range(gpcs) if sum(free[sm] for sm in members[g]) >= size]
        if not fits:
            break
        g = next((x for x in fits if x >= pointer), fits[0])
        pointer = g + 1
        sms = [sm for sm in members[g] if free[sm]][:size]
        for sm in sms:
            free[sm] = False
        out += sms
    return out


def engine_predictions(case, hypothesis):
    """{block: (sm, start)} of the launch as tbcheck's engine places it under `hypothesis` (the Python module,
    so that no rule is written here twice), or the engine's reason for not placing it."""
    try:
        import tbcheck
    except ImportError:
        fail("--explain asks tbcheck's Python module for the shipped options' placements: build it "
             "(scripts/setup.sh) and put it on the path (PYTHONPATH=build/python)")
    try:
        rows = tbcheck.predict(case, hypothesis)
    except tbcheck.InputError as e:
        return str(e)
    return {r["block"]: (r["sm"], r["start"]) for r in rows}


def matched(got, sms):
    """Blocks that match the recording before the first difference, and what follows them."""
    same = next((i for i, (a, b) in enumerate(zip(got, sms)) if a != b), min(len(got), len(sms)))
    if same == len(sms):
        return "all"
    if same < len(got):
        return f"{same}; then predicted SM {got[same]}, recorded {sms[same]}"
    return f"{same}; the rest wait for a block to finish (a second wave, in the order blocks finish)"


def explain(launches, gpc_of_tpc):
    """Each candidate's prediction against each launch: blocks matched before the first difference. Blocks
    print and exit, so the recording orders the first wave only: the engine's blocks after it are not compared."""
    print("Candidates on each launch (blocks that match the recording before the first difference):")
    for case in cases(launches)["cases"]:
        sms = case["observation"]["sm_of_block"]["K1"]
        size = case["kernels"][0].get("cluster", [1])[0]
        print(f"  cluster size {size} ({len(sms)} blocks; {len(set(sms))} distinct SMs)")
        scenario = {k: v for k, v in case.items() if k not in ("observation", "notes", "source")}
        # hopper refuses clusters whatever its GPC choice: asked once.
        names = ENGINE_BASES if size == 1 else [f"{b}+cluster_gpc={g}" if g != "most-room" else b
                                                for b in ENGINE_BASES for g in ENGINE_GPC_CHOICES
                                                if b != "hopper" or g == "most-room"]
        for name in names:
            placed = engine_predictions(scenario, name)
            if isinstance(placed, str):
                print(f"    {name:48s} cannot place it: {placed}")
                continue
            got = [placed[b][0] for b in sorted(placed) if placed[b][1] == 0]
            print(f"    {name:48s} {matched(got, sms)}")
        if size > 1:
            what = "round-robin GPC choice (not an engine option)"
            print(f"    {what:48s} {matched(round_robin_clusters(size, len(sms), gpc_of_tpc), sms)}")


def write_new(path, text):
    """Atomic and no-clobber: a temporary file in the target folder, linked to the name only if it is free."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".import-b200-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would make the shipped file private
        try:
            os.link(tmp, path)
        except FileExistsError:
            fail(f"{path}: exists; not replaced")
    finally:
        os.unlink(tmp)


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__)
        return 2
    launches = read(args[0])
    missing = [s for s in (1, 2, 4, 8, 16) if s not in launches]
    if missing:
        print(f"note: no launch of cluster size {', '.join(map(str, missing))} in {args[0]}", file=sys.stderr)
    if "--gpcs" in args or "--explain" in args:
        gpc_of_tpc, lines = gpc_map(launches)
        print("\n".join(lines))
        if "--explain" in args:
            explain(launches, gpc_of_tpc)
        else:
            print(json.dumps(gpc_of_tpc))
        return 0
    if "--out" not in args or args.index("--out") + 1 >= len(args):
        fail("give --out FILE or --gpcs")
    write_new(args[args.index("--out") + 1], json.dumps(cases(launches), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
