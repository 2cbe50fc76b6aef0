"""Managing an index store: what it holds (:func:`list_store`), its size (:func:`disk_usage`), removing what is no
longer needed (:func:`collect_garbage`), when each snapshot's index was last used (:func:`mark_used`), finding the
index of a folder that moved (:func:`store_name`), and the one line a command prints about the store it used
(:class:`StoreUse`).

What lives where under a store root (:mod:`indexes.store`)::

    <root>/<snapshot>/<chunker>-<hash8>/...          the index: chunk table, retrievers/, graph/ ("indexes", "graph")
    <root>/<snapshot>/last_used.json                 {"path": the folder it was last used from}; mtime = last use
    <root>/<snapshot>/history-<hash8>/...            the history index (indexes/history.py; "indexes")
    <root>/<snapshot>/<index>.lock, <index>.tmp-*    a builder's lock file and temporaries (indexes/store.py)
    <root>/_cache/                                   the content-addressed reuse cache (indexes/cache.py)
    <root>/_reports/                                 index_repos run reports ("other")

What counts as a store: the store commands act only on a directory that is an index store, so that a mistyped
``--store`` never lists or removes a source folder. An *index directory* is a directory of an entry whose
``manifest.json`` is a JSON object written by this toolkit: a chunk table's (its ``chunker`` and ``snapshot``
are objects, indexes/build.py) or a history index's (``"kind": "history"``). A *snapshot entry* is a directory
of the root (not named ``_...`` or ``.*``) holding at least one index directory; only those are listed, counted
and removed. A directory is an index store when it is empty, holds ``_cache`` or ``_reports``, holds a
snapshot entry, or a folder holding an index's lock file or temporary (a first build that was killed);
:func:`check_store` refuses any other directory (:class:`NotAStoreError`), and a missing one.

Last use: an explorer that checks or loads a snapshot's index (its ``index()``, which ``explore()`` calls on the
first query of a snapshot) touches ``last_used.json`` (one ``utime``; the file is rewritten only when the
folder's path changed), so a store at rest costs nothing and a bench run one ``utime`` per snapshot.
``index_repos`` does not mark. On a store that cannot be written (read-only mount, no write permission) the mark
is skipped, without trying to write. A snapshot never marked counts as last used when its newest manifest was
written.

Moved folders: an explorer names a folder in the store by :func:`~indexes.store.snapshot_key` (folder name and a
hash of its absolute path) unless given a name (bench runs use the ``instance_id``). When that entry has no index
of the wanted chunker config, :func:`store_name` looks for the entries of the same folder name (``<name>`` as
``index_repos`` writes it, ``<name>-<8 hex>`` as explorers write it) whose chunk table was built from the same
content (the snapshot fingerprint of :func:`~indexes.store.snapshot_fingerprint`, stored in the manifest), and
uses that one: a store and its snapshots copied or moved together are queried without a rebuild, read-only too.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import glob
import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_explore.chunking.atomic import write_text_atomic
from swe_explore.chunking.registry import Chunker
from swe_explore.chunking.walk import WalkConfig, walk_snapshot
from swe_explore.indexes.build import chunk_dir_for
from swe_explore.indexes.cache import CACHE_DIR
from swe_explore.indexes.files import MANIFEST
from swe_explore.indexes.graph_store import GRAPH_DIR
from swe_explore.indexes.store import (
    INDEX_NAME,
    IndexLock,
    index_temporaries,
    is_temporary_name,
    lock_is_free,
    lock_path,
    remove_abandoned_temporaries,
    snapshot_fingerprint,
    snapshot_key,
    temporary_path,
)

__all__ = [
    "REPORTS_DIR",
    "USED_FILE",
    "GcResult",
    "NotAStoreError",
    "SnapshotEntry",
    "StoreNames",
    "StoreUse",
    "check_store",
    "collect_garbage",
    "disk_usage",
    "list_store",
    "mark_used",
    "parse_date",
    "snapshot_entries",
    "store_is_writable",
    "store_name",
]

#: The last-use mark of a snapshot's entry: ``<root>/<snapshot>/last_used.json``.
USED_FILE = "last_used.json"
#: Where ``index_repos`` writes its run reports: ``<root>/_reports`` (indexes/report.py).
REPORTS_DIR = "_reports"
_HASHED_NAME = re.compile(r"-[0-9a-f]{8}$")


def store_is_writable(directory: Path) -> bool:
    """Whether files can be written in ``directory`` without trying: not on a read-only mount (``ST_RDONLY``) and
    writable by this user (``os.access``).

    :param directory: an existing directory of the store.
    :return: ``False`` also when it does not exist.
    """
    try:
        if os.statvfs(directory).f_flag & os.ST_RDONLY:
            return False
    except OSError:
        return False
    return os.access(directory, os.W_OK | os.X_OK)


def mark_used(store: Path, snapshot_name: str, snapshot_dir: Path) -> None:
    """Record that a snapshot's index was just used: touch ``<store>/<snapshot>/last_used.json``, (re)writing it
    when it is missing or names another folder. Skipped on a store that cannot be written; never raises.

    :param store: the store root.
    :param snapshot_name: the snapshot's name in the store.
    :param snapshot_dir: the folder the index was used for (recorded as its absolute path).
    """
    entry = Path(store) / snapshot_name
    if not store_is_writable(entry):
        return
    marker = entry / USED_FILE
    path = str(Path(snapshot_dir).resolve())
    with contextlib.suppress(OSError, ValueError):
        if _marked_path(marker) == path:
            os.utime(marker)
            return
        write_text_atomic(marker, json.dumps({"path": path}) + "\n")


def _marked_path(marker: Path) -> str | None:
    """The folder path a last-use mark records, or ``None`` (no mark, unreadable)."""
    try:
        value = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    path = value.get("path") if isinstance(value, dict) else None
    return path if isinstance(path, str) else None


def _stored_fingerprint(chunk_dir: Path) -> str | None:
    """The snapshot fingerprint a chunk table's manifest records, or ``None``."""
    try:
        manifest = json.loads((chunk_dir / MANIFEST).read_text(encoding="utf-8"))
        value = manifest["snapshot"]["fingerprint"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return value if isinstance(value, str) else None


def store_name(store: Path, snapshot_dir: Path, chunker: Chunker, walk_config: WalkConfig) -> str:
    """The name under which an explorer finds a folder's index in the store (the module docstring).

    :func:`~indexes.store.snapshot_key` when that entry holds an index of this chunker config, or when no other
    entry of the same folder name does; else the first such entry (sorted by name) whose chunk table was built
    from this folder's present content (the folder is walked once to compare); else the key.

    :param store: the store root.
    :param snapshot_dir: the folder.
    :param chunker: the chunk strategy.
    :param walk_config: the walking rules.
    :return: the entry name to build or load.
    """
    key = snapshot_key(snapshot_dir)
    store = Path(store)
    if (chunk_dir_for(store, key, chunker, walk_config) / MANIFEST).is_file():
        return key
    base = key.rsplit("-", 1)[0]  # the folder's name as snapshot_key writes it
    names = [base] + sorted(
        Path(p).name for p in glob.glob(os.path.join(glob.escape(str(store)), glob.escape(base) + "-*"))
    )
    candidates: list[tuple[str, str]] = []
    for name in names:
        if name == key or (name != base and not _HASHED_NAME.search(name[len(base) :])):
            continue
        fingerprint = _stored_fingerprint(chunk_dir_for(store, name, chunker, walk_config))
        if fingerprint is not None:
            candidates.append((name, fingerprint))
    if not candidates:
        return key
    present = snapshot_fingerprint(walk_snapshot(Path(snapshot_dir), walk_config)[0])
    for name, fingerprint in candidates:
        if fingerprint == present:
            return name
    return key


class StoreNames:
    """:func:`store_name` looked up once per folder, as an explorer needs it for every query.

    :param store: the store root.
    :param chunker: the explorer's chunker.
    :param walk_config: its walking rules.
    """

    def __init__(self, store: Path, chunker: Chunker, walk_config: WalkConfig) -> None:
        self.store, self.chunker, self.walk_config = Path(store), chunker, walk_config
        self._names: dict[Path, str] = {}

    def __call__(self, snapshot_dir: str | Path) -> str:
        """The folder's name in the store (:func:`store_name`, remembered by resolved path).

        :param snapshot_dir: the folder.
        :return: its store name.
        """
        folder = Path(snapshot_dir).resolve()
        if folder not in self._names:
            self._names[folder] = store_name(self.store, folder, self.chunker, self.walk_config)
        return self._names[folder]


@dataclass
class StoreUse:
    """Which snapshots' indexes an explorer built and which it found current, for the one line a command prints.

    :param store: the store root.
    :param built: names of the snapshots of which something was built.
    :param current: names of the snapshots whose indexes were all current.
    """

    store: Path
    built: set[str] = field(default_factory=set)
    current: set[str] = field(default_factory=set)

    def note(self, snapshot_name: str, built: bool) -> None:
        """Count one load of a snapshot's index.

        :param snapshot_name: its name in the store.
        :param built: whether anything of it was built.
        """
        (self.built if built else self.current).add(snapshot_name)

    @classmethod
    def merged(cls, uses: list[StoreUse]) -> StoreUse:
        """Several explorers' uses of one store as one (a snapshot built by any of them counts as built).

        :param uses: at least one; the first one's store is the merged one's.
        :return: the union.
        """
        out = cls(uses[0].store)
        for use in uses:
            out.built |= use.built
            out.current |= use.current
        return out

    def line(self) -> str:
        """``indexes: <store> (<B> built, <C> current)``, a snapshot counted once (as built if it was)."""
        current = len(self.current - self.built)
        return f"indexes: {self.store} ({len(self.built)} built, {current} current)"


@dataclass
class SnapshotEntry:
    """One snapshot's entry in a store, as ``store list`` shows it.

    :param name: the entry's name (a directory of the store root).
    :param paths: the folders it was built from or last used from (manifests' ``snapshot.path`` and the last-use
        mark), each once, the last-used one first.
    :param configs: one dict per index directory: ``{"kind", "chunker", "key", "walk", "retrievers": [names],
        "graph": bool}``; ``kind`` is ``"chunks"`` (a chunk table, with its ``chunker`` name, ``walk``: the walk
        settings that differ from the default, e.g. ``{"ignore_files": false}``) or ``"history"`` (the history
        index: ``chunker`` ``None``, no retrievers, no graph).
    :param size: bytes of its files (apparent sizes; links not followed).
    :param last_used: seconds since the epoch of its last use (:func:`mark_used`), else of its newest manifest;
        ``None`` for an entry without either.
    """

    name: str
    paths: list[str]
    configs: list[dict[str, Any]]
    size: int
    last_used: float | None

    def exists(self) -> bool:
        """Whether one of the folders it was built or used from is still a directory (``True`` if none is known)."""
        return not self.paths or any(Path(p).is_dir() for p in self.paths)

    def to_json(self) -> dict[str, Any]:
        """The JSON of ``store list --json`` (``last_used`` as ``YYYY-MM-DDTHH:MM:SSZ`` or ``null``)."""
        return {
            "name": self.name,
            "paths": self.paths,
            "configs": self.configs,
            "size": self.size,
            "last_used": _iso(self.last_used),
            "exists": self.exists(),
        }


def _iso(seconds: float | None) -> str | None:
    return None if seconds is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _files(directory: Path) -> Iterator[tuple[Path, int]]:
    """Every regular file below ``directory`` with its size in bytes (symbolic links neither followed nor counted)."""
    for root, dirs, files in os.walk(directory):
        for name in files:
            path = Path(root) / name
            with contextlib.suppress(OSError):
                st = path.lstat()
                if not path.is_symlink():
                    yield path, st.st_size
        dirs[:] = [d for d in dirs if not (Path(root) / d).is_symlink()]


def _size(directory: Path) -> int:
    return sum(size for _, size in _files(directory))


class NotAStoreError(ValueError):
    """A ``--store`` directory that is missing or is not an index store (the module docstring); the message is
    one line naming the directory."""


def _read_manifest(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _index_kind(manifest: dict[str, Any] | None) -> str | None:
    """``"chunks"`` for a chunk table's manifest, ``"history"`` for a history index's, else ``None``."""
    if manifest is None:
        return None
    if manifest.get("kind") == "history":
        return "history"
    if isinstance(manifest.get("chunker"), dict) and isinstance(manifest.get("snapshot"), dict):
        return "chunks"
    return None


def _index_dirs(entry: Path) -> list[tuple[Path, dict[str, Any], str]]:
    """The index directories of an entry with their manifests and kinds, sorted by name (never raises)."""
    out = []
    with contextlib.suppress(OSError):
        for cdir in sorted(p for p in entry.iterdir() if p.is_dir() and ".tmp-" not in p.name):
            manifest = _read_manifest(cdir / MANIFEST)
            kind = _index_kind(manifest)
            if manifest is not None and kind is not None:
                out.append((cdir, manifest, kind))
    return out


def snapshot_entries(store: Path) -> list[Path]:
    """The snapshot entries of a store: its directories not named ``_...`` or ``.*`` that hold at least one index
    directory (the module docstring), sorted by name.

    :param store: the store root.
    :return: their paths (``[]`` if the store does not exist).
    """
    store = Path(store)
    if not store.is_dir():
        return []
    return sorted(p for p in store.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")) and _index_dirs(p))


def check_store(store: Path) -> None:
    """Refuse a ``--store`` that is not an index store (the module docstring): missing, not a directory, or a
    non-empty directory with no snapshot entry, no ``_cache`` or ``_reports`` and no folder holding an index's
    lock file or temporary.

    :param store: the store root.
    :raises NotAStoreError: naming the directory.
    """
    store = Path(store)
    if not store.exists():
        raise NotAStoreError(f"{store}: no such index store")
    if not store.is_dir():
        raise NotAStoreError(f"{store} is not a directory")
    if not any(store.iterdir()) or (store / CACHE_DIR).is_dir() or (store / REPORTS_DIR).is_dir():
        return
    if not snapshot_entries(store) and not any(_holds_leftovers(folder) for folder in _folders(store)):
        raise NotAStoreError(
            f"{store} is not an index store (no entry holds an index manifest, no {CACHE_DIR} or {REPORTS_DIR})"
        )


def _walk_differences(walk: object) -> dict[str, Any]:
    """The walk settings of a chunk table's manifest that differ from the default :class:`WalkConfig`."""
    if not isinstance(walk, dict):
        return {}
    default = WalkConfig().to_dict() | {"ignore_files": True}
    return {k: v for k, v in sorted(walk.items()) if default.get(k) != v}


def _entry(directory: Path) -> SnapshotEntry:
    """Read one snapshot entry (never raises on broken files: they show as missing data)."""
    paths: list[str] = []
    configs: list[dict[str, Any]] = []
    stamps: list[float] = []
    for cdir, manifest, kind in _index_dirs(directory):
        with contextlib.suppress(OSError):
            stamps.append((cdir / MANIFEST).stat().st_mtime)
        if kind == "history":
            configs.append(
                {"kind": "history", "chunker": None, "key": cdir.name, "walk": {}, "retrievers": [], "graph": False}
            )
            continue
        path = manifest["snapshot"].get("path")
        if isinstance(path, str) and path not in paths:
            paths.append(path)
        retrievers = []
        rroot = cdir / "retrievers"
        for rdir in sorted(rroot.iterdir()) if rroot.is_dir() else []:
            rmanifest = _read_manifest(rdir / MANIFEST)
            if rmanifest is not None and ".tmp-" not in rdir.name:
                retrievers.append(str(rmanifest.get("retriever", {}).get("name", rdir.name)))
                with contextlib.suppress(OSError):  # a --rebuild may be replacing it
                    stamps.append((rdir / MANIFEST).stat().st_mtime)
        configs.append(
            {
                "kind": "chunks",
                "chunker": manifest["chunker"].get("name"),
                "key": cdir.name,
                "walk": _walk_differences(manifest.get("walk")),
                "retrievers": retrievers,
                "graph": (cdir / GRAPH_DIR).is_dir(),
            }
        )
    marker = directory / USED_FILE
    last_used = max(stamps) if stamps else None
    used_path = _marked_path(marker)
    if used_path is not None:
        with contextlib.suppress(OSError):
            last_used = marker.stat().st_mtime
        paths = [used_path, *(p for p in paths if p != used_path)]
    return SnapshotEntry(directory.name, paths, configs, _size(directory), last_used)


def list_store(store: Path) -> list[SnapshotEntry]:
    """Every snapshot entry of a store, sorted by name.

    :param store: the store root.
    :return: the entries (``[]`` for a missing or empty store).
    """
    return [_entry(d) for d in snapshot_entries(store)]


def disk_usage(store: Path) -> dict[str, int]:
    """Bytes a store takes, in total and per kind: ``indexes`` (chunk tables, retrievers, last-use marks),
    ``graph`` (the symbol graphs, ``<snapshot>/<chunker>-<hash8>/graph``), ``reuse_cache`` (``_cache``) and
    ``other`` (run reports and anything else). Apparent file sizes; links not followed.

    :param store: the store root.
    :return: ``{"total", "indexes", "graph", "reuse_cache", "other", "snapshots"}`` (``snapshots``: how many
        entries).
    """
    store = Path(store)
    usage = {"total": 0, "indexes": 0, "graph": 0, "reuse_cache": 0, "other": 0, "snapshots": 0}
    entries = set(snapshot_entries(store))
    usage["snapshots"] = len(entries)
    for path, size in _files(store) if store.is_dir() else iter(()):
        parts = path.relative_to(store).parts
        if store / parts[0] in entries:
            kind = "graph" if len(parts) > 3 and parts[2] == GRAPH_DIR else "indexes"
        elif parts[0] == CACHE_DIR:
            kind = "reuse_cache"
        else:
            kind = "other"
        usage[kind] += size
        usage["total"] += size
    return usage


def parse_date(text: str) -> float:
    """A ``--older-than`` value as seconds since the epoch: ``YYYY-MM-DD`` (midnight UTC), an ISO date and time
    (UTC unless it says otherwise), or an age ``<N>d`` (N days before now).

    :param text: the value.
    :return: the time.
    :raises ValueError: naming the value, if it is none of these.
    """
    age = re.fullmatch(r"(\d+)d", text.strip())
    if age:
        return time.time() - int(age.group(1)) * 86400
    try:
        when = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is not a date (YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] or <N>d)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.timestamp()


@dataclass
class GcResult:
    """What :func:`collect_garbage` removed (or would remove, in a dry run).

    :param removed: ``(entry name, reason, bytes)`` per snapshot entry, reason ``"missing"`` (none of its folders
        exists), ``"older"`` (last used before the date) or ``"all"``.
    :param busy: entries skipped because a builder holds one of their locks.
    :param reuse_cache: bytes of the reuse cache removed, ``None`` if it was kept.
    :param temporaries: ``(path relative to the store, bytes)`` of each temporary that a dead builder left in a
        kept entry (:func:`~indexes.store.remove_abandoned_temporaries`).
    :param dry_run: nothing was removed.
    """

    removed: list[tuple[str, str, int]] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)
    reuse_cache: int | None = None
    temporaries: list[tuple[str, int]] = field(default_factory=list)
    dry_run: bool = False

    @property
    def freed(self) -> int:
        """Bytes removed in total."""
        removed = sum(size for _, _, size in self.removed) + sum(size for _, size in self.temporaries)
        return removed + (self.reuse_cache or 0)

    def to_json(self) -> dict[str, Any]:
        """The JSON of ``store gc --json``."""
        return {
            "dry_run": self.dry_run,
            "removed": [{"name": n, "reason": r, "size": s} for n, r, s in self.removed],
            "busy": self.busy,
            "reuse_cache": self.reuse_cache,
            "temporaries": [{"path": p, "size": s} for p, s in self.temporaries],
            "freed": self.freed,
        }


def collect_garbage(
    store: Path,
    older_than: float | None = None,
    remove_all: bool = False,
    reuse_cache: bool = False,
    dry_run: bool = False,
) -> GcResult:
    """Remove the snapshot entries no longer needed: those none of whose folders exists, with ``older_than``
    also those last used before it, with ``remove_all`` every entry and the reuse cache. Only snapshot entries
    (directories holding an index directory, the module docstring) are ever removed, and from the entries kept the
    temporaries of builders that died (killed while writing): those of an index whose lock is free.

    An entry is removed holding the locks of all its indexes (:class:`~indexes.store.IndexLock`, not waiting): one
    that a builder is writing is skipped and listed as busy. The reuse cache (``_cache``) is shared by every
    snapshot and no index points into it, so it is removed only with ``reuse_cache`` or ``remove_all``; run
    reports are kept.

    :param store: the store root.
    :param older_than: seconds since the epoch (:func:`parse_date`), or ``None``.
    :param remove_all: remove every entry and the reuse cache.
    :param reuse_cache: also remove the reuse cache.
    :param dry_run: remove nothing, report what would be removed.
    :return: what was (or would be) removed.
    :raises NotAStoreError: if ``store`` is missing or not an index store (:func:`check_store`).
    :raises PermissionError: if the store cannot be written (and this is not a dry run).
    """
    store = Path(store)
    check_store(store)
    if not dry_run and not store_is_writable(store):
        raise PermissionError(errno.EROFS, "the store is read-only, nothing can be removed", str(store))
    result = GcResult(dry_run=dry_run)
    for entry in list_store(store):
        reason = "all" if remove_all else "missing" if not entry.exists() else None
        if reason is None and older_than is not None and (entry.last_used or 0.0) < older_than:
            reason = "older"
        if reason is None:
            continue
        if dry_run or _remove_entry(store / entry.name):
            result.removed.append((entry.name, reason, entry.size))
        else:
            result.busy.append(entry.name)
    gone = {name for name, _, _ in result.removed} if not dry_run else set()
    for folder in _folders(store):  # entries kept, and folders holding only what a killed first build left
        if folder.name not in gone:
            result.temporaries += _abandoned_temporaries(store, folder, dry_run)
    cache = store / CACHE_DIR
    for aside in sorted(p for p in store.glob(f"{CACHE_DIR}.tmp-*") if is_temporary_name(p.name)):
        result.temporaries.append((aside.name, _size(aside)))  # a reuse cache a killed gc --cache renamed aside
        if not dry_run:
            _remove_tree(aside)
    if (reuse_cache or remove_all) and cache.is_dir():
        result.reuse_cache = _size(cache)
        if not dry_run:
            _remove_cache(cache)
    return result


def _leftover_index(name: str) -> str | None:
    """The index whose lock file or temporary beside it ``name`` is (``function-2625320e.lock`` ->
    ``function-2625320e``), else ``None``."""
    base = name[: name.index(".tmp-")] if is_temporary_name(name) else name.removesuffix(".lock")
    return base if base != name and INDEX_NAME.fullmatch(base) else None


def _holds_leftovers(folder: Path) -> bool:
    """Whether a folder holds an index's lock file or temporary (a first build killed before any index was
    written), which makes its parent a store."""
    with contextlib.suppress(OSError):
        return any(_leftover_index(child.name) for child in folder.iterdir())
    return False


def _folders(store: Path) -> list[Path]:
    """The store's directories that may be snapshot entries: not ``_...`` or ``.*``, not symbolic links."""
    return sorted(p for p in store.iterdir() if p.is_dir() and not p.is_symlink() and not p.name.startswith(("_", ".")))


def _remove_tree(path: Path) -> None:
    """``shutil.rmtree`` that tolerates another process removing the same tree at the same time."""
    for _ in range(5):
        try:
            shutil.rmtree(path)
            return
        except FileNotFoundError:
            if not os.path.lexists(path):
                return


def _remove_cache(cache: Path) -> None:
    """Remove the reuse cache, renamed aside first (one atomic step): a builder writing an entry meanwhile starts a
    new cache instead of refilling the directory being removed ("Directory not empty")."""
    aside = temporary_path(cache, "gc-")
    try:
        os.rename(cache, aside)
    except FileNotFoundError:
        return
    _remove_tree(aside)


def _abandoned_temporaries(store: Path, entry: Path, dry_run: bool) -> list[tuple[str, int]]:
    """What builders that died left in one entry folder, removed unless ``dry_run``: for each index (a name
    :data:`~indexes.store.INDEX_NAME` matches, not a symbolic link) whose lock is free, its temporaries
    (:func:`~indexes.store.index_temporaries`) and its lock file (0 bytes). An index a builder holds is left alone;
    other files are never touched."""
    from filelock import Timeout

    bases: set[str] = set()
    with contextlib.suppress(OSError):
        for child in entry.iterdir():
            base = _leftover_index(child.name) or (child.name if INDEX_NAME.fullmatch(child.name) else None)
            if base is not None and not (entry / base).is_symlink():
                bases.add(base)
    found: list[tuple[str, int]] = []
    for base in sorted(bases):
        index = entry / base
        if not index_temporaries(index) and not lock_path(index).is_file():
            continue
        if dry_run:  # nothing written, not even a lock file
            found += _leftovers(store, index) if lock_is_free(index) else []
            continue
        with contextlib.suppress(Timeout, OSError):  # a live builder's index, or one that cannot be locked
            leftovers = _leftovers(store, index)
            with IndexLock(index, timeout=0):
                remove_abandoned_temporaries(index)
            found += leftovers  # the lock file goes when the lock is released
    return found


def _leftovers(store: Path, index: Path) -> list[tuple[str, int]]:
    """``(path relative to the store, bytes)`` of one index's temporaries and lock file, sorted by path."""
    paths = index_temporaries(index) + ([lock_path(index)] if lock_path(index).is_file() else [])
    sizes = [(p, _size(p) if p.is_dir() and not p.is_symlink() else p.lstat().st_size) for p in paths]
    return sorted((p.relative_to(store).as_posix(), size) for p, size in sizes)


def _remove_entry(directory: Path) -> bool:
    """Remove one snapshot entry holding every lock of its indexes; ``False`` (nothing removed) if one is held."""
    from filelock import Timeout

    with contextlib.ExitStack() as locks:
        for cdir in sorted(p for p in directory.iterdir() if p.is_dir() and ".tmp-" not in p.name):
            try:
                locks.enter_context(IndexLock(cdir, timeout=0))
            except Timeout:
                return False
        shutil.rmtree(directory)
    return True
