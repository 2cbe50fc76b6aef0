"""Run the grid chunker × retriever (plus the reference baselines) over a bench and compare them.

Usage::

    python scripts/compare_chunkers.py [--bench FILE] [--repos DIR] [--out DIR]
        [--chunkers window function hybrid] [--retrievers bm25 tfidf potion faiss hybrid]
        [--references reference_bm25 reference_tfidf reference_potion] [--raw] [--model PATH] [--k 5] [--budget 500]
        [--baseline-cell bm25+function] [--resamples 10000] [--seed 0] [--paper-rows [FILE]]

Writes to ``--out`` (default ``outputs/compare/<bench>``): ``results/<cell>.jsonl`` (reference-compatible rows,
resumable), ``per_instance.csv`` (every cell's per-instance metrics), ``table.md`` (all 17 metrics per cell as
mean [95% bootstrap CI] with the Holm-adjusted p-value of a paired permutation test against the baseline cell and
a marker for significant differences, over the instances every cell holds; plus per-language tables when the
bench spans several languages), ``table.csv`` (one row per cell and language: means, then per metric CI, difference
to the baseline, p and Holm p), and ``plots/*.png`` (needs the ``plots`` extra): nDCG@500, HitFile and context
efficiency per chunker × retriever with the CIs as error bars, and ``delta_ndcg_at_500.png``, the sorted
per-instance differences between the best cell and the baseline. ``--raw`` adds each retriever without the ranking
priors. Indexes are built on first use and reused (``--store``). The statistics are those of
:mod:`swe_explore.evaluation.stats`. ``--paper-rows`` adds the paper's main-table rows (measured on all 848
instances, labelled so) to the printed table, for the metrics they share; the files written are unchanged.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from swe_explore.benchprep.release import record_language
from swe_explore.commands._args import (
    add_bench_arguments,
    add_paper_rows_argument,
    die,
    load_bench_args,
    refuse_overwriting_inputs,
    refuse_writing_into,
)
from swe_explore.commands.explorer_args import add_explorer_arguments, explorer_from_args
from swe_explore.evaluation.compare import DEFAULT_BASELINE, Cell, baseline_cell, run_grid
from swe_explore.evaluation.paper_rows import load_paper_rows
from swe_explore.evaluation.runner import ConcurrentRunError, ConfigMismatchError
from swe_explore.evaluation.stats import DEFAULT_RESAMPLES, DEFAULT_SEED
from swe_explore.explore.explorer import IndexedExplorer, make_explorer
from swe_explore.explore.packing import PackConfig
from swe_explore.explore.priors import RankPriors
from swe_explore.indexes.manage import StoreUse
from swe_explore.retrievers.potion import ModelUnavailableError


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 a cell had failures, 2 bad input)."""
    parser = _parser()
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
    inputs = [("--bench", args.bench), ("--issue-map", args.issue_map), ("--repos", args.repos)]
    refuse_overwriting_inputs(parser, [("--out", out)], inputs)
    records = load_bench_args(parser, args, limit=args.limit)
    refuse_writing_into(parser, [("--out", out)], [("--repos", args.repos), ("--store", args.store)])
    refuse_writing_into(parser, [("--store", args.store)], [("--repos", args.repos)])

    try:
        paper_rows = load_paper_rows(args.paper_rows) if args.paper_rows is not None else None
    except ValueError as exc:
        die(parser, str(exc))
    cells = _cells(parser, args)
    if args.resamples < 1:
        parser.error("--resamples must be >= 1")
    try:
        baseline = baseline_cell(args.baseline_cell, cells)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        grid = run_grid(
            cells,
            records,
            args.repos,
            out,
            language_of=record_language,
            baseline=baseline,
            n_resamples=args.resamples,
            seed=args.seed,
            overwrite=args.overwrite,
            progress=not args.quiet,
        )
    except (ConfigMismatchError, ConcurrentRunError, ValueError) as exc:
        die(parser, str(exc))
    print(grid.table(paper_rows=paper_rows))
    plots = f" and {out / 'plots'}" if grid.plotted else " (no plots: pip install 'swe-explore-baselines[plots]')"
    print(f"\nwrote {out / 'table.md'}, {out / 'table.csv'}, {out / 'per_instance.csv'}{plots}")
    uses = [use for _, explorer, _ in cells if (use := getattr(explorer, "store_use", None)) is not None]
    if uses and not args.quiet:
        print(StoreUse.merged(uses).line(), file=sys.stderr)
    return 1 if grid.failures else 0


def _parser() -> argparse.ArgumentParser:
    """The command's flags."""
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
    parser.add_argument(
        "--quiet", action="store_true", help="no progress bars, no 'indexes: STORE (N built, M current)' line"
    )
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
    add_paper_rows_argument(parser)
    add_explorer_arguments(parser, choose=False)
    return parser


def _cells(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[Cell]:
    """The grid of the flags: the reference baselines, then each chunker × retriever (and its raw twin)."""
    cells: list[Cell] = []
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
    except ModelUnavailableError:  # no model: an operational failure, exit status 1 (commands._errors)
        raise
    except ValueError as exc:
        parser.error(str(exc))
    return cells


if __name__ == "__main__":
    sys.exit(main())
