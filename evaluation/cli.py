"""Command-line options shared by the scripts for bench input: ``--bench``, ``--repos``, and error reporting.

The explorer options (``--retriever``, ``--chunker``, ``--k``, ``--budget``, ...) are in
:mod:`swe_explore.explore.options`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, NoReturn

from swe_explore import MINI_BENCH, MINI_REPOS

#: The metrics the scripts print by default (all 17 with ``evaluate.py --metrics all``).
MAIN_METRICS = [
    "hit_file_rate",
    "hit_region_rate",
    "ndcg_at_500",
    "recall_at_500",
    "context_efficiency",
    "precision",
    "recall",
    "f1_score",
    "first_useful_hit",
]


def die(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    """Report a bad input (a data file, a directory, a config clash) without the usage dump; exit status 2.

    :param parser: the script's parser (for its name).
    :param message: what is wrong, naming the file or record.
    """
    print(f"{parser.prog}: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--bench FILE``, ``--repos DIR`` (both default to the mini bench that ships with the project) and
    ``--issue-map FILE`` (the reference runner's option: issue texts for benches without them).

    :param parser: the script's parser.
    """
    parser.add_argument("--bench", type=Path, default=MINI_BENCH, help="bench JSONL (default: the mini bench)")
    parser.add_argument(
        "--repos",
        type=Path,
        default=None,
        help="snapshots, one per instance_id: <repos>/<instance_id> or the record's repo_dir "
        "(default: the mini bench's, with the mini bench)",
    )
    parser.add_argument(
        "--shared-snapshots",
        action="store_true",
        help="also accept folders shared by several instances (<repos>/<name>, <repos>/<org>__<name>, "
        "..., as the reference runner does); off by default: such a folder is at another "
        "instance's commit",
    )
    parser.add_argument(
        "--issue-map",
        type=Path,
        default=None,
        metavar="FILE",
        help="JSON {instance_id: issue text}; its texts replace the bench's problem_statement "
        "(for rows of the public release, which have none)",
    )


def load_bench_args(
    parser: argparse.ArgumentParser, args: argparse.Namespace, limit: int | None = None, require_query: bool = True
) -> list[Any]:
    """Check ``--bench``/``--repos``/``--issue-map`` and load the bench; exit with a clear message on bad input.

    ``--repos`` may be left out only with the default mini bench; it must be a directory; the bench must load
    and hold at least one instance with core regions; with ``require_query`` every instance needs an issue text
    (from ``--issue-map``, else its ``problem_statement``), or the error names the first one without.

    :param parser: the script's parser (for errors).
    :param args: parsed arguments (``args.repos`` is filled in when defaulted).
    :param limit: keep only the first N instances.
    :param require_query: reject records without issue text (not needed to score rows).
    :return: the bench records.
    """
    from swe_explore.evaluation.bench import load_bench, load_issue_map

    if args.repos is None:
        if args.bench.resolve() != MINI_BENCH.resolve():
            parser.error("--repos DIR is required with --bench (the directory of snapshots, one per instance_id)")
        args.repos = MINI_REPOS
    if not args.repos.is_dir():
        die(parser, f"--repos {args.repos} is not a directory")
    try:
        issue_path = getattr(args, "issue_map", None)
        issue_map = load_issue_map(issue_path) if issue_path is not None else None
        records = load_bench(args.bench, limit=limit, require_query=require_query, issue_map=issue_map)
    except (ValueError, FileNotFoundError) as exc:
        die(parser, str(exc))
    if not records:
        die(parser, f"{args.bench}: no instance to run (empty bench, --limit 0, or no record with core regions)")
    return records
