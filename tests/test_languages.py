"""Tests of the language table: extensions, grammar loading and node-type names (docs/chunking.md)."""

from __future__ import annotations

import pytest

from swe_explore.chunking.languages import (
    CODE_LANGUAGES,
    LANGUAGES,
    TEXT,
    get_parser,
    get_spec,
    language_for_path,
    load_grammar,
    node_type_table,
)

SNIPPETS: dict[str, str] = {
    "python": "@dec\ndef f(x):\n    return x\n\nclass A:\n    pass\n",
    "go": "package p\n\nfunc F(x int) int {\n\treturn x\n}\n",
    "javascript": "export function f(x) {\n  return <b>{x}</b>;\n}\n",
    "typescript": "export function f(x: number): number {\n  return <number>x;\n}\n",
    "tsx": "export function View(): JSX.Element {\n  return <span>{1}</span>;\n}\n",
    "rust": "#[inline]\nfn f(x: i32) -> i32 {\n    x\n}\n",
    "java": "class A {\n    @Override\n    public int f(int x) { return x; }\n}\n",
    "php": "<?php\nfunction f($x) {\n    return $x;\n}\n",
    "ruby": "class A\n  def f(x)\n    x\n  end\nend\n",
    "c": "int f(int x) {\n    return x;\n}\n",
    "cpp": "template <typename T>\nT f(T x) {\n    return x;\n}\n",
}
"""A small valid program per grammar (the ten languages; TypeScript as ``typescript`` and ``tsx``)."""


def test_ten_languages_have_grammars() -> None:
    """The table has a grammar for each of the ten languages (TypeScript twice: .ts and .tsx) plus text."""
    assert sorted(CODE_LANGUAGES) == sorted(SNIPPETS)
    assert LANGUAGES[TEXT].grammar is None


@pytest.mark.parametrize("language", sorted(SNIPPETS))
def test_pinned_grammar_parses_snippet(language: str) -> None:
    """Every installed grammar wheel loads with the pinned tree-sitter and parses a snippet cleanly.

    See docs/chunking.md, 'Per-language node types'.
    """
    spec = get_spec(language)
    grammar = spec.grammar_for(SNIPPETS[language])
    assert grammar is not None
    tree = get_parser(grammar).parse(SNIPPETS[language].encode())
    root = tree.root_node
    assert not root.has_error, f"{language}: {root}"
    kinds = {n.type for n in root.children}
    assert kinds & (set(spec.definitions) | {"export_statement", "decorated_definition", "template_declaration"})


@pytest.mark.parametrize("language", sorted(SNIPPETS))
def test_table_node_types_exist_in_grammar(language: str) -> None:
    """Every node type named in the table is a real named node type of that language's grammar(s)."""
    spec = get_spec(language)
    grammars = [spec.grammar] + [g for _, g in spec.grammar_variants]
    names = set(spec.definitions) | spec.containers | spec.body_required | spec.comments | spec.attachments
    assert spec.containers <= set(spec.definitions)
    assert spec.namespaces <= spec.containers
    assert spec.body_required <= set(spec.definitions)
    for grammar in grammars:
        lang = load_grammar(grammar)
        missing = sorted(n for n in names if not lang.id_for_node_kind(n, True))
        assert missing == [], f"{language} {grammar}: unknown node types {missing}"
        fields = {lang.field_name_for_id(i) for i in range(1, lang.field_count + 1)}
        assert set(spec.name_fields) <= fields, f"{language}: unknown name fields"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("pkg/mod.py", "python"),
        ("stubs/mod.pyi", "python"),
        ("main.go", "go"),
        ("a.js", "javascript"),
        ("a.jsx", "javascript"),
        ("a.mjs", "javascript"),
        ("a.cjs", "javascript"),
        ("a.ts", "typescript"),
        ("a.mts", "typescript"),
        ("a.cts", "typescript"),
        ("types.d.ts", "typescript"),
        ("a.tsx", "tsx"),
        ("lib.rs", "rust"),
        ("A.java", "java"),
        ("index.php", "php"),
        ("a.rb", "ruby"),
        ("tasks/db.rake", "ruby"),
        ("x.gemspec", "ruby"),
        ("Rakefile", "ruby"),
        ("Gemfile", "ruby"),
        ("a.c", "c"),
        ("a.h", "c"),
        ("a.cc", "cpp"),
        ("a.cpp", "cpp"),
        ("a.cxx", "cpp"),
        ("a.hpp", "cpp"),
        ("a.hh", "cpp"),
        ("a.hxx", "cpp"),
        ("A.PY", "python"),
        ("pyproject.toml", TEXT),
        ("setup.cfg", TEXT),
        ("tox.ini", TEXT),
        ("docs/index.rst", TEXT),
        ("README.md", TEXT),
        ("requirements.txt", TEXT),
        (".github/workflows/ci.yml", TEXT),
        ("conf.yaml", TEXT),
        ("package.json", TEXT),
        ("doc/data/messages/l/line-too-long/pylintrc", TEXT),
        ("Makefile", TEXT),
        ("Dockerfile", TEXT),
        ("image.png", None),
        ("LICENSE", None),
        ("archive.tar.gz", None),
        (".gitignore", None),
    ],
)
def test_language_for_path(path: str, expected: str | None) -> None:
    """Files map to languages by exact name first, then lower-cased extension."""
    assert language_for_path(path) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("#ifndef A_H\n#define A_H\nint f(void);\n#endif\n", "c"),
        ("struct s { int x; };\ntypedef struct s s_t;\n", "c"),
        ("#pragma once\nnamespace geo {\nint f();\n}\n", "cpp"),
        ("class Point {\n public:\n  int x;\n};\n", "cpp"),
        ("template <typename T>\nT max(T a, T b);\n", "cpp"),
        ("#include <string>\nstd::string name();\n", "cpp"),
        ("constexpr int k = 1;\n", "cpp"),
    ],
)
def test_header_c_or_cpp(text: str, expected: str) -> None:
    """A .h header is C unless its text shows C++ (class/namespace/template, std::, access specifiers)."""
    assert language_for_path("inc/a.h", text) == expected


def test_php_with_and_without_opening_tag() -> None:
    """PHP with an opening tag uses language_php; without one, language_php_only, and both find functions."""
    spec = get_spec("php")
    tagged = "<html>\n<?php function f() { return 1; } ?>\n</html>\n"
    untagged = "function f() {\n    return 1;\n}\n"
    assert spec.grammar_for(tagged) == ("tree_sitter_php", "language_php")
    assert spec.grammar_for(untagged) == ("tree_sitter_php", "language_php_only")
    for text in (tagged, untagged):
        root = get_parser(spec.grammar_for(text)).parse(text.encode()).root_node
        assert not root.has_error
        assert "function_definition" in {n.type for n in root.children}
    # The tagged grammar alone would see untagged code as HTML text: that is why the variant exists.
    root = get_parser(("tree_sitter_php", "language_php")).parse(untagged.encode()).root_node
    assert [n.type for n in root.children] == ["text"]


def test_parsers_are_cached() -> None:
    """One parser per grammar per process."""
    grammar = get_spec("python").grammar
    assert grammar is not None
    assert get_parser(grammar) is get_parser(grammar)


def test_get_spec_unknown_language() -> None:
    """An unknown language name raises ValueError listing the known ones."""
    with pytest.raises(ValueError, match="unknown language 'cobol'.*python"):
        get_spec("cobol")


def test_node_type_table_rows() -> None:
    """The docs table has one row per grammar language, naming its definitions and containers."""
    rows = {row["language"]: row for row in node_type_table()}
    assert sorted(rows) == sorted(SNIPPETS)
    assert "function_definition (function)" in rows["python"]["definitions"]
    assert rows["python"]["containers"] == "class_definition"
    assert "language_php_only" in rows["php"]["grammar"] and "language_php()" in rows["php"]["grammar"]
    assert rows["rust"]["doc_comments"] == "/// /**" and rows["python"]["doc_comments"] == ""
