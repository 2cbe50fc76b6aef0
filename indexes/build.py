"""Build, check and open the persisted index of a snapshot: walk → chunk → retriever → store.

:func:`ensure_index` is what ``scripts/index_repos.py`` and ``scripts/run_baselines.py`` call: it builds only
what is missing or stale, so re-running it on an unchanged snapshot does no chunking and no indexing. Whether an
index is current is decided by content: the snapshot is walked and its fingerprint
(:func:`~indexes.store.snapshot_fingerprint`, over every indexed file's path and lines) compared with the one the
chunk table was built from, so an edit is seen whatever its size and mtime (a same-size edit with the mtime
restored, as ``git checkout``, ``rsync -t`` and archive extraction leave it, included); that walk is what the
check costs (warm page cache: 0.25 s for pylint-dev__pylint-8898's 3,212 files, 0.04 s for psf__requests-2317). Its
steps:
:func:`_current_table` (the chunk table, when current), :func:`_first_not_current` (the lock-free check that
everything asked for is current), then under the lock :func:`_load_or_build_table` (the chunk table),
:func:`_plan_retrievers` (the retriever directories, composite parts included), :func:`_build_missing` (build and
save what is not current) and :func:`_link_composites` (save a hybrid as links to its parts), each retriever
directory written by :func:`_write_retriever_dir`. :func:`open_index` loads a built index for querying.

Speed (``docs/benchmarks.md``): the retrievers to build are built in one
:func:`retrievers.features.build_retrievers` call (BM25 and TF-IDF share one tokenization, Potion and FAISS one
embedding); a hybrid is saved as links to its parts; a retriever added to a current chunk table gets its chunk
texts cut from the walked files (:func:`chunks_with_text`, 0.05 s on xarray's 160K lines; the chunker: 0.6 s).

Concurrency and read-only stores: :func:`ensure_index` first checks without a lock and without writing (readers
take no lock: renames are atomic and every file is checked), so querying a fully built store needs no write
access. When something must be built it takes the index's :class:`~indexes.store.IndexLock` and checks again,
holding the lock to its last write, so concurrent builders of one index build it once (the others wait, then
reuse it) and only temporaries that dead builders left are removed, at the next build of their index
(:func:`~indexes.store.remove_abandoned_temporaries`). A store that cannot be written then gives
:class:`~indexes.store.ReadOnlyStoreError` naming the missing index (the graph: ``ensure_graph_once``).

Reuse (``reuse=True``): the chunks, term counts, vectors and graph names of every file already processed under
the same configuration, in any snapshot, come from the store's content-addressed cache (:mod:`indexes.cache`,
:mod:`indexes.reuse`), and the index assembled from them is byte-identical to one built without it. A snapshot
whose content is already indexed in the store under the same config and code is copied instead: its chunk table,
retriever directories and graph, each checked first (:func:`indexes.twin.copy_table_from_twin`). The cache is
written under the index's lock. Measured figures: ``docs/benchmarks.md`` ("Index speed").
"""

from __future__ import annotations

import contextlib
import errno
import shutil
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_explore.chunking.registry import Chunker, chunk_files
from swe_explore.chunking.types import Chunk, SourceFile
from swe_explore.chunking.walk import WalkConfig, walk_snapshot
from swe_explore.indexes.cache import TWIN_KIND, ContentCache, file_digest
from swe_explore.indexes.collector import paused_gc
from swe_explore.indexes.files import (
    FORMAT_VERSION,
    MANIFEST,
    META_FILE,
    CorruptIndexError,
    StaleIndexError,
    check_config,
    check_meta,
    file_records,
    file_sha256,
    jsonable,
    load_retriever,
    save_retriever,
    write_json,
)
from swe_explore.indexes.reuse import CachingChunker, build_retrievers_reusing
from swe_explore.indexes.store import (
    CHUNK_FILES,
    ChunkTable,
    IndexLock,
    ReadOnlyStoreError,
    atomic_directory,
    check_manifest,
    check_snapshot_name,
    config_key,
    now_iso,
    remove_abandoned_temporaries,
    snapshot_fingerprint,
    temporary_path,
    toolkit_version,
    write_retriever_manifest,
)
from swe_explore.retrievers.base import Retriever
from swe_explore.retrievers.features import build_retrievers


@dataclass
class BuildReport:
    """What :func:`ensure_index` did for one snapshot.

    :param snapshot: snapshot name (its directory name, normally the ``instance_id``).
    :param chunk_dir: the chunker directory of the index.
    :param built: ``"chunks"`` and/or retriever names that were (re)built; empty when all was up to date.
    :param reused: ``"chunks"`` and/or retriever names whose saved index was found current and reused.
    :param counts: files, lines and chunks of the snapshot.
    :param seconds: wall-clock seconds per step: ``walk``, ``chunk`` (or ``texts``), the shared features
        (``term_counts``, ``vectors``; with reuse, their cache lookups included), each retriever's own build and
        save, by name, and with reuse ``cache_write`` (writing the new cache entries).
    :param cache: with ``reuse``, the content-addressed cache's lookups per kind (:class:`~indexes.cache.CacheStats`
        as a dict: ``hits``, ``misses``, ``corrupt``, ``write_errors``, ``corrupt_indexes``), counted in files for
        ``chunks`` and ``graph_names`` and in chunks for ``term_counts`` and ``vectors``; empty without reuse or
        when nothing needed building.
    :param skipped: files the walk skipped, by reason (``too_large``, ``binary``, ...; the index manifest's walk
        statistics).
    """

    snapshot: str
    chunk_dir: Path
    built: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    cache: dict[str, dict[str, int]] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)


@dataclass
class LoadedIndex:
    """A snapshot's chunk table plus one retriever, ready to query.

    :param chunks: chunks in index order (no text).
    :param file_lines: line count per indexed path.
    :param retriever: the loaded retriever; its hit ``i`` is ``chunks[i]``.
    :param manifest: the chunker directory's manifest.
    """

    chunks: list[Chunk]
    file_lines: dict[str, int]
    retriever: Retriever
    manifest: dict[str, Any]


def chunk_dir_for(store: Path, snapshot: str, chunker: Chunker, walk_config: WalkConfig) -> Path:
    """The chunker directory of a snapshot's index under the store root."""
    key = config_key(chunker.name, {"chunker": chunker.config(), "walk": walk_config.to_dict()})
    return Path(store) / check_snapshot_name(snapshot) / key


def retriever_dir_for(chunk_dir: Path, retriever: Retriever) -> Path:
    """The retriever directory inside a chunker directory."""
    return chunk_dir / "retrievers" / config_key(retriever.name, retriever.config())


def _chunk_expectations(chunker: Chunker, walk_config: WalkConfig) -> dict[str, Any]:
    return {
        "format_version": FORMAT_VERSION,
        "chunker": {"name": chunker.name, "config": chunker.config()},
        "walk": walk_config.to_dict(),
    }


def _retriever_expectations(retriever: Retriever, table_fingerprint: str, n_chunks: int) -> dict[str, Any]:
    return {
        "format_version": FORMAT_VERSION,
        "retriever": {"name": retriever.name, "config": retriever.config()},
        "chunks_fingerprint": table_fingerprint,
        "n_docs": n_chunks,
    }


def _link_expectations(cdir: Path, parts: Sequence[Retriever]) -> list[dict[str, str]]:
    """What a composite retriever's manifest must record about its parts: directory and ``retriever.json`` hash.

    :param cdir: the chunker directory.
    :param parts: the composite's parts.
    :return: ``[{"retriever": directory name, "meta_sha256": hex}, ...]``.
    :raises FileNotFoundError: if a part's index was never built.
    """
    out = []
    for part in parts:
        rdir = retriever_dir_for(cdir, part)
        meta = rdir / "data" / META_FILE
        if not meta.is_file():
            raise FileNotFoundError(f"no index at {rdir}; build it with scripts/index_repos.py")
        out.append({"retriever": rdir.name, "meta_sha256": file_sha256(meta)})
    return out


def _check_retriever_dir(
    rdir: Path, retriever: Retriever, manifest: dict[str, Any], verify_files: bool = True
) -> dict[str, Any]:
    """Check that a retriever directory's ``data/`` is the index its (already checked) manifest describes.

    With :func:`indexes.files.check_meta`, each raising :class:`CorruptIndexError` naming the file:
    ``data/retriever.json`` is readable and names this retriever; its config equals ``retriever.config()`` (the
    one the manifest and the directory name stand for: a hand-edited value such as BM25's ``k1`` would otherwise
    be used silently); its ``n_docs`` equals the manifest's; its SHA-256 equals the manifest's ``meta_sha256``
    (when recorded); and, with ``verify_files``, every data file it lists exists with its recorded size and
    SHA-256. Measured on pydata__xarray-7393 (``outputs/final/indexes_dev``): at most 12 ms per retriever (the
    7.5 MB Potion and FAISS files), 0.1 ms without ``verify_files``.

    :param rdir: the retriever directory (holding ``manifest.json`` and ``data/``).
    :param retriever: an unbuilt retriever with the wanted config.
    :param manifest: the retriever directory's manifest.
    :param verify_files: also hash the data files (:func:`indexes.files.load_retriever` does it anyway, so
        :func:`open_index` skips it here).
    :return: the ``retriever.json`` content.
    :raises CorruptIndexError: naming the broken file.
    """
    return check_meta(
        rdir / "data",
        str(rdir / MANIFEST),
        retriever.name,
        retriever.config(),
        manifest.get("n_docs"),
        manifest.get("meta_sha256"),
        verify_files,
    )


def _is_current(rdir: Path, retriever: Retriever, expected: dict[str, Any], rebuild: bool) -> bool:
    """Whether a saved retriever index is what is asked for and intact (never, when rebuilding).

    A missing directory or a manifest of another config or chunk table means "build it" (``False``); a broken
    one is an error, so a damaged store is never reported as up to date (:func:`_check_retriever_dir`).

    :param rdir: the retriever directory.
    :param retriever: an unbuilt retriever with the wanted config.
    :param expected: the values its manifest must hold.
    :param rebuild: the caller's ``rebuild`` flag.
    :return: ``True`` if it exists, matches and its files are intact.
    :raises CorruptIndexError: naming the file, if the manifest is unreadable or a data file is missing,
        truncated or edited (and ``rebuild`` is not set).
    """
    manifest_path = rdir / MANIFEST
    if rebuild or not manifest_path.exists():
        return False
    try:
        manifest = check_manifest(manifest_path, expected)
    except StaleIndexError:
        return False
    _check_retriever_dir(rdir, retriever, manifest)
    return True


def chunks_with_text(table: ChunkTable, files: Sequence[SourceFile]) -> list[Chunk]:
    """The table's chunks with their text, cut from the walked files (``Chunk.text`` is lines start..end).

    Re-reading the lines is much cheaper than chunking again (0.05 s, walk included, instead of 0.6 s for the
    160K lines of pydata__xarray-7393), so a retriever added to an up-to-date index does not re-run the chunker.
    The caller checks that the files are the ones the table was made from (same snapshot fingerprint).

    :param table: the chunk table.
    :param files: the snapshot's walked files.
    :return: chunks equal to what the chunker produced, text included.
    :raises StaleIndexError: if a chunk's file or lines are not among the files (the snapshot changed).
    """
    lines = {f.path: f.lines for f in files}
    out = []
    for c in table.chunks:
        file_lines = lines.get(c.path)
        if file_lines is None or c.end > len(file_lines):
            raise StaleIndexError(
                c.path, f"chunk {c.location} is not in the walked snapshot; rerun with --rebuild to rebuild it"
            )
        text = "\n".join(file_lines[c.start - 1 : c.end])
        out.append(Chunk(c.path, c.start, c.end, c.kind, c.symbol, c.language, text))
    return out


def ensure_index(
    snapshot_dir: Path,
    store: Path,
    chunker: Chunker,
    retrievers: Sequence[Retriever],
    walk_config: WalkConfig | None = None,
    rebuild: bool = False,
    snapshot_name: str | None = None,
    reuse: bool = False,
    graph: bool = False,
    graph_worker: bool = False,
) -> BuildReport:
    """Make sure the snapshot's chunk table and each retriever's index exist and are current; build what is not.

    Stale parts (other snapshot content, chunker/walk config or format version) are rebuilt; the snapshot's
    content is compared, not its mtimes (the module docstring). A corrupt part is an error unless ``rebuild`` is
    set. "Up to date" is checked for real: the chunk table's and every reused retriever's files are compared with
    their recorded sizes and SHA-256 (:func:`_check_retriever_dir`; about 30 ms for the five retrievers of
    pydata__xarray-7393), so a truncated, deleted or edited file raises :class:`CorruptIndexError` naming it.

    Shared features are computed once (the module docstring). A composite retriever (hybrid: its ``parts()`` are
    not empty) gets its parts built in their own directories and is saved as links to them; its manifest records
    each part's ``retriever.json`` hash, so a rebuilt part makes the hybrid stale, and it is re-linked.

    Everything is first checked without a lock and without writing, so a fully built store is queried even when
    it is read-only. If something must be built, the index's :class:`~indexes.store.IndexLock` is taken and held
    to the last write: a concurrent call for the same index (same store, snapshot name, chunker and walk config)
    waits, then finds the index current and reuses it; on taking the lock, temporaries a killed builder of this
    index left are removed. With ``reuse``, what each file
    contributes (chunks, term counts, vectors) is looked up in the store's content-addressed cache first
    (:mod:`indexes.reuse`); the index files are the same as without it.

    :param snapshot_dir: the snapshot (repository tree at ``base_commit``).
    :param store: index store root.
    :param chunker: the chunk strategy.
    :param retrievers: unbuilt retrievers (their ``config()`` names their directory).
    :param walk_config: snapshot walking rules; default ``WalkConfig()``.
    :param rebuild: rebuild everything asked for, even an up-to-date or corrupt index (the snapshot's other
        retriever indexes are kept when its content is the same).
    :param snapshot_name: directory name in the store; default ``snapshot_dir.name``.
    :param reuse: take each file's chunks and each chunk's term counts and vectors from ``<store>/_cache`` when
        stored there, and store the new ones (``rebuild`` still reuses them: they are keyed by content, config and
        code, and checked).
    :param graph: also make sure the symbol graph of the chunk table is current (``<chunker dir>/graph``, as
        :func:`indexes.graph_store.ensure_graph_once` keeps it; built under the same lock from the walked files
        and chunks this call already holds, timed as ``graph``, listed as ``"graph"`` in ``built`` or
        ``reused``); with ``reuse``, each chunk's identifiers come from the cache
        (:func:`indexes.reuse.graph_names_reusing`).
    :param graph_worker: with ``graph``, compute it in a forked child while this process builds the retrievers
        (:class:`~indexes.graph_store.GraphWorker`: the same files; the child's seconds in the report).
    :return: what was built or reused, with counts and timings (seconds per step: ``walk``, ``chunk`` or
        ``texts`` (cutting chunk texts from the files), ``term_counts`` and ``vectors`` (shared features), then
        per retriever name its own build plus save).
    :raises FileNotFoundError: if ``snapshot_dir`` is not a directory.
    :raises CorruptIndexError: naming the file, if a saved index is broken and ``rebuild`` is not set.
    :raises ReadOnlyStoreError: naming the missing or stale index, if something must be built and the store
        cannot be written.
    """
    snapshot_dir = Path(snapshot_dir)
    if not snapshot_dir.is_dir():
        raise FileNotFoundError(f"snapshot directory not found: {snapshot_dir}")
    walk_config = walk_config or WalkConfig()
    name = snapshot_name or snapshot_dir.name
    cdir = chunk_dir_for(store, name, chunker, walk_config)
    run = _Run(snapshot_dir, walk_config, cdir, rebuild, BuildReport(name, cdir))
    if reuse:
        run.cache = ContentCache(Path(store), run.scratch)
    from swe_explore.indexes.graph_store import graph_not_current

    try:
        missing = _first_not_current(run, chunker, retrievers)
        if missing is None and graph:
            missing = graph_not_current(run)
            if missing is not None:
                run.report.reused = []  # listed again by the steps below
        if missing is None:
            return run.report
        try:
            with building_lock(cdir, missing):
                try:
                    _build_locked(run, chunker, retrievers, graph, graph_worker)
                finally:  # the cache's scratch directory is a temporary of this index: made and removed locked
                    run.close()
        except ReadOnlyStoreError:
            if run.broken is not None:  # nobody can be rewriting a store that cannot be written: it is broken
                raise run.broken from None
            raise
    finally:
        run.close()
    return run.report


def _build_locked(run: _Run, chunker: Chunker, retrievers: Sequence[Retriever], graph: bool, worker: bool) -> None:
    """The steps of :func:`ensure_index` under the index's lock (its parameters; ``worker``: ``graph_worker``)."""
    from swe_explore.indexes.graph_store import GraphWorker, ensure_graph_in_run

    remove_abandoned_temporaries(run.cdir)
    table, manifest, fresh = _load_or_build_table(run, chunker)
    run.report.counts = dict(manifest["counts"])
    run.report.skipped = _walk_skipped(manifest)
    child = GraphWorker.start(run, table, fresh, chunker.config()) if graph and worker else None
    try:
        plain, composite = _plan_retrievers(run.cdir, retrievers)
        with paused_gc():  # tokenizing: millions of live token strings (indexes/collector.py)
            fresh = _build_missing(run, plain, table, fresh)
        _link_composites(run, composite, table)
        if child is not None:
            child.finish()
        elif graph:
            ensure_graph_in_run(run, table, fresh, chunker.config())
    finally:
        if child is not None:
            child.close()


@contextlib.contextmanager
def building_lock(chunk_dir: Path, needed: Path) -> Iterator[None]:
    """Hold an index's :class:`~indexes.store.IndexLock` to build part of it; a context manager.

    :param chunk_dir: the index's chunker directory.
    :param needed: what is to be built (the chunker directory, a retriever directory, the graph), for the error.
    :raises ReadOnlyStoreError: naming ``needed``, on entry, if the lock file cannot be created because the store
        cannot be written (read-only file system, no permission).
    """
    stack = contextlib.ExitStack()
    try:
        stack.enter_context(IndexLock(chunk_dir))
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
        raise ReadOnlyStoreError(needed, exc) from None
    with stack:
        yield


def _first_not_current(run: _Run, chunker: Chunker, retrievers: Sequence[Retriever]) -> Path | None:
    """The lock-free check of :func:`ensure_index`: the first index directory that is missing or stale, or
    ``None`` when all are current and intact, in which case the report lists them all as reused. Writes nothing.

    A broken file found here is kept in ``run.broken`` and its directory returned, not raised: a concurrent
    builder may have been replacing the index while it was read, so the check under the lock decides.

    :param run: the call's shared state.
    :param chunker: the chunk strategy.
    :param retrievers: the retrievers asked for.
    :return: the chunker or a retriever directory, or ``None``.
    """
    if run.rebuild:
        return run.cdir
    needed = run.cdir
    try:
        found = _current_table(run, chunker)
        if found is None:
            return needed
        table, manifest = found
        run.table = table
        plain, composite = _plan_retrievers(run.cdir, retrievers)
        table_fp, n_chunks = table.fingerprint(), len(table.chunks)
        for needed, retriever in plain.items():
            if not _is_current(needed, retriever, _retriever_expectations(retriever, table_fp, n_chunks), False):
                return needed
        for needed, retriever in composite.items():
            expect = _retriever_expectations(retriever, table_fp, n_chunks)
            expect["links"] = _link_expectations(run.cdir, retriever.parts())
            if not _is_current(needed, retriever, expect, False):
                return needed
    except CorruptIndexError as exc:
        run.broken = exc
        return needed
    run.report.reused = ["chunks", *(r.name for r in plain.values()), *(r.name for r in composite.values())]
    run.report.counts = dict(manifest["counts"])
    run.report.skipped = _walk_skipped(manifest)
    return None


def _walk_skipped(manifest: dict[str, Any]) -> dict[str, int]:
    """The walk's skipped files by reason, from a chunk table manifest (``{}`` if it has no statistics)."""
    return dict(manifest.get("stats", {}).get("walk", {}).get("skipped", {}))


@dataclass
class _Run:
    """What the steps of one :func:`ensure_index` call share; the snapshot is walked at most once (:meth:`walk`).

    :param snapshot_dir: the snapshot.
    :param walk_config: its walking rules.
    :param cdir: the chunker directory.
    :param rebuild: the caller's ``rebuild`` flag.
    :param report: the report being filled.
    :param cache: the content-addressed cache when reusing, else ``None``.
    :param walked: what :meth:`walk` returned, once it ran.
    :param scratch_dir: the temporary directory of cache writes, once made (:meth:`scratch`).
    :param broken: a broken file the lock-free check met (:func:`_first_not_current`), if any.
    :param table: the current chunk table the lock-free check found, if it found one.
    :param twin: the chunker directory of a snapshot of identical content the table was copied from, if any.
    """

    snapshot_dir: Path
    walk_config: WalkConfig
    cdir: Path
    rebuild: bool
    report: BuildReport
    cache: ContentCache | None = None
    walked: tuple[list[SourceFile], Any, str] | None = None
    scratch_dir: Path | None = None
    broken: CorruptIndexError | None = None
    table: ChunkTable | None = None
    twin: Path | None = None
    closed: bool = False
    _digests: dict[str, str] | None = None

    def scratch(self) -> Path:
        """A temporary directory of this index for cache writes (made on first use, removed by :meth:`close`).

        :return: ``<chunker dir>.tmp-<host>-<pid>-cache-<random>``.
        """
        if self.scratch_dir is None:
            self.scratch_dir = temporary_path(self.cdir, "cache-")
            self.scratch_dir.mkdir(parents=True)
        return self.scratch_dir

    def digests(self) -> dict[str, str]:
        """:func:`~indexes.cache.file_digest` of every walked file, by path (computed on first use).

        :return: path -> 64 hex digits.
        """
        if self._digests is None:
            files, _, _ = self.walk()
            if self._digests is None:
                self._digests = {f.path: file_digest(f) for f in files}
        return self._digests

    def close(self) -> None:
        """Write the cache's new entries (timed as ``cache_write``), remove the scratch directory, and copy the
        cache's lookup counts into the report; once (later calls do nothing)."""
        if self.closed:
            return
        self.closed = True
        try:
            if self.cache is not None:
                t0 = time.perf_counter()
                self.cache.close()
                if self.scratch_dir is not None:
                    self.report.seconds["cache_write"] = time.perf_counter() - t0
        finally:
            if self.scratch_dir is not None:
                shutil.rmtree(self.scratch_dir, ignore_errors=True)
            if self.cache is not None:
                self.report.cache = {
                    kind: stats.to_dict() for kind, stats in self.cache.stats.items() if kind != TWIN_KIND
                }

    def walk(self) -> tuple[list[SourceFile], Any, str]:
        """The snapshot's files, walk statistics and content fingerprint (walked on first use, timed as ``walk``).

        :return: ``(files, stats, fingerprint)``.
        """
        if self.walked is None:
            t0 = time.perf_counter()
            files, stats = walk_snapshot(self.snapshot_dir, self.walk_config)
            if self.cache is not None:  # the file digests of the cache's keys, in the same pass over the texts
                digests: dict[str, str] = {}

                def add(source: SourceFile, text: bytes) -> None:
                    digests[source.path] = file_digest(source, text)

                fingerprint = snapshot_fingerprint(files, add)
                self._digests = digests
            else:
                fingerprint = snapshot_fingerprint(files)
            self.walked = (files, stats, fingerprint)
            self.report.seconds["walk"] = time.perf_counter() - t0
        return self.walked


def _current_table(run: _Run, chunker: Chunker) -> tuple[ChunkTable, dict[str, Any]] | None:
    """The saved chunk table and its manifest if they are current: same config and format, and built from the
    snapshot's present content (its fingerprint, :meth:`_Run.walk`); else ``None``. Writes nothing.

    :param run: the call's shared state.
    :param chunker: the chunk strategy.
    :return: ``(table, manifest)`` or ``None`` (missing, stale, or ``rebuild`` set).
    :raises CorruptIndexError: naming the file, if the saved table or its manifest is broken.
    """
    manifest_path = run.cdir / MANIFEST
    if run.rebuild or not manifest_path.exists():
        return None
    try:
        manifest = check_manifest(manifest_path, _chunk_expectations(chunker, run.walk_config))
    except StaleIndexError:
        return None
    _, _, fingerprint = run.walk()
    if manifest.get("snapshot", {}).get("fingerprint") != fingerprint:
        return None  # the content changed
    return ChunkTable.load(run.cdir, manifest["counts"]["chunks"], manifest.get("files")), manifest


def _load_or_build_table(run: _Run, chunker: Chunker) -> tuple[ChunkTable, dict[str, Any], list[Chunk] | None]:
    """Step 1: the chunk table, loaded when current (:func:`_current_table`), else chunked and saved.

    :param run: the call's shared state.
    :param chunker: the chunk strategy.
    :return: ``(table, chunker manifest, chunks with text if this call chunked, else None)``.
    :raises CorruptIndexError: naming the file, if the saved table is broken (and ``rebuild`` is not set).
    """
    found = _current_table(run, chunker)
    if found is not None:
        run.report.reused.append("chunks")
        return found[0], found[1], None
    expect = _chunk_expectations(chunker, run.walk_config)
    if run.cache is not None:
        from swe_explore.indexes.twin import copy_table_from_twin

        copied = copy_table_from_twin(run, expect)
        if copied is not None:
            return copied[0], copied[1], None
    return _build_table(run, chunker, expect)


def _build_table(run: _Run, chunker: Chunker, expect: dict[str, Any]) -> tuple[ChunkTable, dict[str, Any], list[Chunk]]:
    """Chunk the snapshot and write the chunker directory (chunk table and manifest) atomically.

    :param run: the call's shared state.
    :param chunker: the chunk strategy.
    :param expect: the manifest values that identify the chunker directory (:func:`_chunk_expectations`).
    :return: ``(table, manifest, chunks with text)``.
    """
    files, walk_stats, fingerprint = run.walk()
    t0 = time.perf_counter()
    if run.cache is not None:  # same chunks and statistics, files already chunked taken from the cache
        chunks, chunk_stats = chunk_files(files, CachingChunker(chunker, run.cache, run.digests()))
    else:
        chunks, chunk_stats = chunk_files(files, chunker)
    run.report.seconds["chunk"] = time.perf_counter() - t0
    table = ChunkTable(_without_text(chunks), {f.path: len(f.lines) for f in files})
    manifest = expect | {
        "toolkit_version": toolkit_version(),
        "created_at": now_iso(),
        "snapshot": {
            "name": run.report.snapshot,
            "path": str(run.snapshot_dir.resolve()),
            "fingerprint": fingerprint,
        },
        "counts": {
            "files": len(table.file_lines),
            "lines": sum(table.file_lines.values()),
            "chunks": len(table.chunks),
        },
        "stats": {"walk": jsonable(walk_stats), "chunking": jsonable(chunk_stats)},
        "seconds": {k: round(v, 4) for k, v in run.report.seconds.items()},
    }
    from swe_explore.indexes.twin import keep_parts_of_same_content, register_twin

    with atomic_directory(run.cdir) as tmp:
        table.save(tmp)
        manifest["files"] = file_records(tmp, CHUNK_FILES)
        write_json(tmp / MANIFEST, manifest)
        keep_parts_of_same_content(run.cdir, tmp, fingerprint)  # a rebuild of one retriever keeps the others
    run.report.built.append("chunks")
    if run.cache is not None:
        register_twin(run, manifest)
    return table, manifest, chunks


def _plan_retrievers(
    cdir: Path, retrievers: Sequence[Retriever]
) -> tuple[dict[Path, Retriever], dict[Path, Retriever]]:
    """Step 2: every retriever directory to ensure, each once: plain retrievers and composites' parts, then the
    composites.

    :param cdir: the chunker directory.
    :param retrievers: the retrievers asked for.
    :return: ``(directory -> plain retriever or part, directory -> composite retriever)``, in request order.
    """
    plain: dict[Path, Retriever] = {}
    composite: dict[Path, Retriever] = {}
    for retriever in retrievers:
        parts = retriever.parts()
        for part in parts or [retriever]:
            plain.setdefault(retriever_dir_for(cdir, part), part)
        if parts:
            composite.setdefault(retriever_dir_for(cdir, retriever), retriever)
    return plain, composite


def _build_missing(
    run: _Run, plain: dict[Path, Retriever], table: ChunkTable, fresh: list[Chunk] | None
) -> list[Chunk] | None:
    """Step 3: build the plain retrievers whose index is missing or stale, together, and save each.

    :param run: the call's shared state.
    :param plain: directory -> retriever (:func:`_plan_retrievers`).
    :param table: the chunk table.
    :param fresh: the chunks with text if this call chunked, else ``None`` (texts are cut from the files).
    :return: the chunks with text, if this call has them now (``fresh``, or cut from the files here), else ``None``.
    :raises CorruptIndexError: naming the file, if a saved index is broken (and ``rebuild`` is not set).
    """
    table_fp, n_chunks = table.fingerprint(), len(table.chunks)
    todo: list[tuple[Path, Retriever, dict[str, Any]]] = []
    for rdir, retriever in plain.items():
        expect = _retriever_expectations(retriever, table_fp, n_chunks)
        if _is_current(rdir, retriever, expect, run.rebuild):
            run.report.reused.append(retriever.name)
        else:
            todo.append((rdir, retriever, expect))
    if run.twin is not None:
        from swe_explore.indexes.twin import copy_retriever_from_twin

        todo = [item for item in todo if not copy_retriever_from_twin(run, *item)]
    if not todo:
        return fresh
    if fresh is None:  # the table was found current: built from these very files (same fingerprint)
        files, _, _ = run.walk()
        t0 = time.perf_counter()
        fresh = chunks_with_text(table, files)
        run.report.seconds["texts"] = time.perf_counter() - t0
    if run.cache is not None:
        build_seconds = build_retrievers_reusing([r for _, r, _ in todo], fresh, run.cache)
    else:
        build_seconds = build_retrievers([r for _, r, _ in todo], fresh)
    for i, (rdir, retriever, expect) in enumerate(todo):
        _write_retriever_dir(run.report, rdir, retriever, expect, build_seconds.get(f"{i}:{retriever.name}", 0.0))
    for key, value in build_seconds.items():
        if ":" not in key:  # a shared feature
            _add_seconds(run.report, key, value)
    return fresh


def _link_composites(run: _Run, composite: dict[Path, Retriever], table: ChunkTable) -> None:
    """Step 4: save each composite retriever whose index is missing or stale as links to its parts' directories.

    :param run: the call's shared state.
    :param composite: directory -> composite retriever (:func:`_plan_retrievers`); its parts are built.
    :param table: the chunk table.
    :raises CorruptIndexError: naming the file, if a saved index is broken (and ``rebuild`` is not set).
    """
    table_fp, n_chunks = table.fingerprint(), len(table.chunks)
    for rdir, retriever in composite.items():
        parts = retriever.parts()
        expect = _retriever_expectations(retriever, table_fp, n_chunks) | {"links": _link_expectations(run.cdir, parts)}
        if _is_current(rdir, retriever, expect, run.rebuild):
            run.report.reused.append(retriever.name)
            continue
        part_dirs = [retriever_dir_for(run.cdir, p) / "data" for p in parts]
        _write_retriever_dir(run.report, rdir, retriever, expect, 0.0, part_dirs)


def _write_retriever_dir(
    report: BuildReport,
    rdir: Path,
    retriever: Retriever,
    expect: dict[str, Any],
    build_seconds: float,
    part_dirs: Sequence[Path] | None = None,
) -> None:
    """Write one retriever directory atomically: ``data/`` (:func:`indexes.files.save_retriever`), then the
    manifest (``expect`` plus version, time, ``retriever.json``'s SHA-256 and the build seconds).

    :param report: the report; the retriever is added to ``built`` and its build plus save seconds to ``seconds``.
    :param rdir: the retriever directory.
    :param retriever: the built retriever (a composite: with ``part_dirs``).
    :param expect: the manifest values that identify the index (:func:`_retriever_expectations`).
    :param build_seconds: the seconds its build took.
    :param part_dirs: for a composite, its parts' ``data/`` directories to link to.
    """
    t0 = time.perf_counter()
    with atomic_directory(rdir) as tmp:
        (tmp / "data").mkdir()
        save_retriever(retriever, tmp / "data", part_dirs)
        write_retriever_manifest(tmp, expect, build_seconds)
    _add_seconds(report, retriever.name, build_seconds + time.perf_counter() - t0)
    report.built.append(retriever.name)


def _add_seconds(report: BuildReport, key: str, seconds: float) -> None:
    """Add to one timing of a report (two retrievers of one name, e.g. two BM25 configs, share a key)."""
    report.seconds[key] = report.seconds.get(key, 0.0) + seconds


def open_index(
    snapshot_dir: Path,
    store: Path,
    chunker: Chunker,
    retriever: Retriever,
    walk_config: WalkConfig | None = None,
    snapshot_name: str | None = None,
) -> LoadedIndex:
    """Load a snapshot's chunk table and one retriever's index, checking that they belong together.

    Every file is checked against its recorded size and SHA-256, and the saved ``retriever.json`` config must be
    ``retriever.config()``, so the loaded retriever is the one the caller's config (and every result's
    ``explorer_config``) describes, its embedding model included (``$SWE_EXPLORE_POTION_MODEL`` does not override it).

    :param snapshot_dir: the snapshot (only its name is used unless ``snapshot_name`` is given).
    :param store: index store root.
    :param chunker: the chunk strategy the index was built with.
    :param retriever: an unbuilt retriever with the wanted config.
    :param walk_config: walking rules the index was built with.
    :param snapshot_name: directory name in the store; default ``snapshot_dir.name``.
    :return: the loaded index.
    :raises FileNotFoundError: if the index (or, for a hybrid, one of its parts) was never built.
    :raises CorruptIndexError: naming the file, if a file is missing, truncated or edited (a hand-edited config in
        ``retriever.json`` included).
    :raises StaleIndexError: if the saved index was built with another config or from other chunks, or (hybrid)
        a part was rebuilt since the hybrid was linked to it.
    """
    walk_config = walk_config or WalkConfig()
    cdir = chunk_dir_for(store, snapshot_name or Path(snapshot_dir).name, chunker, walk_config)
    rdir = retriever_dir_for(cdir, retriever)
    for path in (cdir / MANIFEST, rdir / MANIFEST):
        if not path.exists():
            raise FileNotFoundError(f"no index at {path.parent}; build it with scripts/index_repos.py")
    manifest = check_manifest(cdir / MANIFEST, _chunk_expectations(chunker, walk_config))
    table = ChunkTable.load(cdir, manifest["counts"]["chunks"], manifest.get("files"))
    r_expect = _retriever_expectations(retriever, table.fingerprint(), len(table.chunks))
    parts = retriever.parts()
    if parts:  # the parts' saved indexes must be the ones the hybrid was linked to
        r_expect["links"] = _link_expectations(cdir, parts)
    r_manifest = check_manifest(rdir / MANIFEST, r_expect)
    _check_retriever_dir(rdir, retriever, r_manifest, verify_files=False)  # load_retriever hashes the files
    loaded = load_retriever(rdir / "data")
    meta_path = rdir / "data" / META_FILE
    check_config(meta_path, loaded.config(), retriever.config(), "the one asked for once loaded (model replaced?)")
    if loaded.n_docs != len(table.chunks):
        raise CorruptIndexError(meta_path, f"retriever holds {loaded.n_docs} docs, chunk table {len(table.chunks)}")
    return LoadedIndex(table.chunks, table.file_lines, loaded, manifest)


def _without_text(chunks: Sequence[Chunk]) -> list[Chunk]:
    return [Chunk(c.path, c.start, c.end, c.kind, c.symbol, c.language) for c in chunks]
