"""Exploration as a long-lived service: the tools of ``swe-explore serve`` (an MCP server), as plain functions.

:class:`ExploreService` keeps one explorer per ``(explorer, k, budget)`` and each explorer keeps the last index it
loaded, so a client that asks several questions about one folder pays for indexing and loading once. Every
method returns JSON-serialisable dicts; bad input raises :class:`ValueError` with a one-line message (the MCP
server turns it into a tool error). Nothing here imports the MCP SDK: :mod:`swe_explore.commands.serve` does.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_explore.chunking.types import ScoredRegion
from swe_explore.explore.config import LEARNED, explorer_kind
from swe_explore.explore.explorer import IndexedExplorer, make_explorer
from swe_explore.explore.filters import RegionFilter
from swe_explore.explore.fusion import FusionExplorer
from swe_explore.indexes.manage import snapshot_entries
from swe_explore.indexes.store import default_store, snapshot_key

DEFAULT_K = 5
"""Regions per query when the client gives no ``k``."""
DEFAULT_BUDGET = 500
"""Line budget per query when the client gives no ``budget``."""


def _no_files_note(folder: Path, n_files: int) -> dict[str, str]:
    """``{"note": ...}`` for a folder in which no file was indexed (as ``swe-explore explore`` notes it), else
    ``{}``."""
    if n_files:
        return {}
    return {"note": f"no source files indexed in {folder}; see docs/chunking.md for the languages indexed"}


def _folder(path: str) -> Path:
    """The folder a client names, checked: an existing directory (``~`` expanded), absolute."""
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ValueError(f"{path} is not a directory" if folder.exists() else f"{path} does not exist")
    return folder.resolve()


@dataclass
class ExploreService:
    """The server's state: the store, the explorers built so far and the folders indexed in this session.

    :param store: the index store root (default :func:`~swe_explore.indexes.store.default_store`).
    :param model: the embedding model for explorers that use one (``potion``, ``faiss``, ``hybrid``).
    """

    store: Path = field(default_factory=default_store)
    model: str | None = None
    _explorers: dict[tuple[str, int, int], IndexedExplorer | FusionExplorer] = field(default_factory=dict)
    _indexed: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    def explorer(self, name: str, k: int, budget: int) -> IndexedExplorer | FusionExplorer:
        """The explorer for these options, built once.

        :param name: ``learned`` or a retriever name (:func:`~swe_explore.explore.explorer.make_explorer`).
        :param k: regions per query.
        :param budget: line budget per query (lines).
        :return: the explorer.
        :raises ValueError: for an unknown name, a reference baseline (no scores), ``k < 1`` or ``budget < 1``.
        """
        if k < 1 or budget < 1:
            raise ValueError(f"k and budget must be >= 1, got k={k}, budget={budget}")
        if explorer_kind(name) == "reference":
            raise ValueError(f"explorer {name!r} gives no scores; use {LEARNED!r} or a retriever name")
        key = (name, k, budget)
        if key not in self._explorers:
            options: dict[str, Any] = {"k": k, "budget": budget, "store": self.store}
            if self.model is not None and name in ("potion", "faiss", "hybrid"):
                options["model"] = self.model
            explorer = make_explorer(name, **options)
            assert isinstance(explorer, (IndexedExplorer, FusionExplorer))  # not a reference baseline
            self._explorers[key] = explorer
        return self._explorers[key]

    def index_folder(self, path: str, explorer: str = LEARNED) -> dict[str, Any]:
        """Index a folder for an explorer (built if missing or stale, then loaded and kept in memory).

        :param path: the folder (a repository tree).
        :param explorer: the explorer whose indexes to build.
        :return: ``{"path", "snapshot_name", "explorer", "files", "lines", "chunks", "seconds", "store"}``, and
            ``"note"`` when no file of the folder was indexed (no source file of a language indexed).
        :raises ValueError: if the folder does not exist or the explorer is unknown.
        """
        folder = _folder(path)
        chosen = self.explorer(explorer, DEFAULT_K, DEFAULT_BUDGET)
        started = time.perf_counter()
        index = chosen.load(folder)
        entry = {
            "path": str(folder),
            "snapshot_name": snapshot_key(folder),
            "explorer": chosen.name,
            "files": len(index.file_lines),
            "lines": sum(index.file_lines.values()),
            "chunks": len(index.chunks),
            "seconds": round(time.perf_counter() - started, 3),
            "store": str(self.store),
        } | _no_files_note(folder, len(index.file_lines))
        self._indexed[(str(folder), chosen.name)] = entry
        return entry

    def explore(
        self,
        path: str,
        issue: str,
        k: int = DEFAULT_K,
        budget: int = DEFAULT_BUDGET,
        explorer: str = LEARNED,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
        languages: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """The regions an explorer returns for an issue, best first, with their scores and code.

        The filters are those of ``explore --include/--exclude/--language``
        (:class:`~swe_explore.explore.filters.RegionFilter`: git wildmatch patterns over repo-relative paths),
        applied to the ranking before packing, so K and the budget are filled with regions of matching files.

        :param path: the folder (indexed on first use).
        :param issue: the issue text.
        :param k: regions per query.
        :param budget: line budget per query (lines).
        :param explorer: ``learned`` (default) or a retriever name.
        :param include: wildmatch patterns a region's path must match one of.
        :param exclude: wildmatch patterns a region's path must match none of (exclude wins).
        :param languages: language names a region's file must be written in (``python``, ``go``, ...).
        :return: ``{"path", "explorer", "k", "budget", "lines", "regions": [{"path", "start", "end", "score",
            "code"}]}``; ``code`` is the region's lines joined by ``"\\n"``; and ``"note"`` when no file of the
            folder was indexed.
        :raises ValueError: for a missing folder, an empty issue, or bad options.
        """
        folder = _folder(path)
        if not issue.strip():
            raise ValueError("the issue text is empty")
        chosen = self.explorer(explorer, k, budget)
        filters = RegionFilter(tuple(include or ()), tuple(exclude or ()), tuple(languages or ()))
        kept: list[ScoredRegion] = chosen.explore_scored(
            folder, issue, with_text=True, filters=filters if filters.active else None
        )
        return {
            "path": str(folder),
            "explorer": chosen.name,
            "k": k,
            "budget": budget,
            "lines": sum(r.end - r.start + 1 for r in kept),
            "regions": [
                {"path": r.path, "start": r.start, "end": r.end, "score": round(r.score, 6), "code": r.text}
                for r in kept
            ],
        } | _no_files_note(folder, len(chosen.load(folder).file_lines))

    def list_indexes(self) -> dict[str, Any]:
        """The folders indexed in this session and the snapshot names the store holds.

        :return: ``{"store", "session": [index_folder entries], "store_snapshots": [names]}`` (the store's snapshot
            entries, :func:`~swe_explore.indexes.manage.snapshot_entries`).
        """
        names = [p.name for p in snapshot_entries(self.store)]
        return {"store": str(self.store), "session": list(self._indexed.values()), "store_snapshots": names}
