"""Tests of TF-IDF: hand-computed cosine scores, parity with a plain TfidfVectorizer, the empty vocabulary."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from swe_explore.chunking.types import Chunk
from swe_explore.retrievers.base import Hit
from swe_explore.retrievers.tfidf import TfidfRetriever

PLAIN = {"stopwords": "none"}


def _tfidf(texts: list[str]) -> TfidfRetriever:
    """A TF-IDF retriever over the texts only, without stop words."""
    r = TfidfRetriever(tokenizer=PLAIN, fields=("text",))
    r.build([Chunk("f.py", i + 1, i + 1, text=t) for i, t in enumerate(texts)])
    return r


def _unit(v: list[float]) -> list[float]:
    """L2-normalise a vector."""
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def test_scores_by_hand() -> None:
    """Sublinear tf, smoothed idf ln((1+N)/(1+df))+1, L2 rows and cosine give the hand-computed scores."""
    r = _tfidf(["alpha beta", "alpha alpha gamma"])
    idf_alpha = math.log(3 / 3) + 1  # df 2 of N 2 -> 1.0
    idf_rare = math.log(3 / 2) + 1  # df 1 -> 1.405465
    d0 = _unit([1 * idf_alpha, 1 * idf_rare])  # alpha, beta: [0.579739, 0.814802]
    d1 = _unit([(1 + math.log(2)) * idf_alpha, 1 * idf_rare])  # alpha x2, gamma: [0.769447, 0.638710]
    q = _unit([idf_alpha, idf_rare])  # "alpha gamma"
    assert r.scores("alpha gamma") == pytest.approx([q[0] * d0[0], q[0] * d1[0] + q[1] * d1[1]])
    assert r.scores("alpha gamma") == pytest.approx([0.336097, 0.966502], abs=1e-6)
    # pytest.approx stands in for the float score
    assert r.search("beta") == [Hit(0, pytest.approx(d0[1]))]  # type: ignore[arg-type]
    # pytest.approx stands in for the float score
    assert r.search("alpha gamma", top_n=1) == [Hit(1, pytest.approx(0.966502, abs=1e-6))]  # type: ignore[arg-type]


def test_matches_a_plain_vectorizer(sample_chunks: list[Chunk]) -> None:
    """Scores equal those of TfidfVectorizer(analyzer=our tokenizer, sublinear_tf=True) fitted on the same texts."""
    r = TfidfRetriever()
    r.build(sample_chunks)
    texts = ["\n".join(x for x in (c.path, c.symbol, c.text) if x) for c in sample_chunks]
    ref = TfidfVectorizer(analyzer=r.tokenizer.tokenize, lowercase=False, token_pattern=None, sublinear_tf=True)
    matrix = ref.fit_transform(texts)
    for query in ["Session timeout on send request", "get_cookie returns gamma", "Request delta cookie jar"]:
        expected = (matrix @ ref.transform([query]).T).toarray().ravel()
        np.testing.assert_allclose(r.scores(query), expected, rtol=1e-12, atol=1e-12)


def test_br18_one_letter_identifiers_and_no_code_tokens() -> None:
    """Chunks of one-letter names and a query without code tokens give [] instead of 'empty vocabulary'.

    See docs/retrievers.md, 'TF-IDF'.
    """
    r = _tfidf(["a = b + c", "x = y * 2", ""])
    assert r.n_docs == 3
    assert r.search("a b c") == []
    assert r.search("") == []
    assert list(r.scores("anything")) == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="empty vocabulary"):  # what scikit-learn alone would do
        TfidfVectorizer(analyzer=r.tokenizer.tokenize).fit(["a = b + c"])


def test_query_without_known_tokens_and_empty_index() -> None:
    """A query sharing no token with the chunks, and an index of no chunks, both give []."""
    assert _tfidf(["alpha beta"]).search("the gamma of it all") == []
    empty = _tfidf([])
    assert empty.n_docs == 0 and empty.search("alpha") == []


def test_only_positive_scores_and_ties_by_index() -> None:
    """Identical chunks tie and keep chunk order; non-matching chunks are not returned; top_n is validated."""
    r = _tfidf(["alpha beta", "gamma delta", "alpha beta"])
    assert [h.index for h in r.search("alpha")] == [0, 2]
    with pytest.raises(ValueError, match="top_n"):
        r.search("alpha", top_n=0)
