"""Source decoding honours a PEP 263 encoding declaration in Python files (chunking/lines.py, rule 2).

Issue "No silent wrong results", item B: a Latin-1 Python file with a ``coding:`` line was decoded as UTF-8, so
``def gérer_données`` became ``def g\\ufffdrer_donn\\ufffdes`` and the function chunker named it ``es``.
"""

from __future__ import annotations

import codecs
import random
from pathlib import Path

import pytest

from swe_explore.chunking.languages import get_spec
from swe_explore.chunking.lines import (
    PYTHON_SUFFIXES,
    count_lines,
    declared_encoding,
    decode,
    decode_source,
    read_lines,
    split_lines,
)
from swe_explore.chunking.registry import chunk_snapshot
from swe_explore.chunking.walk import walk_snapshot
from swe_explore.evaluation.line_counts import count_file_lines

LATIN1_MODULE = (
    b"# -*- coding: latin-1 -*-\n"
    b'"""Donn\xe9es du caf\xe9."""\n'
    b"\n"
    b"\n"
    b"def g\xe9rer_donn\xe9es(entr\xe9e):\n"
    b'    """G\xe8re les donn\xe9es."""\n'
    b"    return entr\xe9e\n"
)


def _write(root: Path, rel: str, data: bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_latin1_function_gets_its_real_name(tmp_path: Path) -> None:
    """The issue's case end to end: walker + function chunker name the function ``gérer_données`` (was ``es``)."""
    _write(tmp_path, "gestion.py", LATIN1_MODULE)
    chunks, stats = chunk_snapshot(tmp_path, "function")
    assert [(c.start, c.end, c.kind, c.symbol) for c in chunks] == [
        (1, 2, "gap", ""),
        (5, 7, "function", "gérer_données"),
    ]
    assert chunks[1].text == 'def gérer_données(entrée):\n    """Gère les données."""\n    return entrée'
    assert stats.walk["declared_encodings"] == {"iso8859-1": 1}
    assert stats.walk["non_utf8"] == 0


def test_latin1_lines_decode_correctly() -> None:
    """Every line decodes to the intended characters; the codec used is reported."""
    text, codec = decode_source(LATIN1_MODULE, pep263=True)
    assert codec == "iso8859-1"
    assert split_lines(LATIN1_MODULE, pep263=True) == [
        "# -*- coding: latin-1 -*-",
        '"""Données du café."""',
        "",
        "",
        "def gérer_données(entrée):",
        '    """Gère les données."""',
        "    return entrée",
    ]
    assert "\ufffd" not in text
    assert split_lines(LATIN1_MODULE)[4] == "def g\ufffdrer_donn\ufffdes(entr\ufffde):"  # without pep263: today's rule


def test_vim_fileencoding_form_on_line_two() -> None:
    """``# vim: set fileencoding=cp1252 :`` on line 2 under a shebang: cp1252 quotes and euro sign decode."""
    data = b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\nPRICE = \x93 10 \x80 \x94\n"
    assert declared_encoding(data) == "cp1252"
    assert split_lines(data, pep263=True)[2] == "PRICE = \u201c 10 \u20ac \u201d"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"# coding=latin-1\nx = '\xe9'\n", "iso8859-1"),  # "=" form, no spaces
        (b"\n# coding: latin-1\nx = '\xe9'\n", "iso8859-1"),  # line 1 blank
        (b"  \x0c# encoding: cp1252\nx = '\x80'\n", "cp1252"),  # leading whitespace and form feed, "encoding"
        (b"# -*- coding: latin-1 -*- caf\xe9\nx = 1\n", "iso8859-1"),  # non-UTF-8 bytes on the line (CPython ok)
        (b"# coding: latin-1\rx = '\xe9'\r", "iso8859-1"),  # classic Mac: line 1 ends at the first \r
        (b"# coding: shift_jis\nx = '\x83e\x83X\x83g'\n", "shift_jis"),
        (b"x = 1\n\n# coding: latin-1\n", None),  # line 3 is never looked at
        (b"import os\n# coding: latin-1\n", None),  # line 2 only counts under a blank or comment line 1
        (b"x = 1  # coding: latin-1\n", None),  # the comment must be alone on its line
        (b"# coding: no-such-codec\n", None),  # unknown codec: today's rule
        (b"# coding: utf-8\n", None),  # UTF-8 is today's rule
        (b"# coding: utf8\n", None),
        (b"\xef\xbb\xbf# coding: latin-1\n", None),  # a UTF-8 BOM wins (Python refuses the conflict)
        (b"# coding: utf-16\n", None),  # not ASCII-compatible: the line structure would change
        (b"# coding: cp037\n", None),  # EBCDIC
        (b"# coding: unicode_escape\n", None),  # "\\n" would become a line end
        (b"# coding: rot13\n", None),  # not a text encoding
        (b"", None),
    ],
)
def test_declaration_rules(data: bytes, expected: str | None) -> None:
    """PEP 263 as the CPython tokenizer applies it: lines 1-2 only, codec from the codec registry."""
    assert declared_encoding(data) == expected


def test_unknown_codec_falls_back_to_utf8_with_replacement() -> None:
    """An unknown codec keeps today's rule: UTF-8, U+FFFD for invalid bytes."""
    data = b"# coding: no-such-codec\nname = 'caf\xe9'\n"
    assert decode_source(data, pep263=True) == ("# coding: no-such-codec\nname = 'caf\ufffd'\n", None)


def test_utf8_files_unchanged() -> None:
    """UTF-8 files (declared or not, with or without BOM) decode exactly as before."""
    for data in (
        "# -*- coding: utf-8 -*-\ndef gérer():\n    return '☕'\n".encode(),
        "def gérer():\n    return '☕'\n".encode(),
        b"\xef\xbb\xbf" + "def gérer():\n    pass\n".encode(),
    ):
        assert decode(data, pep263=True) == decode(data)
        assert split_lines(data, pep263=True) == split_lines(data)


def test_stateful_codec_that_swallows_a_line_end_is_not_used() -> None:
    """An ISO-2022-JP shift left open before a line end would swallow it: today's rule is kept instead."""
    data = b"# coding: iso2022_jp\nx = '\x1b$B\n'\ny = 1\n"
    assert declared_encoding(data) == "iso2022_jp"
    text, codec = decode_source(data, pep263=True)
    assert codec is None and text.count("\n") == 4
    assert len(split_lines(data, pep263=True)) == count_lines(data) == 4


def test_read_lines_honours_declarations_of_python_files_only(tmp_path: Path) -> None:
    """read_lines decides by suffix; the suffixes are those of the python row of the language table."""
    assert frozenset(get_spec("python").extensions) == PYTHON_SUFFIXES
    py = _write(tmp_path, "m.pyw", b"# coding: latin-1\nx = '\xe9'\n")
    txt = _write(tmp_path, "notes.txt", b"# coding: latin-1\nx = '\xe9'\n")
    assert read_lines(py)[1] == "x = 'é'"
    assert read_lines(txt)[1] == "x = '\ufffd'"


def test_walker_decodes_python_only_and_counts(tmp_path: Path) -> None:
    """The walker honours the declaration in Python files only; a Ruby file with the same line keeps UTF-8."""
    _write(tmp_path, "a.py", b"# coding: cp1252\nEURO = '\x80'\n")
    _write(tmp_path, "b.rb", b"# coding: cp1252\nEURO = '\x80'\n")
    _write(tmp_path, "c.py", b"name = 'caf\xe9'\n")
    files, stats = walk_snapshot(tmp_path)
    assert {f.path: f.lines[-1] for f in files} == {
        "a.py": "EURO = '€'",
        "b.rb": "EURO = '\ufffd'",
        "c.py": "name = 'caf\ufffd'",
    }
    assert stats.declared_encodings == {"cp1252": 1}
    assert stats.non_utf8 == 2


def test_utf16_file_is_skipped_as_binary(tmp_path: Path) -> None:
    """Decision: UTF-16/32 byte-order marks are not decoded; such files hold NUL bytes and are skipped."""
    _write(tmp_path, "wide.py", "\ufeffx = 1\n".encode("utf-16-le"))
    files, stats = walk_snapshot(tmp_path)
    assert files == [] and stats.skipped == {"binary": 1}


def test_line_counts_never_change() -> None:
    """The evaluator counts lines on bytes; decoding with any declared codec gives the same number of lines,
    for every text codec of the registry and random bytes holding \\n, \\r, CRLF, escapes and shift bytes."""
    rng = random.Random(263)
    alphabet = b"ab \t\n\r\x00\x0c\x1b\x7f\x80\x81\x8e\x9f\xa1\xe9\xfe\xff\\~{}$B(+-"
    names = sorted({codecs.lookup(name).name for name in ("latin-1", "cp1252", "shift_jis", "gbk", "iso2022_jp")})
    names += ["koi8-r", "mac-roman", "utf-7", "hz", "euc_jp", "big5", "cp437"]
    checked = 0
    for name in names:
        for _ in range(40):
            body = bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 80)))
            data = f"# coding: {name}\n".encode() + body
            lines = split_lines(data, pep263=True)
            assert len(lines) == count_lines(data) == count_file_lines(data), (name, data)
            assert all("\n" not in line for line in lines)
            checked += 1
    assert checked == 12 * 40


def test_latin1_line_count_equals_utf8_line_count() -> None:
    """Hand-checked: the Latin-1 module has 7 lines under either decoding, and its CRLF twin too."""
    assert len(split_lines(LATIN1_MODULE, pep263=True)) == len(split_lines(LATIN1_MODULE)) == 7
    crlf = LATIN1_MODULE.replace(b"\n", b"\r\n")
    assert split_lines(crlf, pep263=True) == split_lines(LATIN1_MODULE, pep263=True)
    assert count_file_lines(crlf) == 7
