"""Compare two index stores, or two result files, byte for byte, ignoring only what records time and place.

What a refactoring is checked with: build the same stores and result rows with the old and the new code, then::

    python scripts/compare_outputs.py OLD_STORE NEW_STORE
    python scripts/compare_outputs.py OLD.jsonl NEW.jsonl

Stores: every file under A must exist under B with the same bytes, except ``manifest.json`` files, compared as
JSON without ``created_at``, ``seconds``, ``toolkit_version`` (at any depth) and the snapshot's ``path`` and
``stat_signature`` (where and when the snapshot was on disk; only stores built before the content decided
whether an index is current record the latter); ``_reports/`` and ``_cache/`` are skipped. Result
files: rows compared as JSON without ``seconds``. Prints the differences; exit status 1 if there is any.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from swe_explore.commands._errors import run_main

VOLATILE = {"created_at", "seconds", "toolkit_version"}
SNAPSHOT_VOLATILE = {"path", "stat_signature"}
SKIPPED_DIRS = {"_reports", "_cache"}


def scrub(value: Any, parent: str = "") -> Any:
    """A JSON value without the volatile keys (module docstring).

    :param value: the JSON value.
    :param parent: the key it was found under.
    :return: the value without them.
    """
    if isinstance(value, dict):
        return {
            k: scrub(v, k)
            for k, v in value.items()
            if k not in VOLATILE and not (parent == "snapshot" and k in SNAPSHOT_VOLATILE)
        }
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def compare_rows(a: Path, b: Path) -> int:
    """Compare two result files; return the number of differing rows (a different row count counts as one)."""
    rows_a = [scrub(json.loads(line)) for line in a.read_text().splitlines() if line.strip()]
    rows_b = [scrub(json.loads(line)) for line in b.read_text().splitlines() if line.strip()]
    bad: int = sum(x != y for x, y in zip(rows_a, rows_b)) + (len(rows_a) != len(rows_b))
    for x, y in zip(rows_a, rows_b):
        if x != y:
            print(f"DIFF row {x.get('instance_id')}")
    print(f"{len(rows_a)} rows compared, {bad} differences")
    return bad


def compare_stores(a: Path, b: Path) -> int:
    """Compare two index stores; return the number of differing or missing files."""

    def files(root: Path) -> list[Path]:
        return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file() and not SKIPPED_DIRS & set(p.parts))

    in_a, in_b = files(a), files(b)
    only = sorted(set(map(str, in_a)) ^ set(map(str, in_b)))
    for name in only:
        print(f"DIFF only in one store: {name}")
    bad = len(only)
    for rel in in_a:
        if not (b / rel).exists():
            continue
        if rel.name == "manifest.json":
            same = scrub(json.loads((a / rel).read_text())) == scrub(json.loads((b / rel).read_text()))
        else:
            same = (a / rel).read_bytes() == (b / rel).read_bytes()
        if not same:
            print(f"DIFF {rel}")
            bad += 1
    print(f"{len(in_a)} files compared, {bad} differences")
    return bad


def main(argv: list[str] | None = None) -> int:
    """Compare the two paths given; return 0 when they are the same, 1 otherwise, 2 on bad input."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    a, b = Path(args[0]), Path(args[1])
    if a.is_dir() and b.is_dir():
        return 1 if compare_stores(a, b) else 0
    if a.is_file() and b.is_file():
        return 1 if compare_rows(a, b) else 0
    print(f"error: give two store directories or two result files, got {a} and {b}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(run_main(main))
