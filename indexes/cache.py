"""The content-addressed cache of the index store: per-file pieces of an index, reused across snapshots.

Snapshots of one repository share most of their files (on 24 snapshots of 4 repositories, 39% of the bytes are
unique), so :func:`indexes.build.ensure_index` (with ``reuse=True``) looks up what each file contributes to an
index before computing it: its chunks, its chunks' term counts, its chunks' vectors. What is not found is
computed as without the cache and stored. The assembled index is byte-identical to one built without the cache
(``tests/test_reuse.py``; :mod:`indexes.reuse` says why).

Layout under the store root::

    <root>/_cache/<kind>/<config hash16>/config.json      the namespace's full config (for people)
                                         <pack id>.pack   entries: payload, then its 32-byte SHA-256, back to back
                                         <pack id>.idx    the pack's sorted keys, offsets and lengths, and a SHA-256

``<kind>`` is ``chunks``, ``term_counts``, ``vectors`` or ``graph_names`` (a file's graph piece: the identifiers
and member names of each of its chunks, :func:`indexes.graph_build.chunk_names`) or ``snapshots`` (where in the
store a chunk table of a snapshot content was built, keyed by the snapshot's fingerprint:
:func:`indexes.build.ensure_index` copies such an index instead of assembling it); the config is everything
besides the file that
determines the value (chunker config; tokenizer config and fields; model fingerprint, ``max_length`` and
fields) plus :func:`software_fingerprint` (the toolkit's own chunking and retriever source and the versions of
the libraries that shape the values), so a code or library change never reuses an old value. An entry's key is
the SHA-256 of the namespace's canonical config and the file's :func:`file_digest`, so two configs never share an
entry even if their 16-hex directory names collided.

**Packs, not a file per entry.** A build writes the entries it computed for a namespace as one pack and its
index (two files), when it ends: creating a file costs about 0.2 ms of system time here (ext4; a network round
trip on NFS), so a file per entry made the first snapshot of a set 30% slower (1,800 files for
sphinx-doc__sphinx-10323). A build reads every index of the namespace once (44 bytes per entry; a few ms for a
few snapshots, about 30 MB for a million entries) and each entry it uses with one ``pread``.

**Integrity.** Every entry ends with the SHA-256 of its payload and every index with the SHA-256 of its content;
a damaged entry is counted as ``corrupt``, recomputed (the build's own pack stores a good copy) and never used,
and a damaged index is skipped (``corrupt_indexes``). An intact entry its reader finds malformed is counted as
corrupt and stored again; of several intact copies of a key the newest is read, so the new one replaces it.
**Concurrency.** Packs are immutable. A pack and then its index are written to the writer's scratch directory (a
temporary of the index being built, so only its owner removes it: :mod:`indexes.store`) and renamed into place
(:func:`~swe_explore.chunking.atomic.write_bytes_atomic`), so readers see complete packs only (a pack without
its index is invisible). Concurrent builders write separate packs, so no update is lost; two builders that miss
the same file both compute and store it (a duplicate entry, same bytes). Nothing in the cache is pickled.

The cache survives runs; delete ``<root>/_cache`` to reclaim its space (indexes never point into it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from swe_explore.chunking.atomic import write_bytes_atomic
from swe_explore.chunking.types import SourceFile

__all__ = [
    "CACHE_DIR",
    "CACHE_KINDS",
    "TWIN_KIND",
    "CacheNamespace",
    "CacheStats",
    "ContentCache",
    "file_digest",
    "software_fingerprint",
]

#: Name of the cache directory under the store root.
CACHE_DIR = "_cache"
#: The kinds of entries, in the order reports list them.
CACHE_KINDS = ("chunks", "term_counts", "vectors", "graph_names", "snapshots")
#: The kind of the entries that locate a snapshot's chunk table in the store (not a piece: not in the reports'
#: hit rates).
TWIN_KIND = "snapshots"
#: Distributions whose versions enter :func:`software_fingerprint` (those installed; a missing one counts as "").
_LIBRARIES = ("numpy", "scipy", "scikit-learn", "tokenizers", "model2vec", "tree-sitter")
#: First bytes of an index file, and its version.
_IDX_MAGIC = b"SWXIDX01"
#: Bytes of a SHA-256 digest.
_SHA = 32
#: A namespace writes a pack when this many payload bytes are waiting (bounds a build's memory).
_FLUSH_BYTES = 256 << 20
#: Pack files kept open at once by one namespace.
_MAX_OPEN_PACKS = 64


def file_digest(source: SourceFile, text: bytes | None = None) -> str:
    """SHA-256 of everything a chunker sees of a walked file: path, language, size and lines.

    :param source: the file.
    :param text: its lines joined by ``"\\n"`` in UTF-8, if already encoded.
    :return: 64 hex digits.
    """
    h = hashlib.sha256(f"{source.path}\0{source.language}\0{source.n_bytes}\0".encode("utf-8", "surrogatepass"))
    h.update(text if text is not None else "\n".join(source.lines).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


@lru_cache(maxsize=1)
def software_fingerprint() -> str:
    """SHA-256 of the code that computes cached values: the toolkit version, the source of its ``chunking`` and
    ``retrievers`` packages, and the versions of the libraries of :data:`_LIBRARIES` and of every installed
    ``tree-sitter-*`` grammar. Computed once per process (a few ms).

    :return: 64 hex digits.
    """
    from importlib import metadata

    import swe_explore.chunking
    import swe_explore.retrievers
    from swe_explore.indexes.store import toolkit_version

    h = hashlib.sha256(toolkit_version().encode())
    for package in (swe_explore.chunking, swe_explore.retrievers):
        root = Path(str(package.__file__)).parent
        for path in sorted(root.glob("*.py")):
            h.update(f"\0{path.name}\0".encode())
            h.update(path.read_bytes())
    names = set(_LIBRARIES)
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if name.startswith("tree-sitter-"):
            names.add(name)
    for name in sorted(names):
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = ""
        h.update(f"\0{name}={version}".encode())
    return h.hexdigest()


@dataclass
class CacheStats:
    """Lookups of one kind of cache entry, counted per file.

    :param hits: entries found and intact (the file's piece was reused).
    :param misses: entries absent (computed, then stored).
    :param corrupt: entries found damaged (computed again and stored again; not counted in ``misses``).
    :param write_errors: entries that could not be stored (e.g. disk full); the build still succeeds.
    :param corrupt_indexes: pack indexes skipped because they are damaged.
    """

    hits: int = 0
    misses: int = 0
    corrupt: int = 0
    write_errors: int = 0
    corrupt_indexes: int = 0

    @property
    def lookups(self) -> int:
        """Every lookup: hits, misses and corrupt entries."""
        return self.hits + self.misses + self.corrupt

    def to_dict(self) -> dict[str, int]:
        """JSON form for reports: ``{"hits", "misses", "corrupt", "write_errors", "corrupt_indexes"}``."""
        return {
            "hits": self.hits,
            "misses": self.misses,
            "corrupt": self.corrupt,
            "write_errors": self.write_errors,
            "corrupt_indexes": self.corrupt_indexes,
        }


@dataclass
class ContentCache:
    """The entries of ``<store>/_cache`` as one build sees them; call :meth:`close` at the end of the build.

    :param root: the store root.
    :param scratch: returns the directory for temporary files (created on first use; the caller removes it).
    :param stats: lookups per kind, filled as the build goes.
    """

    root: Path
    scratch: Callable[[], Path]
    stats: dict[str, CacheStats] = field(default_factory=dict)
    _namespaces: dict[str, CacheNamespace] = field(default_factory=dict)

    def namespace(self, kind: str, config: Mapping[str, Any]) -> CacheNamespace:
        """The entries of one kind under one config (:func:`software_fingerprint` is added to it).

        :param kind: one of :data:`CACHE_KINDS`.
        :param config: what besides the file determines the value (JSON-serialisable).
        :return: the namespace (the same object for the same kind and config).
        :raises ValueError: for an unknown kind.
        """
        if kind not in CACHE_KINDS:
            raise ValueError(f"unknown cache kind {kind!r}; valid: {', '.join(CACHE_KINDS)}")
        full = {"kind": kind, "config": config, "software": software_fingerprint()}
        canonical = json.dumps(full, sort_keys=True, separators=(",", ":"))
        config_hash = hashlib.sha256(canonical.encode()).hexdigest()
        if config_hash not in self._namespaces:
            directory = Path(self.root) / CACHE_DIR / kind / config_hash[:16]
            self._namespaces[config_hash] = CacheNamespace(self, kind, config_hash, directory, full)
        return self._namespaces[config_hash]

    def close(self) -> None:
        """Write every namespace's new entries (one pack each) and close the packs read."""
        for namespace in self._namespaces.values():
            namespace.close()


@dataclass
class _Index:
    """The entries of every pack of a namespace, sorted by the first 8 bytes of their key.

    :param prefix: uint64 key prefixes, sorted.
    :param keys: ``(n, 32)`` uint8 full keys, in ``prefix`` order.
    :param pack: pack number (into ``packs``) per entry.
    :param offset: byte offset of the entry in its pack.
    :param length: byte length of the entry (payload and checksum).
    :param packs: the pack files.
    """

    prefix: np.ndarray
    keys: np.ndarray
    pack: np.ndarray
    offset: np.ndarray
    length: np.ndarray
    packs: list[Path]


#: Parsed index files by path: packs and indexes are immutable, so one process reads each once.
_INDEX_FILES: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray] | None] = {}


def _read_index_file(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(keys (n, 32) uint8, offsets, lengths)`` of a pack index, or ``None`` if it is damaged.

    :param path: the ``.idx`` file.
    :return: the arrays, or ``None``.
    """
    cached = _INDEX_FILES.get(str(path))
    if cached is not None or str(path) in _INDEX_FILES:
        return cached
    try:
        data = path.read_bytes()
    except OSError:
        return None
    parsed = None
    body, checksum = data[:-_SHA], data[-_SHA:]
    if len(data) >= 16 + _SHA and data[:8] == _IDX_MAGIC and hashlib.sha256(body).digest() == checksum:
        n = int.from_bytes(data[8:16], "little")
        if len(body) == 16 + n * (_SHA + 16):
            keys = np.frombuffer(body, dtype=np.uint8, count=n * _SHA, offset=16).reshape(n, _SHA)
            offsets = np.frombuffer(body, dtype="<u8", count=n, offset=16 + n * _SHA)
            lengths = np.frombuffer(body, dtype="<u8", count=n, offset=16 + n * (_SHA + 8))
            parsed = (keys, offsets, lengths)
    _INDEX_FILES[str(path)] = parsed
    return parsed


def _prefixes(keys: np.ndarray) -> np.ndarray:
    """The first 8 bytes of each 32-byte key as a little-endian uint64."""
    return np.ascontiguousarray(keys[:, :8]).view("<u8").reshape(-1)


@dataclass
class CacheNamespace:
    """The entries of one kind and config (:meth:`ContentCache.namespace`).

    :param cache: the cache (for its scratch directory and statistics).
    :param kind: the entries' kind.
    :param config_hash: SHA-256 of the canonical config.
    :param directory: where the packs live.
    :param config: the full config, written to ``config.json`` with the first pack.
    """

    cache: ContentCache
    kind: str
    config_hash: str
    directory: Path
    config: dict[str, Any]
    _index: _Index | None = None
    _maps: dict[int, mmap.mmap] = field(default_factory=dict)
    _pending: list[tuple[bytes, bytes]] = field(default_factory=list)
    _keys_pending: set[bytes] = field(default_factory=set)
    _keys: dict[str, bytes] = field(default_factory=dict)
    _pending_bytes: int = 0
    _written: list[str] = field(default_factory=list)

    @property
    def stats(self) -> CacheStats:
        """This kind's lookup counts."""
        return self.cache.stats.setdefault(self.kind, CacheStats())

    @property
    def all_stored(self) -> bool:
        """Whether every entry put so far is written: nothing waits for a flush and no write failed."""
        return not self._pending and self.stats.write_errors == 0

    def _key(self, digest: str) -> bytes:
        """The entry key of an item: SHA-256 of the config hash and the item's digest (memoised for the build)."""
        key = self._keys.get(digest)
        if key is None:
            key = self._keys[digest] = hashlib.sha256(f"{self.config_hash}\0{digest}".encode()).digest()
        return key

    def _load(self) -> _Index:
        """Read every pack index of the namespace (once per build)."""
        if self._index is not None:
            return self._index
        parts: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
        packs: list[Path] = []
        for idx in sorted(self.directory.glob("*.idx")) if self.directory.is_dir() else []:
            parsed = _read_index_file(idx)
            if parsed is None:
                self.stats.corrupt_indexes += 1
                continue
            parts.append((len(packs), *parsed))
            packs.append(idx.with_suffix(".pack"))
        if parts:
            keys = np.concatenate([p[1] for p in parts])
            pack = np.concatenate([np.full(len(p[1]), p[0], dtype=np.int32) for p in parts])
            offset = np.concatenate([p[2] for p in parts])
            length = np.concatenate([p[3] for p in parts])
            prefix = _prefixes(keys)
            order = np.argsort(prefix, kind="stable")
            self._index = _Index(prefix[order], keys[order], pack[order], offset[order], length[order], packs)
        else:
            empty = np.zeros(0, dtype=np.uint64)
            self._index = _Index(empty, np.zeros((0, _SHA), np.uint8), np.zeros(0, np.int32), empty, empty, [])
        return self._index

    def _entry(self, index: _Index, j: int) -> bytes | None:
        """Entry ``j`` of the index (payload and checksum), or ``None`` if its pack is unreadable."""
        pack = int(index.pack[j])
        view = self._maps.get(pack)
        if view is None:
            if len(self._maps) >= _MAX_OPEN_PACKS:
                self._close_packs()
            try:
                with open(index.packs[pack], "rb") as fh:
                    view = self._maps[pack] = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):
                return None
        start = int(index.offset[j])
        entry = view[start : start + int(index.length[j])]
        return entry if len(entry) == int(index.length[j]) else None

    def get(self, digest: str) -> bytes | None:
        """The payload stored for one item (:meth:`get_many` of one).

        :param digest: the item's digest (a file's :func:`file_digest`).
        :return: the payload, or ``None`` when absent or damaged (then compute it and :meth:`put` it).
        """
        return self.get_many([digest])[0]

    def get_many(self, digests: Sequence[str]) -> list[bytes | None]:
        """The payloads stored for items, each counted as a hit, miss or corrupt entry.

        The keys are looked up together (one ``searchsorted`` over the namespace's sorted key prefixes); each
        entry found is read from its memory-mapped pack and its checksum checked.

        :param digests: the items' digests (hex strings: file or chunk digests).
        :return: per item its payload, or ``None`` when absent or damaged (then compute it and :meth:`put` it).
        """
        index = self._load()
        out: list[bytes | None] = [None] * len(digests)
        keys = [self._key(d) for d in digests]
        n = len(index.prefix)
        if not keys or not n:
            self.stats.misses += len(keys)
            return out
        full = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, _SHA)
        wanted = _prefixes(full)
        pos = np.searchsorted(index.prefix, wanted)
        found = pos < n
        found[found] = index.prefix[pos[found]] == wanted[found]
        self.stats.misses += int(len(keys) - found.sum())
        exact = np.zeros(len(keys), dtype=bool)  # the prefix run is one entry, the key (almost always)
        exact[found] = (index.keys[pos[found]] == full[found]).all(axis=1)
        after = np.minimum(pos + 1, n - 1)
        exact &= (pos + 1 >= n) | (index.prefix[after] != wanted)  # a longer run (a duplicate): scanned
        for i in np.flatnonzero(found).tolist():
            j = int(pos[i])
            if exact[i]:
                entry = self._entry(index, j)
                if entry is not None and hashlib.sha256(entry[:-_SHA]).digest() == entry[-_SHA:]:
                    out[i] = entry[:-_SHA]
                    self.stats.hits += 1
                    continue
            out[i] = self._scan(index, j, keys[i])
        return out

    def pack_names(self) -> frozenset[str]:
        """The packs this namespace's build has seen: those its index lists and those it wrote (file names).

        :return: the ``.pack`` file names.
        """
        return frozenset(p.name for p in self._load().packs) | frozenset(self._written)

    def still_lists(self, earlier: CacheNamespace) -> bool:
        """Whether every pack an earlier build of the same namespace saw is still in this build's listing: packs
        are written once under a unique name and never changed, so then every entry that build could read is
        still there (unless a pack was damaged in place, which only reading it shows).

        :param earlier: the earlier build's namespace (after its :meth:`close`).
        :return: ``True`` when no pack of it was removed or replaced.
        """
        return earlier.pack_names() <= self.pack_names()

    def _scan(self, index: _Index, j: int, key: bytes) -> bytes | None:
        """The payload of ``key`` from the run of entries sharing its prefix from ``j`` on (another key, or
        duplicates of the key), counted as a hit, corrupt entry or miss. Of duplicates the newest intact one wins
        (packs are listed by their names, which begin with the second of writing; within a second the order is
        arbitrary): a build that found a stored payload intact but malformed (:meth:`reject`) stores a new one,
        which later builds then read."""
        damaged = False
        newest = None
        prefix = index.prefix[j]
        while j < len(index.prefix) and index.prefix[j] == prefix:
            if index.keys[j].tobytes() == key:
                entry = self._entry(index, j)
                if entry is not None and hashlib.sha256(entry[:-_SHA]).digest() == entry[-_SHA:]:
                    newest = entry[:-_SHA]
                else:
                    damaged = True
            j += 1
        if newest is not None:
            self.stats.hits += 1
            return newest
        if damaged:
            self.stats.corrupt += 1
        else:
            self.stats.misses += 1
        return None

    def reject(self) -> None:
        """Count a payload :meth:`get` returned but the caller found malformed as corrupt instead of a hit (the
        caller then stores a new payload with :meth:`put`, which later builds read instead: :meth:`_scan`)."""
        self.stats.hits -= 1
        self.stats.corrupt += 1

    def put(self, digest: str, payload: bytes) -> None:
        """Store an item's payload: kept in memory and written with the namespace's next pack (:meth:`flush`).

        :param digest: the item's digest (as for :meth:`get_many`).
        :param payload: the value's bytes.
        """
        key = self._key(digest)
        if key in self._keys_pending:
            return
        self._keys_pending.add(key)
        self._pending.append((key, payload + hashlib.sha256(payload).digest()))
        self._pending_bytes += len(payload) + _SHA
        if self._pending_bytes >= _FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write the waiting entries as one pack and its index (scratch files renamed into place, the pack first);
        a failure is counted in ``write_errors`` (one per entry) and otherwise ignored: no index depends on the
        cache."""
        if not self._pending:
            return
        pending, self._pending, self._pending_bytes = self._pending, [], 0
        self._keys_pending.clear()
        pending.sort(key=lambda item: item[0])
        name = f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        scratch = Path(self.cache.scratch())
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            if not (self.directory / "config.json").exists():
                config = (json.dumps(self.config, indent=1, sort_keys=True) + "\n").encode()
                write_bytes_atomic(self.directory / "config.json", config, temp_dir=scratch)
            lengths = np.array([len(entry) for _, entry in pending], dtype="<u8")
            offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype("<u8")
            body = b"".join(
                [
                    _IDX_MAGIC,
                    len(pending).to_bytes(8, "little"),
                    *(key for key, _ in pending),
                    offsets.tobytes(),
                    lengths.tobytes(),
                ]
            )
            pack = b"".join(entry for _, entry in pending)
            write_bytes_atomic(self.directory / f"{name}.pack", pack, temp_dir=scratch)
            write_bytes_atomic(self.directory / f"{name}.idx", body + hashlib.sha256(body).digest(), temp_dir=scratch)
            self._written.append(f"{name}.pack")
        except OSError:
            self.stats.write_errors += len(pending)

    def _close_packs(self) -> None:
        for view in self._maps.values():
            with contextlib.suppress(OSError, BufferError):
                view.close()
        self._maps.clear()

    def close(self) -> None:
        """Write the waiting entries (:meth:`flush`) and close the packs read."""
        try:
            self.flush()
        finally:
            self._close_packs()
