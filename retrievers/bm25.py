"""BM25 over the code-aware tokenizer, with three interchangeable scoring backends.

**Variant.** Okapi BM25 (Robertson et al., TREC-3; the form used by rank-bm25's ``BM25Okapi``) with the
Lucene/ATIRE idf, which is always positive (Kamphuis et al., "Which BM25 do you mean?", ECIR 2020)::

    score(d, q) = sum over query tokens t (duplicates counted) of
                  idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = log(1 + (N - n(t) + 0.5) / (n(t) + 0.5))

with ``N`` chunks, ``n(t)`` chunks containing ``t``, ``|d|`` the chunk's token count and ``avgdl`` the mean
token count. Defaults ``k1 = 1.5``, ``b = 0.75`` (rank-bm25's). A query token that occurs twice counts twice,
as in ``BM25Okapi.get_scores``.

**Why not BM25Okapi's idf.** rank-bm25's ``BM25Okapi`` uses ``idf(t) = log((N - n + 0.5) / (n + 0.5))``. It is
0 for a token in exactly half the chunks and negative above; negative values are replaced by
``epsilon * mean(idf)`` (``epsilon = 0.25``). On a snapshot's chunks that is harmful: in a two-chunk file
(``N = 2``) a token in one chunk gets ``log(1.5 / 1.5) = 0``, so the query cannot tell the chunk that holds it
from the one that does not, and ``self``, present in most chunks, gets the same floored weight as every other
frequent token regardless of how frequent it is. The Lucene idf keeps the ordering "rarer is better" for
every ``n``: with ``N = 2``, ``idf = log(1 + 1.5/1.5) = log 2`` for a token in one chunk and
``log(1 + 0.5/2.5) = log 1.2`` for a token in both. ``tests/test_bm25.py`` shows the numbers.

**Build.** The chunks' document texts are tokenized and counted once: the ``term_counts`` feature of
:mod:`retrievers.features` (terms sorted by code point), which a TF-IDF retriever with the same tokenizer and
fields shares when both are built in one call.

**Persistence.** The state (:meth:`BM25Retriever.state`) is ``tf.npz`` (scipy CSR, chunks x terms, int32 term
counts) and ``vocab.json`` (the terms, column order). The backend's scoring structures are derived from them in
:meth:`BM25Retriever.from_state`.

**Backends** (``backend=``), all built from the same token lists and returning the same scores:

- ``"numpy"`` (default): our own code. The per-(chunk, term) weights ``idf * tf * (k1 + 1) / (tf + k1 * norm)``
  are precomputed in a CSC matrix; a query sums the columns of its terms (times their query counts) with one
  ``np.bincount``: a few ms on 20K chunks.
- ``"rank_bm25"``: a ``rank_bm25.BM25Okapi`` subclass whose ``_calc_idf`` uses the Lucene idf above; slow
  (a Python loop per query token over every chunk), kept as the reference oracle.
- ``"bm25s"``: ``bm25s.BM25(method="lucene")``. Its term-frequency component omits the ``(k1 + 1)`` factor,
  so its raw scores are ours divided by ``k1 + 1``; :meth:`BM25Retriever.search` multiplies them back, so
  every backend returns the same scores and ranking.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from rank_bm25 import BM25Okapi

from swe_explore.retrievers.base import InvalidStateError, Retriever, RetrieverState
from swe_explore.retrievers.common import DEFAULT_FIELDS, check_fields
from swe_explore.retrievers.features import TermCountsRetriever
from swe_explore.retrievers.tokenize import CodeTokenizer

__all__ = ["BM25_BACKENDS", "BM25Retriever", "LuceneBM25Okapi", "lucene_idf"]

#: Scoring backends :class:`BM25Retriever` accepts.
BM25_BACKENDS = ("numpy", "rank_bm25", "bm25s")

_TF_FILE = "tf.npz"
_VOCAB_FILE = "vocab.json"


def lucene_idf(n_docs: int, doc_freq: np.ndarray | float) -> np.ndarray | float:
    """The Lucene/ATIRE BM25 idf, ``log(1 + (N - n + 0.5) / (n + 0.5))`` (always > 0 for ``n <= N``).

    :param n_docs: number of chunks ``N``.
    :param doc_freq: number of chunks containing each term ``n`` (scalar or array).
    :return: the idf, same shape as ``doc_freq``.
    """
    return np.log1p((n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


# rank_bm25 ships no type information, so its class is ``Any`` to mypy (overridden in pyproject.toml).
class LuceneBM25Okapi(BM25Okapi):  # type: ignore[misc]
    """``rank_bm25.BM25Okapi`` with the Lucene idf ``log(1 + (N - n + 0.5) / (n + 0.5))`` (the ``"rank_bm25"``
    backend and the parity oracle); everything else, including duplicate query-token counting, is rank-bm25's.
    """

    def _calc_idf(self, nd: dict[str, int]) -> None:
        """Set ``self.idf`` from document frequencies; no idf is negative, so no epsilon floor is needed.

        :param nd: term -> number of documents containing it.
        """
        n = self.corpus_size
        self.idf = {word: math.log(1.0 + (n - freq + 0.5) / (freq + 0.5)) for word, freq in nd.items()}
        self.average_idf = sum(self.idf.values()) / len(self.idf) if self.idf else 0.0


class BM25Retriever(TermCountsRetriever):
    """BM25 (Okapi, Lucene idf) over the code-aware tokenizer; see the module docstring.

    :param k1: term-frequency saturation (``>= 0``).
    :param b: length normalisation, in ``[0, 1]``.
    :param backend: ``"numpy"``, ``"rank_bm25"`` or ``"bm25s"`` (same scores; speed differs).
    :param tokenizer: a :class:`~retrievers.tokenize.CodeTokenizer`, its config dict, or ``None`` for defaults.
    :param fields: chunk fields of the document text (:func:`~retrievers.common.document_text`).
    :raises ValueError: for out-of-range parameters or an unknown backend.
    """

    name = "bm25"
    options = ("k1", "b", "backend", "tokenizer", "fields")
    display_name = "BM25"

    def __init__(
        self,
        k1: float = 1.5,
        b: float = 0.75,
        backend: str = "numpy",
        tokenizer: CodeTokenizer | dict[str, Any] | None = None,
        fields: Sequence[str] = DEFAULT_FIELDS,
    ) -> None:
        if not isinstance(k1, (int, float)) or isinstance(k1, bool) or not k1 >= 0:
            raise ValueError(f"k1 must be a number >= 0, got {k1!r}")
        if not isinstance(b, (int, float)) or isinstance(b, bool) or not 0 <= b <= 1:
            raise ValueError(f"b must be a number in [0, 1], got {b!r}")
        if backend not in BM25_BACKENDS:
            raise ValueError(f"unknown BM25 backend {backend!r}; valid: {', '.join(BM25_BACKENDS)}")
        self.k1 = float(k1)
        self.b = float(b)
        self.backend = backend
        self.tokenizer = CodeTokenizer.from_config(tokenizer)
        self.fields = check_fields(fields)
        self._vocab: dict[str, int] = {}
        self._tf: sp.csr_matrix = sp.csr_matrix((0, 0), dtype=np.int32)
        self._weights: sp.csc_matrix | None = None
        self._engine: Any = None

    def config(self) -> dict[str, Any]:
        """JSON parameters: ``k1``, ``b``, ``backend``, ``tokenizer`` and ``fields``.

        :return: the config.
        """
        return {
            "k1": self.k1,
            "b": self.b,
            "backend": self.backend,
            "tokenizer": self.tokenizer.config(),
            "fields": list(self.fields),
        }

    @property
    def n_docs(self) -> int:
        """Number of chunks indexed."""
        return int(self._tf.shape[0])

    def build_from_features(self, values: Mapping[str, Any]) -> None:
        """Build the term-frequency matrix and the backend from the ``counts`` feature (read, never modified).

        :param values: ``{"counts": TermCounts}``.
        :raises ValueError: if the feature is missing or is not a :class:`~retrievers.features.TermCounts`.
        """
        counts = self._counts_of(values)
        self._vocab = {t: j for j, t in enumerate(counts.terms)}
        self._tf = counts.counts
        self._prepare()

    def _doc_tokens(self) -> list[list[str]]:
        """Rebuild each chunk's token list (term order is lost; BM25 does not need it) from the tf matrix.

        :return: one list of terms per chunk, each term repeated by its count.
        """
        terms = np.empty(len(self._vocab), dtype=object)
        for t, j in self._vocab.items():
            terms[j] = t
        tf = self._tf
        out: list[list[str]] = []
        for i in range(tf.shape[0]):
            lo, hi = tf.indptr[i], tf.indptr[i + 1]
            out.append(list(np.repeat(terms[tf.indices[lo:hi]], tf.data[lo:hi])))
        return out

    def _prepare(self) -> None:
        """Derive the backend's scoring structures from the term-frequency matrix."""
        self._weights = None
        self._engine = None
        n_docs, n_terms = self._tf.shape
        if n_docs == 0 or n_terms == 0:
            return  # nothing can ever match
        if self.backend == "numpy":
            self._weights = self._numpy_weights()
        elif self.backend == "rank_bm25":
            self._engine = LuceneBM25Okapi(self._doc_tokens(), k1=self.k1, b=self.b)
        else:
            try:
                import bm25s
            except ImportError as exc:
                raise ImportError("backend='bm25s' needs bm25s: pip install 'swe-explore-baselines[bm25s]'") from exc
            engine = bm25s.BM25(k1=self.k1, b=self.b, method="lucene", dtype="float64")
            engine.index(self._doc_tokens(), show_progress=False)
            self._engine = engine

    def _numpy_weights(self) -> sp.csc_matrix:
        """Per-(chunk, term) BM25 weights ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))``.

        :return: CSC matrix, chunks x terms, float64.
        """
        tf = self._tf
        n_docs = tf.shape[0]
        lengths = np.asarray(tf.sum(axis=1)).ravel().astype(np.float64)
        avgdl = float(lengths.mean())
        doc_freq = np.bincount(tf.indices, minlength=tf.shape[1]).astype(np.float64)
        idf = np.asarray(lucene_idf(n_docs, doc_freq))
        norm = self.k1 * (1.0 - self.b + self.b * lengths / avgdl)  # per chunk
        row_of_nnz = np.repeat(np.arange(n_docs), np.diff(tf.indptr))
        f = tf.data.astype(np.float64)
        w = idf[tf.indices] * f * (self.k1 + 1.0) / (f + norm[row_of_nnz])
        weights = sp.csr_matrix((w, tf.indices, tf.indptr), shape=tf.shape).tocsc()
        weights.sort_indices()
        return weights

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for a query (the formula of the module docstring, for every backend).

        :param query: raw issue text.
        :return: float64 array of shape ``(n_docs,)``; all zeros when no query token is in the vocabulary.
        """
        n_docs = self.n_docs
        toks = [t for t in self.tokenizer.tokenize(query) if t in self._vocab]
        if not toks or (self._weights is None and self._engine is None):
            return np.zeros(n_docs, dtype=np.float64)
        if self.backend == "numpy":
            w = self._weights
            assert w is not None  # built with the numpy backend
            term_ids = np.fromiter((self._vocab[t] for t in toks), dtype=np.int64, count=len(toks))
            ids, counts = np.unique(term_ids, return_counts=True)
            starts, ends = w.indptr[ids], w.indptr[ids + 1]
            rows = np.concatenate([w.indices[s:e] for s, e in zip(starts, ends)])
            vals = np.concatenate([w.data[s:e] * c for s, e, c in zip(starts, ends, counts)])
            return np.bincount(rows, weights=vals, minlength=n_docs)
        if self.backend == "rank_bm25":
            return np.asarray(self._engine.get_scores(toks), dtype=np.float64)
        return np.asarray(self._engine.get_scores(toks), dtype=np.float64) * (self.k1 + 1.0)

    def state(self) -> RetrieverState:
        """The index as ``tf.npz`` (the CSR term counts) and ``vocab.json`` (the terms in column order).

        :return: the state.
        """
        terms = sorted(self._vocab, key=self._vocab.__getitem__)
        return RetrieverState({_TF_FILE: self._tf, _VOCAB_FILE: terms})

    @classmethod
    def from_state(
        cls,
        config: Mapping[str, Any],
        n_docs: int,
        state: RetrieverState,
        parts: Sequence[Retriever] = (),
        model: str | None = None,
    ) -> BM25Retriever:
        """Rebuild from :meth:`state` and rebuild the backend.

        :param config: the saved config.
        :param n_docs: the saved number of chunks.
        :param state: the saved state.
        :param parts: unused (BM25 has no parts).
        :param model: unused (BM25 has no model).
        :return: the retriever.
        :raises InvalidStateError: naming the file, for a bad config, vocabulary or term-count matrix.
        """
        self = cls._from_config(config)
        vocab = cls._vocabulary(state, _VOCAB_FILE)
        tf: Any = state.get(_TF_FILE, (sp.spmatrix, sp.sparray))
        if tf.shape != (n_docs, len(vocab)):
            raise InvalidStateError(_TF_FILE, f"shape {tf.shape}, expected ({n_docs}, {len(vocab)}) from the metadata")
        tf = sp.csr_matrix(tf)
        if tf.nnz and (tf.data.min() < 1 or not np.issubdtype(tf.data.dtype, np.integer)):
            raise InvalidStateError(_TF_FILE, "term counts must be positive integers")
        self._vocab = vocab
        self._tf = sp.csr_matrix(tf, dtype=np.int32)
        self._tf.sort_indices()
        self._prepare()
        return self
