"""Gold regions from a unified diff: the OLD-file side of every hunk, parsed with the ``unidiff`` library.

A bench record's snapshot is the repository at ``base_commit``, i.e. *before* the change, so gold regions are
in **old-file coordinates** (1-based, inclusive lines, as :mod:`chunking.lines` counts them; git and unidiff
split on ``\\n`` the same way). Rules:

- **One region per hunk**, the hunk's old side: ``(path, source_start, source_start + source_length - 1)``.
  Context lines are part of the old side, so a diff made with context (``git diff``, 3 lines) gives wider
  regions than one made with ``-U0``; :mod:`benchprep.mine` parses a ``-U0`` diff so that regions hold only
  the removed/replaced lines.
- **Insert-only hunks** (old side length 0, e.g. ``@@ -10,0 +11,2 @@``) have no old lines. The one convention:
  the region is the old line the insertion follows, ``a = source_start`` when ``source_start >= 1``, else
  ``a = 1`` (an insertion at the top of the file, ``@@ -0,0 +1,2 @@``), giving ``(path, a, a)``.
- **Paths** come from the ``---``/``+++`` headers (unidiff checks that they agree with the ``diff --git``
  line; hunkless entries such as binary files, mode-only changes and pure renames have only the
  ``diff --git`` line, and git's ``rename from``/``rename to``/``copy from``/``copy to`` lines win when
  present). A C-quoted name (``"a/tab\\there.py"``, git's quoting of unusual bytes) is unquoted and decoded as
  UTF-8; the git prefix ``a/`` is stripped from the old side and ``b/`` from the new side when present; then
  :func:`evaluation.paths.normalize_path` (``\\`` -> ``/``, leading ``./`` removed). An absolute path, an empty
  one or one with a ``..`` segment is an error.
- **Only modified files give regions.** Every file of the diff is *reported* with one status
  (:data:`FILE_STATUSES`, first match in this order): ``added`` (old side ``/dev/null``), ``deleted`` (new side
  ``/dev/null``), ``submodule`` (mode ``160000``), ``symlink`` (mode ``120000``), ``copied``, ``renamed``
  (old path != new path, with or without content changes), ``binary``, ``modified`` (text hunks, with or
  without a mode change), ``mode_only`` (no hunks, the mode changed) and ``empty`` (no hunks, nothing else).
  Gold for the other statuses is not guessed: the caller decides what to do with them.
- ``\\ No newline at end of file`` markers and hunk-header section text (``@@ -10,3 +10,4 @@ def foo():``) do
  not affect regions. Each file is handled on its own: nothing carries over from one file to the next.

Source: unidiff (https://github.com/matiasb/python-unidiff), ``PatchSet``/``PatchedFile``/``Hunk``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from unidiff.errors import UnidiffParseError
from unidiff.patch import Hunk, PatchedFile, PatchSet

from swe_explore.chunking.types import Region
from swe_explore.evaluation.paths import normalize_path

DEV_NULL = "/dev/null"
"""The name a unified diff gives the missing side of an added or deleted file."""

FILE_STATUSES: tuple[str, ...] = (
    "added",
    "deleted",
    "submodule",
    "symlink",
    "copied",
    "renamed",
    "binary",
    "modified",
    "mode_only",
    "empty",
)
"""Every status a file of a diff can have, in the order they are tested (the first that applies wins)."""

SYMLINK_MODE = "120000"
"""git's file mode of a symbolic link."""

SUBMODULE_MODE = "160000"
"""git's file mode of a submodule (gitlink)."""

_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
"""git's C-style quoting (``quote_c_style``): escape letter -> byte."""


class DiffError(ValueError):
    """A diff that cannot be parsed or turned into regions; the message names the diff and the file."""


@dataclass(frozen=True)
class FileDiff:
    """One file of a diff.

    :param old_path: repo-relative POSIX path before the change, ``None`` for an added file.
    :param new_path: repo-relative POSIX path after the change, ``None`` for a deleted file.
    :param status: one of :data:`FILE_STATUSES`.
    :param regions: gold regions in old-file coordinates, one per hunk in diff order; empty unless
        ``status == "modified"``.
    :param old_mode: git file mode before (``100644``...), ``None`` if the diff does not say.
    :param new_mode: git file mode after, ``None`` if the diff does not say.
    :param added: lines added (all hunks).
    :param removed: lines removed (all hunks).
    """

    old_path: str | None
    new_path: str | None
    status: str
    regions: tuple[Region, ...] = ()
    old_mode: str | None = None
    new_mode: str | None = None
    added: int = 0
    removed: int = 0

    @property
    def path(self) -> str:
        """The old path, or the new path of an added file (the path a region of this file would have)."""
        path = self.old_path if self.old_path is not None else self.new_path
        assert path is not None  # a FileDiff always has at least one side
        return path


@dataclass(frozen=True)
class DiffRegions:
    """Every file of a diff with its status, and the gold regions of its modified files.

    :param files: one entry per file, in diff order.
    """

    files: tuple[FileDiff, ...]

    @property
    def regions(self) -> list[Region]:
        """All gold regions (of ``modified`` files), in diff order."""
        return [region for f in self.files for region in f.regions]

    @property
    def status_counts(self) -> dict[str, int]:
        """Status -> number of files, for reports (sorted by status)."""
        return dict(sorted(Counter(f.status for f in self.files).items()))

    def files_with_status(self, *statuses: str) -> list[FileDiff]:
        """The files whose status is one of ``statuses``.

        :param statuses: statuses from :data:`FILE_STATUSES`.
        :return: those files, in diff order.
        """
        return [f for f in self.files if f.status in statuses]


def unquote_c_style(name: str) -> str:
    """Undo git's C-style quoting of a path (``"a/sp\\303\\251cial\\tname.py"`` -> ``a/spécial<TAB>name.py``).

    A name not enclosed in double quotes is returned unchanged.

    :param name: a path as written in a diff header.
    :return: the unquoted path (UTF-8 decoded).
    :raises DiffError: on a dangling escape or a name that is not valid UTF-8.
    """
    if len(name) < 2 or not (name.startswith('"') and name.endswith('"')):
        return name
    body, out, i = name[1:-1], bytearray(), 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out += char.encode("utf-8")
            i += 1
            continue
        if i + 1 >= len(body):
            raise DiffError(f"dangling escape in quoted path {name!r}")
        nxt = body[i + 1]
        if nxt in _C_ESCAPES:
            out.append(_C_ESCAPES[nxt])
            i += 2
        elif body[i + 1 : i + 4].isdigit() and len(body[i + 1 : i + 4]) == 3:
            out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
            i += 4
        else:
            raise DiffError(f"unknown escape \\{nxt} in quoted path {name!r}")
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        raise DiffError(f"quoted path {name!r} is not valid UTF-8") from None


def diff_path(name: str | None, prefix: str) -> str | None:
    """A diff header name as a repo-relative POSIX path (see the module docstring's path rules).

    :param name: the name from the header (``a/pkg/x.py``, ``"b/odd\\tname.py"``, ``/dev/null``), or ``None``.
    :param prefix: the git prefix of this side, ``"a/"`` (old) or ``"b/"`` (new); stripped when present.
    :return: the path, or ``None`` for ``/dev/null`` or a missing name.
    :raises DiffError: if the path is empty, absolute or has a ``..`` segment, or its quoting is bad.
    """
    if name is None or name == DEV_NULL:
        return None
    path = unquote_c_style(name)
    path = normalize_path(path.removeprefix(prefix))
    if not path or path.startswith("/") or ".." in path.split("/"):
        raise DiffError(f"diff header names {name!r}, which is not a repo-relative path")
    return path


def _hunk_region(path: str, hunk: Hunk) -> Region:
    """The gold region of one hunk: its old side, or for an insert-only hunk the old line it follows.

    :param path: the file's old path.
    :param hunk: a parsed hunk (``source_start``/``source_length`` in old-file lines).
    :return: ``Region(path, start, end)`` with 1-based inclusive old-file lines (``1 <= start <= end``).
    :raises DiffError: if the hunk header is impossible (old side of length > 0 starting at line 0).
    """
    if hunk.source_length == 0:
        anchor = max(hunk.source_start, 1)
        return Region(path, anchor, anchor)
    if hunk.source_start < 1:
        raise DiffError(f"{path}: hunk {hunk!r} has old lines starting at line {hunk.source_start}")
    return Region(path, hunk.source_start, hunk.source_start + hunk.source_length - 1)


def _info_value(patched: PatchedFile, key: str) -> str | None:
    """The value of a git extended header line ``key value`` (``rename from x.py``), C-unquoted, or ``None``."""
    for line in patched.patch_info or ():
        if line.startswith(key + " "):
            return unquote_c_style(line[len(key) + 1 :].rstrip("\n"))
    return None


def _status(patched: PatchedFile, old_path: str | None, new_path: str | None, copied: bool) -> str:
    """The file's status: the first of :data:`FILE_STATUSES` that applies."""
    if old_path is None:
        return "added"
    if new_path is None:
        return "deleted"
    modes = {patched.source_mode, patched.target_mode}
    if SUBMODULE_MODE in modes:
        return "submodule"
    if SYMLINK_MODE in modes:
        return "symlink"
    if copied:
        return "copied"
    if old_path != new_path:
        return "renamed"
    if patched.is_binary_file:
        return "binary"
    if len(patched) > 0:
        return "modified"
    if None not in (patched.source_mode, patched.target_mode) and patched.source_mode != patched.target_mode:
        return "mode_only"
    return "empty"


def _file_diff(patched: PatchedFile, where: str = "<diff>") -> FileDiff:
    """Status, paths and regions of one parsed file.

    :param patched: one file of a :class:`unidiff.PatchSet`.
    :param where: what the diff is (file name, commit), for error messages.
    :return: the :class:`FileDiff`.
    :raises DiffError: on a bad path or hunk header (the message names ``where`` and the file).
    """
    try:
        old_path = diff_path(patched.source_file, "a/")
        new_path = diff_path(patched.target_file, "b/")
        copy_from, copy_to = _info_value(patched, "copy from"), _info_value(patched, "copy to")
        moved_from = _info_value(patched, "rename from") or copy_from
        moved_to = _info_value(patched, "rename to") or copy_to
        if moved_from is not None and old_path is not None:
            old_path = diff_path(moved_from, "")
        if moved_to is not None and new_path is not None:
            new_path = diff_path(moved_to, "")
        status = _status(patched, old_path, new_path, copied=copy_from is not None)
        regions: tuple[Region, ...] = ()
        if status == "modified":
            assert old_path is not None
            regions = tuple(_hunk_region(old_path, hunk) for hunk in patched)
    except DiffError as exc:
        raise DiffError(f"{where}: {exc}") from None
    return FileDiff(
        old_path=old_path,
        new_path=new_path,
        status=status,
        regions=regions,
        old_mode=patched.source_mode,
        new_mode=patched.target_mode,
        added=patched.added,
        removed=patched.removed,
    )


def parse_diff(text: str, where: str = "<diff>") -> DiffRegions:
    """Parse a unified diff (git or plain) into per-file statuses and old-side gold regions.

    :param text: the diff text (as ``git diff`` prints it; lines end with ``\\n``).
    :param where: what the diff is (file name, commit), used as the prefix of error messages.
    :return: the files in diff order with their regions (see the module docstring for the rules).
    :raises DiffError: if unidiff cannot parse the diff (a hunk shorter than its header says, a stray line),
        a path is bad, or one old path appears twice; the message starts with ``where``.
    """
    try:
        patch = PatchSet(text)
    except UnidiffParseError as exc:
        raise DiffError(f"{where}: malformed diff: {exc}") from None
    files = tuple(_file_diff(patched, where) for patched in patch)
    seen: set[tuple[str | None, str | None]] = set()
    for f in files:
        key = (f.old_path, f.new_path)
        if key in seen:
            raise DiffError(f"{where}: file {f.path} appears twice in the diff")
        seen.add(key)
    return DiffRegions(files=files)


def regions_from_diff(text: str, where: str = "<diff>") -> list[dict[str, str | int]]:
    """Gold regions of a diff as SWE-Explore region dicts (``read_core_regions`` entries).

    :param text: the diff text.
    :param where: what the diff is, for error messages.
    :return: ``[{"path", "start", "end"}, ...]`` in diff order, from ``modified`` files only (use
        :func:`parse_diff` to see the other files' statuses).
    :raises DiffError: as :func:`parse_diff`.
    """
    return [region.to_json() for region in parse_diff(text, where).regions]
