"""Chunking throughput on a real snapshot, and a per-language survey of real code.

Usage::

    python scripts/bench_chunking.py [--snapshot DIR] [--repeats 5] [--cpu 0]
    python scripts/bench_chunking.py --survey DIR [--chunker function ...] [--worst 5] [--cpu 0]

**Benchmark** (default; issue 3 item 5): the strategies ``window``, ``function`` and ``hybrid`` against the
reference window chunker (:func:`explore.reference.reference_chunks`, docs/metrics.md §2.2, no chunk cap) on one
snapshot. After one warm-up run of every row, each of ``--repeats`` rounds runs every row once (so load from
other processes falls on all rows alike); the median per row is reported as seconds, lines/s and speed
relative to the reference in the same run. Two tables:

- *same files*: the files both walkers index, read from disk and chunked (the reference reads with
  ``errors="ignore"`` and ``str.splitlines``, through its file loop ``explore.reference._iter_windows``;
  ours with :mod:`chunking.lines`); walking is not timed. A row "read + tree-sitter parse only" shows how much
  of ``function`` is the parser itself;
- *own file sets, end to end*: :func:`chunking.registry.chunk_snapshot` against the reference's
  ``reference_chunks(max_chunks=None)``, each walking, reading and chunking its own file set.

**Survey** (``--survey DIR``; issue 3 item 4): every file of ``DIR`` (walked with the snapshot rules) is chunked
with one strategy (default ``function``), files already in memory; per language it prints files, lines, the
share of files whose parse tree holds ERROR/MISSING nodes, parse-guard fallbacks, the share of lines inside
definition chunks (``function``/``method``/``class``/``header``/``definition``), chunk sizes (median, p90 and
max lines), lines/s of ``chunk_file`` and the number of invariant violations (a non-blank line in no chunk, a
chunk text differing from the file's lines, chunks out of order or overlapping for a non-window strategy, a
chunk longer than ``max_lines``). ``--worst N`` also lists the N longest gap and header chunks per language,
to see what the chunker leaves outside definitions.

Timings are wall-clock (``time.perf_counter``); pin to one core with ``--cpu 0`` (or ``taskset -c 0``) for
figures comparable across runs. The survey chunks each file ``--repeats`` times (default 3) and counts its
best time; the benchmark keeps the median of ``--repeats`` runs (default 5). ``--chunker`` and its options
apply to the survey; the benchmark always runs ``window``, ``function`` and ``hybrid`` with their defaults.
Output is Markdown tables on stdout; the exit status is 1 when the survey found invariant violations (listed
on stderr).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from swe_explore.commands._errors import interrupt_quietly, run_main

with interrupt_quietly():  # Ctrl-C while the modules import: exit 130 quietly
    from swe_explore.chunking.languages import get_parser, get_spec, language_for_path, needs_text
    from swe_explore.chunking.lines import split_lines
    from swe_explore.chunking.registry import chunk_snapshot, make_chunker
    from swe_explore.chunking.treesitter import DEFINITION_KINDS, FunctionChunker
    from swe_explore.chunking.types import Chunk, SourceFile
    from swe_explore.chunking.walk import walk_snapshot
    from swe_explore.chunking.window import Chunker, WindowChunker
    from swe_explore.commands._args import add_chunker_arguments, chunker_from_args
    from swe_explore.explore import reference

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SNAPSHOT = ROOT / "repos" / "dev" / "pydata__xarray-7393"


# -- invariants ------------------------------------------------------------------------------------------


def check_invariants(source: SourceFile, chunks: Sequence[Chunk], chunker: Chunker) -> list[str]:
    """The chunk invariants of issue 3 that ``chunks`` of ``source`` break (empty when all hold).

    :param source: the file.
    :param chunks: its chunks from ``chunker``.
    :param chunker: the strategy (windows may overlap; function/hybrid chunks are at most ``max_lines`` long).
    :return: one message per broken invariant, naming the file and the lines.
    """
    problems: list[str] = []
    n = len(source.lines)
    covered = bytearray(n + 2)
    for chunk in chunks:
        if chunk.path != source.path or not 1 <= chunk.start <= chunk.end <= n:
            problems.append(f"{source.path}: chunk {chunk.location} outside the file's {n} lines")
            continue
        if chunk.text != "\n".join(source.lines[chunk.start - 1 : chunk.end]):
            problems.append(f"{chunk.location}: text differs from the file's lines")
        if isinstance(chunker, FunctionChunker) and chunk.n_lines > chunker.max_lines:
            problems.append(f"{chunk.location}: {chunk.n_lines} lines > max_lines {chunker.max_lines}")
        covered[chunk.start : chunk.end + 1] = b"\x01" * (chunk.end - chunk.start + 1)
    missed = [i + 1 for i, line in enumerate(source.lines) if line.strip() and not covered[i + 1]]
    if missed:
        problems.append(f"{source.path}: {len(missed)} non-blank lines in no chunk (first: {missed[0]})")
    for a, b in zip(chunks, chunks[1:]):
        if (a.start, a.end) > (b.start, b.end):
            problems.append(f"{a.location} and {b.location} out of order")
        elif not isinstance(chunker, WindowChunker) and a.end >= b.start:
            problems.append(f"{a.location} overlaps {b.location}")
    return problems


# -- survey ----------------------------------------------------------------------------------------------


@dataclass
class LanguageSurvey:
    """Survey figures of one language (see the module docstring).

    :param files: files chunked.
    :param lines: their lines.
    :param parse_errors: files whose parse tree holds ERROR or MISSING nodes.
    :param fallbacks: parse-guard fallback reason -> files.
    :param definition_lines: lines inside definition chunks.
    :param sizes: every chunk's length in lines.
    :param seconds: time spent in ``chunk_file_report`` (seconds).
    :param violations: invariant violations found.
    :param gaps: ``(lines, location)`` of gap chunks, for ``--worst``.
    :param headers: ``(lines, location)`` of header chunks, for ``--worst``.
    """

    files: int = 0
    lines: int = 0
    parse_errors: int = 0
    fallbacks: dict[str, int] = field(default_factory=dict)
    definition_lines: int = 0
    sizes: list[int] = field(default_factory=list)
    seconds: float = 0.0
    violations: int = 0
    gaps: list[tuple[int, str]] = field(default_factory=list)
    headers: list[tuple[int, str]] = field(default_factory=list)


def _percentile(values: Sequence[int], q: float) -> int:
    """Nearest-rank percentile ``q`` (0-100) of ``values`` (0 when empty)."""
    if not values:
        return 0
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


def survey(
    files: Sequence[SourceFile], chunker: Chunker, out_problems: list[str], repeats: int = 1
) -> dict[str, LanguageSurvey]:
    """Chunk every file, timing ``chunk_file_report`` and checking the invariants.

    :param files: walked files (in memory).
    :param chunker: the strategy.
    :param out_problems: invariant violation messages are appended here.
    :param repeats: times each file is chunked; its best (shortest) time counts, which keeps other processes'
        load out of the figure.
    :return: language -> its figures, languages in first-seen order.
    :raises ValueError: if ``repeats < 1``.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    by_language: dict[str, LanguageSurvey] = {}
    clock = time.perf_counter
    for source in files:
        elapsed = float("inf")
        for _ in range(repeats):
            t0 = clock()
            chunks, report = chunker.chunk_file_report(source)
            elapsed = min(elapsed, clock() - t0)
        lang = by_language.setdefault(source.language, LanguageSurvey())
        lang.files += 1
        lang.lines += len(source.lines)
        lang.seconds += elapsed
        lang.parse_errors += report.parse_error
        if report.fallback:
            lang.fallbacks[report.fallback] = lang.fallbacks.get(report.fallback, 0) + 1
        in_definition = bytearray(len(source.lines) + 2)
        for chunk in chunks:
            lang.sizes.append(chunk.n_lines)
            if chunk.kind in DEFINITION_KINDS:
                in_definition[chunk.start : chunk.end + 1] = b"\x01" * chunk.n_lines
            elif chunk.kind == "gap":
                lang.gaps.append((chunk.n_lines, chunk.location))
            if chunk.kind == "header":
                lang.headers.append((chunk.n_lines, chunk.location))
        lang.definition_lines += sum(in_definition)
        problems = check_invariants(source, chunks, chunker)
        lang.violations += len(problems)
        out_problems.extend(problems)
    return by_language


def survey_table(by_language: dict[str, LanguageSurvey]) -> str:
    """The survey as a Markdown table, languages sorted by name, plus a total row.

    :param by_language: output of :func:`survey`.
    :return: the table text.
    """
    head = (
        "| language | files | lines | parse errors | fallbacks | lines in definitions | chunks "
        "| median / p90 / max lines | lines/s | violations |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    total = LanguageSurvey()
    for name in sorted(by_language):
        lang = by_language[name]
        rows.append(_survey_row(name, lang))
        total.files += lang.files
        total.lines += lang.lines
        total.parse_errors += lang.parse_errors
        for reason, count in lang.fallbacks.items():
            total.fallbacks[reason] = total.fallbacks.get(reason, 0) + count
        total.definition_lines += lang.definition_lines
        total.sizes.extend(lang.sizes)
        total.seconds += lang.seconds
        total.violations += lang.violations
    if len(by_language) > 1:
        rows.append(_survey_row("**all**", total))
    return head + "\n".join(rows)


def _survey_row(name: str, lang: LanguageSurvey) -> str:
    fallbacks = ", ".join(f"{k} {v}" for k, v in sorted(lang.fallbacks.items())) or "–"
    error_share = 100.0 * lang.parse_errors / lang.files if lang.files else 0.0
    definition_share = 100.0 * lang.definition_lines / lang.lines if lang.lines else 0.0
    speed = lang.lines / lang.seconds if lang.seconds else 0.0
    sizes = f"{statistics.median(lang.sizes):g} / {_percentile(lang.sizes, 90)} / {max(lang.sizes, default=0)}"
    return (
        f"| {name} | {lang.files:,} | {lang.lines:,} | {lang.parse_errors} ({error_share:.1f} %) | {fallbacks} "
        f"| {definition_share:.1f} % | {len(lang.sizes):,} | {sizes} | {speed:,.0f} | {lang.violations} |"
    )


def worst_chunks(by_language: dict[str, LanguageSurvey], n: int) -> str:
    """The ``n`` longest gap and header chunks per language, as text.

    :param by_language: output of :func:`survey`.
    :param n: chunks listed per language and kind.
    :return: one block per language.
    """
    out = []
    for name in sorted(by_language):
        lang = by_language[name]
        out.append(f"{name}:")
        for label, items in (("gap", lang.gaps), ("header", lang.headers)):
            for size, where in sorted(items, key=lambda item: (-item[0], item[1]))[:n]:
                out.append(f"  {label:6} {size:4} lines  {where}")
    return "\n".join(out)


# -- throughput benchmark --------------------------------------------------------------------------------


@dataclass
class Timing:
    """One benchmark row: a strategy over a file set.

    :param name: row label.
    :param files: files chunked.
    :param lines: their lines.
    :param chunks: chunks produced.
    :param seconds: median wall-clock time of the repeats (seconds).
    """

    name: str
    files: int
    lines: int
    chunks: int
    seconds: float

    @property
    def lines_per_second(self) -> float:
        """Lines chunked per second (0 for a zero time)."""
        return self.lines / self.seconds if self.seconds else 0.0


def _interleaved_medians(runs: Sequence[Callable[[], int]], repeats: int) -> list[tuple[float, int]]:
    """Median seconds of each run over ``repeats`` rounds, and what its last call returned.

    Every run is called once to warm up; then each round calls every run once, in order, so that load from
    other processes falls on all runs alike and the ratios between them stay meaningful.
    """
    results = [run() for run in runs]
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(repeats):
        for i, run in enumerate(runs):
            t0 = time.perf_counter()
            results[i] = run()
            times[i].append(time.perf_counter() - t0)
    return [(statistics.median(t), r) for t, r in zip(times, results)]


def _read_source(root: Path, rel: str) -> SourceFile:
    """Read one file the way the snapshot walker does (lines of :mod:`chunking.lines`, language by name)."""
    data = (root / rel).read_bytes()
    lines = split_lines(data)
    language = language_for_path(rel, "\n".join(lines) if needs_text(rel) else None)
    return SourceFile(path=rel, language=language or "text", lines=lines, n_bytes=len(data))


def _reference_lines(root: Path, paths: Sequence[str]) -> int:
    """Lines of ``paths`` as the reference counts them (``errors="ignore"``, ``str.splitlines``)."""
    return sum(len((root / rel).read_text(encoding="utf-8", errors="ignore").splitlines()) for rel in paths)


def benchmark(snapshot: Path, repeats: int, chunkers: dict[str, Chunker]) -> tuple[list[Timing], list[Timing]]:
    """Time our strategies and the reference window chunker on one snapshot (see the module docstring).

    :param snapshot: the snapshot directory.
    :param repeats: timed rounds (the median per row is kept), after one warm-up run; each round runs every row
        once, so that other processes' load falls on all rows alike.
    :param chunkers: row label -> our chunker.
    :return: ``(same_files, own_file_sets)`` rows; the first row of each is the reference.
    :raises FileNotFoundError: if ``snapshot`` is not a directory.
    :raises ValueError: if ``repeats < 1``.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    if not snapshot.is_dir():
        raise FileNotFoundError(f"snapshot directory {snapshot} does not exist")
    ours, _ = walk_snapshot(snapshot)
    ref_paths = reference.reference_source_files(snapshot)
    ref_set = set(ref_paths)
    same = [f.path for f in ours if f.path in ref_set]
    same_lines = sum(len(f.lines) for f in ours if f.path in ref_set)
    size, overlap = reference.CHUNK_SIZE, reference.CHUNK_OVERLAP

    def reference_same() -> int:
        return sum(1 for _ in reference._iter_windows(snapshot, same, size, overlap))

    def parse_only() -> int:
        for rel in same:
            source = _read_source(snapshot, rel)
            grammar = get_spec(source.language).grammar_for(source.text)
            if grammar is not None:
                get_parser(grammar).parse(source.text.encode("utf-8", "surrogatepass") + b"\n")
        return 0

    def ours_same(chunker: Chunker) -> Callable[[], int]:
        return lambda: sum(len(chunker.chunk_file(_read_source(snapshot, rel))) for rel in same)

    def reference_own() -> int:
        return len(reference.reference_chunks(snapshot, size, overlap, max_chunks=None))

    own_sizes: dict[str, tuple[int, int]] = {}

    def ours_own(label: str, chunker: Chunker) -> Callable[[], int]:
        def run() -> int:
            chunks, stats = chunk_snapshot(snapshot, chunker)
            own_sizes[label] = (stats.files, stats.lines)
            return len(chunks)

        return run

    same_labels = ["reference window (80/20)", "read + tree-sitter parse only", *chunkers]
    same_runs = [reference_same, parse_only, *(ours_same(c) for c in chunkers.values())]
    own_runs = [reference_own, *(ours_own(label, c) for label, c in chunkers.items())]
    timed = _interleaved_medians(same_runs + own_runs, repeats)
    same_rows = [
        Timing(label, len(same), same_lines, n_chunks, seconds)
        for label, (seconds, n_chunks) in zip(same_labels, timed[: len(same_runs)])
    ]
    ref_seconds, ref_chunks = timed[len(same_runs)]
    ref_lines = _reference_lines(snapshot, ref_paths)
    own_rows = [Timing("reference window (80/20)", len(ref_paths), ref_lines, ref_chunks, ref_seconds)]
    for label, (seconds, n_chunks) in zip(chunkers, timed[len(same_runs) + 1 :]):
        files, lines = own_sizes[label]
        own_rows.append(Timing(label, files, lines, n_chunks, seconds))
    return same_rows, own_rows


def timing_table(rows: Sequence[Timing]) -> str:
    """Benchmark rows as a Markdown table; speed is relative to the first row (the reference).

    :param rows: reference first, then our strategies.
    :return: the table text.
    """
    base = rows[0].lines_per_second
    out = [
        "| strategy | files | lines | chunks | median time | lines/s | speed vs reference |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        ratio = row.lines_per_second / base if base else 0.0
        out.append(
            f"| {row.name} | {row.files:,} | {row.lines:,} | {row.chunks:,} | {row.seconds:.3f} s "
            f"| {row.lines_per_second:,.0f} | {ratio:.3f}× |"
        )
    return "\n".join(out)


# -- command line ----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Run the command line.

    :param argv: arguments (default ``sys.argv[1:]``).
    :return: exit status (0 on success, 1 when the survey found invariant violations, 2 on bad input).
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshot", type=Path, default=DEFAULT_SNAPSHOT, help="benchmark snapshot directory")
    parser.add_argument(
        "--repeats", type=int, default=None, help="timed runs: median per row (default 5); survey: best per file (3)"
    )
    parser.add_argument("--survey", type=Path, metavar="DIR", help="survey real code under DIR instead")
    parser.add_argument("--worst", type=int, default=0, metavar="N", help="survey: the N longest gap/header chunks")
    parser.add_argument("--cpu", type=int, default=None, help="pin the process to this CPU (Linux)")
    add_chunker_arguments(parser)
    args = parser.parse_args(argv)
    if args.cpu is not None:
        if not hasattr(os, "sched_setaffinity"):
            parser.error("--cpu needs os.sched_setaffinity (Linux)")
        try:
            os.sched_setaffinity(0, {args.cpu})
        except OSError as exc:
            parser.error(f"--cpu {args.cpu}: {exc}")
    try:
        chunker = chunker_from_args(args)
    except ValueError as exc:
        parser.error(str(exc))
    if args.survey is not None:
        if not args.survey.is_dir():
            parser.error(f"survey directory {args.survey} does not exist")
        repeats = 3 if args.repeats is None else args.repeats
        if repeats < 1:
            parser.error(f"--repeats must be >= 1, got {repeats}")
        files, walk_stats = walk_snapshot(args.survey)
        problems: list[str] = []
        by_language = survey(files, chunker, problems, repeats)
        print(f"# survey of {args.survey} with {chunker.config()}, best of {repeats} runs per file")
        print(f"walk: {walk_stats.files_indexed} files indexed, skipped {dict(sorted(walk_stats.skipped.items()))}\n")
        print(survey_table(by_language))
        if args.worst > 0:
            print()
            print(worst_chunks(by_language, args.worst))
        for message in problems[:50]:
            print(f"violation: {message}", file=sys.stderr)
        return 1 if problems else 0
    repeats = 5 if args.repeats is None else args.repeats
    if repeats < 1:
        parser.error(f"--repeats must be >= 1, got {repeats}")
    if not args.snapshot.is_dir():
        parser.error(f"snapshot directory {args.snapshot} does not exist")
    chunkers: dict[str, Chunker] = {
        "window (80/20)": make_chunker("window"),
        "function": make_chunker("function"),
        "hybrid": make_chunker("hybrid"),
    }
    same_rows, own_rows = benchmark(args.snapshot, repeats, chunkers)
    print(f"# chunking throughput on {args.snapshot.name}, median of {repeats} runs\n")
    print("Same files (read from disk and chunked; walking not timed):\n")
    print(timing_table(same_rows))
    print("\nOwn file sets, end to end (walk, read, chunk):\n")
    print(timing_table(own_rows))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
