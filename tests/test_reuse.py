"""Content-addressed reuse (indexes/cache.py, indexes/reuse.py, ensure_index(reuse=True), index_repos.py): indexes
assembled from cached pieces are byte-identical to indexes built without them, pieces are reused per file and
per chunk, damaged entries are never used, and the run report gives the hit rate."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from swe_explore.chunking.registry import chunk_files, make_chunker
from swe_explore.chunking.walk import walk_snapshot
from swe_explore.commands.index import main as index_main
from swe_explore.indexes import cache as cache_module
from swe_explore.indexes.build import BuildReport, ensure_index
from swe_explore.indexes.reuse import _decode_counts, _encode_counts, _merge_counts, _split_counts
from swe_explore.retrievers.base import Retriever
from swe_explore.retrievers.features import TermCounts, counts_from_tokens
from swe_explore.retrievers.potion import Embedder, embed_chunks
from swe_explore.retrievers.registry import make_retriever

ROOT = Path(__file__).resolve().parent.parent
MINI_REPOS = ROOT / "swe_explore" / "data" / "mini" / "repos"
SNAPSHOTS = sorted(p for p in MINI_REPOS.iterdir() if p.is_dir())

A_V1 = "def alpha(x):\n    return x + 1\n\n\ndef beta(y):\n    return y * 2\n"


def _write_snapshot(root: Path, a_text: str) -> Path:
    """Three files: pkg/a.py (functions alpha and beta), pkg/b.py (gamma), README.md (one window)."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text(a_text)
    (root / "pkg" / "b.py").write_text("def gamma():\n    return 'gamma'\n")
    (root / "README.md").write_text("# Demo\n\nAlpha and beta.\n")
    return root


def _retrievers(model: Path) -> list[Retriever]:
    embed = {"model": str(model)}
    return [
        make_retriever("bm25"),
        make_retriever("tfidf"),
        make_retriever("potion", **embed),
        make_retriever("faiss", **embed),
        make_retriever("hybrid", **embed),
    ]


def _build(snapshot: Path, store: Path, model: Path, reuse: bool, **kwargs: Any) -> BuildReport:
    return ensure_index(snapshot, store, make_chunker("function"), _retrievers(model), reuse=reuse, **kwargs)


def _index_files(tree: dict[str, bytes]) -> dict[str, bytes]:
    """A store's files without the cache."""
    return {k: v for k, v in tree.items() if not k.startswith("_cache/")}


def test_reused_pieces_give_byte_identical_indexes(
    tmp_path: Path, tiny_model_dir: Path, store_tree: Callable[[Path], dict[str, bytes]]
) -> None:
    """The mini snapshots indexed with every retriever without reuse, with reuse into an empty cache, and with
    reuse from a full cache (every piece found) give the same index files."""
    plain, cold, warm = tmp_path / "plain", tmp_path / "cold", tmp_path / "warm"
    for snapshot in SNAPSHOTS:
        assert _build(snapshot, plain, tiny_model_dir, reuse=False).cache == {}
        _build(snapshot, cold, tiny_model_dir, reuse=True)
    shutil.copytree(cold / "_cache", warm / "_cache")
    reports = [_build(snapshot, warm, tiny_model_dir, reuse=True) for snapshot in SNAPSHOTS]
    for report in reports:
        assert {kind: stats["misses"] + stats["corrupt"] for kind, stats in report.cache.items()} == {
            "chunks": 0,
            "term_counts": 0,
            "vectors": 0,
        }
        assert report.cache["chunks"]["hits"] == report.counts["files"]
        assert report.cache["vectors"]["hits"] == report.counts["chunks"]
    assert not (plain / "_cache").exists()
    expected = store_tree(plain)
    assert _index_files(store_tree(cold)) == expected
    assert _index_files(store_tree(warm)) == expected


def test_a_changed_function_is_the_only_piece_computed_again(
    tmp_path: Path, tiny_model_dir: Path, store_tree: Callable[[Path], dict[str, bytes]]
) -> None:
    """v2 changes beta's body: of its 3 files only pkg/a.py is chunked again, and of its 4 chunks (alpha, beta,
    gamma, the README window) only beta is tokenized and embedded again; v2's index equals one built without
    reuse."""
    v1 = _write_snapshot(tmp_path / "v1", A_V1)
    v2 = _write_snapshot(tmp_path / "v2", A_V1.replace("y * 2", "y * 3"))
    store = tmp_path / "store"
    first = _build(v1, store, tiny_model_dir, reuse=True)
    assert (first.cache["vectors"]["hits"], first.cache["vectors"]["misses"]) == (0, 4)
    second = _build(v2, store, tiny_model_dir, reuse=True)
    assert {kind: (s["hits"], s["misses"]) for kind, s in second.cache.items()} == {
        "chunks": (2, 1),
        "term_counts": (3, 1),
        "vectors": (3, 1),
    }
    plain = tmp_path / "plain"
    _build(v2, plain, tiny_model_dir, reuse=False)
    assert _index_files(store_tree(store)).items() >= store_tree(plain).items()


def test_another_config_or_code_version_reuses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Term counts are keyed by the tokenizer config, every piece by the toolkit's code and library versions."""
    v1 = _write_snapshot(tmp_path / "v1", A_V1)
    store = tmp_path / "store"
    ensure_index(v1, store, make_chunker("function"), [make_retriever("bm25")], reuse=True)
    other = make_retriever("bm25", tokenizer={"stopwords": "none"})
    report = ensure_index(v1, store, make_chunker("function"), [other], reuse=True)
    assert report.cache["term_counts"] == {
        "hits": 0,
        "misses": 4,
        "corrupt": 0,
        "write_errors": 0,
        "corrupt_indexes": 0,
    }
    monkeypatch.setattr(cache_module, "software_fingerprint", lambda: "0" * 64)
    report = ensure_index(v1, store, make_chunker("function"), [make_retriever("bm25")], rebuild=True, reuse=True)
    assert (report.cache["chunks"]["hits"], report.cache["term_counts"]["hits"]) == (0, 0)


def test_damaged_entries_and_indexes_are_never_used(
    tmp_path: Path, tiny_model_dir: Path, store_tree: Callable[[Path], dict[str, bytes]]
) -> None:
    """A flipped byte in a vectors entry makes that entry corrupt (recomputed), one in a term-counts pack index
    makes the whole index skipped; the rebuilt index is still the one built without reuse."""
    v1 = _write_snapshot(tmp_path / "v1", A_V1)
    store, plain = tmp_path / "store", tmp_path / "plain"
    _build(v1, store, tiny_model_dir, reuse=True)
    _build(v1, plain, tiny_model_dir, reuse=False)
    (pack,) = (store / "_cache" / "vectors").glob("*/*.pack")
    data = bytearray(pack.read_bytes())
    data[0] ^= 0xFF  # the first entry's payload
    pack.write_bytes(bytes(data))
    (idx,) = (store / "_cache" / "term_counts").glob("*/*.idx")
    data = bytearray(idx.read_bytes())
    data[20] ^= 0xFF
    idx.write_bytes(bytes(data))
    report = _build(v1, store, tiny_model_dir, reuse=True, rebuild=True)
    assert (report.cache["vectors"]["hits"], report.cache["vectors"]["corrupt"]) == (3, 1)
    assert report.cache["term_counts"]["corrupt_indexes"] == 1 and report.cache["term_counts"]["misses"] == 4
    assert _index_files(store_tree(store)) == store_tree(plain)
    again = _build(v1, store, tiny_model_dir, reuse=True, rebuild=True)  # the rebuild stored good copies
    assert (again.cache["vectors"]["hits"], again.cache["term_counts"]["hits"]) == (4, 4)


def test_of_two_intact_copies_of_an_entry_the_newest_is_read(tmp_path: Path) -> None:
    """Two packs hold the key d1 (b"old", then b"new" a second later): b"new" is read; with the newer copy
    damaged, b"old" (a hit, not corrupt); d-old, alone in its prefix run, is read as before."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()

    def namespace() -> cache_module.CacheNamespace:
        return cache_module.ContentCache(tmp_path / "store", lambda: scratch).namespace("chunks", {"k": 1})

    first = namespace()
    first.put("d1", b"old")
    first.put("d-old", b"old")
    first.close()
    time.sleep(1.1)  # pack names begin with the second they were written
    second = namespace()
    second.put("d1", b"new")
    second.close()
    reader = namespace()
    assert reader.get_many(["d1", "d-old", "absent"]) == [b"new", b"old", None]
    assert (reader.stats.hits, reader.stats.misses, reader.stats.corrupt) == (2, 1, 0)
    newest = sorted((tmp_path / "store" / "_cache" / "chunks").glob("*/*.pack"))[-1]
    data = bytearray(newest.read_bytes())
    data[0] ^= 0xFF
    newest.write_bytes(bytes(data))
    again = namespace()
    assert again.get_many(["d1"]) == [b"old"]
    assert (again.stats.hits, again.stats.corrupt) == (1, 0)


def test_a_malformed_graph_piece_is_replaced_by_the_build_that_rejects_it(tmp_path: Path) -> None:
    """An intact but malformed graph piece (stored through the cache as b"garbage") for pkg/a.py: the first build
    counts it corrupt (and misses the two other files' pieces) and stores a good one, the second reads that one
    (all three pieces hits); the graph equals the one built without reuse."""
    from swe_explore.indexes.graph_store import GRAPH_DIR
    from swe_explore.indexes.reuse import _graph_code_fingerprint

    v1 = _write_snapshot(tmp_path / "v1", A_V1)
    files, _ = walk_snapshot(v1)
    chunker = make_chunker("function")
    (tmp_path / "scratch").mkdir()
    seeded = cache_module.ContentCache(tmp_path / "store", lambda: tmp_path / "scratch")
    config = {"graph_code": _graph_code_fingerprint(), "piece": "file+imports", "chunker": dict(chunker.config())}
    digest = next(cache_module.file_digest(f) for f in files if f.path == "pkg/a.py")
    seeded.namespace("graph_names", config).put(digest, b"garbage")
    seeded.close()
    time.sleep(1.1)
    reports = []
    for store in ("store", "store", "plain"):
        retrievers = [make_retriever("bm25")]
        reports.append(
            ensure_index(
                v1,
                tmp_path / store,
                chunker,
                retrievers,
                reuse=store == "store",
                graph=True,
                rebuild=True,
                graph_worker=False,
            )
        )
    graph_names = [r.cache.get("graph_names", {}) for r in reports[:2]]
    assert [(g["hits"], g["corrupt"], g["misses"]) for g in graph_names] == [(0, 1, 2), (3, 0, 0)]
    graphs = [
        {p.name: p.read_bytes() for p in next((tmp_path / store / v1.name).glob(f"*/{GRAPH_DIR}")).iterdir()}
        for store in ("store", "plain")
    ]
    assert graphs[0] == graphs[1]


def test_term_counts_from_pieces_equal_counting_all_chunks() -> None:
    """Per-chunk pieces (encoded, decoded) merge into exactly the TermCounts of counting all chunks at once:
    same terms, same int32 CSR arrays; a chunk without tokens and a non-ASCII term included."""
    docs = [["beta", "alpha", "beta"], [], ["zeta"], ["alpha", "größe", "zz", "alpha"]]
    whole = counts_from_tokens(docs)
    split = _split_counts(whole)
    assert split is not None
    decoded = _decode_counts([_encode_counts(p) for p in split])
    pieces = [p for p in decoded if p is not None]
    assert len(pieces) == len(decoded)  # every payload well-formed
    assert pieces[0] == (b"alpha\0beta", np.array([1, 2], dtype="<i4").tobytes())
    assert pieces[1] == (b"", b"")
    merged = _merge_counts(pieces)
    assert merged.terms == whole.terms == ["alpha", "beta", "größe", "zeta", "zz"]
    for attr in ("indptr", "indices", "data"):
        ours, theirs = getattr(merged.counts, attr), getattr(whole.counts, attr)
        assert ours.dtype == theirs.dtype and ours.tolist() == theirs.tolist()
    assert merged.counts.shape == (4, 5)


def test_split_counts_of_a_term_arrow_cannot_hold_are_the_same_bytes() -> None:
    """A lone surrogate (``surrogatepass``) cannot go through Arrow's strings: those pieces are joined in Python,
    with the bytes the Arrow join gives the other terms (UTF-8, NUL between terms, little-endian int32 counts)."""
    matrix = sp.csr_matrix(np.array([[1, 0, 2], [0, 0, 0], [3, 1, 0]], dtype=np.int32))
    three = np.array([3, 1], dtype="<i4").tobytes()
    plain = _split_counts(TermCounts(["a", "b\u00e9", "c"], matrix))
    surrogate = _split_counts(TermCounts(["a", "b\udc80", "c"], matrix))
    assert plain == [(b"a\0c", np.array([1, 2], dtype="<i4").tobytes()), (b"", b""), (b"a\0b\xc3\xa9", three)]
    assert surrogate == [(b"a\0c", np.array([1, 2], dtype="<i4").tobytes()), (b"", b""), (b"a\0b\xed\xb2\x80", three)]


def test_a_chunk_vector_does_not_depend_on_its_batch(tiny_model_dir: Path) -> None:
    """Embedding chunks in any grouping gives the same bytes per row (so per-chunk pieces can be stacked)."""
    files, _ = walk_snapshot(SNAPSHOTS[0])
    chunks, _ = chunk_files(files, make_chunker("function"))
    embedder = Embedder(str(tiny_model_dir), batch_size=3)
    whole = embed_chunks(embedder, chunks, ("path", "symbol", "text"))
    parts = [embed_chunks(embedder, chunks[i : i + 2], ("path", "symbol", "text")) for i in range(0, len(chunks), 2)]
    reverse = embed_chunks(embedder, chunks[::-1], ("path", "symbol", "text"))[::-1]
    assert whole.tobytes() == np.concatenate(parts).tobytes() == np.ascontiguousarray(reverse).tobytes()


def test_index_repos_reports_the_hit_rate_and_no_reuse_turns_it_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A TF-IDF run after a BM25 run on the same store finds every chunk's term counts (same tokenizer and fields);
    the summary line and the run report say so. With --no-reuse nothing is looked up or stored."""
    store = tmp_path / "store"
    assert index_main(["--repos", str(MINI_REPOS), "--out", str(store), "--retriever", "bm25", "--quiet"]) == 0
    first = json.loads(next((store / "_reports").glob("index-*.json")).read_text())
    n_chunks = sum(r["counts"]["chunks"] for r in first["snapshots"])
    n_files = sum(r["counts"]["files"] for r in first["snapshots"])
    assert first["cache"]["chunks"]["misses"] == n_files and first["job"]["reuse"] is True
    capsys.readouterr()
    assert index_main(["--repos", str(MINI_REPOS), "--out", str(store), "--retriever", "tfidf", "--quiet"]) == 0
    assert f"cache hit rate term_counts 100.0% ({n_chunks}/{n_chunks} chunks)" in capsys.readouterr().out
    runs = [json.loads(p.read_text()) for p in (store / "_reports").glob("index-*.json")]
    second = next(run for run in runs if run["job"]["retrievers"][0][0] == "tfidf")
    assert second["cache"] == {
        "term_counts": {
            "hits": n_chunks,
            "misses": 0,
            "corrupt": 0,
            "write_errors": 0,
            "corrupt_indexes": 0,
            "hit_rate": 1.0,
        }
    }
    off = tmp_path / "off"
    assert index_main(["--repos", str(MINI_REPOS), "--out", str(off), "--no-reuse", "--quiet"]) == 0
    assert "cache hit rate" not in capsys.readouterr().out
    assert not (off / "_cache").exists()
    report = json.loads(next((off / "_reports").glob("index-*.json")).read_text())
    assert report["job"]["reuse"] is False and report["cache"] == {}
