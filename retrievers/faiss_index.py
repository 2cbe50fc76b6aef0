"""Potion vectors in a FAISS index (faiss-cpu): exact ``IndexFlatIP`` by default, ``IndexHNSWFlat`` as an option.

The vectors are those of :class:`retrievers.potion.Embedder`: L2-normalised, so inner product is cosine.
That matters: with raw inner product a long vector outranks an exact match (``q = (1, 0)`` scores
``(3, 1)`` at 3 but ``(1, 0)`` at 1); after normalisation the exact match scores 1 and ``(3, 1)`` 0.95.

- ``index="flat"``: ``faiss.IndexFlatIP``, exact; same top-k as numpy brute force.
- ``index="hnsw"``: ``faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)`` with ``efConstruction`` and
  ``efSearch`` (raised to ``top_n`` when smaller); approximate, for snapshots with very many chunks.

FAISS pads its answer with id ``-1`` when it has fewer than ``k`` results (more neighbours asked than
vectors, or an HNSW search that reaches too few). Those entries are dropped, never turned into
``chunks[-1]``, as are scores ``<= 0``. Equal scores are re-sorted by chunk index, as the contract
requires.

Persistence: the state is ``index.faiss`` (the bytes of ``faiss.serialize_index``, what ``faiss.write_index``
writes) plus the model's ``dim`` and ``model_fingerprint``, recorded in ``retriever.json`` by :mod:`indexes.files`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from swe_explore.retrievers.base import Hit, InvalidStateError, Retriever, RetrieverState, check_top_n
from swe_explore.retrievers.common import DEFAULT_FIELDS, check_fields
from swe_explore.retrievers.potion import Embedder, EmbeddingRetriever, check_vectors

__all__ = ["INDEX_KINDS", "FaissRetriever", "build_faiss_index", "faiss_search"]

#: Index kinds :class:`FaissRetriever` accepts.
INDEX_KINDS = ("flat", "hnsw")

_INDEX_FILE = "index.faiss"


def build_faiss_index(vectors: np.ndarray, kind: str = "flat", hnsw_m: int = 32, ef_construction: int = 40) -> Any:
    """An inner-product FAISS index over the given vectors, as they are (normalise them first for cosine).

    :param vectors: float32 array ``(n, dim)``.
    :param kind: ``"flat"`` (exact ``IndexFlatIP``) or ``"hnsw"`` (``IndexHNSWFlat``, inner-product metric).
    :param hnsw_m: HNSW neighbours per node.
    :param ef_construction: HNSW candidate list size while building.
    :return: the populated ``faiss.Index``.
    :raises ValueError: for an unknown kind or a non-2-D array.
    """
    import faiss

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2:
        raise ValueError(f"vectors must be 2-D (n, dim), got shape {vectors.shape}")
    dim = vectors.shape[1]
    index: Any
    if kind == "flat":
        index = faiss.IndexFlatIP(dim)
    elif kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = ef_construction
    else:
        raise ValueError(f"unknown FAISS index kind {kind!r}; valid: {', '.join(INDEX_KINDS)}")
    if len(vectors):
        index.add(vectors)
    return index


def faiss_search(index: Any, query: np.ndarray, top_n: int) -> list[Hit]:
    """Search one query vector on one thread; drop ``-1`` ids and scores ``<= 0``; best first, ties by lower id.

    :param index: a FAISS index.
    :param query: float32 vector ``(dim,)``.
    :param top_n: maximum number of hits (``>= 1``).
    :return: the hits.
    :raises ValueError: if ``top_n < 1``.
    """
    import faiss

    check_top_n(top_n)
    if index.ntotal == 0:
        return []
    q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
    # One query vector is too little work for OpenMP: with 2 threads a flat search of 21K vectors measured
    # 15 ms instead of 0.9 ms single-threaded (docs/retrievers.md), so search runs on one thread.
    n_threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        scores, ids = index.search(q, int(min(top_n, index.ntotal)))
    finally:
        faiss.omp_set_num_threads(n_threads)
    keep = (ids[0] >= 0) & (scores[0] > 0)
    ids_k, scores_k = ids[0][keep], scores[0][keep]
    order = np.lexsort((ids_k, -scores_k))
    return [Hit(int(ids_k[i]), float(scores_k[i])) for i in order]


class FaissRetriever(EmbeddingRetriever):
    """Potion vectors searched through a FAISS inner-product index; see the module docstring.

    :param model: hub id or local path of a model2vec model (see :func:`retrievers.potion.resolve_model_spec`).
    :param max_length: tokens per text before truncation (default 512); ``None`` embeds every token.
    :param fields: chunk fields of the document text.
    :param index: ``"flat"`` (exact, default) or ``"hnsw"``.
    :param hnsw_m: HNSW neighbours per node (``index="hnsw"`` only).
    :param ef_construction: HNSW build candidate list size.
    :param ef_search: HNSW search candidate list size (at least ``top_n`` is used).
    :param batch_size: texts per ``encode`` batch (speed only; not part of the config).
    :raises ValueError: for invalid options or a model that cannot be loaded.
    """

    name = "faiss"
    options = ("model", "max_length", "fields", "index", "hnsw_m", "ef_construction", "ef_search", "batch_size")
    display_name = "FAISS"

    def __init__(
        self,
        model: str | None = None,
        max_length: int | None = 512,
        fields: Sequence[str] = DEFAULT_FIELDS,
        index: str = "flat",
        hnsw_m: int = 32,
        ef_construction: int = 40,
        ef_search: int = 128,
        batch_size: int = 1024,
    ) -> None:
        if index not in INDEX_KINDS:
            raise ValueError(f"unknown FAISS index kind {index!r}; valid: {', '.join(INDEX_KINDS)}")
        for label, value in (("hnsw_m", hnsw_m), ("ef_construction", ef_construction), ("ef_search", ef_search)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{label} must be an integer >= 1, got {value!r}")
        self.fields = check_fields(fields)
        self.index_kind = index
        self.hnsw_m = hnsw_m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self.embedder = Embedder(model, max_length=max_length, batch_size=batch_size)
        self._index = build_faiss_index(np.zeros((0, self.embedder.dim), np.float32), index, hnsw_m, ef_construction)

    def config(self) -> dict[str, Any]:
        """JSON parameters: ``model``, ``max_length``, ``fields``, ``index`` and the HNSW parameters.

        :return: the config.
        """
        return {
            "model": self.embedder.spec,
            "max_length": self.embedder.max_length,
            "fields": list(self.fields),
            "index": self.index_kind,
            "hnsw_m": self.hnsw_m,
            "ef_construction": self.ef_construction,
            "ef_search": self.ef_search,
        }

    @property
    def n_docs(self) -> int:
        """Number of chunks indexed."""
        return int(self._index.ntotal)

    def build_vectors(self, vectors: np.ndarray) -> None:
        """Build from chunk vectors made by :meth:`embed_chunks` (same model, fields and ``max_length``).

        :param vectors: float32 ``(n_docs, dim)``, L2-normalised.
        :raises ValueError: if the shape does not match the model or a value is not finite.
        """
        vectors = check_vectors(vectors, self.embedder.dim)
        self._index = build_faiss_index(vectors, self.index_kind, self.hnsw_m, self.ef_construction)

    def search(self, query: str, top_n: int = 100) -> list[Hit]:
        """Rank chunks by cosine similarity through the FAISS index.

        :param query: raw issue text.
        :param top_n: maximum number of hits (``>= 1``).
        :return: at most ``top_n`` hits with score ``> 0``, best first, ties by chunk order; never an id ``-1``.
        :raises ValueError: if ``top_n < 1``.
        """
        check_top_n(top_n)
        if self.n_docs == 0:
            return []
        if self.index_kind == "hnsw":
            self._index.hnsw.efSearch = max(self.ef_search, int(top_n))
        q = self.embedder.encode([query], labels=["the query"])[0]
        return faiss_search(self._index, q, top_n)

    def state(self) -> RetrieverState:
        """The index as ``index.faiss`` (``faiss.serialize_index`` bytes), with the model's ``dim`` and fingerprint.

        :return: the state.
        """
        import faiss

        return RetrieverState({_INDEX_FILE: faiss.serialize_index(self._index).tobytes()}, self._model_facts())

    @classmethod
    def from_state(
        cls,
        config: Mapping[str, Any],
        n_docs: int,
        state: RetrieverState,
        parts: Sequence[Retriever] = (),
        model: str | None = None,
    ) -> FaissRetriever:
        """Rebuild from :meth:`state`; the model is loaded (or taken from the cache) and checked.

        The model is ``model`` if given, else the recorded spec (see :func:`retrievers.potion.model_for_index`);
        its fingerprint must match the recorded one.

        :param config: the saved config.
        :param n_docs: the saved number of chunks.
        :param state: the saved state.
        :param parts: unused (FAISS has no parts).
        :param model: the model to load the index with (hub id or local path), or ``None``.
        :return: the retriever.
        :raises InvalidStateError: naming the file, for a bad config or FAISS index, or a model other than the one
            the index was built with.
        :raises FileNotFoundError: if the model is a path that does not exist.
        :raises ValueError: if the model cannot be loaded.
        """
        import faiss

        self = cls._from_config(config, state.extra, model)
        blob = state.get(_INDEX_FILE, bytes)
        try:
            index = faiss.deserialize_index(np.frombuffer(blob, dtype=np.uint8))
        except RuntimeError as exc:  # faiss reports every read failure as RuntimeError
            raise InvalidStateError(_INDEX_FILE, f"not a readable FAISS index ({str(exc).splitlines()[0]})") from None
        expected_type = faiss.IndexFlatIP if self.index_kind == "flat" else faiss.IndexHNSWFlat
        if not isinstance(index, expected_type) or index.metric_type != faiss.METRIC_INNER_PRODUCT:
            raise InvalidStateError(
                _INDEX_FILE, f"holds a {type(index).__name__}, expected an inner-product {self.index_kind} index"
            )
        if index.ntotal != n_docs or index.d != self.embedder.dim:
            raise InvalidStateError(
                _INDEX_FILE, f"{index.ntotal} vectors of dim {index.d}, expected {n_docs} of dim {self.embedder.dim}"
            )
        self._index = index
        return self
