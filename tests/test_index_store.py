"""Tests for persisted indexes (indexes/store.py, indexes/build.py): atomic writes, reuse, staleness, corruption."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from swe_explore.chunking.registry import make_chunker
from swe_explore.chunking.types import Chunk
from swe_explore.indexes.build import BuildReport, ensure_index, open_index
from swe_explore.indexes.files import CorruptIndexError, StaleIndexError, file_sha256, load_retriever, save_retriever
from swe_explore.indexes.store import ChunkTable, atomic_directory, config_key
from swe_explore.retrievers.base import Retriever
from swe_explore.retrievers.registry import make_retriever


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


def _build(snapshot: Path, store: Path, **kwargs: Any) -> BuildReport:
    return ensure_index(snapshot, store, make_chunker("function"), [make_retriever("bm25")], **kwargs)


def test_build_then_reuse_does_no_work(snapshot: Path, tmp_path: Path) -> None:
    """The first call builds chunks and BM25; a second call on the unchanged snapshot builds nothing."""
    store = tmp_path / "store"
    first = _build(snapshot, store)
    assert first.built == ["chunks", "bm25"]
    assert first.counts == {"files": 3, "lines": 12, "chunks": 5}  # Cart header, total, discount, slugify, README
    second = _build(snapshot, store)
    assert second.built == [] and second.reused == ["chunks", "bm25"]


def test_touched_but_unchanged_snapshot_is_not_rebuilt(snapshot: Path, tmp_path: Path) -> None:
    """New mtimes with the same content rebuild nothing: the content decides, not the mtimes."""
    store = tmp_path / "store"
    _build(snapshot, store)
    path = snapshot / "pkg" / "util.py"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000_000))
    assert _build(snapshot, store).built == []


def test_case3_same_size_edit_with_mtime_restored_rebuilds(snapshot: Path, tmp_path: Path) -> None:
    """An edit that keeps the file's size and gets its mtime restored (git checkout, rsync -t, archive
    extraction) is still seen: the index is rebuilt and a query finds the new text, not the old chunks."""
    store = tmp_path / "store"
    _build(snapshot, store)
    path = snapshot / "pkg" / "util.py"
    before = path.stat()
    old = path.read_text()
    new = old.replace("slugify", "shipfee")
    assert len(new) == len(old)
    path.write_text(new)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    report = _build(snapshot, store)
    assert report.built == ["chunks", "bm25"]
    index = open_index(snapshot, store, make_chunker("function"), make_retriever("bm25"))
    hits = index.retriever.search("shipfee")
    assert [index.chunks[h.index].symbol for h in hits] == ["shipfee"]


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


def test_rebuilding_one_retriever_keeps_the_others(snapshot: Path, tmp_path: Path) -> None:
    """``rebuild`` of BM25 alone rebuilds the chunk table and BM25 and keeps TF-IDF's index, file for file (it is
    still current); after the snapshot's content changed, a rebuild does not keep the stale TF-IDF index."""
    store, chunker = tmp_path / "store", make_chunker("function")
    both = ensure_index(snapshot, store, chunker, [make_retriever("bm25"), make_retriever("tfidf")])
    (tfidf_dir,) = (both.chunk_dir / "retrievers").glob("tfidf-*")
    before = {p.relative_to(tfidf_dir): p.read_bytes() for p in sorted(tfidf_dir.rglob("*")) if p.is_file()}
    assert ensure_index(snapshot, store, chunker, [make_retriever("bm25")], rebuild=True).built == ["chunks", "bm25"]
    after = {p.relative_to(tfidf_dir): p.read_bytes() for p in sorted(tfidf_dir.rglob("*")) if p.is_file()}
    assert after == before and len(after) >= 3
    assert ensure_index(snapshot, store, chunker, [make_retriever("tfidf")]).built == []
    assert open_index(snapshot, store, chunker, make_retriever("tfidf")).retriever.n_docs == 5
    (snapshot / "pkg" / "util.py").write_text("def slugify(text):\n    return text.upper()\n")
    assert ensure_index(snapshot, store, chunker, [make_retriever("bm25")], rebuild=True).built == ["chunks", "bm25"]
    assert not tfidf_dir.exists()


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
    with pytest.raises(RuntimeError), atomic_directory(target) as tmp:
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


def _every_retriever(model: Path) -> list[Retriever]:
    """bm25, tfidf, potion, faiss and hybrid (bm25 + potion), the embedding ones on the given model."""
    return [
        make_retriever("bm25"),
        make_retriever("tfidf"),
        make_retriever("potion", model=str(model)),
        make_retriever("faiss", model=str(model)),
        make_retriever("hybrid", model=str(model)),
    ]


def test_all_retrievers_in_one_build_equal_separate_builds(
    store_tree: Callable[[Path], dict[str, bytes]], snapshot: Path, tmp_path: Path, tiny_model_dir: Path
) -> None:
    """Building every retriever in one call (shared features) writes the same files as building each alone."""
    together = ensure_index(snapshot, tmp_path / "a", make_chunker("function"), _every_retriever(tiny_model_dir))
    assert together.built == ["chunks", "bm25", "tfidf", "potion", "faiss", "hybrid"]
    assert {"term_counts", "vectors"} <= set(together.seconds)
    for retriever in _every_retriever(tiny_model_dir):
        ensure_index(snapshot, tmp_path / "b", make_chunker("function"), [retriever])
    assert store_tree(tmp_path / "a") == store_tree(tmp_path / "b")
    for retriever in _every_retriever(tiny_model_dir):
        a = open_index(snapshot, tmp_path / "a", make_chunker("function"), retriever).retriever
        b = open_index(snapshot, tmp_path / "b", make_chunker("function"), retriever).retriever
        assert a.search("cart total discount", 5) == b.search("cart total discount", 5)


def test_new_retriever_on_current_chunks_does_not_rechunk(
    snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the chunk table up to date, a new retriever gets its chunk texts from the files, not the chunker."""
    import swe_explore.indexes.build as build_module

    store = tmp_path / "store"
    _build(snapshot, store)

    def no_chunking(*args: object, **kwargs: object) -> None:
        raise AssertionError("the chunker ran again")

    monkeypatch.setattr(build_module, "chunk_files", no_chunking)
    report = ensure_index(snapshot, store, make_chunker("function"), [make_retriever("tfidf")])
    assert report.built == ["tfidf"] and "texts" in report.seconds and "chunk" not in report.seconds
    index = open_index(snapshot, store, make_chunker("function"), make_retriever("tfidf"))
    top = index.chunks[index.retriever.search("slugify text")[0].index]
    assert (top.path, top.start, top.end) == ("pkg/util.py", 1, 2)


def test_chunk_texts_cut_from_files_equal_the_chunkers(snapshot: Path) -> None:
    """chunks_with_text rebuilds exactly the chunker's chunks, text included, from the table and the files."""
    from swe_explore.chunking.registry import chunk_files
    from swe_explore.chunking.walk import walk_snapshot
    from swe_explore.indexes.build import _without_text, chunks_with_text

    files, _ = walk_snapshot(snapshot)
    for chunker in (make_chunker("function"), make_chunker("window", size=3, overlap=1)):
        chunks, _ = chunk_files(files, chunker)
        table = ChunkTable(_without_text(chunks), {f.path: len(f.lines) for f in files})
        assert chunks_with_text(table, files) == chunks
    table = ChunkTable([Chunk("pkg/util.py", 1, 9, "function", "", "python")], {"pkg/util.py": 2})
    with pytest.raises(StaleIndexError, match="pkg/util.py:1-9"):
        chunks_with_text(table, files)


def test_hybrid_links_its_parts_instead_of_copying_them(snapshot: Path, tmp_path: Path, tiny_model_dir: Path) -> None:
    """Asking for a hybrid builds its parts in their own directories; the hybrid's data is one retriever.json."""
    from swe_explore.retrievers.hybrid import HybridRetriever

    store = tmp_path / "store"
    hybrid = make_retriever("hybrid", model=str(tiny_model_dir))
    report = ensure_index(snapshot, store, make_chunker("function"), [hybrid])
    assert report.built == ["chunks", "bm25", "potion", "hybrid"]
    hdir = next((report.chunk_dir / "retrievers").glob("hybrid-*"))
    assert sorted(p.name for p in (hdir / "data").iterdir()) == ["retriever.json"]
    links = json.loads((hdir / "data" / "retriever.json").read_text())["links"]
    assert [link["path"].split("/")[:2] for link in links] == [["..", ".."], ["..", ".."]]
    loaded = open_index(snapshot, store, make_chunker("function"), hybrid).retriever
    assert isinstance(loaded, HybridRetriever) and [p.name for p in loaded.parts()] == ["bm25", "potion"]
    from swe_explore.chunking.registry import chunk_snapshot

    fresh = make_retriever("hybrid", model=str(tiny_model_dir))
    fresh.build(chunk_snapshot(snapshot, make_chunker("function"))[0])
    assert loaded.search("cart discount", 5) == fresh.search("cart discount", 5) != []
    again = ensure_index(snapshot, store, make_chunker("function"), [make_retriever("bm25"), hybrid])
    assert again.built == [] and again.reused == ["chunks", "bm25", "potion", "hybrid"]


def test_changed_part_makes_the_hybrid_stale(snapshot: Path, tmp_path: Path, tiny_model_dir: Path) -> None:
    """A part whose retriever.json changed makes the hybrid stale (open), corrupt (direct load), and re-linked."""
    store = tmp_path / "store"
    hybrid = make_retriever("hybrid", model=str(tiny_model_dir))
    report = ensure_index(snapshot, store, make_chunker("function"), [hybrid])
    part_meta = next((report.chunk_dir / "retrievers").glob("bm25-*/data/retriever.json"))
    part_meta.write_text(json.dumps(json.loads(part_meta.read_text())))  # same content, other bytes
    with pytest.raises(CorruptIndexError, match="bm25-.*retriever.json: SHA-256 differs .*--rebuild"):
        ensure_index(snapshot, store, make_chunker("function"), [hybrid])  # the part's own manifest disagrees
    part_manifest = part_meta.parent.parent / "manifest.json"  # as if the part had been rebuilt to these bytes
    payload = json.loads(part_manifest.read_text())
    payload["meta_sha256"] = file_sha256(part_meta)
    part_manifest.write_text(json.dumps(payload))
    with pytest.raises(StaleIndexError, match="links"):
        open_index(snapshot, store, make_chunker("function"), hybrid)
    hdir = next((report.chunk_dir / "retrievers").glob("hybrid-*"))
    pattern = "bm25-.*retriever.json: SHA-256 differs from the one recorded in .*hybrid-.*/data/retriever.json"
    with pytest.raises(CorruptIndexError, match=pattern) as err:
        load_retriever(hdir / "data")
    assert err.value.path == part_meta
    assert ensure_index(snapshot, store, make_chunker("function"), [hybrid]).built == ["hybrid"]
    assert open_index(snapshot, store, make_chunker("function"), hybrid).retriever.search("discount")


def test_missing_part_of_a_hybrid_is_rebuilt(snapshot: Path, tmp_path: Path, tiny_model_dir: Path) -> None:
    """A deleted part directory: opening the hybrid says it was never built; ensure_index rebuilds and re-links."""
    import shutil

    store = tmp_path / "store"
    hybrid = make_retriever("hybrid", model=str(tiny_model_dir))
    report = ensure_index(snapshot, store, make_chunker("function"), [hybrid])
    shutil.rmtree(next((report.chunk_dir / "retrievers").glob("potion-*")))
    with pytest.raises(FileNotFoundError, match="potion-"):
        open_index(snapshot, store, make_chunker("function"), hybrid)
    assert ensure_index(snapshot, store, make_chunker("function"), [hybrid]).built == ["potion"]
    assert open_index(snapshot, store, make_chunker("function"), hybrid).retriever.n_docs == 5


def test_linking_checks_the_part_directories(tmp_path: Path, tiny_model_dir: Path, sample_chunks: list[Chunk]) -> None:
    """Linking refuses a wrong number of parts, a part index of another config, and parts of different sizes."""
    from swe_explore.retrievers.hybrid import HybridRetriever

    bm25, potion = make_retriever("bm25"), make_retriever("potion", model=str(tiny_model_dir))
    dirs = {}
    for name, retriever, chunks in (
        ("bm25", bm25, sample_chunks),
        ("potion", potion, sample_chunks),
        ("short", make_retriever("potion", model=str(tiny_model_dir)), sample_chunks[:2]),
    ):
        retriever.build(chunks)
        dirs[name] = tmp_path / name
        dirs[name].mkdir()
        save_retriever(retriever, dirs[name])
    hybrid = HybridRetriever([make_retriever("bm25"), make_retriever("potion", model=str(tiny_model_dir))])
    for i, (part_dirs, message) in enumerate(
        [
            ([dirs["bm25"]], "1 part directories for 2 parts"),
            ([dirs["bm25"], dirs["bm25"]], "holds a 'bm25' index, expected 'potion'"),
            ([dirs["bm25"], dirs["short"]], "different numbers of chunks"),
        ]
    ):
        target = tmp_path / f"h{i}"
        target.mkdir()
        with pytest.raises((ValueError, CorruptIndexError), match=message):
            save_retriever(hybrid, target, part_dirs)
    other = HybridRetriever([make_retriever("bm25", k1=0.5), make_retriever("potion", model=str(tiny_model_dir))])
    (tmp_path / "h9").mkdir()
    with pytest.raises(
        CorruptIndexError,
        match=r"config differs from the one part 0 of the composite expects.*k1=1.5 "
        r"\(expected 0.5\)",
    ) as err:
        save_retriever(other, tmp_path / "h9", [dirs["bm25"], dirs["potion"]])
    assert err.value.path == dirs["bm25"] / "retriever.json"
    (tmp_path / "ok").mkdir()
    save_retriever(hybrid, tmp_path / "ok", [dirs["bm25"], dirs["potion"]])
    assert sorted(p.name for p in (tmp_path / "ok").iterdir()) == ["retriever.json"]
    loaded = load_retriever(tmp_path / "ok")
    hybrid.build(sample_chunks)
    assert loaded.search("cookie timeout", 5) == hybrid.search("cookie timeout", 5) != []


def _retriever_dir(chunk_dir: Path, name: str) -> Path:
    """The one retriever directory of that name under a chunker directory."""
    (rdir,) = (chunk_dir / "retrievers").glob(f"{name}-*")
    return rdir


def test_hand_edited_retriever_config_is_refused(snapshot: Path, tmp_path: Path) -> None:
    """A changed valid value (BM25 k1) in retriever.json is not used silently: opening and reusing the index
    raise CorruptIndexError naming retriever.json and --rebuild; rebuild=True restores the asked-for config."""
    store = tmp_path / "store"
    report = _build(snapshot, store)
    meta_path = _retriever_dir(report.chunk_dir, "bm25") / "data" / "retriever.json"
    meta = json.loads(meta_path.read_text())
    assert (meta["config"]["k1"], meta["config"]["b"]) == (1.5, 0.75)
    meta["config"].update(k1=9.0, b=0.0)
    meta_path.write_text(json.dumps(meta))
    pattern = (
        r"bm25-.*/data/retriever.json: config differs .*: b=0.0 \(expected 0.75\), k1=9.0 \(expected 1.5\); "
        r"rerun with --rebuild"
    )
    with pytest.raises(CorruptIndexError, match=pattern) as err:
        open_index(snapshot, store, make_chunker("function"), make_retriever("bm25"))
    assert err.value.path == meta_path
    with pytest.raises(CorruptIndexError, match=pattern):
        _build(snapshot, store)  # never "up to date"
    assert _build(snapshot, store, rebuild=True).built == ["chunks", "bm25"]
    loaded = open_index(snapshot, store, make_chunker("function"), make_retriever("bm25")).retriever
    assert loaded.config() == make_retriever("bm25").config()


def test_any_edit_of_retriever_json_is_detected(snapshot: Path, tmp_path: Path) -> None:
    """retriever.json's SHA-256 is recorded in the store manifest, so even an edit outside the config is caught."""
    store = tmp_path / "store"
    report = _build(snapshot, store)
    rdir = _retriever_dir(report.chunk_dir, "bm25")
    manifest = json.loads((rdir / "manifest.json").read_text())
    meta_path = rdir / "data" / "retriever.json"
    assert manifest["meta_sha256"] == file_sha256(meta_path)
    meta = json.loads(meta_path.read_text())
    meta["note"] = "hand edit"
    meta_path.write_text(json.dumps(meta))
    for call in (
        lambda: _build(snapshot, store),
        lambda: open_index(snapshot, store, make_chunker("function"), make_retriever("bm25")),
    ):
        with pytest.raises(CorruptIndexError, match="SHA-256 differs from the one recorded in .*manifest.json") as err:
            call()
        assert err.value.path == meta_path


def _damage(path: Path, how: str) -> None:
    """Truncate a file to half its size, flip its last byte, or delete it."""
    data = path.read_bytes()
    if how == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif how == "edit":
        path.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
    else:
        path.unlink()


@pytest.mark.parametrize("how", ["truncate", "edit", "delete"])
@pytest.mark.parametrize(
    ("name", "file"),
    [
        ("bm25", "tf.npz"),
        ("bm25", "vocab.json"),
        ("tfidf", "idf.npy"),
        ("tfidf", "matrix.npz"),
        ("potion", "vectors.npy"),
        ("faiss", "index.faiss"),
    ],
)
def test_damaged_retriever_file_is_never_up_to_date(
    snapshot: Path, tmp_path: Path, tiny_model_dir: Path, name: str, file: str, how: str
) -> None:
    """A truncated, edited or deleted data file makes ensure_index raise CorruptIndexError naming it and --rebuild
    (not reuse it); rebuild=True rebuilds it and the index is reused again."""
    store = tmp_path / "store"
    options = {"model": str(tiny_model_dir)} if name in ("potion", "faiss") else {}

    def build(rebuild: bool = False) -> BuildReport:
        return ensure_index(
            snapshot, store, make_chunker("function"), [make_retriever(name, **options)], rebuild=rebuild
        )

    report = build()
    path = _retriever_dir(report.chunk_dir, name) / "data" / file
    original = path.read_bytes()
    _damage(path, how)
    reason = {"truncate": "bytes, expected", "edit": "SHA-256 differs", "delete": "file is missing"}[how]
    with pytest.raises(CorruptIndexError, match=f"{reason}.*; rerun with --rebuild to rebuild it$") as err:
        build()
    assert err.value.path == path
    assert build(rebuild=True).built == ["chunks", name]
    assert path.read_bytes() == original  # builds are deterministic
    assert build().reused == ["chunks", name]


@pytest.mark.parametrize("file", ["chunks.json", "chunks.npz"])
def test_edited_chunk_table_is_detected(snapshot: Path, tmp_path: Path, file: str) -> None:
    """The chunker manifest records the chunk table's sizes and SHA-256: a same-size edit is caught by both
    ensure_index and open_index, naming the file and --rebuild."""
    store = tmp_path / "store"
    report = _build(snapshot, store)
    manifest = json.loads((report.chunk_dir / "manifest.json").read_text())
    assert sorted(manifest["files"]) == ["chunks.json", "chunks.npz"]
    path = report.chunk_dir / file
    if file == "chunks.json":
        path.write_text(path.read_text().replace('"slugify"', '"slugifx"'))  # a symbol renamed, same size
    else:
        _damage(path, "edit")
    for call in (
        lambda: _build(snapshot, store),
        lambda: open_index(snapshot, store, make_chunker("function"), make_retriever("bm25")),
    ):
        with pytest.raises(CorruptIndexError, match="SHA-256 differs.*--rebuild") as err:
            call()
        assert err.value.path == path
    assert _build(snapshot, store, rebuild=True).built == ["chunks", "bm25"]


def test_store_without_recorded_checksums_still_opens(snapshot: Path, tmp_path: Path) -> None:
    """Manifests written before the checksums were recorded (no files / meta_sha256) are read as before."""
    store = tmp_path / "store"
    report = _build(snapshot, store)
    for path, key in (
        (report.chunk_dir / "manifest.json", "files"),
        (_retriever_dir(report.chunk_dir, "bm25") / "manifest.json", "meta_sha256"),
    ):
        payload = json.loads(path.read_text())
        del payload[key]
        path.write_text(json.dumps(payload))
    assert _build(snapshot, store).reused == ["chunks", "bm25"]
    assert open_index(snapshot, store, make_chunker("function"), make_retriever("bm25")).retriever.n_docs == 5


def test_unreadable_manifest_says_rebuild(snapshot: Path, tmp_path: Path) -> None:
    """A retriever manifest that is not JSON is a CorruptIndexError naming it and --rebuild."""
    store = tmp_path / "store"
    report = _build(snapshot, store)
    manifest = _retriever_dir(report.chunk_dir, "bm25") / "manifest.json"
    manifest.write_text("{not json")
    with pytest.raises(CorruptIndexError, match="manifest.json: unreadable JSON.*rerun with --rebuild") as err:
        _build(snapshot, store)
    assert err.value.path == manifest
    assert _build(snapshot, store, rebuild=True).built == ["chunks", "bm25"]


def test_undecodable_file_name_skips_only_that_file(tmp_path: Path) -> None:
    """A snapshot with one file whose name is not UTF-8 and one good file: the good one is indexed and found, the
    other is counted and shown in the walk stats as undecodable_name."""
    root = tmp_path / "snap"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "ok.py").write_text("def ok_func():\n    return 5\n")
    with open(os.path.join(os.fsencode(root / "pkg"), b"bad\xffname.py"), "wb") as handle:
        handle.write(b"def f():\n    return 1\n")
    report = _build(root, tmp_path / "store")
    assert report.built == ["chunks", "bm25"]
    assert report.counts == {"files": 1, "lines": 2, "chunks": 1}
    walk = json.loads((report.chunk_dir / "manifest.json").read_text())["stats"]["walk"]
    assert walk["skipped"] == {"undecodable_name": 1}
    assert walk["examples"] == {"undecodable_name": ["pkg/bad\\xffname.py"]}
    assert _build(root, tmp_path / "store").reused == ["chunks", "bm25"]  # the stat signature handles the name too
    index = open_index(root, tmp_path / "store", make_chunker("function"), make_retriever("bm25"))
    assert [(c.path, c.start, c.end) for c in index.chunks] == [("pkg/ok.py", 1, 2)]
    assert index.retriever.search("ok_func")[0].index == 0


def test_explicit_model_wins_over_the_env_var(
    snapshot: Path, tmp_path: Path, tiny_model_dir: Path, tiny_model_factory: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Built with model A, then with $SWE_EXPLORE_POTION_MODEL naming model B: asking for A reuses and opens the
    A index (Potion, FAISS, hybrid); rebuilding with A works too."""
    model = str(tiny_model_factory({"cart": [1.0, 0.0], "discount": [0.0, 1.0]}))  # type: ignore[operator]
    other = tiny_model_dir
    store = tmp_path / "store"

    def wanted() -> list[Retriever]:
        return [
            make_retriever("potion", model=model),
            make_retriever("faiss", model=model),
            make_retriever("hybrid", model=model),
        ]

    ensure_index(snapshot, store, make_chunker("function"), wanted())
    monkeypatch.setenv("SWE_EXPLORE_POTION_MODEL", str(other))
    assert ensure_index(snapshot, store, make_chunker("function"), wanted()).built == []
    assert ensure_index(snapshot, store, make_chunker("function"), wanted(), rebuild=True).built[-1] == "hybrid"
    for retriever in wanted():
        index = open_index(snapshot, store, make_chunker("function"), retriever)
        assert index.retriever.config() == retriever.config()
        top = index.chunks[index.retriever.search("discount", 3)[0].index]
        assert (top.path, top.start, top.end) == ("pkg/cart.py", 6, 7)
    assert make_retriever("potion").config()["model"] == str(other)  # no model given: the env var
