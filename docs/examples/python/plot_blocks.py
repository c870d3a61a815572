#!/usr/bin/env python3
# Per-SM block timelines of one scenario under two hypotheses, drawn with matplotlib from tbcheck.predict
# (docs/python.md); python/tests/test_tbcheck.py runs it so the page's picture cannot rot.
"""Usage: plot_blocks.py OUT.png [SCENARIO] [HYPOTHESES] [SMS]

SCENARIO: a scenario or case file (default: seed 000's case 1.2); HYPOTHESES: a comma list
(default alg1,round-robin); SMS: how many SMs to draw, from SM 0 (default 6).
"""
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

import tbcheck  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[1])
    scenario = argv[2] if len(argv) > 2 else ROOT / "corpus/paper/000-wang/case-1.2.json"
    names = (argv[3] if len(argv) > 3 else "alg1,round-robin").split(",")
    sms = int(argv[4]) if len(argv) > 4 else 6
    rows = tbcheck.predict(scenario, ",".join(names))
    kernels = sorted({r["kernel_index"]: r["kernel"] for r in rows}.items())
    colours = {name: plt.cm.tab10(i % 10) for i, name in kernels}
    fig, axes = plt.subplots(len(names), 1, figsize=(8, 1 + 0.32 * sms * len(names)), sharex=True, squeeze=False)
    for ax, name in zip(axes[:, 0], names):
        # Blocks that share an SM in time get lanes of its row: each the first lane free at its start.
        for sm in range(sms):
            mine = sorted((r for r in rows if r["hypothesis"] == name and r["sm"] == sm), key=lambda r: r["start"])
            lane_ends, lanes = [], []
            for r in mine:
                lane = next((i for i, end in enumerate(lane_ends) if end <= r["start"]), len(lane_ends))
                lane_ends[lane:lane + 1] = [r["end"]]
                lanes.append(lane)
            height = 0.8 / max(1, len(lane_ends))
            for r, lane in zip(mine, lanes):
                ax.broken_barh([(r["start"], r["end"] - r["start"])], (sm - 0.4 + lane * height, height),
                               facecolors=colours[r["kernel"]], edgecolors="none")
        ax.set_title(f"{name} on {rows[0]['device']}", fontsize=10)
        ax.set_ylabel("SM")
        ax.set_yticks(range(sms))
        ax.set_ylim(sms - 0.5, -0.5)
    axes[-1, 0].set_xlabel("time (model units)")
    fig.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=colours[k]) for _, k in kernels],
               labels=[k for _, k in kernels], loc="upper right", ncol=len(kernels), fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(out, dpi=100)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
