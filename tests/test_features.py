"""Tests of shared-feature builds (retrievers/features.py): computed once, same indexes as separate builds."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer

from swe_explore.chunking.types import Chunk
from swe_explore.retrievers.base import FeatureSpec, Hit, Retriever, RetrieverState, top_hits
from swe_explore.retrievers.bm25 import BM25Retriever
from swe_explore.retrievers.features import build_retrievers, count_terms, counts_from_tokens
from swe_explore.retrievers.potion import PotionRetriever
from swe_explore.retrievers.registry import make_retriever
from swe_explore.retrievers.tfidf import TfidfRetriever
from swe_explore.retrievers.tokenize import CodeTokenizer, word_codes

QUERIES = ["send the request with a timeout", "cookie jar name", "alpha beta gamma delta", "nothing matches"]


def _all(model: Path) -> list[Retriever]:
    """One retriever of each kind (hybrid = BM25 + Potion), the embedding ones on the given model."""
    return [
        make_retriever("bm25"),
        make_retriever("tfidf"),
        make_retriever("potion", model=str(model)),
        make_retriever("faiss", model=str(model)),
        make_retriever("hybrid", model=str(model)),
    ]


def test_counts_from_tokens_match_scikit_learn_counts() -> None:
    """Term counts equal CountVectorizer's (sorted vocabulary, same counts) for the same token lists."""
    docs = [["get", "user", "get"], [], ["user", "name", "zeta", "name", "name"]]
    counts = counts_from_tokens(docs)
    vec = CountVectorizer(analyzer=lambda d: d)
    expected = vec.fit_transform(docs)
    assert counts.terms == ["get", "name", "user", "zeta"] == list(vec.get_feature_names_out())
    assert counts.counts.dtype == np.int32
    assert counts.counts.toarray().tolist() == expected.toarray().tolist() == [[2, 0, 1, 0], [0, 0, 0, 0], [0, 3, 1, 1]]


def test_count_terms_by_hand() -> None:
    """Per-word counting gives the hand-computed counts: whole identifiers, parts, stop words and short tokens."""
    counts = count_terms(CodeTokenizer(), ["getUser(x) getUser", "", "self.user_name = 42"])
    assert counts.terms == ["get", "getuser", "name", "user", "user_name"]
    assert counts.counts.toarray().tolist() == [[2, 2, 0, 2, 0], [0, 0, 0, 0, 0], [0, 0, 1, 1, 1]]


ADVERSARIAL = [
    "def getUserName(self): return os.path.join(a, b)",
    "",
    "   ",
    "___ __init__ _x_ a_b_c",
    "naïveBayes == naïve_bayes; café, straße STRASSE",
    "HTTPServerError utf8Decode 0x1f 1e10 2d x86_64",
    "\x0bform\x0cfeed\ttab\r\ncrlf\x00nul\x7fdel",
    "中文标识符 mixed中文Word ١٢٣ digits",
    "zero\u200bwidth \ufeffbom e\u0301accent",
    "getUser getUser getuser GETUSER get_user",
    "a" * 300 + " " + "B" * 5 + "c" * 5,
]


@pytest.mark.parametrize("tokenizer", [{}, {"whole": "joined"}, {"whole": "none", "stopwords": "none", "min_len": 1}])
def test_count_terms_equals_counting_the_token_lists(tokenizer: dict[str, Any]) -> None:
    """count_terms is counts_from_tokens(tokenize(...)) to the last bit, ASCII and Unicode texts mixed, and the
    words of word_codes are those of the Unicode ``\\w+``."""
    texts = ADVERSARIAL + ADVERSARIAL[::-1]
    expected = counts_from_tokens([CodeTokenizer.from_config(tokenizer).tokenize(t) for t in texts])
    got = count_terms(CodeTokenizer.from_config(tokenizer), texts)
    assert got.terms == expected.terms
    for name in ("data", "indices", "indptr"):
        a, b = getattr(got.counts, name), getattr(expected.counts, name)
        assert a.dtype == b.dtype and a.tolist() == b.tolist(), name
    assert got.counts.shape == expected.counts.shape
    distinct, rows, codes = word_codes(texts)
    for i, text in enumerate(texts):
        assert sorted(distinct[c] for c in codes[rows == i] if distinct[c]) == sorted(re.findall(r"\w+", text))


def test_count_terms_of_no_texts() -> None:
    """No texts: no terms and a 0 x 0 matrix, as counts_from_tokens gives."""
    counts = count_terms(CodeTokenizer(), [])
    assert counts.terms == [] and counts.counts.shape == (0, 0) == counts_from_tokens([]).counts.shape


def test_specs_are_shared_exactly_when_the_inputs_match(tiny_model_dir: Path) -> None:
    """BM25 and TF-IDF share term counts only under the same tokenizer and fields; Potion and FAISS share vectors."""
    bm25 = make_retriever("bm25").feature_specs()
    assert bm25 == make_retriever("tfidf").feature_specs()
    assert bm25 == make_retriever("bm25", k1=0.9, backend="rank_bm25").feature_specs()  # scoring only
    assert bm25 != make_retriever("tfidf", fields=["text"]).feature_specs()
    assert bm25 != make_retriever("tfidf", tokenizer={"stopwords": "none"}).feature_specs()
    potion = make_retriever("potion", model=str(tiny_model_dir)).feature_specs()
    assert potion == make_retriever("faiss", model=str(tiny_model_dir), index="hnsw").feature_specs()
    assert potion != make_retriever("faiss", model=str(tiny_model_dir), max_length=None).feature_specs()
    assert potion is not None and potion["vectors"].kind == "vectors"
    assert FeatureSpec.make("k", {"a": 1, "b": [2]}) == FeatureSpec.make("k", {"b": [2], "a": 1})


def test_each_feature_is_computed_once(
    tiny_model_dir: Path, sample_chunks: list[Chunk], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five retrievers built together tokenize once (BM25) and embed once (Potion); the others reuse both."""
    calls: list[str] = []
    for cls in (BM25Retriever, TfidfRetriever, PotionRetriever):
        original = cls.compute_feature

        def counting(self: Any, name: str, chunks: Any, _original: Any = original) -> Any:
            calls.append(f"{self.name}.{name}")
            return _original(self, name, chunks)

        monkeypatch.setattr(cls, "compute_feature", counting)
    seconds = build_retrievers(_all(tiny_model_dir), sample_chunks)
    assert calls == ["bm25.counts", "potion.vectors"]
    assert set(seconds) == {"term_counts", "vectors", "0:bm25", "1:tfidf", "2:potion", "3:faiss", "4:hybrid"}


def test_building_together_equals_building_alone(tiny_model_dir: Path, sample_chunks: list[Chunk]) -> None:
    """bm25+tfidf+potion+faiss+hybrid built in one call give exactly the hits of each built on its own."""
    together = _all(tiny_model_dir)
    build_retrievers(together, sample_chunks)
    alone = _all(tiny_model_dir)
    for retriever in alone:
        retriever.build(sample_chunks)
    for a, b in zip(together, alone):
        assert a.n_docs == b.n_docs == len(sample_chunks)
        for query in QUERIES:
            assert a.search(query, 10) == b.search(query, 10), (a.name, query)
    assert together[0].search("cookie jar name", 10)  # not vacuous: the lexical side finds something
    assert together[2].search("alpha beta gamma delta", 10)  # nor the embedding side


def test_retriever_without_feature_hooks_is_built_plainly(sample_chunks: list[Chunk]) -> None:
    """A retriever that declares no features is built with build(chunks) next to sharing ones."""

    class Plain(BM25Retriever):
        name = "bm25"

        def feature_specs(self) -> None:  # type: ignore[override]
            return None

    plain, shared = Plain(), BM25Retriever()
    build_retrievers([plain, shared], sample_chunks)
    assert plain.search("cookie jar", 5) == shared.search("cookie jar", 5) != []


def test_wrong_feature_values_are_rejected() -> None:
    """build_from_features names what it needs when given something else."""
    with pytest.raises(ValueError, match="TermCounts"):
        BM25Retriever().build_from_features({"counts": [["a"]]})
    with pytest.raises(ValueError, match="TermCounts"):
        TfidfRetriever().build_from_features({})
    with pytest.raises(ValueError, match="no feature"):
        BM25Retriever().compute_feature("vectors", [])


class _LineCount(Retriever):
    """A minimal retriever that declares nothing optional: scores a chunk by its line count."""

    name = "line_count"
    options = ()

    def __init__(self) -> None:
        self._lines = np.zeros(0)

    def config(self) -> dict[str, Any]:
        return {}

    @property
    def n_docs(self) -> int:
        return len(self._lines)

    def build(self, chunks: Sequence[Chunk]) -> None:
        self._lines = np.array([c.end - c.start + 1 for c in chunks], dtype=np.float64)

    def search(self, query: str, top_n: int = 100) -> list[Hit]:
        return top_hits(self._lines, top_n)

    def state(self) -> RetrieverState:
        return RetrieverState({"lines.npy": self._lines})

    @classmethod
    def from_state(
        cls,
        config: Mapping[str, Any],
        n_docs: int,
        state: RetrieverState,
        parts: Sequence[Retriever] = (),
        model: str | None = None,
    ) -> _LineCount:
        self = cls()
        self._lines = state.get("lines.npy", np.ndarray)
        return self


def test_contract_defaults_mean_a_plain_build(sample_chunks: list[Chunk]) -> None:
    """A retriever implementing only the required contract shares no features and has no parts: build_retrievers
    builds it with build(chunks) next to sharing ones, and the feature methods say clearly that it has none."""
    plain, bm25 = _LineCount(), BM25Retriever()
    assert plain.feature_specs() is None and plain.parts() == [] and _LineCount.part_count({}) == 0
    seconds = build_retrievers([plain, bm25], sample_chunks)
    assert set(seconds) == {"0:line_count", "term_counts", "1:bm25"}
    assert plain.search("anything", 3) == [Hit(0, 3.0), Hit(1, 2.0), Hit(2, 2.0)]  # 3 lines, then ties by order
    with pytest.raises(ValueError, match="_LineCount shares no features; it has no feature 'counts'"):
        plain.compute_feature("counts", sample_chunks)
    with pytest.raises(NotImplementedError, match="build it with build"):
        plain.build_from_features({})


class _FixedScores(_LineCount):
    """A retriever that implements only ``scores``: a hand-made score per chunk, whatever the query."""

    name = "fixed_scores"

    def __init__(self, scores: Sequence[float]) -> None:
        super().__init__()
        self._lines = np.asarray(scores, dtype=np.float64)

    search = Retriever.search  # the base class's, derived from scores

    def scores(self, query: str) -> np.ndarray:
        return self._lines


def test_base_search_ranks_scores_best_first_ties_by_chunk_order() -> None:
    """search() from scores(): positive scores only, descending, equal scores in chunk order, cut at top_n."""
    r = _FixedScores([0.5, 2.0, 0.0, 2.0, -1.0, 0.5, 3.0, 0.5])
    assert r.search("q", 100) == [Hit(6, 3.0), Hit(1, 2.0), Hit(3, 2.0), Hit(0, 0.5), Hit(5, 0.5), Hit(7, 0.5)]
    assert r.search("q", 4) == [Hit(6, 3.0), Hit(1, 2.0), Hit(3, 2.0), Hit(0, 0.5)]  # the cut falls inside a tie
    assert r.search("q", 2) == [Hit(6, 3.0), Hit(1, 2.0)]
    assert _FixedScores([0.0, -2.0]).search("q") == []
    with pytest.raises(ValueError, match="top_n"):
        r.search("q", 0)


def test_base_scores_from_search_and_neither_implemented() -> None:
    """scores() from search() (a retriever that implements search): 0 for chunks search does not return; a
    retriever that implements neither says so instead of recursing."""
    r = _LineCount()
    r._lines = np.array([3.0, 0.0, 1.0])
    assert r.scores("q").tolist() == [3.0, 0.0, 1.0]

    class Neither(_LineCount):
        search = Retriever.search

    with pytest.raises(NotImplementedError, match="Neither implements neither"):
        Neither().search("q")
    with pytest.raises(NotImplementedError, match="Neither implements neither"):
        Neither().scores("q")
