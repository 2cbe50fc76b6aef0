"""The one table of languages: file extensions, tree-sitter grammars and the node types the chunkers use.

Every language is a :class:`LanguageSpec` entry of :data:`LANGUAGES`; the chunkers in
:mod:`chunking.treesitter` read only this table, so adding a language means adding an entry, not code.
Grammars come from the official per-language wheels (``tree_sitter_python.language()``, ...), loaded lazily and
cached per grammar; parsers are ``tree_sitter.Parser(tree_sitter.Language(ptr))`` (py-tree-sitter 0.25/0.26 API).

Language by file name (see :func:`language_for_path`):

- exact file names first (``Makefile`` -> text, ``Rakefile`` -> ruby, ...), then the lower-cased extension;
- ``.ts/.mts/.cts`` -> ``typescript``, ``.tsx`` -> ``tsx``, ``.js/.jsx/.mjs/.cjs`` -> ``javascript``;
- ``.h`` -> ``c`` unless its text looks like C++ (:data:`CPP_HINT`: a line starting with ``class``,
  ``namespace`` or ``template``, an access specifier ``public:``, ``std::``, or a C++-only keyword such as
  ``constexpr``/``nullptr``), then ``cpp``; ``.cc/.cpp/.cxx/.hpp/.hh/.hxx`` -> ``cpp``;
- PHP files that contain an opening tag (``<?php`` or ``<?=``) are parsed with ``language_php`` (HTML outside
  the tags becomes ``text`` nodes); PHP files without any tag (snippets, some generated files) are parsed with
  ``language_php_only``, which would otherwise see them as plain HTML text.
- docs and config files (``.md``, ``.rst``, ``.toml``, ``setup.cfg``, ``pylintrc``, ...) -> ``text``
  (no grammar: chunked by line windows).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import PurePosixPath

from tree_sitter import Language, Parser

TEXT = "text"
"""Language name of docs/config files, which have no grammar."""

CPP_HINT = re.compile(
    r"^[ \t]*(?:class|namespace|template)\b|^[ \t]*(?:public|private|protected)[ \t]*:|\bstd::"
    r"|\b(?:constexpr|nullptr|noexcept|static_cast|dynamic_cast|reinterpret_cast)\b",
    re.MULTILINE,
)
"""Cheap test deciding that a ``.h`` header is C++ rather than C (searched in the whole header text)."""

_CPP_HINT_CHARS = 200_000
"""Only the first this many characters of a ``.h`` file are searched for :data:`CPP_HINT`."""

GrammarRef = tuple[str, str]
"""``(module, function)`` of an official grammar wheel, e.g. ``("tree_sitter_python", "language")``."""


@dataclass(frozen=True)
class LanguageSpec:
    """Everything the walker and the chunkers know about one language.

    :param name: language name written into :attr:`chunking.types.Chunk.language`.
    :param extensions: lower-case file extensions with the dot (``.py``).
    :param filenames: exact file names without extension that belong to the language (``Rakefile``).
    :param grammar: ``(module, function)`` returning the grammar pointer; ``None`` for ``text``.
    :param grammar_variants: ``(marker, grammar)`` pairs tried in order: the first marker found in the file's
        text selects that grammar instead of :attr:`grammar` (PHP with an opening tag).
    :param definitions: definition node type -> chunk kind (``function``, ``method``, ``class`` or
        ``definition``); a ``function`` found inside a container becomes a ``method``.
    :param containers: definition node types whose nested definitions are chunked separately (class bodies,
        impl blocks, namespaces, modules); the container keeps a ``header`` chunk.
    :param namespaces: the containers that group definitions without making their functions methods
        (namespaces, Rust ``mod``); a ``function`` directly inside one stays a ``function``.
    :param body_required: definition node types that count only when they have a ``body`` field
        (``struct foo;`` forward declarations and ``struct foo x`` type uses are not definitions).
    :param comments: comment node types; comments directly above a definition belong to it.
    :param attachments: decorator/attribute/annotation/template-prefix node types that precede a definition as
        siblings and belong to it (``@decorator``, ``#[derive]``, ``template <...>``).
    :param name_fields: fields searched, in order, for a definition's name. A field holding an ``*identifier``
        node or a leaf is the name; another composite node is searched again with the same fields (C
        declarator chains). A definition without any of these fields takes the name of its first named child
        (Go ``type_declaration`` -> ``type_spec``).
    :param parent_name_fields: fields of the parent searched when a definition has no name of its own
        (``const f = () => {}`` takes ``f`` from the ``variable_declarator``).
    :param header_blank_guard: C-family macro guard: a definition whose header (start to body) spans a blank
        line starts after that blank line (undeclared macros above a function are not part of it).
    :param doc_comments: line prefixes (after indentation) of doc comments (``/**``, ``///``). A doc comment
        separated from the definition below it by blank lines only still belongs to it; other comments must
        be directly above.
    :param receiver_field: field holding a method's receiver (Go ``func (c *Circle) Area()``); the first
        ``*type_identifier`` in it qualifies the symbol (``Circle.Area``).
    :param qualified_names: node types taken whole as a name although they have name fields (Ruby
        ``scope_resolution``: ``class A::B`` is named ``A.B``, not ``B``).
    :param scope_separators: separators inside qualified names that are written as ``.`` in symbols
        (C++/Rust/Ruby ``::``, PHP ``\\``), so that ``Circle::Scaled`` becomes ``Circle.Scaled``.
    """

    name: str
    extensions: tuple[str, ...]
    filenames: tuple[str, ...] = ()
    grammar: GrammarRef | None = None
    grammar_variants: tuple[tuple[str, GrammarRef], ...] = ()
    definitions: Mapping[str, str] = field(default_factory=dict)
    containers: frozenset[str] = frozenset()
    namespaces: frozenset[str] = frozenset()
    body_required: frozenset[str] = frozenset()
    comments: frozenset[str] = frozenset({"comment"})
    attachments: frozenset[str] = frozenset()
    name_fields: tuple[str, ...] = ("name",)
    parent_name_fields: tuple[str, ...] = ()
    header_blank_guard: bool = False
    doc_comments: tuple[str, ...] = ()
    receiver_field: str = ""
    qualified_names: frozenset[str] = frozenset()
    scope_separators: tuple[str, ...] = ()

    def grammar_for(self, text: str) -> GrammarRef | None:
        """The grammar to parse ``text`` with (a variant whose marker occurs, else :attr:`grammar`).

        :param text: the file's decoded text.
        :return: ``(module, function)`` or ``None`` when the language has no grammar.
        """
        for marker, grammar in self.grammar_variants:
            if marker in text:
                return grammar
        return self.grammar


_C_FAMILY_COMMENTS = frozenset({"comment"})
_SLASH_STAR_DOC = ("/**",)
"""Javadoc/JSDoc/PHPDoc/Doxygen block doc comments."""
_JS_DEFINITIONS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "function_expression": "function",
    "generator_function": "function",
    "arrow_function": "function",
    "method_definition": "function",
    "class_declaration": "class",
    "class": "class",
}
_TS_DEFINITIONS = {
    **_JS_DEFINITIONS,
    "abstract_class_declaration": "class",
    "interface_declaration": "class",
    "enum_declaration": "class",
    "type_alias_declaration": "definition",
    "internal_module": "class",
    "module": "class",
    "function_signature": "function",
    "method_signature": "function",
    "abstract_method_signature": "function",
}
_JS_PARENT_NAME_FIELDS = ("name", "left", "key", "property")

LANGUAGES: dict[str, LanguageSpec] = {
    spec.name: spec
    for spec in (
        LanguageSpec(
            name="python",
            extensions=(".py", ".pyi", ".pyw"),
            grammar=("tree_sitter_python", "language"),
            definitions={"function_definition": "function", "class_definition": "class"},
            containers=frozenset({"class_definition"}),
            attachments=frozenset({"decorator"}),
        ),
        LanguageSpec(
            name="go",
            extensions=(".go",),
            grammar=("tree_sitter_go", "language"),
            definitions={
                "function_declaration": "function",
                "method_declaration": "method",
                "type_declaration": "class",
            },
            receiver_field="receiver",
        ),
        LanguageSpec(
            name="javascript",
            extensions=(".js", ".jsx", ".mjs", ".cjs"),
            grammar=("tree_sitter_javascript", "language"),
            definitions=_JS_DEFINITIONS,
            containers=frozenset({"class_declaration", "class"}),
            attachments=frozenset({"decorator"}),
            parent_name_fields=_JS_PARENT_NAME_FIELDS,
            doc_comments=_SLASH_STAR_DOC,
        ),
        LanguageSpec(
            name="typescript",
            extensions=(".ts", ".mts", ".cts"),
            grammar=("tree_sitter_typescript", "language_typescript"),
            definitions=_TS_DEFINITIONS,
            containers=frozenset(
                {"class_declaration", "class", "abstract_class_declaration", "internal_module", "module"}
            ),
            namespaces=frozenset({"internal_module", "module"}),
            body_required=frozenset({"module", "internal_module"}),
            attachments=frozenset({"decorator"}),
            parent_name_fields=_JS_PARENT_NAME_FIELDS,
            doc_comments=_SLASH_STAR_DOC,
        ),
        LanguageSpec(
            name="tsx",
            extensions=(".tsx",),
            grammar=("tree_sitter_typescript", "language_tsx"),
            definitions=_TS_DEFINITIONS,
            containers=frozenset(
                {"class_declaration", "class", "abstract_class_declaration", "internal_module", "module"}
            ),
            namespaces=frozenset({"internal_module", "module"}),
            body_required=frozenset({"module", "internal_module"}),
            attachments=frozenset({"decorator"}),
            parent_name_fields=_JS_PARENT_NAME_FIELDS,
            doc_comments=_SLASH_STAR_DOC,
        ),
        LanguageSpec(
            name="rust",
            extensions=(".rs",),
            grammar=("tree_sitter_rust", "language"),
            definitions={
                "function_item": "function",
                "function_signature_item": "function",
                "struct_item": "class",
                "enum_item": "class",
                "union_item": "class",
                "trait_item": "class",
                "impl_item": "class",
                "mod_item": "class",
                "macro_definition": "function",
                "type_item": "definition",
            },
            containers=frozenset({"trait_item", "impl_item", "mod_item"}),
            namespaces=frozenset({"mod_item"}),
            body_required=frozenset({"mod_item"}),
            comments=frozenset({"line_comment", "block_comment"}),
            attachments=frozenset({"attribute_item"}),
            name_fields=("name", "type"),
            doc_comments=("///", "/**"),
            scope_separators=("::",),
        ),
        LanguageSpec(
            name="java",
            extensions=(".java",),
            grammar=("tree_sitter_java", "language"),
            definitions={
                "method_declaration": "function",
                "constructor_declaration": "function",
                "compact_constructor_declaration": "function",
                "class_declaration": "class",
                "interface_declaration": "class",
                "enum_declaration": "class",
                "record_declaration": "class",
                "annotation_type_declaration": "class",
            },
            containers=frozenset(
                {
                    "class_declaration",
                    "interface_declaration",
                    "enum_declaration",
                    "record_declaration",
                    "annotation_type_declaration",
                }
            ),
            comments=frozenset({"line_comment", "block_comment"}),
            doc_comments=_SLASH_STAR_DOC,
        ),
        LanguageSpec(
            name="php",
            extensions=(".php", ".phtml", ".php3", ".php4", ".php5", ".phps"),
            grammar=("tree_sitter_php", "language_php_only"),
            grammar_variants=(
                ("<?php", ("tree_sitter_php", "language_php")),
                ("<?=", ("tree_sitter_php", "language_php")),
                ("<?PHP", ("tree_sitter_php", "language_php")),
            ),
            definitions={
                "function_definition": "function",
                "method_declaration": "function",
                "class_declaration": "class",
                "interface_declaration": "class",
                "trait_declaration": "class",
                "enum_declaration": "class",
                "namespace_definition": "class",
            },
            containers=frozenset(
                {
                    "class_declaration",
                    "interface_declaration",
                    "trait_declaration",
                    "enum_declaration",
                    "namespace_definition",
                }
            ),
            namespaces=frozenset({"namespace_definition"}),
            body_required=frozenset({"namespace_definition"}),
            doc_comments=_SLASH_STAR_DOC,
            scope_separators=("\\",),
        ),
        LanguageSpec(
            name="ruby",
            extensions=(".rb", ".rake", ".gemspec", ".ru", ".rbi"),
            filenames=("Rakefile", "Gemfile", "Vagrantfile", "Guardfile", "Podfile", "Brewfile", "Fastfile"),
            grammar=("tree_sitter_ruby", "language"),
            definitions={
                "method": "function",
                "singleton_method": "function",
                "class": "class",
                "module": "class",
                "singleton_class": "class",
            },
            containers=frozenset({"class", "module", "singleton_class"}),
            qualified_names=frozenset({"scope_resolution"}),
            scope_separators=("::",),
        ),
        LanguageSpec(
            name="c",
            extensions=(".c", ".h"),
            grammar=("tree_sitter_c", "language"),
            definitions={
                "function_definition": "function",
                "struct_specifier": "class",
                "union_specifier": "class",
                "enum_specifier": "class",
                "type_definition": "definition",
                "preproc_function_def": "function",
            },
            body_required=frozenset({"struct_specifier", "union_specifier", "enum_specifier"}),
            comments=_C_FAMILY_COMMENTS,
            name_fields=("name", "declarator"),
            header_blank_guard=True,
            doc_comments=_SLASH_STAR_DOC,
        ),
        LanguageSpec(
            name="cpp",
            extensions=(".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".tpp", ".inl"),
            grammar=("tree_sitter_cpp", "language"),
            definitions={
                "function_definition": "function",
                "class_specifier": "class",
                "struct_specifier": "class",
                "union_specifier": "class",
                "enum_specifier": "class",
                "namespace_definition": "class",
                "type_definition": "definition",
                "preproc_function_def": "function",
            },
            containers=frozenset({"class_specifier", "struct_specifier", "union_specifier", "namespace_definition"}),
            namespaces=frozenset({"namespace_definition"}),
            body_required=frozenset(
                {"class_specifier", "struct_specifier", "union_specifier", "enum_specifier", "namespace_definition"}
            ),
            comments=_C_FAMILY_COMMENTS,
            attachments=frozenset({"template_parameter_list", "attribute_declaration"}),
            name_fields=("name", "declarator"),
            header_blank_guard=True,
            doc_comments=("/**", "///"),
            scope_separators=("::",),
        ),
        LanguageSpec(
            name=TEXT,
            extensions=(
                ".md",
                ".markdown",
                ".rst",
                ".txt",
                ".toml",
                ".cfg",
                ".ini",
                ".yaml",
                ".yml",
                ".json",
                ".in",
                ".conf",
                ".sh",
            ),
            filenames=(
                "pylintrc",
                ".pylintrc",
                "go.mod",
                "Makefile",
                "makefile",
                "GNUmakefile",
                "Dockerfile",
                "Pipfile",
                "Procfile",
                "README",
                "CHANGES",
                "CHANGELOG",
                "AUTHORS",
                "NEWS",
                ".coveragerc",
                ".flake8",
                ".editorconfig",
            ),
        ),
    )
}
"""Language name -> spec. ``tsx`` is TypeScript with JSX (its own grammar); ``text`` covers docs/config."""

CODE_LANGUAGES: tuple[str, ...] = tuple(name for name, spec in LANGUAGES.items() if spec.grammar is not None)
"""Names of the languages that have a grammar (ten languages; TypeScript counts ``typescript`` and ``tsx``)."""

_BY_EXTENSION: dict[str, str] = {ext: spec.name for spec in LANGUAGES.values() for ext in spec.extensions}
_BY_FILENAME: dict[str, str] = {name: spec.name for spec in LANGUAGES.values() for name in spec.filenames}
_BY_EXTENSION[".h"] = "c"  # decided per file by :data:`CPP_HINT`


def _base_name(path: str) -> str:
    """The last component of a path with either separator, as :class:`~pathlib.PurePosixPath` names it."""
    return PurePosixPath(path.replace("\\", "/")).name


def language_for_path(path: str, text: str | None = None) -> str | None:
    """Language of a file from its name (and, for ``.h`` headers, its text).

    :param path: file path or name (any separator style; only the base name is used).
    :param text: the file's decoded text; only needed for ``.h`` (C vs C++). ``None`` means C.
    :return: a key of :data:`LANGUAGES`, or ``None`` when the file is not indexed.
    """
    name = path if "/" not in path and "\\" not in path and path not in (".", "..") else _base_name(path)
    if name in _BY_FILENAME:
        return _BY_FILENAME[name]
    dot = name.rfind(".")
    if dot <= 0 and not name.startswith("."):
        return None
    ext = name[dot:].lower()
    lang = _BY_EXTENSION.get(ext)
    if ext == ".h" and text is not None and CPP_HINT.search(text, 0, _CPP_HINT_CHARS):
        return "cpp"
    return lang


def needs_text(path: str) -> bool:
    """Whether :func:`language_for_path` needs the file's text to decide (``.h`` headers).

    :param path: file path or name.
    :return: ``True`` for ``.h`` files.
    """
    return path.lower().endswith(".h")


@cache
def load_grammar(grammar: GrammarRef) -> Language:
    """Load (once) the tree-sitter grammar of an official grammar wheel.

    :param grammar: ``(module, function)``, e.g. ``("tree_sitter_typescript", "language_tsx")``.
    :return: the :class:`tree_sitter.Language`.
    :raises ImportError: if the grammar wheel is not installed.
    """
    module, function = grammar
    return Language(getattr(importlib.import_module(module), function)())


@cache
def get_parser(grammar: GrammarRef) -> Parser:
    """The cached parser of a grammar (one per grammar and process; parsers are not shared across threads).

    :param grammar: ``(module, function)`` as in :attr:`LanguageSpec.grammar`.
    :return: a :class:`tree_sitter.Parser` for that grammar.
    :raises ImportError: if the grammar wheel is not installed.
    """
    return Parser(load_grammar(grammar))


def get_spec(language: str) -> LanguageSpec:
    """The spec of a language name.

    :param language: a key of :data:`LANGUAGES`.
    :return: its :class:`LanguageSpec`.
    :raises ValueError: for an unknown language, listing the known ones.
    """
    try:
        return LANGUAGES[language]
    except KeyError:
        raise ValueError(f"unknown language {language!r}; known: {', '.join(sorted(LANGUAGES))}") from None


def node_type_table() -> list[dict[str, str]]:
    """One row per language describing its node types, for ``docs/chunking.md``.

    :return: rows with keys ``language``, ``extensions``, ``grammar``, ``definitions``, ``containers``,
        ``comments``, ``attachments``, ``doc_comments`` (comma- or space-separated strings).
    """
    rows = []
    for spec in LANGUAGES.values():
        if spec.grammar is None:
            continue
        grammars = [spec.grammar] + [g for _, g in spec.grammar_variants]
        rows.append(
            {
                "language": spec.name,
                "extensions": " ".join(spec.extensions + spec.filenames),
                "grammar": ", ".join(sorted({f"{m}.{f}()" for m, f in grammars})),
                "definitions": ", ".join(f"{t} ({k})" for t, k in spec.definitions.items()),
                "containers": ", ".join(sorted(spec.containers)),
                "comments": ", ".join(sorted(spec.comments)),
                "attachments": ", ".join(sorted(spec.attachments)),
                "doc_comments": " ".join(spec.doc_comments),
            }
        )
    return rows
