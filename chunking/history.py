"""A snapshot's history: the ancestors of its ``base_commit``, as a file next to the snapshot marker.

Everything before ``base_commit`` is fair evidence for an issue filed against it (which files changed together,
which files past fixes touched, how often and how recently). This module holds the one format of that evidence:
:class:`History` (newest commit first), its commits (:class:`Commit`: id, committer time, the message without
author trailers, the changed files) and their file changes (:class:`FileChange`: status, paths and git's hunk
numbers). :func:`write_history` stores it as :data:`HISTORY_FILE` at a snapshot's top level (gzip-compressed
JSON lines, a header line and then one commit per line; byte-identical for equal input) and
:func:`read_history` reads it back, checking every field.

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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from swe_explore.chunking.atomic import write_bytes_atomic

__all__ = [
    "HISTORY_FILE",
    "HISTORY_FORMAT",
    "Commit",
    "FileChange",
    "History",
    "HistoryError",
    "author_free",
    "changed_paths",
    "commits_touching",
    "read_history",
    "write_history",
]

HISTORY_FILE = ".swe-explore-history.jsonl.gz"
"""The history's file name at a snapshot's top level (skipped by the snapshot walker)."""

HISTORY_FORMAT = 1
"""Version of the file format; a file of another version is refused."""

_STATUSES = ("A", "M", "D", "R", "C", "T")

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

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: ``{"path", "status"[, "old_path"][, "hunks"]}``."""
        out: dict[str, Any] = {"path": self.path, "status": self.status}
        if self.old_path is not None:
            out["old_path"] = self.old_path
        if self.hunks:
            out["hunks"] = [list(h) for h in self.hunks]
        return out


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
        """The JSON form: ``{"id", "time", "message", "files"}``."""
        return {"id": self.id, "time": self.time, "message": self.message, "files": [f.to_dict() for f in self.files]}


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


def write_history(snapshot_or_file: str | Path, history: History) -> Path:
    """Write a history atomically (gzip JSON lines, deterministic bytes).

    :param snapshot_or_file: a snapshot directory (the file goes to ``<dir>/`` :data:`HISTORY_FILE`) or a file path.
    :param history: the history.
    :return: the path written.
    """
    target = Path(snapshot_or_file)
    if target.is_dir():
        target = target / HISTORY_FILE
    lines = [json.dumps(history.header(), sort_keys=True)]
    lines.extend(json.dumps(c.to_dict(), sort_keys=True, ensure_ascii=False) for c in history.commits)
    raw = ("\n".join(lines) + "\n").encode("utf-8")
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=6) as gz:
        gz.write(raw)
    write_bytes_atomic(target, buffer.getvalue())
    return target


def read_history(snapshot_or_file: str | Path, base_commit: str | None = None) -> History | None:
    """Read a history written by :func:`write_history`.

    :param snapshot_or_file: a snapshot directory or the history file itself.
    :param base_commit: when given, the commit the history must be of (a prefix of at least 7 hex digits is
        enough); a file of another commit is an error, never silently used.
    :return: the history, or ``None`` when a snapshot directory has no history file.
    :raises HistoryError: for a file that is not a valid history (naming the file and the first problem), or of
        another commit than ``base_commit``.
    """
    path = Path(snapshot_or_file)
    if path.is_dir():
        path = path / HISTORY_FILE
        if not path.is_file():
            return None
    try:
        text = gzip.decompress(path.read_bytes()).decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise HistoryError(f"{path}: not a readable history file ({exc})") from None
    # Split on "\n" only: str.splitlines() also breaks on U+2028, U+0085, \x1c..., which a message may hold (the
    # file is written with ensure_ascii=False, so they stay raw inside JSON strings).
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise HistoryError(f"{path}: empty history file")
    header = _json_object(path, 1, lines[0])
    if header.get("format") != HISTORY_FORMAT:
        raise HistoryError(f"{path}: history format {header.get('format')!r}, this version reads {HISTORY_FORMAT}")
    have = str(header.get("base_commit") or "").lower()
    if not re.fullmatch(r"[0-9a-f]{40}", have):
        raise HistoryError(f"{path}: header has no valid base_commit")
    if base_commit is not None and not (len(base_commit) >= 7 and have.startswith(base_commit.lower())):
        raise HistoryError(f"{path}: history of commit {have}, not of {base_commit}")
    try:  # one decode of all commit lines; on any error, line by line to name the bad one
        objects = json.loads("[" + ",".join(lines[1:]) + "]")
    except json.JSONDecodeError:
        objects = [_json_object(path, n, line) for n, line in enumerate(lines[1:], start=2)]
    if len(objects) != len(lines) - 1:  # a line holding two values ("{...},{...}")
        objects = [_json_object(path, n, line) for n, line in enumerate(lines[1:], start=2)]
    for n, obj in enumerate(objects, start=2):
        if type(obj) is not dict:
            raise HistoryError(f"{path}: line {n}: not a JSON object")
    commits = tuple(_commit(path, n, obj) for n, obj in enumerate(objects, start=2))
    if header.get("n_commits") != len(commits):
        raise HistoryError(f"{path}: header says {header.get('n_commits')} commits, file has {len(commits)}")
    bounds = header.get("bounds")
    return History(have, commits, dict(bounds) if isinstance(bounds, dict) else {})


def _json_object(path: Path, line_no: int, line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise HistoryError(f"{path}: line {line_no}: not JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise HistoryError(f"{path}: line {line_no}: not a JSON object")
    return value


def _commit(path: Path, line_no: int, obj: dict[str, Any]) -> Commit:
    where = f"{path}: line {line_no}"
    cid, time, message, files = obj.get("id"), obj.get("time"), obj.get("message"), obj.get("files")
    if not isinstance(cid, str) or not re.fullmatch(r"[0-9a-f]{40}", cid):
        raise HistoryError(f"{where}: commit id is not 40 lower-case hex digits")
    if not isinstance(time, int) or isinstance(time, bool):
        raise HistoryError(f"{where}: commit {cid[:12]}: time is not an integer")
    if not isinstance(message, str):
        raise HistoryError(f"{where}: commit {cid[:12]}: message is not a string")
    if not isinstance(files, list):
        raise HistoryError(f"{where}: commit {cid[:12]}: files is not a list")
    return Commit(cid, time, message, tuple(_file_change(f"{where}: commit {cid[:12]}", f) for f in files))


def _file_change(where: str, obj: Any) -> FileChange:
    if type(obj) is not dict:
        raise HistoryError(f"{where}: a file change without a path")
    path = obj.get("path")
    if type(path) is not str or not path:
        raise HistoryError(f"{where}: a file change without a path")
    status = obj.get("status", "M")
    if status not in _STATUSES:
        raise HistoryError(f"{where}: {path}: unknown status {status!r}")
    old_path = obj.get("old_path")
    if old_path is not None and type(old_path) is not str:
        raise HistoryError(f"{where}: {path}: old_path is not a string")
    hunks = _hunks(obj.get("hunks", []))
    if hunks is None:
        raise HistoryError(f"{where}: {path}: hunks are not lists of four non-negative integers")
    return FileChange(path, status, old_path, hunks)


def _hunks(value: Any) -> tuple[tuple[int, int, int, int], ...] | None:
    """The hunks of a JSON value, or ``None`` unless it is a list of lists of four non-negative integers (one
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
        if a < 0 or b < 0 or c < 0 or d < 0:
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
