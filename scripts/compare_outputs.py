#!/usr/bin/env python3
"""Compare two index stores (or two result files) byte for byte, ignoring only build times in manifests.

What a refactoring is checked with: build the same stores and result rows with the old and the new code, then
``python scripts/compare_outputs.py OLD_STORE NEW_STORE`` and ``... OLD.jsonl NEW.jsonl``.

usage: compare_outputs.py A B
  A, B: two index store directories, or two result .jsonl files.
Directories: every file under A must exist under B with identical bytes, except manifest.json files, which are
compared as JSON after dropping the keys created_at, seconds and toolkit_version (at any depth) and snapshot.path. Result files:
rows compared as JSON after dropping "seconds". Prints differences; exit status 1 if any.
"""

import json
import sys
from pathlib import Path

VOLATILE = {"created_at", "seconds", "toolkit_version"}


def scrub(x, parent=""):
    if isinstance(x, dict):
        return {
            k: scrub(v, k)
            for k, v in x.items()
            if k not in VOLATILE and not (parent == "snapshot" and k in ("path", "stat_signature"))
        }
    if isinstance(x, list):
        return [scrub(v) for v in x]
    return x


def main() -> int:
    a, b = Path(sys.argv[1]), Path(sys.argv[2])
    bad = 0
    if a.is_file():
        ra = [scrub(json.loads(l)) for l in a.read_text().splitlines() if l.strip()]
        rb = [scrub(json.loads(l)) for l in b.read_text().splitlines() if l.strip()]
        if ra != rb:
            print(f"DIFF rows: {a} vs {b}")
            for x, y in zip(ra, rb):
                if x != y:
                    print(" first differing row:", x.get("instance_id"))
                    break
            return 1
        print(f"same: {len(ra)} rows")
        return 0
    fa = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file() and "_reports" not in p.parts)
    fb = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file() and "_reports" not in p.parts)
    if fa != fb:
        print("DIFF file lists:", sorted(set(map(str, fa)) ^ set(map(str, fb)))[:20])
        bad += 1
    for rel in fa:
        if not (b / rel).exists():
            continue
        if rel.name == "manifest.json":
            if scrub(json.loads((a / rel).read_text())) != scrub(json.loads((b / rel).read_text())):
                print("DIFF manifest", rel)
                bad += 1
        elif (a / rel).read_bytes() != (b / rel).read_bytes():
            print("DIFF bytes", rel)
            bad += 1
    print(f"{len(fa)} files compared, {bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
