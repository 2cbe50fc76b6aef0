"""Tests for the ranking priors (explore/priors.py)."""

from __future__ import annotations

import pytest

from swe_explore.chunking.types import Chunk
from swe_explore.explore.priors import RankPriors, apply_priors
from swe_explore.retrievers.base import Hit

CHUNKS = [
    Chunk("docs/guide.rst", 1, 10, "window", "", "text"),  # 0: prose in a docs dir
    Chunk("pkg/sessions.py", 1, 10, "method", "Session.request", "python"),  # 1
    Chunk("pkg/models.py", 1, 10, "function", "encode", "python"),  # 2
    Chunk("pkg/models.py", 20, 30, "function", "decode_body", "python"),  # 3
    Chunk("examples/demo.py", 1, 5, "function", "main", "python"),  # 4
]


def _ranks(hits: list[Hit]) -> list[tuple[int, float]]:
    return [(h.index, round(h.score, 6)) for h in hits]


def test_off_keeps_scores_and_sorts_ties_by_index() -> None:
    """With all priors off, scores are unchanged and ties keep chunk order."""
    hits = [Hit(2, 1.0), Hit(0, 2.0), Hit(1, 1.0)]
    assert _ranks(apply_priors("anything", CHUNKS, hits, RankPriors.off())) == [(0, 2.0), (1, 1.0), (2, 1.0)]


def test_docs_and_aux_dirs_are_down_weighted() -> None:
    """A docs/ .rst chunk is multiplied by doc_weight and aux_dir_weight; an examples/ .py by aux_dir_weight only."""
    priors = RankPriors(doc_weight=0.5, aux_dir_weight=0.4, symbol_boost=0, path_boost=0, file_weight=0)
    hits = [Hit(0, 10.0), Hit(4, 10.0), Hit(2, 3.0)]
    # 0: 10 * 0.5 * 0.4 = 2.0; 4: 10 * 0.4 = 4.0; 2: unchanged 3.0
    assert _ranks(apply_priors("q", CHUNKS, hits, priors)) == [(4, 4.0), (2, 3.0), (0, 2.0)]


def test_symbol_and_file_mentions_are_boosted() -> None:
    """`request` named in the issue boosts Session.request; `models.py` named boosts both models.py chunks."""
    priors = RankPriors(doc_weight=1, aux_dir_weight=1, symbol_boost=1.0, path_boost=0.5, file_weight=0)
    hits = [Hit(1, 1.0), Hit(2, 1.0), Hit(3, 1.0)]
    query = "Calling request() fails in pkg/models.py"
    # 1: symbol `request` (7 chars) is an identifier of the query -> 1 * 2 = 2; 2 and 3: path named -> 1.5
    assert _ranks(apply_priors(query, CHUNKS, hits, priors)) == [(1, 2.0), (2, 1.5), (3, 1.5)]


def test_short_symbols_and_init_stems_are_not_boosted() -> None:
    """Names under 4 characters and the `__init__` stem never count as mentions."""
    chunks = [Chunk("pkg/__init__.py", 1, 3, "function", "get", "python"), Chunk("pkg/api.py", 1, 3, "", "", "python")]
    priors = RankPriors(doc_weight=1, aux_dir_weight=1, symbol_boost=1, path_boost=1, file_weight=0)
    hits = [Hit(0, 1.0), Hit(1, 1.0)]
    assert _ranks(apply_priors("get __init__ api", chunks, hits, priors)) == [(0, 1.0), (1, 1.0)]


def test_file_evidence_adds_the_files_top_scores() -> None:
    """Each chunk gains file_weight times the sum of its file's top-3 scores, so two matches beat one."""
    priors = RankPriors(doc_weight=1, aux_dir_weight=1, symbol_boost=0, path_boost=0, file_weight=0.5)
    hits = [Hit(1, 3.0), Hit(2, 2.0), Hit(3, 2.0)]
    # 1: 3 + 0.5 * 3 = 4.5; 2 and 3: 2 + 0.5 * (2 + 2) = 4.0
    assert _ranks(apply_priors("q", CHUNKS, hits, priors)) == [(1, 4.5), (2, 4.0), (3, 4.0)]


def test_empty_hits_and_invalid_weights() -> None:
    """No hits give no hits; a multiplier above 1 or a negative boost is rejected."""
    assert apply_priors("q", CHUNKS, [], RankPriors()) == []
    with pytest.raises(ValueError, match="doc_weight"):
        RankPriors(doc_weight=1.5)
    with pytest.raises(ValueError, match="file_weight"):
        RankPriors(file_weight=-1)
