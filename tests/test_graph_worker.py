"""The symbol graph computed in a forked child next to the retrievers (issue 21; indexes/graph_store.py
GraphWorker): the same store files as the graph built in the process, with and without reuse, and a child that
dies or hangs leaves a correct graph and no process behind."""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from swe_explore.chunking.registry import make_chunker
from swe_explore.indexes import build as build_module
from swe_explore.indexes import graph_store
from swe_explore.indexes.build import BuildReport, ensure_index
from swe_explore.indexes.graph_store import GraphWorker, graph_worker_available, open_graph
from swe_explore.retrievers.registry import make_retriever

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="the graph worker needs the fork start method"
)


def _same_store(tree: dict[str, bytes]) -> tuple[dict[str, bytes], dict[str, list[bytes]]]:
    """A store's index files, and its cache packs by namespace (their file names hold a time and a process id)."""
    packs: dict[str, list[bytes]] = {}
    for name, data in tree.items():
        if name.startswith("_cache/") and name.endswith(".pack"):
            packs.setdefault(name.rsplit("/", 1)[0], []).append(data)
    index = {k: v for k, v in tree.items() if not k.startswith("_cache/")}
    return index, {k: sorted(v) for k, v in packs.items()}


def _build(snapshot: Path, store: Path, reuse: bool, worker: bool) -> BuildReport:
    retrievers = [make_retriever("bm25"), make_retriever("tfidf")]
    chunker = make_chunker("function")
    return ensure_index(snapshot, store, chunker, retrievers, reuse=reuse, graph=True, graph_worker=worker)


def _record_starts(monkeypatch: pytest.MonkeyPatch) -> list[GraphWorker | None]:
    """A list that receives what each :meth:`GraphWorker.start` returns from now on (the worker, or ``None``)."""
    started: list[GraphWorker | None] = []
    real_start = GraphWorker.start

    def start(*args: Any) -> GraphWorker | None:
        started.append(real_start(*args))
        return started[-1]

    monkeypatch.setattr(GraphWorker, "start", staticmethod(start))
    return started


@pytest.mark.parametrize("reuse", [True, False])
def test_the_worker_writes_the_files_the_process_writes(
    tmp_path: Path,
    store_tree: Callable[[Path], dict[str, bytes]],
    reuse: bool,
    linked_snapshot: Callable[..., Path],
) -> None:
    """Two snapshots (v2 changes beta's body) into a store with the worker and into one without: every file is
    equal (the graph's and, with reuse, the cache's pieces), the cache lookups are counted alike, and the report
    carries the child's seconds."""
    v1 = linked_snapshot(tmp_path / "v1")
    v2 = linked_snapshot(tmp_path / "v2", edited=True)
    with_worker, without = tmp_path / "with", tmp_path / "without"
    reports = [_build(v, with_worker, reuse, worker=True) for v in (v1, v2)]
    plain = [_build(v, without, reuse, worker=False) for v in (v1, v2)]
    for report, other in zip(reports, plain, strict=True):
        assert report.built == other.built == ["chunks", "bm25", "tfidf", "graph"]
        assert report.cache == other.cache
        assert {"graph", "graph_worker", "graph_worker_cpu"} <= set(report.seconds)
        assert "graph_worker" not in other.seconds
    if reuse:
        assert (reports[1].cache["graph_names"]["hits"], reports[1].cache["graph_names"]["misses"]) == (2, 1)
    assert _same_store(store_tree(with_worker)) == _same_store(store_tree(without))
    # chunks: README.md's window (0), alpha (1), beta (2), b.py's import line (3), gamma (4); both b.py chunks
    # name alpha, whose one definition site is chunk 1
    graph = open_graph(v2, with_worker, make_chunker("function"))
    references = graph.edges["references"]
    assert [(i, references.row(i).tolist()) for i in range(5)] == [(0, []), (1, []), (2, []), (3, [1]), (4, [1])]
    assert _build(v2, with_worker, reuse, worker=True).reused == ["chunks", "bm25", "tfidf", "graph"]


def test_a_child_that_dies_is_replaced_by_the_process(
    tmp_path: Path,
    store_tree: Callable[[Path], dict[str, bytes]],
    monkeypatch: pytest.MonkeyPatch,
    linked_snapshot: Callable[..., Path],
) -> None:
    """The child exits without a word: the parent builds the graph itself, and the files are those of a build
    without the worker (no ``graph_worker`` seconds, since no child finished)."""

    def die(*_: Any) -> None:
        os._exit(3)

    monkeypatch.setattr(graph_store, "_graph_child", die)
    v1 = linked_snapshot(tmp_path / "v1")
    report = _build(v1, tmp_path / "with", reuse=True, worker=True)
    assert report.built == ["chunks", "bm25", "tfidf", "graph"]
    assert "graph_worker" not in report.seconds
    _build(v1, tmp_path / "without", reuse=True, worker=False)
    assert _same_store(store_tree(tmp_path / "with")) == _same_store(store_tree(tmp_path / "without"))


def test_a_child_that_fails_is_replaced_by_the_process(
    tmp_path: Path,
    store_tree: Callable[[Path], dict[str, bytes]],
    monkeypatch: pytest.MonkeyPatch,
    linked_snapshot: Callable[..., Path],
) -> None:
    """An exception in the child is sent back as an error; the parent builds the same graph itself."""
    real = graph_store._graph_child

    def failing(sender: Any, *args: Any) -> None:
        monkeypatch.setattr(graph_store, "build_graph", lambda *a, **k: 1 / 0)
        real(sender, *args)

    monkeypatch.setattr(graph_store, "_graph_child", failing)
    v1 = linked_snapshot(tmp_path / "v1")
    assert _build(v1, tmp_path / "with", reuse=False, worker=True).built[-1] == "graph"
    _build(v1, tmp_path / "without", reuse=False, worker=False)
    assert _same_store(store_tree(tmp_path / "with")) == _same_store(store_tree(tmp_path / "without"))


def test_close_stops_a_child_that_still_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, linked_snapshot: Callable[..., Path]
) -> None:
    """A build interrupted between the worker's start and its finish (Ctrl-C in the retrievers' build) stops
    the child: no process is left behind."""

    def hang(*_: Any) -> None:
        time.sleep(60)

    started: list[GraphWorker] = []
    real_start = GraphWorker.start

    def start(*args: Any) -> GraphWorker | None:
        worker = real_start(*args)
        assert worker is not None
        started.append(worker)
        return worker

    def interrupted(*_: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(graph_store, "_graph_child", hang)
    monkeypatch.setattr(GraphWorker, "start", staticmethod(start))
    monkeypatch.setattr(build_module, "_build_missing", interrupted)
    v1 = linked_snapshot(tmp_path / "v1")
    with pytest.raises(KeyboardInterrupt):
        _build(v1, tmp_path / "store", reuse=True, worker=True)
    assert len(started) == 1
    assert not started[0].process.is_alive()
    assert started[0].process.exitcode is not None


def test_graph_worker_available_needs_two_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """One usable CPU: no worker (it would only take turns with the build)."""
    if not hasattr(os, "sched_getaffinity") or not sys.platform.startswith("linux"):
        pytest.skip("Linux only")
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0})
    assert graph_worker_available() is False
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1})
    assert graph_worker_available() is True


def test_the_learned_explorer_builds_its_graph_with_the_worker_too(
    tmp_path: Path, store_tree: Callable[[Path], dict[str, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The learned explorer indexing on demand (what ``run_baselines.py --jobs 1`` and ``explore.py`` do) with the
    worker: the same store files and the same regions as without it."""
    from swe_explore import MINI_REPOS
    from swe_explore.explore.explorer import make_explorer
    from swe_explore.explore.fusion import FusionExplorer

    started = _record_starts(monkeypatch)
    snapshot = MINI_REPOS / "mini__pyshop-1"
    regions = []
    for worker in (True, False):
        explorer = make_explorer("learned", store=tmp_path / str(worker))
        assert isinstance(explorer, FusionExplorer)
        explorer.graph_worker = worker
        regions.append(explorer.explore(snapshot, "the cart total ignores the discount"))
    assert regions[0] == regions[1] and regions[0]
    assert len(started) == 1 and started[0] is not None  # the worker ran once, for the first explorer
    assert _same_store(store_tree(tmp_path / "True")) == _same_store(store_tree(tmp_path / "False"))
    assert any(name.endswith("graph/graph.json") for name in store_tree(tmp_path / "True"))
    assert any(name.startswith("_cache/graph_names/") for name in store_tree(tmp_path / "True"))


def test_no_graph_worker_is_a_flag_of_run_and_explore(monkeypatch: pytest.MonkeyPatch) -> None:
    """``run_baselines.py`` and ``explore.py`` take ``--no-graph-worker``, which keeps the learned explorer's graph
    in the process where the worker would run (two CPUs); without it the explorer uses the worker."""
    from swe_explore.commands.explore import _parser as explore_parser
    from swe_explore.commands.explorer_args import use_graph_worker
    from swe_explore.commands.run import _parser as run_parser
    from swe_explore.explore.explorer import make_explorer
    from swe_explore.explore.fusion import FusionExplorer

    monkeypatch.setattr(graph_store, "graph_worker_available", lambda: True)
    for parser in (run_parser(), explore_parser()):
        [action] = [a for a in parser._actions if a.dest == "graph_worker"]
        assert (action.option_strings, action.default, action.const) == (["--no-graph-worker"], True, False)
    for wanted in (True, False):
        explorer = make_explorer("learned")
        assert isinstance(explorer, FusionExplorer)
        use_graph_worker(explorer, wanted)
        assert explorer.graph_worker is wanted


def test_a_child_that_never_answers_is_stopped_and_replaced(
    tmp_path: Path,
    store_tree: Callable[[Path], dict[str, bytes]],
    monkeypatch: pytest.MonkeyPatch,
    linked_snapshot: Callable[..., Path],
) -> None:
    """A child that neither answers nor dies (stopped, deadlocked) costs the wait, not the build: after
    ``WORKER_WAIT_SECONDS`` the parent stops it and builds the same graph itself."""

    def hang(*_: Any) -> None:
        time.sleep(60)

    monkeypatch.setattr(graph_store, "_graph_child", hang)
    monkeypatch.setattr(graph_store, "WORKER_WAIT_SECONDS", 1.0)
    v1 = linked_snapshot(tmp_path / "v1")
    t0 = time.perf_counter()
    report = _build(v1, tmp_path / "with", reuse=True, worker=True)
    assert report.built[-1] == "graph" and "graph_worker" not in report.seconds
    assert time.perf_counter() - t0 < 15
    _build(v1, tmp_path / "without", reuse=True, worker=False)
    assert _same_store(store_tree(tmp_path / "with")) == _same_store(store_tree(tmp_path / "without"))


#: Builds argv[1] into the store argv[2] with the graph worker, the child's graph made slow (60 s); prints the
#: child's pid once it runs, then waits for the graph (killed or interrupted by the test meanwhile).
SLOW_CHILD = """
import sys, time
from pathlib import Path
from swe_explore.chunking.registry import make_chunker
from swe_explore.indexes import graph_store
from swe_explore.indexes.build import ensure_index
from swe_explore.retrievers.registry import make_retriever

real_build, real_start = graph_store.build_graph, graph_store.GraphWorker.start

def slow(*args, **kwargs):
    time.sleep(60)
    return real_build(*args, **kwargs)

def start(*args):
    worker = real_start(*args)
    print(worker.process.pid, flush=True)
    return worker

graph_store.build_graph = slow
graph_store.GraphWorker.start = staticmethod(start)
try:
    ensure_index(Path(sys.argv[1]), Path(sys.argv[2]), make_chunker("function"), [make_retriever("bm25")],
                 graph=True, graph_worker=True)
except KeyboardInterrupt:
    print("interrupted", file=sys.stderr)
    sys.exit(130)
"""


def _gone(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` is gone (or a zombie nobody reaps) within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("how", ["SIGKILL", "SIGINT"])
def test_a_killed_or_interrupted_parent_leaves_no_child(
    tmp_path: Path, how: str, linked_snapshot: Callable[..., Path]
) -> None:
    """SIGKILL of the parent (or the OOM killer) takes the child with it; Ctrl-C to the process group gives the
    parent's one line, no traceback from the child, and no child left."""
    import signal
    import subprocess

    v1 = linked_snapshot(tmp_path / "v1")
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_CHILD, str(v1), str(tmp_path / "store")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    child = int(proc.stdout.readline())
    time.sleep(0.5)
    if how == "SIGKILL":
        os.kill(proc.pid, signal.SIGKILL)
    else:
        os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert _gone(child, 5.0)
    if how == "SIGINT":
        assert proc.returncode == 130 and err.strip() == "interrupted"


def test_a_cpu_quota_of_one_cpu_means_no_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cgroup's ``cpu.max`` (``docker --cpus``) counts like the affinity: 1 CPU of quota, no worker."""
    cgroup = tmp_path / "cgroup"
    cgroup.write_text("1:name=systemd:/\n0::/user.slice/build\n")
    group = tmp_path / "fs" / "user.slice" / "build"
    group.mkdir(parents=True)
    for text, cpus in (("100000 100000\n", 1.0), ("250000 100000\n", 2.5), ("max 100000\n", float("inf"))):
        (group / "cpu.max").write_text(text)
        assert graph_store._cgroup_cpus(tmp_path / "fs", cgroup) == cpus
    (group / "cpu.max").write_text("garbage\n")
    assert graph_store._cgroup_cpus(tmp_path / "fs", cgroup) == float("inf")
    cgroup.write_text("1:name=systemd:/\n")  # cgroup v1 only: no quota read
    assert graph_store._cgroup_cpus(tmp_path / "fs", cgroup) == float("inf")
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1})
    monkeypatch.setattr(graph_store, "_cgroup_cpus", lambda: 1.0)
    assert graph_worker_available() is False


def test_no_worker_when_a_copy_of_the_process_would_not_fit(tmp_path: Path) -> None:
    """The child may come to own a copy of the parent's resident memory: 800 MB resident against 2 GB available
    fits; against a cgroup limit with 500 MB left it does not (the OOM killer would take the build)."""
    proc, fs = tmp_path / "proc", tmp_path / "fs"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "status").write_text("Name:\tpython\nVmRSS:\t  819200 kB\n")
    (proc / "meminfo").write_text("MemTotal: 8000000 kB\nMemAvailable: 2048000 kB\n")
    (proc / "self" / "cgroup").write_text("0::/job\n")
    (fs / "job").mkdir(parents=True)
    (fs / "job" / "memory.max").write_text("max\n")
    assert graph_store._memory_for_a_child(proc, fs) is True
    (fs / "job" / "memory.max").write_text(f"{1_500_000_000}\n")
    (fs / "job" / "memory.current").write_text(f"{1_000_000_000}\n")
    assert graph_store._memory_for_a_child(proc, fs) is False
    (proc / "meminfo").write_text("MemAvailable: 409600 kB\n")
    (fs / "job" / "memory.max").write_text("max\n")
    assert graph_store._memory_for_a_child(proc, fs) is False


def test_one_child_builds_the_graphs_of_a_batch_and_keeps_the_pieces_of_the_snapshot_before(
    tmp_path: Path,
    store_tree: Callable[[Path], dict[str, bytes]],
    monkeypatch: pytest.MonkeyPatch,
    linked_snapshot: Callable[..., Path],
) -> None:
    """Three snapshots in a row (v1, v2 with beta edited, v1 with a new file calling gamma): one child answers all
    three (same pid, alive between builds), and the store equals the one built without the worker."""
    started = _record_starts(monkeypatch)
    snapshots = [linked_snapshot(tmp_path / "v1"), linked_snapshot(tmp_path / "v2", edited=True)]
    snapshots.append(linked_snapshot(tmp_path / "v3"))
    (snapshots[2] / "pkg" / "c.py").write_text("from pkg.b import gamma\n\n\ndef delta():\n    return gamma()\n")
    for snapshot in snapshots:
        _build(snapshot, tmp_path / "with", reuse=True, worker=True)
        _build(snapshot, tmp_path / "without", reuse=True, worker=False)
    workers = [w for w in started if w is not None]
    assert len(workers) == 3
    assert len({w.process.pid for w in workers}) == 1 and workers[0].process.is_alive()
    assert _same_store(store_tree(tmp_path / "with")) == _same_store(store_tree(tmp_path / "without"))


def test_the_request_carries_the_texts_of_the_files_to_compute_only(tmp_path: Path) -> None:
    """With reuse, only the files whose piece is not stored (and those the import resolver reads: ``go.mod``,
    files without chunks) travel with their text; their chunks' texts are cut from their lines again, except a
    chunk whose text is not that cut, which travels as it is. Without reuse every text travels."""
    from swe_explore.chunking.types import Chunk, SourceFile

    files = [
        SourceFile("a.py", "python", ["def f():", "    return 1"], 22),
        SourceFile("b.py", "python", ["x = 1", "", "y = 2"], 12),
        SourceFile("go.mod", "text", ["module example.com/m"], 20),
        SourceFile("empty.txt", "text", [], 0),
    ]
    chunks = [
        Chunk("a.py", 1, 2, "function", "f", "python", "def f():\n    return 1"),
        Chunk("b.py", 1, 1, "gap", "", "python", "x = 1"),
        Chunk("b.py", 2, 3, "gap", "", "python", "not the lines"),
    ]
    stored = {"a.py": b"piece", "b.py": None}
    digests = {"a.py": "da", "b.py": "db", "go.mod": "dg"}
    got_files, got_chunks, got_stored, got_digests, with_text = graph_store._unpack(
        graph_store._request(files, chunks, stored, digests)
    )
    assert with_text == frozenset({"b.py"})
    assert [f.lines for f in got_files] == [[], ["x = 1", "", "y = 2"], ["module example.com/m"], []]
    assert [c.text for c in got_chunks] == ["", "x = 1", "not the lines"]
    assert [(c.path, c.start, c.end, c.kind, c.symbol) for c in got_chunks] == [
        (c.path, c.start, c.end, c.kind, c.symbol) for c in chunks
    ]
    assert (got_stored, got_digests) == (stored, digests)
    all_files, all_chunks, _, _, everything = graph_store._unpack(graph_store._request(files, chunks, None, {}))
    assert everything is None
    assert [f.lines for f in all_files] == [f.lines for f in files]
    assert all_chunks == chunks


def test_the_bytes_to_send_count_the_files_whose_text_the_request_carries() -> None:
    """With reuse: b.py (its piece not stored, 12 bytes), go.mod (20) and empty.txt (0, no chunks); a.py's piece
    is stored. Without reuse: every file, 22 + 12 + 20 + 0."""
    from swe_explore.chunking.types import Chunk, SourceFile

    files = [
        SourceFile("a.py", "python", ["def f():", "    return 1"], 22),
        SourceFile("b.py", "python", ["x = 1", "", "y = 2"], 12),
        SourceFile("go.mod", "text", ["module example.com/m"], 20),
        SourceFile("empty.txt", "text", [], 0),
    ]
    chunks = [
        Chunk("a.py", 1, 2, "function", "f", "python", "def f():\n    return 1"),
        Chunk("b.py", 1, 3, "gap", "", "python", "x = 1\n\ny = 2"),
    ]
    digests = {"a.py": "da", "b.py": "db", "go.mod": "dg"}
    assert graph_store._texts_to_send(files, chunks, {"a.py": b"piece", "b.py": None}, digests) == 32
    assert graph_store._texts_to_send(files, chunks, {"a.py": b"piece", "b.py": b"piece"}, digests) == 20
    assert graph_store._texts_to_send(files, chunks, {"a.py": b"piece", "b.py": b"piece"}, {"a.py": "da"}) == 32
    assert graph_store._texts_to_send(files, chunks, None, {}) == 54


def test_a_build_that_would_send_most_texts_forks_a_new_child_instead(
    tmp_path: Path,
    store_tree: Callable[[Path], dict[str, bytes]],
    monkeypatch: pytest.MonkeyPatch,
    linked_snapshot: Callable[..., Path],
) -> None:
    """Without reuse every text would be sent, so each build forks a child that inherits them (two builds, two
    pids, the first stopped); with reuse and the share set to 0 the same; the stores equal those built without
    the worker."""
    started = _record_starts(monkeypatch)
    snapshots = [linked_snapshot(tmp_path / "v1"), linked_snapshot(tmp_path / "v2", edited=True)]
    for reuse in (False, True):
        if reuse:
            monkeypatch.setattr(graph_store, "SEND_SHARE", 0.0)
        started.clear()
        for snapshot in snapshots:
            _build(snapshot, tmp_path / f"with-{reuse}", reuse=reuse, worker=True)
            _build(snapshot, tmp_path / f"without-{reuse}", reuse=reuse, worker=False)
        first, second = (w for w in started if w is not None)
        assert first.process.pid != second.process.pid
        assert not first.process.is_alive() and second.process.is_alive()
        with_worker = _same_store(store_tree(tmp_path / f"with-{reuse}"))
        assert with_worker == _same_store(store_tree(tmp_path / f"without-{reuse}"))


def test_pieces_are_taken_from_the_snapshot_before_only_when_their_bytes_are_the_same() -> None:
    """The memo replaces decoding a stored piece whose payload is the one remembered (the same objects come back);
    another payload under the same digest is decoded, and a piece to compute without its text raises."""
    from swe_explore.chunking.types import Chunk, SourceFile
    from swe_explore.indexes.reuse import MissingTextError, PieceMemo, graph_names_compute

    files = [SourceFile("a.py", "python", ["import os", "def f():", "    return g()"], 40)]
    chunks = [
        Chunk("a.py", 1, 1, "header", "", "python", "import os"),
        Chunk("a.py", 2, 3, "function", "f", "python", "def f():\n    return g()"),
    ]
    memo: PieceMemo = {}
    names, imports, computed = graph_names_compute(chunks, {"a.py": None}, {"a.py": "d"}, files, memo)
    assert names[1] == (frozenset({"def", "f", "return", "g"}), frozenset())
    assert imports == {"a.py": (("import", "os"),)}
    [(digest, piece, rejected)] = computed
    assert (digest, rejected) == ("d", False) and set(memo) == {"d"}
    again, _, none = graph_names_compute(chunks, {"a.py": piece}, {"a.py": "d"}, files, memo)
    assert none == [] and again[1] is names[1]  # from the memo, not decoded
    other: PieceMemo = {"d": (b"another payload", 2, memo["d"][2])}
    decoded, _, _ = graph_names_compute(chunks, {"a.py": piece}, {"a.py": "d"}, files, other)
    assert decoded == names and decoded[1] is not names[1]
    with pytest.raises(MissingTextError):
        graph_names_compute(chunks, {"a.py": b"garbage"}, {"a.py": "d"}, files, {}, with_text=frozenset())
