"""The one definition of a *line*, shared by the snapshot walker, every chunker and the evaluator.

A file is read as bytes and split into lines as follows:

1. A leading UTF-8 byte-order mark (``EF BB BF``) is dropped; it never shifts lines or leaks into tokens.
2. The bytes are decoded as UTF-8; invalid bytes become U+FFFD (``errors="replace"``), so no line is lost.
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

from pathlib import Path

_BOM = b"\xef\xbb\xbf"


def decode(data: bytes) -> str:
    """Decode file bytes to text: drop a UTF-8 BOM, decode UTF-8 with U+FFFD for invalid bytes.

    :param data: the file's raw bytes.
    :return: the decoded text (line ends untouched).
    """
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    return data.decode("utf-8", errors="replace")


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
    if sep == "\n":
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    return lines


def split_lines(data: bytes) -> list[str]:
    """Split a file's raw bytes into lines (all rules of the module docstring).

    :param data: the file's raw bytes.
    :return: the lines as ``str`` without terminators; ``[]`` for an empty file.
    """
    return split_text(decode(data))


def read_lines(path: str | Path) -> list[str]:
    """Read a file and split it into lines with :func:`split_lines`.

    :param path: file to read.
    :return: the file's lines.
    :raises OSError: if the file cannot be read.
    """
    return split_lines(Path(path).read_bytes())


def count_lines(data: bytes) -> int:
    """Number of lines of a file's raw bytes, equal to ``len(split_lines(data))`` without decoding.

    :param data: the file's raw bytes.
    :return: the line count (0 for an empty file).
    """
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    if not data:
        return 0
    sep = b"\n" if (b"\n" in data or b"\r" not in data) else b"\r"
    return data.count(sep) + (0 if data.endswith(sep) else 1)
