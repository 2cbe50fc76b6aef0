"""Ablation of the fusion explorer: every ingredient alone and together, against today's default, per language.

Usage::

    python scripts/ablation.py --bench FILE --repos DIR --out DIR [--store DIR] [--potion-model PATH]
        [--configs NAME ...] [--files-first 3] [--latency] [--model-dir DIR] [--history-model-dir DIR]

Runs each configuration of :data:`CONFIGS` over the bench (``scripts/run_baselines.py`` semantics: K = 5,
B = 500, resumable result files ``DIR/runs/<name>.jsonl``), scores them with the reference-exact evaluator,
and writes ``DIR/table.md`` and ``DIR/table.csv``: every configuration's mean with its 95% bootstrap interval
and the Holm-adjusted paired permutation p-value against ``today`` (BM25 over function chunks with the
hand-set ranking priors, the default before the learned ranker), overall and per language (the record's
``language`` field, else ``python``). ``--latency`` also times each configuration's ``explore`` call on an
already loaded index (three calls per instance, the median kept), and reports p50/p95 in milliseconds.
``--history-model-dir`` (models trained with ``--variant ranker-mentions-history --variant
ranker-mentions-graph-history``, on snapshots with history files, docs/history.md) adds the ``learned+history``
configurations (:data:`HISTORY_CONFIGS`); without it they are not run.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from swe_explore.commands._errors import interrupt_quietly, run_main

with interrupt_quietly():  # Ctrl-C while the modules import: exit 130 quietly
    from swe_explore.evaluation.bench import find_snapshot, load_bench
    from swe_explore.evaluation.metrics import MAIN_METRICS, METRIC_NAMES
    from swe_explore.evaluation.results import Coverage, evaluate_rows, read_rows
    from swe_explore.evaluation.runner import run_explorer
    from swe_explore.evaluation.stats import compare_rows, format_comparison
    from swe_explore.explore.explorer import make_explorer
    from swe_explore.explore.fusion import FusionExplorer
    from swe_explore.explore.packing import PackConfig

MODEL_DIR: list[Path] = []  # set by --model-dir
HISTORY_MODEL_DIR: list[Path] = []  # set by --history-model-dir


def _fusion(
    model: str | None,
    files_first: int = 0,
    ranker: str = "learned",
    gate: float | None = None,
    pack: PackConfig | None = None,
    history: bool = False,
) -> Callable[..., Any]:
    def build(store: Path, potion: str | None, n_files: int) -> Any:
        names = (model or "ranker-lexical").split(",")
        model_dir = HISTORY_MODEL_DIR if history else MODEL_DIR
        path = ",".join(str(model_dir[0] / n) for n in names) if model_dir else ",".join(names)
        return FusionExplorer(
            ranker=ranker,
            ranker_model=path,
            files_first=n_files if files_first else 0,
            file_margin=gate,
            pack=pack,
            potion_model=potion,
            store=store,
        )

    return build


#: Configuration name -> explorer factory ``(store, potion model, files-first N) -> explorer``. ``today`` is the
#: default before the learned ranker (BM25 over function chunks, hand-set priors, the packer). The learned
#: configurations pack with LEARNED_PACK (250-line regions, merge gap 10); `+packer-200-20` with the packer of
#: `today` (PackConfig()).
CONFIGS: dict[str, Callable[..., Any]] = {
    "today": lambda store, potion, n: make_explorer("bm25", store=store),
    "today+files-first": _fusion(None, 1, "priors"),
    "learned-lexical": _fusion("ranker-lexical"),
    "learned+mentions": _fusion("ranker-mentions"),
    "learned+graph": _fusion("ranker-graph"),
    "learned+mentions+graph": _fusion("ranker-mentions-graph"),
    "learned-ensemble+packer-200-20": _fusion("ranker-mentions,ranker-mentions-graph", pack=PackConfig()),
    "learned-ensemble (default)": _fusion("ranker-mentions,ranker-mentions-graph"),
    "learned-ensemble+files-first": _fusion("ranker-mentions,ranker-mentions-graph", 1),
    "learned-ensemble+file-gate": _fusion("ranker-mentions,ranker-mentions-graph", gate=2.0),
    "learned-full (+potion)": _fusion("ranker-full"),
}
#: The configurations with the history features and candidates (run only with ``--history-model-dir``).
HISTORY_CONFIGS: dict[str, Callable[..., Any]] = {
    "learned+mentions+history": _fusion("ranker-mentions-history", history=True),
    "learned+mentions+graph+history": _fusion("ranker-mentions-graph-history", history=True),
    "learned-ensemble+history": _fusion("ranker-mentions-history,ranker-mentions-graph-history", history=True),
}
CONFIGS.update(HISTORY_CONFIGS)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", type=Path, required=True)
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--store", type=Path, default=None)
    parser.add_argument("--potion-model", default=None)
    parser.add_argument("--configs", nargs="+", choices=list(CONFIGS), default=None)
    parser.add_argument("--files-first", type=int, default=3)
    parser.add_argument("--latency", action="store_true")
    parser.add_argument("--model-dir", type=Path, default=None, help="ranker models (default: the shipped ones)")
    parser.add_argument(
        "--history-model-dir", type=Path, default=None, help="the *-history ranker models (adds learned+history rows)"
    )
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    from swe_explore.indexes.store import default_store

    store = args.store or default_store()
    if args.model_dir:
        MODEL_DIR.append(args.model_dir)
    if args.history_model_dir:
        HISTORY_MODEL_DIR.append(args.history_model_dir)
    runnable = [c for c in CONFIGS if args.history_model_dir or c not in HISTORY_CONFIGS]
    names = args.configs or [c for c in runnable if args.potion_model or "potion" not in c]
    if not args.history_model_dir and any(c in HISTORY_CONFIGS for c in names):
        parser.error("the history configurations need --history-model-dir")
    records = load_bench(args.bench)
    scored: dict[str, list[dict[str, Any]]] = {}
    latency: dict[str, tuple[float, float]] = {}
    for name in names:
        explorer = CONFIGS[name](store, args.potion_model, args.files_first)
        out = args.out / "runs" / f"{name.replace(' ', '_')}.jsonl"
        t0 = time.perf_counter()
        run_explorer(explorer, records, args.repos, out, progress=not args.quiet)
        coverage = Coverage()
        scored[name] = evaluate_rows(read_rows(out), records, args.repos, coverage=coverage)
        print(f"{name}: {coverage.summary_line()} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
        for problem in coverage.problems():
            print(f"warning: {name}: {problem}", file=sys.stderr)
        if args.latency:
            latency[name] = _latency(explorer, records, args.repos)
    languages = sorted({str(r.raw.get("language") or "python") for r in records})
    lang_of = {r.instance_id: str(r.raw.get("language") or "python") for r in records}
    sections = [f"# Ablation on {args.bench.name} ({len(records)} instances)\n"]
    rows_csv: list[dict[str, Any]] = []
    for language in ["all", *languages] if len(languages) > 1 else ["all"]:
        subset = {
            n: [r for r in rows if language == "all" or lang_of[r["instance_id"]] == language]
            for n, rows in scored.items()
        }
        comparison = compare_rows(subset, names[0], METRIC_NAMES)
        sections.append(f"## {language} (n = {comparison.n})\n")
        sections.append(format_comparison(comparison, metrics=MAIN_METRICS, metrics_as="columns"))
        for name in names:
            stats = comparison.to_dict(name)
            row: dict[str, Any] = {"language": language, "config": name, "n": comparison.n}
            for metric in METRIC_NAMES:
                m = stats["metrics"][metric]
                row[metric] = m["mean"]
                row[f"{metric}_ci_low"], row[f"{metric}_ci_high"] = m["ci_low"], m["ci_high"]
                row[f"{metric}_p_holm"] = m.get("p_holm")
            rows_csv.append(row)
    if latency:
        sections.append("## Query latency after indexing (ms per instance, median of 3 calls)\n")
        rows = [f"| {n} | {p50:.1f} | {p95:.1f} |" for n, (p50, p95) in latency.items()]
        sections.append("\n".join(["| config | p50 | p95 |", "|---|--:|--:|", *rows]))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "table.md").write_text("\n\n".join(sections) + "\n", encoding="utf-8")
    with open(args.out / "table.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows_csv[0]))
        writer.writeheader()
        writer.writerows(rows_csv)
    print((args.out / "table.md").read_text(encoding="utf-8"))
    return 0


def _latency(explorer: Any, records: list[Any], repos: Path) -> tuple[float, float]:
    """p50 and p95 (ms) over instances of the median of three ``explore`` calls on a loaded index."""
    per_instance = []
    for record in records:
        snapshot = find_snapshot(record, repos)
        if snapshot is None:
            continue
        explorer.explore(snapshot, record.query, record.instance_id)  # loads the index
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            explorer.explore(snapshot, record.query, record.instance_id)
            times.append((time.perf_counter() - t0) * 1000)
        per_instance.append(statistics.median(times))
    per_instance.sort()
    if not per_instance:
        return (0.0, 0.0)
    p95 = per_instance[min(len(per_instance) - 1, round(0.95 * (len(per_instance) - 1)))]
    return float(statistics.median(per_instance)), p95


if __name__ == "__main__":
    sys.exit(run_main(main))
