"""The repair bridge: per instance of a result file, a snapshot copy and a document showing only its regions.

Usage::

    python scripts/context.py RESULTS.jsonl --bench FILE --repos DIR --out DIR [--mode blank|remove] [--k K]

For each instance with a row in ``RESULTS.jsonl`` (docs/metrics.md §3.2) it writes ``<out>/<instance_id>/``:
``snapshot/``, a copy of the snapshot in which every line outside the union of the row's regions is hidden
(files outside left out; in the others, hidden lines emptied so line numbers stay true, or with ``--mode remove``
dropped, with ``line_map.json`` mapping kept lines to their original numbers); ``context.md``, the visible lines
as Markdown (a ``## path:start-end`` heading and numbered lines per region, overlapping and adjacent regions of a
file merged, in the row's order); and ``context.json``, what was shown and its size. ``<out>/summary.json`` holds
every instance's. Regions past a file's end are clipped, paths that name no file are reported; neither stops the
run. Each instance directory appears whole or not at all, and running again skips the ones already written with
the same regions and mode. The library is :mod:`swe_explore.evaluation.context`.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from swe_explore.commands._args import (
    add_bench_arguments,
    die,
    load_bench_args,
    refuse_overwriting_inputs,
    refuse_writing_into,
)
from swe_explore.evaluation.bench import first_ids
from swe_explore.evaluation.context import MODES, write_contexts
from swe_explore.evaluation.results import read_rows


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 2 bad input)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.k is not None and args.k < 1:
        die(parser, f"--k must be >= 1, got {args.k}")
    records = load_bench_args(parser, args, require_query=False)
    refuse_writing_into(parser, [("--out", args.out)], [("--repos", args.repos)])
    refuse_overwriting_inputs(parser, [("--out", args.out)], [("results", args.results), ("--bench", args.bench)])
    try:
        rows = read_rows(args.results, drop_partial_last=True)
    except (ValueError, FileNotFoundError, IsADirectoryError) as exc:  # the message names the file
        die(parser, str(exc))
    try:
        run = write_contexts(
            rows, records, args.repos, args.out, mode=args.mode, k=args.k, shared_snapshots=args.shared_snapshots
        )
    except (ValueError, FileNotFoundError, IsADirectoryError) as exc:
        die(parser, f"{args.results}: {exc}")
    for label, ids in (
        ("bench instances have no result row (nothing written)", run.no_row),
        ("instances have no snapshot under --repos (nothing written)", run.no_snapshot),
        ("rows failed (written with no visible line)", run.failed),
    ):
        if ids:
            print(f"note: {len(ids)} {label}: {first_ids(ids)}", file=sys.stderr)
    problems = [(c.instance_id, p) for c in run.contexts for p in c.problems]
    if problems:
        iid, first = problems[0]
        region = first["region"]
        kinds = Counter(p["problem"] for _, p in problems)
        print(
            f"note: {len(problems)} region(s) show less than asked "
            f"({', '.join(f'{n} {kind}' for kind, n in kinds.items())}; e.g. {iid}: "
            f"{region['path']}:{region['start']}-{region['end']}); see problems in {args.out / 'summary.json'}",
            file=sys.stderr,
        )
    lines = sum(c.visible_lines for c in run.contexts)
    chars = sum(c.context_chars for c in run.contexts)
    print(
        f"{len(run.contexts)} instance(s) in {args.out} ({len(run.written)} written, {len(run.skipped)} already "
        f"done); {lines} visible line(s), context.md {chars} character(s) in all"
    )
    return 0


def _parser() -> argparse.ArgumentParser:
    """The command's flags."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="result JSONL (one row per instance, with its regions)")
    parser.add_argument("--out", type=Path, required=True, help="output directory, one folder per instance")
    parser.add_argument(
        "--mode",
        choices=list(MODES),
        default="blank",
        help="blank: hidden lines emptied, line numbers kept; remove: hidden lines dropped, with line_map.json "
        "(default: %(default)s)",
    )
    parser.add_argument("--k", type=int, default=None, help="use only each row's first K regions (default: all)")
    add_bench_arguments(parser)
    return parser
