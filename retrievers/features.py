"""Shared features: what several retrievers built on the same chunks compute once between them.

Building BM25 and TF-IDF tokenizes every chunk; building Potion and FAISS embeds every chunk. When one build
makes several of them (``indexes.build.ensure_index`` with ``--retriever bm25 tfidf potion faiss hybrid``),
:func:`build_retrievers` computes each distinct feature once and hands it to every retriever that declared it:

- ``term_counts`` (:class:`TermCounts`): the chunks' term counts under one tokenizer config and one set of
  document fields; declared by :class:`~retrievers.bm25.BM25Retriever` and
  :class:`~retrievers.tfidf.TfidfRetriever`, so a snapshot is tokenized once for both.
- ``vectors``: the chunks' L2-normalised embedding vectors under one model (by weight fingerprint, not by
  path), ``max_length`` and set of fields; declared by :class:`~retrievers.potion.PotionRetriever` and
  :class:`~retrievers.faiss_index.FaissRetriever`, so a snapshot is embedded once for both.

A retriever takes part by implementing three optional methods (the :class:`SharesFeatures` protocol; the
:class:`~retrievers.base.Retriever` contract itself is unchanged, and a retriever without them is simply built
with ``build(chunks)``):

- ``feature_specs() -> dict[str, FeatureSpec]`` (or ``None``): the features it needs, by a local name;
- ``compute_feature(name, chunks)``: computes one of them (called for the first retriever needing it only);
- ``build_from_features(values)``: builds the index from ``{name: value}``.

Two specs are the same feature exactly when their kind and canonical JSON config are equal, so sharing never
depends on which retriever asked first: building retrievers together or one at a time gives the same indexes
(``tests/test_features.py``). Feature values are shared objects and must be treated as read-only.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np
import scipy.sparse as sp

from chunking.types import Chunk
from retrievers.base import Retriever

__all__ = [
    "FeatureSpec",
    "TermCounts",
    "SharesFeatures",
    "counts_from_tokens",
    "feature_specs_of",
    "build_retrievers",
]


@dataclass(frozen=True)
class FeatureSpec:
    """Identifies one shared feature: its kind and the canonical JSON of everything that determines its value.

    :param kind: e.g. ``"term_counts"`` or ``"vectors"``.
    :param config: canonical JSON (sorted keys, no spaces); build it with :meth:`make`.
    """

    kind: str
    config: str

    @classmethod
    def make(cls, kind: str, config: Mapping[str, Any]) -> FeatureSpec:
        """A spec from a JSON-serialisable config (canonicalised, so equal configs give equal specs).

        :param kind: the feature kind.
        :param config: what determines the value (tokenizer config, fields, model fingerprint, ...).
        :return: the spec.
        """
        return cls(kind, json.dumps(config, sort_keys=True, separators=(",", ":")))


@dataclass(frozen=True)
class TermCounts:
    """Term counts of a snapshot's chunks: the ``term_counts`` feature shared by BM25 and TF-IDF.

    :param terms: the distinct tokens, sorted by code point; ``terms[j]`` is column ``j``.
    :param counts: int32 CSR matrix ``(n_chunks, len(terms))`` with sorted indices: occurrences of each term in
        each chunk's document text.
    """

    terms: list[str]
    counts: sp.csr_matrix

    @property
    def n_docs(self) -> int:
        """Number of chunks (rows)."""
        return int(self.counts.shape[0])


def counts_from_tokens(docs: Sequence[Sequence[str]]) -> TermCounts:
    """Term counts of tokenized texts.

    :param docs: one token list per chunk (e.g. ``CodeTokenizer.tokenize`` of its document text).
    :return: the counts, terms sorted by code point (as scikit-learn's ``CountVectorizer`` sorts them).
    """
    terms = sorted({t for doc in docs for t in doc})
    column = {t: j for j, t in enumerate(terms)}
    lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
    cols = np.fromiter((column[t] for doc in docs for t in doc), dtype=np.int64, count=int(lengths.sum()))
    rows = np.repeat(np.arange(len(docs), dtype=np.int64), lengths)
    data = np.ones(cols.size, dtype=np.int32)
    counts = sp.csr_matrix((data, (rows, cols)), shape=(len(docs), len(terms)), dtype=np.int32)
    counts.sum_duplicates()
    counts.sort_indices()
    return TermCounts(terms, counts)


@runtime_checkable
class SharesFeatures(Protocol):
    """The optional methods through which a retriever shares features (see the module docstring)."""

    def feature_specs(self) -> dict[str, FeatureSpec] | None:
        """The features the retriever needs, by local name; ``None`` if it cannot build from features."""

    def compute_feature(self, name: str, chunks: Sequence[Chunk]) -> Any:
        """Compute the feature ``name`` of :meth:`feature_specs` for the chunks."""

    def build_from_features(self, values: Mapping[str, Any]) -> None:
        """Build the index from ``{name: value}`` for every name of :meth:`feature_specs`."""


def feature_specs_of(retriever: Retriever) -> dict[str, FeatureSpec] | None:
    """The features a retriever declares, or ``None`` when it does not share features.

    :param retriever: any retriever.
    :return: local name -> spec, or ``None``.
    """
    if not isinstance(retriever, SharesFeatures):
        return None
    return retriever.feature_specs()


def build_retrievers(retrievers: Sequence[Retriever], chunks: Sequence[Chunk]) -> dict[str, float]:
    """Build several retrievers on the same chunks, computing each shared feature once.

    Retrievers that declare no features are built with ``build(chunks)``. The result is the same as building
    each retriever alone (features are deterministic functions of their spec and the chunks).

    :param retrievers: unbuilt retrievers.
    :param chunks: the snapshot's chunks, with text, in index order.
    :return: seconds spent: one entry per feature kind computed (``"term_counts"``, ``"vectors"``, summed over
        distinct specs of that kind) and one per retriever position and name (``"0:bm25"``, ...) for the rest
        of its build.
    """
    values: dict[FeatureSpec, Any] = {}
    seconds: dict[str, float] = {}
    for i, retriever in enumerate(retrievers):
        specs = feature_specs_of(retriever)
        if specs is None:
            t0 = time.perf_counter()
            retriever.build(chunks)
            seconds[f"{i}:{retriever.name}"] = time.perf_counter() - t0
            continue
        mine: dict[str, Any] = {}
        for name, spec in specs.items():
            if spec not in values:
                t0 = time.perf_counter()
                values[spec] = retriever.compute_feature(name, chunks)
                seconds[spec.kind] = seconds.get(spec.kind, 0.0) + time.perf_counter() - t0
            mine[name] = values[spec]
        t0 = time.perf_counter()
        retriever.build_from_features(mine)
        seconds[f"{i}:{retriever.name}"] = time.perf_counter() - t0
    return seconds
