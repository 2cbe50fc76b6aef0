"""Reading a snapshot's history from git: the ancestors of ``base_commit``, read-only, leak-free.

:func:`history_from_git` reads a :class:`~swe_explore.chunking.history.History` from a git directory (read-only, in
a fixed environment; robust to a partial mirror missing blobs), :func:`histories_from_git` several of one
repository with one diff pass over the commits they share, and :func:`history_for_snapshot` gives a snapshot's
history from its file (:data:`~swe_explore.chunking.history.HISTORY_FILE`) or its ``.git``. Only ``git rev-list
<base_commit>`` decides which commits are read, so no commit that is not an ancestor of ``base_commit`` can reach
a history. The rules and measured costs are in docs/history.md.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_explore.chunking.history import HISTORY_FILE, Commit, FileChange, History, author_free, read_history

__all__ = [
    "DEFAULT_MAX_COMMITS",
    "GIT_OPTIONS",
    "SECONDS_PER_YEAR",
    "HistoryGitError",
    "git_dir_of",
    "git_env",
    "head_commit",
    "histories_from_git",
    "history_for_snapshot",
    "history_from_git",
    "marker_commit",
]

DEFAULT_MAX_COMMITS = 5000
"""Commits a history holds at most unless told otherwise (``--history-commits``)."""

SECONDS_PER_YEAR = 31_557_600
"""A Julian year (365.25 days), the unit of ``years`` bounds."""

# Every git command of this module runs with these options and environment, so that neither the user's nor the
# system's configuration nor replace refs, lazy fetches of a partial clone or the network can change (or leak into)
# a history: ``protocol.allow=never`` makes any fetch fail, which a missing object then is.
GIT_OPTIONS: tuple[str, ...] = (
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


def git_env() -> dict[str, str]:
    """The environment every git command of the toolkit runs in: the process's, without the variables that
    redirect git (``GIT_DIR``, ...), plus the fixed settings above (no system or user configuration, no prompts).

    :return: a new environment mapping.
    """
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROPPED}
    env.update(_GIT_ENV)
    return env


def _command(git_dir: Path, args: Sequence[str]) -> list[str]:
    return ["git", *GIT_OPTIONS, f"--git-dir={git_dir}", *args]


def _failure(git_dir: Path, args: Sequence[str], stderr: bytes, code: int) -> HistoryGitError:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    command = next((a for a in args if not a.startswith("-")), "")
    return HistoryGitError(f"git {command} failed in {git_dir}: {lines[-1] if lines else f'exit {code}'}")


def _run(git_dir: Path, *args: str, input: bytes | None = None) -> bytes:
    """Run one read-only git command (cwd is the git directory, so no work tree's attributes apply)."""
    proc = subprocess.run(
        _command(git_dir, args), input=input, capture_output=True, cwd=git_dir, env=git_env(), check=False
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
                _command(git_dir, args), stdin=stdin, stdout=subprocess.PIPE, stderr=stderr, cwd=git_dir, env=git_env()
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
    """The time bound of one base commit: the later of ``since`` and ``years`` before its committer time; a bound
    at or before the epoch is no bound (git reads a ``--max-age`` of 0 or less as "nothing")."""
    if years is not None:
        base_time = int(_run(git_dir, "log", "-1", "--no-show-signature", "--format=%ct", commit).decode().strip())
        bound = base_time - round(years * SECONDS_PER_YEAR)
        since = bound if since is None else max(since, bound)
    return since if since is not None and since > 0 else None


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
    :raises ValueError: if ``years`` is not a positive finite number.
    """
    if years is not None and not (years > 0 and math.isfinite(years)):
        raise ValueError(f"years must be a positive number, not {years}")
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
    :raises ValueError: if ``years`` is not a positive finite number.
    """
    return histories_from_git(git_dir, [base_commit], max_commits=max_commits, since=since, years=years)[base_commit]


def git_dir_of(snapshot_dir: str | Path) -> Path | None:
    """The git directory of a snapshot that is a git checkout (``.git``, or the ``gitdir:`` a ``.git`` file names).

    :param snapshot_dir: the snapshot directory.
    :return: the git directory, or ``None`` when the snapshot is not a checkout.
    """
    snapshot = Path(snapshot_dir)
    dot_git = snapshot / ".git"
    if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            dot_git = (snapshot / text[len("gitdir:") :].strip()).resolve()
    return dot_git if dot_git.is_dir() else None


def head_commit(git_dir: str | Path) -> str:
    """The full id of a git directory's ``HEAD`` commit.

    :param git_dir: a git directory.
    :return: 40 lower-case hex digits.
    :raises HistoryGitError: if ``HEAD`` cannot be resolved (e.g. a repository without commits).
    """
    return _resolve(Path(git_dir), "HEAD")


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
        return read_history(snapshot, marker_commit(snapshot))
    dot_git = git_dir_of(snapshot)
    if dot_git is None:
        return None
    return history_from_git(dot_git, "HEAD", max_commits=max_commits, since=since, years=years)


def marker_commit(snapshot: str | Path) -> str | None:
    """The ``base_commit`` a snapshot's marker names (what its history file must be of).

    :param snapshot: the snapshot directory.
    :return: the commit id (at least 7 hex digits as written), or ``None`` without a readable marker naming one.
    """
    from swe_explore.chunking.walk import SNAPSHOT_MARKER  # walk imports this module

    try:
        marker = json.loads((Path(snapshot) / SNAPSHOT_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    commit = marker.get("base_commit") if isinstance(marker, dict) else None
    return commit if isinstance(commit, str) and len(commit) >= 7 else None
