"""The history index: a snapshot's past commits (:mod:`swe_explore.chunking.history`) as arrays and a BM25 model.

Built from the snapshot's history file (:data:`~swe_explore.chunking.history.HISTORY_FILE`) and kept in the store
next to the snapshot's other indexes::

    <root>/<snapshot>/history-<hash8>/manifest.json   format version, config, the history file's SHA-256, counts,
                                                      size and SHA-256 of every file below
                                      history.json    commit ids (newest first), base commit, the path table
                                      history.npz     int32/int64 columns (below); no pickle
                                      bm25/           the commits' BM25 model (a saved retriever, indexes/files.py)

``<hash8>`` is the hash of the config (tokenizer, BM25 parameters, the fix rule), as for every index
(:func:`~swe_explore.indexes.store.config_key`). ``history.npz`` holds, for ``n`` commits (position 0 the newest):

- ``times`` int64 ``(n,)``: committer time (seconds since the epoch); ``fix`` uint8 ``(n,)``: 1 when the
  message is fix-like (:data:`FIX_PATTERN`);
- ``path_ptr`` int64 ``(n + 1,)`` and ``path_ids`` int32: the CSR of each commit's changed paths over the path
  table (ascending ids; a rename lists its old and its new path, as
  :func:`~swe_explore.chunking.history.commits_touching` counts it);
- ``hunk_ptr`` int64 ``(len(path_ids) + 1,)`` and ``hunk_spans`` int32 ``(h, 2)``: per (commit, path) entry,
  the new-side line spans of git's hunks, 1-based inclusive: ``(c, c + d - 1)`` for ``@@ -a,b +c,d @@`` with
  ``d > 0``; a pure deletion (``d = 0``, the lines removed after new line ``c``) is the two lines around it,
  ``(max(c, 1), c + 1)``; an old path of a rename has no spans.

The messages are tokenized with the project's code-aware tokenizer (:class:`~swe_explore.retrievers.tokenize.
CodeTokenizer`) and indexed by :class:`~swe_explore.retrievers.bm25.BM25Retriever`, one document per commit.

**Source and currency.** A snapshot's history is its history file, else, for a folder that is a git checkout, its
``.git`` read at ``HEAD`` (:func:`~swe_explore.chunking.history_git.history_from_git`, the default bound of ancestors).
The index is current when its manifest's ``history_sha256`` is the SHA-256 of the history file (for a checkout: of
``git:<HEAD id>`` and the bound), and its format version and config are this code's: content, never mtimes. A
snapshot with neither has no history index (:func:`load_history_index` returns ``None``). **Writing** follows the
store's rules (:mod:`swe_explore.indexes.store`): the directory is written atomically under its own
:class:`~swe_explore.indexes.store.IndexLock` (``history-<hash8>.lock``), a current index is read without the lock
(so a read-only store is fine), and building in a read-only store raises
:class:`~swe_explore.indexes.store.ReadOnlyStoreError`. **Reuse** (``reuse=True``, off by default as for
:func:`~swe_explore.indexes.build.ensure_index`). Snapshots of one repository share most of their history, so each
commit's term counts can be kept in the content-addressed cache (:mod:`swe_explore.indexes.cache`, kind
``term_counts``, keyed by the commit id and its message) and a second snapshot of the repository tokenizes only
its new commits; the index is byte-identical with or without the cache. Tokenizing is a small part of the build
(docs/history.md gives the numbers), so the cache pays only where its software fingerprint is computed anyway (a
batch that reuses the other indexes too).
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from swe_explore.chunking.history import HISTORY_FILE, History, HistoryColumns, HistoryError, read_history_columns
from swe_explore.chunking.history_git import (
    DEFAULT_MAX_COMMITS,
    HistoryGitError,
    git_dir_of,
    head_commit,
    history_from_git,
    marker_commit,
)
from swe_explore.indexes.cache import ContentCache
from swe_explore.indexes.files import (
    MANIFEST,
    CorruptIndexError,
    StaleIndexError,
    check_files,
    check_meta,
    file_records,
    file_sha256,
    load_retriever,
    read_json,
    save_retriever,
    write_json,
)
from swe_explore.indexes.reuse import _decode_counts, _encode_counts, _merge_counts
from swe_explore.indexes.store import (
    atomic_directory,
    check_snapshot_name,
    config_key,
    remove_abandoned_temporaries,
    temporary_path,
)
from swe_explore.retrievers.bm25 import BM25Retriever
from swe_explore.retrievers.features import TermCounts, count_terms, counts_from_tokens
from swe_explore.retrievers.tokenize import CodeTokenizer

__all__ = [
    "FIX_PATTERN",
    "HISTORY_INDEX_FORMAT",
    "HistoryIndex",
    "build_history_index",
    "ensure_history_index",
    "history_config",
    "history_dir_for",
    "is_fix",
    "load_history_index",
    "open_history_index",
]

#: Version of the history index's layout; an index of another version is rebuilt.
HISTORY_INDEX_FORMAT = 1

FIX_PATTERN = re.compile(
    r"\b(?:fix(?:e[sd]|ing)?|hotfix|bug(?:s|fix(?:es)?)?|errors?|crash(?:es|ed|ing)?|regressions?)\b"
    r"|\b(?:close[sd]?|resolve[sd]?)\s+(?:[\w.-]+/[\w.-]+)?#\d+",
    re.IGNORECASE,
)
"""The fix-like rule over a commit message (case-insensitive): a whole word ``fix``/``fixes``/``fixed``/``fixing``,
``hotfix``, ``bug``/``bugs``/``bugfix``, ``error``/``errors``, ``crash``/``crashes``/``crashed``/``crashing`` or
``regression(s)``, or an issue reference ``closes #N``/``closed #N``/``resolves #N`` (also ``owner/repo#N``;
``fixes #N`` is a ``fix`` word already). ``"Fix typo in docs"`` is fix-like, ``"Add prefix option"`` is not
(``prefix`` is not the word ``fix``)."""

_HISTORY_JSON = "history.json"
_HISTORY_NPZ = "history.npz"
_BM25_DIR = "bm25"
_COLUMNS = ("times", "fix", "path_ptr", "path_ids", "hunk_ptr", "hunk_spans")


def is_fix(message: str) -> bool:
    """Whether a commit message is fix-like (:data:`FIX_PATTERN`).

    :param message: the commit message.
    :return: whether the rule matches anywhere in it.
    """
    return FIX_PATTERN.search(message) is not None


def history_config(tokenizer: CodeTokenizer | None = None) -> dict[str, Any]:
    """The config of a history index (it names the index's directory and is checked on load).

    :param tokenizer: the messages' tokenizer (default: ``CodeTokenizer()``, the BM25 retriever's).
    :return: ``{"tokenizer", "bm25": {"k1", "b"}, "fix_rule"}``.
    """
    tok = tokenizer or CodeTokenizer()
    return {"tokenizer": tok.config(), "bm25": {"k1": 1.5, "b": 0.75}, "fix_rule": FIX_PATTERN.pattern}


def history_dir_for(store: Path, snapshot: str, tokenizer: CodeTokenizer | None = None) -> Path:
    """Where a snapshot's history index is stored: ``<store>/<snapshot>/history-<hash8>``.

    :param store: index store root.
    :param snapshot: the snapshot's name in the store.
    :param tokenizer: the messages' tokenizer (default ``CodeTokenizer()``).
    :return: the directory (not checked).
    """
    return Path(store) / check_snapshot_name(snapshot) / config_key("history", history_config(tokenizer))


@dataclass
class HistoryIndex:
    """A snapshot's history as arrays (module docstring); commits are positions, 0 the newest.

    :param base_commit: the snapshot's commit.
    :param commit_ids: full commit ids, newest first.
    :param paths: the path table, sorted.
    :param times: int64 ``(n,)`` committer times.
    :param fix: uint8 ``(n,)`` fix-like flags (:data:`FIX_PATTERN`).
    :param path_ptr: int64 ``(n + 1,)``, CSR row pointers of the commits' paths.
    :param path_ids: int32, the paths of commit ``i`` are ``path_ids[path_ptr[i]:path_ptr[i + 1]]``, ascending.
    :param hunk_ptr: int64 ``(len(path_ids) + 1,)``, CSR pointers of each (commit, path) entry's hunk spans.
    :param hunk_spans: int32 ``(h, 2)`` new-side ``(start, end)`` spans, 1-based inclusive.
    :param bm25: the BM25 model over the commits' messages (document ``i`` is commit ``i``).
    :param history_sha256: SHA-256 of the history file it was built from.
    """

    base_commit: str
    commit_ids: list[str]
    paths: list[str]
    times: np.ndarray
    fix: np.ndarray
    path_ptr: np.ndarray
    path_ids: np.ndarray
    hunk_ptr: np.ndarray
    hunk_spans: np.ndarray
    bm25: BM25Retriever
    history_sha256: str = ""
    _path_id: dict[str, int] | None = field(default=None, repr=False)
    _by_path: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    @property
    def n_commits(self) -> int:
        """Number of commits."""
        return len(self.commit_ids)

    @property
    def path_id(self) -> dict[str, int]:
        """Path -> its position in :attr:`paths` (computed on first use)."""
        if self._path_id is None:
            self._path_id = {p: j for j, p in enumerate(self.paths)}
        return self._path_id

    @property
    def entry_commit(self) -> np.ndarray:
        """int64 ``(len(path_ids),)``: the commit of every (commit, path) entry."""
        return np.repeat(np.arange(self.n_commits, dtype=np.int64), np.diff(self.path_ptr))

    def commit_paths(self, commit: int) -> np.ndarray:
        """The path ids a commit changed, ascending.

        :param commit: commit position.
        :return: int32 array.
        """
        return self.path_ids[self.path_ptr[commit] : self.path_ptr[commit + 1]]

    def path_entries(self, path: str) -> np.ndarray:
        """The (commit, path) entries of a path, newest commit first (positions into :attr:`path_ids`).

        :param path: a repo-relative path.
        :return: int64 entry indices (empty when no commit changed the path).
        """
        j = self.path_id.get(path)
        if j is None:
            return np.zeros(0, dtype=np.int64)
        if self._by_path is None:
            order = np.argsort(self.path_ids, kind="stable").astype(np.int64)
            ptr = np.zeros(len(self.paths) + 1, dtype=np.int64)
            np.cumsum(np.bincount(self.path_ids, minlength=len(self.paths)), out=ptr[1:])
            self._by_path = (ptr, order)
        ptr, order = self._by_path
        return order[ptr[j] : ptr[j + 1]]

    def spans(self, entry: int) -> np.ndarray:
        """The new-side hunk spans of one (commit, path) entry.

        :param entry: an entry index (:meth:`path_entries`).
        :return: int32 ``(k, 2)``.
        """
        return self.hunk_spans[self.hunk_ptr[entry] : self.hunk_ptr[entry + 1]]

    def similarities(self, query: str) -> np.ndarray:
        """Each commit's similarity to a query: its message's BM25 score divided by the best commit's.

        :param query: the issue text.
        :return: float64 ``(n,)`` in ``[0, 1]``; all zeros when no query token is in any message.
        """
        scores = self.bm25.scores(query)
        best = float(scores.max()) if scores.size else 0.0
        return scores / best if best > 0 else np.zeros(self.n_commits, dtype=np.float64)

    def save(self, directory: Path) -> None:
        """Write ``history.json``, ``history.npz``, ``bm25/`` and ``manifest.json`` into an empty directory.

        :param directory: the target (the caller makes the write atomic).
        """
        directory = Path(directory)
        write_json(
            directory / _HISTORY_JSON,
            {"base_commit": self.base_commit, "commit_ids": self.commit_ids, "paths": self.paths},
        )
        arrays: dict[str, Any] = {k: getattr(self, k) for k in _COLUMNS}
        np.savez(directory / _HISTORY_NPZ, **arrays)
        (directory / _BM25_DIR).mkdir()
        save_retriever(self.bm25, directory / _BM25_DIR)
        write_json(
            directory / MANIFEST,
            {
                "format_version": HISTORY_INDEX_FORMAT,
                "kind": "history",
                "config": history_config(self.bm25.tokenizer),
                "history_sha256": self.history_sha256,
                "base_commit": self.base_commit,
                "counts": {
                    "commits": self.n_commits,
                    "paths": len(self.paths),
                    "entries": int(self.path_ids.size),
                    "hunks": int(self.hunk_spans.shape[0]),
                },
                "files": file_records(directory, [_HISTORY_JSON, _HISTORY_NPZ]),
                "bm25_meta_sha256": file_sha256(directory / _BM25_DIR / "retriever.json"),
            },
        )

    @classmethod
    def load(cls, directory: Path) -> HistoryIndex:
        """Read an index written by :meth:`save`, checking every file's size and SHA-256 and the arrays' shapes.

        :param directory: the history index directory.
        :return: the index.
        :raises CorruptIndexError: naming the file that is missing, edited or inconsistent.
        """
        directory = Path(directory)
        manifest_path = directory / MANIFEST
        manifest = _read_manifest(manifest_path)
        check_files(directory, manifest.get("files"), manifest_path)
        meta = read_json(directory / _HISTORY_JSON)
        npz_path = directory / _HISTORY_NPZ
        try:
            with np.load(npz_path, allow_pickle=False) as npz:
                cols = {k: npz[k] for k in _COLUMNS}
        except Exception as exc:  # zipfile/numpy raise many types for a truncated or edited archive
            raise CorruptIndexError(npz_path, f"unreadable array archive ({type(exc).__name__}: {exc})") from None
        bm25_dir = directory / _BM25_DIR
        check_meta(bm25_dir, str(manifest_path), name="bm25", meta_sha256=manifest.get("bm25_meta_sha256"))
        bm25 = load_retriever(bm25_dir)
        assert isinstance(bm25, BM25Retriever)  # check_meta checked the name
        ids, paths = meta.get("commit_ids"), meta.get("paths")
        if not isinstance(ids, list) or not isinstance(paths, list):
            raise CorruptIndexError(directory / _HISTORY_JSON, "commit_ids or paths is missing")
        n, nnz = len(ids), int(cols["path_ids"].size)
        problems = []
        if cols["times"].shape != (n,) or cols["fix"].shape != (n,) or cols["path_ptr"].shape != (n + 1,):
            problems.append(f"per-commit columns do not have {n} rows")
        elif cols["path_ptr"][0] != 0 or cols["path_ptr"][-1] != nnz or (np.diff(cols["path_ptr"]) < 0).any():
            problems.append("path_ptr is not a CSR pointer over path_ids")
        if nnz and (cols["path_ids"].min() < 0 or cols["path_ids"].max() >= len(paths)):
            problems.append(f"path ids outside 0..{len(paths) - 1}")
        hunks = cols["hunk_spans"]
        if cols["hunk_ptr"].shape != (nnz + 1,) or hunks.ndim != 2 or hunks.shape[1] != 2:
            problems.append("hunk_ptr or hunk_spans has the wrong shape")
        elif cols["hunk_ptr"][0] != 0 or cols["hunk_ptr"][-1] != hunks.shape[0]:
            problems.append("hunk_ptr is not a CSR pointer over hunk_spans")
        if bm25.n_docs != n:
            problems.append(f"the BM25 model has {bm25.n_docs} documents for {n} commits")
        if problems:
            raise CorruptIndexError(npz_path, "; ".join(problems))
        return cls(
            str(meta.get("base_commit", "")),
            [str(x) for x in ids],
            [str(p) for p in paths],
            times=cols["times"],
            fix=cols["fix"],
            path_ptr=cols["path_ptr"],
            path_ids=cols["path_ids"],
            hunk_ptr=cols["hunk_ptr"],
            hunk_spans=cols["hunk_spans"],
            bm25=bm25,
            history_sha256=str(manifest.get("history_sha256", "")),
        )


def _read_manifest(path: Path) -> dict[str, Any]:
    manifest: dict[str, Any] = read_json(path)
    if manifest.get("format_version") != HISTORY_INDEX_FORMAT or manifest.get("kind") != "history":
        raise CorruptIndexError(path, f"not a history index of format {HISTORY_INDEX_FORMAT}")
    return manifest


def _piece(tokens: list[str]) -> tuple[bytes, bytes] | None:
    """One commit's term counts as a cache piece (the row :func:`~swe_explore.indexes.reuse._split_counts` would
    cut from :func:`~swe_explore.retrievers.features.counts_from_tokens`: terms by code point, int32 counts);
    ``None`` if a term holds a NUL (no tokenizer of this toolkit makes one)."""
    counts = Counter(tokens)
    terms = sorted(counts)
    if any("\0" in t for t in terms):
        return None
    data = np.fromiter((counts[t] for t in terms), dtype="<i4", count=len(terms))
    return b"\0".join(t.encode("utf-8", "surrogatepass") for t in terms), data.tobytes()


def _message_counts(
    ids: list[str], messages: list[str], tokenizer: CodeTokenizer, cache: ContentCache | None
) -> TermCounts:
    """The commits' term counts, one row per commit: from the cache where stored, else tokenized (and stored)."""
    if cache is None:
        return count_terms(tokenizer, messages)
    namespace = cache.namespace("term_counts", {"source": "commit_messages", "tokenizer": tokenizer.config()})
    digests = [
        hashlib.sha256(f"{cid}\0{message}".encode("utf-8", "surrogatepass")).hexdigest()
        for cid, message in zip(ids, messages)
    ]
    payloads = namespace.get_many(digests)
    pieces = []
    for digest, message, payload in zip(digests, messages, payloads):
        piece = _decode_counts([payload])[0] if payload is not None else None
        if payload is not None and piece is None:
            namespace.reject()  # a valid checksum over a malformed payload: recompute it
        if piece is None:
            piece = _piece(tokenizer.tokenize(message))
            if piece is None:
                return counts_from_tokens([tokenizer.tokenize(m) for m in messages])
            namespace.put(digest, _encode_counts(piece))
        pieces.append(piece)
    return _merge_counts(pieces)


def build_history_index(
    history: History | HistoryColumns,
    tokenizer: CodeTokenizer | None = None,
    cache: ContentCache | None = None,
    sha256: str = "",
) -> HistoryIndex:
    """Build the history index of a history (module docstring), with array operations over its columns.

    :param history: the history (newest commit first), as tuples or as columns (what a history file is read as).
    :param tokenizer: the messages' tokenizer (default ``CodeTokenizer()``).
    :param cache: the content-addressed cache to take and store per-commit term counts, or ``None``.
    :param sha256: the history file's SHA-256, recorded for the currency check.
    :return: the index.
    """
    tok = tokenizer or CodeTokenizer()
    cols = history if isinstance(history, HistoryColumns) else HistoryColumns.from_history(history)
    n = len(cols.ids)
    renamed = [j for j, o in enumerate(cols.old_paths) if o is not None]
    old_paths = [o for o in cols.old_paths if o is not None]
    paths = sorted(set(cols.paths).union(old_paths))
    pid = {p: j for j, p in enumerate(paths)}
    n_paths = max(len(paths), 1)
    change_commit = np.repeat(np.arange(n, dtype=np.int64), np.diff(cols.file_ptr))
    change_key = change_commit * n_paths + np.fromiter((pid[p] for p in cols.paths), np.int64, len(cols.paths))
    old_key = change_commit[renamed] * n_paths + np.fromiter((pid[p] for p in old_paths), np.int64, len(renamed))
    # One entry per (commit, path): sorted by commit, then path id; a rename's old path is an entry without spans.
    keys = np.unique(np.concatenate([change_key, old_key]))
    path_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys // n_paths, minlength=n), out=path_ptr[1:])
    # Each hunk's new-side span, its entry, then per entry the distinct spans in order.
    hunk_entry = np.searchsorted(keys, np.repeat(change_key, np.diff(cols.hunk_ptr)))
    c, d = cols.hunks[:, 2], cols.hunks[:, 3]
    start = np.where(d > 0, c, np.maximum(c, 1))
    end = np.where(d > 0, c + d - 1, c + 1)
    order = np.lexsort((end, start, hunk_entry))
    hunk_entry, start, end = hunk_entry[order], start[order], end[order]
    if order.size:
        keep = np.ones(order.size, dtype=bool)
        keep[1:] = (np.diff(hunk_entry) != 0) | (np.diff(start) != 0) | (np.diff(end) != 0)
        hunk_entry, start, end = hunk_entry[keep], start[keep], end[keep]
    hunk_ptr = np.zeros(keys.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(hunk_entry, minlength=keys.size), out=hunk_ptr[1:])
    bm25 = BM25Retriever(tokenizer=tok)
    bm25.build_from_features({"counts": _message_counts(cols.ids, cols.messages, tok, cache)})
    return HistoryIndex(
        cols.base_commit,
        list(cols.ids),
        paths,
        cols.times.astype(np.int64),
        np.asarray([is_fix(m) for m in cols.messages], dtype=np.uint8),
        path_ptr,
        (keys % n_paths).astype(np.int32),
        hunk_ptr,
        np.stack([start, end], axis=1).astype(np.int32).reshape(-1, 2),
        bm25,
        sha256,
    )


def _is_current(directory: Path, sha256: str, config: dict[str, Any]) -> bool:
    """Whether a stored index is of this history file and config (reads the manifest only; never writes)."""
    try:
        manifest = _read_manifest(directory / MANIFEST)
    except CorruptIndexError:
        return False
    return bool(manifest.get("history_sha256") == sha256 and manifest.get("config") == config)


def _history_source(snapshot_dir: Path) -> tuple[str, Callable[[], History | HistoryColumns]] | None:
    """Where a snapshot's history comes from, as ``(identity, reader)``: its history file (identity: the file's
    SHA-256), else, for a git checkout, its ``.git`` at ``HEAD`` (identity: the SHA-256 of ``git:<HEAD id>`` and
    the bounds, :data:`~swe_explore.chunking.history_git.DEFAULT_MAX_COMMITS` ancestors); ``None`` without either."""
    history_file = snapshot_dir / HISTORY_FILE
    if history_file.is_file():

        def from_file() -> HistoryColumns:  # checked against the marker's commit: never another commit's history
            history = read_history_columns(history_file, marker_commit(snapshot_dir))
            assert history is not None  # the file exists
            return history

        return file_sha256(history_file), from_file
    git_dir = git_dir_of(snapshot_dir)
    if git_dir is None:
        return None
    try:
        head = head_commit(git_dir)
    except HistoryGitError:  # a repository without commits, or git missing: no history
        return None
    identity = hashlib.sha256(f"git:{head}:{DEFAULT_MAX_COMMITS}".encode()).hexdigest()
    return identity, lambda: history_from_git(git_dir, head, max_commits=DEFAULT_MAX_COMMITS)


def ensure_history_index(
    snapshot_dir: Path,
    store: Path,
    snapshot_name: str | None = None,
    rebuild: bool = False,
    reuse: bool = False,
) -> bool | None:
    """Build and save a snapshot's history index unless a current one is stored.

    A current index is found without a lock and without writing (a read-only store is fine); otherwise it is built
    under its :class:`~swe_explore.indexes.store.IndexLock`, checked again there (a concurrent builder may have
    built it), and written atomically.

    :param snapshot_dir: the snapshot.
    :param store: index store root.
    :param snapshot_name: the snapshot's name in the store (default: the directory name).
    :param rebuild: rebuild even when current.
    :param reuse: take and store per-commit term counts in the store's content-addressed cache.
    :return: ``None`` when the snapshot has no history file, else whether the index was built (``False``: reused).
    :raises swe_explore.chunking.history.HistoryError: for a history file that cannot be read, or of another
        commit than the one the snapshot's marker names.
    :raises ReadOnlyStoreError: naming the index directory, if it must be built and the store cannot be written.
    """
    from swe_explore.indexes.build import building_lock

    source = _history_source(Path(snapshot_dir))
    if source is None:
        return None
    sha256, reader = source
    config = history_config()
    hdir = history_dir_for(Path(store), snapshot_name or Path(snapshot_dir).name)
    if not rebuild and _is_current(hdir, sha256, config):
        return False
    with building_lock(hdir, hdir):
        if not rebuild and _is_current(hdir, sha256, config):
            return False
        remove_abandoned_temporaries(hdir)
        history = reader()
        scratch: list[Path] = []

        def make_scratch() -> Path:
            if not scratch:
                scratch.append(temporary_path(hdir, "cache-"))
                scratch[0].mkdir(parents=True)
            return scratch[0]

        cache = ContentCache(Path(store), make_scratch) if reuse else None
        try:
            index = build_history_index(history, cache=cache, sha256=sha256)
            if cache is not None:
                cache.close()
            with atomic_directory(hdir) as tmp:
                index.save(tmp)
        finally:
            for path in scratch:
                shutil.rmtree(path, ignore_errors=True)
    return True


def open_history_index(snapshot_dir: Path, store: Path, snapshot_name: str | None = None) -> HistoryIndex | None:
    """Load a snapshot's stored history index and check that it is of the snapshot's history file.

    :param snapshot_dir: the snapshot.
    :param store: index store root.
    :param snapshot_name: the snapshot's name in the store (default: the directory name).
    :return: the index, or ``None`` when the snapshot has no history file.
    :raises FileNotFoundError: if the index was never built.
    :raises StaleIndexError: if it was built from another history file or config.
    :raises CorruptIndexError: naming a broken file.
    :raises HistoryError: if the index is of another commit than the one the snapshot's marker names (an index
        built from a history file of another commit; building one now refuses that file).
    """
    source = _history_source(Path(snapshot_dir))
    if source is None:
        return None
    hdir = history_dir_for(Path(store), snapshot_name or Path(snapshot_dir).name)
    if not (hdir / MANIFEST).is_file():
        raise FileNotFoundError(f"no history index at {hdir}; build it with ensure_history_index")
    manifest = _read_manifest(hdir / MANIFEST)
    if manifest.get("history_sha256") != source[0]:
        raise StaleIndexError(hdir / MANIFEST, f"built from another history ({HISTORY_FILE} or the checkout's HEAD)")
    if manifest.get("config") != history_config():
        raise StaleIndexError(hdir / MANIFEST, "built with another config")
    index = HistoryIndex.load(hdir)
    expected = marker_commit(Path(snapshot_dir))
    if expected is not None and not index.base_commit.startswith(expected.lower()):
        raise HistoryError(
            f"{Path(snapshot_dir) / HISTORY_FILE}: history of commit {index.base_commit}, not of {expected}"
        )
    return index


def load_history_index(
    snapshot_dir: Path, store: Path, snapshot_name: str | None = None, rebuild: bool = False
) -> HistoryIndex | None:
    """:func:`ensure_history_index`, then :func:`open_history_index`: the snapshot's current history index.

    :param snapshot_dir: the snapshot.
    :param store: index store root.
    :param snapshot_name: the snapshot's name in the store.
    :param rebuild: rebuild even when current.
    :return: the index, or ``None`` when the snapshot has no history file.
    :raises ReadOnlyStoreError: if it must be built and the store cannot be written.
    :raises CorruptIndexError: naming a broken file.
    """
    ensure_history_index(Path(snapshot_dir), Path(store), snapshot_name, rebuild)
    return open_history_index(Path(snapshot_dir), Path(store), snapshot_name)
