"""Print the chunks of a file or a directory as JSON lines, to see what an index will hold.

Usage::

    python scripts/show_chunks.py PATH [--chunker NAME] [--max-lines 120 ...] [--text] [--stats]

Each line is ``{"path", "start", "end", "kind", "symbol", "language"}`` (plus ``"text"`` with ``--text``).
For a directory, paths are relative to it and files follow the snapshot walker's rules; for a single file the
path is its name as given. ``--stats`` prints the chunk statistics (JSON) to stderr at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from swe_explore.chunking.languages import language_for_path
from swe_explore.chunking.lines import split_lines
from swe_explore.chunking.registry import chunk_snapshot
from swe_explore.chunking.types import Chunk, SourceFile
from swe_explore.chunking.walk import WalkConfig
from swe_explore.commands._args import add_chunker_arguments, chunker_from_args


def _row(chunk: Chunk, with_text: bool) -> dict[str, object]:
    row: dict[str, object] = {
        "path": chunk.path,
        "start": chunk.start,
        "end": chunk.end,
        "kind": chunk.kind,
        "symbol": chunk.symbol,
        "language": chunk.language,
    }
    if with_text:
        row["text"] = chunk.text
    return row


def main(argv: list[str] | None = None) -> int:
    """Run the command line.

    :param argv: arguments (default ``sys.argv[1:]``).
    :return: exit status (0 on success, 2 on bad input).
    """
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        chunker = chunker_from_args(args)
    except ValueError as exc:
        parser.error(str(exc))
    path: Path = args.path
    if not path.exists():
        parser.error(f"no such file or directory: {path}")
    out = sys.stdout
    if path.is_dir():
        chunks, stats = chunk_snapshot(path, chunker, WalkConfig(ignore_files=args.ignore_files))
        for chunk in chunks:
            out.write(json.dumps(_row(chunk, args.text), ensure_ascii=False) + "\n")
        if args.stats:
            print(json.dumps(stats.to_dict(), indent=1), file=sys.stderr)
        return 0
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        parser.error(f"{path}: binary file (NUL byte in the first 8 KiB)")
    lines = split_lines(data)
    language = language_for_path(path.name, "\n".join(lines))
    if language is None:
        parser.error(f"{path}: not a supported source or docs file (see chunking/languages.py)")
    source = SourceFile(path=path.as_posix(), language=language, lines=lines, n_bytes=len(data))
    chunks, report = chunker.chunk_file_report(source)
    for chunk in chunks:
        out.write(json.dumps(_row(chunk, args.text), ensure_ascii=False) + "\n")
    if args.stats:
        print(json.dumps({"chunker": chunker.config(), "report": report.__dict__}), file=sys.stderr)
    return 0


def _parser() -> argparse.ArgumentParser:
    """The command's flags."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, help="a source file or a snapshot directory")
    add_chunker_arguments(parser)
    parser.add_argument("--text", action="store_true", help="include each chunk's text")
    parser.add_argument("--stats", action="store_true", help="print chunk statistics (JSON) to stderr")
    parser.add_argument(
        "--no-ignore-files",
        dest="ignore_files",
        action="store_false",
        help="a directory: also chunk the files its .gitignore/.ignore files ignore (docs/chunking.md)",
    )
    return parser


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        sys.exit(0)
