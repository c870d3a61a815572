#!/usr/bin/env python3
# Regenerates the tables of docs/results/*.md in place. Each table sits between
#   <!-- generated (text|markdown) by: COMMAND -->  and  <!-- end generated -->
# where COMMAND (run from the repository root by sh) names how the table is made; `tbcheck` in it is
# the built binary and $RECORDINGS the folder written by `tbcheck import-ntbs`.
# Usage: scripts/update_results.py [--tbcheck build/cli/tbcheck] [--recordings DIR] [--only TEXT] [FILE.md ...]
import argparse
import glob
import os
import re
import subprocess
import sys
import time

MARK = re.compile(r"<!-- generated \((text|markdown)\) by: (.*?) -->\n(.*?)<!-- end generated -->\n", re.S)


def run(command: str, tb: str, recordings: str) -> str:
    cmd = re.sub(r"(^|[|;&(]\s*)tbcheck ", lambda m: m.group(1) + tb + " ", command)
    env = dict(os.environ, RECORDINGS=recordings or "", TBCHECK=tb)
    r = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, env=env)
    # validate exits 1 when a hypothesis fails a case: the table is still the output.
    if r.returncode not in (0, 1):
        sys.exit("update_results.py: `{}` exited {}:\n{}".format(command, r.returncode, r.stderr))
    return r.stdout


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--tbcheck", default="build/cli/tbcheck")
    ap.add_argument("--recordings", default="", help="folder of import-ntbs output (for $RECORDINGS)")
    ap.add_argument("--only", default="", help="only commands containing this text")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(root)
    tb = os.path.abspath(a.tbcheck)
    for path in a.files or sorted(glob.glob("docs/results/*.md")):
        text = open(path, encoding="utf-8").read()

        def regenerate(m):
            kind, command, old = m.group(1), m.group(2), m.group(3)
            if a.only not in command or ("$RECORDINGS" in command and not a.recordings):
                return m.group(0)
            t0 = time.time()
            out = run(command, tb, a.recordings).rstrip("\n") + "\n"
            print("{}: {} ({:.0f} s)".format(path, command, time.time() - t0), file=sys.stderr)
            body = out if kind == "markdown" else "```text\n" + out + "```\n"
            return "<!-- generated ({}) by: {} -->\n{}<!-- end generated -->\n".format(kind, command, body)

        new = MARK.sub(regenerate, text)
        if new != text:
            open(path, "w", encoding="utf-8").write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
