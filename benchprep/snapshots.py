"""Repository snapshots from bare git mirrors: ``<repos>/<instance_id>/`` holds the tree at ``base_commit``.

Mirrors are bare repositories with full history laid out ``<mirrors>/<owner>+<name>/repo`` (e.g.
``git clone --mirror https://github.com/psf/requests <mirrors>/psf+requests/repo``); :func:`clone_mirror` makes a
missing one, only when asked (``--clone-missing``). Mirrors are only read.

**What a snapshot holds.** The files a checkout of ``base_commit`` holds, as in the ``/testbed`` of SWE-bench's
images where the ground-truth trajectories ran: git ``read-tree`` of the commit into a temporary index, then
``checkout-index --all`` into a temporary directory (no ``.git``). Not ``git archive``: it obeys the
repository's ``export-ignore`` and ``export-subst`` attributes, so it drops e.g. the ``/tests`` directory of many
PHP projects (monolog, symfony/console) and rewrites ``$Format:...$`` files (xarray's ``.git_archival.txt``),
which a checkout keeps as they are. Line endings are normalised as on Linux (``core.autocrlf=false``,
``core.eol=lf``) and Git LFS files stay pointers (``GIT_LFS_SKIP_SMUDGE=1``), so the result does not depend on
the user's git configuration or network.

**Atomic and resumable.** Each snapshot is built under ``<repos>/.swe-explore-tmp/`` and renamed into place, so
``<repos>/<instance_id>`` is either complete or absent; a killed run is resumed by running it again (snapshots in
place are skipped, leftover temporaries removed). One run at a time per ``<repos>`` (a lock file
``<repos>/.swe-explore-materialize.lock``). Every snapshot gets a marker file :data:`SNAPSHOT_MARKER`
(``{"repo", "base_commit", "instance_id", "created_at"}``) at its top, which the snapshot walkers skip, so the
commit of a snapshot can be checked later (:func:`check_snapshot`). A directory already in place is ``present``
when its marker names the record's commit, ``unverified`` when it has no marker (made by another tool: left as
it is and listed) and a failure when its marker names another commit.

**Histories.** With ``history`` (:class:`HistoryOptions`; ``--history`` on the command line) every snapshot
also gets its history file (:data:`~swe_explore.chunking.history.HISTORY_FILE`: ``base_commit`` and its
ancestors, docs/history.md), written into the temporary tree before the rename; a snapshot already ``present``
without one gets it added (written atomically), so existing snapshot folders are upgraded in place, and so does
one whose file is damaged, of format 1 or of another commit (a current file is kept, whatever its bounds). The
histories of one repository's records are read together (:func:`~swe_explore.chunking.history_git.histories_from_git`:
one diff pass over the commits they share). A history that cannot be read fails that history only: the snapshot
is made (or kept) without it and :class:`MaterializeReport` lists it.

**Errors** are per record: a missing mirror or commit, or a failed git command, fails that record only; the
others go on, and :class:`MaterializeReport` lists the failures.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from swe_explore.chunking.history import (
    HISTORY_FILE,
    HISTORY_FORMAT,
    History,
    HistoryError,
    read_history_header,
    write_history,
)
from swe_explore.chunking.history_git import DEFAULT_MAX_COMMITS, HistoryGitError, histories_from_git
from swe_explore.chunking.walk import SNAPSHOT_MARKER

__all__ = [
    "DEFAULT_CLONE_URL",
    "SNAPSHOT_MARKER",
    "HistoryOptions",
    "MaterializeReport",
    "SnapshotError",
    "SnapshotTask",
    "check_snapshot",
    "clone_mirror",
    "export_commit",
    "find_mirror",
    "materialize",
    "read_marker",
]

DEFAULT_CLONE_URL = "https://github.com/{repo}"
"""URL template :func:`clone_mirror` clones from (``{repo}`` is ``owner/name``)."""

TMP_DIR = ".swe-explore-tmp"
"""Folder under ``<repos>`` where snapshots are built before they are renamed into place."""
LOCK_FILE = ".swe-explore-materialize.lock"
"""Lock file under ``<repos>``: one materialisation at a time per directory."""

_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$")
_COMMIT = re.compile(r"^[0-9a-fA-F]{7,40}$")
_GIT_CONFIG = ("-c", "core.autocrlf=false", "-c", "core.eol=lf", "-c", "core.symlinks=true")


class SnapshotError(RuntimeError):
    """A snapshot could not be made (missing mirror or commit, failed git command, stale snapshot in place)."""


@dataclass(frozen=True)
class SnapshotTask:
    """What one snapshot needs.

    :param instance_id: the snapshot's folder name under ``<repos>``.
    :param repo: ``owner/name``.
    :param base_commit: the commit (hex; 40 digits in benches).
    """

    instance_id: str
    repo: str
    base_commit: str

    @classmethod
    def from_record(cls, record: Any) -> SnapshotTask:
        """The task of a bench record (a :class:`~swe_explore.evaluation.bench.BenchRecord` or a JSON object).

        :param record: an object with ``instance_id``, ``repo`` and ``base_commit`` attributes or keys.
        :return: the task (fields as given; checked by :func:`materialize`).
        """
        if isinstance(record, Mapping):
            return cls(
                str(record.get("instance_id") or ""),
                str(record.get("repo") or ""),
                str(record.get("base_commit") or ""),
            )
        return cls(record.instance_id, record.repo, record.base_commit)


@dataclass(frozen=True)
class HistoryOptions:
    """The bounds of the histories :func:`materialize` writes (docs/history.md).

    :param max_commits: commits per history at most (``--history-commits``; ``None``: no limit).
    :param years: only commits at most this many years older than the record's ``base_commit``
        (``--history-years``; ``None``: no time bound).
    """

    max_commits: int | None = DEFAULT_MAX_COMMITS
    years: float | None = None


@dataclass
class MaterializeReport:
    """What :func:`materialize` did, per outcome.

    :param made: instance_ids whose snapshot was written in this run.
    :param present: instance_ids whose snapshot was already in place with a marker naming the same commit.
    :param unverified: instance_ids with a directory in place but no marker (left as is).
    :param failed: instance_id -> error message.
    :param cloned: repos whose mirror was cloned in this run.
    :param history: whether histories were asked for (the history fields below are only then reported).
    :param histories_written: instance_ids whose history file was written in this run (new or added).
    :param histories_reused: instance_ids of present snapshots that already had a history file.
    :param history_failed: instance_id -> why its history could not be written (the snapshot itself is kept).
    """

    made: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    unverified: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    cloned: list[str] = field(default_factory=list)
    history: bool = False
    histories_written: list[str] = field(default_factory=list)
    histories_reused: list[str] = field(default_factory=list)
    history_failed: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable counts plus the unverified and failed instances (and the histories', if asked for)."""
        out: dict[str, Any] = {
            "made": len(self.made),
            "present": len(self.present),
            "unverified": len(self.unverified),
            "failed": len(self.failed),
            "cloned": self.cloned,
            "unverified_instances": self.unverified,
            "failures": self.failed,
        }
        if self.history:
            out["histories"] = {
                "written": len(self.histories_written),
                "reused": len(self.histories_reused),
                "failed": len(self.history_failed),
                "failures": self.history_failed,
            }
        return out

    def summary(self) -> str:
        """One line: ``snapshots: N made, N already present, N unverified, N failed`` (and the histories')."""
        line = (
            f"snapshots: {len(self.made)} made, {len(self.present)} already present, "
            f"{len(self.unverified)} unverified (no marker), {len(self.failed)} failed"
        )
        if self.history:
            line += (
                f"; histories: {len(self.histories_written)} written, {len(self.histories_reused)} reused, "
                f"{len(self.history_failed)} failed"
            )
        return line


def _git(
    git_dir: Path, *args: str, env: Mapping[str, str] | None = None, input: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run one git command against a bare repository; raise :class:`SnapshotError` with git's message on failure."""
    cmd = ["git", *_GIT_CONFIG, f"--git-dir={git_dir}", *args]
    proc = subprocess.run(
        cmd, capture_output=True, env=None if env is None else {**os.environ, **env}, check=False, input=input
    )
    if proc.returncode != 0:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        command = next((a for a in args if not a.startswith("--")), "")
        raise SnapshotError(f"git {command} failed in {git_dir}: {lines[-1] if lines else proc.returncode}")
    return proc


def find_mirror(mirrors: str | Path, repo: str) -> Path | None:
    """The bare mirror of a repository: ``<mirrors>/<owner>+<name>/repo``, matching the folder name ignoring case.

    :param mirrors: the mirrors directory.
    :param repo: ``owner/name``.
    :return: the mirror's git directory, or ``None`` if there is none.
    """
    mirrors = Path(mirrors)
    name = repo.replace("/", "+")
    exact = mirrors / name / "repo"
    if exact.is_dir():
        return exact
    if mirrors.is_dir():
        folded = [p / "repo" for p in mirrors.iterdir() if p.name.lower() == name.lower() and (p / "repo").is_dir()]
        if len(folded) == 1:
            return folded[0]
    return None


def clone_mirror(mirrors: str | Path, repo: str, url_template: str = DEFAULT_CLONE_URL) -> Path:
    """Make the bare mirror of a repository, ``<mirrors>/<owner>+<name>/repo``, with ``git clone --mirror``, atomically.

    :param mirrors: the mirrors directory (created if missing).
    :param repo: ``owner/name``.
    :param url_template: where to clone from; ``{repo}`` is replaced by ``owner/name``.
    :return: the new mirror's git directory.
    :raises SnapshotError: if the clone fails (message from git).
    """
    target = Path(mirrors) / repo.replace("/", "+") / "repo"
    target.parent.mkdir(parents=True, exist_ok=True)
    url = url_template.format(repo=repo)
    tmp = Path(tempfile.mkdtemp(prefix=".clone-", dir=target.parent))
    try:
        proc = subprocess.run(
            ["git", "clone", "--mirror", "--quiet", "--", url, str(tmp / "repo")], capture_output=True, check=False
        )
        if proc.returncode != 0:
            message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise SnapshotError(f"git clone --mirror {url} failed: {message[-1] if message else proc.returncode}")
        os.replace(tmp / "repo", target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def read_marker(snapshot: str | Path) -> dict[str, Any] | None:
    """The marker of a snapshot made by :func:`export_commit`.

    :param snapshot: the snapshot directory.
    :return: the marker object, or ``None`` when the snapshot has no (readable) marker.
    """
    try:
        data = json.loads((Path(snapshot) / SNAPSHOT_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def check_snapshot(snapshot: str | Path, base_commit: str) -> str | None:
    """Whether a snapshot is at the given commit, from its marker.

    :param snapshot: the snapshot directory.
    :param base_commit: the commit the record wants (a full or abbreviated hex id).
    :return: ``None`` when the marker names that commit; otherwise what is wrong (no marker, another commit).
    """
    marker = read_marker(snapshot)
    if marker is None:
        return f"{snapshot} has no {SNAPSHOT_MARKER} (not made by swe-explore materialize): its commit is unknown"
    have = str(marker.get("base_commit") or "").lower()
    want = base_commit.lower()
    if not have or not want or not (have.startswith(want) or want.startswith(have)):
        return f"{snapshot} is at commit {have or '?'} (its marker), not {base_commit}"
    return None


def export_commit(git_dir: str | Path, task: SnapshotTask, repos: str | Path, history: History | None = None) -> Path:
    """Write ``<repos>/<instance_id>/``, the checkout of ``task.base_commit`` from a bare mirror, atomically.

    The files are written by ``git read-tree`` + ``git checkout-index --all`` (module docstring: why not ``git
    archive``) into ``<repos>/.swe-explore-tmp/``, the marker (and the history file, if given) is added, and the
    directory is renamed into place.

    :param git_dir: the bare mirror.
    :param task: the instance, repo and commit.
    :param repos: the snapshots directory.
    :param history: the commit's history, written as the snapshot's history file.
    :return: the snapshot directory.
    :raises SnapshotError: if the commit is not in the mirror, git fails, or the target already exists.
    """
    # Absolute paths: git resolves a relative GIT_INDEX_FILE against the work tree, not the working directory,
    # so relative ones checked out nothing (an empty snapshot reported as made).
    git_dir, repos = Path(git_dir).absolute(), Path(repos).absolute()
    target = repos / task.instance_id
    if _git_commit_missing(git_dir, task.base_commit):
        raise SnapshotError(
            f"commit {task.base_commit} of {task.repo} is not in the mirror {git_dir} "
            f"(update it: git --git-dir={git_dir} fetch origin)"
        )
    staging_root = repos / TMP_DIR
    staging_root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{task.instance_id}.", dir=staging_root))
    try:
        tree = staging / "tree"
        tree.mkdir()
        env = {"GIT_INDEX_FILE": str(staging / "index"), "GIT_LFS_SKIP_SMUDGE": "1"}
        _git(git_dir, f"--work-tree={tree}", "read-tree", f"{task.base_commit}^{{commit}}", env=env)
        missing = _drop_missing_blobs(git_dir, env)
        _git(git_dir, f"--work-tree={tree}", "checkout-index", "--all", "--force", env=env)
        marker: dict[str, Any] = {
            "repo": task.repo,
            "base_commit": task.base_commit,
            "instance_id": task.instance_id,
            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        if missing:
            marker["missing_files"] = missing
        (tree / SNAPSHOT_MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")
        if history is not None:
            write_history(tree / HISTORY_FILE, history)
        try:
            os.rename(tree, target)  # atomic; fails rather than replace a directory that appeared meanwhile
        except OSError as exc:
            raise SnapshotError(f"cannot move the snapshot into {target}: {exc.strerror}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _drop_missing_blobs(git_dir: Path, env: Mapping[str, str]) -> list[str]:
    """Remove from the temporary index the files whose blobs the mirror lacks, so the checkout can proceed.

    Partial mirrors (such as those fetched without the blobs of 4 MiB and more) miss a few large data files;
    the snapshot is written without them and the marker lists them (``missing_files``), so nothing is lost
    silently.

    :param git_dir: the bare mirror.
    :param env: the git environment naming the temporary index.
    :return: the repo-relative paths removed (sorted).
    """
    listing = _git(git_dir, "ls-files", "-s", "-z", env=env).stdout.split(b"\0")
    entries = []
    for entry in listing:
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        mode, sha, _stage = meta.split()
        if mode != b"160000":  # submodule entries have no blob
            entries.append((sha, path))
    if not entries:
        return []
    check = subprocess.run(
        ["git", f"--git-dir={git_dir}", "cat-file", "--batch-check"],
        input=b"".join(sha + b"\n" for sha, _ in entries),
        capture_output=True,
        check=True,
    )
    missing = [path for (sha, path), line in zip(entries, check.stdout.splitlines()) if line.endswith(b" missing")]
    if missing:
        _git(git_dir, "update-index", "--force-remove", "-z", "--stdin", env=env, input=b"\0".join(missing) + b"\0")
    return sorted(p.decode("utf-8", "surrogateescape") for p in missing)


def _git_commit_missing(git_dir: Path, commit: str) -> bool:
    proc = subprocess.run(
        ["git", f"--git-dir={git_dir}", "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True, check=False
    )
    return proc.returncode != 0


def _task_problem(task: SnapshotTask) -> str | None:
    """Why a task cannot be materialised before any git command runs, or ``None``."""
    if not task.instance_id or "/" in task.instance_id or task.instance_id.startswith("."):
        return f"instance_id {task.instance_id!r} cannot name a snapshot folder"
    if not _REPO.match(task.repo):
        return f"repo {task.repo!r} is not 'owner/name'"
    if not _COMMIT.match(task.base_commit):
        return f"base_commit {task.base_commit!r} is not a hex commit id"
    return None


def materialize(
    tasks: Iterable[SnapshotTask],
    mirrors: str | Path,
    repos: str | Path,
    *,
    clone_missing: bool = False,
    clone_url: str = DEFAULT_CLONE_URL,
    progress: bool = True,
    history: HistoryOptions | None = None,
) -> MaterializeReport:
    """Make ``<repos>/<instance_id>/`` for every task from the bare mirrors (rules: module docstring).

    :param tasks: the snapshots to make (e.g. ``SnapshotTask.from_record(r) for r in records``).
    :param mirrors: the directory of ``<owner>+<name>/repo`` mirrors.
    :param repos: the snapshots directory (created if missing).
    :param clone_missing: clone a missing mirror from ``clone_url`` (else a missing mirror fails its records).
    :param clone_url: URL template for ``clone_missing`` (``{repo}`` is ``owner/name``).
    :param progress: show a tqdm progress bar (on stderr).
    :param history: write each snapshot's history file with these bounds, and add it to present snapshots
        that lack it (``None``: no histories, as before).
    :return: the outcome of every task.
    :raises filelock.Timeout: if another materialisation holds ``<repos>``'s lock.
    """
    from tqdm import tqdm

    repos = Path(repos)
    repos.mkdir(parents=True, exist_ok=True)
    report = MaterializeReport(history=history is not None)
    task_list = list(tasks)
    mirror_of: dict[str, Path | str] = {}  # repo -> mirror, or the error that fails its records

    def mirror_for(repo: str) -> Path | str:
        if repo not in mirror_of:
            mirror_of[repo] = _resolve_mirror(Path(mirrors), repo, clone_missing, clone_url, report)
        return mirror_of[repo]

    histories = None if history is None else _Histories(history, task_list, repos, mirror_for)
    lock = FileLock(str(repos / LOCK_FILE))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise Timeout(f"{repos / LOCK_FILE}: another materialisation is writing into {repos}") from None
    try:
        shutil.rmtree(repos / TMP_DIR, ignore_errors=True)  # leftovers of a killed run (we hold the lock)
        for task in tqdm(task_list, desc="snapshots", unit="snapshot", disable=not progress):
            problem = _task_problem(task)
            if problem is not None:
                report.failed[task.instance_id or "?"] = problem
                continue
            target = repos / task.instance_id
            if target.exists() or target.is_symlink():
                if not target.is_dir():
                    report.failed[task.instance_id] = f"{target} exists and is not a directory"
                elif read_marker(target) is None:
                    report.unverified.append(task.instance_id)
                elif (stale := check_snapshot(target, task.base_commit)) is not None:
                    report.failed[task.instance_id] = f"{stale}; delete it to rebuild"
                else:
                    report.present.append(task.instance_id)
                    if histories is not None:
                        histories.add_to_present(task, target, report)
                continue
            mirror = mirror_for(task.repo)
            if isinstance(mirror, str):
                report.failed[task.instance_id] = mirror
                continue
            task_history = None if histories is None else histories.get(task, report)
            try:
                export_commit(mirror, task, repos, history=task_history)
            except SnapshotError as exc:
                report.failed[task.instance_id] = str(exc)
                report.history_failed.pop(task.instance_id, None)
                continue
            report.made.append(task.instance_id)
            if task_history is not None:
                report.histories_written.append(task.instance_id)
    finally:
        shutil.rmtree(repos / TMP_DIR, ignore_errors=True)
        lock.release()
    return report


class _Histories:
    """The histories :func:`materialize` writes, read per repository in one batch on first need."""

    def __init__(
        self,
        options: HistoryOptions,
        tasks: list[SnapshotTask],
        repos: Path,
        mirror_for: Callable[[str], Path | str],
    ) -> None:
        self.options = options
        self.mirror_for = mirror_for
        # Per repo, the commits that may need a history: snapshots to make, and present ones without the file.
        self.wanted: dict[str, list[str]] = {}
        for task in tasks:
            if _task_problem(task) is not None:
                continue
            target = repos / task.instance_id
            if not target.exists() or (read_marker(target) is not None and not _history_current(target, task)):
                self.wanted.setdefault(task.repo, []).append(task.base_commit)
        self.read: dict[str, dict[str, History]] = {}
        self.failed: dict[str, dict[str, str]] = {}

    def _batch(self, repo: str, commits: list[str]) -> None:
        mirror = self.mirror_for(repo)
        found, failed = self.read.setdefault(repo, {}), self.failed.setdefault(repo, {})
        if isinstance(mirror, str):
            failed.update(dict.fromkeys(commits, mirror))
            return
        try:
            found.update(
                histories_from_git(
                    mirror, commits, max_commits=self.options.max_commits, years=self.options.years, failed=failed
                )
            )
        except HistoryGitError as exc:
            failed.update(dict.fromkeys(commits, str(exc)))

    def get(self, task: SnapshotTask, report: MaterializeReport) -> History | None:
        """The task's history, or ``None`` with the reason in ``report.history_failed``."""
        if task.repo not in self.read:
            self._batch(task.repo, self.wanted.get(task.repo, []))
        commit = task.base_commit
        if commit not in self.read[task.repo] and commit not in self.failed[task.repo]:
            self._batch(task.repo, [commit])  # not foreseen (e.g. a record repeated)
        found = self.read[task.repo].get(commit)
        if found is None:
            report.history_failed[task.instance_id] = f"no history: {self.failed[task.repo].get(commit)}"
        return found

    def add_to_present(self, task: SnapshotTask, target: Path, report: MaterializeReport) -> None:
        """Add the history file to a present snapshot that lacks it (atomically), or count it reused; a file that is
        not current (:func:`_history_current`) is replaced like a missing one."""
        if _history_current(target, task):
            report.histories_reused.append(task.instance_id)
            return
        found = self.get(task, report)
        if found is None:
            return
        try:
            write_history(target / HISTORY_FILE, found)
        except OSError as exc:
            report.history_failed[task.instance_id] = f"cannot write {target / HISTORY_FILE}: {exc}"
            return
        report.histories_written.append(task.instance_id)


def _history_current(target: Path, task: SnapshotTask) -> bool:
    """Whether a present snapshot's history file can stay: it decompresses and its header is of this format
    (:data:`~swe_explore.chunking.history.HISTORY_FORMAT`) and of the task's ``base_commit``. A missing, damaged,
    older-format or other commit's file is written again."""
    try:
        header = read_history_header(target / HISTORY_FILE) if (target / HISTORY_FILE).is_file() else None
    except HistoryError:
        return False
    if header is None or header.get("format") != HISTORY_FORMAT:
        return False
    have = str(header.get("base_commit") or "").lower()
    return len(have) == 40 and have.startswith(task.base_commit.lower())


def _resolve_mirror(
    mirrors: Path, repo: str, clone_missing: bool, clone_url: str, report: MaterializeReport
) -> Path | str:
    """The mirror of a repo, cloning it if asked; or the error message that fails the repo's records."""
    found = find_mirror(mirrors, repo)
    if found is not None:
        return found
    expected = mirrors / repo.replace("/", "+") / "repo"
    if not clone_missing:
        return f"no mirror of {repo} at {expected} (pass --clone-missing to clone {clone_url.format(repo=repo)})"
    try:
        cloned = clone_mirror(mirrors, repo, clone_url)
    except (SnapshotError, OSError) as exc:
        return f"no mirror of {repo} at {expected}, and cloning failed: {exc}"
    report.cloned.append(repo)
    return cloned
