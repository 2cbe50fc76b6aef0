"""Symbol graph build time against today's index build (walk + chunk + BM25), on real snapshots.

Usage::

    python scripts/bench_graph.py [--repos DIR] [--snapshot NAME ...] [--repeats 3] [--cpu 0]
                                  [--compare-treesitter]

For every snapshot (default: ``psf__requests-1142``, ``pylint-dev__pylint-7080`` and ``pydata__xarray-7393``
under ``--repos``, default ``repos/dev``), in one process: one warm-up round (grammars loaded, caches filled),
then ``--repeats`` rounds, each timing first the index build of today — :func:`chunking.walk.walk_snapshot`,
:func:`chunking.registry.chunk_files` with the ``function`` chunker and ``make_retriever("bm25").build(chunks)``
— and then :func:`indexes.graph_build.build_graph` on the same files and chunks, so both sides meet the same load from
other processes. Printed per snapshot (Markdown): files, lines, chunks, the median seconds of each step, the
median of the per-round ratios ``graph / (walk + chunk + BM25)`` (the budget is 0.30), the node and edge counts
(:meth:`indexes.graph.SymbolGraph.counts`), the time of one :func:`indexes.graph_expand.expand` from the first 10 chunks
that define a symbol (``hops=2, max_nodes=200``) and of :meth:`~indexes.graph.SymbolGraph.save` /
:meth:`~indexes.graph.SymbolGraph.load` into a temporary directory, with the saved size.

``--compare-treesitter`` also measures how far the regex identifiers of :func:`indexes.graph_build.build_graph`
(comments and strings blanked by :func:`indexes.graph_build.code_text`, no second parse) are from the parse tree: the
graph is built again from chunk texts whose comment and string nodes (tree-sitter node types containing
``comment`` or ``string``) are blanked, and the reference edges of the two graphs are compared, with the time
the parse and masking took. This is a measurement, not part of the graph.

Timings are wall-clock (``time.perf_counter``); pin the process with ``--cpu N`` for figures comparable across
runs. The exit status is 2 on bad arguments, else 0.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from swe_explore.commands._errors import interrupt_quietly, run_main

with interrupt_quietly():  # Ctrl-C while the modules import: exit 130 quietly
    from swe_explore.chunking.languages import get_parser, get_spec
    from swe_explore.chunking.registry import chunk_files, make_chunker
    from swe_explore.chunking.types import Chunk, SourceFile
    from swe_explore.chunking.walk import walk_snapshot
    from swe_explore.indexes.graph import SymbolGraph
    from swe_explore.indexes.graph_build import build_graph
    from swe_explore.indexes.graph_expand import expand
    from swe_explore.retrievers.registry import make_retriever

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_REPOS = ROOT / "repos" / "dev"
DEFAULT_SNAPSHOTS = ("psf__requests-1142", "pylint-dev__pylint-7080", "pydata__xarray-7393")
BUDGET = 0.30
"""Largest allowed ratio of graph build time to walk + chunk + BM25 build time."""


def index_build(snapshot: Path) -> tuple[list[SourceFile], list[Chunk], dict[str, float]]:
    """Today's index build of one snapshot: walk, ``function`` chunks, BM25.

    :param snapshot: the snapshot directory.
    :return: ``(files, chunks, seconds)`` with seconds per step ``walk``, ``chunk``, ``bm25``.
    """
    t0 = time.perf_counter()
    files, _ = walk_snapshot(snapshot)
    t1 = time.perf_counter()
    chunks, _ = chunk_files(files, make_chunker("function"))
    t2 = time.perf_counter()
    make_retriever("bm25").build(chunks)
    t3 = time.perf_counter()
    return files, chunks, {"walk": t1 - t0, "chunk": t2 - t1, "bm25": t3 - t2}


def masked_chunks(files: Sequence[SourceFile], chunks: Sequence[Chunk]) -> tuple[list[Chunk], float]:
    """The chunks with the text of every comment and string node of their file's parse tree blanked.

    :param files: the walked files.
    :param chunks: their chunks.
    :return: ``(chunks, seconds spent parsing and masking)``.
    """
    t0 = time.perf_counter()
    lines: dict[str, list[str]] = {}
    for f in files:
        spec = get_spec(f.language)
        grammar = spec.grammar_for(f.text)
        if grammar is None:
            lines[f.path] = f.lines
            continue
        data = bytearray(f.text.encode("utf-8", "surrogatepass"))
        stack = [get_parser(grammar).parse(bytes(data) + b"\n").root_node]
        while stack:
            node = stack.pop()
            if "comment" in node.type or "string" in node.type:
                end = min(node.end_byte, len(data))
                segment = data[node.start_byte : end]
                data[node.start_byte : end] = bytes(10 if b == 10 else 32 for b in segment)
                continue
            stack.extend(node.children)
        lines[f.path] = bytes(data).decode("utf-8", "surrogatepass").split("\n")
    out = [replace(c, text="\n".join(lines[c.path][c.start - 1 : c.end])) for c in chunks]
    return out, time.perf_counter() - t0


def reference_pairs(graph: SymbolGraph) -> set[tuple[int, int]]:
    """All ``(chunk, referenced chunk)`` pairs of a graph."""
    refs = graph.edges["references"]
    return {(i, int(j)) for i in range(graph.n_chunks) for j in refs.row(i)}


def bench_snapshot(snapshot: Path, repeats: int, compare_treesitter: bool) -> list[str]:
    """Measure one snapshot (see the module docstring).

    :param snapshot: the snapshot directory.
    :param repeats: timed rounds.
    :param compare_treesitter: also compare with parse-tree identifiers.
    :return: Markdown lines.
    """
    index_build(snapshot)  # warm-up
    rounds: list[dict[str, float]] = []
    graph: SymbolGraph | None = None
    files: list[SourceFile] = []
    chunks: list[Chunk] = []
    for _ in range(repeats):
        files, chunks, seconds = index_build(snapshot)
        t0 = time.perf_counter()
        graph = build_graph(files, chunks)
        seconds["graph"] = time.perf_counter() - t0
        seconds["index"] = seconds["walk"] + seconds["chunk"] + seconds["bm25"]
        seconds["ratio"] = seconds["graph"] / seconds["index"]
        rounds.append(seconds)
    assert graph is not None
    med = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
    seeds = [i for i in range(graph.n_chunks) if graph.defines.row(i).size][:10]
    t0 = time.perf_counter()
    reached = expand(graph, seeds, hops=2, max_nodes=200)
    expand_seconds = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        written = graph.save(Path(tmp) / "graph")
        save_seconds = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in written)
        t0 = time.perf_counter()
        SymbolGraph.load(Path(tmp) / "graph")
        load_seconds = time.perf_counter() - t0
    n_lines = sum(len(f.lines) for f in files)
    verdict = "within" if med["ratio"] <= BUDGET else "OVER"
    out = [
        f"## {snapshot.name}",
        "",
        f"{len(files):,} files, {n_lines:,} lines, {len(chunks):,} chunks; median of {repeats} rounds.",
        "",
        "| walk s | chunk s | BM25 s | walk+chunk+BM25 s | graph s | graph / index (median of rounds) |",
        "|---|---|---|---|---|---|",
        (
            f"| {med['walk']:.3f} | {med['chunk']:.3f} | {med['bm25']:.3f} | {med['index']:.3f} | {med['graph']:.3f} "
            f"| {med['ratio']:.3f} ({verdict} the {BUDGET:.2f} budget) |"
        ),
        "",
        "rounds (graph / index): " + ", ".join(f"{r['graph']:.3f} / {r['index']:.3f}" for r in rounds),
        "",
        "counts: " + ", ".join(f"{k} {v:,}" for k, v in graph.counts().items()),
        "",
        (
            f"expand(10 seeds, hops=2, max_nodes=200): {len(reached)} chunks in {expand_seconds * 1000:.1f} ms; "
            f"save {save_seconds * 1000:.1f} ms, load {load_seconds * 1000:.1f} ms, {size / 1e6:.2f} MB on disk"
        ),
    ]
    if compare_treesitter:
        masked, mask_seconds = masked_chunks(files, chunks)
        regex_pairs, tree_pairs = reference_pairs(graph), reference_pairs(build_graph(files, masked))
        only_regex, only_tree = len(regex_pairs - tree_pairs), len(tree_pairs - regex_pairs)
        out += [
            "",
            (
                f"tree-sitter comparison: regex graph {len(regex_pairs):,} reference edges, parse-tree graph "
                f"{len(tree_pairs):,}; in the regex graph only {only_regex:,} "
                f"({only_regex / max(len(regex_pairs), 1):.1%}), in the parse-tree graph only {only_tree:,}; "
                f"parsing and masking took {mask_seconds:.2f} s ({mask_seconds / med['graph']:.1f}x the graph build)"
            ),
        ]
    return out + [""]


def main(argv: list[str] | None = None) -> int:
    """Run the command line.

    :param argv: arguments (default ``sys.argv[1:]``).
    :return: exit status (0, or 2 on bad arguments).
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=Path, default=DEFAULT_REPOS, help="directory of snapshots (%(default)s)")
    parser.add_argument(
        "--snapshot", action="append", default=None, help="snapshot name under --repos (repeatable; default three)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed rounds per snapshot (default 3)")
    parser.add_argument("--cpu", type=int, default=None, help="pin the process to this CPU (Linux)")
    parser.add_argument("--compare-treesitter", action="store_true", help="compare with parse-tree identifiers")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be >= 1, got {args.repeats}")
    if args.cpu is not None:
        if not hasattr(os, "sched_setaffinity"):
            parser.error("--cpu needs os.sched_setaffinity (Linux)")
        try:
            os.sched_setaffinity(0, {args.cpu})
        except OSError as exc:
            parser.error(f"--cpu {args.cpu}: {exc}")
    snapshots = [args.repos / name for name in (args.snapshot or DEFAULT_SNAPSHOTS)]
    missing = [str(s) for s in snapshots if not s.is_dir()]
    if missing:
        parser.error(f"snapshot directory not found: {', '.join(missing)}")
    print("# symbol graph build time vs walk + chunk (function) + BM25 build\n")
    for snapshot in snapshots:
        print("\n".join(bench_snapshot(snapshot, args.repeats, args.compare_treesitter)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
