#!/usr/bin/env python3
"""Moves the run metadata of recordings written before `run` was a case field out of their notes.

Older `tbcheck run` appended it to the notes ("<notes>; metadata {...}"); tbcheck still reads that form, and this
rewrites such files (one case per file) into the present one. Usage: scripts/migrate_run_field.py FILE_OR_DIR...
Each file is replaced atomically, only where it has the old form; other files are left as they are.
"""
import json
import os
import sys
import tempfile

MARK = "; metadata "


def migrated(case):
    """The case with its run metadata as the `run` field, or None when it has nothing to move."""
    notes = case.get("notes")
    if "run" in case or not isinstance(notes, str) or MARK not in notes:
        return None
    at = notes.index(MARK)
    try:
        run = json.loads(notes[at + len(MARK):])
    except json.JSONDecodeError:
        return None
    if not isinstance(run, dict):
        return None
    out = dict(case)
    out["run"] = run
    if notes[:at]:
        out["notes"] = notes[:at]
    else:
        del out["notes"]
    return out


def rewrite(path):
    with open(path, encoding="utf-8") as f:
        case = json.load(f)
    new = migrated(case) if isinstance(case, dict) else None
    if new is None:
        return False
    # tbcheck writes cases with one-space indentation and sorted keys; so does this.
    text = json.dumps(new, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".migrate-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    return True


def main(args):
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    files = []
    for a in args:
        if os.path.isdir(a):
            for root, _, names in os.walk(a):
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".json")]
        elif os.path.isfile(a):
            files.append(a)
        else:
            print(f"migrate_run_field: {a}: no such file or folder", file=sys.stderr)
            return 2
    changed = sum(rewrite(f) for f in sorted(files))
    print(f"{changed} of {len(files)} files moved their run metadata into `run`")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
