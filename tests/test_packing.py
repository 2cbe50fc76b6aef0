"""Tests for the shared line-budget packer (retrievers/packing.py)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest

from swe_explore.chunking.types import Chunk, Region
from swe_explore.explore.packing import PackConfig, pack


def _c(path: str, start: int, end: int, symbol: str = "") -> Chunk:
    return Chunk(path, start, end, kind="function", symbol=symbol, language="python")


def _spans(regions: Sequence[Region | Chunk]) -> list[tuple[str, int, int]]:
    return [(r.path, r.start, r.end) for r in regions]


def test_distinct_files_become_regions_in_rank_order() -> None:
    """Chunks of different files each open a region, in ranking order."""
    ranked = [_c("b.py", 10, 19), _c("a.py", 1, 5), _c("c.py", 3, 4)]
    assert _spans(pack(ranked, PackConfig.plain())) == [("b.py", 10, 19), ("a.py", 1, 5), ("c.py", 3, 4)]


def test_overlapping_and_adjacent_chunks_merge() -> None:
    """Overlapping (1-10, 5-14) and adjacent (15-20) chunks of one file become one region of 20 lines."""
    ranked = [_c("a.py", 1, 10, "f"), _c("a.py", 5, 14, "g"), _c("a.py", 15, 20, "h")]
    regions = pack(ranked, PackConfig.plain())
    assert regions == [Region("a.py", 1, 20)] and regions[0].n_lines == 20


def test_gap_chunk_of_same_file_opens_a_second_region_unless_merge_gap() -> None:
    """A chunk 5 lines below a region is a new region by default and is merged (with the gap) at merge_gap=5."""
    ranked = [_c("a.py", 1, 10), _c("a.py", 16, 20)]
    assert _spans(pack(ranked, PackConfig.plain())) == [("a.py", 1, 10), ("a.py", 16, 20)]
    assert _spans(pack(ranked, PackConfig.plain(merge_gap=5))) == [("a.py", 1, 20)]


def test_budget_cuts_the_last_region_to_its_head() -> None:
    """With B=25 a third chunk of 10 lines keeps its first 5 lines; nothing is emitted after the budget."""
    ranked = [_c("a.py", 1, 10), _c("b.py", 1, 10), _c("c.py", 21, 30), _c("d.py", 1, 3)]
    regions = pack(ranked, PackConfig.plain(budget=25))
    assert _spans(regions) == [("a.py", 1, 10), ("b.py", 1, 10), ("c.py", 21, 25)]


def test_min_region_lines_skips_tiny_cuts_but_keeps_small_whole_chunks() -> None:
    """A chunk cut to 2 lines is skipped at min_region_lines=3, but a whole 2-line chunk later still fits."""
    ranked = [_c("a.py", 1, 8), _c("b.py", 1, 10), _c("c.py", 1, 2)]
    regions = pack(ranked, PackConfig.plain(budget=10, min_region_lines=3))
    assert _spans(regions) == [("a.py", 1, 8), ("c.py", 1, 2)]


def test_k_limits_regions_but_later_chunks_still_extend_chosen_regions() -> None:
    """With K=2, a third file is refused while a chunk adjacent to the first region still deepens it."""
    ranked = [_c("a.py", 1, 10), _c("b.py", 1, 10), _c("c.py", 1, 10), _c("a.py", 11, 15)]
    assert _spans(pack(ranked, PackConfig.plain(k=2))) == [("a.py", 1, 15), ("b.py", 1, 10)]


def test_max_region_lines_caps_new_regions_and_extensions() -> None:
    """A 100-line chunk is cut to the 30-line cap, and an overlapping chunk cannot grow it past the cap."""
    ranked = [_c("a.py", 1, 100), _c("a.py", 25, 40), _c("b.py", 5, 6)]
    regions = pack(ranked, PackConfig.plain(max_region_lines=30))
    assert _spans(regions) == [("a.py", 1, 30), ("b.py", 5, 6)]


def test_max_regions_per_file_favours_breadth() -> None:
    """With one region per file, a second distant chunk of a.py is skipped and b.py gets the slot."""
    ranked = [_c("a.py", 1, 5), _c("a.py", 50, 60), _c("b.py", 1, 5)]
    assert _spans(pack(ranked, PackConfig.plain(k=2, max_regions_per_file=1))) == [("a.py", 1, 5), ("b.py", 1, 5)]


def test_file_lines_clips_to_file_bounds_and_drops_empty_files() -> None:
    """Known line counts clip a chunk past EOF and drop chunks of files with no lines."""
    ranked = [_c("a.py", 5, 40), _c("empty.py", 1, 3), _c("b.py", 1, 2)]
    regions = pack(ranked, PackConfig.plain(), file_lines={"a.py": 12, "empty.py": 0, "b.py": 2})
    assert _spans(regions) == [("a.py", 5, 12), ("b.py", 1, 2)]


def test_extension_joining_two_regions_coalesces_them() -> None:
    """A chunk bridging two regions of one file makes them a single region; no line is emitted twice."""
    ranked = [_c("a.py", 1, 10), _c("a.py", 20, 30), _c("a.py", 8, 22)]
    assert _spans(pack(ranked, PackConfig.plain())) == [("a.py", 1, 30)]


def test_empty_ranking_and_k_larger_than_chunks() -> None:
    """An empty ranking gives no regions; K larger than the chunk count gives one region per chunk."""
    assert pack([], PackConfig.plain()) == []
    assert _spans(pack([_c("a.py", 1, 2)], PackConfig.plain(k=50))) == [("a.py", 1, 2)]


@pytest.mark.parametrize("field,value", [("k", 0), ("budget", 0), ("merge_gap", -1), ("max_region_lines", 0)])
def test_invalid_config_is_rejected(field: str, value: int) -> None:
    """Out-of-range parameters raise ValueError naming the parameter."""
    kwargs: dict[str, Any] = {field: value}
    with pytest.raises(ValueError, match=field):
        PackConfig(**kwargs)


@pytest.mark.parametrize("seed", range(40))
def test_invariants_over_random_rankings(seed: int) -> None:
    """For random rankings and configs: <= K regions, <= B lines, no shared line, inside file bounds, deterministic."""
    rng = random.Random(seed)
    files = {f"f{i}.py": rng.randint(1, 300) for i in range(rng.randint(1, 8))}
    ranked = []
    for _ in range(rng.randint(0, 60)):
        path = rng.choice(sorted(files))
        start = rng.randint(1, files[path])
        ranked.append(_c(path, start, min(files[path] + rng.randint(0, 5), start + rng.randint(0, 90))))
    cfg = PackConfig(
        k=rng.randint(1, 8),
        budget=rng.randint(1, 600),
        max_region_lines=rng.choice([None, rng.randint(1, 200)]),
        max_regions_per_file=rng.choice([None, 1, 2]),
        merge_gap=rng.randint(0, 10),
        min_region_lines=rng.randint(1, 10),
        fill=rng.random() < 0.5,
    )
    regions = pack(ranked, cfg, file_lines=files)
    assert len(regions) <= cfg.k
    assert sum(r.n_lines for r in regions) <= cfg.budget
    seen: set[tuple[str, int]] = set()
    for r in regions:
        assert 1 <= r.start <= r.end <= files[r.path]
        lines = {(r.path, ln) for ln in range(r.start, r.end + 1)}
        assert not lines & seen
        seen |= lines
    assert pack(ranked, cfg, file_lines=files) == regions
    if ranked:
        assert regions, "a non-empty ranking with budget >= 1 yields at least one region"


def test_fill_spends_the_budget_downwards_then_upwards_best_region_first() -> None:
    """Fill grows the first region to its cap (down to EOF, then up), then the second with what is left."""
    ranked = [_c("a.py", 10, 19), _c("b.py", 5, 6)]
    cfg = PackConfig.plain(budget=40, max_region_lines=30, fill=True)
    regions = pack(ranked, cfg, file_lines={"a.py": 25, "b.py": 100})
    # left = 40 - 10 - 2 = 28. a.py 10-19 grows down 6 lines to EOF (25), then up 9 lines to line 1: 1-25.
    # left = 28 - 15 = 13, so b.py 5-6 grows down 13 lines: 5-19. Total 25 + 15 = 40 lines.
    assert _spans(regions) == [("a.py", 1, 25), ("b.py", 5, 19)]


def test_fill_never_grows_into_another_region_of_the_same_file() -> None:
    """Two regions of one file grow towards each other and are coalesced instead of overlapping."""
    ranked = [_c("a.py", 1, 5), _c("a.py", 20, 24)]
    regions = pack(ranked, PackConfig.plain(budget=100, fill=True), file_lines={"a.py": 30})
    assert _spans(regions) == [("a.py", 1, 30)]


def test_default_config_caps_regions_per_file_and_merges_near_chunks() -> None:
    """The defaults keep at most 2 regions per file and merge chunks within 20 lines (gap filled)."""
    ranked = [_c("a.py", 1, 5), _c("a.py", 20, 24), _c("a.py", 100, 104), _c("a.py", 200, 204), _c("b.py", 1, 3)]
    regions = pack(ranked, PackConfig(fill=False))
    assert _spans(regions) == [("a.py", 1, 24), ("a.py", 100, 104), ("b.py", 1, 3)]


def test_regions_left_close_by_fill_merge_and_the_lowest_ranked_region_pays() -> None:
    """Two regions of one file that fill leaves within merge_gap become one (the seaborn-3069 scales.py
    137-147 / 149-280 case); with the budget spent, the lines in between are cut from the tail of the
    lowest-ranked other region. Without merge_gap they stay apart."""
    ranked = [_c("s.py", 1, 10), _c("s.py", 40, 50), _c("t.py", 1, 40)]
    lines = {"s.py": 100, "t.py": 40}
    # 10 + 11 + 40 = 61 lines; fill spends the 10 left on s.py 1-10 (down to 1-20): s.py 1-20 and 40-50 are
    # 19 lines apart. Merging adds those 19 lines, so t.py (rank 2, 40 lines) gives up 19: 1-21.
    merged = pack(ranked, PackConfig.plain(budget=71, merge_gap=20, fill=True), file_lines=lines)
    assert _spans(merged) == [("s.py", 1, 50), ("t.py", 1, 21)]
    assert sum(r.n_lines for r in merged) == 71
    apart = pack(ranked, PackConfig.plain(budget=71, fill=True), file_lines=lines)
    assert _spans(apart) == [("s.py", 1, 20), ("s.py", 40, 50), ("t.py", 1, 40)]


def test_a_merge_nobody_can_pay_for_is_left_out() -> None:
    """If no region other than the upper one of the pair is long enough to give up the gap lines, no merge."""
    ranked = [_c("s.py", 1, 10), _c("s.py", 40, 50)]
    regions = pack(ranked, PackConfig.plain(budget=31, merge_gap=20, fill=True), file_lines={"s.py": 100})
    assert _spans(regions) == [("s.py", 1, 20), ("s.py", 40, 50)]  # 19 lines needed, s.py 40-50 has 11


@pytest.mark.parametrize("seed", range(40))
def test_no_two_regions_of_a_file_stay_within_merge_gap_when_the_budget_allows(seed: int) -> None:
    """Invariant: after packing, two regions of one file are more than merge_gap lines apart unless every other
    region is too short to pay for the lines in between; K, B and no-overlap still hold."""
    rng = random.Random(1000 + seed)
    files = {f"f{i}.py": rng.randint(50, 400) for i in range(rng.randint(1, 4))}
    ranked = []
    for _ in range(rng.randint(1, 40)):
        path = rng.choice(sorted(files))
        start = rng.randint(1, files[path])
        ranked.append(_c(path, start, min(files[path], start + rng.randint(0, 60))))
    cfg = PackConfig(
        k=rng.randint(2, 8), budget=rng.randint(50, 600), merge_gap=rng.randint(1, 25), fill=rng.random() < 0.5
    )
    regions = pack(ranked, cfg, file_lines=files)
    assert len(regions) <= cfg.k and sum(r.n_lines for r in regions) <= cfg.budget
    for i, a in enumerate(regions):
        for b in regions[i + 1 :]:
            if a.path == b.path:
                between = max(a.start, b.start) - min(a.end, b.end) - 1
                assert between > 0
                if between <= cfg.merge_gap:
                    over = sum(r.n_lines for r in regions) + between - cfg.budget
                    upper = a if a.start < b.start else b
                    assert all(r.n_lines <= over for r in regions if r != upper)
