"""Tests of the FAISS retriever: normalised vectors and -1 ids (docs/retrievers.md, 'FAISS'), brute-force parity."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import faiss
import numpy as np
import pytest

from swe_explore.chunking.types import Chunk
from swe_explore.retrievers.base import Hit, top_hits
from swe_explore.retrievers.faiss_index import FaissRetriever, build_faiss_index, faiss_search
from swe_explore.retrievers.potion import PotionRetriever


def _chunks(texts: list[str]) -> list[Chunk]:
    """One chunk per text in ``f.py``."""
    return [Chunk("f.py", i + 1, i + 1, text=t) for i, t in enumerate(texts)]


def test_br19_raw_inner_product_prefers_long_vectors(
    tiny_model_factory: Callable[[Mapping[str, Sequence[float]]], Path],
) -> None:
    """Raw IP ranks (3, 1) above the exact match (1, 0); our normalised index ranks the exact match first."""
    raw = faiss.IndexFlatIP(2)
    raw.add(np.array([[1.0, 0.0], [3.0, 1.0]], dtype=np.float32))
    scores, ids = raw.search(np.array([[1.0, 0.0]], dtype=np.float32), 2)
    assert list(ids[0]) == [1, 0] and list(scores[0]) == [3.0, 1.0]

    model = tiny_model_factory({"exact": [1.0, 0.0], "long": [3.0, 1.0]})
    r = FaissRetriever(model=str(model), fields=("text",))
    r.build(_chunks(["exact", "long"]))
    # pytest.approx stands in for the float score
    assert r.search("exact") == [Hit(0, pytest.approx(1.0)), Hit(1, pytest.approx(3 / np.sqrt(10)))]  # type: ignore[arg-type]


def test_br20_more_neighbours_than_vectors(tiny_model_dir: Path) -> None:
    """FAISS pads with id -1 when k > ntotal; our search returns only real chunks, never chunks[-1]."""
    raw = faiss.IndexFlatIP(2)
    raw.add(np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32))
    _, ids = raw.search(np.array([[1.0, 0.0]], dtype=np.float32), 5)
    assert list(ids[0]) == [0, 1, -1, -1, -1]

    r = FaissRetriever(model=str(tiny_model_dir), fields=("text",))
    r.build(_chunks(["alpha", "request", "delta"]))
    hits = r.search("alpha", top_n=10)
    # pytest.approx stands in for the float score
    assert hits == [Hit(0, pytest.approx(1.0)), Hit(1, pytest.approx(0.6))]  # type: ignore[arg-type]  # 'delta' is orthogonal: score 0


def test_faiss_search_filters_padding_ids() -> None:
    """faiss_search drops -1 ids and non-positive scores even when the index returns them (e.g. HNSW)."""

    class PaddedIndex:
        """An index stub answering like an HNSW search that found two of four neighbours."""

        ntotal = 4

        def search(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
            """Two real neighbours, then padding."""
            return np.array([[0.9, 0.0, -3.4e38, -3.4e38]]), np.array([[2, 3, -1, -1]])

    # pytest.approx stands in for the float score
    assert faiss_search(PaddedIndex(), np.zeros(2, np.float32), 4) == [Hit(2, pytest.approx(0.9))]  # type: ignore[arg-type]


def test_flat_top_k_equals_numpy_brute_force() -> None:
    """An exact flat index gives the same top-10 ids and scores as numpy brute force on unit vectors."""
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(500, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = build_faiss_index(vectors, "flat")
    for q in rng.normal(size=(20, 32)).astype(np.float32):
        q /= np.linalg.norm(q)
        ours = faiss_search(index, q, 10)
        brute = top_hits(vectors @ q, 10)
        assert [h.index for h in ours] == [h.index for h in brute]
        assert [h.score for h in ours] == pytest.approx([h.score for h in brute], abs=1e-5)


def test_hnsw_option_agrees_with_flat_on_small_data() -> None:
    """HNSW (inner product) finds the same best neighbour as the flat index and most of its top-10."""
    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    flat, hnsw = build_faiss_index(vectors, "flat"), build_faiss_index(vectors, "hnsw")
    assert hnsw.metric_type == faiss.METRIC_INNER_PRODUCT
    hnsw.hnsw.efSearch = 128
    for q in vectors[:10]:
        a, b = faiss_search(flat, q, 10), faiss_search(hnsw, q, 10)
        assert a[0].index == b[0].index
        assert len({h.index for h in a} & {h.index for h in b}) >= 8


def test_faiss_matches_potion_on_the_same_model(tiny_model_dir: Path, sample_chunks: list[Chunk]) -> None:
    """FAISS flat and Potion brute force share the embedding code and return the same hits."""
    potion, flat = PotionRetriever(model=str(tiny_model_dir)), FaissRetriever(model=str(tiny_model_dir))
    potion.build(sample_chunks)
    flat.build(sample_chunks)
    for query in ["alpha timeout", "cookie session", "beta request", "gamma"]:
        ours, ref = flat.search(query, 4), potion.search(query, 4)
        assert [h.index for h in ours] == [h.index for h in ref]
        assert [h.score for h in ours] == pytest.approx([h.score for h in ref], abs=1e-6)


def test_options_validated_and_empty_index(tiny_model_dir: Path) -> None:
    """Unknown index kinds and bad HNSW parameters raise ValueError; an empty index returns []."""
    with pytest.raises(ValueError, match="valid: flat, hnsw"):
        FaissRetriever(model=str(tiny_model_dir), index="ivf")
    with pytest.raises(ValueError, match="hnsw_m"):
        FaissRetriever(model=str(tiny_model_dir), index="hnsw", hnsw_m=0)
    r = FaissRetriever(model=str(tiny_model_dir), index="hnsw")
    r.build([])
    assert r.n_docs == 0 and r.search("alpha") == []
