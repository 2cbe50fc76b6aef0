"""Tests for persisted indexes (indexes/store.py, indexes/build.py): atomic writes, reuse, staleness, corruption."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from chunking.registry import make_chunker
from chunking.types import Chunk
from indexes.build import ensure_index, open_index
from indexes.store import ChunkTable, StaleIndexError, atomic_directory, config_key
from retrievers.base import CorruptIndexError
from retrievers.registry import make_retriever


@pytest.fixture()
def snapshot(tmp_path: Path) -> Path:
    """A three-file snapshot: two Python modules and a README."""
    root = tmp_path / "snap"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "cart.py").write_text(
        "class Cart:\n    def total(self):\n        return sum(self.items)\n\n\ndef discount(x):\n    return x * 0.9\n"
    )
    (root / "pkg" / "util.py").write_text("def slugify(text):\n    return text.lower().replace(' ', '-')\n")
    (root / "README.md").write_text("# Shop\n\nCarts and discounts.\n")
    return root


def _build(snapshot: Path, store: Path, **kwargs: object) -> object:
    return ensure_index(snapshot, store, make_chunker("function"), [make_retriever("bm25")], **kwargs)


def test_build_then_reuse_does_no_work(snapshot: Path, tmp_path: Path) -> None:
    """The first call builds chunks and BM25; a second call on the unchanged snapshot builds nothing."""
    store = tmp_path / "store"
    first = _build(snapshot, store)
    assert first.built == ["chunks", "bm25"]
    assert first.counts == {"files": 3, "lines": 12, "chunks": 5}  # Cart header, total, discount, slugify, README
    second = _build(snapshot, store)
    assert second.built == [] and second.reused == ["bm25"]


def test_touched_but_unchanged_snapshot_is_not_rebuilt(snapshot: Path, tmp_path: Path) -> None:
    """New mtimes with the same content refresh the stat signature but rebuild nothing."""
    store = tmp_path / "store"
    _build(snapshot, store)
    path = snapshot / "pkg" / "util.py"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000_000))
    assert _build(snapshot, store).built == []


def test_changed_snapshot_is_rebuilt(snapshot: Path, tmp_path: Path) -> None:
    """Editing a file changes the fingerprint, so chunks and retriever are rebuilt and the new text is found."""
    store = tmp_path / "store"
    _build(snapshot, store)
    (snapshot / "pkg" / "util.py").write_text("def shipping_cost(weight):\n    return weight * 2\n")
    assert _build(snapshot, store).built == ["chunks", "bm25"]
    index = open_index(snapshot, store, make_chunker("function"), make_retriever("bm25"))
    hits = index.retriever.search("shipping cost")
    assert index.chunks[hits[0].index].path == "pkg/util.py"


def test_open_index_round_trip_matches_fresh_chunks(snapshot: Path, tmp_path: Path) -> None:
    """The reloaded chunk table has the chunker's ranges, and hits map to the right chunks."""
    store = tmp_path / "store"
    _build(snapshot, store)
    index = open_index(snapshot, store, make_chunker("function"), make_retriever("bm25"))
    spans = {(c.path, c.start, c.end, c.symbol) for c in index.chunks}
    assert ("pkg/cart.py", 6, 7, "discount") in spans
    assert index.file_lines == {"README.md": 3, "pkg/cart.py": 7, "pkg/util.py": 2}
    top = index.chunks[index.retriever.search("discount")[0].index]
    assert (top.path, top.start, top.end) == ("pkg/cart.py", 6, 7)


def test_other_config_gets_its_own_directory(snapshot: Path, tmp_path: Path) -> None:
    """Two chunker configs and two BM25 configs never share a directory."""
    store = tmp_path / "store"
    a = ensure_index(snapshot, store, make_chunker("window", size=10, overlap=2), [make_retriever("bm25")])
    b = ensure_index(snapshot, store, make_chunker("window", size=20, overlap=2), [make_retriever("bm25", k1=1.2)])
    assert a.chunk_dir != b.chunk_dir
    assert config_key("bm25", {"k1": 1.2}) != config_key("bm25", {"k1": 1.5})


def test_missing_index_is_a_clear_error(snapshot: Path, tmp_path: Path) -> None:
    """Opening an index that was never built names the directory and the script to build it."""
    with pytest.raises(FileNotFoundError, match="index_repos.py"):
        open_index(snapshot, tmp_path / "store", make_chunker("function"), make_retriever("bm25"))


def test_truncated_chunk_table_names_the_file_and_rebuild_repairs_it(snapshot: Path, tmp_path: Path) -> None:
    """A truncated chunks.npz raises CorruptIndexError naming it; rebuild=True replaces it."""
    store = tmp_path / "store"
    report = _build(snapshot, store)
    npz = report.chunk_dir / "chunks.npz"
    npz.write_bytes(npz.read_bytes()[:40])
    with pytest.raises(CorruptIndexError, match="chunks.npz"):
        _build(snapshot, store)
    assert _build(snapshot, store, rebuild=True).built == ["chunks", "bm25"]
    assert open_index(snapshot, store, make_chunker("function"), make_retriever("bm25")).retriever.n_docs > 0


def test_edited_manifest_counts_are_detected(snapshot: Path, tmp_path: Path) -> None:
    """A manifest whose chunk count disagrees with the arrays raises CorruptIndexError naming chunks.npz."""
    store = tmp_path / "store"
    report = _build(snapshot, store)
    manifest_path = report.chunk_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["counts"]["chunks"] += 1
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(CorruptIndexError, match="chunks.npz"):
        open_index(snapshot, store, make_chunker("function"), make_retriever("bm25"))


def test_retriever_from_other_chunks_is_stale(snapshot: Path, tmp_path: Path) -> None:
    """A retriever manifest recording another chunk table fingerprint is reported as stale."""
    store = tmp_path / "store"
    report = _build(snapshot, store)
    rmanifest = next((report.chunk_dir / "retrievers").glob("bm25-*/manifest.json"))
    payload = json.loads(rmanifest.read_text())
    payload["chunks_fingerprint"] = "0" * 64
    rmanifest.write_text(json.dumps(payload))
    with pytest.raises(StaleIndexError, match="chunks_fingerprint"):
        open_index(snapshot, store, make_chunker("function"), make_retriever("bm25"))
    assert _build(snapshot, store).built == ["bm25"]


def test_killed_build_leaves_target_untouched(tmp_path: Path) -> None:
    """An exception inside atomic_directory removes the temporary directory and keeps the old target."""
    target = tmp_path / "idx"
    with atomic_directory(target) as tmp:
        (tmp / "a.txt").write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_directory(target) as tmp:
            (tmp / "a.txt").write_text("new")
            raise RuntimeError("killed")
    assert (target / "a.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_empty_snapshot_builds_an_empty_index(tmp_path: Path) -> None:
    """A snapshot with no indexable file gives zero chunks and a retriever that returns no hits."""
    root = tmp_path / "empty"
    root.mkdir()
    (root / "blob.bin").write_bytes(b"\0\1\2")
    report = _build(root, tmp_path / "store")
    assert report.counts == {"files": 0, "lines": 0, "chunks": 0}
    index = open_index(root, tmp_path / "store", make_chunker("function"), make_retriever("bm25"))
    assert index.chunks == [] and index.retriever.search("anything") == []


def test_chunk_table_rejects_out_of_range_ids(tmp_path: Path) -> None:
    """A chunk table whose path ids point past the path list is corrupt, naming chunks.npz."""
    table = ChunkTable([Chunk("a.py", 1, 2, "function", "f", "python")], {"a.py": 2})
    table.save(tmp_path)
    with np.load(tmp_path / "chunks.npz") as npz:
        cols = {k: npz[k] for k in npz.files}
    cols["path"] = np.array([5], dtype=np.int32)
    np.savez(tmp_path / "chunks.npz", **cols)
    with pytest.raises(CorruptIndexError, match="path ids"):
        ChunkTable.load(tmp_path)
