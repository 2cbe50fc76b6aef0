"""Mining labelled bench records from git history: a commit's message is the query, the old side of its diff
is the gold.

For every selected commit ``C`` with first parent ``P`` the record is: ``instance_id`` =
``<owner>__<name>-<first 12 hex of C>``, ``base_commit = P``, ``problem_statement`` = the commit message
(subject and body) with trailers removed (:func:`strip_trailers`), gold regions = the old side of every hunk of
``git diff -U0 P C`` (:mod:`benchprep.diffs`; insert-only hunks anchor on the old line they follow), the
changed files as ``read_core_files`` = ``modified_core_files`` = ``main_files``, and ``patch`` = ``git diff
P C`` with 3 lines of context. Everything is read from a bare mirror with ``git --git-dir=MIRROR ...``
subprocesses; nothing is ever written into the mirror (the patch check uses a temporary index file).

**Candidates**: ``git rev-list [--first-parent] [--since=DATE] [--until=DATE] --parents REF`` (``REF`` =
``HEAD``, the default branch of a mirror; ``--since``/``--until`` are git's committer-date filters). By default
every commit reachable from ``REF`` is a candidate, including the commits of merged branches (in a repository
that merges pull requests with merge commits, most changes are only there); ``first_parent`` keeps the mainline
only. The sorted sha list is shuffled with ``random.Random(seed)`` and commits are examined in that order until
``max_records`` pass every rule, so a run is deterministic for a given mirror, ref, seed and options.

**Rules** (:data:`REJECTION_REASONS`, tested in this order; a rejected commit is counted once, under the first
rule it fails; rules in :data:`OPTIONAL_RULES` can be switched off with ``allow``):

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

**Language** of a record: the language of its changed files (``.h`` decided from the file's text; ``tsx``
counts as ``typescript``); when mixed, the one with most changed lines (added + removed), ties broken by name.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from swe_explore.benchprep.diffs import DiffError, parse_diff
from swe_explore.benchprep.release import report_path
from swe_explore.chunking.languages import TEXT, language_for_path
from swe_explore.chunking.lines import count_lines, decode
from swe_explore.chunking.types import Region
from swe_explore.chunking.walk import DEFAULT_EXCLUDE_DIRS, DEFAULT_TOP_LEVEL_GENERATED
from swe_explore.evaluation.bench import parse_record

REJECTION_REASONS: tuple[str, ...] = (
    "merge",
    "root_commit",
    "missing_object",
    "bot",
    "revert",
    "merge_message",
    "version_bump",
    "dependency_update",
    "formatting",
    "short_message",
    "no_changed_files",
    "too_many_files",
    "added_file",
    "deleted_file",
    "renamed_file",
    "copied_file",
    "type_change",
    "non_utf8_path",
    "non_source_file",
    "vendored_or_generated",
    "test_file",
    "non_utf8_diff",
    "malformed_diff",
    "binary_file",
    "mode_only_change",
    "symlink",
    "submodule",
    "no_text_change",
    "no_regions",
    "line_definition_mismatch",
    "region_outside_file",
    "patch_does_not_apply",
)
"""Every reason a commit can be rejected for, in the order the rules are tested (see the module docstring)."""

OPTIONAL_RULES: tuple[str, ...] = (
    "bot",
    "revert",
    "merge_message",
    "version_bump",
    "dependency_update",
    "formatting",
    "test_file",
    "vendored_or_generated",
)
"""Rules that ``MineConfig.allow`` (``--allow RULE``) can switch off; the others are needed for valid gold."""

BOT_MARKERS: tuple[str, ...] = (
    "[bot]",
    "dependabot",
    "renovate",
    "github-actions",
    "pre-commit-ci",
    "greenkeeper",
    "snyk-bot",
)
"""A commit whose author or committer name or email contains one of these (case-insensitive) is a bot commit."""

MESSAGE_RULES: dict[str, tuple[str, ...]] = {
    "revert": (r"^revert(s|ed|ing)?\b",),
    "merge_message": (
        r"^merge (branch|pull request|remote-tracking branch|tag|commit|upstream|master|main|develop)\b",
        r"^merged? in\b",
        r"^merge ['\"]",
    ),
    "version_bump": (
        r"^(version\s*)?v?\d+(\.\d+)+\S*$",
        (
            r"\b(bump|bumped|bumps|bumping|update|updated|set|increase|increment)\s+(the\s+)?"
            r"(package\s+|project\s+)?version\b"
        ),
        (
            r"^(release|released|releasing|prepare|prepared|preparing|prep|start|started|starting|begin|cut|tag"
            r"|tagged)\b.*\bv?\d+\.\d+"
        ),
        r"^(chore|build)(\([^)]*\))?!?:\s*(release|bump|version)",
        r"^chore\(release\)",
    ),
    "dependency_update": (
        r"^bump \S+ from \S+ to \S+",
        (
            r"\b(update|updated|updates|upgrade|upgraded|upgrades|bump|bumped|bumps|pin|pinned|unpin)\s+"
            r"(all\s+|the\s+)?(dev[- ])?(dependency|dependencies|deps|requirements|pins|lockfiles?|lock files?)\b"
        ),
        r"^(chore|build|fix)\(deps(-dev)?\)",
        r"^update (module|dependency) ",
        r"^(update|upgrade|bump) [\w@./-]+ (from \S+ )?to v?\d+(\.\d+)+\S*$",
        r"^\[pre-commit\.ci\]",
        r"pre-commit autoupdate",
    ),
    "formatting": (
        r"\btypos?\b",
        r"^reformat(s|ted|ting)?\b",
        r"^(re)?format(s|ted|ting)?\s+(the\s+)?(code|codebase|source|sources|files?|everything|all)\b",
        (
            r"^((fix(es|ed)?|apply|applied|run|ran|update|clean ?up)\s+)?(the\s+)?(code\s+)?"
            r"(style|lint|linting|linter|whitespace|formatting|format|pep8|flake8)"
            r"(\s+(errors?|issues?|warnings?|fix(es)?|changes?|violations?|nits?))?[.!]?$"
        ),
        (
            r"\b(run|ran|apply|applied)\s+(black|isort|prettier|gofmt|goimports|rustfmt|clang-format|ruff|eslint"
            r"|autopep8|yapf|pyupgrade|php-cs-fixer|rubocop|standardrb)\b"
        ),
        r"^(style|lint|format)(\([^)]*\))?!?:",
        r"^(remove|trim|strip)\s+(trailing\s+)?whitespace",
    ),
}
"""Message rule -> regular expressions searched (``re.search``, case-insensitive) in the subject line."""

_MESSAGE_PATTERNS = {rule: [re.compile(p, re.IGNORECASE) for p in patterns] for rule, patterns in MESSAGE_RULES.items()}

TRAILER_KEYS: frozenset[str] = frozenset(
    {
        "signed-off-by",
        "co-authored-by",
        "co-developed-by",
        "reviewed-by",
        "acked-by",
        "tested-by",
        "reported-by",
        "suggested-by",
        "requested-by",
        "helped-by",
        "cc",
        "change-id",
        "reviewed-on",
        "git-svn-id",
        "fixes",
        "closes",
        "resolves",
        "refs",
        "see-also",
        "bug",
        "issue",
        "pr-url",
        "pr-close",
        "backport-pr-url",
    }
)
"""Trailer keys (case-insensitive) whose ``Key: value`` lines are removed wherever they stand in a message."""

_KNOWN_TRAILER = re.compile(r"^\s*(" + "|".join(re.escape(k) for k in sorted(TRAILER_KEYS)) + r")\s*:", re.IGNORECASE)
_TRAILER_SHAPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*:\s+\S")
_CHERRY_PICK = re.compile(r"^\(cherry picked from commit [0-9a-f]{7,40}\)$")

TEST_DIRS: frozenset[str] = frozenset(
    {
        "test",
        "tests",
        "__tests__",
        "__test__",
        "spec",
        "specs",
        "testing",
        "testdata",
        "test_data",
        "test-data",
        "__mocks__",
        "e2e",
    }
)
"""Directory names (at any depth) whose files are tests or test data."""

_TEST_STEM = re.compile(
    r"^(test|tests|conftest)$"  # tests.py, conftest.py, test.go
    r"|^test_"  # test_x.py, test_x.c, test_x.rb
    r"|_(test|tests|spec|unittest)$"  # x_test.go, x_test.py, x_spec.rb, x_unittest.cc
    r"|[.-](test|spec)$"  # x.test.ts, x.spec.js, x-test.js
    r"|(Test|Tests|TestCase)$"  # XTest.java, XTest.php, XTests.java
    r"|^Test[A-Z]"  # TestX.java (JUnit 3)
)
"""Test file names, matched against the file name without its last extension (``x.test`` for ``x.test.ts``)."""

VENDOR_DIRS: frozenset[str] = DEFAULT_EXCLUDE_DIRS | {
    "third_party",
    "third-party",
    "thirdparty",
    "generated",
    "__generated__",
}
"""Directory names (at any depth) of vendored or generated code: the snapshot walker's excluded directories
(:data:`chunking.walk.DEFAULT_EXCLUDE_DIRS`, plus ``*.egg-info``) and third-party/generated folders."""

_GENERATED_NAME = re.compile(
    r"\.min\.(js|mjs|cjs)$|-min\.js$|\.bundle\.js$|_pb2(_grpc)?\.pyi?$|\.pb(\.gw)?\.go$|\.pb\.(cc|h)$"
    r"|(^|[._-])generated\.|^zz_generated"
)
"""File names of generated or minified code (``*.min.js``, ``*_pb2.py``, ``*.pb.go``, ``*.generated.ts``,
``x_generated.go``, ``zz_generated.deepcopy.go``, ...)."""

GENERATED_HEADER = re.compile(rb"Code generated .{0,200}DO NOT EDIT|@generated\b")
"""Generated-code marker (Go's ``// Code generated ... DO NOT EDIT.``, the ``@generated`` tag) searched in the
first :data:`GENERATED_SNIFF_BYTES` of a changed file at ``base_commit``."""

GENERATED_SNIFF_BYTES = 4096
"""Bytes of a file searched for :data:`GENERATED_HEADER`."""

DEPENDENCY_MANIFESTS: frozenset[str] = frozenset({"Gemfile", "Podfile", "Brewfile"})
"""File names that :func:`chunking.languages.language_for_path` counts as Ruby but that list dependencies
(``*.gemspec`` files too); they make a commit ``non_source_file``."""

RECORD_LANGUAGE = {"tsx": "typescript"}
"""Walker language -> the record's ``language`` (the ten SWE-Explore languages)."""

_REPO_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class GitError(RuntimeError):
    """A git command failed; the message has the command and git's error output."""


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
    :raises ValueError: for ``max_records < 0``, ``min_words < 0``, ``max_files < 1`` or an unknown rule.
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


class Rejected(Exception):
    """A commit failed a rule (internal control flow of :class:`Miner`)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# ----------------------------------------------------------------------------------------------------------
# Messages
# ----------------------------------------------------------------------------------------------------------


def strip_trailers(message: str) -> str:
    """The commit message without trailers: subject and body, as the problem statement.

    1. Line ends are normalised (``\\r\\n`` -> ``\\n``); lines whose key is one of :data:`TRAILER_KEYS`
       (``Signed-off-by: ...``, ``Co-authored-by: ...``, ``Change-Id: ...``), anywhere in the message, and
       ``(cherry picked from commit ...)`` lines are removed.
    2. If the last paragraph (not the subject) now holds only trailer-shaped lines (``Key: value`` with a
       one-word key, as git's ``interpret-trailers`` sees them, or indented continuation lines), it is removed.
    3. Trailing whitespace of lines and blank lines at the start and end are dropped; runs of blank lines
       become one.

    :param message: the raw commit message.
    :return: the cleaned message (``""`` when nothing is left).
    """
    lines = [ln.rstrip() for ln in message.replace("\r\n", "\n").split("\n")]
    lines = [ln for ln in lines if not _KNOWN_TRAILER.match(ln) and not _CHERRY_PICK.match(ln.strip())]
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line:
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    paragraphs = [p for p in paragraphs if p]
    if len(paragraphs) > 1 and all(_TRAILER_SHAPE.match(ln) or ln[:1].isspace() for ln in paragraphs[-1]):
        paragraphs.pop()
    return "\n\n".join("\n".join(p) for p in paragraphs)


def message_rejection(subject: str) -> str | None:
    """The first message rule of :data:`MESSAGE_RULES` the subject line matches.

    :param subject: the first line of the commit message.
    :return: the rule name (``revert``, ``merge_message``, ``version_bump``, ``dependency_update``,
        ``formatting``) or ``None``.
    """
    text = subject.strip()
    for rule, patterns in _MESSAGE_PATTERNS.items():
        if any(p.search(text) for p in patterns):
            return rule
    return None


def is_bot(identity: str) -> bool:
    """Whether a ``name <email>`` identity is a bot's (contains one of :data:`BOT_MARKERS`).

    :param identity: author or committer as ``name <email>``.
    :return: ``True`` for a bot.
    """
    lowered = identity.lower()
    return any(marker in lowered for marker in BOT_MARKERS)


def is_utf8_path(path: str) -> bool:
    """Whether a path decoded with ``surrogateescape`` came from valid UTF-8 bytes.

    :param path: a path from :func:`changed_files`.
    :return: ``False`` when it holds lone surrogates (bytes that are not UTF-8).
    """
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def word_count(text: str) -> int:
    """Number of whitespace-separated words.

    :param text: any text.
    :return: the count.
    """
    return len(text.split())


# ----------------------------------------------------------------------------------------------------------
# Paths
# ----------------------------------------------------------------------------------------------------------


def source_language(path: str) -> str | None:
    """The walker language of a source file of the ten languages, or ``None`` for anything else.

    :param path: repo-relative path.
    :return: ``python``, ``go``, ``javascript``, ``typescript``, ``tsx``, ``rust``, ``java``, ``php``, ``ruby``,
        ``c`` or ``cpp`` (``.h`` by name only: ``c``), or ``None`` for docs/config/data files and
        :data:`DEPENDENCY_MANIFESTS`.
    """
    name = PurePosixPath(path).name
    if name in DEPENDENCY_MANIFESTS or name.endswith(".gemspec"):
        return None
    language = language_for_path(path)
    return None if language in (None, TEXT) else language


def is_test_path(path: str) -> bool:
    """Whether a path is a test file by the common conventions of the ten languages.

    A directory named in :data:`TEST_DIRS` (``test/``, ``tests/``, ``__tests__/``, ``spec/``, ``testing/``,
    ``testdata/``, ...) at any depth, or a file name matching :data:`_TEST_STEM`: ``test_*.py``, ``*_test.py``,
    ``tests.py``, ``conftest.py``, ``*_test.go``, ``*.test.ts|js``, ``*.spec.ts|js``, ``*Test.java``,
    ``*Tests.java``, ``*_spec.rb``, ``*_test.rb``, ``*Test.php``, ``*_test.cc``, ``*_unittest.cc``, ...

    :param path: repo-relative POSIX path.
    :return: ``True`` for a test file.
    """
    parts = path.split("/")
    if any(part in TEST_DIRS for part in parts[:-1]):
        return True
    name = parts[-1]
    stem = name[: name.rfind(".")] if "." in name[1:] else name
    return bool(_TEST_STEM.search(stem))


def is_vendored_or_generated(path: str, has_init: Callable[[str], bool] | None = None) -> bool:
    """Whether a path is vendored or generated code, by its name.

    The snapshot walker's rules (:mod:`chunking.walk`): a directory of :data:`VENDOR_DIRS` or ending in
    ``.egg-info`` at any depth, or a top-level ``build``/``dist``/``vendor`` directory without an
    ``__init__.py``; and generated file names (:data:`_GENERATED_NAME`: ``*.min.js``, ``*_pb2.py``,
    ``*.pb.go``, ``*.generated.*``, ...). File contents are checked separately (:data:`GENERATED_HEADER`).

    :param path: repo-relative POSIX path.
    :param has_init: ``has_init(dir)`` tells whether ``dir/__init__.py`` exists (at ``base_commit``); ``None``
        means it does not.
    :return: ``True`` for vendored or generated code.
    """
    parts = path.split("/")
    dirs = parts[:-1]
    if any(d in VENDOR_DIRS or d.endswith(".egg-info") for d in dirs):
        return True
    if dirs and dirs[0] in DEFAULT_TOP_LEVEL_GENERATED and not (has_init is not None and has_init(dirs[0])):
        return True
    return bool(_GENERATED_NAME.search(parts[-1]))


def majority_language(weights: Iterable[tuple[str, int]]) -> str | None:
    """The language with the most changed lines (ties: the first by name); ``tsx`` counts as ``typescript``.

    :param weights: ``(language, changed lines)`` pairs, one per file.
    :return: the language, or ``None`` for no pairs.
    """
    totals: Counter[str] = Counter()
    for language, lines in weights:
        totals[RECORD_LANGUAGE.get(language, language)] += lines
    if not totals:
        return None
    return min(totals, key=lambda lang: (-totals[lang], lang))


def regions_outside(regions: Sequence[Region], line_counts: Mapping[str, int]) -> list[Region]:
    """The regions that do not lie inside their file (``1 <= start <= end <= lines``).

    :param regions: gold regions.
    :param line_counts: path -> line count of the file at ``base_commit`` (:func:`chunking.lines.count_lines`);
        a path missing here makes its regions outside.
    :return: the offending regions, in order (empty when all are inside).
    """
    bad = []
    for region in regions:
        lines = line_counts.get(region.path)
        if lines is None or not 1 <= region.start <= region.end <= lines:
            bad.append(region)
    return bad


def git_line_count(data: bytes) -> int:
    """Lines of a file as git's diff numbers them: ``\n``-terminated, plus an unterminated last line.

    :param data: the file's bytes.
    :return: the count (0 for an empty file).
    """
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


def instance_id(repo: str, sha: str) -> str:
    """``<owner>__<name>-<first 12 hex of sha>``.

    :param repo: ``owner/name``.
    :param sha: the commit's sha.
    :return: the instance id, e.g. ``pallets__click-0123456789ab``.
    """
    owner, name = repo.split("/", 1)
    return f"{owner}__{name}-{sha[:12]}"


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
    return repo if _REPO_NAME.match(repo) else None


# ----------------------------------------------------------------------------------------------------------
# Git
# ----------------------------------------------------------------------------------------------------------


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
        if _REPO_NAME.match(repo):
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


def read_commit(git: Git, sha: str, parents: tuple[str, ...]) -> Commit:
    """A commit's authors, date and message (``git show -s``).

    :param git: the mirror.
    :param sha: the commit.
    :param parents: its parents (from :func:`list_candidates`).
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
        surrogates (``surrogateescape``), see :func:`is_utf8_path`.
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


# ----------------------------------------------------------------------------------------------------------
# The miner
# ----------------------------------------------------------------------------------------------------------


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
            ``language`` is ``None`` for merges and root commits (see :attr:`MineReport.per_language`).
        """
        if len(parents) != 1:
            return None, ("merge" if parents else "root_commit"), None
        try:
            files = changed_files(self.git, parents[0], sha)
        except GitError:  # an object the mirror lacks (mirrors may omit blobs of 4 MiB and more)
            return None, "missing_object", None
        weights = [(lang, f.changed_lines) for f in files if (lang := source_language(f.path)) is not None]
        language = majority_language(weights) or "other"
        try:
            record = self._record(read_commit(self.git, sha, parents), files)
        except Rejected as rejected:
            return None, rejected.reason, language
        except GitError:
            return None, "missing_object", language
        return record, None, str(record["language"])

    def _rule(self, rule: str, failed: bool) -> None:
        """Raise :class:`Rejected` when an enabled rule failed."""
        if failed and rule not in self.config.allow:
            raise Rejected(rule)

    def _record(self, commit: Commit, files: list[ChangedFile]) -> dict[str, Any]:
        """Check every rule after the parent count and build the record (raises :class:`Rejected`)."""
        cfg = self.config
        parent = commit.parents[0]
        self._rule("bot", is_bot(commit.author) or is_bot(commit.committer))
        problem = strip_trailers(commit.message)
        subject = problem.split("\n", 1)[0]
        rule = message_rejection(subject)
        if rule is not None:
            self._rule(rule, True)
        self._rule("short_message", word_count(problem) < max(cfg.min_words, 1))
        self._check_files(parent, files)
        paths = [f.path for f in files]
        diff_bytes = self.git.run("diff", "-U0", *DIFF_OPTIONS, parent, commit.sha, "--", *paths)
        try:
            diff = parse_diff(diff_bytes.decode("utf-8"), where=f"{self.repo}@{commit.sha[:12]}")
        except UnicodeDecodeError:
            raise Rejected("non_utf8_diff") from None
        except DiffError:
            raise Rejected("malformed_diff") from None
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
                raise Rejected(status_reason[f.status])
        if sorted(f.path for f in diff.files) != sorted(paths):
            raise Rejected("malformed_diff")
        regions = diff.regions
        if not regions:
            raise Rejected("no_regions")
        blobs = dict(zip(paths, read_blobs(self.git, [f.old_blob for f in files])))
        generated = any(GENERATED_HEADER.search(b[:GENERATED_SNIFF_BYTES]) for b in blobs.values())
        self._rule("vendored_or_generated", generated)
        if any(git_line_count(b) != count_lines(b) for b in blobs.values()):
            raise Rejected("line_definition_mismatch")
        if regions_outside(regions, {p: count_lines(b) for p, b in blobs.items()}):
            raise Rejected("region_outside_file")
        patch = self._patch(parent, commit.sha, paths)
        if not self.git.ok("read-tree", parent, env=self.index_env) or not self.git.ok(
            "apply", "--cached", "--check", "--whitespace=nowarn", "-", input=patch.encode("utf-8"), env=self.index_env
        ):
            raise Rejected("patch_does_not_apply")
        changed = {f.path: f.added + f.removed for f in diff.files}
        languages = []
        for path in paths:
            lang = language_for_path(path, decode(blobs[path]) if path.lower().endswith(".h") else None)
            languages.append((lang or "", changed[path]))
        files_sorted = sorted(paths)
        record: dict[str, Any] = {
            "instance_id": instance_id(self.repo, commit.sha),
            "repo": self.repo,
            "base_commit": parent,
            "problem_statement": problem,
            "ground_truth": {
                "read_core_files": files_sorted,
                "read_core_regions": [r.to_json() for r in regions],
                "read_optional_files_map": {},
                "read_optional_regions_map": {},
                "modified_core_files": files_sorted,
                "main_files": files_sorted,
            },
            "patch": patch,
            "language": majority_language(languages),
            "gt_source": "commit_diff",
            "commit": commit.sha,
            "dataset": "mined",
            "meta": {"committed_at": commit.date},
        }
        parse_record(record, where=record["instance_id"])  # the toolkit must be able to load it
        return record

    def _check_files(self, parent: str, files: list[ChangedFile]) -> None:
        """The file-level rules of step 5 (raises :class:`Rejected`)."""
        if not files:
            raise Rejected("no_changed_files")
        if len(files) > self.config.max_files:
            raise Rejected("too_many_files")
        by_status = {"A": "added_file", "D": "deleted_file", "R": "renamed_file", "C": "copied_file"}
        for f in files:
            if f.status != "M":
                raise Rejected(by_status.get(f.status, "type_change"))
        paths = [f.path for f in files]
        if not all(is_utf8_path(p) for p in paths):
            raise Rejected("non_utf8_path")
        if any(source_language(p) is None for p in paths):
            raise Rejected("non_source_file")

        def has_init(directory: str) -> bool:
            return self.git.ok("cat-file", "-e", f"{parent}:{directory}/__init__.py")

        self._rule("vendored_or_generated", any(is_vendored_or_generated(p, has_init) for p in paths))
        self._rule("test_file", any(is_test_path(p) for p in paths))

    def _patch(self, parent: str, sha: str, paths: Sequence[str]) -> str:
        """The record's patch: ``git diff`` with 3 context lines, limited to ``paths`` (raises on non-UTF-8)."""
        try:
            return self.git.run("diff", *DIFF_OPTIONS, parent, sha, "--", *paths).decode("utf-8")
        except UnicodeDecodeError:
            raise Rejected("non_utf8_diff") from None


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
    if not _REPO_NAME.match(repo):
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


def write_atomic(path: str | Path, text: str) -> None:
    """Write a text file atomically (a temporary file in the same directory, then ``os.replace``), with the
    permissions a plain ``open()`` would give it (``0666`` minus the umask).

    :param path: the target file; its directory is created.
    :param text: the content (written as UTF-8).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the file the permissions open() would
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_outputs(out: str | Path, records: Sequence[Mapping[str, Any]], report: MineReport) -> Path:
    """Write the bench JSONL and its report, each atomically.

    :param out: the bench JSONL path.
    :param records: the records, one JSON object per line (UTF-8, not ASCII-escaped).
    :param report: the run report, written to :func:`report_path`.
    :return: the report path.
    """
    write_atomic(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    rpath = report_path(out, keep_suffix=True)
    write_atomic(rpath, json.dumps({**report.to_dict(), "out": str(out)}, indent=1) + "\n")
    return rpath
