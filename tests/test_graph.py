"""Tests of the symbol graph (indexes/graph.py): exact edges on small multi-file repos in seven languages,
exact expansion distances and features on a hand-built graph, persistence (round trip, byte determinism, errors
naming the file)."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path

import numpy as np
import pytest

from swe_explore.chunking.registry import chunk_files, make_chunker
from swe_explore.chunking.types import Chunk
from swe_explore.chunking.walk import walk_snapshot
from swe_explore.explore.graph_features import FEATURE_NAMES, graph_features
from swe_explore.indexes.graph import CorruptGraphError, Csr, SymbolGraph, chunks_fingerprint
from swe_explore.indexes.graph_build import MAX_DEFINITION_SITES, build_graph, code_text
from swe_explore.indexes.graph_expand import ExpansionInfo, expand
from swe_explore.indexes.graph_imports import import_targets
from swe_explore.indexes.store import ChunkTable

Edges = set[tuple[str, str]]


def write_repo(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (path -> dedented text) under ``root``; return ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def build(root: Path, max_definition_sites: int = MAX_DEFINITION_SITES) -> tuple[SymbolGraph, list[Chunk]]:
    """Walk, chunk (``function``) and build the graph of a fixture repo."""
    files, _ = walk_snapshot(root)
    chunks, _ = chunk_files(files, make_chunker("function"))
    return build_graph(files, chunks, max_definition_sites), chunks


def label(chunks: list[Chunk], i: int) -> str:
    """``path::symbol`` of a definition chunk, ``path:start`` of a gap."""
    c = chunks[i]
    return f"{c.path}::{c.symbol}" if c.symbol and c.kind != "gap" else f"{c.path}:{c.start}"


def references(graph: SymbolGraph, chunks: list[Chunk]) -> Edges:
    refs = graph.edges["references"]
    return {(label(chunks, i), label(chunks, int(j))) for i in range(graph.n_chunks) for j in refs.row(i)}


def containment(graph: SymbolGraph, chunks: list[Chunk]) -> Edges:
    """Chunk -> chunk ``contains`` edges."""
    con = graph.edges["contains"]
    return {(label(chunks, i), label(chunks, int(j))) for i in range(graph.n_chunks) for j in con.row(i)}


def imports(graph: SymbolGraph) -> Edges:
    imp, n = graph.edges["imports"], graph.n_chunks
    return {(graph.files[i - n], graph.files[int(j) - n]) for i in range(n, graph.n_nodes) for j in imp.row(i)}


# -- fixture repos, one per language --------------------------------------------------------------------------

FIXTURES: dict[str, dict[str, str]] = {
    "python": {
        "pkg/__init__.py": """
            from .models import Session
            """,
        "pkg/models.py": """
            from pkg.util import helper


            class Session:
                \"\"\"A session; see helper.\"\"\"

                def __init__(self):
                    self.count = 0

                def request(self, url):
                    return helper(url)

                def send(self, request):
                    return self.request(request)
            """,
        "pkg/util.py": """
            import logging


            def helper(value):
                # Session is named in a comment only
                return format_value(value)


            def format_value(value):
                return str(value) + "Session"


            def log_request(request):
                logging.info(request)
            """,
        "pkg/logging.py": """
            def setup():
                return None
            """,
    },
    "go": {
        "go.mod": """
            module example.com/shapes
            """,
        "geom/circle.go": """
            package geom

            import "math"

            // Circle is a circle.
            type Circle struct {
            \tR float64
            }

            // Area returns the area.
            func (c Circle) Area() float64 {
            \treturn math.Pi * c.R * c.R
            }

            func NewCircle(r float64) Circle {
            \treturn Circle{R: r}
            }
            """,
        "geom/scale.go": """
            package geom

            func (c Circle) Scaled(k float64) Circle {
            \treturn NewCircle(c.R * k)
            }
            """,
        "main.go": """
            package main

            import (
            \t"fmt"

            \t"example.com/shapes/geom"
            )

            func main() {
            \tc := geom.NewCircle(2)
            \tfmt.Println(c.Area(), c.Scaled(2))
            }
            """,
    },
    "typescript": {
        "src/shapes.ts": """
            export class Circle {
              constructor(public r: number) {}

              area(): number {
                return Math.PI * square(this.r);
              }
            }

            export function square(x: number): number {
              return x * x;
            }
            """,
        "src/index.ts": """
            import { Circle } from "./shapes";
            import "./polyfill.js";

            export function makeCircle(r: number): Circle {
              return new Circle(r);
            }
            """,
        "src/polyfill.js": """
            const util = require("./util");

            function install() {
              return util.describe(makeCircle);
            }
            """,
        "src/util/index.js": """
            function describe(value) {
              return String(value);
            }

            module.exports = { describe };
            """,
    },
    "java": {
        "src/main/java/com/acme/geo/Circle.java": """
            package com.acme.geo;

            public class Circle {
                private final double radius;

                public Circle(double radius) {
                    this.radius = radius;
                }

                public double area() {
                    return Math.PI * square(radius);
                }

                static double square(double x) {
                    return x * x;
                }
            }
            """,
        "src/main/java/com/acme/app/Main.java": """
            package com.acme.app;

            import com.acme.geo.Circle;
            import static com.acme.geo.Circle.square;
            import java.util.List;

            public class Main {
                public static void report(List<Circle> circles) {
                    for (Circle c : circles) {
                        System.out.println(c.area() + square(2));
                    }
                }
            }
            """,
    },
    "c": {
        "include/geo/shape.h": """
            #ifndef SHAPE_H
            #define SHAPE_H

            struct shape {
                double size;
            };

            double shape_area(const struct shape *s);

            #endif
            """,
        "src/shape.c": """
            #include "geo/shape.h"
            #include <stdio.h>
            #include "util.h"

            double shape_area(const struct shape *s) {
                return square(s->size);
            }
            """,
        "src/util.h": """
            static inline double square(double x) {
                return x * x;
            }
            """,
        "src/main.c": """
            #include "util.h"
            #include <geo/shape.h>

            int main(void) {
                struct shape s = {2.0};
                printf("%f\\n", shape_area(&s));
                return 0;
            }
            """,
    },
    "ruby": {
        "lib/geo.rb": """
            require_relative "geo/circle"

            module Geo
              def self.unit
                Circle.new(1)
              end
            end
            """,
        "lib/geo/circle.rb": """
            require "json"

            module Geo
              class Circle
                def initialize(radius)
                  @radius = radius
                end

                def area
                  3.14 * square(@radius)
                end

                def square(x)
                  x * x
                end
              end
            end
            """,
        "test/circle_test.rb": """
            require "geo"

            class CircleTest
              def test_area
                Geo::Circle.new(2).area
              end
            end
            """,
    },
}

EXPECTED: dict[str, tuple[Edges, Edges, Edges]] = {
    # (references, chunk containment, imports)
    "python": (
        {
            ("pkg/__init__.py:1", "pkg/models.py::Session"),
            ("pkg/models.py:1", "pkg/util.py::helper"),
            ("pkg/models.py::Session.request", "pkg/util.py::helper"),
            ("pkg/models.py::Session.send", "pkg/models.py::Session.request"),  # self.request(...)
            ("pkg/util.py::helper", "pkg/util.py::format_value"),  # not Session: named in a comment only
            # log_request's bare ``request`` is a parameter, not the method Session.request
        },
        {
            ("pkg/models.py::Session", "pkg/models.py::Session.__init__"),
            ("pkg/models.py::Session", "pkg/models.py::Session.request"),
            ("pkg/models.py::Session", "pkg/models.py::Session.send"),
        },
        {("pkg/__init__.py", "pkg/models.py"), ("pkg/models.py", "pkg/util.py")},  # not pkg/logging.py
    ),
    "go": (
        {
            ("geom/circle.go::Circle.Area", "geom/circle.go::Circle"),  # the receiver type
            ("geom/circle.go::NewCircle", "geom/circle.go::Circle"),
            ("geom/scale.go::Circle.Scaled", "geom/circle.go::Circle"),
            ("geom/scale.go::Circle.Scaled", "geom/circle.go::NewCircle"),
            ("main.go::main", "geom/circle.go::NewCircle"),
            ("main.go::main", "geom/circle.go::Circle.Area"),
            ("main.go::main", "geom/scale.go::Circle.Scaled"),
        },
        {
            ("geom/circle.go::Circle", "geom/circle.go::Circle.Area"),
            ("geom/circle.go::Circle", "geom/scale.go::Circle.Scaled"),  # a method in another file of the package
        },
        {("main.go", "geom/circle.go"), ("main.go", "geom/scale.go")},
    ),
    "typescript": (
        {
            ("src/index.ts:1", "src/shapes.ts::Circle"),
            ("src/index.ts::makeCircle", "src/shapes.ts::Circle"),
            ("src/polyfill.js::install", "src/index.ts::makeCircle"),
            ("src/polyfill.js::install", "src/util/index.js::describe"),
            ("src/shapes.ts::Circle.area", "src/shapes.ts::square"),
            ("src/util/index.js:5", "src/util/index.js::describe"),
        },
        {
            ("src/shapes.ts::Circle", "src/shapes.ts::Circle.constructor"),
            ("src/shapes.ts::Circle", "src/shapes.ts::Circle.area"),
            ("src/shapes.ts::Circle", "src/shapes.ts:7"),  # the closing brace
        },
        {
            ("src/index.ts", "src/shapes.ts"),
            ("src/index.ts", "src/polyfill.js"),
            ("src/polyfill.js", "src/util/index.js"),
        },
    ),
    "java": (
        {
            ("src/main/java/com/acme/app/Main.java:1", "src/main/java/com/acme/geo/Circle.java::Circle"),
            ("src/main/java/com/acme/app/Main.java:1", "src/main/java/com/acme/geo/Circle.java::Circle.Circle"),
            ("src/main/java/com/acme/app/Main.java:1", "src/main/java/com/acme/geo/Circle.java::Circle.square"),
            ("src/main/java/com/acme/app/Main.java::Main.report", "src/main/java/com/acme/geo/Circle.java::Circle"),
            (
                "src/main/java/com/acme/app/Main.java::Main.report",
                "src/main/java/com/acme/geo/Circle.java::Circle.Circle",
            ),
            (
                "src/main/java/com/acme/app/Main.java::Main.report",
                "src/main/java/com/acme/geo/Circle.java::Circle.area",
            ),
            (
                "src/main/java/com/acme/app/Main.java::Main.report",
                "src/main/java/com/acme/geo/Circle.java::Circle.square",
            ),
            (
                "src/main/java/com/acme/geo/Circle.java::Circle.area",
                "src/main/java/com/acme/geo/Circle.java::Circle.square",
            ),
        },
        {
            ("src/main/java/com/acme/app/Main.java::Main", "src/main/java/com/acme/app/Main.java::Main.report"),
            ("src/main/java/com/acme/app/Main.java::Main", "src/main/java/com/acme/app/Main.java:13"),
            ("src/main/java/com/acme/geo/Circle.java::Circle", "src/main/java/com/acme/geo/Circle.java::Circle.Circle"),
            ("src/main/java/com/acme/geo/Circle.java::Circle", "src/main/java/com/acme/geo/Circle.java::Circle.area"),
            ("src/main/java/com/acme/geo/Circle.java::Circle", "src/main/java/com/acme/geo/Circle.java::Circle.square"),
            ("src/main/java/com/acme/geo/Circle.java::Circle", "src/main/java/com/acme/geo/Circle.java:17"),
        },
        {("src/main/java/com/acme/app/Main.java", "src/main/java/com/acme/geo/Circle.java")},
    ),
    "c": (
        {
            ("include/geo/shape.h:8", "include/geo/shape.h::shape"),  # the prototype
            ("include/geo/shape.h:8", "src/shape.c::shape_area"),
            ("src/main.c::main", "include/geo/shape.h::shape"),
            ("src/main.c::main", "src/shape.c::shape_area"),
            ("src/shape.c::shape_area", "include/geo/shape.h::shape"),
            ("src/shape.c::shape_area", "src/util.h::square"),
        },
        set(),
        {
            ("src/main.c", "include/geo/shape.h"),  # <geo/shape.h> by suffix
            ("src/main.c", "src/util.h"),
            ("src/shape.c", "include/geo/shape.h"),  # "geo/shape.h": not beside it, found by suffix
            ("src/shape.c", "src/util.h"),
        },
    ),
    "ruby": (
        {
            ("lib/geo.rb::Geo.unit", "lib/geo/circle.rb::Geo.Circle"),
            ("lib/geo/circle.rb::Geo.Circle.area", "lib/geo/circle.rb::Geo.Circle.square"),  # implicit self
            ("test/circle_test.rb::CircleTest.test_area", "lib/geo.rb::Geo"),  # the required file's Geo only
            ("test/circle_test.rb::CircleTest.test_area", "lib/geo/circle.rb::Geo.Circle"),
            ("test/circle_test.rb::CircleTest.test_area", "lib/geo/circle.rb::Geo.Circle.area"),
        },
        {
            ("lib/geo.rb::Geo", "lib/geo.rb::Geo.unit"),
            ("lib/geo.rb::Geo", "lib/geo.rb:7"),
            ("lib/geo/circle.rb::Geo", "lib/geo/circle.rb::Geo.Circle"),
            ("lib/geo/circle.rb::Geo", "lib/geo/circle.rb:17"),
            ("lib/geo/circle.rb::Geo.Circle", "lib/geo/circle.rb::Geo.Circle.initialize"),
            ("lib/geo/circle.rb::Geo.Circle", "lib/geo/circle.rb::Geo.Circle.area"),
            ("lib/geo/circle.rb::Geo.Circle", "lib/geo/circle.rb::Geo.Circle.square"),
            ("lib/geo/circle.rb::Geo.Circle", "lib/geo/circle.rb:16"),
            ("test/circle_test.rb::CircleTest", "test/circle_test.rb::CircleTest.test_area"),
            ("test/circle_test.rb::CircleTest", "test/circle_test.rb:7"),
        },
        {("lib/geo.rb", "lib/geo/circle.rb"), ("test/circle_test.rb", "lib/geo.rb")},
    ),
}


@pytest.mark.parametrize("language", sorted(EXPECTED))
def test_edges_per_language(tmp_path: Path, language: str) -> None:
    """Every reference, chunk containment and import edge of a small repo is the hand-derived one."""
    graph, chunks = build(write_repo(tmp_path, FIXTURES[language]))
    want_refs, want_contains, want_imports = EXPECTED[language]
    assert references(graph, chunks) == want_refs
    assert containment(graph, chunks) == want_contains
    assert imports(graph) == want_imports


def test_file_nodes_and_defines(tmp_path: Path) -> None:
    """File nodes follow the chunks, contain exactly their chunks, and every definition chunk defines its symbol."""
    graph, chunks = build(write_repo(tmp_path, FIXTURES["python"]))
    assert graph.files == ["pkg/__init__.py", "pkg/logging.py", "pkg/models.py", "pkg/util.py"]
    assert graph.n_chunks == len(chunks) == 11
    node = graph.file_node("pkg/models.py")
    assert node == 11 + 2
    assert graph.edges["contains"].row(node).tolist() == [i for i, c in enumerate(chunks) if c.path == "pkg/models.py"]
    assert graph.chunk_file.tolist() == [graph.files.index(c.path) for c in chunks]
    defined = {chunks[i].symbol: [graph.symbols[int(k)] for k in graph.defines.row(i)] for i in range(len(chunks))}
    assert defined["Session.request"] == ["Session.request"]
    assert defined[""] == []  # gaps define nothing
    assert graph.symbols == sorted(c.symbol for c in chunks if c.symbol)
    assert graph.counts() == {
        "chunks": 11,
        "files": 4,
        "nodes": 15,
        "symbols": 8,
        "defines": 8,
        "contains_chunk": 3,
        "contains_file": 11,
        "references": 5,
        "imports": 2,
    }
    with pytest.raises(KeyError, match="pkg/nothere.py"):
        graph.file_node("pkg/nothere.py")


def test_merged_symbols_each_defined(tmp_path: Path) -> None:
    """A chunk whose symbol names two definitions (``"a, b"``) defines both, and a reference to either links it."""
    graph, chunks = build(
        write_repo(
            tmp_path,
            {
                "m.js": "function alpha() {}; function beta() {}\n\nfunction gamma() {\n  return beta();\n}\n",
            },
        )
    )
    merged = next(i for i, c in enumerate(chunks) if c.symbol == "alpha, beta")
    assert [graph.symbols[int(k)] for k in graph.defines.row(merged)] == ["alpha", "beta"]
    assert references(graph, chunks) == {("m.js::gamma", "m.js::alpha, beta")}


def test_ambiguous_names_are_not_linked(tmp_path: Path) -> None:
    """A name with more than ``max_definition_sites`` sites is not linked; at the limit it links to every site."""
    files = {f"mod{k}.py": "def handler(event):\n    return event\n" for k in range(MAX_DEFINITION_SITES + 1)}
    files["caller.py"] = "def dispatch(event):\n    return handler(event)\n"
    root = write_repo(tmp_path, files)
    graph, chunks = build(root)
    assert references(graph, chunks) == set()
    graph, chunks = build(root, max_definition_sites=MAX_DEFINITION_SITES + 1)
    assert references(graph, chunks) == {
        ("caller.py::dispatch", f"mod{k}.py::handler") for k in range(MAX_DEFINITION_SITES + 1)
    }
    with pytest.raises(ValueError, match="max_definition_sites"):
        build(root, max_definition_sites=0)


def test_local_definitions_are_preferred(tmp_path: Path) -> None:
    """Of two definitions of a name, only the one in an imported file is linked; without one, both are."""
    graph, chunks = build(
        write_repo(
            tmp_path,
            {
                "a.py": "def parse_config(text):\n    return text\n",
                "b.py": "def parse_config(text):\n    return None\n",
                "c.py": "from a import parse_config\n\n\ndef load(text):\n    return parse_config(text)\n",
                "d.py": "def load_any(text):\n    return parse_config(text)\n",
            },
        )
    )
    assert references(graph, chunks) == {
        ("c.py:1", "a.py::parse_config"),
        ("c.py::load", "a.py::parse_config"),
        ("d.py::load_any", "a.py::parse_config"),
        ("d.py::load_any", "b.py::parse_config"),
    }


IMPORT_FIXTURE = {
    # Python: relative levels, a package's __init__, scripts beside each other, the standard library
    "app/__init__.py": "VERSION = 1\n",
    "app/core/__init__.py": "from .engine import run_engine\nfrom .. import VERSION\n",
    "app/core/engine.py": (
        "from ..util import tools\nfrom . import helpers\nimport app.util.tools as t\nimport json\n\n\n"
        "def run_engine():\n    return t\n"
    ),
    "app/core/helpers.py": "X = 1\n",
    "app/util/__init__.py": "Y = 1\n",
    "app/util/tools.py": "Z = 1\n",
    "app/util/json.py": "W = 1\n",
    "scripts/run.py": "import helpers_local\nfrom app.core import engine\n",
    "scripts/helpers_local.py": "V = 1\n",
    # JavaScript/TypeScript: a .js specifier of a .ts file, a directory's index, a parent directory
    "web/a.ts": 'import { b } from "./b.js";\nexport * from "../web/lib";\nconst c = require("lodash");\n',
    "web/b.ts": "export const b = 1;\n",
    "web/lib/index.ts": "export const lib = 1;\n",
    # Rust: mod declarations, crate/self/super paths and brace groups, an external crate
    "rs/src/lib.rs": "mod shapes;\npub mod util;\n\nuse crate::shapes::{circle::Circle, square};\n",
    "rs/src/shapes/mod.rs": "pub mod circle;\nuse super::util::twice;\n",
    "rs/src/shapes/circle.rs": "use crate::util;\nuse std::fmt;\nuse self::inner::Thing;\n",
    "rs/src/shapes/circle/inner.rs": "pub struct Thing;\n",
    "rs/src/util.rs": "pub fn twice() {}\n",
    # PHP: grouped use statements, require/include, a class outside the snapshot
    "php/src/Geo/Circle.php": "<?php\nnamespace Acme\\Geo;\n\nuse Acme\\Util\\{Math, Format as F};\n",
    "php/src/Util/Math.php": "<?php\nnamespace Acme\\Util;\n",
    "php/src/Util/Format.php": "<?php\nnamespace Acme\\Util;\n",
    "php/bootstrap.php": (
        "<?php\nrequire_once __DIR__ . '/src/Util/Math.php';\ninclude 'src/Geo/Circle.php';\n"
        "use Psr\\Log\\LoggerInterface;\n"
    ),
    # Java: a wildcard import and a class outside the snapshot
    "java/com/acme/Main.java": "package com.acme;\n\nimport com.acme.geo.*;\nimport java.util.List;\n",
    "java/com/acme/geo/Circle.java": "package com.acme.geo;\n",
    "java/com/acme/geo/Square.java": "package com.acme.geo;\n",
}


def test_import_resolution(tmp_path: Path) -> None:
    """Imports of Python, JavaScript/TypeScript, Rust, PHP and Java resolve to exactly these snapshot files."""
    files, _ = walk_snapshot(write_repo(tmp_path, IMPORT_FIXTURE))
    assert import_targets(files) == {
        "app/core/__init__.py": ["app/__init__.py", "app/core/engine.py"],
        "app/core/engine.py": [
            "app/core/__init__.py",
            "app/core/helpers.py",
            "app/util/__init__.py",
            "app/util/tools.py",
        ],  # not app/util/json.py for ``import json``
        "java/com/acme/Main.java": ["java/com/acme/geo/Circle.java", "java/com/acme/geo/Square.java"],
        "php/bootstrap.php": ["php/src/Geo/Circle.php", "php/src/Util/Math.php"],
        "php/src/Geo/Circle.php": ["php/src/Util/Format.php", "php/src/Util/Math.php"],
        "rs/src/lib.rs": ["rs/src/shapes/circle.rs", "rs/src/shapes/mod.rs", "rs/src/util.rs"],
        "rs/src/shapes/circle.rs": ["rs/src/shapes/circle/inner.rs", "rs/src/util.rs"],
        "rs/src/shapes/mod.rs": ["rs/src/shapes/circle.rs", "rs/src/util.rs"],
        "scripts/run.py": ["app/core/__init__.py", "app/core/engine.py", "scripts/helpers_local.py"],
        "web/a.ts": ["web/b.ts", "web/lib/index.ts"],
    }


def test_go_imports_without_go_mod(tmp_path: Path) -> None:
    """Without a go.mod, an import path resolves to the directory that is its longest suffix; ``fmt`` to none."""
    files, _ = walk_snapshot(
        write_repo(
            tmp_path,
            {
                "cmd/tool/main.go": 'package main\n\nimport (\n\t"fmt"\n\tu "github.com/acme/tool/internal/util"\n)\n',
                "internal/util/util.go": "package util\n",
                "internal/util/util_test.go": "package util\n",
            },
        )
    )
    assert import_targets(files) == {"cmd/tool/main.go": ["internal/util/util.go"]}


def test_code_text_blanks_comments_and_strings() -> None:
    """Comments and string literals are blanked; a ``#`` inside a string and a Rust lifetime are not comments."""
    assert code_text('x = "a#b"  # note\ny = """doc\nmore""" + f(\'q\')', "python") == "x =     \ny =   + f( )"
    assert code_text("fn f<'a>(s: &'a str) -> char { 'x' } // c", "rust") == "fn f<'a>(s: &'a str) -> char {   }  "
    assert code_text("a(`t ${x}`); /* c\n */ b('s') // d", "javascript") == "a( );   b( )  "
    assert code_text('#include "x.h"\nint y = g("s");', "c") == " \nint y = g( );"
    assert code_text("=begin\ndoc\n=end\nputs 'x' # c", "ruby") == " \nputs    "
    assert code_text("plain words", "text") == "plain words"


def test_fingerprint_matches_chunk_table(tmp_path: Path) -> None:
    """The graph records the chunk table's fingerprint, so a graph can be matched to its index."""
    graph, chunks = build(write_repo(tmp_path, FIXTURES["go"]))
    table = ChunkTable(chunks, {})
    assert graph.fingerprint == chunks_fingerprint(chunks) == table.fingerprint()


# -- expansion and features on a hand-built graph --------------------------------------------------------------


def small_graph() -> SymbolGraph:
    """Seven chunks in three files: a.py holds 0, 1 (class K) and 2 (K.m); b.py 3, 4; c.py 5, 6.

    References 0->3, 3->5, 4->0, 1->0, 6->4; class 1 contains method 2; a.py imports b.py, b.py imports c.py.
    """
    n = 7
    files = ["a.py", "b.py", "c.py"]
    chunk_file = [0, 0, 0, 1, 1, 2, 2]
    symbols = ["K", "K.m", "f", "g", "h"]
    defines = Csr.from_pairs([0, 1, 2, 3, 4, 5], [2, 0, 1, 3, 2, 4], n, len(symbols))  # f is defined twice
    contains = Csr.from_pairs([n + f for f in chunk_file] + [1], list(range(n)) + [2], n + 3, n + 3)
    refs = Csr.from_pairs([0, 3, 4, 1, 6], [3, 5, 0, 0, 4], n + 3, n + 3)
    imports = Csr.from_pairs([n + 0, n + 1], [n + 1, n + 2], n + 3, n + 3)
    return SymbolGraph(
        n_chunks=n,
        files=files,
        chunk_file=np.asarray(chunk_file, dtype=np.int32),
        symbols=symbols,
        defines=defines,
        edges={"contains": contains, "references": refs, "imports": imports},
        fingerprint="0" * 64,
        config={},
    )


def info(
    dist: int, callee: int | None, caller: int | None, contain: int | None, imp: int | None, origin: int, score: float
) -> ExpansionInfo:
    return ExpansionInfo(dist, callee, caller, contain, imp, origin, score)


def test_expand_distances() -> None:
    """Each direction is searched on its own; chunk 2 (a member of a caller) is not reached without mixing."""
    graph = small_graph()
    reached = expand(graph, {6: 0.5, 0: 0.9}, hops=2)
    assert list(reached) == [0, 6, 3, 1, 4, 5]  # seeds by score, then hop 1, then hop 2
    assert reached == {
        0: info(0, 0, 0, 0, 0, 0, 0.9),
        6: info(0, 0, 0, 0, 0, 6, 0.5),
        3: info(1, 1, None, None, 1, 0, 0.9),  # 0 calls 3; a.py imports b.py and a.py references 3
        1: info(1, None, 1, None, None, 0, 0.9),  # 1 calls 0
        4: info(1, 1, 1, None, None, 0, 0.9),  # 4 calls 0, and 6 calls 4: reached first from the better seed
        5: info(2, 2, None, None, 2, 0, 0.9),  # 0 -> 3 -> 5, and b.py imports c.py whose 5 b.py references
    }
    assert reached[4].direction_dist("caller") == 1


def test_expand_bounds_and_options() -> None:
    """``max_nodes`` keeps the closest chunks of the best seeds; ``hops``, directions and sequences are honoured."""
    graph = small_graph()
    capped = expand(graph, {0: 0.9, 6: 0.5}, hops=2, max_nodes=4)
    assert list(capped) == [0, 6, 3, 1]
    assert capped[1] == info(1, None, 1, None, None, 0, 0.9)
    assert list(expand(graph, {0: 0.9, 6: 0.5}, hops=0)) == [0, 6]
    assert list(expand(graph, {0: 1.0, 6: 1.0}, max_nodes=1)) == [0]  # ties by chunk id; lower seeds dropped
    contained = expand(graph, [2], edge_types=["contain"])
    assert contained == {2: info(0, 0, 0, 0, 0, 2, 1.0), 1: info(1, None, None, 1, None, 2, 1.0)}
    by_order = expand(graph, [6, 0, 6], hops=1, edge_types=("callee",))
    assert by_order == {
        6: info(0, 0, 0, 0, 0, 6, 1.0),
        0: info(0, 0, 0, 0, 0, 0, 1.0),
        4: info(1, 1, None, None, None, 6, 1.0),
        3: info(1, 1, None, None, None, 0, 1.0),
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seeds": [7]}, "not a chunk id"),
        ({"seeds": {0: math.nan}}, "NaN"),
        ({"seeds": [0], "hops": -1}, "hops"),
        ({"seeds": [0], "max_nodes": 0}, "max_nodes"),
        ({"seeds": [0], "edge_types": ["calls"]}, "calls"),
    ],
)
def test_expand_rejects_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    """A file node as seed, a NaN score, negative hops, an empty budget or an unknown direction is an error."""
    with pytest.raises(ValueError, match=message):
        expand(small_graph(), **kwargs)  # type: ignore[arg-type]


def test_graph_features() -> None:
    """Features follow FEATURE_NAMES; unreached directions are NaN; degrees and name sites are counted."""
    graph = small_graph()
    features = graph_features(graph, expand(graph, {0: 0.9, 6: 0.5}, hops=2))
    assert list(features) == [0, 6, 3, 1, 4, 5]
    assert all(list(values) == list(FEATURE_NAMES) for values in features.values())
    four = features[4]
    assert math.isnan(four.pop("dist_contain")) and math.isnan(four.pop("dist_import"))
    assert four == {
        "is_seed": 0.0,
        "origin_score": 0.9,
        "dist": 1.0,
        "dist_callee": 1.0,
        "dist_caller": 1.0,
        "n_callees": 1.0,  # 4 -> 0
        "n_callers": 1.0,  # 6
        "n_caller_files": 1.0,
        "n_children": 0.0,
        "has_parent": 0.0,  # only its file contains it
        "n_symbols": 1.0,
        "name_sites": 2.0,  # f is defined by 0 (a.py) and 4 (b.py)
        "file_imports": 1.0,  # b.py imports c.py
        "file_imported_by": 1.0,  # a.py imports b.py
    }
    assert features[0]["n_callers"] == 2.0 and features[0]["n_caller_files"] == 2.0  # 1 (a.py) and 4 (b.py)
    assert features[1]["n_children"] == 1.0 and features[0]["is_seed"] == 1.0
    assert graph_features(graph, {2: info(1, None, None, 1, None, 1, 1.0)})[2]["has_parent"] == 1.0
    assert features[6]["name_sites"] == 0.0  # defines nothing


def test_csr_transpose_and_checks() -> None:
    """The reverse relation lists sources in order; pairs outside the shape are rejected."""
    csr = Csr.from_pairs([2, 0, 0, 2], [1, 2, 1, 1], 3, 3)
    assert csr.indptr.tolist() == [0, 2, 2, 3] and csr.indices.tolist() == [1, 2, 1]
    rev = csr.transpose(3)
    assert rev.indptr.tolist() == [0, 0, 2, 3] and rev.indices.tolist() == [0, 2, 0]
    with pytest.raises(ValueError, match="outside"):
        Csr.from_pairs([3], [0], 3, 3)


# -- persistence ----------------------------------------------------------------------------------------------


def test_save_load_round_trip_and_determinism(tmp_path: Path) -> None:
    """A saved graph loads equal; saving it again, or building it again from the same input, gives the same bytes."""
    root = write_repo(tmp_path / "repo", FIXTURES["ruby"])
    graph, _ = build(root)
    written = graph.save(tmp_path / "one")
    assert [p.name for p in written][-1] == "graph.json"
    assert {p.suffix for p in written} == {".npy", ".json"}
    loaded = SymbolGraph.load(tmp_path / "one")
    assert loaded == graph
    assert expand(loaded, [5]) == expand(graph, [5])
    again, _ = build(root)
    again.save(tmp_path / "two")
    loaded.save(tmp_path / "three")
    for path in written:
        data = path.read_bytes()
        assert (tmp_path / "two" / path.name).read_bytes() == data
        assert (tmp_path / "three" / path.name).read_bytes() == data
    meta = json.loads((tmp_path / "one" / "graph.json").read_text())
    assert meta["counts"] == graph.counts() and meta["n_chunks"] == graph.n_chunks
    assert graph != small_graph()


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    """A truncated, missing, malformed or out-of-range file raises CorruptGraphError naming that file."""
    graph, _ = build(write_repo(tmp_path / "repo", FIXTURES["python"]))
    target = tmp_path / "graph"
    graph.save(target)
    indices = target / "references.indices.npy"
    good = indices.read_bytes()

    indices.write_bytes(good[: len(good) - 6])
    with pytest.raises(CorruptGraphError, match=r"references\.indices\.npy: not a readable \.npy array"):
        SymbolGraph.load(target)
    with pytest.raises(ValueError, match=str(indices)):
        SymbolGraph.load(target)

    np.save(indices, np.asarray([0, 1, 2, 3, 99], dtype=np.int32))
    with pytest.raises(CorruptGraphError, match=r"references\.indices\.npy: ids outside"):
        SymbolGraph.load(target)
    np.save(indices, np.asarray([0, 1], dtype=np.int32))
    with pytest.raises(CorruptGraphError, match=r"references\.indices\.npy: 2 values, graph\.json records 5"):
        SymbolGraph.load(target)
    np.save(indices, np.asarray([0, 1, 2, 3, 4], dtype=np.int64))
    with pytest.raises(CorruptGraphError, match=r"references\.indices\.npy: int64 array"):
        SymbolGraph.load(target)
    indices.unlink()
    with pytest.raises(CorruptGraphError, match=r"references\.indices\.npy: file is missing"):
        SymbolGraph.load(target)
    indices.write_bytes(good)
    assert SymbolGraph.load(target) == graph

    meta = target / "graph.json"
    text = meta.read_text()
    meta.write_text(text[:40])
    with pytest.raises(CorruptGraphError, match=r"graph\.json: unreadable JSON"):
        SymbolGraph.load(target)
    meta.write_text(text.replace('"format_version": 1', '"format_version": 99'))
    with pytest.raises(CorruptGraphError, match=r"graph\.json: format version 99"):
        SymbolGraph.load(target)
    meta.unlink()
    with pytest.raises(CorruptGraphError, match=r"graph\.json: file is missing"):
        SymbolGraph.load(target)
