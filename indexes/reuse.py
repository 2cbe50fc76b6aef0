"""Assembling a snapshot's index from pieces stored in the content-addressed cache (:mod:`indexes.cache`).

Four kinds of pieces are reused:

- ``chunks``, per file, keyed by the file's :func:`~indexes.cache.file_digest` (path, language, size, lines)
  under the chunker config (:class:`CachingChunker`): the file's chunks (line ranges, kinds, symbols,
  languages) and its chunking report, so :func:`chunking.registry.chunk_files` computes the same chunks and
  statistics. Texts are cut from the file's lines again, as the chunkers cut them (a file whose chunk texts are
  not exactly its lines is never cached).
- ``term_counts`` and ``vectors``, per chunk, keyed by :func:`_chunk_digest` (path, kind, symbol, language and
  text: every field a document text can hold, not the line numbers) under the feature spec (tokenizer config
  and fields; model fingerprint, ``max_length`` and fields). A file that changed keeps most of its functions,
  so per-chunk keys reuse them: of the chunks of the files that changed between astropy__astropy-12907 and
  -13033, 88% had been seen before.
- ``graph_names``, per file, keyed by the file digest under the chunker config and the graph code: the symbol
  graph's per-file piece (:func:`graph_names_reusing`), each chunk's identifiers and member names and the file's
  import statements as read from its text (:func:`~indexes.graph_imports.extract_imports`). What they link to
  (definition sites, imported files) depends on the whole snapshot and is resolved per snapshot.

Why the assembled index is byte-identical to one built without the cache: both features are computed chunk by
chunk. A chunk's term counts are its own tokens counted; the snapshot's :class:`~retrievers.features.TermCounts`
is rebuilt from them as :func:`~retrievers.features.counts_from_tokens` builds it (terms sorted by code point,
the same COO → CSR construction). A chunk's vector is model2vec's mean of its own token vectors, then L2
normalisation, row by row, so stacking rows equals embedding all chunks in one call. The chunks whose pieces
are missing are computed in one call (as without the cache, so batching stays efficient), split per chunk and
stored; a text seen twice is computed once. Feature kinds other than these two are computed over all chunks.

The time ratio against ``--no-reuse`` and the hit rates are measured by ``scripts/bench_reuse.py`` and given in
``docs/benchmarks.md`` ("Content-addressed reuse").
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import pairwise
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from swe_explore.chunking.registry import Chunker
from swe_explore.chunking.types import Chunk, SourceFile
from swe_explore.chunking.window import FileReport
from swe_explore.indexes.cache import CacheNamespace, ContentCache, file_digest
from swe_explore.indexes.collector import paused_gc
from swe_explore.indexes.graph_build import ChunkNames, chunk_names
from swe_explore.indexes.graph_imports import ImportSpecs, extract_imports, specs_fit
from swe_explore.indexes.reuse_rows import join_counts, previous_rows, remember_counts
from swe_explore.retrievers.base import FeatureSpec, Retriever
from swe_explore.retrievers.features import TermCounts, build_retrievers

__all__ = [
    "CachingChunker",
    "GraphNamesLookup",
    "MissingTextError",
    "PieceMemo",
    "build_retrievers_reusing",
    "graph_names_compute",
    "graph_names_lookup",
    "graph_names_reusing",
]

#: Feature kinds assembled from per-chunk pieces; others are computed over all chunks.
REUSED_FEATURES = ("term_counts", "vectors")


class _Malformed(ValueError):
    """A cache payload that does not decode to a valid piece for this file."""


# Chunks ------------------------------------------------------------------------------------------------------------


def _encode_chunks(chunks: Sequence[Chunk], report: FileReport, source: SourceFile) -> bytes | None:
    """A file's chunks and report as JSON, or ``None`` if a chunk could not be restored from the file's lines.

    :param chunks: the chunker's output for the file.
    :param report: its report.
    :param source: the file.
    :return: the payload, or ``None`` (the file is then never cached).
    """
    rows = []
    for c in chunks:
        if c.path != source.path or c.end > len(source.lines) or c.text != "\n".join(source.lines[c.start - 1 : c.end]):
            return None
        rows.append([c.start, c.end, c.kind, c.symbol, c.language])
    return json.dumps({"chunks": rows, "report": asdict(report)}, separators=(",", ":")).encode()


def _decode_chunks(payload: bytes, source: SourceFile) -> tuple[list[Chunk], FileReport]:
    """The chunks (texts cut from the file) and report a payload of :func:`_encode_chunks` holds.

    :param payload: the payload.
    :param source: the file it was stored for.
    :return: ``(chunks, report)``.
    :raises _Malformed: if it is not a valid piece for this file.
    """
    try:
        obj = json.loads(payload)
        report = FileReport(**obj["report"])
        chunks = []
        n_lines = len(source.lines)
        for start, end, kind, symbol, language in obj["chunks"]:
            if not (isinstance(start, int) and isinstance(end, int) and 1 <= start <= end <= n_lines):
                raise _Malformed(f"line range {start}-{end} outside the file's {n_lines} lines")
            if not (isinstance(kind, str) and isinstance(symbol, str) and isinstance(language, str)):
                raise _Malformed("kind, symbol and language must be strings")
            text = "\n".join(source.lines[start - 1 : end])
            chunks.append(Chunk(source.path, start, end, kind, symbol, language, text))
    except (ValueError, KeyError, TypeError) as exc:
        raise _Malformed(str(exc)) from None
    return chunks, report


class CachingChunker(Chunker):
    """A chunker that looks each file up in the cache before chunking it, and stores what it chunks.

    It gives exactly the wrapped chunker's chunks and reports (so :func:`chunking.registry.chunk_files` computes
    the same statistics), and its :meth:`config` is the wrapped chunker's.

    :param chunker: the chunk strategy.
    :param cache: the build's cache.
    :param digests: path -> :func:`~indexes.cache.file_digest` of the walked files (computed when absent).
    """

    name: ClassVar[str] = "cached"

    def __init__(self, chunker: Chunker, cache: ContentCache, digests: Mapping[str, str]) -> None:
        self.chunker = chunker
        self.digests = digests
        self.namespace = cache.namespace("chunks", {"chunker": chunker.config()})
        self._stored: dict[str, bytes | None] | None = None

    def config(self) -> dict[str, object]:
        """The wrapped chunker's config."""
        return self.chunker.config()

    def chunk_file_report(self, source: SourceFile) -> tuple[list[Chunk], FileReport]:
        """The file's chunks and report: from the cache if stored, else from the wrapped chunker (then stored).

        :param source: the file.
        :return: ``(chunks, report)``, equal to the wrapped chunker's.
        """
        if self._stored is None:  # every file is looked up at once, on the first call
            paths = list(self.digests)
            self._stored = dict(zip(paths, self.namespace.get_many([self.digests[p] for p in paths]), strict=True))
        digest = self.digests.get(source.path)
        if digest is None:
            digest = file_digest(source)
            payload = self.namespace.get(digest)
        else:
            payload = self._stored.pop(source.path, None)
        if payload is not None:
            try:
                return _decode_chunks(payload, source)
            except _Malformed:
                self.namespace.reject()
        chunks, report = self.chunker.chunk_file_report(source)
        encoded = _encode_chunks(chunks, report, source)
        if encoded is not None:
            self.namespace.put(digest, encoded)
        return chunks, report


# Feature pieces ----------------------------------------------------------------------------------------------------


def _chunk_digest(chunk: Chunk) -> str:
    """SHA-256 of a chunk without its line numbers: path, kind, symbol, language and text.

    Every field a document text can hold (:data:`retrievers.common.FIELDS`) is in it, so two chunks with the
    same digest have the same term counts and vectors under any fields, wherever they sit in their file.

    :param chunk: the chunk, with text.
    :return: 64 hex digits.
    """
    head = f"{chunk.path}\0{chunk.kind}\0{chunk.symbol}\0{chunk.language}\0"
    return hashlib.sha256((head + chunk.text).encode("utf-8", "surrogatepass")).hexdigest()


#: One chunk's term counts: its terms joined by NUL in UTF-8, and one little-endian int32 count per term.
_Counts = tuple[bytes, bytes]


def _encode_counts(piece: _Counts) -> bytes:
    """A chunk's term counts as one payload: the joined terms, the byte 0xFF (never in UTF-8), the counts."""
    return piece[0] + b"\xff" + piece[1]


def _decode_counts(payloads: Sequence[bytes]) -> list[_Counts | None]:
    """Chunks' term counts from :func:`_encode_counts` payloads; ``None`` for a malformed one (other than one
    count per term). The terms are decoded, all at once, by :func:`_merge_counts`."""
    out: list[_Counts | None] = []
    for payload in payloads:
        cut = payload.find(b"\xff")
        text, counts = payload[:cut], payload[cut + 1 :]
        n_terms = text.count(b"\0") + 1 if text else 0
        out.append((text, counts) if cut >= 0 and len(counts) == 4 * n_terms else None)
    return out


def _split_counts(value: TermCounts) -> list[_Counts] | None:
    """Per-chunk pieces of term counts: each row's terms and counts; ``None`` if a term is empty or holds a NUL
    (it could not be told apart in a piece; no tokenizer of this toolkit makes one).

    Each row's terms are joined by Arrow (``pyarrow.compute.binary_join`` over a list view of the CSR rows, in
    C++): on astropy (26,877 chunks, 1.07M (chunk, term) pairs) 0.16 s -> 0.07 s. Terms that are not valid UTF-8
    (lone surrogates, which Arrow cannot hold) are joined in Python, giving the same bytes.
    """
    if any(not t or "\0" in t for t in value.terms):
        return None
    indptr, indices = value.counts.indptr, value.counts.indices
    data = value.counts.data.astype("<i4").tobytes()
    bounds = indptr.tolist()
    counts = [data[4 * a : 4 * b] for a, b in pairwise(bounds)]
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        terms = pa.array(value.terms, type=pa.string())
        rows = pa.ListArray.from_arrays(pa.array(indptr, type=pa.int32()), terms.take(pa.array(indices)))
        joined: list[bytes] = pc.binary_join(rows, "\0").cast(pa.binary()).to_pylist()
    except (pa.ArrowException, UnicodeError, OverflowError):
        encoded = [t.encode("utf-8", "surrogatepass") for t in value.terms]
        columns = indices.tolist()
        joined = [b"\0".join([encoded[c] for c in columns[a:b]]) for a, b in pairwise(bounds)]
    return list(zip(joined, counts, strict=True))


def _merge_counts(pieces: Sequence[_Counts]) -> TermCounts:
    """The snapshot's term counts from per-chunk pieces, built as :func:`~retrievers.features.counts_from_tokens`
    builds them: terms sorted by code point, int32 counts, duplicates summed, indices sorted.

    The pieces' terms are split and hashed by Arrow (``pyarrow.compute.split_pattern`` and
    ``dictionary_encode``, in C++) instead of one Python dictionary lookup per (chunk, term) pair: on astropy
    (26,832 chunks, 1.07M pairs, 55K terms) 0.32 s -> 0.15 s. The distinct terms are sorted as UTF-8 bytes, which
    is code-point order (also for the surrogates ``surrogatepass`` writes).

    :param pieces: one ``(terms, counts)`` payload pair per chunk, in chunk order.
    :return: the counts, one row per piece.
    :raises ValueError: if the pieces' terms are not UTF-8 or a count is below 1 (a cache entry whose checksum is
        valid but whose content is not: only a bug writes one).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    malformed = "cached term counts are malformed; delete the store's _cache/term_counts"
    joined = b"\0".join(p[0] for p in pieces if p[0])
    data = np.frombuffer(b"".join(p[1] for p in pieces), dtype="<i4").astype(np.int32)
    if joined:
        flat = pc.list_flatten(pc.split_pattern(pa.array([joined], type=pa.large_binary()), b"\0"))
        encoded = pc.dictionary_encode(flat)
        codes = encoded.indices.to_numpy()
        distinct: list[bytes] = encoded.dictionary.to_pylist()
    else:
        codes, distinct = np.zeros(0, dtype=np.int32), []
    if len(codes) != len(data) or (len(data) and data.min() < 1):
        raise ValueError(malformed)
    order = sorted(range(len(distinct)), key=distinct.__getitem__)
    column = np.empty(len(distinct), dtype=np.int64)
    column[order] = np.arange(len(distinct), dtype=np.int64)
    try:
        terms = [distinct[k].decode("utf-8", "surrogatepass") for k in order]
    except UnicodeDecodeError:
        raise ValueError(malformed) from None
    indptr = np.zeros(len(pieces) + 1, dtype=np.int64)
    np.cumsum(np.fromiter((len(p[1]) // 4 for p in pieces), dtype=np.int64, count=len(pieces)), out=indptr[1:])
    matrix = sp.csr_matrix((data, column[codes], indptr), shape=(len(pieces), len(terms)), dtype=np.int32)
    matrix.sum_duplicates()  # sorts the indices too
    return TermCounts(terms, matrix)


def _encode_vector(piece: np.ndarray) -> bytes:
    """A chunk's vector as raw little-endian float32."""
    return np.ascontiguousarray(piece, dtype="<f4").tobytes()


def _decode_vectors(payloads: Sequence[bytes]) -> list[np.ndarray | None]:
    """Chunks' vectors from :func:`_encode_vector` payloads: float32 rows of the most common length, finite;
    ``None`` for another length or a non-finite value."""
    out: list[np.ndarray | None] = [None] * len(payloads)
    if not payloads:
        return out
    size = Counter(len(p) for p in payloads).most_common(1)[0][0]
    if size == 0 or size % 4:
        return out
    good = [i for i, p in enumerate(payloads) if len(p) == size]
    rows = np.frombuffer(b"".join(payloads[i] for i in good), dtype="<f4").reshape(len(good), size // 4)
    finite = np.isfinite(rows).all(axis=1)
    for k, i in enumerate(good):
        out[i] = rows[k] if finite[k] else None
    return out


def _merge_vectors(pieces: Sequence[np.ndarray]) -> np.ndarray:
    """The snapshot's chunk vectors: the chunks' rows in order.

    :param pieces: one vector per chunk, in chunk order.
    :return: a float32 array of shape ``(len(pieces), dim)``.
    :raises ValueError: if the pieces differ in dimension (a model change the config key missed).
    """
    dims = {p.shape[-1] for p in pieces}
    if len(dims) != 1:
        raise ValueError(f"chunk vectors of different dimensions {sorted(dims)}; delete the store's _cache")
    return np.stack(pieces).astype(np.float32, copy=False)


#: kind -> (encode one piece, decode many payloads, split a computed value into pieces or None, merge pieces).
_CODECS: dict[str, tuple[Any, Any, Any, Any]] = {
    "term_counts": (_encode_counts, _decode_counts, _split_counts, _merge_counts),
    "vectors": (_encode_vector, _decode_vectors, lambda value: list(value), _merge_vectors),
}


def _reused_feature(
    retriever: Retriever, name: str, namespace: CacheNamespace, chunks: Sequence[Chunk], digests: Sequence[str]
) -> Any:
    """One shared feature of the chunks, assembled from cached per-chunk pieces and computed for the rest.

    :param retriever: the first retriever declaring the feature (computes the missing pieces).
    :param name: its local name for the feature.
    :param namespace: the cache entries of this feature.
    :param chunks: all chunks, with text, in index order.
    :param digests: their :func:`_chunk_digest`.
    :return: the feature value, equal to ``retriever.compute_feature(name, chunks)``.
    """
    encode, decode, split, merge = _CODECS[namespace.kind]
    if not chunks:
        return retriever.compute_feature(name, chunks)
    stored = namespace.get_many(digests)
    found = [i for i, payload in enumerate(stored) if payload is not None]
    if not found:  # nothing stored (a first build): compute as without reuse, then store the pieces
        computed = retriever.compute_feature(name, chunks)
        for digest, piece in zip(digests, split(computed) or [], strict=False):
            namespace.put(digest, encode(piece))  # a text seen twice is stored once
        return computed
    pieces: list[Any] = [None] * len(chunks)
    for i, piece in zip(found, decode([stored[i] for i in found]), strict=True):
        if piece is None:
            namespace.reject()
        pieces[i] = piece
    first: dict[str, int] = {}  # a chunk text seen twice is computed once
    for i, piece in enumerate(pieces):
        if piece is None:
            first.setdefault(digests[i], i)
    if not first:
        return merge(pieces)
    todo = list(first.values())
    computed = retriever.compute_feature(name, [chunks[i] for i in todo])
    split_pieces = split(computed)
    if split_pieces is None:  # not representable as pieces: computed over all chunks, nothing stored
        return retriever.compute_feature(name, chunks)
    for i, piece in zip(todo, split_pieces, strict=True):
        pieces[i] = piece
        namespace.put(digests[i], encode(piece))
    for i, piece in enumerate(pieces):
        if piece is None:
            pieces[i] = pieces[first[digests[i]]]
    return merge(pieces)


def build_retrievers_reusing(
    retrievers: Sequence[Retriever], chunks: Sequence[Chunk], cache: ContentCache
) -> dict[str, float]:
    """:func:`retrievers.features.build_retrievers` with the ``term_counts`` and ``vectors`` features assembled
    from the cache: each distinct feature is computed once, and only for the files whose piece is not stored.

    :param retrievers: unbuilt retrievers.
    :param chunks: the snapshot's chunks, with text, in index order.
    :param cache: the build's cache (its statistics count the lookups).
    :return: seconds, keyed as :func:`~retrievers.features.build_retrievers` keys them.
    """
    digests: list[str] = []

    def compute(retriever: Retriever, name: str, spec: FeatureSpec, chunks: Sequence[Chunk]) -> Any:
        if spec.kind not in REUSED_FEATURES:
            return retriever.compute_feature(name, chunks)
        namespace = cache.namespace(spec.kind, {"feature": json.loads(spec.config)})
        if not digests:
            digests.extend(_chunk_digest(c) for c in chunks)
        if spec.kind == "term_counts":
            return _counts_reusing_rows(retriever, name, namespace, chunks, digests)
        return _reused_feature(retriever, name, namespace, chunks, digests)

    return build_retrievers(retrievers, chunks, compute)


def _counts_reusing_rows(
    retriever: Retriever, name: str, namespace: CacheNamespace, chunks: Sequence[Chunk], digests: Sequence[str]
) -> TermCounts:
    """Term counts as :func:`_reused_feature` gives them, with the rows this thread's previous build kept joined in
    (:mod:`indexes.reuse_rows`) and only the other chunks assembled."""
    previous = previous_rows(namespace, digests)
    if previous is None:
        value: TermCounts = _reused_feature(retriever, name, namespace, chunks, digests)
    else:
        namespace.stats.hits += len(previous[0])  # a row taken is a piece the cache holds (previous_rows)
        missing = np.setdiff1d(np.arange(len(chunks)), previous[0])
        todo = missing.tolist()
        rest = _reused_feature(retriever, name, namespace, [chunks[i] for i in todo], [digests[i] for i in todo])
        value = join_counts(len(chunks), previous, (missing, rest))
    remember_counts(namespace, digests, value)
    return value


# Graph pieces ------------------------------------------------------------------------------------------------------


def _graph_code_fingerprint() -> str:
    """SHA-256 of the source of the modules that decide :func:`~indexes.graph_build.chunk_names` and
    :func:`~indexes.graph_imports.extract_imports` (``graph.py``, ``graph_build.py``, ``graph_imports.py``): a
    change to them never reuses an old piece (:func:`~indexes.cache.software_fingerprint`
    covers ``chunking`` and ``retrievers`` only)."""
    from pathlib import Path

    import swe_explore.indexes.graph as graph_module
    import swe_explore.indexes.graph_build as build_module
    import swe_explore.indexes.graph_imports as imports_module

    h = hashlib.sha256()
    for module in (graph_module, build_module, imports_module):
        h.update(Path(str(module.__file__)).read_bytes())
    return h.hexdigest()


def _encode_names(names: ChunkNames) -> str:
    """A chunk's names as text: sorted identifiers joined by NUL, the character 0xFF, sorted member names."""
    return "\0".join(sorted(names[0])) + "\xff" + "\0".join(sorted(names[1]))


def _encode_file_names(names: Sequence[ChunkNames]) -> bytes:
    """A file's graph piece: its chunks' names (:func:`_encode_names`) in chunk order, separated by 0x01.

    The names are ASCII identifiers (:data:`~swe_explore.indexes.graph.IDENTIFIER`), so Latin-1 is their bytes and
    neither separator occurs in them.
    """
    return "\x01".join(_encode_names(n) for n in names).encode("latin-1")


def _decode_names(part: bytes) -> ChunkNames | None:
    """One chunk's names of a graph piece, or ``None`` if malformed (members not among the identifiers, not
    ASCII)."""
    head, sep, tail = part.partition(b"\xff")
    if not sep or not (head.isascii() and tail.isascii()):
        return None
    identifiers = frozenset(head.decode().split("\0")) if head else frozenset()
    members = frozenset(tail.decode().split("\0")) if tail else frozenset()
    return (identifiers, members) if members <= identifiers and "" not in identifiers else None


def _decode_file_names(payload: bytes, n_chunks: int) -> list[ChunkNames] | None:
    """A file's graph piece decoded: one names pair per chunk, or ``None`` if it is malformed or holds another
    number of chunks than the file has (then the file's names are computed again)."""
    parts = payload.split(b"\x01")
    if len(parts) != n_chunks:
        return None
    out = []
    for part in parts:
        names = _decode_names(part)
        if names is None:
            return None
        out.append(names)
    return out


def _encode_piece(names: Sequence[ChunkNames], specs: ImportSpecs) -> bytes:
    """A file's graph piece: its chunks' names (:func:`_encode_file_names`), the byte 0x02, then its import specs
    (:func:`~indexes.graph_imports.extract_imports`) as ASCII JSON (which escapes every control character, so the
    first 0x02 is the separator)."""
    return _encode_file_names(names) + b"\x02" + json.dumps(specs, separators=(",", ":")).encode("ascii")


def _decode_piece(payload: bytes, n_chunks: int) -> tuple[list[ChunkNames], ImportSpecs] | None:
    """A file's graph piece decoded (:func:`_encode_piece`), or ``None`` if any part is malformed."""
    head, sep, tail = payload.partition(b"\x02")
    names = _decode_file_names(head, n_chunks) if sep else None
    if names is None:
        return None
    try:
        specs = json.loads(tail)
    except ValueError:
        return None
    if not isinstance(specs, list) or not all(
        isinstance(spec, list) and spec and all(isinstance(part, str) for part in spec) for spec in specs
    ):
        return None
    return names, tuple(tuple(spec) for spec in specs)


def graph_names_reusing(
    chunks: Sequence[Chunk],
    cache: ContentCache,
    digests: Mapping[str, str],
    chunker_config: Mapping[str, Any],
    files: Sequence[SourceFile],
) -> tuple[list[ChunkNames], dict[str, ImportSpecs]]:
    """Every chunk's :func:`~indexes.graph_build.chunk_names` and every chunked file's
    :func:`~indexes.graph_imports.extract_imports`, taken from the cache where stored and computed and stored for
    the rest; equal to computing them all.

    The cache holds one **graph piece per file** (the names of its chunks, in order, and its import statements
    as read from its text; resolving them against the snapshot's paths stays per snapshot), keyed by the file's
    :func:`~indexes.cache.file_digest` (the key of its cached chunks): a file seen before, in any snapshot, has
    the same chunks and so the same names. One lookup and one entry per file, not per chunk: astropy's 26,877
    chunks are 1,552 files. The three steps (:func:`graph_names_lookup`, :func:`graph_names_compute`,
    :meth:`GraphNamesLookup.store`) are separate so that the middle one can run in another process
    (:class:`~indexes.graph_store.GraphWorker`).

    :param chunks: the snapshot's chunks, with text, in index order (a file's chunks next to each other).
    :param cache: the build's cache (its ``graph_names`` statistics count the lookups, in files).
    :param digests: path -> :func:`~indexes.cache.file_digest` of the walked files; a file without one is
        computed, not looked up.
    :param chunker_config: the config of the chunker that cut the chunks (part of the pieces' namespace, as for
        cached chunks: another chunking of the same file has other chunks).
    :param files: the walked files (their text gives the import statements of the files computed).
    :return: ``(names, imports)``: one ``(identifiers, member names)`` pair per chunk, and path -> import specs
        for every file that has chunks.
    """
    lookup = graph_names_lookup(chunks, cache, digests, chunker_config)
    names, imports, computed = graph_names_compute(chunks, lookup.stored, digests, files)
    lookup.store(computed)
    return names, imports


@dataclass
class GraphNamesLookup:
    """The graph pieces the cache holds for a snapshot's files (:func:`graph_names_lookup`).

    :param namespace: the cache namespace of the pieces.
    :param stored: path -> the file's stored piece, ``None`` if absent; only files with a digest are present.
    """

    namespace: CacheNamespace
    stored: dict[str, bytes | None]

    def store(self, computed: Sequence[tuple[str, bytes, bool]]) -> None:
        """Store the pieces :func:`graph_names_compute` made, counting each rejected stored piece as corrupt.

        :param computed: ``(file digest, piece, whether a stored piece was malformed)`` per file computed.
        """
        for digest, piece, rejected in computed:
            if rejected:
                self.namespace.reject()
            self.namespace.put(digest, piece)


def graph_names_lookup(
    chunks: Sequence[Chunk], cache: ContentCache, digests: Mapping[str, str], chunker_config: Mapping[str, Any]
) -> GraphNamesLookup:
    """Look every file of the chunks up in the cache's graph pieces (the first step of
    :func:`graph_names_reusing`, whose parameters these are).

    :param chunks: the snapshot's chunks.
    :param cache: the build's cache.
    :param digests: path -> file digest.
    :param chunker_config: the chunker's config.
    :return: the namespace and the pieces found.
    """
    config = {"graph_code": _graph_code_fingerprint(), "piece": "file+imports", "chunker": dict(chunker_config)}
    namespace = cache.namespace("graph_names", config)
    keyed = list(dict.fromkeys(c.path for c in chunks if c.path in digests))
    return GraphNamesLookup(namespace, dict(zip(keyed, namespace.get_many([digests[p] for p in keyed]), strict=True)))


#: A graph worker's decoded pieces of the snapshot before (:func:`graph_names_compute`'s ``memo``): file digest ->
#: ``(the piece's payload, its number of chunks, (names, import specs)))``.
PieceMemo = dict[str, tuple[bytes, int, tuple[list[ChunkNames], ImportSpecs]]]


class MissingTextError(ValueError):
    """A file's graph piece must be computed but its text was not sent (:func:`graph_names_compute`'s
    ``with_text``)."""


def graph_names_compute(
    chunks: Sequence[Chunk],
    stored: Mapping[str, bytes | None],
    digests: Mapping[str, str],
    files: Sequence[SourceFile],
    memo: PieceMemo | None = None,
    with_text: frozenset[str] | None = None,
) -> tuple[list[ChunkNames], dict[str, ImportSpecs], list[tuple[str, bytes, bool]]]:
    """Every chunk's names and every chunked file's import specs from the stored pieces, computed for the files
    without a valid one (the middle step of :func:`graph_names_reusing`; reads and writes no cache, so it can run
    in another process).

    :param chunks: the snapshot's chunks, with text, in index order.
    :param stored: :attr:`GraphNamesLookup.stored`.
    :param digests: path -> file digest; a file without one is computed and not stored.
    :param files: the walked files (the text of those computed is read for their imports).
    :param memo: pieces decoded for an earlier snapshot, replaced in place by this snapshot's: a stored piece whose
        payload is byte for byte the one remembered is taken from there instead of decoded again (the same value).
    :param with_text: the paths whose chunks and file carry their text, if not all of them.
    :return: ``(names, imports, computed)``: one names pair per chunk, path -> import specs per file that has
        chunks, and per file computed that has a digest ``(digest, its piece, whether a stored piece was
        malformed)``.
    :raises MissingTextError: if a file outside ``with_text`` must be computed (its stored piece is malformed).
    """
    with paused_gc():  # hundreds of thousands of frozensets that stay alive (indexes/collector.py)
        return _graph_names(chunks, stored, digests, {f.path: f for f in files}, memo, with_text)


def _graph_names(
    chunks: Sequence[Chunk],
    stored: Mapping[str, bytes | None],
    digests: Mapping[str, str],
    files: Mapping[str, SourceFile],
    memo: PieceMemo | None,
    with_text: frozenset[str] | None,
) -> tuple[list[ChunkNames], dict[str, ImportSpecs], list[tuple[str, bytes, bool]]]:
    of_file: dict[str, list[int]] = {}
    for i, chunk in enumerate(chunks):
        of_file.setdefault(chunk.path, []).append(i)
    out: list[ChunkNames] = [(frozenset(), frozenset())] * len(chunks)  # every chunk is in one of of_file's lists
    imports: dict[str, ImportSpecs] = {}
    computed: list[tuple[str, bytes, bool]] = []
    earlier: PieceMemo = memo or {}
    kept: PieceMemo = {}
    for path, ids in of_file.items():
        source, payload, digest = files.get(path), stored.get(path), digests.get(path)
        piece = None
        if payload is not None:
            hit = earlier.get(digest) if digest is not None else None
            piece = hit[2] if hit is not None and hit[0] == payload and hit[1] == len(ids) else None
            piece = piece or _decode_piece(payload, len(ids))
        if piece is not None and source is not None and specs_fit(source.language, piece[1]):
            names, imports[path] = piece
            if digest is not None and payload is not None:
                kept[digest] = (payload, len(ids), piece)
        else:  # not stored, malformed, or imports of another shape than the file's language gives
            if with_text is not None and path not in with_text:
                raise MissingTextError(f"{path}: its graph piece is to be computed, and its text was not sent")
            names = [chunk_names(chunks[i]) for i in ids]
            if source is not None:  # (every chunk's file is walked: chunks are cut from the walked files)
                imports[path] = extract_imports(source)
                if digest is not None:
                    encoded = _encode_piece(names, imports[path])
                    computed.append((digest, encoded, payload is not None))
                    kept[digest] = (encoded, len(ids), (names, imports[path]))
        for i, n in zip(ids, names, strict=True):
            out[i] = n
    if memo is not None:
        memo.clear()
        memo.update(kept)
    return out, imports, computed
