"""swe-explore-baselines: CPU retrieval baselines and an indexing toolkit for SWE-Explore (arXiv 2606.07297).

The public API, in three lines (an explorer indexes a snapshot on first use and keeps the index)::

    from swe_explore import make_explorer
    explorer = make_explorer("bm25", k=5, budget=500)
    regions = explorer.explore("path/to/snapshot", "issue text")   # list[Region], best first

Packages (imported as ``swe_explore.<name>``; see ``docs/architecture.md``): ``chunking`` (snapshot -> chunks),
``retrievers`` (chunks -> rankings), ``indexes`` (persisted chunk tables and retriever indexes), ``explore``
(snapshot + issue text -> K regions under a line budget) and ``evaluation`` (bench/result IO and the 17
reference-exact metrics). Names below are imported lazily, so ``import swe_explore`` stays cheap.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the real names for type checkers; at run time they are imported on first use (__getattr__)
    from swe_explore.chunking.types import Chunk, Region, ScoredChunk, ScoredRegion
    from swe_explore.evaluation.bench import load_bench
    from swe_explore.evaluation.metrics import evaluate_instance
    from swe_explore.evaluation.runner import Explorer
    from swe_explore.explore.explorer import IndexedExplorer, ReferenceAdapter, make_explorer
    from swe_explore.explore.fusion import FusionExplorer
    from swe_explore.explore.packing import PackConfig
    from swe_explore.indexes.store import default_store

__version__ = "0.1.0"

#: The mini bench that ships with the package (hand-written instances over tiny repos in four languages).
MINI_BENCH = Path(__file__).resolve().parent / "data" / "mini" / "mini.jsonl"
#: Its snapshots, one folder per ``instance_id``.
MINI_REPOS = MINI_BENCH.parent / "repos"

_LAZY = {
    "make_explorer": "swe_explore.explore.explorer",
    "IndexedExplorer": "swe_explore.explore.explorer",
    "ReferenceAdapter": "swe_explore.explore.explorer",
    "FusionExplorer": "swe_explore.explore.fusion",
    "Explorer": "swe_explore.evaluation.runner",
    "Region": "swe_explore.chunking.types",
    "Chunk": "swe_explore.chunking.types",
    "ScoredChunk": "swe_explore.chunking.types",
    "ScoredRegion": "swe_explore.chunking.types",
    "PackConfig": "swe_explore.explore.packing",
    "load_bench": "swe_explore.evaluation.bench",
    "evaluate_instance": "swe_explore.evaluation.metrics",
    "default_store": "swe_explore.indexes.store",
}

__all__ = [
    "MINI_BENCH",
    "MINI_REPOS",
    "Chunk",
    "Explorer",
    "FusionExplorer",
    "IndexedExplorer",
    "PackConfig",
    "ReferenceAdapter",
    "Region",
    "ScoredChunk",
    "ScoredRegion",
    "__version__",
    "default_store",
    "evaluate_instance",
    "load_bench",
    "make_explorer",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562).

    :param name: attribute name.
    :return: the attribute.
    :raises AttributeError: for names this package does not export.
    """
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
