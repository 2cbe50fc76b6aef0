"""Persistent indexes: one directory per (snapshot, chunker config) holding the chunk table, and inside it one
directory per retriever config. Every write is atomic, every load is checked.

Layout under the store root (default: ``$SWE_EXPLORE_STORE``, else the user cache directory)::

    <root>/<snapshot>/<chunker>-<hash8>/manifest.json        toolkit version, walk + chunker config,
                                       chunks.json          snapshot fingerprint, counts, skipped files
                                       chunks.npz           chunk table (no text): paths/kinds/... + int32 arrays
                                       retrievers/<retriever>-<hash8>/manifest.json
                                                                      data/     the retriever's own files
                                       (a hybrid's data/ holds only links to its parts' sibling directories)

``<hash8>`` is the first 8 hex digits of the SHA-256 of the canonical JSON of the config, so two configs never
share a directory. Files are JSON and ``.npz``/``.npy`` (``allow_pickle=False``) only; no pickle.

A directory is written under a temporary name beside its target and renamed into place (``os.replace``), so a
reader sees a complete index or none, and a killed build leaves only a ``.tmp-*`` directory that the next build
removes. Loading checks the format version, the JSON, the array lengths against the manifest counts, and that
the retriever was built from this exact chunk table; a mismatch raises :class:`~indexes.files.CorruptIndexError`
(broken files) or :class:`~indexes.files.StaleIndexError` (a valid index of something else), naming the file.
Every file is read and written through :mod:`indexes.files`.

Checksums: a chunker directory's manifest records the size and SHA-256 of ``chunks.json`` and ``chunks.npz``
(``files``, as :func:`indexes.files.file_records` writes them), a retriever directory's manifest the
SHA-256 of its ``data/retriever.json`` (``meta_sha256``), and ``retriever.json`` those of the retriever's own
data files; so every file of an index is covered and reusing or opening one checks them all (about 30 ms for
all five retrievers of pydata__xarray-7393). Manifests written before these fields existed are still read;
their missing checksums are not checked.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from swe_explore.chunking.types import Chunk, SourceFile
from swe_explore.indexes.files import MANIFEST, CorruptIndexError, StaleIndexError, check_files, read_json, write_json

#: The files of a chunk table (:meth:`ChunkTable.save`), whose sizes and SHA-256 the chunker manifest records.
CHUNK_FILES = ("chunks.json", "chunks.npz")
_TMP_MARK = ".tmp-"


def toolkit_version() -> str:
    """The installed ``swe-explore-baselines`` version (``"0+unknown"`` when not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("swe-explore-baselines")
    except PackageNotFoundError:
        return "0+unknown"


def config_key(name: str, config: Mapping[str, Any]) -> str:
    """Directory name for a named config: ``<name>-<first 8 hex of sha256(canonical JSON)>``.

    :param name: chunker or retriever name.
    :param config: its JSON-serialisable parameters.
    :return: e.g. ``"function-1a2b3c4d"``.
    """
    blob = json.dumps({"name": name, "config": config}, sort_keys=True, separators=(",", ":"))
    return f"{name}-{hashlib.sha256(blob.encode()).hexdigest()[:8]}"


def snapshot_fingerprint(files: Sequence[SourceFile]) -> str:
    """Content fingerprint of a walked snapshot: SHA-256 over every indexed file's path and lines.

    Two snapshots with the same indexed files (paths and line contents, by :mod:`chunking.lines`) have the same
    fingerprint wherever they live on disk and whatever their mtimes.

    :param files: the walker's output.
    :return: 64 hex digits.
    """
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.path.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
        digest.update("\n".join(f.lines).encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


@contextlib.contextmanager
def atomic_directory(target: Path) -> Iterator[Path]:
    """Write a directory atomically: yields an empty temporary directory that replaces ``target`` on success.

    On an exception the temporary directory is removed and ``target`` is left as it was. An existing
    ``target`` is swapped out and deleted only after the new one is in place.

    :param target: the directory to (re)create.
    :return: a context manager yielding the temporary directory to fill.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f"{target.name}{_TMP_MARK}{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        yield tmp
        old = None
        if target.exists():
            old = target.parent / f"{target.name}{_TMP_MARK}old-{uuid.uuid4().hex[:8]}"
            os.replace(target, old)
        os.replace(tmp, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def remove_stale_temporaries(directory: Path) -> int:
    """Delete ``*.tmp-*`` directories left by killed builds under ``directory`` (two levels deep).

    :param directory: a snapshot's index directory.
    :return: how many were removed.
    """
    removed = 0
    if not directory.is_dir():
        return 0
    for pattern in (f"*{_TMP_MARK}*", f"*/retrievers/*{_TMP_MARK}*"):
        for tmp in directory.glob(pattern):
            shutil.rmtree(tmp, ignore_errors=True)
            removed += 1
    return removed


@dataclass(frozen=True)
class ChunkTable:
    """The chunks of one snapshot without their text, as persisted next to every retriever of that snapshot.

    :param chunks: chunks in index order (retriever hit ``i`` is ``chunks[i]``); ``text`` is empty.
    :param file_lines: line count of every indexed file (also files that yielded no chunk), by path.
    """

    chunks: list[Chunk]
    file_lines: dict[str, int]

    def fingerprint(self) -> str:
        """SHA-256 of the table's content; a retriever records it to prove which chunks it indexed."""
        digest = hashlib.sha256()
        for c in self.chunks:
            digest.update(f"{c.path}\0{c.start}\0{c.end}\0{c.kind}\0{c.symbol}\0{c.language}\n".encode())
        return digest.hexdigest()

    def save(self, directory: Path) -> None:
        """Write ``chunks.json`` (strings) and ``chunks.npz`` (int32 columns) into ``directory``."""
        paths = sorted({c.path for c in self.chunks} | set(self.file_lines))
        kinds = sorted({c.kind for c in self.chunks})
        languages = sorted({c.language for c in self.chunks})
        pid, kid, lid = ({v: i for i, v in enumerate(xs)} for xs in (paths, kinds, languages))
        write_json(
            directory / "chunks.json",
            {
                "paths": paths,
                "kinds": kinds,
                "languages": languages,
                "symbols": [c.symbol for c in self.chunks],
                "file_lines": [self.file_lines.get(p, 0) for p in paths],
            },
        )
        columns = {
            "path": [pid[c.path] for c in self.chunks],
            "start": [c.start for c in self.chunks],
            "end": [c.end for c in self.chunks],
            "kind": [kid[c.kind] for c in self.chunks],
            "language": [lid[c.language] for c in self.chunks],
        }
        np.savez(directory / "chunks.npz", **{k: np.asarray(v, dtype=np.int32) for k, v in columns.items()})

    @classmethod
    def load(
        cls, directory: Path, expected_chunks: int | None = None, files: Mapping[str, Any] | None = None
    ) -> ChunkTable:
        """Read a table written by :meth:`save`, checking every array against the others.

        :param directory: the chunker directory.
        :param expected_chunks: chunk count from the manifest, if known.
        :param files: the manifest's ``files`` record (size and SHA-256 of :data:`CHUNK_FILES`), checked before
            anything is parsed; ``None`` (a manifest older than that record) skips the check.
        :return: the table.
        :raises CorruptIndexError: naming ``chunks.json`` or ``chunks.npz`` when missing, truncated, edited or
            inconsistent, or the manifest if its ``files`` record is malformed.
        """
        directory = Path(directory)
        if files is not None:
            check_files(directory, files, directory / MANIFEST)
        meta = read_json(directory / "chunks.json")
        npz_path = directory / "chunks.npz"
        try:
            with np.load(npz_path, allow_pickle=False) as npz:
                cols = {k: npz[k] for k in ("path", "start", "end", "kind", "language")}
        except FileNotFoundError:
            raise CorruptIndexError(npz_path, "file is missing") from None
        except Exception as exc:  # zipfile/numpy raise many types for a truncated or edited archive
            raise CorruptIndexError(npz_path, f"unreadable array archive ({type(exc).__name__}: {exc})") from None
        try:
            paths, kinds, languages = meta["paths"], meta["kinds"], meta["languages"]
            symbols, file_lines = meta["symbols"], meta["file_lines"]
        except KeyError as exc:
            raise CorruptIndexError(directory / "chunks.json", f"missing key {exc}") from None
        n = len(symbols)
        lengths = {k: len(v) for k, v in cols.items()}
        problems = []
        if set(lengths.values()) != {n} and n:
            problems.append(f"column lengths {lengths} != {n} symbols")
        if expected_chunks is not None and n != expected_chunks:
            problems.append(f"{n} chunks, manifest says {expected_chunks}")
        if len(file_lines) != len(paths):
            problems.append(f"{len(file_lines)} line counts for {len(paths)} paths")
        for key, table in (("path", paths), ("kind", kinds), ("language", languages)):
            col = cols[key]
            if len(col) and (col.min() < 0 or col.max() >= len(table)):
                problems.append(f"{key} ids outside 0..{len(table) - 1}")
        if len(cols["start"]) and (cols["start"].min() < 1 or (cols["end"] < cols["start"]).any()):
            problems.append("a line range is not 1-based and ordered")
        if problems:
            raise CorruptIndexError(npz_path, "; ".join(problems))
        chunks = [
            Chunk(paths[p], int(s), int(e), kinds[k], sym, languages[lang])
            for p, s, e, k, lang, sym in zip(
                cols["path"].tolist(),
                cols["start"].tolist(),
                cols["end"].tolist(),
                cols["kind"].tolist(),
                cols["language"].tolist(),
                symbols,
            )
        ]
        return cls(chunks, dict(zip(paths, (int(x) for x in file_lines))))


def check_manifest(path: Path, expected: Mapping[str, Any]) -> dict[str, Any]:
    """Read a manifest and compare the given keys; raise :class:`StaleIndexError` naming the first difference.

    :param path: ``manifest.json``.
    :param expected: key → value every manifest of the wanted index must hold (compared after a JSON round trip).
    :return: the manifest.
    :raises CorruptIndexError: if the manifest is unreadable.
    :raises StaleIndexError: if a value differs.
    """
    manifest = read_json(path)
    for key, value in expected.items():
        want = json.loads(json.dumps(value))
        if manifest.get(key) != want:
            raise StaleIndexError(path, f"{key} is {manifest.get(key)!r}, expected {want!r}")
    return manifest


def now_iso() -> str:
    """UTC timestamp for manifests, ``YYYY-MM-DDTHH:MM:SSZ``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
