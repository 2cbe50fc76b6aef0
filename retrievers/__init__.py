"""Retrievers: rank a snapshot's chunks for an issue text (BM25, TF-IDF, Potion, FAISS, hybrid RRF).

The contract is in :mod:`retrievers.base`; retrievers are created by name through :mod:`retrievers.registry`
(imported lazily here, so ``import retrievers`` stays cheap). Retrievers do no file IO: saving and loading them
is :mod:`indexes.files`.
"""

from __future__ import annotations

from typing import Any

from swe_explore.retrievers.base import Hit, Retriever

__all__ = ["RETRIEVERS", "Hit", "Retriever", "make_retriever"]

_LAZY = ("RETRIEVERS", "make_retriever")


def __getattr__(name: str) -> Any:
    """Import the registry's names on first use (PEP 562).

    :param name: attribute name.
    :return: the registry attribute.
    :raises AttributeError: for names this package does not export.
    """
    if name in _LAZY:
        from swe_explore.retrievers import registry

        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
