"""The fusion explorer: read the issue, walk the code graph, rank every candidate with the learned ranker.

:class:`FusionExplorer` runs, for one snapshot and one issue text:

1. the snapshot's persisted index (chunk table, BM25 and TF-IDF, Potion when the model uses it, the symbol
   graph, the history index when the model uses the snapshot's past commits), built on first use and kept in
   memory for the next query;
2. the candidates and their features (:mod:`swe_explore.explore.features`): every retriever's top chunks, the
   chunks and files the issue's trace frames, paths and identifiers land on (:mod:`.mentions`), and the chunks
   the symbol graph reaches from those seeds;
3. a ranking: the learned ranker's scores (:mod:`.ranker`; ``ranker="learned"``), or today's hand-set
   ranking priors over BM25 (``ranker="priors"``, the baseline of the ablations);
4. optionally the files-first order (:func:`swe_explore.explore.packing.files_first`, ``files_first=N``), then the
   shared line-budget packer: at most K regions within B lines; or, with ``shape``, regions shaped like the
   evidence (:mod:`.shaping`: confident files whole or as their dense span, doubtful files and the confident code
   files' tests (:mod:`.completion`) as small windows), within the same K and B.

Every ingredient is an option, so each is measured alone and together (``docs/benchmarks.md``).
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from swe_explore.chunking.registry import make_chunker
from swe_explore.chunking.types import Region, ScoredChunk, ScoredRegion
from swe_explore.chunking.walk import WalkConfig
from swe_explore.explore.completion import complete_tests
from swe_explore.explore.config import default_pack
from swe_explore.explore.features import (
    DENSE_RETRIEVERS,
    CandidateConfig,
    SnapshotIndex,
    candidate_features,
    is_test_path,
)
from swe_explore.explore.filters import RegionFilter
from swe_explore.explore.packing import PackConfig, add_text, files_first, gate_files, pack_scored
from swe_explore.explore.priors import RankPriors, apply_priors
from swe_explore.explore.ranker import DEFAULT_RANKER_MODEL, RankerEnsemble, load_ensemble
from swe_explore.explore.shaping import ShapeConfig, file_scores, shape
from swe_explore.indexes.build import ensure_index, open_index
from swe_explore.indexes.graph import CorruptGraphError, chunks_fingerprint
from swe_explore.indexes.graph_store import graph_dir_for, open_graph
from swe_explore.indexes.history import ensure_history_index, open_history_index
from swe_explore.indexes.manage import StoreNames, StoreUse, mark_used
from swe_explore.indexes.store import LastLoaded, default_store
from swe_explore.retrievers.registry import make_retriever

RANKERS = ("learned", "priors")
_log = logging.getLogger(__name__)


@dataclass
class FusionExplorer:
    """Issue reading + code graph + learned fusion + line-budget packing (module docstring).

    :param ranker: ``learned`` (the LightGBM ranker) or ``priors`` (BM25 with the hand-set priors).
    :param ranker_model: the learned ranker's model(s): shipped names or paths, comma-separated for an ensemble
        whose scores are averaged (:class:`~swe_explore.explore.ranker.RankerEnsemble`); the cards fix the features
        and the candidate configuration. Default: :data:`~swe_explore.explore.ranker.DEFAULT_RANKER_MODEL`.
    :param candidates: candidate gathering; default: the model card's (``priors``: no mentions, no graph).
    :param files_first: with ``N > 0``, the best chunk of each of the first ``N`` files goes before the rest
        (two-stage packing); ``0`` packs the ranking as it is.
    :param file_margin: with the learned ranker, keep only the files whose best chunk scores within this margin
        of the best file's (:func:`~swe_explore.explore.packing.gate_files`; ``None``: every file).
    :param pack: the packer's parameters (K, B, ...); default
        :func:`~swe_explore.explore.config.default_pack` of the ranker (``LEARNED_PACK`` for ``learned``,
        ``PackConfig()`` for ``priors``).
    :param shape: with a :class:`~swe_explore.explore.shaping.ShapeConfig`, regions are shaped like the evidence
        within ``pack``'s K and B (its other fields are unused); ``None`` (default): the packer.
    :param chunker: chunk strategy (the graph needs ``function``).
    :param potion_model: the embedding (Potion) model path or id, for ranker models with ``dense`` features.
    :param retrievers: the retrievers to index and load; default ``bm25``, ``tfidf`` and those the model's
        features need (``potion`` for ``dense`` ones).
    :param graph: index and load the symbol graph; default: when the candidates or the features use it.
    :param history: index and load the history index (:mod:`swe_explore.indexes.history`) of snapshots that have a
        history file; default: when the candidates (``history > 0``) or the features (``history_*``) use it.
    :param store: index store root (default: ``$SWE_EXPLORE_STORE`` or the user cache).
    :param walk: snapshot walking rules.
    :param rebuild: rebuild indexes even when up to date.
    :param reuse: take each file's chunks, term counts and graph names from the store's content-addressed cache
        when building (:func:`~swe_explore.indexes.build.ensure_index`'s ``reuse``: the same index files, as
        ``index_repos.py`` builds them; not part of the config).
    :param graph_worker: build a missing symbol graph in a forked child while the retrievers build
        (:class:`~swe_explore.indexes.graph_store.GraphWorker`; the same files; not part of the config).
    :param model: deprecated spelling of ``ranker_model`` (warns with :class:`DeprecationWarning`).
    :raises ValueError: for an unknown ranker.
    :raises swe_explore.explore.ranker.ModelError: if the model cannot be loaded.
    """

    ranker: str = "learned"
    ranker_model: str = DEFAULT_RANKER_MODEL
    candidates: CandidateConfig | None = None
    files_first: int = 0
    file_margin: float | None = None
    pack: PackConfig | None = None
    shape: ShapeConfig | None = None
    chunker: str = "function"
    potion_model: str | None = None
    retrievers: tuple[str, ...] | None = None
    graph: bool | None = None
    history: bool | None = None
    store: Path = field(default_factory=default_store)
    walk: WalkConfig = field(default_factory=WalkConfig)
    rebuild: bool = False
    reuse: bool = True
    graph_worker: bool = False
    model: InitVar[str | None] = None

    def __post_init__(self, model: str | None) -> None:
        if model is not None:
            warnings.warn(
                "FusionExplorer(model=...) is deprecated; use ranker_model=...", DeprecationWarning, stacklevel=3
            )
            self.ranker_model = model
        if self.ranker not in RANKERS:
            raise ValueError(f"unknown ranker {self.ranker!r}; valid: {', '.join(RANKERS)}")
        if self.files_first < 0:
            raise ValueError(f"files_first must be >= 0, got {self.files_first}")
        self.store = Path(self.store)
        self._pack = self.pack or default_pack(self.ranker)
        self._model: RankerEnsemble | None = load_ensemble(self.ranker_model) if self.ranker == "learned" else None
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
        self._history = (
            self.history
            if self.history is not None
            else (self.candidates.history > 0 or any(f.startswith("history_") for f in features))
        )
        self._chunker = make_chunker(self.chunker)
        self._loaded: LastLoaded[SnapshotIndex] = LastLoaded()
        #: A folder's name in the store when none is given, looked up once per folder.
        self._store_name = StoreNames(self.store, self._chunker, self.walk)
        #: The snapshots this explorer built or found current, for the commands' ``indexes: ...`` line.
        self.store_use = StoreUse(Path(self.store))

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
            **({"shape": self.shape.to_dict()} if self.shape is not None else {}),
            "chunker": {"name": self.chunker, "config": self._chunker.config()},
            "retrievers": {r.name: r.config() for r in self._retrievers()},
            "walk": self.walk.to_dict(),
        }

    def index(self, snapshot_dir: str | Path, snapshot_name: str | None = None) -> bool:
        """Build the snapshot's indexes (retrievers and, when used, the symbol graph and the history index) if
        missing or stale, and mark them used (:func:`~swe_explore.indexes.manage.mark_used`).

        :param snapshot_dir: the snapshot.
        :param snapshot_name: its name in the store (default: :func:`~swe_explore.indexes.manage.store_name`, the
            folder's name and a hash of its path, or the entry of a moved copy of it).
        :return: whether anything was built.
        """
        snapshot_name = snapshot_name or self._store_name(snapshot_dir)
        report = ensure_index(
            Path(snapshot_dir),
            self.store,
            self._chunker,
            self._retrievers(),
            self.walk,
            self.rebuild,
            snapshot_name,
            reuse=self.reuse,
            graph=self._graph,
            graph_worker=self.graph_worker,
        )
        built = bool(report.built)
        if self._history:
            built = (
                bool(ensure_history_index(Path(snapshot_dir), self.store, snapshot_name, self.rebuild, self.reuse))
                or built
            )
        self.store_use.note(snapshot_name, built)
        mark_used(self.store, snapshot_name, Path(snapshot_dir))
        return built

    def load(self, snapshot_dir: str | Path, snapshot_name: str | None = None) -> SnapshotIndex:
        """The snapshot's loaded index (built if needed); the last one loaded is kept in memory
        (:class:`~swe_explore.indexes.store.LastLoaded`).

        :param snapshot_dir: the snapshot.
        :param snapshot_name: its name in the store.
        :return: chunks, line counts, retrievers, graph and history.
        """
        name = snapshot_name or self._store_name(snapshot_dir)
        return self._loaded.get(snapshot_dir, name, lambda: self._open(Path(snapshot_dir), name))

    def _open(self, snapshot_dir: Path, snapshot_name: str) -> SnapshotIndex:
        """Build (if needed) and open the snapshot's retriever indexes, graph and history index."""
        built = self.index(snapshot_dir, snapshot_name)
        _log.info("indexes: %s: %s %s", self.store, snapshot_name, "built" if built else "current")
        retrievers = {}
        first = None
        for retriever in self._retrievers():
            loaded = open_index(snapshot_dir, self.store, self._chunker, retriever, self.walk, snapshot_name)
            first = first or loaded
            retrievers[retriever.name] = loaded.retriever
        assert first is not None
        graph = None
        if self._graph:
            graph = open_graph(snapshot_dir, self.store, self._chunker, self.walk, snapshot_name)
            if graph.fingerprint != chunks_fingerprint(first.chunks):
                raise CorruptGraphError(
                    graph_dir_for(self.store, snapshot_name, self._chunker, self.walk),
                    "built from another chunk table (stale graph); rebuild it",
                )
        history = open_history_index(snapshot_dir, self.store, snapshot_name) if self._history else None
        return SnapshotIndex(first.chunks, first.file_lines, retrievers, graph, history)

    def rank(
        self,
        snapshot_dir: str | Path,
        query: str,
        snapshot_name: str | None = None,
        filters: RegionFilter | None = None,
    ) -> list[ScoredChunk]:
        """The ranked candidate chunks with their scores, best first (the explorers' one ``rank()`` contract),
        before the file gate and the files-first order.

        :param snapshot_dir: the snapshot.
        :param query: the issue text; an empty query gives ``[]``.
        :param snapshot_name: its name in the store.
        :param filters: keep only the candidates of the files it keeps (``priors``: the ``top_n`` best BM25 chunks
            of those files, the whole ranking read; ``learned``: the candidates gathered as without a filter).
        :return: the candidates in rank order with their scores (the learned ranker's, or BM25 with priors).
        """
        index = self.load(snapshot_dir, snapshot_name)
        assert self.candidates is not None
        if not query.strip():
            return []
        if self._model is None:
            bm25 = index.retrievers["bm25"]
            if filters is None:
                hits = bm25.search(query, self.candidates.top_n)
            else:
                chunks = index.chunks
                every = bm25.search(query, max(1, len(chunks)))
                keep = [h for h in every if filters.keeps(chunks[h.index].path, chunks[h.index].language)]
                hits = keep[: self.candidates.top_n]
            hits = apply_priors(query, index.chunks, hits, RankPriors())
            return [ScoredChunk(index.chunks[h.index], float(h.score)) for h in hits]
        cands = candidate_features(query, index, self.candidates, self._model.features)
        scores = self._model.score(cands.features)
        order = np.lexsort((cands.ids, -scores))
        ranked = [ScoredChunk(index.chunks[int(cands.ids[k])], float(scores[k])) for k in order]
        return ranked if filters is None else filters.chunks(ranked)

    def explore_scored(
        self,
        snapshot_dir: str | Path,
        query: str,
        snapshot_name: str | None = None,
        with_text: bool = False,
        filters: RegionFilter | None = None,
    ) -> list[ScoredRegion]:
        """:meth:`explore` with each region's score (that of its best-ranked chunk) and, on request, its text.

        :param snapshot_dir: the snapshot.
        :param query: the issue text; an empty query gives ``[]``.
        :param snapshot_name: its name in the store.
        :param with_text: read each region's lines from the snapshot.
        :param filters: regions only from the files this keeps (applied to the candidates before packing or
            shaping; the shape's test completions too).
        :return: the regions of :meth:`explore`, in its order.
        """
        ranked = self.rank(snapshot_dir, query, snapshot_name, filters)
        if self.shape is not None:
            regions = self._shaped(self.load(snapshot_dir, snapshot_name), query, ranked, self.shape, filters)
            return add_text(snapshot_dir, regions) if with_text else regions
        chunks = [s.chunk for s in ranked]
        if self.file_margin is not None and self._model is not None:
            chunks = gate_files(chunks, [s.score for s in ranked], self.file_margin)
        if self.files_first:
            chunks = files_first(chunks, self.files_first)
        score = {id(s.chunk): s.score for s in ranked}  # the gate and files-first keep the chunk objects
        reordered = [ScoredChunk(c, score[id(c)]) for c in chunks]
        regions = pack_scored(reordered, self._pack, self.load(snapshot_dir, snapshot_name).file_lines)
        return add_text(snapshot_dir, regions) if with_text else regions

    def _shaped(
        self,
        index: SnapshotIndex,
        query: str,
        ranked: list[ScoredChunk],
        config: ShapeConfig,
        filters: RegionFilter | None = None,
    ) -> list[ScoredRegion]:
        """The shaped regions (:func:`~swe_explore.explore.shaping.shape`) of a ranking, completed with the tests of
        its top code files (each shown as its best BM25 chunk for the query, cut to ``config.test_lines``)."""
        extra: list[ScoredRegion] = []
        if config.completion == "tests" and config.completion_files and ranked:
            scores = file_scores(ranked, index.file_lines)
            code = [p for p in scores if not is_test_path(p)][: config.completion_files]
            found = complete_tests(code, index.file_lines, index.graph)
            if found:
                bm25 = index.retrievers["bm25"].scores(query)
                for test, source, relation in found:
                    ids = index.file_chunks.get(test, [])
                    if not ids:
                        continue
                    best = index.chunks[max(ids, key=lambda i: (bm25[i], -i))]
                    end = min(best.end, best.start + config.test_lines - 1, index.file_lines.get(test, 0))
                    if best.start <= end:
                        discount = config.test_discount + (config.import_discount if relation == "imports" else 0.0)
                        extra.append(ScoredRegion(test, best.start, end, scores[source] - discount))
        if filters is not None and extra:
            extra = filters.regions(extra, {c.path: c.language for c in index.chunks})
        return shape(ranked, index.file_lines, self._pack.k, self._pack.budget, config, extra)

    def explore(
        self,
        snapshot_dir: str | Path,
        query: str,
        snapshot_name: str | None = None,
        filters: RegionFilter | None = None,
    ) -> list[Region]:
        """At most K regions within the line budget, best first.

        :param snapshot_dir: the snapshot.
        :param query: the issue text; an empty query gives ``[]``.
        :param snapshot_name: its name in the store.
        :param filters: regions only from the files this keeps (:mod:`swe_explore.explore.filters`).
        :return: the regions.
        """
        return [r.region for r in self.explore_scored(snapshot_dir, query, snapshot_name, filters=filters)]
