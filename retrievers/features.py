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

A retriever takes part through three methods of the :class:`~retrievers.base.Retriever` contract, whose defaults
mean "no shared features" (such a retriever is simply built with ``build(chunks)``):

- ``feature_specs() -> dict[str, FeatureSpec] | None``: the features it needs, by a local name;
- ``compute_feature(name, chunks)``: computes one of them (called for the first retriever needing it only);
- ``build_from_features(values)``: builds the index from ``{name: value}``.

BM25 and TF-IDF get these methods from :class:`TermCountsRetriever`, Potion and FAISS from
:class:`retrievers.potion.EmbeddingRetriever` (next to the embedding code it uses).

Two specs are the same feature exactly when their kind and canonical JSON config are equal, so sharing never
depends on which retriever asked first: building retrievers together or one at a time gives the same indexes
(``tests/test_features.py``). Feature values are shared objects and must be treated as read-only.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np
import scipy.sparse as sp

from swe_explore.chunking.types import Chunk
from swe_explore.retrievers.base import FeatureSpec, InvalidStateError, Retriever, RetrieverState
from swe_explore.retrievers.common import document_text

if TYPE_CHECKING:
    from swe_explore.retrievers.tokenize import CodeTokenizer

__all__ = [
    "TermCounts",
    "TermCountsRetriever",
    "build_retrievers",
    "count_terms",
    "counts_from_tokens",
]


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


def count_terms(tokenizer: CodeTokenizer, texts: Sequence[str]) -> TermCounts:
    """Term counts of texts under a tokenizer: ``counts_from_tokens([tokenizer.tokenize(t) for t in texts])``,
    equal to the last bit, computed per distinct word instead of per occurrence.

    Counts do not depend on the order of the words, so the texts' words are found and hashed in bulk
    (:func:`~retrievers.tokenize.word_codes`), each distinct word is tokenized once
    (:meth:`~retrievers.tokenize.CodeTokenizer.word_tokens`), and the counts are the sparse product of a
    (text x word) occurrence matrix and the (word x term) matrix :func:`counts_from_tokens` makes of the distinct
    words' tokens. On astropy (26,877 chunks) 1.9-2.1 s -> 1.1-1.6 s.

    :param tokenizer: the tokenizer.
    :param texts: one text per row.
    :return: the counts, as :func:`counts_from_tokens` returns them (terms by code point, int32, sorted indices).
    """
    from swe_explore.retrievers.tokenize import word_codes

    distinct, rows, codes = word_codes(texts)
    word_terms = counts_from_tokens([tokenizer.word_tokens(w) for w in distinct])
    occurrences = sp.csr_matrix(
        (np.ones(codes.size, dtype=np.int32), (rows, codes)), shape=(len(texts), len(distinct)), dtype=np.int32
    )
    product = (occurrences @ word_terms.counts).tocsr()
    product.sort_indices()
    counts = sp.csr_matrix(
        (product.data.astype(np.int32), product.indices, product.indptr), shape=(len(texts), len(word_terms.terms))
    )
    return TermCounts(word_terms.terms, counts)


_T = TypeVar("_T", bound="TermCountsRetriever")


class TermCountsRetriever(Retriever):
    """Base of the retrievers built from the shared ``term_counts`` feature (BM25 and TF-IDF).

    It supplies the feature methods (:meth:`feature_specs`, :meth:`compute_feature`), :meth:`build`,
    :meth:`tokenize_chunks` and the first steps of ``from_state`` (:meth:`_from_config`,
    :meth:`_vocabulary`). A subclass sets ``tokenizer`` and ``fields`` in its ``__init__``, names itself in
    :attr:`display_name`, and implements
    :meth:`build_from_features` (what it makes of the counts) and the rest of the
    :class:`~retrievers.base.Retriever` contract.
    """

    #: The retriever's name in error messages (``"BM25"``, ``"TF-IDF"``).
    display_name: ClassVar[str]
    #: Tokenizer of the chunks' document texts and of queries.
    tokenizer: CodeTokenizer
    #: Chunk fields of the document text (:func:`~retrievers.common.document_text`).
    fields: tuple[str, ...]

    def tokenize_chunks(self, chunks: Sequence[Chunk]) -> list[list[str]]:
        """Token lists of the chunks' document texts (what :meth:`build` indexes).

        :param chunks: the chunks.
        :return: one token list per chunk.
        """
        tokenize = self.tokenizer.tokenize
        return [tokenize(document_text(c, self.fields)) for c in chunks]

    def feature_specs(self) -> dict[str, FeatureSpec]:
        """The shared feature this retriever builds from: ``term_counts`` under its tokenizer config and fields.

        BM25 and TF-IDF retrievers with the same tokenizer config and fields declare the same spec, so building
        both in one :func:`build_retrievers` call tokenizes the snapshot once.

        :return: ``{"counts": spec}``.
        """
        config = {"tokenizer": self.tokenizer.config(), "fields": list(self.fields)}
        return {"counts": FeatureSpec.make("term_counts", config)}

    def compute_feature(self, name: str, chunks: Sequence[Chunk]) -> TermCounts:
        """Compute the ``counts`` feature: the chunks' term counts.

        :param name: ``"counts"``.
        :param chunks: the chunks.
        :return: the term counts.
        :raises ValueError: for another name.
        """
        if name != "counts":
            raise ValueError(f"{self.display_name} has no feature {name!r}; it has 'counts'")
        return count_terms(self.tokenizer, [document_text(c, self.fields) for c in chunks])

    def build(self, chunks: Sequence[Chunk]) -> None:
        """Tokenize and count the chunks' document texts, then build from the counts (:meth:`build_from_features`).

        :param chunks: the snapshot's chunks, in index order.
        """
        self.build_from_features({"counts": self.compute_feature("counts", chunks)})

    @abstractmethod
    def build_from_features(self, values: Mapping[str, Any]) -> None:
        """Build from the ``counts`` feature (read, never modified); check it with :meth:`_counts_of`.

        :param values: ``{"counts": TermCounts}``.
        :raises ValueError: if the feature is missing or is not a :class:`TermCounts`.
        """

    def _counts_of(self, values: Mapping[str, Any]) -> TermCounts:
        """The ``counts`` feature of :meth:`build_from_features`'s argument.

        :param values: ``{"counts": TermCounts}``.
        :return: the term counts.
        :raises ValueError: if the feature is missing or is not a :class:`TermCounts`.
        """
        counts = values.get("counts")
        if not isinstance(counts, TermCounts):
            raise ValueError(f"{self.display_name} builds from {{'counts': TermCounts}}, got {sorted(values)}")
        return counts

    @classmethod
    def _from_config(cls: type[_T], config: Mapping[str, Any]) -> _T:
        """The first step of ``from_state``: the retriever (without its index) of a saved config.

        :param config: the saved config.
        :return: the retriever.
        :raises InvalidStateError: if the config is not valid for this class.
        """
        try:
            return cls(**config)
        except (TypeError, ValueError) as exc:
            raise InvalidStateError(None, f"invalid config ({exc})") from None

    @staticmethod
    def _vocabulary(state: RetrieverState, file: str) -> dict[str, int]:
        """A saved vocabulary (terms in column order) as term -> column.

        :param state: the saved state.
        :param file: the vocabulary's file name.
        :return: term -> column.
        :raises InvalidStateError: naming the file if it is not a list of strings or repeats a term.
        """
        terms = state.get(file, list)
        if not all(isinstance(t, str) for t in terms):
            raise InvalidStateError(file, "expected a JSON list of terms")
        vocab = {t: j for j, t in enumerate(terms)}
        if len(vocab) != len(terms):
            raise InvalidStateError(file, f"{len(terms) - len(vocab)} repeated term(s)")
        return vocab


#: How a shared feature is computed: ``(retriever, local name, spec, chunks) -> value``.
ComputeFeature = Callable[[Retriever, str, FeatureSpec, Sequence[Chunk]], Any]


def build_retrievers(
    retrievers: Sequence[Retriever], chunks: Sequence[Chunk], compute: ComputeFeature | None = None
) -> dict[str, float]:
    """Build several retrievers on the same chunks, computing each shared feature once.

    Retrievers that declare no features are built with ``build(chunks)``. The result is the same as building
    each retriever alone (features are deterministic functions of their spec and the chunks).

    :param retrievers: unbuilt retrievers.
    :param chunks: the snapshot's chunks, with text, in index order.
    :param compute: how a feature is computed (default: the retriever's ``compute_feature``); the index store's
        cache passes one that assembles features from stored per-file pieces.
    :return: seconds spent: one entry per feature kind computed (``"term_counts"``, ``"vectors"``, summed over
        distinct specs of that kind) and one per retriever position and name (``"0:bm25"``, ...) for the rest
        of its build.
    """
    values: dict[FeatureSpec, Any] = {}
    seconds: dict[str, float] = {}
    for i, retriever in enumerate(retrievers):
        specs = retriever.feature_specs()
        if specs is None:
            t0 = time.perf_counter()
            retriever.build(chunks)
            seconds[f"{i}:{retriever.name}"] = time.perf_counter() - t0
            continue
        mine: dict[str, Any] = {}
        for name, spec in specs.items():
            if spec not in values:
                t0 = time.perf_counter()
                if compute is None:
                    values[spec] = retriever.compute_feature(name, chunks)
                else:
                    values[spec] = compute(retriever, name, spec, chunks)
                seconds[spec.kind] = seconds.get(spec.kind, 0.0) + time.perf_counter() - t0
            mine[name] = values[spec]
        t0 = time.perf_counter()
        retriever.build_from_features(mine)
        seconds[f"{i}:{retriever.name}"] = time.perf_counter() - t0
    return seconds
