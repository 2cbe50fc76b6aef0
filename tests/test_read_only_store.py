"""A read-only index store (issue 18, case 4): a fully built store is queried without writing anything, and a
query that would have to build in it gets a one-line error naming the missing index (indexes/build.py)."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from swe_explore.chunking.registry import make_chunker
from swe_explore.chunking.walk import WalkConfig
from swe_explore.commands.explore import main as explore_main
from swe_explore.explore.explorer import IndexedExplorer
from swe_explore.indexes.build import chunk_dir_for, ensure_index, retriever_dir_for
from swe_explore.indexes.graph_store import ensure_graph_once
from swe_explore.indexes.store import ReadOnlyStoreError
from swe_explore.retrievers.registry import make_retriever

QUERY = "cart total discount"


@pytest.fixture()
def snapshot(tmp_path: Path) -> Path:
    """Two Python modules and a README."""
    root = tmp_path / "snap"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "cart.py").write_text(
        "class Cart:\n    def total(self):\n        return sum(self.items)\n\n\ndef discount(x):\n    return x * 0.9\n"
    )
    (root / "pkg" / "util.py").write_text("def slugify(text):\n    return text.lower().replace(' ', '-')\n")
    (root / "README.md").write_text("# Shop\n\nCarts and discounts.\n")
    return root


def _regions(store: Path, snapshot: Path, retriever: str = "bm25") -> list[tuple[str, int, int]]:
    explorer = IndexedExplorer(retriever=retriever, store=store)
    return [(r.path, r.start, r.end) for r in explorer.explore(snapshot, QUERY, snapshot.name)]


def test_case4_read_only_built_store_is_queried(
    snapshot: Path, tmp_path: Path, read_only: Callable[[Path], list[str]]
) -> None:
    """A fully built store on a read-only file system answers a query with the same regions, writing nothing
    (no lock file)."""
    store = tmp_path / "store"
    built = _regions(store, snapshot)
    assert built[0][0] == "pkg/cart.py"
    refused = read_only(store)
    assert _regions(store, snapshot) == built
    assert refused == []


def test_case4_read_only_store_without_the_index_names_it(
    snapshot: Path, tmp_path: Path, read_only: Callable[[Path], list[str]]
) -> None:
    """A query needing an index the read-only store lacks (TF-IDF, only BM25 built) is refused in one line that
    names the missing index directory."""
    store = tmp_path / "store"
    _regions(store, snapshot)
    read_only(store)
    with pytest.raises(ReadOnlyStoreError) as info:
        _regions(store, snapshot, "tfidf")
    cdir = chunk_dir_for(store, snapshot.name, make_chunker("function"), WalkConfig())
    missing = retriever_dir_for(cdir, make_retriever("tfidf"))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{missing}: ")
    assert "read-only" in message


def test_case4_explore_command_reports_a_read_only_store_in_one_line(
    snapshot: Path, tmp_path: Path, read_only: Callable[[Path], list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """The explore command turns the refusal into ``explore: error: ...`` and exit status 1, no traceback."""
    store = tmp_path / "store"
    assert explore_main([str(snapshot), QUERY, "--store", str(store), "--retriever", "bm25"]) == 0
    capsys.readouterr()
    read_only(store)
    assert explore_main([str(snapshot), QUERY, "--store", str(store), "--retriever", "tfidf"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "read-only" in err and "Traceback" not in err


def test_case4_read_only_store_reuses_its_graph_and_names_a_missing_one(
    snapshot: Path, tmp_path: Path, read_only: Callable[[Path], list[str]]
) -> None:
    """The symbol graph too: a built one is reused from a read-only store without writing; a missing one (another
    snapshot name) is refused naming its directory."""
    store, chunker = tmp_path / "store", make_chunker("function")
    for name in ("a", "b"):
        ensure_index(snapshot, store, chunker, [make_retriever("bm25")], snapshot_name=name)
    assert ensure_graph_once(snapshot, store, chunker, snapshot_name="a") is True
    refused = read_only(store)
    assert ensure_graph_once(snapshot, store, chunker, snapshot_name="a") is False
    assert refused == []
    with pytest.raises(ReadOnlyStoreError) as info:
        ensure_graph_once(snapshot, store, chunker, snapshot_name="b")
    assert str(info.value).startswith(f"{chunk_dir_for(store, 'b', chunker, WalkConfig()) / 'graph'}: ")


def test_case4_chmod_read_only_store_is_queried(snapshot: Path, tmp_path: Path) -> None:
    """The same with real permissions: directories 0o555, files 0o444 (skipped where they do not stop writes,
    as for root)."""
    probe = tmp_path / "probe"
    probe.mkdir(mode=0o555)
    try:
        (probe / "x").touch()
    except PermissionError:
        pass
    else:
        pytest.skip("permissions do not stop this user's writes (root); the EROFS tests cover it")
    store = tmp_path / "store"
    built = _regions(store, snapshot)
    paths = sorted(store.rglob("*"), reverse=True)
    try:
        for path in [*paths, store]:
            path.chmod(0o555 if path.is_dir() else 0o444)
        assert _regions(store, snapshot) == built
        with pytest.raises(ReadOnlyStoreError):
            _regions(store, snapshot, "tfidf")
    finally:
        for path in [store, *sorted(store.rglob("*"))]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
