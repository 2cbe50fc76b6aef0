"""Candidates and their features: what the learned ranker (:mod:`swe_explore.explore.ranker`) scores.

For one issue text and one indexed snapshot (:class:`SnapshotIndex`), :func:`candidate_features` gathers the
candidate chunks and describes each by a fixed row of numbers:

**Candidates** (the union, in this order, without repeats):

1. the top ``top_n`` chunks of every retriever (BM25, TF-IDF and, when indexed, Potion);
2. with ``mentions``: the chunks an issue mention lands on (:mod:`swe_explore.explore.mentions`: trace frames,
   paths, identifiers) and the best ``mention_file_chunks`` chunks (by BM25) of each file a mention names;
3. with ``graph``: the chunks reached from the seeds (the mention chunks and the top ``graph_seeds`` chunks of
   the BM25 ranking with priors) within ``graph_hops`` hops of the symbol graph (:mod:`swe_explore.indexes.graph`),
   at most ``graph_max_nodes``;
4. with ``history > 0`` and a history index: the best ``mention_file_chunks`` chunks (by BM25) of each of the
   first ``history`` files of the history ranking (:mod:`swe_explore.explore.history_features`).

**Features** (:data:`FEATURE_GROUPS`, every one a float; ``nan`` where a value does not exist, which LightGBM
treats as missing):

- ``lexical``: per retriever, the chunk's score, its score relative to the best one, its rank (``log2``), and
  for its file the best relative score, the file's rank among files and how many of the file's chunks are in
  the retriever's top 50; the BM25 score after the hand-set ranking priors (:mod:`swe_explore.explore.priors`)
  and its rank (today's default ranking, so the model starts from it);
- ``dense``: the same for Potion (present only when the snapshot has a Potion index);
- ``mentions``: the ten chunk features of :class:`~swe_explore.explore.mention_resolution.ResolvedMentions` and the
  file's ``mention_score``;
- ``graph``: :func:`~swe_explore.explore.graph_features.graph_features` of the expansion (hop distances per direction,
  degrees, name ambiguity);
- ``history``: :func:`~swe_explore.explore.history_features.history_features` (similar past commits, fix counts
  and recency, co-change, hunk overlap); ``nan`` when the snapshot has no history index;
- ``structure``: chunk size, kind, position in the file, file size, test/doc/auxiliary path flags, path depth,
  how much of the chunk's symbol and path the issue's words cover, the issue's length.

A feature set is chosen by naming groups; a trained model records its feature names, and the explorer
computes exactly those.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from swe_explore.chunking.types import Chunk
from swe_explore.explore.graph_features import FEATURE_NAMES as GRAPH_FEATURES
from swe_explore.explore.graph_features import graph_features
from swe_explore.explore.history_features import FEATURE_NAMES as HISTORY_FEATURES
from swe_explore.explore.history_features import history_features, history_ranking
from swe_explore.explore.mention_resolution import FEATURE_NAMES as MENTION_FEATURES
from swe_explore.explore.mention_resolution import MentionIndex, ResolvedMentions
from swe_explore.explore.mentions import extract_mentions
from swe_explore.explore.priors import RankPriors, apply_priors
from swe_explore.indexes.graph import SymbolGraph
from swe_explore.indexes.graph_expand import expand
from swe_explore.indexes.history import HistoryIndex
from swe_explore.retrievers.base import Hit, Retriever

#: Retrievers whose scores are features, in feature order; ``potion`` only when indexed.
LEXICAL_RETRIEVERS = ("bm25", "tfidf")
DENSE_RETRIEVERS = ("potion",)
KINDS = ("function", "method", "class", "header", "definition", "gap", "window", "file")
_TEST_RE = re.compile(
    r"(?:^|/)(?:tests?|testing|spec|specs|__tests__|testdata)/|(?:^|/)test_[^/]*$|_test\.[a-z]+$|"
    r"\.(?:test|spec)\.[jt]sx?$|Tests?\.(?:java|php|cs)$|_spec\.rb$"
)


def is_test_path(path: str) -> bool:
    """Whether a path is a test file by its name or directory (the ``is_test`` feature's rule).

    :param path: a repo-relative ``/``-separated path.
    :return: whether it is a test file.
    """
    return _TEST_RE.search(path) is not None


_AUX_RE = re.compile(r"(?:^|/)(?:docs?|examples?|\.github|ci|benchmarks?|asv_bench)/")
_WORD_RE = re.compile(r"[A-Za-z][a-z0-9]+|[A-Z]+(?![a-z])|[0-9]+")
_TOP_FILE_CHUNKS = 50
#: Candidate source bits (:attr:`Candidates.sources`).
FROM_RETRIEVERS, FROM_MENTIONS, FROM_GRAPH, FROM_HISTORY = 1, 2, 4, 8
#: Distinct files of the BM25 ranking whose co-changes the ``history_cochange`` feature counts.
_COCHANGE_FILES = 3


def _retriever_features(name: str) -> tuple[str, ...]:
    return tuple(f"{name}_{f}" for f in ("score", "rel", "log_rank", "file_rel", "file_log_rank", "file_top50"))


FEATURE_GROUPS: Mapping[str, tuple[str, ...]] = {
    "lexical": (*_retriever_features("bm25"), *_retriever_features("tfidf"), "priors_rel", "priors_log_rank"),
    "dense": _retriever_features("potion"),
    "mentions": (*MENTION_FEATURES, "file_mention_score"),
    "graph": tuple(f"graph_{f}" for f in GRAPH_FEATURES),
    "history": tuple(f"history_{f}" for f in HISTORY_FEATURES),
    "structure": (
        "log_lines",
        *(f"kind_{k}" for k in KINDS),
        "rel_position",
        "log_file_lines",
        "is_test",
        "is_text",
        "is_aux",
        "path_depth",
        "symbol_overlap",
        "path_overlap",
        "log_query_words",
        "query_has_trace",
    ),
}
"""Feature groups, each a tuple of feature names (module docstring)."""


def feature_names(groups: Sequence[str]) -> tuple[str, ...]:
    """The feature names of some groups, in :data:`FEATURE_GROUPS` order.

    :param groups: group names.
    :return: the names.
    :raises ValueError: for an unknown group.
    """
    unknown = sorted(set(groups) - set(FEATURE_GROUPS))
    if unknown:
        raise ValueError(f"unknown feature group(s) {unknown}; valid: {', '.join(FEATURE_GROUPS)}")
    return tuple(name for group in FEATURE_GROUPS if group in groups for name in FEATURE_GROUPS[group])


@dataclass
class SnapshotIndex:
    """Everything the features read for one snapshot, loaded once and reused across queries.

    :param chunks: the chunk table (index order; no text needed).
    :param file_lines: line count of every indexed file.
    :param retrievers: loaded retrievers by name (``bm25`` and ``tfidf`` at least; ``potion`` optional).
    :param graph: the symbol graph, or ``None``.
    :param history: the history index (:mod:`swe_explore.indexes.history`), or ``None``.
    """

    chunks: Sequence[Chunk]
    file_lines: Mapping[str, int]
    retrievers: Mapping[str, Retriever]
    graph: SymbolGraph | None = None
    history: HistoryIndex | None = None
    _mention_index: MentionIndex | None = field(default=None, repr=False)
    _file_chunks: dict[str, list[int]] | None = field(default=None, repr=False)
    _chunk_files: tuple[list[str], np.ndarray] | None = field(default=None, repr=False)

    @property
    def mention_index(self) -> MentionIndex:
        """The mention resolver over this snapshot's files and chunks (built on first use)."""
        if self._mention_index is None:
            self._mention_index = MentionIndex(sorted(self.file_lines), self.chunks)
        return self._mention_index

    @property
    def chunk_files(self) -> tuple[list[str], np.ndarray]:
        """Every path (of the file table and the chunks), sorted, and each chunk's position in that list
        (int64, ``(len(chunks),)``); computed on first use."""
        if self._chunk_files is None:
            paths = sorted(self.file_lines.keys() | {c.path for c in self.chunks})
            file_id = {p: j for j, p in enumerate(paths)}
            ids = np.fromiter((file_id[c.path] for c in self.chunks), dtype=np.int64, count=len(self.chunks))
            self._chunk_files = (paths, ids)
        return self._chunk_files

    @property
    def file_chunks(self) -> dict[str, list[int]]:
        """Chunk indices of every file, ascending."""
        if self._file_chunks is None:
            out: dict[str, list[int]] = {}
            for i, c in enumerate(self.chunks):
                out.setdefault(c.path, []).append(i)
            self._file_chunks = out
        return self._file_chunks


@dataclass(frozen=True)
class CandidateConfig:
    """How candidates are gathered (module docstring).

    :param top_n: chunks taken from each retriever's ranking.
    :param mentions: add the chunks and files issue mentions land on.
    :param mention_file_chunks: chunks taken (best BM25 first) from each mentioned file.
    :param graph: expand the seeds over the symbol graph.
    :param graph_seeds: top chunks of the BM25-with-priors ranking used as seeds (mention chunks are seeds too).
    :param graph_hops: hops of the expansion.
    :param graph_max_nodes: chunks the expansion may add at most.
    :param history: files of the history ranking whose best ``mention_file_chunks`` chunks join (0: none).
    :raises ValueError: if a count is negative.
    """

    top_n: int = 200
    mentions: bool = True
    mention_file_chunks: int = 5
    graph: bool = True
    graph_seeds: int = 10
    graph_hops: int = 2
    graph_max_nodes: int = 100
    history: int = 0

    def __post_init__(self) -> None:
        bad = [k for k, v in self.to_dict().items() if isinstance(v, int) and not isinstance(v, bool) and v < 0]
        if bad or self.top_n < 1:
            raise ValueError(f"invalid CandidateConfig: {bad or ['top_n']} (counts >= 0, top_n >= 1)")

    def to_dict(self) -> dict[str, Any]:
        """JSON form (written into result rows' ``explorer_config``); ``history`` only when used (> 0), so a
        configuration without it writes the rows it wrote before the option existed."""
        out = dict(self.__dict__)
        if not self.history:
            del out["history"]
        return out


@dataclass
class Candidates:
    """The candidates of one query and their feature matrix.

    :param ids: chunk indices, shape ``(n,)``, int64.
    :param features: float32 matrix ``(n, len(names))``; ``nan`` = missing.
    :param names: the feature names (columns).
    :param sources: uint8 ``(n,)``: how each candidate was found, a bit mask of :data:`FROM_RETRIEVERS`,
        :data:`FROM_MENTIONS`, :data:`FROM_GRAPH` and :data:`FROM_HISTORY`.
    """

    ids: np.ndarray
    features: np.ndarray
    names: tuple[str, ...]
    sources: np.ndarray


def _log_rank(rank: np.ndarray) -> np.ndarray:
    return np.log2(rank.astype(np.float64) + 1.0)


def _ranks(scores: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """1-based rank of every chunk by descending score, ties by index; chunks with score <= 0 get ``nan``.

    :param scores: ``(n,)`` scores.
    :param order: ``np.argsort(-scores, kind="stable")`` when already computed (the same order).
    :return: ``(n,)`` float64 ranks, ``nan`` where the score is <= 0.
    """
    if order is None:
        order = np.argsort(-scores, kind="stable")
    ranks = np.empty(scores.size, dtype=np.float64)
    ranks[order] = np.arange(1, scores.size + 1)
    ranks[scores <= 0] = np.nan
    return ranks


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD_RE.findall(text) if len(w) > 1}


class _Retrieval:
    """One retriever's dense scores for a query and the per-file aggregates derived from them."""

    def __init__(self, scores: np.ndarray, chunk_file: np.ndarray, n_files: int) -> None:
        self.scores = np.asarray(scores, dtype=np.float64)
        best = float(self.scores.max()) if self.scores.size else 0.0
        self.rel = self.scores / best if best > 0 else np.zeros_like(self.scores)
        self.order = np.argsort(-self.scores, kind="stable")  # best first, ties by index: sorted once per query
        self.rank = _ranks(self.scores, self.order)
        file_best = np.zeros(n_files)
        np.maximum.at(file_best, chunk_file, self.rel)
        self.file_rel = file_best
        file_rank = _ranks(file_best)
        self.file_rank = file_rank
        top = self.order[:_TOP_FILE_CHUNKS]
        top = top[self.scores[top] > 0]
        self.file_top = np.bincount(chunk_file[top], minlength=n_files).astype(np.float64)

    def top(self, n: int) -> list[int]:
        return [int(i) for i in self.order[:n] if self.scores[i] > 0]

    def columns(self, ids: np.ndarray, chunk_file: np.ndarray) -> list[np.ndarray]:
        files = chunk_file[ids]
        present = self.scores[ids] > 0
        return [
            np.where(present, self.scores[ids], 0.0),
            self.rel[ids],
            np.where(np.isnan(self.rank[ids]), np.nan, _log_rank(np.nan_to_num(self.rank[ids]))),
            self.file_rel[files],
            np.where(np.isnan(self.file_rank[files]), np.nan, _log_rank(np.nan_to_num(self.file_rank[files]))),
            self.file_top[files],
        ]


def candidate_features(query: str, index: SnapshotIndex, config: CandidateConfig, names: Sequence[str]) -> Candidates:
    """Gather the candidates of a query and compute the named features for each.

    :param query: the issue text.
    :param index: the snapshot's loaded index.
    :param config: how candidates are gathered.
    :param names: the features to compute (from :data:`FEATURE_GROUPS`), in column order.
    :return: the candidates (possibly none) and their feature matrix.
    :raises ValueError: for an unknown feature name, or a ``potion`` feature without a Potion retriever.
    """
    _check_names(names)
    chunks = index.chunks
    n_chunks = len(chunks)
    paths, chunk_file = index.chunk_files
    wanted = [r for r in (*LEXICAL_RETRIEVERS, *DENSE_RETRIEVERS) if any(n.startswith(f"{r}_") for n in names)]
    if not query.strip() or n_chunks == 0:
        return Candidates(
            np.zeros(0, dtype=np.int64),
            np.zeros((0, len(names)), dtype=np.float32),
            tuple(names),
            np.zeros(0, dtype=np.uint8),
        )
    retrieval: dict[str, _Retrieval] = {}
    for name in dict.fromkeys(["bm25", *wanted]):
        if name not in index.retrievers:
            raise ValueError(f"the features need a {name!r} index, which this snapshot's index lacks")
        retrieval[name] = _Retrieval(index.retrievers[name].scores(query), chunk_file, len(paths))
    bm25 = retrieval["bm25"]
    priors_hits = apply_priors(
        query, chunks, [Hit(i, float(bm25.scores[i])) for i in bm25.top(config.top_n)], RankPriors()
    )

    source: dict[int, int] = {}

    def add(indices: Iterable[int], bit: int) -> None:
        for i in indices:
            source[i] = source.get(i, 0) | bit

    for name in retrieval:
        add(retrieval[name].top(config.top_n), FROM_RETRIEVERS)
    add((h.index for h in priors_hits), FROM_RETRIEVERS)
    resolved = None
    mentions = extract_mentions(query)
    if config.mentions or any(n in MENTION_FEATURES or n == "file_mention_score" for n in names):
        resolved = index.mention_index.resolve(mentions)
    if config.mentions and resolved is not None:
        add(resolved.chunks_hit(), FROM_MENTIONS)
        for path in resolved.files_hit():
            in_file = index.file_chunks.get(path, [])
            add(sorted(in_file, key=lambda i: (-bm25.scores[i], i))[: config.mention_file_chunks], FROM_MENTIONS)
    reached = _graph_reach(index, config, names, priors_hits, resolved)
    if config.graph:
        add(reached, FROM_GRAPH)
    wants_history = any(n.startswith("history_") for n in names)
    ranking = None
    if index.history is not None and (config.history or wants_history):
        ranking = history_ranking(index.history, query, index.file_chunks)
        for path in ranking.ranked[: config.history]:
            in_file = index.file_chunks[path]
            add(sorted(in_file, key=lambda i: (-bm25.scores[i], i))[: config.mention_file_chunks], FROM_HISTORY)
    ids = np.fromiter(source, dtype=np.int64, count=len(source))
    columns: dict[str, np.ndarray] = {}
    for name, r in retrieval.items():
        for fname, col in zip(_retriever_features(name), r.columns(ids, chunk_file)):
            columns[fname] = col
    id_list: list[int] = ids.tolist()
    columns.update(_priors_columns(priors_hits, id_list))
    if resolved is not None:
        columns.update(_mention_columns(resolved, chunks, id_list))
    if any(n.startswith("graph_") for n in names):
        gf = (
            graph_features(index.graph, {i: reached[i] for i in id_list if i in reached})
            if (index.graph is not None)
            else {}
        )
        missing: dict[str, float] = {}
        graph_rows = [gf.get(i, missing) for i in id_list]
        for fname in GRAPH_FEATURES:
            columns[f"graph_{fname}"] = np.array([r.get(fname, np.nan) for r in graph_rows])
    if wants_history and index.history is not None and ranking is not None:
        hf = history_features(
            index.history, ranking, [chunks[i] for i in id_list], _top_files(bm25, chunks, _COCHANGE_FILES)
        )
        for fname in HISTORY_FEATURES:
            columns[f"history_{fname}"] = hf[fname]
    if any(n in FEATURE_GROUPS["structure"] for n in names):
        columns.update(_structure(query, mentions.frames, chunks, index.file_lines, ids))
    matrix = np.full((ids.size, len(names)), np.nan, dtype=np.float32)
    for j, fname in enumerate(names):
        if fname in columns:
            matrix[:, j] = columns[fname]
    sources = np.fromiter(source.values(), dtype=np.uint8, count=len(source))
    return Candidates(ids, matrix, tuple(names), sources)


def _top_files(retrieval: _Retrieval, chunks: Sequence[Chunk], n: int) -> list[str]:
    """The first ``n`` distinct files of a retriever's ranking (chunks with a score > 0)."""
    out: list[str] = []
    for i in retrieval.order.tolist():
        if len(out) == n or retrieval.scores[i] <= 0:
            break
        if chunks[i].path not in out:
            out.append(chunks[i].path)
    return out


def _check_names(names: Sequence[str]) -> None:
    """Raise ``ValueError`` naming the first (at most five) names that no :data:`FEATURE_GROUPS` group holds."""
    known = {n for group in FEATURE_GROUPS.values() for n in group}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown feature(s) {unknown[:5]}")


def _priors_columns(priors_hits: Sequence[Hit], id_list: Sequence[int]) -> dict[str, np.ndarray]:
    """The ``priors_rel`` and ``priors_log_rank`` columns for the candidates ``id_list``."""
    priors_rank = {h.index: rank for rank, h in enumerate(priors_hits, start=1)}
    top_prior = priors_hits[0].score if priors_hits and priors_hits[0].score > 0 else 1.0
    prior_score = {h.index: h.score / top_prior for h in priors_hits}
    return {
        "priors_rel": np.array([prior_score.get(i, 0.0) for i in id_list]),
        "priors_log_rank": np.array([math.log2(priors_rank[i] + 1) if i in priors_rank else np.nan for i in id_list]),
    }


def _mention_columns(
    resolved: ResolvedMentions, chunks: Sequence[Chunk], id_list: Sequence[int]
) -> dict[str, np.ndarray]:
    """The ``mentions`` group's columns for the candidates ``id_list``."""
    rows = [resolved.chunk_features(i) for i in id_list]
    columns = {fname: np.array([r[fname] for r in rows]) for fname in MENTION_FEATURES}
    columns["file_mention_score"] = np.array([resolved.file_features(chunks[i].path)["mention_score"] for i in id_list])
    return columns


def _graph_reach(
    index: SnapshotIndex, config: CandidateConfig, names: Sequence[str], priors_hits: Sequence[Hit], resolved: Any
) -> dict[int, Any]:
    """The chunks the symbol graph reaches from the seeds: the first ``graph_seeds`` priors hits (weight
    ``1 / rank``) and the chunks the issue's mentions resolve to (weight 1); ``{}`` without a graph, or when
    neither graph candidates nor graph features are asked for."""
    if index.graph is None or not (config.graph or any(n.startswith("graph_") for n in names)):
        return {}
    seeds: dict[int, float] = {}
    for rank, hit in enumerate(priors_hits[: config.graph_seeds]):
        seeds[hit.index] = 1.0 / (rank + 1)
    if resolved is not None:
        for i in resolved.chunks_hit():
            seeds.setdefault(i, 1.0)
    if not seeds:
        return {}
    return expand(index.graph, seeds, hops=config.graph_hops, max_nodes=config.graph_max_nodes + len(seeds))


def _structure(
    query: str, frames: Sequence[Any], chunks: Sequence[Chunk], file_lines: Mapping[str, int], ids: np.ndarray
) -> dict[str, np.ndarray]:
    """The ``structure`` group's columns for the candidates."""
    words = _words(query)
    out: dict[str, list[float]] = {name: [] for name in FEATURE_GROUPS["structure"]}
    n_query = math.log2(len(query.split()) + 1)
    has_trace = 1.0 if frames else 0.0
    per_path: dict[str, tuple[float, float, float]] = {}  # candidates share files: path facts once per file
    per_symbol: dict[str, float] = {}
    for i in ids.tolist():
        c = chunks[i]
        if c.path not in per_path:
            path_words = _words(c.path.rsplit(".", 1)[0])
            per_path[c.path] = (
                1.0 if _TEST_RE.search(c.path) else 0.0,
                1.0 if _AUX_RE.search(c.path) else 0.0,
                len(path_words & words) / len(path_words) if path_words else 0.0,
            )
        is_test, is_aux, path_overlap = per_path[c.path]
        lines = file_lines.get(c.path, c.end) or c.end
        out["log_lines"].append(math.log2(c.end - c.start + 2))
        for kind in KINDS:
            out[f"kind_{kind}"].append(1.0 if c.kind == kind else 0.0)
        out["rel_position"].append((c.start - 1) / max(lines, 1))
        out["log_file_lines"].append(math.log2(lines + 1))
        out["is_test"].append(is_test)
        out["is_text"].append(1.0 if c.language == "text" else 0.0)
        out["is_aux"].append(is_aux)
        out["path_depth"].append(float(c.path.count("/")))
        if c.symbol not in per_symbol:
            symbol_words = _words(c.symbol)
            per_symbol[c.symbol] = len(symbol_words & words) / len(symbol_words) if symbol_words else 0.0
        out["symbol_overlap"].append(per_symbol[c.symbol])
        out["path_overlap"].append(path_overlap)
        out["log_query_words"].append(n_query)
        out["query_has_trace"].append(has_trace)
    return {k: np.asarray(v, dtype=np.float64) for k, v in out.items()}
