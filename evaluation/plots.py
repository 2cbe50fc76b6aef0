"""Plots for comparisons: grouped bars with CIs and value labels, and sorted per-instance differences.

Needs the ``plots`` extra (matplotlib, Agg backend: no display). The functions draw on a given
:class:`matplotlib.axes.Axes`, so tests can read back what was drawn (bar heights, ``ax.texts``) instead of
pixels. Conventions, so that a reader never mistakes one thing for another:

- every bar carries its value as text above its error bar (the CI), plus the significance marker of
  :func:`swe_explore.evaluation.stats.format_cell` (``▲**``...);
- a missing cell (no result) is a full-height hatched grey placeholder with the text ``n/a``, never an empty slot
  that could be read as 0; a zero mean is a zero-height bar labelled ``0.000``;
- the baseline's bar has a thick black edge and its label says ``(baseline)`` on a second line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

NA_TEXT = "n/a"
"""The text on a missing cell's placeholder."""
_MISSING_COLOR = "0.6"
_BETTER, _WORSE, _TIED = "tab:green", "tab:red", "0.4"


def pyplot() -> Any | None:
    """``matplotlib.pyplot`` with the non-interactive Agg backend, or ``None`` when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


@dataclass(frozen=True)
class Bar:
    """One bar of :func:`bar_chart`.

    :ivar group: the x-axis group (e.g. the retriever).
    :ivar series: the colour within a group (e.g. the chunker); same series, same colour in every group.
    :ivar mean: the bar's height; ``None`` = missing cell (drawn as an ``n/a`` placeholder).
    :ivar ci: ``(low, high)`` of the error bar, or ``None`` for none.
    :ivar marker: appended to the value label, e.g. ``"▲*"``.
    :ivar baseline: whether this is the baseline (thick black edge, ``(baseline)`` label).
    """

    group: str
    series: str
    mean: float | None
    ci: tuple[float, float] | None = None
    marker: str = ""
    baseline: bool = False


def value_label(bar: Bar, digits: int = 3) -> str:
    """The text drawn above a bar: ``"0.412▲*"``, ``"0.300\\n(baseline)"`` or ``"n/a"``."""
    if bar.mean is None:
        return NA_TEXT
    return f"{bar.mean:.{digits}f}{bar.marker}" + ("\n(baseline)" if bar.baseline else "")


def bar_chart(
    ax: Any, bars: Sequence[Bar], *, ylabel: str, title: str, series_title: str | None = None, digits: int = 3
) -> None:
    """Grouped bar chart of means with error bars, value labels and ``n/a`` placeholders.

    Groups keep their first-appearance order; within a group, bars follow the series' first-appearance order
    over all bars, and a group only has slots for its own bars (a reference baseline may be a group of one).

    :param ax: the matplotlib Axes to draw on.
    :param bars: the bars (values in the metric's unit, e.g. a rate in [0, 1]).
    :param ylabel: the y-axis label.
    :param title: the title (say n and what the error bars are).
    :param series_title: the legend's title (e.g. ``"chunker"``).
    :param digits: decimals of the value labels.
    :raises ValueError: if ``bars`` is empty.
    """
    from matplotlib.patches import Patch

    if not bars:
        raise ValueError("no bars to draw")
    groups = list(dict.fromkeys(bar.group for bar in bars))
    series = list(dict.fromkeys(bar.series for bar in bars))
    colors = {name: f"C{i % 10}" for i, name in enumerate(series)}
    per_group = {g: sorted((b for b in bars if b.group == g), key=lambda b: series.index(b.series)) for g in groups}
    width = 0.8 / max(len(members) for members in per_group.values())
    tops = [b.ci[1] if b.ci else b.mean for b in bars if b.mean is not None]
    finite = [t for t in tops if t is not None and math.isfinite(t)]
    top = max([0.05, *finite]) * 1.25
    ax.set_ylim(0.0, top)
    rotate = len(bars) > 8
    for x, group in enumerate(groups):
        members = per_group[group]
        for i, bar in enumerate(members):
            center = x + (i - (len(members) - 1) / 2) * width
            if bar.mean is None:
                ax.bar(center, top, width, color="none", edgecolor=_MISSING_COLOR, hatch="///", linewidth=0.8)
                ax.text(
                    center,
                    top / 2,
                    NA_TEXT,
                    ha="center",
                    va="center",
                    fontsize=9,
                    color="0.3",
                    rotation=90 if rotate else 0,
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 1},
                )
                continue
            yerr = None
            if bar.ci is not None:
                yerr = [[max(0.0, bar.mean - bar.ci[0])], [max(0.0, bar.ci[1] - bar.mean)]]
            ax.bar(
                center,
                bar.mean,
                width,
                color=colors[bar.series],
                yerr=yerr,
                capsize=3,
                edgecolor="black" if bar.baseline else "none",
                linewidth=2.0 if bar.baseline else 0.0,
                error_kw={"elinewidth": 1.0, "ecolor": "0.2"},
            )
            label_y = (bar.ci[1] if bar.ci is not None else bar.mean) + top * 0.015
            ax.text(
                center,
                label_y,
                value_label(bar, digits),
                ha="center",
                va="bottom",
                fontsize=7.5,
                rotation=90 if rotate else 0,
                fontweight="bold" if bar.marker else "normal",
            )
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=20 if len(groups) > 3 else 0, ha="right" if len(groups) > 3 else "center")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    handles = [Patch(facecolor=colors[name], label=name) for name in series]
    if any(b.baseline for b in bars):
        handles.append(Patch(facecolor="white", edgecolor="black", linewidth=2.0, label="baseline"))
    if any(b.mean is None for b in bars):
        handles.append(Patch(facecolor="none", edgecolor=_MISSING_COLOR, hatch="///", label=f"{NA_TEXT} (no result)"))
    ax.legend(
        handles=handles,
        title=series_title,
        fontsize=8,
        title_fontsize=8,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        borderaxespad=0.0,
    )
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


def delta_chart(
    ax: Any, instance_ids: Sequence[str], deltas: Sequence[float], *, ylabel: str, title: str, max_ticks: int = 60
) -> tuple[int, int, int]:
    """Per-instance differences (a configuration minus the baseline), sorted from best to worst.

    Positive bars are green, negative red; ties (difference 0) are grey dots on the zero line so they are
    seen and counted. The counts are written in the upper right corner.

    :param ax: the matplotlib Axes to draw on.
    :param instance_ids: the instances, same order as ``deltas``.
    :param deltas: one difference per instance, in the metric's unit.
    :param ylabel: the y-axis label (e.g. ``"Δ nDCG@500"``).
    :param title: the title (say which two configurations, n and the p-value).
    :param max_ticks: label the x axis with the instance ids up to this many instances.
    :return: ``(better, worse, tied)`` instance counts.
    :raises ValueError: if the two sequences differ in length or are empty.
    """
    if len(instance_ids) != len(deltas) or not deltas:
        raise ValueError(f"need one difference per instance, got {len(deltas)} for {len(instance_ids)} instances")
    order = sorted(range(len(deltas)), key=lambda i: (-deltas[i], instance_ids[i]))
    values = [float(deltas[i]) for i in order]
    colors = [_BETTER if v > 0 else _WORSE if v < 0 else _TIED for v in values]
    positions = list(range(len(values)))
    ax.bar(positions, values, 0.8, color=colors)
    tied = [x for x, v in zip(positions, values) if v == 0]
    if tied:
        ax.plot(tied, [0.0] * len(tied), "o", color=_TIED, markersize=3)
    ax.axhline(0.0, color="black", linewidth=0.8)
    better = sum(v > 0 for v in values)
    worse = sum(v < 0 for v in values)
    counts = (better, worse, len(values) - better - worse)
    ax.text(
        0.99,
        0.97,
        f"{counts[0]} better, {counts[1]} worse, {counts[2]} tied",
        transform=ax.transAxes,
        ha="right",
        va="top",
        fontsize=9,
        bbox={"facecolor": "white", "edgecolor": "0.7", "pad": 3},
    )
    if len(values) <= max_ticks:
        ax.set_xticks(positions)
        ax.set_xticklabels([instance_ids[i] for i in order], rotation=90, fontsize=6)
    else:
        ax.set_xlabel("instances, sorted by difference")
    ax.set_xlim(-0.6, len(values) - 0.4)
    span = max([abs(v) for v in values] + [0.05])
    ax.set_ylim(-span * 1.15, span * 1.25)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return counts
