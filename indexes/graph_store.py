"""The symbol graph kept in the index store, next to the chunk table it was built from.

:func:`_ensure_graph` builds and saves a snapshot's graph unless a graph of the current chunk table is stored;
:func:`open_graph` loads it and checks that it belongs to that table; :func:`graph_dir_for` says where it lives.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import multiprocessing
import os
import shutil
import signal
import sys
import threading
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swe_explore.chunking.registry import Chunker
from swe_explore.chunking.types import Chunk, SourceFile
from swe_explore.chunking.walk import WalkConfig
from swe_explore.indexes.build import building_lock, chunk_dir_for, chunks_with_text
from swe_explore.indexes.files import MANIFEST, CorruptIndexError, read_json
from swe_explore.indexes.graph import GRAPH_JSON, CorruptGraphError, SymbolGraph
from swe_explore.indexes.graph_build import ChunkNames, build_graph
from swe_explore.indexes.graph_imports import ImportSpecs
from swe_explore.indexes.store import ChunkTable, ReadOnlyStoreError, atomic_directory

if TYPE_CHECKING:
    from swe_explore.indexes.build import _Run

__all__ = [
    "GRAPH_DIR",
    "GraphWorker",
    "copy_graph_from_twin",
    "ensure_graph_in_run",
    "ensure_graph_once",
    "graph_dir_for",
    "graph_not_current",
    "graph_worker_available",
    "open_graph",
    "stored_fingerprint",
    "write_graph",
]

GRAPH_DIR = "graph"
#: How long :meth:`GraphWorker.finish` waits for a child that neither answers nor dies (plus 5 ms per chunk:
#: about 100 times what a graph takes) before building the graph itself; a stopped or deadlocked child then
#: costs a delay, not the build.
WORKER_WAIT_SECONDS = 120.0
#: A build whose files to send (those whose graph pieces the child computes) hold more than this share of the
#: snapshot's bytes forks a new child, which inherits them, instead of sending them: joining, pickling and piping
#: the texts of a whole astropy snapshot cost the parent about 0.3 s, a fork about 0.04 s of page copies
#: (``docs/benchmarks.md``, issue 21).
SEND_SHARE = 0.5


def graph_dir_for(store: Path, snapshot: str, chunker: Any, walk_config: Any) -> Path:
    """Where a snapshot's graph is stored: ``<store>/<snapshot>/<chunker>-<hash8>/graph``.

    :param store: index store root.
    :param snapshot: the snapshot's name in the store.
    :param chunker: the chunk strategy (the graph is built from its chunks).
    :param walk_config: the walking rules.
    :return: the directory (not checked).
    """
    return chunk_dir_for(store, snapshot, chunker, walk_config) / GRAPH_DIR


def stored_fingerprint(directory: Path) -> str | None:
    """The chunk table fingerprint a stored graph records, or ``None`` (no graph, unreadable ``graph.json``).

    :param directory: the graph directory.
    :return: 64 hex digits, or ``None``.
    """
    try:
        value = json.loads((directory / GRAPH_JSON).read_text(encoding="utf-8")).get("fingerprint")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def _ensure_graph(
    snapshot_dir: Path,
    store: Path,
    chunker: Any,
    walk_config: Any = None,
    rebuild: bool = False,
    snapshot_name: str | None = None,
) -> bool:
    """Build and save the snapshot's graph next to its chunk table unless a graph of that table is there.

    Call after :func:`swe_explore.indexes.build.ensure_index` with the same chunker: the graph is built from the
    chunk table's chunks (texts cut from the walked files) and records the table's fingerprint, so a rebuilt
    table makes the graph stale and it is rebuilt. The directory is written atomically.

    :param snapshot_dir: the snapshot.
    :param store: index store root.
    :param chunker: the chunk strategy of the index.
    :param walk_config: the walking rules (default ``WalkConfig()``).
    :param rebuild: rebuild even when current.
    :param snapshot_name: the snapshot's name in the store (default: the directory name).
    :return: whether the graph was built (``False``: reused).
    :raises FileNotFoundError: if the chunk table was never built.
    :raises CorruptIndexError: if the chunk table is broken.
    """
    from swe_explore.chunking.walk import WalkConfig, walk_snapshot
    from swe_explore.indexes.build import chunk_dir_for, chunks_with_text
    from swe_explore.indexes.files import MANIFEST, read_json
    from swe_explore.indexes.store import ChunkTable

    walk_config = walk_config or WalkConfig()
    cdir = chunk_dir_for(store, snapshot_name or Path(snapshot_dir).name, chunker, walk_config)
    if not (cdir / MANIFEST).is_file():
        raise FileNotFoundError(f"no chunk table at {cdir}; build the index first (ensure_index)")
    manifest = read_json(cdir / MANIFEST)
    table = ChunkTable.load(cdir, manifest["counts"]["chunks"], manifest.get("files"))
    gdir = cdir / GRAPH_DIR
    if not rebuild and stored_fingerprint(gdir) == table.fingerprint():
        return False
    files, _ = walk_snapshot(snapshot_dir, walk_config)
    write_graph(gdir, files, chunks_with_text(table, files))
    return True


def write_graph(
    directory: Path,
    files: Sequence[SourceFile],
    chunks: Sequence[Chunk],
    names: Sequence[ChunkNames] | None = None,
    imports: Mapping[str, ImportSpecs] | None = None,
) -> None:
    """Build the graph of the files and chunks (:func:`~indexes.graph_build.build_graph`) and write it to its
    directory atomically; the caller holds the index's lock.

    :param directory: the graph directory (``<chunker dir>/graph``).
    :param files: the snapshot's walked files.
    :param chunks: the chunk table's chunks, with text.
    :param names: each chunk's :func:`~indexes.graph_build.chunk_names`, if known.
    :param imports: path -> import specs of the files whose imports are known
        (:func:`~indexes.graph_build.build_graph`).
    """
    from swe_explore.indexes.store import atomic_directory

    graph = build_graph(files, chunks, names=names, imports=imports)
    with atomic_directory(directory) as tmp:
        graph.save(tmp)


def open_graph(
    snapshot_dir: Path, store: Path, chunker: Any, walk_config: Any = None, snapshot_name: str | None = None
) -> SymbolGraph:
    """Load a snapshot's graph and check that it belongs to the stored chunk table.

    :param snapshot_dir: the snapshot (only its name is used unless ``snapshot_name`` is given).
    :param store: index store root.
    :param chunker: the chunk strategy of the index.
    :param walk_config: the walking rules (default ``WalkConfig()``).
    :param snapshot_name: the snapshot's name in the store.
    :return: the graph.
    :raises FileNotFoundError: if the graph was never built.
    :raises CorruptGraphError: if a file is broken or the graph was built from another chunk table.
    """
    from swe_explore.chunking.walk import WalkConfig
    from swe_explore.indexes.files import MANIFEST, read_json

    walk_config = walk_config or WalkConfig()
    gdir = graph_dir_for(store, snapshot_name or Path(snapshot_dir).name, chunker, walk_config)
    if not (gdir / GRAPH_JSON).is_file():
        raise FileNotFoundError(
            f"no symbol graph at {gdir}; build it with ensure_graph_once (or scripts/index_repos.py)"
        )
    graph = SymbolGraph.load(gdir)
    table_files = read_json(gdir.parent / MANIFEST).get("counts", {})
    if graph.n_chunks != table_files.get("chunks", graph.n_chunks):
        raise CorruptGraphError(gdir / GRAPH_JSON, "built from another chunk table (stale graph); rebuild it")
    return graph


def ensure_graph_once(
    snapshot_dir: Path,
    store: Path,
    chunker: Chunker,
    walk_config: WalkConfig | None = None,
    rebuild: bool = False,
    snapshot_name: str | None = None,
) -> bool:
    """:func:`_ensure_graph` as :func:`~indexes.build.ensure_index` builds: checked first without a lock and without
    writing, then built under the index's lock, so concurrent builders build each snapshot's graph once.

    The graph lives in the chunker directory (``<chunker dir>/graph``) and is built from its chunk table, so it
    is built under that index's :class:`~indexes.store.IndexLock`: the chunk table cannot be replaced meanwhile,
    and :func:`~indexes.store.remove_abandoned_temporaries` (which a lock holder runs on the chunker directory)
    never meets a live builder's graph temporary. A second builder waits, then :func:`_ensure_graph`
    finds the graph the first one wrote and reuses it. A current graph (it records the fingerprint of the chunk
    table it was built from) is reused without taking the lock, so a read-only store is fine.

    :param snapshot_dir: the snapshot.
    :param store: index store root.
    :param chunker: the chunk strategy of the index (call after :func:`ensure_index` with the same one).
    :param walk_config: the walking rules (default ``WalkConfig()``).
    :param rebuild: rebuild even when current.
    :param snapshot_name: the snapshot's name in the store (default: the directory name).
    :return: whether the graph was built (``False``: reused).
    :raises FileNotFoundError: if the chunk table was never built.
    :raises CorruptIndexError: if the chunk table is broken.
    :raises ReadOnlyStoreError: naming the graph directory, if the graph must be built and the store cannot be
        written.
    """
    walk_config = walk_config or WalkConfig()
    cdir = chunk_dir_for(store, snapshot_name or Path(snapshot_dir).name, chunker, walk_config)
    broken: CorruptIndexError | None = None
    if not rebuild and (cdir / MANIFEST).is_file() and (cdir / GRAPH_DIR / GRAPH_JSON).is_file():
        try:
            manifest = read_json(cdir / MANIFEST)
            table = ChunkTable.load(cdir, manifest["counts"]["chunks"], manifest.get("files"))
            with contextlib.suppress(CorruptIndexError):  # an unreadable graph is rebuilt below
                if read_json(cdir / GRAPH_DIR / GRAPH_JSON).get("fingerprint") == table.fingerprint():
                    return False
        except CorruptIndexError as exc:  # decided under the lock (a builder may be replacing the table)
            broken = exc
    try:
        with building_lock(cdir, cdir / GRAPH_DIR):
            return _ensure_graph(Path(snapshot_dir), Path(store), chunker, walk_config, rebuild, snapshot_name)
    except ReadOnlyStoreError:
        if broken is not None:
            raise broken from None
        raise


def graph_not_current(run: _Run) -> Path | None:
    """The lock-free check of the graph in :func:`~indexes.build.ensure_index`, once everything else was found
    current: the graph directory if its graph was not built from the current chunk table, else ``None`` (then
    listed as reused).

    :param run: the call's shared state (``run.table`` set).
    :return: the graph directory, or ``None``.
    """
    gdir = run.cdir / GRAPH_DIR
    if run.table is None or stored_fingerprint(gdir) != run.table.fingerprint():
        return gdir
    run.report.reused.append("graph")
    return None


def ensure_graph_in_run(
    run: _Run, table: ChunkTable, fresh: list[Chunk] | None, chunker_config: Mapping[str, Any]
) -> None:
    """The last step of :func:`~indexes.build.ensure_index` with ``graph``: build and save the symbol graph
    unless the stored one was built from this chunk table; from the walked files and the chunks with text of
    this call (no second walk). With reuse, copied from the twin when there is one, and each chunk's
    identifiers taken from the cache (:func:`indexes.reuse.graph_names_reusing`).

    :param run: the call's shared state.
    :param table: the chunk table.
    :param fresh: the chunks with text, if this call has them (else cut from the walked files).
    :param chunker_config: the config of the chunker that cut the chunks (a file's cached names are per chunking).
    """
    gdir = run.cdir / GRAPH_DIR
    if not run.rebuild and stored_fingerprint(gdir) == table.fingerprint():
        run.report.reused.append("graph")
        return
    t0 = time.perf_counter()
    if run.twin is not None and copy_graph_from_twin(run.twin / GRAPH_DIR, gdir, table):
        run.report.built.append("graph")
        run.report.seconds["graph"] = time.perf_counter() - t0
        return
    files, _, _ = run.walk()
    chunks = fresh if fresh is not None else chunks_with_text(table, files)
    names = imports = None
    if run.cache is not None:
        from swe_explore.indexes.reuse import graph_names_reusing

        names, imports = graph_names_reusing(chunks, run.cache, run.digests(), chunker_config, files)
    write_graph(gdir, files, chunks, names, imports)
    run.report.built.append("graph")
    run.report.seconds["graph"] = time.perf_counter() - t0


def graph_worker_available() -> bool:
    """Whether a :class:`GraphWorker` can run here: Linux (``fork`` start method) and at least two CPUs this
    process may use, by its affinity (``os.sched_getaffinity``) and by its cgroup's CPU quota (``cpu.max``, as
    ``docker --cpus`` sets it).

    :return: ``True`` if a graph worker would run next to the build instead of after it.
    """
    if not sys.platform.startswith("linux") or "fork" not in multiprocessing.get_all_start_methods():
        return False
    return len(os.sched_getaffinity(0)) >= 2 and _cgroup_cpus() >= 2


def _cgroup_dir(root: Path, cgroup: Path) -> Path:
    """This process's cgroup (v2) directory.

    :param root: the cgroup file system's mount point.
    :param cgroup: the process's cgroup list (its ``0::<path>`` line names the v2 group).
    :return: the directory.
    :raises OSError: if the list cannot be read.
    :raises StopIteration: without cgroup v2 (no ``0::`` line).
    """
    return root / next(line[3:] for line in cgroup.read_text().splitlines() if line.startswith("0::")).lstrip("/")


def _cgroup_cpus(root: Path = Path("/sys/fs/cgroup"), cgroup: Path = Path("/proc/self/cgroup")) -> float:
    """The CPUs this process's cgroup (v2) may use by its quota: ``cpu.max`` quota / period.

    :param root: the cgroup file system's mount point.
    :param cgroup: the process's cgroup list (:func:`_cgroup_dir`).
    :return: CPUs (a float); ``inf`` without a quota, without cgroup v2, or when it cannot be read.
    """
    try:
        quota, period = (_cgroup_dir(root, cgroup) / "cpu.max").read_text().split()
        return float("inf") if quota == "max" else int(quota) / int(period)
    except (OSError, StopIteration, ValueError):
        return float("inf")


def _memory_for_a_child(proc: Path = Path("/proc"), root: Path = Path("/sys/fs/cgroup")) -> bool:
    """Whether a forked copy of this process fits in the memory left: its resident size (what the child could come
    to own, copy-on-write) at most the memory available (``MemAvailable``, and under a cgroup v2 memory limit
    ``memory.max`` minus ``memory.current``). With the worker, parent and child together hold about 1.3 times the
    memory of a build without it (``docs/benchmarks.md``).

    :param proc: the proc file system's mount point.
    :param root: the cgroup file system's mount point.
    :return: ``True`` if it fits, or if the figures cannot be read.
    """
    try:
        rss = int((proc / "self" / "status").read_text().split("VmRSS:", 1)[1].split()[0]) * 1024
        available = int((proc / "meminfo").read_text().split("MemAvailable:", 1)[1].split()[0]) * 1024
    except (OSError, IndexError, ValueError):
        return True
    try:
        group = _cgroup_dir(root, proc / "self" / "cgroup")
        limit = (group / "memory.max").read_text().strip()
        if limit != "max":
            available = min(available, int(limit) - int((group / "memory.current").read_text()))
    except (OSError, StopIteration, ValueError):
        pass
    return rss <= available


class GraphWorker:
    """The symbol graph of :func:`ensure_graph_in_run` computed in a child process while the parent builds the
    retrievers, on a second CPU.

    The child is forked once per thread, at the first graph (whose inputs it inherits, copy-on-write), and then
    builds one snapshot's graph after another (:class:`_Service`): each later build sends it the walked files, the
    chunks and the cache pieces the parent looked up
    (:func:`~indexes.reuse.graph_names_lookup`), with the text only of the files whose pieces are to be computed
    (and of the few the import resolver reads; a build whose texts to send hold more than :data:`SEND_SHARE` of the
    snapshot's bytes, as every build without reuse, forks a new child that inherits them); it runs the computing
    steps only
    (:func:`~indexes.reuse.graph_names_compute`, taking the pieces of the snapshot before from memory when their
    bytes are the same, and :func:`~indexes.graph_build.build_graph`) and sends back the graph and the new cache
    pieces. The parent saves the graph and stores the pieces, as :func:`ensure_graph_in_run` does, so the store's
    files are the same bytes (``tests/test_graph_worker.py``). If the child fails, dies or does not answer, the
    parent builds the graph itself. A child forked per snapshot cost about 40K page copies a snapshot in the
    two processes (``docs/benchmarks.md``, issue 21); the build's CPU time is reported with the child's
    (``graph_worker_cpu``), and its wall time shrinks by the graph step when a second CPU is free.

    Use :meth:`start`, then :meth:`finish` (under the same index lock), and :meth:`close` in a ``finally``.
    """

    def __init__(self, run: _Run, chunks: Sequence[Chunk], lookup: Any, started: float) -> None:
        self.run, self.chunks, self.lookup = run, chunks, lookup
        files = run.walk()[0]
        digests = run.digests() if lookup is not None else {}
        stored = lookup.stored if lookup is not None else None
        refork = _texts_to_send(files, chunks, stored, digests) > SEND_SHARE * sum(f.n_bytes for f in files)
        self.service = _service((files, chunks, stored, digests, None), refork)
        self.process, self.receiver = self.service.process, self.service.conn
        self.pending = True
        if not self.service.inherited:  # a child forked for this build already has it, copy-on-write
            try:
                self.service.conn.send(_request(files, chunks, stored, digests))
            except OSError:  # the child is gone: finish builds the graph here
                self.service.stop()
        self.service.inherited = False
        self.seconds = time.perf_counter() - started

    @classmethod
    def start(
        cls, run: _Run, table: ChunkTable, fresh: list[Chunk] | None, chunker_config: Mapping[str, Any]
    ) -> GraphWorker | None:
        """Send the graph of ``table`` to the child, unless no graph is to be built or one is to be copied from a
        twin (:func:`ensure_graph_in_run` then does that at once).

        :param run: the call's shared state.
        :param table: the chunk table.
        :param fresh: the chunks with text, if the call has them (else cut from the walked files).
        :param chunker_config: the config of the chunker that cut the chunks.
        :return: the worker, or ``None``.
        """
        gdir = run.cdir / GRAPH_DIR
        if run.twin is not None or (not run.rebuild and stored_fingerprint(gdir) == table.fingerprint()):
            return None
        if "fork" not in multiprocessing.get_all_start_methods() or multiprocessing.current_process().daemon:
            return None  # no fork here, or a daemonic worker process, which may not have children
        if not _memory_for_a_child():
            return None
        t0 = time.perf_counter()
        files, _, _ = run.walk()
        chunks = fresh if fresh is not None else chunks_with_text(table, files)
        lookup = None
        if run.cache is not None:
            from swe_explore.indexes.reuse import graph_names_lookup

            lookup = graph_names_lookup(chunks, run.cache, run.digests(), chunker_config)
        return cls(run, chunks, lookup, t0)

    def finish(self) -> None:
        """Receive the graph, save it and store the new cache pieces; built here instead if the child failed.
        Records ``graph`` (the parent's seconds: sending, waiting, saving), ``graph_worker`` (the child's
        seconds) and ``graph_worker_cpu`` (its CPU seconds) in the run's report."""
        t0 = time.perf_counter()
        result = None
        limit = t0 + WORKER_WAIT_SECONDS + 0.005 * len(self.chunks)  # then built here
        try:
            while not self.receiver.poll(0.5):
                if not self.process.is_alive() or time.perf_counter() > limit:
                    break
            else:
                result = self.receiver.recv()
                self.pending = False
        except (EOFError, OSError):
            pass
        finally:
            self.close()
        gdir = self.run.cdir / GRAPH_DIR
        if isinstance(result, tuple) and len(result) == 5 and result[0] == "ok":
            _, graph, computed, child_seconds, child_cpu = result
            if self.lookup is not None:
                self.lookup.store(computed)
            with atomic_directory(gdir) as tmp:
                graph.save(tmp)
            self.run.report.seconds["graph_worker"] = child_seconds
            self.run.report.seconds["graph_worker_cpu"] = child_cpu
        else:  # the child failed: what it would have done, here
            names = imports = None
            files = self.run.walk()[0]
            if self.lookup is not None:
                from swe_explore.indexes.reuse import graph_names_compute

                names, imports, computed = graph_names_compute(
                    self.chunks, self.lookup.stored, self.run.digests(), files
                )
                self.lookup.store(computed)
            write_graph(gdir, files, self.chunks, names, imports)
        self.run.report.built.append("graph")
        self.run.report.seconds["graph"] = self.seconds + time.perf_counter() - t0

    def close(self) -> None:
        """Stop the child if its answer was not received (interrupted, failed or silent), so that no answer is
        left for the next build (idempotent); a child that answered stays for the next snapshot."""
        if self.pending:
            self.service.stop()
            self.pending = False


def _sent_paths(
    files: Sequence[SourceFile],
    chunks: Sequence[Chunk],
    stored: Mapping[str, bytes | None] | None,
    digests: Mapping[str, str],
) -> tuple[frozenset[str] | None, set[str]]:
    """Which texts :func:`_request` sends: the files whose pieces the child computes (those not stored, all of
    them without reuse, and those without a digest), and those the import resolver reads (``go.mod``, files
    without chunks).

    :param files: the walked files.
    :param chunks: the chunks with text.
    :param stored: the stored pieces by path, ``None`` without reuse.
    :param digests: path -> file digest.
    :return: ``(paths whose chunks carry their text, or None for all; paths whose whole text is sent)``.
    """
    if stored is None:
        return None, {f.path for f in files}
    chunked = {c.path for c in chunks}
    with_text = frozenset(p for p in chunked if p not in digests or stored.get(p) is None)
    return with_text, set(with_text) | {f.path for f in files if f.path not in chunked or f.path.endswith("go.mod")}


def _texts_to_send(
    files: Sequence[SourceFile],
    chunks: Sequence[Chunk],
    stored: Mapping[str, bytes | None] | None,
    digests: Mapping[str, str],
) -> int:
    """The bytes on disk of the files whose text :func:`_request` would send (an estimate of its size).

    :param files: the walked files.
    :param chunks: the chunks with text.
    :param stored: the stored pieces by path, ``None`` without reuse.
    :param digests: path -> file digest.
    :return: bytes (the files' ``n_bytes``).
    """
    whole = _sent_paths(files, chunks, stored, digests)[1]
    return sum(f.n_bytes for f in files if f.path in whole)


def _request(
    files: Sequence[SourceFile],
    chunks: Sequence[Chunk],
    stored: Mapping[str, bytes | None] | None,
    digests: Mapping[str, str],
) -> tuple[Any, ...]:
    """What a :class:`GraphWorker` sends its child for one snapshot (:func:`_unpack` reads it).

    Texts go only for the files of :func:`_sent_paths`: each file as one string (its lines joined by ``\\n``,
    which no line holds; ``None`` for no line), the child cutting the chunks' texts from its lines as
    :func:`~indexes.build.chunks_with_text` does (a chunk whose text is not that cut is sent as it is). The chunks
    go as columns: pickling 8,800 chunk objects takes several times longer.

    :param files: the walked files.
    :param chunks: the chunks with text.
    :param stored: the stored pieces by path (:attr:`~indexes.reuse.GraphNamesLookup.stored`), ``None`` without
        reuse.
    :param digests: path -> file digest.
    :return: ``(file columns, chunk columns, texts of chunks not cut from their lines, stored, digests, paths whose
        chunks carry their text or None for all)``.
    """
    with_text, whole = _sent_paths(files, chunks, stored, digests)
    file_columns = [
        (f.path, f.language, "\n".join(f.lines) if f.path in whole and f.lines else None, f.n_bytes) for f in files
    ]
    lines = {f.path: f.lines for f in files}
    own_texts = {
        i: c.text
        for i, c in enumerate(chunks)
        if (with_text is None or c.path in with_text) and c.text != "\n".join(lines[c.path][c.start - 1 : c.end])
    }
    chunk_columns = tuple(
        [getattr(c, name) for c in chunks] for name in ("path", "start", "end", "kind", "symbol", "language")
    )
    return file_columns, chunk_columns, own_texts, stored, dict(digests), with_text


def _unpack(request: tuple[Any, ...]) -> tuple[list[SourceFile], list[Chunk], Any, Any, Any]:
    """The files, chunks (with text where sent), stored pieces, digests and texts' paths of a :func:`_request`."""
    file_columns, chunk_columns, own_texts, stored, digests, with_text = request
    files = [
        SourceFile(path, language, text.split("\n") if text is not None else [], n_bytes)
        for path, language, text, n_bytes in file_columns
    ]
    lines = {f.path: f.lines for f in files}
    chunks = []
    for i, (path, start, end, kind, symbol, language) in enumerate(zip(*chunk_columns, strict=True)):
        text = ""
        if with_text is None or path in with_text:
            text = own_texts[i] if i in own_texts else "\n".join(lines[path][start - 1 : end])
        chunks.append(Chunk(path, start, end, kind, symbol, language, text))
    return files, chunks, stored, digests, with_text


class _Service:
    """A :class:`GraphWorker`'s child process, kept for the thread's later snapshots: forked with a pipe, it reads
    one :func:`_request` at a time and answers each (:func:`_serve`). It is forked again when it died, was stopped,
    or the functions it would run were replaced (tests)."""

    def __init__(self, first: tuple[Any, ...]) -> None:
        context = multiprocessing.get_context("fork")
        self.conn, child_end = context.Pipe()
        self.runs = (_graph_child, build_graph)
        self.inherited = True  # the first request is the fork's: nothing to send or pickle
        self.process = context.Process(
            target=_serve, args=(child_end, self.conn, os.getpid(), first), daemon=True, name="graph-worker"
        )
        with warnings.catch_warnings():  # Python 3.12+ warns of fork() with threads alive (tqdm's monitor): the
            warnings.filterwarnings("ignore", "This process .* is multi-threaded", DeprecationWarning)
            self.process.start()  # child takes no lock another thread could hold (re, numpy, pickle only)
        child_end.close()

    def usable(self) -> bool:
        """Whether it still runs, with the functions it would run now."""
        return self.process.is_alive() and self.runs == (_graph_child, build_graph) and not self.conn.closed

    def stop(self) -> None:
        """Stop the process and close the pipe (idempotent)."""
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


_SERVICES = threading.local()


def _service(first: tuple[Any, ...], refork: bool = False) -> _Service:
    """This thread's graph worker process, forked now if it has none that is usable (or if ``refork``).

    :param first: the arguments of :func:`_graph_child` after its first two (files, chunks with text, stored
        pieces, digests, ``None``), which a process forked now answers first (its ``inherited`` is then ``True``).
    :param refork: stop a running process and fork a new one, which inherits ``first`` instead of being sent it
        (:data:`SEND_SHARE`).
    :return: the process.
    """
    service: _Service | None = getattr(_SERVICES, "service", None)
    if service is None or not service.usable() or refork:
        if service is not None:
            service.stop()
        service = _SERVICES.service = _Service(first)
    return service


def _serve(conn: Any, parent_end: Any, parent: int, first: tuple[Any, ...]) -> None:
    """The body of a :class:`_Service`: answer the request it was forked with (``first``, inherited), then each
    request from the pipe, with :func:`_graph_child`, until the pipe closes.

    It dies with its parent (``PR_SET_PDEATHSIG``: a parent killed by SIGKILL or the OOM killer leaves no child
    holding memory and its output), leaves Ctrl-C to the parent (which stops it: one line, no traceback), and
    closes the parent's end of the pipe, so that it sees the end when the parent closes it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)
    parent_end.close()
    memo: dict[str, Any] = {}
    _graph_child(conn, memo, *first)
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        _graph_child(conn, memo, *_unpack(request))


def _graph_child(
    sender: Any,
    memo: dict[str, Any],
    files: Sequence[SourceFile],
    chunks: Sequence[Chunk],
    stored: Mapping[str, bytes | None] | None,
    digests: Mapping[str, str],
    with_text: frozenset[str] | None,
) -> None:
    """One request of a :class:`_Service`: compute the names and the graph, send ``("ok", graph, new pieces,
    seconds, CPU seconds)`` or ``("error", message)`` (a piece to compute whose text was not sent is one)."""
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        names: list[ChunkNames] | None = None
        imports: dict[str, ImportSpecs] | None = None
        computed: list[tuple[str, bytes, bool]] = []
        if stored is not None:
            from swe_explore.indexes.reuse import graph_names_compute

            names, imports, computed = graph_names_compute(chunks, stored, digests, files, memo, with_text)
        graph = build_graph(files, chunks, names=names, imports=imports)
        sender.send(("ok", graph, computed, time.perf_counter() - t0, time.process_time() - c0))
    except Exception as exc:  # the parent builds the graph itself
        with contextlib.suppress(OSError):
            sender.send(("error", f"{type(exc).__name__}: {exc}"))


def _die_with_parent(parent: int) -> None:
    """Ask Linux to send this process SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG)``), and exit now if
    the parent is already gone (it died before the request).

    :param parent: the parent's pid, taken before the fork.
    """
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)


def copy_graph_from_twin(source: Path, gdir: Path, table: ChunkTable) -> bool:
    """Save the graph by copying the twin's (:func:`indexes.twin.copy_table_from_twin`) when it was built from
    the same chunk table and its files load (:meth:`~indexes.graph.SymbolGraph.load` checks them).

    :param source: the twin's graph directory.
    :param gdir: the graph directory to write.
    :param table: the chunk table.
    :return: whether it was copied.
    """
    from swe_explore.indexes.graph import CorruptGraphError, SymbolGraph

    if stored_fingerprint(source) != table.fingerprint():
        return False
    try:
        SymbolGraph.load(source)
    except (CorruptGraphError, CorruptIndexError, OSError, ValueError):
        return False
    try:
        with atomic_directory(gdir) as tmp:
            for path in sorted(source.iterdir()):
                shutil.copyfile(path, tmp / path.name)
    except FileNotFoundError:  # the twin was removed while it was copied: build the graph instead
        return False
    return True
