"""Mining labelled bench records from git history: a commit's message is the query, the old side of its diff
is the gold.

For every selected commit ``C`` with first parent ``P`` the record is: ``instance_id`` =
``<owner>__<name>-<first 12 hex of C>``, ``base_commit = P``, ``problem_statement`` = the commit message
(subject and body) with trailers removed (:func:`strip_trailers`), gold regions = the old side of every hunk of
``git diff -U0 P C`` (:mod:`benchprep.diffs`; insert-only hunks anchor on the old line they follow), the
changed files as ``read_core_files`` = ``modified_core_files`` = ``main_files``, and ``patch`` = ``git diff
P C`` with 3 lines of context. Everything is read from a bare mirror with ``git --git-dir=MIRROR ...``
subprocesses; nothing is ever written into the mirror (the patch check uses a temporary index file). This module
samples the candidates (:func:`list_candidates`), examines each against the rules (:class:`Miner`) and writes the
bench file and its run report (:func:`write_outputs`).

**Candidates**: ``git rev-list [--first-parent] [--since=DATE] [--until=DATE] --parents REF`` (``REF`` =
``HEAD``, the default branch of a mirror; ``--since``/``--until`` are git's committer-date filters). By default
every commit reachable from ``REF`` is a candidate, including the commits of merged branches (in a repository
that merges pull requests with merge commits, most changes are only there); ``first_parent`` keeps the mainline
only. The sorted sha list is shuffled with ``random.Random(seed)`` and commits are examined in that order until
``max_records`` pass every rule, so a run is deterministic for a given mirror, ref, seed and options.

**Rules** (:data:`REJECTION_REASONS`, tested in this order; a rejected commit is counted once, under the first
rule it fails; rules in :data:`OPTIONAL_RULES` can be switched off with ``allow``; the constants and functions
named here live in :mod:`~swe_explore.benchprep.mine_rules`, the git reads in :mod:`~swe_explore.benchprep.git`):

1. ``merge`` (more than one parent), ``root_commit`` (no parent); ``missing_object``: git cannot read an
   object of the commit (mirrors fetched here omit blobs of 4 MiB and more), checked whenever git is asked.
2. ``bot``: author or committer name/email contains one of :data:`BOT_MARKERS` (``[bot]``, ``dependabot``,
   ``renovate``, ``github-actions``, ...).
3. Subject line (first line of the message, case-insensitive) matching :data:`MESSAGE_RULES`: ``revert``,
   ``merge_message``, ``version_bump``, ``dependency_update``, ``formatting`` (any subject saying "typo",
   ``reformat ...``, formatter runs, and subjects that are only "fix formatting/style/lint/whitespace" and the
   like).
4. ``short_message``: fewer than ``min_words`` (at least 1) whitespace-separated words after trailers are
   removed.
5. Changed files (``git diff --raw --numstat -M``): ``no_changed_files``; ``too_many_files`` (more than
   ``max_files``); ``added_file``, ``deleted_file``, ``renamed_file``, ``copied_file``, ``type_change`` (an
   added, deleted, renamed or copied file, or a file that became a symlink/submodule, has no old-side gold);
   ``non_utf8_path``; ``non_source_file`` (any file that is not source code of the ten languages by
   :func:`chunking.languages.language_for_path`: docs, config, data, or a dependency manifest of
   :data:`DEPENDENCY_MANIFESTS`); ``vendored_or_generated`` (:func:`is_vendored_or_generated`);
   ``test_file`` (:func:`is_test_path`).
6. The ``-U0`` diff (:func:`benchprep.diffs.parse_diff`): ``non_utf8_diff``, ``malformed_diff``, and a file
   that is not a plain text modification: ``binary_file``, ``mode_only_change``, ``symlink``, ``submodule``,
   ``no_text_change``; ``no_regions``.
7. The files at ``base_commit``: ``vendored_or_generated`` again for a generated-code header
   (:data:`GENERATED_HEADER` in the first 4 KiB); ``line_definition_mismatch`` when git's line count (lines
   end at ``\n``) differs from the project's (:mod:`chunking.lines`: only a file with lone ``\r`` line ends
   and no ``\n``), so that diff line numbers would not be snapshot line numbers; ``region_outside_file``: every
   region must satisfy ``1 <= start <= end <= lines`` with ``lines`` counted by
   :func:`chunking.lines.count_lines`.
8. ``patch_does_not_apply``: ``git apply --cached --check`` of the record's patch against a temporary index
   holding the tree of ``base_commit`` (``git read-tree`` into ``GIT_INDEX_FILE``).

**Exploration mode** (both off by default, ``docs/mining.md``): ``tests="read"`` keeps code changed together
with its tests: the tests' hunks are gold too, the test files are in ``read_core_files`` and
``ground_truth.test_files`` but not in ``modified_core_files``/``main_files``, added test files are left out,
``test_file`` rejects only commits changing tests alone, and ``too_many_files`` counts code and test files
separately. ``pull_requests=True`` mines a ``Merge pull request #N from ...`` merge as its first-parent diff with
the PR title and body as the query, and drops the `` (#N)`` suffix of a squash merge's subject
(:func:`~swe_explore.benchprep.mine_rules.pull_request_text`); such records carry ``meta.pull_request``.

**Language** of a record: the language of its changed files (``.h`` decided from the file's text; ``tsx``
counts as ``typescript``); when mixed, the one with most changed lines (added + removed), ties broken by name.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from swe_explore.benchprep.diffs import DiffError, parse_diff
from swe_explore.benchprep.git import (
    DIFF_OPTIONS,
    REPO_NAME,
    ChangedFile,
    Commit,
    Git,
    GitError,
    changed_files,
    git_line_count,
    read_blobs,
    read_commit,
    repo_from_mirror,
)
from swe_explore.benchprep.mine_rules import (
    GENERATED_HEADER,
    GENERATED_SNIFF_BYTES,
    OPTIONAL_RULES,
    REJECTION_REASONS,
    TEST_MODES,
    is_bot,
    is_test_path,
    is_utf8_path,
    is_vendored_or_generated,
    majority_language,
    message_rejection,
    pull_request_text,
    regions_outside,
    source_language,
    strip_trailers,
)
from swe_explore.benchprep.release import report_path
from swe_explore.chunking.atomic import write_text_atomic
from swe_explore.chunking.languages import language_for_path
from swe_explore.chunking.lines import count_lines, decode
from swe_explore.evaluation.bench import parse_record


@dataclass(frozen=True)
class MineConfig:
    """What :func:`mine` selects.

    :param max_records: stop once this many records passed every rule.
    :param seed: seed of the ``random.Random`` shuffling the sorted candidate shas.
    :param since: only commits with a committer date after this (git date syntax: ``2020-01-01``, ``2 years
        ago``); ``None`` = no limit.
    :param until: only commits with a committer date before this; ``None`` = no limit.
    :param ref: the ref whose history is mined (``HEAD``: a mirror's default branch).
    :param first_parent: follow only first parents (the mainline) instead of every reachable commit.
    :param min_words: fewest whitespace-separated words of the message after trailers are removed.
    :param max_files: most changed files (at least one is always needed).
    :param allow: rules of :data:`OPTIONAL_RULES` switched off.
    :param tests: :data:`TEST_MODES`: ``reject`` commits touching a test file (the ``test_file`` rule), or
        ``read``: keep code changed with its tests, the tests' hunks labelled as read core regions.
    :param pull_requests: take the query from the pull request: mine merge commits of a pull request (their
        first-parent diff, the PR title and body as the query) and drop the `` (#N)`` suffix of squash merges.
    :raises ValueError: for ``max_records < 0``, ``min_words < 0``, ``max_files < 1``, an unknown rule or test
        mode.
    """

    max_records: int = 100
    seed: int = 0
    since: str | None = None
    until: str | None = None
    ref: str = "HEAD"
    first_parent: bool = False
    min_words: int = 8
    max_files: int = 3
    allow: frozenset[str] = frozenset()
    tests: str = "reject"
    pull_requests: bool = False

    def __post_init__(self) -> None:
        if self.max_records < 0:
            raise ValueError(f"max_records must be >= 0, got {self.max_records}")
        if self.min_words < 0:
            raise ValueError(f"min_words must be >= 0, got {self.min_words}")
        if self.max_files < 1:
            raise ValueError(f"max_files must be >= 1, got {self.max_files}")
        unknown = sorted(set(self.allow) - set(OPTIONAL_RULES))
        if unknown:
            raise ValueError(f"unknown rule(s) {unknown}; rules that can be allowed: {', '.join(OPTIONAL_RULES)}")
        if self.tests not in TEST_MODES:
            raise ValueError(f"unknown test mode {self.tests!r}; valid: {', '.join(TEST_MODES)}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form for the run report."""
        out = asdict(self)
        out["allow"] = sorted(self.allow)
        return out


@dataclass
class MineReport:
    """What a mining run saw (JSON-serialisable through :meth:`to_dict`).

    :param repo: ``owner/name``.
    :param mirror: the mirror's git directory.
    :param ref: the mined ref and :attr:`head` the sha it resolved to.
    :param head: the sha of :attr:`ref` at the time of the run.
    :param config: the :class:`MineConfig` as a dict.
    :param candidates: commits listed by ``git rev-list`` (merges included).
    :param examined: candidates examined before ``max_records`` were accepted (or all of them).
    :param accepted: records written.
    :param rejected: reason (:data:`REJECTION_REASONS`) -> commits.
    :param per_language: language -> ``{"accepted": n, "<reason>": n, ...}`` over examined non-merge, non-root
        commits; the language is the majority language of the commit's source files by changed lines, ``other``
        when it changes no source file.
    :param seconds: wall-clock time of the run.
    """

    repo: str
    mirror: str
    ref: str
    head: str
    config: dict[str, Any]
    candidates: int = 0
    examined: int = 0
    accepted: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    per_language: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0

    def count(self, reason: str | None, language: str | None) -> None:
        """Count one examined commit: accepted (``reason is None``) or rejected for ``reason``.

        :param reason: a rejection reason, or ``None`` for an accepted record.
        :param language: the commit's language for :attr:`per_language`, ``None`` to leave it out.
        """
        self.examined += 1
        key = "accepted" if reason is None else reason
        if reason is None:
            self.accepted += 1
        else:
            self.rejected[reason] = self.rejected.get(reason, 0) + 1
        if language is not None:
            per = self.per_language.setdefault(language, {})
            per[key] = per.get(key, 0) + 1

    def to_dict(self) -> dict[str, Any]:
        """The report as a dict (reasons in rule order, languages sorted)."""
        out = asdict(self)
        out["rejected"] = {r: self.rejected[r] for r in REJECTION_REASONS if r in self.rejected}
        out["per_language"] = {lang: dict(sorted(c.items())) for lang, c in sorted(self.per_language.items())}
        out["seconds"] = round(self.seconds, 3)
        return out


class _Rejected(Exception):
    """A commit failed a rule (internal control flow of :class:`Miner`)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def instance_id(repo: str, sha: str) -> str:
    """``<owner>__<name>-<first 12 hex of sha>``.

    :param repo: ``owner/name``.
    :param sha: the commit's sha.
    :return: the instance id, e.g. ``pallets__click-0123456789ab``.
    """
    owner, name = repo.split("/", 1)
    return f"{owner}__{name}-{sha[:12]}"


def list_candidates(git: Git, config: MineConfig) -> list[tuple[str, tuple[str, ...]]]:
    """Candidate commits ``(sha, parents)`` in sampling order: sorted by sha, shuffled with ``Random(seed)``.

    :param git: the mirror.
    :param config: ref, date range, first-parent and seed.
    :return: every commit ``git rev-list`` lists (merges included, rejected later), shuffled.
    :raises GitError: if the ref does not exist.
    """
    args = ["rev-list", "--parents"]
    if config.first_parent:
        args.append("--first-parent")
    if config.since:
        args.append(f"--since={config.since}")
    if config.until:
        args.append(f"--until={config.until}")
    args += [config.ref, "--"]
    commits: dict[str, tuple[str, ...]] = {}
    for line in git.run(*args).decode("ascii").splitlines():
        sha, *parents = line.split()
        commits[sha] = tuple(parents)
    order = sorted(commits)
    random.Random(config.seed).shuffle(order)
    return [(sha, commits[sha]) for sha in order]


class Miner:
    """Turns commits of one mirror into bench records, applying every rule of the module docstring.

    :param git: the mirror.
    :param repo: ``owner/name`` written into records.
    :param config: the selection options.
    :param work_dir: a private temporary directory (for the index file of the patch check).
    """

    def __init__(self, git: Git, repo: str, config: MineConfig, work_dir: Path) -> None:
        self.git = git
        self.repo = repo
        self.config = config
        self.index_env = {"GIT_INDEX_FILE": str(work_dir / "index")}

    def examine(self, sha: str, parents: tuple[str, ...]) -> tuple[dict[str, Any] | None, str | None, str | None]:
        """Examine one commit.

        :param sha: the commit.
        :param parents: its parents.
        :return: ``(record, None, language)`` when it passes every rule, else ``(None, reason, language)``;
            ``language`` is ``None`` for merges and root commits (see :attr:`MineReport.per_language`) that are
            not mined.
        """
        if not parents:
            return None, "root_commit", None
        pull_request: tuple[str, int] | None = None
        commit: Commit | None = None
        if len(parents) != 1:
            if not (self.config.pull_requests and len(parents) == 2):
                return None, "merge", None
            try:
                commit = read_commit(self.git, sha, parents)
            except GitError:
                return None, "missing_object", None
            pull_request = pull_request_text(commit.message, merge=True)
            if pull_request is None:
                return None, "merge", None
        try:
            files = changed_files(self.git, parents[0], sha)
        except GitError:  # an object the mirror lacks (mirrors may omit blobs of 4 MiB and more)
            return None, "missing_object", None
        weights = [(lang, f.changed_lines) for f in files if (lang := source_language(f.path)) is not None]
        language = majority_language(weights) or "other"
        try:
            commit = commit or read_commit(self.git, sha, parents)
            if self.config.pull_requests and pull_request is None:
                pull_request = pull_request_text(commit.message, merge=False)
            record = self._record(commit, files, pull_request)
        except _Rejected as rejected:
            return None, rejected.reason, language
        except GitError:
            return None, "missing_object", language
        return record, None, str(record["language"])

    def _rule(self, rule: str, failed: bool) -> None:
        """Raise :class:`_Rejected` when an enabled rule failed."""
        if failed and rule not in self.config.allow:
            raise _Rejected(rule)

    def _record(self, commit: Commit, files: list[ChangedFile], pull_request: tuple[str, int] | None) -> dict[str, Any]:
        """Check every rule after the parent count and build the record (raises :class:`_Rejected`);
        ``pull_request`` is ``(query, number)`` of a PR merge or squash merge, else ``None``."""
        cfg = self.config
        parent = commit.parents[0]
        self._rule("bot", is_bot(commit.author) or is_bot(commit.committer))
        problem = strip_trailers(commit.message) if pull_request is None else pull_request[0]
        subject = problem.split("\n", 1)[0]
        rule = message_rejection(subject)
        if rule is not None:
            self._rule(rule, True)
        self._rule("short_message", len(problem.split()) < max(cfg.min_words, 1))
        files = self._check_files(parent, files)
        paths = [f.path for f in files]
        tests = {p for p in paths if is_test_path(p)} if cfg.tests == "read" else set()
        diff_bytes = self.git.run("diff", "-U0", *DIFF_OPTIONS, parent, commit.sha, "--", *paths)
        try:
            diff = parse_diff(diff_bytes.decode("utf-8"), where=f"{self.repo}@{commit.sha[:12]}")
        except UnicodeDecodeError:
            raise _Rejected("non_utf8_diff") from None
        except DiffError:
            raise _Rejected("malformed_diff") from None
        status_reason = {
            "binary": "binary_file",
            "mode_only": "mode_only_change",
            "symlink": "symlink",
            "submodule": "submodule",
            "empty": "no_text_change",
            "added": "added_file",
            "deleted": "deleted_file",
            "renamed": "renamed_file",
            "copied": "copied_file",
        }
        for f in diff.files:
            if f.status != "modified":
                raise _Rejected(status_reason[f.status])
        if sorted(f.path for f in diff.files) != sorted(paths):
            raise _Rejected("malformed_diff")
        regions = diff.regions
        if not regions:
            raise _Rejected("no_regions")
        blobs = dict(zip(paths, read_blobs(self.git, [f.old_blob for f in files])))
        generated = any(GENERATED_HEADER.search(b[:GENERATED_SNIFF_BYTES]) for b in blobs.values())
        self._rule("vendored_or_generated", generated)
        if any(git_line_count(b) != count_lines(b) for b in blobs.values()):
            raise _Rejected("line_definition_mismatch")
        if regions_outside(regions, {p: count_lines(b) for p, b in blobs.items()}):
            raise _Rejected("region_outside_file")
        patch = self._patch(parent, commit.sha, paths)
        if not self.git.ok("read-tree", parent, env=self.index_env) or not self.git.ok(
            "apply", "--cached", "--check", "--whitespace=nowarn", "-", input=patch.encode("utf-8"), env=self.index_env
        ):
            raise _Rejected("patch_does_not_apply")
        changed = {f.path: f.added + f.removed for f in diff.files}
        languages = []
        for path in (p for p in paths if p not in tests):
            lang = language_for_path(path, decode(blobs[path]) if path.lower().endswith(".h") else None)
            languages.append((lang or "", changed[path]))
        files_sorted = sorted(paths)
        code_sorted = [p for p in files_sorted if p not in tests]
        ground_truth: dict[str, Any] = {
            "read_core_files": files_sorted,
            "read_core_regions": [r.to_json() for r in regions],
            "read_optional_files_map": {},
            "read_optional_regions_map": {},
            "modified_core_files": code_sorted,
            "main_files": code_sorted,
        }
        if cfg.tests == "read":
            ground_truth["test_files"] = sorted(tests)
        meta: dict[str, Any] = {"committed_at": commit.date}
        if pull_request is not None:
            meta["pull_request"] = pull_request[1]
            meta["pull_request_via"] = "merge" if len(commit.parents) > 1 else "squash"
        record: dict[str, Any] = {
            "instance_id": instance_id(self.repo, commit.sha),
            "repo": self.repo,
            "base_commit": parent,
            "problem_statement": problem,
            "ground_truth": ground_truth,
            "patch": patch,
            "language": majority_language(languages),
            "gt_source": "commit_diff",
            "commit": commit.sha,
            "dataset": "mined",
            "meta": meta,
        }
        parse_record(record, where=record["instance_id"])  # the toolkit must be able to load it
        return record

    def _check_files(self, parent: str, files: list[ChangedFile]) -> list[ChangedFile]:
        """The file-level rules of step 5 (raises :class:`_Rejected`); returns the files the record keeps (with
        ``tests="read"``, all but added test files)."""
        if not files:
            raise _Rejected("no_changed_files")
        read_tests = self.config.tests == "read"
        if read_tests:  # an added test file has no old side to read: left out of the record
            files = [f for f in files if not (f.status == "A" and is_test_path(f.path))]
            n_tests = sum(is_test_path(f.path) for f in files)
            if n_tests == len(files):
                raise _Rejected("test_file")  # tests only: no code change to find
            if len(files) - n_tests > self.config.max_files or n_tests > self.config.max_files:
                raise _Rejected("too_many_files")
        elif len(files) > self.config.max_files:
            raise _Rejected("too_many_files")
        by_status = {"A": "added_file", "D": "deleted_file", "R": "renamed_file", "C": "copied_file"}
        for f in files:
            if f.status != "M":
                raise _Rejected(by_status.get(f.status, "type_change"))
        paths = [f.path for f in files]
        if not all(is_utf8_path(p) for p in paths):
            raise _Rejected("non_utf8_path")
        if any(source_language(p) is None for p in paths):
            raise _Rejected("non_source_file")

        def has_init(directory: str) -> bool:
            return self.git.ok("cat-file", "-e", f"{parent}:{directory}/__init__.py")

        self._rule("vendored_or_generated", any(is_vendored_or_generated(p, has_init) for p in paths))
        self._rule("test_file", not read_tests and any(is_test_path(p) for p in paths))
        return files

    def _patch(self, parent: str, sha: str, paths: Sequence[str]) -> str:
        """The record's patch: ``git diff`` with 3 context lines, limited to ``paths`` (raises on non-UTF-8)."""
        try:
            return self.git.run("diff", *DIFF_OPTIONS, parent, sha, "--", *paths).decode("utf-8")
        except UnicodeDecodeError:
            raise _Rejected("non_utf8_diff") from None


def mine(
    mirror: str | Path,
    repo: str | None = None,
    config: MineConfig | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[dict[str, Any]], MineReport]:
    """Mine bench records from a mirror's history (rules and record format in the module docstring).

    :param mirror: the bare mirror (``/work/.mirror/<owner>+<name>/repo``) or a ``.git`` directory.
    :param repo: ``owner/name``; ``None`` derives it (:func:`repo_from_mirror`).
    :param config: selection options (default :class:`MineConfig()`).
    :param progress: called with the number of records accepted so far after each accepted record.
    :return: ``(records, report)``: records in sampling order, at most ``config.max_records``.
    :raises GitError: if ``mirror`` is not a git directory or the ref does not exist.
    :raises ValueError: for a malformed ``repo`` or when it cannot be derived.
    """
    config = config or MineConfig()
    started = time.perf_counter()
    git = Git(mirror)
    repo = repo or repo_from_mirror(git)
    if not REPO_NAME.match(repo):
        raise ValueError(f"repo must be owner/name, got {repo!r}")
    head = git.run("rev-parse", "--verify", f"{config.ref}^{{commit}}").decode("ascii").strip()
    report = MineReport(repo=repo, mirror=str(git.git_dir), ref=config.ref, head=head, config=config.to_dict())
    candidates = list_candidates(git, config)
    report.candidates = len(candidates)
    records: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="swe-explore-mine-") as work_dir:
        miner = Miner(git, repo, config, Path(work_dir))
        for sha, parents in candidates:
            if len(records) >= config.max_records:
                break
            record, reason, language = miner.examine(sha, parents)
            report.count(reason, language)
            if record is not None:
                records.append(record)
                if progress is not None:
                    progress(len(records))
    report.seconds = time.perf_counter() - started
    return records, report


def write_outputs(out: str | Path, records: Sequence[Mapping[str, Any]], report: MineReport) -> Path:
    """Write the bench JSONL and its report, each atomically.

    :param out: the bench JSONL path.
    :param records: the records, one JSON object per line (UTF-8, not ASCII-escaped).
    :param report: the run report, written to :func:`~benchprep.release.report_path`.
    :return: the report path.
    """
    write_text_atomic(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    rpath = report_path(out, keep_suffix=True)
    write_text_atomic(rpath, json.dumps({**report.to_dict(), "out": str(out)}, indent=1) + "\n")
    return rpath
