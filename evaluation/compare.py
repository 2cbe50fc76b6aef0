"""The chunker × retriever grid of ``swe-explore compare``: run every cell over a bench, compare the cells with
the baseline cell, and write ``table.md``, ``table.csv``, ``per_instance.csv`` and the plots.

A cell is ``(label, explorer, {"chunker", "retriever"})``; :func:`run_grid` runs each with
:func:`~swe_explore.evaluation.runner.run_explorer` (resumable rows in ``<out>/results/<cell>.jsonl``), scores
them, and compares them over the instances every cell holds (overall and, when the bench spans several, per
language) with :mod:`swe_explore.evaluation.stats`.
"""

from __future__ import annotations

import csv
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swe_explore.chunking.registry import DEFAULT_CHUNKER
from swe_explore.evaluation.bench import BenchRecord
from swe_explore.evaluation.metrics import METRIC_NAMES
from swe_explore.evaluation.paper_rows import PaperRow, with_paper_rows
from swe_explore.evaluation.plots import Bar, bar_chart, delta_chart, pyplot
from swe_explore.evaluation.results import (
    SHORT_NAMES,
    evaluate_rows,
    format_table,
    mean_metrics,
    read_rows,
    write_instance_csv,
)
from swe_explore.evaluation.runner import run_explorer
from swe_explore.evaluation.stats import Comparison, compare_rows, format_comparison

PLOTTED = [("ndcg_at_500", "nDCG@500"), ("hit_file_rate", "HitFile"), ("context_efficiency", "Context efficiency")]
DELTA_METRIC = "ndcg_at_500"
"""The metric of the per-instance difference plot (best cell against the baseline)."""
DEFAULT_BASELINE = f"bm25+{DEFAULT_CHUNKER}"
"""The default baseline cell: the default explorer (``run_baselines.py`` without options)."""
SHOWN = [
    "hit_file_rate",
    "hit_region_rate",
    "ndcg_at_500",
    "recall_at_500",
    "context_efficiency",
    "precision",
    "first_useful_hit",
]
"""The metrics of the table printed at the end of the grid (the files hold all 17)."""

Cell = tuple[str, Any, dict[str, str]]
"""A cell of the grid: its label, its explorer (:class:`~swe_explore.evaluation.runner.Explorer`) and
``{"chunker", "retriever"}``."""


def cell_path(out: Path, label: str) -> Path:
    """The result rows of a cell: ``<out>/results/<label>.jsonl``, without spaces and parentheses
    (``bm25+window (raw)`` -> ``bm25+window_raw.jsonl``)."""
    return out / "results" / (label.replace(" ", "_").replace("(", "").replace(")", "") + ".jsonl")


@dataclass
class GridResult:
    """A finished grid.

    :param summary: label -> ``{"chunker", "retriever", "cases", "metrics", "per_language",
        "per_language_cases", "median_seconds"}``.
    :param comparisons: ``"all"`` and each language (when there are several) -> the comparison, or ``None``.
    :param failures: rows that failed, over all cells.
    :param plotted: whether the plots were drawn (matplotlib installed).
    """

    summary: dict[str, dict[str, Any]]
    comparisons: dict[str, Comparison | None]
    failures: int
    plotted: bool

    def table(self, metrics: Sequence[str] = SHOWN, paper_rows: list[PaperRow] | None = None) -> str:
        """The comparison overall (means with CIs and p-values), else the means.

        :param metrics: the metrics shown.
        :param paper_rows: the paper's main-table rows, shown after the cells (labelled "paper, all 848
            instances"; not compared).
        :return: the table.
        """
        comparison = self.comparisons["all"]
        if comparison is None:
            means = {label: s["metrics"] for label, s in self.summary.items()}
            return format_table(with_paper_rows(means, paper_rows or []), metrics=metrics)
        return format_comparison(comparison, metrics=metrics, extra={r.label: r.figures for r in paper_rows or []})


def run_grid(
    cells: Sequence[Cell],
    records: Sequence[BenchRecord],
    repos: Path,
    out: Path,
    *,
    language_of: Callable[[BenchRecord], str],
    baseline: str,
    n_resamples: int,
    seed: int,
    overwrite: bool = False,
    progress: bool = True,
) -> GridResult:
    """Run every cell over the bench (resuming), score and compare them, and write the grid's files.

    :param cells: the grid.
    :param records: the bench.
    :param repos: the snapshots directory.
    :param out: the output directory (``results/``, ``per_instance.csv``, ``table.md``, ``table.csv``,
        ``plots/``).
    :param language_of: a record's language (the per-language tables).
    :param baseline: the label of the cell every other is tested against (:func:`baseline_cell`).
    :param n_resamples: bootstrap resamples and random permutations.
    :param seed: their seed.
    :param overwrite: rerun every cell instead of resuming.
    :param progress: progress bars.
    :return: the grid.
    :raises ConfigMismatchError: a cell's result file was written with another configuration
        (:func:`~swe_explore.evaluation.runner.run_explorer`).
    :raises ConcurrentRunError: another run is writing a cell's result file.
    :raises ValueError: a cell's result file cannot be read or resumed (the message names it).
    """
    languages = {r.instance_id: language_of(r) for r in records}
    by_language = sorted(set(languages.values()))
    summary: dict[str, dict[str, Any]] = {}
    scored_by_label: dict[str, list[dict[str, Any]]] = {}
    failures = 0
    for label, explorer, meta in cells:
        path = cell_path(out, label)
        t0 = time.perf_counter()
        failures += run_explorer(explorer, records, repos, path, overwrite, progress=progress).failed
        scored = evaluate_rows(read_rows(path), records, repos, missing_rows="skip")
        scored_by_label[label] = scored
        seconds = [float(r.get("seconds", 0.0)) for r in read_rows(path)]
        summary[label] = {
            **meta,
            "cases": len(scored),
            "metrics": mean_metrics(scored),
            "per_language": {
                lang: mean_metrics([r for r in scored if languages[r["instance_id"]] == lang]) for lang in by_language
            },
            "per_language_cases": {
                lang: sum(languages[r["instance_id"]] == lang for r in scored) for lang in by_language
            },
            "median_seconds": statistics.median(seconds) if seconds else 0.0,
        }
        print(f"{label}: {len(scored)} instances, {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    scopes = {"all": scored_by_label} | {
        lang: {
            label: [r for r in rows if languages[r["instance_id"]] == lang] for label, rows in scored_by_label.items()
        }
        for lang in (by_language if len(by_language) > 1 else [])
    }
    comparisons = {scope: comparison_or_none(rows, baseline, n_resamples, seed) for scope, rows in scopes.items()}
    write_instance_csv(out / "per_instance.csv", scored_by_label)
    plotted = write_outputs(out, summary, by_language, len(records), comparisons, scored_by_label)
    return GridResult(summary, comparisons, failures, plotted)


def baseline_cell(name: str | None, cells: Sequence[Cell]) -> str:
    """Resolve ``--baseline-cell``: a cell label, or ``CHUNKER/RETRIEVER``; default the default explorer's cell.

    :param name: the option's value (``None`` = default: :data:`DEFAULT_BASELINE` if in the grid, else the first
        cell).
    :param cells: the grid's ``(label, explorer, {"chunker", "retriever"})``.
    :return: the baseline's label.
    :raises ValueError: if ``name`` names no cell (the message lists the labels).
    """
    labels = [label for label, _, _ in cells]
    if name is None:
        return DEFAULT_BASELINE if DEFAULT_BASELINE in labels else labels[0]
    if name in labels:
        return name
    chunker, sep, retriever = name.partition("/")
    for label, _, meta in cells:
        if sep and meta["chunker"] == chunker and meta["retriever"] == retriever:
            return label
    raise ValueError(f"--baseline-cell {name!r} is not a cell of the grid; cells: {', '.join(labels)}")


def comparison_or_none(
    scored_by_label: dict[str, list[dict[str, Any]]], baseline: str, n_resamples: int, seed: int
) -> Comparison | None:
    """Compare the cells that have rows against the baseline over their common instances (all 17 metrics).

    :param scored_by_label: the scored rows per cell label.
    :param baseline: the label of the baseline cell.
    :param n_resamples: bootstrap resamples and random permutations.
    :param seed: their seed.
    :return: the comparison, or ``None`` (with a warning) when the baseline has no rows, fewer than two cells
        have rows, or no instance is common to them.
    """
    present = {label: rows for label, rows in scored_by_label.items() if rows}
    if baseline not in present or len(present) < 2:
        return None
    try:
        return compare_rows(present, baseline, METRIC_NAMES, n_resamples=n_resamples, seed=seed)
    except ValueError as exc:
        print(f"warning: no statistics: {exc}", file=sys.stderr)
        return None


def write_outputs(
    out: Path,
    summary: dict[str, dict[str, Any]],
    languages: list[str],
    n_records: int,
    comparisons: dict[str, Comparison | None] | None = None,
    scored_by_label: dict[str, list[dict[str, Any]]] | None = None,
) -> bool:
    """Write ``table.md``, ``table.csv`` and the plots for a finished grid; return whether plots were made.

    :param out: the output directory.
    :param summary: ``{label: {"chunker", "retriever", "cases", "metrics", "per_language", "median_seconds"}}``.
    :param languages: the bench's languages (per-language tables and plots when there are several).
    :param n_records: the bench's instance count (the title).
    :param comparisons: ``{"all" or language: Comparison or None}``; a missing or ``None`` scope gets means only.
    :param scored_by_label: the scored rows per cell (for the per-instance difference plot).
    :return: whether plots were made (``False`` when matplotlib is not installed).
    """
    comparisons = comparisons or {}
    out.mkdir(parents=True, exist_ok=True)
    scopes = ["all"] + (languages if len(languages) > 1 else [])
    parts = [f"# Chunker × retriever comparison ({n_records} instances)\n"]
    for scope in scopes:
        if scope != "all":
            parts.append(f"\n## {scope}\n")
        comparison = comparisons.get(scope)
        if comparison is not None:
            parts.append(format_comparison(comparison, metrics_as="rows"))
        else:
            means = {
                label: s["metrics"] if scope == "all" else s["per_language"][scope] for label, s in summary.items()
            }
            parts.append(format_table(means, metrics=METRIC_NAMES))
    (out / "table.md").write_text("\n".join(parts) + "\n", encoding="utf-8")
    _write_table_csv(out / "table.csv", summary, scopes, comparisons)
    return plot(out / "plots", summary, languages, comparisons, scored_by_label or {})


def _write_table_csv(
    path: Path, summary: dict[str, dict[str, Any]], scopes: list[str], comparisons: dict[str, Comparison | None]
) -> None:
    """``table.csv``: one row per cell and scope (means, then per metric CI, difference, p, Holm p, marker)."""
    stat_columns = ["ci_low", "ci_high", "delta", "p", "p_holm", "sig"]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "cell",
                "chunker",
                "retriever",
                "language",
                "cases",
                "median_seconds",
                *METRIC_NAMES,
                "baseline",
                "compared_instances",
                *(f"{m}_{c}" for m in METRIC_NAMES for c in stat_columns),
            ]
        )
        for label, s in summary.items():
            for scope in scopes:
                metrics = s["metrics"] if scope == "all" else s["per_language"][scope]
                comparison = comparisons.get(scope)
                stats_cells: list[str] = []
                if comparison is not None and label in comparison.cells:
                    stats_cells = [comparison.baseline, str(comparison.n)]
                    for m in METRIC_NAMES:
                        c = comparison.cells[label][m]
                        stats_cells += [
                            f"{c.ci_low:.6f}",
                            f"{c.ci_high:.6f}",
                            f"{c.delta:.6f}",
                            _p_text(c.p),
                            _p_text(c.p_holm),
                            c.marker,
                        ]
                writer.writerow(
                    [
                        label,
                        s["chunker"],
                        s["retriever"],
                        scope,
                        s["cases"] if scope == "all" else s["per_language_cases"][scope],
                        f"{s['median_seconds']:.4f}",
                        *(f"{metrics[m]:.6f}" for m in METRIC_NAMES),
                        *stats_cells,
                    ]
                )


def _p_text(p: float) -> str:
    return "" if math.isnan(p) else f"{p:.6f}"


def metric_bars(
    summary: dict[str, dict[str, Any]], metric: str, comparison: Comparison | None, scope: str = "all"
) -> list[Bar]:
    """One :class:`Bar` per cell (group = retriever, series = chunker): mean, CI and marker from the comparison.

    A cell the comparison lacks (no rows) is missing (``mean=None``); without a comparison the bars are the
    summary's means without CIs.
    """
    bars = []
    for label, s in summary.items():
        if comparison is None:
            metrics = s["metrics"] if scope == "all" else s["per_language"][scope]
            mean = metrics[metric] if s["cases"] else None
            bars.append(Bar(s["retriever"], s["chunker"], mean))
        elif label not in comparison.cells:
            bars.append(Bar(s["retriever"], s["chunker"], None))
        else:
            c = comparison.cells[label][metric]
            bars.append(
                Bar(s["retriever"], s["chunker"], c.mean, (c.ci_low, c.ci_high), c.marker, label == comparison.baseline)
            )
    return bars


def best_cell(comparison: Comparison, metric: str) -> str | None:
    """The non-baseline cell with the highest mean of ``metric`` (ties: first in order), or ``None``."""
    others = [label for label in comparison.labels if label != comparison.baseline]
    return max(others, key=lambda label: comparison.cells[label][metric].mean) if others else None


def plot(
    directory: Path,
    summary: dict[str, dict[str, Any]],
    languages: list[str],
    comparisons: dict[str, Comparison | None] | None = None,
    scored_by_label: dict[str, list[dict[str, Any]]] | None = None,
) -> bool:
    """Bar charts with CIs (one figure per plotted metric and scope) and the per-instance difference plot.

    :param directory: where the PNG files go (created if missing).
    :param summary: ``{label: {"chunker", "retriever", "cases", "metrics", "per_language", "median_seconds"}}``.
    :param languages: the bench's languages (one figure per language when there are several).
    :param comparisons: ``{"all" or language: Comparison or None}``; a missing or ``None`` scope gets means only.
    :param scored_by_label: the scored rows per cell (for the per-instance difference plot).
    :return: ``False`` when matplotlib is not installed (no plots), else ``True``.
    """
    plt = pyplot()
    if plt is None:
        return False
    comparisons = comparisons or {}
    directory.mkdir(parents=True, exist_ok=True)
    scopes = ["all"] + (languages if len(languages) > 1 else [])
    for metric, title in PLOTTED:
        for scope in scopes:
            comparison = comparisons.get(scope)
            bars = metric_bars(summary, metric, comparison, scope)
            fig, ax = plt.subplots(figsize=(min(16.0, max(8.5, 4.0 + 0.6 * len(bars))), 5.0))
            if comparison is not None:
                heading = (
                    f"{title} ({scope}, n={comparison.n} instances): mean, 95% bootstrap CI\n"
                    f"▲/▼ significantly above/below {comparison.baseline}: * p<0.05, ** p<0.01 "
                    "(paired permutation test, Holm)"
                )
            else:
                heading = f"{title} ({scope}): mean"
            bar_chart(ax, bars, ylabel=title, title=heading, series_title="chunker")
            fig.tight_layout()
            fig.savefig(directory / f"{metric}{'' if scope == 'all' else '_' + scope}.png", dpi=110)
            plt.close(fig)
    comparison = comparisons.get("all")
    best = None if comparison is None else best_cell(comparison, DELTA_METRIC)
    if comparison is not None and best is not None and scored_by_label:
        fig, ax = plt.subplots(figsize=(min(16.0, max(8.5, 3.0 + 0.25 * comparison.n)), 5.0))
        draw_delta(ax, comparison, best, scored_by_label)
        fig.tight_layout()
        fig.savefig(directory / f"delta_{DELTA_METRIC}.png", dpi=110)
        plt.close(fig)
    return True


def draw_delta(
    ax: Any,
    comparison: Comparison,
    label: str,
    scored_by_label: dict[str, list[dict[str, Any]]],
    metric: str = DELTA_METRIC,
) -> tuple[int, int, int]:
    """Draw the sorted per-instance differences ``label - baseline`` of ``metric`` over the compared instances.

    :param ax: the matplotlib axes to draw on.
    :param comparison: the comparison (its instances and baseline).
    :param label: the cell compared with the baseline.
    :param scored_by_label: the scored rows per cell.
    :param metric: the metric whose differences are drawn.
    :return: ``(better, worse, tied)`` counts.
    """

    def values(cell: str) -> dict[str, float]:
        return {r["instance_id"]: float((r.get("metrics") or {}).get(metric, 0.0)) for r in scored_by_label[cell]}

    mine, base = values(label), values(comparison.baseline)
    deltas = [mine[iid] - base[iid] for iid in comparison.instance_ids]
    c = comparison.cells[label][metric]
    name = SHORT_NAMES.get(metric, metric)
    title = (
        f"{label} − {comparison.baseline}: per-instance Δ {name} (n={comparison.n})\n"
        f"mean Δ {c.delta:+.3f} [95% CI {c.delta_ci_low:+.3f}, {c.delta_ci_high:+.3f}], "
        f"p={c.p_holm:.3f} (Holm){' ' + c.marker if c.marker else ''}"
    )
    return delta_chart(ax, comparison.instance_ids, deltas, ylabel=f"Δ {name}", title=title)
