"""Run one explorer over a bench file: one reference-compatible JSONL result row per instance.

Usage::

    python scripts/run_baselines.py [--bench FILE] [--repos DIR] [--out FILE] [--retriever NAME]
        [--chunker NAME [--max-lines N ...]] [--k 5] [--budget 500] [--model PATH] [--store DIR]
        [--jobs N] [--backend loky|dask] [--scheduler ADDRESS]

With no arguments it runs BM25 over function chunks on the mini bench that ships with the project
(``swe_explore/data/mini``), offline, in seconds. ``--repos DIR`` holds one snapshot per ``instance_id``. Missing
indexes are built on the way (and saved in ``--store``); rows already in ``--out`` for the same explorer config
are kept, so a killed run resumes where it stopped (a row whose issue text or snapshot changed is run again).
``--retriever reference_bm25|reference_tfidf|reference_potion`` re-runs the reference baselines (80/20 windows,
3000-chunk cap, raw top-K) for comparison.
Prints the mean of the 17 metrics at the end (the table ``evaluate.py`` prints), and on standard error where the
indexes are (``indexes: STORE (N built, M current)``, snapshots loaded in this run; not with ``--quiet``). An
operational error (a corrupt index, a read-only store, a full disk) stops the run with exit status 1 unless
``--keep-going``.

``--jobs N`` runs the instances in N worker processes (joblib), ``--backend dask [--scheduler ADDRESS]`` on a Dask
cluster (as ``index_repos.py`` does; without an address, a local cluster of N workers): one task per snapshot, the
rows merged into the one ``--out`` in bench order. The rows are those of ``--jobs 1`` except ``seconds``
(:func:`~swe_explore.evaluation.runner.run_explorer` says how a killed parallel run resumes).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from functools import partial
from pathlib import Path

from swe_explore.commands._args import (
    add_bench_arguments,
    add_parallel_arguments,
    check_parallel_args,
    die,
    load_bench_args,
    refuse_overwriting_inputs,
    refuse_writing_into,
)
from swe_explore.commands.explorer_args import (
    add_explorer_arguments,
    add_graph_worker_argument,
    explorer_from_args,
    use_graph_worker,
)
from swe_explore.evaluation.metrics import METRIC_NAMES
from swe_explore.evaluation.results import (
    Coverage,
    evaluate_rows,
    foreign_instance_ids,
    format_table,
    read_rows,
    summarize,
)
from swe_explore.evaluation.runner import (
    ConcurrentRunError,
    ConfigMismatchError,
    RunAbortedError,
    TaskMap,
    run_explorer,
)
from swe_explore.indexes.reuse_rows import keeping_rows
from swe_explore.indexes.store import config_key
from swe_explore.retrievers.potion import ModelUnavailableError


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 some instance failed, 2 bad input)."""
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    check_parallel_args(parser, args)
    records = load_bench_args(parser, args, limit=args.limit)
    tasks = _tasks(args)
    if tasks is not None:  # a Dask worker may run in another directory
        args.store = args.store.absolute()
    try:
        explorer = explorer_from_args(args)
    except ModelUnavailableError:  # no model: an operational failure, exit status 1 (commands._errors)
        raise
    except ValueError as exc:
        parser.error(str(exc))
    if tasks is None:  # one instance at a time here: a free CPU can build a missing graph
        use_graph_worker(explorer, args.graph_worker)
    default_name = config_key(explorer.name, explorer.explorer_config) + ".jsonl"
    out = args.out or Path("outputs/results") / args.bench.stem / default_name
    refuse_overwriting_inputs(parser, [("--out", out)], [("--bench", args.bench), ("--issue-map", args.issue_map)])
    refuse_writing_into(parser, [("--out", out)], [("--repos", args.repos), ("--store", args.store)])
    refuse_writing_into(parser, [("--store", args.store)], [("--repos", args.repos)])
    if out.is_file() and not args.overwrite:  # resume only a file of this bench: never mix benches in one file
        _refuse_foreign_rows(parser, out, args.bench)
    t0 = time.perf_counter()
    keep = tasks is None and args.reuse and not args.rebuild  # snapshots built here, one after another
    try:
        with keeping_rows(enabled=keep):
            report = run_explorer(
                explorer,
                records,
                args.repos,
                out,
                args.overwrite,
                progress=not args.quiet,
                shared_snapshots=args.shared_snapshots,
                keep_going=args.keep_going,
                tasks=tasks,
            )
    except RunAbortedError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 1
    except (ConfigMismatchError, ConcurrentRunError, IsADirectoryError, ValueError) as exc:
        die(parser, str(exc))
    except (ImportError, OSError, TimeoutError) as exc:  # missing dask extra, unreachable scheduler
        if tasks is None or isinstance(exc, ImportError) or (isinstance(exc, OSError) and exc.filename is not None):
            raise  # a missing extra or a file: exit 1 (commands._errors)
        die(parser, f"{args.backend} backend: {type(exc).__name__}: {exc}")
    if len(report.missing) == len(records):
        die(
            parser,
            f"none of the {len(records)} instances has a snapshot under {args.repos} "
            f"(looked for <repos>/<instance_id>, see docs/metrics.md)",
        )
    coverage = Coverage()
    scored = evaluate_rows(
        read_rows(out),
        records,
        args.repos,
        missing_rows="skip",
        shared_snapshots=args.shared_snapshots,
        coverage=coverage,
    )
    summary = summarize(scored, records)
    retried = f", {report.retried} retried" if report.retried else ""
    retried += "".join(f", {n} re-run: {reason}" for reason, n in report.rerun.items())
    print(
        f"{explorer.name}: {summary['cases']} instances scored ({report.written} new, {report.resumed} resumed"
        f"{retried}), "
        f"{report.failed} failed, {len(report.missing)} without snapshot, {time.perf_counter() - t0:.1f} s; "
        f"rows in {out}"
    )
    print(format_table({explorer.name: summary["metrics"]}, metrics=METRIC_NAMES))
    store_use = getattr(explorer, "store_use", None)
    if store_use is not None and not args.quiet:
        # With --jobs > 1 the workers' copies of the explorer build and load, so the client counted nothing.
        line = store_use.line() if tasks is None else f"indexes: {store_use.store} (built or checked in the workers)"
        print(line, file=sys.stderr)
    for problem in coverage.problems():
        print(f"warning: {problem}", file=sys.stderr)
    return 1 if report.failed else 0


#: ``--backend`` choices: worker processes (joblib's loky) or a Dask cluster; threads would share one explorer.
RUN_BACKENDS = ("loky", "dask")


def _tasks(args: argparse.Namespace) -> TaskMap | None:
    """How the flags run the tasks of the snapshots (``None``: ``--jobs 1``, in this process)."""
    if args.jobs == 1 and args.backend != "dask":
        return None
    from swe_explore.indexes.batch import run_tasks

    return partial(run_tasks, n_jobs=args.jobs, backend=args.backend, scheduler=args.scheduler)


def _refuse_foreign_rows(parser: argparse.ArgumentParser, out: Path, bench: Path) -> None:
    """Stop (exit status 2) when the result file to resume holds rows of instances the bench does not have."""
    try:
        foreign = foreign_instance_ids(out, bench)
    except (ValueError, FileNotFoundError) as exc:
        die(parser, str(exc))
    if foreign:
        die(
            parser,
            f"{out} holds {len(foreign)} row(s) of instances not in {bench} (e.g. {foreign[0]}): "
            f"it is another bench's result file; use another --out or --overwrite",
        )


def _parser() -> argparse.ArgumentParser:
    """The command's flags."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_bench_arguments(parser)
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="result JSONL (default: outputs/results/<bench>/<explorer>-<config hash>.jsonl)",
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N instances")
    parser.add_argument("--overwrite", action="store_true", help="start --out afresh instead of resuming")
    parser.add_argument(
        "--quiet", action="store_true", help="no progress bar, no 'indexes: STORE (N built, M current)' line"
    )
    parser.add_argument(
        "--keep-going",
        action="store_true",
        help="record an operational error (corrupt index, read-only store, full disk) as an ERROR row and go on "
        "(default: stop the run, exit status 1)",
    )
    add_parallel_arguments(parser, RUN_BACKENDS, "snapshot (its instances)")
    add_explorer_arguments(parser)
    add_graph_worker_argument(parser, "with --jobs 1")
    return parser


if __name__ == "__main__":
    sys.exit(main())
