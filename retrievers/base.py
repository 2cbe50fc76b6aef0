"""The one retriever contract: build from chunks, search a query for the top-n chunks, save, load."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, Sequence

from swe_explore.chunking.types import Chunk


class CorruptIndexError(ValueError):
    """A persisted index file is missing, truncated, edited by hand or inconsistent.

    The message is ``"<path>: <reason>; rerun with --rebuild to rebuild it"``: the file, what is wrong, and the
    fix (``scripts/index_repos.py --rebuild``, or ``rebuild=True`` of :func:`indexes.build.ensure_index`).

    :param path: the offending file or directory.
    :param reason: what is wrong with it.
    """

    #: The fix, appended to every message.
    HINT = "rerun with --rebuild to rebuild it"

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}; {self.HINT}")


class Hit(NamedTuple):
    """One search result: the chunk's position in the index's chunk list and its score (higher is better)."""

    index: int
    score: float


class Retriever(ABC):
    """Ranks the chunks of one snapshot for a query.

    Subclasses set ``name`` and implement :meth:`build`, :meth:`search`, :meth:`save` and :meth:`load`. A
    retriever never sees files or regions: it maps a query to chunk positions ``0..n_docs-1`` in the order of
    the chunk list it was built from. Results are sorted by score, descending; ties keep chunk order
    (lower index first), so every ranking is deterministic.
    """

    name: ClassVar[str]

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """JSON-serialisable parameters that, with ``name``, identify the retriever's index."""

    @property
    @abstractmethod
    def n_docs(self) -> int:
        """Number of chunks the retriever was built from."""

    @abstractmethod
    def build(self, chunks: Sequence[Chunk]) -> None:
        """Index the chunks (their ``text``, ``path`` and ``symbol``).

        :param chunks: the snapshot's chunks, in index order.
        """

    @abstractmethod
    def search(self, query: str, top_n: int = 100) -> list[Hit]:
        """Rank chunks for a query.

        :param query: raw issue text.
        :param top_n: maximum number of hits (``>= 1``).
        :return: at most ``top_n`` hits, best first; ``[]`` when the query has no usable token or the index is
            empty. Chunks with a score ``<= 0`` are never returned.
        :raises ValueError: if ``top_n < 1``.
        """

    @abstractmethod
    def save(self, directory: Path) -> None:
        """Write the index into an existing, empty directory (JSON + numpy/faiss files, never pickle).

        :param directory: target directory; the caller makes the write atomic.
        """

    @classmethod
    @abstractmethod
    def load(cls, directory: Path) -> Retriever:
        """Load an index written by :meth:`save`.

        :param directory: the directory :meth:`save` wrote.
        :return: the retriever, ready to :meth:`search`.
        :raises CorruptIndexError: naming the file, if a file is missing, truncated or inconsistent.
        """
