"""Score result JSONL files against a bench and print the SWE-Explore metrics table.

Usage::

    python scripts/evaluate.py --bench FILE --repos DIR PRED.jsonl [PRED.jsonl ...]
        [--k K] [--per-repo] [--metrics all|main] [--format markdown|plain] [--line-counts lines|splitlines]
        [--normalize-paths] [--json OUT]

Metrics are recomputed from each row's ``regions`` with the reference-compatible evaluator
(``docs/metrics.md``), on the first ``--k`` regions of each row (default 5, as the reference runner slices
predictions): mean over evaluated instances; instances without a snapshot are excluded; failed rows and bench
instances with no row count as 0 (as the reference's new runner does). Every gap is printed and written into
``--json`` (``coverage``): instances without a snapshot, without a result row, failed, rows with more than K
regions, and predicted regions naming files that are not in the snapshot; ``--strict`` makes any of them an
error. One table row per file (labelled by its explorer name, or file name when they clash); ``--per-repo`` adds
a table per repository.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from swe_explore.evaluation.cli import MAIN_METRICS, add_bench_arguments, die, load_bench_args
from swe_explore.evaluation.line_counts import LINE_COUNT_MODES
from swe_explore.evaluation.metrics import METRIC_NAMES
from swe_explore.evaluation.bench import SnapshotCommitError
from swe_explore.evaluation.results import Coverage, evaluate_rows, format_table, read_rows, summarize

def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 gaps with ``--strict``, 2 bad input)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("predictions", type=Path, nargs="+", help="result JSONL file(s)")
    add_bench_arguments(parser)
    parser.add_argument("--k", type=int, default=5,
                        help="score the first K regions of each row (default %(default)s, as the reference runner)")
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 1 if any instance has no snapshot or no row, a row failed or holds "
                             "more than K regions, or a region names a file that is not in the snapshot")
    parser.add_argument("--per-repo", action="store_true", help="also print one table per repository")
    parser.add_argument("--metrics", choices=["all", "main"], default="all", help="all 17 metrics or the main 9")
    parser.add_argument("--format", choices=["markdown", "plain"], default="markdown")
    parser.add_argument("--line-counts", choices=LINE_COUNT_MODES, default="lines",
                        help="line definition for end=-1/negative starts: ours or the reference's splitlines")
    parser.add_argument("--normalize-paths", action="store_true", help="normalise predicted paths (./a.py -> a.py)")
    parser.add_argument("--json", type=Path, default=None, help="also write the summaries as JSON")
    args = parser.parse_args(argv)
    records = load_bench_args(parser, args, require_query=False)
    known = {r.instance_id for r in records}
    tables, summaries = {}, {}
    coverages: dict[str, Coverage] = {}
    for path in args.predictions:
        try:
            rows = read_rows(path)
        except (ValueError, FileNotFoundError) as exc:
            die(parser, str(exc))
        if not rows:
            die(parser, f"{path}: no result rows")
        unknown = sorted({r["instance_id"] for r in rows} - known)
        if unknown:
            print(f"warning: {path}: {len(unknown)} row(s) for instances not scored (not in {args.bench}, or with "
                  f"empty read_core_regions, which are skipped as the reference runner does), e.g. {unknown[:3]}",
                  file=sys.stderr)
            rows = [r for r in rows if r["instance_id"] in known]
        label = str(rows[0].get("explorer") or path.stem) if rows else path.stem
        if label in tables:
            label = f"{label} ({path.name})"
        coverage = Coverage()
        try:
            scored = evaluate_rows(rows, records, args.repos, k=args.k, line_count_mode=args.line_counts,
                                   normalize_paths=args.normalize_paths, shared_snapshots=args.shared_snapshots,
                                   coverage=coverage)
        except SnapshotCommitError as exc:
            die(parser, str(exc))
        except ValueError as exc:
            die(parser, f"{path}: {exc}")
        coverages[label] = coverage
        summaries[label] = summarize(scored, records) | {"coverage": coverage.to_dict()}
        tables[label] = summaries[label]["metrics"]
    metrics = METRIC_NAMES if args.metrics == "all" else MAIN_METRICS
    for label, coverage in coverages.items():
        print(f"{label}: {coverage.summary_line()}")
        for problem in coverage.problems():
            print(f"warning: {label}: {problem}", file=sys.stderr)
    print(format_table(tables, metrics=metrics, style=args.format))
    if args.per_repo:
        repos = sorted({repo for s in summaries.values() for repo in s["per_repo"]})
        for repo in repos:
            per = {label: s["per_repo"][repo]["metrics"] for label, s in summaries.items() if repo in s["per_repo"]}
            n = max(s["per_repo"].get(repo, {}).get("cases", 0) for s in summaries.values())
            print(f"\n{repo} ({n} instance{'' if n == 1 else 's'})")
            print(format_table(per, metrics=metrics, style=args.format))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summaries, indent=1) + "\n", encoding="utf-8")
    if args.strict and any(c.problems() for c in coverages.values()):
        print("error: --strict: the evaluation has gaps (see the warnings above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
