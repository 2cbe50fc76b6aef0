"""Ranking features of the chunks an expansion of the symbol graph reached (:func:`graph_features`).

The ``graph`` feature group of :mod:`swe_explore.explore.features`: hop distances per direction of
:func:`swe_explore.indexes.graph_expand.expand`, degrees in the graph's relations and how ambiguous a chunk's name
is (:data:`FEATURE_NAMES`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from swe_explore.indexes.graph import SymbolGraph, name_of
from swe_explore.indexes.graph_expand import DIRECTIONS, ExpansionInfo, check_chunk_id

__all__ = ["FEATURE_NAMES", "graph_features"]

FEATURE_NAMES: tuple[str, ...] = (
    "is_seed",
    "origin_score",
    "dist",
    "dist_callee",
    "dist_caller",
    "dist_contain",
    "dist_import",
    "n_callees",
    "n_callers",
    "n_caller_files",
    "n_children",
    "has_parent",
    "n_symbols",
    "name_sites",
    "file_imports",
    "file_imported_by",
)
"""The features :func:`graph_features` gives every reached chunk, in this order:

- ``is_seed``: 1.0 for a seed, else 0.0; ``origin_score``: the score of the seed it was reached from;
- ``dist``, ``dist_callee``, ``dist_caller``, ``dist_contain``, ``dist_import``: the hop distances of
  :class:`~swe_explore.indexes.graph_expand.ExpansionInfo`; NaN when not reached along that direction (a missing
  value for gradient-boosted trees such as LightGBM);
- ``n_callees``: out-degree in ``references`` (distinct definitions the chunk uses); ``n_callers``: in-degree
  (chunks using it); ``n_caller_files``: distinct files of those chunks (the fan-in of the chunk's symbol
  across the snapshot);
- ``n_children``: chunks it contains (members of a class); ``has_parent``: 1.0 when a chunk contains it;
- ``n_symbols``: symbols it defines (0 for gaps and windows); ``name_sites``: definition sites of its first
  symbol's name in the snapshot (how ambiguous a reference to it is; 0 without a symbol);
- ``file_imports`` / ``file_imported_by``: out- and in-degree of its file in ``imports``.
"""


def graph_features(graph: SymbolGraph, reached: Mapping[int, ExpansionInfo]) -> dict[int, dict[str, float]]:
    """Ranking features of the chunks :func:`~swe_explore.indexes.graph_expand.expand` reached, named and ordered
    as :data:`FEATURE_NAMES`.

    :param graph: the graph the chunks were reached in.
    :param reached: ``expand``'s result (or any chunk id ->
        :class:`~swe_explore.indexes.graph_expand.ExpansionInfo`).
    :return: chunk id -> feature name -> value, in the order of ``reached``.
    :raises ValueError: for a chunk id outside the graph.
    """
    n = graph.n_chunks
    refs, rev_refs = graph.edges["references"], graph.reverse("references")
    contains, rev_contains = graph.edges["contains"], graph.reverse("contains")
    imports, rev_imports = graph.edges["imports"], graph.reverse("imports")
    name_sites: dict[str, int] = {}
    out: dict[int, dict[str, float]] = {}
    for node, info in reached.items():
        check_chunk_id(graph, node)
        callers = rev_refs.row(node)
        symbol_ids = graph.defines.row(node)
        sites = 0
        if symbol_ids.size:
            name = name_of(graph.symbols[int(symbol_ids[0])])
            if name not in name_sites:
                name_sites[name] = graph.name_sites(name)
            sites = name_sites[name]
        fnode = n + int(graph.chunk_file[node])
        values = {
            "is_seed": 1.0 if info.dist == 0 else 0.0,
            "origin_score": float(info.origin_score),
            "dist": float(info.dist),
            "n_callees": float(refs.row(node).size),
            "n_callers": float(callers.size),
            "n_caller_files": float(np.unique(graph.chunk_file[callers]).size) if callers.size else 0.0,
            "n_children": float(contains.row(node).size),
            "has_parent": 1.0 if (rev_contains.row(node) < n).any() else 0.0,
            "n_symbols": float(symbol_ids.size),
            "name_sites": float(sites),
            "file_imports": float(imports.row(fnode).size),
            "file_imported_by": float(rev_imports.row(fnode).size),
        }
        for d in DIRECTIONS:
            value = info.direction_dist(d)
            values[f"dist_{d}"] = math.nan if value is None else float(value)
        out[node] = {name: values[name] for name in FEATURE_NAMES}
    return out
