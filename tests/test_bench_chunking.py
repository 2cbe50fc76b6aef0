"""Tests of scripts/bench_chunking.py: the invariant checker, the real-code survey and the throughput benchmark.

Only counts are asserted (files, lines, chunks, violations), never timings.
"""

from __future__ import annotations

import io
import runpy
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from swe_explore.chunking.registry import chunk_files, chunk_snapshot, make_chunker
from swe_explore.chunking.types import Chunk, SourceFile
from swe_explore.chunking.walk import walk_snapshot

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "langs"
BENCH: dict[str, Any] = runpy.run_path(str(ROOT / "scripts" / "bench_chunking.py"))

SOURCE = SourceFile("a.py", "python", ["def f():", "    return 1", "", "x = 2"], 30)


def _chunk(start: int, end: int, text: str | None = None) -> Chunk:
    body = "\n".join(SOURCE.lines[start - 1 : end]) if text is None else text
    return Chunk("a.py", start, end, "gap", "", "python", body)


def test_check_invariants_accepts_good_chunks() -> None:
    """The function chunks of a file break no invariant."""
    chunker = make_chunker("function")
    assert BENCH["check_invariants"](SOURCE, chunker.chunk_file(SOURCE), chunker) == []


@pytest.mark.parametrize(
    ("chunks", "message"),
    [
        ([_chunk(1, 2)], "a.py: 1 non-blank lines in no chunk (first: 4)"),
        ([_chunk(1, 2), _chunk(2, 4)], "a.py:1-2 overlaps a.py:2-4"),
        ([_chunk(1, 2, "def g():\n    return 1"), _chunk(4, 4)], "a.py:1-2: text differs from the file's lines"),
        ([_chunk(4, 4), _chunk(1, 2)], "a.py:4-4 and a.py:1-2 out of order"),
        ([_chunk(1, 5)], "a.py: chunk a.py:1-5 outside the file's 4 lines"),
    ],
)
def test_check_invariants_reports_violations(chunks: list[Chunk], message: str) -> None:
    """A missed line, an overlap, a wrong text, a wrong order or a chunk past the end is reported by name."""
    problems = BENCH["check_invariants"](SOURCE, chunks, make_chunker("function"))
    assert message in problems


def test_check_invariants_max_lines_and_window_overlap() -> None:
    """A function chunk longer than max_lines is reported; overlapping windows are not."""
    long = [_chunk(1, 4)]
    problems = BENCH["check_invariants"](SOURCE, long, make_chunker("function", max_lines=3))
    assert problems == ["a.py:1-4: 4 lines > max_lines 3"]
    windows = [_chunk(1, 2), _chunk(2, 4)]
    assert BENCH["check_invariants"](SOURCE, windows, make_chunker("window", size=3, overlap=1)) == []


def test_survey_on_fixtures_matches_chunk_stats() -> None:
    """The survey counts files, lines, chunks and definition lines per language as chunk_files does."""
    files, _ = walk_snapshot(FIXTURES)
    chunker = make_chunker("function")
    problems: list[str] = []
    by_language = BENCH["survey"](files, chunker, problems, 2)
    _, stats = chunk_files(files, chunker)
    assert problems == []
    assert sorted(by_language) == sorted(stats.languages)
    for name, lang in by_language.items():
        assert (lang.files, lang.lines, len(lang.sizes)) == (
            stats.languages[name]["files"],
            stats.languages[name]["lines"],
            stats.languages[name]["chunks"],
        )
        assert lang.violations == 0 and lang.parse_errors == 0
    assert sum(lang.definition_lines for lang in by_language.values()) == stats.definition_lines
    python = by_language["python"]
    assert sorted(python.sizes) == [2, 2, 2, 3, 4, 4, 4, 5]  # python/shapes.py: see test_chunkers
    table = BENCH["survey_table"](by_language)
    assert table.count("\n| ") == len(by_language) + 1  # one row per language plus the total row
    assert "| python | 1 | 37 | 0 (0.0 %) | – |" in table


def test_percentile_nearest_rank() -> None:
    """Percentiles use the nearest rank: p90 of 1..10 is 9, of 1..11 is 10, of nothing is 0."""
    percentile = BENCH["_percentile"]
    assert percentile(list(range(1, 11)), 90) == 9
    assert percentile(list(range(1, 12)), 90) == 10
    assert percentile([], 90) == 0


def test_benchmark_rows_count_the_same_files() -> None:
    """On the fixtures the reference reads two files; both tables count the files, lines and chunks of each side."""
    chunkers = {"function": make_chunker("function")}
    same, own = BENCH["benchmark"](FIXTURES, 1, chunkers)
    assert [row.name for row in same] == ["reference window (80/20)", "read + tree-sitter parse only", "function"]
    assert {(row.files, row.lines) for row in same} == {(2, 76)}  # python/shapes.py + typescript/shapes.ts
    assert [row.chunks for row in same] == [2, 0, 19]
    chunks, stats = chunk_snapshot(FIXTURES, "function")
    assert (own[0].files, own[0].chunks) == (2, 2)
    assert (own[1].files, own[1].lines, own[1].chunks) == (stats.files, stats.lines, len(chunks))


def test_survey_command_line() -> None:
    """--survey prints the table and exits 0 on clean fixtures; a missing directory is a usage error."""
    out = io.StringIO()
    with redirect_stdout(out):
        assert BENCH["main"](["--survey", str(FIXTURES), "--repeats", "1", "--worst", "1"]) == 0
    text = out.getvalue()
    assert "| rust | 1 | 42 |" in text and "| **all** | 14 |" in text
    assert "  gap       7 lines  c/shapes.h:1-7\n" in text
    assert "  header    3 lines  cpp/shapes.cpp:5-7 (shapes)\n" in text
    with pytest.raises(SystemExit) as exc:
        BENCH["main"](["--survey", str(FIXTURES / "missing")])
    assert exc.value.code == 2
