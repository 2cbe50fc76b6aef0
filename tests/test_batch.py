"""Tests of batch indexing (indexes/batch.py): small tasks, failures recorded, resume after SIGKILL, Dask."""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from swe_explore.chunking.registry import make_chunker
from swe_explore.indexes.batch import IndexJob, index_many, task_arguments
from swe_explore.indexes.build import open_index
from swe_explore.retrievers.registry import make_retriever

ROOT = Path(__file__).resolve().parent.parent
MINI_REPOS = ROOT / "swe_explore" / "data" / "mini" / "repos"
SNAPSHOTS = sorted(p for p in MINI_REPOS.iterdir() if p.is_dir())
QUERY = "format the total price and handle the request"


def _job(model: Path) -> IndexJob:
    """Every retriever (hybrid = BM25 + Potion) over function chunks, the embedding ones on the given model."""
    embed = {"model": str(model)}
    return IndexJob(
        "function", {}, (("bm25", {}), ("tfidf", {}), ("potion", embed), ("faiss", embed), ("hybrid", embed))
    )


def _results(store: Path, job: IndexJob) -> dict[tuple[str, str], list[tuple[str, int, int]]]:
    """Top-5 chunk ranges of every (snapshot, retriever) of a store for one query, through open_index."""
    out = {}
    for snapshot in SNAPSHOTS:
        for name, options in job.retrievers:
            index = open_index(snapshot, store, make_chunker(job.chunker), make_retriever(name, **options))
            hits = index.retriever.search(QUERY, 5)
            out[snapshot.name, name] = [
                (index.chunks[h.index].path, index.chunks[h.index].start, index.chunks[h.index].end) for h in hits
            ]
    return out


@pytest.fixture(scope="module")
def clean_store(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path) -> Path:
    """The mini repos indexed with every retriever in one uninterrupted sequential batch."""
    store = tmp_path_factory.mktemp("clean")
    reports = index_many(SNAPSHOTS, store, _job(tiny_model_dir), backend="sequential")
    if any(r["status"] != "built" for r in reports):
        raise RuntimeError(f"clean build failed: {reports}")
    return store


def test_task_arguments_are_small_and_absolute(tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A task carries two absolute paths (workers have another cwd) and the job, under 1 KB pickled.

    See README.md, 'Indexing many snapshots'.
    """
    monkeypatch.chdir(MINI_REPOS)
    arguments = task_arguments([Path(s.name) for s in SNAPSHOTS], Path("store"), _job(tiny_model_dir))
    assert [a[0] for a in arguments] == [str(s) for s in SNAPSHOTS]
    assert {a[1] for a in arguments} == {str(MINI_REPOS / "store")}
    sizes = [len(pickle.dumps(a)) for a in arguments]
    assert max(sizes) < 1024, sizes


def test_failed_snapshot_is_recorded_and_the_batch_goes_on(tmp_path: Path) -> None:
    """A missing snapshot becomes an error report naming it; the other snapshots are built."""
    missing = tmp_path / "mini__gone-9"
    reports = index_many([SNAPSHOTS[0], missing, SNAPSHOTS[1]], tmp_path / "store", IndexJob(), backend="sequential")
    status = {r["snapshot"]: r["status"] for r in reports}
    assert status == {SNAPSHOTS[0].name: "built", "mini__gone-9": "error", SNAPSHOTS[1].name: "built"}
    error = next(r for r in reports if r["status"] == "error")
    assert "FileNotFoundError" in error["error"] and str(missing) in error["error"]


def test_killed_batch_resumes_to_identical_indexes(
    store_tree: Callable[[Path], dict[str, bytes]], tmp_path: Path, tiny_model_dir: Path, clean_store: Path
) -> None:
    """SIGKILL while writing the second snapshot's TF-IDF index, then a rerun: same files and results as a clean run."""
    store = tmp_path / "store"
    script = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        import swe_explore.indexes.build as build
        from swe_explore.indexes.batch import IndexJob, index_many

        saves = []
        original = build.save_retriever

        def save_then_die(retriever, directory, part_dirs=None):
            original(retriever, directory, part_dirs)  # the files are written, the directory not yet renamed
            if retriever.name == "tfidf":
                saves.append(directory)
                if len(saves) == 2:
                    os.kill(os.getpid(), signal.SIGKILL)

        build.save_retriever = save_then_die
        snapshots = [Path(p) for p in {[str(s) for s in SNAPSHOTS]!r}]
        index_many(snapshots, Path({str(store)!r}), IndexJob(**{_job(tiny_model_dir).__dict__!r}), backend="sequential")
        """
    )
    killed = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    second = store / SNAPSHOTS[1].name
    assert list(second.glob("*/retrievers/tfidf-*.tmp-*"))  # the half-written directory the kill left behind
    assert not (store / SNAPSHOTS[2].name).exists()

    reports = index_many(SNAPSHOTS, store, _job(tiny_model_dir), backend="sequential")
    status = {r["snapshot"]: (r["status"], r.get("built")) for r in reports}
    assert status[SNAPSHOTS[0].name] == ("up-to-date", [])
    assert status[SNAPSHOTS[1].name] == ("built", ["tfidf", "potion", "faiss", "hybrid"])
    assert status[SNAPSHOTS[2].name][1] == ["chunks", "bm25", "tfidf", "potion", "faiss", "hybrid"]
    assert not list(store.rglob("*.tmp-*"))
    assert store_tree(store) == store_tree(clean_store)
    assert _results(store, _job(tiny_model_dir)) == _results(clean_store, _job(tiny_model_dir))


def test_parallel_processes_build_the_same_indexes(
    store_tree: Callable[[Path], dict[str, bytes]], tmp_path: Path, tiny_model_dir: Path, clean_store: Path
) -> None:
    """Two loky worker processes build byte-identical indexes to a sequential build, each in another process."""
    reports = index_many(SNAPSHOTS, tmp_path / "store", _job(tiny_model_dir), n_jobs=2, backend="loky")
    assert sorted(r["snapshot"] for r in reports) == [s.name for s in SNAPSHOTS]
    assert all(r["status"] == "built" for r in reports)
    assert all(not r["worker"].endswith(f":{os.getpid()}") for r in reports)
    assert store_tree(tmp_path / "store") == store_tree(clean_store)


def test_dask_cluster_builds_the_same_indexes(
    store_tree: Callable[[Path], dict[str, bytes]], tmp_path: Path, tiny_model_dir: Path, clean_store: Path
) -> None:
    """The batch run through a local Dask cluster (2 worker processes, by scheduler address) equals a sequential one."""
    distributed = pytest.importorskip(
        "dask.distributed", reason="dask is not installed (pip install 'swe-explore-baselines[dask]')"
    )
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        reports = index_many(
            SNAPSHOTS, tmp_path / "store", _job(tiny_model_dir), backend="dask", scheduler=cluster.scheduler_address
        )
    assert sorted(r["snapshot"] for r in reports) == [s.name for s in SNAPSHOTS]
    assert all(r["status"] == "built" for r in reports), reports
    assert all(not r["worker"].endswith(f":{os.getpid()}") for r in reports)
    assert store_tree(tmp_path / "store") == store_tree(clean_store)
    assert _results(tmp_path / "store", _job(tiny_model_dir)) == _results(clean_store, _job(tiny_model_dir))


def test_parallel_workers_sharing_the_cache_build_the_same_indexes(
    store_tree: Callable[[Path], dict[str, bytes]], tmp_path: Path, tiny_model_dir: Path
) -> None:
    """With reuse, two loky workers fill and read one cache at once (each mini snapshot twice, so the workers race
    on the same pieces); the indexes equal a sequential build without reuse, and a store started from that
    cache finds every piece."""
    repos = tmp_path / "repos"
    for snapshot in SNAPSHOTS:
        shutil.copytree(snapshot, repos / snapshot.name)
        shutil.copytree(snapshot, repos / f"{snapshot.name}-copy")
    snapshots = sorted(repos.iterdir())
    job = replace(_job(tiny_model_dir), reuse=True)
    reports = index_many(snapshots, tmp_path / "store", job, n_jobs=2, backend="loky")
    assert all(r["status"] == "built" for r in reports), reports
    index_many(snapshots, tmp_path / "plain", _job(tiny_model_dir), backend="sequential")
    tree = {k: v for k, v in store_tree(tmp_path / "store").items() if not k.startswith("_cache/")}
    assert tree == store_tree(tmp_path / "plain")
    shutil.copytree(tmp_path / "store" / "_cache", tmp_path / "warm" / "_cache")
    warm = index_many(snapshots, tmp_path / "warm", job, n_jobs=2, backend="loky")
    # a snapshot whose twin (the other copy) is already in the warm store is copied and looks nothing up
    misses = [r["cache"].get(kind, {"misses": 0})["misses"] for r in warm for kind in ("chunks", "vectors")]
    assert misses == [0] * len(misses) and any(r["cache"] for r in warm), warm


def test_graph_is_built_with_the_index_and_reused_after(tmp_path: Path) -> None:
    """With ``graph=True`` each snapshot's symbol graph is built next to its chunk table, then reused."""
    from swe_explore.indexes.batch import index_one
    from swe_explore.indexes.graph_store import open_graph

    job = IndexJob(retrievers=(("bm25", {}), ("tfidf", {})), graph=True)
    snapshot = MINI_REPOS / "mini__pyshop-1"
    first = index_one(str(snapshot), str(tmp_path), job)
    assert first["status"] == "built" and "graph" in first["built"]
    second = index_one(str(snapshot), str(tmp_path), job)
    assert second["status"] == "up-to-date" and "graph" in second["reused"]
    graph = open_graph(snapshot, tmp_path, make_chunker("function"))
    assert (
        graph.n_chunks
        == open_index(snapshot, tmp_path, make_chunker("function"), make_retriever("bm25")).retriever.n_docs
    )


def _sigint_handler_is_ignore(_: int) -> bool:
    import threading

    watching = any(t.name == "parent-watch" and t.daemon for t in threading.enumerate())
    return signal.getsignal(signal.SIGINT) == signal.SIG_IGN and watching


def test_loky_workers_leave_ctrl_c_to_the_parent() -> None:
    """The two ``loky`` workers ignore SIGINT (Ctrl-C reaches the whole process group: the parent stops the run
    in one line, and a worker must not print its own traceback) and watch their parent (they end when it dies);
    the parent's handler is untouched."""
    from swe_explore.indexes.batch import run_tasks

    before = signal.getsignal(signal.SIGINT)
    results = list(run_tasks(_sigint_handler_is_ignore, [(i,) for i in range(4)], n_jobs=2, backend="loky"))
    assert results == [True, True, True, True]
    assert signal.getsignal(signal.SIGINT) == before != signal.SIG_IGN
