"""Build and save the chunk table and retriever indexes of every snapshot, resumably and in parallel.

Usage::

    python scripts/index_repos.py --repos DIR [--bench FILE] [--out DIR] [--chunker NAME [options]]
        [--retriever NAME]... [-O KEY=VALUE]... [--model PATH] [--jobs N]
        [--backend loky|threading|sequential|dask] [--scheduler ADDRESS] [--rebuild] [--no-reuse]

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
step, worker, cache lookups) is written to ``<out>/_reports/``. Exit status 1 if any snapshot failed.

Reuse: a file whose chunks, term counts or vectors were already computed under the same configuration, in any
snapshot of the store, is not processed again: its pieces come from ``<out>/_cache`` (content-addressed,
shared by all workers and runs) and each index is assembled from them, byte-identical to a build without
reuse. The summary line and the run report give the cache's hit rate per kind (files found / files looked up);
``--no-reuse`` builds everything from scratch and neither reads nor writes the cache. Concurrent runs on one
store are safe: each index is built once, under its lock, and the other run reuses it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from swe_explore import MINI_REPOS
from swe_explore.commands._args import die
from swe_explore.evaluation.bench import find_snapshot, load_bench
from swe_explore.explore.explorer import EMBEDDING_RETRIEVERS, resolve_model_path
from swe_explore.explore.options import add_explorer_arguments, chunker_options_from_args
from swe_explore.indexes.batch import BATCH_BACKENDS, IndexJob, index_many
from swe_explore.indexes.cache import CACHE_KINDS
from swe_explore.indexes.files import write_json
from swe_explore.retrievers.registry import retriever_options

#: What ``index_repos.py`` builds without ``--retriever``: the indexes of the default (learned) explorer.
DEFAULT_RETRIEVERS = ("bm25", "tfidf")


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=Path, default=MINI_REPOS, help="directory of snapshots")
    parser.add_argument("--bench", type=Path, default=None, help="only the snapshots this bench JSONL names")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="parallel workers (-1: all cores)")
    parser.add_argument("--backend", default="loky", choices=BATCH_BACKENDS, help="joblib backend (default: loky)")
    parser.add_argument("--scheduler", default=None, help="Dask scheduler address, with --backend dask")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--no-reuse",
        dest="reuse",
        action="store_false",
        help="do not take per-file chunks, term counts and vectors from the store's cache "
        "(<out>/_cache), and do not fill it",
    )
    parser.add_argument(
        "--no-graph",
        dest="graph",
        action="store_false",
        help="do not build the symbol graph (built by default with the function chunker: the "
        "learned explorer reads it)",
    )
    add_explorer_arguments(parser, multiple_retrievers=True, packing=False, store_flags=("--out", "--store"))
    args = parser.parse_args(argv)
    args.out = args.store
    if args.jobs == 0 or args.jobs < -1:
        parser.error(f"--jobs must be >= 1 or -1 (all cores), got {args.jobs}")
    if args.scheduler and args.backend != "dask":
        parser.error("--scheduler needs --backend dask")
    if not args.repos.is_dir():
        die(parser, f"--repos {args.repos} is not a directory")
    if args.out.exists() and not args.out.is_dir():
        die(parser, f"--out {args.out} is not a directory")
    if args.bench:
        try:
            records = load_bench(args.bench, require_query=False)  # indexing needs no issue text
        except (ValueError, FileNotFoundError) as exc:
            die(parser, str(exc))
        found = {find_snapshot(r, args.repos) for r in records}
        missing = [r.instance_id for r in records if find_snapshot(r, args.repos) is None]
        if missing:
            print(f"warning: {len(missing)} bench instance(s) have no snapshot, e.g. {missing[:3]}", file=sys.stderr)
        snapshots = sorted(p for p in found if p is not None)
    else:
        snapshots = sorted(p for p in args.repos.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not snapshots:
        parser.error(f"no snapshot directories under {args.repos}")
    names = args.retriever or list(DEFAULT_RETRIEVERS)
    given = dict(args.retriever_option)
    unused = set(given)
    retrievers = []
    for name in names:  # with several retrievers, each gets the -O options it accepts
        accepted = set(retriever_options(name))
        options = {k: v for k, v in given.items() if len(names) == 1 or k in accepted}
        unused -= set(options)
        if name in EMBEDDING_RETRIEVERS and args.model:
            options["model"] = resolve_model_path(args.model)
        retrievers.append((name, options))
    if unused:
        parser.error(f"--retriever-option {', '.join(sorted(unused))}: accepted by none of {', '.join(names)}")
    job = IndexJob(
        args.chunker,
        chunker_options_from_args(args),
        tuple(retrievers),
        {},
        args.rebuild,
        args.reuse,
        graph=args.graph and args.chunker == "function",
    )
    try:  # validate names and options once, before any worker starts
        from swe_explore.chunking.registry import make_chunker
        from swe_explore.retrievers.registry import make_retriever

        make_chunker(job.chunker, **job.chunker_options)
        for name, options in job.retrievers:
            make_retriever(name, **options)
    except ValueError as exc:
        parser.error(str(exc))

    def bar(results: Any, total: int) -> Any:
        return tqdm(results, total=total, desc="indexing", unit="snapshot", disable=args.quiet)

    t0 = time.perf_counter()
    try:
        reports = index_many(snapshots, args.out, job, args.jobs, args.backend, args.scheduler, bar)
    except (ImportError, OSError, TimeoutError) as exc:  # missing dask extra, unreachable scheduler
        die(parser, f"{args.backend} backend: {type(exc).__name__}: {exc}")
    wall = time.perf_counter() - t0
    reports.sort(key=lambda r: r["snapshot"])
    status = {s: sum(r["status"] == s for r in reports) for s in ("built", "up-to-date", "error")}
    lines = sum(r.get("counts", {}).get("lines", 0) for r in reports)
    steps: dict[str, float] = {}  # seconds per step, summed over the snapshots built in this run
    for r in reports:
        if r["status"] == "built":
            for step, seconds in r["seconds"].items():
                steps[step] = round(steps.get(step, 0.0) + seconds, 4)
    built_lines = sum(r["counts"].get("lines", 0) for r in reports if r["status"] == "built")
    cache = cache_totals(reports)
    run = {
        "argv": sys.argv if argv is None else argv,
        "job": job.__dict__ | {"retrievers": retrievers},
        "jobs": args.jobs,
        "backend": args.backend,
        "wall_seconds": round(wall, 3),
        "status": status,
        "lines": lines,
        "built_lines": built_lines,
        "step_seconds": steps,
        "cache": cache,
        "snapshots": reports,
    }
    report_path = args.out / "_reports" / f"index-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.json"
    report_path.parent.mkdir(parents=True, exist_ok=True)
    write_json(report_path, json.loads(json.dumps(run, default=str)))
    print(
        f"{len(reports)} snapshots: {status['built']} built, {status['up-to-date']} up to date, "
        f"{status['error']} failed; {lines:,} lines in {wall:.1f} s; report {report_path}"
    )
    if built_lines:
        print(f"  worker seconds per 100K lines built: {steps.get('total', 0.0) / built_lines * 1e5:.2f}")
    if cache:
        print(f"  reuse: {format_hit_rates(cache)}")
    for r in reports:
        if r["status"] == "error":
            print(f"  FAILED {r['snapshot']}: {r['error']}", file=sys.stderr)
        elif r.get("counts", {}).get("chunks") == 0:
            print(
                f"  warning: {r['snapshot']} has no indexable file (0 chunks); see the walk statistics in its manifest",
                file=sys.stderr,
            )
    return 1 if status["error"] else 0


def cache_totals(reports: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The content-addressed cache's lookups of a batch, summed per kind over the snapshots, with hit rates.

    :param reports: :func:`~indexes.batch.index_one` reports.
    :return: kind -> ``{"hits", "misses", "corrupt", "write_errors", "corrupt_indexes", "hit_rate"}`` (counted in
        files for ``chunks``, in chunks for ``term_counts`` and ``vectors``; ``hit_rate``: hits / lookups, ``None``
        without lookups), in :data:`~indexes.cache.CACHE_KINDS` order; ``{}`` when nothing was looked up.
    """
    totals: dict[str, dict[str, Any]] = {}
    for kind in CACHE_KINDS:
        counts = [r["cache"][kind] for r in reports if kind in (r.get("cache") or {})]
        if not counts:
            continue
        keys = ("hits", "misses", "corrupt", "write_errors", "corrupt_indexes")
        summed: dict[str, Any] = {key: sum(c.get(key, 0) for c in counts) for key in keys}
        lookups = summed["hits"] + summed["misses"] + summed["corrupt"]
        summed["hit_rate"] = round(summed["hits"] / lookups, 4) if lookups else None
        totals[kind] = summed
    return totals


def format_hit_rates(totals: dict[str, dict[str, Any]]) -> str:
    """One line of :func:`cache_totals`: ``cache hit rate chunks 83.1% (1250/1505 files), term_counts 91.0%
    (24500/26920 chunks), ...``, plus damaged entries, damaged pack indexes and write errors when there were any.

    :param totals: :func:`cache_totals`' result.
    :return: the line.
    """
    parts = []
    for kind, t in totals.items():
        lookups = t["hits"] + t["misses"] + t["corrupt"]
        rate = f"{100 * t['hit_rate']:.1f}%" if t["hit_rate"] is not None else "-"
        unit = "files" if kind == "chunks" else "chunks"
        extra = "".join(
            f", {t[k]} {k.replace('_', ' ')}" for k in ("corrupt", "corrupt_indexes", "write_errors") if t[k]
        )
        parts.append(f"{kind} {rate} ({t['hits']}/{lookups} {unit}{extra})")
    return "cache hit rate " + ", ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
