"""Retrievers by name: what scripts use for ``--retriever bm25|tfidf|potion|faiss|hybrid``.

:func:`make_retriever` builds a retriever from its name and options, rejecting unknown names and options with a
:class:`ValueError` that lists the valid ones; a hybrid's parts given by name are made here first. Loading a saved
retriever by the name in its ``retriever.json`` is :func:`indexes.files.load_retriever`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from swe_explore.retrievers.base import Retriever
from swe_explore.retrievers.bm25 import BM25Retriever
from swe_explore.retrievers.faiss_index import FaissRetriever
from swe_explore.retrievers.hybrid import DEFAULT_PARTS, HybridRetriever
from swe_explore.retrievers.potion import PotionRetriever
from swe_explore.retrievers.tfidf import TfidfRetriever

__all__ = ["RETRIEVERS", "make_retriever", "retriever_options"]

#: Registry name -> retriever class.
RETRIEVERS: dict[str, type[Retriever]] = {
    cls.name: cls for cls in (BM25Retriever, TfidfRetriever, PotionRetriever, FaissRetriever, HybridRetriever)
}


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


def retriever_options(name: str) -> list[str]:
    """The keyword options :func:`make_retriever` accepts for a retriever (its class's ``options``).

    :param name: registry name.
    :return: option names, in the order the class declares them.
    :raises ValueError: for an unknown name.
    """
    return list(_lookup(name).options)


def make_retriever(name: str, **options: Any) -> Retriever:
    """Create an (unbuilt) retriever by name.

    ``make_retriever("bm25", k1=1.2)``, ``make_retriever("potion", model="/path/to/potion-base-8M")``,
    ``make_retriever("hybrid", parts=["bm25", "potion"], model=...)``.

    :param name: registry name (``bm25``, ``tfidf``, ``potion``, ``faiss`` or ``hybrid``).
    :param options: options of that retriever (:func:`retriever_options`).
    :return: the retriever.
    :raises ValueError: for an unknown name or option (listing the valid ones) or an invalid value.
    """
    cls = _lookup(name)
    unknown = sorted(set(options) - set(cls.options))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for retriever {name!r}; valid: {', '.join(cls.options)}")
    if cls is HybridRetriever:
        return _make_hybrid(**options)
    return cls(**options)


def _make_hybrid(
    parts: Sequence[Retriever | str | Mapping[str, Any]] = DEFAULT_PARTS, model: str | None = None, **options: Any
) -> HybridRetriever:
    """A hybrid whose parts are made from their names first.

    :param parts: at least two parts: instances, registry names (``"bm25"``, ``"potion"``, ...) or
        ``{"name": ..., "config": {...}}`` dicts (what ``HybridRetriever.config()`` records).
    :param model: model spec for the parts given by name or dict that take a ``model`` option (``potion``,
        ``faiss``) and do not set one.
    :param options: ``rrf_k`` (or its deprecated spelling ``k``), ``weights``, ``depth``.
    :return: the hybrid.
    :raises ValueError: for fewer than two parts, an unknown or hybrid part, or invalid options.
    """
    if isinstance(parts, (str, Mapping)) or len(parts) < 2:
        raise ValueError(f"hybrid needs at least two parts, got {parts!r}")
    made: list[Retriever] = []
    for part in parts:
        if isinstance(part, Retriever):
            made.append(part)
            continue
        if isinstance(part, str):
            name, part_options = part, {}
        elif isinstance(part, Mapping) and isinstance(part.get("name"), str):
            name, part_options = part["name"], dict(part.get("config") or {})
        else:
            raise ValueError(f"a hybrid part must be a Retriever, a name or {{'name', 'config'}}, got {part!r}")
        if _lookup(name) is HybridRetriever:
            raise ValueError("a hybrid part cannot itself be hybrid")
        if model is not None and "model" in _lookup(name).options:
            part_options.setdefault("model", model)
        made.append(make_retriever(name, **part_options))
    return HybridRetriever(made, **options)
