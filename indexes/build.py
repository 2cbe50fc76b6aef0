"""Build, check and open the persisted index of a snapshot: walk → chunk → retriever → store.

:func:`ensure_index` is what ``scripts/index_repos.py`` and ``scripts/run_baselines.py`` call: it builds only
what is missing or stale, so re-running it on an unchanged snapshot does no chunking and no indexing (it checks
a cheap stat signature first, and the content fingerprint only when the stat signature changed).
:func:`open_index` loads a built index for querying.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from chunking.registry import Chunker, chunk_files
from chunking.types import Chunk
from chunking.walk import WalkConfig, walk_snapshot
from indexes.store import (
    FORMAT_VERSION,
    MANIFEST,
    ChunkTable,
    StaleIndexError,
    atomic_directory,
    check_manifest,
    config_key,
    now_iso,
    read_json,
    remove_stale_temporaries,
    snapshot_fingerprint,
    toolkit_version,
    write_json,
)
from retrievers.base import CorruptIndexError, Retriever
from retrievers.registry import load_retriever


@dataclass
class BuildReport:
    """What :func:`ensure_index` did for one snapshot.

    :param snapshot: snapshot name (its directory name, normally the ``instance_id``).
    :param chunk_dir: the chunker directory of the index.
    :param built: ``"chunks"`` and/or retriever names that were (re)built; empty when all was up to date.
    :param reused: retriever names whose saved index was reused.
    :param counts: files, lines and chunks of the snapshot.
    :param seconds: wall-clock seconds per step (``walk``, ``chunk``, ``<retriever>``).
    """

    snapshot: str
    chunk_dir: Path
    built: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


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


def stat_signature(root: Path) -> str:
    """Cheap change detector: SHA-256 over (path, size, mtime_ns) of every file under ``root`` but ``.git``.

    :param root: snapshot directory.
    :return: 64 hex digits.
    """
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            digest.update(f"{os.path.relpath(path, root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def chunk_dir_for(store: Path, snapshot: str, chunker: Chunker, walk_config: WalkConfig) -> Path:
    """The chunker directory of a snapshot's index under the store root."""
    key = config_key(chunker.name, {"chunker": chunker.config(), "walk": walk_config.to_dict()})
    return Path(store) / snapshot / key


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


def ensure_index(
    snapshot_dir: Path,
    store: Path,
    chunker: Chunker,
    retrievers: Sequence[Retriever],
    walk_config: WalkConfig | None = None,
    rebuild: bool = False,
    snapshot_name: str | None = None,
) -> BuildReport:
    """Make sure the snapshot's chunk table and each retriever's index exist and are current; build what is not.

    Stale parts (other snapshot content, chunker/walk config or format version) are rebuilt. A corrupt part is
    an error unless ``rebuild`` is set, in which case everything is rebuilt.

    :param snapshot_dir: the snapshot (repository tree at ``base_commit``).
    :param store: index store root.
    :param chunker: the chunk strategy.
    :param retrievers: unbuilt retrievers (their ``config()`` names their directory).
    :param walk_config: snapshot walking rules; default ``WalkConfig()``.
    :param rebuild: rebuild everything, even an up-to-date or corrupt index.
    :param snapshot_name: directory name in the store; default ``snapshot_dir.name``.
    :return: what was built or reused, with counts and timings.
    :raises FileNotFoundError: if ``snapshot_dir`` is not a directory.
    :raises CorruptIndexError: if a saved index is broken and ``rebuild`` is not set.
    """
    snapshot_dir = Path(snapshot_dir)
    if not snapshot_dir.is_dir():
        raise FileNotFoundError(f"snapshot directory not found: {snapshot_dir}")
    walk_config = walk_config or WalkConfig()
    name = snapshot_name or snapshot_dir.name
    cdir = chunk_dir_for(store, name, chunker, walk_config)
    remove_stale_temporaries(Path(store) / name)
    report = BuildReport(name, cdir)
    signature = stat_signature(snapshot_dir)
    expect = _chunk_expectations(chunker, walk_config)

    manifest: dict[str, Any] | None = None
    if not rebuild and (cdir / MANIFEST).exists():
        try:
            manifest = check_manifest(cdir / MANIFEST, expect)
        except StaleIndexError:
            manifest = None
    fresh: list[Chunk] | None = None  # chunks with text, when this call walked and chunked

    def walk_and_chunk() -> tuple[list[Chunk], dict[str, Any], str]:
        t0 = time.perf_counter()
        files, walk_stats = walk_snapshot(snapshot_dir, walk_config)
        t1 = time.perf_counter()
        chunks, chunk_stats = chunk_files(files, chunker)
        t2 = time.perf_counter()
        report.seconds.update(walk=t1 - t0, chunk=t2 - t1)
        stats = {"walk": _jsonable(walk_stats), "chunking": _jsonable(chunk_stats)}
        table = ChunkTable(_without_text(chunks), {f.path: len(f.lines) for f in files})
        return chunks, stats | {"_table": table}, snapshot_fingerprint(files)

    if manifest is not None and manifest.get("snapshot", {}).get("stat_signature") != signature:
        fresh, stats, fingerprint = walk_and_chunk()
        if manifest["snapshot"].get("fingerprint") != fingerprint:
            manifest = None  # content changed: rebuild below with the chunks just made
        else:  # same content, new mtimes: refresh the signature only
            manifest["snapshot"]["stat_signature"] = signature
            tmp = cdir / f"{MANIFEST}.tmp"
            write_json(tmp, manifest)
            os.replace(tmp, cdir / MANIFEST)

    if manifest is None:
        if fresh is None:
            fresh, stats, fingerprint = walk_and_chunk()
        table: ChunkTable = stats.pop("_table")
        manifest = expect | {
            "toolkit_version": toolkit_version(),
            "created_at": now_iso(),
            "snapshot": {"name": name, "path": str(snapshot_dir.resolve()), "fingerprint": fingerprint,
                         "stat_signature": signature},
            "counts": {"files": len(table.file_lines), "lines": sum(table.file_lines.values()),
                       "chunks": len(table.chunks)},
            "stats": stats,
            "seconds": {k: round(v, 4) for k, v in report.seconds.items()},
        }
        with atomic_directory(cdir) as tmp:
            table.save(tmp)
            write_json(tmp / MANIFEST, manifest)
        report.built.append("chunks")
    else:
        table = ChunkTable.load(cdir, manifest["counts"]["chunks"])
    report.counts = dict(manifest["counts"])

    table_fp = table.fingerprint()
    for retriever in retrievers:
        rdir = retriever_dir_for(cdir, retriever)
        r_expect = _retriever_expectations(retriever, table_fp, len(table.chunks))
        if not rebuild and (rdir / MANIFEST).exists():
            try:
                check_manifest(rdir / MANIFEST, r_expect)
                report.reused.append(retriever.name)
                continue
            except StaleIndexError:
                pass
        if fresh is None:
            fresh, _, _ = walk_and_chunk()
            if table.fingerprint() != ChunkTable(_without_text(fresh), table.file_lines).fingerprint():
                raise StaleIndexError(cdir / MANIFEST, "snapshot changed while its index was being built; rerun")
        t0 = time.perf_counter()
        retriever.build(fresh)
        seconds = time.perf_counter() - t0
        with atomic_directory(rdir) as tmp:
            (tmp / "data").mkdir()
            retriever.save(tmp / "data")
            write_json(tmp / MANIFEST, r_expect | {"toolkit_version": toolkit_version(), "created_at": now_iso(),
                                                   "seconds": {"build": round(seconds, 4)}})
        report.seconds[retriever.name] = seconds
        report.built.append(retriever.name)
    return report


def open_index(
    snapshot_dir: Path,
    store: Path,
    chunker: Chunker,
    retriever: Retriever,
    walk_config: WalkConfig | None = None,
    snapshot_name: str | None = None,
) -> LoadedIndex:
    """Load a snapshot's chunk table and one retriever's index, checking that they belong together.

    :param snapshot_dir: the snapshot (only its name is used unless ``snapshot_name`` is given).
    :param store: index store root.
    :param chunker: the chunk strategy the index was built with.
    :param retriever: an unbuilt retriever with the wanted config.
    :param walk_config: walking rules the index was built with.
    :param snapshot_name: directory name in the store; default ``snapshot_dir.name``.
    :return: the loaded index.
    :raises FileNotFoundError: if the index was never built.
    :raises CorruptIndexError: naming the file, if a file is broken.
    :raises StaleIndexError: if the saved index was built with another config or from other chunks.
    """
    walk_config = walk_config or WalkConfig()
    cdir = chunk_dir_for(store, snapshot_name or Path(snapshot_dir).name, chunker, walk_config)
    rdir = retriever_dir_for(cdir, retriever)
    for path in (cdir / MANIFEST, rdir / MANIFEST):
        if not path.exists():
            raise FileNotFoundError(f"no index at {path.parent}; build it with scripts/index_repos.py")
    manifest = check_manifest(cdir / MANIFEST, _chunk_expectations(chunker, walk_config))
    table = ChunkTable.load(cdir, manifest["counts"]["chunks"])
    check_manifest(rdir / MANIFEST, _retriever_expectations(retriever, table.fingerprint(), len(table.chunks)))
    loaded = load_retriever(rdir / "data")
    if loaded.n_docs != len(table.chunks):
        raise CorruptIndexError(rdir / "data", f"retriever holds {loaded.n_docs} docs, chunk table {len(table.chunks)}")
    return LoadedIndex(table.chunks, table.file_lines, loaded, manifest)


def read_manifest(chunk_dir: Path) -> dict[str, Any]:
    """The manifest of a chunker directory (for reports)."""
    return read_json(Path(chunk_dir) / MANIFEST)


def _without_text(chunks: Sequence[Chunk]) -> list[Chunk]:
    return [Chunk(c.path, c.start, c.end, c.kind, c.symbol, c.language) for c in chunks]


def _jsonable(obj: Any) -> Any:
    """Statistics objects → plain JSON (dataclasses via ``to_dict``/``__dict__``)."""
    if hasattr(obj, "to_dict"):
        obj = obj.to_dict()
    elif hasattr(obj, "__dataclass_fields__"):
        from dataclasses import asdict

        obj = asdict(obj)
    return json.loads(json.dumps(obj, default=str))
