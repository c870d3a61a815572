#!/usr/bin/env python3
# The README's table of pairs from `tbcheck distinguish --json` (stdin): outcome, reduced case, size,
# solver and wall seconds, finder and minimality per pair, so the README is regenerated, not retyped.
import json
import sys


def main() -> int:
    d = json.load(sys.stdin)
    print("| pair | outcome | reduced case | kernels | blocks ({}) | solver s | wall s | found by | minimality |".format(d["device"]))
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |")
    proved = separated = 0
    for p in d["pairs"]:
        sep = p["outcome"] == "separated"
        case = p.get("case", {})
        kernels = case.get("kernels", [])
        if sep:
            separated += 1
            proved += p["minimal_proved"]
            minimal = p["minimality"]
            row = [p["outcome"], "[{}]".format(",".join(map(str, p["reduced_structure"]))), str(len(kernels)),
                   str(sum(k["blocks"] for k in kernels)), "{:.1f}".format(p["solver_seconds"]),
                   "{:.1f}".format(p["wall_seconds"]), p["found_by"], minimal]
        else:
            reason = p.get("reason", "")
            if "GPC map" in reason:
                reason = "{} needs a GPC map; {} has none".format("fermi", d["device"])
            row = [p["outcome"], "", "", "", "{:.1f}".format(p["solver_seconds"]), "{:.1f}".format(p["wall_seconds"]), "",
                   reason.replace("|", "/")]
        print("| {} / {} | {} |".format(p["h1"], p["h2"], " | ".join(row)))
    print()
    print("{} pairs: {} separated, {} of them with minimality proved".format(len(d["pairs"]), separated, proved))
    return 0


if __name__ == "__main__":
    sys.exit(main())
