"""Where an issue's mentions land in a snapshot, as ranking features: :class:`MentionIndex` (look-up tables built
once per snapshot) and :func:`resolve_mentions` map what :func:`~swe_explore.explore.mentions.extract_mentions`
read onto the snapshot's files and chunks and sum, per file and per chunk, the features of
:data:`FEATURE_NAMES`:

- *Paths* (of frames and path mentions) match the snapshot file(s) sharing their longest path suffix, by
  path components. A match is valid when the whole snapshot path is a suffix of the mention
  (``/home/u/proj/src/x.py`` -> ``src/x.py``; ``.../site-packages/requests/api.py`` -> ``requests/api.py``),
  when a relative mention is a suffix of the snapshot path (``sessions.py`` -> ``requests/sessions.py``), or
  when at least two trailing components agree (``.../site-packages/flask/app.py`` -> ``src/flask/app.py``). So
  a stdlib or third-party frame resolves only if its file's suffix exists in the snapshot, never by base name
  alone. Ties keep every tied file.
- *Dotted module names* (``xarray.core.dataset.Dataset``): the longest prefix of at least two components that
  is a file's module path (``xarray/core/dataset.py``, ``pkg/__init__.py`` -> ``pkg``, also ``mod.rs`` and
  ``index.js``/``index.ts``) names that file (every file with that module path, whatever its extension); the
  rest (``Dataset``) is looked up among those files' symbols.
- *Identifiers* match definition chunks (kinds of :data:`~swe_explore.chunking.treesitter.DEFINITION_KINDS`)
  by symbol: *qualified* when the last two components agree (``Session.request`` ~ ``api.Session.request``;
  chain separators ``.``, ``::``, ``->``, ``#``, ``\\``, ``$`` are all equivalent), else *bare* when only the
  last component (the definition's own name) agrees. A chunk symbol listing merged definitions (``"a, b"``,
  see :mod:`~swe_explore.chunking.treesitter`) matches any of them.
- *Frames*: the frame's line selects the chunk(s) of its resolved file containing it; its function's last
  component selects that file's definitions of that name (robust to line drift between the reported version
  and the snapshot). A frame whose path does not resolve (or that has none) contributes only a qualified
  function match (``frame_symbol``), so a third-party ``in request`` frame never hits the project's
  ``request`` functions.

A mention that lands in ``n`` files adds ``1 / n`` to each (and to each of its chunks there), so a specific
mention weighs more than an ambiguous one; one that lands in more than ``max_files`` files (default
:data:`MAX_FILES`) is dropped as too ambiguous and counted in :attr:`ResolvedMentions.counts`.

Resolution is dictionary look-ups in tables built once per snapshot by :class:`MentionIndex` (base name -> paths,
module name -> paths, last symbol component(s) -> chunk indices).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from swe_explore.chunking.treesitter import DEFINITION_KINDS
from swe_explore.chunking.types import Chunk
from swe_explore.explore.mentions import IssueMentions, name_parts
from swe_explore.explore.trace_frames import normalize_path

__all__ = [
    "FEATURE_NAMES",
    "FEATURE_STRENGTH",
    "MAX_FILES",
    "MentionHit",
    "MentionIndex",
    "ResolvedMentions",
    "resolve_mentions",
]

MAX_FILES = 10
"""Default ``max_files``: a mention resolving to more files than this is too ambiguous to be a feature."""

FEATURE_NAMES: tuple[str, ...] = (
    "frame_line",
    "frame_function",
    "frame_file",
    "path_line",
    "path_file",
    "module_file",
    "frame_symbol",
    "identifier_qualified",
    "identifier_bare",
    "mention_score",
)
"""The features of :meth:`ResolvedMentions.file_features` and :meth:`ResolvedMentions.chunk_features`, always
all present (``0.0`` when nothing hit). Each is a sum of mention weights (``1 / n`` for a mention resolving to
``n`` files, see the module docstring), except ``mention_score``. A file-level value counts each mention once,
however many of the file's chunks it hits.

========================  ==============================================  ==============================================
feature                   chunk ``i``                                     file ``path``
========================  ==============================================  ==============================================
``frame_line``            frames whose line is inside the chunk           frames whose line is inside one of its chunks
``frame_function``        frames in the chunk's file whose function is    frames whose function is defined in the file
                          the chunk's definition name
``frame_file``            frames resolved to the chunk's file             frames resolved to the file
``path_line``             path mentions whose line is inside the chunk    path mentions whose line is inside one of its
                                                                          chunks
``path_file``             path mentions resolved to the chunk's file      path mentions resolved to the file
``module_file``           dotted module names of the chunk's file         dotted module names of the file
``frame_symbol``          frames without a resolved path whose function   such frames hitting one of its chunks
                          matches the chunk's symbol by two components
``identifier_qualified``  identifiers matching the chunk's symbol by two  such identifiers hitting one of its chunks
                          components (or module + symbol)
``identifier_bare``       identifiers without a qualified match whose     such identifiers hitting one of its chunks
                          last component is the definition's name
``mention_score``         the largest :data:`FEATURE_STRENGTH` among the  the same over the file's features
                          chunk's nonzero features
========================  ==============================================  ==============================================
"""

FEATURE_STRENGTH: Mapping[str, float] = MappingProxyType(
    {
        "frame_line": 1.0,
        "frame_function": 0.9,
        "frame_file": 0.8,
        "path_line": 0.7,
        "path_file": 0.6,
        "module_file": 0.55,
        "frame_symbol": 0.5,
        "identifier_qualified": 0.4,
        "identifier_bare": 0.2,
    }
)
"""How strongly each kind of hit points at a chunk or file, for ``mention_score``: a trace frame whose line is
inside the chunk > a frame naming the chunk's function > a frame in the file > a path mention > a qualified
identifier > a bare identifier."""

_FILE_KINDS = ("frame_file", "path_file", "module_file")
"""Features that belong to a whole file: every chunk of the file inherits them."""


# -- resolution --------------------------------------------------------------------------------------------

_MODULE_FILES = {"__init__", "mod", "index"}
_SIMPLE_SYMBOL = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
"""A chunk symbol that is already dotted identifiers (almost all), split without :func:`name_parts`."""


def _symbol_parts(symbol: str) -> list[tuple[str, ...]]:
    """The components of each definition a chunk symbol names (``"a, b"`` names two)."""
    out = []
    for name in symbol.split(", "):
        parts = tuple(name.split(".")) if _SIMPLE_SYMBOL.fullmatch(name) else name_parts(name)
        if parts:
            out.append(parts)
    return out


def _common_suffix(a: Sequence[str], b: Sequence[str]) -> int:
    n = 0
    for x, y in zip(reversed(a), reversed(b)):
        if x != y:
            break
        n += 1
    return n


@dataclass(frozen=True)
class MentionHit:
    """One place a mention landed (for explanations and tests).

    :param feature: the feature it adds to (a :data:`FEATURE_NAMES` entry other than ``mention_score``).
    :param mention: the mention's text (a frame as ``path:line (function)``).
    :param path: the snapshot file.
    :param chunk: the chunk index, or ``None`` for a file-level hit.
    :param weight: what it adds: ``1 / n`` for a mention landing in ``n`` files.
    """

    feature: str
    mention: str
    path: str
    chunk: int | None
    weight: float


@dataclass(frozen=True)
class ResolvedMentions:
    """Where an issue's mentions land in one snapshot, as ranking features (module docstring).

    :param file_hits: path -> nonzero features of the file (without ``mention_score``).
    :param chunk_hits: chunk index -> nonzero chunk-level features (without the file-level ones it inherits).
    :param hits: every hit, in mention order.
    :param counts: ``frames``, ``frames_resolved``, ``paths``, ``paths_resolved``, ``identifiers``,
        ``identifiers_resolved``, ``too_ambiguous`` (mentions dropped for landing in more than ``max_files``
        files).
    :param chunk_paths: the path of every chunk of the snapshot, by index.
    """

    file_hits: Mapping[str, Mapping[str, float]]
    chunk_hits: Mapping[int, Mapping[str, float]]
    hits: tuple[MentionHit, ...]
    counts: Mapping[str, int]
    chunk_paths: Sequence[str] = field(repr=False)

    def file_features(self, path: str) -> dict[str, float]:
        """The features of one file, every :data:`FEATURE_NAMES` entry present.

        :param path: repo-relative path (any path; unknown files give zeros).
        :return: feature name -> value.
        """
        return _with_score(self.file_hits.get(path, {}))

    def chunk_features(self, index: int) -> dict[str, float]:
        """The features of one chunk, every :data:`FEATURE_NAMES` entry present; file-level features
        (``frame_file``, ``path_file``, ``module_file``) are those of the chunk's file.

        :param index: chunk index in the sequence given to :class:`MentionIndex`.
        :return: feature name -> value.
        :raises IndexError: if ``index`` is out of range.
        """
        path = self.chunk_paths[index]
        merged = dict(self.chunk_hits.get(index, {}))
        file_values = self.file_hits.get(path, {})
        for kind in _FILE_KINDS:
            if kind in file_values:
                merged[kind] = file_values[kind]
        return _with_score(merged)

    def files_hit(self) -> list[str]:
        """Every file some mention landed in, strongest first (``mention_score``, then path).

        :return: repo-relative paths.
        """
        scores = {path: self.file_features(path)["mention_score"] for path in self.file_hits}
        return sorted(scores, key=lambda p: (-scores[p], p))

    def chunks_hit(self) -> list[int]:
        """Indices of the chunks with a chunk-level hit, ascending (chunks only inheriting file features are
        not listed).

        :return: chunk indices.
        """
        return sorted(self.chunk_hits)


def _with_score(values: Mapping[str, float]) -> dict[str, float]:
    """All :data:`FEATURE_NAMES` with ``values`` filled in and ``mention_score`` computed."""
    out = {name: 0.0 for name in FEATURE_NAMES}
    score = 0.0
    for kind, value in values.items():
        out[kind] = value
        if value > 0:
            score = max(score, FEATURE_STRENGTH[kind])
    out["mention_score"] = score
    return out


class _Accumulator:
    """Builds the feature maps and the hit list of a :class:`ResolvedMentions`."""

    def __init__(self) -> None:
        self.files: dict[str, dict[str, float]] = {}
        self.chunks: dict[int, dict[str, float]] = {}
        self.hits: list[MentionHit] = []

    def add(self, kind: str, mention: str, path: str, chunks: Sequence[int], weight: float) -> None:
        values = self.files.setdefault(path, {})
        values[kind] = values.get(kind, 0.0) + weight
        if not chunks:
            self.hits.append(MentionHit(kind, mention, path, None, weight))
        for index in chunks:
            chunk_values = self.chunks.setdefault(index, {})
            chunk_values[kind] = chunk_values.get(kind, 0.0) + weight
            self.hits.append(MentionHit(kind, mention, path, index, weight))


class MentionIndex:
    """Look-up tables of one snapshot for resolving mentions; build once, resolve many issues.

    Building is linear in files plus chunks; :meth:`resolve` costs dictionary look-ups per mention plus a scan
    of the chunks of the files a frame or path lands in.

    :param files: the snapshot's repo-relative POSIX paths (files without chunks are allowed; chunk paths
        missing from ``files`` are added).
    :param chunks: the snapshot's chunks (:class:`~swe_explore.chunking.types.Chunk`); chunk indices in
        results refer to this sequence.
    """

    def __init__(self, files: Iterable[str], chunks: Sequence[Chunk]) -> None:
        self.chunk_paths: list[str] = [c.path for c in chunks]
        self._chunks = chunks
        self._by_file: dict[str, list[int]] = {}
        for index, path in enumerate(self.chunk_paths):
            self._by_file.setdefault(path, []).append(index)
        all_files = dict.fromkeys(files)
        all_files.update(dict.fromkeys(self._by_file))
        self.files: tuple[str, ...] = tuple(all_files)
        self._file_set = frozenset(self.files)
        self._by_name: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        self._by_module: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        for path in self.files:
            parts = tuple(path.split("/"))
            self._by_name.setdefault(parts[-1], []).append((path, parts))
            stem = parts[-1].rsplit(".", 1)[0] if "." in parts[-1][1:] else ""
            if not stem:
                continue
            module = (*parts[:-1], stem) if stem not in _MODULE_FILES else parts[:-1]
            if module:
                self._by_module.setdefault(module[-1], []).append((path, module))
        # definition chunks by the last component (and by the last two) of each of their symbols
        self._by_last: dict[str, list[int]] = {}
        self._by_last2: dict[tuple[str, str], list[int]] = {}
        for index, chunk in enumerate(chunks):
            if chunk.symbol and chunk.kind in DEFINITION_KINDS:
                for parts in _symbol_parts(chunk.symbol):
                    self._by_last.setdefault(parts[-1], []).append(index)
                    if len(parts) >= 2:
                        self._by_last2.setdefault((parts[-2], parts[-1]), []).append(index)

    # -- primitive look-ups ---------------------------------------------------------------------------------

    def match_path(self, path: str) -> list[str]:
        """The snapshot files a path as written names, by longest path suffix (module docstring).

        :param path: a path as written (absolute, relative, Windows, ``file://``); a ``:line`` suffix is not
            stripped here.
        :return: the matching repo-relative paths (sorted); empty when none is valid.
        """
        norm = normalize_path(path)
        absolute = norm.startswith(("/", "~")) or bool(re.match(r"^[A-Za-z]:/", norm))
        parts = [p for p in norm.split("/") if p and p != "."]
        if ".." in parts:
            parts = parts[len(parts) - parts[::-1].index("..") :]
            absolute = True  # the part before is unknown
        if not parts:
            return []
        if not absolute and "/".join(parts) in self._file_set:
            return ["/".join(parts)]
        best, matches = 0, []
        for candidate, candidate_parts in self._by_name.get(parts[-1], []):
            k = _common_suffix(candidate_parts, parts)
            if k == len(candidate_parts) or (k == len(parts) and not absolute) or k >= 2:
                if k > best:
                    best, matches = k, [candidate]
                elif k == best:
                    matches.append(candidate)
        return sorted(matches)

    def match_module(self, parts: Sequence[str]) -> tuple[list[str], tuple[str, ...]]:
        """The files a dotted name's longest module prefix (at least two components) names, and the rest.

        :param parts: the name's components (``("xarray", "core", "dataset", "Dataset")``).
        :return: ``(files, remainder)``, e.g. ``(["xarray/core/dataset.py"], ("Dataset",))``; ``([], ())``
            when no prefix is a module.
        """
        for j in range(len(parts), 1, -1):
            prefix = tuple(parts[:j])
            found = [p for p, module in self._by_module.get(prefix[-1], []) if module[-j:] == prefix]
            if found:
                return sorted(found), tuple(parts[j:])
        return [], ()

    def chunks_at(self, path: str, line: int) -> list[int]:
        """Indices of the chunks of ``path`` containing ``line`` (1-based).

        :param path: repo-relative path.
        :param line: line number.
        :return: chunk indices, ascending.
        """
        chunks = self._chunks
        return [i for i in self._by_file.get(path, []) if chunks[i].start <= line <= chunks[i].end]

    def definitions(self, parts: Sequence[str], qualified: bool, path: str | None = None) -> list[int]:
        """Definition chunks whose symbol matches a name's components.

        :param parts: the name's components (see :func:`name_parts`).
        :param qualified: match the last two components (``Session.request``) instead of the last one only.
        :param path: only chunks of this file, when given.
        :return: chunk indices, ascending.
        """
        if not parts or (qualified and len(parts) < 2):
            return []
        found = self._by_last2.get((parts[-2], parts[-1]), []) if qualified else self._by_last.get(parts[-1], [])
        if path is not None:
            found = [i for i in found if self.chunk_paths[i] == path]
        return sorted(set(found))

    def _in_file_with_suffix(self, path: str, suffix: Sequence[str]) -> list[int]:
        """Definition chunks of ``path`` whose symbol ends with ``suffix`` (module-qualified names)."""
        n, wanted, chunks = len(suffix), tuple(suffix), self._chunks
        return [
            i
            for i in self._by_file.get(path, [])
            if chunks[i].symbol
            and chunks[i].kind in DEFINITION_KINDS
            and any(p[-n:] == wanted for p in _symbol_parts(chunks[i].symbol) if len(p) >= n)
        ]

    # -- resolution ----------------------------------------------------------------------------------------

    def resolve(self, mentions: IssueMentions, max_files: int = MAX_FILES) -> ResolvedMentions:
        """Resolve an issue's mentions against this snapshot.

        :param mentions: what :func:`extract_mentions` read.
        :param max_files: a mention landing in more files than this is dropped as too ambiguous.
        :return: the features per file and chunk, the hit list and counts.
        :raises ValueError: if ``max_files < 1``.
        """
        if max_files < 1:
            raise ValueError(f"max_files must be >= 1, got {max_files}")
        acc = _Accumulator()
        counts = dict.fromkeys(
            ("frames", "frames_resolved", "paths", "paths_resolved", "identifiers", "identifiers_resolved"), 0
        )
        counts["too_ambiguous"] = 0

        def spread(kind: str, label: str, by_file: Mapping[str, list[int]]) -> bool:
            if not by_file:
                return False
            if len(by_file) > max_files:
                counts["too_ambiguous"] += 1
                return False
            weight = 1.0 / len(by_file)
            for path, chunk_ids in by_file.items():
                acc.add(kind, label, path, chunk_ids, weight)
            return True

        def group(chunk_ids: Iterable[int]) -> dict[str, list[int]]:
            out: dict[str, list[int]] = {}
            for i in chunk_ids:
                out.setdefault(self.chunk_paths[i], []).append(i)
            return out

        for frame in mentions.frames:
            counts["frames"] += 1
            label = (
                f"{frame.path}:{frame.line} ({frame.function})" if frame.line else f"{frame.path} ({frame.function})"
            )
            parts = name_parts(frame.function) if frame.function else ()
            files = self.match_path(frame.path) if frame.path else []
            if files and spread("frame_file", label, {f: [] for f in files}):
                counts["frames_resolved"] += 1
                if frame.line is not None:
                    spread("frame_line", label, {f: c for f in files if (c := self.chunks_at(f, frame.line))})
                if parts:
                    spread("frame_function", label, {f: c for f in files if (c := self.definitions(parts, False, f))})
            elif len(parts) >= 2 and spread("frame_symbol", label, group(self.definitions(parts, True))):
                counts["frames_resolved"] += 1

        for mention in mentions.paths:
            counts["paths"] += 1
            label = f"{mention.text}:{mention.line}" if mention.line else mention.text
            files = self.match_path(mention.text)
            if files and spread("path_file", label, {f: [] for f in files}):
                counts["paths_resolved"] += 1
                if mention.line is not None:
                    spread("path_line", label, {f: c for f in files if (c := self.chunks_at(f, mention.line))})

        for mention in mentions.identifiers:
            counts["identifiers"] += 1
            parts = name_parts(mention.text)
            if not parts:
                continue
            resolved = False
            module_files, rest = self.match_module(parts) if len(parts) >= 2 else ([], ())
            if module_files:
                resolved = spread("module_file", mention.text, {f: [] for f in module_files})
                if rest:
                    found = {f: c for f in module_files if (c := self._in_file_with_suffix(f, rest))}
                    resolved = spread("identifier_qualified", mention.text, found) or resolved
                    if found:
                        counts["identifiers_resolved"] += 1
                        continue
                elif resolved:
                    counts["identifiers_resolved"] += 1
                    continue
            qualified = group(self.definitions(parts, True))
            if qualified:
                resolved = spread("identifier_qualified", mention.text, qualified) or resolved
            else:
                resolved = spread("identifier_bare", mention.text, group(self.definitions(parts, False))) or resolved
            counts["identifiers_resolved"] += int(resolved)

        return ResolvedMentions(
            file_hits=MappingProxyType({p: MappingProxyType(v) for p, v in acc.files.items()}),
            chunk_hits=MappingProxyType({i: MappingProxyType(v) for i, v in acc.chunks.items()}),
            hits=tuple(acc.hits),
            counts=MappingProxyType(counts),
            chunk_paths=self.chunk_paths,
        )


def resolve_mentions(
    mentions: IssueMentions, files: Iterable[str], chunks: Sequence[Chunk], max_files: int = MAX_FILES
) -> ResolvedMentions:
    """Resolve an issue's mentions against a snapshot (builds a :class:`MentionIndex`; build that once
    instead when resolving several issues on one snapshot).

    :param mentions: what :func:`extract_mentions` read.
    :param files: the snapshot's repo-relative POSIX paths.
    :param chunks: the snapshot's chunks; chunk indices in the result refer to this sequence.
    :param max_files: a mention landing in more files than this is dropped as too ambiguous.
    :return: the features per file and chunk, the hit list and counts.
    :raises ValueError: if ``max_files < 1``.
    """
    return MentionIndex(files, chunks).resolve(mentions, max_files)
