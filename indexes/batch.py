"""Batch indexing of many snapshots with joblib (local processes) or a Dask cluster (joblib's Dask backend).

- **Small tasks.** Each task indexes one snapshot and receives only :func:`task_arguments`: two path
  strings and the :class:`IndexJob` (names and option dicts), a few hundred bytes pickled, never chunks, models
  or indexes. Each worker process loads what it needs itself, once (the Potion model is cached per process),
  so a worker's memory is bounded by the largest snapshot it indexes, not by the batch.
- **Failures.** An exception in one snapshot becomes an ``error`` entry (message and short traceback) in that
  snapshot's report and the batch goes on.
- **Resume.** Every index directory is written atomically (temporary directory, then rename) and up-to-date
  indexes are skipped, so a killed batch resumes by running it again; builds are deterministic, so the resumed
  store holds the same files as an uninterrupted run (``tests/test_batch.py`` kills one with SIGKILL).
- **Concurrency.** Each index is built under its lock (:class:`~indexes.store.IndexLock`), the symbol graph
  included, so two batches (or a batch and ``run_baselines.py``) on one store build every index once and both
  succeed; with ``reuse`` the
  workers share the store's content-addressed cache, whose entries are written atomically.
- **Where.** ``loky`` (default: local processes), ``threading``, ``sequential`` (in this process), or
  ``dask``: the same tasks on a Dask distributed cluster (``scheduler="tcp://host:8786"``) or, without an
  address, on a local cluster started for the batch. Every report names the ``worker`` (``host:pid``).
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_explore.chunking.registry import make_chunker
from swe_explore.chunking.walk import WalkConfig
from swe_explore.indexes.build import ensure_index
from swe_explore.indexes.history import ensure_history_index
from swe_explore.indexes.reuse_rows import keeping_rows
from swe_explore.retrievers.registry import make_retriever

#: Joblib backends offered by the scripts; ``dask`` needs ``pip install 'swe-explore-baselines[dask]'``.
BATCH_BACKENDS = ("loky", "threading", "sequential", "dask")


@dataclass(frozen=True)
class IndexJob:
    """What to index: one chunk strategy and one or more retrievers, the same for every snapshot.

    :param chunker: chunk strategy name.
    :param chunker_options: its options.
    :param retrievers: ``(name, options)`` per retriever.
    :param walk: walking rules as :meth:`chunking.walk.WalkConfig.to_dict` gives them (``{}`` = defaults).
    :param rebuild: rebuild even up-to-date or corrupt indexes.
    :param reuse: take what each file contributes from the store's content-addressed cache
        (:func:`~indexes.build.ensure_index`'s ``reuse``).
    :param graph: also build the symbol graph next to the chunk table (:func:`~indexes.build.ensure_index`'s ``graph``,
        under the index's lock like the rest; what the learned explorer reads).
    :param graph_worker: build the graph in a forked child next to the retrievers
        (:func:`~indexes.build.ensure_index`'s ``graph_worker``); for one snapshot at a time on a machine with a
        free CPU.
    :param history: also build the history index of a snapshot that has a history file
        (:func:`~indexes.history.ensure_history_index`; a snapshot without one is unaffected).
    """

    chunker: str = "function"
    chunker_options: dict[str, Any] = field(default_factory=dict)
    retrievers: tuple[tuple[str, dict[str, Any]], ...] = (("bm25", {}),)
    walk: dict[str, Any] = field(default_factory=dict)
    rebuild: bool = False
    reuse: bool = False
    graph: bool = False
    graph_worker: bool = False
    history: bool = False


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (``VmHWM`` from ``/proc/self/status``).

    :return: megabytes; where ``/proc`` is missing, ``ru_maxrss`` read as kilobytes (its unit on Linux).
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def index_one(snapshot: str, store: str, job: IndexJob) -> dict[str, Any]:
    """Index one snapshot (runs in a worker); never raises.

    :param snapshot: snapshot directory.
    :param store: index store root.
    :param job: what to build.
    :return: ``{"snapshot", "status": "built"|"up-to-date"|"error", "built", "reused", "counts", "skipped", "seconds",
        "cache", "error", "worker", "peak_rss_mb"}``: ``seconds`` holds the build steps, ``total`` (wall) and
        ``cpu`` (the CPU seconds of this process and of its graph worker, if one ran); ``cache`` the
        content-addressed cache's lookups per kind (with
        ``job.reuse``, see :class:`~indexes.build.BuildReport`); ``worker`` is ``"<host>:<pid>"`` of the process
        that did the work and ``peak_rss_mb`` its peak resident memory so far (MB; a worker's peak over all its
        tasks).
    """
    t0, c0 = time.perf_counter(), time.process_time()
    name = Path(snapshot).name
    worker = f"{socket.gethostname()}:{os.getpid()}"
    try:
        chunker = make_chunker(job.chunker, **job.chunker_options)
        retrievers = [make_retriever(n, **opts) for n, opts in job.retrievers]
        walk = WalkConfig(**job.walk) if job.walk else WalkConfig()
        with keeping_rows(enabled=job.reuse and not job.rebuild):  # consecutive snapshots share most chunks
            report = ensure_index(
                Path(snapshot),
                Path(store),
                chunker,
                retrievers,
                walk,
                job.rebuild,
                reuse=job.reuse,
                graph=job.graph,
                graph_worker=job.graph_worker,
            )
        if job.history:
            t_history = time.perf_counter()
            if ensure_history_index(Path(snapshot), Path(store), rebuild=job.rebuild, reuse=job.reuse):
                report.built.append("history")
                report.seconds["history"] = time.perf_counter() - t_history
    except Exception as exc:  # recorded in the run report; the batch goes on
        return {
            "snapshot": name,
            "status": "error",
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc(limit=5),
            "seconds": {"total": time.perf_counter() - t0},
            "worker": worker,
            "peak_rss_mb": peak_rss_mb(),
        }
    return {
        "snapshot": name,
        "status": "built" if report.built else "up-to-date",
        "built": report.built,
        "reused": report.reused,
        "counts": report.counts,
        "skipped": report.skipped,
        "seconds": {
            **{k: round(v, 4) for k, v in report.seconds.items()},
            "total": round(time.perf_counter() - t0, 4),
            "cpu": round(time.process_time() - c0 + report.seconds.get("graph_worker_cpu", 0.0), 4),
        },
        "cache": report.cache,
        "error": None,
        "worker": worker,
        "peak_rss_mb": peak_rss_mb(),
    }


def task_arguments(snapshots: Sequence[Path], store: Path, job: IndexJob) -> list[tuple[str, str, IndexJob]]:
    """The arguments of each task of a batch, as they are pickled and sent to a worker (kept small, see the module).

    :param snapshots: snapshot directories.
    :param store: index store root.
    :param job: what to build.
    :return: one ``(snapshot path, store path, job)`` per snapshot, for :func:`index_one`; the paths are absolute,
        since a worker (a Dask worker on another host, say) does not share the caller's working directory.
    """
    root = str(Path(store).resolve())
    return [(str(Path(s).resolve()), root, job) for s in snapshots]


def index_many(
    snapshots: Sequence[Path],
    store: Path,
    job: IndexJob,
    n_jobs: int = 1,
    backend: str = "loky",
    scheduler: str | None = None,
    progress: Callable[[Iterable[dict[str, Any]], int], Iterable[dict[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """Index many snapshots in parallel; results come back as each snapshot finishes.

    :param snapshots: snapshot directories.
    :param store: index store root.
    :param job: what to build for every snapshot.
    :param n_jobs: parallel workers (joblib semantics: ``-1`` = all cores); ignored for ``sequential``.
    :param backend: ``loky`` (processes), ``threading``, ``sequential`` or ``dask``.
    :param scheduler: Dask scheduler address (``tcp://host:8786``); ``None`` with ``dask`` starts a local cluster.
    :param progress: wraps the result iterator (e.g. a tqdm bar); receives ``(iterator, total)``.
    :return: one :func:`index_one` report per snapshot, in completion order.
    :raises ValueError: for an unknown backend.
    :raises ImportError: if ``dask`` is asked for but not installed, with the pip command.
    """
    arguments = task_arguments(snapshots, store, job)
    wrap = progress or (lambda it, total: it)
    return list(wrap(run_tasks(index_one, arguments, n_jobs, backend, scheduler), len(arguments)))


def run_tasks(
    function: Callable[..., Any],
    arguments: Sequence[tuple[Any, ...]],
    n_jobs: int = 1,
    backend: str = "loky",
    scheduler: str | None = None,
) -> Iterator[Any]:
    """Run ``function(*args)`` for every tuple of ``arguments`` with joblib or on a Dask cluster, yielding the
    results as the tasks finish (what :func:`index_many` and the parallel ``run_baselines.py`` use).

    ``function`` must be importable by name in the workers (a module-level function); its arguments and result are
    pickled. Closing the iterator early cancels the tasks not yet started (and closes a Dask client it opened).

    :param function: the task.
    :param arguments: one argument tuple per task.
    :param n_jobs: parallel workers (joblib semantics: ``-1`` = all cores); ignored for ``sequential``.
    :param backend: a :data:`BATCH_BACKENDS` name; ``sequential`` or ``n_jobs == 1`` (except ``dask``) runs the
        tasks here, one after the other, in order.
    :param scheduler: Dask scheduler address (``tcp://host:8786``); ``None`` with ``dask`` starts a local cluster.
    :return: an iterator over the results, in completion order.
    :raises ValueError: for an unknown backend.
    :raises ImportError: if ``dask`` is asked for but not installed, with the pip command.
    """
    from joblib import Parallel, delayed

    if backend not in BATCH_BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; valid: {', '.join(BATCH_BACKENDS)}")
    if backend == "sequential" or (n_jobs == 1 and backend != "dask"):
        return (function(*args) for args in arguments)
    tasks = [delayed(function)(*args) for args in arguments]
    if backend == "dask":
        return _on_dask(tasks, _dask_client(scheduler, n_jobs))
    if backend != "loky":
        return iter(Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered")(tasks))
    from joblib import parallel_config

    with parallel_config(backend="loky", initializer=loky_worker_setup):
        return iter(Parallel(n_jobs=n_jobs, return_as="generator_unordered")(tasks))


def loky_worker_setup() -> None:
    """Initializer of the ``loky`` workers.

    - SIGINT is ignored: Ctrl-C reaches the whole process group, and the parent stops the run and its workers (one
      line, exit 130), so a worker interrupted mid-task must not print its own traceback.
    - A daemon thread ends the worker (``os._exit``) within 2 s of its parent's death: after a SIGKILL of the
      parent in the middle of sending a task, a worker blocked reading the rest of it never reaches loky's idle
      timeout (seen after ``kill -9`` of ``run_baselines.py --jobs 2``: the worker was still there 25 min later).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(2.0)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _on_dask(tasks: list[Any], client: Any) -> Iterator[Any]:
    """The results of joblib tasks run on a Dask client, in completion order; the client is closed at the end."""
    from joblib import Parallel, parallel_config

    try:
        with parallel_config(backend="dask"):
            yield from Parallel(return_as="generator_unordered")(tasks)
    finally:
        client.close()
        cluster = getattr(client, "_local_cluster", None)
        if cluster is not None:
            cluster.close()


def _dask_client(scheduler: str | None, n_jobs: int) -> Any:
    """Connect to a Dask scheduler, or start a local cluster of ``n_jobs`` single-threaded workers."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ImportError("the dask backend needs: pip install 'swe-explore-baselines[dask]'") from None
    # distributed's constructors are unannotated: typed as ``Callable[..., Any]`` for mypy --strict, which also
    # holds when dask is not installed (then the names are ``Any``).
    new_client: Callable[..., Any] = Client
    new_cluster: Callable[..., Any] = LocalCluster
    if scheduler:
        return new_client(scheduler)
    workers = n_jobs if n_jobs > 0 else None
    cluster = new_cluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = new_client(cluster)
    client._local_cluster = cluster  # closed with the client
    return client
