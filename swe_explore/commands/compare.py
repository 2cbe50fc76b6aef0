"""Run the grid chunker × retriever (plus the reference baselines) over a bench and compare them.

Usage::

    python scripts/compare_chunkers.py [--bench FILE] [--repos DIR] [--out DIR]
        [--chunkers window function hybrid] [--retrievers bm25 tfidf potion faiss hybrid]
        [--references reference_bm25 reference_tfidf reference_potion] [--raw] [--model PATH] [--k 5] [--budget 500]
        [--baseline-cell bm25+function] [--resamples 10000] [--seed 0]

Writes to ``--out`` (default ``outputs/compare/<bench>``): ``results/<cell>.jsonl`` (reference-compatible rows,
resumable), ``per_instance.csv`` (every cell's per-instance metrics), ``table.md`` (all 17 metrics per cell as
mean [95% bootstrap CI] with the Holm-adjusted p-value of a paired permutation test against the baseline cell and
a marker for significant differences, over the instances every cell holds; plus per-language tables when the
bench spans several languages), ``table.csv`` (one row per cell and language: means, then per metric CI, difference
to the baseline, p and Holm p), and ``plots/*.png`` (needs the ``plots`` extra): nDCG@500, HitFile and context
efficiency per chunker × retriever with the CIs as error bars, and ``delta_ndcg_at_500.png``, the sorted
per-instance differences between the best cell and the baseline. ``--raw`` adds each retriever without the ranking
priors. Indexes are built on first use and reused (``--store``). The statistics are those of
:mod:`swe_explore.evaluation.stats`.
"""

from __future__ import annotations

import argparse
import csv
import logging
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from swe_explore.chunking.registry import DEFAULT_CHUNKER
from swe_explore.commands._args import add_bench_arguments, die, load_bench_args
from swe_explore.commands.evaluate import record_language
from swe_explore.evaluation.bench import BenchRecord
from swe_explore.evaluation.metrics import METRIC_NAMES
from swe_explore.evaluation.plots import Bar, bar_chart, delta_chart, pyplot
from swe_explore.evaluation.results import (
    SHORT_NAMES,
    evaluate_rows,
    format_table,
    mean_metrics,
    read_rows,
    write_instance_csv,
)
from swe_explore.evaluation.runner import ConcurrentRunError, ConfigMismatchError, run_explorer
from swe_explore.evaluation.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, Comparison, compare_rows, format_comparison
from swe_explore.explore.explorer import IndexedExplorer, make_explorer
from swe_explore.explore.options import add_explorer_arguments, explorer_from_args
from swe_explore.explore.packing import PackConfig
from swe_explore.explore.priors import RankPriors

PLOTTED = [("ndcg_at_500", "nDCG@500"), ("hit_file_rate", "HitFile"), ("context_efficiency", "Context efficiency")]
DELTA_METRIC = "ndcg_at_500"
"""The metric of the per-instance difference plot (best cell against the baseline)."""
DEFAULT_BASELINE = f"bm25+{DEFAULT_CHUNKER}"
"""The default baseline cell: the default explorer (``run_baselines.py`` without options)."""


def instance_language(record: BenchRecord) -> str:
    """The instance's language: its ``language`` field, else that of most of its core lines (the rule of
    ``evaluate.py``: :func:`swe_explore.commands.evaluate.record_language`)."""
    return record_language(record)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 a cell had failures, 2 bad input)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_bench_arguments(parser)
    parser.add_argument("--out", type=Path, default=None, help="output directory")
    parser.add_argument(
        "--chunkers",
        nargs="+",
        default=["window", "function", "hybrid"],
        help="chunk strategies of the grid (default: window function hybrid)",
    )
    parser.add_argument(
        "--retrievers",
        nargs="+",
        default=None,
        help="retrievers of the grid (default: bm25 tfidf, plus potion faiss hybrid when an "
        "embedding model is given by --model or $SWE_EXPLORE_POTION_MODEL)",
    )
    parser.add_argument(
        "--references",
        nargs="*",
        default=None,
        help="reference baselines run next to the grid (default: reference_bm25 reference_tfidf, "
        "plus reference_potion with a model; none: --references with no name)",
    )
    parser.add_argument("--raw", action="store_true", help="also run each retriever without ranking priors")
    parser.add_argument("--limit", type=int, default=None, help="only the first N instances")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--overwrite", action="store_true", help="rerun every cell instead of resuming")
    parser.add_argument(
        "--baseline-cell",
        default=None,
        metavar="CELL",
        help="the cell every other is tested against: a label such as bm25+function or "
        f"reference_bm25, or CHUNKER/RETRIEVER (default: {DEFAULT_BASELINE} if in the grid, "
        "else the first cell)",
    )
    parser.add_argument(
        "--resamples",
        type=int,
        default=DEFAULT_RESAMPLES,
        help="bootstrap resamples and random permutations (default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of both (default: %(default)s)")
    add_explorer_arguments(parser, choose=False)
    args = parser.parse_args(argv)
    embedding = bool(args.model or os.environ.get("SWE_EXPLORE_POTION_MODEL"))
    if args.retrievers is None:
        args.retrievers = ["bm25", "tfidf", *(["potion", "faiss", "hybrid"] if embedding else [])]
    if args.references is None:
        args.references = ["reference_bm25", "reference_tfidf", *(["reference_potion"] if embedding else [])]
    if args.chunker is not None:
        parser.error("compare_chunkers.py takes --chunkers (a list), not --chunker")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    out = args.out or Path("outputs/compare") / args.bench.stem
    records = load_bench_args(parser, args, limit=args.limit)

    cells: list[tuple[str, Any, dict[str, str]]] = []
    try:
        for reference in args.references:
            explorer = make_explorer(reference, pack=PackConfig(k=args.k), model=args.model)
            cells.append((reference, explorer, {"chunker": "reference", "retriever": reference}))
        for chunker in args.chunkers:
            for retriever in args.retrievers:
                args.chunker = chunker
                for raw in [False, True] if args.raw else [False]:
                    explorer = explorer_from_args(args, retriever)
                    label = f"{retriever}+{chunker}"
                    if raw and isinstance(explorer, IndexedExplorer):
                        explorer.priors = RankPriors.off()
                        label += " (raw)"
                    cells.append(
                        (label, explorer, {"chunker": chunker, "retriever": retriever + (" raw" if raw else "")})
                    )
    except ValueError as exc:
        parser.error(str(exc))
    if args.resamples < 1:
        parser.error("--resamples must be >= 1")
    try:
        baseline = baseline_cell(args.baseline_cell, cells)
    except ValueError as exc:
        parser.error(str(exc))

    languages = {r.instance_id: instance_language(r) for r in records}
    by_language = sorted(set(languages.values()))
    summary: dict[str, dict[str, Any]] = {}
    scored_by_label: dict[str, list[dict[str, Any]]] = {}
    failures = 0
    for label, explorer, meta in cells:
        path = out / "results" / (label.replace(" ", "_").replace("(", "").replace(")", "") + ".jsonl")
        t0 = time.perf_counter()
        try:
            report = run_explorer(explorer, records, args.repos, path, args.overwrite, progress=not args.quiet)
        except (ConfigMismatchError, ConcurrentRunError, ValueError) as exc:
            die(parser, str(exc))
        failures += report.failed
        scored = evaluate_rows(read_rows(path), records, args.repos, missing_rows="skip")
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
    comparisons = {
        scope: comparison_or_none(rows, baseline, args.resamples, args.seed) for scope, rows in scopes.items()
    }
    write_instance_csv(out / "per_instance.csv", scored_by_label)
    plotted = write_outputs(out, summary, by_language, len(records), comparisons, scored_by_label)
    shown = [
        "hit_file_rate",
        "hit_region_rate",
        "ndcg_at_500",
        "recall_at_500",
        "context_efficiency",
        "precision",
        "first_useful_hit",
    ]
    if comparisons["all"] is None:
        print(format_table({label: s["metrics"] for label, s in summary.items()}, metrics=shown))
    else:
        print(format_comparison(comparisons["all"], metrics=shown))
    plots = f" and {out / 'plots'}" if plotted else " (no plots: pip install 'swe-explore-baselines[plots]')"
    print(f"\nwrote {out / 'table.md'}, {out / 'table.csv'}, {out / 'per_instance.csv'}{plots}")
    return 1 if failures else 0


def baseline_cell(name: str | None, cells: list[tuple[str, Any, dict[str, str]]]) -> str:
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
    stat_columns = ["ci_low", "ci_high", "delta", "p", "p_holm", "sig"]
    with (out / "table.csv").open("w", newline="", encoding="utf-8") as handle:
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
    return plot(out / "plots", summary, languages, comparisons, scored_by_label or {})


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


if __name__ == "__main__":
    sys.exit(main())
