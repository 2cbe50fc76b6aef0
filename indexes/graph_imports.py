"""The ``imports`` edges of the symbol graph: which snapshot files each file imports or includes, in ten languages.

One regex per language over the file's text (only the lines holding the statement's keyword are tried), resolved
against the snapshot's paths; an import of something outside the snapshot, such as the standard library, yields
no edge. :func:`swe_explore.indexes.graph_build.build_graph` turns the result into file -> file edges.

======================  ====================================================================================
Python                  ``import a.b`` / ``from a.b import c`` (``c`` too when it is a module) / ``from ..x
                        import y``: relative imports against the importer's package; absolute ones by the
                        longest dotted-path match ``<prefix>/a/b.py`` or ``<prefix>/a/b/__init__.py`` whose
                        prefix is the snapshot root or a directory holding no Python file itself (``src/``),
                        or the importer's own directory when it has no ``__init__.py`` (scripts, tests).
                        So ``import logging`` does not link to ``pylint/checkers/logging.py``.
Go                      ``import "m/x/y"`` (single or grouped): the non-test ``.go`` files of directory
                        ``<dir of go.mod>/x/y`` for the longest module path ``m`` of a ``go.mod`` in the
                        snapshot; without a matching ``go.mod``, the directory whose path is the longest
                        suffix of the import path (standard-library paths, whose first component has no dot,
                        only when a whole-path match exists).
JavaScript/TypeScript   relative specifiers of ``import ... from './x'``, ``export ... from``, ``import('./x')``,
                        ``require('./x')``: the file itself, with one of the script extensions, or its
                        ``index`` file (``./x.js`` also finds ``x.ts``).
Rust                    ``use crate::a::b::C`` (and ``self::``/``super::``, brace groups expanded): the longest
                        prefix that is a module file ``a/b.rs`` or ``a/b/mod.rs`` under the crate root (the
                        nearest directory above with ``lib.rs`` or ``main.rs``); ``mod x;`` -> ``x.rs`` or
                        ``x/mod.rs`` in the module's directory.
Java                    ``import a.b.C;`` -> a file ending in ``a/b/C.java``; ``import a.b.*;`` -> the
                        ``.java`` files of a directory ending in ``a/b``; ``import static a.b.C.m;`` ->
                        ``a/b/C.java``.
PHP                     ``use A\\B\\C;`` (groups ``use A\\{B, C}`` too) -> the file whose path ends with the
                        longest suffix of ``A/B/C.php``; ``require``/``include`` (``_once``) of a ``.php``
                        string literal (``__DIR__ . '/x.php'`` too) relative to the importer, else by suffix.
Ruby                    ``require_relative 'x'`` -> ``x.rb`` beside the importer; ``require 'a/b'`` -> a file
                        ``<prefix>/a/b.rb`` whose prefix is the root or ends in ``lib``, ``test`` or ``spec``.
C/C++                   ``#include "x.h"`` -> relative to the importer, else the file whose path ends with
                        ``x.h``; ``#include <a/x.h>`` (with a directory) by suffix only.
======================  ====================================================================================

When a suffix match finds several files, those sharing the longest directory prefix with the importer are
kept (all of them on a tie).
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterator, Sequence

from swe_explore.chunking.types import SourceFile

__all__ = ["ImportResolver", "ImportSpecs", "extract_imports", "import_targets", "specs_fit"]

_PY_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)", re.MULTILINE)
_PY_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w. \t,]+)", re.MULTILINE)
_GO_IMPORT_BLOCK = re.compile(r"^import[ \t]*\(([^)]*)\)", re.MULTILINE)
_GO_IMPORT_ONE = re.compile(r"^import[ \t]+(?:[\w.]+[ \t]+)?\"([^\"]+)\"", re.MULTILINE)
_GO_QUOTED = re.compile(r"\"([^\"]+)\"")
_GO_MODULE = re.compile(r"^module[ \t]+(\S+)", re.MULTILINE)
_JS_SPEC = re.compile(
    r"""(?:\bfrom[ \t]*|\bimport[ \t]*\(?[ \t]*|\brequire[ \t]*\([ \t]*|^[ \t]*import[ \t]+)"""
    r"""(['"])(\.{1,2}/[^'"\n]*)\1""",
    re.MULTILINE,
)
_JS_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_RUST_USE = re.compile(r"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?use[ \t]+([^;]+);", re.MULTILINE)
_RUST_MOD = re.compile(r"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?mod[ \t]+(\w+)[ \t]*;", re.MULTILINE)
_JAVA_IMPORT = re.compile(r"^[ \t]*import[ \t]+(static[ \t]+)?([\w.]+(?:\.\*)?)[ \t]*;", re.MULTILINE)
_PHP_USE = re.compile(r"^[ \t]*use[ \t]+(?:function[ \t]+|const[ \t]+)?([^;]+);", re.MULTILINE)
_PHP_REQUIRE = re.compile(
    r"\b(?:require|include)(?:_once)?[ \t]*\(?[ \t]*(__DIR__[ \t]*\.[ \t]*)?['\"]([^'\"\n]+\.php)['\"]"
)
_RUBY_REQUIRE = re.compile(r"^[ \t]*(require|require_relative)[ \t(]+['\"]([^'\"\n]+)['\"]", re.MULTILINE)
_C_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*([\"<])([^\">\n]+)[\">]", re.MULTILINE)
_RUBY_LOAD_DIRS = frozenset({"lib", "test", "spec"})


def _line_matches(text: str, keywords: Sequence[str], *patterns: re.Pattern[str]) -> Iterator[re.Match[str]]:
    """Matches of line-anchored ``patterns`` (``^`` with ``re.MULTILINE``) at the start of every line that holds
    one of ``keywords``, in line order.

    Equivalent to ``finditer`` for statements that start their line and contain a keyword, but only the few
    lines holding a keyword are tried: ``str.find`` skips the rest (a ``^``-anchored ``finditer`` tries every
    position, several times slower over a whole snapshot).
    """
    starts: set[int] = set()
    for keyword in keywords:
        pos = text.find(keyword)
        while pos >= 0:
            starts.add(text.rfind("\n", 0, pos) + 1)
            pos = text.find(keyword, pos + len(keyword))
    for start in sorted(starts):
        for pattern in patterns:
            match = pattern.match(text, start)
            if match:
                yield match


def _split_top(text: str) -> list[str]:
    """``text`` split at commas outside braces."""
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:k])
            start = k + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _expand_braces(path: str) -> list[str]:
    """``a::{b, c::{d, e}}`` -> ``[a::b, a::c::d, a::c::e]`` (``as`` aliases and blanks dropped), for Rust and PHP
    group imports."""
    path = re.sub(r"\s+as\s+\w+", "", path).replace(" ", "").replace("\n", "").replace("\t", "")
    brace = path.find("{")
    if brace < 0:
        return [path] if path else []
    prefix, inner = path[:brace], path[brace + 1 : path.rfind("}")]
    out: list[str] = []
    for item in _split_top(inner):
        out.extend(prefix + expanded for expanded in _expand_braces(item))
    return out


#: A file's import statements as read from its text alone (:func:`extract_imports`): one tuple of strings per
#: imported name, whose layout depends on the language (``("import", "a.b")`` and ``("from", dots, module,
#: *names)`` for Python, ``(spec,)`` for Go and JavaScript/TypeScript, ``("use" | "mod", item)`` for Rust,
#: ``(static, dotted)`` for Java, ``("use", item)`` and ``("require", __DIR__ prefix, literal)`` for PHP, ``(kind,
#: spec)`` for Ruby, ``(quote, spec)`` for C/C++). Resolving them against a snapshot's paths is
#: :meth:`ImportResolver.resolve`; the split lets :mod:`indexes.reuse` keep the text-reading half per file content.
ImportSpecs = tuple[tuple[str, ...], ...]


def _python_specs(text: str) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for match in _line_matches(text, ("import",), _PY_IMPORT):
        for item in match.group(1).split(","):
            words = item.split()
            if words:
                out.append(("import", words[0]))
    for match in _line_matches(text, ("import",), _PY_FROM):
        dots, module, names_text = match.group(1), match.group(2), match.group(3)
        names = [n.split()[0] for n in names_text.strip("()").replace("\\", " ").split(",") if n.split()]
        out.append(("from", dots, module, *(n for n in names if n.isidentifier())))
    return out


def _go_specs(text: str) -> list[tuple[str, ...]]:
    specs = [m.group(1) for m in _line_matches(text, ("import",), _GO_IMPORT_ONE)]
    for block in _line_matches(text, ("import",), _GO_IMPORT_BLOCK):
        specs += _GO_QUOTED.findall(block.group(1))
    return [(spec,) for spec in specs]


def _matches_on_lines_holding(text: str, needle: str, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
    """The matches of ``pattern`` over ``text``, in order, for a pattern whose matches never span a line (no part
    of it takes a newline) and always hold ``needle``: only the lines holding ``needle`` are searched, each on its
    own, which gives the same matches as one search over the whole text without running the pattern over every
    position of a minified bundle."""
    end = -1
    pos = text.find(needle)
    while pos >= 0:
        if pos > end:  # a line not searched yet
            start = text.rfind("\n", 0, pos) + 1
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
            yield from pattern.finditer(text, start, end)
        pos = text.find(needle, pos + len(needle))


def _script_specs(text: str) -> list[tuple[str, ...]]:
    # every relative specifier starts with ./ or ../
    return [(match.group(2),) for match in _matches_on_lines_holding(text, "./", _JS_SPEC)]


def _rust_specs(text: str) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = [
        ("use", item) for m in _line_matches(text, ("use",), _RUST_USE) for item in _expand_braces(m.group(1))
    ]
    return out + [("mod", m.group(1)) for m in _line_matches(text, ("mod",), _RUST_MOD)]


def _java_specs(text: str) -> list[tuple[str, ...]]:
    return [(m.group(1) or "", m.group(2)) for m in _line_matches(text, ("import",), _JAVA_IMPORT)]


def _php_specs(text: str) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = [
        ("use", item) for m in _line_matches(text, ("use",), _PHP_USE) for item in _expand_braces(m.group(1))
    ]
    required = _matches_on_lines_holding(text, ".php", _PHP_REQUIRE)  # every literal ends in .php
    return out + [("require", m.group(1) or "", m.group(2)) for m in required]


def _ruby_specs(text: str) -> list[tuple[str, ...]]:
    return [(m.group(1), m.group(2)) for m in _line_matches(text, ("require",), _RUBY_REQUIRE)]


def _c_specs(text: str) -> list[tuple[str, ...]]:
    return [(m.group(1), m.group(2).strip()) for m in _line_matches(text, ("include",), _C_INCLUDE)]


_SPEC_READERS = {
    "python": _python_specs,
    "go": _go_specs,
    "script": _script_specs,
    "rust": _rust_specs,
    "java": _java_specs,
    "php": _php_specs,
    "ruby": _ruby_specs,
    "c": _c_specs,
}


#: Per resolver kind, the first field and the field count an import spec may have (``None``: any first field;
#: a count ``-3``: three or more), as :func:`extract_imports` makes them.
_SPEC_SHAPES: dict[str, tuple[tuple[str | None, int], ...]] = {
    "python": (("import", 2), ("from", -3)),
    "go": ((None, 1),),
    "script": ((None, 1),),
    "rust": (("use", 2), ("mod", 2)),
    "java": ((None, 2),),
    "php": (("use", 2), ("require", 3)),
    "ruby": ((None, 2),),
    "c": ((None, 2),),
}


def specs_fit(language: str, specs: ImportSpecs) -> bool:
    """Whether ``specs`` have the shape :func:`extract_imports` gives a file of ``language`` (a cached piece is
    checked with it before :meth:`ImportResolver.resolve` reads it).

    :param language: the file's language.
    :param specs: import specs, e.g. decoded from the cache.
    :return: every spec has a first field and field count of the language's kind; a language without imports
        has none.
    """
    kind = _IMPORT_LANGUAGES.get(language)
    if kind is None:
        return not specs
    shapes = _SPEC_SHAPES[kind]
    return all(any(_fits(spec, first, n) for first, n in shapes) for spec in specs)


def _fits(spec: tuple[str, ...], first: str | None, n: int) -> bool:
    """One spec against one shape of :data:`_SPEC_SHAPES`."""
    if not spec or (first is not None and spec[0] != first):
        return False
    return len(spec) >= -n if n < 0 else len(spec) == n


def extract_imports(source: SourceFile) -> ImportSpecs:
    """The import statements of one file (:data:`ImportSpecs`), from its language and text only.

    :param source: the walked file.
    :return: its import specs; empty for a language without imports here (``text``, Markdown, ...).
    """
    kind = _IMPORT_LANGUAGES.get(source.language)
    if kind is None:
        return ()
    return tuple(_SPEC_READERS[kind](source.text))


class ImportResolver:
    """Resolves the import statements of a snapshot's files to snapshot paths (see the module docstring).

    :param files: the snapshot's walked files; the paths of all of them are the possible targets, and the text of
        its ``go.mod`` files gives the Go module paths.
    """

    def __init__(self, files: Sequence[SourceFile]) -> None:
        self.paths = sorted({f.path for f in files})
        self.path_set = set(self.paths)
        self.dir_files: dict[str, list[str]] = {}
        self.py_dirs: set[str] = set()
        self.py_modules: dict[str, list[str]] = {}  # dotted module suffix -> files
        self.go_dirs: set[str] = set()
        for path in self.paths:
            directory = posixpath.dirname(path)
            self.dir_files.setdefault(directory, []).append(path)
            if path.endswith((".py", ".pyi")):
                self.py_dirs.add(directory)
                module = path.rsplit(".", 1)[0].split("/")
                if module[-1] == "__init__":
                    module = module[:-1]
                for k in range(1, len(module) + 1):
                    self.py_modules.setdefault(".".join(module[-k:]), []).append(path)
            elif path.endswith(".go") and not path.endswith("_test.go"):
                self.go_dirs.add(directory)
        self.go_modules: list[tuple[str, str]] = []  # (module path, its directory), longest module first
        for f in files:
            if posixpath.basename(f.path) == "go.mod":
                match = _GO_MODULE.search(f.text)
                if match:
                    self.go_modules.append((match.group(1), posixpath.dirname(f.path)))
        self.go_modules.sort(key=lambda m: (-len(m[0]), m[0], m[1]))
        self.rust_roots = {posixpath.dirname(p) for p in self.paths if posixpath.basename(p) in ("lib.rs", "main.rs")}
        self._absolute_memo: dict[tuple[str, str], list[str]] = {}

    @functools.cached_property
    def by_suffix(self) -> dict[str, list[str]]:
        """Path suffix (``a/b.h``: the last one or more components) -> files ending with it, sorted."""
        out: dict[str, list[str]] = {}
        for path in self.paths:
            parts = path.split("/")
            for k in range(1, len(parts) + 1):
                out.setdefault("/".join(parts[-k:]), []).append(path)
        return out

    @functools.cached_property
    def dirs_by_suffix(self) -> dict[str, list[str]]:
        """Directory path suffix -> directories holding non-test ``.go`` files that end with it (``""``: all)."""
        out: dict[str, list[str]] = {}
        for directory in sorted(self.go_dirs):
            parts = directory.split("/") if directory else []
            for k in range(len(parts) + 1):
                out.setdefault("/".join(parts[len(parts) - k :]), []).append(directory)
        return out

    # -- shared helpers --

    @staticmethod
    def _closest(candidates: Sequence[str], importer: str, directories: bool = False) -> list[str]:
        """The candidate files (or ``directories``) sharing the longest directory prefix with the importer (all
        of them on a tie), sorted."""
        if len(candidates) <= 1:
            return list(candidates)
        base = posixpath.dirname(importer).split("/")

        def shared(path: str) -> int:
            parts = (path if directories else posixpath.dirname(path)).split("/")
            n = 0
            while n < len(parts) and n < len(base) and parts[n] == base[n]:
                n += 1
            return n

        best = max(shared(c) for c in candidates)
        return sorted(c for c in candidates if shared(c) == best)

    def _suffix(self, suffix: str, importer: str) -> list[str]:
        return self._closest(self.by_suffix.get(suffix, []), importer)

    def _longest_suffix(self, parts: Sequence[str], ext: str, importer: str) -> list[str]:
        """Files whose path ends with the longest suffix ``parts[-k:] + ext`` that exists."""
        for k in range(len(parts), 0, -1):
            found = self.by_suffix.get("/".join(parts[-k:]) + ext)
            if found:
                return self._closest(found, importer)
        return []

    # -- per language --

    def targets(self, source: SourceFile) -> set[str]:
        """The snapshot paths one file imports (see the module docstring for the rules per language)."""
        return self.resolve(source.path, source.language, extract_imports(source))

    def resolve(self, path: str, language: str, specs: ImportSpecs) -> set[str]:
        """The snapshot paths a file's import statements name.

        :param path: the importing file's snapshot path.
        :param language: its language.
        :param specs: its :func:`extract_imports` (read from its text alone, so cacheable per file content).
        :return: the imported snapshot paths (the file itself may be among them).
        """
        if not specs or language not in _IMPORT_LANGUAGES:
            return set()
        method = getattr(self, f"_{_IMPORT_LANGUAGES[language]}")
        return set(method(path, specs))

    def _python_relative(self, parts: Sequence[str]) -> list[str]:
        """The module file of a path relative to the snapshot root (``a/b.py``, ``a/b/__init__.py``, ``.pyi``)."""
        stem = "/".join(parts)
        for candidate in (stem + ".py", stem + "/__init__.py", stem + ".pyi", stem + "/__init__.pyi"):
            if candidate.lstrip("/") in self.path_set:
                return [candidate.lstrip("/")]
        return []

    def _python_absolute(self, dotted: str, importer: str) -> list[str]:
        """The files of an absolute module name whose prefix directory can be on ``sys.path`` (module docstring).

        The answer depends on the importer's directory only, so it is kept per (module, directory): a snapshot's
        files import the same modules again and again (astropy: 13,327 lookups, 0.12 s -> 0.03 s).
        """
        importer_dir = posixpath.dirname(importer)
        key = (dotted, importer_dir)
        found = self._absolute_memo.get(key)
        if found is None:
            found = self._absolute_memo[key] = self._python_absolute_uncached(dotted, importer_dir)
        return found

    def _python_absolute_uncached(self, dotted: str, importer_dir: str) -> list[str]:
        out = []
        n_parts = dotted.count(".") + 1
        for path in self.py_modules.get(dotted, []):
            parts = path.split("/")
            n_prefix = len(parts) - n_parts - (1 if parts[-1].startswith("__init__.") else 0)
            prefix = "/".join(parts[:n_prefix])
            if (
                prefix == ""
                or not any("/".join(parts[:k]) in self.py_dirs for k in range(1, n_prefix + 1))
                or (prefix == importer_dir and importer_dir + "/__init__.py" not in self.path_set)
            ):
                out.append(path)
        return self._closest(out, posixpath.join(importer_dir, "_"))  # _closest reads the importer's directory only

    def _python(self, path: str, specs: ImportSpecs) -> list[str]:
        out: list[str] = []
        package = posixpath.dirname(path).split("/") if posixpath.dirname(path) else []
        for spec in specs:
            if spec[0] == "import":
                out += self._python_absolute(spec[1], path)
                continue
            dots, module, names = spec[1], spec[2], spec[3:]
            if dots:
                up = len(dots) - 1
                if up > len(package):
                    continue
                base = package[: len(package) - up] + (module.split(".") if module else [])
                if base:
                    out += self._python_relative(base)
                for name in names:
                    out += self._python_relative([*base, name])
            elif module:
                out += self._python_absolute(module, path)
                for name in names:
                    out += self._python_absolute(f"{module}.{name}", path)
        return out

    def _go(self, path: str, specs: ImportSpecs) -> list[str]:
        out: list[str] = []
        for (spec,) in specs:
            directories = self._go_dirs(spec, path)
            for directory in directories:
                out += [
                    p for p in self.dir_files.get(directory, []) if p.endswith(".go") and not p.endswith("_test.go")
                ]
        return out

    def _go_dirs(self, spec: str, importer: str) -> list[str]:
        for module, module_dir in self.go_modules:
            if spec == module or spec.startswith(module + "/"):
                rest = spec[len(module) + 1 :]
                directory = posixpath.join(module_dir, rest) if rest else module_dir
                return [directory] if directory in self.dir_files else []
        parts = spec.split("/")
        if self.go_modules and "." in parts[0]:
            return []  # another module's package
        if "." not in parts[0]:  # standard library or a dot-less module: whole-path matches only
            for candidate in (spec, "/".join(parts[1:])):
                if (
                    candidate
                    and candidate in self.dir_files
                    and any(p.endswith(".go") for p in self.dir_files[candidate])
                ):
                    return [candidate]
            return []
        for k in range(len(parts), 0, -1):
            found = self.dirs_by_suffix.get("/".join(parts[-k:]))
            if found:
                return self._closest(found, importer, directories=True)
        return []

    def _script(self, path: str, specs: ImportSpecs) -> list[str]:
        out: list[str] = []
        base = posixpath.dirname(path)
        for (spec,) in specs:
            target = posixpath.normpath(posixpath.join(base, spec))
            if target.startswith(".."):
                continue
            stem = target.rsplit(".", 1)[0] if posixpath.splitext(target)[1] in _JS_EXTENSIONS else target
            candidates = (
                [target] + [stem + ext for ext in _JS_EXTENSIONS] + [f"{target}/index{ext}" for ext in _JS_EXTENSIONS]
            )
            for candidate in candidates:
                if candidate in self.path_set:
                    out.append(candidate)
                    break
        return out

    def _rust_module_dir(self, path: str) -> str:
        directory, name = posixpath.dirname(path), posixpath.basename(path)
        if name in ("lib.rs", "main.rs", "mod.rs"):
            return directory
        return posixpath.join(directory, name[:-3])

    def _rust_file(self, directory: str, parts: Sequence[str]) -> str | None:
        """The module file of the longest prefix of ``parts`` under ``directory``."""
        for k in range(len(parts), 0, -1):
            stem = posixpath.join(directory, *parts[:k]) if directory else "/".join(parts[:k])
            for candidate in (stem + ".rs", stem + "/mod.rs"):
                if candidate in self.path_set:
                    return candidate
        return None

    def _rust(self, path: str, specs: ImportSpecs) -> list[str]:
        out: list[str] = []
        module_dir = self._rust_module_dir(path)
        root = None
        directory = posixpath.dirname(path)
        while True:
            if directory in self.rust_roots:
                root = directory
                break
            if not directory:
                break
            directory = posixpath.dirname(directory)
        for kind, item in specs:
            if kind == "mod":
                found = self._rust_file(module_dir, [item])
                if found:
                    out.append(found)
                continue
            parts = [p for p in item.split("::") if p and p != "*"]
            if not parts:
                continue
            if parts[0] == "crate":
                base, parts = root, parts[1:]
            elif parts[0] == "self":
                base, parts = module_dir, parts[1:]
            elif parts[0] == "super":
                base = module_dir
                while parts and parts[0] == "super":
                    base, parts = posixpath.dirname(base), parts[1:]
            else:
                base = root
            if base is None or not parts:
                continue
            found = self._rust_file(base, parts)
            if found:
                out.append(found)
        return out

    def _java(self, path: str, specs: ImportSpecs) -> list[str]:
        out: list[str] = []
        for static, dotted in specs:
            parts = dotted.split(".")
            if parts[-1] == "*":
                for directory in self._suffix_dirs(parts[:-1], path):
                    out += [p for p in self.dir_files[directory] if p.endswith(".java")]
                continue
            if static:  # import static a.b.C.m -> a/b/C.java
                parts = parts[:-1]
            if parts:
                out += self._suffix("/".join(parts) + ".java", path)
        return out

    def _suffix_dirs(self, parts: Sequence[str], importer: str) -> list[str]:
        suffix = "/".join(parts)
        found = sorted(d for d in self.dir_files if d == suffix or d.endswith("/" + suffix))
        return self._closest(found, importer, directories=True)

    def _php(self, path: str, specs: ImportSpecs) -> list[str]:
        out: list[str] = []
        base = posixpath.dirname(path)
        for spec in specs:
            if spec[0] == "use":
                parts = [p for p in spec[1].strip("\\").split("\\") if p]
                if parts:
                    out += self._longest_suffix(parts, ".php", path)
                continue
            relative_to_dir, literal = spec[1], spec[2]
            target = posixpath.normpath(posixpath.join(base, literal.lstrip("/")))
            if target in self.path_set:
                out.append(target)
            elif not relative_to_dir:
                parts = [p for p in literal.split("/") if p not in ("", ".", "..")]
                out += self._longest_suffix(parts[:-1] + [parts[-1][:-4]], ".php", path) if parts else []
        return out

    def _ruby(self, path: str, specs: ImportSpecs) -> list[str]:
        out: list[str] = []
        base = posixpath.dirname(path)
        for kind, spec in specs:
            spec = spec if spec.endswith(".rb") else spec + ".rb"
            if kind == "require_relative":
                target = posixpath.normpath(posixpath.join(base, spec))
                if target in self.path_set:
                    out.append(target)
                continue
            candidates = []
            for candidate in self.by_suffix.get(spec, []):
                prefix = candidate[: len(candidate) - len(spec)].rstrip("/")
                if prefix == "" or posixpath.basename(prefix) in _RUBY_LOAD_DIRS:
                    candidates.append(candidate)
            out += self._closest(candidates, path)
        return out

    def _c(self, path: str, specs: ImportSpecs) -> list[str]:
        out: list[str] = []
        base = posixpath.dirname(path)
        for quote, spec in specs:
            if quote == '"':
                target = posixpath.normpath(posixpath.join(base, spec))
                if target in self.path_set:
                    out.append(target)
                    continue
            elif "/" not in spec:
                continue
            parts = [p for p in spec.split("/") if p not in ("", ".", "..")]
            if parts:
                out += self._suffix("/".join(parts), path)
        return out


_IMPORT_LANGUAGES: dict[str, str] = {
    "python": "python",
    "go": "go",
    "javascript": "script",
    "typescript": "script",
    "tsx": "script",
    "rust": "rust",
    "java": "java",
    "php": "php",
    "ruby": "ruby",
    "c": "c",
    "cpp": "c",
}
"""Language name -> the resolver method (``_python``, ...) that reads its imports."""


def import_targets(files: Sequence[SourceFile]) -> dict[str, list[str]]:
    """The import edges of :func:`~swe_explore.indexes.graph_build.build_graph` as paths, for inspection and tests.

    :param files: the snapshot's walked files.
    :return: importing path -> sorted imported paths (files importing nothing inside the snapshot left out).
    """
    resolver = ImportResolver(files)
    out = {}
    for f in files:
        targets = sorted(t for t in resolver.targets(f) if t != f.path)
        if targets:
            out[f.path] = targets
    return out
