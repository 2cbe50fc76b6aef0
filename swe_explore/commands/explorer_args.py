"""The explorer flags the subcommands share (``--retriever``, ``--chunker ...``, ``--k``, ``--budget``, ...).

Keeping them here means ``index``, ``run``, ``explore`` and ``compare`` name every option the same way and build
explorers the same way: :func:`explorer_from_args` refuses the flags an explorer would ignore with the check
:func:`~swe_explore.explore.make_explorer` uses (:func:`~swe_explore.explore.config.check_explorer_options`).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from swe_explore.chunking.registry import CHUNKERS, chunker_options
from swe_explore.chunking.walk import WalkConfig
from swe_explore.commands._args import add_chunker_arguments
from swe_explore.explore.config import (
    DEFAULT_TOP_N,
    EXPLORER_NAMES,
    LEARNED,
    check_explorer_options,
    default_pack,
    default_shape,
    explorer_kind,
    takes_option,
)
from swe_explore.explore.explorer import IndexedExplorer, ReferenceAdapter, make_explorer
from swe_explore.explore.fusion import FusionExplorer
from swe_explore.explore.packing import LEARNED_PACK, PackConfig
from swe_explore.explore.priors import RankPriors
from swe_explore.explore.shaping import COMPLETIONS, SHAPES, ShapeConfig, shape_config
from swe_explore.indexes.store import default_store
from swe_explore.retrievers.registry import RETRIEVERS


def parse_option(text: str) -> tuple[str, Any]:
    """Parse ``KEY=VALUE``: VALUE is JSON if it parses (``k1=1.2``, ``parts=["bm25","tfidf"]``), a list if it is
    bracketed without quotes (``parts=[bm25,tfidf]``), else text.

    :param text: the option as given on the command line.
    :return: ``(key, value)``.
    :raises argparse.ArgumentTypeError: if there is no ``=``.
    """
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    key = key.replace("-", "_")
    try:
        return key, json.loads(raw)
    except json.JSONDecodeError:
        if raw.startswith("[") and raw.endswith("]"):
            return key, [item.strip().strip("'\"") for item in raw[1:-1].split(",") if item.strip()]
        return key, raw


def add_explorer_arguments(
    parser: argparse.ArgumentParser,
    multiple_retrievers: bool = False,
    choose: bool = True,
    packing: bool = True,
    store_flags: Sequence[str] = ("--store",),
) -> None:
    """Add the explorer options: retriever, chunker and its options, packer, ranking priors, store, model.

    :param parser: the script's parser.
    :param multiple_retrievers: accept several ``--retriever`` values (index_repos.py builds several).
    :param choose: offer ``--retriever``/``--chunker`` (scripts that loop over a grid set them themselves).
    :param packing: offer the packer and prior options (not for scripts that only build indexes).
    :param store_flags: the flag name(s) of the index store directory.
    """
    if choose:
        _add_choice_arguments(parser, multiple_retrievers)
    add_chunker_arguments(parser)
    if not choose:
        parser.set_defaults(chunker=None)
    parser.add_argument(
        "--retriever-option",
        "-O",
        action="append",
        type=parse_option,
        default=[],
        metavar="KEY=VALUE",
        help="retriever option, e.g. -O k1=1.2 -O backend=bm25s (hybrid: -O rrf_k=60)",
    )
    parser.add_argument(
        "--model",
        default=None,
        help="embedding model (local path or hub id) for potion/faiss/hybrid "
        "(default: $SWE_EXPLORE_POTION_MODEL, else minishlab/potion-base-8M)",
    )
    if packing:
        _add_packing_arguments(parser)
    parser.add_argument(
        *store_flags,
        dest="store",
        type=Path,
        default=default_store(),
        help="index store directory (default: $SWE_EXPLORE_STORE, else the user cache directory: %(default)s)",
    )
    parser.add_argument("--rebuild", action="store_true", help="rebuild indexes even if up to date or corrupt")
    parser.add_argument(
        "--no-reuse",
        dest="reuse",
        action="store_false",
        help="build missing indexes from scratch: per-file chunks, term counts, vectors and graph names are not "
        "taken from the store's content cache (<store>/_cache), which is not filled either (the same index files)",
    )
    parser.add_argument(
        "--no-ignore-files",
        dest="ignore_files",
        action="store_false",
        help="index the files the folder's .gitignore/.ignore files ignore too (bench snapshots never apply them: "
        "see docs/chunking.md)",
    )


def walk_from_args(args: argparse.Namespace) -> WalkConfig:
    """The walking rules the command line asks for (``--no-ignore-files``).

    :param args: parsed arguments (from :func:`add_explorer_arguments`).
    :return: the walk config.
    """
    return WalkConfig(ignore_files=getattr(args, "ignore_files", True))


def _add_choice_arguments(parser: argparse.ArgumentParser, multiple_retrievers: bool) -> None:
    """``--retriever`` (one explorer, or several retrievers to build) and the learned explorer's flags."""
    if multiple_retrievers:
        parser.add_argument(
            "--retriever",
            action="append",
            choices=list(RETRIEVERS),
            default=None,
            help="retriever(s) to build; repeat for several (default: bm25 and tfidf, what the learned explorer reads)",
        )
        return
    parser.add_argument(
        "--retriever",
        default=LEARNED,
        choices=list(EXPLORER_NAMES),
        help="explorer: learned (fusion with the learned ranker), a retriever with the ranking priors, or a "
        "reference baseline re-run (default: %(default)s)",
    )
    parser.add_argument(
        "--ranker-model",
        default=None,
        help="learned: the ranker model, a shipped name or a path (default: the shipped default)",
    )
    parser.add_argument(
        "--files-first",
        type=int,
        default=0,
        help="learned: files whose best chunk goes first, two-stage packing (default: 0, off)",
    )
    shape = ShapeConfig()
    parser.add_argument(
        "--shape",
        choices=list(SHAPES),
        default=None,
        help="learned: evidence (the default: one region per file shaped like the evidence: confident files whole "
        "or as their dense span, doubtful files and tests as small windows) or plain (the line-budget packer)",
    )
    parser.add_argument(
        "--whole-file-lines",
        type=int,
        default=None,
        help=f"--shape evidence: largest region of a confident file, W lines (default: {shape.whole_file_lines})",
    )
    parser.add_argument(
        "--confident-margin",
        type=float,
        default=None,
        help=f"--shape evidence: score margin to the top file within which a file is confident "
        f"(default: {shape.confident_margin})",
    )
    parser.add_argument(
        "--completion",
        choices=list(COMPLETIONS),
        default=None,
        help=f"--shape evidence: complete the top code files with their tests (default: {shape.completion})",
    )


def _add_packing_arguments(parser: argparse.ArgumentParser) -> None:
    """The packer flags (K, B, caps, merge gap, fill), ``--top-n`` and the ranking priors."""
    pack = PackConfig()
    parser.add_argument("--k", type=int, default=pack.k, help="regions per instance, top-K (default: %(default)s)")
    parser.add_argument(
        "--budget", type=int, default=pack.budget, help="line budget B per instance (default: %(default)s)"
    )
    parser.add_argument(
        "--max-region-lines",
        type=int,
        default=None,
        help=f"cap on how far one region grows, in lines; two regions of one file that meet are joined and "
        f"may be longer (default: {pack.max_region_lines}; learned: {LEARNED_PACK.max_region_lines})",
    )
    parser.add_argument(
        "--max-regions-per-file",
        type=int,
        default=None,
        help=f"cap on regions in one file (default: {pack.max_regions_per_file})",
    )
    parser.add_argument(
        "--merge-gap",
        type=int,
        default=None,
        help=f"merge chunks this close in one file (default: {pack.merge_gap}; learned: {LEARNED_PACK.merge_gap})",
    )
    parser.add_argument(
        "--no-fill",
        dest="fill",
        action="store_false",
        help="do not spend the unused budget on context around the regions",
    )
    parser.add_argument("--top-n", type=int, default=DEFAULT_TOP_N, help="ranked chunks handed to the packer (>= 1)")
    parser.add_argument("--no-priors", action="store_true", help="raw retriever ranking (no ranking priors)")
    for name, default in RankPriors().to_dict().items():
        parser.add_argument(
            "--" + name.replace("_", "-"),
            type=float,
            default=None,
            help=f"ranking prior (default {default}; see explore/priors.py)",
        )


#: Packer flags whose default depends on the explorer (``None`` on the command line: the explorer's default).
EXPLORER_PACK_FLAGS = ("max_region_lines", "max_regions_per_file", "merge_gap")


def pack_config_from_args(args: argparse.Namespace, base: PackConfig | None = None) -> PackConfig:
    """The packer parameters given on the command line, over an explorer's defaults.

    :param args: parsed arguments.
    :param base: the explorer's packer defaults (default ``PackConfig()``; the learned explorer's are
        :data:`~swe_explore.explore.packing.LEARNED_PACK`); flags left unset keep its values.
    :return: the packer config.
    :raises ValueError: if a value is out of range.
    """
    base = base or PackConfig()
    given = {name: getattr(args, name) for name in EXPLORER_PACK_FLAGS if getattr(args, name) is not None}
    return replace(base, k=args.k, budget=args.budget, fill=args.fill, **given)


#: The ``--shape evidence`` flags -> their :class:`~swe_explore.explore.shaping.ShapeConfig` fields.
SHAPE_FLAGS = {
    "whole_file_lines": "--whole-file-lines",
    "confident_margin": "--confident-margin",
    "completion": "--completion",
}


def shape_from_args(args: argparse.Namespace, name: str = LEARNED) -> ShapeConfig | None:
    """The region shape the command line asks for (``None``: the packer).

    :param args: parsed arguments.
    :param name: the explorer (without ``--shape``, its :func:`~swe_explore.explore.config.default_shape`).
    :return: ``None`` for ``--shape plain`` (or an explorer whose default is the packer); else the shaping
        parameters, the flags given over :class:`~swe_explore.explore.shaping.ShapeConfig`'s defaults.
    :raises ValueError: if a shaping flag is given with the packer, or a value is out of range.
    """
    given = {field: getattr(args, field) for field in SHAPE_FLAGS if getattr(args, field, None) is not None}
    chosen = shape_config(getattr(args, "shape", None) or default_shape(name))
    if chosen is None:
        if given:
            flags = ", ".join(SHAPE_FLAGS[f] for f in given)
            raise ValueError(f"{flags} need --shape evidence")
        return None
    return replace(chosen, **given)


def priors_from_args(args: argparse.Namespace) -> RankPriors:
    """The ranking priors given on the command line (``--no-priors`` turns them all off).

    :param args: parsed arguments.
    :return: the priors.
    :raises ValueError: if a weight is out of range.
    """
    base = RankPriors.off() if args.no_priors else RankPriors()
    given = {k: getattr(args, k) for k in base.to_dict() if getattr(args, k, None) is not None}
    return RankPriors(**(base.to_dict() | given))


def chunker_options_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The chunker options given on the command line (only those that were given)."""
    options: dict[str, Any] = {}
    for name in CHUNKERS:
        for option in chunker_options(name):
            value = getattr(args, option, None)
            if value is not None:
                options[option] = value
    return options


def given_options(args: argparse.Namespace) -> dict[str, str]:
    """The :func:`~swe_explore.explore.make_explorer` options the command line sets away from their defaults,
    each mapped to the flag(s) that set it (for :func:`~swe_explore.explore.config.check_explorer_options`).

    ``--model``, ``--store``, ``--rebuild`` and ``--no-ignore-files`` are not listed: they are the command's shared
    flags (a grid such as ``compare`` runs BM25 and Potion with one ``--model``), handed to the explorers that use
    them.

    :param args: parsed arguments (from :func:`add_explorer_arguments`).
    :return: option name -> flag(s).
    """
    pack_flags = [f"--{n.replace('_', '-')}" for n in EXPLORER_PACK_FLAGS if getattr(args, n, None) is not None]
    if not getattr(args, "fill", True):
        pack_flags.append("--no-fill")
    priors = hasattr(args, "no_priors") and priors_from_args(args) != RankPriors()
    flags = {
        "retriever_options": ("--retriever-option", bool(args.retriever_option)),
        "chunker_options": ("chunker options", bool(chunker_options_from_args(args))),
        "chunker": ("--chunker other than function", args.chunker not in (None, "function")),
        "budget": ("--budget", getattr(args, "budget", PackConfig().budget) != PackConfig().budget),
        "pack": (", ".join(pack_flags), bool(pack_flags)),
        "top_n": ("--top-n", getattr(args, "top_n", DEFAULT_TOP_N) != DEFAULT_TOP_N),
        "priors": ("--no-priors or prior weights", priors),
        "ranker_model": ("--ranker-model", bool(getattr(args, "ranker_model", None))),
        "files_first": ("--files-first", bool(getattr(args, "files_first", 0))),
        "shape": (
            ", ".join(["--shape"] * (getattr(args, "shape", None) is not None) + _shape_flags(args)),
            getattr(args, "shape", None) is not None or bool(_shape_flags(args)),
        ),
    }
    return {option: label for option, (label, given) in flags.items() if given}


def explorer_from_args(
    args: argparse.Namespace, retriever: str | None = None
) -> IndexedExplorer | ReferenceAdapter | FusionExplorer:
    """Build the explorer the command line describes.

    :param args: parsed arguments (from :func:`add_explorer_arguments`).
    :param retriever: override ``args.retriever`` (for scripts that loop over several).
    :return: the explorer.
    :raises ValueError: for an unknown name, a flag the explorer does not take (naming the flag and the explorer)
        or an invalid option.
    """
    name = retriever or args.retriever
    given = given_options(args)
    check_explorer_options(name, given)
    if explorer_kind(name) == "learned":
        _check_shape_flags(args, given)
    if args.store.exists() and not args.store.is_dir():
        raise ValueError(f"--store {args.store} is not a directory")
    options: dict[str, Any] = {option: value for option, value in _option_values(args, name).items() if option in given}
    if getattr(args, "k", None) is not None:
        options["k"] = args.k
    for shared in ("model", "store", "rebuild", "reuse"):
        if takes_option(name, shared):
            options[shared] = getattr(args, shared)
    if takes_option(name, "walk"):
        options["walk"] = walk_from_args(args)
    if explorer_kind(name) != "reference":
        options["pack"] = pack_config_from_args(args, default_pack(name))
        options.pop("budget", None)  # in the pack
    return make_explorer(name, **options)


def _option_values(args: argparse.Namespace, name: str) -> dict[str, Any]:
    """The values of the options :func:`given_options` lists (``pack``: see :func:`explorer_from_args`)."""
    return {
        "retriever_options": dict(args.retriever_option),
        "chunker_options": chunker_options_from_args(args),
        "chunker": args.chunker,
        "budget": getattr(args, "budget", None),
        "top_n": getattr(args, "top_n", None),
        "priors": priors_from_args(args) if hasattr(args, "no_priors") else None,
        "ranker_model": getattr(args, "ranker_model", None),
        "files_first": getattr(args, "files_first", 0),
        "shape": _shape_value(args, name),
    }


def _shape_flags(args: argparse.Namespace) -> list[str]:
    """The ``--shape evidence`` tuning flags given."""
    return [flag for field, flag in SHAPE_FLAGS.items() if getattr(args, field, None) is not None]


def _shape_value(args: argparse.Namespace, name: str) -> str | ShapeConfig | None:
    """make_explorer's ``shape`` for the command line: ``"plain"`` for the packer, else the shaping parameters."""
    if explorer_kind(name) != "learned":
        return None
    return shape_from_args(args, name) or "plain"


def _check_shape_flags(args: argparse.Namespace, given: dict[str, str]) -> None:
    """Refuse the flags the learned explorer's shape would ignore: shaping flags with ``--shape plain``, packer and
    ``--files-first`` flags with the evidence shape (the default).

    :param args: parsed arguments.
    :param given: :func:`given_options` of ``args``.
    :raises ValueError: naming the flags and the ``--shape`` they need.
    """
    if shape_from_args(args) is None:
        return
    ignored = [given[o] for o in ("pack", "files_first") if o in given]
    if ignored:
        raise ValueError(f"{', '.join(ignored)} need --shape plain (the default evidence shape plans its own regions)")


def add_graph_worker_argument(parser: argparse.ArgumentParser, when: str = "") -> None:
    """Add ``--no-graph-worker`` (``args.graph_worker``, default ``True``), for :func:`use_graph_worker` and
    ``index_repos.py``.

    :param parser: the command's parser.
    :param when: the command's own conditions for the worker, said before the common ones (e.g. ``with --jobs 1``).
    """
    parser.add_argument(
        "--no-graph-worker",
        dest="graph_worker",
        action="store_false",
        help="build the symbol graph after the retrievers in this process, not next to them in a forked child "
        f"(the default {when + ' ' if when else ''}on Linux with two or more usable CPUs and the memory for a "
        "copy of the process, when a graph is built; the same files either way)",
    )


def use_graph_worker(explorer: Any, wanted: bool = True) -> None:
    """Let an explorer that builds the symbol graph build it in a forked child next to the retrievers, where a
    second CPU is free (:func:`~swe_explore.indexes.graph_store.graph_worker_available`); for commands that index
    one snapshot at a time in this process.

    :param explorer: an explorer of :func:`explorer_from_args` (only a ``FusionExplorer`` has a graph).
    :param wanted: ``False`` (``--no-graph-worker``) leaves the graph to the process.
    """
    from swe_explore.indexes.graph_store import graph_worker_available

    if wanted and hasattr(explorer, "graph_worker") and graph_worker_available():
        explorer.graph_worker = True
