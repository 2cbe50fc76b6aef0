"""The chunker interface and the line-based strategies: ``window`` (reference-compatible) and ``file``.

Every chunker is a small frozen dataclass whose fields are its options (simple named ints/bools, so scripts can
pass ``--max-lines 120``); :meth:`Chunker.config` goes into the index manifest and
:meth:`Chunker.chunk_file` turns one :class:`~chunking.types.SourceFile` into :class:`~chunking.types.Chunk`
objects whose ``text`` is exactly the file's lines ``start..end`` joined with ``"\\n"``.

This module also holds the line-range helpers shared with :mod:`chunking.treesitter`: :func:`window_ranges`
(the reference stepping) and :func:`pack_ranges` / :func:`block_ranges` (non-overlapping, blank-line aligned
windows).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import ClassVar

from swe_explore.chunking.types import Chunk, SourceFile


@dataclass(frozen=True)
class FileReport:
    """How one file was chunked, for :class:`chunking.registry.ChunkStats`.

    :param parsed: the file was parsed with a tree-sitter grammar.
    :param parse_error: the parse tree holds ERROR or MISSING nodes.
    :param fallback: why a code file was chunked by windows instead of its syntax (``too_large``,
        ``long_lines``, ``parse_error``), or how regions that a parse error stretched were chunked instead
        (``reparse``: from a parse of their rows alone; ``hybrid_region``: some by hybrid's windows, the
        re-parse limits being reached); ``None`` otherwise.
    :param stretched: regions found stretched by a parse error and cut (``function`` rule 2b).
    :param recovered_lines: lines of the chunks that came from those re-parses or windows.
    :param unchecked: stretch checks skipped because the file's re-parse budget was spent (0 in practice).
    """

    parsed: bool = False
    parse_error: bool = False
    fallback: str | None = None
    stretched: int = 0
    recovered_lines: int = 0
    unchecked: int = 0


class Chunker(ABC):
    """A chunk strategy: one file in, non-empty chunks out, in line order.

    Subclasses are frozen dataclasses whose fields are the options; they set :attr:`name` and implement
    :meth:`chunk_file_report`.
    """

    name: ClassVar[str] = ""

    def config(self) -> dict[str, object]:
        """The strategy name and its options, for the index manifest.

        :return: ``{"name": ..., <option>: <value>, ...}``.
        """
        out: dict[str, object] = {"name": self.name}
        for f in fields(self):  # type: ignore[arg-type]
            out[f.name] = getattr(self, f.name)
        return out

    def chunk_file(self, source: SourceFile) -> list[Chunk]:
        """Chunk one file.

        :param source: the file, split into lines by :mod:`chunking.lines`.
        :return: its chunks sorted by ``(start, end)``; empty for a blank file.
        """
        return self.chunk_file_report(source)[0]

    @abstractmethod
    def chunk_file_report(self, source: SourceFile) -> tuple[list[Chunk], FileReport]:
        """Chunk one file and say how (parse errors, fallbacks).

        :param source: the file, split into lines by :mod:`chunking.lines`.
        :return: ``(chunks, report)``.
        """


def make_chunk(source: SourceFile, start: int, end: int, kind: str, symbol: str = "") -> Chunk:
    """A chunk of lines ``start..end`` (1-based, inclusive) of ``source`` with its exact text.

    :param source: the file.
    :param start: first line, 1-based.
    :param end: last line, 1-based, inclusive, ``<= len(source.lines)``.
    :param kind: chunk kind (``window``, ``function``, ...).
    :param symbol: qualified symbol name or ``""``.
    :return: the chunk, language taken from ``source``.
    :raises ValueError: if the range is outside the file.
    """
    if end > len(source.lines):
        raise ValueError(f"{source.path}: chunk {start}-{end} beyond the file's {len(source.lines)} lines")
    text = "\n".join(source.lines[start - 1 : end])
    return Chunk(source.path, start, end, kind, symbol, source.language, text)


def window_ranges(n_lines: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Line windows with the reference stepping (docs/metrics.md §2.2).

    Windows start at 0-based ``i = 0, step, 2*step, ...`` with ``step = size - overlap`` and cover lines
    ``i+1 .. min(i+size, n)``; iteration stops after the first window that reaches ``n``.
    Examples (80/20): ``n=80 -> [(1, 80)]``, ``n=81 -> [(1, 80), (61, 81)]``, ``n=100 -> [(1, 80), (61, 100)]``.

    :param n_lines: number of lines of the file (``>= 0``).
    :param size: window size in lines (``>= 1``).
    :param overlap: overlap in lines (``0 <= overlap < size``).
    :return: 1-based inclusive ``(start, end)`` pairs; ``[]`` when ``n_lines == 0``.
    :raises ValueError: for a size or overlap outside those bounds.
    """
    if size < 1:
        raise ValueError(f"window size must be >= 1, got {size}")
    if not 0 <= overlap < size:
        raise ValueError(f"window overlap must be in [0, size={size}), got {overlap}")
    step = size - overlap
    out = []
    i = 0
    while i < n_lines:
        end = min(i + size, n_lines)
        out.append((i + 1, end))
        if end >= n_lines:
            break
        i += step
    return out


def pack_ranges(segments: Sequence[tuple[int, int]], size: int) -> list[tuple[int, int]]:
    """Greedily pack sorted, disjoint line segments into pieces spanning at most ``size`` lines.

    A piece is a run of consecutive segments from the first segment's start to the last one's end. A segment
    that does not fit and is itself longer than ``size`` is cut: its head fills the open piece up to ``size``
    lines (when that cut falls inside the segment), the rest is cut into ``size``-line windows, and its
    remainder may join the segments that follow. Pieces never overlap, start and end on segment lines, and
    every segment line is in exactly one piece.

    :param segments: ``(start, end)`` inclusive pairs, sorted, non-overlapping (any consistent line base).
    :param size: maximum piece span in lines (``>= 1``).
    :return: the pieces as ``(start, end)`` pairs, in order.
    :raises ValueError: if ``size < 1``.
    """
    if size < 1:
        raise ValueError(f"piece size must be >= 1, got {size}")
    out: list[tuple[int, int]] = []
    cur_start = cur_end = -1
    for seg_start, seg_end in segments:
        if cur_start >= 0 and seg_end - cur_start + 1 <= size:
            cur_end = seg_end
            continue
        if cur_start >= 0:
            if seg_end - seg_start + 1 > size and cur_start + size > seg_start:  # cut anyway: fill the open piece
                out.append((cur_start, cur_start + size - 1))
                seg_start = cur_start + size
            else:
                out.append((cur_start, cur_end))
        while seg_end - seg_start + 1 > size:
            out.append((seg_start, seg_start + size - 1))
            seg_start += size
        cur_start, cur_end = seg_start, seg_end
    if cur_start >= 0:
        out.append((cur_start, cur_end))
    return out


def block_ranges(blank: Sequence[bool], start: int, end: int, size: int) -> list[tuple[int, int]]:
    """Non-overlapping windows of at most ``size`` lines aligned on blank lines, covering every non-blank line.

    Paragraphs (maximal runs of non-blank lines) within ``start..end`` are packed with :func:`pack_ranges`;
    this is how docs/config files and files that cannot be parsed are chunked by the syntax-aware strategies.

    :param blank: ``blank[i]`` is true when 0-based line ``i`` is empty or whitespace only.
    :param start: first 0-based line of the range.
    :param end: last 0-based line of the range, inclusive.
    :param size: maximum window span in lines.
    :return: 0-based inclusive ``(start, end)`` pairs, each starting and ending on a non-blank line.
    """
    paragraphs: list[tuple[int, int]] = []
    i = start
    while i <= end:
        if blank[i]:
            i += 1
            continue
        j = i
        while j + 1 <= end and not blank[j + 1]:
            j += 1
        paragraphs.append((i, j))
        i = j + 1
    return pack_ranges(paragraphs, size)


def blank_flags(lines: Sequence[str]) -> list[bool]:
    """Which lines are blank (empty or whitespace only).

    :param lines: the file's lines.
    :return: one flag per line.
    """
    return [not line.strip() for line in lines]


@dataclass(frozen=True)
class WindowChunker(Chunker):
    """Fixed line windows, exactly as the reference baselines chunk (docs/metrics.md §2.2), for every file.

    Windows follow :func:`window_ranges`; a window whose text is whitespace only is skipped (iteration still
    advances past it). Windows overlap by ``overlap`` lines; nothing else is trimmed or merged.

    :param size: window size in lines (default 80, as the reference).
    :param overlap: overlap between consecutive windows in lines (default 20, as the reference).
    :raises ValueError: if ``size < 1`` or ``overlap`` is outside ``[0, size)``.
    """

    name: ClassVar[str] = "window"
    size: int = 80
    overlap: int = 20

    def __post_init__(self) -> None:
        window_ranges(0, self.size, self.overlap)  # validates

    def chunk_file_report(self, source: SourceFile) -> tuple[list[Chunk], FileReport]:
        """Window one file.

        :param source: the file.
        :return: ``(windows, report)``; the report is empty (nothing is parsed).
        """
        chunks = []
        for start, end in window_ranges(len(source.lines), self.size, self.overlap):
            chunk = make_chunk(source, start, end, "window")
            if chunk.text.strip():
                chunks.append(chunk)
        return chunks, FileReport()


@dataclass(frozen=True)
class FileChunker(Chunker):
    """One chunk per whole file (kind ``file``, lines ``1..n``), for file-level retrieval.

    A file whose lines are all blank gives no chunk.
    """

    name: ClassVar[str] = "file"

    def chunk_file_report(self, source: SourceFile) -> tuple[list[Chunk], FileReport]:
        """One chunk for the file.

        :param source: the file.
        :return: ``([chunk], report)``, or ``([], report)`` for a blank file.
        """
        if not any(line.strip() for line in source.lines):
            return [], FileReport()
        return [make_chunk(source, 1, len(source.lines), "file")], FileReport()
