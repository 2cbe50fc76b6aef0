"""Training data for the learned ranker: candidate features and relevance labels of labelled bench records.

:func:`extract_group` turns one record (issue text, snapshot, core regions) into one query group: the
candidates of :func:`swe_explore.explore.features.candidate_features` with every feature group, and their
:func:`~swe_explore.explore.ranker.candidate_overlap` facts the labels are made from. Groups are cached on disk
(``.npz``, no pickle) per record
and feature configuration, so models over several feature subsets (the ablations) are trained from one
extraction. :func:`check_training_repos` refuses records of repositories the models must never see: those of the
SWE-Explore release (whose later history holds the benchmark's fixes) and those of the evaluation benches.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from swe_explore.evaluation.bench import BenchRecord
from swe_explore.explore.features import (
    FEATURE_GROUPS,
    FROM_GRAPH,
    FROM_MENTIONS,
    FROM_RETRIEVERS,
    CandidateConfig,
    SnapshotIndex,
    candidate_features,
)

#: Every feature, in group order: what an extraction computes.
ALL_FEATURES: tuple[str, ...] = tuple(name for group in FEATURE_GROUPS.values() for name in group)


@dataclass
class Group:
    """One record's candidates.

    :param instance_id: the record.
    :param repo: its repository (``owner/name``).
    :param base_commit: its snapshot's commit.
    :param features: float32 ``(n, len(ALL_FEATURES))``.
    :param ids: int64 ``(n,)`` chunk indices of the candidates.
    :param overlap: int32 ``(n,)``, ``lines`` and ``file_core``: what labels are made from
        (:func:`~swe_explore.explore.ranker.candidate_overlap`).
    :param sources: uint8 ``(n,)`` candidate source bits (:attr:`~swe_explore.explore.features.Candidates.sources`).
    :param n_core_files: core files of the record (to tell how many the candidates reach).
    """

    instance_id: str
    repo: str
    base_commit: str
    features: np.ndarray
    ids: np.ndarray
    overlap: np.ndarray
    lines: np.ndarray
    file_core: np.ndarray
    sources: np.ndarray
    n_core_files: int

    def labels(self, scheme: str = "file") -> np.ndarray:
        """Relevance labels under a scheme (:func:`~swe_explore.explore.ranker.relevance`).

        :param scheme: the label scheme.
        :return: int32 ``(n,)``.
        """
        from swe_explore.explore.ranker import relevance

        return relevance(self.overlap, self.lines, self.file_core, scheme)

    def rows(self, config: CandidateConfig) -> np.ndarray:
        """The candidates a narrower configuration would also gather (mentions or graph off), as a mask.

        :param config: the candidate configuration of a model variant.
        :return: bool ``(n,)``.
        """
        allowed = FROM_RETRIEVERS | (FROM_MENTIONS if config.mentions else 0) | (FROM_GRAPH if config.graph else 0)
        return (self.sources & allowed) != 0

    def select(self, names: Sequence[str]) -> np.ndarray:
        """The columns of some features, in the given order.

        :param names: feature names (a subset of :data:`ALL_FEATURES`).
        :return: float32 ``(n, len(names))``.
        """
        columns = [ALL_FEATURES.index(n) for n in names]
        return self.features[:, columns]


def resolved_core(record: BenchRecord, file_lines: Mapping[str, int]) -> dict[str, list[tuple[int, int]]]:
    """A record's core regions as line spans per path, sentinels resolved like the metrics do (spec §0.1).

    :param record: the record.
    :param file_lines: line counts of the snapshot's files.
    :return: path -> merged ``(start, end)`` spans; unresolvable regions dropped.
    """
    from swe_explore.evaluation.metrics import resolve_interval

    spans: dict[str, list[tuple[int, int]]] = {}
    for region in record.core_regions:
        resolved = resolve_interval(region["path"], region["start"], region["end"], file_lines)
        if resolved is not None and resolved[0] <= resolved[1]:
            spans.setdefault(region["path"], []).append(resolved)
    out: dict[str, list[tuple[int, int]]] = {}
    for path, items in spans.items():
        merged: list[tuple[int, int]] = []
        for s, e in sorted(items):
            if merged and s <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(merged[-1][1], e))
            else:
                merged.append((s, e))
        out[path] = merged
    return out


def extract_group(record: BenchRecord, index: SnapshotIndex, config: CandidateConfig) -> Group:
    """The candidates of one record with every feature and their labels.

    :param record: a labelled record (issue text and core regions).
    :param index: its snapshot's loaded index (with a graph and, for ``dense`` features, a Potion retriever;
        missing ones leave their features ``nan``).
    :param config: candidate gathering.
    :return: the group.
    """
    from swe_explore.explore.ranker import candidate_overlap

    names = [n for n in ALL_FEATURES if not n.startswith("potion_") or "potion" in index.retrievers]
    cands = candidate_features(record.query, index, config, names)
    matrix = np.full((cands.ids.size, len(ALL_FEATURES)), np.nan, dtype=np.float32)
    for j, name in enumerate(names):
        matrix[:, ALL_FEATURES.index(name)] = cands.features[:, j]
    overlap, lines, file_core = candidate_overlap(
        [index.chunks[int(i)] for i in cands.ids], resolved_core(record, index.file_lines)
    )
    core_files = {r["path"] for r in record.core_regions}
    return Group(
        record.instance_id,
        record.repo,
        record.base_commit,
        matrix,
        cands.ids,
        overlap,
        lines,
        file_core,
        cands.sources,
        len(core_files),
    )


def cache_key(config: CandidateConfig, extra: Mapping[str, Any]) -> str:
    """The cache directory name of an extraction: a hash of the features, candidate config and index config.

    :param config: candidate gathering.
    :param extra: what else determines the features (chunker, retriever configs).
    :return: 16 hex digits.
    """
    blob = json.dumps({"features": ALL_FEATURES, "candidates": config.to_dict(), **extra}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def save_group(path: Path, group: Group) -> None:
    """Write a group atomically as ``.npz`` (arrays) with its identity in a JSON string member.

    :param path: the target file.
    :param group: the group.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = json.dumps(
        {
            "instance_id": group.instance_id,
            "repo": group.repo,
            "base_commit": group.base_commit,
            "n_core_files": group.n_core_files,
            "features": ALL_FEATURES,
        }
    )
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    os.close(fd)
    with open(tmp, "wb") as handle:
        np.savez(
            handle,
            features=group.features,
            ids=group.ids,
            overlap=group.overlap,
            lines=group.lines,
            file_core=group.file_core,
            sources=group.sources,
            meta=np.array(meta),
        )
    os.replace(tmp, path)


def load_group(path: Path) -> Group | None:
    """Read a group written by :func:`save_group`; ``None`` if it is unreadable or of another feature list.

    :param path: the file.
    :return: the group, or ``None`` (the caller extracts it again).
    """
    try:
        with np.load(path, allow_pickle=False) as npz:
            meta = json.loads(str(npz["meta"]))
            if tuple(meta["features"]) != ALL_FEATURES:
                return None
            return Group(
                meta["instance_id"],
                meta["repo"],
                meta["base_commit"],
                npz["features"],
                npz["ids"],
                npz["overlap"],
                npz["lines"],
                npz["file_core"],
                npz["sources"],
                int(meta["n_core_files"]),
            )
    except (OSError, ValueError, KeyError):
        return None


def read_repo_list(path: Path) -> set[str]:
    """The repositories of ``release-repos.txt``-style files: the first column of every non-comment line.

    :param path: the file.
    :return: lower-case ``owner/name`` names.
    """
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            out.add(line.split()[0].strip().lower())
    return out


def check_training_repos(records: Iterable[BenchRecord], forbidden: Mapping[str, str]) -> None:
    """Refuse training records of forbidden repositories.

    :param records: the training records.
    :param forbidden: lower-case ``owner/name`` -> why it is forbidden (``"release"``, ``"eval bench X"``).
    :raises ValueError: listing every offending repository and the reason.
    """
    bad = sorted({(r.repo.lower(), forbidden[r.repo.lower()]) for r in records if r.repo.lower() in forbidden})
    if bad:
        listed = "; ".join(f"{repo} ({why})" for repo, why in bad)
        raise ValueError(f"training records of repositories that must not be trained on: {listed}")
