"""Turn the public SWE-Explore release into a bench the toolkit runs: join it with its issue sources.

Usage::

    python scripts/prepare_bench.py RELEASE.jsonl --source FILE_OR_HUB_ID [--source ...] --out BENCH.jsonl
        [--pro-query full|problem] [--strict] [--mirrors DIR --repos DIR [--clone-missing]
        [--history [--history-commits N] [--history-years Y]]] [--quiet]

The release rows (``bench.final.public.jsonl``) carry ground truth but no issue text, repository or base
commit; each ``--source`` gives them in the SWE-bench layout (``instance_id``, ``repo``, ``base_commit``,
``problem_statement``; SWE-bench Pro adds ``requirements`` and ``interface``): a local ``.jsonl``, ``.json`` or
``.parquet`` file, or a Hugging Face id such as ``princeton-nlp/SWE-bench_Verified``,
``SWE-bench/SWE-bench_Multilingual`` or ``ScaleAI/SWE-bench_Pro`` (``:split``, default ``test``; needs
``pip install 'swe-explore-baselines[hub]'``). Ids are matched with the normalisations those datasets need
(Pro's ``instance_`` prefix, letter case, ...); every rule, the query of Pro rows (``--pro-query``, default
``full`` = problem statement + requirements + interface) and the output fields are documented in
:mod:`swe_explore.benchprep.release`.

The joined bench is written atomically to ``--out``, in release order; a JSON report goes beside it
(``BENCH.report.json``): per dataset how many rows were joined, the match rules used, and every row not joined
with its reason (also printed). Unjoined rows are not written; ``--strict`` makes any of them an error (exit
status 1, nothing written but the report). With ``--mirrors`` and ``--repos`` the snapshots of the written
records are then made as ``scripts/materialize.py`` does, with their history files under ``--history`` (exit status
1 if some failed).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from swe_explore.benchprep.release import (
    DEFAULT_PRO_QUERY,
    PRO_QUERY_MODES,
    JoinResult,
    join_release,
    read_release,
    read_source,
    report_path,
    write_bench,
)
from swe_explore.benchprep.snapshots import SnapshotTask
from swe_explore.chunking.atomic import write_text_atomic
from swe_explore.commands._args import die, refuse_overwriting_inputs
from swe_explore.commands.materialize import add_snapshot_arguments, run_materialize

MAX_LISTED = 50
"""Unjoined rows printed on screen (all of them are in the report)."""


def print_join(result: JoinResult, release: Path) -> None:
    """Print what a join did: per dataset counts, match rules, sources and the rows not joined.

    :param result: the join result.
    :param release: the release file (for the heading).
    """
    total = len(result.records) + len(result.unjoined)
    print(f"{release}: {total} rows, {len(result.records)} joined, {len(result.unjoined)} not joined")
    for name, counts in result.per_dataset.items():
        print(f"  {name:<14} {counts['joined']:>5} / {counts['rows']:<5} joined")
    rules = ", ".join(f"{rule} {n}" for rule, n in result.matched_by.items() if n)
    print(f"  matched by: {rules or '-'}; SWE-bench Pro rows: {result.pro_rows} (query: {result.pro_query})")
    for source in result.sources:
        print(f"  source {source['source']}: {source['rows']} rows, {source['used']} used")
    if result.unjoined:
        print(f"not joined ({len(result.unjoined)}):", file=sys.stderr)
        for row in result.unjoined[:MAX_LISTED]:
            print(f"  {row['instance_id']} ({row['dataset']}, line {row['line']}): {row['reason']}", file=sys.stderr)
        if len(result.unjoined) > MAX_LISTED:
            print(f"  ... and {len(result.unjoined) - MAX_LISTED} more (all in the report)", file=sys.stderr)


def _found_elsewhere(records: list[dict[str, Any]], repos: Path) -> dict[str, str]:
    """Records whose snapshot lookup (as the runner does it) finds a directory other than ``repos/instance_id``."""
    from swe_explore.evaluation.bench import find_snapshot, parse_record

    out = {}
    for data in records:
        found = find_snapshot(parse_record(data, require_query=False), repos)
        if found is not None and found != repos / data["instance_id"]:
            out[data["instance_id"]] = str(found)
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 unjoined rows with --strict or failed snapshots,
    2 bad input)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if (args.mirrors is None) != (args.repos is None):
        parser.error("--mirrors and --repos go together")
    if args.clone_missing and args.mirrors is None:
        parser.error("--clone-missing needs --mirrors and --repos")
    if args.history and args.mirrors is None:
        parser.error("--history needs --mirrors and --repos")
    source_files = [("--source", Path(spec)) for spec in args.source if Path(spec).exists()]
    outputs = [("--out", args.out), ("report", report_path(args.out))]
    refuse_overwriting_inputs(parser, outputs, [("release", args.release), *source_files])
    try:
        release = read_release(args.release)
        sources = [read_source(spec) for spec in args.source]
    except (ValueError, FileNotFoundError, ImportError, RuntimeError) as exc:
        die(parser, str(exc))
    if not sources:
        print(
            "note: no --source given: only release rows that carry repo, base_commit and problem_statement join",
            file=sys.stderr,
        )
    result = join_release(release, sources, pro_query=args.pro_query)
    print_join(result, args.release)
    report: dict[str, Any] = {
        "release": str(args.release),
        "out": str(args.out),
        "strict": args.strict,
        **result.to_dict(),
    }
    report_file = report_path(args.out)
    if args.strict and result.unjoined:
        report["written"] = False
        write_text_atomic(report_file, json.dumps(report, indent=1, ensure_ascii=False) + "\n")
        print(
            f"error: --strict: {len(result.unjoined)} row(s) not joined; {args.out} not written; "
            f"report in {report_file}",
            file=sys.stderr,
        )
        return 1
    write_bench(args.out, result.records)
    report["written"] = True
    write_text_atomic(report_file, json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {len(result.records)} records to {args.out}; report in {report_file}")
    status = 0
    if args.repos is not None:
        tasks = [SnapshotTask.from_record(r) for r in result.records]
        snapshots = run_materialize(parser, tasks, args, progress=not args.quiet)
        report["snapshots"] = {"mirrors": str(args.mirrors), "repos": str(args.repos), **snapshots.to_dict()}
        elsewhere = _found_elsewhere(result.records, args.repos)
        if elsewhere:
            report["snapshots"]["found_elsewhere"] = elsewhere
            print(
                f"warning: {len(elsewhere)} record(s) resolve to another snapshot than <repos>/<instance_id> "
                f"(their repo_dir names an existing directory), e.g. {list(elsewhere.items())[:2]}",
                file=sys.stderr,
            )
        write_text_atomic(report_file, json.dumps(report, indent=1, ensure_ascii=False) + "\n")
        status = 1 if snapshots.failed or snapshots.history_failed else 0
    return status


def _parser() -> argparse.ArgumentParser:
    """The command's flags."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("release", type=Path, help="the release JSONL (e.g. bench.final.public.jsonl)")
    parser.add_argument(
        "--source",
        action="append",
        default=[],
        metavar="FILE_OR_HUB_ID",
        help="a source dataset: .jsonl/.json/.parquet file or Hugging Face id owner/name[:split] (repeat for several)",
    )
    parser.add_argument("--out", type=Path, required=True, help="the joined bench JSONL to write")
    parser.add_argument(
        "--pro-query",
        choices=PRO_QUERY_MODES,
        default=DEFAULT_PRO_QUERY,
        help="query of SWE-bench Pro rows: problem statement only, or full (+ requirements + "
        f"interface, as Pro's harness; default {DEFAULT_PRO_QUERY})",
    )
    parser.add_argument("--strict", action="store_true", help="any row not joined is an error")
    add_snapshot_arguments(parser, required=False)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


if __name__ == "__main__":
    sys.exit(main())
