"""Build, check and open the persisted index of a snapshot: walk → chunk → retriever → store.

:func:`ensure_index` is what ``scripts/index_repos.py`` and ``scripts/run_baselines.py`` call: it builds only
what is missing or stale, so re-running it on an unchanged snapshot does no chunking and no indexing (it checks
a cheap stat signature first, and the content fingerprint only when the stat signature changed).
:func:`open_index` loads a built index for querying.

Speed (measured on pydata__xarray-7393, 160K lines, one core; ``docs/benchmarks.md``): the retrievers that need
building are built in one :func:`retrievers.features.build_retrievers` call, so BM25 and TF-IDF share one
tokenization and Potion and FAISS one embedding; a hybrid is saved as links to its parts' directories
(:func:`linked_parts`); a retriever added to an up-to-date chunk table gets its chunk texts cut from the walked
files (:func:`chunks_with_text`, 0.05 s) instead of re-running the chunker (0.6 s). Chunking plus all five
retrievers costs about 1 s per 100K lines.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from swe_explore.chunking.registry import Chunker, chunk_files
from swe_explore.chunking.types import Chunk, SourceFile
from swe_explore.chunking.walk import WalkConfig, walk_snapshot
from swe_explore.indexes.store import (
    CHUNK_FILES,
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
from swe_explore.retrievers.base import CorruptIndexError, Retriever
from swe_explore.retrievers.common import META_FILE, check_files, file_records, file_sha256, read_meta
from swe_explore.retrievers.features import build_retrievers
from swe_explore.retrievers.registry import load_retriever


@dataclass
class BuildReport:
    """What :func:`ensure_index` did for one snapshot.

    :param snapshot: snapshot name (its directory name, normally the ``instance_id``).
    :param chunk_dir: the chunker directory of the index.
    :param built: ``"chunks"`` and/or retriever names that were (re)built; empty when all was up to date.
    :param reused: retriever names whose saved index was reused.
    :param counts: files, lines and chunks of the snapshot.
    :param seconds: wall-clock seconds per step: ``walk``, ``chunk`` (or ``texts``), the shared features
        (``term_counts``, ``vectors``) and each retriever's own build and save, by name.
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
            # surrogateescape: a file name that is not UTF-8 gives back its own bytes instead of failing
            rel = os.path.relpath(path, root)
            digest.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
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


def linked_parts(retriever: Retriever) -> list[Retriever] | None:
    """The parts of a composite retriever whose index links to its parts' indexes (hybrid), else ``None``.

    A retriever is composite when it has ``linked_parts()`` and ``save_linked(directory, part_dirs)``
    (:class:`retrievers.hybrid.HybridRetriever`): the store then builds each part in its own retriever directory
    (as if asked for it) and saves the composite as links to them.

    :param retriever: any retriever.
    :return: its parts, or ``None``.
    """
    if callable(getattr(retriever, "save_linked", None)) and callable(getattr(retriever, "linked_parts", None)):
        return list(retriever.linked_parts())  # type: ignore[attr-defined]
    return None


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


def _json_round_trip(value: Any) -> Any:
    """A value as it reads back from JSON (tuples become lists), for comparing configs with saved ones."""
    return json.loads(json.dumps(value))


def check_retriever_dir(
    rdir: Path, retriever: Retriever, manifest: dict[str, Any], verify_files: bool = True
) -> dict[str, Any]:
    """Check that a retriever directory's ``data/`` is the index its (already checked) manifest describes.

    Checks, each raising :class:`CorruptIndexError` naming the file: ``data/retriever.json`` is readable and
    names this retriever; its config equals ``retriever.config()`` (the one the manifest and the directory name
    stand for: a hand-edited value such as BM25's ``k1`` would otherwise be used silently); its ``n_docs``
    equals the manifest's; its SHA-256 equals the manifest's ``meta_sha256`` (when recorded); and, with
    ``verify_files``, every data file it lists exists with its recorded size and SHA-256. Measured on
    pydata__xarray-7393 (``outputs/final/indexes_dev``): at most 12 ms per retriever (the 7.5 MB Potion and
    FAISS files), 0.1 ms without ``verify_files``.

    :param rdir: the retriever directory (holding ``manifest.json`` and ``data/``).
    :param retriever: an unbuilt retriever with the wanted config.
    :param manifest: the retriever directory's manifest.
    :param verify_files: also hash the data files (the retrievers' ``load`` does it anyway, so
        :func:`open_index` skips it here).
    :return: the ``retriever.json`` content.
    :raises CorruptIndexError: naming the broken file.
    """
    data = rdir / "data"
    meta_path = data / META_FILE
    meta = read_meta(data, retriever.name, verify=False)
    want = _json_round_trip(retriever.config())
    if meta["config"] != want:
        keys = sorted(set(meta["config"]) | set(want), key=str)
        diff = ", ".join(
            f"{k}={meta['config'].get(k)!r} (expected {want.get(k)!r})"
            for k in keys
            if meta["config"].get(k) != want.get(k)
        )
        raise CorruptIndexError(
            meta_path, f"config differs from the one {rdir / MANIFEST} was built with (edited by hand?): {diff}"
        )
    if meta["n_docs"] != manifest.get("n_docs"):
        raise CorruptIndexError(
            meta_path, f"n_docs is {meta['n_docs']}, {rdir / MANIFEST} says {manifest.get('n_docs')}"
        )
    recorded = manifest.get("meta_sha256")
    if recorded is not None and file_sha256(meta_path) != recorded:
        raise CorruptIndexError(meta_path, f"SHA-256 differs from the one recorded in {rdir / MANIFEST} (edited)")
    if verify_files:
        check_files(data, meta["files"], meta_path)
    return meta


def _is_current(rdir: Path, retriever: Retriever, expected: dict[str, Any], rebuild: bool) -> bool:
    """Whether a saved retriever index is what is asked for and intact (never, when rebuilding).

    A missing directory or a manifest of another config or chunk table means "build it" (``False``); a broken
    one is an error, so a damaged store is never reported as up to date (:func:`check_retriever_dir`).

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
    check_retriever_dir(rdir, retriever, manifest)
    return True


def chunks_with_text(table: ChunkTable, files: Sequence[SourceFile]) -> list[Chunk]:
    """The table's chunks with their text, cut from the walked files (``Chunk.text`` is lines start..end).

    Re-reading the lines is much cheaper than chunking again (0.05 s, walk included, instead of 0.6 s for the
    160K lines of pydata__xarray-7393), so a retriever added to an up-to-date index does not re-run the chunker. The caller
    checks that the files are the ones the table was made from (same snapshot fingerprint).

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
) -> BuildReport:
    """Make sure the snapshot's chunk table and each retriever's index exist and are current; build what is not.

    Stale parts (other snapshot content, chunker/walk config or format version) are rebuilt. A corrupt part is
    an error unless ``rebuild`` is set, in which case everything is rebuilt. "Up to date" is checked for real:
    the chunk table's and every reused retriever's files are compared with their recorded sizes and SHA-256
    (:func:`check_retriever_dir`; about 30 ms for the five retrievers of pydata__xarray-7393), so a truncated,
    deleted or edited file raises :class:`CorruptIndexError` naming it instead of passing as up to date.

    The retrievers that need building are built together by :func:`retrievers.features.build_retrievers`, so
    shared features are computed once (BM25 and TF-IDF tokenize once, Potion and FAISS embed once). When the
    chunk table is current but a retriever is missing, the chunk texts are cut from the walked files
    (:func:`chunks_with_text`) instead of chunking again. A composite retriever (hybrid, see
    :func:`linked_parts`) gets its parts built in their own directories and is saved as links to them, so
    nothing is built or stored twice; its manifest records each part's ``retriever.json`` hash, so a rebuilt
    part makes the hybrid stale, and it is re-linked.

    :param snapshot_dir: the snapshot (repository tree at ``base_commit``).
    :param store: index store root.
    :param chunker: the chunk strategy.
    :param retrievers: unbuilt retrievers (their ``config()`` names their directory).
    :param walk_config: snapshot walking rules; default ``WalkConfig()``.
    :param rebuild: rebuild everything, even an up-to-date or corrupt index.
    :param snapshot_name: directory name in the store; default ``snapshot_dir.name``.
    :return: what was built or reused, with counts and timings (seconds per step: ``walk``, ``chunk`` or
        ``texts`` (cutting chunk texts from the files), ``term_counts`` and ``vectors`` (shared features), then
        per retriever name its own build plus save).
    :raises FileNotFoundError: if ``snapshot_dir`` is not a directory.
    :raises CorruptIndexError: naming the file, if a saved index is broken and ``rebuild`` is not set.
    :raises StaleIndexError: if the snapshot's content changed while its stat signature did not.
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
    walked: dict[str, Any] = {}  # "files", "stats", "fingerprint" once the snapshot was walked

    def walk() -> dict[str, Any]:
        if not walked:
            t0 = time.perf_counter()
            files, walk_stats = walk_snapshot(snapshot_dir, walk_config)
            walked.update(files=files, stats=walk_stats, fingerprint=snapshot_fingerprint(files))
            report.seconds["walk"] = time.perf_counter() - t0
        return walked

    if manifest is not None and manifest.get("snapshot", {}).get("stat_signature") != signature:
        if manifest["snapshot"].get("fingerprint") != walk()["fingerprint"]:
            manifest = None  # content changed: rebuild below
        else:  # same content, new mtimes: refresh the signature only
            manifest["snapshot"]["stat_signature"] = signature
            tmp = cdir / f"{MANIFEST}.tmp"
            write_json(tmp, manifest)
            os.replace(tmp, cdir / MANIFEST)

    fresh: list[Chunk] | None = None  # chunks with text, when this call chunked or cut them
    if manifest is None:
        files = walk()["files"]
        t0 = time.perf_counter()
        fresh, chunk_stats = chunk_files(files, chunker)
        report.seconds["chunk"] = time.perf_counter() - t0
        table = ChunkTable(_without_text(fresh), {f.path: len(f.lines) for f in files})
        manifest = expect | {
            "toolkit_version": toolkit_version(),
            "created_at": now_iso(),
            "snapshot": {"name": name, "path": str(snapshot_dir.resolve()), "fingerprint": walked["fingerprint"],
                         "stat_signature": signature},
            "counts": {"files": len(table.file_lines), "lines": sum(table.file_lines.values()),
                       "chunks": len(table.chunks)},
            "stats": {"walk": _jsonable(walked["stats"]), "chunking": _jsonable(chunk_stats)},
            "seconds": {k: round(v, 4) for k, v in report.seconds.items()},
        }
        with atomic_directory(cdir) as tmp:
            table.save(tmp)
            manifest["files"] = file_records(tmp, CHUNK_FILES)
            write_json(tmp / MANIFEST, manifest)
        report.built.append("chunks")
    else:
        table = ChunkTable.load(cdir, manifest["counts"]["chunks"], manifest.get("files"))
    report.counts = dict(manifest["counts"])

    # Every retriever directory to ensure: the plain retrievers and the parts of composite ones, each once.
    plain: dict[Path, Retriever] = {}
    composite: dict[Path, tuple[Retriever, list[Retriever]]] = {}
    for retriever in retrievers:
        parts = linked_parts(retriever)
        if parts is None:
            plain.setdefault(retriever_dir_for(cdir, retriever), retriever)
            continue
        for part in parts:
            plain.setdefault(retriever_dir_for(cdir, part), part)
        composite.setdefault(retriever_dir_for(cdir, retriever), (retriever, parts))

    table_fp = table.fingerprint()
    n_chunks = len(table.chunks)
    todo: list[tuple[Path, Retriever, dict[str, Any]]] = []
    for rdir, retriever in plain.items():
        r_expect = _retriever_expectations(retriever, table_fp, n_chunks)
        if _is_current(rdir, retriever, r_expect, rebuild):
            report.reused.append(retriever.name)
        else:
            todo.append((rdir, retriever, r_expect))
    if todo:
        if fresh is None:
            info = walk()
            if info["fingerprint"] != manifest["snapshot"].get("fingerprint"):
                raise StaleIndexError(
                    cdir / MANIFEST,
                    "the snapshot's content changed but not its file sizes and mtimes; rerun with --rebuild to "
                    "rebuild it",
                )
            t0 = time.perf_counter()
            fresh = chunks_with_text(table, info["files"])
            report.seconds["texts"] = time.perf_counter() - t0
        build_seconds = build_retrievers([r for _, r, _ in todo], fresh)
        for i, (rdir, retriever, r_expect) in enumerate(todo):
            t0 = time.perf_counter()
            with atomic_directory(rdir) as tmp:
                (tmp / "data").mkdir()
                retriever.save(tmp / "data")
                built_in = build_seconds.get(f"{i}:{retriever.name}", 0.0)
                write_json(tmp / MANIFEST, r_expect | {"toolkit_version": toolkit_version(), "created_at": now_iso(),
                                                       "meta_sha256": file_sha256(tmp / "data" / META_FILE),
                                                       "seconds": {"build": round(built_in, 4)}})
            _add_seconds(report, retriever.name, built_in + time.perf_counter() - t0)
            report.built.append(retriever.name)
        for key, value in build_seconds.items():
            if ":" not in key:  # a shared feature
                _add_seconds(report, key, value)

    for rdir, (retriever, parts) in composite.items():
        r_expect = _retriever_expectations(retriever, table_fp, n_chunks) | {"links": _link_expectations(cdir, parts)}
        if _is_current(rdir, retriever, r_expect, rebuild):
            report.reused.append(retriever.name)
            continue
        t0 = time.perf_counter()
        with atomic_directory(rdir) as tmp:
            (tmp / "data").mkdir()
            part_dirs = [retriever_dir_for(cdir, p) / "data" for p in parts]
            retriever.save_linked(tmp / "data", part_dirs)  # type: ignore[attr-defined]
            write_json(tmp / MANIFEST, r_expect | {"toolkit_version": toolkit_version(), "created_at": now_iso(),
                                                   "meta_sha256": file_sha256(tmp / "data" / META_FILE),
                                                   "seconds": {"build": 0.0}})
        _add_seconds(report, retriever.name, time.perf_counter() - t0)
        report.built.append(retriever.name)
    return report


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
    the one asked for (``retriever.config()``, which the manifest and the directory name stand for), so the
    loaded retriever is exactly the one the caller's config, and every result's ``explorer_config``, describe.
    An embedding retriever's model is therefore the caller's (a Potion or FAISS index is keyed by its model
    spec); ``$SWE_EXPLORE_POTION_MODEL`` does not override it.

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
    parts = linked_parts(retriever)
    if parts is not None:  # the parts' saved indexes must be the ones the hybrid was linked to
        r_expect["links"] = _link_expectations(cdir, parts)
    r_manifest = check_manifest(rdir / MANIFEST, r_expect)
    check_retriever_dir(rdir, retriever, r_manifest, verify_files=False)  # load_retriever hashes the files
    loaded = load_retriever(rdir / "data")
    meta_path = rdir / "data" / META_FILE
    got, want = _json_round_trip(loaded.config()), _json_round_trip(retriever.config())
    if got != want:
        raise CorruptIndexError(meta_path, f"loads as config {got!r}, expected {want!r}")
    if loaded.n_docs != len(table.chunks):
        raise CorruptIndexError(meta_path, f"retriever holds {loaded.n_docs} docs, chunk table {len(table.chunks)}")
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
