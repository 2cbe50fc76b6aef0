"""The selection rules of mining (:mod:`~swe_explore.benchprep.mine`, whose module docstring lists them in the
order they are tested): the rejection reasons and which rules can be switched off, the bot, message, trailer,
test-path and vendored/generated-code rules, the source-language test of changed files and the record's majority
language, and the region bounds check. Pure functions of strings and numbers: no git, no IO.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import PurePosixPath

from swe_explore.chunking.languages import TEXT, language_for_path
from swe_explore.chunking.types import Region
from swe_explore.chunking.walk import DEFAULT_EXCLUDE_DIRS, DEFAULT_TOP_LEVEL_GENERATED

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

TEST_MODES: tuple[str, ...] = ("reject", "read")
"""What ``MineConfig.tests`` (``--tests``) does with test files: ``reject`` a commit touching one (the
``test_file`` rule, the default), or ``read``: keep code changed together with its tests and label the tests'
old-side hunks as read core regions (``docs/mining.md``)."""

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


# -- messages ----------------------------------------------------------------------------------------------


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


_PR_MERGE = re.compile(r"^Merge pull request #(\d+) from \S+$")
_PR_SQUASH = re.compile(r"^(.*\S)\s+\(#(\d+)\)$")


def pull_request_text(message: str, merge: bool) -> tuple[str, int] | None:
    """The pull request's title and body in a merge or squash-merge commit message, as the query.

    - a merge commit (``merge=True``) whose subject is GitHub's ``Merge pull request #N from owner/branch``: the
      rest of the message (GitHub writes the PR title there, and its description when so configured);
    - a single-parent commit (``merge=False``) whose subject ends in `` (#N)`` (GitHub's squash merge): the
      subject without that suffix, then the body.

    Trailers are removed (:func:`strip_trailers`) from the result.

    :param message: the raw commit message.
    :param merge: whether the commit has two parents.
    :return: ``(text, N)``, or ``None`` when the message is not a pull request's or no text is left.
    """
    lines = message.replace("\r\n", "\n").split("\n")
    subject, rest = lines[0].strip(), "\n".join(lines[1:])
    if merge:
        matched = _PR_MERGE.match(subject)
        text = strip_trailers(rest) if matched else ""
    else:
        matched = _PR_SQUASH.match(subject)
        text = strip_trailers(matched.group(1) + "\n" + rest) if matched else ""
    if matched is None or not text:
        return None
    return text, int(matched.group(1) if merge else matched.group(2))


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

    :param path: a path from :func:`~swe_explore.benchprep.git.changed_files`.
    :return: ``False`` when it holds lone surrogates (bytes that are not UTF-8).
    """
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# -- paths -------------------------------------------------------------------------------------------------


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
