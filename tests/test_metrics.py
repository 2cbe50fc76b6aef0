"""Hand-computed tests of the 17 reference metrics and every quirk of docs/metrics.md §0-§1."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import pytest

from swe_explore.chunking.types import Chunk, Region
from swe_explore.evaluation.line_counts import file_line_counts
from swe_explore.evaluation.metrics import (
    METRIC_NAMES,
    LineSet,
    context_efficiency,
    evaluate_instance,
    f1_score,
    first_useful_hit,
    hit_file_rate,
    hit_region_rate,
    line_set,
    ndcg_at_100,
    ndcg_at_300,
    ndcg_at_500,
    ndcg_at_budget,
    noise_file_rate,
    noise_region_rate,
    optional_coverage,
    precision,
    recall,
    recall_at_100,
    recall_at_300,
    recall_at_500,
    recall_at_budget,
    resolve_interval,
    weighted_core_coverage,
    zero_metrics,
)

LOG2_3 = math.log2(3)


def reg(path: str, start: int, end: int) -> dict[str, Any]:
    """A region dict."""
    return {"path": path, "start": start, "end": end}


def gt(
    core: list[dict[str, Any]],
    core_files: list[str] | None = None,
    optional: dict[str, list[dict[str, Any]]] | None = None,
    optional_files: dict[str, list[str]] | None = None,
    main: list[str] | None = None,
) -> dict[str, Any]:
    """A ground_truth dict; core files default to the core-region paths."""
    return {
        "read_core_regions": core,
        "read_core_files": core_files if core_files is not None else sorted({r["path"] for r in core}),
        "read_optional_regions_map": optional or {},
        "read_optional_files_map": optional_files or {},
        "main_files": main or [],
        "modified_core_files": main or [],
    }


# ----------------------------------------------------------------------------------------------------------
# Region resolution (docs/metrics.md §0.1)
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "counts", "expected"),
    [
        (1, -1, {"a.py": 10}, (1, 10)),  # end=-1 -> L
        (1, -1, {}, None),  # end=-1 without a line count: unresolvable
        (1, -1, {"a.py": 0}, None),  # L < 1: unresolvable
        (-8, -1, {"a.py": 20}, (13, 20)),  # s = 20 - 8 + 1 = 13
        (-8, 15, {"a.py": 20}, (13, 15)),  # negative start, explicit end
        (-8, 15, {}, None),  # negative start needs L
        (-30, -1, {"a.py": 20}, (1, 20)),  # s = 20 - 30 + 1 = -9, clamped to 1
        (5, -1, {"a.py": 3}, (3, 3)),  # sentinel case clamps s = 5 to L = 3
        (-2, 50, {"a.py": 20}, (19, 20)),  # sentinel case clamps e = 50 to L = 20
        (1, 500, {"a.py": 20}, (1, 500)),  # no sentinel: e NOT clamped to the file length
        (0, 5, {}, (1, 5)),  # s = max(1, 0)
        (10, 5, {}, (10, 5)),  # s > e kept: an empty range
        (3, 0, {}, None),  # end < 1: unresolvable
        (3, -2, {"a.py": 20}, None),  # end = -2 is no sentinel, and < 1
    ],
)
def test_resolve_interval(start: int, end: int, counts: dict[str, int], expected: tuple[int, int] | None) -> None:
    """resolve_interval reproduces the reference's sentinel, clamping and unresolvable rules."""
    assert resolve_interval("a.py", start, end, counts) == expected


def test_regions_accepted_as_dict_tuple_list_and_chunk() -> None:
    """Dicts, tuples, lists and Chunks are the same region."""
    chunk = Chunk(path="a.py", start=3, end=7, kind="window", text="x")
    assert {Region.from_json(r) for r in (reg("a.py", 3, 7), ("a.py", 3, 7), ["a.py", 3, 7], chunk)} == {("a.py", 3, 7)}
    g = gt([reg("a.py", 1, 5)])
    # a Chunk and a bare tuple are outside the annotated Preds type on purpose: the runtime accepts them too
    assert (
        evaluate_instance([chunk], g)  # type: ignore[list-item]
        == evaluate_instance([("a.py", 3, 7)], g)  # type: ignore[list-item]
        == evaluate_instance([reg("a.py", 3, 7)], g)
    )


@pytest.mark.parametrize(
    "bad", [{"path": "a.py", "start": 1}, ("a.py", 1), ("a.py", "1", 2), (3, 1, 2), ("a.py", 1.0, 2), 42]
)
def test_malformed_region_is_a_value_error(bad: Any) -> None:
    """A region with a missing key, wrong arity or wrong types raises ValueError showing it."""
    with pytest.raises(ValueError, match="region"):
        evaluate_instance([bad], gt([reg("a.py", 1, 5)]))


def test_line_set_drops_unresolvable_and_empty_regions() -> None:
    """The line set is the union of resolvable non-empty regions: 1-5 ∪ 4-8 = 8 lines, the rest dropped."""
    lines = line_set([reg("a.py", 1, 5), reg("a.py", 4, 8), reg("b.py", 1, -1), reg("a.py", 9, 3)], {})
    assert len(lines) == 8
    assert ("a.py", 8) in lines and ("a.py", 9) not in lines and ("b.py", 1) not in lines


# ----------------------------------------------------------------------------------------------------------
# One instance, all 17 metrics by hand
# ----------------------------------------------------------------------------------------------------------

MAIN_GT = gt(
    core=[reg("a.py", 1, 10), reg("b.py", 5, 8)],
    core_files=["a.py", "b.py", "c.py"],
    optional={"m1": [reg("d.py", 1, 4)], "m2": [reg("a.py", 9, 12)]},
    optional_files={"m1": ["d.py"], "m2": ["a.py"]},
    main=["a.py"],
)
MAIN_PREDS = [reg("a.py", 6, 15), reg("x.py", 1, 5), reg("b.py", 1, 4), reg("d.py", 3, 3)]


def test_all_metrics_on_one_instance() -> None:
    """Every metric of a mixed instance equals its hand computation."""
    m = evaluate_instance(MAIN_PREDS, MAIN_GT)
    assert list(m) == list(METRIC_NAMES)
    # P = a6-15 (10) + x1-5 (5) + b1-4 (4) + d3 (1) = 20 lines; C = a1-10 (10) + b5-8 (4) = 14; P∩C = a6-10 = 5.
    assert m["precision"] == pytest.approx(5 / 20)
    assert m["recall"] == pytest.approx(5 / 14)
    # 2pr/(p+r) with p = 1/4, r = 5/14: (10/56) / (34/56) = 5/17.
    assert m["f1_score"] == pytest.approx(5 / 17)
    # V = {a, x, b, d}, CF = {a, b, c}: 2 of 3 core files named.
    assert m["hit_file_rate"] == pytest.approx(2 / 3)
    # V - CF - OF = {x, d} - {d, a} = {x}: 1 of 4.
    assert m["noise_file_rate"] == pytest.approx(1 / 4)
    # a1-10 overlaps a6-15; b5-8 vs b1-4: 5 <= 4 is false. 1 of 2.
    assert m["hit_region_rate"] == pytest.approx(1 / 2)
    # a6-15 overlaps core, x1-5 nothing, b1-4 nothing (no optional b), d3 optional d1-4: 2 noise of 4.
    assert m["noise_region_rate"] == pytest.approx(2 / 4)
    # a1-10 (main, w=3) coverage 5/10; b5-8 (w=2) coverage 0: (3 * 0.5 + 2 * 0) / 5 = 0.3.
    assert m["weighted_core_coverage"] == pytest.approx(0.3)
    # C ∪ O = a1-12, b5-8, d1-4; P ∩ (C ∪ O) = a6-12 (7) + d3 (1) = 8 of 20.
    assert m["context_efficiency"] == pytest.approx(8 / 20)
    # O = d1-4 (4) + a9-12 (4) = 8; P ∩ O = a9-12 (4) + d3 (1) = 5.
    assert m["optional_coverage"] == pytest.approx(5 / 8)
    # Gains 7.5 (5 core lines x 1.5, a.py is main), 0, 0, 0: already the ideal order -> 1.0.
    for b in (100, 300, 500):
        assert m[f"ndcg_at_{b}"] == pytest.approx(1.0)
        # 20 line slots < B: same as recall.
        assert m[f"recall_at_{b}"] == pytest.approx(5 / 14)
    # Rank 0 holds core lines: 1 - 0/4.
    assert m["first_useful_hit"] == pytest.approx(1.0)


def test_per_metric_functions_agree_with_evaluate_instance() -> None:
    """Each one-metric function returns the value evaluate_instance gives for its key."""
    functions = [
        precision, recall, f1_score, hit_file_rate, noise_file_rate, hit_region_rate, noise_region_rate,
        weighted_core_coverage, context_efficiency, optional_coverage, ndcg_at_100, ndcg_at_300, ndcg_at_500,
        recall_at_100, recall_at_300, recall_at_500, first_useful_hit,
    ]  # fmt: skip
    expected = evaluate_instance(MAIN_PREDS, MAIN_GT)
    assert {f.__name__: f(MAIN_PREDS, MAIN_GT) for f in functions} == expected


def test_unknown_metric_name_is_rejected() -> None:
    """Asking for a metric that does not exist raises ValueError listing the valid names."""
    with pytest.raises(ValueError, match="ndcg_at_100"):
        evaluate_instance(MAIN_PREDS, MAIN_GT, metrics=["ndcg@100"])


# ----------------------------------------------------------------------------------------------------------
# Empty inputs (docs/metrics.md §1 table, §1.3)
# ----------------------------------------------------------------------------------------------------------


def test_empty_predictions_score_zero_everywhere() -> None:
    """No prediction gives 0 for all 17 metrics, noise rates included (the "best" value quirk)."""
    assert evaluate_instance([], MAIN_GT) == zero_metrics()


def test_empty_ground_truth_never_divides_by_zero() -> None:
    """An empty GT gives 0 everywhere except the noise rates, which are 1 (every pred is noise)."""
    m = evaluate_instance([reg("x.py", 1, 5)], {})
    # V = {x}, CF = OF = {}: 1/1 noise file; the pred overlaps no gold region: 1/1 noise region.
    assert m["noise_file_rate"] == 1.0 and m["noise_region_rate"] == 1.0
    assert {k: v for k, v in m.items() if not k.startswith("noise")} == {
        k: 0.0 for k in METRIC_NAMES if not k.startswith("noise")
    }
    assert evaluate_instance([], {}) == zero_metrics()


def test_core_regions_that_all_fail_to_resolve_give_zero_line_metrics() -> None:
    """Core regions without line counts leave C empty: recall, recall@B, nDCG, WCC and first hit are 0."""
    g = gt([reg("a.py", 1, -1)])  # no path_to_lines: unresolvable
    m = evaluate_instance([reg("a.py", 1, 10)], g)
    assert m["hit_file_rate"] == 1.0  # file-level still counts
    assert m["hit_region_rate"] == 0.0  # core region unresolvable: overlaps nothing, stays in denominator
    for key in ("precision", "recall", "weighted_core_coverage", "ndcg_at_100", "recall_at_100", "first_useful_hit"):
        assert m[key] == 0.0


# ----------------------------------------------------------------------------------------------------------
# Sentinels and unresolvable predictions (docs/metrics.md §0.1 "consequence")
# ----------------------------------------------------------------------------------------------------------


def test_end_minus_one_on_a_non_gt_file_is_free_but_counts_as_a_file_and_region() -> None:
    """(z.py, 1, -1) without a line count adds no lines but counts in file and region metrics."""
    g = gt([reg("a.py", 1, 10)])
    counts = {"a.py": 10}
    m = evaluate_instance([reg("z.py", 1, -1), reg("a.py", 1, 20)], g, counts)
    # P = a1-20 only (z.py unresolvable): precision 10/20.
    assert m["precision"] == pytest.approx(0.5)
    assert m["context_efficiency"] == pytest.approx(0.5)
    # V = {z, a}: z is noise -> 1/2; z overlaps nothing -> noise region 1/2.
    assert m["noise_file_rate"] == pytest.approx(0.5)
    assert m["noise_region_rate"] == pytest.approx(0.5)
    # First resolvable hit at index 1 of n = 2: 1 - 1/2.
    assert m["first_useful_hit"] == pytest.approx(0.5)
    # z consumes no budget: a1-20 is walked in full within B = 100.
    assert m["recall_at_100"] == 1.0
    # DCG: g = (0, 10), lc = (0, 20) -> 0 + 10/log2(3); IDCG: a first (density 0.5) -> 10. nDCG = 1/log2(3).
    assert m["ndcg_at_100"] == pytest.approx(1 / LOG2_3)


def test_end_minus_one_on_a_gt_file_resolves_to_the_whole_file() -> None:
    """(a.py, 1, -1) with a line count of 10 covers a1-10 exactly."""
    m = evaluate_instance([reg("a.py", 1, -1)], gt([reg("a.py", 1, 10)]), {"a.py": 10})
    assert m["precision"] == 1.0 and m["recall"] == 1.0


def test_negative_start_in_ground_truth() -> None:
    """A tail-style core region (a.py, -5, -1) with L = 20 is a16-20."""
    # P = a15-16; C = a16-20: P∩C = {16}. precision 1/2, recall 1/5.
    m = evaluate_instance([reg("a.py", 15, 16)], gt([reg("a.py", -5, -1)]), {"a.py": 20})
    assert m["precision"] == pytest.approx(1 / 2)
    assert m["recall"] == pytest.approx(1 / 5)


def test_unclamped_predicted_end_counts_lines_past_eof() -> None:
    """a40-139 on a 50-line file counts 100 predicted lines; recall@100 walks only past-EOF after line 50."""
    g = gt([reg("a.py", 1, -1)])
    counts = {"a.py": 50}
    preds = [reg("a.py", 40, 139), reg("a.py", 1, 39)]
    m = evaluate_instance(preds, g, counts)
    # P = a1-139 (139 lines), C = a1-50: precision 50/139, recall 1.
    assert m["precision"] == pytest.approx(50 / 139)
    assert m["recall"] == 1.0
    # B = 100: the first region uses all 100 slots (40..139) and covers 40..50 = 11 of 50 core lines.
    assert m["recall_at_100"] == pytest.approx(11 / 50)
    # B = 300: 100 + 39 slots cover all 50.
    assert m["recall_at_300"] == 1.0


def test_empty_range_pred_overlaps_by_the_interval_test() -> None:
    """A pred a10-5 (s > e) has no lines but still 'overlaps' a1-20 by s1 <= e2 and s2 <= e1."""
    m = evaluate_instance([reg("a.py", 10, 5)], gt([reg("a.py", 1, 20)]))
    # Overlap: 1 <= 5 and 10 <= 20 -> hit region, not a noise region.
    assert m["hit_region_rate"] == 1.0
    assert m["noise_region_rate"] == 0.0
    # No predicted lines at all.
    assert m["precision"] == 0.0 and m["recall"] == 0.0 and m["first_useful_hit"] == 0.0


def test_hit_region_rate_keeps_unresolvable_core_regions_in_the_denominator() -> None:
    """Core (b.py, -5, -1) without a line count cannot be hit but still counts: 1 hit of 2."""
    g = gt([reg("a.py", 1, 10), reg("b.py", -5, -1)])
    assert hit_region_rate([reg("a.py", 1, 1), reg("b.py", 1, 100)], g, {"a.py": 10}) == pytest.approx(1 / 2)


def test_hit_file_rate_uses_read_core_files_and_unresolvable_preds() -> None:
    """hit_file_rate counts an unresolvable pred's path and uses read_core_files, not region paths."""
    g = gt([reg("a.py", 1, 10)], core_files=["c.py", "a.py"])
    # V = {c.py} (unresolvable, no count), CF = {c.py, a.py}: 1/2 although no line is predicted.
    assert hit_file_rate([reg("c.py", 1, -1)], g) == pytest.approx(1 / 2)
    assert precision([reg("c.py", 1, -1)], g) == 0.0


# ----------------------------------------------------------------------------------------------------------
# Weighted core coverage (docs/metrics.md §1, the WCC row)
# ----------------------------------------------------------------------------------------------------------


def test_wcc_weights_three_for_main_two_otherwise_and_drops_unresolvable_or_empty() -> None:
    """WCC = (3·0.5 + 2·1) / 5 = 0.7; the unresolvable and the empty core region are dropped."""
    g = gt(
        [reg("a.py", 1, 10), reg("b.py", 1, 4), reg("c.py", 1, -1), reg("a.py", 9, 3)],
        main=["a.py"],
    )
    # a1-10 (main, w3): 5/10 covered; b1-4 (w2): 4/4; c.py unresolvable; a9-3 empty.
    assert weighted_core_coverage([reg("a.py", 1, 5), reg("b.py", 1, 4)], g) == pytest.approx(0.7)


def test_wcc_counts_duplicate_core_entries_separately() -> None:
    """Two identical main core regions weigh 3 each: (3·0 + 3·0 + 2·1) / 8 = 0.25, not 2/5."""
    g = gt([reg("a.py", 1, 10), reg("a.py", 1, 10), reg("b.py", 1, 10)], main=["a.py"])
    assert weighted_core_coverage([reg("b.py", 1, 10)], g) == pytest.approx(0.25)


# ----------------------------------------------------------------------------------------------------------
# nDCG@B (docs/metrics.md §1.1)
# ----------------------------------------------------------------------------------------------------------


def test_ndcg_rank_two_hit() -> None:
    """A relevant region at rank 2 behind an irrelevant one scores 1/log2(3)."""
    g = gt([reg("a.py", 1, 10)])
    # DCG = 0/1 + 10/log2(3); IDCG (relevant first) = 10/1 + 0. Ratio 1/log2(3) ≈ 0.6309.
    assert ndcg_at_100([reg("x.py", 1, 10), reg("a.py", 1, 10)], g) == pytest.approx(1 / LOG2_3)


def test_ndcg_ideal_is_built_from_predictions_not_ground_truth() -> None:
    """One line of a 100-line core region at rank 1 scores nDCG 1.0 (ordering only) with recall 0.01."""
    m = evaluate_instance([reg("a.py", 5, 5)], gt([reg("a.py", 1, 100)]))
    assert m["ndcg_at_500"] == 1.0
    assert m["recall"] == pytest.approx(0.01)


def test_ndcg_main_file_gain_weight() -> None:
    """Core lines of a main file gain 1.5: DCG 10 + 15/log2(3) over IDCG 15 + 10/log2(3)."""
    g = gt([reg("a.py", 1, 10), reg("b.py", 1, 10)], main=["a.py"])
    preds = [reg("b.py", 1, 10), reg("a.py", 1, 10)]
    # gains (10, 15), lc (10, 10); ideal by density (1.0, 1.5) -> a first.
    expected = (10 + 15 / LOG2_3) / (15 + 10 / LOG2_3)  # ≈ 0.9134
    assert ndcg_at_100(preds, g) == pytest.approx(expected)


def test_ndcg_first_region_always_counts_even_if_larger_than_budget() -> None:
    """A single 200-line region under B = 100 is counted in full: nDCG 1.0."""
    g = gt([reg("a.py", 1, 10)])
    assert ndcg_at_100([reg("a.py", 1, 200)], g) == 1.0


def test_ndcg_later_regions_are_all_or_nothing() -> None:
    """A relevant 10-line region after a 200-line irrelevant one is beyond B = 100: DCG 0."""
    g = gt([reg("a.py", 1, 10)])
    preds = [reg("x.py", 1, 200), reg("a.py", 1, 10)]
    # DCG: i0 cum 200 (counted, gain 0); i1 cum 210 > 100 -> stop. IDCG: a first -> 10. nDCG 0.
    assert ndcg_at_100(preds, g) == 0.0
    # B = 300: DCG = 10/log2(3); IDCG = 10 + 0 -> 1/log2(3).
    assert ndcg_at_300(preds, g) == pytest.approx(1 / LOG2_3)


def test_ndcg_stops_at_first_overflow() -> None:
    """The walk stops at the first region that overflows; a later region that would fit is not considered."""
    g = gt([reg("a.py", 1, 20)])
    preds = [reg("x.py", 1, 50), reg("x.py", 51, 150), reg("a.py", 1, 5)]
    # DCG@100: cum 50 (g 0), cum 150 > 100 -> stop; a1-5 (cum would be 55 if skipped) never seen: 0.
    # IDCG@100: a (density 1) first: 5; x1-50 cum 55: 0; x51-150 cum 155 stop -> 5. nDCG = 0.
    assert ndcg_at_100(preds, g) == 0.0
    # @300: DCG = 0 + 0 + 5/log2(4) = 2.5; IDCG = 5 -> 0.5.
    assert ndcg_at_300(preds, g) == pytest.approx(0.5)


def test_ndcg_duplicate_preds_re_earn_gain() -> None:
    """A duplicated relevant region earns its core lines twice (gains per region)."""
    g = gt([reg("a.py", 1, 10)])
    preds = [reg("x.py", 1, 10), reg("a.py", 1, 10), reg("a.py", 1, 10)]
    # gains (0, 10, 10), lc 10 each. DCG = 10/log2(3) + 10/log2(4) = 6.309 + 5.
    # IDCG (stable by density): (10, 10, 0) -> 10 + 10/log2(3). Ratio ≈ 0.6934 (0.6309 if not re-earned).
    expected = (10 / LOG2_3 + 10 / 2) / (10 + 10 / LOG2_3)
    assert ndcg_at_100(preds, g) == pytest.approx(expected)


def test_ndcg_ideal_sort_is_stable_among_equal_densities() -> None:
    """Equal-density regions keep their predicted order in the ideal (Python sorted(reverse=True))."""
    g = gt([reg("a.py", 1, 40)])
    preds = [reg("x.py", 1, 1), reg("a.py", 1, 20), reg("a.py", 21, 22)]
    # gains (0, 20, 2), lc (1, 20, 2); densities (0, 1, 1). B = 21.
    # DCG: cum 1 -> 0; cum 21 -> 20/log2(3); cum 23 > 21 stop. DCG = 12.619.
    # Stable ideal [a1-20, a21-22, x]: cum 20 -> 20; cum 22 > 21 stop. IDCG = 20. nDCG = 1/log2(3) ≈ 0.631.
    # (With the tie reversed, IDCG = 2 and nDCG would clamp to 1.0.)
    assert ndcg_at_budget(preds, g, None, 21) == pytest.approx(1 / LOG2_3)


def test_ndcg_empty_range_pred_has_negative_line_count() -> None:
    """A pred a10-5 has lc = -4, which frees budget for the next region (reference quirk)."""
    g = gt([reg("a.py", 1, 100)])
    preds = [reg("a.py", 10, 5), reg("a.py", 1, 103)]
    # DCG@100: cum -4 -> 0; cum 99 <= 100 -> 100/log2(3) (without the -4, cum 103 would stop the walk).
    # IDCG: densities (0/max(-4,1) = 0, 100/103) -> [a1-103, a10-5]: cum 103 (first, counted) -> 100; cum 99 -> 0.
    assert ndcg_at_100(preds, g) == pytest.approx(1 / LOG2_3)


def test_ndcg_needs_core_regions_and_preds() -> None:
    """nDCG is 0 without core regions or without preds."""
    assert ndcg_at_100([reg("a.py", 1, 5)], gt([])) == 0.0
    assert ndcg_at_100([], gt([reg("a.py", 1, 5)])) == 0.0


@pytest.mark.parametrize("budget", [0, -5, 2.5])
def test_budget_must_be_a_positive_integer(budget: Any) -> None:
    """A line budget below 1 or not an integer raises ValueError."""
    with pytest.raises(ValueError, match="budget"):
        ndcg_at_budget([reg("a.py", 1, 5)], gt([reg("a.py", 1, 5)]), None, budget)
    with pytest.raises(ValueError, match="budget"):
        recall_at_budget([reg("a.py", 1, 5)], gt([reg("a.py", 1, 5)]), None, budget)


# ----------------------------------------------------------------------------------------------------------
# recall@B (docs/metrics.md §1.2)
# ----------------------------------------------------------------------------------------------------------


def test_recall_at_budget_truncates_mid_region() -> None:
    """a51-250 against core a1-200: B = 100 walks 51..150 (100 of 200), B = 300 walks all (150 of 200)."""
    g = gt([reg("a.py", 1, 200)])
    preds = [reg("a.py", 51, 250)]
    assert recall_at_100(preds, g) == pytest.approx(100 / 200)
    assert recall_at_300(preds, g) == pytest.approx(150 / 200)
    assert recall_at_500(preds, g) == pytest.approx(150 / 200)


def test_recall_at_budget_duplicates_use_slots() -> None:
    """A duplicate region uses line slots without covering anything new."""
    g = gt([reg("a.py", 1, 200)])
    preds = [reg("a.py", 1, 60), reg("a.py", 1, 60), reg("a.py", 61, 200)]
    # B = 100: 60 slots cover 1..60, the duplicate takes the other 40 -> 60/200.
    assert recall_at_100(preds, g) == pytest.approx(0.3)
    # B = 300: 60 + 60 + 140 = 260 slots cover all 200.
    assert recall_at_300(preds, g) == 1.0


def test_recall_at_budget_skips_unresolvable_preds() -> None:
    """An unresolvable pred uses no slot: a1-100 after (y.py, 1, -1) still fits B = 100 entirely."""
    g = gt([reg("a.py", 1, 100)])
    assert recall_at_100([reg("y.py", 1, -1), reg("a.py", 1, 100)], g) == 1.0


# ----------------------------------------------------------------------------------------------------------
# first_useful_hit (docs/metrics.md §1)
# ----------------------------------------------------------------------------------------------------------


def test_first_useful_hit_counts_every_entry_in_n() -> None:
    """The first core-line pred is at index 3 of 4 entries (one unresolvable): 1 - 3/4."""
    g = gt([reg("b.py", 1, 10)])
    preds = [reg("x.py", 1, 5), reg("y.py", 1, -1), reg("b.py", 20, 30), reg("b.py", 8, 12)]
    assert first_useful_hit(preds, g) == pytest.approx(0.25)
    assert first_useful_hit(preds[:3], g) == 0.0  # no hit


# ----------------------------------------------------------------------------------------------------------
# docs/metrics.md, 'Line counts': our line definition vs the reference's splitlines
# ----------------------------------------------------------------------------------------------------------


def test_form_feed_file_line_counts_in_both_modes(tmp_path: Any) -> None:
    """'a = 1\\n\\f\\ndef g():\\n    pass\\n' has 4 lines (g = 3-4) for us and 5 under splitlines (g = 4-5)."""
    (tmp_path / "f.py").write_bytes(b"a = 1\n\x0c\ndef g():\n    pass\n")
    g = gt([reg("f.py", -2, -1)])  # the last two lines: def g() and its body
    lines = file_line_counts(g, tmp_path, "lines")
    split = file_line_counts(g, tmp_path, "splitlines")
    assert lines == {"f.py": 4} and split == {"f.py": 5}
    assert resolve_interval("f.py", -2, -1, lines) == (3, 4)
    assert resolve_interval("f.py", -2, -1, split) == (4, 5)
    # A pred for g as we number it (3-4) is fully right in "lines" mode, half right under splitlines.
    assert recall([reg("f.py", 3, 4)], g, lines) == 1.0
    assert recall([reg("f.py", 3, 4)], g, split) == pytest.approx(0.5)


# ----------------------------------------------------------------------------------------------------------
# Parity with a literal line-by-line implementation of docs/metrics.md §0-§1 (intervals must not change a number)
# ----------------------------------------------------------------------------------------------------------


def _literal_metrics(preds: list[tuple[str, int, int]], g: dict[str, Any], counts: dict[str, int]) -> dict[str, float]:
    """The formulas of docs/metrics.md §1 on explicit sets of (path, line) pairs, written apart from the module."""

    def res(p: str, s: int, e: int) -> tuple[int, int] | None:
        if e == -1 or s < 0:
            n = counts.get(p)
            if n is None or n < 1:
                return None
            e2 = n if e == -1 else e
            s2 = n + s + 1 if s < 0 else s
            return max(1, min(s2, n)), max(1, min(e2, n))
        return None if e < 1 else (max(1, s), e)

    def lines(regions: list[tuple[str, int, int]]) -> set[tuple[str, int]]:
        out: set[tuple[str, int]] = set()
        for p, s, e in regions:
            r = res(p, s, e)
            if r:
                out.update((p, ln) for ln in range(r[0], r[1] + 1))
        return out

    def overlap(a: tuple[str, int, int], b: tuple[str, int, int]) -> bool:
        ra, rb = res(*a), res(*b)
        return a[0] == b[0] and ra is not None and rb is not None and ra[0] <= rb[1] and rb[0] <= ra[1]

    core = [(r["path"], r["start"], r["end"]) for r in g["read_core_regions"]]
    opt = [(r["path"], r["start"], r["end"]) for rs in g["read_optional_regions_map"].values() for r in rs]
    P, C, OPT = lines(preds), lines(core), lines(opt)
    CF, M = set(g["read_core_files"]), set(g["main_files"])
    OF = {p for fs in g["read_optional_files_map"].values() for p in fs}
    V = {p for p, _, _ in preds}
    n = len(preds)
    m: dict[str, float] = {}
    m["precision"] = len(P & C) / len(P) if P else 0.0
    m["recall"] = len(P & C) / len(C) if C else 0.0
    pr, rc = m["precision"], m["recall"]
    m["f1_score"] = 2.0 * pr * rc / (pr + rc) if pr + rc else 0.0
    m["hit_file_rate"] = len(V & CF) / len(CF) if CF else 0.0
    m["noise_file_rate"] = len(V - CF - OF) / len(V) if V else 0.0
    m["hit_region_rate"] = sum(any(overlap(c, p) for p in preds) for c in core) / len(core) if core else 0.0
    m["noise_region_rate"] = sum(not any(overlap(p, x) for x in core + opt) for p in preds) / n if n else 0.0
    ws = wt = 0.0
    for c in core:
        r = res(*c)
        if r and r[0] <= r[1]:
            R = {(c[0], ln) for ln in range(r[0], r[1] + 1)}
            w = 3.0 if c[0] in M else 2.0
            ws += w * (len(P & R) / len(R))
            wt += w
    m["weighted_core_coverage"] = ws / wt if core and wt > 0 else 0.0
    m["context_efficiency"] = len(P & (C | OPT)) / len(P) if P else 0.0
    m["optional_coverage"] = len(P & OPT) / len(OPT) if OPT else 0.0
    m.update(_literal_ranked_metrics(preds, res, C, M, bool(core)))
    return m


def _literal_ranked_metrics(
    preds: list[tuple[str, int, int]],
    res: Callable[[str, int, int], tuple[int, int] | None],
    C: set[tuple[str, int]],
    M: set[str],
    has_core: bool,
) -> dict[str, float]:
    """The ranked metrics of docs/metrics.md §1-§1.2 (nDCG@B, recall@B, first useful hit) for :func:`_literal_metrics`:
    ``res`` resolves a region to 1-based lines, ``C`` holds the core (path, line) pairs and ``M`` the main files."""
    n = len(preds)
    m: dict[str, float] = {}
    gains, lcs = [], []
    for p, s, e in preds:
        r = res(p, s, e)
        if r is None:
            gains.append(0.0)
            lcs.append(0)
            continue
        gain = 0.0
        for ln in range(r[0], r[1] + 1):
            if (p, ln) in C:
                gain += 1.5 if p in M else 1.0
        gains.append(gain)
        lcs.append(r[1] - r[0] + 1)

    def dcg(gs: list[float], ls: list[int], budget: int) -> float:
        total, cum = 0.0, 0
        for i, (gg, lc) in enumerate(zip(gs, ls)):
            cum += lc
            if cum > budget and i > 0:
                break
            total += gg / math.log2(i + 2)
        return total

    for b in (100, 300, 500):
        ideal = sorted(zip(gains, lcs), key=lambda t: t[0] / max(t[1], 1), reverse=True)
        idcg = dcg([t[0] for t in ideal], [t[1] for t in ideal], b)
        d = dcg(gains, lcs, b)
        m[f"ndcg_at_{b}"] = min(d / idcg, 1.0) if has_core and preds and idcg > 0 else 0.0
        covered, used = set(), 0
        for p, s, e in preds:
            r = res(p, s, e)
            if r is None:
                continue
            for ln in range(r[0], r[1] + 1):
                used += 1
                if (p, ln) in C:
                    covered.add((p, ln))
                if used >= b:
                    break
            if used >= b:
                break
        m[f"recall_at_{b}"] = len(covered) / len(C) if C else 0.0
    m["first_useful_hit"] = 0.0
    if preds and C:
        for i, (p, s, e) in enumerate(preds):
            r = res(p, s, e)
            if r and any((p, ln) in C for ln in range(r[0], r[1] + 1)):
                m["first_useful_hit"] = 1.0 - i / n
                break
    return m


def _random_region(rng: random.Random, paths: list[str]) -> tuple[str, int, int]:
    start = rng.choice([rng.randint(-6, 40), rng.randint(1, 40), rng.randint(1, 40)])
    end = rng.choice([-1, rng.randint(-2, 60), rng.randint(1, 150), start + rng.randint(0, 90)])
    return (rng.choice(paths), start, end)


def test_metrics_match_a_literal_line_by_line_implementation() -> None:
    """On 400 random instances with sentinels, overlaps and duplicates, all 17 metrics equal the literal ones."""
    rng = random.Random(20240607)
    paths = ["a.py", "b.py", "c.py", "d.py"]
    for _ in range(400):
        counts = {p: rng.randint(0, 80) for p in paths if rng.random() < 0.7}
        core = [_random_region(rng, paths) for _ in range(rng.randint(0, 4))]
        preds = [_random_region(rng, paths) for _ in range(rng.randint(0, 7))]
        if preds and rng.random() < 0.3:
            preds.append(rng.choice(preds))  # a duplicate
        g = {
            "read_core_regions": [reg(*r) for r in core],
            "read_core_files": rng.sample(paths, rng.randint(0, 3)),
            "read_optional_regions_map": {"m": [reg(*_random_region(rng, paths)) for _ in range(rng.randint(0, 3))]},
            "read_optional_files_map": {"m": rng.sample(paths, rng.randint(0, 2))},
            "main_files": rng.sample(paths, rng.randint(0, 2)),
        }
        ours = evaluate_instance([Region(*p) for p in preds], g, counts)
        literal = _literal_metrics(preds, g, counts)
        assert ours == pytest.approx(literal, abs=1e-12), (preds, g, counts)


def test_line_set_operations_match_python_sets() -> None:
    """LineSet size, intersection and union equal those of explicit Python sets on random intervals."""
    rng = random.Random(7)
    for _ in range(200):
        a = [(rng.choice("xy"), rng.randint(1, 30), rng.randint(-3, 40)) for _ in range(rng.randint(0, 5))]
        b = [(rng.choice("xy"), rng.randint(1, 30), rng.randint(-3, 40)) for _ in range(rng.randint(0, 5))]
        sa = {(p, ln) for p, s, e in a for ln in range(s, e + 1)}
        sb = {(p, ln) for p, s, e in b for ln in range(s, e + 1)}
        la, lb = LineSet(a), LineSet(b)
        assert (len(la), len(la & lb), len(la | lb)) == (len(sa), len(sa & sb), len(sa | sb))
        assert la.count_range("x", 5, 20) == len({(p, ln) for p, ln in sa if p == "x" and 5 <= ln <= 20})
