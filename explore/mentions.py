"""Reading the issue: the stack frames, identifiers, file paths and error messages an issue text names, and
where they land in a snapshot (files and chunks), as features for a ranker.

**Extraction** (:func:`extract_mentions`) reads a raw ``problem_statement`` (CRLF, markdown, code fences, HTML
comments) line by line:

1. *Lines*: ``\\r\\n``/``\\r`` become ``\\n``; HTML comments (issue-template hints) are dropped; HTML entities are
   unescaped; markdown quote markers (``> ``) are stripped. Fenced blocks (three or more backticks or tildes;
   an unclosed fence runs to the end, as GitHub renders it) are *code*; in other lines, inline backtick spans
   are *backtick* and the rest *prose*. Lines of a stack trace (see :data:`SOURCES`) are *trace*.
2. *Frames* ``(path, line, function)`` in the trace formats of the ten languages (:data:`FRAME_FORMATS`):
   Python tracebacks (also IPython and pytest), Go panics (a ``pkg.func(...)`` line followed by its
   ``\\t/path/x.go:12 +0x1d`` line), Rust panics and backtraces (``  3: crate::m::f`` followed by
   ``at src/x.rs:12:5``; a header with no location line is a frame with ``path=""``), Java stack lines (the
   path is the package path plus the file name: ``at org.pkg.C.m(C.java:12)`` -> ``org/pkg/C.java``),
   JavaScript/TypeScript stack lines (V8 and Firefox), PHP errors and ``#0 X.php(12): f()`` frames, Ruby
   backtraces, C/C++ sanitizer, valgrind and gdb frames, and compiler/linter diagnostics
   (``src/x.c:12:5: error: ...``, ``x.go:12:``, ``x.cpp(12): error``, Rust ``--> src/x.rs:12:5``). Paths are
   normalised (``\\`` -> ``/``, ``file://``/``webpack://`` schemes and a leading ``./`` dropped) but otherwise
   kept as written, absolute prefixes included; :class:`MentionIndex` matches them to the snapshot.
   Python pseudo-files (``File "<stdin>"``) give no frame. Repeated frames are kept once.
3. *Errors*: exception type + message (``ValueError: bad thing``, the last line of a Python traceback even for
   lower-case types such as ``re.error``, ``Exception in thread "main" java.lang.NullPointerException``,
   ``Caused by: ...``, ``panic: runtime error: ...``, Rust ``panicked at``, ``error[E0308]: mismatched
   types``, ``prog: error: ...``, PHP ``Fatal error: Uncaught ...``, Ruby ``... (NoMethodError)``, sanitizer
   reports, diagnostics' ``error:``/``warning:`` messages). Messages are whitespace-collapsed and cut at
   :data:`MAX_MESSAGE_CHARS` characters.
4. *Paths*: repo-style file paths with a known extension (``src/foo/bar.py``, ``lib/x.rb``, ``Foo.java``),
   with an optional line suffix (``sessions.py:313``), and the file of GitHub ``blob``/``tree`` links
   (``.../blob/<ref>/pkg/x.py#L12``). Other URLs are ignored.
5. *Identifiers*: ``a.b.c``, ``a::b``, ``a->b``, ``A#b`` and ``A\\b`` chains and single names. In backtick
   spans every name counts; in code and traces, chains, calls (``name(``) and *shaped* names (CamelCase,
   snake_case, a leading underscore); in prose, the same plus a capitalised word right after a lower-case word
   or an English function word (``the Blueprint class``), so plain English words never count. Markdown
   emphasis (``_very annoying_``) is unwrapped first. A leading ``self.``, ``this.``, ``cls.``, ``$this->`` is
   dropped and ``$`` removed. Names whose last component is shorter than :data:`MIN_IDENTIFIER_CHARS`, single
   names in :data:`STOP_WORDS` and chains made only of stop words are dropped, as are domain names
   (``github.com``). Frame lines and paths are not read for identifiers.

Every list is in order of first occurrence; repeats are merged into one item that counts them and lists
every source it came from.

**Resolution** (:class:`MentionIndex`, :func:`resolve_mentions`) maps mentions onto a snapshot's files and
chunks and sums, per file and per chunk, the features of :data:`FEATURE_NAMES`:

- *Paths* (of frames and path mentions) match the snapshot file(s) sharing their longest path suffix, by
  path components. A match is valid when the whole snapshot path is a suffix of the mention
  (``/home/u/proj/src/x.py`` -> ``src/x.py``; ``.../site-packages/requests/api.py`` -> ``requests/api.py``),
  when a relative mention is a suffix of the snapshot path (``sessions.py`` -> ``requests/sessions.py``), or
  when at least two trailing components agree (``.../site-packages/flask/app.py`` -> ``src/flask/app.py``). So
  a stdlib or third-party frame resolves only if its file's suffix exists in the snapshot, never by base name
  alone. Ties keep every tied file.
- *Dotted module names* (``xarray.core.dataset.Dataset``): the longest prefix of at least two components that
  is a file's module path (``xarray/core/dataset.py``, ``pkg/__init__.py`` -> ``pkg``, also ``mod.rs`` and
  ``index.js``/``index.ts``) names that file (every file with that module path, whatever its extension); the
  rest (``Dataset``) is looked up among those files' symbols.
- *Identifiers* match definition chunks (kinds of :data:`~swe_explore.chunking.treesitter.DEFINITION_KINDS`)
  by symbol: *qualified* when the last two components agree (``Session.request`` ~ ``api.Session.request``;
  chain separators ``.``, ``::``, ``->``, ``#``, ``\\``, ``$`` are all equivalent), else *bare* when only the
  last component (the definition's own name) agrees. A chunk symbol listing merged definitions (``"a, b"``,
  see :mod:`~swe_explore.chunking.treesitter`) matches any of them.
- *Frames*: the frame's line selects the chunk(s) of its resolved file containing it; its function's last
  component selects that file's definitions of that name (robust to line drift between the reported version
  and the snapshot). A frame whose path does not resolve (or that has none) contributes only a qualified
  function match (``frame_symbol``), so a third-party ``in request`` frame never hits the project's
  ``request`` functions.

A mention that lands in ``n`` files adds ``1 / n`` to each (and to each of its chunks there), so a specific
mention weighs more than an ambiguous one; one that lands in more than ``max_files`` files (default
:data:`MAX_FILES`) is dropped as too ambiguous and counted in :attr:`ResolvedMentions.counts`.

Extraction is regular-expression work, about linear in the text (no pattern backtracks over a whole line;
about 0.75 ms per 1,000 characters); resolution is dictionary look-ups in tables built once per snapshot by
:class:`MentionIndex` (base name -> paths, module name -> paths, last symbol component(s) -> chunk indices).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Generic, TypeVar

from swe_explore.chunking.languages import language_for_path
from swe_explore.chunking.treesitter import DEFINITION_KINDS
from swe_explore.chunking.types import Chunk

__all__ = [
    "FEATURE_NAMES",
    "FEATURE_STRENGTH",
    "FRAME_FORMATS",
    "SOURCES",
    "STOP_WORDS",
    "ErrorMention",
    "Frame",
    "IssueMentions",
    "Mention",
    "MentionHit",
    "MentionIndex",
    "ResolvedMentions",
    "extract_mentions",
    "name_parts",
    "resolve_mentions",
]

SOURCES: tuple[str, ...] = ("trace", "backtick", "code_block", "prose")
"""Where a mention comes from, in this order of precedence: ``trace`` (a line of a stack trace: a frame line,
a line between frame lines at most :data:`_TRACE_GAP` lines apart, or one of the few lines around a trace
block, such as its exception line), ``backtick`` (an inline code span), ``code_block`` (a fenced block) and
``prose`` (everything else)."""

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

MIN_IDENTIFIER_CHARS = 3
"""Identifiers whose last component is shorter than this many characters are dropped (``xr``, ``T``)."""

MAX_MESSAGE_CHARS = 200
"""Error messages are cut at this many characters."""

MAX_FILES = 10
"""Default ``max_files``: a mention resolving to more files than this is too ambiguous to be a feature."""

FEATURE_NAMES: tuple[str, ...] = (
    "frame_line",
    "frame_function",
    "frame_file",
    "path_line",
    "path_file",
    "module_file",
    "frame_symbol",
    "identifier_qualified",
    "identifier_bare",
    "mention_score",
)
"""The features of :meth:`ResolvedMentions.file_features` and :meth:`ResolvedMentions.chunk_features`, always
all present (``0.0`` when nothing hit). Each is a sum of mention weights (``1 / n`` for a mention resolving to
``n`` files, see the module docstring), except ``mention_score``. A file-level value counts each mention once,
however many of the file's chunks it hits.

========================  ==============================================  ==============================================
feature                   chunk ``i``                                     file ``path``
========================  ==============================================  ==============================================
``frame_line``            frames whose line is inside the chunk           frames whose line is inside one of its chunks
``frame_function``        frames in the chunk's file whose function is    frames whose function is defined in the file
                          the chunk's definition name
``frame_file``            frames resolved to the chunk's file             frames resolved to the file
``path_line``             path mentions whose line is inside the chunk    path mentions whose line is inside one of its
                                                                          chunks
``path_file``             path mentions resolved to the chunk's file      path mentions resolved to the file
``module_file``           dotted module names of the chunk's file         dotted module names of the file
``frame_symbol``          frames without a resolved path whose function   such frames hitting one of its chunks
                          matches the chunk's symbol by two components
``identifier_qualified``  identifiers matching the chunk's symbol by two  such identifiers hitting one of its chunks
                          components (or module + symbol)
``identifier_bare``       identifiers without a qualified match whose     such identifiers hitting one of its chunks
                          last component is the definition's name
``mention_score``         the largest :data:`FEATURE_STRENGTH` among the  the same over the file's features
                          chunk's nonzero features
========================  ==============================================  ==============================================
"""

FEATURE_STRENGTH: Mapping[str, float] = MappingProxyType(
    {
        "frame_line": 1.0,
        "frame_function": 0.9,
        "frame_file": 0.8,
        "path_line": 0.7,
        "path_file": 0.6,
        "module_file": 0.55,
        "frame_symbol": 0.5,
        "identifier_qualified": 0.4,
        "identifier_bare": 0.2,
    }
)
"""How strongly each kind of hit points at a chunk or file, for ``mention_score``: a trace frame whose line is
inside the chunk > a frame naming the chunk's function > a frame in the file > a path mention > a qualified
identifier > a bare identifier."""

_T = TypeVar("_T")
_FILE_KINDS = ("frame_file", "path_file", "module_file")
"""Features that belong to a whole file: every chunk of the file inherits them."""

_TRACE_GAP = 4
"""Frame lines at most this many lines apart belong to one trace block (source echo, caret lines)."""
_TRACE_BEFORE = 5
"""Lines before a trace block counted as trace (``panic: ...``, ``goroutine 1 [running]:``, Java's
``Exception in thread``)."""
_TRACE_AFTER = 3
"""Lines after a trace block counted as trace (Python's exception line after the source echo)."""
_LOOKAHEAD = 25
"""How many lines after an IPython ``path in func(...)`` header are searched for its ``---> 12`` marker."""

# -- the issue's mentions ----------------------------------------------------------------------------------


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


@dataclass(frozen=True, slots=True)
class Mention:
    """An identifier or a file path named by the issue.

    :param text: the identifier as written (``Session.request``, ``std::vec::Vec``, ``obj->run``; ``$``, a
        trailing ``()`` and a leading ``self.``/``this.`` removed) or the normalised path (``src/x.py``).
    :param sources: every :data:`SOURCES` value it occurs in, in :data:`SOURCES` order.
    :param count: how many times it occurs (``>= 1``).
    :param line: paths only: the line of a ``:12`` / ``#L12`` suffix, else ``None``; the same path with two
        different lines is two mentions.
    """

    text: str
    sources: tuple[str, ...]
    count: int = 1
    line: int | None = None

    @property
    def source(self) -> str:
        """The strongest source it occurs in (the first of :attr:`sources`)."""
        return self.sources[0]


@dataclass(frozen=True, slots=True)
class ErrorMention:
    """An error message named by the issue: exception (or error kind) plus message.

    :param type: ``ValueError``, ``java.lang.NullPointerException``, ``panic``, ``error[E0308]``, ``Fatal
        error``, ``AddressSanitizer`` ...
    :param message: the message, whitespace-collapsed, at most :data:`MAX_MESSAGE_CHARS` characters; ``""``
        when there is none.
    :param sources: every :data:`SOURCES` value it occurs in, in :data:`SOURCES` order.
    :param count: how many times it occurs.
    """

    type: str
    message: str
    sources: tuple[str, ...]
    count: int = 1

    @property
    def text(self) -> str:
        """``"type: message"``, or the type alone."""
        return f"{self.type}: {self.message}" if self.message else self.type

    @property
    def source(self) -> str:
        """The strongest source it occurs in."""
        return self.sources[0]


@dataclass(frozen=True, slots=True)
class IssueMentions:
    """Everything :func:`extract_mentions` read from one issue text, each list in order of first occurrence.

    :param frames: stack-trace frames and diagnostic locations.
    :param identifiers: code identifiers.
    :param paths: file paths outside frames.
    :param errors: error messages.
    """

    frames: tuple[Frame, ...] = ()
    identifiers: tuple[Mention, ...] = ()
    paths: tuple[Mention, ...] = ()
    errors: tuple[ErrorMention, ...] = ()

    @property
    def is_empty(self) -> bool:
        """Whether nothing was found."""
        return not (self.frames or self.identifiers or self.paths or self.errors)


# -- stop words --------------------------------------------------------------------------------------------

_ENGLISH = """
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing done down during each either else even ever every few for from further
get got had has have having he her here hers him his how however i if in into is it its itself just let like may
me might more most much must my neither no nor not now of off on once only or other our out over own per please
same she should since so some such than that the their them then there these they this those though through thus
to too under until up upon us very via was we were what when where whether which while who whom whose why will
with within without would yet you your
""".split()  # noqa: SIM905 - a word list reads better as text
_KEYWORDS = """
abstract and as assert async auto await begin bool boolean break byte case catch chan char class cls const
continue crate def default defer del delete do double dyn echo elif else elsif end ensure enum except explicit
export extends extern false final finally float fn for foreach from func function global go goto if impl
implements import in include inline instanceof int interface is isset lambda let long loop match module move mut
namespace native new nil none nonlocal not null or package pass private protected pub public raise range ref
register rescue return self short signed sizeof static struct super switch synchronized then this throw throws
trait transient true try typedef typeof union unless unsafe unset unsigned until use var virtual void volatile
where while with yield
""".split()  # noqa: SIM905 - a word list reads better as text
_BUILTINS = """
append args argv assert_eq console cout dict endl enumerate err exit filter fmt getattr hasattr isinstance iter
kwargs len list log main make malloc map max min next object open print printf println puts repr require setattr
sorted sprintf std str string sum super system tuple type unwrap zip
""".split()  # noqa: SIM905 - a word list reads better as text
_PROPER_NOUNS = """
conda docker github gitlab golang ipython java javascript jupyter kotlin linux macos node php pip pypi python
ruby rust traceback typescript ubuntu windows
""".split()  # noqa: SIM905 - a word list reads better as text
_PLACEHOLDERS = """
arr bar baz da data df ds eggs example expected foo item items key keys obj qux result results spam test tmp
value values
""".split()  # noqa: SIM905 - a word list reads better as text
_CHAIN_STOP_WORDS = frozenset(w.lower() for w in _ENGLISH + _KEYWORDS + _BUILTINS + _PROPER_NOUNS)
STOP_WORDS: frozenset[str] = _CHAIN_STOP_WORDS | frozenset(_PLACEHOLDERS)
"""Lower-cased names that are never identifiers on their own (compared case-insensitively): English function
words, keywords of the ten languages, common builtins, tool and platform names, and placeholder names
(``foo``, ``data``, ``result``). A chain (``a.b``) is dropped only when each component is one of these other
than a placeholder (``console.log`` is dropped, ``Foo::bar`` kept)."""
_ENGLISH_WORDS = frozenset(_ENGLISH)

_DOMAINS = frozenset({"com", "org", "net", "io", "dev", "edu", "gov", "html", "htm", "www", "uk", "de", "app"})
_EXTRA_EXTENSIONS = frozenset(
    """html htm css scss less xml pyx pxd pxi vue svelte kt kts scala swift cs sql ipynb gradle erb
    haml proto lock mk cmake bazel bzl""".split()  # noqa: SIM905 - a word list reads better as text
)

# -- text preparation --------------------------------------------------------------------------------------

_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_QUOTE_PREFIX = re.compile(r"^ {0,3}(?:> ?)+")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
_BACKTICKS = re.compile(r"(`+)(.+?)\1")
_URL = re.compile(r"(?<![\w+.\-])[a-zA-Z][\w+.\-]*://[^\s<>\"'`)\]]+")
_GITHUB_FILE = re.compile(
    r"https?://github\.com/[\w.\-]+/[\w.\-]+/(?:blob|tree|raw)/[^/\s]+/([^\s#?<>\"'`)\]]+)(?:#L(\d+))?"
)
_EMPHASIS = re.compile(r"(?<![\w`])(_{1,2}|\*{1,2})(?=[^\s_*])([^_*\n]+?)(?<=[^\s_*])\1(?![\w`])")
"""Markdown emphasis (``_very annoying_``, ``**bold**``); only spans holding a space are unwrapped, so
``__init__`` stays a name. The text between markers holds no ``_``/``*``, which keeps the search linear."""


def _prepare_lines(text: str) -> list[str]:
    """The issue's lines: newlines unified, HTML comments dropped, entities unescaped, quote markers stripped."""
    text = _HTML_COMMENT.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    lines = []
    for line in text.split("\n"):
        if "&" in line:
            line = html.unescape(line)
        lines.append(_QUOTE_PREFIX.sub("", line).rstrip())
    return lines


def _code_flags(lines: Sequence[str]) -> tuple[list[bool], list[bool]]:
    """``(in_code, is_fence)`` per line: inside a fenced block, and a fence line itself."""
    in_code = [False] * len(lines)
    is_fence = [False] * len(lines)
    fence = ""
    for i, line in enumerate(lines):
        match = _FENCE.match(line)
        if match and not fence:
            if match.group(1)[0] == "`" and "`" in match.group(2):
                in_code[i] = True  # ```one-line code``` is inline code, not a fence
            else:
                fence = match.group(1)
                is_fence[i] = True
        elif (
            match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) and not match.group(2).strip()
        ):
            fence = ""
            is_fence[i] = True
        else:
            in_code[i] = bool(fence)
    return in_code, is_fence


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
_RUST_PANIC = re.compile(r"panicked at (?:'(?P<msg>.*)', )?(?P<path>[^\s']+?):" + _NUM + r":\d+:?")
_RUST_ARROW = re.compile(r"^\s*-->\s*(?P<path>\S+?):" + _NUM + r":\d+\s*$")
_URL_PREFIX = re.compile(r"^[A-Za-z][\w+.\-]*://[^/]*")
_MSVC_DIAGNOSTIC = re.compile(
    r"^\s*(?P<path>[^\s(:][^(:]*?\.[A-Za-z][\w+]*)\(" + _NUM + r"(?:,\d+)?\)\s*:\s*(?:fatal )?(?:error|warning)"
)
_DIAGNOSTIC = re.compile(
    r"^\s*(?P<path>(?:[A-Za-z]:)?[^\s:]*[^\s:/\\]\.[A-Za-z][\w+]*):" + _NUM + r"(?::\d+)?:(?=\s|$)"
)


def _normalize_path(path: str) -> str:
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
        self.found.append((i, Frame(_normalize_path(path) if path else "", number, function.strip(), fmt)))

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
        match = _PY_FRAME.search(line)
        if match:
            if not match["path"].startswith("<"):
                self._add(i, match["path"], match["line"], match["func"] or "", "python")
            return
        for pattern in (_IPY8_FRAME, _PYTEST_FRAME):
            match = pattern.match(line)
            if match:
                self._add(i, match["path"], match["line"], match["func"] or "", "python")
                return
        match = _IPY7_HEADER.match(line)
        if match:
            number = None
            for k in range(i + 1, min(i + 1 + _LOOKAHEAD, len(self.lines))):
                if _IPY7_HEADER.match(self.lines[k]):
                    break
                marker = _IPY7_MARKER.match(self.lines[k])
                if marker:
                    number = marker["line"]
                    break
            self._add(i, match["path"], number, match["func"], "python")
            return
        match = _GO_LOCATION.match(line)
        if match:
            j = self._previous_line(i)
            function = _go_function(self.lines[j]) if j >= 0 else ""
            if function:
                self.frame_lines.add(j)
            self._add(i, match["path"], match["line"], function, "go")
            return
        match = _AT_LOCATION.match(line)
        if match:
            path = match["path"]
            self._add(i, path, match["line"], "", "rust" if path.endswith(".rs") else "javascript")
            return
        match = _JAVA_FRAME.match(line)
        if match:
            path, number = _java_frame(match["func"], match["file"])
            self._add(i, path, number, match["func"], "java")
            return
        for pattern in (_JS_FRAME, _FIREFOX_FRAME):
            match = pattern.match(line)
            if match:
                self._add(i, match["path"], match["line"], match["func"], "javascript")
                return
        match = _PHP_FRAME.match(line)
        if match:
            self._add(i, match["path"], match["line"], match["func"], "php")
            return
        match = _RUBY_FRAME.match(line)
        if match:
            self._add(i, match["path"], match["line"], match["func"], "ruby")
            return
        match = _GDB_FRAME.match(line)
        if match and ": " not in match["func"]:
            if match["path"]:
                self._add(i, match["path"], match["line"], match["func"], "gdb")
            elif match["lib"] is None and "+0x" not in match["args"]:
                self.frame_lines.add(i)
                self._pending = (i, match["func"], "gdb")
            else:
                self.frame_lines.add(i)  # a shared-library frame (gdb ``from``, sanitizer ``(lib.so+0x..)``)
            return
        for pattern, fmt in ((_SANITIZER_FRAME, "sanitizer"), (_VALGRIND_FRAME, "sanitizer")):
            match = pattern.match(line)
            if match:
                self._add(i, match["path"], match["line"], match["func"], fmt)
                return
        match = _RUST_HEADER.match(line)
        if match and ("::" in match["func"] or self._next_is_location(i)):
            self.frame_lines.add(i)
            self._pending = (i, match["func"], "rust")
            return
        match = _RUST_PANIC.search(line)
        if match:
            self._add(i, match["path"], match["line"], "", "rust")
            return
        match = _PHP_ERROR.search(line)
        if match:
            self._add(i, match["path"], match["line"], "", "php")
            return
        match = _RUST_ARROW.match(line)
        if match:
            self._add(i, match["path"], match["line"], "", "diagnostic")
            return
        for pattern in (_MSVC_DIAGNOSTIC, _DIAGNOSTIC):
            match = pattern.match(line)
            if match:
                self._add(i, match["path"], match["line"], "", "diagnostic")
                return

    def _next_is_location(self, i: int) -> bool:
        for k in range(i + 1, len(self.lines)):
            if self.lines[k].strip():
                return bool(_AT_LOCATION.match(self.lines[k]))
        return False


def _trace_context(n_lines: int, frame_lines: Iterable[int], is_fence: Sequence[bool]) -> list[bool]:
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


# -- errors ------------------------------------------------------------------------------------------------

_EXCEPTION_NAME = (
    r"(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt|Fault|Failure)|Error|Exception)"
)
_JAVA_ERROR = re.compile(
    r"^\s*(?:Exception in thread \"[^\"]*\"\s+|Caused by:\s+)(?P<type>[\w$.]+)(?::\s*(?P<msg>.*))?$"
)
_INLINE_ERROR = re.compile(r"(?<![\w.])(?:Uncaught\s+)?(?P<type>" + _EXCEPTION_NAME + r")(?::\s+(?P<msg>[^`\n]+)|\s*$)")
_LINE_ERROR = re.compile(r"^\s*(?:E\s+|Uncaught\s+)?(?P<type>" + _EXCEPTION_NAME + r")(?::\s*(?P<msg>.*))?$")
_PY_LAST_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s*(?P<msg>.*))?$")
_KIND_ERROR = re.compile(r"^\s*(?:[\w.\-]+:\s+)?(?P<type>error(?:\[E\d{4}\])?|fatal error|panic):\s+(?P<msg>.+?)\s*$")
_PHP_MESSAGE = re.compile(
    r"^\s*(?:(?P<php>PHP)\s+)?(?P<kind>Fatal error|Parse error|Warning|Notice|Deprecated|Catchable fatal error):"
    r"\s+(?:Uncaught (?P<exc>[\w\\]+)(?::\s*|\s+))?(?P<msg>.*?)(?P<where>\s+in\s+\S+(?:\s+on line \d+|:\d+))?\s*$"
)
_RUBY_ERROR = re.compile(r":in [`'][^'`]*': (?P<msg>.+?) \((?P<type>[A-Z][\w:]*)\)\s*$")
_SANITIZER_ERROR = re.compile(r"\b(?P<type>(?:Address|Memory|Thread|Leak|UndefinedBehavior)Sanitizer):\s*(?P<msg>.+)$")
_DIAGNOSTIC_ERROR = re.compile(
    r"^\s*\S+?:\d+(?::\d+)?:\s+(?P<type>(?:fatal |runtime )?error|warning)(?:\[[^\]]*\])?:?\s+(?P<msg>.+)$"
)
_PY_ERROR_LINE_SKIP = re.compile(r"^(?:Traceback|During handling|The above exception)")


def _clean_message(message: str | None) -> str:
    return " ".join((message or "").split())[:MAX_MESSAGE_CHARS]


def _line_errors(line: str, next_line: str, after_python_trace: bool) -> list[tuple[str, str]]:
    """``(type, message)`` pairs named on one line (see the module docstring).

    :param line: the line.
    :param next_line: the next non-blank line (a Rust panic's message since Rust 1.73), ``""`` at the end.
    :param after_python_trace: whether the line ends a Python traceback (its exception line).
    :return: the errors, in order.
    """
    match = _JAVA_ERROR.match(line)
    if match:
        return [(match["type"], _clean_message(match["msg"]))]
    match = _RUST_PANIC.search(line)
    if match:
        return [("panic", _clean_message(match["msg"] or next_line))]
    match = _PHP_MESSAGE.match(line)
    if match and (match["php"] or match["where"]):
        return [(match["exc"] or match["kind"], _clean_message(match["msg"]))]
    match = _RUBY_ERROR.search(line)
    if match:
        return [(match["type"], _clean_message(match["msg"]))]
    match = _SANITIZER_ERROR.search(line)
    if match:
        return [(match["type"], _clean_message(match["msg"]))]
    match = _DIAGNOSTIC_ERROR.match(line)
    if match:
        return [(match["type"], _clean_message(match["msg"]))]
    match = _KIND_ERROR.match(line)
    if match:
        return [(match["type"], _clean_message(match["msg"]))]
    match = _LINE_ERROR.match(line)
    if match:
        return [(match["type"], _clean_message(match["msg"]))]
    if after_python_trace and not _PY_ERROR_LINE_SKIP.match(line):
        match = _PY_LAST_LINE.match(line)
        if match and (match["msg"] is not None or "." in match["type"]):
            return [(match["type"], _clean_message(match["msg"]))]
    return [(m["type"], _clean_message(m["msg"])) for m in _INLINE_ERROR.finditer(line)]


# -- paths and identifiers ---------------------------------------------------------------------------------

_PATH = re.compile(
    r"(?<![\w.\-/\\@:$])(?P<path>(?:[A-Za-z]:[/\\]|~/|\.{1,2}/|/)?(?:[\w.\-+@~]+[/\\])*[\w.\-+@~]*\w"
    r"\.(?P<ext>[A-Za-z][\w+]{0,9}))"
    r"(?:(?::|#L)(?P<line>\d+))?(?![\w/\\(])"
)
_CHAIN = re.compile(r"(?<![\w$@/\\])\$?[A-Za-z_][\w$]*(?:(?:\.|::|->|#|\\)\$?[A-Za-z_][\w$]*)*(?P<call>\()?")
_CHAIN_SPLIT = re.compile(r"::|->|[.#\\$/]")
_SELF_PREFIX = re.compile(r"^(?:self|this|cls|static|parent)(?:\.|->|::)")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_NAME = re.compile(r"[A-Za-z_]\w*")
_CAPITALISED = re.compile(r"[A-Z][a-z]+$")
_PREVIOUS_WORD = re.compile(r"(?<![\w.])([A-Za-z]+),? +$")


def _is_known_file(path: str, ext: str) -> bool:
    return language_for_path(path) is not None or ext.lower() in _EXTRA_EXTENSIONS


def _is_shaped(name: str) -> bool:
    """CamelCase or snake_case (or a leading underscore): unlike an English word."""
    return "_" in name or bool(_CAMEL.search(name))


def _identifier(raw: str, source: str, is_call: bool, mid_sentence: bool = False) -> str:
    """The normalised identifier for a chain match, or ``""`` when it is filtered out.

    :param raw: the matched text.
    :param source: the segment's source.
    :param is_call: whether ``(`` follows.
    :param mid_sentence: prose only: whether a lower-case word or an English function word (``The``) directly
        precedes it, so a capitalised name such as ``Blueprint`` reads as a class name rather than a sentence's
        first word or a title-case heading (``System Information``).
    :return: the identifier, or ``""``.
    """
    text = raw.replace("$", "")
    text = _SELF_PREFIX.sub("", text)
    parts = [p for p in _CHAIN_SPLIT.split(text) if p]
    if not parts or len(parts[-1]) < MIN_IDENTIFIER_CHARS:
        return ""
    if len(parts) > 1:
        if max(len(p) for p in parts) < MIN_IDENTIFIER_CHARS or parts[-1].lower() in _DOMAINS:
            return ""
        if all(p.lower() in _CHAIN_STOP_WORDS or len(p) < MIN_IDENTIFIER_CHARS for p in parts):
            return ""
        return text
    if text.lower() in STOP_WORDS:
        return ""
    if source == "backtick" or is_call or _is_shaped(text):
        return text
    if mid_sentence and len(text) >= 4 and _CAPITALISED.match(text):
        return text
    return ""


class _Collector(Generic[_T]):
    """Ordered, de-duplicating accumulator: payload (the key) -> sources and count."""

    def __init__(self) -> None:
        self.items: dict[_T, tuple[set[str], list[int]]] = {}

    def add(self, payload: _T, source: str) -> None:
        item = self.items.get(payload)
        if item is None:
            self.items[payload] = ({source}, [1])
        else:
            item[0].add(source)
            item[1][0] += 1

    def entries(self) -> list[tuple[_T, tuple[str, ...], int]]:
        """``(payload, sources in SOURCES order, count)`` in order of first occurrence."""
        return [
            (payload, tuple(s for s in SOURCES if s in sources), count[0])
            for payload, (sources, count) in self.items.items()
        ]


def _segments(line: str, in_code: bool) -> list[tuple[str, str]]:
    """``(text, source)`` parts of a line: the whole line in code, else backtick spans and the prose between."""
    if in_code:
        return [(line.replace("```", " "), "code_block")]
    out: list[tuple[str, str]] = []
    pos = 0
    for match in _BACKTICKS.finditer(line):
        if match.start() > pos:
            out.append((line[pos : match.start()], "prose"))
        out.append((match.group(2), "backtick"))
        pos = match.end()
    if pos < len(line):
        out.append((line[pos:], "prose"))
    return out


def extract_mentions(text: str) -> IssueMentions:
    """Read the frames, identifiers, paths and error messages of an issue text (module docstring).

    :param text: the raw issue text (``problem_statement``), any newline convention.
    :return: the mentions, each list in order of first occurrence, duplicates merged.
    """
    lines = _prepare_lines(text)
    in_code, is_fence = _code_flags(lines)
    scanner = _FrameScanner(lines, is_fence)
    found = scanner.scan()
    context = _trace_context(len(lines), scanner.frame_lines, is_fence)
    frames: dict[tuple[str, int | None, str], Frame] = {}
    for _, frame in found:
        frames.setdefault(frame.location, frame)

    python_frame_lines = {i for i, f in found if f.format == "python"}
    errors: _Collector[tuple[str, str]] = _Collector()
    paths: _Collector[tuple[str, int | None]] = _Collector()
    identifiers: _Collector[str] = _Collector()
    after_python = False  # inside a Python traceback, before its exception line
    for i, line in enumerate(lines):
        if is_fence[i] or not line.strip():
            continue
        if i in python_frame_lines:
            after_python = True
        last_line_of_trace = after_python and i not in python_frame_lines and line[:1] not in (" ", "\t")
        next_line = next((x for x in lines[i + 1 : i + 3] if x.strip()), "")
        for kind, message in _line_errors(line, next_line, last_line_of_trace):
            source = "trace" if context[i] else ("code_block" if in_code[i] else _segment_source(line, kind))
            errors.add((kind, message), source)
        if last_line_of_trace:
            after_python = False
        if i in scanner.frame_lines:
            continue
        for segment, seg_source in _segments(line, in_code[i]):
            source = "trace" if context[i] else seg_source
            _collect_paths_and_identifiers(segment, source, paths, identifiers)

    return IssueMentions(
        frames=tuple(frames.values()),
        identifiers=tuple(Mention(name, s, c) for name, s, c in identifiers.entries()),
        paths=tuple(Mention(path, s, c, number) for (path, number), s, c in paths.entries()),
        errors=tuple(ErrorMention(kind, message, s, c) for (kind, message), s, c in errors.entries()),
    )


def _segment_source(line: str, error_type: str) -> str:
    """``backtick`` when the error type sits inside a backtick span of the line, else ``prose``."""
    for match in _BACKTICKS.finditer(line):
        if error_type in match.group(2):
            return "backtick"
    return "prose"


def _collect_paths_and_identifiers(
    segment: str, source: str, paths: _Collector[tuple[str, int | None]], identifiers: _Collector[str]
) -> None:
    """Add the paths (GitHub links first, then plain paths) and identifiers of one segment."""
    for match in _GITHUB_FILE.finditer(segment):
        path = _normalize_path(match.group(1))
        number = int(match.group(2)) if match.group(2) else None
        paths.add((path, number), source)
    segment = _URL.sub(" ", segment)
    if source == "prose":
        segment = _EMPHASIS.sub(lambda m: f" {m.group(2)} " if " " in m.group(2) else m.group(0), segment)
    masked = list(segment)
    for match in _PATH.finditer(segment):
        if not _is_known_file(match["path"], match["ext"]):
            continue
        path = _normalize_path(match["path"])
        number = int(match["line"]) if match["line"] else None
        paths.add((path, number), source)
        masked[match.start() : match.end()] = " " * (match.end() - match.start())
    text = "".join(masked)
    for match in _CHAIN.finditer(text):
        end = match.end("call") if match["call"] else match.end()
        if text[end : end + 1] == "/":
            continue  # a path component
        raw = match.group(0).rstrip("( ")
        start = match.start()
        previous = _PREVIOUS_WORD.search(text, max(0, start - 40), start) if source == "prose" else None
        mid_sentence = previous is not None and (
            previous.group(1).islower() or previous.group(1).lower() in _ENGLISH_WORDS
        )
        name = _identifier(raw, source, bool(match["call"]), mid_sentence)
        if name:
            identifiers.add(name, source)


# -- resolution --------------------------------------------------------------------------------------------

_BRACKETS = re.compile(r"<[^<>]*>|\[[^\[\]]*\]|\{[^{}]*\}")
_GO_RECEIVER = re.compile(r"(?<=\.)\(\*?(\w+)\)")
_MODULE_FILES = {"__init__", "mod", "index"}
_SIMPLE_SYMBOL = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
"""A chunk symbol that is already dotted identifiers (almost all), split without :func:`name_parts`."""


def name_parts(name: str) -> tuple[str, ...]:
    """The components of a qualified name in any language's spelling, for matching chunk symbols.

    ``pkg.Foo.bar``, ``ns::Bar::baz(int) const``, ``main.(*Server).handle``, ``App\\Foo->bar``, ``Foo#bar``,
    ``org.pkg.C$Inner.m``, ``<T as Tr>::m``, ``block in run`` all give their identifier components
    (``("ns", "Bar", "baz")``): template/generic arguments, closures, a Go receiver's ``(*...)``, and call
    arguments or a signature (everything from the first remaining ``(``) are dropped.

    :param name: a qualified name as written.
    :return: its identifier components, possibly empty (``<module>``).
    """
    text = name.strip()
    if " in " in text:  # Ruby "block in foo", "rescue in bar"
        text = text.rsplit(" in ", 1)[1]
    previous = None
    while previous != text:
        previous = text
        text = _BRACKETS.sub("", text)
    text = _GO_RECEIVER.sub(r"\1", text).split("(", 1)[0]
    return tuple(p for p in _CHAIN_SPLIT.split(text) if _NAME.fullmatch(p))


def _symbol_parts(symbol: str) -> list[tuple[str, ...]]:
    """The components of each definition a chunk symbol names (``"a, b"`` names two)."""
    out = []
    for name in symbol.split(", "):
        parts = tuple(name.split(".")) if _SIMPLE_SYMBOL.fullmatch(name) else name_parts(name)
        if parts:
            out.append(parts)
    return out


def _common_suffix(a: Sequence[str], b: Sequence[str]) -> int:
    n = 0
    for x, y in zip(reversed(a), reversed(b)):
        if x != y:
            break
        n += 1
    return n


@dataclass(frozen=True)
class MentionHit:
    """One place a mention landed (for explanations and tests).

    :param feature: the feature it adds to (a :data:`FEATURE_NAMES` entry other than ``mention_score``).
    :param mention: the mention's text (a frame as ``path:line (function)``).
    :param path: the snapshot file.
    :param chunk: the chunk index, or ``None`` for a file-level hit.
    :param weight: what it adds: ``1 / n`` for a mention landing in ``n`` files.
    """

    feature: str
    mention: str
    path: str
    chunk: int | None
    weight: float


@dataclass(frozen=True)
class ResolvedMentions:
    """Where an issue's mentions land in one snapshot, as ranking features (module docstring).

    :param file_hits: path -> nonzero features of the file (without ``mention_score``).
    :param chunk_hits: chunk index -> nonzero chunk-level features (without the file-level ones it inherits).
    :param hits: every hit, in mention order.
    :param counts: ``frames``, ``frames_resolved``, ``paths``, ``paths_resolved``, ``identifiers``,
        ``identifiers_resolved``, ``too_ambiguous`` (mentions dropped for landing in more than ``max_files``
        files).
    :param chunk_paths: the path of every chunk of the snapshot, by index.
    """

    file_hits: Mapping[str, Mapping[str, float]]
    chunk_hits: Mapping[int, Mapping[str, float]]
    hits: tuple[MentionHit, ...]
    counts: Mapping[str, int]
    chunk_paths: Sequence[str] = field(repr=False)

    def file_features(self, path: str) -> dict[str, float]:
        """The features of one file, every :data:`FEATURE_NAMES` entry present.

        :param path: repo-relative path (any path; unknown files give zeros).
        :return: feature name -> value.
        """
        return _with_score(self.file_hits.get(path, {}))

    def chunk_features(self, index: int) -> dict[str, float]:
        """The features of one chunk, every :data:`FEATURE_NAMES` entry present; file-level features
        (``frame_file``, ``path_file``, ``module_file``) are those of the chunk's file.

        :param index: chunk index in the sequence given to :class:`MentionIndex`.
        :return: feature name -> value.
        :raises IndexError: if ``index`` is out of range.
        """
        path = self.chunk_paths[index]
        merged = dict(self.chunk_hits.get(index, {}))
        file_values = self.file_hits.get(path, {})
        for kind in _FILE_KINDS:
            if kind in file_values:
                merged[kind] = file_values[kind]
        return _with_score(merged)

    def files_hit(self) -> list[str]:
        """Every file some mention landed in, strongest first (``mention_score``, then path).

        :return: repo-relative paths.
        """
        scores = {path: self.file_features(path)["mention_score"] for path in self.file_hits}
        return sorted(scores, key=lambda p: (-scores[p], p))

    def chunks_hit(self) -> list[int]:
        """Indices of the chunks with a chunk-level hit, ascending (chunks only inheriting file features are
        not listed).

        :return: chunk indices.
        """
        return sorted(self.chunk_hits)


def _with_score(values: Mapping[str, float]) -> dict[str, float]:
    """All :data:`FEATURE_NAMES` with ``values`` filled in and ``mention_score`` computed."""
    out = {name: 0.0 for name in FEATURE_NAMES}
    score = 0.0
    for kind, value in values.items():
        out[kind] = value
        if value > 0:
            score = max(score, FEATURE_STRENGTH[kind])
    out["mention_score"] = score
    return out


class _Accumulator:
    """Builds the feature maps and the hit list of a :class:`ResolvedMentions`."""

    def __init__(self) -> None:
        self.files: dict[str, dict[str, float]] = {}
        self.chunks: dict[int, dict[str, float]] = {}
        self.hits: list[MentionHit] = []

    def add(self, kind: str, mention: str, path: str, chunks: Sequence[int], weight: float) -> None:
        values = self.files.setdefault(path, {})
        values[kind] = values.get(kind, 0.0) + weight
        if not chunks:
            self.hits.append(MentionHit(kind, mention, path, None, weight))
        for index in chunks:
            chunk_values = self.chunks.setdefault(index, {})
            chunk_values[kind] = chunk_values.get(kind, 0.0) + weight
            self.hits.append(MentionHit(kind, mention, path, index, weight))


class MentionIndex:
    """Look-up tables of one snapshot for resolving mentions; build once, resolve many issues.

    Building is linear in files plus chunks; :meth:`resolve` costs dictionary look-ups per mention plus a scan
    of the chunks of the files a frame or path lands in.

    :param files: the snapshot's repo-relative POSIX paths (files without chunks are allowed; chunk paths
        missing from ``files`` are added).
    :param chunks: the snapshot's chunks (:class:`~swe_explore.chunking.types.Chunk`); chunk indices in
        results refer to this sequence.
    """

    def __init__(self, files: Iterable[str], chunks: Sequence[Chunk]) -> None:
        self.chunk_paths: list[str] = [c.path for c in chunks]
        self._chunks = chunks
        self._by_file: dict[str, list[int]] = {}
        for index, path in enumerate(self.chunk_paths):
            self._by_file.setdefault(path, []).append(index)
        all_files = dict.fromkeys(files)
        all_files.update(dict.fromkeys(self._by_file))
        self.files: tuple[str, ...] = tuple(all_files)
        self._file_set = frozenset(self.files)
        self._by_name: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        self._by_module: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        for path in self.files:
            parts = tuple(path.split("/"))
            self._by_name.setdefault(parts[-1], []).append((path, parts))
            stem = parts[-1].rsplit(".", 1)[0] if "." in parts[-1][1:] else ""
            if not stem:
                continue
            module = (*parts[:-1], stem) if stem not in _MODULE_FILES else parts[:-1]
            if module:
                self._by_module.setdefault(module[-1], []).append((path, module))
        # definition chunks by the last component (and by the last two) of each of their symbols
        self._by_last: dict[str, list[int]] = {}
        self._by_last2: dict[tuple[str, str], list[int]] = {}
        for index, chunk in enumerate(chunks):
            if chunk.symbol and chunk.kind in DEFINITION_KINDS:
                for parts in _symbol_parts(chunk.symbol):
                    self._by_last.setdefault(parts[-1], []).append(index)
                    if len(parts) >= 2:
                        self._by_last2.setdefault((parts[-2], parts[-1]), []).append(index)

    # -- primitive look-ups ---------------------------------------------------------------------------------

    def match_path(self, path: str) -> list[str]:
        """The snapshot files a path as written names, by longest path suffix (module docstring).

        :param path: a path as written (absolute, relative, Windows, ``file://``); a ``:line`` suffix is not
            stripped here.
        :return: the matching repo-relative paths (sorted); empty when none is valid.
        """
        norm = _normalize_path(path)
        absolute = norm.startswith(("/", "~")) or bool(re.match(r"^[A-Za-z]:/", norm))
        parts = [p for p in norm.split("/") if p and p != "."]
        if ".." in parts:
            parts = parts[len(parts) - parts[::-1].index("..") :]
            absolute = True  # the part before is unknown
        if not parts:
            return []
        if not absolute and "/".join(parts) in self._file_set:
            return ["/".join(parts)]
        best, matches = 0, []
        for candidate, candidate_parts in self._by_name.get(parts[-1], []):
            k = _common_suffix(candidate_parts, parts)
            if k == len(candidate_parts) or (k == len(parts) and not absolute) or k >= 2:
                if k > best:
                    best, matches = k, [candidate]
                elif k == best:
                    matches.append(candidate)
        return sorted(matches)

    def match_module(self, parts: Sequence[str]) -> tuple[list[str], tuple[str, ...]]:
        """The files a dotted name's longest module prefix (at least two components) names, and the rest.

        :param parts: the name's components (``("xarray", "core", "dataset", "Dataset")``).
        :return: ``(files, remainder)``, e.g. ``(["xarray/core/dataset.py"], ("Dataset",))``; ``([], ())``
            when no prefix is a module.
        """
        for j in range(len(parts), 1, -1):
            prefix = tuple(parts[:j])
            found = [p for p, module in self._by_module.get(prefix[-1], []) if module[-j:] == prefix]
            if found:
                return sorted(found), tuple(parts[j:])
        return [], ()

    def chunks_at(self, path: str, line: int) -> list[int]:
        """Indices of the chunks of ``path`` containing ``line`` (1-based).

        :param path: repo-relative path.
        :param line: line number.
        :return: chunk indices, ascending.
        """
        chunks = self._chunks
        return [i for i in self._by_file.get(path, []) if chunks[i].start <= line <= chunks[i].end]

    def definitions(self, parts: Sequence[str], qualified: bool, path: str | None = None) -> list[int]:
        """Definition chunks whose symbol matches a name's components.

        :param parts: the name's components (see :func:`name_parts`).
        :param qualified: match the last two components (``Session.request``) instead of the last one only.
        :param path: only chunks of this file, when given.
        :return: chunk indices, ascending.
        """
        if not parts or (qualified and len(parts) < 2):
            return []
        found = self._by_last2.get((parts[-2], parts[-1]), []) if qualified else self._by_last.get(parts[-1], [])
        if path is not None:
            found = [i for i in found if self.chunk_paths[i] == path]
        return sorted(set(found))

    def _in_file_with_suffix(self, path: str, suffix: Sequence[str]) -> list[int]:
        """Definition chunks of ``path`` whose symbol ends with ``suffix`` (module-qualified names)."""
        n, wanted, chunks = len(suffix), tuple(suffix), self._chunks
        return [
            i
            for i in self._by_file.get(path, [])
            if chunks[i].symbol
            and chunks[i].kind in DEFINITION_KINDS
            and any(p[-n:] == wanted for p in _symbol_parts(chunks[i].symbol) if len(p) >= n)
        ]

    # -- resolution ----------------------------------------------------------------------------------------

    def resolve(self, mentions: IssueMentions, max_files: int = MAX_FILES) -> ResolvedMentions:
        """Resolve an issue's mentions against this snapshot.

        :param mentions: what :func:`extract_mentions` read.
        :param max_files: a mention landing in more files than this is dropped as too ambiguous.
        :return: the features per file and chunk, the hit list and counts.
        :raises ValueError: if ``max_files < 1``.
        """
        if max_files < 1:
            raise ValueError(f"max_files must be >= 1, got {max_files}")
        acc = _Accumulator()
        counts = dict.fromkeys(
            ("frames", "frames_resolved", "paths", "paths_resolved", "identifiers", "identifiers_resolved"), 0
        )
        counts["too_ambiguous"] = 0

        def spread(kind: str, label: str, by_file: Mapping[str, list[int]]) -> bool:
            if not by_file:
                return False
            if len(by_file) > max_files:
                counts["too_ambiguous"] += 1
                return False
            weight = 1.0 / len(by_file)
            for path, chunk_ids in by_file.items():
                acc.add(kind, label, path, chunk_ids, weight)
            return True

        def group(chunk_ids: Iterable[int]) -> dict[str, list[int]]:
            out: dict[str, list[int]] = {}
            for i in chunk_ids:
                out.setdefault(self.chunk_paths[i], []).append(i)
            return out

        for frame in mentions.frames:
            counts["frames"] += 1
            label = (
                f"{frame.path}:{frame.line} ({frame.function})" if frame.line else f"{frame.path} ({frame.function})"
            )
            parts = name_parts(frame.function) if frame.function else ()
            files = self.match_path(frame.path) if frame.path else []
            if files and spread("frame_file", label, {f: [] for f in files}):
                counts["frames_resolved"] += 1
                if frame.line is not None:
                    spread("frame_line", label, {f: c for f in files if (c := self.chunks_at(f, frame.line))})
                if parts:
                    spread("frame_function", label, {f: c for f in files if (c := self.definitions(parts, False, f))})
            elif len(parts) >= 2 and spread("frame_symbol", label, group(self.definitions(parts, True))):
                counts["frames_resolved"] += 1

        for mention in mentions.paths:
            counts["paths"] += 1
            label = f"{mention.text}:{mention.line}" if mention.line else mention.text
            files = self.match_path(mention.text)
            if files and spread("path_file", label, {f: [] for f in files}):
                counts["paths_resolved"] += 1
                if mention.line is not None:
                    spread("path_line", label, {f: c for f in files if (c := self.chunks_at(f, mention.line))})

        for mention in mentions.identifiers:
            counts["identifiers"] += 1
            parts = name_parts(mention.text)
            if not parts:
                continue
            resolved = False
            module_files, rest = self.match_module(parts) if len(parts) >= 2 else ([], ())
            if module_files:
                resolved = spread("module_file", mention.text, {f: [] for f in module_files})
                if rest:
                    found = {f: c for f in module_files if (c := self._in_file_with_suffix(f, rest))}
                    resolved = spread("identifier_qualified", mention.text, found) or resolved
                    if found:
                        counts["identifiers_resolved"] += 1
                        continue
                elif resolved:
                    counts["identifiers_resolved"] += 1
                    continue
            qualified = group(self.definitions(parts, True))
            if qualified:
                resolved = spread("identifier_qualified", mention.text, qualified) or resolved
            else:
                resolved = spread("identifier_bare", mention.text, group(self.definitions(parts, False))) or resolved
            counts["identifiers_resolved"] += int(resolved)

        return ResolvedMentions(
            file_hits=MappingProxyType({p: MappingProxyType(v) for p, v in acc.files.items()}),
            chunk_hits=MappingProxyType({i: MappingProxyType(v) for i, v in acc.chunks.items()}),
            hits=tuple(acc.hits),
            counts=MappingProxyType(counts),
            chunk_paths=self.chunk_paths,
        )


def resolve_mentions(
    mentions: IssueMentions, files: Iterable[str], chunks: Sequence[Chunk], max_files: int = MAX_FILES
) -> ResolvedMentions:
    """Resolve an issue's mentions against a snapshot (builds a :class:`MentionIndex`; build that once
    instead when resolving several issues on one snapshot).

    :param mentions: what :func:`extract_mentions` read.
    :param files: the snapshot's repo-relative POSIX paths.
    :param chunks: the snapshot's chunks; chunk indices in the result refer to this sequence.
    :param max_files: a mention landing in more files than this is dropped as too ambiguous.
    :return: the features per file and chunk, the hit list and counts.
    :raises ValueError: if ``max_files < 1``.
    """
    return MentionIndex(files, chunks).resolve(mentions, max_files)
