"""The one definition of a *line*, shared by the snapshot walker, every chunker and the evaluator.

A file is read as bytes and split into lines as follows:

1. A leading UTF-8 byte-order mark (``EF BB BF``) is dropped; it never shifts lines or leaks into tokens.
2. The bytes are decoded as UTF-8; invalid bytes become U+FFFD (``errors="replace"``), so no line is lost.
   **Python source** (``pep263=True``; the walker passes it for language ``python``) is decoded with the codec
   of its PEP 263 encoding declaration instead, found exactly as the Python tokenizer finds it (on the bytes
   of the first two lines of rule 3: a comment matching ``^[ \\t\\f]*#.*?coding[:=][ \\t]*([-\\w.]+)`` on
   line 1, or on line 2 when line 1 is blank or a comment; the codec looked up with :func:`codecs.lookup`),
   with ``errors="replace"``: under ``# -*- coding: latin-1 -*-`` the bytes ``def g\\xe9rer()`` define
   ``gérer``, not ``g\\ufffdrer``. Today's rule stays for everything else: no declaration, a UTF-8 one, an
   unknown codec, a declaration after a UTF-8 BOM (the BOM wins, as for Python, which refuses a conflicting
   one), and a codec that does not decode every ASCII byte to itself (UTF-16/32, UTF-7, EBCDIC, escape codecs)
   or whose text of the file does not keep each ``"\\n"`` and ``"\\r"`` byte (a stateful ISO-2022 shift can
   swallow one). So decoding never changes the number of lines nor which bytes form line ``i``:
   :func:`count_lines`, which the evaluator uses, needs no decoding. Files starting with a UTF-16 or UTF-32
   byte-order mark get no special decoding: they hold NUL bytes, and the walker skips them as binary.
3. The text is split on ``"\\n"`` only. One trailing ``"\\r"`` per line is removed, so a CRLF file has exactly
   the lines of its LF twin. Form feeds (``\\f``), vertical tabs, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and
   U+2029 are ordinary characters: they do **not** end a line (unlike :meth:`str.splitlines`, which the
   reference evaluator uses; see ``docs/metrics.md``). This matches what ``cat -n``/``sed -n`` show, which is
   how the SWE-Explore ground truth was read.
4. A final ``"\\n"`` ends the last line rather than starting an empty one: ``b"a\\n"`` and ``b"a"`` are one line,
   ``b""`` is zero lines, ``b"\\n"`` is one (empty) line.
5. Classic-Mac files, which contain ``"\\r"`` but no ``"\\n"`` at all, are split on ``"\\r"`` instead, so such a
   file never collapses into one line spanning the whole file.

Line numbers are 1-based: line ``i`` is ``lines[i - 1]``.
"""

from __future__ import annotations

import codecs
import re
import warnings
from pathlib import Path

_BOM = b"\xef\xbb\xbf"

CODING_DECLARATION = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
"""PEP 263's encoding declaration (on the bytes of line 1 or 2; group 1 is the codec name)."""

_BLANK_OR_COMMENT = re.compile(rb"^[ \t\f]*(?:[#\r\n]|$)")

_ASCII_PROBE = bytes(range(128)) + b"\\n \\x41 \\u0041 \\\n +AGE- ~{ ~}"
"""A declared codec must decode these bytes as ASCII does: every ASCII byte, escapes and shift sequences
included, stands for itself (excludes UTF-16/32, EBCDIC, ``unicode_escape``, UTF-7, HZ)."""

PYTHON_SUFFIXES = frozenset({".py", ".pyi", ".pyw"})
"""File suffixes whose encoding declaration :func:`read_lines` honours (the ``python`` row of
:data:`chunking.languages.LANGUAGES`)."""


def _separator(data: bytes) -> bytes:
    """The line separator of rule 3/5: ``\\n``, or ``\\r`` for a file with ``\\r`` but no ``\\n``."""
    return b"\n" if (b"\n" in data or b"\r" not in data) else b"\r"


def _head_lines(data: bytes, sep: bytes) -> list[bytes]:
    """The first two lines of ``data`` with their terminators (fewer for a shorter file)."""
    out: list[bytes] = []
    pos = 0
    while len(out) < 2 and pos < len(data):
        end = data.find(sep, pos)
        end = len(data) if end < 0 else end + 1
        out.append(data[pos:end])
        pos = end
    return out


def declared_encoding(data: bytes) -> str | None:
    """The codec named by a Python source file's PEP 263 encoding declaration, when decoding should use it.

    The declaration is found as the CPython tokenizer finds it (``check_coding_spec``, on bytes): the first match
    of :data:`CODING_DECLARATION` on line 1, or on line 2 when line 1 is blank or a comment, lines as rule 3
    splits them (a classic-Mac file's line 1 ends at its first ``\\r``); bytes that are not UTF-8 may surround
    it (``tokenize.detect_encoding`` refuses those, the interpreter does not). The codec is looked up in
    Python's codec registry (:func:`codecs.lookup`).

    :param data: the file's raw bytes.
    :return: the codec's canonical name (``iso8859-1``, ``cp1252``, ...), or ``None`` when today's rule applies:
        no declaration, a UTF-8 declaration, an unknown codec, a file starting with a UTF-8 BOM, or a codec that
        does not decode every ASCII byte to itself (:data:`_ASCII_PROBE`: the line structure could change).
    """
    name = None
    for index, line in enumerate(_head_lines(data, _separator(data))):
        match = CODING_DECLARATION.match(line)
        if match:
            name = match.group(1).decode("ascii")
            break
        if index == 0 and not _BLANK_OR_COMMENT.match(line):  # code on line 1: line 2 is not looked at
            return None
    if name is None:
        return None
    try:
        codec = codecs.lookup(name).name
    except LookupError:
        return None
    if codec == "utf-8" or codec.startswith("utf-8-"):
        return None
    try:  # bytes.decode refuses the registry's non-text codecs (base64, rot13, zlib) with a LookupError
        with warnings.catch_warnings():  # unicode_escape warns about the probe's unknown escapes
            warnings.simplefilter("ignore", DeprecationWarning)
            if _ASCII_PROBE.decode(codec) != _ASCII_PROBE.decode("ascii"):
                return None
    except (UnicodeError, LookupError, ValueError):
        return None
    return codec


def decode_source(data: bytes, pep263: bool = False) -> tuple[str, str | None]:
    """Decode file bytes to text by rules 1-2, and say which codec a declaration made it use.

    :param data: the file's raw bytes.
    :param pep263: honour a PEP 263 encoding declaration (Python source).
    :return: ``(text, codec)``: the decoded text (line ends untouched) and the declared codec used, or ``None``
        when the text was decoded as UTF-8 with U+FFFD for invalid bytes (BOM dropped). A declared codec is
        used only if the text keeps exactly the file's ``\\n`` and ``\\r`` (stateful codecs such as ISO-2022 can
        swallow one); otherwise today's rule applies.
    """
    if pep263 and not data.startswith(_BOM):
        codec = declared_encoding(data)
        if codec is not None:
            try:
                text = data.decode(codec, errors="replace")
            except (UnicodeError, ValueError):  # a codec without the "replace" handler (idna)
                text = ""
            if text and text.count("\n") == data.count(b"\n") and text.count("\r") == data.count(b"\r"):
                return text, codec
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    return data.decode("utf-8", errors="replace"), None


def decode(data: bytes, pep263: bool = False) -> str:
    """Decode file bytes to text: drop a UTF-8 BOM, decode UTF-8 with U+FFFD for invalid bytes (or, with
    ``pep263``, the codec of a PEP 263 encoding declaration: see :func:`decode_source`).

    :param data: the file's raw bytes.
    :param pep263: honour a PEP 263 encoding declaration (Python source).
    :return: the decoded text (line ends untouched).
    """
    return decode_source(data, pep263)[0]


def split_text(text: str) -> list[str]:
    """Split decoded text into lines by the rules in the module docstring (rules 3-5).

    :param text: decoded text, e.g. from :func:`decode`.
    :return: the lines, without their line terminators.
    """
    if not text:
        return []
    sep = "\n" if ("\n" in text or "\r" not in text) else "\r"
    lines = text.split(sep)
    if lines[-1] == "":
        lines.pop()
    if sep == "\n" and "\r" in text:  # most files have no "\r": skip the per-line pass (0.15 s on astropy)
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    return lines


def split_lines(data: bytes, pep263: bool = False) -> list[str]:
    """Split a file's raw bytes into lines (all rules of the module docstring).

    :param data: the file's raw bytes.
    :param pep263: honour a PEP 263 encoding declaration (Python source); never changes the number of lines.
    :return: the lines as ``str`` without terminators; ``[]`` for an empty file.
    """
    return split_text(decode(data, pep263))


def read_lines(path: str | Path) -> list[str]:
    """Read a file and split it into lines with :func:`split_lines` (honouring a PEP 263 declaration in files
    whose suffix is in :data:`PYTHON_SUFFIXES`).

    :param path: file to read.
    :return: the file's lines.
    :raises OSError: if the file cannot be read.
    """
    path = Path(path)
    return split_lines(path.read_bytes(), pep263=path.suffix.lower() in PYTHON_SUFFIXES)


def count_lines(data: bytes) -> int:
    """Number of lines of a file's raw bytes, equal to ``len(split_lines(data))`` (with or without ``pep263``)
    without decoding.

    :param data: the file's raw bytes.
    :return: the line count (0 for an empty file).
    """
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    if not data:
        return 0
    sep = _separator(data)
    return data.count(sep) + (0 if data.endswith(sep) else 1)
