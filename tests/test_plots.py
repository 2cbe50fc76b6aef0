"""Comparison plots: what is drawn (bar heights, error bars, value labels, n/a placeholders), read from the Axes."""

from __future__ import annotations

from typing import Any

import pytest

from swe_explore.evaluation.plots import NA_TEXT, Bar, bar_chart, delta_chart, value_label
from swe_explore.evaluation.stats import compare

plt = pytest.importorskip("matplotlib.pyplot")


def _texts(ax: Any) -> list[str]:
    return [t.get_text() for t in ax.texts]


def test_bar_chart_labels_every_bar_and_marks_missing_cells() -> None:
    """Three bars and a missing cell: value labels with markers, a zero bar labelled 0.000, an n/a placeholder."""
    bars = [
        Bar("bm25", "function", 0.5, (0.4, 0.6), baseline=True),
        Bar("bm25", "window", 0.7, (0.6, 0.8), "▲*"),
        Bar("tfidf", "function", 0.0, (0.0, 0.0)),
        Bar("tfidf", "window", None),
    ]
    fig, ax = plt.subplots()
    bar_chart(ax, bars, ylabel="nDCG@500", title="nDCG@500 (n=5)", series_title="chunker")
    assert _texts(ax) == ["0.500\n(baseline)", "0.700▲*", "0.000", NA_TEXT]
    # the y range leaves room above the highest CI (0.8); the placeholder spans it, hatched
    top = ax.get_ylim()[1]
    assert top == pytest.approx(0.8 * 1.25)
    heights = [patch.get_height() for patch in ax.patches]
    assert heights == pytest.approx([0.5, 0.7, 0.0, top])
    assert ax.patches[3].get_hatch() == "///" and ax.patches[0].get_hatch() is None
    assert ax.patches[0].get_linewidth() == 2.0  # the baseline's edge
    # bars sit at their group: bm25 at x = 0 (two slots), tfidf at x = 1
    centers = [patch.get_x() + patch.get_width() / 2 for patch in ax.patches]
    assert centers == pytest.approx([-0.2, 0.2, 0.8, 1.2])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["bm25", "tfidf"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["function", "window", "baseline", "n/a (no result)"]
    assert ax.get_title() == "nDCG@500 (n=5)"
    plt.close(fig)


def test_bar_chart_group_of_one_and_error_bars() -> None:
    """A reference baseline is a group of one bar; the error bar runs from the CI's low to high bound."""
    fig, ax = plt.subplots()
    bar_chart(ax, [Bar("reference_bm25", "reference", 0.3, (0.1, 0.45))], ylabel="x", title="t")
    assert [patch.get_x() + patch.get_width() / 2 for patch in ax.patches] == pytest.approx([0.0])
    (segments,) = [c for c in ax.collections if len(c.get_segments()) == 1]
    (segment,) = segments.get_segments()
    assert segment.ravel().tolist() == pytest.approx([0.0, 0.1, 0.0, 0.45])
    plt.close(fig)
    with pytest.raises(ValueError, match="no bars"):
        bar_chart(ax, [], ylabel="x", title="t")


def test_value_label() -> None:
    """Three digits, marker, baseline note, n/a."""
    assert value_label(Bar("g", "s", 0.12345, marker="▼**")) == "0.123▼**"
    assert value_label(Bar("g", "s", None)) == "n/a"
    assert value_label(Bar("g", "s", 0.5, baseline=True)) == "0.500\n(baseline)"


def test_delta_chart_sorts_and_counts() -> None:
    """Differences sorted best first; ties drawn as dots and counted; the ids label the x axis in that order."""
    fig, ax = plt.subplots()
    counts = delta_chart(ax, ["a", "b", "c", "d", "e"], [0.1, -0.2, 0.0, 0.3, 0.0], ylabel="Δ nDCG@500", title="t")
    assert counts == (2, 1, 2)
    assert [patch.get_height() for patch in ax.patches] == pytest.approx([0.3, 0.1, 0.0, 0.0, -0.2])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["d", "a", "c", "e", "b"]
    assert _texts(ax) == ["2 better, 1 worse, 2 tied"]
    (dots,) = ax.lines[:1]
    assert list(dots.get_xdata()) == [2, 3]
    plt.close(fig)
    with pytest.raises(ValueError, match="one difference per instance"):
        delta_chart(ax, ["a"], [], ylabel="x", title="t")


def test_compare_feeds_the_bars() -> None:
    """The compare command's bars take mean, CI and marker from a comparison; a cell without rows is n/a."""
    from swe_explore.evaluation.compare import best_cell, metric_bars

    comparison = compare(
        {"bm25+function": {"recall": [0.0] * 8}, "bm25+window": {"recall": [1.0] * 8}}, "bm25+function", ["recall"]
    )
    summary = {
        "bm25+function": {"chunker": "function", "retriever": "bm25", "cases": 8},
        "bm25+window": {"chunker": "window", "retriever": "bm25", "cases": 8},
        "tfidf+window": {"chunker": "window", "retriever": "tfidf", "cases": 0},
    }
    bars = metric_bars(summary, "recall", comparison)
    assert bars == [
        Bar("bm25", "function", 0.0, (0.0, 0.0), "", True),
        Bar("bm25", "window", 1.0, (1.0, 1.0), "▲**", False),
        Bar("tfidf", "window", None),
    ]
    assert best_cell(comparison, "recall") == "bm25+window"
