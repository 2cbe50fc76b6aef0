"""Bootstrap CIs, paired permutation tests, Holm's correction and comparison tables on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from swe_explore.evaluation.stats import (
    bootstrap_ci,
    common_instances,
    compare,
    compare_rows,
    direction_marker,
    format_cell,
    format_comparison,
    holm,
    is_exact,
    paired_permutation_test,
    significance_marker,
)

# ---------------------------------------------------------------------------------------------- permutation test


def test_identical_runs_give_p_one() -> None:
    """All differences are 0: every sign flip gives the observed statistic, so p = 1 (exact and random)."""
    x = [0.2, 0.5, 0.5, 1.0, 0.0]
    assert paired_permutation_test(x, x) == 1.0
    long = np.linspace(0.0, 1.0, 20)
    assert not is_exact(20)
    assert paired_permutation_test(long, long) == 1.0


def test_better_on_every_instance_gives_the_exact_sign_flip_p_value() -> None:
    """n = 5 distinct positive differences: only the observed signs reach the mean, so p = 2 / 2^5 = 0.0625."""
    x = [1.0, 0.9, 0.8, 0.7, 0.6]
    y = [0.9, 0.7, 0.5, 0.3, 0.1]
    assert is_exact(5)
    assert paired_permutation_test(x, y) == pytest.approx(0.0625)
    assert paired_permutation_test(y, x) == pytest.approx(0.0625)
    # n = 8: 2 / 256; n = 1: 2 / 2 = 1
    assert paired_permutation_test(np.arange(1.0, 9.0), np.zeros(8)) == pytest.approx(2 / 256)
    assert paired_permutation_test([1.0], [0.0]) == 1.0


def test_mixed_signs_exact_p_value() -> None:
    """Differences (1, 2, 3, 4, -5), sum 5: flipping a subset S of magnitudes gives sum 15 - 2 sum(S).

    P(T >= 5) = #{S : sum(S) <= 5} / 32 = 10/32 ({}, 1, 2, 3, 4, 5, 12, 13, 14, 23);
    P(T <= 5) = #{S : sum(S) >= 5} / 32 = 25/32; two-sided p = 2 * 10/32 = 0.625.
    """
    d = np.array([1.0, 2.0, 3.0, 4.0, -5.0])
    assert paired_permutation_test(d, np.zeros(5)) == pytest.approx(0.625)


def test_random_permutations_when_two_to_the_n_exceeds_the_resamples() -> None:
    """n = 20 all better: no random sign assignment of 10,000 reaches t, so p = 2 * 1 / 10,001."""
    x = np.linspace(0.5, 1.0, 20)
    assert not is_exact(20) and is_exact(13)
    assert paired_permutation_test(x, x - 0.25) == pytest.approx(2 / 10_001)


def test_permutation_test_rejects_unpaired_input() -> None:
    """Vectors of different lengths, empty ones and NaN are errors."""
    with pytest.raises(ValueError, match="differ in length"):
        paired_permutation_test([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="non-empty"):
        paired_permutation_test([], [])
    with pytest.raises(ValueError, match="NaN"):
        paired_permutation_test([1.0, math.nan], [1.0, 2.0])


# ---------------------------------------------------------------------------------------------- bootstrap


def test_bootstrap_ci_of_a_constant_vector_is_a_point() -> None:
    """Every resample of a constant vector has the same mean, for every method."""
    for method in ("percentile", "bca", "basic"):
        assert bootstrap_ci([0.25] * 7, method=method) == (0.25, 0.25)


def test_bootstrap_percentile_ci_of_two_values() -> None:
    """Resampled means of (0, 1) are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4: the 2.5/97.5 percentiles are 0, 1."""
    assert bootstrap_ci([0.0, 1.0]) == (0.0, 1.0)


def test_bootstrap_resamples_the_same_instances_for_every_file() -> None:
    """Same seed and n: the resampled index sets are the same, so a shifted vector has a shifted interval."""
    x = np.array([0.0, 0.1, 0.4, 0.45, 0.9, 1.0, 0.3, 0.2])
    low, high = bootstrap_ci(x)
    shifted = bootstrap_ci(x + 0.5)
    assert shifted == pytest.approx((low + 0.5, high + 0.5))
    assert 0.0 < low < x.mean() < high < 1.0


def test_bootstrap_rejects_bad_options() -> None:
    """Unknown method and a confidence outside (0, 1) are errors."""
    with pytest.raises(ValueError, match="unknown bootstrap method"):
        bootstrap_ci([1.0, 2.0], method="studentized")
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([1.0, 2.0], confidence=95)


# ---------------------------------------------------------------------------------------------- Holm


def test_holm_hand_computed() -> None:
    """Sorted 0.01, 0.03, 0.04 times 3, 2, 1 = 0.03, 0.06, 0.04; running max -> 0.03, 0.06, 0.06 (input order)."""
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.6]) == [1.0, 1.0]
    assert holm([0.02]) == [0.02]
    assert holm([]) == []


def test_holm_skips_nan_entries() -> None:
    """The untested baseline (NaN) stays NaN and does not count in m."""
    adjusted = holm([math.nan, 0.01, 0.04])
    assert math.isnan(adjusted[0])
    assert adjusted[1:] == pytest.approx([0.02, 0.04])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([1.5])


def test_markers() -> None:
    """Stars by Holm p; arrows only for significant differences."""
    assert [significance_marker(p) for p in (0.001, 0.01, 0.049, 0.05, math.nan)] == ["**", "*", "*", "", ""]
    assert direction_marker(0.1, 0.01) == "▲" and direction_marker(-0.1, 0.04) == "▼"
    assert direction_marker(0.1, 0.2) == "" and direction_marker(0.1, math.nan) == ""


# ---------------------------------------------------------------------------------------------- comparisons


def _rows(values: dict[str, float]) -> list[dict[str, object]]:
    return [{"instance_id": iid, "metrics": {"recall": v, "precision": v / 2}} for iid, v in values.items()]


def test_compare_rows_uses_the_common_instances_and_holm_across_files() -> None:
    """Three files over 6 instances, one of them missing from a file: n = 5 compared.

    ``better`` beats the baseline on all 5 (p = 2/32 = 0.0625), ``same`` equals it (p = 1); Holm over the two:
    sorted 0.0625 * 2 = 0.125, then max(0.125, 1 * 1) = 1.
    """
    base = {f"i{k}": 0.1 * k for k in range(1, 7)}
    better = {iid: v + 0.05 * k for k, (iid, v) in enumerate(base.items(), start=1)}
    same = {iid: v for iid, v in base.items() if iid != "i6"}
    rows = {"base": _rows(base), "better": _rows(better), "same": _rows(same)}
    assert common_instances(rows) == (["i1", "i2", "i3", "i4", "i5"], {"same": ["i6"]})
    result = compare_rows(rows, "base", ["recall", "precision"])
    assert result.n == 5 and result.exact and result.excluded == {"same": ["i6"]}
    cell = result.cells["better"]["recall"]
    assert cell.mean == pytest.approx(0.45) and cell.delta == pytest.approx(0.15)
    assert cell.p == pytest.approx(0.0625) and cell.p_holm == pytest.approx(0.125)
    assert result.cells["same"]["recall"].p == 1.0 and result.cells["same"]["recall"].p_holm == 1.0
    baseline = result.cells["base"]["recall"]
    assert baseline.mean == pytest.approx(0.3) and math.isnan(baseline.p) and baseline.delta == 0.0
    assert result.to_dict("base")["metrics"]["recall"]["p"] is None
    assert result.to_dict("better")["instances"] == 5


def test_compare_needs_common_instances_and_a_known_baseline() -> None:
    """No common instance, an unknown baseline and ragged vectors are errors."""
    with pytest.raises(ValueError, match="no instance is present in all 2"):
        compare_rows({"a": _rows({"x": 1.0}), "b": _rows({"y": 1.0})}, "a", ["recall"])
    with pytest.raises(ValueError, match="baseline 'c'"):
        compare({"a": {"recall": [1.0]}, "b": {"recall": [0.0]}}, "c", ["recall"])
    with pytest.raises(ValueError, match="differ in length"):
        compare({"a": {"recall": [1.0]}, "b": {"recall": [0.0, 1.0]}}, "a", ["recall"])


def test_format_comparison_table() -> None:
    """Cells are mean [CI] with the marker and the Holm p; the baseline cell says so; the legend states n."""
    values = {"base": {"recall": [0.0] * 8}, "new": {"recall": [1.0] * 8}}
    result = compare(values, "base", ["recall"])
    # 8 differences, all +1: only the observed signs (and all flipped) reach |t|: p = 2 / 256 = 0.0078 < 0.01
    assert format_cell(result.cells["new"]["recall"]) == "1.000 [1.000, 1.000] ▲** p=0.008"
    lines = format_comparison(result).splitlines()
    assert lines[:3] == [
        "| metric | base                            | new                              |",
        "|--------|---------------------------------|----------------------------------|",
        "| Rec    | 0.000 [0.000, 0.000] (baseline) | 1.000 [1.000, 1.000] ▲** p=0.008 |",
    ]
    assert lines[3] == ""
    assert lines[4].startswith("n = 8 instances present in all 2 compared files.")
    assert "exact over all 2^n sign flips" in lines[4] and "Holm" in lines[4]
    wide = format_comparison(result, metrics_as="columns", with_legend=False).splitlines()
    assert wide[1:] == [
        "|------|----------------------------------|",
        "| base | 0.000 [0.000, 0.000] (baseline)  |",
        "| new  | 1.000 [1.000, 1.000] ▲** p=0.008 |",
    ]


def test_legend_names_lower_is_better_metrics_shown() -> None:
    """The noise rates are flagged as lower-is-better only when the table shows them."""
    values = {
        "a": {"recall": [0.1, 0.2], "noise_file_rate": [0.3, 0.4]},
        "b": {"recall": [0.2, 0.2], "noise_file_rate": [0.1, 0.4]},
    }
    result = compare(values, "a", ["recall", "noise_file_rate"])
    assert format_comparison(result).endswith("Lower is better for NoiseFile.")
    assert "Lower is better" not in format_comparison(result, metrics=["recall"])
    assert "over the 1 comparison(s) with the baseline" in format_comparison(result)
