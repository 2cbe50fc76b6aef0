"""Explorers: what turns (snapshot, issue text) into ranked regions, for the scripts and the evaluator.

* :class:`IndexedExplorer` is this toolkit's pipeline: chunker → persisted index (built on first use) →
  retriever ranking → the shared line-budget packer → at most K regions within B lines.
* :class:`ReferenceAdapter` wraps the reference baselines of :mod:`explore.reference` (80/20 windows,
  3000-chunk cap, raw top-K, no budget) behind the same ``explore`` call, so both run in one script.

:func:`make_explorer` builds either from a name: ``bm25``, ``tfidf``, ``potion``, ``faiss``, ``hybrid`` (ours)
or ``reference_bm25``, ``reference_tfidf``, ``reference_potion``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swe_explore.chunking.registry import make_chunker
from swe_explore.chunking.types import Region, ScoredChunk, ScoredRegion
from swe_explore.chunking.walk import WalkConfig
from swe_explore.explore.config import (
    DEFAULT_TOP_N,
    EMBEDDING_RETRIEVERS,
    LEARNED,
    check_explorer_options,
    default_pack,
    default_shape,
    explorer_kind,
)
from swe_explore.explore.filters import RegionFilter
from swe_explore.explore.packing import PackConfig, add_text, pack_scored
from swe_explore.explore.priors import RankPriors, apply_priors
from swe_explore.explore.reference import REFERENCE_EXPLORERS
from swe_explore.explore.shaping import ShapeConfig, shape_config
from swe_explore.indexes.build import BuildReport, LoadedIndex, ensure_index, open_index
from swe_explore.indexes.manage import StoreNames, StoreUse, mark_used
from swe_explore.indexes.store import LastLoaded, default_store
from swe_explore.retrievers.registry import make_retriever

if TYPE_CHECKING:
    from swe_explore.explore.fusion import FusionExplorer

__all__ = [
    "EMBEDDING_RETRIEVERS",
    "LEARNED",
    "IndexedExplorer",
    "ReferenceAdapter",
    "make_explorer",
    "resolve_model_path",
]


def resolve_model_path(model: str | None) -> str | None:
    """Make a local model directory absolute, so the index key does not depend on the working directory.

    :param model: a local model directory, a hub id or ``None``.
    :return: the absolute directory, or ``model`` unchanged when it is not a local directory.
    """
    if model and os.path.isdir(model):
        return str(Path(model).resolve())
    return model


_log = logging.getLogger(__name__)


@dataclass
class IndexedExplorer:
    """Chunk → index → rank → pack, over indexes persisted in ``store`` and reused across runs.

    :param retriever: retriever name (``bm25``, ``tfidf``, ``potion``, ``faiss``, ``hybrid``).
    :param chunker: chunk strategy name (``window``, ``function``, ``hybrid``, ``file``).
    :param chunker_options: options of the chunker (e.g. ``{"max_lines": 120}``).
    :param retriever_options: options of the retriever (e.g. ``{"model": PATH}``).
    :param pack: the line-budget packer's parameters (K, B, ...).
    :param priors: ranking priors applied to the retriever's hits (``RankPriors.off()`` for the raw ranking).
    :param store: index store root (default :func:`default_store`: ``$SWE_EXPLORE_STORE`` or the user cache).
    :param walk: snapshot walking rules.
    :param top_n: how many ranked chunks are handed to the packer.
    :param rebuild: rebuild indexes even when up to date (once per snapshot in this process).
    :param reuse: take each file's chunks and term counts from the store's content-addressed cache when building
        (the same index files; not part of the config).
    :raises ValueError: for an unknown chunker, retriever or option.
    """

    retriever: str = "bm25"
    chunker: str = "function"
    chunker_options: dict[str, Any] = field(default_factory=dict)
    retriever_options: dict[str, Any] = field(default_factory=dict)
    pack: PackConfig = field(default_factory=PackConfig)
    priors: RankPriors = field(default_factory=RankPriors)
    store: Path = field(default_factory=default_store)
    walk: WalkConfig = field(default_factory=WalkConfig)
    top_n: int = DEFAULT_TOP_N
    rebuild: bool = False
    reuse: bool = True

    def __post_init__(self) -> None:
        if self.top_n < 1:
            raise ValueError(f"top_n must be >= 1 (ranked chunks handed to the packer), got {self.top_n}")
        if "model" in self.retriever_options:
            self.retriever_options["model"] = resolve_model_path(self.retriever_options["model"])
        self._chunker = make_chunker(self.chunker, **self.chunker_options)
        make_retriever(self.retriever, **self.retriever_options)  # validate name and options now
        self._rebuilt: set[Path] = set()
        self._loaded: LastLoaded[LoadedIndex] = LastLoaded()
        #: A folder's name in the store when none is given, looked up once per folder.
        self._store_name = StoreNames(self.store, self._chunker, self.walk)
        #: The snapshots this explorer built or found current, for the commands' ``indexes: ...`` line.
        self.store_use = StoreUse(Path(self.store))

    @property
    def name(self) -> str:
        """Explorer name written to result rows, e.g. ``bm25+function``."""
        return f"{self.retriever}+{self.chunker}"

    @property
    def explorer_config(self) -> dict[str, Any]:
        """Everything that determines the output: chunker, retriever and packer configs."""
        return {
            "chunker": {"name": self.chunker, "config": self._chunker.config()},
            "retriever": {"name": self.retriever, "config": self._new_retriever().config()},
            "priors": self.priors.to_dict(),
            "pack": self.pack.to_dict(),
            "top_n": self.top_n,
            "walk": self.walk.to_dict(),
        }

    def _new_retriever(self) -> Any:
        return make_retriever(self.retriever, **self.retriever_options)

    def index(self, snapshot_dir: str | Path, snapshot_name: str | None = None) -> BuildReport:
        """Build the snapshot's index if it is missing or stale (what ``scripts/index_repos.py`` does), and mark it
        used (:func:`~swe_explore.indexes.manage.mark_used`).

        :param snapshot_dir: the snapshot (a repository tree).
        :param snapshot_name: its name in the store (default: :func:`~swe_explore.indexes.manage.store_name`, the
            folder's name and a hash of its path, or the entry of a moved copy of it).
        :return: what was built or reused, with timings in seconds.
        :raises FileNotFoundError: if ``snapshot_dir`` is not a directory.
        """
        snapshot_dir = Path(snapshot_dir)
        snapshot_name = snapshot_name or self._store_name(snapshot_dir)
        rebuild = self.rebuild and snapshot_dir not in self._rebuilt
        self._rebuilt.add(snapshot_dir)
        report = ensure_index(
            snapshot_dir,
            self.store,
            self._chunker,
            [self._new_retriever()],
            self.walk,
            rebuild,
            snapshot_name,
            reuse=self.reuse,
        )
        self.store_use.note(snapshot_name, bool(report.built))
        mark_used(self.store, snapshot_name, snapshot_dir)
        return report

    def load(self, snapshot_dir: str | Path, snapshot_name: str | None = None) -> LoadedIndex:
        """The snapshot's index, built if needed and loaded; the last one loaded is kept in memory
        (:class:`~swe_explore.indexes.store.LastLoaded`).

        :param snapshot_dir: the snapshot.
        :param snapshot_name: its name in the store.
        :return: the loaded index (chunks, file line counts, retriever).
        """
        name = snapshot_name or self._store_name(snapshot_dir)

        def load() -> LoadedIndex:
            built = self.index(snapshot_dir, name).built
            loaded = open_index(Path(snapshot_dir), self.store, self._chunker, self._new_retriever(), self.walk, name)
            _log.info("indexes: %s: %s %s", self.store, name, "built" if built else "current")
            return loaded

        return self._loaded.get(snapshot_dir, name, load)

    def rank(
        self,
        snapshot_dir: str | Path,
        query: str,
        snapshot_name: str | None = None,
        filters: RegionFilter | None = None,
    ) -> list[ScoredChunk]:
        """The ranking the packer reads: at most ``top_n`` scored chunks, best first (the explorers' one
        ``rank()`` contract; chunks of a loaded index carry no text).

        :param snapshot_dir: the snapshot.
        :param query: issue text; an empty query gives ``[]``.
        :param snapshot_name: its name in the store.
        :param filters: with a filter, the ``top_n`` best chunks of the files it keeps (the whole ranking is read).
        :return: the chunks with the retriever's scores after the ranking priors.
        """
        index = self.load(snapshot_dir, snapshot_name)
        if not query.strip():
            hits = []
        elif filters is None:
            hits = index.retriever.search(query, self.top_n)
        else:
            every = index.retriever.search(query, max(1, len(index.chunks)))
            chunks = index.chunks
            hits = [h for h in every if filters.keeps(chunks[h.index].path, chunks[h.index].language)][: self.top_n]
        hits = apply_priors(query, index.chunks, hits, self.priors)
        return [ScoredChunk(index.chunks[h.index], float(h.score)) for h in hits]

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
        :param query: issue text; an empty query gives ``[]``.
        :param snapshot_name: its name in the store.
        :param with_text: read each region's lines from the snapshot.
        :param filters: regions only from the files this keeps (applied to the ranking before packing).
        :return: the regions of :meth:`explore`, in its order.
        """
        ranked = self.rank(snapshot_dir, query, snapshot_name, filters)
        regions = pack_scored(ranked, self.pack, self.load(snapshot_dir, snapshot_name).file_lines)
        return add_text(snapshot_dir, regions) if with_text else regions

    def explore(
        self,
        snapshot_dir: str | Path,
        query: str,
        snapshot_name: str | None = None,
        filters: RegionFilter | None = None,
    ) -> list[Region]:
        """Regions for an issue: the ranking packed into at most K regions within the line budget.

        The snapshot is indexed on first use (saved in ``store``) and its index kept in memory for the next query.

        :param snapshot_dir: the snapshot (a repository tree).
        :param query: issue text; an empty query gives ``[]``.
        :param snapshot_name: its name in the store (default: the folder's name and a hash of its path).
        :param filters: regions only from the files this keeps (:mod:`swe_explore.explore.filters`).
        :return: at most ``pack.k`` regions with at most ``pack.budget`` lines in total, best first.
        :raises FileNotFoundError: if ``snapshot_dir`` is not a directory.
        """
        return [r.region for r in self.explore_scored(snapshot_dir, query, snapshot_name, filters=filters)]


@dataclass
class ReferenceAdapter:
    """A reference baseline (docs/metrics.md §2) behind the explorer interface: raw top-K windows, no line budget.

    :param name: ``reference_bm25``, ``reference_tfidf`` or ``reference_potion``.
    :param k: regions returned (top-K).
    :param options: options of the reference class (e.g. ``model_path`` for Potion).
    """

    name: str
    k: int = 5
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.name not in REFERENCE_EXPLORERS:
            raise ValueError(f"unknown reference explorer {self.name!r}; valid: {', '.join(REFERENCE_EXPLORERS)}")

    @property
    def explorer_config(self) -> dict[str, Any]:
        """The reference's own config keys (``top_k`` is the reference's name for K; ``model_path``...)."""
        return {"reference": self.name, "top_k": self.k, **self.options}

    def explore(self, snapshot_dir: str | Path, query: str, snapshot_name: str | None = None) -> list[Region]:
        """The reference baseline's top-K regions for the issue text (the snapshot is chunked on every call).

        :param snapshot_dir: the snapshot.
        :param query: issue text.
        :param snapshot_name: unused (the reference keeps no index).
        :return: at most ``k`` regions, best first.
        """
        explorer = REFERENCE_EXPLORERS[self.name](snapshot_dir, **self.options)
        return explorer.explore(query, self.k)


def make_explorer(
    name: str = LEARNED,
    *,
    k: int | None = None,
    budget: int | None = None,
    chunker: str | None = None,
    chunker_options: Mapping[str, Any] | None = None,
    retriever_options: Mapping[str, Any] | None = None,
    pack: PackConfig | None = None,
    priors: RankPriors | None = None,
    store: str | Path | None = None,
    top_n: int | None = None,
    model: str | None = None,
    rebuild: bool = False,
    ranker_model: str | None = None,
    files_first: int | None = None,
    shape: str | ShapeConfig | None = None,
    walk: WalkConfig | None = None,
    reuse: bool = True,
) -> IndexedExplorer | ReferenceAdapter | FusionExplorer:
    """Build an explorer by name: ``learned`` (the fusion explorer with the learned ranker,
    :class:`~swe_explore.explore.fusion.FusionExplorer`), a retriever name (:class:`IndexedExplorer`: that
    retriever with the ranking priors), or ``reference_*`` (:class:`ReferenceAdapter`: the reference baselines).

    Options are ``None`` (``rebuild``: ``False``, ``reuse``: ``True``) unless given; one the explorer would not
    use is refused (:func:`~swe_explore.explore.config.check_explorer_options`, as on the command line).

    :param name: explorer name (default ``learned``: the fusion explorer with the shipped ranker).
    :param k: regions per query (top-K); overrides ``pack.k``.
    :param budget: line budget B per query (lines); overrides ``pack.budget``. Not for the reference.
    :param chunker: chunk strategy (retriever explorers only; default ``function``).
    :param chunker_options: chunker options (retriever explorers only).
    :param retriever_options: retriever options (retriever explorers only).
    :param pack: packer parameters; default :func:`~swe_explore.explore.config.default_pack` (``PackConfig()``,
        :data:`~swe_explore.explore.packing.LEARNED_PACK` for ``learned``). The reference takes a pack that
        sets only ``k``.
    :param priors: ranking priors (retriever explorers only); default ``RankPriors()``.
    :param store: index store root (not the reference); default :func:`~swe_explore.indexes.store.default_store`.
    :param top_n: ranked chunks handed to the packer (retriever explorers only; default 200).
    :param model: embedding model path or hub id (``learned``, potion, faiss, hybrid, reference_potion).
    :param rebuild: rebuild indexes (not the reference).
    :param ranker_model: ``learned`` only: the ranker model (shipped name or path; default the shipped default).
    :param files_first: ``learned`` only: files whose best chunk goes first (two-stage packing; default 0).
    :param shape: ``learned`` only: ``"evidence"`` (regions shaped like the evidence, :mod:`~swe_explore.explore.
        shaping`, with the dev-chosen parameters; the default, :func:`~swe_explore.explore.config.default_shape`),
        ``"plain"`` (the line-budget packer) or a :class:`~swe_explore.explore.shaping.ShapeConfig`; K and B still
        come from ``pack``/``k``/``budget``. The packer's other parameters and ``files_first`` need ``"plain"``.
    :param walk: snapshot walking rules (not the reference); default ``WalkConfig()``.
    :param reuse: build missing indexes from the store's content cache (not the reference; ``False``: from
        scratch, the cache neither read nor written; the same index files either way).
    :return: the explorer.
    :raises ValueError: for an unknown name (listing the valid ones), an option the explorer does not take
        (naming it and the explorer), or an invalid value.
    """
    kind = explorer_kind(name)
    if kind == "reference" and pack is not None and replace(pack, k=PackConfig().k) == PackConfig():
        k, pack = (pack.k if k is None else k), None  # a pack that sets only K is K
    values = {
        "k": k,
        "budget": budget,
        "chunker": chunker,
        "chunker_options": chunker_options,
        "retriever_options": retriever_options,
        "pack": pack,
        "priors": priors,
        "store": store,
        "top_n": top_n,
        "model": model,
        "rebuild": rebuild or None,
        "ranker_model": ranker_model,
        "files_first": files_first,
        "shape": shape,
        "walk": walk,
        "reuse": None if reuse else False,
    }
    given = {option: option for option, value in values.items() if value is not None}
    if "pack" in given and kind == "reference":
        given["pack"] = "pack (other than k)"
    check_explorer_options(name, given)
    config = pack or default_pack(name)
    if k is not None:
        config = replace(config, k=k)
    if budget is not None:
        config = replace(config, budget=budget)
    if kind == "reference":
        return _reference_explorer(name, config.k, model)
    root = Path(store) if store is not None else default_store()
    if kind == "learned":
        shaping = shape_config(default_shape(name) if shape is None else shape)
        if shaping is not None:
            _check_shaped_options(config, files_first)
        explorer = _learned_explorer(config, root, model, rebuild, ranker_model, files_first, shaping, walk)
        explorer.reuse = reuse
        return explorer
    options = dict(retriever_options or {})
    if model is not None:
        options["model"] = model
    top_n, walk = (DEFAULT_TOP_N if top_n is None else top_n), walk or WalkConfig()
    extras = dict(chunker_options or {}), options, config, priors or RankPriors(), root, walk, top_n, rebuild
    return IndexedExplorer(name, chunker or "function", *extras, reuse=reuse)


def _reference_explorer(name: str, k: int, model: str | None) -> ReferenceAdapter:
    """The reference baseline ``name`` returning top-``k`` chunks (``reference_potion``: ``model`` resolved as
    our Potion retriever resolves it)."""
    options: dict[str, Any] = {}
    if name == "reference_potion":
        from swe_explore.retrievers.potion import resolve_model_spec

        options["model_path"] = resolve_model_path(resolve_model_spec(model))
    return ReferenceAdapter(name, k, options)


def _learned_explorer(
    pack: PackConfig,
    store: Path,
    model: str | None,
    rebuild: bool,
    ranker_model: str | None,
    files_first: int | None,
    shape: ShapeConfig | None = None,
    walk: WalkConfig | None = None,
) -> FusionExplorer:
    """The default explorer (:func:`make_explorer`'s ``learned``) from its checked options."""
    from swe_explore.explore.fusion import FusionExplorer
    from swe_explore.explore.ranker import DEFAULT_RANKER_MODEL

    return FusionExplorer(
        ranker="learned",
        ranker_model=ranker_model or DEFAULT_RANKER_MODEL,
        files_first=files_first or 0,
        pack=pack,
        shape=shape,
        potion_model=resolve_model_path(model),
        store=store,
        walk=walk or WalkConfig(),
        rebuild=rebuild,
    )


def _check_shaped_options(pack: PackConfig, files_first: int | None) -> None:
    """Refuse what shaped regions would ignore: ``files_first`` and the packer's parameters other than K and B.

    :param pack: the learned explorer's packer config (K and B already applied).
    :param files_first: the ``files_first`` option.
    :raises ValueError: naming what needs ``shape="plain"``.
    """
    default = replace(default_pack(LEARNED), k=pack.k, budget=pack.budget)
    ignored = [f"pack.{name}" for name in pack.__dataclass_fields__ if getattr(pack, name) != getattr(default, name)]
    if files_first:
        ignored.append("files_first")
    if ignored:
        raise ValueError(f"{', '.join(ignored)} need shape='plain' (the evidence shape plans its own regions)")
