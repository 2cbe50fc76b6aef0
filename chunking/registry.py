"""Named chunk strategies for the scripts, and chunking a whole snapshot with statistics.

``CHUNKERS`` maps a strategy name to its class; :func:`make_chunker` builds one from simple named options
(``make_chunker("function", max_lines=120)``); the ``--chunker NAME --max-lines 120`` flags of the commands are
in :mod:`swe_explore.commands._args`.
:func:`chunk_snapshot` walks a snapshot (:mod:`chunking.walk`) and chunks every file, returning the chunks in
deterministic order and a :class:`ChunkStats` for the index manifest; :func:`chunk_files` does the same for
files already walked. :class:`~chunking.window.Chunker` (the interface) is re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from swe_explore.chunking.treesitter import DEFINITION_KINDS, FunctionChunker, HybridChunker
from swe_explore.chunking.types import Chunk, SourceFile
from swe_explore.chunking.walk import WalkConfig, WalkStats, iter_source_files
from swe_explore.chunking.window import Chunker, FileChunker, WindowChunker

CHUNKERS: dict[str, type[Chunker]] = {
    "window": WindowChunker,
    "function": FunctionChunker,
    "hybrid": HybridChunker,
    "file": FileChunker,
}
"""Strategy name -> chunker class."""

DEFAULT_CHUNKER = "function"

__all__ = [
    "CHUNKERS",
    "DEFAULT_CHUNKER",
    "ChunkStats",
    "Chunker",
    "chunk_files",
    "chunk_snapshot",
    "chunker_options",
    "make_chunker",
]


def chunker_options(name: str) -> dict[str, object]:
    """The options of a strategy and their defaults.

    :param name: a key of :data:`CHUNKERS`.
    :return: option name -> default value (ints and bools).
    :raises ValueError: for an unknown strategy, listing the valid names.
    """
    cls = _chunker_class(name)
    return {f.name: f.default for f in fields(cls)}  # type: ignore[arg-type]


def _chunker_class(name: str) -> type[Chunker]:
    try:
        return CHUNKERS[name]
    except KeyError:
        raise ValueError(f"unknown chunker {name!r}; valid chunkers: {', '.join(CHUNKERS)}") from None


def make_chunker(name: str, **options: int | bool) -> Chunker:
    """Build a chunk strategy by name.

    :param name: a key of :data:`CHUNKERS` (``window``, ``function``, ``hybrid``, ``file``).
    :param options: the strategy's options, e.g. ``size=80, overlap=20`` or ``max_lines=120``.
    :return: the chunker.
    :raises ValueError: for an unknown name (listing all valid names), an option the strategy does not have
        (listing its options), an option of the wrong type, or an out-of-range value.
    """
    cls = _chunker_class(name)
    valid = chunker_options(name)
    for key, value in options.items():
        if key not in valid:
            listed = ", ".join(valid) if valid else "none"
            raise ValueError(f"chunker {name!r} has no option {key!r}; its options: {listed}")
        expected = type(valid[key])
        if isinstance(value, bool) != (expected is bool) or not isinstance(value, expected):
            raise ValueError(f"chunker {name!r}: option {key!r} must be {expected.__name__}, got {value!r}")
    return cls(**options)


@dataclass
class ChunkStats:
    """Statistics of chunking one snapshot (JSON-serialisable through :meth:`to_dict`).

    :param chunker: the strategy's :meth:`~chunking.window.Chunker.config`.
    :param walk: the walker's statistics (:meth:`chunking.walk.WalkStats.to_dict`).
    :param files: files chunked.
    :param lines: their total lines.
    :param chunks: chunks produced.
    :param lines_covered: distinct lines inside at least one chunk.
    :param definition_lines: distinct lines inside definition chunks (kinds in
        :data:`chunking.treesitter.DEFINITION_KINDS`).
    :param parse_errors: files whose parse tree holds ERROR or MISSING nodes.
    :param fallbacks: reason -> code files: windowed instead of chunked by their syntax (``too_large``,
        ``long_lines``, ``parse_error``), or with regions that a parse error stretched chunked from a re-parse
        (``reparse``) or, the re-parse limits reached, partly by windows (``hybrid_region``); see
        :attr:`chunking.window.FileReport.fallback`.
    :param stretched: regions found stretched by a parse error and cut, over all files (``function`` rule 2b).
    :param recovered_lines: lines of the chunks that came from those re-parses or windows.
    :param unchecked: stretch checks skipped because a file's re-parse budget was spent.
    :param kinds: chunk kind -> count.
    :param languages: language -> ``{"files", "lines", "chunks", "parse_errors"}``.
    """

    chunker: dict[str, object] = field(default_factory=dict)
    walk: dict[str, object] = field(default_factory=dict)
    files: int = 0
    lines: int = 0
    chunks: int = 0
    lines_covered: int = 0
    definition_lines: int = 0
    parse_errors: int = 0
    fallbacks: dict[str, int] = field(default_factory=dict)
    stretched: int = 0
    recovered_lines: int = 0
    unchecked: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    languages: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        """JSON-serialisable form for the index manifest.

        :return: the statistics as a dict (nested dicts sorted by key).
        """
        out = asdict(self)
        for key in ("fallbacks", "kinds", "languages"):
            out[key] = dict(sorted(out[key].items()))
        return out


def _covered(chunks: list[Chunk], kinds: frozenset[str] | None = None) -> int:
    """Distinct lines of one file's chunks (of the given kinds only, if any)."""
    intervals = sorted((c.start, c.end) for c in chunks if kinds is None or c.kind in kinds)
    total = 0
    cur_start = cur_end = 0
    for start, end in intervals:
        if start > cur_end:
            total += cur_end - cur_start + 1 if cur_end else 0
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    total += cur_end - cur_start + 1 if cur_end else 0
    return total


def _add_file(source: SourceFile, chunker: Chunker, stats: ChunkStats, chunks: list[Chunk]) -> None:
    """Chunk one file into ``chunks`` and count it in ``stats``."""
    file_chunks, report = chunker.chunk_file_report(source)
    file_chunks.sort(key=lambda c: (c.start, c.end))
    chunks.extend(file_chunks)
    n_lines = len(source.lines)
    stats.files += 1
    stats.lines += n_lines
    stats.chunks += len(file_chunks)
    stats.lines_covered += _covered(file_chunks)
    stats.definition_lines += _covered(file_chunks, DEFINITION_KINDS)
    lang = stats.languages.setdefault(source.language, {"files": 0, "lines": 0, "chunks": 0, "parse_errors": 0})
    lang["files"] += 1
    lang["lines"] += n_lines
    lang["chunks"] += len(file_chunks)
    if report.parse_error:
        stats.parse_errors += 1
        lang["parse_errors"] += 1
    if report.fallback:
        stats.fallbacks[report.fallback] = stats.fallbacks.get(report.fallback, 0) + 1
    stats.stretched += report.stretched
    stats.recovered_lines += report.recovered_lines
    stats.unchecked += report.unchecked
    for chunk in file_chunks:
        stats.kinds[chunk.kind] = stats.kinds.get(chunk.kind, 0) + 1


def chunk_files(
    files: Iterable[SourceFile], chunker: Chunker | str = DEFAULT_CHUNKER
) -> tuple[list[Chunk], ChunkStats]:
    """Chunk already-walked files (see :func:`chunking.walk.walk_snapshot`).

    :param files: the files, normally sorted by path as the walker returns them.
    :param chunker: a chunker, or a strategy name built with default options.
    :return: ``(chunks, stats)``: chunks in file order, then by start and end line; ``stats.walk`` is empty
        (the caller holds the walk statistics).
    :raises ValueError: for an unknown strategy name or a file of unknown language.
    """
    if isinstance(chunker, str):
        chunker = make_chunker(chunker)
    stats = ChunkStats(chunker=chunker.config())
    chunks: list[Chunk] = []
    for source in files:
        _add_file(source, chunker, stats, chunks)
    return chunks, stats


def chunk_snapshot(
    root: str | Path, chunker: Chunker | str = DEFAULT_CHUNKER, walk_config: WalkConfig | None = None
) -> tuple[list[Chunk], ChunkStats]:
    """Walk a snapshot and chunk every indexed file, reading one file at a time.

    An empty snapshot (or one of only skipped files) gives ``([], stats)`` with the reasons in
    ``stats.walk["skipped"]``; it never raises for that.

    :param root: the snapshot directory.
    :param chunker: a chunker, or a strategy name built with default options.
    :param walk_config: walker rules (default :class:`~chunking.walk.WalkConfig`).
    :return: ``(chunks, stats)``: chunks ordered by path, then start line, then end line.
    :raises FileNotFoundError: if ``root`` does not exist.
    :raises ValueError: for an unknown strategy name.
    """
    if isinstance(chunker, str):
        chunker = make_chunker(chunker)
    walk_stats = WalkStats()
    stats = ChunkStats(chunker=chunker.config())
    chunks: list[Chunk] = []
    for source in iter_source_files(root, walk_config, walk_stats):
        _add_file(source, chunker, stats, chunks)
    stats.walk = walk_stats.to_dict()
    return chunks, stats
