"""Score result JSONL files against a bench and print the SWE-Explore metrics table.

Usage::

    python scripts/evaluate.py --bench FILE --repos DIR PRED.jsonl [PRED.jsonl ...]
        [--k K] [--per-repo] [--metrics all|main] [--format markdown|plain] [--line-counts lines|splitlines]
        [--normalize-paths] [--score-predicted-lines] [--json OUT] [--per-instance-csv OUT]
        [--compare [--baseline PRED.jsonl] [--resamples 10000] [--seed 0] [--ci-method percentile|bca|basic]]
        [--paper-rows [FILE]]

Metrics are recomputed from each row's ``regions`` with the reference-compatible evaluator
(``docs/metrics.md``), on the first ``--k`` regions of each row (default 5, as the reference runner slices
predictions): mean over evaluated instances; instances without a snapshot are excluded; failed rows and bench
instances with no row count as 0 (as the reference's new runner does). Every gap is printed and written into
``--json`` (``coverage``): instances without a snapshot, without a result row, failed, rows with more than K
regions, predicted regions naming files that are not in the snapshot, and invalid ground-truth or predicted
regions (``start > end``, ``start 0``, an end past the file's last line, a ground-truth file outside the snapshot;
``docs/metrics.md``); ``--strict`` makes any of them an error. Nothing scored (no snapshot found) is an error
(exit status 1). Predicted ``end: -1`` / negative-start regions on files outside the ground truth, which the
reference scores as 0 lines, are counted; ``--score-predicted-lines`` also scores them with the file's length and
prints a second table, "predicted files resolved". One table row per file (labelled by its explorer name, or
file name when they clash), then one table per ``dataset`` and per language (the record's ``language``, else
that of most of its core lines), with the number of instances of each; ``--per-repo`` adds a table per
repository.

``--json`` writes each file's summary with its per-instance metrics (``per_instance``); ``--per-instance-csv``
writes them as one CSV (``label, instance_id, outcome``, 17 metrics, and with ``--score-predicted-lines`` the 17
again as ``resolved_<metric>``). ``--compare`` adds a table of every metric's
mean with its 95% bootstrap CI and, for each file against the baseline (``--baseline``, default the first file),
the Holm-adjusted p-value of a two-sided paired permutation test, over the instances present in all files
(:mod:`swe_explore.evaluation.stats`); with ``--json`` each summary gets a ``comparison``. ``--paper-rows`` adds the
paper's main-table rows (``docs/paper-main-table.csv``, measured on all 848 instances and labelled so) after ours
in the overall table and the comparison, for the metrics they share (``-`` for the others); they are not compared
and not written to ``--json``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from swe_explore.benchprep.release import record_language
from swe_explore.commands._args import (
    add_bench_arguments,
    add_paper_rows_argument,
    die,
    load_bench_args,
    refuse_overwriting_inputs,
    refuse_writing_into,
)
from swe_explore.evaluation.line_counts import LINE_COUNT_MODES
from swe_explore.evaluation.metrics import MAIN_METRICS, METRIC_NAMES
from swe_explore.evaluation.paper_rows import load_paper_rows
from swe_explore.evaluation.region_checks import PAST_EOF_MARGIN
from swe_explore.evaluation.report import NothingScoredError, evaluate_files, record_dataset
from swe_explore.evaluation.results import write_instance_csv
from swe_explore.evaluation.stats import CI_METHODS, DEFAULT_RESAMPLES, DEFAULT_SEED


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 nothing scored or gaps with ``--strict``, 2 bad
    input)."""
    parser, args = _parse(argv)
    refuse_overwriting_inputs(
        parser,
        [("--json", args.json), ("--per-instance-csv", args.per_instance_csv)],
        [("PRED", p) for p in args.predictions] + [("--bench", args.bench), ("--issue-map", args.issue_map)],
    )
    records = load_bench_args(parser, args, require_query=False)
    refuse_writing_into(
        parser, [("--json", args.json), ("--per-instance-csv", args.per_instance_csv)], [("--repos", args.repos)]
    )
    compare = {"n_resamples": args.resamples, "seed": args.seed, "ci_method": args.ci_method}
    try:
        paper_rows = load_paper_rows(args.paper_rows) if args.paper_rows is not None else None
    except ValueError as exc:
        die(parser, str(exc))
    try:
        report = evaluate_files(
            args.predictions,
            records,
            args.repos,
            bench=args.bench,
            metrics=METRIC_NAMES if args.metrics == "all" else MAIN_METRICS,
            groupings=(("dataset", record_dataset), ("language", record_language)),
            per_repo=args.per_repo,
            style=args.format,
            compare=compare if args.compare else None,
            score_predicted_lines=args.score_predicted_lines,
            paper_rows=paper_rows,
            k=args.k,
            line_count_mode=args.line_counts,
            normalize_paths=args.normalize_paths,
            shared_snapshots=args.shared_snapshots,
        )
    except NothingScoredError as exc:  # a table of zeros would look like a result
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # bad input, naming the file (or the snapshot at another commit)
        die(parser, str(exc))
    for label, scores in report.files.items():
        print(f"{label}: {scores.coverage.summary_line()}")
        for problem in scores.coverage.problems():
            print(f"warning: {label}: {problem}", file=sys.stderr)
        for note in scores.coverage.notes():
            print(f"note: {label}: {note}", file=sys.stderr)
    print(report.text)
    if args.per_instance_csv:
        count = write_instance_csv(args.per_instance_csv, report.scored_by_label)
        print(f"wrote {count} per-instance rows to {args.per_instance_csv}", file=sys.stderr)
    if args.json:
        report.write_json(args.json)
    if args.strict and report.has_gaps():
        print("error: --strict: the evaluation has gaps (see the warnings above)", file=sys.stderr)
        return 1
    return 0


def _parse(argv: list[str] | None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    """Parse and check the flags; ``--baseline`` is moved to the front of the files."""
    parser = _parser()
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
    return parser, args


def _parser() -> argparse.ArgumentParser:
    """The command's flags."""
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
        "more than K regions, a region names a file that is not in the snapshot, an --issue-map id matches no "
        "record, or a ground-truth or "
        f"predicted region is invalid (start > end, start 0, end past the last line + {PAST_EOF_MARGIN})",
    )
    parser.add_argument(
        "--score-predicted-lines",
        action="store_true",
        help="also score end -1 / negative-start regions on files outside the ground truth with the file's "
        "length (the reference scores them as 0 lines) and print a second table",
    )
    parser.add_argument("--per-repo", action="store_true", help="also print one table per repository")
    parser.add_argument("--metrics", choices=["all", "main"], default="all", help="all 17 metrics or the main 9")
    parser.add_argument(
        "--format", choices=["markdown", "plain"], default="markdown", help="table style (default: %(default)s)"
    )
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
    add_paper_rows_argument(parser)
    return parser


if __name__ == "__main__":
    sys.exit(main())
