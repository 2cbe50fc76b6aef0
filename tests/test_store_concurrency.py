"""Concurrent builders on one index store (indexes/store.py IndexLock, temporaries; indexes/build.py): every index
is built once, both builders succeed, and only temporaries of dead builders are removed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import Timeout

from swe_explore.chunking.registry import make_chunker
from swe_explore.chunking.walk import WalkConfig
from swe_explore.indexes.build import chunk_dir_for, ensure_index
from swe_explore.indexes.store import IndexLock, lock_path
from swe_explore.retrievers.registry import make_retriever

ROOT = Path(__file__).resolve().parent.parent
MINI_REPOS = ROOT / "swe_explore" / "data" / "mini" / "repos"
SNAPSHOTS = sorted(p for p in MINI_REPOS.iterdir() if p.is_dir())

#: Indexes every mini snapshot (function chunks, BM25 and TF-IDF) into argv[1] once the file argv[2] exists, then
#: prints each snapshot's (built, reused) as JSON.
BUILDER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from swe_explore.chunking.registry import make_chunker
    from swe_explore.indexes.build import ensure_index
    from swe_explore.retrievers.registry import make_retriever

    store, go, snapshots = Path(sys.argv[1]), Path(sys.argv[2]), [Path(p) for p in sys.argv[3:]]
    while not go.exists():  # both builders start together
        time.sleep(0.01)
    out = {}
    for snapshot in snapshots:
        report = ensure_index(snapshot, store, make_chunker("function"), [make_retriever("bm25"),
                                                                         make_retriever("tfidf")])
        out[snapshot.name] = [report.built, report.reused]
    print(json.dumps(out))
    """
)

#: Takes the lock of the index argv[1] (a chunker directory), opens a temporary of it (atomic_directory), prints
#: "ready", then waits for a line on stdin and leaves with an exception (the temporary is removed by its owner).
HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from swe_explore.indexes.store import IndexLock, atomic_directory

    cdir = Path(sys.argv[1])
    with IndexLock(cdir), atomic_directory(cdir) as tmp:
        (tmp / "half-written").write_text("x")
        print("ready", tmp, flush=True)
        sys.stdin.readline()
        raise SystemExit(3)
    """
)


def _start(script: str, *args: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)],
        cwd=ROOT,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _wait_ready(proc: subprocess.Popen[str]) -> Path:
    """The temporary directory a HOLDER process announced."""
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("ready "), proc.stderr.read() if proc.stderr else line
    return Path(line.split(" ", 1)[1].strip())


def test_two_builders_at_once_build_every_index_once(
    tmp_path: Path, store_tree: Callable[[Path], dict[str, bytes]]
) -> None:
    """Two processes index the same snapshots into one store at once: both exit 0, each index (chunk table, BM25,
    TF-IDF of every snapshot) is built by exactly one of them and reused by the other, and the store equals one
    built by a single process."""
    store, go = tmp_path / "store", tmp_path / "go"
    procs = [_start(BUILDER, store, go, *SNAPSHOTS) for _ in range(2)]
    go.touch()
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outputs]
    reports = [json.loads(out) for out, _ in outputs]
    for snapshot in SNAPSHOTS:
        (built_a, reused_a), (built_b, reused_b) = reports[0][snapshot.name], reports[1][snapshot.name]
        assert sorted(built_a + built_b) == ["bm25", "chunks", "tfidf"]
        assert sorted(reused_a + reused_b) == ["bm25", "chunks", "tfidf"]
        assert not set(built_a) & set(reused_a) and not set(built_b) & set(reused_b)
    single = tmp_path / "single"
    for snapshot in SNAPSHOTS:
        ensure_index(snapshot, single, make_chunker("function"), [make_retriever("bm25"), make_retriever("tfidf")])
    assert store_tree(store) == store_tree(single)
    assert not list(store.rglob("*.lock")) and not list(store.rglob("*.tmp-*"))


def test_temporary_of_a_killed_builder_is_removed_by_the_next_build(tmp_path: Path) -> None:
    """A builder SIGKILLed while writing an index leaves its temporary; the OS frees its lock, so the next build of
    that index removes the temporary and builds the index."""
    store, snapshot = tmp_path / "store", SNAPSHOTS[0]
    cdir = chunk_dir_for(store, snapshot.name, make_chunker("function"), WalkConfig())
    holder = _start(HOLDER, cdir)
    tmp = _wait_ready(holder)
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    assert tmp.is_dir() and tmp.name.startswith(f"{cdir.name}.tmp-")
    report = ensure_index(snapshot, store, make_chunker("function"), [make_retriever("bm25")])
    assert report.built == ["chunks", "bm25"]
    assert not tmp.exists()
    assert sorted(p.name for p in cdir.parent.iterdir()) == [cdir.name]


def test_temporary_of_a_live_builder_is_left_alone(tmp_path: Path) -> None:
    """While a builder holds an index's lock, its temporary survives a build of another index of the same snapshot
    (another chunker), and the same index cannot be locked; the builder removes its temporary itself."""
    store, snapshot = tmp_path / "store", SNAPSHOTS[0]
    window_dir = chunk_dir_for(store, snapshot.name, make_chunker("window"), WalkConfig())
    holder = _start(HOLDER, window_dir)
    try:
        tmp = _wait_ready(holder)
        report = ensure_index(snapshot, store, make_chunker("function"), [make_retriever("bm25")])
        assert report.built == ["chunks", "bm25"]
        assert (tmp / "half-written").read_text() == "x"
        with pytest.raises(Timeout), IndexLock(window_dir, timeout=0.2):
            pass
        assert tmp.is_dir()
    finally:
        holder.communicate("done\n", timeout=30)
    assert holder.returncode == 3
    assert not tmp.exists() and not window_dir.exists() and not lock_path(window_dir).exists()


def test_lock_file_removed_on_release_is_never_held_twice(tmp_path: Path) -> None:
    """The lock file is gone after release; a waiter blocked on the removed file ends up holding the lock on the
    current file, which nobody else can take meanwhile."""
    cdir = tmp_path / "snap" / "function-00000000"
    held = threading.Event()
    release = threading.Event()

    def waiter() -> None:
        with IndexLock(cdir):
            held.set()
            release.wait(10)

    with IndexLock(cdir):
        assert lock_path(cdir).is_file()
        thread = threading.Thread(target=waiter)
        thread.start()
        time.sleep(0.2)  # let the waiter block on this lock file
        assert not held.is_set()
    assert held.wait(10)
    assert lock_path(cdir).is_file()  # the waiter's own file
    with pytest.raises(Timeout), IndexLock(cdir, timeout=0.1):
        pass
    release.set()
    thread.join(10)
    assert not lock_path(cdir).exists()
    with IndexLock(cdir, timeout=0):
        pass


def test_case8_two_builders_build_the_symbol_graph_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two batch builders of one snapshot with ``graph=True`` at once: the symbol graph is built by exactly one of
    them and reused by the other, like the chunk table and the retrievers (the graph build is slowed down so that
    both reach it together)."""
    from swe_explore.indexes import graph_store as graph_module
    from swe_explore.indexes.batch import IndexJob, index_one
    from swe_explore.indexes.graph_build import build_graph

    builds: list[int] = []
    real_build = build_graph

    def slow_build(*args: object, **kwargs: object) -> object:
        builds.append(threading.get_ident())
        time.sleep(0.5)
        return real_build(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(graph_module, "build_graph", slow_build)
    store, snapshot = tmp_path / "store", SNAPSHOTS[0]
    job = IndexJob(retrievers=(("bm25", {}),), graph=True)
    reports: list[dict[str, object]] = []
    go = threading.Barrier(2)

    def build() -> None:
        go.wait(10)
        reports.append(index_one(str(snapshot), str(store), job))

    threads = [threading.Thread(target=build) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert [r["error"] for r in reports] == [None, None]
    assert len(builds) == 1
    assert sorted("graph" in r["built"] for r in reports) == [False, True]  # type: ignore[operator]
    assert sorted("graph" in r["reused"] for r in reports) == [False, True]  # type: ignore[operator]
    assert not list(store.rglob("*.lock")) and not list(store.rglob("*.tmp-*"))


def test_the_reuse_cache_is_written_while_the_index_is_locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache's scratch directory is a temporary of the index, and the next holder of its lock removes every
    temporary of it: so a builder writes its cache entries (and removes the scratch) before it releases the lock.
    Checked from inside ``ContentCache.close``: the index's lock file is there and cannot be locked."""
    import fcntl
    import os

    from swe_explore.indexes.cache import ContentCache

    store, snapshot = tmp_path / "store", SNAPSHOTS[0]
    cdir = chunk_dir_for(store, snapshot.name, make_chunker("function"), WalkConfig())
    seen: list[str] = []
    real_close = ContentCache.close

    def close(self: ContentCache) -> None:
        try:
            fd = os.open(lock_path(cdir), os.O_RDWR)
        except FileNotFoundError:
            seen.append("no lock file")
        else:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                seen.append("free")
            except BlockingIOError:
                seen.append("locked")
            finally:
                os.close(fd)
        real_close(self)

    monkeypatch.setattr(ContentCache, "close", close)
    report = ensure_index(snapshot, store, make_chunker("function"), [make_retriever("bm25")], reuse=True)
    assert report.built == ["chunks", "bm25"]
    assert seen == ["locked"]
    assert len(list((store / "_cache" / "chunks").glob("*/*.idx"))) == 1
    assert not list(cdir.parent.glob(f"{cdir.name}.tmp-*"))  # the scratch directory is gone
