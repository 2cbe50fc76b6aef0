"""Score result JSONL files against a bench and print the SWE-Explore metrics table.

Usage::

    python scripts/evaluate.py --bench FILE --repos DIR PRED.jsonl [PRED.jsonl ...]
        [--k K] [--per-repo] [--metrics all|main] [--format markdown|plain] [--line-counts lines|splitlines]
        [--normalize-paths] [--json OUT] [--per-instance-csv OUT]
        [--compare [--baseline PRED.jsonl] [--resamples 10000] [--seed 0] [--ci-method percentile|bca|basic]]

Metrics are recomputed from each row's ``regions`` with the reference-compatible evaluator
(``docs/metrics.md``), on the first ``--k`` regions of each row (default 5, as the reference runner slices
predictions): mean over evaluated instances; instances without a snapshot are excluded; failed rows and bench
instances with no row count as 0 (as the reference's new runner does). Every gap is printed and written into
``--json`` (``coverage``): instances without a snapshot, without a result row, failed, rows with more than K
regions, and predicted regions naming files that are not in the snapshot; ``--strict`` makes any of them an
error. One table row per file (labelled by its explorer name, or file name when they clash), then one table per
``dataset`` and per language (the record's ``language``, else that of most of its core lines), with the number
of instances of each; ``--per-repo`` adds a table per repository.

``--json`` writes each file's summary with its per-instance metrics (``per_instance``); ``--per-instance-csv``
writes them as one CSV (``label, instance_id, outcome``, 17 metrics). ``--compare`` adds a table of every metric's
mean with its 95% bootstrap CI and, for each file against the baseline (``--baseline``, default the first file),
the Holm-adjusted p-value of a two-sided paired permutation test, over the instances present in all files
(:mod:`swe_explore.evaluation.stats`); with ``--json`` each summary gets a ``comparison``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from swe_explore.evaluation.bench import BenchRecord, SnapshotCommitError
from swe_explore.evaluation.cli import MAIN_METRICS, add_bench_arguments, die, load_bench_args
from swe_explore.evaluation.line_counts import LINE_COUNT_MODES
from swe_explore.evaluation.metrics import METRIC_NAMES
from swe_explore.evaluation.results import (
    Coverage,
    evaluate_rows,
    format_table,
    instance_metrics,
    mean_metrics,
    read_rows,
    summarize,
    write_instance_csv,
)
from swe_explore.evaluation.stats import (
    CI_METHODS,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Comparison,
    compare_rows,
    format_comparison,
)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 gaps with ``--strict``, 2 bad input)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("predictions", type=Path, nargs="+", help="result JSONL file(s)")
    add_bench_arguments(parser)
    parser.add_argument(
        "--k",
        type=int,
        default=5,
        help="score the first K regions of each row (default %(default)s, as the reference runner)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit with status 1 if any instance has no snapshot or no row, a row failed or holds "
        "more than K regions, or a region names a file that is not in the snapshot",
    )
    parser.add_argument("--per-repo", action="store_true", help="also print one table per repository")
    parser.add_argument("--metrics", choices=["all", "main"], default="all", help="all 17 metrics or the main 9")
    parser.add_argument("--format", choices=["markdown", "plain"], default="markdown")
    parser.add_argument(
        "--line-counts",
        choices=LINE_COUNT_MODES,
        default="lines",
        help="line definition for end=-1/negative starts: ours or the reference's splitlines",
    )
    parser.add_argument("--normalize-paths", action="store_true", help="normalise predicted paths (./a.py -> a.py)")
    parser.add_argument(
        "--json", type=Path, default=None, help="also write the summaries (with per-instance metrics) as JSON"
    )
    parser.add_argument(
        "--per-instance-csv",
        type=Path,
        default=None,
        metavar="OUT",
        help="also write every file's per-instance metrics as one CSV",
    )
    parser.add_argument(
        "--compare",
        action="store_true",
        help="add means with 95%% bootstrap CIs and paired permutation tests against the baseline",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        metavar="PRED.jsonl",
        help="the file the others are tested against with --compare (default: the first file)",
    )
    parser.add_argument(
        "--resamples",
        type=int,
        default=DEFAULT_RESAMPLES,
        help="bootstrap resamples and random permutations (default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of both (default: %(default)s)")
    parser.add_argument(
        "--ci-method", choices=CI_METHODS, default="percentile", help="bootstrap interval (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    if args.baseline is not None and not args.compare:
        parser.error("--baseline needs --compare")
    if args.resamples < 1:
        parser.error("--resamples must be >= 1")
    if args.baseline is not None:
        chosen = [p for p in args.predictions if p.resolve() == args.baseline.resolve()]
        args.predictions = [args.baseline] + [p for p in args.predictions if p not in chosen]
    if args.compare and len(args.predictions) < 2:
        parser.error("--compare needs at least two result files")
    records = load_bench_args(parser, args, require_query=False)
    known = {r.instance_id for r in records}
    tables, summaries, scored_by_label, file_ids = {}, {}, {}, {}
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
            print(
                f"warning: {path}: {len(unknown)} row(s) for instances not scored (not in {args.bench}, or with "
                f"empty read_core_regions, which are skipped as the reference runner does), e.g. {unknown[:3]}",
                file=sys.stderr,
            )
            rows = [r for r in rows if r["instance_id"] in known]
            if not rows:
                die(parser, f"{path}: none of its rows is for an instance of {args.bench} (another bench's results?)")
        label = str(rows[0].get("explorer") or path.stem) if rows else path.stem
        if label in tables:
            label = f"{label} ({path.name})"
        coverage = Coverage()
        try:
            scored = evaluate_rows(
                rows,
                records,
                args.repos,
                k=args.k,
                line_count_mode=args.line_counts,
                normalize_paths=args.normalize_paths,
                shared_snapshots=args.shared_snapshots,
                coverage=coverage,
            )
        except SnapshotCommitError as exc:
            die(parser, str(exc))
        except ValueError as exc:
            die(parser, f"{path}: {exc}")
        coverages[label] = coverage
        summaries[label] = {
            "file": str(path),
            **summarize(scored, records),
            "coverage": coverage.to_dict(),
            "per_instance": instance_metrics(scored),
        }
        tables[label] = summaries[label]["metrics"]
        scored_by_label[label] = scored
        file_ids[label] = {r["instance_id"] for r in rows}
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
    for field, group_of in (("dataset", record_dataset), ("language", record_language)):
        groups = {r.instance_id: group_of(r) for r in records}
        for value in sorted(set(groups.values())):
            per, n = {}, 0
            for label, scored in scored_by_label.items():
                subset = [row for row in scored if groups.get(row["instance_id"]) == value]
                if subset:
                    per[label] = mean_metrics(subset, metrics)
                    summaries[label].setdefault(f"per_{field}", {})[value] = {
                        "cases": len(subset),
                        "metrics": mean_metrics(subset),
                    }
                    n = max(n, len(subset))
            if per:
                print(f"\n{field} {value} ({n} instance{'' if n == 1 else 's'})")
                print(format_table(per, metrics=metrics, style=args.format))
    if args.compare:
        # only instances that each file has a row for (not the NOT_ATTEMPTED zeros of the table above)
        present = {
            label: [r for r in scored if r["instance_id"] in file_ids[label]]
            for label, scored in scored_by_label.items()
        }
        baseline = next(iter(present))
        try:
            comparison = compare_rows(
                present, baseline, metrics, n_resamples=args.resamples, seed=args.seed, ci_method=args.ci_method
            )
        except ValueError as exc:
            die(parser, str(exc))
        print(f"\n{_compared_line(comparison)}")
        print(format_comparison(comparison, metrics_as="rows"))
        for label, summary in summaries.items():
            summary["comparison"] = comparison.to_dict(label)
    if args.per_instance_csv:
        count = write_instance_csv(args.per_instance_csv, scored_by_label)
        print(f"wrote {count} per-instance rows to {args.per_instance_csv}", file=sys.stderr)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summaries, indent=1) + "\n", encoding="utf-8")
    if args.strict and any(c.problems() for c in coverages.values()):
        print("error: --strict: the evaluation has gaps (see the warnings above)", file=sys.stderr)
        return 1
    return 0


def record_dataset(record: BenchRecord) -> str:
    """The record's ``dataset`` field (``verified``, ``multilingual``, ``pro``, ``mined``...), else ``"-"``."""
    return str(record.raw.get("dataset") or "-")


def record_language(record: BenchRecord) -> str:
    """The record's ``language`` field, else the language of most of its core lines (docs/config files do not
    count: :func:`swe_explore.benchprep.release.instance_language`), else ``"-"``."""
    from swe_explore.benchprep.release import instance_language

    return str(record.raw.get("language") or instance_language(record.ground_truth) or "-")


def _compared_line(comparison: Comparison) -> str:
    """``"compared: 21 instances present in all 3 files, baseline 'x' (left out: 2 missing from y: a, b)"``."""
    left_out = "; ".join(
        f"{len(ids)} missing from {label}: {', '.join(ids[:3])}{', ...' if len(ids) > 3 else ''}"
        for label, ids in comparison.excluded.items()
    )
    return (
        f"compared: {comparison.n} instances present in all {len(comparison.labels)} files, baseline "
        f"{comparison.baseline!r}" + (f" (left out: {left_out})" if left_out else "")
    )


if __name__ == "__main__":
    sys.exit(main())
