"""Dense retrieval with a model2vec static embedding model (Potion), and the embedding code FAISS shares.

**Model.** ``model`` is a Hugging Face hub id or a local model2vec directory. When building, it is resolved
as: the ``model`` argument, else the environment variable ``SWE_EXPLORE_POTION_MODEL``, else
:data:`DEFAULT_EMBEDDING_MODEL` (``minishlab/potion-base-8M``). A local directory is loaded directly; a hub id is loaded
from the Hugging Face cache or the hub (``force_download=False``). When neither works (e.g. offline) the
error says to pass ``--model PATH``. Loaded models are cached per process. The index records the model spec,
its dimension and a fingerprint (SHA-256 of the embedding matrix and the tokenizer JSON). When loading, the
model is the ``model`` argument of ``from_state`` (``load_retriever(..., model=)``), else the recorded spec;
``SWE_EXPLORE_POTION_MODEL`` is used only when the recorded spec cannot be loaded here (e.g. the index was built
on another machine), so the variable never overrides a model the caller names. A model whose fingerprint differs
from the recorded one raises :class:`~retrievers.base.InvalidStateError` (a stale index; the index store reports
it as a corrupt ``retriever.json``).

**Long chunks.** model2vec embeds a text as the mean of its token vectors. ``max_length`` (tokens,
default 512 like ``StaticModel.encode``) truncates each chunk and the query before averaging, so the tail of a
chunk longer than 512 tokens does not count; ``max_length=None`` averages every token. The default was chosen
by measurement on the dev set (``docs/retrievers.md``): over 80/20 line windows (about 880 tokens on average)
truncation found a core file in the top-5 windows for 9 of 23 issues against 6 of 23 without it (plausibly
because a mean over more tokens drifts towards the same generic "code" direction), and it costs less (the text is cut to
``512 * median token length`` characters before tokenizing). ``tests/test_potion.py`` shows both behaviours on
a chunk whose only matching word is its 601st token.

**Speed.** Token ids come from :class:`retrievers.wordcache.WordCacheEncoder`: for BERT-style tokenizers
(potion-base-8M) the model runs once per distinct word instead of once per occurrence, with the very same
ids (0.5 s instead of 1.3-4 s for the chunks of pydata__xarray-7393 on one core). The chunk vectors are the
``vectors`` feature of :mod:`retrievers.features`, so a Potion and a FAISS retriever of the same model,
``max_length`` and fields built in one call embed the snapshot once.

**Vectors.** Float32, L2-normalised; scores are cosine similarities (dot products). A text without any
model token (an empty chunk) has the zero vector, so its score is 0 and it is never returned. A NaN in a
vector means a broken model and raises :class:`ValueError` naming the chunk.

**Persistence.** The state (:meth:`PotionRetriever.state`) is ``vectors.npy`` (float32, ``(n_docs, dim)``) plus
``dim`` and ``model_fingerprint``, which :mod:`indexes.files` records in ``retriever.json`` next to the config.
"""

from __future__ import annotations

import hashlib
import os
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from swe_explore.chunking.types import Chunk
from swe_explore.retrievers.base import FeatureSpec, InvalidStateError, Retriever, RetrieverState
from swe_explore.retrievers.common import DEFAULT_FIELDS, check_fields, document_text
from swe_explore.retrievers.wordcache import WordCacheEncoder

if TYPE_CHECKING:
    from model2vec import StaticModel

__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "MODEL_ENV_VAR",
    "Embedder",
    "EmbeddingRetriever",
    "ModelUnavailableError",
    "PotionRetriever",
    "check_vectors",
    "embed_chunks",
    "load_embedding_model",
    "model_fingerprint",
    "model_for_index",
    "resolve_model_spec",
]


class ModelUnavailableError(ValueError):
    """A Potion model named by a hub id cannot be loaded (the hub is unreachable or does not have it): an
    operational failure (exit status 1 under :mod:`swe_explore.commands._errors`), not a bad flag."""


#: Hub id of the default model.
DEFAULT_EMBEDDING_MODEL = "minishlab/potion-base-8M"
#: Environment variable naming the model (path or hub id) when no ``model`` argument is given.
MODEL_ENV_VAR = "SWE_EXPLORE_POTION_MODEL"

#: Old spellings (still importable, with a DeprecationWarning).
_RENAMED = {"DEFAULT_MODEL": "DEFAULT_EMBEDDING_MODEL", "load_model": "load_embedding_model"}

if not TYPE_CHECKING:  # a type checker flags the old spellings

    def __getattr__(name: str) -> Any:
        from swe_explore.deprecation import renamed_attribute

        return renamed_attribute(__name__, name, _RENAMED, globals())


_VECTORS_FILE = "vectors.npy"
_MODEL_CACHE: dict[str, tuple[StaticModel, str]] = {}


def resolve_model_spec(model: str | os.PathLike[str] | None = None) -> str:
    """The model to build with: ``model``, else ``$SWE_EXPLORE_POTION_MODEL``, else :data:`DEFAULT_EMBEDDING_MODEL`.

    An explicit ``model`` always wins over the environment variable.

    :param model: a hub id or local path, or ``None``.
    :return: the model spec as a string.
    """
    if model is not None and str(model):
        return str(model)
    return os.environ.get(MODEL_ENV_VAR) or DEFAULT_EMBEDDING_MODEL


def model_fingerprint(model: StaticModel) -> str:
    """SHA-256 of a model's embedding matrix (dtype, shape, bytes) and tokenizer JSON.

    :param model: a loaded model.
    :return: hex digest identifying the model's weights and vocabulary.
    """
    h = hashlib.sha256()
    emb = np.ascontiguousarray(model.embedding)
    h.update(f"{emb.dtype.str}{emb.shape}".encode())
    h.update(emb.tobytes())
    h.update(model.tokenizer.to_str().encode("utf-8"))
    return h.hexdigest()


def _cache_key(spec: str) -> str:
    """The key a model is cached under: the resolved path of a local directory (or of a path-looking spec), else
    the hub id."""
    path = Path(spec).expanduser()
    return str(path.resolve()) if path.exists() or spec.startswith(("/", ".", "~")) else spec


def load_embedding_model(spec: str | os.PathLike[str]) -> tuple[StaticModel, str]:
    """Load a model2vec model (cached per process, per resolved path or hub id) and its fingerprint: the one
    loader of every Potion model (the retriever's and the reference baseline's).

    :param spec: a local model directory or a hub id (see :func:`resolve_model_spec`).
    :return: ``(model, fingerprint)``.
    :raises FileNotFoundError: if ``spec`` looks like a path (starts with ``/``, ``.`` or ``~``) but does not exist.
    :raises ValueError: if a local directory is not a loadable model.
    :raises ModelUnavailableError: (a ``ValueError``) if a hub id cannot be loaded, e.g. while the hub is
        unreachable; the message names the model and ``--model PATH`` / ``$SWE_EXPLORE_POTION_MODEL``.
    """
    spec = str(spec)
    key = _cache_key(spec)
    cached = _MODEL_CACHE.get(key)
    if cached is not None:
        return cached
    from model2vec import StaticModel

    path = Path(spec).expanduser()
    if path.exists():
        try:
            model = StaticModel.from_pretrained(path, force_download=False)
        except Exception as exc:  # model2vec/safetensors/tokenizers raise assorted types
            raise ValueError(f"{path}: not a loadable model2vec model directory ({exc})") from exc
    elif spec.startswith(("/", ".", "~")):
        raise FileNotFoundError(f"{spec}: Potion model directory does not exist; pass --model PATH")
    else:
        try:
            model = StaticModel.from_pretrained(spec, force_download=False)
        except Exception as exc:  # hub errors: offline, unknown repo, ...
            raise ModelUnavailableError(
                f"could not load Potion model {spec!r}: it is not a local directory and the Hugging Face hub "
                f"is unreachable or does not have it ({type(exc).__name__}); pass --model PATH (a local "
                f"model2vec directory) or set {MODEL_ENV_VAR}"
            ) from exc
    result = (model, model_fingerprint(model))
    _MODEL_CACHE[key] = result
    return result


_TOKENIZER_CACHE: dict[str, Any] = {}


def _untruncated_tokenizer(model: StaticModel, fingerprint: str) -> Any:
    """A private copy of the model's tokenizer without truncation or padding (cached per model fingerprint).

    :class:`~model2vec.StaticModel` switches its own tokenizer's truncation on and off inside ``encode``; a copy
    keeps our encoding free of that shared state.

    :param model: the model.
    :param fingerprint: its :func:`model_fingerprint`.
    :return: a ``tokenizers.Tokenizer``.
    """
    tok = _TOKENIZER_CACHE.get(fingerprint)
    if tok is None:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_str(model.tokenizer.to_str())
        tok.no_truncation()
        tok.no_padding()
        _TOKENIZER_CACHE[fingerprint] = tok
    return tok


_ENCODER_CACHE: dict[str, WordCacheEncoder] = {}


def _word_cache_encoder(model: StaticModel, fingerprint: str) -> WordCacheEncoder:
    """The token-id encoder of a model (cached per model fingerprint, with its word cache).

    :param model: the model.
    :param fingerprint: its :func:`model_fingerprint`.
    :return: a :class:`~retrievers.wordcache.WordCacheEncoder` over the untruncated tokenizer.
    """
    encoder = _ENCODER_CACHE.get(fingerprint)
    if encoder is None:
        encoder = _ENCODER_CACHE[fingerprint] = WordCacheEncoder(_untruncated_tokenizer(model, fingerprint))
    return encoder


class Embedder:
    """Turns texts into L2-normalised float32 vectors with a model2vec model (shared by Potion and FAISS).

    A text's vector is the mean of its token vectors, as ``StaticModel.encode`` computes it: the text is cut to
    ``max_length * median token length`` characters, tokenized without special tokens, cut to ``max_length``
    tokens, unknown tokens are dropped, and the remaining token vectors are averaged. For plain models (no
    vocabulary quantization or token weights, e.g. potion-base-8M) the mean is computed here as a sparse
    token-count matrix times the embedding matrix: the same vectors (to float32 rounding) without
    model2vec's per-length buckets, which hold ``batch x max_length x dim`` floats (762 MB peak instead of
    294 MB on xarray with ``max_length=512``). Other models go through ``StaticModel.encode``.

    :param model: hub id or local path; see :func:`resolve_model_spec`.
    :param max_length: tokens per text before truncation (default 512, the library's); ``None`` embeds every token.
    :param batch_size: texts tokenized per batch.
    :raises ValueError: for ``max_length < 1`` or ``batch_size < 1``, or if the model cannot be loaded.
    """

    def __init__(self, model: str | None = None, max_length: int | None = 512, batch_size: int = 1024) -> None:
        if max_length is not None and (
            not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 1
        ):
            raise ValueError(f"max_length must be None or an integer >= 1, got {max_length!r}")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
        self.spec = resolve_model_spec(model)
        self.max_length = max_length
        self.batch_size = batch_size
        self.model, self.fingerprint = load_embedding_model(self.spec)
        plain = self.model.token_mapping is None and self.model.weights is None
        self._fast = plain and np.issubdtype(self.model.embedding.dtype, np.floating)

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return int(self.model.dim)

    def _mean_vectors(self, texts: list[str]) -> np.ndarray:
        """Mean token vector of each text (the fast path of the class docstring).

        :param texts: the texts.
        :return: float32 ``(len(texts), dim)``; zero rows for texts without a known token.
        """
        import scipy.sparse as sp

        model = self.model
        encoder = _word_cache_encoder(model, self.fingerprint)
        unk = model.unk_token_id
        emb = model.embedding
        ml = self.max_length
        if ml is not None:
            cut = ml * model.median_token_length
            texts = [t[:cut] for t in texts]
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            rows, flat = encoder.encode(batch, ml)
            if unk is not None:
                keep = flat != unk
                flat, rows = flat[keep], rows[keep]
            counts = sp.csr_matrix(
                (np.ones(flat.size, dtype=emb.dtype), (rows, flat)), shape=(len(batch), emb.shape[0])
            )
            sums = np.asarray(counts @ emb, dtype=np.float32)
            n_tokens = np.bincount(rows, minlength=len(batch)).astype(np.float32)
            out[start : start + len(batch)] = sums / np.maximum(n_tokens, 1.0)[:, None]
        return out

    def encode(self, texts: Sequence[str], labels: Sequence[str] | None = None) -> np.ndarray:
        """Embed texts: mean of token vectors, then L2 normalisation (zero vectors stay zero).

        :param texts: the texts.
        :param labels: names for error messages (e.g. chunk locations), one per text; defaults to positions.
        :return: float32 array of shape ``(len(texts), dim)``, rows of norm 1 or 0.
        :raises ValueError: if the model produces a NaN or infinite value, naming the first bad text.
        """
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._fast:
            vecs = self._mean_vectors(list(texts))
        else:
            vecs = self.model.encode(
                list(texts), max_length=self.max_length, normalize=False, batch_size=self.batch_size
            )
            vecs = np.asarray(vecs, dtype=np.float32).reshape(len(texts), -1)
        bad = ~np.isfinite(vecs).all(axis=1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            label = labels[i] if labels is not None else f"text {i}"
            raise ValueError(
                f"Potion model {self.spec!r} produced NaN/inf in {int(bad.sum())} vector(s), first for {label}; "
                "the model weights are broken"
            )
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        np.divide(vecs, norms, out=vecs, where=norms > 0)
        return vecs


_E = TypeVar("_E", bound="EmbeddingRetriever")


class EmbeddingRetriever(Retriever):
    """Base of the retrievers built from the shared ``vectors`` feature (Potion and FAISS).

    It supplies the feature methods (:meth:`feature_specs`, :meth:`compute_feature`,
    :meth:`build_from_features`), :meth:`build` and :meth:`embed_chunks`, and the model steps of ``state`` and
    ``from_state`` (:meth:`_model_facts`, :meth:`_from_config`). A subclass sets ``embedder`` and ``fields`` in
    its ``__init__``, names itself in :attr:`display_name`, and implements :meth:`build_vectors` (what it makes
    of the vectors) and the rest of the :class:`~retrievers.base.Retriever` contract.
    """

    #: The retriever's name in error messages (``"Potion"``, ``"FAISS"``).
    display_name: ClassVar[str]
    #: The model that embeds chunks and queries.
    embedder: Embedder
    #: Chunk fields of the document text (:func:`~retrievers.common.document_text`).
    fields: tuple[str, ...]

    def embed_chunks(self, chunks: Sequence[Chunk]) -> np.ndarray:
        """Vectors of the chunks' document texts (shareable with a Potion or FAISS retriever of the same model,
        ``max_length`` and fields).

        :param chunks: the chunks.
        :return: float32 ``(len(chunks), dim)``, L2-normalised rows (zero rows for token-less chunks).
        :raises ValueError: if the model produces a NaN vector (names the chunk).
        """
        return embed_chunks(self.embedder, chunks, self.fields)

    def build(self, chunks: Sequence[Chunk]) -> None:
        """Embed the chunks' document texts and build from the vectors (:meth:`build_vectors`).

        :param chunks: the snapshot's chunks, in index order.
        :raises ValueError: if the model produces a NaN vector (names the chunk).
        """
        self.build_vectors(self.embed_chunks(chunks))

    def feature_specs(self) -> dict[str, FeatureSpec]:
        """The shared feature this retriever builds from: ``vectors`` of this model (by weight fingerprint),
        ``max_length`` and fields; Potion and FAISS retrievers with the same three embed a snapshot once.

        :return: ``{"vectors": spec}``.
        """
        return {"vectors": _vectors_feature(self.embedder, self.fields)}

    def compute_feature(self, name: str, chunks: Sequence[Chunk]) -> np.ndarray:
        """Compute the ``vectors`` feature: :meth:`embed_chunks`.

        :param name: ``"vectors"``.
        :param chunks: the chunks.
        :return: float32 ``(len(chunks), dim)``, L2-normalised rows.
        :raises ValueError: for another name, or a NaN vector (names the chunk).
        """
        if name != "vectors":
            raise ValueError(f"{self.display_name} has no feature {name!r}; it has 'vectors'")
        return self.embed_chunks(chunks)

    def build_from_features(self, values: Mapping[str, Any]) -> None:
        """Build from the ``vectors`` feature (read, never modified).

        :param values: ``{"vectors": array}``.
        :raises ValueError: if the feature is missing or has the wrong shape or non-finite values.
        """
        if "vectors" not in values:
            raise ValueError(f"{self.display_name} builds from {{'vectors': array}}, got {sorted(values)}")
        self.build_vectors(values["vectors"])

    @abstractmethod
    def build_vectors(self, vectors: np.ndarray) -> None:
        """Build from chunk vectors made by :meth:`embed_chunks` (same model, fields and ``max_length``).

        :param vectors: float32 ``(n_docs, dim)``, L2-normalised; check them with :func:`check_vectors`.
        :raises ValueError: if the shape does not match the model or a value is not finite.
        """

    def _model_facts(self) -> dict[str, Any]:
        """Model facts recorded next to the config (what :func:`_check_index_model` checks on load).

        :return: ``{"dim": ..., "model_fingerprint": ...}``.
        """
        return {"dim": self.embedder.dim, "model_fingerprint": self.embedder.fingerprint}

    @classmethod
    def _from_config(cls: type[_E], config: Mapping[str, Any], extra: Mapping[str, Any], model: str | None) -> _E:
        """The model steps of ``from_state``: instantiate with the model (:func:`model_for_index`) and refuse a
        model other than the recorded one (:func:`_check_index_model`).

        :param config: the saved config.
        :param extra: the saved model facts (``dim``, ``model_fingerprint``).
        :param model: the model to load the index with (hub id or local path), or ``None``.
        :return: the retriever without its index.
        :raises InvalidStateError: if the config is invalid or the model is not the one the index was built with.
        :raises FileNotFoundError: if the model is a path that does not exist.
        :raises ValueError: if the model cannot be loaded.
        """
        config = dict(config)
        config["model"] = model_for_index(config, model)
        try:
            self = cls(**config)
        except (TypeError, ValueError) as exc:
            raise InvalidStateError(None, f"invalid config ({exc})") from None
        _check_index_model(self.embedder, config, extra)
        return self


class PotionRetriever(EmbeddingRetriever):
    """Cosine similarity between the query's and the chunks' Potion vectors (brute force, exact).

    :param model: hub id or local path of a model2vec model; see :func:`resolve_model_spec`.
    :param max_length: tokens per text before truncation (default 512); ``None`` embeds every token
        (docs/retrievers.md, 'Potion').
    :param fields: chunk fields of the document text (:func:`~retrievers.common.document_text`).
    :param batch_size: texts per ``encode`` batch (speed only; not part of the config).
    :raises ValueError: for invalid options or a model that cannot be loaded.
    """

    name = "potion"
    options = ("model", "max_length", "fields", "batch_size")
    display_name = "Potion"

    def __init__(
        self,
        model: str | None = None,
        max_length: int | None = 512,
        fields: Sequence[str] = DEFAULT_FIELDS,
        batch_size: int = 1024,
    ) -> None:
        self.fields = check_fields(fields)
        self.embedder = Embedder(model, max_length=max_length, batch_size=batch_size)
        self._vectors = np.zeros((0, self.embedder.dim), dtype=np.float32)

    def config(self) -> dict[str, Any]:
        """JSON parameters: ``model`` (the resolved spec), ``max_length`` and ``fields``.

        :return: the config.
        """
        return {"model": self.embedder.spec, "max_length": self.embedder.max_length, "fields": list(self.fields)}

    @property
    def n_docs(self) -> int:
        """Number of chunks indexed."""
        return int(self._vectors.shape[0])

    def build_vectors(self, vectors: np.ndarray) -> None:
        """Build from chunk vectors made by :meth:`embed_chunks` (same model, fields and ``max_length``).

        :param vectors: float32 ``(n_docs, dim)``, L2-normalised.
        :raises ValueError: if the shape does not match the model or a value is not finite.
        """
        self._vectors = check_vectors(vectors, self.embedder.dim)

    def scores(self, query: str) -> np.ndarray:
        """Cosine similarity of the query with every chunk.

        :param query: raw issue text.
        :return: float32 array of shape ``(n_docs,)``.
        """
        if self.n_docs == 0:
            return np.zeros(0, dtype=np.float32)
        q = self.embedder.encode([query], labels=["the query"])[0]
        # einsum, not ``@``: a matrix-vector product through multi-threaded OpenBLAS measured 8 ms instead of
        # 0.1 ms on 2 cores while the tokenizer's threads were still spinning (docs/retrievers.md).
        scores: np.ndarray = np.einsum("ij,j->i", self._vectors, q)
        return scores

    def state(self) -> RetrieverState:
        """The index as ``vectors.npy`` (float32 ``(n_docs, dim)``), with the model's ``dim`` and fingerprint.

        :return: the state.
        """
        return RetrieverState({_VECTORS_FILE: self._vectors}, self._model_facts())

    @classmethod
    def from_state(
        cls,
        config: Mapping[str, Any],
        n_docs: int,
        state: RetrieverState,
        parts: Sequence[Retriever] = (),
        model: str | None = None,
    ) -> PotionRetriever:
        """Rebuild from :meth:`state`; the model is loaded (or taken from the cache) and checked.

        The model is ``model`` if given, else the recorded spec (``$SWE_EXPLORE_POTION_MODEL`` only when the
        recorded spec cannot be loaded here); see :func:`model_for_index`. Its fingerprint must match the
        recorded one.

        :param config: the saved config.
        :param n_docs: the saved number of chunks.
        :param state: the saved state.
        :param parts: unused (Potion has no parts).
        :param model: the model to load the index with (hub id or local path), or ``None``.
        :return: the retriever.
        :raises InvalidStateError: naming the file, for a bad config or vectors array, or a model other than the
            one the index was built with.
        :raises FileNotFoundError: if the model is a path that does not exist.
        :raises ValueError: if the model cannot be loaded.
        """
        self = cls._from_config(config, state.extra, model)
        vectors = state.get(_VECTORS_FILE, np.ndarray)
        if vectors.dtype != np.float32:
            raise InvalidStateError(_VECTORS_FILE, f"dtype {vectors.dtype}, expected float32")
        if vectors.shape != (n_docs, self.embedder.dim):
            raise InvalidStateError(_VECTORS_FILE, f"shape {vectors.shape}, expected ({n_docs}, {self.embedder.dim})")
        if not np.isfinite(vectors).all():
            raise InvalidStateError(_VECTORS_FILE, "contains NaN or infinite values")
        self._vectors = vectors
        return self


def embed_chunks(embedder: Embedder, chunks: Sequence[Chunk], fields: Sequence[str]) -> np.ndarray:
    """Embed chunks' document texts, naming the chunk in errors.

    :param embedder: the embedder.
    :param chunks: the chunks.
    :param fields: chunk fields of the document text.
    :return: float32 ``(len(chunks), dim)``, L2-normalised rows.
    :raises ValueError: if the model produces a NaN vector.
    """
    return embedder.encode([document_text(c, fields) for c in chunks], labels=[c.location for c in chunks])


def _vectors_feature(embedder: Embedder, fields: Sequence[str]) -> FeatureSpec:
    """The shared ``vectors`` feature of an embedding retriever (see :mod:`retrievers.features`).

    The model enters by its weight fingerprint, not its spec, so the same model under two paths is one feature.

    :param embedder: the retriever's embedder.
    :param fields: its document fields.
    :return: the spec.
    """
    config = {"model_fingerprint": embedder.fingerprint, "max_length": embedder.max_length, "fields": list(fields)}
    return FeatureSpec.make("vectors", config)


def check_vectors(vectors: np.ndarray, dim: int) -> np.ndarray:
    """Validate chunk vectors passed in from outside (``build_vectors``).

    :param vectors: the array.
    :param dim: the model's dimension.
    :return: the vectors as a C-contiguous float32 array.
    :raises ValueError: for another shape, or NaN/infinite values.
    """
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[1] != dim:
        raise ValueError(f"vectors must have shape (n_docs, {dim}), got {vectors.shape}")
    if not np.isfinite(vectors).all():
        raise ValueError("vectors contain NaN or infinite values")
    return vectors


def model_for_index(config: Mapping[str, Any], model: str | None = None) -> str:
    """The model to load a saved embedding index with: the caller's, else the recorded one, else the fallback.

    The model is, in this order: ``model`` (the caller's explicit choice), else the spec recorded in the config;
    only if the recorded spec cannot be loaded here (a path that does not exist on this machine, an unreachable
    hub id) and ``$SWE_EXPLORE_POTION_MODEL`` names another model, that one. The chosen model is loaded (and
    cached); the caller checks its fingerprint against the recorded one (:func:`_check_index_model`).

    :param config: the saved config of a Potion or FAISS retriever.
    :param model: the model to use (hub id or local path), or ``None`` for the recorded one.
    :return: the model spec to use.
    :raises InvalidStateError: if the config lacks the model spec.
    :raises FileNotFoundError: if the chosen model is a path that does not exist.
    :raises ValueError: if the chosen model cannot be loaded.
    """
    recorded = config.get("model")
    if not isinstance(recorded, str) or not recorded:
        raise InvalidStateError(None, "config lacks the model spec")
    if model is not None and str(model):
        spec = str(model)
    else:
        spec = recorded
        fallback = os.environ.get(MODEL_ENV_VAR)
        if fallback and fallback != spec:
            try:
                load_embedding_model(spec)
            except (FileNotFoundError, ValueError):
                spec = fallback  # the recorded model is not available here; the fingerprint check still applies
    load_embedding_model(spec)  # a model that cannot be loaded is the caller's problem, not a corrupt index
    return spec


def _check_index_model(embedder: Embedder, config: Mapping[str, Any], extra: Mapping[str, Any]) -> None:
    """Refuse an index built with another model.

    :param embedder: the loaded embedder.
    :param config: the saved config (for the recorded model spec in messages).
    :param extra: the saved model facts, ``{"dim", "model_fingerprint"}``.
    :raises InvalidStateError: if ``dim``/``model_fingerprint`` are missing, or differ from the loaded model's (a
        stale index: passing the original model, or rebuilding the index, is the fix).
    """
    dim, fingerprint = extra.get("dim"), extra.get("model_fingerprint")
    if not isinstance(dim, int) or not isinstance(fingerprint, str):
        raise InvalidStateError(None, "dim/model_fingerprint missing")
    if fingerprint != embedder.fingerprint or dim != embedder.dim:
        raise InvalidStateError(
            None,
            f"index built with model {config.get('model')!r} (dim {dim}, fingerprint {fingerprint[:12]}), but "
            f"{embedder.spec!r} is dim {embedder.dim}, fingerprint {embedder.fingerprint[:12]}: the index is "
            "stale for this model (pass the model it was built with)",
        )
