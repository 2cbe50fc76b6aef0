"""Look after an index store: what it holds, how big it is, and removing what is no longer needed.

Usage::

    swe-explore store list [--store DIR] [--json]     # per snapshot: name, folder, configs, size, last used
    swe-explore store du   [--store DIR] [--json]     # total and per kind: indexes, graph, reuse cache, other
    swe-explore store gc   [--store DIR] [--json] [--older-than DATE] [--all] [--cache] [--dry-run]

``--store`` defaults to the default store (``$SWE_EXPLORE_STORE``, else the user cache directory). ``gc`` removes
the indexes of snapshots whose folder no longer exists; with ``--older-than DATE`` (``YYYY-MM-DD``, an ISO time,
or ``30d``) also those last used before it; with ``--all`` every index and the reuse cache; with ``--cache`` the
reuse cache too (``<store>/_cache``: shared by content, no index points into it, so removing it costs only
speed on the next build). Every ``gc`` also removes what killed processes left: an index's temporaries and lock
file (only where its lock is free, so never a live build's; other files and symbolic links are not touched), and
a reuse cache a killed ``gc --cache`` had set aside. ``--dry-run`` lists what would go and writes nothing. Every
action refuses, with exit status 2 and one line naming it, a ``--store`` that does not exist (``no such index
store``) or is a directory that is not an index store (indexes/manage.py says what is one): a mistyped
``--store`` never lists or removes a source folder. A snapshot last used from a folder that moved counts as
existing once it was used from the new place (README, "Prebuilt indexes").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from swe_explore.commands._args import die
from swe_explore.indexes.manage import NotAStoreError, check_store, collect_garbage, disk_usage, list_store, parse_date
from swe_explore.indexes.store import default_store


def format_size(n_bytes: int) -> str:
    """A byte count for people: ``512 B``, ``1.5 KiB``, ``12.3 MiB``, ``2.0 GiB``.

    :param n_bytes: the count.
    :return: the text.
    """
    size = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{n_bytes} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def describe_config(config: dict[str, Any]) -> str:
    """One index directory of ``store list`` as text: ``history``, or ``<chunker>[ (<walk differences>)]:
    <retrievers>[ + graph]``, e.g. ``function (ignore_files: off): bm25 + graph``.

    :param config: one of :attr:`~indexes.manage.SnapshotEntry.configs`.
    :return: the text.
    """
    if config["kind"] == "history":
        return "history"
    walk = ", ".join(
        f"{k}: {('on' if v else 'off') if isinstance(v, bool) else json.dumps(v)}" for k, v in config["walk"].items()
    )
    where = f" ({walk})" if walk else ""
    retrievers = ", ".join(config["retrievers"]) or "no retriever"
    return f"{config['chunker']}{where}: {retrievers}{' + graph' if config['graph'] else ''}"


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 the store cannot be written, 2 bad input)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.action is None:
        parser.print_help()
        return 2
    if args.action == "gc" and args.older_than is not None:
        try:
            args.older_than = parse_date(args.older_than)
        except ValueError as exc:
            die(parser, f"--older-than: {exc}")
    try:
        check_store(args.store)
    except NotAStoreError as exc:
        die(parser, f"--store {exc}")
    if args.action == "list":
        return _list(args)
    if args.action == "du":
        return _du(args)
    return _gc(parser, args)


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=1))


def _list(args: argparse.Namespace) -> int:
    """``store list``: one line per snapshot entry (or one JSON list)."""
    entries = list_store(args.store)
    if args.json:
        _print_json([e.to_json() for e in entries])
        return 0
    print(f"{args.store}: {len(entries)} snapshot(s)")
    for entry in entries:
        used = entry.to_json()["last_used"] or "never"
        configs = "; ".join(describe_config(c) for c in entry.configs)
        where = entry.paths[0] if entry.paths else "(folder unknown)"
        gone = "" if entry.exists() else "  [folder missing]"
        print(f"{entry.name}  {format_size(entry.size)}  last used {used}  [{configs}]  from {where}{gone}")
    return 0


def _du(args: argparse.Namespace) -> int:
    """``store du``: the total and the bytes per kind."""
    usage = disk_usage(args.store)
    if args.json:
        _print_json({"store": str(args.store)} | usage)
        return 0
    print(f"{args.store}: {format_size(usage['total'])} ({usage['total']} bytes), {usage['snapshots']} snapshot(s)")
    for kind in ("indexes", "graph", "reuse_cache", "other"):
        print(f"  {kind.replace('_', ' '):<12} {format_size(usage[kind]):>10}  ({usage[kind]} bytes)")
    return 0


def _gc(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``store gc``: remove (or, with ``--dry-run``, list) the stale entries."""
    try:
        result = collect_garbage(args.store, args.older_than, args.all, args.cache, args.dry_run)
    except PermissionError as exc:
        print(f"{parser.prog}: error: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    if args.json:
        _print_json(result.to_json())
        return 0
    verb = "would remove" if args.dry_run else "removed"
    for name, reason, size in result.removed:
        why = {"missing": "folder missing", "older": "last used before the date", "all": "--all"}[reason]
        print(f"{verb} {name} ({why}, {format_size(size)})")
    if result.reuse_cache is not None:
        print(f"{verb} the reuse cache ({format_size(result.reuse_cache)})")
    for path, size in result.temporaries:
        print(f"{verb} {path} (left by a killed process, {format_size(size)})")
    for name in result.busy:
        print(f"skipped {name}: a build holds its lock", file=sys.stderr)
    temporaries = f", {len(result.temporaries)} leftover(s) of killed processes" if result.temporaries else ""
    print(f"{args.store}: {verb} {len(result.removed)} snapshot(s){temporaries}, {format_size(result.freed)}")
    return 0


def _parser() -> argparse.ArgumentParser:
    """The command's flags."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    actions = parser.add_subparsers(dest="action", metavar="{list,du,gc}")
    for name, summary in (
        ("list", "per snapshot: name, folder it was built from, configs, size, last used"),
        ("du", "bytes in total and per kind: indexes, graph, reuse cache, other"),
        ("gc", "remove the indexes of snapshots whose folder is gone (or older, or all)"),
    ):
        sub = actions.add_parser(name, help=summary, description=summary)
        sub.add_argument(
            "--store",
            type=Path,
            default=default_store(),
            help="index store directory (default: $SWE_EXPLORE_STORE, else the user cache directory: %(default)s)",
        )
        sub.add_argument("--json", action="store_true", help="print JSON instead of text")
        if name == "gc":
            sub.add_argument("--older-than", metavar="DATE", help="also remove those last used before DATE")
            sub.add_argument("--all", action="store_true", help="remove every index and the reuse cache")
            sub.add_argument("--cache", action="store_true", help="also remove the reuse cache (<store>/_cache)")
            sub.add_argument("--dry-run", action="store_true", help="list what would be removed, remove nothing")
    return parser


if __name__ == "__main__":
    sys.exit(main())
