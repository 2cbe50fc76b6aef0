"""Train the learned ranker on labelled benches: one reproducible command, fixed seed.

Usage::

    python scripts/train_ranker.py --bench TRAIN.jsonl --repos DIR [--store DIR] [--cache DIR]
        [--exclude-repos ../shared/data/release-repos.txt] [--exclude-bench EVAL.jsonl ...]
        [--potion-model PATH] [--variant NAME ...] [--model-dir DIR] [--seed 0] [--rounds 400] [--jobs 1]

Every record of ``--bench`` (e.g. the ``train`` benches of ``scripts/mine_benches.py``) needs its snapshot under
``--repos`` (``scripts/materialize.py``). Records of a repository listed in ``--exclude-repos`` (the SWE-Explore
release's repositories, by default ``../shared/data/release-repos.txt`` when it exists) or present in any
``--exclude-bench`` (the evaluation benches) stop the command before any work. For each record the snapshot is
indexed (BM25, TF-IDF, Potion with ``--potion-model``, the symbol graph, and the history index of a snapshot with
a history file), its candidates' features and labels are
extracted once (cached in ``--cache``, resumable), and one LightGBM LambdaRank model per ``--variant`` is trained
on them (:data:`swe_explore.explore.training.VARIANTS`; default: all but the ``history`` variants, which need
snapshots with history files, docs/history.md) and written to ``--model-dir`` as
``<variant>.txt`` + ``<variant>.json`` (the card: features, candidate configuration, parameters, and the training
manifest with every repository and commit used). 15% of the repositories (chosen by a hash, fixed) are held out
for early stopping. Candidates in test files are not trained on
(:data:`swe_explore.explore.training.NOT_LEARNED`); the work is :mod:`swe_explore.explore.training`'s.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tqdm import tqdm

from swe_explore.commands._args import die, refuse_overwriting_inputs
from swe_explore.commands.explorer_args import parse_option
from swe_explore.evaluation.bench import load_bench
from swe_explore.explore.ranker import LABEL_SCHEMES, MODELS_DIR
from swe_explore.explore.training import (
    ABLATION_VARIANTS,
    VARIANTS,
    check_training_repos,
    extract_groups,
    forbidden_repos,
    train_variant,
)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_RELEASE_REPOS = ROOT.parent / "shared" / "data" / "release-repos.txt"


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 some record failed, 2 bad input)."""
    parser = _parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    inputs = [("--bench", b) for b in args.bench] + [("--repos", args.repos)]
    inputs += [("--exclude-bench", b) for b in args.exclude_bench] + [
        ("--exclude-repos", b) for b in args.exclude_repos or []
    ]
    refuse_overwriting_inputs(parser, [("--model-dir", args.model_dir), ("--cache", args.cache)], inputs)
    variants = args.variant or [
        v for v in VARIANTS if (v != "ranker-full" or args.potion_model) and v not in ABLATION_VARIANTS
    ]
    records = _records(parser, args)
    _check_repos(parser, args, records)

    def bar(items: Any) -> Any:
        return tqdm(items, desc="features", unit="record", disable=args.quiet, file=sys.stderr)

    extraction = extract_groups(
        records, args.repos, args.cache, potion_model=args.potion_model, store=args.store, progress=bar
    )
    print(
        f"features: {len(extraction.groups)} records ({len(extraction.failed)} failed) in "
        f"{extraction.seconds:.0f} s; cache {extraction.cache}",
        file=sys.stderr,
    )
    for message in extraction.failed:
        print(f"error: {message}", file=sys.stderr)
    if not extraction.groups:
        die(parser, "no record could be used")
    for name in variants:
        model = train_variant(
            name,
            extraction,
            labels=args.labels,
            rounds=args.rounds,
            seed=args.seed,
            params=dict(args.params),
            provenance=_provenance(args),
        )
        txt, _ = model.save(args.model_dir, name)
        print(
            f"{name}: {len(model.card['features'])} features, {model.booster.num_trees()} trees, "
            f"validation {model.card['validation']} -> {txt}"
        )
    return 1 if extraction.failed else 0


def _parser() -> argparse.ArgumentParser:
    """The command's flags."""
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
    parser.add_argument(
        "--variant",
        action="append",
        choices=list(VARIANTS),
        default=None,
        help=(
            "ranker variant to train (repeatable; default: every variant but the *-history ones, ranker-full only "
            "with --potion-model)"
        ),
    )
    parser.add_argument(
        "--model-dir", type=Path, default=MODELS_DIR, help="where the models and model cards go (default: %(default)s)"
    )
    parser.add_argument("--seed", type=int, default=0, help="LightGBM seed (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=400, help="boosting rounds (default: %(default)s)")
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
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def _check_repos(parser: argparse.ArgumentParser, args: argparse.Namespace, records: list[Any]) -> None:
    """Stop (exit status 2) on a record of a repository of ``--exclude-repos`` or ``--exclude-bench``."""
    exclude = (
        args.exclude_repos
        if args.exclude_repos is not None
        else ([DEFAULT_RELEASE_REPOS] if DEFAULT_RELEASE_REPOS.is_file() else [])
    )
    try:
        check_training_repos(records, forbidden_repos(exclude, args.exclude_bench))
    except (ValueError, FileNotFoundError) as exc:
        die(parser, str(exc))


def _provenance(args: argparse.Namespace) -> dict[str, Any]:
    """What the model cards record of the command: benches, exclusions, the command line."""
    return {
        "benches": [p.name for p in args.bench],
        "excluded": {
            "repo_lists": [str(p) for p in (args.exclude_repos or [DEFAULT_RELEASE_REPOS])],
            "benches": [p.name for p in args.exclude_bench],
        },
        "command": "python scripts/train_ranker.py " + " ".join(args.argv),
    }


def _records(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[Any]:
    """The records of every ``--bench``, the first ``--limit``."""
    records = []
    for bench in args.bench:
        try:
            records += load_bench(bench)
        except (ValueError, FileNotFoundError) as exc:
            die(parser, str(exc))
    return records if args.limit is None else records[: args.limit]
