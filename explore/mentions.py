"""Reading the issue: the stack frames, identifiers, file paths and error messages an issue text names, as the
types the rest of explore consumes (:class:`IssueMentions` and its items). Stack frames are read by
:mod:`~swe_explore.explore.trace_frames`; where the mentions land in a snapshot (files and chunks, as ranker
features) is :mod:`~swe_explore.explore.mention_resolution`.

**Extraction** (:func:`extract_mentions`) reads a raw ``problem_statement`` (CRLF, markdown, code fences, HTML
comments) line by line:

1. *Lines*: ``\\r\\n``/``\\r`` become ``\\n``; HTML comments (issue-template hints) are dropped; HTML entities are
   unescaped; markdown quote markers (``> ``) are stripped. Fenced blocks (three or more backticks or tildes;
   an unclosed fence runs to the end, as GitHub renders it) are *code*; in other lines, inline backtick spans
   are *backtick* and the rest *prose*. Lines of a stack trace (see :data:`SOURCES`) are *trace*.
2. *Frames* ``(path, line, function)`` in the trace formats of the ten languages
   (:data:`~swe_explore.explore.trace_frames.FRAME_FORMATS`, read by :mod:`~swe_explore.explore.trace_frames`):
   Python tracebacks (also IPython and pytest), Go panics (a ``pkg.func(...)`` line followed by its
   ``\\t/path/x.go:12 +0x1d`` line), Rust panics and backtraces (``  3: crate::m::f`` followed by
   ``at src/x.rs:12:5``; a header with no location line is a frame with ``path=""``), Java stack lines (the
   path is the package path plus the file name: ``at org.pkg.C.m(C.java:12)`` -> ``org/pkg/C.java``),
   JavaScript/TypeScript stack lines (V8 and Firefox), PHP errors and ``#0 X.php(12): f()`` frames, Ruby
   backtraces, C/C++ sanitizer, valgrind and gdb frames, and compiler/linter diagnostics
   (``src/x.c:12:5: error: ...``, ``x.go:12:``, ``x.cpp(12): error``, Rust ``--> src/x.rs:12:5``). Paths are
   normalised (``\\`` -> ``/``, ``file://``/``webpack://`` schemes and a leading ``./`` dropped) but otherwise
   kept as written, absolute prefixes included;
   :class:`~swe_explore.explore.mention_resolution.MentionIndex` matches them to the snapshot.
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

Extraction is regular-expression work, about linear in the text (no pattern backtracks over a whole line;
about 0.75 ms per 1,000 characters).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from swe_explore.chunking.languages import language_for_path
from swe_explore.explore.trace_frames import RUST_PANIC, Frame, normalize_path, read_frames, trace_lines

__all__ = [
    "SOURCES",
    "STOP_WORDS",
    "ErrorMention",
    "IssueMentions",
    "Mention",
    "extract_mentions",
    "name_parts",
]

SOURCES: tuple[str, ...] = ("trace", "backtick", "code_block", "prose")
"""Where a mention comes from, in this order of precedence: ``trace`` (a line of a stack trace: a frame line,
a line between frame lines at most four lines apart, or one of the few lines around a trace block, such as
its exception line: :func:`~swe_explore.explore.trace_frames.trace_lines`), ``backtick`` (an inline code
span), ``code_block`` (a fenced block) and ``prose`` (everything else)."""

MIN_IDENTIFIER_CHARS = 3
"""Identifiers whose last component is shorter than this many characters are dropped (``xr``, ``T``)."""

MAX_MESSAGE_CHARS = 200
"""Error messages are cut at this many characters."""

_T = TypeVar("_T")

# -- the issue's mentions ----------------------------------------------------------------------------------


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
    match = RUST_PANIC.search(line)
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
    found, frame_lines = read_frames(lines, is_fence)
    context = trace_lines(len(lines), frame_lines, is_fence)
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
        if i in frame_lines:
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
        path = normalize_path(match.group(1))
        number = int(match.group(2)) if match.group(2) else None
        paths.add((path, number), source)
    segment = _URL.sub(" ", segment)
    if source == "prose":
        segment = _EMPHASIS.sub(lambda m: f" {m.group(2)} " if " " in m.group(2) else m.group(0), segment)
    masked = list(segment)
    for match in _PATH.finditer(segment):
        if not _is_known_file(match["path"], match["ext"]):
            continue
        path = normalize_path(match["path"])
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


# -- qualified names ---------------------------------------------------------------------------------------

_BRACKETS = re.compile(r"<[^<>]*>|\[[^\[\]]*\]|\{[^{}]*\}")
_GO_RECEIVER = re.compile(r"(?<=\.)\(\*?(\w+)\)")


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
