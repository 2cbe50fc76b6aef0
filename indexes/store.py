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
reader sees a complete index or none. Loading checks the format version, the JSON, the array lengths against
the manifest counts, and that the retriever was built from this exact chunk table; a mismatch raises
:class:`~indexes.files.CorruptIndexError` (broken files) or :class:`~indexes.files.StaleIndexError` (a valid
index of something else), naming the file.
Every file is read and written through :mod:`indexes.files`.

Checksums: a chunker directory's manifest records the size and SHA-256 of ``chunks.json`` and ``chunks.npz``
(``files``, as :func:`indexes.files.file_records` writes them), a retriever directory's manifest the
SHA-256 of its ``data/retriever.json`` (``meta_sha256``), and ``retriever.json`` those of the retriever's own
data files; so every file of an index is covered and reusing or opening one checks them all (about 30 ms for
all five retrievers of pydata__xarray-7393). Manifests written before these fields existed are still read;
their missing checksums are not checked.

Concurrent builders (two ``index_repos.py`` runs on one store, ``index_repos.py`` next to ``run_baselines.py``,
two Dask clients, threads) are safe by two rules:

- **One builder per index.** Whoever checks or writes a chunker directory ``<snapshot>/<chunker>-<hash8>``
  (its chunk table and every retriever inside it) holds its :class:`IndexLock`, an exclusive ``flock`` on
  ``<snapshot>/<chunker>-<hash8>.lock`` (:mod:`filelock`, so it also works on NFS; the operating system drops
  it when its process dies, even on SIGKILL). A second builder of the same index waits, then finds it current
  and reuses it: every index is built once. The lock file is removed on release (see :class:`IndexLock` for
  why that is safe), so a store at rest holds index files only.
- **Only the owner removes a temporary.** Temporaries are named ``<target>.tmp-<host>-<pid>-<random>``
  (:func:`temporary_path`) and made only by the holder of their index's lock: the directories of
  :func:`atomic_directory`, the manifest being refreshed and the scratch directory of cache writes. Its owner
  removes each one when it is done or fails. One left behind was therefore abandoned by a builder that died
  (killed, out of memory, host lost): a temporary is provably abandoned when its index's lock is free, and
  :func:`remove_abandoned_temporaries` removes exactly those of the index whose lock the caller holds, never
  another index's, so a live builder's temporaries are never touched.

Readers (:func:`indexes.build.open_index`, and :func:`indexes.build.ensure_index` until it finds something to
build) take no lock: renames are atomic and every file is checked on load. So a fully built store can be queried
read-only; building in a store that cannot be written raises :class:`ReadOnlyStoreError`.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import re
import shutil
import socket
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, TypeVar

import numpy as np
from filelock import FileLock

from swe_explore.chunking.atomic import replace_directory
from swe_explore.chunking.types import Chunk, SourceFile
from swe_explore.indexes.files import (
    MANIFEST,
    META_FILE,
    CorruptIndexError,
    StaleIndexError,
    check_files,
    file_sha256,
    read_json,
    write_json,
)

#: The files of a chunk table (:meth:`ChunkTable.save`), whose sizes and SHA-256 the chunker manifest records.
CHUNK_FILES = ("chunks.json", "chunks.npz")
_TMP_MARK = ".tmp-"
#: The name of an index directory of a snapshot entry: ``<chunker>-<hash8>`` or ``history-<hash8>``.
INDEX_NAME = re.compile(r"[a-z][a-z0-9_]*-[0-9a-f]{8}")
#: What :func:`temporary_path` appends: ``.tmp-<host>-<pid>-<label><8 hex>``.
_TMP_SUFFIX = re.compile(r"\.tmp-[A-Za-z0-9_.]+-[0-9]+-[a-z-]*[0-9a-f]{8}$")


def is_temporary_name(name: str) -> bool:
    """Whether a file name is one :func:`temporary_path` makes (``x.tmp-node7-12345-cache-0badf00d``), so a user's
    ``notes.tmp-old`` is never taken for one.

    :param name: a file or directory name.
    :return: whether it ends with the temporary suffix after a non-empty target name.
    """
    match = _TMP_SUFFIX.search(name)
    return match is not None and match.start() > 0


def toolkit_version() -> str:
    """The installed ``swe-explore-baselines`` version (``"0+unknown"`` when not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("swe-explore-baselines")
    except PackageNotFoundError:
        return "0+unknown"


def check_snapshot_name(name: str) -> str:
    """A snapshot's name in the store, checked to be one folder name (so its entry is ``<store>/<name>``).

    :param name: the name.
    :return: ``name``.
    :raises ValueError: if it is empty, holds ``/``, ``\\`` or NUL, or starts with ``_`` (the store's own folders:
        ``_cache``, ``_reports``) or ``.`` (``..`` included), which the store's listing skips.
    """
    if not name or name.startswith(("_", ".")) or any(c in name for c in "/\\\0"):
        raise ValueError(
            f"snapshot name {name!r} is not a folder name of the store: no '/', '\\' or NUL, and not starting "
            "with '_' or '.'"
        )
    return name


def config_key(name: str, config: Mapping[str, Any]) -> str:
    """Directory name for a named config: ``<name>-<first 8 hex of sha256(canonical JSON)>``.

    :param name: chunker or retriever name.
    :param config: its JSON-serialisable parameters.
    :return: e.g. ``"function-1a2b3c4d"``.
    """
    blob = json.dumps({"name": name, "config": config}, sort_keys=True, separators=(",", ":"))
    return f"{name}-{hashlib.sha256(blob.encode()).hexdigest()[:8]}"


def snapshot_key(folder: str | Path) -> str:
    """A folder's default name in the store: its base name and a hash of its absolute path, so two folders of one
    name (``~/a/repo``, ``~/b/repo``) keep separate indexes (bench runs name snapshots by ``instance_id``).

    :param folder: the snapshot folder.
    :return: e.g. ``"repo-1a2b3c4d"``.
    """
    absolute = Path(folder).resolve()
    digest = hashlib.sha256(str(absolute).encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{absolute.name.lstrip('._') or 'root'}-{digest}"  # a valid name (check_snapshot_name) for any folder


#: Environment variable that overrides the default index store.
STORE_ENV_VAR = "SWE_EXPLORE_STORE"


def default_store() -> Path:
    """Where indexes are saved unless a store is given: ``$SWE_EXPLORE_STORE``, else the user cache directory.

    The cache directory is the platform's (``platformdirs.user_cache_dir``: ``$XDG_CACHE_HOME`` or
    ``~/.cache/swe-explore-baselines/indexes`` on Linux, ``~/Library/Caches/...`` on macOS), so nothing is
    written into the working directory unless asked (``--store DIR``).

    :return: the store root (not created here).
    """
    override = os.environ.get(STORE_ENV_VAR)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("swe-explore-baselines", appauthor=False)) / "indexes"


_Loaded = TypeVar("_Loaded")


class LastLoaded(Generic[_Loaded]):
    """Load once, keep the last: the index of the snapshot queried last, kept in memory for the next query.

    An explorer answers consecutive queries on one snapshot from one loaded index (the snapshot is assumed not
    to change within one process), so only the first query pays for the freshness check and the load.
    """

    def __init__(self) -> None:
        self._key: tuple[Path, str] | None = None
        self._value: _Loaded | None = None

    def get(self, snapshot_dir: str | Path, snapshot_name: str, load: Callable[[], _Loaded]) -> _Loaded:
        """The kept value when it is this snapshot's, else ``load()`` (which then replaces it).

        :param snapshot_dir: the snapshot (compared by resolved path).
        :param snapshot_name: its name in the store.
        :param load: builds and loads the snapshot's index.
        :return: the loaded index.
        """
        key = (Path(snapshot_dir).resolve(), snapshot_name)
        if self._value is None or self._key != key:
            self._value = load()
            self._key = key
        return self._value


def snapshot_fingerprint(
    files: Sequence[SourceFile], on_file: Callable[[SourceFile, bytes], None] | None = None
) -> str:
    """Content fingerprint of a walked snapshot: SHA-256 over every indexed file's path and lines.

    Two snapshots with the same indexed files (paths and line contents, by :mod:`chunking.lines`) have the same
    fingerprint wherever they live on disk and whatever their mtimes.

    :param files: the walker's output.
    :param on_file: called with each file and its encoded text (lines joined by ``"\\n"``, UTF-8), so a caller
        that hashes files too (:func:`indexes.cache.file_digest`) encodes each text once.
    :return: 64 hex digits.
    """
    digest = hashlib.sha256()
    for f in files:
        text = "\n".join(f.lines).encode("utf-8", "surrogatepass")
        digest.update(f.path.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
        digest.update(text)
        digest.update(b"\0")
        if on_file is not None:
            on_file(f, text)
    return digest.hexdigest()


def _owner_tag() -> str:
    """``<host>-<pid>`` of this process, as temporaries carry it (characters outside ``[A-Za-z0-9_.]`` become
    ``_``, so a host name never adds a path separator or a ``-`` field boundary).

    :return: e.g. ``"node7-12345"``.
    """
    return f"{re.sub(r'[^A-Za-z0-9_.]', '_', socket.gethostname())}-{os.getpid()}"


def temporary_path(target: Path, label: str = "") -> Path:
    """A fresh temporary name beside ``target``: ``<target>.tmp-<host>-<pid>-<label><8 random hex>``.

    Only the holder of the index's :class:`IndexLock` makes temporaries of that index (see the module
    docstring), and the owner's host and pid in the name tell who left one behind.

    :param target: the file or directory the temporary stands for.
    :param label: a word in the name (``"old-"``, ``"cache-"``), for people reading the directory.
    :return: the path (nothing is created).
    """
    return target.parent / f"{target.name}{_TMP_MARK}{_owner_tag()}-{label}{uuid.uuid4().hex[:8]}"


@contextlib.contextmanager
def atomic_directory(target: Path) -> Iterator[Path]:
    """Write a directory atomically: yields an empty temporary directory that replaces ``target`` on success.

    On an exception the temporary directory is removed and ``target`` is left as it was. An existing
    ``target`` is swapped out and deleted only after the new one is in place. The caller holds the lock of
    the index ``target`` belongs to (:class:`IndexLock`), so no other process writes ``target`` meanwhile.

    :param target: the directory to (re)create.
    :yield: the temporary directory to fill (a sibling of ``target``).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(target)
    tmp.mkdir()
    try:
        yield tmp
        replace_directory(tmp, target, temporary_path(target, "old-"))
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def lock_path(chunk_dir: Path) -> Path:
    """The lock file of an index (a chunker directory and every retriever directory inside it).

    :param chunk_dir: ``<store>/<snapshot>/<chunker>-<hash8>``.
    :return: ``<store>/<snapshot>/<chunker>-<hash8>.lock``.
    """
    return chunk_dir.parent / f"{chunk_dir.name}.lock"


class _LockFileReplaced(Exception):
    """The lock was taken on a lock file that its previous holder had already removed; take it again."""


class IndexLock:
    """Exclusive lock of one index of the store, held while checking and building it; a context manager.

    The lock is :class:`filelock.FileLock` (``flock``) on :func:`lock_path`. It is released by the operating
    system when its process dies, so a builder killed while holding it blocks nobody. The lock file is removed
    on release so that the store holds only index files; that is safe because every acquisition checks, while
    holding the ``flock``, that the locked file is still the one at the lock's path (same device and inode,
    through filelock's ``on_acquired`` hook) and otherwise takes the lock again on the current file: a waiter
    that was blocked on a file its holder removed never believes it holds the lock (the standard protocol for
    removable lock files).

    :param chunk_dir: the index's chunker directory (it need not exist yet; its parent is created).
    :param timeout: seconds to wait for another builder; ``None`` (the default) waits as long as it takes.
    :raises filelock.Timeout: on entry, if ``timeout`` passed while another process held the lock.
    """

    def __init__(self, chunk_dir: Path, timeout: float | None = None) -> None:
        self.path = lock_path(Path(chunk_dir))
        self.timeout = timeout
        self._lock: FileLock | None = None

    def _check_current(self, fd: int) -> None:
        """``on_acquired`` hook: refuse a lock taken on a removed or replaced lock file."""
        held = os.fstat(fd)
        try:
            current = os.stat(self.path)
        except FileNotFoundError:
            raise _LockFileReplaced() from None
        if (held.st_dev, held.st_ino) != (current.st_dev, current.st_ino):
            raise _LockFileReplaced()

    def __enter__(self) -> IndexLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        while True:
            wait = -1.0 if deadline is None else max(0.0, deadline - time.monotonic())
            lock = FileLock(str(self.path), timeout=wait, on_acquired=self._check_current)
            try:
                lock.acquire()
            except _LockFileReplaced:
                continue  # the file we locked was removed by its previous holder: lock the current one
            self._lock = lock
            return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        lock, self._lock = self._lock, None
        if lock is None:
            return
        try:
            with contextlib.suppress(FileNotFoundError, PermissionError):
                os.unlink(self.path)  # while still holding it: waiters on this file will see it is gone
        finally:
            lock.release()


def lock_is_free(chunk_dir: Path) -> bool:
    """Whether no builder holds an index's :class:`IndexLock`, found without writing anything (no lock file is
    made or removed): for listing what ``store gc --dry-run`` would remove, read-only stores included. The answer
    may be stale by the time it is read; only holding the lock proves a temporary abandoned.

    :param chunk_dir: the index's chunker directory.
    :return: ``True`` if the lock file is missing (every holder has it) or can be ``flock``-ed at once; ``False``
        if it is held, cannot be opened, or the platform has no ``flock``.
    """
    try:
        import fcntl
    except ImportError:  # not a POSIX platform: say held, so nothing is listed
        return False
    try:
        fd = os.open(lock_path(chunk_dir), os.O_RDONLY)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    finally:
        os.close(fd)


def remove_abandoned_temporaries(chunk_dir: Path) -> int:
    """Delete the temporaries of one index that dead builders left behind; call it holding its :class:`IndexLock`.

    Holding the lock proves every temporary of this index abandoned (only the lock holder makes them, see the
    module docstring): ``<chunker>-<hash8>.tmp-*`` beside the chunker directory, and ``*.tmp-*`` inside it and
    inside its ``retrievers/``. Temporaries of other indexes of the snapshot (another chunker config, whose
    builder may be running) are left alone.

    :param chunk_dir: the index's chunker directory.
    :return: how many were removed.
    """
    removed = 0
    for tmp in index_temporaries(chunk_dir):
        if tmp.is_dir() and not tmp.is_symlink():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        removed += 1
    return removed


def index_temporaries(chunk_dir: Path) -> list[Path]:
    """The temporaries of one index, whoever made them (:func:`remove_abandoned_temporaries` says which): names
    :func:`is_temporary_name` accepts, beside the index directory for it, inside it and inside its
    ``retrievers/``; a directory that is a symbolic link is not looked into.

    :param chunk_dir: the index's chunker (or history) directory.
    :return: their paths, sorted.
    """
    patterns = [
        (chunk_dir.parent, f"{glob.escape(chunk_dir.name)}{_TMP_MARK}*"),
        (chunk_dir, f"*{_TMP_MARK}*"),
        (chunk_dir / "retrievers", f"*{_TMP_MARK}*"),
    ]
    found: list[Path] = []
    for directory, pattern in patterns:
        if directory.is_dir() and not directory.is_symlink():
            found += [tmp for tmp in directory.glob(pattern) if is_temporary_name(tmp.name)]
    return sorted(found)


@dataclass(frozen=True)
class ChunkTable:
    """The chunks of one snapshot without their text, as persisted next to every retriever of that snapshot.

    :param chunks: chunks in index order (retriever hit ``i`` is ``chunks[i]``); ``text`` is empty.
    :param file_lines: line count of every indexed file (also files that yielded no chunk), by path.
    """

    chunks: list[Chunk]
    file_lines: dict[str, int]

    def fingerprint(self) -> str:
        """SHA-256 of the table's content; a retriever records it to prove which chunks it indexed. Computed on the
        first call (a build asks three to five times; the table is not changed after it is made)."""
        return self._content_fingerprint

    @cached_property
    def _content_fingerprint(self) -> str:
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
        arrays: dict[str, Any] = {k: np.asarray(v, dtype=np.int32) for k, v in columns.items()}
        np.savez(directory / "chunks.npz", **arrays)

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
    manifest: dict[str, Any] = read_json(path)
    for key, value in expected.items():
        want = json.loads(json.dumps(value))
        if manifest.get(key) != want:
            raise StaleIndexError(path, f"{key} is {manifest.get(key)!r}, expected {want!r}")
    return manifest


def now_iso() -> str:
    """UTC timestamp for manifests, ``YYYY-MM-DDTHH:MM:SSZ``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class ReadOnlyStoreError(ValueError):
    """An index must be built but the store cannot be written (read-only file system, no permission).

    Raised by :func:`indexes.build.ensure_index` (and :func:`~indexes.graph_store.ensure_graph_once`) only when
    something is missing or stale: a fully built store is queried without writing. The message is one line,
    ``"<index directory>: missing or stale, and the store is read-only (<OS reason>); build it with
    scripts/index_repos.py in a writable store"``.

    :param path: the index directory that would have to be built.
    :param cause: the error of the attempt to take the index's lock.
    :param advice: what to do instead of the default advice (e.g. the ``explore`` command's).
    """

    def __init__(
        self, path: str | Path, cause: OSError, advice: str = "build it with scripts/index_repos.py in a writable store"
    ) -> None:
        self.path = Path(path)
        self.cause = cause
        reason = cause.strerror or type(cause).__name__
        super().__init__(f"{path}: missing or stale, and the store is read-only ({reason}); {advice}")


def write_retriever_manifest(tmp: Path, expect: dict[str, Any], build_seconds: float) -> None:
    """Write a retriever directory's manifest: ``expect`` plus toolkit version, time, ``retriever.json``'s hash and
    the build seconds (0 for a copy).

    :param tmp: the directory being written (holding ``data/``).
    :param expect: the manifest's identifying fields (config, chunk table).
    :param build_seconds: seconds the retriever took to build.
    """
    write_json(
        tmp / MANIFEST,
        expect
        | {
            "toolkit_version": toolkit_version(),
            "created_at": now_iso(),
            "meta_sha256": file_sha256(tmp / "data" / META_FILE),
            "seconds": {"build": round(build_seconds, 4)},
        },
    )
