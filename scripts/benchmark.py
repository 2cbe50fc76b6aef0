"""Speed and memory of every retriever on one snapshot, next to the reference approach measured in the same run.

Usage::

    python scripts/benchmark.py [--snapshot DIR] [--bench FILE] [--model PATH] [--repeats N] [--cpu N]
        [--batch-repos DIR [--jobs N]] [--markdown] [--update-docs docs/benchmarks.md] [--json FILE]

Defaults: the largest snapshot under ``repos/dev`` (by bytes; pydata__xarray-7393 for the dev set) or, when
there is none, the largest mini repo; the queries are the problem statements of ``../shared/data/dev.jsonl``
(else the mini bench); the model is ``$SWE_EXPLORE_POTION_MODEL`` or ``../shared/models/potion-base-8M``.

Every figure comes from a fresh Python process pinned to one core (``--cpu``, default the first allowed one)
with one thread per library (``OMP_NUM_THREADS=1`` and friends), so peak RSS (``VmHWM``) belongs to that one
measurement:

- **full index**: chunking + every retriever (bm25, tfidf, potion, faiss, hybrid) in one
  ``indexes.build.ensure_index`` call, as ``scripts/index_repos.py`` builds them (shared term counts and
  vectors, hybrid linked to its parts), from a fresh store; seconds per step; model loading is timed apart.
- **per retriever**: the same with that retriever alone (chunking included, as in a run that asks only for it);
  then, from its saved index in another process: load seconds, query latency (``search(query, top_n=200)``,
  median and p95 over every query x ``--repeats``, after one warm-up query), the end-to-end explore step
  (search + ranking priors + line-budget packer, after loading) and a whole ``IndexedExplorer.explore`` call
  (which also checks the index is current and reopens it), peak RSS, and index size on disk.
- **reference**: ``explore.reference.ReferenceBM25`` (rank-bm25 ``BM25Okapi`` over ``str.split`` tokens of
  80/20 line windows) with its 3000-chunk cap and uncapped: construction (chunking + index) seconds, ``explore``
  latency, peak RSS. Ratios are ours / reference (capped).
- **batch** (``--batch-repos DIR``): every snapshot under DIR indexed with the full-index retrievers by
  ``indexes.batch.index_many`` in ``--jobs`` loky processes (not pinned), as ``scripts/index_repos.py`` does.

Build seconds are the median over ``--repeats`` fresh processes (wall clock; CPU seconds are shown too, since
on a shared machine wall time includes waiting for the core). ``--update-docs FILE`` replaces (or appends) the
``## Speed and memory`` section of FILE and leaves every other section alone.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from swe_explore.commands._errors import interrupt_quietly, run_main

with interrupt_quietly():  # Ctrl-C while the modules import: exit 130 quietly
    from swe_explore.chunking.walk import walk_snapshot

ROOT = Path(__file__).resolve().parent.parent
DEV_REPOS = ROOT / "repos" / "dev"
DEV_BENCH = ROOT.parent / "shared" / "data" / "dev.jsonl"
#: Below this many indexed lines a snapshot measures fixed costs (imports, model load), not indexing speed.
MIN_LINES = 10_000
MINI_BENCH = ROOT / "swe_explore" / "data" / "mini" / "mini.jsonl"
DEFAULT_MODEL = ROOT.parent / "shared" / "models" / "potion-base-8M"
SECTION = "## Speed and memory"
TOP_N = 200
#: Environment of every measurement process: one thread per library.
ONE_THREAD = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "RAYON_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
}

#: (label, registry name, options) of every retriever configuration measured; "{model}" is filled in.
CONFIGS: list[tuple[str, str, dict[str, Any]]] = [
    ("bm25 (numpy)", "bm25", {}),
    ("bm25 (bm25s)", "bm25", {"backend": "bm25s"}),
    ("bm25 (rank_bm25)", "bm25", {"backend": "rank_bm25"}),
    ("tfidf", "tfidf", {}),
    ("potion", "potion", {"model": "{model}"}),
    ("faiss flat", "faiss", {"model": "{model}"}),
    ("faiss hnsw", "faiss", {"model": "{model}", "index": "hnsw"}),
    ("hybrid bm25+potion", "hybrid", {"model": "{model}"}),
]


def available_configs() -> list[tuple[str, str, dict[str, Any]]]:
    """The :data:`CONFIGS` without the optional backends that are not installed (bm25s is the ``bm25s`` extra)."""
    import importlib.util

    return [c for c in CONFIGS if c[2].get("backend") != "bm25s" or importlib.util.find_spec("bm25s") is not None]


#: The retrievers of the full index (one ensure_index call), by CONFIGS label.
FULL = ["bm25 (numpy)", "tfidf", "potion", "faiss flat", "hybrid bm25+potion"]


# ------------------------------------------------------------------------------------------------------------
# Measurement processes
# ------------------------------------------------------------------------------------------------------------


def _peak_rss_mb() -> float:
    """Peak resident set size of this process (``VmHWM``), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss_mb() -> float:
    """Current resident set size of this process (``VmRSS``), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _dir_bytes(path: Path) -> int:
    """Total size of the files under a directory, in bytes."""
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def _latencies(run: Any, queries: list[str], repeats: int) -> list[float]:
    """Milliseconds of ``run(query)`` for every query, ``repeats`` times, after one warm-up call."""
    run(queries[0])
    out = []
    for _ in range(repeats):
        for query in queries:
            t0 = time.perf_counter()
            run(query)
            out.append((time.perf_counter() - t0) * 1000)
    return out


def _worker_build(task: dict[str, Any]) -> dict[str, Any]:
    """Build a fresh store with the given retrievers in one ensure_index call."""
    from swe_explore.chunking.registry import make_chunker
    from swe_explore.indexes.build import ensure_index
    from swe_explore.retrievers.registry import make_retriever

    t0 = time.perf_counter()
    retrievers = [make_retriever(name, **options) for name, options in task["retrievers"]]
    setup = time.perf_counter() - t0
    rss_before = _rss_mb()
    c0, t0 = time.process_time(), time.perf_counter()
    report = ensure_index(Path(task["snapshot"]), Path(task["store"]), make_chunker("function"), retrievers)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {
        "wall": wall,
        "cpu": cpu,
        "setup": setup,
        "steps": report.seconds,
        "counts": report.counts,
        "built": report.built,
        "rss_before": rss_before,
        "peak_rss": _peak_rss_mb(),
        "chunk_dir": str(report.chunk_dir),
    }


def _worker_query(task: dict[str, Any]) -> dict[str, Any]:
    """Load one saved index and time queries, the explore step and whole explorer calls."""
    from swe_explore.chunking.registry import make_chunker
    from swe_explore.explore.explorer import IndexedExplorer
    from swe_explore.explore.packing import PackConfig, pack
    from swe_explore.explore.priors import RankPriors, apply_priors
    from swe_explore.indexes.build import open_index, retriever_dir_for
    from swe_explore.retrievers.registry import make_retriever

    name, options = task["retriever"]
    queries = json.loads(Path(task["queries"]).read_text())
    snapshot, store = Path(task["snapshot"]), Path(task["store"])
    t0 = time.perf_counter()
    index = open_index(snapshot, store, make_chunker("function"), make_retriever(name, **options))
    load = time.perf_counter() - t0
    retriever, chunks, file_lines = index.retriever, index.chunks, index.file_lines
    search = _latencies(lambda q: retriever.search(q, TOP_N), queries, task["repeats"])
    priors, config = RankPriors(), PackConfig()

    def explore_step(query: str) -> None:
        hits = apply_priors(query, chunks, retriever.search(query, TOP_N), priors)
        pack([chunks[h.index] for h in hits], config, file_lines)

    explore = _latencies(explore_step, queries, task["repeats"])
    explorer = IndexedExplorer(name, retriever_options=dict(options), store=store)
    call = _latencies(lambda q: explorer.explore(snapshot, q), queries, 1)
    rdir = retriever_dir_for(Path(task["chunk_dir"]), make_retriever(name, **options))
    disk = _dir_bytes(rdir)
    if name == "hybrid":
        disk_parts = sum(_dir_bytes(retriever_dir_for(Path(task["chunk_dir"]), p)) for p in retriever.parts())
    else:
        disk_parts = 0
    return {
        "load": load,
        "search": search,
        "explore": explore,
        "call": call,
        "peak_rss": _peak_rss_mb(),
        "disk": disk,
        "disk_parts": disk_parts,
        "n_docs": retriever.n_docs,
    }


def _worker_reference(task: dict[str, Any]) -> dict[str, Any]:
    """Build the reference BM25 (chunking + BM25Okapi) and time its explore calls."""
    from swe_explore.explore.reference import ReferenceBM25

    queries = json.loads(Path(task["queries"]).read_text())
    rss_before = _rss_mb()
    c0, t0 = time.process_time(), time.perf_counter()
    reference = ReferenceBM25(task["snapshot"], max_chunks=task["max_chunks"])
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    search = _latencies(lambda q: reference.explore(q, 5), queries, task["repeats"])
    return {
        "wall": wall,
        "cpu": cpu,
        "search": search,
        "rss_before": rss_before,
        "peak_rss": _peak_rss_mb(),
        "n_chunks": len(reference.chunks),
    }


def _worker_batch(task: dict[str, Any]) -> dict[str, Any]:
    """Index every snapshot of a directory with the full-index retrievers in ``n_jobs`` loky processes."""
    from swe_explore.indexes.batch import IndexJob, index_many

    snapshots = sorted(p for p in Path(task["repos"]).iterdir() if p.is_dir() and not p.name.startswith("."))
    job = IndexJob("function", {}, tuple((name, options) for name, options in task["retrievers"]))
    t0 = time.perf_counter()
    reports = index_many(snapshots, Path(task["store"]), job, n_jobs=task["jobs"], backend="loky")
    wall = time.perf_counter() - t0
    errors = [r["snapshot"] for r in reports if r["status"] == "error"]
    return {
        "wall": wall,
        "snapshots": len(reports),
        "errors": errors,
        "lines": sum(r.get("counts", {}).get("lines", 0) for r in reports),
        "worker_seconds": sum(r["seconds"]["total"] for r in reports),
        "worker_cpu": sum(r["seconds"].get("cpu", 0.0) for r in reports),
        "max_worker_rss": max(r["peak_rss_mb"] for r in reports),
    }


WORKERS = {"build": _worker_build, "query": _worker_query, "reference": _worker_reference, "batch": _worker_batch}


def run_worker(task: dict[str, Any], cpu: int | None) -> dict[str, Any]:
    """Run one measurement in a fresh process pinned to ``cpu`` with one thread per library.

    :param task: the task (``"task"`` names the worker).
    :param cpu: core to pin to, or ``None``.
    :return: the worker's JSON result.
    :raises RuntimeError: if the process fails (with its stderr).
    """
    env = os.environ | ONE_THREAD
    argv = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(task)]
    proc = subprocess.run(
        argv,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=(lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"measurement {task['task']} failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# ------------------------------------------------------------------------------------------------------------
# Orchestration and report
# ------------------------------------------------------------------------------------------------------------


def largest_snapshot(repos: Path) -> Path | None:
    """The snapshot directory with the most bytes (``.git`` excluded) under ``repos``, or ``None``.

    :param repos: a directory of snapshots.
    :return: the largest one.
    """
    best: tuple[int, Path] | None = None
    if not repos.is_dir():
        return None
    for snapshot in sorted(p for p in repos.iterdir() if p.is_dir()):
        size = 0
        for dirpath, dirnames, filenames in os.walk(snapshot):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            size += sum(os.lstat(os.path.join(dirpath, f)).st_size for f in filenames)
        if best is None or size > best[0]:
            best = (size, snapshot)
    return best[1] if best else None


def _pct(values: list[float], q: float) -> float:
    """The ``q``-quantile (0..1) of values, linear interpolation."""
    values = sorted(values)
    if not values:
        return float("nan")
    pos = q * (len(values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def _summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One build figure from repeated runs: the fastest run (its step breakdown is the least disturbed by other
    processes), with the median CPU seconds and the median wall seconds of all runs added.

    :param runs: the runs' results.
    :return: the fastest run plus ``cpu_median`` and ``wall_median``.
    """
    best = dict(min(runs, key=lambda r: r["wall"]))
    best["cpu_median"] = statistics.median(r["cpu"] for r in runs)
    best["wall_median"] = statistics.median(r["wall"] for r in runs)
    best["peak_rss"] = max(r["peak_rss"] for r in runs)
    return best


def measure(
    snapshot: Path,
    queries: list[str],
    model: str,
    repeats: int,
    cpu: int | None,
    log: Any = print,
    batch_repos: Path | None = None,
    jobs: int = 2,
) -> dict[str, Any]:
    """Run every measurement; return the raw results.

    :param snapshot: the snapshot.
    :param queries: query texts.
    :param model: embedding model path.
    :param repeats: build repeats and query repeats.
    :param cpu: core to pin every measurement to.
    :param log: progress printer.
    :param batch_repos: if given, also index every snapshot under it in ``jobs`` processes (not pinned).
    :param jobs: worker processes of the batch.
    :return: ``{"full", "alone", "query", "reference", "lines"}`` and ``"batch"`` when asked for.
    """
    configs = [
        (label, name, {k: (model if v == "{model}" else v) for k, v in opts.items()})
        for label, name, opts in available_configs()
    ]
    by_label = {label: (name, opts) for label, name, opts in configs}
    work = Path(tempfile.mkdtemp(prefix="swe-explore-bench-"))
    queries_file = work / "queries.json"
    queries_file.write_text(json.dumps(queries))
    results: dict[str, Any] = {"alone": {}, "query": {}, "reference": {}}
    try:
        full_runs = []
        for r in range(repeats):
            log(f"full index {r + 1}/{repeats}")
            store = work / f"full{r}"
            full_runs.append(
                run_worker(
                    {
                        "task": "build",
                        "snapshot": str(snapshot),
                        "store": str(store),
                        "retrievers": [by_label[label] for label in FULL],
                    },
                    cpu,
                )
            )
            if r:
                shutil.rmtree(store)
        results["full"] = _summarise(full_runs)
        results["full"]["disk"] = _dir_bytes(work / "full0")
        results["full"]["chunk_table_bytes"] = sum(
            p.stat().st_size for p in Path(full_runs[0]["chunk_dir"]).iterdir() if p.is_file()
        )
        for i, (label, name, opts) in enumerate(configs):
            runs = []
            for r in range(repeats):
                log(f"{label}: build {r + 1}/{repeats}")
                store = work / f"alone{i}-{r}"
                runs.append(
                    run_worker(
                        {"task": "build", "snapshot": str(snapshot), "store": str(store), "retrievers": [[name, opts]]},
                        cpu,
                    )
                )
                if r:
                    shutil.rmtree(store)
            results["alone"][label] = _summarise(runs)
            log(f"{label}: queries")
            results["query"][label] = run_worker(
                {
                    "task": "query",
                    "snapshot": str(snapshot),
                    "store": str(work / f"alone{i}-0"),
                    "chunk_dir": runs[0]["chunk_dir"],
                    "retriever": [name, opts],
                    "queries": str(queries_file),
                    "repeats": repeats,
                },
                cpu,
            )
        for cap in (3000, None):
            runs = []
            for r in range(repeats):
                log(f"reference BM25 (cap {cap}): {r + 1}/{repeats}")
                runs.append(
                    run_worker(
                        {
                            "task": "reference",
                            "snapshot": str(snapshot),
                            "max_chunks": cap,
                            "queries": str(queries_file),
                            "repeats": repeats,
                        },
                        cpu,
                    )
                )
            results["reference"][str(cap)] = _summarise(runs)
        if batch_repos is not None:
            log(f"batch: every snapshot of {batch_repos}, {jobs} processes")
            results["batch"] = run_worker(
                {
                    "task": "batch",
                    "repos": str(batch_repos),
                    "store": str(work / "batch"),
                    "retrievers": [by_label[label] for label in FULL],
                    "jobs": jobs,
                },
                None,
            )
            results["batch"]["jobs"] = jobs
            results["batch"]["repos"] = str(batch_repos)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results["lines"] = results["full"]["counts"]["lines"]
    return results


def _f(value: float, digits: int = 2) -> str:
    """A number with the given decimals."""
    return f"{value:.{digits}f}"


def render(
    results: dict[str, Any],
    snapshot: Path,
    bench: Path,
    n_queries: int,
    repeats: int,
    command: str = "python scripts/benchmark.py",
) -> str:
    """The markdown section with every table.

    :param results: from :func:`measure`.
    :param snapshot: the snapshot measured.
    :param bench: the bench file the queries came from.
    :param n_queries: number of queries.
    :param repeats: repeats.
    :param command: the command line that produced the results (quoted in the text).
    :return: markdown, starting with the section heading.
    """
    lines_k = results["lines"] / 1e5
    full = results["full"]
    ref = results["reference"]["3000"]
    ref_all = results["reference"]["None"]
    ref_q = statistics.median(ref["search"])

    def per100k(run: dict[str, Any]) -> str:
        return f"{_f(run['wall'] / lines_k)} ({_f(run['cpu_median'] / lines_k)})"

    out = [SECTION, ""]
    out.append(
        f"Measured by `{command}` on `{snapshot.name}` "
        f"({results['lines']:,} indexed lines, {full['counts']['files']} files, {full['counts']['chunks']:,} "
        f"function chunks) with {n_queries} queries (the problem statements of `{bench.name}`), on a 2-core VM "
        f"shared with other jobs. Every figure comes from a fresh process pinned to one core with one thread per "
        f"library. Build times: the fastest of {repeats} runs in wall-clock seconds, and in parentheses the median "
        f"CPU seconds of the runs (the cost on one core, whatever else the machine runs). Query times: "
        f"milliseconds over {n_queries} queries x {repeats}, `search(query, top_n={TOP_N})` after loading and "
        f"one warm-up query. Peak RSS: the process's `VmHWM` (imports, model and data included)."
    )
    out += ["", "### Full index: chunking + bm25, tfidf, potion, faiss, hybrid in one build", ""]
    steps = full["steps"]
    out.append("| step | seconds | share |")
    out.append("|---|---|---|")
    order = ["walk", "chunk", "term_counts", "bm25", "tfidf", "vectors", "potion", "faiss", "hybrid"]
    for step in order + sorted(set(steps) - set(order)):
        if step in steps:
            out.append(f"| {step} | {_f(steps[step], 3)} | {steps[step] / full['wall']:.0%} |")
    out.append(f"| **total** | **{_f(full['wall'])}** ({_f(full['cpu_median'])} CPU) | |")
    out += [
        "",
        f"**{_f(full['wall'] / lines_k)} s per 100K lines** wall clock, {_f(full['cpu_median'] / lines_k)} CPU "
        f"seconds per 100K lines, on one core (target: at most 2). Loading the model, {_f(full['setup'])} s once "
        f"per process, is not included (with it: {_f((full['wall'] + full['setup']) / lines_k)} s per 100K "
        f"lines). Peak RSS {full['peak_rss']:.0f} MB ({full['rss_before']:.0f} MB before building). On disk "
        f"{full['disk'] / 1e6:.1f} MB (chunk table {full['chunk_table_bytes'] / 1e6:.2f} MB). The reference BM25 "
        f"builds in {_f(ref['wall'] / lines_k)} s per 100K lines: the full index costs "
        f"{full['wall'] / ref['wall']:.1f}x that, for five indexes over every indexed line and language instead "
        f"of one over `.py`/docs windows.",
        "",
        "### Per retriever",
        "",
        "Build alone: chunking + that retriever only, in a fresh store (what a run asking for one retriever pays; "
        "a hybrid builds its two parts), s per 100K lines. Explore step: search + ranking priors "
        "(`explore/priors.py`) + line-budget packer, after loading. `explore()` call: a whole "
        "`IndexedExplorer.explore` on one explorer: the first call checks that the index is current and loads it, "
        "later calls on the same snapshot reuse the loaded index (median over the queries). "
        "Load s: `open_index` (chunk table, checksums, the retriever; for the embedding ones the model too). "
        "Ratios are ours / the reference BM25 (build seconds, query median, peak RSS of the query process).",
        "",
        "| retriever | build alone s / 100K lines | load s | query median / p95 ms | explore step median / p95 ms "
        "| `explore()` call median ms | peak RSS MB build / query | disk MB | ratio to reference: build, query, RSS |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, _, _ in CONFIGS:
        if label not in results["alone"]:
            continue  # an optional backend that is not installed
        alone, q = results["alone"][label], results["query"][label]
        search = q["search"]
        disk = q["disk"] / 1e6
        disk_s = f"{disk:.2f}" if not q["disk_parts"] else f"{disk:.3f} (+{q['disk_parts'] / 1e6:.1f} parts)"
        ratio = (
            f"{alone['wall'] / ref['wall']:.1f}x, {statistics.median(search) / ref_q:.3f}x, "
            f"{q['peak_rss'] / ref['peak_rss']:.1f}x"
        )
        out.append(
            f"| {label} | {per100k(alone)} | {_f(q['load'], 3)} "
            f"| {_f(statistics.median(search))} / {_f(_pct(search, 0.95))} "
            f"| {_f(statistics.median(q['explore']))} / {_f(_pct(q['explore'], 0.95))} "
            f"| {_f(statistics.median(q['call']), 1)} | {alone['peak_rss']:.0f} / {q['peak_rss']:.0f} "
            f"| {disk_s} | {ratio} |"
        )
    fast = [label for label, _, _ in CONFIGS if "rank_bm25" not in label and label in results["query"]]
    worst = max(fast, key=lambda label: _pct(results["query"][label]["search"], 0.95))
    out += [
        "",
        f"Slowest query p95 after loading, `rank_bm25` backend aside (a Python loop per query token, kept as the "
        f"parity oracle): {_f(_pct(results['query'][worst]['search'], 0.95))} ms ({worst}); the target is 20 ms.",
    ]
    out += [
        "",
        "### Reference approach (same run)",
        "",
        "`explore.reference.ReferenceBM25`: rank-bm25 `BM25Okapi` over `str.split` tokens of 80/20 line windows "
        "of the reference's file types; build = its chunking + index; query = `explore(query, 5)` (scores every "
        "window, sorts). Seconds per 100K lines use the same denominator as above (the snapshot's indexed lines).",
        "",
        "| reference | windows | build s / 100K lines | query median / p95 ms | peak RSS MB |",
        "|---|---|---|---|---|",
    ]
    for name, r in (("capped at 3000 windows (the reference)", ref), ("uncapped", ref_all)):
        out.append(
            f"| {name} | {r['n_chunks']:,} | {per100k(r)} "
            f"| {_f(statistics.median(r['search']))} / {_f(_pct(r['search'], 0.95))} | {r['peak_rss']:.0f} |"
        )
    if ref["n_chunks"] == ref_all["n_chunks"]:
        out += ["", f"(The 3000-window cap does not bind on this snapshot: it has {ref['n_chunks']:,} windows.)"]
    batch = results.get("batch")
    if batch:
        out += [
            "",
            f"### Whole batch: every snapshot of `{Path(batch['repos']).name}`, {batch['jobs']} processes",
            "",
            f"`indexes.batch.index_many` (what `scripts/index_repos.py --jobs {batch['jobs']}` runs) built the full "
            f"index of {batch['snapshots']} snapshots ({batch['lines']:,} lines) in {_f(batch['wall'], 1)} s wall "
            f"clock: {_f(batch['wall'] / batch['lines'] * 1e5)} s per 100K lines on {batch['jobs']} cores; the "
            f"workers spent {_f(batch['worker_cpu'] / batch['lines'] * 1e5)} CPU seconds per 100K lines "
            f"({_f(batch['worker_seconds'] / batch['lines'] * 1e5)} wall: they got "
            f"{batch['worker_cpu'] / batch['worker_seconds']:.0%} of a core, the rest went to other jobs on the "
            f"machine), model loading and imports included; "
            f"largest worker peak RSS {batch['max_worker_rss']:.0f} MB; {len(batch['errors'])} failures.",
        ]
    return "\n".join(out)


def update_docs(path: Path, section: str) -> None:
    """Replace the ``## Speed and memory`` section of a markdown file (or append it), keeping the rest.

    :param path: the markdown file (created if missing, with a title).
    :param section: the new section, starting with its heading.
    """
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == SECTION), None)
    if start is None:
        new = text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        new = (
            "\n".join(
                lines[:start] + section.rstrip("\n").splitlines() + ([""] + lines[end:] if end < len(lines) else [])
            )
            + "\n"
        )
    path.write_text(new, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshot", type=Path, default=None, help="snapshot directory (default: largest dev one)")
    parser.add_argument("--bench", type=Path, default=None, help="bench JSONL whose problem statements are queries")
    parser.add_argument("--model", default=None, help="Potion model path (default: ../shared/models/potion-base-8M)")
    parser.add_argument("--repeats", type=int, default=3, help="build runs and query repeats (default: 3)")
    parser.add_argument("--cpu", type=int, default=None, help="core to pin to (default: the first allowed one)")
    parser.add_argument("--markdown", action="store_true", help="print the markdown section")
    parser.add_argument(
        "--update-docs",
        type=Path,
        default=None,
        metavar="FILE",
        help="replace the '## Speed and memory' section of FILE (e.g. docs/benchmarks.md)",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the raw results to this file")
    parser.add_argument(
        "--batch-repos",
        type=Path,
        default=None,
        metavar="DIR",
        help="also time indexing every snapshot under DIR in --jobs processes (e.g. repos/dev)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="processes of the --batch-repos run (default: 2)")
    parser.add_argument(
        "--allow-small",
        action="store_true",
        help=f"measure a snapshot of fewer than {MIN_LINES:,} indexed lines (fixed costs dominate)",
    )
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        task = json.loads(args.worker)
        print(json.dumps(WORKERS[task["task"]](task)))
        return 0
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    snapshot = args.snapshot or largest_snapshot(DEV_REPOS)
    if snapshot is None:
        parser.error(
            f"no snapshot given and none under {DEV_REPOS}: materialise the dev set (README, 'On real "
            "SWE-Explore instances') or pass --snapshot DIR"
        )
    if not snapshot.is_dir():
        parser.error(f"snapshot {snapshot} is not a directory")
    n_lines = sum(len(f.lines) for f in walk_snapshot(snapshot)[0])
    if n_lines < MIN_LINES and not args.allow_small:
        parser.error(
            f"snapshot {snapshot} has only {n_lines:,} indexed lines: per-100K-line figures would measure "
            f"fixed costs; pass a real snapshot (--snapshot DIR) or --allow-small"
        )
    bench = args.bench or (DEV_BENCH if DEV_BENCH.is_file() else MINI_BENCH)
    from swe_explore.evaluation.bench import load_bench

    try:
        queries = [r.problem_statement for r in load_bench(bench, skip_empty_core=False)]
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))
    model = args.model or os.environ.get("SWE_EXPLORE_POTION_MODEL") or str(DEFAULT_MODEL)
    if not Path(model).is_dir():
        parser.error(f"--model {model} is not a directory (a local model2vec model is needed)")
    model = str(Path(model).resolve())
    cpu = args.cpu if args.cpu is not None else min(os.sched_getaffinity(0))
    print(
        f"benchmark: {snapshot} ({n_lines:,} indexed lines) with {len(queries)} queries from {bench}, "
        f"model {model}, core {cpu}",
        file=sys.stderr,
    )
    t0 = time.perf_counter()
    if args.batch_repos is not None and not args.batch_repos.is_dir():
        parser.error(f"--batch-repos {args.batch_repos} is not a directory")
    results = measure(
        snapshot.resolve(),
        queries,
        model,
        args.repeats,
        cpu,
        log=lambda msg: print(f"  {msg}", file=sys.stderr),
        batch_repos=args.batch_repos.resolve() if args.batch_repos else None,
        jobs=args.jobs,
    )
    command = " ".join(["python scripts/benchmark.py", *(sys.argv[1:] if argv is None else argv)])
    section = render(results, snapshot, bench, len(queries), args.repeats, command)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    if args.update_docs:
        update_docs(args.update_docs, section)
        print(f"updated {args.update_docs}", file=sys.stderr)
    if args.markdown or not args.update_docs:
        print(section)
    print(f"benchmark took {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
