"""Hybrid retrieval: reciprocal-rank fusion (RRF) of two or more retrievers' rankings.

RRF (Cormack, Clarke and Büttcher, "Reciprocal rank fusion outperforms Condorcet and individual rank learning
methods", SIGIR 2009) scores a chunk by its ranks in the parts' rankings::

    rrf(d) = sum over parts i where d is ranked of  w_i / (k + rank_i(d))        rank 1 = best

with ``k = 60`` (the paper's value) and weights ``w_i = 1`` by default. Each part is searched for its top
``depth`` chunks (a chunk a part does not return contributes nothing from it), so fusion only needs ranks,
never comparable scores: BM25 + Potion, TF-IDF + FAISS, or any other pair works the same. Ties are broken by
chunk index, as for every retriever.

Persistence: ``retriever.json`` (config: parts with their names and configs, ``k``, ``weights``, ``depth``)
and one subdirectory per part, ``part0/``, ``part1/``, ..., each written by the part's own ``save``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from chunking.types import Chunk
from retrievers.base import CorruptIndexError, Hit, Retriever
from retrievers.common import check_top_n, prepare_directory, read_meta, top_hits, write_meta

__all__ = ["HybridRetriever", "rrf_scores"]


def rrf_scores(
    rankings: Sequence[Sequence[Hit]], n_docs: int, k: float = 60.0, weights: Sequence[float] | None = None
) -> np.ndarray:
    """Reciprocal-rank-fusion score of every chunk (Cormack et al. 2009).

    :param rankings: one ranking per part, best first.
    :param n_docs: number of chunks.
    :param k: the RRF constant (``> 0``).
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
        scores[idx] += w / (k + np.arange(1, len(ranking) + 1, dtype=np.float64))  # a ranking never repeats a chunk
    return scores


class HybridRetriever(Retriever):
    """Reciprocal-rank fusion of several retrievers; see the module docstring.

    :param parts: the retrievers to fuse, at least two: instances, registry names (``"bm25"``, ``"potion"``,
        ...) or ``{"name": ..., "config": {...}}`` dicts (what :meth:`config` records).
    :param k: the RRF constant (``> 0``).
    :param weights: one non-negative weight per part, or ``None`` for equal weights.
    :param depth: how many hits each part contributes (``>= 1``; at least ``top_n`` is used).
    :param model: model spec passed to the embedding parts (``potion``, ``faiss``) given by name only.
    :raises ValueError: for fewer than two parts, an unknown part name, or invalid ``k``/``weights``/``depth``.
    """

    name = "hybrid"

    def __init__(
        self,
        parts: Sequence[Retriever | str | Mapping[str, Any]] = ("bm25", "potion"),
        k: float = 60.0,
        weights: Sequence[float] | None = None,
        depth: int = 1000,
        model: str | None = None,
    ) -> None:
        from retrievers.registry import make_retriever  # late import: the registry imports this module

        if isinstance(parts, (str, Mapping)) or len(parts) < 2:
            raise ValueError(f"hybrid needs at least two parts, got {parts!r}")
        if not isinstance(k, (int, float)) or isinstance(k, bool) or not k > 0:
            raise ValueError(f"k must be a number > 0, got {k!r}")
        if weights is not None:
            weights = [float(w) for w in weights]
            if len(weights) != len(parts) or any(not w >= 0 for w in weights):
                raise ValueError(f"weights must be {len(parts)} numbers >= 0, got {weights!r}")
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
            raise ValueError(f"depth must be an integer >= 1, got {depth!r}")
        built: list[Retriever] = []
        for part in parts:
            if isinstance(part, Retriever):
                built.append(part)
                continue
            if isinstance(part, str):
                name, options = part, {}
            elif isinstance(part, Mapping) and isinstance(part.get("name"), str):
                name, options = part["name"], dict(part.get("config") or {})
            else:
                raise ValueError(f"a hybrid part must be a Retriever, a name or {{'name', 'config'}}, got {part!r}")
            if name == "hybrid":
                raise ValueError("a hybrid part cannot itself be hybrid")
            if model is not None and name in ("potion", "faiss"):
                options.setdefault("model", model)
            built.append(make_retriever(name, **options))
        self.parts: list[Retriever] = built
        self.k = float(k)
        self.weights = weights
        self.depth = depth

    def config(self) -> dict[str, Any]:
        """JSON parameters: ``parts`` (``[{"name", "config"}, ...]``), ``k``, ``weights`` and ``depth``.

        :return: the config.
        """
        return {
            "parts": [{"name": p.name, "config": p.config()} for p in self.parts],
            "k": self.k,
            "weights": self.weights,
            "depth": self.depth,
        }

    @property
    def n_docs(self) -> int:
        """Number of chunks indexed (that of the first part; all parts index the same chunks)."""
        return self.parts[0].n_docs

    def build(self, chunks: Sequence[Chunk]) -> None:
        """Build every part on the same chunks.

        :param chunks: the snapshot's chunks, in index order.
        """
        for part in self.parts:
            part.build(chunks)

    def search(self, query: str, top_n: int = 100) -> list[Hit]:
        """Fuse the parts' rankings with RRF.

        :param query: raw issue text.
        :param top_n: maximum number of hits (``>= 1``).
        :return: at most ``top_n`` hits (score = RRF score), best first, ties by chunk order.
        :raises ValueError: if ``top_n < 1``.
        """
        check_top_n(top_n)
        depth = max(self.depth, int(top_n))
        rankings = [part.search(query, depth) for part in self.parts]
        return top_hits(rrf_scores(rankings, self.n_docs, self.k, self.weights), top_n)

    def save(self, directory: Path) -> None:
        """Save each part into ``part<i>/`` and write ``retriever.json``.

        :param directory: existing, empty target directory.
        :raises FileNotFoundError: if it does not exist.
        :raises ValueError: if it is not empty.
        """
        directory = prepare_directory(directory)
        for i, part in enumerate(self.parts):
            sub = directory / f"part{i}"
            sub.mkdir()
            part.save(sub)
        write_meta(directory, self.name, self.config(), self.n_docs, [])

    @classmethod
    def load(cls, directory: Path) -> HybridRetriever:
        """Load every part from its subdirectory.

        :param directory: the directory :meth:`save` wrote.
        :return: the retriever.
        :raises CorruptIndexError: naming the file, if any file (of any part) is missing, truncated, edited or
            inconsistent.
        """
        from retrievers.registry import load_retriever

        directory = Path(directory)
        meta = read_meta(directory, cls.name)
        meta_path = directory / "retriever.json"
        config = meta["config"]
        unknown = sorted(set(config) - {"parts", "k", "weights", "depth"})
        if unknown:
            raise CorruptIndexError(meta_path, f"invalid config (unknown option(s) {unknown})")
        parts = config.get("parts")
        if not isinstance(parts, list) or len(parts) < 2:
            raise CorruptIndexError(meta_path, "config.parts must list at least two parts")
        loaded: list[Retriever] = []
        for i, spec in enumerate(parts):
            part = load_retriever(directory / f"part{i}")
            if not isinstance(spec, dict) or spec.get("name") != part.name:
                raise CorruptIndexError(meta_path, f"part {i} does not match {directory / f'part{i}'}")
            if part.n_docs != meta["n_docs"]:
                raise CorruptIndexError(directory / f"part{i}", f"{part.n_docs} chunks, expected {meta['n_docs']}")
            loaded.append(part)
        try:
            return cls(
                parts=loaded, k=config.get("k", 60.0), weights=config.get("weights"), depth=config.get("depth", 1000)
            )
        except (TypeError, ValueError) as exc:
            raise CorruptIndexError(meta_path, f"invalid config ({exc})") from None
