"""Tests of BM25: hand-computed scores, the Lucene idf against BM25Okapi's, and backend parity."""

from __future__ import annotations

import importlib.util
import math
import random

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from swe_explore.chunking.types import Chunk
from swe_explore.retrievers.base import Hit
from swe_explore.retrievers.bm25 import BM25_BACKENDS, BM25Retriever, LuceneBM25Okapi, lucene_idf

K1, B = 1.5, 0.75
PLAIN = {"stopwords": "none"}
NEEDS_BM25S = pytest.mark.skipif(
    importlib.util.find_spec("bm25s") is None, reason="bm25s not installed (pip install 'swe-explore-baselines[bm25s]')"
)
BACKEND_PARAMS = [pytest.param(b, marks=NEEDS_BM25S) if b == "bm25s" else b for b in BM25_BACKENDS]


def _chunks(texts: list[str], path: str = "f.py") -> list[Chunk]:
    """One chunk per text, consecutive one-line ranges of one file."""
    return [Chunk(path, i + 1, i + 1, text=t) for i, t in enumerate(texts)]


def _bm25(texts: list[str], backend: str = "numpy", **kw: object) -> BM25Retriever:
    """A BM25 retriever over the texts only, without stop words."""
    r = BM25Retriever(backend=backend, tokenizer=PLAIN, fields=("text",), **kw)  # type: ignore[arg-type]
    r.build(_chunks(texts))
    return r


def _tf_part(tf: int, doc_len: int, avgdl: float) -> float:
    """The BM25 term-frequency factor ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))``."""
    return tf * (K1 + 1) / (tf + K1 * (1 - B + B * doc_len / avgdl))


# docs/retrievers.md, 'Why not BM25Okapi's idf': a two-chunk file.
# Tokens: chunk 0 = [self, load, path] (3), chunk 1 = [self, save, path, data] (4).
TWO_CHUNKS = ["self.load(path)", "self.save(path, data)"]


def test_br17_two_chunk_scores_by_hand() -> None:
    """With N=2, 'save' (1 chunk) has idf log 2 and 'self' (both) log 1.2, so chunk 1 ranks first."""
    r = _bm25(TWO_CHUNKS)
    avgdl = 3.5
    idf_save = math.log(1 + (2 - 1 + 0.5) / (1 + 0.5))  # log 2   = 0.693147
    idf_self = math.log(1 + (2 - 2 + 0.5) / (2 + 0.5))  # log 1.2 = 0.182322
    s0 = idf_self * _tf_part(1, 3, avgdl)  # 0.182322 * 1.068702 = 0.194847
    s1 = (idf_save + idf_self) * _tf_part(1, 4, avgdl)  # 0.875469 * 0.939597 = 0.822588
    assert r.scores("save self") == pytest.approx([0.194847465275982, 0.8225880753660805], rel=1e-12)
    assert r.scores("save self") == pytest.approx([s0, s1], rel=1e-12)
    # pytest.approx stands in for the float score
    assert r.search("save self") == [Hit(1, pytest.approx(s1)), Hit(0, pytest.approx(s0))]  # type: ignore[arg-type]
    # pytest.approx stands in for the float score
    assert r.search("save") == [Hit(1, pytest.approx(idf_save * _tf_part(1, 4, avgdl)))]  # type: ignore[arg-type]


def test_br17_bm25okapi_cannot_rank_the_two_chunks() -> None:
    """rank-bm25's BM25Okapi gives 'save' idf 0 and 'self' a negative floor, so every score is <= 0."""
    okapi = BM25Okapi([["self", "load", "path"], ["self", "save", "path", "data"]])
    # idf = log((N - n + 0.5) / (n + 0.5)): save -> log(1.5/1.5) = 0; self, path -> log(0.5/2.5) = -1.609438 < 0,
    # floored to epsilon * mean idf = 0.25 * (2 * -1.609438 / 5) = -0.160944: the "floor" is itself negative.
    assert okapi.idf["save"] == 0.0
    assert okapi.idf["self"] == pytest.approx(0.25 * (2 * math.log(0.2) / 5))
    assert list(okapi.get_scores(["save"])) == [0.0, 0.0]
    assert okapi.get_scores(["save", "self"]) == pytest.approx([-0.172001, -0.151222], abs=1e-6)
    assert _bm25(TWO_CHUNKS).scores("save") == pytest.approx([0.0, math.log(2) * _tf_part(1, 4, 3.5)])


def test_token_in_most_chunks_keeps_a_small_positive_idf() -> None:
    """'self' in 4 of 5 chunks gets idf log(4/3) > 0, below a rare token's log 4, and below a 3-of-5 token's."""
    texts = ["self foo", "self bar common", "self baz common", "self qux common", "other"]
    r = _bm25(texts)
    state = r.state()  # the terms in column order and the chunks x terms counts
    idfs = lucene_idf(5, np.bincount(state.files["tf.npz"].indices))
    assert isinstance(idfs, np.ndarray)  # an array in, an array out
    idf = dict(zip(state.files["vocab.json"], idfs))
    assert idf["self"] == pytest.approx(math.log(1 + 1.5 / 4.5))  # 0.287682
    assert idf["common"] == pytest.approx(math.log(1 + 2.5 / 3.5))  # 0.538997
    assert idf["foo"] == pytest.approx(math.log(1 + 4.5 / 1.5))  # 1.386294
    # BM25Okapi floors both negative idfs to the same epsilon * mean idf, losing their order.
    okapi = BM25Okapi([t.split() for t in texts])
    assert okapi.idf["self"] == okapi.idf["common"] == pytest.approx(0.25 * okapi.average_idf)
    # 'self foo' ranks the chunk with foo first; chunks with only self follow with small positive scores.
    hits = r.search("self foo")
    assert [h.index for h in hits] == [0, 1, 2, 3]
    assert hits[1].score == pytest.approx(idf["self"] * _tf_part(1, 3, 12 / 5))  # avgdl = (2+3+3+3+1)/5


def test_duplicate_query_tokens_count() -> None:
    """A query token repeated twice counts twice, as in rank-bm25's ``get_scores``."""
    r = _bm25(TWO_CHUNKS + ["unrelated words here"])
    assert r.scores("save save") == pytest.approx(2 * r.scores("save"))
    assert r.scores("save self save") == pytest.approx(2 * r.scores("save") + r.scores("self"))


def test_only_positive_scores_returned_and_ties_by_index() -> None:
    """Chunks scoring 0 are never returned and equal scores keep chunk order; top_n cuts the list."""
    r = _bm25(["alpha beta", "gamma", "alpha beta", "alpha beta", "delta"])
    hits = r.search("alpha")
    assert [h.index for h in hits] == [0, 2, 3]
    assert len({h.score for h in hits}) == 1
    assert [h.index for h in r.search("alpha", top_n=2)] == [0, 2]
    assert r.search("nothing matches") == []
    assert r.search("") == []


def test_top_n_validation() -> None:
    """``top_n < 1`` raises ValueError."""
    r = _bm25(TWO_CHUNKS)
    with pytest.raises(ValueError, match="top_n"):
        r.search("save", top_n=0)


@pytest.mark.parametrize("backend", BACKEND_PARAMS)
@pytest.mark.parametrize("texts", [[], [""], ["a = b + c", "x"], ["+-*/"]], ids=["none", "empty", "short", "punct"])
def test_empty_corpora_give_empty_results(backend: str, texts: list[str]) -> None:
    """No chunks, or chunks without any token, give ``[]`` for every backend, never a division by zero."""
    r = _bm25(texts, backend=backend)
    assert r.n_docs == len(texts)
    assert r.search("a b c anything") == []
    assert list(r.scores("anything")) == [0.0] * len(texts)


def test_parameters_validated() -> None:
    """Out-of-range k1/b and an unknown backend raise ValueError naming the value."""
    with pytest.raises(ValueError, match="k1"):
        BM25Retriever(k1=-1)
    with pytest.raises(ValueError, match="b must"):
        BM25Retriever(b=1.5)
    with pytest.raises(ValueError, match="valid: numpy, rank_bm25, bm25s"):
        BM25Retriever(backend="lucene")


def test_k1_b_change_scores_as_the_formula_says() -> None:
    """With b=0 length does not matter, and k1=0 makes every matching token worth exactly its idf."""
    texts = ["save", "save data data data", "other"]
    r = _bm25(texts, k1=1.5, b=0.0)
    assert r.scores("save")[0] == pytest.approx(r.scores("save")[1])
    r0 = _bm25(texts, k1=0.0)
    assert r0.scores("save")[:2] == pytest.approx([math.log(1 + 1.5 / 2.5)] * 2)


def test_path_field_makes_file_names_searchable() -> None:
    """With the default fields a chunk is found by its file name even when its text does not mention it."""
    chunks = [Chunk("pkg/cookies.py", 1, 1, text="def f(): pass"), Chunk("pkg/models.py", 1, 1, text="def g(): pass")]
    with_path = BM25Retriever()
    with_path.build(chunks)
    hits = with_path.search("bug in cookies.py")
    assert [h.index for h in hits] == [0, 1]  # chunk 1 matches only the ubiquitous 'py'
    assert hits[0].score > 3 * hits[1].score
    text_only = BM25Retriever(fields=("text",))
    text_only.build(chunks)
    assert text_only.search("bug in cookies.py") == []


def _corpus(n_docs: int, seed: int) -> tuple[list[str], list[str]]:
    """Real-ish generated code chunks (Zipf-like identifier frequencies) and queries."""
    rng = random.Random(seed)
    words = [f"{a}{b}" for a in ("get", "set", "load", "save", "parse", "is") for b in ("User", "_path", "Data", "")]
    words += ["self", "return", "value", "index", "HTTPError", "os.path.join", "x", "1"]
    weights = [1 / (i + 1) for i in range(len(words))]
    docs = [" ".join(rng.choices(words, weights, k=rng.randint(0, 60))) for _ in range(n_docs)]
    queries = [" ".join(rng.choices(words, k=rng.randint(1, 12))) for _ in range(20)]
    return docs, queries


@NEEDS_BM25S
@pytest.mark.parametrize("n_docs", [5, 300])
def test_backend_parity(n_docs: int) -> None:
    """numpy, rank_bm25 and bm25s give the same scores (bm25s raw scores times k1+1) and the same rankings."""
    docs, queries = _corpus(n_docs, seed=n_docs)
    retrievers = {b: _bm25(docs, backend=b) for b in BM25_BACKENDS}
    bm25s_engine = retrievers["bm25s"]._engine
    vocabulary = set(retrievers["numpy"].state().files["vocab.json"])
    for q in queries:
        ref = retrievers["numpy"].scores(q)
        for backend in ("rank_bm25", "bm25s"):
            np.testing.assert_allclose(retrievers[backend].scores(q), ref, rtol=1e-5, atol=1e-9)
        toks = [t for t in retrievers["numpy"].tokenizer.tokenize(q) if t in vocabulary]
        if toks:  # the documented constant factor: bm25s's lucene tf part omits (k1 + 1)
            np.testing.assert_allclose(np.asarray(bm25s_engine.get_scores(toks)) * (K1 + 1), ref, rtol=1e-5, atol=1e-9)
        rankings = {b: [h.index for h in r.search(q, 50)] for b, r in retrievers.items()}
        assert rankings["rank_bm25"] == rankings["numpy"] == rankings["bm25s"]


def test_rank_bm25_subclass_uses_lucene_idf() -> None:
    """LuceneBM25Okapi's idf is log(1 + (N - n + 0.5) / (n + 0.5)) for every term, never floored."""
    okapi = LuceneBM25Okapi([["self", "load"], ["self", "save"]])
    assert okapi.idf == {
        "self": pytest.approx(math.log(1.2)),
        "load": pytest.approx(math.log(2)),
        "save": pytest.approx(math.log(2)),
    }
