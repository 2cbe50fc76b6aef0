"""Tests of hybrid retrieval: hand-computed reciprocal-rank fusion and the HybridRetriever wiring."""

from __future__ import annotations

from pathlib import Path

import pytest

from swe_explore.chunking.types import Chunk
from swe_explore.retrievers.base import Hit
from swe_explore.retrievers.bm25 import BM25Retriever
from swe_explore.retrievers.hybrid import HybridRetriever, rrf_scores
from swe_explore.retrievers.potion import PotionRetriever
from swe_explore.retrievers.registry import make_retriever
from swe_explore.retrievers.tfidf import TfidfRetriever


def test_rrf_scores_by_hand() -> None:
    """RRF with rrf_k=60 sums 1/(60 + rank) over the rankings that contain a chunk (Cormack et al. 2009)."""
    a = [Hit(0, 9.0), Hit(1, 5.0), Hit(2, 1.0)]
    b = [Hit(2, 0.9), Hit(0, 0.8)]
    scores = rrf_scores([a, b], n_docs=4)
    assert list(scores) == pytest.approx([1 / 61 + 1 / 62, 1 / 62, 1 / 63 + 1 / 61, 0.0])
    weighted = rrf_scores([a, b], n_docs=4, rrf_k=1, weights=[2.0, 0.5])
    assert list(weighted) == pytest.approx([2 / 2 + 0.5 / 3, 2 / 3, 2 / 4 + 0.5 / 2, 0.0])
    with pytest.raises(ValueError, match="1 weights for 2 rankings"):
        rrf_scores([a, b], n_docs=4, weights=[1.0])


def test_hybrid_fuses_its_parts(sample_chunks: list[Chunk]) -> None:
    """The hybrid's ranking is the RRF of its parts' rankings, ties by chunk index, scores > 0 only."""
    bm25, tfidf = BM25Retriever(), TfidfRetriever()
    hybrid = HybridRetriever(parts=[bm25, tfidf], rrf_k=60, depth=10)
    hybrid.build(sample_chunks)
    query = "get_cookie returns the session timeout"
    expected = rrf_scores([bm25.search(query, 10), tfidf.search(query, 10)], n_docs=6)
    hits = hybrid.search(query, top_n=3)
    assert [h.score for h in hits] == pytest.approx(sorted(expected[expected > 0], reverse=True)[:3])
    assert hits[0].index in (0, 2)  # the session chunk and the get_cookie chunk lead one ranking each
    assert hybrid.n_docs == 6 and hybrid.search("nothing matches here") == []


def test_bm25_plus_potion_by_name(tiny_model_dir: Path, sample_chunks: list[Chunk]) -> None:
    """Parts given by name are made through the registry, and ``model`` reaches the embedding part."""
    hybrid = make_retriever("hybrid", parts=["bm25", "potion"], model=str(tiny_model_dir))
    assert isinstance(hybrid, HybridRetriever)
    assert [type(p) for p in hybrid.parts()] == [BM25Retriever, PotionRetriever]
    hybrid.build(sample_chunks)
    assert hybrid.config()["parts"][1]["config"]["model"] == str(tiny_model_dir)
    bm25_hits, potion_hits = (p.search("cookie jar", 1000) for p in hybrid.parts())
    expected = rrf_scores([bm25_hits, potion_hits], n_docs=6)
    hits = hybrid.search("cookie jar", top_n=6)
    assert {h.index for h in hits} == {h.index for h in bm25_hits} | {h.index for h in potion_hits}
    assert [h.score for h in hits] == pytest.approx([expected[h.index] for h in hits])
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_weights_change_the_winner() -> None:
    """With weights (1, 0) the hybrid ranks exactly as its first part."""
    chunks = [Chunk("a.py", 1, 1, text="alpha beta"), Chunk("b.py", 1, 1, text="alpha alpha alpha gamma")]
    bm25 = BM25Retriever(fields=("text",))
    other = BM25Retriever(fields=("text",), k1=0.0)
    hybrid = HybridRetriever(parts=[bm25, other], weights=[1.0, 0.0])
    hybrid.build(chunks)
    assert [h.index for h in hybrid.search("alpha")] == [h.index for h in bm25.search("alpha")]


def test_parts_by_config_and_defaults(tiny_model_dir: Path) -> None:
    """Parts given as {"name", "config"} (what config() records) rebuild the same hybrid; no parts = BM25 + Potion;
    an explicit model of a part wins over the hybrid's ``model``."""
    hybrid = make_retriever("hybrid", parts=["tfidf", {"name": "bm25", "config": {"k1": 0.9}}], weights=[1, 2])
    options = hybrid.config()
    options["rrf_k"] = options.pop("k")  # the saved key of the RRF constant is k
    again = make_retriever("hybrid", **options)
    assert again.config() == hybrid.config()
    assert [(p.name, p.config().get("k1")) for p in hybrid.parts()] == [("tfidf", None), ("bm25", 0.9)]
    default = make_retriever("hybrid", model=str(tiny_model_dir))
    assert [p.name for p in default.parts()] == ["bm25", "potion"]
    other = tiny_model_dir.parent / "elsewhere"
    part = {"name": "potion", "config": {"model": str(tiny_model_dir)}}
    pinned = make_retriever("hybrid", parts=["bm25", part], model=str(other))
    assert pinned.parts()[1].config()["model"] == str(tiny_model_dir)


def test_invalid_hybrids() -> None:
    """Fewer than two parts, unknown names, nested hybrids, non-retriever parts and bad k/weights/depth raise
    ValueError, whether made by name through the registry or from instances."""
    with pytest.raises(ValueError, match="at least two parts"):
        make_retriever("hybrid", parts=["bm25"])
    with pytest.raises(ValueError, match="at least two parts"):
        make_retriever("hybrid", parts="bm25")
    with pytest.raises(ValueError, match="unknown retriever 'bm99'"):
        make_retriever("hybrid", parts=["bm25", "bm99"])
    with pytest.raises(ValueError, match="cannot itself be hybrid"):
        make_retriever("hybrid", parts=["bm25", "hybrid"])
    with pytest.raises(ValueError, match="at least two parts"):
        HybridRetriever([BM25Retriever()])
    with pytest.raises(ValueError, match="must be a Retriever"):
        HybridRetriever([BM25Retriever(), "tfidf"])  # type: ignore[list-item]
    nested = HybridRetriever([BM25Retriever(), TfidfRetriever()])
    with pytest.raises(ValueError, match="cannot itself be hybrid"):
        HybridRetriever([BM25Retriever(), nested])
    with pytest.raises(ValueError, match="k must"):
        make_retriever("hybrid", parts=["bm25", "tfidf"], rrf_k=0)
    with pytest.raises(ValueError, match="weights must be 2 numbers"):
        make_retriever("hybrid", parts=["bm25", "tfidf"], weights=[1.0])
    with pytest.raises(ValueError, match="depth"):
        HybridRetriever([BM25Retriever(), TfidfRetriever()], depth=0)


def test_rrf_constant_old_spelling_warns_and_keeps_the_saved_key() -> None:
    """``k=`` still sets the RRF constant, with a DeprecationWarning naming ``rrf_k``; the config keeps the key
    ``k`` (indexes and result rows hash it), so both spellings give the same config."""
    new = make_retriever("hybrid", parts=["bm25", "tfidf"], rrf_k=10)
    with pytest.warns(DeprecationWarning, match="use rrf_k"):
        old = make_retriever("hybrid", parts=["bm25", "tfidf"], k=10)
    assert old.config() == new.config()
    assert new.config()["k"] == 10.0 and "rrf_k" not in new.config()
    assert rrf_scores([[Hit(0, 1.0)]], n_docs=2, rrf_k=1.0).tolist() == [0.5, 0.0]
