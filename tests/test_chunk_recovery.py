"""Parse errors that stretch one region over the definitions after it (function chunker, rule 2b).

Each fixture in tests/fixtures/recovery holds one broken spot (a Ruby heredoc nested in an interpolation, an
unterminated Python docstring, a JavaScript template literal, ...) followed by definitions that tree-sitter's
error recovery swallowed into one region. Before rule 2b the ``function`` chunker returned that region silently
(report: ``parse_error``, no fallback); the comment above each expectation gives the chunks it returned then.
Now the definitions after the broken spot have chunks of their own, at exact line ranges, and the report says
``fallback="reparse"`` with counts.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

import swe_explore.chunking.treesitter as treesitter
from swe_explore.chunking.languages import language_for_path
from swe_explore.chunking.lines import read_lines
from swe_explore.chunking.registry import chunk_files, make_chunker
from swe_explore.chunking.types import Chunk, SourceFile
from swe_explore.retrievers.registry import make_retriever

FIXTURES = Path(__file__).parent / "fixtures" / "recovery"

Expected = list[tuple[int, int, str, str]]

_RUBY_METHODS = [
    "add_row", "add_column", "column_width", "row_count", "header_line", "footer_line", "separator", "pad_left",
    "pad_right", "truncate", "format_number", "format_date", "format_money", "format_percent", "total", "average",
    "minimum", "maximum", "median", "sort_rows", "filter_rows", "group_rows", "to_csv", "to_markdown", "to_html",
    "to_json", "page_count", "page_break", "reset", "finish",
]  # fmt: skip

RECOVERED: dict[str, tuple[Expected, int, int]] = {
    # name: (chunks, stretched regions, recovered lines)
    # before: [(1, 2, gap), (3, 5, initialize), (7, 125, gap), (127, 138, gap)]: the class is lost to an ERROR
    # node, render and the 30 methods after it are one 119-line gap and a tail
    "report_formatter.rb": (
        [(1, 2, "gap", ""), (3, 5, "function", "initialize"), (7, 17, "function", "render")]
        + [(19 + 4 * i, 21 + 4 * i, "function", name) for i, name in enumerate(_RUBY_METHODS)]
        + [(138, 138, "gap", "")],
        2,
        102,
    ),
    # before: [(1, 2, gap), (4, 30, changelog_entry)]: the method runs to the end of the file
    "release.rake": (
        [
            (1, 2, "gap", ""),
            (4, 13, "function", "changelog_entry"),
            (15, 18, "function", "bump_version"),
            (20, 22, "function", "tag_name"),
            (24, 26, "function", "manifest"),
            (28, 30, "gap", ""),
        ],
        1,
        13,
    ),
    # before: [(1, 3, gap), (6, 24, read_config)]
    "unterminated_docstring.py": (
        [
            (1, 3, "gap", ""),
            (6, 8, "function", "read_config"),
            (11, 14, "function", "parse_line"),
            (17, 19, "function", "parse_config"),
            (22, 24, "function", "config_dir"),
        ],
        1,
        10,
    ),
    # before: [(1, 1, gap), (4, 5, header Template), (7, 20, Template.render), (21, 22, gap Template)]: the
    # method swallows its siblings and the function after the class. Siblings are found in the class (methods,
    # qualified), the function after it at the top level.
    "unterminated_method_string.py": (
        [
            (1, 1, "gap", ""),
            (4, 5, "header", "Template"),
            (7, 9, "method", "Template.render"),
            (11, 13, "method", "Template.names"),
            (15, 16, "method", "Template.__len__"),
            (19, 22, "function", "load_template"),
        ],
        2,
        9,
    ),
    # before: [(1, 1, gap), (3, 10, renderTitle), (12, 14, renderList), (16, 18, renderFooter)]: renderItem lost
    "template.js": (
        [
            (1, 1, "gap", ""),
            (3, 6, "function", "renderTitle"),
            (8, 10, "function", "renderItem"),
            (12, 14, "function", "renderList"),
            (16, 18, "function", "renderFooter"),
        ],
        1,
        9,
    ),
    # before: [(1, 1, gap), (3, 9, Badge), (11, 13, Card)]: Avatar lost
    "attribute.tsx": (
        [(1, 1, "gap", ""), (3, 5, "function", "Badge"), (7, 9, "function", "Avatar"), (11, 13, "function", "Card")],
        1,
        6,
    ),
    # before: [(1, 3, gap), (5, 19, Banner)]
    "raw_string.go": (
        [
            (1, 3, "gap", ""),
            (5, 7, "function", "Banner"),
            (9, 11, "function", "Indent"),
            (13, 15, "function", "Lines"),
            (17, 19, "function", "Quote"),
        ],
        1,
        9,
    ),
    # before: [(1, 21, gap)]. The broken function itself stays in the gap (no parse makes it a definition).
    "nowdoc.php": ([(1, 11, "gap", ""), (13, 16, "function", "signature"), (18, 21, "function", "subject")], 1, 8),
    # before: [(1, 20, gap)]
    "raw_string.cpp": (
        [
            (1, 7, "gap", ""),
            (9, 11, "function", "parse_count"),
            (13, 15, "function", "is_flag"),
            (17, 20, "function", "strip"),
        ],
        1,
        10,
    ),
}


def _source(name: str) -> SourceFile:
    language = language_for_path(name)
    assert language is not None
    return SourceFile(name, language, read_lines(FIXTURES / name))


def _inline(name: str, text: str) -> SourceFile:
    language = language_for_path(name)
    assert language is not None
    return SourceFile(name, language, text.splitlines())


def _ranges(chunks: list[Chunk]) -> Expected:
    return [(c.start, c.end, c.kind, c.symbol) for c in chunks]


def test_fixtures_cover_eight_languages() -> None:
    """The cases span Ruby, Python, JavaScript, TSX, Go, PHP and C++ (and every fixture has an expectation)."""
    names = sorted(p.name for p in FIXTURES.iterdir())
    assert names == sorted(RECOVERED)
    assert {language_for_path(n) for n in names} == {"ruby", "python", "javascript", "tsx", "go", "php", "cpp"}


@pytest.mark.parametrize("name", sorted(RECOVERED))
def test_swallowed_definitions_get_their_own_chunks(name: str) -> None:
    """Rule 2b: exact chunks after the broken spot, and the report says how they were made."""
    expected, stretched, recovered_lines = RECOVERED[name]
    chunks, report = make_chunker("function").chunk_file_report(_source(name))
    assert _ranges(chunks) == expected
    assert (report.parse_error, report.fallback) == (True, "reparse")
    assert (report.stretched, report.recovered_lines, report.unchecked) == (stretched, recovered_lines, 0)


@pytest.mark.parametrize("name", sorted(RECOVERED))
def test_invariants_hold_after_recovery(name: str) -> None:
    """Chunks are sorted, never overlap, hold exactly their lines, and cover every non-blank line once."""
    source = _source(name)
    chunks = make_chunker("function").chunk_file(source)
    covered = [0] * len(source.lines)
    for prev, chunk in itertools.pairwise(chunks):
        assert prev.end < chunk.start
    for chunk in chunks:
        assert chunk.text == "\n".join(source.lines[chunk.start - 1 : chunk.end])
        for row in range(chunk.start - 1, chunk.end):
            covered[row] += 1
    assert all(covered[i] == 1 for i, line in enumerate(source.lines) if line.strip())


def test_swallowed_ruby_method_is_the_top_bm25_hit() -> None:
    """A query for a method the heredoc swallowed finds exactly that method (before: a 119-line gap)."""
    chunks, _ = chunk_files([_source("report_formatter.rb")], "function")
    retriever = make_retriever("bm25")
    retriever.build(chunks)
    best = chunks[retriever.search("format_money", 1)[0].index]
    assert (best.start, best.end, best.symbol) == (67, 69, "format_money")


def test_hybrid_still_windows_broken_files() -> None:
    """``hybrid`` keeps windowing every file with a parse error (fallback ``parse_error``)."""
    chunks, report = make_chunker("hybrid").chunk_file_report(_source("report_formatter.rb"))
    assert [(c.start, c.end, c.kind) for c in chunks] == [(1, 77, "window"), (79, 138, "window")]
    assert report.fallback == "parse_error" and report.stretched == 0


def test_chunk_stats_count_reparsed_regions() -> None:
    """ChunkStats: files per fallback reason, stretched regions and recovered lines summed over files."""
    _, stats = chunk_files([_source(name) for name in sorted(RECOVERED)], "function")
    assert stats.parse_errors == 9
    assert stats.fallbacks == {"reparse": 9}
    assert stats.stretched == sum(case[1] for case in RECOVERED.values()) == 11
    assert stats.recovered_lines == sum(case[2] for case in RECOVERED.values()) == 176
    assert stats.to_dict()["unchecked"] == 0


def test_reparse_depth_limit_falls_back_to_hybrid_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond MAX_REPARSE_DEPTH the rest of the scope gets hybrid's windows (fallback ``hybrid_region``)."""
    monkeypatch.setattr(treesitter, "MAX_REPARSE_DEPTH", 0)
    chunks, report = make_chunker("function").chunk_file_report(_source("release.rake"))
    assert _ranges(chunks) == [(1, 2, "gap", ""), (4, 13, "function", "changelog_entry"), (15, 30, "window", "")]
    assert (report.fallback, report.stretched, report.recovered_lines) == ("hybrid_region", 1, 16)


def test_spent_reparse_budget_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no re-parse budget nothing is checked, and the report counts the checks skipped."""
    monkeypatch.setattr(treesitter, "REPARSE_BUDGET", 0)
    chunks, report = make_chunker("function").chunk_file_report(_source("release.rake"))
    assert _ranges(chunks) == [(1, 2, "gap", ""), (4, 30, "function", "changelog_entry")]
    assert (report.fallback, report.stretched, report.unchecked) == (None, 0, 1)


def test_members_swallowed_inside_a_class() -> None:
    """A heredoc constant in a Ruby class and an unterminated class docstring in Python swallow the methods
    below them: the methods are recovered as methods of the class (the class keeps a header chunk)."""
    ruby = "class A\n  X = <<~EOS\n    text #{ <<~IN\n      in\n    IN\n    }\n  EOS\n\n  def m\n    1\n  end\n\n"
    ruby += "  def n\n    2\n  end\nend\n"
    chunks, report = make_chunker("function").chunk_file_report(_inline("a.rb", ruby))
    assert _ranges(chunks) == [
        (1, 7, "header", "A"),
        (9, 11, "method", "A.m"),
        (13, 15, "method", "A.n"),
        (16, 16, "gap", "A"),
    ]
    assert report.fallback == "reparse"
    python = 'class A:\n    """Doc never closed.\n\n    def m(self):\n        """M."""\n        return 1\n\n'
    python += '    def n(self):\n        return 2\n\n\ndef top():\n    """Top."""\n    return 3\n'
    chunks, report = make_chunker("function").chunk_file_report(_inline("a.py", python))
    assert _ranges(chunks) == [
        (1, 2, "header", "A"),
        (4, 6, "method", "A.m"),
        (8, 9, "method", "A.n"),
        (12, 14, "function", "top"),
    ]
    assert (report.fallback, report.stretched) == ("reparse", 2)


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (  # a stray token: the error stays inside its function
            "stray.py",
            "def broken(a):\n    y = (a +\n    return y\n\n\ndef f(a):\n    return a\n",
            [(1, 3, "function", "broken"), (6, 7, "function", "f")],
        ),
        (  # a closed string holding code at column 0, in a function with an error elsewhere
            "snippet.py",
            'def test_snippet():\n    code = """\ndef foo():\n    pass\n"""\n    x = (1 +\n    return code\n\n\n'
            "def other():\n    return 2\n",
            [(1, 7, "function", "test_snippet"), (10, 11, "function", "other")],
        ),
        (  # an unbalanced brace: the swallowed functions are nodes of the tree, found as before (chunking.md rule 2)
            "brace.js",
            "function broken(a) {\n  if (a) {\n    return 1;\n\n  return 2;\n}\n\nfunction f(a) {\n  return a;\n}\n",
            [(1, 6, "function", "broken"), (8, 10, "function", "f")],
        ),
        (  # a macro opening a block: not a stretched string, chunks as before
            "macro.c",
            "#define BEGIN {\n#define END }\n\nint broken(int a) BEGIN\n    return a;\nEND\n\nint f(int a) {\n"
            "    return a;\n}\n",
            [(1, 6, "gap", ""), (8, 10, "function", "f")],
        ),
    ],
)
def test_local_parse_errors_keep_their_chunks(name: str, text: str, expected: Expected) -> None:
    """Parse errors that swallow nothing change nothing: no re-parse, no fallback."""
    chunks, report = make_chunker("function").chunk_file_report(_inline(name, text))
    assert _ranges(chunks) == expected
    assert report.parse_error and (report.fallback, report.stretched) == (None, 0)
