"""Parse errors that stretch one region over the definitions after it (function chunker).

Each fixture in tests/fixtures/recovery holds one broken spot (a Ruby heredoc nested in an interpolation, an
unterminated Python docstring, a JavaScript template literal, ...) followed by definitions that tree-sitter's
error recovery swallowed into one region, silently: the report says ``parse_error`` and no fallback. This file
pins that behaviour (reproduction of the issue "No silent wrong results", item A) before it is fixed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swe_explore.chunking.languages import language_for_path
from swe_explore.chunking.lines import read_lines
from swe_explore.chunking.registry import make_chunker
from swe_explore.chunking.types import Chunk, SourceFile

FIXTURES = Path(__file__).parent / "fixtures" / "recovery"

Expected = list[tuple[int, int, str, str]]

SWALLOWED: dict[str, Expected] = {
    # the class is lost: render and the 30 methods after it are one 119-line gap plus a tail
    "report_formatter.rb": [
        (1, 2, "gap", ""),
        (3, 5, "function", "initialize"),
        (7, 125, "gap", ""),
        (127, 138, "gap", ""),
    ],
    "release.rake": [(1, 2, "gap", ""), (4, 30, "function", "changelog_entry")],
    "unterminated_docstring.py": [(1, 3, "gap", ""), (6, 24, "function", "read_config")],
    "unterminated_method_string.py": [
        (1, 1, "gap", ""),
        (4, 5, "header", "Template"),
        (7, 20, "method", "Template.render"),
        (21, 22, "gap", "Template"),
    ],
    "template.js": [
        (1, 1, "gap", ""),
        (3, 10, "function", "renderTitle"),
        (12, 14, "function", "renderList"),
        (16, 18, "function", "renderFooter"),
    ],
    "attribute.tsx": [(1, 1, "gap", ""), (3, 9, "function", "Badge"), (11, 13, "function", "Card")],
    "raw_string.go": [(1, 3, "gap", ""), (5, 19, "function", "Banner")],
    "nowdoc.php": [(1, 21, "gap", "")],
    "raw_string.cpp": [(1, 20, "gap", "")],
}


def _source(name: str) -> SourceFile:
    language = language_for_path(name)
    assert language is not None
    return SourceFile(name, language, read_lines(FIXTURES / name))


def _ranges(chunks: list[Chunk]) -> Expected:
    return [(c.start, c.end, c.kind, c.symbol) for c in chunks]


@pytest.mark.parametrize("name", sorted(SWALLOWED))
def test_swallowed_silently(name: str) -> None:
    """Today: the definitions after the broken spot have no chunk of their own, and nothing says so."""
    chunks, report = make_chunker("function").chunk_file_report(_source(name))
    assert _ranges(chunks) == SWALLOWED[name]
    assert report.parse_error and report.fallback is None
