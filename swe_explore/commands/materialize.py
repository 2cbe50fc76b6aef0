"""Write one repository snapshot per bench record, ``<repos>/<instance_id>/``, from bare git mirrors.

Usage::

    python scripts/materialize.py BENCH.jsonl --mirrors DIR --repos DIR [--clone-missing]
        [--history [--history-commits N] [--history-years Y]] [--quiet]

Mirrors are bare clones laid out ``<mirrors>/<owner>+<name>/repo``; ``--clone-missing`` makes a missing one with
``git clone --mirror https://github.com/<owner>/<name>``. Each snapshot is the checkout of the record's
``base_commit`` (no ``.git``), written atomically with a marker file ``.swe-explore-snapshot.json``; snapshots
already in place are skipped, so an interrupted run is resumed by running it again. A record whose mirror or
commit is missing fails alone: the others go on, and the failures are listed at the end (exit status 1). With
``--history`` each snapshot also gets its history file (``base_commit`` and its ancestors, at most
``--history-commits`` of them, none older than ``--history-years`` before ``base_commit``; docs/history.md), and
snapshots already in place without one get it added; a history that cannot be read is listed (exit status 1)
and its snapshot kept. Rules: :mod:`swe_explore.benchprep.snapshots`.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from filelock import Timeout

from swe_explore.benchprep.snapshots import HistoryOptions, MaterializeReport, SnapshotTask, materialize
from swe_explore.chunking.history_git import DEFAULT_MAX_COMMITS
from swe_explore.commands._args import die, refuse_overwriting_inputs


def add_snapshot_arguments(parser: argparse.ArgumentParser, required: bool) -> None:
    """Add ``--mirrors DIR``, ``--repos DIR``, ``--clone-missing`` and the history flags.

    :param parser: the command's parser.
    :param required: whether ``--mirrors``/``--repos`` are required.
    """
    parser.add_argument(
        "--mirrors",
        type=Path,
        required=required,
        default=None,
        help="bare git mirrors, laid out <mirrors>/<owner>+<name>/repo",
    )
    parser.add_argument(
        "--repos", type=Path, required=required, default=None, help="where snapshots go: <repos>/<instance_id>/"
    )
    parser.add_argument(
        "--clone-missing",
        action="store_true",
        help="clone a missing mirror from https://github.com/<owner>/<name> (git clone --mirror)",
    )
    parser.add_argument(
        "--history",
        action="store_true",
        help="write each snapshot's history file (base_commit and its ancestors; added to snapshots in place)",
    )
    parser.add_argument(
        "--history-commits",
        type=int,
        default=DEFAULT_MAX_COMMITS,
        metavar="N",
        help=f"commits per history at most (default {DEFAULT_MAX_COMMITS})",
    )
    parser.add_argument(
        "--history-years",
        type=float,
        default=None,
        metavar="Y",
        help="only commits at most Y years older than base_commit (default: no time bound)",
    )


def history_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> HistoryOptions | None:
    """The history bounds the flags ask for, or ``None`` without ``--history``.

    :param parser: the command's parser (for errors).
    :param args: parsed arguments with ``history``, ``history_commits`` and ``history_years``.
    :return: the options.
    """
    if args.history_commits < 1:
        die(parser, f"--history-commits must be at least 1, not {args.history_commits}")
    if args.history_years is not None and not (args.history_years > 0 and math.isfinite(args.history_years)):
        die(parser, f"--history-years must be a positive number, not {args.history_years}")
    if not args.history:
        return None
    return HistoryOptions(max_commits=args.history_commits, years=args.history_years)


def run_materialize(
    parser: argparse.ArgumentParser, tasks: list[SnapshotTask], args: argparse.Namespace, progress: bool
) -> MaterializeReport:
    """Materialise the tasks and print the outcome (failures and unverified snapshots on stderr).

    :param parser: the command's parser (for errors).
    :param tasks: the snapshots to make.
    :param args: parsed arguments with ``mirrors``, ``repos``, ``clone_missing`` and the history flags.
    :param progress: show a progress bar.
    :return: the report.
    """
    if not args.mirrors.is_dir() and not args.clone_missing:
        die(parser, f"--mirrors {args.mirrors} is not a directory")
    history = history_options(parser, args)
    try:
        report = materialize(
            tasks, args.mirrors, args.repos, clone_missing=args.clone_missing, progress=progress, history=history
        )
    except Timeout as exc:
        die(parser, str(exc))
    print(f"{report.summary()} -> {args.repos}")
    if report.cloned:
        print(f"  cloned mirrors: {', '.join(report.cloned)}")
    if report.unverified:
        print(
            f"warning: {len(report.unverified)} snapshot(s) in place without a marker were left as they are "
            f"(their commit is unknown), e.g. {report.unverified[:3]}",
            file=sys.stderr,
        )
    if report.failed:
        print(f"{len(report.failed)} snapshot(s) failed:", file=sys.stderr)
        for iid, message in report.failed.items():
            print(f"  {iid}: {message}", file=sys.stderr)
    if report.history_failed:
        print(f"{len(report.history_failed)} history file(s) not written:", file=sys.stderr)
        for iid, message in report.history_failed.items():
            print(f"  {iid}: {message}", file=sys.stderr)
    return report


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 some snapshot or history failed, 2 bad input)."""
    from swe_explore.evaluation.bench import load_bench

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench", type=Path, help="bench JSONL with repo and base_commit per record")
    add_snapshot_arguments(parser, required=True)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    refuse_overwriting_inputs(parser, [("--repos", args.repos)], [("bench", args.bench), ("--mirrors", args.mirrors)])
    try:
        records = load_bench(args.bench, skip_empty_core=False, require_query=False)
    except (ValueError, FileNotFoundError) as exc:
        die(parser, str(exc))
    report = run_materialize(parser, [SnapshotTask.from_record(r) for r in records], args, progress=not args.quiet)
    return 1 if report.failed or report.history_failed else 0


if __name__ == "__main__":
    sys.exit(main())
