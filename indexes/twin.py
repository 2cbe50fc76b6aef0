"""Reuse of a whole index: a snapshot whose content is already indexed in the store is copied, not assembled.

:func:`indexes.build.ensure_index` (with ``reuse``) records, for every chunk table it writes, where it lies in
the store, keyed by the snapshot's content fingerprint, the chunker directory's config and the toolkit's code
(:data:`~indexes.cache.TWIN_KIND` entries of the content-addressed cache, :func:`register_twin`). A later build of
a snapshot with the same fingerprint (a copy under another name, an unchanged checkout) finds that *twin* and
copies its chunk table (:func:`copy_table_from_twin`), each retriever directory that is current there
(:func:`copy_retriever_from_twin`) and its graph (:func:`indexes.graph_store.copy_graph_from_twin`), every file
checked against its record first; the manifests are written for this snapshot (its name, path, walk statistics,
times). The files are the ones a build would write: the index of a snapshot is a function of its indexed content
and the configs, which the fingerprint and the directory names cover. A twin that is gone, damaged or of other
content is not used (the build goes on as without it).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swe_explore.indexes.build import (
    _add_seconds,
    _check_retriever_dir,
    _is_current,
)
from swe_explore.indexes.cache import TWIN_KIND, CacheNamespace
from swe_explore.indexes.files import (
    MANIFEST,
    CorruptIndexError,
    StaleIndexError,
    file_records,
    jsonable,
    read_json,
    write_json,
)
from swe_explore.indexes.store import (
    CHUNK_FILES,
    ChunkTable,
    atomic_directory,
    check_manifest,
    now_iso,
    toolkit_version,
    write_retriever_manifest,
)
from swe_explore.retrievers.base import Retriever

if TYPE_CHECKING:
    from swe_explore.indexes.build import _Run

__all__ = ["copy_retriever_from_twin", "copy_table_from_twin", "register_twin"]


def _namespace(run: _Run) -> CacheNamespace:
    """The cache entries that say where a chunk table of this chunker directory's config was built, by snapshot
    fingerprint (keyed by the toolkit's code too, :func:`~indexes.cache.software_fingerprint`)."""
    assert run.cache is not None
    return run.cache.namespace(TWIN_KIND, {"chunk_dir": run.cdir.name})


def register_twin(run: _Run, manifest: dict[str, Any]) -> None:
    """Record in the cache that this chunker directory holds the table of this snapshot content (its path in
    the store and the table files' records, which :func:`_find_twin` compares)."""
    if run.cache is None:
        return
    _, _, fingerprint = run.walk()
    entry = {"dir": run.cdir.relative_to(run.cdir.parent.parent).as_posix(), "files": manifest["files"]}
    _namespace(run).put(fingerprint, json.dumps(entry, sort_keys=True).encode())


def _find_twin(run: _Run, expect: dict[str, Any]) -> tuple[Path, dict[str, Any]] | None:
    """Another snapshot's chunker directory in the store built from the same content, under the same config, by
    this code (:func:`register_twin`): its manifest must be current for this config and still record the
    fingerprint and the table files the cache entry names.

    :param run: the call's shared state.
    :param expect: the chunker directory's manifest expectations (``indexes.build._chunk_expectations``).
    :return: ``(its chunker directory, its manifest)``, or ``None``.
    """
    _, _, fingerprint = run.walk()
    payload = _namespace(run).get(fingerprint)
    if payload is None:
        return None
    try:
        entry = json.loads(payload)
        twin = run.cdir.parent.parent / entry["dir"]
        if twin == run.cdir or not (twin / MANIFEST).is_file():
            return None
        manifest = check_manifest(twin / MANIFEST, expect)
    except (ValueError, KeyError, TypeError, StaleIndexError, CorruptIndexError):
        return None
    if manifest.get("snapshot", {}).get("fingerprint") != fingerprint or manifest.get("files") != entry["files"]:
        return None
    return twin, manifest


def copy_table_from_twin(run: _Run, expect: dict[str, Any]) -> tuple[ChunkTable, dict[str, Any]] | None:
    """The chunk table step with reuse, when another snapshot of identical content is in the store
    (:func:`_find_twin`): its chunk table files are copied (checked against its manifest first) and the manifest
    written as :func:`indexes.build.ensure_index` writes it (this snapshot's name, path, walk statistics and
    seconds; the twin's chunking statistics, which depend on the content only). ``run.twin`` is set, so the
    retrievers and the graph are copied from it too when current there. The files are the ones a build would
    write.

    :param run: the call's shared state.
    :param expect: the chunker directory's manifest expectations.
    :return: ``(table, manifest)``, or ``None`` (no twin, or its table is broken).
    """
    files, walk_stats, fingerprint = run.walk()
    t0 = time.perf_counter()
    found = _find_twin(run, expect)
    if found is None:
        return None
    twin, twin_manifest = found
    try:
        table = ChunkTable.load(twin, twin_manifest["counts"]["chunks"], twin_manifest.get("files"))
    except (CorruptIndexError, KeyError, TypeError, FileNotFoundError):
        return None
    if table.file_lines != {f.path: len(f.lines) for f in files}:
        return None
    run.report.seconds["chunk"] = time.perf_counter() - t0
    manifest = expect | {
        "toolkit_version": toolkit_version(),
        "created_at": now_iso(),
        "snapshot": {"name": run.report.snapshot, "path": str(run.snapshot_dir.resolve()), "fingerprint": fingerprint},
        "counts": dict(twin_manifest["counts"]),
        "stats": {"walk": jsonable(walk_stats), "chunking": twin_manifest.get("stats", {}).get("chunking")},
        "seconds": {k: round(v, 4) for k, v in run.report.seconds.items()},
    }
    try:
        with atomic_directory(run.cdir) as tmp:
            for name in CHUNK_FILES:
                shutil.copyfile(twin / name, tmp / name)
            manifest["files"] = file_records(tmp, CHUNK_FILES)
            if manifest["files"] != twin_manifest["files"]:  # the twin was replaced while it was copied
                raise CorruptIndexError(twin / MANIFEST, "changed while it was copied")
            write_json(tmp / MANIFEST, manifest)
    except (CorruptIndexError, FileNotFoundError):  # FileNotFoundError: the twin was removed while it was copied
        return None
    run.twin = twin
    run.report.built.append("chunks")
    register_twin(run, manifest)
    return table, manifest


def copy_retriever_from_twin(run: _Run, rdir: Path, retriever: Retriever, expect: dict[str, Any]) -> bool:
    """Save a retriever by copying the twin's directory of it (:func:`copy_table_from_twin`) when that one is
    current for the same chunk table and intact; its manifest is written as
    :func:`indexes.build.ensure_index` writes it.

    :param run: the call's shared state.
    :param rdir: the retriever directory to write.
    :param retriever: an unbuilt retriever with the wanted config.
    :param expect: its manifest expectations.
    :return: whether it was copied.
    """
    if run.twin is None:
        return False
    source = run.twin / rdir.relative_to(run.cdir)
    try:
        if not _is_current(source, retriever, expect, False):
            return False
    except CorruptIndexError:
        return False
    t0 = time.perf_counter()
    try:
        with atomic_directory(rdir) as tmp:
            shutil.copytree(source / "data", tmp / "data", copy_function=shutil.copyfile)
            _check_retriever_dir(tmp, retriever, read_json(source / MANIFEST))  # the copy is what was checked
            write_retriever_manifest(tmp, expect, 0.0)
    except (CorruptIndexError, OSError):
        return False
    _add_seconds(run.report, retriever.name, time.perf_counter() - t0)
    run.report.built.append(retriever.name)
    return True


def keep_parts_of_same_content(cdir: Path, tmp: Path, fingerprint: str) -> list[str]:
    """Hard-link the retriever directories and the graph of a chunker directory being rebuilt into its
    replacement, when the old chunk table was built from the same snapshot content: a ``--rebuild`` of one
    retriever then keeps the others (each is still checked against the new table when it is opened or ensured).

    :param cdir: the chunker directory about to be replaced.
    :param tmp: its replacement, being written (``atomic_directory``).
    :param fingerprint: the snapshot's content fingerprint the new table is built from.
    :return: the parts kept (``retrievers``, ``graph``); none when the old manifest is unreadable or of other
        content.
    """
    try:
        old = read_json(cdir / MANIFEST)
    except (OSError, ValueError, CorruptIndexError):
        return []
    if not isinstance(old, dict) or old.get("snapshot", {}).get("fingerprint") != fingerprint:
        return []
    kept = []
    for part in ("retrievers", "graph"):
        if (cdir / part).is_dir() and not (tmp / part).exists():
            try:
                shutil.copytree(cdir / part, tmp / part, symlinks=True, copy_function=_link_or_copy)
            except OSError:
                shutil.rmtree(tmp / part, ignore_errors=True)
                continue
            kept.append(part)
    return kept


def _link_or_copy(src: str, dst: str) -> None:
    """A hard link (index files are replaced, never changed in place), or a copy where links fail."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
