"""Hybrid retrieval: reciprocal-rank fusion (RRF) of two or more retrievers' rankings.

RRF (Cormack, Clarke and Büttcher, "Reciprocal rank fusion outperforms Condorcet and individual rank learning
methods", SIGIR 2009) scores a chunk by its ranks in the parts' rankings::

    rrf(d) = sum over parts i where d is ranked of  w_i / (rrf_k + rank_i(d))        rank 1 = best

with the RRF constant ``rrf_k = 60`` (the paper's value; saved in the config under its old key ``k``, and
``k=`` is still accepted, with a :class:`DeprecationWarning`) and weights ``w_i = 1`` by default. Each part is
searched for its top ``depth`` chunks (a chunk a part does not return contributes nothing from it), so fusion
only needs ranks, never comparable scores: BM25 + Potion, TF-IDF + FAISS, or any other pair works the same. Ties
are broken by chunk index, as for every retriever.

**Building.** :meth:`HybridRetriever.build` builds the parts through
:func:`retrievers.features.build_retrievers`, so parts that share a feature (BM25 + TF-IDF: the term counts)
compute it once; the hybrid also declares its parts' features, so a hybrid built next to a BM25 and a Potion
retriever on the same chunks reuses their term counts and vectors.

**Persistence.** The hybrid's own state is empty: its config (parts with their names and configs, ``k``,
``weights``, ``depth``) says everything, and its parts (:meth:`HybridRetriever.parts`) are persisted as retrievers
of their own. :mod:`indexes.files` writes them either into ``part0/``, ``part1/``, ... of the hybrid's directory
(standalone) or, in the index store, as links to the parts' sibling retriever directories (each with the SHA-256
of that part's ``retriever.json``, so a part rebuilt since makes loading the hybrid fail); either way
:meth:`HybridRetriever.from_state` receives the loaded parts.

**No registry here.** The hybrid is made of retriever instances; :func:`retrievers.registry.make_retriever`
makes them from names (``make_retriever("hybrid", parts=["bm25", "potion"], model=...)``), so this module does not
import the registry.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from swe_explore.chunking.types import Chunk
from swe_explore.retrievers.base import (
    FeatureSpec,
    Hit,
    InvalidStateError,
    Retriever,
    RetrieverState,
    check_top_n,
    top_hits,
)
from swe_explore.retrievers.features import build_retrievers

__all__ = ["DEFAULT_PARTS", "HybridRetriever", "rrf_scores"]

#: The parts of ``make_retriever("hybrid")`` when none are given: lexical BM25 plus Potion embeddings.
DEFAULT_PARTS = ("bm25", "potion")
#: The config keys of a hybrid (``k`` is the RRF constant ``rrf_k``: the saved key is kept, indexes and result
#: rows hash it).
_CONFIG_KEYS = ("parts", "k", "weights", "depth")


def rrf_scores(
    rankings: Sequence[Sequence[Hit]], n_docs: int, rrf_k: float = 60.0, weights: Sequence[float] | None = None
) -> np.ndarray:
    """Reciprocal-rank-fusion score of every chunk (Cormack et al. 2009).

    :param rankings: one ranking per part, best first.
    :param n_docs: number of chunks.
    :param rrf_k: the RRF constant (``> 0``).
    :param weights: one weight per ranking, or ``None`` for all 1.
    :return: float64 array ``(n_docs,)``; 0 for chunks no part returned.
    :raises ValueError: if the number of weights differs from the number of rankings.
    """
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError(f"{len(weights)} weights for {len(rankings)} rankings")
    scores = np.zeros(n_docs, dtype=np.float64)
    for w, ranking in zip(weights, rankings):
        idx = np.fromiter((h.index for h in ranking), dtype=np.int64, count=len(ranking))
        scores[idx] += w / (rrf_k + np.arange(1, len(ranking) + 1, dtype=np.float64))  # a ranking never repeats a chunk
    return scores


class HybridRetriever(Retriever):
    """Reciprocal-rank fusion of several retrievers; see the module docstring.

    :param parts: the retrievers to fuse, at least two, none of them composite (build them by name with
        :func:`retrievers.registry.make_retriever`).
    :param rrf_k: the RRF constant (``> 0``).
    :param weights: one non-negative weight per part, or ``None`` for equal weights.
    :param depth: how many hits each part contributes (``>= 1``; at least ``top_n`` is used).
    :param k: deprecated spelling of ``rrf_k`` (warns with :class:`DeprecationWarning`).
    :raises ValueError: for fewer than two parts, a part that is not a plain retriever, or invalid
        ``rrf_k``/``weights``/``depth``.
    """

    name = "hybrid"
    #: What ``make_retriever("hybrid", ...)`` accepts: ``parts`` as names or ``{"name", "config"}`` dicts (or
    #: instances), and ``model``, passed to the embedding parts given by name; the registry makes the parts.
    #: ``k`` is the deprecated spelling of ``rrf_k``.
    options = ("parts", "rrf_k", "weights", "depth", "model", "k")

    def __init__(
        self,
        parts: Sequence[Retriever],
        rrf_k: float = 60.0,
        weights: Sequence[float] | None = None,
        depth: int = 1000,
        k: float | None = None,
    ) -> None:
        if k is not None:
            warnings.warn("HybridRetriever option k is deprecated; use rrf_k", DeprecationWarning, stacklevel=2)
            rrf_k = k
        if isinstance(parts, (str, Mapping)) or len(parts) < 2:
            raise ValueError(f"hybrid needs at least two parts, got {parts!r}")
        for part in parts:
            if not isinstance(part, Retriever):
                raise ValueError(f"a hybrid part must be a Retriever (make it with make_retriever), got {part!r}")
            if part.parts():
                raise ValueError("a hybrid part cannot itself be hybrid")
        if not isinstance(rrf_k, (int, float)) or isinstance(rrf_k, bool) or not rrf_k > 0:
            raise ValueError(f"rrf_k must be a number > 0, got {rrf_k!r}")
        if weights is not None:
            weights = [float(w) for w in weights]
            if len(weights) != len(parts) or any(not w >= 0 for w in weights):
                raise ValueError(f"weights must be {len(parts)} numbers >= 0, got {weights!r}")
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
            raise ValueError(f"depth must be an integer >= 1, got {depth!r}")
        self._parts: list[Retriever] = list(parts)
        self.rrf_k = float(rrf_k)
        self.weights = weights
        self.depth = depth

    def config(self) -> dict[str, Any]:
        """JSON parameters: ``parts`` (``[{"name", "config"}, ...]``), ``k`` (the RRF constant ``rrf_k``, under
        its saved key), ``weights`` and ``depth``.

        :return: the config.
        """
        return {
            "parts": [{"name": p.name, "config": p.config()} for p in self._parts],
            "k": self.rrf_k,
            "weights": self.weights,
            "depth": self.depth,
        }

    @property
    def n_docs(self) -> int:
        """Number of chunks indexed (that of the first part; all parts index the same chunks)."""
        return self._parts[0].n_docs

    def parts(self) -> list[Retriever]:
        """The fused retrievers, in order (persisted as retrievers of their own).

        :return: the parts.
        """
        return list(self._parts)

    @classmethod
    def part_count(cls, config: Mapping[str, Any]) -> int:
        """The number of parts of a saved hybrid: the length of ``config["parts"]``.

        :param config: the saved config.
        :return: the number of parts (``>= 2``).
        :raises InvalidStateError: if ``config["parts"]`` does not list at least two parts.
        """
        parts = config.get("parts")
        if not isinstance(parts, list) or len(parts) < 2:
            raise InvalidStateError(None, "config.parts must list at least two parts")
        return len(parts)

    def build(self, chunks: Sequence[Chunk]) -> None:
        """Build every part on the same chunks, computing shared features once.

        :param chunks: the snapshot's chunks, in index order.
        """
        build_retrievers(self._parts, chunks)

    def feature_specs(self) -> dict[str, FeatureSpec] | None:
        """The parts' features, named ``"<part index>.<name>"``; ``None`` if a part does not share features.

        :return: the specs, or ``None``.
        """
        out: dict[str, FeatureSpec] = {}
        for i, part in enumerate(self._parts):
            specs = part.feature_specs()
            if specs is None:
                return None
            out.update({f"{i}.{name}": spec for name, spec in specs.items()})
        return out

    def _split_name(self, name: str) -> tuple[int, str]:
        """The part position and its local feature name for a name of :meth:`feature_specs`.

        :param name: ``"<part index>.<name>"``.
        :return: ``(part index, name)``.
        :raises ValueError: for a name of another form.
        """
        index, _, local = name.partition(".")
        if not index.isdigit() or int(index) >= len(self._parts) or not local:
            raise ValueError(f"hybrid has no feature {name!r}")
        return int(index), local

    def compute_feature(self, name: str, chunks: Sequence[Chunk]) -> Any:
        """Compute one part's feature.

        :param name: ``"<part index>.<name>"``.
        :param chunks: the chunks.
        :return: the feature value.
        :raises ValueError: for an unknown name.
        """
        index, local = self._split_name(name)
        return self._parts[index].compute_feature(local, chunks)

    def build_from_features(self, values: Mapping[str, Any]) -> None:
        """Build every part from its features.

        :param values: ``{"<part index>.<name>": value}`` for every name of :meth:`feature_specs`.
        :raises ValueError: for an unknown name.
        """
        per_part: list[dict[str, Any]] = [{} for _ in self._parts]
        for name, value in values.items():
            index, local = self._split_name(name)
            per_part[index][local] = value
        for part, part_values in zip(self._parts, per_part):
            part.build_from_features(part_values)

    def search(self, query: str, top_n: int = 100) -> list[Hit]:
        """Fuse the parts' rankings with RRF.

        :param query: raw issue text.
        :param top_n: maximum number of hits (``>= 1``).
        :return: at most ``top_n`` hits (score = RRF score), best first, ties by chunk order.
        :raises ValueError: if ``top_n < 1``.
        """
        check_top_n(top_n)
        depth = max(self.depth, int(top_n))
        rankings = [part.search(query, depth) for part in self._parts]
        return top_hits(rrf_scores(rankings, self.n_docs, self.rrf_k, self.weights), top_n)

    def state(self) -> RetrieverState:
        """Nothing beyond the config: the parts are persisted as retrievers of their own.

        :return: an empty state.
        """
        return RetrieverState()

    @classmethod
    def from_state(
        cls,
        config: Mapping[str, Any],
        n_docs: int,
        state: RetrieverState,
        parts: Sequence[Retriever] = (),
        model: str | None = None,
    ) -> HybridRetriever:
        """The hybrid of its loaded parts, checked against the saved config.

        :param config: the saved config.
        :param n_docs: the saved number of chunks (every part must index as many).
        :param state: the saved (empty) state.
        :param parts: the loaded parts, in order, ``part_count(config)`` of them.
        :param model: unused (the embedding parts were loaded with it).
        :return: the retriever.
        :raises InvalidStateError: if the config has unknown keys, its parts do not name the loaded ones, a part
            indexes another number of chunks, or ``k`` (``rrf_k``)/``weights``/``depth`` are invalid.
        """
        unknown = sorted(set(config) - set(_CONFIG_KEYS))
        if unknown:
            raise InvalidStateError(None, f"invalid config (unknown option(s) {unknown})")
        specs = config.get("parts")
        if not isinstance(specs, list) or len(specs) != len(parts):
            raise InvalidStateError(None, f"config.parts does not list the {len(parts)} loaded parts")
        for i, (spec, part) in enumerate(zip(specs, parts)):
            if not isinstance(spec, dict) or spec.get("name") != part.name:
                raise InvalidStateError(None, f"part {i} is a {part.name!r} index, config.parts[{i}] is {spec!r}")
            if part.n_docs != n_docs:
                raise InvalidStateError(None, f"part {i} indexes {part.n_docs} chunks, expected {n_docs}")
        try:
            return cls(
                parts, rrf_k=config.get("k", 60.0), weights=config.get("weights"), depth=config.get("depth", 1000)
            )
        except (TypeError, ValueError) as exc:
            raise InvalidStateError(None, f"invalid config ({exc})") from None
