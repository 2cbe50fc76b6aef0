"""Explorers: what turns (snapshot, issue text) into ranked regions, for the scripts and the evaluator.

* :class:`IndexedExplorer` is this toolkit's pipeline: chunker → persisted index (built on first use) →
  retriever ranking → the shared line-budget packer → at most K regions within B lines.
* :class:`ReferenceAdapter` wraps the reference baselines of :mod:`explore.reference` (80/20 windows,
  3000-chunk cap, raw top-K, no budget) behind the same ``explore`` call, so both run in one script.

:func:`make_explorer` builds either from a name: ``bm25``, ``tfidf``, ``potion``, ``faiss``, ``hybrid`` (ours)
or ``reference_bm25``, ``reference_tfidf``, ``reference_potion``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swe_explore.chunking.registry import make_chunker
from swe_explore.chunking.types import Chunk, Region
from swe_explore.chunking.walk import WalkConfig
from swe_explore.explore.packing import LEARNED_PACK, PackConfig, pack
from swe_explore.explore.priors import RankPriors, apply_priors
from swe_explore.explore.reference import REFERENCE_EXPLORERS
from swe_explore.indexes.build import BuildReport, LoadedIndex, ensure_index, open_index
from swe_explore.indexes.store import snapshot_key
from swe_explore.retrievers.registry import RETRIEVERS, make_retriever

if TYPE_CHECKING:
    from swe_explore.explore.fusion import FusionExplorer

#: The name of the fusion explorer with the learned ranker in :func:`make_explorer` and ``--retriever``.
LEARNED = "learned"
#: Environment variable that overrides the default index store.
STORE_ENV_VAR = "SWE_EXPLORE_STORE"


def default_store() -> Path:
    """Where indexes are saved unless a store is given: ``$SWE_EXPLORE_STORE``, else the user cache directory.

    The cache directory is the platform's (``platformdirs.user_cache_dir``: ``$XDG_CACHE_HOME`` or
    ``~/.cache/swe-explore-baselines/indexes`` on Linux, ``~/Library/Caches/...`` on macOS), so nothing is
    written into the working directory unless asked (``--store DIR``).

    :return: the store root (not created here).
    """
    override = os.environ.get(STORE_ENV_VAR)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("swe-explore-baselines", appauthor=False)) / "indexes"


#: Retrievers that take a ``model`` option.
EMBEDDING_RETRIEVERS = ("potion", "faiss", "hybrid")


def resolve_model_path(model: str | None) -> str | None:
    """Make a local model directory absolute, so the index key does not depend on the working directory.

    :param model: a local model directory, a hub id or ``None``.
    :return: the absolute directory, or ``model`` unchanged when it is not a local directory.
    """
    if model and os.path.isdir(model):
        return str(Path(model).resolve())
    return model


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
    top_n: int = 200
    rebuild: bool = False

    def __post_init__(self) -> None:
        if self.top_n < 1:
            raise ValueError(f"top_n must be >= 1 (ranked chunks handed to the packer), got {self.top_n}")
        if "model" in self.retriever_options:
            self.retriever_options["model"] = resolve_model_path(self.retriever_options["model"])
        self._chunker = make_chunker(self.chunker, **self.chunker_options)
        make_retriever(self.retriever, **self.retriever_options)  # validate name and options now
        self._rebuilt: set[Path] = set()
        self._loaded: tuple[Path, str | None, Any] | None = None  # the last loaded index

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
        """Build the snapshot's index if it is missing or stale (what ``scripts/index_repos.py`` does).

        :param snapshot_dir: the snapshot (a repository tree).
        :param snapshot_name: its name in the store (default: the folder's name and a hash of its path).
        :return: what was built or reused, with timings in seconds.
        :raises FileNotFoundError: if ``snapshot_dir`` is not a directory.
        """
        snapshot_dir = Path(snapshot_dir)
        snapshot_name = snapshot_name or snapshot_key(snapshot_dir)
        rebuild = self.rebuild and snapshot_dir not in self._rebuilt
        self._rebuilt.add(snapshot_dir)
        return ensure_index(
            snapshot_dir, self.store, self._chunker, [self._new_retriever()], self.walk, rebuild, snapshot_name
        )

    def load(self, snapshot_dir: str | Path, snapshot_name: str | None = None) -> LoadedIndex:
        """The snapshot's index, built if needed and loaded; the last one loaded is kept in memory.

        Consecutive queries on one snapshot reuse the loaded index (the snapshot is assumed not to change
        within one process), so only the first pays for the freshness check and the load.

        :param snapshot_dir: the snapshot.
        :param snapshot_name: its name in the store.
        :return: the loaded index (chunks, file line counts, retriever).
        """
        snapshot_name = snapshot_name or snapshot_key(snapshot_dir)
        key = (Path(snapshot_dir).resolve(), snapshot_name)
        if self._loaded is None or self._loaded[:2] != key:
            self.index(snapshot_dir, snapshot_name)
            index = open_index(
                Path(snapshot_dir), self.store, self._chunker, self._new_retriever(), self.walk, snapshot_name
            )
            self._loaded = (*key, index)
        return self._loaded[2]

    def rank(
        self, snapshot_dir: str | Path, query: str, snapshot_name: str | None = None
    ) -> tuple[list[Chunk], LoadedIndex]:
        """Ranked chunks (best first, at most ``top_n``) and the loaded index.

        :param snapshot_dir: the snapshot.
        :param query: issue text.
        :param snapshot_name: its name in the store.
        :return: ``(ranked chunks, LoadedIndex)``.
        """
        index = self.load(snapshot_dir, snapshot_name)
        hits = index.retriever.search(query, self.top_n) if query.strip() else []
        hits = apply_priors(query, index.chunks, hits, self.priors)
        return [index.chunks[h.index] for h in hits], index

    def explore(self, snapshot_dir: str | Path, query: str, snapshot_name: str | None = None) -> list[Region]:
        """Regions for an issue: the ranking packed into at most K regions within the line budget.

        The snapshot is indexed on first use (saved in ``store``) and its index kept in memory for the next query.

        :param snapshot_dir: the snapshot (a repository tree).
        :param query: issue text; an empty query gives ``[]``.
        :param snapshot_name: its name in the store (default: the folder's name and a hash of its path).
        :return: at most ``pack.k`` regions with at most ``pack.budget`` lines in total, best first.
        :raises FileNotFoundError: if ``snapshot_dir`` is not a directory.
        """
        ranked, index = self.rank(snapshot_dir, query, snapshot_name)
        return pack(ranked, self.pack, index.file_lines)


@dataclass
class ReferenceAdapter:
    """A reference baseline (spec §2) behind the explorer interface: raw top-K windows, no line budget.

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


def default_pack(name: str) -> PackConfig:
    """An explorer's packer defaults: :data:`~swe_explore.explore.packing.LEARNED_PACK` for ``learned``,
    ``PackConfig()`` for every other explorer.

    :param name: explorer name.
    :return: the packer config.
    """
    return LEARNED_PACK if name == LEARNED else PackConfig()


def make_explorer(
    name: str = LEARNED,
    *,
    k: int | None = None,
    budget: int | None = None,
    chunker: str = "function",
    chunker_options: dict[str, Any] | None = None,
    retriever_options: dict[str, Any] | None = None,
    pack: PackConfig | None = None,
    priors: RankPriors | None = None,
    store: str | Path | None = None,
    top_n: int = 200,
    model: str | None = None,
    rebuild: bool = False,
    ranker_model: str | None = None,
    files_first: int = 0,
) -> IndexedExplorer | ReferenceAdapter | FusionExplorer:
    """Build an explorer by name: ``learned`` (the fusion explorer with the learned ranker,
    :class:`~swe_explore.explore.fusion.FusionExplorer`), a retriever name (that retriever with the ranking
    priors), or ``reference_*`` (the reference baselines).

    :param name: explorer name (default ``learned``: the fusion explorer with the shipped ranker).
    :param k: regions per query (top-K); overrides ``pack.k``.
    :param budget: line budget B per query (lines); overrides ``pack.budget`` (ours only).
    :param chunker: chunk strategy (ours only).
    :param chunker_options: chunker options (ours only).
    :param retriever_options: retriever options (ours only).
    :param pack: packer parameters; the reference uses only ``pack.k``. Default: ``PackConfig()``, and
        :data:`~swe_explore.explore.packing.LEARNED_PACK` for ``learned`` (:func:`default_pack`).
    :param priors: ranking priors (ours only); default ``RankPriors()``.
    :param store: index store root (ours only); default :func:`default_store`.
    :param top_n: ranked chunks handed to the packer (ours only).
    :param model: embedding model path or hub id (potion, faiss, hybrid, reference_potion).
    :param rebuild: rebuild indexes (ours only).
    :param ranker_model: ``learned`` only: the ranker model (shipped name or path; default the shipped default).
    :param files_first: ``learned`` only: files whose best chunk goes first (two-stage packing).
    :return: the explorer.
    :raises ValueError: for an unknown name, listing the valid ones.
    """
    pack = pack or default_pack(name)
    if k is not None:
        pack = replace(pack, k=k)
    if budget is not None:
        pack = replace(pack, budget=budget)
    if name in REFERENCE_EXPLORERS:
        options: dict[str, Any] = {}
        if name == "reference_potion":  # the same model resolution as our Potion retriever
            from swe_explore.retrievers.potion import resolve_model_spec

            options["model_path"] = resolve_model_path(resolve_model_spec(model))
        return ReferenceAdapter(name, pack.k, options)
    if name == LEARNED:
        from swe_explore.explore.fusion import FusionExplorer
        from swe_explore.explore.ranker import DEFAULT_MODEL

        return FusionExplorer(
            ranker="learned",
            model=ranker_model or DEFAULT_MODEL,
            files_first=files_first,
            pack=pack,
            chunker=chunker,
            potion_model=resolve_model_path(model),
            store=Path(store) if store is not None else default_store(),
            rebuild=rebuild,
        )
    if name not in RETRIEVERS:
        valid = ", ".join([LEARNED, *RETRIEVERS, *REFERENCE_EXPLORERS])
        raise ValueError(f"unknown explorer {name!r}; valid: {valid}")
    options = dict(retriever_options or {})
    if model is not None and name in EMBEDDING_RETRIEVERS:
        options["model"] = model
    return IndexedExplorer(
        name,
        chunker,
        dict(chunker_options or {}),
        options,
        pack,
        priors or RankPriors(),
        Path(store) if store is not None else default_store(),
        WalkConfig(),
        top_n,
        rebuild,
    )
