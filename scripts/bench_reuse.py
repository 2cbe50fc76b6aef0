"""Indexing time with content-addressed reuse against ``--no-reuse``, on sets of snapshots that share files.

Usage::

    python scripts/bench_reuse.py --set NAME=DIR[:GLOB[:N]] [--set ...] [--rounds 3] [--model PATH]
        [--retriever bm25 --retriever tfidf --retriever potion] [--json FILE] [--no-history]

    # six astropy and six sphinx snapshots of the held-out set, and the 23 dev snapshots:
    python scripts/bench_reuse.py --model ../shared/models/potion-base-8M \\
        --set 'astropy6=repos/heldout:astropy__astropy-*:6' --set 'sphinx6=repos/heldout:sphinx-doc__sphinx-*:6' \\
        --set dev=repos/dev

A set is the first ``N`` snapshot directories (by name) of ``DIR`` matching ``GLOB`` (default: all). In every
round, every set is indexed twice by ``scripts/index_repos.py --jobs 1``, each time into a new empty store: once
with reuse (the default: the cache starts empty, so only what the set's snapshots share is reused) and once
with ``--no-reuse``; the order alternates between rounds, and the builds run one after the other, so both
modes meet the same load from other processes. Each build is its own process (no warm model, word or parser
cache carried from one build to the next).

Printed per set (Markdown): snapshots and lines, the median over rounds of the indexing wall time (the run
report's ``wall_seconds``: all snapshots, from the first task to the last) with reuse and without, their ratio,
the same for the process wall time (interpreter start, imports and model load included) and for the summed CPU
seconds of the builds, and the cache hit rates of the reuse builds per kind (entries found / looked up: files for
``chunks``, chunks for ``term_counts`` and ``vectors``; the first snapshot of a set finds nothing). ``--json``
also writes every measurement.
The exit status is 2 on bad arguments, 1 if a build failed, else 0.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from swe_explore.commands._errors import run_main

ROOT = Path(__file__).resolve().parents[1]
INDEX_SCRIPT = ROOT / "scripts" / "index_repos.py"


def parse_set(text: str) -> tuple[str, list[Path]]:
    """``NAME=DIR[:GLOB[:N]]`` -> ``(name, snapshot directories)``.

    :param text: the option value.
    :return: the set's name and its snapshot directories, sorted by name.
    :raises ValueError: if the value is malformed, the directory missing or no snapshot matches.
    """
    name, sep, rest = text.partition("=")
    if not sep or not name:
        raise ValueError(f"--set {text!r}: expected NAME=DIR[:GLOB[:N]]")
    parts = rest.split(":")
    directory = Path(parts[0])
    pattern = parts[1] if len(parts) > 1 and parts[1] else "*"
    count = int(parts[2]) if len(parts) > 2 else None
    if not directory.is_dir():
        raise ValueError(f"--set {text!r}: {directory} is not a directory")
    snapshots = sorted(p for p in directory.glob(pattern) if p.is_dir() and not p.name.startswith("."))
    snapshots = snapshots[:count] if count is not None else snapshots
    if not snapshots:
        raise ValueError(f"--set {text!r}: no snapshot directory matches {pattern!r} in {directory}")
    return name, snapshots


def run_build(snapshots: list[Path], reuse: bool, args: argparse.Namespace) -> dict[str, Any]:
    """Index the snapshots into a new empty store with ``scripts/index_repos.py --jobs 1``.

    :param snapshots: the set's snapshot directories.
    :param reuse: with reuse (else ``--no-reuse``).
    :param args: the parsed options (retrievers, model, ``no_history``).
    :return: ``{"process_wall", "index_wall", "cpu", "lines", "cache"}`` (seconds; the run report's cache totals).
    :raises RuntimeError: if the build fails, with its output.
    """
    with tempfile.TemporaryDirectory(prefix="bench-reuse-") as tmp:
        repos = Path(tmp) / "repos"
        repos.mkdir()
        for snapshot in snapshots:  # index_repos.py indexes every snapshot directory under --repos
            (repos / snapshot.name).symlink_to(snapshot.resolve(), target_is_directory=True)
        store = Path(tmp) / "store"
        cmd = [sys.executable, str(INDEX_SCRIPT), "--repos", str(repos), "--out", str(store), "--jobs", "1", "--quiet"]
        for name in args.retriever:
            cmd += ["--retriever", name]
        if args.model:
            cmd += ["--model", str(args.model)]
        if not reuse:
            cmd.append("--no-reuse")
        if args.no_history:
            cmd.append("--no-history")
        t0 = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        process_wall = time.perf_counter() - t0
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        report = json.loads(next((store / "_reports").glob("index-*.json")).read_text())
    return {
        "process_wall": process_wall,
        "index_wall": report["wall_seconds"],
        "cpu": sum(s["seconds"].get("cpu", 0.0) for s in report["snapshots"]),
        "lines": report["lines"],
        "cache": report.get("cache", {}),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        required=True,
        metavar="NAME=DIR[:GLOB[:N]]",
        help="a set of snapshots (repeatable)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds of (reuse, --no-reuse) per set (default 3)")
    parser.add_argument(
        "--retriever", action="append", default=None, help="retrievers to build (default: bm25, tfidf, potion)"
    )
    parser.add_argument("--model", type=Path, default=None, help="Potion model directory")
    parser.add_argument("--json", type=Path, default=None, help="write every measurement to this file")
    parser.add_argument(
        "--no-history", action="store_true", help="pass --no-history to index_repos.py (no history indexes)"
    )
    args = parser.parse_args(argv)
    args.retriever = args.retriever or ["bm25", "tfidf", "potion"]
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    try:
        sets = [parse_set(text) for text in args.sets]
    except ValueError as exc:
        parser.error(str(exc))
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {name: {"reuse": [], "no-reuse": []} for name, _ in sets}
    try:
        for r in range(args.rounds):
            for name, snapshots in sets:
                order = (True, False) if r % 2 == 0 else (False, True)
                for reuse in order:
                    result = run_build(snapshots, reuse, args)
                    runs[name]["reuse" if reuse else "no-reuse"].append(result)
                    mode = "reuse" if reuse else "no-reuse"
                    print(
                        f"round {r + 1} {name} {mode}: index {result['index_wall']:.1f} s, process "
                        f"{result['process_wall']:.1f} s, cpu {result['cpu']:.1f} s",
                        file=sys.stderr,
                    )
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1

    print(f"{args.rounds} rounds; retrievers {', '.join(args.retriever)}; medians in seconds\n")
    print(
        "| set | snapshots | lines | index wall reuse / no-reuse | ratio | process wall reuse / no-reuse | ratio "
        "| CPU reuse / no-reuse | ratio | hit rate: chunks (files) / term counts, vectors (chunks) |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|---|")
    summary = {}
    for name, snapshots in sets:
        row: dict[str, Any] = {"snapshots": [s.name for s in snapshots], "lines": runs[name]["reuse"][0]["lines"]}
        cells = []
        for key in ("index_wall", "process_wall", "cpu"):
            with_reuse = statistics.median(x[key] for x in runs[name]["reuse"])
            without = statistics.median(x[key] for x in runs[name]["no-reuse"])
            row[key] = {"reuse": with_reuse, "no-reuse": without, "ratio": with_reuse / without}
            cells.append(f"{with_reuse:.1f} / {without:.1f} | {with_reuse / without:.2f}")
        cache = runs[name]["reuse"][0]["cache"]
        row["cache"] = cache
        rates = " / ".join(
            f"{100 * cache[k]['hit_rate']:.1f}% ({cache[k]['hits']:,}/"
            f"{cache[k]['hits'] + cache[k]['misses'] + cache[k]['corrupt']:,})"
            for k in ("chunks", "term_counts", "vectors")
            if k in cache
        )
        print(f"| {name} | {len(snapshots)} | {row['lines']:,} | {' | '.join(cells)} | {rates} |")
        summary[name] = row
    if args.json:
        args.json.write_text(
            json.dumps({"rounds": args.rounds, "retrievers": args.retriever, "sets": summary, "runs": runs}, indent=1)
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
