"""Explore one folder with a free-text issue: the ranked regions, with their first lines.

Usage::

    python scripts/explore.py PATH "issue text" [--k 5] [--budget 500] [--retriever NAME] [--chunker NAME]
        [--format text|json] [--lines N] [--store DIR [--snapshot-name NAME]] [--model PATH]
        [--include GLOB]... [--exclude GLOB]... [--language LANG]... [--no-ignore-files]
    python scripts/explore.py PATH - < issue.md          # the issue text from standard input

``PATH`` is any folder (a repository checkout, a snapshot); it is indexed on first use and the index is kept
in the store (default ``$SWE_EXPLORE_STORE``, else the user cache directory; never the working directory
unless ``--store`` says so), so the next query on an unchanged folder only loads it. No bench record is
needed. Where the index is, and whether it was built or found current, is one line on standard error
(``indexes: STORE (1 built, 0 current)``; ``--quiet`` drops it); a folder without any source file, and files
skipped as too large, are reported there too (``note: ...``). A folder moved or copied with its store finds its
index again by content (``indexes/manage.py``, README "Prebuilt indexes"). ``--format json`` prints
``{"path", "k", "budget", "explorer", "regions": [{"path", "start", "end", "score", "lines"}]}``; the text format
shows each region's score too. A region's score is that of its best-ranked chunk (the retriever's after the
ranking priors, or the learned ranker's; ``null`` for the reference baselines, which rank without one we keep).
Higher is better; scores compare within one query only.

``--include GLOB`` and ``--exclude GLOB`` (repeatable; git wildmatch over repo-relative paths: ``*.py``,
``src/``, ``**/tests/*``) and ``--language LANG`` (repeatable: ``python``, ``go``, ..., ``text``) keep regions
to matching files; they apply to the ranking before packing, so K and B are filled with matching regions
(:mod:`swe_explore.explore.filters`). The folder's ``.gitignore``/``.ignore`` files are honoured unless
``--no-ignore-files`` (docs/chunking.md).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from swe_explore.chunking.languages import LANGUAGES
from swe_explore.chunking.lines import read_lines
from swe_explore.chunking.types import Region
from swe_explore.chunking.walk import WalkConfig, WalkStats, walk_snapshot
from swe_explore.commands._args import die
from swe_explore.commands.explorer_args import (
    add_explorer_arguments,
    add_graph_worker_argument,
    explorer_from_args,
    use_graph_worker,
)
from swe_explore.explore.explorer import ReferenceAdapter
from swe_explore.explore.filters import RegionFilter, region_filter
from swe_explore.indexes.store import ReadOnlyStoreError
from swe_explore.retrievers.potion import ModelUnavailableError


def region_preview(root: Path, region: Region, n_lines: int) -> list[str]:
    """The first lines of a region, as the one line definition reads them (missing files give ``[]``).

    :param root: the explored folder.
    :param region: the region.
    :param n_lines: how many lines at most.
    :return: the lines, without line breaks.
    """
    path = root / region.path
    if not path.is_file() or n_lines <= 0:
        return []
    lines = read_lines(path)
    return lines[region.start - 1 : min(region.end, region.start - 1 + n_lines)]


def printable(text: str) -> str:
    """A file name for the text output, one line whatever it holds: unprintable characters (a newline, a tab,
    a control character) are escaped as in a Python literal (``\\n``); other characters are kept.

    :param text: a file name.
    :return: the name with its unprintable characters escaped.
    """
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def walk_notes(root: Path, stats: WalkStats) -> list[str]:
    """What to tell the user about a folder's walk: no source file at all, files skipped as too large.

    :param root: the explored folder.
    :param stats: its walk statistics.
    :return: the notes, one line each (none for a folder of indexed files with nothing too large).
    """
    notes = []
    if stats.files_indexed == 0:
        reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(stats.skipped.items()))
        notes.append(
            f"no source files indexed in {root} ({stats.files_seen} file(s) seen"
            + (f"; skipped: {reasons}" if reasons else "")
            + "); see docs/chunking.md for the languages indexed"
        )
    too_large = stats.skipped.get("too_large", 0)
    if too_large:
        examples = ", ".join(stats.examples.get("too_large", []))
        notes.append(f"{too_large} file(s) skipped as too large, not indexed: {examples}")
    return notes


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 the store cannot be written, 2 bad input)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not args.path.exists():
        die(parser, f"{args.path} does not exist")
    if not args.path.is_dir():
        die(parser, f"{args.path} is not a directory")
    if args.lines < 0:
        die(parser, f"--lines must be >= 0, got {args.lines}")
    issue = sys.stdin.read() if args.issue == "-" else args.issue
    if not issue.strip():
        die(parser, "the issue text is empty")
    try:
        explorer = explorer_from_args(args)
        filters = region_filter(args.include, args.exclude, args.language)
    except ModelUnavailableError:  # no model: an operational failure, exit status 1 (commands._errors)
        raise
    except ValueError as exc:
        parser.error(str(exc))
    use_graph_worker(explorer, args.graph_worker)
    if filters is not None and isinstance(explorer, ReferenceAdapter):
        parser.error(f"--include, --exclude and --language are not for {explorer.name} (the reference as specified)")
    try:
        regions = _scored_regions(explorer, args.path, issue, args.snapshot_name, filters)
    except ReadOnlyStoreError as exc:  # an operational failure (exit status 1), with advice that fits explore
        rerun = _without_store(list(sys.argv[1:] if argv is None else argv))
        advice = f"build it on a writable store with {parser.prog} {shlex.join(rerun)} --store DIR"
        if args.snapshot_name is None:
            advice += ", or pass --snapshot-name NAME to use an entry the store holds under another name"
            advice += " (swe-explore store list)"
        print(f"{parser.prog}: error: {ReadOnlyStoreError(exc.path, exc.cause, advice)}", file=sys.stderr)
        return 1
    store_use = getattr(explorer, "store_use", None)
    if store_use is not None and not args.quiet:
        print(store_use.line(), file=sys.stderr)
    walk = getattr(explorer, "walk", None)
    files, stats = walk_snapshot(args.path, walk if isinstance(walk, WalkConfig) else None)
    for note in walk_notes(args.path, stats):
        print(f"note: {note}", file=sys.stderr)
    if filters is not None and files and not any(filters.keeps(f.path, f.language) for f in files):
        print(
            f"note: no file matches {filters.describe()} in {args.path} ({len(files)} file(s) indexed)", file=sys.stderr
        )
    previews = [region_preview(args.path, r, args.lines) for r, _ in regions]
    if args.format == "json":
        payload: dict[str, Any] = {
            "path": str(args.path),
            "k": args.k,
            "budget": args.budget,
            "explorer": explorer.name,
            "regions": [r.to_json() | {"score": s, "lines": p} for (r, s), p in zip(regions, previews)],
        }
        print(json.dumps(payload, indent=1))
        return 0
    total = sum(r.n_lines for r, _ in regions)
    print(f"{explorer.name}: {len(regions)} region(s), {_n_lines(total)} (k={args.k}, budget={args.budget})")
    for rank, ((region, score), preview) in enumerate(zip(regions, previews), start=1):
        shown = "" if score is None else f", score {score:.4f}"
        print(f"\n{rank}. {printable(region.path)}:{region.start}-{region.end} ({_n_lines(region.n_lines)}{shown})")
        for offset, text in enumerate(preview):
            print(f"  {region.start + offset:>6} | {text}")
    return 0


def _without_store(argv: list[str]) -> list[str]:
    """The command's arguments without ``--store DIR`` (or ``--store=DIR``), to suggest the same run elsewhere."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--store":
            skip = True
        elif not arg.startswith("--store="):
            out.append(arg)
    return out


def _n_lines(n: int) -> str:
    """``1 line``, ``0 lines``, ``12 lines``."""
    return f"{n} line" if n == 1 else f"{n} lines"


def _scored_regions(
    explorer: Any, root: Path, issue: str, snapshot_name: str | None, filters: RegionFilter | None
) -> list[tuple[Region, float | None]]:
    """The explorer's regions with their scores (``None`` for the reference baselines, which keep none).

    :param explorer: an explorer of :func:`~swe_explore.commands.explorer_args.explorer_from_args`.
    :param root: the folder.
    :param issue: the issue text.
    :param snapshot_name: its name in the store.
    :param filters: the region filter (not for the reference baselines).
    :return: ``(region, score)`` pairs, best first.
    """
    if isinstance(explorer, ReferenceAdapter):
        return [(r, None) for r in explorer.explore(root, issue, snapshot_name)]
    return [(r.region, r.score) for r in explorer.explore_scored(root, issue, snapshot_name, filters=filters)]


def _parser() -> argparse.ArgumentParser:
    """The command's flags."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, help="the folder to explore (a repository tree)")
    parser.add_argument("issue", help="the issue text, or - to read it from standard input")
    parser.add_argument(
        "--format",
        choices=["text", "json"],
        default="text",
        help="text: ranked regions with their first lines; json: one object (default: %(default)s)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no 'indexes: STORE (N built, M current)' line on standard error"
    )
    parser.add_argument("--lines", type=int, default=3, help="first lines shown per region (default %(default)s)")
    parser.add_argument(
        "--snapshot-name",
        type=_snapshot_name,
        default=None,
        metavar="NAME",
        help="the folder's name in the store (default: its name and a hash of its path, or an entry of the same "
        "folder name built from the same content, as index_repos.py and a moved store leave them)",
    )
    parser.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="GLOB",
        help="regions only from files matching GLOB (git wildmatch on repo-relative paths; repeatable: any of them)",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="no regions from files matching GLOB (repeatable; wins over --include)",
    )
    parser.add_argument(
        "--language",
        action="append",
        default=[],
        metavar="LANG",
        help=f"regions only from files of language LANG (repeatable; {', '.join(LANGUAGES)})",
    )
    add_explorer_arguments(parser)
    add_graph_worker_argument(parser)
    return parser


def _snapshot_name(value: str) -> str:
    """``--snapshot-name``, checked to be one folder name of the store (a usage error otherwise)."""
    from swe_explore.indexes.store import check_snapshot_name

    try:
        return check_snapshot_name(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
