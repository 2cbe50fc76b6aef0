"""Operating points: the learned explorer at several line budgets, every main metric against the budget.

Usage::

    python scripts/operating_points.py --bench FILE --repos DIR --out DIR [--budgets 500 1000 2000 4000]
        [--shape plain|evidence] [--k 5] [--store DIR]

For each budget B it runs the ``learned`` explorer (``--shape`` as ``run_baselines.py --shape``) over the bench
into ``DIR/<shape>-B<B>.jsonl`` (resumed when present), then writes ``DIR/<shape>.md``: one row per budget, each
main metric's mean with its 95% bootstrap CI (:func:`swe_explore.evaluation.stats.bootstrap_ci`), plus the p50 and
p95 of the per-instance explore time; and ``DIR/<shape>.png``, every main metric against B, when matplotlib (the
``plots`` extra) is installed.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from swe_explore.commands._args import add_bench_arguments, load_bench_args
from swe_explore.evaluation.plots import pyplot
from swe_explore.evaluation.results import SHORT_NAMES, read_rows
from swe_explore.evaluation.runner import run_explorer
from swe_explore.evaluation.stats import bootstrap_ci
from swe_explore.explore.config import DEFAULT_SHAPE
from swe_explore.explore.explorer import make_explorer
from swe_explore.explore.shaping import SHAPES
from swe_explore.indexes.store import default_store

#: The metrics of the table and the plot, in column order.
MAIN_METRICS = (
    "hit_file_rate",
    "hit_region_rate",
    "precision",
    "recall",
    "ndcg_at_500",
    "recall_at_500",
    "first_useful_hit",
    "context_efficiency",
)


def budget_summary(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str] = MAIN_METRICS) -> dict[str, Any]:
    """Mean and 95% bootstrap CI of each metric, and the p50/p95 explore time, over some result rows.

    :param rows: result rows (their ``metrics`` and ``seconds``).
    :param metrics: metric keys.
    :return: ``{"n", metric: (mean, low, high) ..., "p50_s", "p95_s"}``.
    :raises ValueError: if ``rows`` is empty.
    """
    if not rows:
        raise ValueError("no result rows to summarise")
    out: dict[str, Any] = {"n": len(rows)}
    for metric in metrics:
        values = np.array([float(r["metrics"][metric]) for r in rows])
        low, high = bootstrap_ci(values)
        out[metric] = (float(values.mean()), low, high)
    seconds = np.array([float(r.get("seconds", 0.0)) for r in rows])
    out["p50_s"], out["p95_s"] = float(np.percentile(seconds, 50)), float(np.percentile(seconds, 95))
    return out


def format_points(points: Mapping[int, Mapping[str, Any]], metrics: Sequence[str] = MAIN_METRICS) -> str:
    """A Markdown table: one row per budget, ``mean [low, high]`` per metric, then the latency.

    :param points: budget -> :func:`budget_summary`.
    :param metrics: metric keys (columns).
    :return: the table, ending with a newline.
    """
    head = ["B", "n", *(SHORT_NAMES.get(m, m) for m in metrics), "p50 s", "p95 s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for budget in sorted(points):
        p = points[budget]
        cells = [str(budget), str(p["n"])]
        cells += [f"{p[m][0]:.3f} [{p[m][1]:.3f}, {p[m][2]:.3f}]" for m in metrics]
        cells += [f"{p['p50_s']:.3f}", f"{p['p95_s']:.3f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot_points(points: Mapping[int, Mapping[str, Any]], path: Path, title: str) -> bool:
    """Every metric's mean (with its CI band) against the budget, as a PNG.

    :param points: budget -> :func:`budget_summary`.
    :param path: the PNG to write.
    :param title: the plot's title.
    :return: whether it was written (``False`` without matplotlib).
    """
    plt = pyplot()
    if plt is None:
        return False
    budgets = sorted(points)
    fig, ax = plt.subplots(figsize=(8, 5))
    for metric in MAIN_METRICS:
        means = [points[b][metric][0] for b in budgets]
        ax.plot(budgets, means, marker="o", label=SHORT_NAMES.get(metric, metric))
        ax.fill_between(
            budgets, [points[b][metric][1] for b in budgets], [points[b][metric][2] for b in budgets], alpha=0.1
        )
    ax.set_xscale("log", base=2)
    ax.set_xticks(budgets, [str(b) for b in budgets])
    ax.set_xlabel("line budget B")
    ax.set_ylabel("mean (95% CI)")
    ax.set_title(title)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def build_parser() -> argparse.ArgumentParser:
    """The command's argument parser."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    add_bench_arguments(parser)
    parser.add_argument("--out", type=Path, required=True, help="output directory (result files, table, plot)")
    parser.add_argument("--budgets", type=int, nargs="+", default=[500, 1000, 2000, 4000], help="line budgets")
    parser.add_argument(
        "--shape", choices=list(SHAPES), default=DEFAULT_SHAPE, help=f"region shape (default: {DEFAULT_SHAPE})"
    )
    parser.add_argument("--k", type=int, default=5, help="regions per instance (default: %(default)s)")
    parser.add_argument("--store", type=Path, default=default_store(), help="index store directory")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the explorer at each budget and write the table and the plot.

    :param argv: command-line arguments.
    :return: exit status 0.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    records = load_bench_args(parser, args)
    args.out.mkdir(parents=True, exist_ok=True)
    points = {}
    for budget in args.budgets:
        explorer = make_explorer("learned", k=args.k, budget=budget, store=args.store, shape=args.shape)
        out = args.out / f"{args.shape}-B{budget}.jsonl"
        run_explorer(explorer, records, args.repos, out, progress=not args.quiet)
        points[budget] = budget_summary(read_rows(out))
    table = format_points(points)
    (args.out / f"{args.shape}.md").write_text(f"# learned, shape {args.shape}, {args.bench}\n\n{table}")
    print(table, end="")
    if plot_points(points, args.out / f"{args.shape}.png", f"learned, shape {args.shape}"):
        print(f"plot: {args.out / (args.shape + '.png')}")
    return 0
