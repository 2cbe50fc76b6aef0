"""Mine a labelled bench from a bare git mirror's history: commit message -> query, old side of its diff -> gold.

Usage::

    python scripts/mine_history.py --mirror PATH --out BENCH.jsonl [--repo OWNER/NAME] [--max N] [--seed S]
        [--since DATE] [--until DATE] [--ref REF] [--first-parent] [--min-words 8] [--max-files 3]
        [--allow RULE]... [--tests reject|read] [--pull-requests] [--quiet]

    python scripts/mine_history.py --mirror /work/.mirror/pallets+click/repo --out ../data/mined/click.jsonl

One bench record per selected commit (``instance_id`` = ``<owner>__<name>-<12 hex>``, ``base_commit`` = the
first parent, ``problem_statement`` = the message without trailers, ``ground_truth`` from ``git diff -U0``,
``patch``, ``language``, ``gt_source: "commit_diff"``, ``commit``, ``dataset: "mined"``). ``--tests read`` keeps
commits that change code together with its tests (the tests' hunks become read core regions, listed in
``ground_truth.test_files``); ``--pull-requests`` mines pull-request merge commits and takes a pull request's
title and body as the query. The selection rules,
the insert-only convention and the checks every record passes are in ``docs/mining.md``. Candidates are
shuffled with ``--seed`` and examined until ``--max`` records pass; rejected commits are counted by reason and
language, printed, and written with the run's options to ``<out>.report.json``. Both files are written
atomically. Nothing is written into the mirror. Exit status 0 (also when fewer than ``--max`` records were
found: the report says so), 2 on bad input (no such mirror, unknown ref, no owner/name).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tqdm import tqdm

from swe_explore.benchprep.git import GitError
from swe_explore.benchprep.mine import MineConfig, MineReport, mine, write_outputs
from swe_explore.benchprep.mine_rules import OPTIONAL_RULES, REJECTION_REASONS, TEST_MODES
from swe_explore.commands._args import die, refuse_overwriting_inputs


def _summary(report: MineReport, out: Path, report_file: Path) -> str:
    """The lines printed at the end of a run."""
    head = (
        f"{report.repo}: {report.accepted} record(s) -> {out} (examined {report.examined} of {report.candidates} "
        f"candidate commit(s) of {report.ref} {report.head[:12]} in {report.seconds:.1f} s; report {report_file})"
    )
    lines = [head]
    if report.accepted < report.config["max_records"]:
        lines.append(
            f"warning: only {report.accepted} of --max {report.config['max_records']} found: "
            f"every candidate was examined"
        )
    rejected = [(r, report.rejected[r]) for r in REJECTION_REASONS if r in report.rejected]
    if rejected:
        lines.append("rejected: " + ", ".join(f"{reason} {n}" for reason, n in rejected))
    for language, counts in sorted(report.per_language.items()):
        rest = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k != "accepted")
        lines.append(f"  {language:<11} accepted {counts.get('accepted', 0)}" + (f"; rejected: {rest}" if rest else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the command line.

    :param argv: arguments (default ``sys.argv[1:]``).
    :return: exit status (0 on success, 2 on bad input).
    """
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        config = MineConfig(
            max_records=args.max,
            seed=args.seed,
            since=args.since,
            until=args.until,
            ref=args.ref,
            first_parent=args.first_parent,
            min_words=args.min_words,
            max_files=args.max_files,
            allow=frozenset(args.allow),
            tests=args.tests,
            pull_requests=args.pull_requests,
        )
    except ValueError as exc:
        parser.error(str(exc))
    if not args.mirror.is_dir():
        die(parser, f"--mirror {args.mirror} is not a directory")
    report_path = args.out.with_name(args.out.name + ".report.json")
    refuse_overwriting_inputs(parser, [("--out", args.out), ("report", report_path)], [("--mirror", args.mirror)])
    if args.out.is_dir():
        die(parser, f"--out {args.out} is a directory")
    with tqdm(total=config.max_records, desc="mined", unit="record", disable=args.quiet, file=sys.stderr) as bar:
        try:
            records, report = mine(args.mirror, args.repo, config, progress=lambda n: bar.update(n - bar.n))
        except (GitError, ValueError) as exc:
            die(parser, str(exc))
    report_file = write_outputs(args.out, records, report)
    print(_summary(report, args.out, report_file))
    return 0


def _parser() -> argparse.ArgumentParser:
    """The command's flags."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, required=True, help="bare git mirror (e.g. MIRRORS/<owner>+<name>/repo)")
    parser.add_argument("--out", type=Path, required=True, help="bench JSONL to write (report: <out>.report.json)")
    parser.add_argument(
        "--repo",
        default=None,
        help="owner/name (default: from a <owner>+<name>/repo mirror path, else remote.origin.url)",
    )
    parser.add_argument("--max", type=int, default=100, help="records to mine (default: 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the candidate shuffle (default: 0)")
    parser.add_argument("--since", default=None, help="only commits committed after DATE (git date syntax)")
    parser.add_argument("--until", default=None, help="only commits committed before DATE (git date syntax)")
    parser.add_argument("--ref", default="HEAD", help="history to mine (default: HEAD, the default branch)")
    parser.add_argument(
        "--first-parent", action="store_true", help="mainline commits only (default: every commit reachable from --ref)"
    )
    parser.add_argument(
        "--min-words", type=int, default=8, help="fewest words of the message without trailers (default: 8)"
    )
    parser.add_argument("--max-files", type=int, default=3, help="most changed source files (default: 3)")
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        choices=OPTIONAL_RULES,
        metavar="RULE",
        help=f"switch a rule off (repeatable): {', '.join(OPTIONAL_RULES)}",
    )
    parser.add_argument(
        "--tests",
        choices=TEST_MODES,
        default="reject",
        help="reject commits touching tests (default), or read: keep code changed with its tests, tests as read gold",
    )
    parser.add_argument(
        "--pull-requests",
        action="store_true",
        help="mine pull-request merge commits (first-parent diff) and use PR title and body as the query",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


if __name__ == "__main__":
    sys.exit(main())
