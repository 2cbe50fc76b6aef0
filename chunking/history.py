"""A snapshot's history: the ancestors of its ``base_commit``, as a file next to the snapshot marker.

Everything before ``base_commit`` is fair evidence for an issue filed against it (which files changed together,
which files past fixes touched, how often and how recently). This module holds the one format of that evidence:
:class:`History` (newest commit first), its commits (:class:`Commit`: id, committer time, the message without
author trailers, the changed files) and their file changes (:class:`FileChange`: status, paths and git's hunk
numbers). :func:`write_history` stores it as :data:`HISTORY_FILE` at a snapshot's top level (gzip-compressed
JSON lines, a header line and then one commit per line; byte-identical for equal input), :func:`read_history`
reads it back, checking every field, and :func:`read_history_columns` reads it as :class:`HistoryColumns` (the same
history as arrays, what the history index is built from, without a tuple per file change).

**The file** (format 2, :data:`HISTORY_FORMAT`): the header ``{"format": 2, "base_commit", "n_commits",
"bounds"}``, then per commit ``{"id", "time", "message", "files"}`` with every file change a list ``[path, status,
old_path or null, hunks]``, ``hunks`` git's hunk numbers as one string of decimal numbers separated by single spaces,
four per hunk (``"10 2 10 3 40 0 41 2"``; ``""`` for none; each at most 999,999,999). Format 1 (a change as
``{"path", "status"[, "old_path"][, "hunks": [[a, b, c, d], ...]]}``) is still read; the flat hunks of format 2
parse in one vectorised call, which is most of the reading time saved (docs/history.md).

**Leak-free by construction.** A history holds ``base_commit`` and its ancestors only (``git rev-list
<base_commit>``), never a later commit; :func:`read_history` refuses a file whose header names another commit than
the caller expects.

Reading a history from git is :mod:`swe_explore.chunking.history_git`. The rules and measured costs are in
docs/history.md.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from swe_explore.chunking.atomic import write_bytes_atomic

__all__ = [
    "HISTORY_FILE",
    "HISTORY_FORMAT",
    "Commit",
    "FileChange",
    "History",
    "HistoryColumns",
    "HistoryError",
    "author_free",
    "changed_paths",
    "commits_touching",
    "read_history",
    "read_history_columns",
    "read_history_header",
    "write_history",
]

HISTORY_FILE = ".swe-explore-history.jsonl.gz"
"""The history's file name at a snapshot's top level (skipped by the snapshot walker)."""

HISTORY_FORMAT = 2
"""Version of the file format written (module docstring); format 1 is still read, any other is refused."""

_STATUSES = ("A", "M", "D", "R", "C", "T")
_STATUS_SET = frozenset(_STATUSES)
_HEX40 = re.compile(r"[0-9a-f]{40}")
_NOT_HUNK_TEXT = re.compile(r"[^0-9 ]")
_MAX_HUNK_NUMBER = 999_999_999  # nine digits: the format's bound, well inside int32

# Trailer lines that name people (``Signed-off-by: Name <mail>``, ``Co-authored-by: ...``) and are dropped.
_AUTHOR_TRAILER = re.compile(
    r"^\s*(?:signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|suggested-by|helped-by"
    r"|cc|authored-by|reviewed-on)\s*:.*$",
    re.IGNORECASE | re.MULTILINE,
)


class HistoryError(ValueError):
    """A history file that cannot be read: names the file and what is wrong."""


def author_free(message: str) -> str:
    """A commit message without the trailer lines that name people, trailing whitespace stripped.

    :param message: the raw message (``git log --format=%B``).
    :return: the message without ``Signed-off-by:``, ``Co-authored-by:`` and the like.
    """
    return _AUTHOR_TRAILER.sub("", message).strip()


class FileChange(NamedTuple):
    """One file a commit changed (a named tuple: a history holds tens of thousands, made fast).

    :param path: the file's path after the commit (repo-relative POSIX); for a deletion, its path before.
    :param status: git's status letter: ``A`` added, ``M`` modified, ``D`` deleted, ``R`` renamed, ``C`` copied,
        ``T`` type changed.
    :param old_path: the path before a rename or copy, else ``None``.
    :param hunks: git's hunk numbers ``(old_start, old_count, new_start, new_count)`` (``@@ -a,b +c,d @@``,
        1-based lines; a count of 0 is a pure insertion or deletion); empty when they were not read (e.g. a binary
        file or a blob missing from the mirror).
    """

    path: str
    status: str = "M"
    old_path: str | None = None
    hunks: tuple[tuple[int, int, int, int], ...] = ()

    def to_row(self) -> list[Any]:
        """The file's form (format 2): ``[path, status, old_path or None, "a b c d ..."]``."""
        return [self.path, self.status, self.old_path, " ".join(str(x) for h in self.hunks for x in h)]


class Commit(NamedTuple):
    """One ancestor commit (a named tuple, like :class:`FileChange`).

    :param id: the full commit id (40 hex digits, lower case).
    :param time: committer time, seconds since the epoch (UTC).
    :param message: the message without author trailers (:func:`author_free`).
    :param files: the files it changed (against its first parent; a root commit against the empty tree).
    """

    id: str
    time: int
    message: str
    files: tuple[FileChange, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The file's form (format 2): ``{"id", "time", "message", "files": [FileChange.to_row(), ...]}``."""
        return {"id": self.id, "time": self.time, "message": self.message, "files": [f.to_row() for f in self.files]}


@dataclass(frozen=True)
class History:
    """The history of a snapshot: ``base_commit`` and its ancestors, newest first.

    :param base_commit: the snapshot's commit (full id, lower case).
    :param commits: the commits, newest first (by committer time, ties in git's order); the first is
        ``base_commit`` itself unless the bounds excluded it.
    :param bounds: how the history was cut: ``{"max_commits": N or None, "since": unix time or None}``, plus
        anything the writer records (e.g. ``"merges": "skipped"``).
    """

    base_commit: str
    commits: tuple[Commit, ...] = ()
    bounds: dict[str, Any] = field(default_factory=dict)

    def header(self) -> dict[str, Any]:
        """The file's first line: ``{"format", "base_commit", "n_commits", "bounds"}``."""
        return {
            "format": HISTORY_FORMAT,
            "base_commit": self.base_commit,
            "n_commits": len(self.commits),
            "bounds": self.bounds,
        }


@dataclass(frozen=True, eq=False)
class HistoryColumns:
    """A :class:`History` as columns: ``n`` commits (newest first), ``m`` file changes, ``h`` hunks.

    What the history index is built from (:mod:`swe_explore.indexes.history`): reading a file into columns makes
    no tuple per file change or hunk.

    :param base_commit: the snapshot's commit.
    :param bounds: as :attr:`History.bounds`.
    :param ids: ``n`` commit ids.
    :param times: int64 ``(n,)`` committer times.
    :param messages: ``n`` messages.
    :param file_ptr: int64 ``(n + 1,)``: commit ``i``'s changes are ``file_ptr[i]:file_ptr[i + 1]``.
    :param paths: ``m`` paths (:attr:`FileChange.path`).
    :param statuses: ``m`` status letters.
    :param old_paths: ``m`` old paths or ``None``.
    :param hunk_ptr: int64 ``(m + 1,)``: change ``j``'s hunks are rows ``hunk_ptr[j]:hunk_ptr[j + 1]``.
    :param hunks: int64 ``(h, 4)``: ``(old_start, old_count, new_start, new_count)``.
    """

    base_commit: str
    bounds: dict[str, Any]
    ids: list[str]
    times: np.ndarray
    messages: list[str]
    file_ptr: np.ndarray
    paths: list[str]
    statuses: list[str]
    old_paths: list[str | None]
    hunk_ptr: np.ndarray
    hunks: np.ndarray

    @classmethod
    def from_history(cls, history: History) -> HistoryColumns:
        """The columns of a history.

        :param history: the history.
        :return: its columns.
        """
        changes = [f for c in history.commits for f in c.files]
        file_ptr = np.zeros(len(history.commits) + 1, dtype=np.int64)
        np.cumsum([len(c.files) for c in history.commits], out=file_ptr[1:])
        hunk_ptr = np.zeros(len(changes) + 1, dtype=np.int64)
        np.cumsum([len(f.hunks) for f in changes], out=hunk_ptr[1:])
        return cls(
            history.base_commit,
            dict(history.bounds),
            [c.id for c in history.commits],
            np.asarray([c.time for c in history.commits], dtype=np.int64),
            [c.message for c in history.commits],
            file_ptr,
            [f.path for f in changes],
            [f.status for f in changes],
            [f.old_path for f in changes],
            hunk_ptr,
            np.asarray([h for f in changes for h in f.hunks], dtype=np.int64).reshape(-1, 4),
        )

    def to_history(self) -> History:
        """The same history as :class:`History` (tuples).

        :return: the history.
        """
        hunks = [tuple(h) for h in self.hunks.tolist()]
        hp = self.hunk_ptr.tolist()
        changes = [
            FileChange(p, s, o, tuple(hunks[hp[j] : hp[j + 1]]))
            for j, (p, s, o) in enumerate(zip(self.paths, self.statuses, self.old_paths))
        ]
        fp = self.file_ptr.tolist()
        commits = tuple(
            Commit(cid, int(t), msg, tuple(changes[fp[i] : fp[i + 1]]))
            for i, (cid, t, msg) in enumerate(zip(self.ids, self.times.tolist(), self.messages))
        )
        return History(self.base_commit, commits, dict(self.bounds))


def write_history(snapshot_or_file: str | Path, history: History) -> Path:
    """Write a history atomically (gzip JSON lines of format :data:`HISTORY_FORMAT`, deterministic bytes).

    :param snapshot_or_file: a snapshot directory (the file goes to ``<dir>/`` :data:`HISTORY_FILE`) or a file path.
    :param history: the history.
    :return: the path written.
    :raises ValueError: for a hunk number outside ``0..999999999`` (the format's bound; git's are far smaller).
    """
    target = Path(snapshot_or_file)
    if target.is_dir():
        target = target / HISTORY_FILE
    for commit in history.commits:
        for change in commit.files:
            if any(not 0 <= x <= _MAX_HUNK_NUMBER for h in change.hunks for x in h):
                raise ValueError(f"{commit.id[:12]}: {change.path}: a hunk number outside 0..{_MAX_HUNK_NUMBER}")
    lines = [json.dumps(history.header(), sort_keys=True)]
    lines.extend(json.dumps(c.to_dict(), sort_keys=True, ensure_ascii=False) for c in history.commits)
    raw = ("\n".join(lines) + "\n").encode("utf-8")
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=6) as gz:
        gz.write(raw)
    write_bytes_atomic(target, buffer.getvalue())
    return target


def read_history(snapshot_or_file: str | Path, base_commit: str | None = None) -> History | None:
    """Read a history written by :func:`write_history` (format 2, or format 1).

    :param snapshot_or_file: a snapshot directory or the history file itself.
    :param base_commit: when given, the commit the history must be of (a prefix of at least 7 hex digits is
        enough); a file of another commit is an error, never silently used.
    :return: the history, or ``None`` when a snapshot directory has no history file.
    :raises HistoryError: for a file that is not a valid history (naming the file and the first problem), or of
        another commit than ``base_commit``.
    :raises ValueError: if ``base_commit`` is not 7 to 40 hex digits.
    """
    read = _read_file(snapshot_or_file, base_commit)
    if read is None:
        return None
    path, header, objects = read
    if header["format"] == 1:
        return _history_v1(path, header, objects)
    return _columns_v2(path, header, objects).to_history()


def read_history_columns(snapshot_or_file: str | Path, base_commit: str | None = None) -> HistoryColumns | None:
    """Read a history file as :class:`HistoryColumns`, with every check of :func:`read_history`.

    :param snapshot_or_file: a snapshot directory or the history file itself.
    :param base_commit: as for :func:`read_history`.
    :return: the columns, or ``None`` when a snapshot directory has no history file.
    :raises HistoryError: as :func:`read_history`.
    :raises ValueError: as :func:`read_history`.
    """
    read = _read_file(snapshot_or_file, base_commit)
    if read is None:
        return None
    path, header, objects = read
    if header["format"] == 1:
        return HistoryColumns.from_history(_history_v1(path, header, objects))
    return _columns_v2(path, header, objects)


def read_history_header(snapshot_or_file: str | Path) -> dict[str, Any] | None:
    """A history file's header line, the whole file decompressed (so a damaged gzip stream is found), nothing
    else checked: what ``materialize --history`` reads to decide whether a present file can stay.

    :param snapshot_or_file: a snapshot directory or the history file itself.
    :return: the header object, or ``None`` when a snapshot directory has no history file.
    :raises HistoryError: naming the file, if it cannot be decompressed or its first line is not a JSON object.
    """
    read = _file_text(snapshot_or_file)
    if read is None:
        return None
    path, text = read
    return _json_object(path, 1, text.split("\n", 1)[0])


def _file_text(snapshot_or_file: str | Path) -> tuple[Path, str] | None:
    """The history file's path and decompressed text (``None``: a directory without the file)."""
    path = Path(snapshot_or_file)
    if path.is_dir():
        path = path / HISTORY_FILE
        if not path.is_file():
            return None
    try:
        text = gzip.decompress(path.read_bytes()).decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise HistoryError(f"{path}: not a readable history file ({exc})") from None
    return path, text


def _read_file(snapshot_or_file: str | Path, base_commit: str | None) -> tuple[Path, dict[str, Any], list[Any]] | None:
    """The file's path, its checked header and its commit lines decoded (``None``: a directory without the file)."""
    if base_commit is not None and not re.fullmatch(r"[0-9a-fA-F]{7,40}", base_commit):
        raise ValueError(f"base_commit must be 7 to 40 hex digits, not {base_commit!r}")
    read = _file_text(snapshot_or_file)
    if read is None:
        return None
    path, text = read
    # Split on "\n" only: str.splitlines() also breaks on U+2028, U+0085, \x1c..., which a message may hold (the
    # file is written with ensure_ascii=False, so they stay raw inside JSON strings).
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise HistoryError(f"{path}: empty history file")
    header = _json_object(path, 1, lines[0])
    if header.get("format") not in (1, HISTORY_FORMAT) or type(header.get("format")) is not int:
        raise HistoryError(f"{path}: history format {header.get('format')!r}, this version reads 1 and 2")
    have = str(header.get("base_commit") or "").lower()
    if not _HEX40.fullmatch(have):
        raise HistoryError(f"{path}: header has no valid base_commit")
    if base_commit is not None and not have.startswith(base_commit.lower()):
        raise HistoryError(f"{path}: history of commit {have}, not of {base_commit}")
    if not isinstance(header.get("bounds", {}), dict):
        raise HistoryError(f"{path}: header bounds is not a JSON object")
    header["base_commit"] = have
    try:  # one decode of all commit lines; on any error, line by line to name the bad one
        objects = json.loads("[" + ",".join(lines[1:]) + "]")
    except json.JSONDecodeError:
        objects = [_json_object(path, n, line) for n, line in enumerate(lines[1:], start=2)]
    if len(objects) != len(lines) - 1:  # a line holding two values ("{...},{...}")
        objects = [_json_object(path, n, line) for n, line in enumerate(lines[1:], start=2)]
    for n, obj in enumerate(objects, start=2):
        if type(obj) is not dict:
            raise HistoryError(f"{path}: line {n}: not a JSON object")
    if header.get("n_commits") != len(objects):
        raise HistoryError(f"{path}: header says {header.get('n_commits')} commits, file has {len(objects)}")
    return path, header, objects


def _bounds(header: dict[str, Any]) -> dict[str, Any]:
    bounds = header.get("bounds")
    return dict(bounds) if isinstance(bounds, dict) else {}


def _history_v1(path: Path, header: dict[str, Any], objects: list[Any]) -> History:
    """A format-1 file's commits, every field checked."""
    commits = tuple(_commit(path, n, obj, _file_change_v1) for n, obj in enumerate(objects, start=2))
    return History(header["base_commit"], commits, _bounds(header))


class _Malformed(Exception):
    """Raised inside the vectorised reading of format 2; the line-by-line check then names the problem."""


def _columns_v2(path: Path, header: dict[str, Any], objects: list[Any]) -> HistoryColumns:
    """A format-2 file's columns: one pass collecting the fields, checks over whole columns, one numpy parse of
    all hunk numbers. On any problem, the line-by-line check (:func:`_commit`) raises the exact error."""
    try:
        return _columns_v2_fast(header, objects)
    except _Malformed:
        pass
    for n, obj in enumerate(objects, start=2):
        _commit(path, n, obj, _file_change_v2)
    raise HistoryError(f"{path}: hunk numbers do not parse")  # the line checks passed: only the joint parse failed


def _columns_v2_fast(header: dict[str, Any], objects: list[Any]) -> HistoryColumns:
    ids: list[Any] = []
    times: list[Any] = []
    messages: list[Any] = []
    counts: list[int] = []
    paths: list[Any] = []
    statuses: list[Any] = []
    old_paths: list[Any] = []
    texts: list[Any] = []
    try:
        for obj in objects:
            files = obj["files"]
            if type(files) is not list:
                raise _Malformed
            ids.append(obj["id"])
            times.append(obj["time"])
            messages.append(obj["message"])
            counts.append(len(files))
            for row in files:
                if type(row) is not list or len(row) != 4:
                    raise _Malformed
                paths.append(row[0])
                statuses.append(row[1])
                old_paths.append(row[2])
                texts.append(row[3])
        if not all(type(x) is str and _HEX40.fullmatch(x) for x in ids):
            raise _Malformed
        if not all(type(x) is int for x in times) or not all(type(x) is str for x in messages):
            raise _Malformed
        if not all(type(x) is str and x for x in paths) or not _STATUS_SET.issuperset(statuses):
            raise _Malformed
        if not all(x is None or type(x) is str for x in old_paths):
            raise _Malformed
        numbers, per_text = _hunk_numbers(texts)
        times_array = np.asarray(times, dtype=np.int64)
    except (KeyError, TypeError, OverflowError):
        raise _Malformed from None
    hunk_ptr = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(per_text, out=hunk_ptr[1:])
    file_ptr = np.zeros(len(objects) + 1, dtype=np.int64)
    np.cumsum(counts, out=file_ptr[1:])
    return HistoryColumns(
        header["base_commit"],
        _bounds(header),
        ids,
        times_array,
        messages,
        file_ptr,
        paths,
        statuses,
        old_paths,
        hunk_ptr,
        numbers.reshape(-1, 4),
    )


def _hunk_numbers(texts: list[Any]) -> tuple[np.ndarray, list[int]]:
    """All hunk strings' numbers in one int64 array, and each string's number of hunks; :class:`_Malformed`
    unless every string is groups of four numbers in 0..999,999,999, separated by single spaces."""
    if not all(type(t) is str for t in texts):
        raise _Malformed
    tokens = [t.count(" ") + 1 if t else 0 for t in texts]
    if any(k % 4 for k in tokens):
        raise _Malformed
    per_text = [k // 4 for k in tokens]
    joined = " ".join(t for t in texts if t)
    if not joined:
        return np.zeros(0, dtype=np.int64), per_text
    if _NOT_HUNK_TEXT.search(joined):
        raise _Malformed
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy warns when the text does not parse to its end
        try:
            numbers = np.fromstring(joined, dtype=np.int64, sep=" ")
        except (ValueError, DeprecationWarning):
            raise _Malformed from None
    # An empty token (a double, leading or trailing space) is counted above but not parsed: the totals differ.
    if numbers.size != sum(tokens) or (numbers.size and numbers.max() > _MAX_HUNK_NUMBER):
        raise _Malformed
    return numbers, per_text


def _json_object(path: Path, line_no: int, line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise HistoryError(f"{path}: line {line_no}: not JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise HistoryError(f"{path}: line {line_no}: not a JSON object")
    return value


def _commit(path: Path, line_no: int, obj: dict[str, Any], file_change: Callable[[str, Any], FileChange]) -> Commit:
    where = f"{path}: line {line_no}"
    cid, time, message, files = obj.get("id"), obj.get("time"), obj.get("message"), obj.get("files")
    if not isinstance(cid, str) or not _HEX40.fullmatch(cid):
        raise HistoryError(f"{where}: commit id is not 40 lower-case hex digits")
    if not isinstance(time, int) or isinstance(time, bool) or not -(2**63) <= time < 2**63:
        raise HistoryError(f"{where}: commit {cid[:12]}: time is not a 64-bit integer")
    if not isinstance(message, str):
        raise HistoryError(f"{where}: commit {cid[:12]}: message is not a string")
    if not isinstance(files, list):
        raise HistoryError(f"{where}: commit {cid[:12]}: files is not a list")
    return Commit(cid, time, message, tuple(file_change(f"{where}: commit {cid[:12]}", f) for f in files))


def _check_change(where: str, path: Any, status: Any, old_path: Any) -> None:
    if type(path) is not str or not path:
        raise HistoryError(f"{where}: a file change without a path")
    if status not in _STATUSES:
        raise HistoryError(f"{where}: {path}: unknown status {status!r}")
    if old_path is not None and type(old_path) is not str:
        raise HistoryError(f"{where}: {path}: old_path is not a string")


def _file_change_v1(where: str, obj: Any) -> FileChange:
    if type(obj) is not dict:
        raise HistoryError(f"{where}: a file change without a path")
    path: Any = obj.get("path")
    status, old_path = obj.get("status", "M"), obj.get("old_path")
    _check_change(where, path, status, old_path)
    hunks = _hunks(obj.get("hunks", []))
    if hunks is None:
        raise HistoryError(f"{where}: {path}: hunks are not lists of four integers in 0..{_MAX_HUNK_NUMBER}")
    return FileChange(path, status, old_path, hunks)


def _file_change_v2(where: str, obj: Any) -> FileChange:
    if type(obj) is not list or len(obj) != 4:
        raise HistoryError(f"{where}: a file change is not a list [path, status, old_path, hunks]")
    path, status, old_path, text = obj
    _check_change(where, path, status, old_path)
    try:
        numbers, _ = _hunk_numbers([text])
    except (_Malformed, TypeError):
        raise HistoryError(
            f"{where}: {path}: hunks are not groups of four numbers (0..{_MAX_HUNK_NUMBER}) separated by single spaces"
        ) from None
    return FileChange(path, status, old_path, tuple((a, b, c, d) for a, b, c, d in numbers.reshape(-1, 4).tolist()))


def _hunks(value: Any) -> tuple[tuple[int, int, int, int], ...] | None:
    """The hunks of a JSON value, or ``None`` unless it is a list of lists of four integers in ``0..999999999`` (one
    plain loop with exact type checks: a history holds tens of thousands of hunks, and ``bool`` is no integer)."""
    if type(value) is not list:
        return None
    out = []
    for h in value:
        if type(h) is not list or len(h) != 4:
            return None
        a, b, c, d = h
        if type(a) is not int or type(b) is not int or type(c) is not int or type(d) is not int:
            return None
        if not (0 <= a <= _MAX_HUNK_NUMBER and 0 <= b <= _MAX_HUNK_NUMBER and 0 <= c <= _MAX_HUNK_NUMBER):
            return None
        if not 0 <= d <= _MAX_HUNK_NUMBER:
            return None
        out.append((a, b, c, d))
    return tuple(out)


def commits_touching(history: History, paths: Iterable[str]) -> dict[str, list[int]]:
    """For each path, the positions (in ``history.commits``, newest first) of the commits that changed it.

    A rename counts for both its old and its new path.

    :param history: the history.
    :param paths: the paths of interest (repo-relative POSIX).
    :return: ``{path: [commit position, ...]}`` for the paths some commit changed, positions ascending.
    """
    wanted = set(paths)
    out: dict[str, list[int]] = {}
    for pos, commit in enumerate(history.commits):
        seen: set[str] = set()
        for change in commit.files:
            for p in (change.path, change.old_path):
                if p is not None and p in wanted and p not in seen:
                    seen.add(p)
                    out.setdefault(p, []).append(pos)
    return out


def changed_paths(commits: Sequence[Commit]) -> list[str]:
    """Every path the commits changed (new and old paths), sorted.

    :param commits: commits.
    :return: the sorted distinct paths.
    """
    return sorted({p for c in commits for f in c.files for p in (f.path, f.old_path) if p is not None})
