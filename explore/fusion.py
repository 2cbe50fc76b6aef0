"""The fusion explorer: read the issue, walk the code graph, rank every candidate with the learned ranker.

:class:`FusionExplorer` runs, for one snapshot and one issue text:

1. the snapshot's persisted index (chunk table, BM25 and TF-IDF, Potion when the model uses it, the symbol
   graph), built on first use and kept in memory for the next query;
2. the candidates and their features (:mod:`swe_explore.explore.features`): every retriever's top chunks, the
   chunks and files the issue's trace frames, paths and identifiers land on (:mod:`.mentions`), and the chunks
   the symbol graph reaches from those seeds;
3. a ranking: the learned ranker's scores (:mod:`.ranker`; ``ranker="learned"``), or today's hand-set
   ranking priors over BM25 (``ranker="priors"``, the baseline of the ablations);
4. optionally the files-first order (:func:`swe_explore.explore.packing.files_first`, ``files_first=N``), then the
   shared line-budget packer: at most K regions within B lines.

Every ingredient is an option, so each is measured alone and together (``docs/benchmarks.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from swe_explore.chunking.registry import make_chunker
from swe_explore.chunking.types import Chunk, Region
from swe_explore.chunking.walk import WalkConfig
from swe_explore.explore.features import (
    DENSE_RETRIEVERS,
    CandidateConfig,
    SnapshotIndex,
    candidate_features,
)
from swe_explore.explore.packing import LEARNED_PACK, PackConfig, files_first, gate_files, pack
from swe_explore.explore.priors import RankPriors, apply_priors
from swe_explore.explore.ranker import DEFAULT_MODEL, RankerEnsemble, load_ensemble
from swe_explore.indexes.build import ensure_graph_once, ensure_index, open_index
from swe_explore.indexes.graph import (
    CorruptGraphError,
    chunks_fingerprint,
    graph_dir_for,
    open_graph,
)
from swe_explore.indexes.store import snapshot_key
from swe_explore.retrievers.registry import make_retriever

RANKERS = ("learned", "priors")


def _default_store() -> Path:
    from swe_explore.explore.explorer import default_store

    return default_store()


@dataclass
class FusionExplorer:
    """Issue reading + code graph + learned fusion + line-budget packing (module docstring).

    :param ranker: ``learned`` (the LightGBM ranker) or ``priors`` (BM25 with the hand-set priors).
    :param model: the learned ranker's model(s): shipped names or paths, comma-separated for an ensemble whose
        scores are averaged (:class:`~swe_explore.explore.ranker.RankerEnsemble`); the cards fix the features and
        the candidate configuration. Default: :data:`~swe_explore.explore.ranker.DEFAULT_MODEL`.
    :param candidates: candidate gathering; default: the model card's (``priors``: no mentions, no graph).
    :param files_first: with ``N > 0``, the best chunk of each of the first ``N`` files goes before the rest
        (two-stage packing); ``0`` packs the ranking as it is.
    :param file_margin: with the learned ranker, keep only the files whose best chunk scores within this margin
        of the best file's (:func:`~swe_explore.explore.packing.gate_files`; ``None``: every file).
    :param pack: the packer's parameters (K, B, ...); default
        :data:`~swe_explore.explore.packing.LEARNED_PACK` for the learned ranker, ``PackConfig()`` for ``priors``.
    :param chunker: chunk strategy (the graph needs ``function``).
    :param potion_model: the Potion model path or id, for models with ``dense`` features.
    :param retrievers: the retrievers to index and load; default ``bm25``, ``tfidf`` and those the model's
        features need (``potion`` for ``dense`` ones).
    :param graph: index and load the symbol graph; default: when the candidates or the features use it.
    :param store: index store root (default: ``$SWE_EXPLORE_STORE`` or the user cache).
    :param walk: snapshot walking rules.
    :param rebuild: rebuild indexes even when up to date.
    :raises ValueError: for an unknown ranker.
    :raises swe_explore.explore.ranker.ModelError: if the model cannot be loaded.
    """

    ranker: str = "learned"
    model: str = DEFAULT_MODEL
    candidates: CandidateConfig | None = None
    files_first: int = 0
    file_margin: float | None = None
    pack: PackConfig | None = None
    chunker: str = "function"
    potion_model: str | None = None
    retrievers: tuple[str, ...] | None = None
    graph: bool | None = None
    store: Path = field(default_factory=_default_store)
    walk: WalkConfig = field(default_factory=WalkConfig)
    rebuild: bool = False

    def __post_init__(self) -> None:
        if self.ranker not in RANKERS:
            raise ValueError(f"unknown ranker {self.ranker!r}; valid: {', '.join(RANKERS)}")
        if self.files_first < 0:
            raise ValueError(f"files_first must be >= 0, got {self.files_first}")
        self.store = Path(self.store)
        self._pack = self.pack or (LEARNED_PACK if self.ranker == "learned" else PackConfig())
        self._model: RankerEnsemble | None = load_ensemble(self.model) if self.ranker == "learned" else None
        if self.candidates is None:
            if self._model is not None:
                self.candidates = CandidateConfig(**self._model.candidates)
            else:
                self.candidates = CandidateConfig(mentions=False, graph=False)
        features = self._model.features if self._model is not None else ()
        self._retriever_names = list(
            self.retrievers
            or ["bm25", "tfidf"] + [r for r in DENSE_RETRIEVERS if any(f.startswith(f"{r}_") for f in features)]
        )
        self._graph = (
            self.graph
            if self.graph is not None
            else (self.candidates.graph or any(f.startswith("graph_") for f in features))
        )
        self._chunker = make_chunker(self.chunker)
        self._loaded: tuple[Path, str | None, SnapshotIndex] | None = None

    @property
    def name(self) -> str:
        """Explorer name written to result rows: ``learned+function`` or ``priors+function``."""
        return f"{self.ranker}+{self.chunker}"

    def _retrievers(self) -> list[Any]:
        out = []
        for name in self._retriever_names:
            options = {"model": self.potion_model} if name in DENSE_RETRIEVERS and self.potion_model else {}
            out.append(make_retriever(name, **options))
        return out

    @property
    def explorer_config(self) -> dict[str, Any]:
        """Everything that determines the output (written into every result row)."""
        assert self.candidates is not None
        return {
            "ranker": self.ranker,
            "model": None if self._model is None else self._model.fingerprint,
            "candidates": self.candidates.to_dict(),
            "files_first": self.files_first,
            "file_margin": self.file_margin,
            "pack": self._pack.to_dict(),
            "chunker": {"name": self.chunker, "config": self._chunker.config()},
            "retrievers": {r.name: r.config() for r in self._retrievers()},
            "walk": self.walk.to_dict(),
        }

    def index(self, snapshot_dir: str | Path, snapshot_name: str | None = None) -> None:
        """Build the snapshot's indexes (retrievers and, when used, the symbol graph) if missing or stale.

        :param snapshot_dir: the snapshot.
        :param snapshot_name: its name in the store (default: the folder's name and a hash of its path).
        """
        snapshot_name = snapshot_name or snapshot_key(snapshot_dir)
        ensure_index(
            Path(snapshot_dir), self.store, self._chunker, self._retrievers(), self.walk, self.rebuild, snapshot_name
        )
        if self._graph:
            ensure_graph_once(Path(snapshot_dir), self.store, self._chunker, self.walk, self.rebuild, snapshot_name)

    def load(self, snapshot_dir: str | Path, snapshot_name: str | None = None) -> SnapshotIndex:
        """The snapshot's loaded index (built if needed); the last one loaded is kept in memory.

        :param snapshot_dir: the snapshot.
        :param snapshot_name: its name in the store.
        :return: chunks, line counts, retrievers and graph.
        """
        snapshot_name = snapshot_name or snapshot_key(snapshot_dir)
        key = (Path(snapshot_dir).resolve(), snapshot_name)
        if self._loaded is None or self._loaded[:2] != key:
            self.index(snapshot_dir, snapshot_name)
            retrievers = {}
            first = None
            for retriever in self._retrievers():
                loaded = open_index(Path(snapshot_dir), self.store, self._chunker, retriever, self.walk, snapshot_name)
                first = first or loaded
                retrievers[retriever.name] = loaded.retriever
            assert first is not None
            graph = None
            if self._graph:
                graph = open_graph(Path(snapshot_dir), self.store, self._chunker, self.walk, snapshot_name)
                if graph.fingerprint != chunks_fingerprint(first.chunks):
                    raise CorruptGraphError(
                        graph_dir_for(self.store, snapshot_name or Path(snapshot_dir).name, self._chunker, self.walk),
                        "built from another chunk table (stale graph); rebuild it",
                    )
            self._loaded = (*key, SnapshotIndex(first.chunks, first.file_lines, retrievers, graph))
        return self._loaded[2]

    def rank(
        self, snapshot_dir: str | Path, query: str, snapshot_name: str | None = None
    ) -> tuple[list[Chunk], list[float]]:
        """The ranked candidate chunks, best first, and their scores.

        :param snapshot_dir: the snapshot.
        :param query: the issue text.
        :param snapshot_name: its name in the store.
        :return: the candidates in rank order (empty for an empty query) and their scores (the learned ranker's,
            or BM25 with priors).
        """
        index = self.load(snapshot_dir, snapshot_name)
        assert self.candidates is not None
        if not query.strip():
            return [], []
        if self._model is None:
            bm25 = index.retrievers["bm25"]
            hits = bm25.search(query, self.candidates.top_n)
            hits = apply_priors(query, index.chunks, hits, RankPriors())
            return [index.chunks[h.index] for h in hits], [h.score for h in hits]
        cands = candidate_features(query, index, self.candidates, self._model.features)
        scores = self._model.score(cands.features)
        order = np.lexsort((cands.ids, -scores))
        return [index.chunks[int(cands.ids[k])] for k in order], [float(scores[k]) for k in order]

    def explore(self, snapshot_dir: str | Path, query: str, snapshot_name: str | None = None) -> list[Region]:
        """At most K regions within the line budget, best first.

        :param snapshot_dir: the snapshot.
        :param query: the issue text; an empty query gives ``[]``.
        :param snapshot_name: its name in the store.
        :return: the regions.
        """
        ranked, scores = self.rank(snapshot_dir, query, snapshot_name)
        if self.file_margin is not None and self._model is not None:
            ranked = gate_files(ranked, scores, self.file_margin)
        if self.files_first:
            ranked = files_first(ranked, self.files_first)
        index = self.load(snapshot_dir, snapshot_name)
        return pack(ranked, self._pack, index.file_lines)
