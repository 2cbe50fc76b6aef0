"""The whole retriever contract: build, search, share features, compose, and hand over a state to persist.

A retriever never touches files: :meth:`Retriever.state` gives its index as in-memory values keyed by file name
and :meth:`Retriever.from_state` rebuilds it from them; :mod:`indexes.files` does every read and write (JSON,
``.npy``, ``.npz``, raw bytes), the checksums and the atomic directories.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple, TypeVar

import numpy as np

from swe_explore.chunking.types import Chunk

__all__ = ["FeatureSpec", "Hit", "InvalidStateError", "Retriever", "RetrieverState", "check_top_n", "top_hits"]

_T = TypeVar("_T")


class Hit(NamedTuple):
    """One search result: the chunk's position in the index's chunk list and its score (higher is better)."""

    index: int  # type: ignore[assignment]  # the field shadows tuple.index, which no caller uses
    score: float


@dataclass(frozen=True)
class FeatureSpec:
    """Identifies one shared feature: its kind and the canonical JSON of everything that determines its value.

    Two retrievers whose :meth:`Retriever.feature_specs` hold equal specs share one computed value (see
    :func:`retrievers.features.build_retrievers`).

    :param kind: e.g. ``"term_counts"`` or ``"vectors"``.
    :param config: canonical JSON (sorted keys, no spaces); build it with :meth:`make`.
    """

    kind: str
    config: str

    @classmethod
    def make(cls, kind: str, config: Mapping[str, Any]) -> FeatureSpec:
        """A spec from a JSON-serialisable config (canonicalised, so equal configs give equal specs).

        :param kind: the feature kind.
        :param config: what determines the value (tokenizer config, fields, model fingerprint, ...).
        :return: the spec.
        """
        return cls(kind, json.dumps(config, sort_keys=True, separators=(",", ":")))


class InvalidStateError(ValueError):
    """A saved state that cannot be this retriever's index: wrong array type, shape or dtype, bad config, or an
    embedding index built with another model.

    The index store turns it into ``CorruptIndexError(<index directory>/<file or retriever.json>, reason)``.

    :param file: the state file at fault (e.g. ``"tf.npz"``), or ``None`` for the config and extra facts
        (``retriever.json``).
    :param reason: what is wrong.
    """

    def __init__(self, file: str | None, reason: str) -> None:
        self.file = file
        self.reason = reason
        super().__init__(f"{file or 'retriever.json'}: {reason}")


@dataclass
class RetrieverState:
    """A retriever's index as values, for :mod:`indexes.files` to write and read back.

    :param files: file name -> value; the extension says how it is stored: ``.npy`` a numpy array
        (``np.save``, no pickle), ``.npz`` a scipy CSR/CSC matrix, ``.json`` a list of strings (a vocabulary,
        one term per line), anything else ``bytes`` written as they are (e.g. ``index.faiss``).
    :param extra: more JSON facts recorded in ``retriever.json`` next to the config (e.g. an embedding model's
        ``dim`` and ``model_fingerprint``).
    """

    files: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def get(self, name: str, kind: type[_T] | tuple[type, ...]) -> _T:
        """One file's value, checked to be of the expected type.

        :param name: the file name.
        :param kind: the expected type(s) (e.g. ``np.ndarray``, ``list``, ``bytes``).
        :return: the value.
        :raises InvalidStateError: naming the file if it is absent or of another type.
        """
        if name not in self.files:
            raise InvalidStateError(name, "file is not among the index's files")
        value = self.files[name]
        if not isinstance(value, kind):
            raise InvalidStateError(name, f"holds a {type(value).__name__}, expected {kind}")
        return value  # type: ignore[return-value]


def check_top_n(top_n: int) -> None:
    """Validate the ``top_n`` argument of :meth:`Retriever.search`.

    :param top_n: requested number of hits.
    :raises ValueError: if ``top_n`` is not an integer ``>= 1``.
    """
    if isinstance(top_n, bool) or not isinstance(top_n, (int, np.integer)) or top_n < 1:
        raise ValueError(f"top_n must be an integer >= 1, got {top_n!r}")


def top_hits(scores: np.ndarray, top_n: int) -> list[Hit]:
    """The ``top_n`` best positive scores, best first, ties broken by lower index (the retriever contract).

    Runs in ``O(n + m log m)`` for ``n`` scores and ``m`` kept candidates (``np.argpartition`` first). NaN and
    scores ``<= 0`` are never returned.

    :param scores: one score per chunk, shape ``(n_docs,)``.
    :param top_n: maximum number of hits (``>= 1``).
    :return: the hits.
    :raises ValueError: if ``top_n < 1``.
    """
    check_top_n(top_n)
    scores = np.asarray(scores)
    idx = np.flatnonzero(scores > 0)
    if idx.size > top_n:
        vals = scores[idx]
        kth = np.partition(vals, idx.size - top_n)[idx.size - top_n]  # the top_n-th largest value
        idx = idx[vals >= kth]
    order = np.lexsort((idx, -scores[idx]))[:top_n]
    return [Hit(int(i), float(scores[i])) for i in idx[order]]


class Retriever(ABC):
    """Ranks the chunks of one snapshot for a query.

    A retriever never sees files or regions: it maps a query to chunk positions ``0..n_docs-1`` in the order of
    the chunk list it was built from. Results are sorted by score, descending; ties keep chunk order (lower index
    first), so every ranking is deterministic.

    Subclasses set :attr:`name` and :attr:`options` and implement :meth:`config`, :attr:`n_docs`, :meth:`build`,
    :meth:`state`, :meth:`from_state` and one of :meth:`scores` and :meth:`search`, each derived here from the
    other: a retriever that scores every chunk anyway (BM25, TF-IDF, Potion) implements :meth:`scores`, one
    that does not (FAISS's nearest neighbours, the hybrid's fusion of its parts' rankings) :meth:`search`.
    Optional parts of the contract, with defaults here:

    - shared features (:meth:`feature_specs`, :meth:`compute_feature`, :meth:`build_from_features`): a retriever
      whose :meth:`feature_specs` is ``None`` is built with :meth:`build`;
    - composition (:meth:`parts`, :meth:`part_count`): a composite retriever (the hybrid) is made of other
      retrievers, which are persisted in their own directories and handed back to :meth:`from_state`.
    """

    #: Registry name (``"bm25"``, ...); also recorded in ``retriever.json``.
    name: ClassVar[str]
    #: The keyword options :func:`retrievers.registry.make_retriever` accepts for this retriever, in order.
    options: ClassVar[tuple[str, ...]]

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """JSON-serialisable parameters that, with ``name``, identify the retriever's index."""

    @property
    @abstractmethod
    def n_docs(self) -> int:
        """Number of chunks the retriever was built from."""

    @abstractmethod
    def build(self, chunks: Sequence[Chunk]) -> None:
        """Index the chunks (their ``text``, ``path`` and ``symbol``).

        :param chunks: the snapshot's chunks, in index order.
        """

    def search(self, query: str, top_n: int = 100) -> list[Hit]:
        """Rank chunks for a query.

        The default takes the ``top_n`` best positive :meth:`scores` (:func:`top_hits`: ties by chunk order).

        :param query: raw issue text.
        :param top_n: maximum number of hits (``>= 1``).
        :return: at most ``top_n`` hits, best first; ``[]`` when the query has no usable token or the index is
            empty. Chunks with a score ``<= 0`` are never returned.
        :raises ValueError: if ``top_n < 1``.
        :raises NotImplementedError: if the subclass implements neither :meth:`search` nor :meth:`scores`.
        """
        check_top_n(top_n)
        if type(self).scores is Retriever.scores:
            raise NotImplementedError(f"{type(self).__name__} implements neither search nor scores")
        return top_hits(self.scores(query), top_n)

    def scores(self, query: str) -> np.ndarray:
        """The score of every chunk for a query (what a learned ranker reads as features).

        The default ranks every chunk with :meth:`search` and leaves 0 for the chunks it does not return.

        :param query: raw issue text.
        :return: float array of shape ``(n_docs,)``; higher is better, ``<= 0`` means no match.
        :raises NotImplementedError: if the subclass implements neither :meth:`search` nor :meth:`scores`.
        """
        if type(self).search is Retriever.search:
            raise NotImplementedError(f"{type(self).__name__} implements neither search nor scores")
        out = np.zeros(self.n_docs, dtype=np.float64)
        if self.n_docs:
            for hit in self.search(query, self.n_docs):
                out[hit.index] = hit.score
        return out

    # Shared features -------------------------------------------------------------------------------------------

    def feature_specs(self) -> dict[str, FeatureSpec] | None:
        """The features the retriever builds from, by a local name; ``None`` (the default): built with
        :meth:`build`.

        :return: local name -> spec, or ``None``.
        """
        return None

    def compute_feature(self, name: str, chunks: Sequence[Chunk]) -> Any:
        """Compute the feature ``name`` of :meth:`feature_specs` for the chunks.

        :param name: a local feature name.
        :param chunks: the chunks, in index order.
        :return: the value (shared with other retrievers: treated as read-only).
        :raises ValueError: for a name :meth:`feature_specs` does not declare (always, by default).
        """
        raise ValueError(f"{type(self).__name__} shares no features; it has no feature {name!r}")

    def build_from_features(self, values: Mapping[str, Any]) -> None:
        """Build the index from ``{name: value}`` for every name of :meth:`feature_specs`.

        :param values: the feature values (read, never modified).
        :raises NotImplementedError: if the retriever shares no features (the default).
        """
        raise NotImplementedError(f"{type(self).__name__} shares no features; build it with build(chunks)")

    # Composition -----------------------------------------------------------------------------------------------

    def parts(self) -> list[Retriever]:
        """The retrievers this one is made of, in order (the hybrid's parts); ``[]`` (the default) for a plain one.

        :return: the part retrievers.
        """
        return []

    @classmethod
    def part_count(cls, config: Mapping[str, Any]) -> int:
        """How many parts a saved index of this class with this config has (``0`` by default).

        :param config: the ``config`` recorded in ``retriever.json``.
        :return: the number of parts :meth:`from_state` expects.
        :raises InvalidStateError: if the config does not say it validly.
        """
        return 0

    # Persistence (no file IO) ----------------------------------------------------------------------------------

    @abstractmethod
    def state(self) -> RetrieverState:
        """The built index as values (see :class:`RetrieverState`); a composite's parts are not part of it.

        :return: the state.
        """

    @classmethod
    @abstractmethod
    def from_state(
        cls,
        config: Mapping[str, Any],
        n_docs: int,
        state: RetrieverState,
        parts: Sequence[Retriever] = (),
        model: str | None = None,
    ) -> Retriever:
        """Rebuild a retriever from what :meth:`state` gave, checking every value.

        :param config: the saved :meth:`config`.
        :param n_docs: the saved :attr:`n_docs`.
        :param state: the saved state, read back.
        :param parts: a composite's loaded parts (``part_count(config)`` of them), else empty.
        :param model: for embedding retrievers, the model to load the index with (hub id or local path), or
            ``None`` for the recorded one; ignored by retrievers without a model.
        :return: the retriever, ready to :meth:`search`.
        :raises InvalidStateError: for a bad array, shape, dtype, config or (embedding) model fingerprint.
        :raises FileNotFoundError: if an embedding model is a path that does not exist.
        :raises ValueError: if an embedding model cannot be loaded.
        """
