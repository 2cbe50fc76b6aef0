"""Build and save the chunk table and retriever indexes of every snapshot, resumably and in parallel.

Usage::

    python scripts/index_repos.py --repos DIR [--bench FILE] [--out DIR] [--chunker NAME [options]]
        [--retriever NAME]... [-O KEY=VALUE]... [--model PATH] [--jobs N]
        [--backend loky|threading|sequential|dask] [--scheduler ADDRESS] [--rebuild] [--no-reuse]
        [--no-graph] [--no-graph-worker] [--no-history]

    # every retriever of every dev snapshot, two worker processes:
    python scripts/index_repos.py --repos repos/dev --jobs 2 --model ../shared/models/potion-base-8M \
        --retriever bm25 --retriever tfidf --retriever potion --retriever faiss --retriever hybrid
    # the same batch on a Dask cluster (see the README):
    python scripts/index_repos.py --repos /shared/repos --out /shared/indexes --backend dask \
        --scheduler tcp://scheduler-host:8786 --retriever bm25 --retriever potion --model /shared/potion-base-8M

Indexes every snapshot directory under ``--repos`` (or only those the ``--bench`` file names) into ``--out``
(default ``$SWE_EXPLORE_STORE``, else the user cache directory): ``<out>/<snapshot>/<chunker>-<hash>/`` with a
manifest (toolkit version, chunker and walk config, snapshot fingerprint, counts, skipped files by reason) and one
directory per retriever. Up-to-date indexes are skipped, so re-running after a kill resumes; a failing snapshot is
reported and the others go on. The retrievers of one snapshot are built together, so BM25 and TF-IDF tokenize once and
Potion and FAISS embed once; a hybrid links to its parts' indexes. With several ``--retriever``, each
``-O KEY=VALUE`` goes to the retrievers that accept it. A run report (per snapshot: status, counts, seconds per
step, worker, cache lookups) is written to ``<out>/_reports/``; where the store is goes to standard error in one
line (``indexes: OUT (N built, M current)``; not with ``--quiet``). Exit status 1 if any snapshot failed; each
failure is one ``FAILED`` line on standard error, with its traceback (kept in the run report) under ``--debug``.

Reuse: a file whose chunks, term counts or vectors were already computed under the same configuration, in any
snapshot of the store, is not processed again: its pieces come from ``<out>/_cache`` (content-addressed,
shared by all workers and runs) and each index is assembled from them, byte-identical to a build without
reuse. The summary line and the run report give the cache's hit rate per kind (files found / files looked up);
``--no-reuse`` builds everything from scratch and neither reads nor writes the cache. Concurrent runs on one
store are safe: each index is built once, under its lock, and the other run reuses it.

Graph worker: with ``--jobs 1`` (local backend) on Linux with two or more usable CPUs (affinity and cgroup quota)
and the memory for a copy of the process, each snapshot's symbol graph is computed in a child process while this
one builds the retrievers (the child is forked at the first graph and kept while later builds can send it what it
needs; a build that would send more than half the snapshot's bytes, as every build with ``--no-reuse``, forks a
new one: ``indexes.graph_store.SEND_SHARE``), so the graph step costs the build little wall
time (the CPU time is the same; the report's ``graph_worker`` and ``graph_worker_cpu`` give the child's share,
and ``cpu`` includes it). The files written are the same; ``--no-graph-worker`` builds the graph after the
retrievers in this process. With ``--jobs N > 1`` the workers already use the CPUs, and no graph worker runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tqdm import tqdm

from swe_explore import MINI_REPOS
from swe_explore.commands._args import (
    add_parallel_arguments,
    check_parallel_args,
    die,
    refuse_overwriting_inputs,
    refuse_writing_into,
)
from swe_explore.commands._errors import debug_requested
from swe_explore.commands.explorer_args import (
    add_explorer_arguments,
    add_graph_worker_argument,
    chunker_options_from_args,
)
from swe_explore.evaluation.bench import bench_snapshots, load_bench
from swe_explore.explore.config import EMBEDDING_RETRIEVERS
from swe_explore.explore.explorer import resolve_model_path
from swe_explore.indexes.batch import BATCH_BACKENDS, IndexJob
from swe_explore.indexes.graph_store import graph_worker_available
from swe_explore.indexes.report import DEFAULT_RETRIEVERS, check_job, index_snapshots, retriever_specs, snapshot_dirs


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    args.out = args.store
    check_parallel_args(parser, args)
    if not args.repos.is_dir():
        die(parser, f"--repos {args.repos} is not a directory")
    refuse_overwriting_inputs(parser, [("--out", args.out)], [("--repos", args.repos), ("--bench", args.bench)])
    refuse_writing_into(parser, [("--out", args.out)], [("--repos", args.repos)])
    if args.out.exists() and not args.out.is_dir():
        die(parser, f"--out {args.out} is not a directory")
    snapshots = _snapshots(parser, args)
    job = _job(parser, args)

    def bar(results: Any, total: int) -> Any:
        return tqdm(results, total=total, desc="indexing", unit="snapshot", disable=args.quiet)

    try:
        run = index_snapshots(
            snapshots, args.out, job, args.jobs, args.backend, args.scheduler, bar, sys.argv if argv is None else argv
        )
    except (ImportError, OSError, TimeoutError) as exc:  # missing dask extra, unreachable scheduler
        if isinstance(exc, ImportError) or (isinstance(exc, OSError) and exc.filename is not None):
            raise  # a missing extra or a file of the store: exit 1 (commands._errors)
        die(parser, f"{args.backend} backend: {type(exc).__name__}: {exc}")
    print(run.summary())
    if not args.quiet:
        status = run.run["status"]
        print(f"indexes: {args.out} ({status['built']} built, {status['up-to-date']} current)", file=sys.stderr)
    for line in run.problems(tracebacks=debug_requested(sys.argv[1:])):  # main's argv has --debug removed
        print(line, file=sys.stderr)
    return 1 if run.failed else 0


def _parser() -> argparse.ArgumentParser:
    """The command's flags."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=Path, default=MINI_REPOS, help="directory of snapshots")
    parser.add_argument("--bench", type=Path, default=None, help="only the snapshots this bench JSONL names")
    add_parallel_arguments(parser, BATCH_BACKENDS, "snapshot")
    parser.add_argument(
        "--quiet", action="store_true", help="no progress bar, no 'indexes: STORE (N built, M current)' line"
    )
    parser.add_argument(
        "--no-graph",
        dest="graph",
        action="store_false",
        help="do not build the symbol graph (built by default with the function chunker: the "
        "learned explorer reads it)",
    )
    add_graph_worker_argument(parser, "with --jobs 1 and the local backend")
    parser.add_argument(
        "--no-history",
        dest="history",
        action="store_false",
        help="do not build the history index of snapshots that carry a history file (built by default; "
        "docs/history.md)",
    )
    add_explorer_arguments(parser, multiple_retrievers=True, packing=False, store_flags=("--out", "--store"))
    return parser


def _job(parser: argparse.ArgumentParser, args: argparse.Namespace) -> IndexJob:
    """The job of the flags; bad names and options are usage errors, found before any worker starts."""
    try:
        specs = retriever_specs(args.retriever or list(DEFAULT_RETRIEVERS), dict(args.retriever_option))
    except ValueError as exc:
        parser.error(str(exc))
    for name, options in specs:
        if name in EMBEDDING_RETRIEVERS and args.model:
            options["model"] = resolve_model_path(args.model)
    graph = args.graph and args.chunker == "function"
    job = IndexJob(
        args.chunker,
        chunker_options_from_args(args),
        tuple(specs),
        {} if args.ignore_files else {"ignore_files": False},
        args.rebuild,
        args.reuse,
        graph=graph,
        graph_worker=graph
        and args.graph_worker
        and args.jobs == 1
        and args.backend != "dask"
        and graph_worker_available(),
        history=args.history,
    )
    try:
        check_job(job)
    except ValueError as exc:
        parser.error(str(exc))
    return job


def _snapshots(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[Path]:
    """The snapshot directories to index: those ``--bench`` names (warning about the missing), else all."""
    if args.bench:
        try:
            records = load_bench(args.bench, require_query=False)  # indexing needs no issue text
        except (ValueError, FileNotFoundError) as exc:
            die(parser, str(exc))
        if not records:
            die(parser, f"--bench {args.bench} holds no instances (records without core regions are skipped)")
        snapshots, missing = bench_snapshots(records, args.repos)
        if missing:
            print(f"warning: {len(missing)} bench instance(s) have no snapshot, e.g. {missing[:3]}", file=sys.stderr)
    else:
        snapshots = snapshot_dirs(args.repos)
    if not snapshots:
        parser.error(f"no snapshot directories under {args.repos}")
    return snapshots


if __name__ == "__main__":
    sys.exit(main())
