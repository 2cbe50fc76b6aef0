"""Batch indexing of many snapshots with joblib (local processes) or a Dask cluster (joblib's Dask backend).

Each task indexes one snapshot and receives only small arguments (paths, names and option dicts), never chunks,
models or indexes, so nothing large is pickled per task (BR-22); each worker loads what it needs itself. A
failure in one snapshot becomes an ``error`` entry in the run report and the batch goes on. Because every index
directory is written atomically and up-to-date indexes are skipped, a killed batch resumes by running it again.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from chunking.registry import make_chunker
from chunking.walk import WalkConfig
from indexes.build import ensure_index
from retrievers.registry import make_retriever

#: Joblib backends offered by the scripts; ``dask`` needs ``pip install 'swe-explore-baselines[dask]'``.
BACKENDS = ("loky", "threading", "sequential", "dask")


@dataclass(frozen=True)
class IndexJob:
    """What to index: one chunk strategy and one or more retrievers, the same for every snapshot.

    :param chunker: chunk strategy name.
    :param chunker_options: its options.
    :param retrievers: ``(name, options)`` per retriever.
    :param walk: walking rules as :meth:`chunking.walk.WalkConfig.to_dict` gives them (``{}`` = defaults).
    :param rebuild: rebuild even up-to-date or corrupt indexes.
    """

    chunker: str = "function"
    chunker_options: dict[str, Any] = field(default_factory=dict)
    retrievers: tuple[tuple[str, dict[str, Any]], ...] = (("bm25", {}),)
    walk: dict[str, Any] = field(default_factory=dict)
    rebuild: bool = False


def index_one(snapshot: str, store: str, job: IndexJob) -> dict[str, Any]:
    """Index one snapshot (runs in a worker); never raises.

    :param snapshot: snapshot directory.
    :param store: index store root.
    :param job: what to build.
    :return: ``{"snapshot", "status": "built"|"up-to-date"|"error", "built", "counts", "seconds", "error"}``.
    """
    t0 = time.perf_counter()
    name = Path(snapshot).name
    try:
        chunker = make_chunker(job.chunker, **job.chunker_options)
        retrievers = [make_retriever(n, **opts) for n, opts in job.retrievers]
        walk = WalkConfig(**job.walk) if job.walk else WalkConfig()
        report = ensure_index(Path(snapshot), Path(store), chunker, retrievers, walk, job.rebuild)
    except Exception as exc:  # recorded in the run report; the batch goes on
        return {"snapshot": name, "status": "error", "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(limit=5), "seconds": {"total": time.perf_counter() - t0}}
    return {
        "snapshot": name,
        "status": "built" if report.built else "up-to-date",
        "built": report.built,
        "counts": report.counts,
        "seconds": {**{k: round(v, 4) for k, v in report.seconds.items()},
                    "total": round(time.perf_counter() - t0, 4)},
        "error": None,
    }


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
    from joblib import Parallel, delayed, parallel_config

    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; valid: {', '.join(BACKENDS)}")
    tasks = [delayed(index_one)(str(s), str(store), job) for s in snapshots]
    wrap = progress or (lambda it, total: it)
    if backend == "sequential" or (n_jobs == 1 and backend != "dask"):
        return list(wrap((index_one(str(s), str(store), job) for s in snapshots), len(snapshots)))
    if backend == "dask":
        client = _dask_client(scheduler, n_jobs)
        try:
            with parallel_config(backend="dask"):
                results = Parallel(return_as="generator_unordered")(tasks)
                return list(wrap(results, len(tasks)))
        finally:
            client.close()
            cluster = getattr(client, "_local_cluster", None)
            if cluster is not None:
                cluster.close()
    parallel = Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered")
    return list(wrap(parallel(tasks), len(tasks)))


def _dask_client(scheduler: str | None, n_jobs: int) -> Any:
    """Connect to a Dask scheduler, or start a local cluster of ``n_jobs`` single-threaded workers."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ImportError("the dask backend needs: pip install 'swe-explore-baselines[dask]'") from None
    if scheduler:
        return Client(scheduler)
    workers = n_jobs if n_jobs > 0 else None
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    client._local_cluster = cluster  # closed with the client
    return client
