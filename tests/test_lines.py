"""Tests of the one definition of a line (chunking/lines.py), shared by walker, chunkers and evaluator."""

from __future__ import annotations

from pathlib import Path

import pytest

from swe_explore.chunking.lines import count_lines, decode, read_lines, split_lines, split_text

CASES: list[tuple[bytes, list[str]]] = [
    (b"", []),
    (b"\n", [""]),
    (b"a", ["a"]),
    (b"a\n", ["a"]),
    (b"a\n\n", ["a", ""]),
    (b"a\nb", ["a", "b"]),
    (b"a\r\nb\r\n", ["a", "b"]),
    (b"a\rb\rc", ["a", "b", "c"]),
    (b"a\rb\r", ["a", "b"]),
    (b"a = 1\n\x0c\ndef g():\n    pass\n", ["a = 1", "\x0c", "def g():", "    pass"]),
    (b"x\x0by\x1cz\n", ["x\x0by\x1cz"]),
    ("s\u2028t\u2029u\x85v\n".encode(), ["s\u2028t\u2029u\x85v"]),
    (b"\xef\xbb\xbfimport os\n", ["import os"]),
    (b"\xef\xbb\xbf", []),
    (b"caf\xe9\n", ["caf\ufffd"]),
    (b"mixed\r\nlf\nlone\rcr\n", ["mixed", "lf", "lone\rcr"]),
]


@pytest.mark.parametrize(("data", "expected"), CASES, ids=[repr(c[0])[:30] for c in CASES])
def test_split_lines(data: bytes, expected: list[str]) -> None:
    """split_lines gives exactly the documented lines for each edge case."""
    assert split_lines(data) == expected


@pytest.mark.parametrize(("data", "expected"), CASES, ids=[repr(c[0])[:30] for c in CASES])
def test_count_lines_matches_split(data: bytes, expected: list[str]) -> None:
    """count_lines agrees with len(split_lines) without decoding."""
    assert count_lines(data) == len(expected)


def test_form_feed_is_not_a_line_end() -> None:
    """docs/chunking.md, 'Lines': a form feed does not end a line, unlike str.splitlines, so g is on lines 3-4."""
    lines = split_lines(b"a = 1\n\x0c\ndef g():\n    pass\n")
    assert lines.index("def g():") + 1 == 3
    assert len("a = 1\n\x0c\ndef g():\n    pass\n".splitlines()) == 5  # the reference's quirk differs


def test_crlf_twin_has_identical_lines() -> None:
    """docs/chunking.md, 'Lines': a CRLF file has exactly the lines of its LF twin."""
    lf = b"def f():\n    return 1\n\nx = 2\n"
    assert split_lines(lf.replace(b"\n", b"\r\n")) == split_lines(lf)


def test_bom_does_not_shift_or_leak() -> None:
    """docs/chunking.md, 'Lines': a UTF-8 BOM neither shifts lines nor leaks U+FEFF into the first line."""
    lines = split_lines(b"\xef\xbb\xbfdef f():\n    return 1\n")
    assert lines == ["def f():", "    return 1"]
    assert "\ufeff" not in decode(b"\xef\xbb\xbfx")


def test_lone_cr_file_is_not_one_line() -> None:
    """docs/chunking.md, 'Lines': a classic-Mac file (lone CR line ends) splits into its lines, never one line."""
    assert split_text("a = 1\r\rdef g():\r    pass\r") == ["a = 1", "", "def g():", "    pass"]


def test_read_lines(tmp_path: Path) -> None:
    """read_lines reads bytes from disk and applies the same rules."""
    path = tmp_path / "x.py"
    path.write_bytes(b"\xef\xbb\xbfa\r\nb\r\n")
    assert read_lines(path) == ["a", "b"]
