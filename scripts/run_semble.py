"""Run semble (MinishLab/semble) over a bench file: one reference-compatible JSONL result row per instance.

An optional side-by-side baseline, never a dependency of the project. semble lives in its own environment;
this script runs under that environment's Python and imports our ``evaluation`` package from the project::

    PYTHONPATH=/path/to/project /path/to/semble-venv/bin/python scripts/run_semble.py \\
        --bench FILE --repos DIR [--out FILE] [--k 5] [--mode hybrid|bm25|semantic] \\
        [--content code [docs config] | all] [--model PATH_OR_ID]

For each instance semble indexes the snapshot (``SembleIndex.from_path``), searches the issue text with
``top_k=K``, and its K results become the row's regions ``{path, start, end}``, in semble's order. semble's
chunk paths are relative to the snapshot and its ``start_line``/``end_line`` are 1-based and inclusive, as ours
are; the only difference is semble's line definition (Python universal newlines), which also breaks lines at a
lone ``"\\r"``; for a file that mixes ``"\\n"`` with lone ``"\\r"`` the lines are mapped to ours
(``chunking/lines.py``). Modes: ``hybrid`` is semble's default (its alpha auto-detected from the query),
``semantic`` is alpha 1 and ``bm25`` alpha 0. Every row also records ``seconds`` (index + query),
``index_seconds``, ``query_seconds``, the indexed ``files``/``lines``/``chunks`` and the process's peak RSS so
far (``max_rss_mib``). The model is loaded once, before the first instance, and not counted in
``index_seconds``. semble's index cache and search statistics go to a temporary directory deleted at the end,
so every index is built from scratch (semble-grammars still extracts its bundled grammars once into
``$XDG_CACHE_HOME/semble/grammars``). Rows already in ``--out`` for the same configuration are kept, so a killed
run resumes where it stopped.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from swe_explore.commands._errors import run_main

try:
    from swe_explore.chunking.lines import count_lines
    from swe_explore.evaluation.bench import find_snapshot, load_bench
    from swe_explore.evaluation.line_counts import file_line_counts
    from swe_explore.evaluation.metrics import MAIN_METRICS, evaluate_instance
    from swe_explore.evaluation.results import (
        OUTCOME_ERROR,
        OUTCOME_SUCCESS,
        ResultsWriter,
        evaluate_rows,
        format_table,
        make_row,
        read_rows,
        summarize,
    )
except ImportError as _exc:  # run with the semble venv's python but without the project on the path
    sys.exit(
        f"run_semble.py: cannot import the project's evaluation package ({_exc}); run with PYTHONPATH=<project root>"
    )

EXPLORER = "semble"
MODES: dict[str, float | None] = {"hybrid": None, "semantic": 1.0, "bm25": 0.0}
"""``--mode`` -> semble's ``alpha`` (weight of the semantic ranks; ``None`` = semble's auto-detection)."""
CONTENT_TYPES = ("code", "docs", "config")
DEFAULT_MODEL = "minishlab/potion-base-8M"
NO_SEMBLE = (
    "semble is not importable in this Python ({exc}). pip install semble in a separate environment "
    "(never in the project's), then run this script with that environment's python and "
    "PYTHONPATH=<project root>."
)
_UNIVERSAL_BREAK = re.compile(r"\r\n|\r|\n")


def semble_line_map(data: bytes) -> Callable[[int], int] | None:
    """Map semble's line numbers of a file to ours, or ``None`` when the two line definitions agree.

    semble reads files with universal newlines (``"\\r\\n"``, ``"\\r"`` and ``"\\n"`` all end a line); ours
    (``chunking/lines.py``) splits on ``"\\n"`` only when the file has one. They differ only for a file holding
    both ``"\\n"`` and a lone ``"\\r"``; then each semble line lies inside exactly one of our lines.

    :param data: the file's raw bytes.
    :return: a function from a 1-based semble line to the 1-based line of ours that contains it, or ``None``.
    """
    if b"\n" not in data or b"\r" not in data.replace(b"\r\n", b""):
        return None
    text = data.decode("utf-8", errors="replace")
    starts = [1]  # starts[i] = our line number at the start of semble line i + 1
    for match in _UNIVERSAL_BREAK.finditer(text):
        starts.append(starts[-1] + match.group().endswith("\n"))
    n_lines = count_lines(data)

    def to_ours(line: int) -> int:
        return min(starts[min(max(line, 1), len(starts)) - 1], n_lines)

    return to_ours


def to_regions(results: Sequence[Any], snapshot: Path) -> list[dict[str, Any]]:
    """semble search results -> our regions: repo-relative POSIX path, 1-based inclusive lines, in rank order.

    :param results: semble ``SearchResult`` objects (``.chunk.file_path``, ``.start_line``, ``.end_line``).
    :param snapshot: the snapshot the index was built from (to read files whose line ends need mapping).
    :return: ``[{"path", "start", "end"}, ...]``, one per result.
    """
    maps: dict[str, Callable[[int], int] | None] = {}
    regions = []
    for result in results:
        chunk = result.chunk
        path = chunk.file_path.replace(os.sep, "/")
        if path not in maps:
            try:
                maps[path] = semble_line_map((snapshot / path).read_bytes())
            except OSError:
                maps[path] = None
        to_ours = maps[path]
        start, end = chunk.start_line, chunk.end_line
        if to_ours is not None:
            start, end = to_ours(start), to_ours(end)
        regions.append({"path": path, "start": start, "end": max(start, end)})
    return regions


def _indexed_lines(snapshot: Path, paths: set[str]) -> int:
    """Total lines (our definition) of the files semble indexed; unreadable files count 0."""
    total = 0
    for path in paths:
        with contextlib.suppress(OSError):
            total += count_lines((snapshot / path).read_bytes())
    return total


def _max_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB (Linux ``ru_maxrss`` is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 some instance failed, 2 bad input)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", type=Path, required=True, help="bench JSONL")
    parser.add_argument("--repos", type=Path, required=True, help="snapshots, one per instance_id")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="result JSONL (default: outputs/results/<bench>/semble[.<mode>].k<K>.jsonl)",
    )
    parser.add_argument("--k", type=int, default=5, help="semble's top_k = regions per instance (default 5)")
    parser.add_argument("--mode", choices=sorted(MODES), default="hybrid", help="semble ranking (default hybrid)")
    parser.add_argument(
        "--content",
        nargs="+",
        default=["code"],
        choices=[*CONTENT_TYPES, "all"],
        help="semble content types to index (default: code, semble's default)",
    )
    parser.add_argument(
        "--model",
        default=None,
        help=f"model2vec model path or hub id (default: $SEMBLE_MODEL_NAME, else {DEFAULT_MODEL})",
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N instances")
    parser.add_argument("--overwrite", action="store_true", help="start --out afresh instead of resuming")
    parser.add_argument("--quiet", action="store_true", help="no per-instance lines")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    if args.k < 1:
        parser.error(f"--k must be >= 1, got {args.k}")
    content = list(CONTENT_TYPES) if "all" in args.content else [c for c in CONTENT_TYPES if c in args.content]
    model = args.model or os.environ.get("SEMBLE_MODEL_NAME") or DEFAULT_MODEL
    try:
        records = load_bench(args.bench, limit=args.limit)
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))

    try:
        import semble
        from semble import ContentType, SembleIndex
        from semble.index.dense import load_model
    except ImportError as exc:
        print(NO_SEMBLE.format(exc=exc), file=sys.stderr)
        return 2

    config = {
        "semble_version": semble.__version__,
        "mode": args.mode,
        "alpha": MODES[args.mode],
        "top_k": args.k,
        "content": content,
        "model": model,
    }
    suffix = "" if args.mode == "hybrid" else f".{args.mode}"
    out = args.out or Path("outputs/results") / args.bench.stem / f"{EXPLORER}{suffix}.k{args.k}.jsonl"
    if args.overwrite and out.exists():
        out.unlink()
    done: set[str] = set()
    if out.exists():
        rows = read_rows(out)
        other = [r["instance_id"] for r in rows if r.get("explorer_config") != config]
        if other:
            parser.error(
                f"{out} holds rows of another semble config (e.g. {other[0]}); use another --out or --overwrite"
            )
        done = {r["instance_id"] for r in rows}

    t0 = time.perf_counter()
    try:
        load_model(model)  # semble caches the loaded model; loading it is not part of any index time
    except Exception as exc:
        print(f"semble could not load the model {model!r}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    if not args.quiet:
        print(f"model {model} loaded in {time.perf_counter() - t0:.2f} s", file=sys.stderr)

    failures = missing = 0
    t_start = time.perf_counter()
    previous_cache = os.environ.get("SEMBLE_CACHE_LOCATION")
    with tempfile.TemporaryDirectory(prefix="semble-cache-") as cache_dir, ResultsWriter(out) as writer:
        os.environ["SEMBLE_CACHE_LOCATION"] = cache_dir  # no index cache hits, no savings stats kept
        for record in records:
            if record.instance_id in done:
                continue
            snapshot = find_snapshot(record, args.repos)
            if snapshot is None:
                missing += 1
                logging.warning("%s: no snapshot under %s; skipped", record.instance_id, args.repos)
                continue
            timing: dict[str, Any] = {}
            t0 = time.perf_counter()
            try:
                index = SembleIndex.from_path(snapshot, content=[ContentType(c) for c in content], model_path=model)
                t1 = time.perf_counter()
                results = index.search(record.query, top_k=args.k, alpha=MODES[args.mode])
                t2 = time.perf_counter()
                regions = to_regions(results[: args.k], snapshot)
                files = {c.file_path for c in index.chunks}
                timing = {
                    "index_seconds": round(t1 - t0, 4),
                    "query_seconds": round(t2 - t1, 5),
                    "files": len(files),
                    "lines": _indexed_lines(snapshot, files),
                    "chunks": len(index.chunks),
                }
                outcome, error = OUTCOME_SUCCESS, None
                del index
            except Exception as exc:  # one instance's failure is recorded, the batch goes on
                regions, outcome, error = [], OUTCOME_ERROR, exc
                failures += 1
                logging.error("%s: %s: %s", record.instance_id, type(exc).__name__, exc)
            seconds = time.perf_counter() - t0
            counts = file_line_counts(record.ground_truth, snapshot)
            metrics = evaluate_instance(regions, record.ground_truth, counts) if outcome == OUTCOME_SUCCESS else None
            row = make_row(
                record.instance_id, EXPLORER, regions, metrics, outcome=outcome, error=error, explorer_config=config
            )
            row["seconds"] = round(seconds, 4)
            row.update(timing)
            row["max_rss_mib"] = round(_max_rss_mib(), 1)
            writer.write(row)
            if not args.quiet:
                print(
                    f"{record.instance_id}: {outcome} index {timing.get('index_seconds', 0):.2f} s "
                    f"({timing.get('lines', 0)} lines) query {timing.get('query_seconds', 0) * 1000:.1f} ms",
                    file=sys.stderr,
                )
    if previous_cache is None:
        os.environ.pop("SEMBLE_CACHE_LOCATION", None)
    else:
        os.environ["SEMBLE_CACHE_LOCATION"] = previous_cache
    scored = evaluate_rows(read_rows(out), records, args.repos, missing_rows="skip")
    summary = summarize(scored, records)
    print(
        f"\n{EXPLORER} {args.mode}: {summary['cases']} instances scored, {failures} failed, {missing} without "
        f"snapshot, {time.perf_counter() - t_start:.1f} s; rows in {out}"
    )
    print(format_table({f"{EXPLORER}-{args.mode}": summary["metrics"]}, metrics=MAIN_METRICS))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(run_main(main))
