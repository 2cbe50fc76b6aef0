"""Train the learned ranker on labelled benches: one reproducible command, fixed seed.

Usage::

    python scripts/train_ranker.py --bench TRAIN.jsonl --repos DIR [--store DIR] [--cache DIR]
        [--exclude-repos ../shared/data/release-repos.txt] [--exclude-bench EVAL.jsonl ...]
        [--potion-model PATH] [--variant NAME ...] [--model-dir DIR] [--seed 0] [--rounds 400] [--jobs 1]

Every record of ``--bench`` (e.g. the ``train`` benches of ``scripts/mine_benches.py``) needs its snapshot under
``--repos`` (``scripts/materialize.py``). Records of a repository listed in ``--exclude-repos`` (the SWE-Explore
release's repositories, by default ``../shared/data/release-repos.txt`` when it exists) or present in any
``--exclude-bench`` (the evaluation benches) stop the command before any work. For each record the snapshot is
indexed (BM25, TF-IDF, Potion with ``--potion-model``, the symbol graph), its candidates' features and labels are
extracted once (cached in ``--cache``, resumable), and one LightGBM LambdaRank model per ``--variant`` is trained
on them (:data:`VARIANTS`; default: all) and written to ``--model-dir`` as ``<variant>.txt`` + ``<variant>.json``
(the card: features, candidate configuration, parameters, and the training manifest with every repository and
commit used). 15% of the repositories (chosen by a hash, fixed) are held out for early stopping. Candidates in
test files are not trained on (:data:`NOT_LEARNED`).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from swe_explore.commands._args import die
from swe_explore.evaluation.bench import find_snapshot, load_bench
from swe_explore.explore.features import CandidateConfig, feature_names
from swe_explore.explore.options import parse_option
from swe_explore.explore.ranker import LABEL_SCHEMES, MODELS_DIR, RankerModel, train
from swe_explore.explore.training import (
    ALL_FEATURES,
    Group,
    cache_key,
    check_training_repos,
    extract_group,
    load_group,
    read_repo_list,
    save_group,
)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_RELEASE_REPOS = ROOT.parent / "shared" / "data" / "release-repos.txt"

#: Model variants: feature groups and whether candidates come from mentions and the graph.
VARIANTS: dict[str, dict[str, Any]] = {
    "ranker-lexical": {"groups": ["lexical", "structure"], "mentions": False, "graph": False},
    "ranker-mentions": {"groups": ["lexical", "structure", "mentions"], "mentions": True, "graph": False},
    "ranker-graph": {"groups": ["lexical", "structure", "graph"], "mentions": False, "graph": True},
    "ranker-mentions-graph": {"groups": ["lexical", "structure", "mentions", "graph"], "mentions": True, "graph": True},
    "ranker-full": {"groups": ["lexical", "dense", "structure", "mentions", "graph"], "mentions": True, "graph": True},
}
VALID_SHARE = 0.15
#: Features computed but not learned. Mined commits never change a test file (a selection rule), so every test
#: chunk of the training data is irrelevant and a model would learn to bury tests, which exploration ground truth
#: is full of (agents read the tests): test-file candidates are left out of training, and ``is_test`` is no
#: feature, so tests are ranked by the same evidence as other code.
NOT_LEARNED = ("is_test",)


def is_valid_repo(repo: str) -> bool:
    """Whether a repository is held out for early stopping (a fixed 15% by SHA-256 of its name).

    :param repo: ``owner/name``.
    :return: true for the held-out share.
    """
    return int(hashlib.sha256(repo.lower().encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < VALID_SHARE


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 some record failed, 2 bad input)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", type=Path, action="append", required=True, help="training bench(es)")
    parser.add_argument("--repos", type=Path, required=True, help="snapshots, one per instance_id")
    parser.add_argument("--store", type=Path, default=None, help="index store (default: the explorer's)")
    parser.add_argument("--cache", type=Path, default=Path("outputs/ranker-cache"), help="feature cache")
    parser.add_argument(
        "--exclude-repos",
        type=Path,
        action="append",
        default=None,
        help="files listing repositories never to train on (default: the release's)",
    )
    parser.add_argument(
        "--exclude-bench",
        type=Path,
        action="append",
        default=[],
        help="evaluation benches whose repositories are never trained on",
    )
    parser.add_argument("--potion-model", default=None, help="Potion model (needed by ranker-full)")
    parser.add_argument("--variant", action="append", choices=list(VARIANTS), default=None)
    parser.add_argument("--model-dir", type=Path, default=MODELS_DIR)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--labels", choices=LABEL_SCHEMES, default="file", help="relevance label scheme")
    parser.add_argument(
        "--params",
        type=parse_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="LightGBM parameter override (repeatable)",
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N records (smoke runs)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    variants = args.variant or [v for v in VARIANTS if v != "ranker-full" or args.potion_model]
    records = []
    for bench in args.bench:
        try:
            records += load_bench(bench)
        except (ValueError, FileNotFoundError) as exc:
            die(parser, str(exc))
    if args.limit is not None:
        records = records[: args.limit]
    forbidden: dict[str, str] = {}
    exclude = (
        args.exclude_repos
        if args.exclude_repos is not None
        else ([DEFAULT_RELEASE_REPOS] if DEFAULT_RELEASE_REPOS.is_file() else [])
    )
    for path in exclude:
        forbidden.update(dict.fromkeys(read_repo_list(path), f"listed in {path.name}"))
    for path in args.exclude_bench:
        try:
            forbidden.update(
                {r.repo.lower(): f"in eval bench {path.name}" for r in load_bench(path, require_query=False)}
            )
        except (ValueError, FileNotFoundError) as exc:
            die(parser, str(exc))
    try:
        check_training_repos(records, forbidden)
    except ValueError as exc:
        die(parser, str(exc))

    from swe_explore.explore.fusion import FusionExplorer

    config = CandidateConfig()
    retrievers = ("bm25", "tfidf", "potion") if args.potion_model else ("bm25", "tfidf")
    explorer = FusionExplorer(
        ranker="priors",
        candidates=config,
        potion_model=args.potion_model,
        retrievers=retrievers,
        graph=True,
        **({"store": args.store} if args.store else {}),
    )
    key = cache_key(
        config, {k: v for k, v in explorer.explorer_config.items() if k in ("chunker", "retrievers", "walk")}
    )
    cache = args.cache / key
    groups: list[Group] = []
    failed: list[str] = []
    t0 = time.perf_counter()
    for record in tqdm(records, desc="features", unit="record", disable=args.quiet, file=sys.stderr):
        path = cache / f"{record.instance_id}.npz"
        group = load_group(path) if path.exists() else None
        if group is None:
            snapshot = find_snapshot(record, args.repos)
            if snapshot is None:
                failed.append(f"{record.instance_id}: no snapshot under {args.repos}")
                continue
            try:
                index = explorer.load(snapshot, record.instance_id)
                group = extract_group(record, index, config)
            except Exception as exc:  # one record's failure is reported, the others go on
                failed.append(f"{record.instance_id}: {type(exc).__name__}: {exc}")
                continue
            save_group(path, group)
        groups.append(group)
    extract_seconds = time.perf_counter() - t0
    print(
        f"features: {len(groups)} records ({len(failed)} failed) in {extract_seconds:.0f} s; cache {cache}",
        file=sys.stderr,
    )
    for message in failed:
        print(f"error: {message}", file=sys.stderr)
    if not groups:
        die(parser, "no record could be used")
    for name in variants:
        spec = VARIANTS[name]
        names = tuple(n for n in feature_names(spec["groups"]) if n not in NOT_LEARNED)
        variant_config = CandidateConfig(**{**config.to_dict(), "mentions": spec["mentions"], "graph": spec["graph"]})
        parts: dict[bool, list[tuple[np.ndarray, np.ndarray]]] = {True: [], False: []}
        for group in groups:
            rows = group.rows(variant_config) & (group.select(["is_test"])[:, 0] != 1)
            parts[is_valid_repo(group.repo)].append((group.select(names)[rows], group.labels(args.labels)[rows]))
        booster = train(
            parts[False], names, rounds=args.rounds, seed=args.seed, valid=parts[True], params=dict(args.params)
        )
        card = {
            "features": list(names),
            "groups": spec["groups"],
            "candidates": variant_config.to_dict(),
            "params": {
                "rounds": args.rounds,
                "best_iteration": booster.best_iteration,
                "seed": args.seed,
                "labels": args.labels,
                "overrides": dict(args.params),
            },
            "validation": {k: float(v) for k, v in (booster.best_score.get("valid_0") or {}).items()},
            "manifest": _manifest(groups, args, extract_seconds),
        }
        model = RankerModel(booster, card, name)
        txt, _ = model.save(args.model_dir, name)
        print(f"{name}: {len(names)} features, {booster.num_trees()} trees, validation {card['validation']} -> {txt}")
    return 1 if failed else 0


def _manifest(groups: list[Group], args: argparse.Namespace, seconds: float) -> dict[str, Any]:
    """The training manifest: every repository and commit used, counts, and how to reproduce."""
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
        "benches": [p.name for p in args.bench],
        "excluded": {
            "repo_lists": [str(p) for p in (args.exclude_repos or [DEFAULT_RELEASE_REPOS])],
            "benches": [p.name for p in args.exclude_bench],
        },
        "all_features": list(ALL_FEATURES),
        "lightgbm": lightgbm.__version__,
        "numpy": np.__version__,
        "extraction_seconds": round(seconds, 1),
        "command": "python scripts/train_ranker.py " + " ".join(args.argv),
    }
