"""Ranking features from a snapshot's past commits (:class:`~swe_explore.indexes.history.HistoryIndex`).

The ``history`` feature group of :mod:`swe_explore.explore.features` (names prefixed ``history_``), after the
IR bug-localisation literature: BugLocator's similar-report score (Zhou, Zhang and Lo, ICSE 2012), the
collaborative-filtering, fix-frequency and fix-recency features of Ye, Bunescu and Liu (FSE 2014), and Locus's
scores over change hunks (Wen et al., ASE 2016). A past commit stands for a past report: its message is the
report's text and its changed files are the files the report's fix touched.

**Similarity.** ``sim(c)`` of a commit ``c`` to the issue is the BM25 score of its message divided by the best
commit's (:meth:`~swe_explore.indexes.history.HistoryIndex.similarities`), so the most similar commit has 1.
The *similar commits* are the :data:`TOP_COMMITS` commits of highest ``sim > 0`` (ties: the newer first).

**The history ranking** of the snapshot's files orders them by the BugLocator score (below), ties by path; only
files with a score ``> 0`` are ranked. Its first ``CandidateConfig.history`` files join the candidates.

Features of a chunk of file ``f`` (:data:`FEATURE_NAMES`; ``nan`` for every one when the snapshot has no history):

- ``similar_score``: ``Σ sim(c) / |paths(c)|`` over the similar commits ``c`` that changed ``f``, ``|paths(c)|``
  the number of paths ``c`` changed (a rename counts its old and new path) (BugLocator's SimiScore);
- ``max_sim``: the highest ``sim`` of any commit that changed ``f`` (0 when none did);
- ``log_rank``: ``log2(rank + 1)`` of ``f`` in the history ranking; ``nan`` when ``f`` is unranked;
- ``fix_count``: ``log1p`` of the number of fix-like commits (:data:`~swe_explore.indexes.history.FIX_PATTERN`)
  that changed ``f``; ``fix_recency``: the position (0 = the newest commit) of the newest of them, ``nan`` when
  none; ``change_count``: ``log1p`` of the number of commits that changed ``f``;
- ``cochange``: the share of the commits that changed ``f`` that also changed one of the candidate set's top
  three lexical files (the first three files of the BM25 ranking), ``f`` itself left out of those three; 0 when
  no commit changed ``f``;
- ``hunk_score``: ``Σ sim(c)`` over the similar commits ``c`` with a hunk in ``f`` overlapping the chunk's lines
  (Locus's hunk-level evidence); ``hunk_count``: the hunks of every commit in ``f`` overlapping the chunk's lines.

**An approximation.** A hunk's lines are those of the file *after that commit*, not of the snapshot: later
commits shift them. The overlap with today's chunk is therefore approximate, good for recent commits and for
code that did not move.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from swe_explore.chunking.types import Chunk
from swe_explore.indexes.history import HistoryIndex

__all__ = ["FEATURE_NAMES", "TOP_COMMITS", "HistoryRanking", "history_features", "history_ranking"]

#: The number of most similar commits (BugLocator's top-K similar reports) the scores sum over.
TOP_COMMITS = 50

FEATURE_NAMES: tuple[str, ...] = (
    "similar_score",
    "max_sim",
    "log_rank",
    "fix_count",
    "fix_recency",
    "change_count",
    "cochange",
    "hunk_score",
    "hunk_count",
)
"""The features :func:`history_features` gives every candidate, in this order (module docstring)."""


@dataclass(frozen=True)
class HistoryRanking:
    """One query's view of the history.

    :param sim: float64 ``(n_commits,)`` similarity of every commit to the query.
    :param similar: the similar commits (positions), most similar first.
    :param file_score: the BugLocator score of every path a similar commit changed.
    :param ranked: the snapshot's files with a score ``> 0``, best first (ties by path).
    """

    sim: np.ndarray
    similar: np.ndarray
    file_score: Mapping[str, float]
    ranked: tuple[str, ...]


def history_ranking(
    history: HistoryIndex, query: str, files: Collection[str], top_commits: int = TOP_COMMITS
) -> HistoryRanking:
    """The similarities, the similar commits and the history ranking of the snapshot's files for a query.

    :param history: the snapshot's history index.
    :param query: the issue text.
    :param files: the snapshot's files (only these are ranked).
    :param top_commits: how many similar commits the score sums over.
    :return: the ranking.
    """
    sim = history.similarities(query)
    order = np.argsort(-sim, kind="stable")  # ties: the lower position, the newer commit, first
    similar = order[:top_commits]
    similar = similar[sim[similar] > 0]
    score: dict[str, float] = {}
    for c in similar.tolist():
        pids = history.commit_paths(c)
        if not pids.size:  # a commit that changed no file (an empty commit, or only a submodule pointer)
            continue
        share = float(sim[c]) / pids.size
        for j in pids.tolist():
            path = history.paths[j]
            score[path] = score.get(path, 0.0) + share
    ranked = tuple(sorted((p for p, s in score.items() if s > 0 and p in files), key=lambda p: (-score[p], p)))
    return HistoryRanking(sim, similar, score, ranked)


def history_features(
    history: HistoryIndex,
    ranking: HistoryRanking,
    chunks: Sequence[Chunk],
    lexical_files: Sequence[str],
) -> dict[str, np.ndarray]:
    """The history features of some chunks, named and ordered as :data:`FEATURE_NAMES`.

    :param history: the snapshot's history index.
    :param ranking: :func:`history_ranking` of the query.
    :param chunks: the candidate chunks.
    :param lexical_files: the candidate set's top lexical files (the first three files of the BM25 ranking).
    :return: feature name -> float64 ``(len(chunks),)``.
    """
    rank = {p: r for r, p in enumerate(ranking.ranked, start=1)}
    similar_mask = np.zeros(history.n_commits, dtype=bool)
    similar_mask[ranking.similar] = True
    per_path_spans: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    top_ids = [history.path_id[p] for p in lexical_files if p in history.path_id]
    touches_top = np.zeros(history.n_commits, dtype=np.int64)  # per commit: how many top lexical files it changed
    entry_commit = history.entry_commit
    if top_ids:
        hit = np.isin(history.path_ids, np.asarray(top_ids, dtype=np.int32))
        touches_top = np.bincount(entry_commit[hit], minlength=history.n_commits)
    per_file: dict[str, tuple[float, ...]] = {}
    out: dict[str, list[float]] = {name: [] for name in FEATURE_NAMES}
    for chunk in chunks:
        path = chunk.path
        entries = history.path_entries(path)
        commits = entry_commit[entries]
        if path not in per_file:
            fixes = commits[history.fix[commits] == 1]
            own = 1 if path in lexical_files and path in history.path_id else 0
            cochange = float(((touches_top[commits] - own) > 0).mean()) if commits.size else 0.0
            per_file[path] = (
                float(ranking.file_score.get(path, 0.0)),
                float(ranking.sim[commits].max()) if commits.size else 0.0,
                math.log2(rank[path] + 1) if path in rank else math.nan,
                math.log1p(fixes.size),
                float(fixes[0]) if fixes.size else math.nan,
                math.log1p(commits.size),
                cochange,
            )
        for name, value in zip(FEATURE_NAMES, per_file[path]):
            out[name].append(value)
        if path not in per_path_spans:
            lengths = history.hunk_ptr[entries + 1] - history.hunk_ptr[entries]
            rows = [np.arange(history.hunk_ptr[e], history.hunk_ptr[e + 1]) for e in entries.tolist()]
            flat = np.concatenate(rows).astype(np.int64) if rows else np.zeros(0, dtype=np.int64)
            per_path_spans[path] = (history.hunk_spans[flat].reshape(-1, 2), np.repeat(commits, lengths))
        spans, span_commit = per_path_spans[path]
        overlapping = (spans[:, 0] <= chunk.end) & (spans[:, 1] >= chunk.start)
        hit_commits = np.unique(span_commit[overlapping & similar_mask[span_commit]])
        hunk_score = float(ranking.sim[hit_commits].sum())
        hunk_count = int(overlapping.sum())
        out["hunk_score"].append(hunk_score)
        out["hunk_count"].append(float(hunk_count))
    return {name: np.asarray(values, dtype=np.float64) for name, values in out.items()}
