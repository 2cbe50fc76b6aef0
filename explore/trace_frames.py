"""Reading stack traces: the frames ``(path, line, function)`` an issue's lines show, in the trace formats of
the ten languages (:data:`FRAME_FORMATS`), and which lines belong to a trace block. This is the frame stage of
:func:`~swe_explore.explore.mentions.extract_mentions` (the module docstring of
:mod:`~swe_explore.explore.mentions` lists the formats): :func:`read_frames` scans prepared lines one by one (a
Rust or gdb header waits for its location on the next line), :func:`trace_lines` marks the lines of each trace
block, and :func:`normalize_path` is the one normalisation of a path as written, shared with path mentions and
their resolution (:mod:`~swe_explore.explore.mention_resolution`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

__all__ = ["FRAME_FORMATS", "RUST_PANIC", "Frame", "normalize_path", "read_frames", "trace_lines"]

FRAME_FORMATS: tuple[str, ...] = (
    "python",
    "go",
    "rust",
    "java",
    "javascript",
    "php",
    "ruby",
    "sanitizer",
    "gdb",
    "diagnostic",
)
"""Values of :attr:`Frame.format`: which trace format a frame was read from (``sanitizer`` includes
valgrind; ``diagnostic`` is a compiler/linter/warning ``path:line:`` line)."""

_TRACE_GAP = 4
"""Frame lines at most this many lines apart belong to one trace block (source echo, caret lines)."""
_TRACE_BEFORE = 5
"""Lines before a trace block counted as trace (``panic: ...``, ``goroutine 1 [running]:``, Java's
``Exception in thread``)."""
_TRACE_AFTER = 3
"""Lines after a trace block counted as trace (Python's exception line after the source echo)."""
_LOOKAHEAD = 25
"""How many lines after an IPython ``path in func(...)`` header are searched for its ``---> 12`` marker."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One stack-trace frame (or diagnostic location) named by the issue.

    :param path: the file as written, normalised (``/`` separators, no ``file://`` scheme or leading ``./``);
        absolute and foreign prefixes are kept; Java frames hold the package path (``org/pkg/C.java``); ``""``
        when the frame names no source file (a Rust backtrace header without its ``at`` line).
    :param line: 1-based line number, ``None`` when the format gives none.
    :param function: the function as written (``foo``, ``Foo->bar``, ``org.pkg.C.m``, ``ns::Bar::baz``,
        ``main.(*Server).handle``, ``block in run``); ``""`` when the format gives none (diagnostics, PHP
        errors, anonymous JavaScript frames).
    :param format: the trace format, one of :data:`FRAME_FORMATS`.
    """

    path: str
    line: int | None
    function: str
    format: str

    @property
    def location(self) -> tuple[str, int | None, str]:
        """``(path, line, function)``, what deduplication and tests compare."""
        return (self.path, self.line, self.function)


# -- frames ------------------------------------------------------------------------------------------------

_NUM = r"(?P<line>\d+)"
_PY_FRAME = re.compile(r'\bFile "(?P<path>[^"]+)", line ' + _NUM + r"(?:, in (?P<func>\S+))?")
_IPY8_FRAME = re.compile(r"^\s*File (?P<path>[^\s\"][^\"]*?):" + _NUM + r"(?:, in (?P<func>[\w.<>]+))?")
_IPY7_HEADER = re.compile(r"^(?P<path>\S+\.py) in (?P<func>[\w.<>]+)\(.*$")
_IPY7_MARKER = re.compile(r"^\s*-+> ?" + _NUM + r"\b")
_PYTEST_FRAME = re.compile(r"^\s*(?P<path>\S+\.py):" + _NUM + r": in (?P<func>\S+)\s*$")
_GO_LOCATION = re.compile(r"^\s*(?P<path>\S+\.go):" + _NUM + r"(?:\s+\+0x[0-9a-fA-F]+)?\s*$")
_GO_FUNC = re.compile(r"^[\w./*()\[\]\-~]+$")
_AT_LOCATION = re.compile(r"^\s*at (?P<path>[^\s()]+?):" + _NUM + r"(?::\d+)?\s*$")
_JAVA_FRAME = re.compile(r"^\s*at (?P<func>[\w$.<>/\-]+)\((?P<file>[^()]*)\)(?:\s.*)?$")
_JS_FRAME = re.compile(r"^\s*at (?:async )?(?:new )?(?P<func>[^()]+?) \((?P<path>[^()]+?):" + _NUM + r":\d+\)\s*$")
_FIREFOX_FRAME = re.compile(r"^\s*(?P<func>[\w$.<>/]*)@(?P<path>\S+?):" + _NUM + r":\d+\s*$")
_PHP_FRAME = re.compile(r"^\s*#\d+\s+(?P<path>[^\s(\[{]+)\(" + _NUM + r"\):\s+(?P<func>[^\s(]+)\(")
_PHP_ERROR = re.compile(r"\bin (?P<path>\S+\.(?:php\d?|phtml|inc))(?: on line |:)" + _NUM + r"\b")
_RUBY_FRAME = re.compile(r"^\s*(?:from\s+)?(?P<path>(?:[A-Za-z]:)?[^\s:]+):" + _NUM + r":in [`'](?P<func>[^'`]+)'")
_GDB_FRAME = re.compile(
    r"^\s*#\d+\s+(?:0x[0-9a-fA-F]+\s+in\s+)?(?P<func>[^\s(][^(]*?)\s*\((?P<args>.*)\)\s*"
    r"(?:at\s+(?P<path>\S+):" + _NUM + r"|(?P<lib>from\s+\S+))?\s*$"
)
_SANITIZER_FRAME = re.compile(
    r"^\s*#\d+\s+0x[0-9a-fA-F]+\s+in\s+(?P<func>.+?)\s+(?P<path>[^\s()]+?):" + _NUM + r"(?::\d+)?\s*$"
)
_VALGRIND_FRAME = re.compile(
    r"^(?:==\d+==)?\s*(?:at|by) 0x[0-9A-Fa-f]+: (?P<func>.+?) \((?:in )?(?P<path>[^():]+):" + _NUM + r"\)\s*$"
)
_RUST_HEADER = re.compile(
    r"^\s*\d+:\s+(?:0x[0-9a-fA-F]+ - )?(?P<func>[^\s(][\w:<>{}\[\] ,&*'+\-]*?)(?:::h[0-9a-f]{16})?\s*$"
)
RUST_PANIC = re.compile(r"panicked at (?:'(?P<msg>.*)', )?(?P<path>[^\s']+?):" + _NUM + r":\d+:?")
_RUST_ARROW = re.compile(r"^\s*-->\s*(?P<path>\S+?):" + _NUM + r":\d+\s*$")
_URL_PREFIX = re.compile(r"^[A-Za-z][\w+.\-]*://[^/]*")
_MSVC_DIAGNOSTIC = re.compile(
    r"^\s*(?P<path>[^\s(:][^(:]*?\.[A-Za-z][\w+]*)\(" + _NUM + r"(?:,\d+)?\)\s*:\s*(?:fatal )?(?:error|warning)"
)
_DIAGNOSTIC = re.compile(
    r"^\s*(?P<path>(?:[A-Za-z]:)?[^\s:]*[^\s:/\\]\.[A-Za-z][\w+]*):" + _NUM + r"(?::\d+)?:(?=\s|$)"
)


_Finder = Callable[[str], "re.Match[str] | None"]
_PYTHON_LINES: tuple[tuple[_Finder, str], ...] = ((_IPY8_FRAME.match, "python"), (_PYTEST_FRAME.match, "python"))
_SCRIPT_LINES: tuple[tuple[_Finder, str], ...] = (
    (_JS_FRAME.match, "javascript"),
    (_FIREFOX_FRAME.match, "javascript"),
    (_PHP_FRAME.match, "php"),
    (_RUBY_FRAME.match, "ruby"),
)
_SANITIZER_LINES: tuple[tuple[_Finder, str], ...] = (
    (_SANITIZER_FRAME.match, "sanitizer"),
    (_VALGRIND_FRAME.match, "sanitizer"),
)
_LOCATION_LINES: tuple[tuple[_Finder, str], ...] = (
    (RUST_PANIC.search, "rust"),
    (_PHP_ERROR.search, "php"),
    (_RUST_ARROW.match, "diagnostic"),
    (_MSVC_DIAGNOSTIC.match, "diagnostic"),
    (_DIAGNOSTIC.match, "diagnostic"),
)
"""Frame formats tried in turn, as ``(finder, format)``: the finder's match has ``path``, ``line`` and maybe
``func`` groups."""


def normalize_path(path: str) -> str:
    """A path as written, with ``/`` separators and no URL scheme and host (``file://``, ``http://host:8080``),
    ``./`` prefix or query suffix."""
    path = path.strip().strip("\"'")
    for prefix in ("webpack-internal:///", "webpack:///"):
        path = path.removeprefix(prefix)
    path = _URL_PREFIX.sub("", path).replace("\\", "/").split("?", 1)[0]
    while path.startswith("./"):
        path = path[2:]
    return path


def _strip_call(text: str) -> str:
    """``text`` without a trailing balanced ``(...)`` group (Go arguments, C++ signatures)."""
    text = text.rstrip()
    if not text.endswith(")"):
        return text
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        if text[i] == ")":
            depth += 1
        elif text[i] == "(":
            depth -= 1
            if depth == 0:
                return text[:i].rstrip() if i > 0 and text[i - 1] != "." else text
    return text


def _go_function(line: str) -> str:
    """The function of a Go panic's function line (``main.(*T).m(0x1, ...)`` -> ``main.(*T).m``), or ``""``."""
    text = re.sub(r"\s+in goroutine \d+$", "", line.strip())
    text = text.removeprefix("created by ")
    text = _strip_call(text)
    return text if "." in text and _GO_FUNC.match(text) else ""


def _java_frame(func: str, file: str) -> tuple[str, int | None]:
    """Path (package path + file name) and line of a Java ``at pkg.C.m(C.java:12)`` frame."""
    func = func.rsplit("/", 1)[-1]  # java.base/java.lang.Thread.run
    name, _, line = file.partition(":")
    if "." not in name or " " in name:
        return "", None  # Native Method, Unknown Source
    package = [p for p in func.split(".")[:-2] if p]
    path = "/".join([*package, name])
    return path, int(line) if line.isdigit() else None


class _FrameScanner:
    """Reads frames line by line; a Rust or gdb header waits for its location on the next line."""

    def __init__(self, lines: Sequence[str], skip: Sequence[bool]) -> None:
        self.lines = lines
        self.skip = skip
        self.found: list[tuple[int, Frame]] = []
        self.frame_lines: set[int] = set()
        self._pending: tuple[int, str, str] | None = None  # (line index, function, format)

    def _add(self, i: int, path: str, line: int | str | None, function: str, fmt: str) -> None:
        self.frame_lines.add(i)
        number = int(line) if line is not None and str(line).isdigit() else None
        self.found.append((i, Frame(normalize_path(path) if path else "", number, function.strip(), fmt)))

    def _flush(self) -> None:
        if self._pending is not None:
            i, function, fmt = self._pending
            self._pending = None
            if function and not function.startswith("?"):
                self._add(i, "", None, function, fmt)

    def scan(self) -> list[tuple[int, Frame]]:
        """All frames with the index of the line they were read from, in line order."""
        for i, line in enumerate(self.lines):
            if self.skip[i] or not line.strip():
                continue
            if self._pending is not None:
                match = _AT_LOCATION.match(line)
                if match:
                    j, function, fmt = self._pending
                    self._pending = None
                    self.frame_lines.add(j)
                    self._add(i, match["path"], match["line"], function, fmt)
                    continue
                self._flush()
            self._scan_line(i, line)
        self._flush()
        self.found.sort(key=lambda item: item[0])
        return self.found

    def _previous_line(self, i: int) -> int:
        j = i - 1
        while j >= 0 and not self.lines[j].strip():
            j -= 1
        return j

    def _scan_line(self, i: int, line: str) -> None:
        """Read the frame of one line, if any: the first format (in this order) that matches wins."""
        match = _PY_FRAME.search(line)
        if match:
            if not match["path"].startswith("<"):
                self._add(i, match["path"], match["line"], match["func"] or "", "python")
            return
        if (
            self._first_of(i, line, _PYTHON_LINES)
            or self._ipython7(i, line)
            or self._go(i, line)
            or self._at_location(i, line)
            or self._java(i, line)
            or self._first_of(i, line, _SCRIPT_LINES)
            or self._gdb(i, line)
            or self._first_of(i, line, _SANITIZER_LINES)
            or self._rust_header(i, line)
        ):
            return
        self._first_of(i, line, _LOCATION_LINES)

    def _first_of(self, i: int, line: str, formats: Sequence[tuple[_Finder, str]]) -> bool:
        """Add the frame of the first ``(finder, format)`` that matches ``line``; whether one did."""
        for find, fmt in formats:
            match = find(line)
            if match:
                self._add(i, match["path"], match["line"], match.groupdict().get("func") or "", fmt)
                return True
        return False

    def _ipython7(self, i: int, line: str) -> bool:
        """An IPython 7 ``path in func(...)`` header; its line is the next ``---> 12`` marker before another
        header."""
        match = _IPY7_HEADER.match(line)
        if not match:
            return False
        number = None
        for k in range(i + 1, min(i + 1 + _LOOKAHEAD, len(self.lines))):
            if _IPY7_HEADER.match(self.lines[k]):
                break
            marker = _IPY7_MARKER.match(self.lines[k])
            if marker:
                number = marker["line"]
                break
        self._add(i, match["path"], number, match["func"], "python")
        return True

    def _go(self, i: int, line: str) -> bool:
        """A Go ``path.go:12 +0x1d`` location; its function is on the previous non-blank line."""
        match = _GO_LOCATION.match(line)
        if not match:
            return False
        j = self._previous_line(i)
        function = _go_function(self.lines[j]) if j >= 0 else ""
        if function:
            self.frame_lines.add(j)
        self._add(i, match["path"], match["line"], function, "go")
        return True

    def _at_location(self, i: int, line: str) -> bool:
        """A lone ``at path:12`` location (Rust for ``.rs`` files, else JavaScript)."""
        match = _AT_LOCATION.match(line)
        if not match:
            return False
        path = match["path"]
        self._add(i, path, match["line"], "", "rust" if path.endswith(".rs") else "javascript")
        return True

    def _java(self, i: int, line: str) -> bool:
        """A Java ``at pkg.C.m(C.java:12)`` frame."""
        match = _JAVA_FRAME.match(line)
        if not match:
            return False
        path, number = _java_frame(match["func"], match["file"])
        self._add(i, path, number, match["func"], "java")
        return True

    def _gdb(self, i: int, line: str) -> bool:
        """A gdb ``#3 0x.. in f (args) at path:12`` frame; one without a location waits for an ``at`` line."""
        match = _GDB_FRAME.match(line)
        if not match or ": " in match["func"]:
            return False
        if match["path"]:
            self._add(i, match["path"], match["line"], match["func"], "gdb")
        elif match["lib"] is None and "+0x" not in match["args"]:
            self.frame_lines.add(i)
            self._pending = (i, match["func"], "gdb")
        else:
            self.frame_lines.add(i)  # a shared-library frame (gdb ``from``, sanitizer ``(lib.so+0x..)``)
        return True

    def _rust_header(self, i: int, line: str) -> bool:
        """A Rust backtrace header ``  3: crate::m::f``; it waits for its ``at`` line."""
        match = _RUST_HEADER.match(line)
        if not match or not ("::" in match["func"] or self._next_is_location(i)):
            return False
        self.frame_lines.add(i)
        self._pending = (i, match["func"], "rust")
        return True

    def _next_is_location(self, i: int) -> bool:
        for k in range(i + 1, len(self.lines)):
            if self.lines[k].strip():
                return bool(_AT_LOCATION.match(self.lines[k]))
        return False


def read_frames(lines: Sequence[str], skip: Sequence[bool]) -> tuple[list[tuple[int, Frame]], set[int]]:
    """Read every frame of prepared issue lines (see :mod:`~swe_explore.explore.mentions`).

    :param lines: the issue's lines, prepared (newlines unified, quote markers stripped).
    :param skip: per line, whether to skip it (fence lines).
    :return: ``(frames, frame_lines)``: each frame with the index of the line it was read from, in line order,
        and the indices of every line that is part of a frame (a Go function line, a Rust header).
    """
    scanner = _FrameScanner(lines, skip)
    found = scanner.scan()
    return found, scanner.frame_lines


def trace_lines(n_lines: int, frame_lines: Iterable[int], is_fence: Sequence[bool]) -> list[bool]:
    """Per line: whether it belongs to a trace block (see :data:`SOURCES`)."""
    context = [False] * n_lines
    ordered = sorted(frame_lines)
    blocks: list[list[int]] = []
    for i in ordered:
        if blocks and i - blocks[-1][1] <= _TRACE_GAP:
            blocks[-1][1] = i
        else:
            blocks.append([i, i])
    for first, last in blocks:
        for k in range(first, last + 1):
            context[k] = True
        for k in range(first - 1, max(first - _TRACE_BEFORE, 0) - 1, -1):
            if is_fence[k]:
                break
            context[k] = True
        for k in range(last + 1, min(last + _TRACE_AFTER, n_lines - 1) + 1):
            if is_fence[k]:
                break
            context[k] = True
    return context
