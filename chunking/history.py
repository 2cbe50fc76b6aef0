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

:func:`history_from_git` reads a history from a git directory (read-only, in a fixed environment; robust to a
partial mirror missing blobs), :func:`histories_from_git` several of one repository with one diff pass over the
commits they share, and :func:`history_for_snapshot` gives a snapshot's history from its file or its ``.git``.
The rules and measured costs are in docs/history.md.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from swe_explore.chunking.atomic import write_bytes_atomic

__all__ = [
    "DEFAULT_MAX_COMMITS",
    "HISTORY_FILE",
    "HISTORY_FORMAT",
    "SECONDS_PER_YEAR",
    "Commit",
    "FileChange",
    "History",
    "HistoryError",
    "HistoryGitError",
    "author_free",
    "changed_paths",
    "commits_touching",
    "histories_from_git",
    "history_for_snapshot",
    "history_from_git",
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


# --- Reading a history from git ------------------------------------------------------------------------------

DEFAULT_MAX_COMMITS = 5000
"""Commits a history holds at most unless told otherwise (``--history-commits``)."""

SECONDS_PER_YEAR = 31_557_600
"""A Julian year (365.25 days), the unit of ``years`` bounds."""

# Every git command of this module runs with these options and environment, so that neither the user's nor the
# system's configuration nor replace refs, lazy fetches of a partial clone or the network can change (or leak into)
# a history: ``protocol.allow=never`` makes any fetch fail, which a missing object then is.
_GIT_OPTIONS = (
    "-c",
    "core.quotepath=off",
    "-c",
    "protocol.allow=never",
    "-c",
    f"core.attributesFile={os.devnull}",
)
_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_LFS_SKIP_SMUDGE": "1",
    "GIT_ATTR_NOSYSTEM": "1",
    "LC_ALL": "C",
}
_GIT_ENV_DROPPED = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR")
# The diff of each commit against its first parent: plumbing (no diff.* user options), renames found as ``git
# diff -M`` finds them, a fixed rename limit and algorithm, no external diff or text conversion.
_DIFF_OPTIONS = (
    "-r",
    "--root",
    "--always",
    "--raw",
    "--no-abbrev",
    "--no-ext-diff",
    "--no-textconv",
    "--diff-algorithm=myers",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)
_HUNK_OPTIONS = ("-M", "-l1000", "-p", "-U0")
_COMMIT_LINE = re.compile(rb"^(?:[0-9a-f]{40}|[0-9a-f]{64})\n?$")
_HUNK_HEADER = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NULL_SHA = re.compile(rb"^0+$")
_GITLINK = b"160000"
_MAX_BATCH_FAILURES = 8
_C_ESCAPES = {ord("a"): 7, ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12, ord("r"): 13}


class HistoryGitError(RuntimeError):
    """git could not give a history: names the git directory, the command and git's message."""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROPPED}
    env.update(_GIT_ENV)
    return env


def _command(git_dir: Path, args: Sequence[str]) -> list[str]:
    return ["git", *_GIT_OPTIONS, f"--git-dir={git_dir}", *args]


def _failure(git_dir: Path, args: Sequence[str], stderr: bytes, code: int) -> HistoryGitError:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    command = next((a for a in args if not a.startswith("-")), "")
    return HistoryGitError(f"git {command} failed in {git_dir}: {lines[-1] if lines else f'exit {code}'}")


def _run(git_dir: Path, *args: str, input: bytes | None = None) -> bytes:
    """Run one read-only git command (cwd is the git directory, so no work tree's attributes apply)."""
    proc = subprocess.run(
        _command(git_dir, args), input=input, capture_output=True, cwd=git_dir, env=_env(), check=False
    )
    if proc.returncode != 0:
        raise _failure(git_dir, args, proc.stderr, proc.returncode)
    return proc.stdout


def _stream(git_dir: Path, args: Sequence[str], ids: Sequence[str], consume: Callable[[bytes], None]) -> str | None:
    """Run a git command reading commit ids on stdin and feed its stdout to ``consume`` line by line.

    :param git_dir: the git directory.
    :param args: git's arguments.
    :param ids: the commit ids for stdin, one a line.
    :param consume: called with each output line (bytes, with its newline).
    :return: ``None`` when git succeeded, else git's last error line.
    """
    with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as stderr:
        stdin.write("".join(f"{c}\n" for c in ids).encode("ascii"))
        stdin.seek(0)
        try:
            proc = subprocess.Popen(
                _command(git_dir, args), stdin=stdin, stdout=subprocess.PIPE, stderr=stderr, cwd=git_dir, env=_env()
            )
        except OSError as exc:  # e.g. an argument list too long for the system (many excluded paths)
            return f"git {args[0]} could not start in {git_dir}: {exc.strerror}"
        assert proc.stdout is not None
        with proc.stdout:
            for line in proc.stdout:
                consume(line)
        code = proc.wait()
        if code == 0:
            return None
        stderr.seek(0)
        return str(_failure(git_dir, args, stderr.read(), code))


def _unquote(token: bytes) -> str:
    """A path as git prints it (C-quoted when it has control characters, ``"`` or ``\\``), decoded as UTF-8."""
    if not (len(token) >= 2 and token.startswith(b'"') and token.endswith(b'"')):
        return token.decode("utf-8", "replace")
    out = bytearray()
    body, i = token[1:-1], 0
    while i < len(body):
        byte = body[i]
        if byte != ord("\\") or i + 1 == len(body):
            out.append(byte)
            i += 1
            continue
        nxt = body[i + 1]
        if ord("0") <= nxt <= ord("7"):
            out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
            i += 4
        else:
            out.append(_C_ESCAPES.get(nxt, nxt))
            i += 2
    return bytes(out).decode("utf-8", "replace")


@dataclass
class _Change:
    """A file change being parsed: raw fields plus the hunks read so far."""

    status: str
    path: str
    old_path: str | None
    header: bytes  # the ``diff --git`` line git prints for it (without the newline)
    hunks: list[tuple[int, int, int, int]] = field(default_factory=list)
    blobs: tuple[bytes, ...] = ()

    def freeze(self) -> FileChange:
        return FileChange(self.path, self.status, self.old_path, tuple(self.hunks))


def _raw_change(line: bytes) -> _Change:
    """One ``--raw`` line: ``:old_mode new_mode old_sha new_sha STATUS\\tpath[\\tnew_path]``."""
    meta, *tokens = line.rstrip(b"\n").split(b"\t")
    old_mode, new_mode, old_sha, new_sha, status_field = meta[1:].split(b" ")
    status = status_field[:1].decode("ascii")
    old_token, new_token = tokens[0], tokens[-1]
    sides = [b'"a/' + old_token[1:] if old_token.startswith(b'"') else b"a/" + old_token]
    sides.append(b'"b/' + new_token[1:] if new_token.startswith(b'"') else b"b/" + new_token)
    blobs = tuple(
        sha for sha, mode in ((old_sha, old_mode), (new_sha, new_mode)) if mode != _GITLINK and not _NULL_SHA.match(sha)
    )
    old_path = _unquote(old_token) if status in ("R", "C") else None
    return _Change(status, _unquote(new_token), old_path, b"diff --git " + b" ".join(sides), blobs=blobs)


class _DiffParser:
    """Streaming parser of ``git diff-tree --stdin --raw [-p -U0]``: per commit its changes with hunk numbers.

    Only the ``@@`` headers of the patch are kept; the content lines are counted off and dropped. Each file's
    patch is matched to its raw line by position (a type change has two patches, deletion and creation) and
    checked against the ``diff --git`` line git prints for it; a commit where they disagree keeps its file list
    but loses its hunks. The last commit of an output cut short by a failure is dropped (:meth:`finish`).
    """

    def __init__(self) -> None:
        self.done: dict[str, list[_Change]] = {}
        self._commit: str | None = None
        self._changes: list[_Change] = []
        self._slots: list[int] = []
        self._section = -1
        self._current: _Change | None = None
        self._remaining = 0
        self._mismatch = False

    def _close(self) -> None:
        if self._commit is not None:
            if self._mismatch:
                for change in self._changes:
                    change.hunks.clear()
            self.done[self._commit] = self._changes
        self._commit, self._changes, self._slots = None, [], []
        self._section, self._current, self._remaining, self._mismatch = -1, None, 0, False

    def feed(self, line: bytes) -> None:
        if self._remaining > 0 and line[:1] in (b"-", b"+"):
            self._remaining -= 1
            return
        if line[:1] == b"\\":
            return
        if self._remaining > 0:  # fewer content lines than the hunk header said
            self._mismatch, self._remaining = True, 0
        if line.startswith(b"@@ "):
            match = _HUNK_HEADER.match(line)
            if match is None or self._current is None:
                self._mismatch = True
                return
            a, b, c, d = (int(g) if g is not None else 1 for g in match.groups())
            self._current.hunks.append((a, b, c, d))
            self._remaining = b + d
        elif line.startswith(b"diff --git "):
            self._section += 1
            if self._section < len(self._slots):
                self._current = self._changes[self._slots[self._section]]
                if line.rstrip(b"\n") != self._current.header:
                    self._mismatch = True
            else:
                self._current, self._mismatch = None, True
        elif line.startswith(b":") and self._commit is not None and self._section < 0:
            change = _raw_change(line)
            self._slots.extend([len(self._changes)] * (2 if change.status == "T" else 1))
            self._changes.append(change)
        elif _COMMIT_LINE.match(line):
            self._close()
            self._commit = line.strip().decode("ascii")

    def finish(self, complete: bool) -> dict[str, list[_Change]]:
        """The parsed commits; when the output was cut short, without its last (maybe partial) commit."""
        if complete:
            self._close()
        return self.done


def _diff_pass(
    git_dir: Path, ids: Sequence[str], options: Sequence[str], exclude: Sequence[str] = ()
) -> tuple[dict[str, list[_Change]], str | None]:
    """One ``git diff-tree --stdin`` over commits: the parsed commits and git's error (``None`` if it succeeded)."""
    parser = _DiffParser()
    args = ["diff-tree", "--stdin", *_DIFF_OPTIONS, *options]
    if exclude:
        args += ["--", *(f":(exclude,literal){p}" for p in exclude)]
    error = _stream(git_dir, args, ids, parser.feed)
    return parser.finish(error is None), error


def _tree_pass(git_dir: Path, ids: Sequence[str]) -> dict[str, list[_Change]]:
    """The changed files of each commit without rename detection: reads trees only, never a blob."""
    done, error = _diff_pass(git_dir, ids, ("--no-renames",))
    if error is not None:
        raise HistoryGitError(error)
    return done


def _missing_blobs(git_dir: Path, blobs: Iterable[bytes]) -> set[bytes]:
    """The blobs the object store lacks (``git cat-file --batch-check``; a partial mirror misses a few)."""
    wanted = sorted(set(blobs))
    if not wanted:
        return set()
    out = _run(git_dir, "cat-file", "--batch-check", input=b"".join(sha + b"\n" for sha in wanted))
    return {line.split(b" ", 1)[0] for line in out.splitlines() if line.endswith(b" missing")}


def _hunk_pass(git_dir: Path, ids: Sequence[str], trees: dict[str, list[_Change]]) -> dict[str, list[_Change]]:
    """The changed files of each commit with renames and hunk numbers, robust to a partial object store.

    A commit whose changes need a blob the store lacks is diffed alone with those paths excluded; they keep
    their status from the tree pass, without hunks. Any other commit git fails on keeps its tree-pass files
    without hunks; the batch goes on after it.
    """
    missing = _missing_blobs(git_dir, (b for c in ids for ch in trees[c] for b in ch.blobs))
    lacking = {c: [ch for ch in trees[c] if missing.intersection(ch.blobs)] for c in ids} if missing else {}
    result: dict[str, list[_Change]] = {}
    pending = [c for c in ids if not lacking.get(c)]
    failures = 0
    while pending:
        if failures >= _MAX_BATCH_FAILURES:  # something is wrong with many commits: go one by one
            for commit in pending:
                result[commit] = _diff_pass(git_dir, [commit], _HUNK_OPTIONS)[0].get(commit) or trees[commit]
            break
        done, error = _diff_pass(git_dir, pending, _HUNK_OPTIONS)
        result.update(done)
        if error is None:
            break
        failures += 1
        first = next((i for i, c in enumerate(pending) if c not in done), len(pending))
        if first < len(pending):
            commit = pending[first]
            result[commit] = _diff_pass(git_dir, [commit], _HUNK_OPTIONS)[0].get(commit) or trees[commit]
        pending = pending[first + 1 :]
    for commit, without in lacking.items():
        if not without:
            continue
        paths = sorted({p for ch in without for p in (ch.path, ch.old_path) if p is not None})
        rest = _diff_pass(git_dir, [commit], _HUNK_OPTIONS, exclude=paths)[0].get(commit)
        if rest is None:
            result[commit] = trees[commit]
        else:
            result[commit] = rest + [ch for ch in trees[commit] if ch.path in paths]
    for commit in ids:
        result.setdefault(commit, trees[commit])
    return result


def _messages(git_dir: Path, ids: Sequence[str]) -> dict[str, str]:
    """Each commit's message (``%B``), re-encoded to UTF-8, without signatures or notes."""
    chunks: list[bytes] = []
    args = ("log", "--no-walk=unsorted", "--stdin", "-s", "-z", "--no-show-signature", "--no-notes",
            "--encoding=UTF-8", "--format=%H%n%B")  # fmt: skip
    error = _stream(git_dir, args, ids, chunks.append)
    if error is not None:
        raise HistoryGitError(error)
    out: dict[str, str] = {}
    for record in b"".join(chunks).split(b"\0"):
        head, _, body = record.partition(b"\n")
        if head:
            out[head.decode("ascii")] = body.decode("utf-8", "replace")
    return out


def _resolve(git_dir: Path, base_commit: str) -> str:
    if not base_commit or base_commit.startswith("-"):
        raise HistoryGitError(f"{git_dir}: {base_commit!r} is not a commit")
    try:
        return _run(git_dir, "rev-parse", "--verify", "--quiet", f"{base_commit}^{{commit}}").decode().strip()
    except HistoryGitError:
        raise HistoryGitError(f"commit {base_commit} is not in {git_dir}") from None


def _ancestors(git_dir: Path, commit: str, max_commits: int | None, since: int | None) -> list[tuple[str, int]]:
    """``git rev-list --no-merges`` of a commit within the bounds: ``(id, committer time)``, git's order."""
    args = ["rev-list", "--no-merges", "--timestamp"]
    if max_commits is not None:
        args.append(f"--max-count={max_commits}")
    if since is not None:
        args.append(f"--max-age={since}")
    out = _run(git_dir, *args, commit).decode("ascii").split()
    return [(out[i + 1], int(out[i])) for i in range(0, len(out), 2)]


def _since(git_dir: Path, commit: str, since: int | None, years: float | None) -> int | None:
    """The time bound of one base commit: the later of ``since`` and ``years`` before its committer time."""
    if years is None:
        return since
    base_time = int(_run(git_dir, "log", "-1", "--no-show-signature", "--format=%ct", commit).decode().strip())
    bound = base_time - round(years * SECONDS_PER_YEAR)
    return bound if since is None else max(since, bound)


def histories_from_git(
    git_dir: str | Path,
    base_commits: Iterable[str],
    *,
    max_commits: int | None = DEFAULT_MAX_COMMITS,
    since: int | None = None,
    years: float | None = None,
    failed: dict[str, str] | None = None,
) -> dict[str, History]:
    """The histories of several commits of one repository, with one diff pass over the union of their commits.

    Each history is what :func:`history_from_git` gives for that commit; the commits they share (snapshots of
    one repository share most of their history) are diffed once.

    :param git_dir: the git directory (a bare mirror or a checkout's ``.git``); only read.
    :param base_commits: the commits (ids, abbreviated ids or other revisions).
    :param max_commits: commits per history at most (``None``: no limit).
    :param since: only commits with a committer time at or after this unix time.
    :param years: only commits at most this many years (:data:`SECONDS_PER_YEAR`) older than their base commit.
    :param failed: when given, a base commit whose history cannot be read is left out and its error stored here
        (``{base_commit: message}``); otherwise the first such error is raised.
    :return: ``{base_commit as given: History}``.
    :raises HistoryGitError: if ``git_dir`` is not a git directory, a base commit is not in it (unless
        ``failed`` is given), or git cannot read the commits' trees or messages.
    """
    git_dir = Path(git_dir)
    if not git_dir.is_dir():
        raise HistoryGitError(f"{git_dir} is not a directory")
    wanted: dict[str, tuple[str, dict[str, Any], list[tuple[str, int]]]] = {}
    for base in dict.fromkeys(base_commits):
        try:
            full = _resolve(git_dir, base)
            bound = _since(git_dir, full, since, years)
            bounds: dict[str, Any] = {"max_commits": max_commits, "since": bound, "merges": "skipped"}
            if years is not None:
                bounds["years"] = years
            wanted[base] = (full, bounds, _ancestors(git_dir, full, max_commits, bound))
        except HistoryGitError as exc:
            if failed is None:
                raise
            failed[base] = str(exc)
    union = list(dict.fromkeys(c for _, _, ancestors in wanted.values() for c, _ in ancestors))
    try:
        changes = _hunk_pass(git_dir, union, _tree_pass(git_dir, union)) if union else {}
        messages = _messages(git_dir, union) if union else {}
    except HistoryGitError as exc:
        if failed is None:
            raise
        failed.update({base: str(exc) for base in wanted})
        return {}
    made: dict[str, Commit] = {}
    out: dict[str, History] = {}
    for base, (full, bounds, ancestors) in wanted.items():
        commits = []
        for cid, time in ancestors:
            if cid not in made:
                files = tuple(ch.freeze() for ch in changes.get(cid, ()))
                made[cid] = Commit(cid, time, author_free(messages.get(cid, "")), files)
            commits.append(made[cid])
        out[base] = History(full, tuple(commits), bounds)
    return out


def history_from_git(
    git_dir: str | Path,
    base_commit: str,
    *,
    max_commits: int | None = DEFAULT_MAX_COMMITS,
    since: int | None = None,
    years: float | None = None,
) -> History:
    """The history of one commit from git: ``base_commit`` and its ancestors, never a later commit.

    The commits are ``git rev-list --no-merges [--max-count=N] [--max-age=T] base_commit`` in git's order
    (newest committer time first); merges are skipped. Each keeps its id, committer time, its message without
    author trailers (:func:`author_free`) and the files it changed against its first parent (a root commit
    against the empty tree): status with renames as ``git diff -M`` finds them, and the ``-U0`` hunk numbers.
    A file whose blob the object store lacks (a partial mirror) keeps its status but has no hunks, as has a
    binary file. git runs read-only, without user or system configuration, replace refs or network.

    :param git_dir: the git directory (a bare mirror or a checkout's ``.git``); only read.
    :param base_commit: the commit (id, abbreviated id or other revision, e.g. ``HEAD``).
    :param max_commits: commits at most (``None``: no limit).
    :param since: only commits with a committer time at or after this unix time.
    :param years: only commits at most this many years (:data:`SECONDS_PER_YEAR`) older than ``base_commit``
        (with ``since`` too, the later bound holds).
    :return: the history; its bounds are ``{"max_commits", "since", "merges": "skipped"[, "years"]}``.
    :raises HistoryGitError: if ``git_dir`` is not a git directory, the commit is not in it, or git cannot read
        the commits' trees or messages.
    """
    return histories_from_git(git_dir, [base_commit], max_commits=max_commits, since=since, years=years)[base_commit]


def history_for_snapshot(
    snapshot_dir: str | Path,
    *,
    max_commits: int | None = DEFAULT_MAX_COMMITS,
    since: int | None = None,
    years: float | None = None,
) -> History | None:
    """A snapshot's history: its :data:`HISTORY_FILE`, else read from its ``.git`` at ``HEAD``, else ``None``.

    A history file is checked against the commit the snapshot's marker names (when it has one); the bounds apply
    only to a history read from git.

    :param snapshot_dir: the snapshot directory.
    :param max_commits: as :func:`history_from_git`.
    :param since: as :func:`history_from_git`.
    :param years: as :func:`history_from_git`.
    :return: the history, or ``None`` when the snapshot has neither a history file nor a ``.git``.
    :raises HistoryError: for a history file that is not valid or of another commit than the marker's.
    :raises HistoryGitError: if the ``.git`` cannot be read.
    """
    snapshot = Path(snapshot_dir)
    if (snapshot / HISTORY_FILE).is_file():
        return read_history(snapshot, _marker_commit(snapshot))
    dot_git = snapshot / ".git"
    if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            dot_git = (snapshot / text[len("gitdir:") :].strip()).resolve()
    if not dot_git.is_dir():
        return None
    return history_from_git(dot_git, "HEAD", max_commits=max_commits, since=since, years=years)


def _marker_commit(snapshot: Path) -> str | None:
    from swe_explore.chunking.walk import SNAPSHOT_MARKER  # walk imports this module

    try:
        marker = json.loads((snapshot / SNAPSHOT_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    commit = marker.get("base_commit") if isinstance(marker, dict) else None
    return commit if isinstance(commit, str) and len(commit) >= 7 else None
