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
import io
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from swe_explore.chunking.atomic import write_bytes_atomic
from swe_explore.evaluation.bench import BenchRecord
from swe_explore.explore.features import (
    FEATURE_GROUPS,
    FROM_GRAPH,
    FROM_HISTORY,
    FROM_MENTIONS,
    FROM_RETRIEVERS,
    CandidateConfig,
    SnapshotIndex,
    candidate_features,
    feature_names,
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
        """The candidates a narrower configuration would also gather (mentions, graph or history off), as a mask.

        :param config: the candidate configuration of a model variant.
        :return: bool ``(n,)``.
        """
        allowed = FROM_RETRIEVERS | (FROM_MENTIONS if config.mentions else 0) | (FROM_GRAPH if config.graph else 0)
        allowed |= FROM_HISTORY if config.history else 0
        mask: np.ndarray = (self.sources & allowed) != 0
        return mask

    def training_rows(self, config: CandidateConfig) -> np.ndarray:
        """The candidates a variant trains on: :meth:`rows`, less the test-file candidates when no test file of
        the record is gold (they are unlabelled, not irrelevant: :data:`NOT_LEARNED`).

        :param config: the candidate configuration of a model variant.
        :return: bool ``(n,)``.
        """
        rows = self.rows(config)
        is_test = self.select(["is_test"])[:, 0] == 1
        if not (is_test & (self.file_core > 0)).any():
            rows &= ~is_test
        return rows

    def select(self, names: Sequence[str]) -> np.ndarray:
        """The columns of some features, in the given order.

        :param names: feature names (a subset of :data:`ALL_FEATURES`).
        :return: float32 ``(n, len(names))``.
        """
        columns = [ALL_FEATURES.index(n) for n in names]
        return self.features[:, columns]


def resolved_core(record: BenchRecord, file_lines: Mapping[str, int]) -> dict[str, list[tuple[int, int]]]:
    """A record's core regions as line spans per path, sentinels resolved like the metrics do (docs/metrics.md §0.1).

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


def _cache_key(config: CandidateConfig, extra: Mapping[str, Any]) -> str:
    """The cache directory name of an extraction: a hash of the features, candidate config and index config.

    :param config: candidate gathering.
    :param extra: what else determines the features (chunker, retriever configs).
    :return: 16 hex digits.
    """
    blob = json.dumps({"features": ALL_FEATURES, "candidates": config.to_dict(), **extra}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _save_group(path: Path, group: Group) -> None:
    """Write a group atomically as ``.npz`` (arrays) with its identity in a JSON string member.

    :param path: the target file.
    :param group: the group.
    """
    meta = json.dumps(
        {
            "instance_id": group.instance_id,
            "repo": group.repo,
            "base_commit": group.base_commit,
            "n_core_files": group.n_core_files,
            "features": ALL_FEATURES,
        }
    )
    buffer = io.BytesIO()
    np.savez(
        buffer,
        features=group.features,
        ids=group.ids,
        overlap=group.overlap,
        lines=group.lines,
        file_core=group.file_core,
        sources=group.sources,
        meta=np.array(meta),
    )
    write_bytes_atomic(path, buffer.getvalue())


def _load_group(path: Path) -> Group | None:
    """Read a group written by :func:`_save_group`; ``None`` if it is unreadable or of another feature list.

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


def _read_repo_list(path: Path) -> set[str]:
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


# ----------------------------------------------------------------------------------------------------------
# Training the model variants (``swe-explore train``)
# ----------------------------------------------------------------------------------------------------------

#: Files of the history ranking a ``history`` variant takes as candidates (``CandidateConfig.history``); the
#: extraction gathers them for every record, and the variants without it leave them out (:meth:`Group.rows`).
HISTORY_CANDIDATES = 5

#: Model variants: feature groups, whether candidates come from mentions and the graph, how many files of the
#: history ranking join them (``history``, default 0) and features of the groups left out (``drop``, default none).
VARIANTS: dict[str, dict[str, Any]] = {
    "ranker-lexical": {"groups": ["lexical", "structure"], "mentions": False, "graph": False},
    "ranker-mentions": {"groups": ["lexical", "structure", "mentions"], "mentions": True, "graph": False},
    "ranker-graph": {"groups": ["lexical", "structure", "graph"], "mentions": False, "graph": True},
    "ranker-mentions-graph": {"groups": ["lexical", "structure", "mentions", "graph"], "mentions": True, "graph": True},
    "ranker-full": {"groups": ["lexical", "dense", "structure", "mentions", "graph"], "mentions": True, "graph": True},
    # The history features (docs/history.md); the shipped default is the mean of these two.
    "ranker-mentions-history": {
        "groups": ["lexical", "structure", "mentions", "history"],
        "mentions": True,
        "graph": False,
    },
    "ranker-mentions-graph-history": {
        "groups": ["lexical", "structure", "mentions", "graph", "history"],
        "mentions": True,
        "graph": True,
    },
}
#: The history features by kind (docs/history.md), for the ablation variants that leave one kind out.
HISTORY_KINDS: dict[str, tuple[str, ...]] = {
    "similar": ("history_similar_score", "history_max_sim", "history_log_rank"),
    "fix": ("history_fix_count", "history_fix_recency"),
    "cochange": ("history_change_count", "history_cochange"),
    "hunk": ("history_hunk_score", "history_hunk_count"),
}
for _base in ("ranker-mentions-history", "ranker-mentions-graph-history"):
    # The history features with the history ranking's top files as candidates too (an ablation: not shipped) ...
    VARIANTS[f"{_base}-candidates"] = {**VARIANTS[_base], "history": HISTORY_CANDIDATES}
    # ... and that variant without one kind of history feature (``drop``: feature names left out).
    for _kind, _names in HISTORY_KINDS.items():
        VARIANTS[f"{_base}-no-{_kind}"] = {**VARIANTS[f"{_base}-candidates"], "drop": list(_names)}
#: Variants that read the snapshots' history (their files, or the checkouts' ``.git``).
HISTORY_VARIANTS = tuple(name for name, spec in VARIANTS.items() if "history" in spec["groups"])
#: The history ablations, trained only when asked for by name.
ABLATION_VARIANTS = tuple(name for name in VARIANTS if name.endswith("-candidates") or "-no-" in name)
VALID_SHARE = 0.15
#: Features computed but not learned. Commits mined by default never change a test file (a selection rule), so
#: every test chunk of such a record is unlabelled rather than irrelevant, and a model would learn to bury tests,
#: which exploration ground truth is full of (agents read the tests): the test-file candidates of a record whose
#: gold holds no test file are left out of training (records mined with ``--tests read`` that label tests keep
#: theirs, docs/mining.md), and ``is_test`` is no feature, so tests are ranked by the same evidence as other code.
NOT_LEARNED = ("is_test",)


def is_valid_repo(repo: str) -> bool:
    """Whether a repository is held out for early stopping (a fixed 15% by SHA-256 of its name).

    :param repo: ``owner/name``.
    :return: true for the held-out share.
    """
    return int(hashlib.sha256(repo.lower().encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < VALID_SHARE


def forbidden_repos(repo_lists: Iterable[Path], eval_benches: Iterable[Path]) -> dict[str, str]:
    """The repositories never to train on, with why: those listed in ``repo_lists``, those of ``eval_benches``.

    :param repo_lists: files of ``owner/name`` lines (:func:`_read_repo_list`).
    :param eval_benches: evaluation bench JSONL files.
    :return: lower-case ``owner/name`` -> ``"listed in FILE"`` or ``"in eval bench FILE"``.
    :raises ValueError: a bench record that is not valid (the message names the file and line).
    :raises FileNotFoundError: a bench file that does not exist.
    """
    from swe_explore.evaluation.bench import load_bench

    forbidden: dict[str, str] = {}
    for path in repo_lists:
        forbidden.update(dict.fromkeys(_read_repo_list(path), f"listed in {path.name}"))
    for path in eval_benches:
        forbidden.update({r.repo.lower(): f"in eval bench {path.name}" for r in load_bench(path, require_query=False)})
    return forbidden


@dataclass
class Extraction:
    """The query groups of a set of training records.

    :param groups: one per usable record, in record order.
    :param failed: ``"instance_id: why"`` per record left out (no snapshot, or its extraction raised).
    :param config: the candidate configuration extracted with.
    :param cache: the cache directory of this configuration.
    :param seconds: wall-clock seconds.
    """

    groups: list[Group]
    failed: list[str]
    config: CandidateConfig
    cache: Path
    seconds: float


def extract_groups(
    records: Sequence[BenchRecord],
    repos: Path,
    cache_root: Path,
    *,
    potion_model: str | None = None,
    store: Path | None = None,
    progress: Callable[[Iterable[BenchRecord]], Iterable[BenchRecord]] = lambda it: it,
) -> Extraction:
    """Index each record's snapshot and extract its query group, or take it from the cache.

    The snapshots are indexed with BM25, TF-IDF (and Potion with ``potion_model``), the symbol graph and (for a
    snapshot with a history file) the history index, whose :data:`HISTORY_CANDIDATES` files join the candidates; the
    groups are cached in ``cache_root/<cache key>/<instance_id>.npz`` (:func:`_cache_key`), so a rerun resumes.
    One record's failure is recorded and the others go on.

    :param records: the training records.
    :param repos: the snapshots directory.
    :param cache_root: the feature cache.
    :param potion_model: the Potion model (dense features).
    :param store: the index store (default: the explorer's).
    :param progress: wraps the records iterator (a progress bar).
    :return: the extraction.
    """
    from swe_explore.evaluation.bench import find_snapshot
    from swe_explore.explore.fusion import FusionExplorer

    config = CandidateConfig(history=HISTORY_CANDIDATES)
    store_option: dict[str, Any] = {"store": store} if store else {}  # else the explorer's default store
    explorer = FusionExplorer(
        ranker="priors",
        candidates=config,
        potion_model=potion_model,
        retrievers=("bm25", "tfidf", "potion") if potion_model else ("bm25", "tfidf"),
        graph=True,
        history=True,
        **store_option,
    )
    key = _cache_key(
        config, {k: v for k, v in explorer.explorer_config.items() if k in ("chunker", "retrievers", "walk")}
    )
    cache = cache_root / key
    groups: list[Group] = []
    failed: list[str] = []
    t0 = time.perf_counter()
    for record in progress(records):
        path = cache / f"{record.instance_id}.npz"
        group = _load_group(path) if path.exists() else None
        if group is None:
            snapshot = find_snapshot(record, repos)
            if snapshot is None:
                failed.append(f"{record.instance_id}: no snapshot under {repos}")
                continue
            try:
                group = extract_group(record, explorer.load(snapshot, record.instance_id), config)
            except Exception as exc:  # one record's failure is reported, the others go on
                failed.append(f"{record.instance_id}: {type(exc).__name__}: {exc}")
                continue
            _save_group(path, group)
        groups.append(group)
    return Extraction(groups, failed, config, cache, time.perf_counter() - t0)


def _training_manifest(groups: Sequence[Group], provenance: Mapping[str, Any], seconds: float) -> dict[str, Any]:
    """The training manifest of a model card: every repository and commit used, counts, and how to reproduce.

    :param groups: the training groups.
    :param provenance: ``{"benches", "excluded", "command"}`` as the card records them.
    :param seconds: the extraction's wall-clock seconds.
    :return: the manifest.
    """
    import lightgbm

    repos: dict[str, list[str]] = {}
    for g in groups:
        repos.setdefault(g.repo, []).append(g.base_commit)
    return {
        "records": len(groups),
        "records_with_core_candidate": sum(int(g.overlap.max(initial=0) > 0) for g in groups),
        "candidates": int(sum(g.ids.size for g in groups)),
        "repositories": {repo: sorted(commits) for repo, commits in sorted(repos.items())},
        "validation_repositories": sorted(r for r in repos if is_valid_repo(r)),
        "benches": provenance["benches"],
        "excluded": provenance["excluded"],
        "all_features": list(ALL_FEATURES),
        "lightgbm": lightgbm.__version__,
        "numpy": np.__version__,
        "extraction_seconds": round(seconds, 1),
        "command": provenance["command"],
    }


def train_variant(
    name: str,
    extraction: Extraction,
    *,
    labels: str,
    rounds: int,
    seed: int,
    params: Mapping[str, Any],
    provenance: Mapping[str, Any],
) -> Any:
    """Train one :data:`VARIANTS` model on the extraction, holding out :func:`is_valid_repo` repositories for
    early stopping and leaving out the test-file candidates of records whose gold has no test file
    (:data:`NOT_LEARNED`).

    :param name: the variant.
    :param extraction: the groups (:func:`extract_groups`).
    :param labels: the relevance label scheme (:data:`~swe_explore.explore.ranker.LABEL_SCHEMES`).
    :param rounds: boosting rounds.
    :param seed: LightGBM's seed.
    :param params: LightGBM parameter overrides.
    :param provenance: ``{"benches", "excluded", "command"}`` for the manifest (:func:`_training_manifest`).
    :return: the :class:`~swe_explore.explore.ranker.RankerModel` (its card: features, groups, candidates,
        params, validation scores, manifest).
    """
    from swe_explore.explore.ranker import RankerModel, train

    spec = VARIANTS[name]
    dropped = set(spec.get("drop", ()))
    names = tuple(n for n in feature_names(spec["groups"]) if n not in NOT_LEARNED and n not in dropped)
    config = CandidateConfig(
        **{
            **extraction.config.to_dict(),
            "mentions": spec["mentions"],
            "graph": spec["graph"],
            "history": spec.get("history", 0),
        }
    )
    parts: dict[bool, list[tuple[np.ndarray, np.ndarray]]] = {True: [], False: []}
    for group in extraction.groups:
        rows = group.training_rows(config)
        parts[is_valid_repo(group.repo)].append((group.select(names)[rows], group.labels(labels)[rows]))
    booster = train(parts[False], names, rounds=rounds, seed=seed, valid=parts[True], params=dict(params))
    card = {
        "features": list(names),
        "groups": spec["groups"],
        "candidates": config.to_dict(),
        "params": {
            "rounds": rounds,
            "best_iteration": booster.best_iteration,
            "seed": seed,
            "labels": labels,
            "overrides": dict(params),
        },
        "validation": {k: float(v) for k, v in (booster.best_score.get("valid_0") or {}).items()},
        "manifest": _training_manifest(extraction.groups, provenance, extraction.seconds),
    }
    return RankerModel(booster, card, name)
