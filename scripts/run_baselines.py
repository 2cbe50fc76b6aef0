"""Run one explorer over a bench file: one reference-compatible JSONL result row per instance.

Usage::

    python scripts/run_baselines.py [--bench FILE] [--repos DIR] [--out FILE] [--retriever NAME]
        [--chunker NAME [--max-lines N ...]] [--k 5] [--budget 500] [--model PATH] [--store DIR]

With no arguments it runs BM25 over function chunks on the mini bench that ships with the project
(``examples/mini``), offline, in seconds. ``--repos DIR`` holds one snapshot per ``instance_id``. Missing
indexes are built on the way (and saved in ``--store``); rows already in ``--out`` for the same explorer config
are kept, so a killed run resumes where it stopped. ``--retriever reference_bm25|reference_tfidf|
reference_potion`` re-runs the reference baselines (80/20 windows, 3000-chunk cap, raw top-K) for comparison.
Prints the mean metrics at the end.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from tqdm import tqdm

from evaluation.bench import find_snapshot, load_bench
from evaluation.cli import MINI_BENCH, MINI_REPOS, add_explorer_arguments, explorer_from_args
from evaluation.line_counts import file_line_counts
from evaluation.metrics import evaluate_instance
from evaluation.results import (
    OUTCOME_ERROR,
    OUTCOME_SUCCESS,
    ResultsWriter,
    evaluate_rows,
    format_table,
    make_row,
    read_rows,
    summarize,
)

MAIN_METRICS = [
    "hit_file_rate", "hit_region_rate", "ndcg_at_500", "recall_at_500", "context_efficiency",
    "precision", "recall", "f1_score", "first_useful_hit",
]


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 some instance failed, 2 bad input)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", type=Path, default=MINI_BENCH, help="bench JSONL (default: the mini bench)")
    parser.add_argument("--repos", type=Path, default=MINI_REPOS, help="snapshots, one per instance_id")
    parser.add_argument("--out", type=Path, default=None,
                        help="result JSONL (default: outputs/results/<bench>/<explorer>.k<K>.b<B>.jsonl)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N instances")
    parser.add_argument("--overwrite", action="store_true", help="start --out afresh instead of resuming")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_explorer_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    try:
        records = load_bench(args.bench, limit=args.limit)
        explorer = explorer_from_args(args)
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))
    out = args.out or Path("outputs/results") / args.bench.stem / f"{explorer.name}.k{args.k}.b{args.budget}.jsonl"
    config = explorer.explorer_config
    if args.overwrite and out.exists():
        out.unlink()
    done: set[str] = set()
    if out.exists():
        rows = read_rows(out)
        other = [r["instance_id"] for r in rows if r.get("explorer_config") != config]
        if other:
            parser.error(f"{out} holds rows of another explorer config (e.g. {other[0]}); "
                         "use another --out or --overwrite")
        done = {r["instance_id"] for r in rows}
    failures = missing = 0
    t_start = time.perf_counter()
    with ResultsWriter(out) as writer:
        for record in tqdm(records, desc=explorer.name, unit="instance", disable=args.quiet):
            if record.instance_id in done:
                continue
            snapshot = find_snapshot(record, args.repos)
            if snapshot is None:
                missing += 1
                logging.warning("%s: no snapshot under %s; skipped", record.instance_id, args.repos)
                continue
            t0 = time.perf_counter()
            try:
                regions = explorer.explore(snapshot, record.query, snapshot.name)
                outcome, error = OUTCOME_SUCCESS, None
            except Exception as exc:  # one instance's failure is recorded, the batch goes on
                regions, outcome, error = [], OUTCOME_ERROR, exc
                failures += 1
                logging.error("%s: %s: %s", record.instance_id, type(exc).__name__, exc)
            seconds = time.perf_counter() - t0
            counts = file_line_counts(record.ground_truth, snapshot)
            metrics = evaluate_instance(regions, record.ground_truth, counts) if outcome == OUTCOME_SUCCESS else None
            row = make_row(record.instance_id, explorer.name, regions, metrics, outcome=outcome, error=error,
                           explorer_config=config)
            row["seconds"] = round(seconds, 4)
            writer.write(row)
    scored = evaluate_rows(read_rows(out), records, args.repos, missing_rows="skip")
    summary = summarize(scored, records)
    print(f"\n{explorer.name}: {summary['cases']} instances scored, {failures} failed, {missing} without snapshot, "
          f"{time.perf_counter() - t_start:.1f} s; rows in {out}")
    print(format_table({explorer.name: summary["metrics"]}, metrics=MAIN_METRICS))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
