"""The one chunk/region type used by every stage: chunker, index, retriever, packer and evaluator."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Chunk:
    """A contiguous range of lines of one file of a snapshot.

    The same type serves as a *chunk* (what an index holds) and as a *region* (what the packer emits and the
    evaluator scores). Lines follow :mod:`chunking.lines`: 1-based and inclusive, so ``start=3, end=4`` is two
    lines.

    :param path: repo-relative POSIX path, exactly as in the snapshot (no ``./`` prefix, ``/`` separators).
    :param start: first line, 1-based, inclusive (``1 <= start``).
    :param end: last line, 1-based, inclusive (``start <= end``).
    :param kind: what the range holds: ``function``, ``method``, ``class``, ``header``, ``definition``,
        ``gap``, ``window``, ``file`` or ``region`` (a packed union of chunks).
    :param symbol: qualified name of the definition (``Session.request``), ``""`` when there is none.
    :param language: language name (``python``, ``go``, ... or ``text`` for docs/config), ``""`` if unknown.
    :param text: the file's lines ``start..end`` joined with ``"\\n"``; ``""`` when the text was not loaded
        (chunks reloaded from a persisted index carry no text).
    :raises ValueError: if ``start < 1`` or ``end < start``.
    """

    path: str
    start: int
    end: int
    kind: str = "region"
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

    def to_region(self) -> dict[str, int | str]:
        """The SWE-Explore region dict ``{"path", "start", "end"}`` written to result rows."""
        return {"path": self.path, "start": self.start, "end": self.end}


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
