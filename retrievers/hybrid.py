"""Hybrid retrieval: reciprocal-rank fusion (RRF) of two or more retrievers' rankings.

RRF (Cormack, Clarke and Büttcher, "Reciprocal rank fusion outperforms Condorcet and individual rank learning
methods", SIGIR 2009) scores a chunk by its ranks in the parts' rankings::

    rrf(d) = sum over parts i where d is ranked of  w_i / (k + rank_i(d))        rank 1 = best

with ``k = 60`` (the paper's value) and weights ``w_i = 1`` by default. Each part is searched for its top
``depth`` chunks (a chunk a part does not return contributes nothing from it), so fusion only needs ranks,
never comparable scores: BM25 + Potion, TF-IDF + FAISS, or any other pair works the same. Ties are broken by
chunk index, as for every retriever.

**Building.** :meth:`HybridRetriever.build` builds the parts through
:func:`retrievers.features.build_retrievers`, so parts that share a feature (BM25 + TF-IDF: the term counts)
compute it once; the hybrid also declares its parts' features, so a hybrid built next to a BM25 and a Potion
retriever on the same chunks reuses their term counts and vectors.

**Persistence**, two layouts, both read by :meth:`HybridRetriever.load`:

- standalone (:meth:`~HybridRetriever.save`): ``retriever.json`` (config: parts with their names and configs,
  ``k``, ``weights``, ``depth``) and one subdirectory per part, ``part0/``, ``part1/``, ..., each written by
  the part's own ``save``;
- linked (:meth:`~HybridRetriever.save_linked`, what the index store uses): ``retriever.json`` only, with
  ``links``: for each part, the relative path of a part index saved elsewhere (the store's sibling retriever
  directory of that config) and the SHA-256 of that part's ``retriever.json``. The parts are not stored twice,
  and since a part's ``retriever.json`` records the size and SHA-256 of every one of its files, a part that
  was rebuilt differently, edited or removed makes loading the hybrid fail with
  :class:`~retrievers.base.CorruptIndexError` naming the part's file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from swe_explore.chunking.types import Chunk
from swe_explore.retrievers.base import CorruptIndexError, Hit, Retriever
from swe_explore.retrievers.common import (
    META_FILE,
    check_top_n,
    file_sha256,
    prepare_directory,
    read_meta,
    top_hits,
    write_meta,
)
from swe_explore.retrievers.features import FeatureSpec, build_retrievers, feature_specs_of

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
        from swe_explore.retrievers.registry import make_retriever  # late import: the registry imports this module

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
        """Build every part on the same chunks, computing shared features once.

        :param chunks: the snapshot's chunks, in index order.
        """
        build_retrievers(self.parts, chunks)

    def feature_specs(self) -> dict[str, FeatureSpec] | None:
        """The parts' features, named ``"<part index>.<name>"``; ``None`` if a part does not share features.

        :return: the specs, or ``None``.
        """
        out: dict[str, FeatureSpec] = {}
        for i, part in enumerate(self.parts):
            specs = feature_specs_of(part)
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
        if not index.isdigit() or int(index) >= len(self.parts) or not local:
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
        return self.parts[index].compute_feature(local, chunks)

    def build_from_features(self, values: Mapping[str, Any]) -> None:
        """Build every part from its features.

        :param values: ``{"<part index>.<name>": value}`` for every name of :meth:`feature_specs`.
        :raises ValueError: for an unknown name.
        """
        per_part: list[dict[str, Any]] = [{} for _ in self.parts]
        for name, value in values.items():
            index, local = self._split_name(name)
            per_part[index][local] = value
        for part, part_values in zip(self.parts, per_part):
            part.build_from_features(part_values)

    def linked_parts(self) -> list[Retriever]:
        """The parts whose saved indexes :meth:`save_linked` points to, in order (the index store's hook).

        :return: the part retrievers.
        """
        return list(self.parts)

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

    def save_linked(self, directory: Path, part_dirs: Sequence[Path]) -> None:
        """Write ``retriever.json`` pointing at the parts' already saved indexes instead of copies of them.

        :param directory: existing, empty target directory.
        :param part_dirs: for each part, the directory its ``save`` wrote (same config as the part); stored as
            paths relative to ``directory``, so the two must keep their relative position.
        :raises FileNotFoundError: if ``directory`` does not exist.
        :raises ValueError: if it is not empty, the number of directories differs from the number of parts, a
            part directory holds another retriever or config, or the parts index different numbers of chunks.
        :raises CorruptIndexError: if a part directory's ``retriever.json`` is missing or malformed.
        """
        directory = prepare_directory(directory)
        if len(part_dirs) != len(self.parts):
            raise ValueError(f"{len(part_dirs)} part directories for {len(self.parts)} parts")
        links: list[dict[str, Any]] = []
        n_docs: set[int] = set()
        for part, part_dir in zip(self.parts, part_dirs):
            part_dir = Path(part_dir)
            meta = read_meta(part_dir, part.name, verify=False)
            if meta["config"] != _json_round_trip(part.config()):
                raise ValueError(f"{part_dir}: holds a {part.name} index of another config than this hybrid's part")
            n_docs.add(meta["n_docs"])
            links.append({"path": Path(os.path.relpath(part_dir, directory)).as_posix(),
                          "meta_sha256": file_sha256(part_dir / META_FILE)})
        if len(n_docs) != 1:
            raise ValueError(f"the parts index different numbers of chunks: {sorted(n_docs)}")
        write_meta(directory, self.name, self.config(), n_docs.pop(), [], {"links": links})

    @classmethod
    def load(cls, directory: Path, model: str | None = None) -> HybridRetriever:
        """Load every part, from its subdirectory (:meth:`save`) or through its link (:meth:`save_linked`).

        :param directory: the directory :meth:`save` or :meth:`save_linked` wrote.
        :param model: model spec for the embedding parts (``potion``, ``faiss``), or ``None`` for the ones their
            indexes record (see :func:`retrievers.potion.embedding_retriever_from_meta`).
        :return: the retriever.
        :raises CorruptIndexError: naming the file, if any file (of any part) is missing, truncated, edited or
            inconsistent, or a linked part's ``retriever.json`` is not the one the hybrid was linked to (the part
            was rebuilt or replaced since: rebuild the hybrid).
        :raises ValueError: if an embedding part's model cannot be loaded.
        """
        from swe_explore.retrievers.registry import load_retriever

        directory = Path(directory)
        meta = read_meta(directory, cls.name)
        meta_path = directory / META_FILE
        config = meta["config"]
        unknown = sorted(set(config) - {"parts", "k", "weights", "depth"})
        if unknown:
            raise CorruptIndexError(meta_path, f"invalid config (unknown option(s) {unknown})")
        parts = config.get("parts")
        if not isinstance(parts, list) or len(parts) < 2:
            raise CorruptIndexError(meta_path, "config.parts must list at least two parts")
        links = meta.get("links")
        if links is not None and (not isinstance(links, list) or len(links) != len(parts)):
            raise CorruptIndexError(meta_path, f"'links' must list one entry per part ({len(parts)})")
        loaded: list[Retriever] = []
        for i, spec in enumerate(parts):
            part_dir = directory / f"part{i}" if links is None else _linked_dir(directory, links[i], meta_path)
            part = load_retriever(part_dir, model=model)
            if not isinstance(spec, dict) or spec.get("name") != part.name:
                raise CorruptIndexError(meta_path, f"part {i} does not match {part_dir}")
            if part.n_docs != meta["n_docs"]:
                raise CorruptIndexError(part_dir, f"{part.n_docs} chunks, expected {meta['n_docs']}")
            loaded.append(part)
        try:
            return cls(
                parts=loaded, k=config.get("k", 60.0), weights=config.get("weights"), depth=config.get("depth", 1000)
            )
        except (TypeError, ValueError) as exc:
            raise CorruptIndexError(meta_path, f"invalid config ({exc})") from None


def _linked_dir(directory: Path, link: Any, meta_path: Path) -> Path:
    """Resolve and check one link of a linked hybrid index.

    :param directory: the hybrid's directory.
    :param link: ``{"path": relative path, "meta_sha256": hex}``.
    :param meta_path: the hybrid's ``retriever.json`` (for messages).
    :return: the part's directory.
    :raises CorruptIndexError: if the link is malformed, the part is missing, or its ``retriever.json`` changed.
    """
    if not isinstance(link, dict) or not isinstance(link.get("path"), str) or not isinstance(
        link.get("meta_sha256"), str
    ):
        raise CorruptIndexError(meta_path, f"malformed link {link!r}")
    part_dir = Path(os.path.normpath(directory / link["path"]))
    part_meta = part_dir / META_FILE
    if not part_meta.is_file():
        raise CorruptIndexError(part_meta, f"linked part index of {directory} is missing")
    if file_sha256(part_meta) != link["meta_sha256"]:
        raise CorruptIndexError(
            part_meta, f"changed since the hybrid index {directory} was linked to it (stale hybrid)"
        )
    return part_dir


def _json_round_trip(value: Any) -> Any:
    """A value as it reads back from JSON (tuples become lists), for comparing configs with saved ones."""
    return json.loads(json.dumps(value))
