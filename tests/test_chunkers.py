"""Tests of the chunk strategies (window, function, hybrid, file), the registry and show_chunks.py.

Exact line ranges per language on the fixtures in tests/fixtures/langs, invariants for every strategy on every
fixture, and bad inputs (multibyte text, line ends, long lines, blank lines, macros and parse errors,
TypeScript/TSX, minified files, empty snapshots: docs/chunking.md).
"""

from __future__ import annotations

import argparse
import io
import json
import random
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from swe_explore.chunking.languages import language_for_path
from swe_explore.chunking.lines import split_lines
from swe_explore.chunking.registry import (
    CHUNKERS,
    chunk_files,
    chunk_snapshot,
    chunker_options,
    make_chunker,
)
from swe_explore.chunking.treesitter import FunctionChunker
from swe_explore.chunking.types import Chunk, SourceFile
from swe_explore.chunking.walk import walk_snapshot
from swe_explore.chunking.window import Chunker, WindowChunker, block_ranges, pack_ranges, window_ranges
from swe_explore.commands import chunks as chunks_command
from swe_explore.commands._args import add_chunker_arguments, chunker_from_args

FIXTURES = Path(__file__).parent / "fixtures" / "langs"
ROOT = Path(__file__).resolve().parents[1]

Expected = list[tuple[int, int, str, str]]

EXPECTED_FUNCTION: dict[str, Expected] = {
    "c/shapes.c": [
        (1, 5, "gap", ""),
        (7, 10, "class", "circle"),
        (12, 12, "definition", "circle_t"),
        (14, 18, "function", "circle_area"),
        (20, 23, "function", "circle_scale"),
        (25, 28, "class", "color"),
        (30, 35, "function", "main"),
    ],
    "c/shapes.h": [
        (1, 7, "gap", ""),
        (9, 12, "function", "is_unit"),
        (14, 14, "gap", ""),
    ],
    "cpp/point.h": [
        (1, 1, "gap", ""),
        (3, 3, "header", "geo"),
        (5, 6, "header", "geo.Point"),
        (7, 7, "method", "geo.Point.Point"),
        (9, 9, "method", "geo.Point.x"),
        (11, 13, "gap", "geo.Point"),
        (15, 15, "gap", "geo"),
    ],
    "cpp/shapes.cpp": [
        (1, 3, "gap", ""),
        (5, 7, "header", "shapes"),
        (9, 11, "header", "shapes.Circle"),
        (12, 12, "method", "shapes.Circle.Circle"),
        (14, 16, "method", "shapes.Circle.Area"),
        (18, 22, "gap", "shapes.Circle"),
        (24, 26, "function", "shapes.Circle.Scaled"),
        (28, 33, "function", "shapes.TotalArea"),
        (35, 35, "gap", "shapes"),
        (37, 40, "function", "main"),
    ],
    "go/shapes.go": [
        (1, 9, "gap", ""),
        (11, 15, "class", "Circle"),
        (17, 20, "method", "Circle.Area"),
        (22, 24, "method", "Circle.Scale"),
        (26, 28, "class", "Shape"),
        (30, 37, "function", "TotalArea"),
        (39, 39, "gap", ""),
        (41, 43, "function", "init"),
    ],
    "java/Shapes.java": [
        (1, 3, "gap", ""),
        (5, 9, "header", "Shapes"),
        (11, 13, "method", "Shapes.Shapes"),
        (15, 23, "method", "Shapes.totalArea"),
        (25, 25, "header", "Shapes.Shape"),
        (26, 26, "method", "Shapes.Shape.area"),
        (27, 27, "gap", "Shapes.Shape"),
        (29, 30, "header", "Shapes.Circle"),
        (32, 34, "method", "Shapes.Circle.Circle"),
        (36, 39, "method", "Shapes.Circle.area"),
        (40, 40, "gap", "Shapes.Circle"),
        (41, 41, "gap", "Shapes"),
        (43, 46, "class", "Color"),
    ],
    "javascript/shapes.js": [
        (1, 4, "gap", ""),
        (6, 10, "header", "Circle"),
        (12, 14, "method", "Circle.constructor"),
        (16, 18, "method", "Circle.area"),
        (20, 24, "method", "Circle.scale"),
        (25, 25, "gap", "Circle"),
        (27, 29, "function", "totalArea"),
        (31, 33, "function", "unitCircle"),
        (35, 35, "gap", ""),
    ],
    "php/helpers.php": [
        (1, 1, "gap", ""),
        (2, 5, "function", "slugify"),
        (7, 8, "header", "Slug"),
        (9, 12, "method", "Slug.__toString"),
        (13, 13, "gap", "Slug"),
    ],
    "php/shapes.php": [
        (1, 7, "gap", ""),
        (9, 14, "header", "Circle"),
        (16, 18, "method", "Circle.__construct"),
        (20, 24, "method", "Circle.area"),
        (25, 25, "gap", "Circle"),
        (27, 28, "header", "Shape"),
        (29, 29, "method", "Shape.area"),
        (30, 30, "gap", "Shape"),
        (32, 35, "function", "total_area"),
        (37, 37, "gap", ""),
    ],
    "python/shapes.py": [
        (1, 5, "gap", ""),
        (8, 11, "header", "Circle"),
        (13, 14, "method", "Circle.__init__"),
        (16, 18, "method", "Circle.area"),
        (20, 23, "method", "Circle.scale"),
        (26, 27, "function", "total_area"),
        (30, 33, "function", "unit_circle"),
        (36, 37, "gap", ""),
    ],
    "ruby/shapes.rb": [
        (1, 4, "gap", ""),
        (6, 6, "header", "Shapes"),
        (7, 9, "header", "Shapes.Circle"),
        (11, 13, "method", "Shapes.Circle.initialize"),
        (15, 17, "method", "Shapes.Circle.area"),
        (19, 21, "method", "Shapes.Circle.unit"),
        (22, 22, "gap", "Shapes.Circle"),
        (24, 26, "method", "Shapes.total_area"),
        (27, 27, "gap", "Shapes"),
        (29, 29, "gap", ""),
        (31, 33, "function", "format_area"),
    ],
    "rust/shapes.rs": [
        (1, 4, "gap", ""),
        (6, 10, "class", "Circle"),
        (12, 12, "header", "Shape"),
        (13, 13, "method", "Shape.area"),
        (14, 14, "gap", "Shape"),
        (16, 16, "header", "Circle"),
        (17, 19, "method", "Circle.new"),
        (21, 24, "method", "Circle.scale"),
        (25, 25, "gap", "Circle"),
        (27, 27, "header", "Circle"),
        (28, 30, "method", "Circle.area"),
        (31, 31, "gap", "Circle"),
        (33, 35, "function", "total_area"),
        (37, 37, "header", "tests"),
        (38, 41, "function", "tests.unit_area"),
        (42, 42, "gap", "tests"),
    ],
    "typescript/badge.tsx": [
        (1, 1, "gap", ""),
        (3, 3, "definition", "BadgeProps"),
        (5, 12, "function", "Badge"),
        (14, 16, "function", "List"),
        (18, 18, "gap", ""),
    ],
    "typescript/shapes.ts": [
        (1, 4, "gap", ""),
        (6, 8, "class", "Shape"),
        (10, 13, "header", "Circle"),
        (15, 15, "method", "Circle.constructor"),
        (17, 19, "method", "Circle.area"),
        (21, 25, "method", "Circle.scale"),
        (26, 26, "gap", "Circle"),
        (28, 28, "definition", "Pair"),
        (30, 32, "function", "totalArea"),
        (34, 37, "class", "Color"),
        (39, 39, "gap", ""),
    ],
}
"""Exact function chunks (default options) of every fixture: (start, end, kind, symbol)."""

STRATEGIES: dict[str, Chunker] = {
    "window": make_chunker("window"),
    "window-small": make_chunker("window", size=7, overlap=3),
    "function": make_chunker("function"),
    "function-merge": make_chunker("function", merge_small=True, min_lines=4, max_lines=12),
    "function-split": make_chunker("function", max_lines=3),
    "hybrid": make_chunker("hybrid"),
    "file": make_chunker("file"),
}
"""Every strategy, plus configurations that exercise overlap, merging and splitting on small fixtures."""


def _load_fixtures() -> dict[str, SourceFile]:
    files, _ = walk_snapshot(FIXTURES)
    return {f.path: f for f in files}


FIXTURE_FILES = _load_fixtures()


def _source(path: str, data: bytes | str) -> SourceFile:
    """A SourceFile from raw content, split by chunking.lines, language from the path."""
    raw = data.encode() if isinstance(data, str) else data
    lines = split_lines(raw)
    language = language_for_path(path, "\n".join(lines))
    assert language is not None
    return SourceFile(path, language, lines, len(raw))


def _ranges(chunks: list[Chunk]) -> Expected:
    return [(c.start, c.end, c.kind, c.symbol) for c in chunks]


def _chunk(path: str, data: bytes | str, chunker: Chunker | None = None) -> list[Chunk]:
    return (chunker or FunctionChunker()).chunk_file(_source(path, data))


# -- exact ranges per language ---------------------------------------------------------------------------


def test_fixtures_cover_ten_languages() -> None:
    """The fixtures hold files of all ten languages (TypeScript in .ts and .tsx), each with an expectation."""
    assert sorted(EXPECTED_FUNCTION) == sorted(FIXTURE_FILES)
    languages = {f.language for f in FIXTURE_FILES.values()}
    assert languages == {"python", "go", "javascript", "typescript", "tsx", "rust", "java", "php", "ruby", "c", "cpp"}


@pytest.mark.parametrize("path", sorted(EXPECTED_FUNCTION))
def test_function_chunks_exact(path: str) -> None:
    """The function chunker gives exactly the expected line ranges, kinds and qualified symbols."""
    assert _ranges(FunctionChunker().chunk_file(FIXTURE_FILES[path])) == EXPECTED_FUNCTION[path]


# -- invariants for every strategy on every fixture -------------------------------------------------------


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("path", sorted(EXPECTED_FUNCTION))
def test_invariants(strategy: str, path: str) -> None:
    """Every non-blank line is covered, texts are exact, chunks stay in the file and overlap only as configured."""
    chunker = STRATEGIES[strategy]
    source = FIXTURE_FILES[path]
    chunks = chunker.chunk_file(source)
    n = len(source.lines)
    covered: set[int] = set()
    for chunk in chunks:
        assert chunk.path == source.path and chunk.language == source.language
        assert 1 <= chunk.start <= chunk.end <= n
        assert chunk.text == "\n".join(source.lines[chunk.start - 1 : chunk.end])
        assert chunk.text.strip()
        covered.update(range(chunk.start, chunk.end + 1))
    non_blank = {i + 1 for i, line in enumerate(source.lines) if line.strip()}
    assert non_blank <= covered
    assert chunks == sorted(chunks, key=lambda c: (c.start, c.end))
    pairs = list(zip(chunks, chunks[1:]))
    if isinstance(chunker, WindowChunker):
        step = chunker.size - chunker.overlap
        for chunk in chunks:
            assert (chunk.start - 1) % step == 0
            assert chunk.end == min(chunk.start - 1 + chunker.size, n)
        for a, b in pairs:
            assert a.end - b.start + 1 <= chunker.overlap
    else:
        for a, b in pairs:
            assert a.end < b.start, f"{a.location} overlaps {b.location}"
    if isinstance(chunker, FunctionChunker):
        for chunk in chunks:
            assert chunk.n_lines <= chunker.max_lines
            assert source.lines[chunk.start - 1].strip() and source.lines[chunk.end - 1].strip()


def test_snapshot_chunks_deterministic_and_stats() -> None:
    """chunk_snapshot orders chunks by path and line, and its statistics add up and are JSON."""
    chunks, stats = chunk_snapshot(FIXTURES, "function")
    assert chunks == sorted(chunks, key=lambda c: (c.path, c.start, c.end))
    again, _ = chunk_snapshot(FIXTURES, make_chunker("function"))
    assert again == chunks
    assert stats.files == len(FIXTURE_FILES) == 14
    assert stats.chunks == len(chunks) == sum(len(v) for v in EXPECTED_FUNCTION.values())
    assert stats.lines == sum(len(f.lines) for f in FIXTURE_FILES.values())
    assert stats.parse_errors == 0 and stats.fallbacks == {}
    assert stats.kinds["gap"] == sum(1 for v in EXPECTED_FUNCTION.values() for r in v if r[2] == "gap")
    assert stats.languages["cpp"] == {"files": 2, "lines": 55, "chunks": 17, "parse_errors": 0}
    assert stats.chunker == FunctionChunker().config()
    gap_lines = sum(e - s + 1 for v in EXPECTED_FUNCTION.values() for s, e, k, _ in v if k == "gap")
    all_lines = sum(e - s + 1 for v in EXPECTED_FUNCTION.values() for s, e, _, _ in v)
    assert stats.lines_covered == all_lines
    assert stats.definition_lines == all_lines - gap_lines
    assert json.loads(json.dumps(stats.to_dict())) == stats.to_dict()


# -- bad inputs -------------------------------------------------------------------------------------------


def test_br01_multibyte_comment_does_not_shift_rows() -> None:
    """A café ☕ comment above f leaves f on lines 2-3 with exact text (rows, not byte offsets).

    See docs/chunking.md, rule 3.
    """
    chunks = _chunk("a.py", "# café ☕\ndef f():\n    return 1\n")
    assert _ranges(chunks) == [(1, 1, "gap", ""), (2, 3, "function", "f")]
    assert chunks[1].text == "def f():\n    return 1"


def test_br01_multibyte_inside_attached_comment() -> None:
    """docs/chunking.md, 'Lines': multibyte characters before a definition (in an attached comment) keep rows exact."""
    chunks = _chunk("a.py", "x = '☕☕☕'\n\n# café ☕\ndef f():\n    return '☕'\n")
    assert _ranges(chunks) == [(1, 1, "gap", ""), (3, 5, "function", "f")]
    assert chunks[1].text == "# café ☕\ndef f():\n    return '☕'"


def test_br02_form_feed() -> None:
    """A form feed is not a line end: g is lines 3-4, as in the evaluator's line definition.

    See docs/chunking.md, 'Lines'.
    """
    chunks = _chunk("a.py", "a = 1\n\x0c\ndef g():\n    pass\n")
    assert _ranges(chunks) == [(1, 1, "gap", ""), (3, 4, "function", "g")]  # line 2 (form feed) is blank


@pytest.mark.parametrize("path", sorted(EXPECTED_FUNCTION))
def test_br02_crlf_and_bom_twins(path: str) -> None:
    """CRLF and BOM twins of every fixture give the same chunks (lines, kinds, symbols, texts).

    See docs/chunking.md, 'Lines'.
    """
    raw = (FIXTURES / path).read_bytes()
    base = _chunk(path, raw)
    assert _chunk(path, raw.replace(b"\n", b"\r\n")) == base
    assert _chunk(path, b"\xef\xbb\xbf" + raw) == base


def test_br02_lone_cr_file_not_one_region() -> None:
    """A file with only lone CR line ends is chunked like its LF twin, never as one region.

    See docs/chunking.md, 'Lines'.
    """
    lf = "import os\n\n\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n"
    cr = _chunk("a.py", lf.replace("\n", "\r").encode())
    assert (
        _ranges(cr)
        == _ranges(_chunk("a.py", lf))
        == [
            (1, 1, "gap", ""),
            (4, 5, "function", "f"),
            (8, 9, "function", "g"),
        ]
    )


def test_br04_go_long_raw_string_line() -> None:
    """A 3000-character raw string on line 3 and func Size on line 5: lines 1, 3, 5 covered, 3 once.

    See docs/chunking.md, rules 7-8.
    """
    src = "package x\n\nvar s = `" + "a" * 3000 + "`\n\nfunc Size() int {\n\treturn len(s)\n}\n"
    chunks = _chunk("size.go", src)
    assert _ranges(chunks) == [(1, 3, "gap", ""), (5, 7, "function", "Size")]
    for line in (1, 3, 5):
        assert sum(c.start <= line <= c.end for c in chunks) == 1


def test_br05_leading_blank_lines_trimmed() -> None:
    """docs/chunking.md, rule 9: leading blank lines are trimmed: the chunk of f is lines 4-5 and its text is exact."""
    source = _source("a.py", "\n\n\ndef f():\n    return 1\n")
    chunks = FunctionChunker().chunk_file(source)
    assert _ranges(chunks) == [(4, 5, "function", "f")]
    assert chunks[0].text == "\n".join(source.lines[3:5]) == "def f():\n    return 1"


def test_br07_c_macros_above_function() -> None:
    """Undeclared macro lines parsed into a C function: area is line 6 alone, lines 3-4 still covered.

    See docs/chunking.md, rule 6.
    """
    src = "#include <stdio.h>\n\nDECLARE_GETTER(width)\nDECLARE_GETTER(height)\n\nint area(void) { return w * h; }\n"
    chunks = _chunk("area.c", src)
    assert _ranges(chunks) == [(1, 4, "gap", ""), (6, 6, "function", "area")]


def test_br07_cpp_error_block_not_nested() -> None:
    """C++ first() whose inner block holds LOG LOG LOG, then second(): disjoint regions 1-7 and 8-10.

    See docs/chunking.md, rule 2.
    """
    src = (
        "void first() {\n    int x = 1;\n    if (x) {\n        LOG LOG LOG\n    }\n    x++;\n}\n"
        "void second() {\n    return;\n}\n"
    )
    source = _source("log.cpp", src)
    chunks, report = FunctionChunker().chunk_file_report(source)
    assert report.parse_error
    assert _ranges(chunks) == [(1, 7, "function", "first"), (8, 10, "function", "second")]


def test_br07_unbalanced_brace_never_swallows_rest() -> None:
    """An unclosed block: the broken function does not swallow the following definitions."""
    src = "int a(void) {\n    if (x) {\n    return 1;\n}\nint b(void) {\n  return 2;\n}\n\nint c(void) { return 3; }\n"
    assert _ranges(_chunk("a.c", src)) == [(1, 4, "function", "a"), (5, 7, "function", "b"), (9, 9, "function", "c")]


def test_br08_typescript_type_assertion() -> None:
    """A .ts angle-bracket type assertion on line 1 does not hide start on line 2.

    See docs/chunking.md, 'Per-language node types'.
    """
    chunks = _chunk("server.ts", "const port = <number>config.port;\nexport function start() { return port; }\n")
    assert _ranges(chunks) == [(1, 1, "gap", ""), (2, 2, "function", "start")]


def test_br08_tsx_jsx_element() -> None:
    """A .tsx function returning JSX, then helper(): both found (TSX grammar for .tsx).

    See docs/chunking.md, 'Per-language node types'.
    """
    src = "export function View() { return <span>{1}</span>; }\nfunction helper() { return 2; }\n"
    source = _source("view.tsx", src)
    assert source.language == "tsx"
    chunks, report = FunctionChunker().chunk_file_report(source)
    assert not report.parse_error
    assert _ranges(chunks) == [(1, 1, "function", "View"), (2, 2, "function", "helper")]


def test_br14_minified_five_megabytes(tmp_path: Path) -> None:
    """A 5 MB one-line minified JS file is indexed by windows and reported in the stats, no hang.

    See docs/chunking.md, rule 1.
    """
    (tmp_path / "vendor.bundle.js").write_bytes(b"var a=" + b"1+" * 2_500_000 + b"1;\n")
    (tmp_path / "app.js").write_bytes(b"function main() {\n  return 1;\n}\n")
    for name in ("function", "hybrid"):
        chunks, stats = chunk_snapshot(tmp_path, name)
        assert [(c.path, c.start, c.end, c.kind) for c in chunks] == [
            ("app.js", 1, 3, "function"),
            ("vendor.bundle.js", 1, 1, "window"),
        ]
        assert stats.fallbacks == {"too_large": 1}
        assert stats.walk["skipped"] == {}


def test_long_lines_guard() -> None:
    """Files whose lines average more than max_line_bytes are windowed (fallback long_lines)."""
    source = _source("m.js", "var a = 1;" * 100 + "\nfunction f() {}\n")  # 1016 bytes, 2 lines
    chunks, report = FunctionChunker(max_line_bytes=500).chunk_file_report(source)
    assert report.fallback == "long_lines" and not report.parsed
    assert _ranges(chunks) == [(1, 2, "window", "")]
    chunks, report = FunctionChunker().chunk_file_report(source)
    assert report.fallback is None and _ranges(chunks)[-1] == (2, 2, "function", "f")


def test_br16_empty_snapshot_and_blank_files(tmp_path: Path) -> None:
    """An empty snapshot and one of blank/binary files give no chunks and explain why.

    See docs/chunking.md, 'The walker'.
    """
    for name in CHUNKERS:
        chunks, stats = chunk_snapshot(tmp_path, name)
        assert chunks == [] and stats.files == 0 and stats.chunks == 0
    (tmp_path / "blank.py").write_bytes(b"\n\n   \n")
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "bin.py").write_bytes(b"\x00abc")
    for name in CHUNKERS:
        chunks, stats = chunk_snapshot(tmp_path, name)
        assert chunks == []
        assert stats.files == 1 and stats.lines == 3 and stats.lines_covered == 0
        assert stats.walk["skipped"] == {"binary": 1, "empty": 1}


# -- structure rules --------------------------------------------------------------------------------------


def test_comment_attachment_rules() -> None:
    """Comments attach only when directly above (no blank line) and first on their line."""
    src = "x = 1  # trailing\ndef f():\n    pass\n\n# detached\n\ndef g():\n    pass\n# attached\ndef h():\n    pass\n"
    assert _ranges(_chunk("a.py", src)) == [
        (1, 1, "gap", ""),
        (2, 3, "function", "f"),
        (5, 5, "gap", ""),
        (7, 8, "function", "g"),
        (9, 11, "function", "h"),
    ]


def test_definitions_sharing_a_line_merge() -> None:
    """Two definitions on one line become one chunk naming both."""
    chunks = _chunk("a.js", "function a() {} function b() {}\nfunction c() {}\n")
    assert _ranges(chunks) == [(1, 1, "function", "a, b"), (2, 2, "function", "c")]


def test_nested_function_stays_in_parent() -> None:
    """A function inside a function is not split out (only containers are chunked at the method level)."""
    src = "def outer():\n    def inner():\n        return 1\n    return inner\n"
    assert _ranges(_chunk("a.py", src)) == [(1, 4, "function", "outer")]


def test_definitions_inside_statements_found() -> None:
    """Definitions under if/try blocks and arrow functions assigned to names are found and named."""
    py = "try:\n    import fast\nexcept ImportError:\n    def fast():\n        return 0\n"
    assert _ranges(_chunk("a.py", py)) == [(1, 3, "gap", ""), (4, 5, "function", "fast")]
    js = "module.exports.handler = function (req) {\n  return req;\n};\nconst add = (a, b) => a + b;\n"
    assert _ranges(_chunk("a.js", js)) == [
        (1, 3, "function", "module.exports.handler"),
        (4, 4, "function", "add"),
    ]


def test_split_oversize_function_at_statements() -> None:
    """A 301-line function with max_lines=120 splits at statement boundaries into 120/120/61 lines."""
    src = "def f():\n" + "".join(f"    x{i} = {i}\n" for i in range(300))
    chunks = _chunk("a.py", src, FunctionChunker(max_lines=120))
    assert _ranges(chunks) == [(1, 120, "function", "f"), (121, 240, "function", "f"), (241, 301, "function", "f")]


def test_split_giant_string_falls_back_to_windows() -> None:
    """A node still too long after expansion (a 300-line string) is cut into max_lines windows."""
    src = 'def f():\n    s = """\n' + "text\n" * 300 + '"""\n    return s\n'
    chunks = _chunk("a.py", src, FunctionChunker(max_lines=120))
    assert [(c.start, c.end) for c in chunks] == [(1, 120), (121, 240), (241, 304)]


def test_merge_small_on_python_fixture() -> None:
    """merge_small joins runs of short chunks until min_lines, then short leftovers into a neighbour."""
    chunks = FunctionChunker(merge_small=True).chunk_file(FIXTURE_FILES["python/shapes.py"])
    assert _ranges(chunks) == [
        (1, 5, "gap", ""),
        (8, 14, "header", "Circle, Circle.__init__"),
        (16, 23, "method", "Circle.area, Circle.scale"),
        (26, 37, "function", "total_area, unit_circle"),
    ]


def test_merge_never_exceeds_max_lines() -> None:
    """Merging stops at max_lines: many one-line functions merge into groups of at most max_lines lines."""
    src = "".join(f"def f{i}(): return {i}\n" for i in range(10))
    chunks = _chunk("a.py", src, FunctionChunker(merge_small=True, min_lines=3, max_lines=4))
    assert [(c.start, c.end) for c in chunks] == [(1, 3), (4, 6), (7, 10)]
    chunks = _chunk("a.py", src, FunctionChunker(merge_small=True, min_lines=5, max_lines=4))
    assert [(c.start, c.end) for c in chunks] == [(1, 4), (5, 8), (9, 10)]


def test_text_files_windowed_at_blank_lines() -> None:
    """Docs/config files are cut into non-overlapping windows of at most window_lines, aligned on blank lines."""
    src = "# Title\n\nintro\n\n## Part\n" + "line\n" * 10 + "\n## End\nbye\n"
    chunks = _chunk("README.md", src, FunctionChunker(window_lines=8))
    assert _ranges(chunks) == [(1, 8, "window", ""), (9, 15, "window", ""), (17, 18, "window", "")]


def test_hybrid_windows_broken_files_only() -> None:
    """hybrid uses function chunks for clean files and blank-aligned windows (parse_error) for broken ones."""
    hybrid = make_chunker("hybrid", window_lines=80)
    clean = FIXTURE_FILES["python/shapes.py"]
    assert hybrid.chunk_file(clean) == FunctionChunker().chunk_file(clean)
    broken = _source("b.py", "def f(:\n    return 1\n\n\ndef g():\n    return 2\n")
    chunks, report = hybrid.chunk_file_report(broken)
    assert report.parse_error and report.fallback == "parse_error"
    assert _ranges(chunks) == [(1, 6, "window", "")]
    chunks, report = FunctionChunker().chunk_file_report(broken)
    assert report.parse_error and report.fallback is None


def test_deep_nesting_no_recursion_error() -> None:
    """2000 nested C++ namespaces and 2000 nested JS callbacks chunk without RecursionError, losing no line."""
    cpp = "".join(f"namespace n{i} {{\n" for i in range(2000)) + "void f() {}\n" + "}\n" * 2000
    js = "f(function () {\n" * 2000 + "1\n" + "});\n" * 2000
    for path, src in (("deep.cpp", cpp), ("deep.js", js)):
        source = _source(path, src)
        chunks = FunctionChunker().chunk_file(source)
        covered = {i for c in chunks for i in range(c.start, c.end + 1)}
        assert covered == set(range(1, len(source.lines) + 1))
        assert all(a.end < b.start for a, b in zip(chunks, chunks[1:]))
        assert max(c.n_lines for c in chunks) <= 120
    chunks = FunctionChunker().chunk_file(_source("deep.cpp", cpp))
    assert _ranges(chunks)[:2] == [(1, 1, "header", "n0"), (2, 2, "header", "n0.n1")]


def test_deep_python_nesting() -> None:
    """900 nested Python if blocks (above the default recursion limit) chunk without RecursionError."""
    src = "".join(" " * i + f"if x{i}:\n" for i in range(900)) + " " * 900 + "x = 1\n"
    chunks = FunctionChunker(max_line_bytes=10**6).chunk_file(_source("deep.py", src))
    assert [(c.start, c.end) for c in chunks][:2] == [(1, 120), (121, 240)]
    assert chunks[-1].end == 901


# -- window and file strategies --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (0, []),
        (1, [(1, 1)]),
        (80, [(1, 80)]),
        (81, [(1, 80), (61, 81)]),
        (100, [(1, 80), (61, 100)]),
        (141, [(1, 80), (61, 140), (121, 141)]),
    ],
)
def test_window_ranges_reference_stepping(n: int, expected: list[tuple[int, int]]) -> None:
    """Windows follow the reference stepping (docs/metrics.md §2.2): step 60, stop after reaching n."""
    assert window_ranges(n, 80, 20) == expected


def test_window_skips_whitespace_only_windows() -> None:
    """A whitespace-only window is skipped but stepping continues past it."""
    source = _source("a.txt", "a\n" + "\n" * 5 + "b\n")
    chunks = WindowChunker(size=2, overlap=0).chunk_file(source)
    assert [(c.start, c.end) for c in chunks] == [(1, 2), (7, 7)]
    assert chunks[0].text == "a\n" and chunks[0].kind == "window"


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (10, 10), (10, -1)])
def test_window_rejects_bad_options(size: int, overlap: int) -> None:
    """A size below 1 or an overlap outside [0, size) is rejected."""
    with pytest.raises(ValueError, match="window"):
        WindowChunker(size=size, overlap=overlap)


def test_file_chunker() -> None:
    """The file strategy gives one chunk per file spanning every line; a blank file gives none."""
    source = FIXTURE_FILES["go/shapes.go"]
    chunks = make_chunker("file").chunk_file(source)
    assert _ranges(chunks) == [(1, 43, "file", "")]
    assert chunks[0].text == source.text
    assert make_chunker("file").chunk_file(_source("a.py", "\n  \n")) == []


def test_pack_and_block_ranges() -> None:
    """pack_ranges packs greedily and fills before cutting a long segment; block_ranges aligns on blanks."""
    assert pack_ranges([(0, 1), (3, 4), (6, 9)], 5) == [(0, 4), (6, 9)]
    assert pack_ranges([(0, 0), (1, 301)], 120) == [(0, 119), (120, 239), (240, 301)]
    assert pack_ranges([(0, 0), (200, 500)], 120) == [(0, 0), (200, 319), (320, 439), (440, 500)]
    blank = [False, False, True, False, True, True, False]
    assert block_ranges(blank, 0, 6, 4) == [(0, 3), (6, 6)]
    with pytest.raises(ValueError, match="size must be >= 1"):
        pack_ranges([(0, 1)], 0)


def test_pack_ranges_random_invariants() -> None:
    """On random segments, pieces are disjoint, at most size long, on segment lines, and cover each line once."""
    rng = random.Random(7)
    for _ in range(300):
        segments, pos = [], 0
        for _ in range(rng.randint(0, 12)):
            pos += rng.randint(0, 30)
            length = rng.choice([1, 2, 5, 40, 150])
            segments.append((pos, pos + length - 1))
            pos += length
        size = rng.choice([1, 3, 10, 60, 120])
        pieces = pack_ranges(segments, size)
        lines = {i for s, e in segments for i in range(s, e + 1)}
        in_pieces = [i for s, e in pieces for i in range(s, e + 1) if i in lines]
        assert sorted(in_pieces) == sorted(lines) and len(in_pieces) == len(lines)
        assert all(e - s + 1 <= size and s in lines and e in lines for s, e in pieces)
        assert all(a[1] < b[0] for a, b in zip(pieces, pieces[1:]))


# -- registry and script ----------------------------------------------------------------------------------


def test_registry_names_and_configs() -> None:
    """CHUNKERS lists the four strategies; configs carry the name and every option."""
    assert list(CHUNKERS) == ["window", "function", "hybrid", "file"]
    assert make_chunker("window").config() == {"name": "window", "size": 80, "overlap": 20}
    assert make_chunker("function", max_lines=60).config() == {
        "name": "function",
        "max_lines": 60,
        "min_lines": 5,
        "merge_small": False,
        "window_lines": 80,
        "max_parse_bytes": 1048576,
        "max_line_bytes": 1000,
    }
    assert make_chunker("hybrid").config()["name"] == "hybrid"
    assert make_chunker("file").config() == {"name": "file"}
    assert chunker_options("window") == {"size": 80, "overlap": 20}


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("windows", {}, "unknown chunker 'windows'; valid chunkers: window, function, hybrid, file"),
        ("window", {"max_lines": 10}, "chunker 'window' has no option 'max_lines'; its options: size, overlap"),
        ("file", {"size": 1}, "chunker 'file' has no option 'size'; its options: none"),
        ("function", {"max_lines": "120"}, "option 'max_lines' must be int"),
        ("function", {"merge_small": 1}, "option 'merge_small' must be bool"),
        ("function", {"max_lines": True}, "option 'max_lines' must be int"),
        ("function", {"max_lines": 0}, "max_lines must be >= 1, got 0"),
    ],
)
def test_make_chunker_errors(name: str, options: dict[str, object], message: str) -> None:
    """Unknown names, unknown options, wrong types and bad values raise ValueError saying what is valid."""
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make_chunker(name, **options)  # type: ignore[arg-type]


def test_cli_arguments() -> None:
    """--chunker function --max-lines 120 --merge-small builds that chunker; foreign options are rejected."""
    parser = argparse.ArgumentParser()
    add_chunker_arguments(parser)
    chunker = chunker_from_args(parser.parse_args(["--chunker", "function", "--max-lines", "120", "--merge-small"]))
    assert chunker == FunctionChunker(max_lines=120, merge_small=True)
    assert chunker_from_args(parser.parse_args([])) == FunctionChunker()
    assert chunker_from_args(parser.parse_args(["--chunker", "window", "--size", "40"])) == WindowChunker(40, 20)
    with pytest.raises(ValueError, match="no option 'size'"):
        chunker_from_args(parser.parse_args(["--chunker", "hybrid", "--size", "40"]))


def test_show_chunks_script() -> None:
    """The chunks command (scripts/show_chunks.py) prints one JSON line per chunk with path, lines, kind, symbol
    and language."""
    out = io.StringIO()
    with redirect_stdout(out):
        assert chunks_command.main([str(FIXTURES / "python" / "shapes.py")]) == 0
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["start"], r["end"], r["kind"], r["symbol"]) for r in rows] == EXPECTED_FUNCTION["python/shapes.py"]
    assert {r["language"] for r in rows} == {"python"} and "text" not in rows[0]
    out = io.StringIO()
    with redirect_stdout(out):
        assert chunks_command.main([str(FIXTURES), "--chunker", "file", "--text"]) == 0
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["path"] for r in rows] == sorted(EXPECTED_FUNCTION)
    assert rows[0]["text"] == FIXTURE_FILES[rows[0]["path"]].text


def test_file_header_comment_block_not_attached() -> None:
    """The file's opening comment block (from line 1) stays a gap; a later comment block attaches."""
    src = "#!/usr/bin/env python\n# Copyright X\ndef main():\n    pass\n# helper doc\ndef helper():\n    pass\n"
    assert _ranges(_chunk("a.py", src)) == [
        (1, 2, "gap", ""),
        (3, 4, "function", "main"),
        (5, 7, "function", "helper"),
    ]


REAL_SNAPSHOT = ROOT / "repos" / "dev" / "psf__requests-2931"


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["function", "hybrid", "window", "file"])
def test_real_snapshot_invariants(strategy: str) -> None:
    """On a real dev snapshot every non-blank line is covered, texts are exact and only windows overlap."""
    if not REAL_SNAPSHOT.is_dir():
        pytest.skip(f"real snapshot not materialised at {REAL_SNAPSHOT} (see ../shared/data/README.md)")
    files, _ = walk_snapshot(REAL_SNAPSHOT)
    chunker = make_chunker(strategy)
    assert files
    for source in files:
        chunks = chunker.chunk_file(source)
        covered = {i for c in chunks for i in range(c.start, c.end + 1)}
        assert {i + 1 for i, line in enumerate(source.lines) if line.strip()} <= covered, source.path
        for chunk in chunks:
            assert chunk.text == "\n".join(source.lines[chunk.start - 1 : chunk.end])
        if strategy != "window":
            assert all(a.end < b.start for a, b in zip(chunks, chunks[1:])), source.path


def test_chunk_files_matches_chunk_snapshot() -> None:
    """chunk_files on walked files gives the chunks and counts of chunk_snapshot, without walk stats."""
    files, _ = walk_snapshot(FIXTURES)
    chunks, stats = chunk_files(files, "hybrid")
    expected, expected_stats = chunk_snapshot(FIXTURES, "hybrid")
    assert chunks == expected
    assert stats.walk == {} and expected_stats.walk["files_indexed"] == 14
    assert {**stats.to_dict(), "walk": None} == {**expected_stats.to_dict(), "walk": None}


# -- fixes found on real code (docs/chunking.md, "Real code per language") ---------------------------------


def test_file_without_final_newline_parses_cleanly() -> None:
    """A Go type or C #endif on the last line without a final newline is no parse error, so hybrid keeps it."""
    go = _source("shape.go", "package shapes\n\ntype Circle struct {\n\tR float64\n}")
    chunks, report = make_chunker("hybrid").chunk_file_report(go)
    assert not report.parse_error and report.fallback is None
    assert _ranges(chunks) == [(1, 1, "gap", ""), (3, 5, "class", "Circle")]
    c = _source("a.h", "#ifndef A_H\n#define A_H\nint area(void) { return 1; }\n#endif")
    chunks, report = make_chunker("hybrid").chunk_file_report(c)
    assert not report.parse_error
    assert _ranges(chunks) == [(1, 2, "gap", ""), (3, 3, "function", "area"), (4, 4, "gap", "")]


def test_rust_trait_method_signatures_are_methods() -> None:
    """Rust trait methods without a body (function_signature_item) are method chunks with their doc comment."""
    src = (
        "pub trait Shape {\n    /// Area in square units.\n    fn area(&self) -> f64;\n\n"
        "    fn name(&self) -> String {\n        String::new()\n    }\n}\n"
    )
    assert _ranges(_chunk("a.rs", src)) == [
        (1, 1, "header", "Shape"),
        (2, 3, "method", "Shape.area"),
        (5, 7, "method", "Shape.name"),
        (8, 8, "gap", "Shape"),
    ]


def test_typescript_overload_signatures_are_functions() -> None:
    """TypeScript overload signatures with their JSDoc are function chunks, not one gap above the body."""
    src = (
        "/** Parse a number. */\nexport function parse(s: string): number;\n"
        "/** Parse a list. */\nexport function parse(s: string[]): number[];\n"
        "export function parse(s: any): any {\n  return s;\n}\n"
        "class P {\n  get(k: string): string;\n  get(k: any): any { return k; }\n}\n"
    )
    assert _ranges(_chunk("a.ts", src)) == [
        (1, 2, "function", "parse"),
        (3, 4, "function", "parse"),
        (5, 7, "function", "parse"),
        (8, 8, "header", "P"),
        (9, 9, "method", "P.get"),
        (10, 10, "method", "P.get"),
        (11, 11, "gap", "P"),
    ]


def test_doc_comment_attached_across_blank_lines() -> None:
    """A Javadoc or /// doc comment belongs to the definition below it even across a blank line; others do not."""
    java = "package p;\n\n/**\n * Circles.\n */\n\npublic class Circle {\n    // note\n\n    void a() {}\n}\n"
    assert _ranges(_chunk("Circle.java", java)) == [
        (1, 1, "gap", ""),
        (3, 8, "header", "Circle"),
        (10, 10, "method", "Circle.a"),
        (11, 11, "gap", "Circle"),
    ]
    rust = "use std::fmt;\n\n////////////////\n\n/// A point.\n\npub struct P;\n"
    assert _ranges(_chunk("a.rs", rust)) == [(1, 3, "gap", ""), (5, 7, "class", "P")]


def test_opening_doc_comment_directly_above_definition_attached() -> None:
    """A /** doc */ opening the file directly above a function belongs to it; one followed by a blank does not."""
    src = "/**\n * Adds.\n */\nfunction add(a, b) {\n  return a + b;\n}\n"
    assert _ranges(_chunk("add.js", src)) == [(1, 6, "function", "add")]
    licence = "/**\n * @license MIT\n */\n\nfunction add(a, b) {\n  return a + b;\n}\n"
    assert _ranges(_chunk("add.js", licence)) == [(1, 3, "gap", ""), (5, 7, "function", "add")]


def test_go_methods_qualified_with_receiver_type() -> None:
    """Go methods are named after their receiver type, pointer or generic: Circle.Area, Circle.Name."""
    src = 'package x\n\nfunc (c *Circle[T]) Area() float64 { return 0 }\n\nfunc (Circle) Name() string { return "" }\n'
    assert _ranges(_chunk("a.go", src)) == [
        (1, 1, "gap", ""),
        (3, 3, "method", "Circle.Area"),
        (5, 5, "method", "Circle.Name"),
    ]


@pytest.mark.parametrize(
    ("path", "src", "expected"),
    [
        (
            "a.cpp",
            "namespace geo {\nvoid Circle::Scale(double k) {}\n}\nCircle::~Circle() {}\n",
            [
                (1, 1, "header", "geo"),
                (2, 2, "function", "geo.Circle.Scale"),
                (3, 3, "gap", "geo"),
                (4, 4, "function", "Circle.~Circle"),
            ],
        ),
        (
            "a.rb",
            "class A::B < C\n  def x; end\nend\n",
            [(1, 1, "header", "A.B"), (2, 2, "method", "A.B.x"), (3, 3, "gap", "A.B")],
        ),
        (
            "a.php",
            "<?php\nnamespace A\\B {\n    function f() {}\n}\n",
            [(1, 1, "gap", ""), (2, 2, "header", "A.B"), (3, 3, "function", "A.B.f"), (4, 4, "gap", "A.B")],
        ),
        (
            "a.rs",
            "impl fmt::Display for Foo {\n    fn fmt(&self) {}\n}\nimpl a::B {\n    fn g() {}\n}\n",
            [
                (1, 1, "header", "Foo"),
                (2, 2, "method", "Foo.fmt"),
                (3, 3, "gap", "Foo"),
                (4, 4, "header", "a.B"),
                (5, 5, "method", "a.B.g"),
                (6, 6, "gap", "a.B"),
            ],
        ),
    ],
)
def test_qualified_names_use_dots(path: str, src: str, expected: Expected) -> None:
    """C++/Ruby/Rust `::` and PHP `\\` in qualified names become `.`; Rust impls are named after the type."""
    assert _ranges(_chunk(path, src)) == expected


def test_split_keeps_comment_with_following_code() -> None:
    """Splitting an oversize function never leaves a comment at the end of one piece and its code in the next."""
    body = "".join(f"    a{i} = {i}\n" for i in range(8))
    src = "def f():\n" + body + "    # about b\n    b = 2\n    c = 3\n"
    chunks = _chunk("a.py", src, FunctionChunker(max_lines=10))
    assert _ranges(chunks) == [(1, 9, "function", "f"), (10, 12, "function", "f")]
    assert chunks[1].text.startswith("    # about b\n    b = 2")


def test_split_keeps_attached_comment_with_signature() -> None:
    """A definition one line too long keeps its doc comment with its signature: the body is split instead."""
    src = "package x\n\n// Sum adds.\nfunc Sum() int {\n\ta := 1\n\tb := 2\n\tc := 3\n\treturn a + b + c\n}\n"
    assert _ranges(_chunk("a.go", src, FunctionChunker(max_lines=7))) == [(1, 1, "gap", ""), (3, 9, "function", "Sum")]
    chunks = _chunk("a.go", src, FunctionChunker(max_lines=6))  # 7 lines: the body is expanded, not the comment cut off
    assert _ranges(chunks) == [(1, 1, "gap", ""), (3, 8, "function", "Sum"), (9, 9, "function", "Sum")]
