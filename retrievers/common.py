"""Helpers shared by the retrievers: the text a chunk is indexed by (top-n selection is the contract's:
:func:`~swe_explore.retrievers.base.top_hits`).

Persistence is not here: retrievers hand their index over as a :class:`~retrievers.base.RetrieverState` and
:mod:`indexes.files` reads and writes it.
"""

from __future__ import annotations

from collections.abc import Sequence

from swe_explore.chunking.types import Chunk

__all__ = ["DEFAULT_FIELDS", "FIELDS", "check_fields", "document_text"]

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
