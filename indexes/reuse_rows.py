"""Term counts assembled from the rows of the previous build: the snapshots of a batch share most of their chunks.

A batch indexes the snapshots of one repository one after the other, and each snapshot shares most of its chunks
with the one before (of the 37 sphinx snapshots of the 76-instance set, 93% of the chunks were seen before). The
per-chunk path of :mod:`indexes.reuse` looks every chunk up in the cache, decodes its piece and rebuilds the
snapshot's :class:`~retrievers.features.TermCounts` from all of them: about 0.1 s per sphinx snapshot, the largest
fixed cost of an assembled build. Here the build keeps, per thread and cache namespace, the last snapshot's term
counts and the row of each chunk digest (:func:`remember_counts`); the next build in that namespace takes the
rows of the chunks it shares in one sparse row gather (:func:`previous_rows`), assembles only the others from the
cache pieces, and joins the two vocabularies by merging two sorted term lists (:func:`join_counts`).

Why the result is the one the per-chunk path gives: a chunk's row is a function of its digest and the feature
spec (:func:`~indexes.reuse._chunk_digest` covers every field a document text can hold), so the previous build's
row of a digest holds the counts its piece holds; only the column numbers differ. The joined terms are the
distinct terms of the rows, sorted by code point, and each side's columns are renumbered by an increasing map,
so every row's indices stay sorted; the matrix is constructed as :func:`~indexes.reuse._merge_counts`
constructs it (int32 counts, the same index dtypes). Tests compare the saved index files byte for byte.

Rows are kept and used only inside :func:`keeping_rows` (each snapshot task of a batch,
:func:`indexes.batch.index_one`, without ``--rebuild``), and only for the namespace's directory (one store, one
feature spec, this code): the previous build's rows came from that store's cache or were stored in it, so the
cache's content is the same as without them (rows of a build whose cache writes failed are not used, so every
row taken counts as a hit the cache holds). A single :func:`~indexes.build.ensure_index` call keeps nothing.
Memory: one snapshot's term counts per thread and spec, kept until the next task of that worker (astropy: 1.07M
(chunk, term) pairs, about 20 MB with its terms and digests).

**The cache may change during a batch** (``swe-explore store gc --cache``, a deleted ``_cache``): rows are taken
only when every pack the previous build read or wrote is still listed
(:meth:`~indexes.cache.CacheNamespace.still_lists`; packs are written once under unique names), else every
chunk is looked up, computed and stored again as without kept rows. A piece damaged in place during the batch is
not seen there (its payload is not read) and is found and replaced by the next build that reads it.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from swe_explore.indexes.cache import CacheNamespace
from swe_explore.retrievers.features import TermCounts

__all__ = ["PreviousCounts", "join_counts", "keeping_rows", "previous_rows", "remember_counts"]

_LOCAL = threading.local()


@dataclass(frozen=True)
class PreviousCounts:
    """The term counts of the last build in one cache namespace.

    :param rows: chunk digest -> its row in ``value``.
    :param value: the snapshot's term counts.
    :param namespace: the namespace of that build (its cache's), to tell whether its pieces were all stored.
    """

    rows: dict[str, int]
    value: TermCounts
    namespace: CacheNamespace


@contextmanager
def keeping_rows(enabled: bool = True) -> Iterator[None]:
    """Within the block, builds of this thread keep their term counts and use the previous build's rows.

    :param enabled: ``False``: the block keeps and uses nothing (and the rows kept before are dropped).
    :return: a context manager.
    """
    if not enabled:
        _LOCAL.counts = {}
    before = getattr(_LOCAL, "enabled", False)
    _LOCAL.enabled = enabled
    try:
        yield
    finally:
        _LOCAL.enabled = before


def _still_valid(earlier: CacheNamespace, now: CacheNamespace) -> bool:
    """Whether what a build kept stands for pieces the cache holds now: all its pieces were stored, and none of
    the packs it saw has been removed since (``swe-explore store gc --cache``, a deleted ``_cache``)."""
    return earlier.all_stored and now.still_lists(earlier)


def _key(namespace: CacheNamespace) -> tuple[str, str]:
    """What the kept rows are valid for: the namespace's directory (store, kind, config) and full config hash."""
    return (str(namespace.directory), namespace.config_hash)


def remember_counts(namespace: CacheNamespace, digests: Sequence[str], value: TermCounts) -> None:
    """Keep a build's term counts for the next build of this thread in the same namespace (replacing the last),
    inside :func:`keeping_rows`; outside it, nothing.

    :param namespace: the ``term_counts`` namespace the value was assembled in.
    :param digests: the chunks' digests, one per row of ``value``.
    :param value: the snapshot's term counts.
    :raises ValueError: if the digests are not one per row.
    """
    if len(digests) != value.n_docs:
        raise ValueError(f"{len(digests)} digests for {value.n_docs} rows of term counts")
    if not getattr(_LOCAL, "enabled", False):
        return
    kept: dict[tuple[str, str], PreviousCounts] = getattr(_LOCAL, "counts", {})
    kept[_key(namespace)] = PreviousCounts({d: i for i, d in enumerate(digests)}, value, namespace)
    _LOCAL.counts = kept


def previous_rows(namespace: CacheNamespace, digests: Sequence[str]) -> tuple[np.ndarray, TermCounts] | None:
    """The rows the last build of this thread in this namespace holds for the chunks.

    :param namespace: the ``term_counts`` namespace.
    :param digests: the chunks' digests.
    :return: ``(positions, counts)``: the positions (into ``digests``, increasing) of the chunks found and their
        rows, in that order, under the previous build's terms (some terms may be in no row); ``None`` when
        nothing is kept for the namespace, no chunk is found, outside :func:`keeping_rows`, or when the previous
        build's pieces were not all stored (a failed cache write: its rows would count as hits the cache does not
        hold).
    """
    if not getattr(_LOCAL, "enabled", False):
        return None
    kept = getattr(_LOCAL, "counts", {}).get(_key(namespace))
    if kept is None or not _still_valid(kept.namespace, namespace):
        return None
    found = [(i, row) for i, d in enumerate(digests) if (row := kept.rows.get(d)) is not None]
    if not found:
        return None
    pairs = np.asarray(found, dtype=np.int64).reshape(-1, 2)
    return pairs[:, 0], TermCounts(kept.value.terms, kept.value.counts[pairs[:, 1]])


def _used_terms(counts: TermCounts) -> tuple[np.ndarray, list[str]]:
    """The columns some row uses (increasing) and their terms (so sorted by code point)."""
    used = np.flatnonzero(np.bincount(counts.counts.indices, minlength=len(counts.terms)))
    return used, [counts.terms[j] for j in used.tolist()]


def join_counts(n_rows: int, first: tuple[np.ndarray, TermCounts], second: tuple[np.ndarray, TermCounts]) -> TermCounts:
    """Two sets of rows, each with its own sorted terms, as one :class:`~retrievers.features.TermCounts` in row order.

    The terms are the distinct terms the rows use, sorted by code point (a merge of the two sorted lists); each
    side's columns are renumbered by an increasing map, so each row's indices stay sorted. The matrix is built as
    :func:`~indexes.reuse._merge_counts` builds it.

    :param n_rows: rows of the result.
    :param first: ``(positions, counts)``: the result rows the first counts' rows go to, in order.
    :param second: the same for the other rows; together the positions are ``0 .. n_rows - 1``, each once.
    :return: the joined term counts.
    :raises ValueError: if the positions do not cover every row exactly once.
    """
    (pos_a, a), (pos_b, b) = first, second
    source = np.full(n_rows, -1, dtype=np.int64)
    source[pos_a] = np.arange(len(pos_a))
    source[pos_b] = len(pos_a) + np.arange(len(pos_b))
    if len(pos_a) + len(pos_b) != n_rows or (source < 0).any():
        raise ValueError(f"{len(pos_a)} + {len(pos_b)} row positions do not cover {n_rows} rows once each")
    used_a, terms_a = _used_terms(a)
    used_b, terms_b = _used_terms(b)
    insert = np.fromiter((bisect_left(terms_a, t) for t in terms_b), dtype=np.int64, count=len(terms_b))
    same = np.zeros(len(terms_b), dtype=bool)
    inside = np.flatnonzero(insert < len(terms_a))
    same[inside] = [terms_a[p] == terms_b[k] for k, p in zip(inside.tolist(), insert[inside].tolist(), strict=True)]
    new_at = insert[~same]  # where each term only the second side has goes among the first side's terms
    final_a = np.arange(len(terms_a), dtype=np.int64) + np.searchsorted(new_at, np.arange(len(terms_a)), side="right")
    final_b = np.empty(len(terms_b), dtype=np.int64)
    final_b[~same] = new_at + np.arange(len(new_at))
    final_b[same] = final_a[insert[same]]
    placed = np.empty(len(terms_a) + len(new_at), dtype=object)
    placed[final_a] = terms_a
    placed[final_b] = terms_b  # a term both sides have lands where the first side's copy is
    terms: list[str] = placed.tolist()
    parts = []
    for counts, used, final in ((a.counts, used_a, final_a), (b.counts, used_b, final_b)):
        column = np.zeros(counts.shape[1], dtype=np.int64)
        column[used] = final
        parts.append(
            sp.csr_matrix((counts.data, column[counts.indices], counts.indptr), shape=(counts.shape[0], len(terms)))
        )
    stacked = sp.vstack(parts, format="csr")[source]
    indptr = np.asarray(stacked.indptr, dtype=np.int64)
    matrix = sp.csr_matrix(
        (stacked.data.astype(np.int32), stacked.indices.astype(np.int64), indptr),
        shape=(n_rows, len(terms)),
        dtype=np.int32,
    )
    matrix.sum_duplicates()
    return TermCounts(terms, matrix)
