"""Helpers shared by the retrievers: the text a chunk is indexed by, and top-n selection.

Persistence is not here: retrievers hand their index over as a :class:`~retrievers.base.RetrieverState` and
:mod:`indexes.files` reads and writes it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from swe_explore.chunking.types import Chunk
from swe_explore.retrievers.base import Hit

__all__ = ["DEFAULT_FIELDS", "FIELDS", "check_fields", "check_top_n", "document_text", "top_hits"]

#: Chunk fields that may make up a chunk's document text.
FIELDS = ("path", "symbol", "text")
#: Default document text: path, symbol and text (measured best on the dev set, see ``docs/retrievers.md``).
DEFAULT_FIELDS: tuple[str, ...] = ("path", "symbol", "text")


def check_fields(fields: Sequence[str]) -> tuple[str, ...]:
    """Validate a ``fields`` option.

    :param fields: chunk field names, a non-empty subset of :data:`FIELDS` without repeats.
    :return: the fields as a tuple.
    :raises ValueError: for an empty list, a repeat or an unknown field.
    """
    if isinstance(fields, str):
        fields = (fields,)
    out = tuple(fields)
    if not out or len(set(out)) != len(out) or any(f not in FIELDS for f in out):
        raise ValueError(f"fields must be a non-empty list of distinct names from {list(FIELDS)}, got {list(out)}")
    return out


def document_text(chunk: Chunk, fields: Sequence[str] = DEFAULT_FIELDS) -> str:
    """The text a retriever indexes for a chunk: the chosen fields joined by newlines.

    The path and symbol name matter because issues name files, classes and functions: with the default fields
    ``Chunk("xarray/core/dataset.py", 1, 2, symbol="Dataset.to_dict", text="...")`` is indexed as
    ``"xarray/core/dataset.py\\nDataset.to_dict\\n..."``. Empty fields are skipped.

    :param chunk: the chunk.
    :param fields: chunk attributes to use, in order (a subset of :data:`FIELDS`).
    :return: the document text.
    """
    return "\n".join(v for v in (getattr(chunk, f) for f in fields) if v)


def check_top_n(top_n: int) -> None:
    """Validate the ``top_n`` argument of ``Retriever.search``.

    :param top_n: requested number of hits.
    :raises ValueError: if ``top_n`` is not an integer ``>= 1``.
    """
    if isinstance(top_n, bool) or not isinstance(top_n, (int, np.integer)) or top_n < 1:
        raise ValueError(f"top_n must be an integer >= 1, got {top_n!r}")


def top_hits(scores: np.ndarray, top_n: int) -> list[Hit]:
    """The ``top_n`` best positive scores, best first, ties broken by lower index (the retriever contract).

    Runs in ``O(n + m log m)`` for ``n`` scores and ``m`` kept candidates (``np.argpartition`` first). NaN and
    scores ``<= 0`` are never returned.

    :param scores: one score per chunk, shape ``(n_docs,)``.
    :param top_n: maximum number of hits (``>= 1``).
    :return: the hits.
    :raises ValueError: if ``top_n < 1``.
    """
    check_top_n(top_n)
    scores = np.asarray(scores)
    idx = np.flatnonzero(scores > 0)
    if idx.size > top_n:
        vals = scores[idx]
        kth = np.partition(vals, idx.size - top_n)[idx.size - top_n]  # the top_n-th largest value
        idx = idx[vals >= kth]
    order = np.lexsort((idx, -scores[idx]))[:top_n]
    return [Hit(int(i), float(scores[i])) for i in idx[order]]
