"""TF-IDF with cosine similarity, on scikit-learn's ``TfidfVectorizer`` fed by the code-aware tokenizer.

Weights (scikit-learn defaults except ``sublinear_tf``; see the ``TfidfTransformer`` documentation)::

    w(t, d) = (1 + log tf(t, d)) * (1 + log((1 + N) / (1 + n(t))))       then each row is L2-normalised

The vectorizer is ``TfidfVectorizer(analyzer=CodeTokenizer.tokenize, lowercase=False, token_pattern=None,
sublinear_tf=True, norm="l2", smooth_idf=True)``; the query is transformed the same way and scored by the
sparse dot product with every chunk row (cosine, since both sides are unit vectors).

**Build.** The chunks are tokenized and counted once (the ``term_counts`` feature of
:mod:`retrievers.features`, shared with BM25 when both are built together), and the counts are weighted by
scikit-learn's ``TfidfTransformer``, which is what ``TfidfVectorizer.fit_transform`` does after its own counting
step: same vocabulary (sorted), idf and rows (``tests/test_tfidf.py`` checks this against a plain vectorizer).

**Persistence without pickle.** ``vocab.json`` (terms in column order), ``idf.npy`` (float64) and
``matrix.npz`` (the L2-normalised chunk rows, stored column-wise (CSC), as they are searched). On load the
vectorizer is rebuilt with ``vocabulary=`` the saved terms (a fixed vocabulary, as scikit-learn supports) and
its ``idf_`` set through the public setter, so ``transform`` gives exactly what the fitted vectorizer gave.

**Empty vocabulary.** When no chunk yields a token (e.g. only ``a = b + c``: one-letter names are
dropped by the tokenizer) scikit-learn's ``fit`` would raise "empty vocabulary". The retriever then keeps an
empty index and every search returns ``[]``; so does a query without a known token.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfTransformer, TfidfVectorizer

from swe_explore.retrievers.base import InvalidStateError, Retriever, RetrieverState
from swe_explore.retrievers.common import DEFAULT_FIELDS, check_fields
from swe_explore.retrievers.features import TermCountsRetriever
from swe_explore.retrievers.tokenize import CodeTokenizer

__all__ = ["TfidfRetriever"]

_VOCAB_FILE = "vocab.json"
_IDF_FILE = "idf.npy"
_MATRIX_FILE = "matrix.npz"


class TfidfRetriever(TermCountsRetriever):
    """TF-IDF (sublinear tf, smoothed idf, L2 rows) with cosine scoring; see the module docstring.

    :param tokenizer: a :class:`~retrievers.tokenize.CodeTokenizer`, its config dict, or ``None`` for defaults.
    :param fields: chunk fields of the document text (:func:`~retrievers.common.document_text`).
    :raises ValueError: for invalid options.
    """

    name = "tfidf"
    options = ("tokenizer", "fields")
    display_name = "TF-IDF"

    def __init__(
        self,
        tokenizer: CodeTokenizer | dict[str, Any] | None = None,
        fields: Sequence[str] = DEFAULT_FIELDS,
    ) -> None:
        self.tokenizer = CodeTokenizer.from_config(tokenizer)
        self.fields = check_fields(fields)
        self._vectorizer: TfidfVectorizer | None = None
        self._matrix: sp.csc_matrix = sp.csc_matrix((0, 0), dtype=np.float64)  # chunks x terms, by column

    def config(self) -> dict[str, Any]:
        """JSON parameters: ``tokenizer`` and ``fields``.

        :return: the config.
        """
        return {"tokenizer": self.tokenizer.config(), "fields": list(self.fields)}

    @property
    def n_docs(self) -> int:
        """Number of chunks indexed."""
        return int(self._matrix.shape[0])

    def _new_vectorizer(self, vocabulary: dict[str, int] | None = None) -> TfidfVectorizer:
        """The vectorizer with our tokenizer and weighting.

        :param vocabulary: a fixed vocabulary (term -> column), or ``None`` to learn one in ``fit``.
        :return: an unfitted vectorizer.
        """
        return TfidfVectorizer(
            analyzer=self.tokenizer.tokenize,
            lowercase=False,
            token_pattern=None,
            sublinear_tf=True,
            norm="l2",
            smooth_idf=True,
            vocabulary=vocabulary,
            dtype=np.float64,
        )

    def build_from_features(self, values: Mapping[str, Any]) -> None:
        """Weight the ``counts`` feature with scikit-learn's ``TfidfTransformer`` (what ``TfidfVectorizer`` does
        after counting): the same rows, vocabulary (sorted) and idf as ``TfidfVectorizer.fit_transform``.

        :param values: ``{"counts": TermCounts}`` (read, never modified).
        :raises ValueError: if the feature is missing or is not a :class:`~retrievers.features.TermCounts`.
        """
        counts = self._counts_of(values)
        self._vectorizer = None
        self._matrix = sp.csc_matrix((counts.n_docs, 0), dtype=np.float64)
        if counts.counts.nnz == 0:
            return  # no token anywhere; scikit-learn would raise "empty vocabulary"
        transformer = TfidfTransformer(norm="l2", smooth_idf=True, sublinear_tf=True)
        matrix = transformer.fit_transform(sp.csr_matrix(counts.counts, dtype=np.float64))
        vocabulary = {t: j for j, t in enumerate(counts.terms)}
        self._vectorizer = self._rebuild(vocabulary, np.asarray(transformer.idf_, dtype=np.float64))
        self._matrix = sp.csc_matrix(matrix, dtype=np.float64)

    def _rebuild(self, vocabulary: dict[str, int], idf: np.ndarray) -> TfidfVectorizer:
        """A vectorizer over raw text with a fixed vocabulary and idf.

        :param vocabulary: term -> column.
        :param idf: one idf per column.
        :return: a vectorizer ready to ``transform``.
        """
        vec = self._new_vectorizer(dict(vocabulary))
        vec.idf_ = idf
        return vec

    def scores(self, query: str) -> np.ndarray:
        """Cosine similarity of the query with every chunk.

        :param query: raw issue text.
        :return: float64 array of shape ``(n_docs,)``; zeros when the index or the query has no known token.
        """
        if self._vectorizer is None or self.n_docs == 0:
            return np.zeros(self.n_docs, dtype=np.float64)
        q = sp.csr_matrix(self._vectorizer.transform([query]))
        if q.nnz == 0:
            return np.zeros(self.n_docs, dtype=np.float64)
        # Sum the query terms' columns (CSC slices) weighted by the query's values: touches only the postings of
        # the query terms, unlike a product with the whole matrix (9 ms -> about 1 ms on 38K chunks).
        m = self._matrix
        starts, ends = m.indptr[q.indices], m.indptr[q.indices + 1]
        rows = np.concatenate([m.indices[a:b] for a, b in zip(starts, ends)])
        vals = np.concatenate([m.data[a:b] * w for a, b, w in zip(starts, ends, q.data)])
        return np.bincount(rows, weights=vals, minlength=self.n_docs)

    def state(self) -> RetrieverState:
        """The index as ``vocab.json`` (terms in column order), ``idf.npy`` (float64) and ``matrix.npz`` (the
        L2-normalised chunk rows, CSC, as searched).

        :return: the state.
        """
        if self._vectorizer is None:
            terms: list[str] = []
            idf = np.zeros(0, dtype=np.float64)
        else:
            vocab = self._vectorizer.vocabulary_
            terms = sorted(vocab, key=vocab.__getitem__)
            idf = np.asarray(self._vectorizer.idf_, dtype=np.float64)
        return RetrieverState({_VOCAB_FILE: terms, _IDF_FILE: idf, _MATRIX_FILE: self._matrix})

    @classmethod
    def from_state(
        cls,
        config: Mapping[str, Any],
        n_docs: int,
        state: RetrieverState,
        parts: Sequence[Retriever] = (),
        model: str | None = None,
    ) -> TfidfRetriever:
        """Rebuild from :meth:`state`, the vectorizer with the saved vocabulary and idf.

        :param config: the saved config.
        :param n_docs: the saved number of chunks.
        :param state: the saved state.
        :param parts: unused (TF-IDF has no parts).
        :param model: unused (TF-IDF has no model).
        :return: the retriever.
        :raises InvalidStateError: naming the file, for a bad config, vocabulary, idf array or matrix.
        """
        self = cls._from_config(config)
        vocab = cls._vocabulary(state, _VOCAB_FILE)
        idf = state.get(_IDF_FILE, np.ndarray)
        if idf.dtype != np.float64 or idf.shape != (len(vocab),) or not np.all(np.isfinite(idf)):
            raise InvalidStateError(
                _IDF_FILE, f"expected {len(vocab)} finite float64 idf values, got {idf.dtype} {idf.shape}"
            )
        matrix: Any = state.get(_MATRIX_FILE, (sp.spmatrix, sp.sparray))
        if matrix.shape != (n_docs, len(vocab)):
            raise InvalidStateError(_MATRIX_FILE, f"shape {matrix.shape}, expected ({n_docs}, {len(vocab)})")
        self._matrix = sp.csc_matrix(matrix, dtype=np.float64)
        self._vectorizer = self._rebuild(vocab, idf) if vocab else None
        return self
