"""Command-line options shared by the commands: bench input (``--bench``, ``--repos``, ``--issue-map``), the
chunker flags (``--chunker NAME --max-lines 120 ...``), and error reporting.

The library stays free of ``argparse``: these helpers turn flags into the library's arguments. The explorer
options (``--retriever``, ``--k``, ``--budget``, ...) are in :mod:`swe_explore.commands.explorer_args`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from swe_explore import MINI_BENCH, MINI_REPOS
from swe_explore.chunking.registry import CHUNKERS, DEFAULT_CHUNKER, Chunker, chunker_options, make_chunker


def die(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    """Report a bad input (a data file, a directory, a config clash) without the usage dump; exit status 2.

    :param parser: the script's parser (for its name).
    :param message: what is wrong, naming the file or record.
    """
    print(f"{parser.prog}: error: {message}", file=sys.stderr)
    raise SystemExit(2)


class _GivenPath(argparse.Action):
    """Store the path and record that the flag was given (``bench_given``), so a default can be told apart."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option: Any = None
    ) -> None:
        setattr(namespace, self.dest, values)
        namespace.bench_given = True


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--bench FILE``, ``--repos DIR`` (both default to the mini bench that ships with the project) and
    ``--issue-map FILE`` (the reference runner's option: issue texts for benches without them).

    :param parser: the script's parser.
    """
    parser.add_argument(
        "--bench", type=Path, default=MINI_BENCH, action=_GivenPath, help="bench JSONL (default: the mini bench)"
    )
    parser.set_defaults(bench_given=False)
    parser.add_argument(
        "--repos",
        type=Path,
        default=None,
        help="snapshots, one per instance_id: <repos>/<instance_id> or the record's repo_dir "
        "(default: the mini bench's, with the mini bench)",
    )
    parser.add_argument(
        "--shared-snapshots",
        action="store_true",
        help="also accept folders shared by several instances (<repos>/<name>, <repos>/<org>__<name>, "
        "..., as the reference runner does); off by default: such a folder is at another "
        "instance's commit",
    )
    parser.add_argument(
        "--issue-map",
        type=Path,
        default=None,
        metavar="FILE",
        help="JSON {instance_id: issue text}; its texts replace the bench's problem_statement "
        "(for rows of the public release, which have none)",
    )


def load_bench_args(
    parser: argparse.ArgumentParser, args: argparse.Namespace, limit: int | None = None, require_query: bool = True
) -> list[Any]:
    """Check ``--bench``/``--repos``/``--issue-map`` and load the bench; exit with a clear message on bad input.

    ``--repos`` may be left out only with the default mini bench, and ``--repos`` other than the mini bench's own
    snapshots needs ``--bench`` (else the mini bench would run, or resume, on foreign snapshots); it must be a
    directory; the bench must load
    and hold at least one instance with core regions; with ``require_query`` every instance needs an issue text
    (from ``--issue-map``, else its ``problem_statement``), or the error names the first one without. Records
    dropped for empty core regions and issue-map ids that match no record are reported on stderr; with
    ``args.strict`` such ids are an error (exit status 1, a ``--strict`` gap).

    :param parser: the script's parser (for errors).
    :param args: parsed arguments (``args.repos`` is filled in when defaulted).
    :param limit: keep only the first N instances.
    :param require_query: reject records without issue text (not needed to score rows).
    :return: the bench records.
    """
    from swe_explore.evaluation.bench import BenchNotes, load_bench, load_issue_map

    if args.repos is None:
        if args.bench.resolve() != MINI_BENCH.resolve():
            parser.error("--repos DIR is required with --bench (the directory of snapshots, one per instance_id)")
        args.repos = MINI_REPOS
    elif not getattr(args, "bench_given", True) and args.repos.resolve() != MINI_REPOS.resolve():
        die(
            parser,
            f"--repos {args.repos} needs --bench FILE, the bench of its snapshots (without --bench the mini "
            "bench runs, on its own snapshots)",
        )
    if not args.repos.is_dir():
        die(parser, f"--repos {args.repos} is not a directory")
    try:
        issue_path = getattr(args, "issue_map", None)
        issue_map = load_issue_map(issue_path) if issue_path is not None else None
        notes = BenchNotes()
        records = load_bench(args.bench, limit=limit, require_query=require_query, issue_map=issue_map, notes=notes)
    except (ValueError, FileNotFoundError) as exc:
        die(parser, str(exc))
    for line in notes.lines(args.bench, issue_path):
        print(line, file=sys.stderr)
    if getattr(args, "strict", False) and notes.unmatched_issue_ids:  # a --strict gap: exit status 1
        print(
            f"{parser.prog}: error: --strict: {len(notes.unmatched_issue_ids)} instance id(s) of --issue-map "
            f"{issue_path} match no record of {args.bench}",
            file=sys.stderr,
        )
        raise SystemExit(1)
    if not records:
        die(parser, f"{args.bench}: no instance to run (empty bench, --limit 0, or no record with core regions)")
    return records


def add_paper_rows_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--paper-rows [FILE]`` (``evaluate``, ``compare``): the paper's main-table rows next to ours.

    :param parser: the script's parser.
    """
    from swe_explore.evaluation.paper_rows import PAPER_TABLE

    parser.add_argument(
        "--paper-rows",
        nargs="?",
        type=Path,
        const=PAPER_TABLE,
        default=None,
        metavar="FILE",
        help="also print the paper's main-table rows (measured on all 848 instances, labelled so) for the metrics "
        "they share (default FILE: docs/paper-main-table.csv of the source checkout)",
    )


def add_parallel_arguments(parser: argparse.ArgumentParser, backends: Sequence[str], task: str) -> None:
    """Add ``--jobs N``, ``--backend NAME`` and ``--scheduler ADDRESS`` (joblib workers or a Dask cluster).

    :param parser: the script's parser.
    :param backends: the ``--backend`` choices, the first the default.
    :param task: what one task does, for the help (e.g. ``"one snapshot"``).
    """
    parser.add_argument(
        "--jobs", "-j", type=int, default=1, help=f"parallel workers, one task per {task} (-1: all cores)"
    )
    parser.add_argument(
        "--backend", default=backends[0], choices=list(backends), help="joblib backend (default: %(default)s)"
    )
    parser.add_argument("--scheduler", default=None, help="Dask scheduler address, with --backend dask")


def check_parallel_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse ``--jobs 0`` (or below -1) and ``--scheduler`` without ``--backend dask`` (usage errors, exit 2).

    :param parser: the script's parser.
    :param args: parsed arguments (from :func:`add_parallel_arguments`).
    """
    if args.jobs == 0 or args.jobs < -1:
        parser.error(f"--jobs must be >= 1 or -1 (all cores), got {args.jobs}")
    if args.scheduler and args.backend != "dask":
        parser.error("--scheduler needs --backend dask")


def add_chunker_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--chunker NAME`` and every strategy option (``--max-lines``, ``--size``, ...) to a parser.

    Options default to ``None`` (not given); :func:`chunker_from_args` passes only the given ones, so an option
    the chosen strategy does not have is reported rather than silently ignored.

    :param parser: the script's argument parser.
    """
    parser.add_argument(
        "--chunker", default=DEFAULT_CHUNKER, choices=list(CHUNKERS), help="chunk strategy (default: %(default)s)"
    )
    owners: dict[str, list[str]] = {}
    defaults: dict[str, object] = {}
    for name in CHUNKERS:
        for option, default in chunker_options(name).items():
            owners.setdefault(option, []).append(name)
            defaults.setdefault(option, default)
    for option, names in owners.items():
        default = defaults[option]
        flag = "--" + option.replace("_", "-")
        help_text = f"{', '.join(names)} option (default {default})"
        if isinstance(default, bool):
            parser.add_argument(flag, dest=option, default=None, action=argparse.BooleanOptionalAction, help=help_text)
        else:
            parser.add_argument(flag, dest=option, default=None, type=int, help=help_text)


def chunker_from_args(args: argparse.Namespace) -> Chunker:
    """Build the chunker selected by :func:`add_chunker_arguments` flags.

    :param args: parsed arguments.
    :return: the chunker.
    :raises ValueError: if an option given does not belong to the chosen strategy, or is out of range.
    """
    options: dict[str, int | bool] = {}
    for name in CHUNKERS:
        for option in chunker_options(name):
            value = getattr(args, option, None)
            if value is not None:
                options[option] = value
    return make_chunker(args.chunker, **options)


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: equal once resolved (symlinks followed), or one file on disk (hard links).

    :param a: a path.
    :param b: another path.
    :return: ``True`` if writing ``a`` would change ``b``.
    """
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet
        return False


def refuse_overwriting_inputs(
    parser: argparse.ArgumentParser,
    outputs: Iterable[tuple[str, Path | None]],
    inputs: Iterable[tuple[str, Path | None]],
) -> None:
    """Stop (exit status 2) when an output file of the command is one of its input files.

    :param parser: the command's parser (for its name).
    :param outputs: ``(flag, path)`` of each file the command writes (``None``: not given).
    :param inputs: ``(flag, path)`` of each file it reads.
    """
    given_inputs = [(flag, path) for flag, path in inputs if path is not None]
    for out_flag, out in outputs:
        if out is None:
            continue
        for in_flag, path in given_inputs:
            if same_file(out, path):
                die(parser, f"{out_flag} {out} is the input {in_flag} {path}; it would be overwritten: write elsewhere")


def refuse_writing_into(
    parser: argparse.ArgumentParser,
    outputs: Iterable[tuple[str, Path | None]],
    folders: Iterable[tuple[str, Path | None]],
) -> None:
    """Stop (exit status 2) when an output of the command lies inside a folder it reads (a snapshot folder, the
    ``--repos`` directory) or keeps (the index store): writing there would change a snapshot or an index.

    :param parser: the command's parser (for its name).
    :param outputs: ``(flag, path)`` of each file or directory the command writes (``None``: not given).
    :param folders: ``(flag, directory)`` of each folder that must stay untouched (``None``: not given).
    """
    given = [(flag, folder, folder.resolve()) for flag, folder in folders if folder is not None]
    for out_flag, out in outputs:
        if out is None:
            continue
        target = out.resolve()
        for flag, folder, resolved in given:
            if target == resolved or resolved in target.parents:
                die(
                    parser,
                    f"{out_flag} {out} is inside {flag} {folder}; writing there would change it: write elsewhere",
                )
