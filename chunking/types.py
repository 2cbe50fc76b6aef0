"""The types every stage shares: :class:`Chunk` (what an index holds), :class:`Region` (what an explorer returns
and the evaluator scores), :class:`ScoredChunk` (one entry of an explorer's ranking), :class:`ScoredRegion` (a
region with its score and, on request, its text) and :class:`SourceFile` (a walked file)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple


class Region(NamedTuple):
    """A region of a snapshot: ``(path, start, end)``, the unit explorers return and SWE-Explore scores.

    Lines follow :mod:`chunking.lines`: 1-based and inclusive, so ``Region("a.py", 3, 4)`` is two lines. In
    ground truth the reference evaluator's sentinels are kept as they are (``end == -1``: end of file; a negative
    ``start`` counts back from the end; ``start > end``: an empty range); they are resolved only when scored
    (:func:`swe_explore.evaluation.metrics.resolve_interval`). A region is a tuple, so ``path, start, end =
    region`` works and ``Region("a.py", 1, 2) == ("a.py", 1, 2)``.

    :param path: repo-relative POSIX path, exactly as in the snapshot.
    :param start: first line, 1-based (or a negative offset from the end of the file, in ground truth).
    :param end: last line, inclusive (or ``-1`` for the end of the file, in ground truth).
    """

    path: str
    start: int
    end: int

    @property
    def n_lines(self) -> int:
        """Number of lines ``end - start + 1`` (meaningful for resolved regions only)."""
        return self.end - self.start + 1

    def to_json(self) -> dict[str, Any]:
        """The SWE-Explore JSON form ``{"path", "start", "end"}`` written to result rows."""
        return {"path": self.path, "start": self.start, "end": self.end}

    @classmethod
    def from_json(cls, obj: Any) -> Region:
        """Parse the JSON form (or a ``(path, start, end)`` sequence, or a :class:`Chunk`), checking types only.

        :param obj: ``{"path": str, "start": int, "end": int}`` (extra keys ignored), a 3-item sequence, a
            :class:`Region` or a :class:`Chunk`.
        :return: the region, values unchanged (sentinels are resolved when scored).
        :raises ValueError: if a key is missing, the sequence does not have 3 items, the path is not a string or
            a line number is not an integer; the message shows the value.
        """
        if isinstance(obj, Chunk):
            return obj.region
        if isinstance(obj, Mapping):
            missing = [key for key in ("path", "start", "end") if key not in obj]
            if missing:
                raise ValueError(f"region {obj!r} lacks key(s) {missing}")
            path, start, end = obj["path"], obj["start"], obj["end"]
        elif isinstance(obj, (tuple, list)):
            if len(obj) != 3:
                raise ValueError(f"region {obj!r} has {len(obj)} items, expected 3 (path, start, end)")
            path, start, end = obj
        else:
            raise ValueError(f"region {obj!r} is a {type(obj).__name__}, expected an object with path/start/end")
        if not isinstance(path, str):
            raise ValueError(f"region {obj!r}: path must be a string")
        for value in (start, end):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"region {obj!r}: start and end must be integers")
        return cls(path, start, end)


@dataclass(frozen=True, slots=True)
class Chunk:
    """A contiguous range of lines of one file of a snapshot.

    Lines follow :mod:`chunking.lines`: 1-based and inclusive, so ``start=3, end=4`` is two lines; its
    :attr:`region` is what an explorer returns.

    :param path: repo-relative POSIX path, exactly as in the snapshot (no ``./`` prefix, ``/`` separators).
    :param start: first line, 1-based, inclusive (``1 <= start``).
    :param end: last line, 1-based, inclusive (``start <= end``).
    :param kind: what the range holds: ``function``, ``method``, ``class``, ``header``, ``definition``,
        ``gap``, ``window`` or ``file``.
    :param symbol: qualified name of the definition (``Session.request``), ``""`` when there is none.
    :param language: language name (``python``, ``go``, ... or ``text`` for docs/config), ``""`` if unknown.
    :param text: the file's lines ``start..end`` joined with ``"\\n"``; ``""`` when the text was not loaded
        (chunks reloaded from a persisted index carry no text).
    :raises ValueError: if ``start < 1`` or ``end < start``.
    """

    path: str
    start: int
    end: int
    kind: str = "window"
    symbol: str = ""
    language: str = ""
    text: str = ""

    def __post_init__(self) -> None:
        if self.start < 1 or self.end < self.start:
            raise ValueError(f"{self.path}: invalid line range {self.start}-{self.end} (1-based, inclusive)")

    @property
    def n_lines(self) -> int:
        """Number of lines in the range (``end - start + 1``)."""
        return self.end - self.start + 1

    @property
    def location(self) -> str:
        """``path:start-end`` plus ``(symbol)`` when there is one, for logs and tables."""
        loc = f"{self.path}:{self.start}-{self.end}"
        return f"{loc} ({self.symbol})" if self.symbol else loc

    @property
    def region(self) -> Region:
        """The chunk's lines as a :class:`Region`."""
        return Region(self.path, self.start, self.end)


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One file of a snapshot, decoded and split into lines by :mod:`chunking.lines`.

    :param path: repo-relative POSIX path.
    :param language: language name from :mod:`chunking.languages` (``python``, ``go``, ..., ``text``).
    :param lines: the file's lines (see :mod:`chunking.lines`); line ``i`` is ``lines[i - 1]``.
    :param n_bytes: size of the file on disk in bytes.
    """

    path: str
    language: str
    lines: list[str]
    n_bytes: int = 0

    @property
    def text(self) -> str:
        """The file's lines joined with ``"\\n"`` (what the chunkers parse)."""
        return "\n".join(self.lines)


class ScoredChunk(NamedTuple):
    """One entry of an explorer's ranking (``rank()``): a chunk and its score, higher is better.

    :param chunk: the ranked chunk (chunks of a persisted index carry no text).
    :param score: the explorer's score: the retriever's (after the ranking priors) or the learned ranker's.
    """

    chunk: Chunk
    score: float


class ScoredRegion(NamedTuple):
    """A region an explorer returns, with the score of the best-ranked chunk it contains and optionally its text.

    Lines are 1-based and inclusive, as in :class:`Region`; :attr:`region` drops the score and the text.

    :param path: repo-relative POSIX path.
    :param start: first line, 1-based.
    :param end: last line, inclusive.
    :param score: the score of the best-ranked chunk in the region (see :class:`ScoredChunk`).
    :param text: the snapshot's lines ``start..end`` joined with ``"\\n"``, or ``None`` when not requested.
    """

    path: str
    start: int
    end: int
    score: float
    text: str | None = None

    @property
    def region(self) -> Region:
        """The region without score and text."""
        return Region(self.path, self.start, self.end)
