"""Reuse down to the unique content (issue 21): the symbol graph's per-file pieces (indexes/reuse.py
graph_names_reusing) and the copy of a stored index of identical content (indexes/build.py, the ``snapshots``
cache entries) give index files byte-identical to a cold build without reuse."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from swe_explore.chunking.registry import make_chunker
from swe_explore.chunking.types import Chunk, SourceFile
from swe_explore.indexes import cache as cache_module
from swe_explore.indexes.build import BuildReport, ensure_index
from swe_explore.indexes.graph import SymbolGraph
from swe_explore.indexes.graph_build import ChunkNames, chunk_names
from swe_explore.indexes.graph_imports import _JS_SPEC, ImportResolver, extract_imports, specs_fit
from swe_explore.indexes.graph_store import GRAPH_DIR
from swe_explore.indexes.reuse import (
    _decode_file_names,
    _decode_piece,
    _encode_file_names,
    _encode_piece,
    graph_names_compute,
)
from swe_explore.retrievers.registry import make_retriever


def _build(snapshot: Path, store: Path, reuse: bool, rebuild: bool = False) -> BuildReport:
    retrievers = [make_retriever("bm25"), make_retriever("tfidf")]
    return ensure_index(snapshot, store, make_chunker("function"), retrievers, reuse=reuse, graph=True, rebuild=rebuild)


def _index_files(tree: dict[str, bytes]) -> dict[str, bytes]:
    return {k: v for k, v in tree.items() if not k.startswith("_cache/")}


def test_chunk_names_read_identifiers_and_member_accesses() -> None:
    """Comments and strings are blanked; ``y.real`` makes ``real`` a member name; text chunks have none."""
    chunk = Chunk("a.py", 1, 2, "function", "f", "python", "def f(y):  # see beta\n    return y.real + 'gamma'")
    assert chunk_names(chunk) == (frozenset({"def", "f", "y", "return", "real"}), frozenset({"real"}))
    assert chunk_names(Chunk("R.md", 1, 1, "window", "", "text", "alpha beta")) == (frozenset(), frozenset())


def test_graph_name_pieces_round_trip_and_malformed_ones_are_refused() -> None:
    """A file's piece is its chunks' names in order; one of another chunk count or malformed is refused."""
    names = [(frozenset({"alpha", "real", "y"}), frozenset({"real"})), (frozenset(), frozenset())]
    assert _encode_file_names(names) == b"alpha\0real\0y\xffreal\x01\xff"
    assert _decode_file_names(_encode_file_names(names), 2) == names
    assert _decode_file_names(b"\xff", 1) == [(frozenset(), frozenset())]
    assert _decode_file_names(_encode_file_names(names), 3) is None  # the file has another number of chunks
    assert _decode_file_names(b"alpha", 1) is None  # no separator
    assert _decode_file_names(b"alpha\xffbeta", 1) is None  # a member name that is no identifier
    assert _decode_file_names("\u00e9\xff".encode(), 1) is None  # not ASCII


def _source(path: str, language: str, text: str) -> SourceFile:
    return SourceFile(path, language, text.split("\n"), len(text.encode()))


def test_import_specs_are_read_from_the_text_and_resolved_per_snapshot() -> None:
    """A file's import statements depend on its text alone; what they name depends on the snapshot's paths."""
    b = _source("pkg/b.py", "python", "import os, pkg.c as c\nfrom .a import beta, gamma\nfrom pkg import a\n")
    assert extract_imports(b) == (
        ("import", "os"),
        ("import", "pkg.c"),
        ("from", ".", "a", "beta", "gamma"),
        ("from", "", "pkg", "a"),
    )
    assert extract_imports(_source("main.c", "c", '#include "util.h"\n#include <stdio.h>\n')) == (
        ('"', "util.h"),
        ("<", "stdio.h"),
    )
    assert extract_imports(_source("README.md", "text", "import os\n")) == ()
    init = _source("pkg/__init__.py", "python", "")
    with_a = ImportResolver([b, init, _source("pkg/a.py", "python", "beta = 1\n")])
    expected = {"pkg/__init__.py", "pkg/a.py"}  # ``from pkg import a``: the package and its module a
    assert with_a.targets(b) == with_a.resolve(b.path, b.language, extract_imports(b)) == expected
    moved = ImportResolver([b, init, _source("pkg/a/__init__.py", "python", ""), _source("pkg/c.py", "python", "")])
    assert moved.resolve(b.path, b.language, extract_imports(b)) == {"pkg/__init__.py", "pkg/a/__init__.py", "pkg/c.py"}


def test_script_and_php_specs_are_searched_on_the_lines_that_can_hold_them() -> None:
    """Only lines holding ``./`` (scripts) or ``.php`` (PHP requires) are searched: the same matches as the
    pattern over the whole text, on a bundle-like line with several specifiers and lines without any."""
    js = 'import a from "./a";x="./no"; require("../b")\n// ./c\nvar q = 1\nexport * from \'./d\''
    got = extract_imports(_source("m.js", "javascript", js))
    assert got == (("./a",), ("../b",), ("./d",))
    assert got == tuple((m.group(2),) for m in _JS_SPEC.finditer(js))
    php = "<?php\nrequire_once __DIR__ . '/x.php'; include 'y.php';\n$a = 'z.php';\nuse A\\B;\n"
    assert extract_imports(_source("m.php", "php", php)) == (
        ("use", "A\\B"),
        ("require", "__DIR__ . ", "/x.php"),
        ("require", "", "y.php"),
    )


def test_graph_pieces_with_imports_round_trip_and_malformed_ones_are_refused() -> None:
    """A piece is the names, 0x02, then the import specs as ASCII JSON (control characters escaped)."""
    names: list[ChunkNames] = [(frozenset({"alpha"}), frozenset())]
    specs = (("from", "", "pkg", "a"), ("\x02odd\u00e9",))
    piece = _encode_piece(names, specs)
    assert piece == b'alpha\xff\x02[["from","","pkg","a"],["\\u0002odd\\u00e9"]]'
    assert _decode_piece(piece, 1) == (names, specs)
    assert _decode_piece(_encode_piece(names, ()), 1) == (names, ())
    assert _decode_piece(_encode_file_names(names), 1) is None  # a piece without imports (an older kind)
    assert _decode_piece(b"alpha\xff\x02[[", 1) is None  # not JSON
    assert _decode_piece(b"alpha\xff\x02[[1]]", 1) is None  # a spec part that is no string
    assert _decode_piece(b"alpha\xff\x02[[]]", 1) is None  # an empty spec
    assert _decode_piece(piece, 2) is None  # another number of chunks


def test_a_stored_piece_whose_imports_do_not_fit_the_language_is_computed_again() -> None:
    """A piece that decodes but holds imports of another shape than its file's language gives (``("from",)`` for
    Python; a checksummed cache never holds one unless forged) is refused: computed from the text and stored
    again, flagged as rejected."""
    a = _source("a.py", "python", "from pkg import b\n")
    assert specs_fit("python", extract_imports(a))
    assert not specs_fit("python", (("from",),))
    assert not specs_fit("python", (("use", "x"),))
    assert specs_fit("rust", (("mod", "x"), ("use", "crate::a")))
    assert not specs_fit("rust", (("use", "x", "y"),))
    assert not specs_fit("text", (("import", "os"),))
    assert specs_fit("text", ())
    chunk = Chunk("a.py", 1, 1, "module", "", "python", "from pkg import b")
    names = [chunk_names(chunk)]
    forged = _encode_piece(names, (("from",),))
    got_names, imports, computed = graph_names_compute([chunk], {"a.py": forged}, {"a.py": "d" * 64}, [a])
    assert got_names == names
    assert imports == {"a.py": (("from", "", "pkg", "b"),)}
    assert computed == [("d" * 64, _encode_piece(names, imports["a.py"]), True)]


def test_graph_pieces_reused_give_the_cold_graph(
    tmp_path: Path,
    store_tree: Callable[[Path], dict[str, bytes]],
    linked_snapshot: Callable[..., Path],
) -> None:
    """v2 changes beta's body: of its 3 files (README.md, pkg/a.py, pkg/b.py) only a.py's piece is computed
    again, and v2's store files (graph included) equal a build without reuse."""
    v1 = linked_snapshot(tmp_path / "v1")
    v2 = linked_snapshot(tmp_path / "v2", edited=True)
    store, plain = tmp_path / "store", tmp_path / "plain"
    first = _build(v1, store, reuse=True)
    assert first.built == ["chunks", "bm25", "tfidf", "graph"]
    assert (first.cache["graph_names"]["hits"], first.cache["graph_names"]["misses"]) == (0, 3)
    second = _build(v2, store, reuse=True)
    assert (second.cache["graph_names"]["hits"], second.cache["graph_names"]["misses"]) == (2, 1)
    assert _build(v2, store, reuse=True).reused == ["chunks", "bm25", "tfidf", "graph"]
    _build(v1, plain, reuse=False)
    _build(v2, plain, reuse=False)
    assert not (plain / "_cache").exists()
    assert _index_files(store_tree(store)) == store_tree(plain)


def test_reused_import_pieces_are_resolved_against_the_new_snapshot(
    tmp_path: Path,
    store_tree: Callable[[Path], dict[str, bytes]],
    linked_snapshot: Callable[..., Path],
) -> None:
    """v3 moves pkg/a.py to pkg/a/__init__.py: pkg/b.py's piece is reused (``from pkg.a import alpha``) and its
    import edge now goes to pkg/a/__init__.py, as in a build without reuse."""
    v1 = linked_snapshot(tmp_path / "v1")
    v3 = linked_snapshot(tmp_path / "v3")
    (v3 / "pkg" / "a").mkdir()
    (v3 / "pkg" / "a.py").rename(v3 / "pkg" / "a" / "__init__.py")
    store, plain = tmp_path / "store", tmp_path / "plain"
    _build(v1, store, reuse=True)
    report = _build(v3, store, reuse=True)
    assert (report.cache["graph_names"]["hits"], report.cache["graph_names"]["misses"]) == (2, 1)
    graph = SymbolGraph.load(report.chunk_dir / GRAPH_DIR)
    importer, imported = graph.file_node("pkg/b.py"), graph.file_node("pkg/a/__init__.py")
    assert graph.edges["imports"].row(importer).tolist() == [imported]
    _build(v1, plain, reuse=False)
    _build(v3, plain, reuse=False)
    assert _index_files(store_tree(store)) == store_tree(plain)


def test_graph_pieces_are_not_shared_between_chunkings(
    tmp_path: Path,
    store_tree: Callable[[Path], dict[str, bytes]],
    linked_snapshot: Callable[..., Path],
) -> None:
    """The same files cut by another chunker config (``max_lines=2``: a.py's functions in one-line and two-line
    pieces) look up none of the first chunking's graph pieces, and its graph equals a build without reuse."""
    v1 = linked_snapshot(tmp_path / "v1")
    store, plain = tmp_path / "store", tmp_path / "plain"
    bm25 = [make_retriever("bm25")]
    ensure_index(v1, store, make_chunker("function"), bm25, reuse=True, graph=True)
    small = make_chunker("function", max_lines=2)
    second = ensure_index(v1, store, small, bm25, reuse=True, graph=True)
    assert (second.cache["graph_names"]["hits"], second.cache["graph_names"]["misses"]) == (0, 3)
    ensure_index(v1, plain, make_chunker("function"), bm25, reuse=False, graph=True)
    ensure_index(v1, plain, small, bm25, reuse=False, graph=True)
    assert _index_files(store_tree(store)) == store_tree(plain)


def test_a_snapshot_of_stored_content_is_copied_byte_identical(
    tmp_path: Path,
    store_tree: Callable[[Path], dict[str, bytes]],
    linked_snapshot: Callable[..., Path],
) -> None:
    """A copy of v1 under another name is assembled from v1's stored index: no file is chunked, no chunk
    tokenized, no graph built (no piece looked up), and its files equal a cold build's; its manifest names it."""
    v1 = linked_snapshot(tmp_path / "v1")
    twin = tmp_path / "twin"
    shutil.copytree(v1, twin)
    store, plain = tmp_path / "store", tmp_path / "plain"
    _build(v1, store, reuse=True)
    report = _build(twin, store, reuse=True)
    assert report.built == ["chunks", "bm25", "tfidf", "graph"]
    assert report.cache == {}
    _build(v1, plain, reuse=False)
    _build(twin, plain, reuse=False)
    tree = _index_files(store_tree(store))
    assert tree == store_tree(plain)
    assert b'"name": "twin"' in tree[f"twin/{report.chunk_dir.name}/manifest.json"]


def test_a_damaged_or_other_code_twin_is_not_copied(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    store_tree: Callable[[Path], dict[str, bytes]],
    linked_snapshot: Callable[..., Path],
) -> None:
    """A twin whose BM25 file was edited gives its table and TF-IDF but BM25 is built (its term counts looked
    up); under another code version (software fingerprint) nothing is copied; the files equal a cold build's."""
    v1 = linked_snapshot(tmp_path / "v1")
    for name in ("t1", "t2"):
        shutil.copytree(v1, tmp_path / name)
    store, plain = tmp_path / "store", tmp_path / "plain"
    first = _build(v1, store, reuse=True)
    (tf,) = (first.chunk_dir / "retrievers").glob("bm25-*/data/tf.npz")
    good = tf.read_bytes()
    tf.write_bytes(good[:-1] + bytes([good[-1] ^ 0xFF]))
    report = _build(tmp_path / "t1", store, reuse=True)
    assert report.cache["term_counts"]["hits"] == 5 and "graph_names" not in report.cache
    tf.write_bytes(good)
    monkeypatch.setattr(cache_module, "software_fingerprint", lambda: "0" * 64)
    other = _build(tmp_path / "t2", store, reuse=True)
    assert other.cache["chunks"]["misses"] == 3 and other.cache["graph_names"]["misses"] == 3
    for name in ("v1", "t1", "t2"):
        _build(tmp_path / name, plain, reuse=False)
    assert _index_files(store_tree(store)) == store_tree(plain)


@pytest.mark.parametrize("step", ["chunks", "graph"])
def test_a_twin_removed_while_it_is_copied_is_built_instead(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    step: str,
    store_tree: Callable[[Path], dict[str, bytes]],
    linked_snapshot: Callable[..., Path],
) -> None:
    """``store gc`` may remove the twin's entry (its folder is gone) while a copy of it is being read: the copy
    falls back to a build, with the files of a cold build, instead of failing with FileNotFoundError."""
    from swe_explore.indexes import graph_store, twin

    v1 = linked_snapshot(tmp_path / "v1")
    shutil.copytree(v1, tmp_path / "copy")
    store, plain = tmp_path / "store", tmp_path / "plain"
    _build(v1, store, reuse=True)
    real = shutil.copyfile
    removed: list[bool] = []

    def racing_copy(src: Path, dst: Path) -> object:
        if not removed and "/store/v1/" in str(src) and (step == "chunks" or "/graph/" in str(src)):
            removed.append(True)
            shutil.rmtree(store / "v1")
        return real(src, dst)

    module = twin if step == "chunks" else graph_store
    monkeypatch.setattr(module.shutil, "copyfile", racing_copy)
    report = _build(tmp_path / "copy", store, reuse=True)
    assert removed == [True]
    assert report.built == ["chunks", "bm25", "tfidf", "graph"]
    if step == "chunks":  # the table is assembled from the cached pieces
        assert report.cache["chunks"] == {"hits": 3, "misses": 0, "corrupt": 0, "write_errors": 0, "corrupt_indexes": 0}
    else:  # the table and the retrievers were copied before the twin went; the graph is built from cached names
        assert sorted(report.cache) == ["graph_names"] and report.cache["graph_names"]["hits"] == 3
    _build(tmp_path / "copy", plain, reuse=False)
    assert _index_files(store_tree(store)) == store_tree(plain)
