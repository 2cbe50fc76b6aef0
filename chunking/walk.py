"""Snapshot walking: which files of a repository snapshot are indexed, decoded and split into lines.

Rules (documented in ``docs/chunking.md``):

- **Included**: source files of the ten languages and the docs/config files ground truth refers to
  (``pyproject.toml``, ``setup.cfg``, ``*.rst``, ``*.md``, ``pylintrc``, ...), by name via
  :func:`chunking.languages.language_for_path`. Everything else is skipped as ``unsupported_extension``.
- **Excluded directories** (pruned, never descended; counted per name in :attr:`WalkStats.excluded_dirs`):
  version-control, virtual-env, cache and dependency directories named in
  :attr:`WalkConfig.exclude_dirs` or ending in ``.egg-info``, at any depth; and ``build``/``dist``/``vendor``
  **only at the snapshot's top level and only when they contain no** ``__init__.py`` (a source package named
  ``build`` such as ``pkg/build/`` is always kept).
- **Ignore files** (:data:`IGNORE_FILES`, :attr:`WalkConfig.ignore_files`, on by default): the ``.gitignore`` and
  ``.ignore`` files of the folder, at its root and in any directory below, with git's semantics (patterns
  relative to the file's directory, ``!`` negation, ``dir/`` patterns matching directories only, the deepest
  file that has a matching pattern decides, last matching pattern wins; ``.ignore`` is read after ``.gitignore``
  of the same directory, so it wins). An ignored directory is pruned (skip reason ``ignored_dir``, counted once);
  an ignored file is skipped as ``ignored``. **Tracked files are never ignored**: in a git work tree (a folder
  with ``.git`` at its top) the paths git tracks (:func:`tracked_files`, one
  ``git ls-files`` per walk) and the directories above them are kept whatever the ignore files say, as git keeps
  them; without git (or when git fails) the ignore files alone decide. **Not applied to a bench snapshot** (a
  folder with :data:`SNAPSHOT_MARKER` at its top, made by ``materialize``): every file of a checkout is tracked,
  and git's ignore rules apply only to untracked files, so a snapshot is walked exactly as without ignore files.
- **Skipped files**, each counted by reason in :attr:`WalkStats.skipped` (the first few paths per reason are
  kept in :attr:`WalkStats.examples`): ``ignored`` and ``ignored_dir`` (above), ``snapshot_marker``
  (:data:`SNAPSHOT_MARKER` at the snapshot's top level,
  written by :mod:`swe_explore.benchprep.snapshots`), ``snapshot_history`` (its history,
  :data:`swe_explore.chunking.history.HISTORY_FILE`), ``undecodable_name`` (see below), ``unsupported_extension``,
  ``lock_file`` (``package-lock.json``, ``poetry.lock``, ...), ``too_large`` (more than
  :attr:`WalkConfig.max_file_bytes`), ``binary`` (a NUL byte in the first 8 KiB), ``empty`` (zero lines),
  ``unreadable`` (``OSError``), ``symlink_outside`` (a file symlink resolving outside the snapshot),
  ``broken_symlink``, ``symlink_dir`` (symlinks to directories are not followed), ``not_a_file``
  (sockets, FIFOs, devices) and ``text_excluded`` (docs/config when :attr:`WalkConfig.include_text` is off).
  Names are screened first, then symlinks, then lock files, then the extension. A file symlink resolving
  inside the snapshot is indexed under the symlink's own path.
- **File names**: paths are text (UTF-8). A file whose name, or a directory name above it, is not valid UTF-8
  (e.g. the bytes ``b"pkg/bad\\xffname.py"``) cannot be written to an index, a results file or a region, so it
  is skipped as ``undecodable_name`` and the rest of the snapshot is kept; :attr:`WalkStats.examples` shows it
  with the bad bytes escaped (``pkg/bad\\xffname.py``, see :func:`_display_path`).
- **Decoding**: :func:`chunking.lines.split_lines` (UTF-8 with U+FFFD for invalid bytes, BOM dropped, CRLF and
  lone CR handled; Python files with a PEP 263 encoding declaration are decoded with its codec, counted per
  codec in :attr:`WalkStats.declared_encodings`). Other files that are not valid UTF-8 are kept and counted in
  :attr:`WalkStats.non_utf8`.
- **Order**: sorted by repo-relative POSIX path (plain string order), so runs are deterministic.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pathspec import GitIgnoreSpec

from swe_explore.chunking.history import HISTORY_FILE
from swe_explore.chunking.history_git import GIT_OPTIONS, git_env  # the one fixed git environment
from swe_explore.chunking.languages import TEXT, language_for_path, needs_text
from swe_explore.chunking.lines import decode_source, split_text
from swe_explore.chunking.types import SourceFile

DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024
"""Files larger than this (8 MiB) are skipped as ``too_large``. A 5 MB minified bundle is still indexed
(by windows: see the parse guard of :class:`chunking.treesitter.FunctionChunker`)."""

BINARY_SNIFF_BYTES = 8192
"""A NUL byte within the first this many bytes marks a file as binary (the heuristic of git and grep)."""

DEFAULT_EXCLUDE_DIRS: frozenset[str] = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "node_modules",
        "bower_components",
        "jspm_packages",
        ".venv",
        "venv",
        ".virtualenv",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        ".ipynb_checkpoints",
        ".tox",
        ".nox",
        ".eggs",
        "site-packages",
        ".gradle",
        ".next",
        ".nuxt",
        ".parcel-cache",
        ".sass-cache",
        ".terraform",
    }
)
"""Directory names pruned at any depth (plus any name ending in ``.egg-info``)."""

DEFAULT_TOP_LEVEL_GENERATED: frozenset[str] = frozenset({"build", "dist", "vendor"})
"""Directory names pruned only at the snapshot root and only when they hold no ``__init__.py``."""

DEFAULT_LOCK_FILES: frozenset[str] = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "Pipfile.lock",
        "Cargo.lock",
        "composer.lock",
        "Gemfile.lock",
        "go.sum",
        "uv.lock",
        "pdm.lock",
    }
)
"""Generated dependency lock files, skipped as ``lock_file``."""

SNAPSHOT_MARKER = ".swe-explore-snapshot.json"
"""The file :mod:`swe_explore.benchprep.snapshots` writes at the top of each snapshot it makes (repo, base_commit,
instance_id, created_at). It is not part of the repository, so it is never indexed (skip reason
``snapshot_marker``)."""

IGNORE_FILES: tuple[str, ...] = (".gitignore", ".ignore")
"""The ignore files read in every directory, in this order (a later file's patterns win over an earlier one's)."""

_H_SNIFF_LINES = 5000
"""Lines of a ``.h`` header given to the C/C++ test of :func:`chunking.languages.language_for_path`."""

SKIP_REASONS: tuple[str, ...] = (
    "ignored",
    "ignored_dir",
    "snapshot_marker",
    "snapshot_history",
    "undecodable_name",
    "unsupported_extension",
    "lock_file",
    "too_large",
    "binary",
    "empty",
    "unreadable",
    "symlink_outside",
    "broken_symlink",
    "symlink_dir",
    "not_a_file",
    "text_excluded",
)
"""Every reason a file can be skipped for (keys of :attr:`WalkStats.skipped`)."""

MAX_SKIP_EXAMPLES = 3
"""Paths kept per skip reason in :attr:`WalkStats.examples` (the first ones in walk order)."""


def _display_path(rel: str) -> str:
    """A repo-relative path as printable text: bytes that are not UTF-8 (``os.fsdecode``'s lone surrogates) are
    written as ``\\xNN`` escapes, so the result can always be encoded, logged and written to JSON.

    :param rel: a path as returned by :func:`os.scandir` (may hold surrogate escapes).
    :return: the path, e.g. ``pkg/bad\\xffname.py`` (a backslash, ``x``, ``ff``) for the bytes
        ``b"pkg/bad\\xffname.py"``.
    """
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _is_utf8_name(rel: str) -> bool:
    """Whether a path decoded by ``os.fsdecode`` came from valid UTF-8 bytes (holds no lone surrogate)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass(frozen=True)
class WalkConfig:
    """What the snapshot walker includes.

    :param max_file_bytes: files larger than this many bytes are skipped as ``too_large`` (default 8 MiB).
    :param include_text: index docs/config files (language ``text``) as well as source code.
    :param exclude_dirs: directory names pruned at any depth (names ending in ``.egg-info`` always are).
    :param top_level_generated: directory names pruned only at the snapshot root and only when they contain
        no ``__init__.py`` (``build``, ``dist``, ``vendor``).
    :param lock_files: file names skipped as ``lock_file``.
    :param ignore_files: honour the folder's ``.gitignore``/``.ignore`` files (module docstring); never applied to
        a bench snapshot (one with :data:`SNAPSHOT_MARKER`), so for those both values walk the same files.
    :raises ValueError: if ``max_file_bytes < 1``.
    """

    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    include_text: bool = True
    exclude_dirs: frozenset[str] = DEFAULT_EXCLUDE_DIRS
    top_level_generated: frozenset[str] = DEFAULT_TOP_LEVEL_GENERATED
    lock_files: frozenset[str] = DEFAULT_LOCK_FILES
    ignore_files: bool = True

    def __post_init__(self) -> None:
        if self.max_file_bytes < 1:
            raise ValueError(f"max_file_bytes must be >= 1, got {self.max_file_bytes}")

    def to_dict(self) -> dict[str, object]:
        """JSON-serialisable form for the index manifest, the index key and every result row's explorer config
        (sets become sorted lists). ``ignore_files`` is written only when off (``"ignore_files": false``): the
        default's form is the one from before ignore files were read, so bench snapshots (which the walker never
        applies them to) keep their index keys and result rows byte for byte.

        :return: the config as a dict.
        """
        out: dict[str, object] = {
            "max_file_bytes": self.max_file_bytes,
            "include_text": self.include_text,
            "exclude_dirs": sorted(self.exclude_dirs),
            "top_level_generated": sorted(self.top_level_generated),
            "lock_files": sorted(self.lock_files),
        }
        if not self.ignore_files:
            out["ignore_files"] = False
        return out


@dataclass
class WalkStats:
    """What the walker saw, indexed and skipped (JSON-serialisable through :meth:`to_dict`).

    :param files_seen: regular files and symlinks visited (files inside excluded directories are not visited).
    :param files_indexed: files returned as :class:`~chunking.types.SourceFile`.
    :param lines: total lines of the indexed files (:mod:`chunking.lines`).
    :param bytes: total size in bytes of the indexed files.
    :param non_utf8: indexed files that are not valid UTF-8 and were decoded as UTF-8 with U+FFFD (no usable
        PEP 263 declaration).
    :param declared_encodings: codec -> indexed Python files decoded with the codec of their PEP 263 encoding
        declaration (``iso8859-1``, ``cp1252``, ...; UTF-8 declarations are not counted).
    :param skipped: skip reason (see :data:`SKIP_REASONS`) -> number of files (of directories for
        ``ignored_dir``, and for ``unreadable`` directories).
    :param examples: skip reason -> the first :data:`MAX_SKIP_EXAMPLES` skipped paths (repo-relative, written by
        :func:`_display_path`; a directory for an unreadable directory), so a user can find them.
    :param excluded_dirs: excluded directory name -> number of directories pruned.
    :param languages: language -> number of indexed files.
    """

    files_seen: int = 0
    files_indexed: int = 0
    lines: int = 0
    bytes: int = 0
    non_utf8: int = 0
    declared_encodings: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)
    excluded_dirs: dict[str, int] = field(default_factory=dict)
    languages: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str, path: str | None = None) -> None:
        """Count one skipped file, and keep its path among the reason's first :data:`MAX_SKIP_EXAMPLES`.

        :param reason: one of :data:`SKIP_REASONS`.
        :param path: the file's repo-relative path (may hold surrogate escapes; stored via :func:`_display_path`).
        """
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        if path is not None:
            kept = self.examples.setdefault(reason, [])
            if len(kept) < MAX_SKIP_EXAMPLES:
                kept.append(_display_path(path))

    def to_dict(self) -> dict[str, object]:
        """JSON-serialisable form for the index manifest (dicts sorted by key).

        :return: the statistics as a dict.
        """
        out = asdict(self)
        for key in ("declared_encodings", "skipped", "examples", "excluded_dirs", "languages"):
            out[key] = dict(sorted(out[key].items()))
        return out


def _is_excluded_dir(name: str, rel_dir: str, abs_dir: str, config: WalkConfig) -> bool:
    """Whether a directory is pruned (see the module docstring)."""
    if name in config.exclude_dirs or name.endswith(".egg-info"):
        return True
    if rel_dir == "" and name in config.top_level_generated:
        return not os.path.isfile(os.path.join(abs_dir, name, "__init__.py"))
    return False


_IgnoreRules = tuple[tuple[str, GitIgnoreSpec], ...]
"""The ignore files above a directory: (directory relative to the root, its patterns) pairs, root first."""


def _read_ignore_rules(abs_dir: str, rel_dir: str, names: set[str], rules: _IgnoreRules) -> _IgnoreRules:
    """``rules`` plus the ignore files (:data:`IGNORE_FILES`) of one directory, when it has any.

    :param abs_dir: the directory.
    :param rel_dir: its path relative to the root (``""`` for the root).
    :param names: the names of its entries (from the listing, so no extra system call when it has none).
    :param rules: the rules of the directories above.
    :return: the rules for its entries.
    """
    lines: list[str] = []
    for name in IGNORE_FILES:
        path = os.path.join(abs_dir, name)
        if name in names and os.path.isfile(path):
            try:
                with open(path, "rb") as handle:
                    lines.extend(handle.read().decode("utf-8", "replace").splitlines())
            except OSError:
                continue
    if not lines:
        return rules
    return (*rules, (rel_dir, _ignore_spec(lines)))


def _ignore_spec(lines: list[str]) -> GitIgnoreSpec:
    """The patterns of one directory's ignore files, read as git reads them where pathspec cannot compile a line.

    pathspec copies a bracket expression into a regex, so a reversed range (``[z-a]``) raises ``re.error`` for the
    whole file, and a trailing backslash raises ``GitIgnorePatternError`` (a ``ValueError``). Such a line is
    rewritten as git's wildmatch reads it (:func:`_as_git_reads_brackets`: ``[z-a]`` is ``[z]``, the range adding
    nothing), and dropped if it still does not compile (git never matches a pattern ending in a backslash); the
    other lines apply as they are.

    :param lines: the lines of the directory's ignore files, in order.
    :return: the compiled patterns.
    """
    try:
        return GitIgnoreSpec.from_lines(lines)
    except (ValueError, re.error):
        kept = [line if _compiles(line) else _as_git_reads_brackets(line) for line in lines]
        return GitIgnoreSpec.from_lines([line for line in kept if line is not None and _compiles(line)])


def _compiles(line: str) -> bool:
    """Whether pathspec compiles one ignore-file line on its own."""
    try:
        GitIgnoreSpec.from_lines([line])
    except (ValueError, re.error):
        return False
    return True


def _as_git_reads_brackets(line: str) -> str | None:
    """An ignore-file line with each bracket expression rewritten as the set git's wildmatch matches, for pathspec.

    git reads ``[...]`` left to right: ``\\x`` is ``x``; ``-`` between a previous character and another one
    (not ``]``) is a range, which adds nothing when reversed (``[z-a]`` matches ``z`` only, ``[b-a-c]`` matches
    ``b``, ``-`` and ``c``: after a range ``-`` is a character again); ``!`` or ``^`` first negates; a ``]`` first is
    a character. The set is written back with ``]`` first, the ranges, the other characters, then ``^`` and ``-``.

    :param line: one line of an ignore file.
    :return: the rewritten line; ``None`` for an expression left open or holding a POSIX class (``[:alpha:]``), or
        whose rewritten set would start with ``!`` or ``^`` (the caller then drops the line).
    """
    out: list[str] = []
    i, n = 0, len(line)
    while i < n:
        if line[i] == "\\":
            out.append(line[i : i + 2])
            i += 2
        elif line[i] != "[":
            out.append(line[i])
            i += 1
        else:
            parsed = _git_bracket(line, i)
            if parsed is None:
                return None
            i, text = parsed
            out.append(text)
    return "".join(out)


def _git_bracket(line: str, start: int) -> tuple[int, str] | None:
    """The bracket expression at ``line[start]`` (a ``[``) as :func:`_as_git_reads_brackets` rewrites it.

    :param line: the line.
    :param start: the index of its ``[``.
    :return: ``(index after the closing ], rewritten expression)``, or ``None`` (see the caller).
    """
    j, n = start + 1, len(line)
    negated = j < n and line[j] in "!^"
    j += negated
    chars: dict[str, None] = {}
    ranges: list[tuple[str, str]] = []
    previous, first = "", True
    while j < n and (first or line[j] != "]"):
        first, char = False, line[j]
        if char == "\\" and j + 1 < n:
            j += 1
            chars[line[j]] = None
            previous = line[j]
        elif char == "-" and previous and j + 1 < n and line[j + 1] != "]":
            j += 1
            if line[j] == "\\" and j + 1 < n:
                j += 1
            if previous <= line[j]:
                ranges.append((previous, line[j]))
            previous = ""
        elif char == "[" and line.startswith("[:", j):
            return None
        else:
            chars[char] = None
            previous = char
        j += 1
    if j >= n:
        return None
    text = _bracket_text(chars, ranges)
    return None if text is None else (j + 1, "[" + ("!" if negated else "") + text + "]")


def _bracket_text(chars: dict[str, None], ranges: list[tuple[str, str]]) -> str | None:
    """A bracket expression's set written for pathspec, which copies it into a regex and closes it at the first
    ``]`` after the first character: ``]`` first (a range over it split around it), then the ranges and
    characters, led by one that is not ``!`` or ``^`` (else read as a negation), and ``-`` last (or first).

    :param chars: the single characters, in order.
    :param ranges: the ``(low, high)`` ranges, low <= high.
    :return: the text between the brackets (without the negation), or ``None`` if it cannot be written.
    """
    lead, dash = "]" in chars, "-" in chars
    units: list[str] = []
    for low, high in ranges:
        pieces = [(low, high)]
        if low <= "]" <= high:  # ``]`` goes first, on its own
            lead = True
            pieces = [(low, chr(ord("]") - 1)), (chr(ord("]") + 1), high)]
        for a, b in pieces:
            if a == "-":  # a unit starting with ``-`` would join the one before it into a range
                dash, a = True, chr(ord("-") + 1)
            if a < b:
                units.append(f"{a}-{b}")
            elif a == b:
                chars[a] = None
    units += [c for c in chars if c not in "]^-"] + (["^"] if "^" in chars else [])
    if not lead:
        k = next((i for i, unit in enumerate(units) if unit[0] not in "!^"), None)
        if k is None:
            return "-" + "".join(units) if dash else None
        units.insert(0, units.pop(k))
    return ("]" if lead else "") + "".join(units) + ("-" if dash else "")


def _is_ignored(rel: str, is_dir: bool, rules: _IgnoreRules) -> bool:
    """Whether git would ignore a path: the deepest ignore file with a matching pattern decides (its last match).

    :param rel: the path relative to the root.
    :param is_dir: it is a directory (``dir/`` patterns match only directories).
    :param rules: the ignore files above it.
    :return: whether it is ignored.
    """
    ignored = False
    for base, spec in rules:
        sub = rel[len(base) + 1 :] if base else rel
        result = spec.check_file(sub + "/" if is_dir else sub).include
        if result is not None:
            ignored = result
    return ignored


def tracked_files(work_tree: Path) -> frozenset[str] | None:
    """The paths git tracks in a work tree: ``git ls-files -z --cached`` run in it, read-only (no optional locks,
    no fsmonitor hook), in the fixed git environment of :mod:`swe_explore.chunking.history_git`, never looking above
    ``work_tree`` for a repository.

    :param work_tree: the work tree's top directory (the one holding ``.git``).
    :return: its tracked paths relative to ``work_tree``, POSIX, decoded as :func:`os.fsdecode` decodes names (a
        submodule is one path); ``None`` when git cannot tell (git missing, not a work tree, git failed).
    """
    root = Path(work_tree).resolve()
    env = git_env() | {"GIT_OPTIONAL_LOCKS": "0", "GIT_CEILING_DIRECTORIES": str(root.parent)}
    command = ["git", *GIT_OPTIONS, "-c", "core.fsmonitor=false", "ls-files", "-z", "--cached"]
    try:
        proc = subprocess.run(command, capture_output=True, cwd=root, env=env, check=False, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return frozenset(os.fsdecode(path) for path in proc.stdout.split(b"\0") if path)


def _tracked(root: str) -> tuple[frozenset[str], frozenset[str]]:
    """The files git tracks in ``root`` when it is a work tree (``.git`` at its top), and every directory above
    one of them (a submodule counts as both); two empty sets when it is not one or git cannot tell."""
    if not os.path.lexists(os.path.join(root, ".git")):
        return frozenset(), frozenset()
    files = tracked_files(Path(root)) or frozenset()
    dirs = {path[:i] for path in files for i, char in enumerate(path) if char == "/"}
    return files, frozenset(dirs | files)


def _list_candidates(root: str, config: WalkConfig, stats: WalkStats) -> list[tuple[str, os.DirEntry[str], bool]]:
    """All file entries (and symlinks) under ``root`` outside excluded and ignored directories, sorted by relative
    path, each with whether an ignore file ignores it.

    Iterative (explicit stack), so directory depth never meets Python's recursion limit.
    """
    use_ignores = config.ignore_files and not os.path.isfile(os.path.join(root, SNAPSHOT_MARKER))
    tracked, tracked_dirs = _tracked(root) if use_ignores else (frozenset(), frozenset())
    found: list[tuple[str, os.DirEntry[str], bool]] = []
    stack: list[tuple[str, str, _IgnoreRules]] = [(root, "", ())]
    while stack:
        abs_dir, rel_dir, rules = stack.pop()
        try:
            entries = list(os.scandir(abs_dir))
        except OSError:
            stats.skip("unreadable", rel_dir or ".")
            continue
        if use_ignores:  # in name order, so the examples of ``ignored_dir`` do not depend on the file system
            entries.sort(key=lambda e: e.name)
            rules = _read_ignore_rules(abs_dir, rel_dir, {e.name for e in entries}, rules)
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.is_dir(follow_symlinks=False):
                if _is_excluded_dir(entry.name, rel_dir, abs_dir, config):
                    stats.excluded_dirs[entry.name] = stats.excluded_dirs.get(entry.name, 0) + 1
                elif rules and rel not in tracked_dirs and _is_ignored(rel, True, rules):
                    stats.skip("ignored_dir", rel)
                else:
                    stack.append((entry.path, rel, rules))
            else:
                found.append((rel, entry, bool(rules) and rel not in tracked and _is_ignored(rel, False, rules)))
    found.sort(key=lambda item: item[0])
    return found


def iter_source_files(
    root: str | Path, config: WalkConfig | None = None, stats: WalkStats | None = None
) -> Iterator[SourceFile]:
    """The indexed files of a snapshot in sorted path order, read lazily, counting everything in ``stats``.

    The root is checked at once; files are read one at a time as the iterator advances.

    :param root: the snapshot directory.
    :param config: walk rules; defaults to :class:`WalkConfig()`.
    :param stats: statistics object updated in place as files are visited (a fresh one if ``None``).
    :return: an iterator of :class:`~chunking.types.SourceFile` with repo-relative POSIX paths.
    :raises FileNotFoundError: if ``root`` does not exist.
    :raises NotADirectoryError: if ``root`` is not a directory.
    """
    config = config or WalkConfig()
    stats = stats if stats is not None else WalkStats()
    root_path = Path(root)
    if not root_path.exists():
        raise FileNotFoundError(f"snapshot root does not exist: {root_path}")
    if not root_path.is_dir():
        raise NotADirectoryError(f"snapshot root is not a directory: {root_path}")
    return _iter_files(root_path, config, stats)


def _iter_files(root_path: Path, config: WalkConfig, stats: WalkStats) -> Iterator[SourceFile]:
    """The generator behind :func:`iter_source_files` (which validates the root eagerly)."""
    real_root = os.path.realpath(root_path)
    for rel, entry, ignored in _list_candidates(str(root_path), config, stats):
        stats.files_seen += 1
        if ignored:
            stats.skip("ignored", rel)
            continue
        if rel == SNAPSHOT_MARKER:
            stats.skip("snapshot_marker", rel)
            continue
        if rel == HISTORY_FILE:
            stats.skip("snapshot_history", rel)
            continue
        if not _is_utf8_name(rel):
            stats.skip("undecodable_name", rel)
            continue
        if entry.is_symlink():
            target = os.path.realpath(entry.path)
            if not os.path.exists(target):
                stats.skip("broken_symlink", rel)
                continue
            if os.path.isdir(target):
                stats.skip("symlink_dir", rel)
                continue
            if os.path.commonpath([real_root, target]) != real_root:
                stats.skip("symlink_outside", rel)
                continue
        if entry.name in config.lock_files:
            stats.skip("lock_file", rel)
            continue
        language = language_for_path(entry.name)
        if language is None:
            stats.skip("unsupported_extension", rel)
            continue
        if language == TEXT and not config.include_text:
            stats.skip("text_excluded", rel)
            continue
        source = _read_source(entry.path, rel, language, config, stats)
        if source is not None:
            yield source


def _read_source(abs_path: str, rel: str, language: str, config: WalkConfig, stats: WalkStats) -> SourceFile | None:
    """Read, screen and decode one candidate file; ``None`` (and a counted reason) when it is skipped."""
    try:
        st = os.stat(abs_path)
        if not stat.S_ISREG(st.st_mode):  # what os.path.isfile tests, without a second stat
            stats.skip("not_a_file", rel)
            return None
        if st.st_size > config.max_file_bytes:
            stats.skip("too_large", rel)
            return None
        with open(abs_path, "rb") as handle:
            data = handle.read()
    except OSError:
        stats.skip("unreadable", rel)
        return None
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        stats.skip("binary", rel)
        return None
    text, codec = decode_source(data, pep263=language == "python")
    lines = split_text(text)
    if not lines:
        stats.skip("empty", rel)
        return None
    if needs_text(rel):
        language = language_for_path(rel, "\n".join(lines[:_H_SNIFF_LINES])) or language
    if codec is not None:
        stats.declared_encodings[codec] = stats.declared_encodings.get(codec, 0) + 1
    else:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            stats.non_utf8 += 1
    stats.files_indexed += 1
    stats.lines += len(lines)
    stats.bytes += len(data)
    stats.languages[language] = stats.languages.get(language, 0) + 1
    return SourceFile(path=rel, language=language, lines=lines, n_bytes=len(data))


def walk_snapshot(root: str | Path, config: WalkConfig | None = None) -> tuple[list[SourceFile], WalkStats]:
    """Read every indexed file of a snapshot (see the module docstring for the rules).

    An empty snapshot, or one holding only empty/binary/unsupported files, gives ``([], stats)`` whose
    :attr:`WalkStats.skipped` says why; it never raises for that.

    :param root: the snapshot directory.
    :param config: walk rules; defaults to :class:`WalkConfig()`.
    :return: ``(files, stats)``: files sorted by repo-relative POSIX path, and the walk statistics.
    :raises FileNotFoundError: if ``root`` does not exist (the message names it).
    :raises NotADirectoryError: if ``root`` is not a directory.
    """
    stats = WalkStats()
    files = list(iter_source_files(root, config, stats))
    return files, stats
