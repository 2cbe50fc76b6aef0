"""Retrievers by name: what scripts use for ``--retriever bm25|tfidf|potion|faiss|hybrid``.

- :func:`make_retriever` builds a retriever from its name and options, rejecting unknown names and options
  with a :class:`ValueError` that lists the valid ones.
- :func:`load_retriever` reads a saved retriever's ``retriever.json`` and dispatches to the right class's
  ``load``; a missing, truncated or edited file raises :class:`~retrievers.base.CorruptIndexError` naming it.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from swe_explore.retrievers.base import CorruptIndexError, Retriever
from swe_explore.retrievers.bm25 import BM25Retriever
from swe_explore.retrievers.common import META_FILE, read_meta
from swe_explore.retrievers.faiss_index import FaissRetriever
from swe_explore.retrievers.hybrid import HybridRetriever
from swe_explore.retrievers.potion import PotionRetriever
from swe_explore.retrievers.tfidf import TfidfRetriever

__all__ = ["RETRIEVERS", "make_retriever", "retriever_options", "load_retriever"]

#: Registry name -> retriever class.
RETRIEVERS: dict[str, type[Retriever]] = {
    cls.name: cls for cls in (BM25Retriever, TfidfRetriever, PotionRetriever, FaissRetriever, HybridRetriever)
}


def retriever_options(name: str) -> list[str]:
    """The keyword options a retriever accepts (its constructor's parameters).

    :param name: registry name.
    :return: option names in signature order.
    :raises ValueError: for an unknown name.
    """
    cls = _lookup(name)
    return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]


def _lookup(name: str) -> type[Retriever]:
    """The class registered under ``name``.

    :param name: registry name.
    :return: the class.
    :raises ValueError: for an unknown name, listing the valid ones.
    """
    try:
        return RETRIEVERS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown retriever {name!r}; valid: {', '.join(RETRIEVERS)}") from None


def make_retriever(name: str, **options: Any) -> Retriever:
    """Create an (unbuilt) retriever by name.

    ``make_retriever("bm25", k1=1.2)``, ``make_retriever("potion", model="/path/to/potion-base-8M")``,
    ``make_retriever("hybrid", parts=["bm25", "potion"], model=...)``.

    :param name: registry name (``bm25``, ``tfidf``, ``potion``, ``faiss`` or ``hybrid``).
    :param options: constructor options of that retriever.
    :return: the retriever.
    :raises ValueError: for an unknown name or option (listing the valid ones) or an invalid value.
    """
    cls = _lookup(name)
    valid = retriever_options(name)
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for retriever {name!r}; valid: {', '.join(valid)}")
    return cls(**options)


def load_retriever(directory: str | Path, model: str | None = None) -> Retriever:
    """Load any retriever saved with ``save``, dispatching on the name in its ``retriever.json``.

    :param directory: the directory ``save`` wrote.
    :param model: for embedding retrievers (``potion``, ``faiss``, a hybrid's embedding parts), the model to
        load the index with; ``None`` loads the recorded one. Ignored by retrievers without a model.
    :return: the retriever, ready to search.
    :raises CorruptIndexError: naming the file, if a file is missing, truncated, edited or inconsistent, the
        JSON names an unknown retriever, or an embedding index was built with another model (stale).
    :raises ValueError: if an embedding index's model cannot be loaded.
    """
    directory = Path(directory)
    meta = read_meta(directory, verify=False)  # the class's load verifies the files
    cls = RETRIEVERS.get(meta["name"])
    if cls is None:
        raise CorruptIndexError(
            directory / META_FILE, f"unknown retriever {meta['name']!r}; valid: {', '.join(RETRIEVERS)}"
        )
    if model is not None and "model" in inspect.signature(cls.load).parameters:
        return cls.load(directory, model=model)  # type: ignore[call-arg]
    return cls.load(directory)
