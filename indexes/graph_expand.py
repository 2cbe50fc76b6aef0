"""Expanding seed chunks through the symbol graph (:func:`expand`).

Breadth-first search from seed chunks along four *directions* (:data:`DIRECTIONS`), each on its own (a path never
mixes directions): ``callee`` (reference edges forward: what the seed uses), ``caller`` (reference edges
backward: what uses the seed), ``contain`` (``contains`` edges between chunks, both ways: class <-> members, so
siblings are two hops apart) and ``import`` (from a chunk of file F to the chunks of the files F imports that some
chunk of F references). Every reached chunk gets its hop distance per direction and the smallest
(:class:`ExpansionInfo`); :func:`swe_explore.explore.graph_features.graph_features` turns them into ranking
features.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from swe_explore.indexes.graph import SymbolGraph

__all__ = ["DIRECTIONS", "ExpansionInfo", "check_chunk_id", "expand"]

#: Expansion directions of :func:`expand`, in the order they are tried within one hop.
DIRECTIONS: tuple[str, ...] = ("callee", "caller", "contain", "import")


@dataclass(frozen=True, slots=True)
class ExpansionInfo:
    """How :func:`expand` reached one chunk.

    :param dist: fewest hops from a seed over all directions (0 for a seed).
    :param dist_callee: fewest hops along ``references`` edges (what the seeds use), ``None`` if not reached so.
    :param dist_caller: fewest hops along reversed ``references`` edges (what uses the seeds), or ``None``.
    :param dist_contain: fewest hops along ``contains`` edges between chunks, either way, or ``None``.
    :param dist_import: fewest hops along import steps (see :func:`expand`), or ``None``.
    :param origin: the seed it was first reached from (the best-ranked one among those at distance ``dist``).
    :param origin_score: that seed's score.
    """

    dist: int
    dist_callee: int | None
    dist_caller: int | None
    dist_contain: int | None
    dist_import: int | None
    origin: int
    origin_score: float

    def direction_dist(self, direction: str) -> int | None:
        """The distance along one of :data:`DIRECTIONS` (``dist_<direction>``)."""
        value: int | None = getattr(self, f"dist_{direction}")
        return value


def _neighbours(graph: SymbolGraph, direction: str, node: int) -> list[int]:
    """Chunk neighbours of a chunk along one direction, sorted ascending."""
    if direction == "callee":
        return list(graph.edges["references"].row(node).tolist())
    if direction == "caller":
        return list(graph.reverse("references").row(node).tolist())
    if direction == "contain":
        both = set(graph.edges["contains"].row(node).tolist()) | set(graph.reverse("contains").row(node).tolist())
        return sorted(v for v in both if v < graph.n_chunks)
    return graph.import_reach(int(graph.chunk_file[node]))


def _ranked_seeds(graph: SymbolGraph, seeds: Mapping[int, float] | Sequence[int]) -> list[tuple[int, float]]:
    """Seeds as ``(chunk, score)`` best first: by score descending then chunk id (mapping), or in the given
    order with score 1.0 (sequence; repeats dropped)."""
    if isinstance(seeds, Mapping):
        items = []
        for node, score in seeds.items():
            value = float(score)
            if math.isnan(value):
                raise ValueError(f"seed {node} has a NaN score")
            items.append((check_chunk_id(graph, node), value))
        items.sort(key=lambda item: (-item[1], item[0]))
        return items
    out: dict[int, float] = {}
    for node in seeds:
        out.setdefault(check_chunk_id(graph, node), 1.0)
    return list(out.items())


def check_chunk_id(graph: SymbolGraph, node: Any) -> int:
    """``node`` as an ``int`` when it is a chunk id of ``graph``.

    :param graph: the graph whose chunk ids ``node`` must be one of.
    :param node: a seed, as the caller gave it.
    :return: ``node`` as a plain ``int``.
    :raises ValueError: naming ``node`` (as a seed) when it is not an integer in ``0..n_chunks - 1``.
    """
    if isinstance(node, bool) or not isinstance(node, (int, np.integer)) or not 0 <= node < graph.n_chunks:
        raise ValueError(f"seed {node!r} is not a chunk id in 0..{graph.n_chunks - 1}")
    return int(node)


def expand(
    graph: SymbolGraph,
    seeds: Mapping[int, float] | Sequence[int],
    hops: int = 2,
    max_nodes: int = 200,
    edge_types: Sequence[str] = DIRECTIONS,
) -> dict[int, ExpansionInfo]:
    """Chunks near the seeds in the graph: breadth-first search up to ``hops`` along each direction on its own.

    Directions (:data:`DIRECTIONS`): ``callee`` (reference edges forward), ``caller`` (backward), ``contain``
    (chunk-to-chunk ``contains`` edges either way: class <-> member) and ``import`` (from a chunk of file F to
    every chunk of a file F imports that some chunk of F references). A path never mixes directions, so
    ``dist_callee == 2`` means "used by something the seed uses".

    Order and bounds: seeds are ranked (mapping: by score descending, then chunk id; sequence: as given, score
    1.0); at most ``max_nodes`` chunks are returned, seeds first (lower-ranked seeds beyond ``max_nodes`` are
    dropped). Hop ``h`` of every direction is done before hop ``h + 1`` of any; within a hop the frontier
    chunks are taken by the rank of the seed they come from, then direction, then the order they were reached,
    and each chunk's neighbours in ascending id, so the closest chunks of the best seeds win when the budget
    runs out. A chunk is expanded at most once per direction, so at most ``4 * max_nodes`` neighbour lists are
    read. When the budget cut a path, distances are those of the paths through the returned chunks.

    :param graph: the snapshot's graph.
    :param seeds: chunk id -> score, or chunk ids best first.
    :param hops: largest distance (``0``: the seeds only).
    :param max_nodes: most chunks returned (``>= 1``).
    :param edge_types: the directions to follow, a subset of :data:`DIRECTIONS`.
    :return: chunk id -> :class:`ExpansionInfo`, in the order reached (seeds first, by rank).
    :raises ValueError: for a seed that is not a chunk id, a NaN score, ``hops < 0``, ``max_nodes < 1`` or an
        unknown direction.
    """
    if hops < 0:
        raise ValueError(f"hops must be >= 0, got {hops}")
    if max_nodes < 1:
        raise ValueError(f"max_nodes must be >= 1, got {max_nodes}")
    unknown = [d for d in edge_types if d not in DIRECTIONS]
    if unknown or isinstance(edge_types, str):
        raise ValueError(f"unknown expansion direction(s) {unknown or [edge_types]}; valid: {', '.join(DIRECTIONS)}")
    directions = [d for d in DIRECTIONS if d in edge_types]
    ranked = _ranked_seeds(graph, seeds)[:max_nodes]

    dist: dict[int, int] = {}
    origin: dict[int, int] = {}  # chunk -> rank of its origin seed
    per_dir: dict[str, dict[int, int]] = {d: {} for d in DIRECTIONS}
    frontier: dict[str, list[tuple[int, int]]] = {}  # direction -> [(origin rank, chunk)]
    for rank, (node, _) in enumerate(ranked):
        dist[node] = 0
        origin[node] = rank
        for d in DIRECTIONS:
            per_dir[d][node] = 0
    for d in directions:
        frontier[d] = [(rank, node) for rank, (node, _) in enumerate(ranked)]

    for hop in range(1, hops + 1):
        work = sorted(
            (rank, di, pos, node) for di, d in enumerate(directions) for pos, (rank, node) in enumerate(frontier[d])
        )
        nxt: dict[str, list[tuple[int, int]]] = {d: [] for d in directions}
        for rank, di, _, node in work:
            d = directions[di]
            reached = per_dir[d]
            for v in _neighbours(graph, d, node):
                if v in reached:
                    continue
                if v not in dist:
                    if len(dist) >= max_nodes:
                        continue
                    dist[v] = hop
                    origin[v] = rank
                reached[v] = hop
                nxt[d].append((rank, v))
        frontier = nxt
        if not any(frontier.values()):
            break

    out: dict[int, ExpansionInfo] = {}
    for node, d0 in dist.items():
        rank = origin[node]
        out[node] = ExpansionInfo(
            dist=d0,
            dist_callee=per_dir["callee"].get(node),
            dist_caller=per_dir["caller"].get(node),
            dist_contain=per_dir["contain"].get(node),
            dist_import=per_dir["import"].get(node),
            origin=ranked[rank][0],
            origin_score=ranked[rank][1],
        )
    return out
