"""Tests for explorers (evaluation/explorers.py): our pipeline and the reference adapter behind one call."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

import swe_explore.explore.explorer as explorers
from swe_explore.chunking.types import ScoredChunk
from swe_explore.explore.explorer import IndexedExplorer, ReferenceAdapter, make_explorer
from swe_explore.explore.fusion import FusionExplorer
from swe_explore.explore.packing import PackConfig
from swe_explore.explore.priors import RankPriors
from swe_explore.indexes.build import open_index
from swe_explore.indexes.store import LastLoaded

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
    real_open = open_index

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
    ranked_raw = raw.rank(PYSHOP, "Using pyshop: set cart.discount_code to get ten percent off")
    assert ranked_raw[0].chunk.path == "docs/usage.md"
    tuned = make_explorer("bm25", pack=PackConfig.plain(k=1), store=tmp_path)
    assert isinstance(tuned, IndexedExplorer)
    ranked = tuned.rank(PYSHOP, "Using pyshop: set cart.discount_code to get ten percent off")
    assert ranked[0].chunk.path != "docs/usage.md"


def test_make_explorer_names_and_config() -> None:
    """Reference names give the adapter with K from the packer; unknown names list the valid ones."""
    ref = make_explorer("reference_bm25", pack=PackConfig(k=7))
    assert isinstance(ref, ReferenceAdapter) and ref.explorer_config == {"reference": "reference_bm25", "top_k": 7}
    ours = make_explorer("bm25", chunker="window", chunker_options={"size": 40, "overlap": 10})
    assert isinstance(ours, IndexedExplorer) and ours.name == "bm25+window"
    assert ours.explorer_config["chunker"]["config"]["size"] == 40
    with pytest.raises(ValueError, match="reference_bm25"):
        make_explorer("bm26")


def test_rank_and_explore_scored_share_one_contract(tmp_path: Path) -> None:
    """rank() gives scored chunks best first; explore_scored() gives explore()'s regions with the score of the
    best-ranked chunk each contains and, on request, the snapshot's lines (Cart.total is lines 28-31 of cart.py)."""
    explorer = make_explorer("bm25", pack=PackConfig.plain(k=2, budget=30), store=tmp_path)
    assert isinstance(explorer, IndexedExplorer)
    query = "Cart.total ignores the discount code"
    ranked = explorer.rank(PYSHOP, query)
    assert all(isinstance(s, ScoredChunk) for s in ranked)
    assert [s.score for s in ranked] == sorted((s.score for s in ranked), reverse=True)
    scored = explorer.explore_scored(PYSHOP, query)
    assert [r.region for r in scored] == explorer.explore(PYSHOP, query)
    assert scored[0].region == ("pyshop/cart.py", 28, 31) and scored[0].score == ranked[0].score > 0
    assert all(r.text is None for r in scored)
    text = explorer.explore_scored(PYSHOP, query, with_text=True)[0].text
    assert text == '    def total(self):\n        """Subtotal after the discount code."""\n' + (
        "        subtotal = self.subtotal()\n        return subtotal"
    )
    assert explorer.explore_scored(PYSHOP, "  ") == [] and explorer.rank(PYSHOP, "") == []


def test_fusion_explorer_has_the_same_rank_contract(tmp_path: Path) -> None:
    """The default explorer's rank() is a list of ScoredChunk too, and explore_scored() matches explore()."""
    explorer = make_explorer(store=tmp_path)
    assert isinstance(explorer, FusionExplorer)
    query = "Cart.total ignores the discount code"
    ranked = explorer.rank(PYSHOP, query)
    assert ranked and all(isinstance(s, ScoredChunk) for s in ranked)
    assert [s.score for s in ranked] == sorted((s.score for s in ranked), reverse=True)
    scored = explorer.explore_scored(PYSHOP, query, with_text=True)
    assert [r.region for r in scored] == explorer.explore(PYSHOP, query)
    lines = (PYSHOP / scored[0].path).read_text().split("\n")
    assert scored[0].text == "\n".join(lines[scored[0].start - 1 : scored[0].end])


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("learned", {"top_n": 3}, "learned ranks with its trained model .* does not take top_n"),
        ("learned", {"priors": RankPriors.off()}, "does not take priors"),
        ("learned", {"chunker": "window"}, "does not take chunker"),
        ("learned", {"chunker_options": {"size": 40}}, "does not take chunker_options"),
        ("learned", {"retriever_options": {"k1": 1.2}}, "does not take retriever_options"),
        ("bm25", {"ranker_model": "x"}, "ranker_model applies to the learned explorer only, not bm25"),
        ("tfidf", {"files_first": 2}, "files_first applies to the learned explorer only, not tfidf"),
        ("bm25", {"model": "some/model"}, "bm25 takes no embedding model"),
        ("reference_bm25", {"budget": 300}, "reference baseline as specified.*takes only k, not budget"),
        ("reference_bm25", {"model": "m"}, "takes only k, not model"),
        ("reference_tfidf", {"chunker": "window", "top_n": 5}, "not chunker, top_n"),
        ("reference_potion", {"pack": PackConfig(merge_gap=3)}, r"takes only k and model, not pack \(other than k\)"),
        ("reference_bm25", {"store": "s", "rebuild": True}, "not store, rebuild"),
        ("reference_bm25", {"priors": RankPriors(), "ranker_model": "x"}, "not priors, ranker_model"),
    ],
)
def test_make_explorer_refuses_options_it_would_ignore(name: str, options: dict[str, Any], message: str) -> None:
    """Every option an explorer would not use is a ValueError naming the option and the explorer."""
    with pytest.raises(ValueError, match=message):
        make_explorer(name, **options)


def test_make_explorer_refuses_what_the_command_line_refuses(tmp_path: Path) -> None:
    """The CLI and make_explorer share one check: the same combinations fail both ways, the CLI naming flags."""
    import argparse

    from swe_explore.commands.explorer_args import add_explorer_arguments, explorer_from_args

    parser = argparse.ArgumentParser()
    add_explorer_arguments(parser)
    cases: list[tuple[list[str], str, dict[str, Any], str]] = [
        (["--retriever", "learned", "--top-n", "3"], "learned", {"top_n": 3}, "--top-n"),
        (["--retriever", "bm25", "--ranker-model", "x"], "bm25", {"ranker_model": "x"}, "--ranker-model"),
        (
            ["--retriever", "reference_bm25", "--merge-gap", "3"],
            "reference_bm25",
            {"pack": PackConfig(merge_gap=3)},
            "--merge-gap",
        ),
    ]
    for argv, name, options, flag in cases:
        with pytest.raises(ValueError, match=flag):
            explorer_from_args(parser.parse_args(["--store", str(tmp_path), *argv]))
        with pytest.raises(ValueError, match=name):
            make_explorer(name, **options)
    shared = explorer_from_args(parser.parse_args(["--store", str(tmp_path), "--retriever", "bm25", "--model", "m"]))
    assert isinstance(shared, IndexedExplorer) and "model" not in shared.retriever_options  # a grid's shared flag


def test_make_explorer_accepts_what_applies(tmp_path: Path) -> None:
    """A pack that sets only K is K for the reference; learned takes k, budget, ranker_model, files_first."""
    assert make_explorer("reference_bm25", pack=PackConfig(k=3)).explorer_config["top_k"] == 3
    learned = make_explorer("learned", k=3, budget=200, files_first=1, shape="plain", store=tmp_path)
    assert isinstance(learned, FusionExplorer)
    assert (learned._pack.k, learned._pack.budget, learned.files_first) == (3, 200, 1)
    assert make_explorer("bm25", top_n=3, store=tmp_path).top_n == 3  # type: ignore[union-attr]


def test_last_loaded_keeps_one_snapshot(tmp_path: Path) -> None:
    """LastLoaded loads once per snapshot in a row and replaces the kept value when the snapshot changes."""
    kept: LastLoaded[int] = LastLoaded()
    calls: list[str] = []

    def load(name: str) -> int:
        calls.append(name)
        return len(calls)

    got = [kept.get(tmp_path / name, name, functools.partial(load, name)) for name in ("a", "a", "b", "a")]
    assert calls == ["a", "b", "a"] and got == [1, 1, 2, 3]
