"""Tests for explorers (evaluation/explorers.py): our pipeline and the reference adapter behind one call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import swe_explore.explore.explorer as explorers
from swe_explore.explore.explorer import IndexedExplorer, ReferenceAdapter, make_explorer
from swe_explore.explore.packing import PackConfig
from swe_explore.explore.priors import RankPriors

ROOT = Path(__file__).resolve().parent.parent
PYSHOP = ROOT / "swe_explore" / "data" / "mini" / "repos" / "mini__pyshop-1"


def test_explore_returns_packed_regions_best_first(tmp_path: Path) -> None:
    """BM25 over function chunks puts Cart.total first and obeys K and B."""
    explorer = make_explorer("bm25", pack=PackConfig.plain(k=2, budget=30), store=tmp_path)
    regions = explorer.explore(PYSHOP, "Cart.total ignores the discount code")
    assert regions[0] == ("pyshop/cart.py", 28, 31)
    assert len(regions) <= 2 and sum(r.n_lines for r in regions) <= 30


def test_repeated_queries_reuse_the_loaded_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the first query on a snapshot opens its index; the next ones reuse it."""
    calls: list[int] = []
    real_open = explorers.open_index

    def counting_open(*a: Any, **k: Any) -> Any:
        calls.append(1)
        return real_open(*a, **k)

    monkeypatch.setattr(explorers, "open_index", counting_open)
    explorer = make_explorer("bm25", store=tmp_path)
    first = explorer.explore(PYSHOP, "discount code")
    second = explorer.explore(PYSHOP, "discount code")
    assert first == second and len(calls) == 1


def test_empty_query_gives_no_regions(tmp_path: Path) -> None:
    """A blank issue text yields no regions rather than an error."""
    assert make_explorer("tfidf", store=tmp_path).explore(PYSHOP, "   \n") == []


def test_priors_off_gives_the_raw_ranking(tmp_path: Path) -> None:
    """With RankPriors.off() the docs file can rank first for a prose query that matches it best."""
    raw = make_explorer("bm25", priors=RankPriors.off(), pack=PackConfig.plain(k=1), store=tmp_path)
    assert isinstance(raw, IndexedExplorer)
    ranked_raw, _ = raw.rank(PYSHOP, "Using pyshop: set cart.discount_code to get ten percent off")
    assert ranked_raw[0].path == "docs/usage.md"
    tuned = make_explorer("bm25", pack=PackConfig.plain(k=1), store=tmp_path)
    assert isinstance(tuned, IndexedExplorer)
    ranked, _ = tuned.rank(PYSHOP, "Using pyshop: set cart.discount_code to get ten percent off")
    assert ranked[0].path != "docs/usage.md"


def test_make_explorer_names_and_config() -> None:
    """Reference names give the adapter with K from the packer; unknown names list the valid ones."""
    ref = make_explorer("reference_bm25", pack=PackConfig(k=7))
    assert isinstance(ref, ReferenceAdapter) and ref.explorer_config == {"reference": "reference_bm25", "top_k": 7}
    ours = make_explorer("bm25", chunker="window", chunker_options={"size": 40, "overlap": 10})
    assert isinstance(ours, IndexedExplorer) and ours.name == "bm25+window"
    assert ours.explorer_config["chunker"]["config"]["size"] == 40
    with pytest.raises(ValueError, match="reference_bm25"):
        make_explorer("bm26")
