"""Read-only git access to a bare mirror for mining: :class:`Git` runs ``git --git-dir=MIRROR ...`` subprocesses
(nothing is written into the mirror; a caller may point ``GIT_INDEX_FILE`` at a temporary index), and the
plumbing reads built on it: a commit's metadata (:func:`read_commit`), the files it changes
(:func:`changed_files`), blob contents (:func:`read_blobs`), git's line count of a file (:func:`git_line_count`)
and a mirror's ``owner/name`` (:func:`repo_from_mirror`, :func:`repo_from_url`). The diff options every ``git
diff`` of the miner uses are :data:`DIFF_OPTIONS`.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
"""``owner/name``: what a repository name must look like."""


class GitError(RuntimeError):
    """A git command failed; the message has the command and git's error output."""


class Git:
    """``git --git-dir=MIRROR ...`` subprocesses (read-only except for a caller's temporary index file).

    :param git_dir: the bare mirror (or a ``.git`` directory).
    :raises GitError: if ``git_dir`` is not a git directory.
    """

    def __init__(self, git_dir: str | Path) -> None:
        self.git_dir = Path(git_dir)
        if not self.git_dir.is_dir():
            raise GitError(f"{self.git_dir} is not a directory")
        self.run("rev-parse", "--git-dir")

    def run(self, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None) -> bytes:
        """Run one git command and return its stdout.

        :param args: git arguments after ``--git-dir``.
        :param input: bytes for stdin.
        :param env: extra environment variables.
        :return: stdout bytes.
        :raises GitError: on a non-zero exit, with the command and stderr.
        """
        cmd = ["git", f"--git-dir={self.git_dir}", "--literal-pathspecs", *args]
        full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", **(env or {})}
        proc = subprocess.run(cmd, input=input, capture_output=True, env=full_env, check=False)
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()
            raise GitError(f"{' '.join(cmd[:6])}{' ...' if len(cmd) > 6 else ''}: exit {proc.returncode}: {err}")
        return proc.stdout

    def ok(self, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None) -> bool:
        """Whether a git command succeeds (its output is discarded)."""
        try:
            self.run(*args, input=input, env=env)
        except GitError:
            return False
        return True


DIFF_OPTIONS: tuple[str, ...] = (
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--no-relative",
    "-M",
    "--diff-algorithm=myers",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)
"""Options of every ``git diff`` the miner runs, so that user configuration (``diff.noprefix``, external diff
drivers, ``diff.algorithm``, ...) cannot change a record."""


@dataclass(frozen=True)
class Commit:
    """A commit's metadata.

    :param sha: full sha.
    :param parents: parent shas, first parent first.
    :param author: ``name <email>`` of the author.
    :param committer: ``name <email>`` of the committer.
    :param date: committer date, strict ISO 8601.
    :param message: the raw message (subject, blank line, body, trailers).
    """

    sha: str
    parents: tuple[str, ...]
    author: str
    committer: str
    date: str
    message: str


@dataclass(frozen=True)
class ChangedFile:
    """One entry of ``git diff --raw --numstat -M``.

    :param status: git's status letter (``M``, ``A``, ``D``, ``R``, ``C``, ``T``, ...).
    :param old_path: path before (``None`` for ``A``).
    :param new_path: path after (``None`` for ``D``).
    :param old_blob: blob sha before (all zeros for ``A``).
    :param changed_lines: added + removed lines (0 for binary files).
    """

    status: str
    old_path: str | None
    new_path: str | None
    old_blob: str
    changed_lines: int = 0

    @property
    def path(self) -> str:
        """The old path, or the new path of an added file."""
        path = self.old_path if self.old_path is not None else self.new_path
        assert path is not None
        return path


def read_commit(git: Git, sha: str, parents: tuple[str, ...]) -> Commit:
    """A commit's authors, date and message (``git show -s``).

    :param git: the mirror.
    :param sha: the commit.
    :param parents: its parents (from :func:`~swe_explore.benchprep.mine.list_candidates`).
    :return: the :class:`Commit`; a message that is not UTF-8 is decoded with U+FFFD.
    """
    out = git.run("show", "-s", "--no-color", "--format=%an <%ae>%x00%cn <%ce>%x00%cI%x00%B", sha)
    author, committer, date, message = out.decode("utf-8", "replace").split("\x00", 3)
    return Commit(sha, parents, author, committer, date, message)


def changed_files(git: Git, parent: str, sha: str) -> list[ChangedFile]:
    """The files a commit changes (``git diff --raw --numstat -z -M``), renames paired.

    :param git: the mirror.
    :param parent: the first parent.
    :param sha: the commit.
    :return: one entry per file, in git's order; a path that is not UTF-8 keeps its bad bytes as lone
        surrogates (``surrogateescape``), see :func:`~swe_explore.benchprep.mine_rules.is_utf8_path`.
    :raises GitError: if git fails.
    """
    out = git.run("diff", "--raw", "--numstat", "-z", "--no-abbrev", *DIFF_OPTIONS, parent, sha)
    tokens = out.split(b"\x00")
    if tokens and tokens[-1] == b"":
        tokens.pop()
    entries: list[ChangedFile] = []
    numstat: list[int] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith(b":"):
            meta = token[1:].decode("ascii").split()
            status = meta[4][0]
            n_paths = 2 if status in "RC" else 1
            paths = [p.decode("utf-8", "surrogateescape") for p in tokens[i + 1 : i + 1 + n_paths]]
            old = None if status == "A" else paths[0]
            new = None if status == "D" else paths[-1]
            entries.append(ChangedFile(status, old, new, meta[2]))
            i += 1 + n_paths
        else:  # numstat: "added\tremoved\tpath" or "added\tremoved\t" followed by the two rename paths
            added, removed, path = token.decode("utf-8", "surrogateescape").split("\t", 2)
            numstat.append(0 if added == "-" else int(added) + int(removed))
            i += 1 if path else 3
    if len(numstat) != len(entries):
        where = f"git diff --raw --numstat {parent[:12]} {sha[:12]}"
        raise GitError(f"{where}: {len(entries)} files but {len(numstat)} line counts")
    return [ChangedFile(e.status, e.old_path, e.new_path, e.old_blob, n) for e, n in zip(entries, numstat)]


def read_blobs(git: Git, shas: Sequence[str]) -> list[bytes]:
    """The contents of blobs, in one ``git cat-file --batch`` call.

    :param git: the mirror.
    :param shas: blob shas.
    :return: their bytes, in the same order.
    :raises GitError: if a blob is missing.
    """
    if not shas:
        return []
    out = git.run("cat-file", "--batch", input="".join(f"{s}\n" for s in shas).encode("ascii"))
    blobs, pos = [], 0
    for sha in shas:
        end = out.index(b"\n", pos)
        header = out[pos:end].decode("ascii").split()
        if len(header) != 3 or header[1] != "blob":
            raise GitError(f"git cat-file --batch: {sha} is not a blob ({' '.join(header)})")
        size = int(header[2])
        blobs.append(out[end + 1 : end + 1 + size])
        pos = end + 1 + size + 1
    return blobs


def git_line_count(data: bytes) -> int:
    """Lines of a file as git's diff numbers them: ``\n``-terminated, plus an unterminated last line.

    :param data: the file's bytes.
    :return: the count (0 for an empty file).
    """
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


def repo_from_url(url: str) -> str | None:
    """``owner/name`` from a remote URL (``https://github.com/o/n.git``, ``git@github.com:o/n.git``, ...).

    :param url: the remote URL.
    :return: ``owner/name`` from the last two path segments, or ``None`` when there are fewer.
    """
    path = re.sub(r"^[a-z+]+://[^/]*/", "", url.strip())
    path = re.sub(r"^[^/:]+@[^:]+:", "", path)
    parts = [p for p in path.rstrip("/").split("/") if p]
    if len(parts) < 2:
        return None
    name = parts[-1].removesuffix(".git")
    repo = f"{parts[-2]}/{name}"
    return repo if REPO_NAME.match(repo) else None


def repo_from_mirror(git: Git) -> str:
    """``owner/name`` of a mirror: its ``<owner>+<name>/repo`` folder name, else ``remote.origin.url``.

    :param git: the mirror.
    :return: ``owner/name``.
    :raises ValueError: when neither gives a name (pass ``--repo``).
    """
    path = git.git_dir.resolve()
    folder = path.parent.name if path.name in ("repo", ".git") else path.name.removesuffix(".git")
    if folder.count("+") == 1:
        repo = folder.replace("+", "/")
        if REPO_NAME.match(repo):
            return repo
    try:
        url = git.run("config", "--get", "remote.origin.url").decode("utf-8", "replace").strip()
    except GitError:
        url = ""
    repo_from_remote = repo_from_url(url) if url else None
    if repo_from_remote is None:
        raise ValueError(
            f"cannot tell owner/name of {git.git_dir}: not laid out as <owner>+<name>/repo and no usable "
            f"remote.origin.url ({url or 'none'}); pass --repo OWNER/NAME"
        )
    return repo_from_remote
