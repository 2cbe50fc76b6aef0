"""Run the grid chunker × retriever (plus the reference baselines) over a bench and compare them.

Usage::

    python scripts/compare_chunkers.py [--bench FILE] [--repos DIR] [--out DIR]
        [--chunkers window function hybrid] [--retrievers bm25 tfidf potion faiss hybrid]
        [--references reference_bm25 reference_tfidf reference_potion] [--raw] [--model PATH] [--k 5] [--budget 500]

Writes to ``--out`` (default ``outputs/compare/<bench>``): ``results/<cell>.jsonl`` (reference-compatible rows,
resumable), ``table.md`` (all 17 metrics per cell, plus per-language tables when the bench spans several
languages), ``table.csv`` (one row per cell and language), and ``plots/*.png`` (nDCG@500, HitFile and context
efficiency per chunker × retriever; needs the ``plots`` extra). ``--raw`` adds each retriever without the ranking
priors. Indexes are built on first use and reused (``--store``).
"""

from __future__ import annotations

import argparse
import csv
import logging
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from swe_explore.chunking.languages import language_for_path
from swe_explore.evaluation.bench import BenchRecord
from swe_explore.evaluation.cli import add_bench_arguments, die, load_bench_args
from swe_explore.explore.options import add_explorer_arguments, explorer_from_args
from swe_explore.explore.explorer import make_explorer
from swe_explore.evaluation.metrics import METRIC_NAMES
from swe_explore.evaluation.results import evaluate_rows, format_table, mean_metrics, read_rows
from swe_explore.evaluation.runner import ConcurrentRunError, ConfigMismatchError, run_explorer
from swe_explore.explore.packing import PackConfig
from swe_explore.explore.priors import RankPriors

PLOTTED = [("ndcg_at_500", "nDCG@500"), ("hit_file_rate", "HitFile"), ("context_efficiency", "Context efficiency")]


def instance_language(record: BenchRecord) -> str:
    """The instance's language: the most common language of its core files (ties: alphabetical)."""
    langs = Counter(language_for_path(p) or "other" for p in record.ground_truth.get("read_core_files", []))
    return min(langs, key=lambda lang: (-langs[lang], lang)) if langs else "other"


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 a cell had failures, 2 bad input)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_bench_arguments(parser)
    parser.add_argument("--out", type=Path, default=None, help="output directory")
    parser.add_argument("--chunkers", nargs="+", default=["window", "function", "hybrid"])
    parser.add_argument("--retrievers", nargs="+", default=["bm25", "tfidf", "potion", "faiss", "hybrid"])
    parser.add_argument("--references", nargs="*", default=["reference_bm25", "reference_tfidf", "reference_potion"])
    parser.add_argument("--raw", action="store_true", help="also run each retriever without ranking priors")
    parser.add_argument("--limit", type=int, default=None, help="only the first N instances")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--overwrite", action="store_true", help="rerun every cell instead of resuming")
    add_explorer_arguments(parser, choose=False)
    args = parser.parse_args(argv)
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
                for raw in ([False, True] if args.raw else [False]):
                    explorer = explorer_from_args(args, retriever)
                    label = f"{retriever}+{chunker}"
                    if raw:
                        explorer.priors = RankPriors.off()
                        label += " (raw)"
                    cells.append((label, explorer, {"chunker": chunker, "retriever": retriever + (" raw" if raw else "")}))
    except ValueError as exc:
        parser.error(str(exc))

    languages = {r.instance_id: instance_language(r) for r in records}
    by_language = sorted(set(languages.values()))
    summary: dict[str, dict[str, Any]] = {}
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
        seconds = [float(r.get("seconds", 0.0)) for r in read_rows(path)]
        summary[label] = {
            **meta,
            "cases": len(scored),
            "metrics": mean_metrics(scored),
            "per_language": {lang: mean_metrics([r for r in scored if languages[r["instance_id"]] == lang])
                             for lang in by_language},
            "median_seconds": statistics.median(seconds) if seconds else 0.0,
        }
        print(f"{label}: {len(scored)} instances, {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    plotted = write_outputs(out, summary, by_language, len(records))
    print(format_table({label: s["metrics"] for label, s in summary.items()},
                       metrics=["hit_file_rate", "hit_region_rate", "ndcg_at_500", "recall_at_500",
                                "context_efficiency", "precision", "first_useful_hit"]))
    plots = f" and {out / 'plots'}" if plotted else " (no plots: pip install 'swe-explore-baselines[plots]')"
    print(f"\nwrote {out / 'table.md'}, {out / 'table.csv'}{plots}")
    return 1 if failures else 0


def write_outputs(out: Path, summary: dict[str, dict[str, Any]], languages: list[str], n_records: int) -> bool:
    """Write ``table.md``, ``table.csv`` and the plots for a finished grid; return whether plots were made."""
    out.mkdir(parents=True, exist_ok=True)
    parts = [f"# Chunker × retriever comparison ({n_records} instances)\n",
             format_table({label: s["metrics"] for label, s in summary.items()}, metrics=METRIC_NAMES)]
    if len(languages) > 1:
        for lang in languages:
            parts.append(f"\n## {lang}\n")
            parts.append(format_table({label: s["per_language"][lang] for label, s in summary.items()},
                                      metrics=METRIC_NAMES))
    (out / "table.md").write_text("\n".join(parts) + "\n", encoding="utf-8")
    with (out / "table.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["cell", "chunker", "retriever", "language", "cases", "median_seconds", *METRIC_NAMES])
        for label, s in summary.items():
            rows = [("all", s["metrics"])] + ([(lang, s["per_language"][lang]) for lang in languages]
                                              if len(languages) > 1 else [])
            for lang, metrics in rows:
                writer.writerow([label, s["chunker"], s["retriever"], lang, s["cases"], f"{s['median_seconds']:.4f}",
                                 *(f"{metrics[m]:.6f}" for m in METRIC_NAMES)])
    return plot(out / "plots", summary, languages)


def plot(directory: Path, summary: dict[str, dict[str, Any]], languages: list[str]) -> bool:
    """Grouped bar charts: one figure per plotted metric (and per language when there are several).

    :return: ``False`` when matplotlib is not installed (no plots), else ``True``.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    directory.mkdir(parents=True, exist_ok=True)
    chunkers = list(dict.fromkeys(s["chunker"] for s in summary.values()))
    retrievers = list(dict.fromkeys(s["retriever"] for s in summary.values()))
    scopes = [("all", None)] + ([(lang, lang) for lang in languages] if len(languages) > 1 else [])
    for metric, title in PLOTTED:
        for scope, lang in scopes:
            fig, ax = plt.subplots(figsize=(min(14.0, 2.0 + 0.8 * len(retrievers)), 4.5))
            width = 0.8 / max(1, len(chunkers))
            for i, chunker in enumerate(chunkers):
                values = []
                for retriever in retrievers:
                    cell = next((s for s in summary.values()
                                 if s["chunker"] == chunker and s["retriever"] == retriever), None)
                    metrics = None if cell is None else (cell["metrics"] if lang is None else cell["per_language"][lang])
                    values.append(float("nan") if metrics is None else metrics[metric])
                ax.bar([x + i * width for x in range(len(retrievers))], values, width, label=chunker)
            ax.set_xticks([x + width * (len(chunkers) - 1) / 2 for x in range(len(retrievers))])
            ax.set_xticklabels(retrievers, rotation=30, ha="right")
            ax.set_ylabel(title)
            ax.set_title(f"{title} ({scope})")
            ax.legend(title="chunker")
            fig.tight_layout()
            fig.savefig(directory / f"{metric}{'' if lang is None else '_' + lang}.png", dpi=110)
            plt.close(fig)
    return True


if __name__ == "__main__":
    sys.exit(main())
