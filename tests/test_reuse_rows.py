"""Term counts joined from the previous build's rows (indexes/reuse_rows.py): hand-computed joins, rows kept only
inside keeping_rows, per namespace and while the cache still lists the previous build's packs, and a batch whose
snapshots take rows from the one before writes the index files a build without reuse writes."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from swe_explore.chunking.registry import chunk_files, make_chunker
from swe_explore.chunking.walk import walk_snapshot
from swe_explore.commands.index import main as index_main
from swe_explore.indexes import reuse as reuse_module
from swe_explore.indexes.build import ensure_index
from swe_explore.indexes.cache import CacheNamespace, ContentCache, file_digest
from swe_explore.indexes.reuse_rows import (
    join_counts,
    keeping_rows,
    previous_rows,
    remember_counts,
)
from swe_explore.retrievers.features import TermCounts, counts_from_tokens
from swe_explore.retrievers.registry import make_retriever


def _counts(terms: list[str], rows: list[list[int]]) -> TermCounts:
    return TermCounts(terms, sp.csr_matrix(np.asarray(rows, dtype=np.int32).reshape(len(rows), len(terms))))


def test_join_counts_merges_two_sorted_vocabularies_and_drops_unused_terms() -> None:
    """Rows 0 and 2 come with terms b, c, d, row 1 with a, d, e (c and e in no row): the result has terms a, b, d
    and the rows, with their counts, in row order; arrays as counts_from_tokens builds them."""
    first = (np.array([0, 2]), _counts(["b", "c", "d"], [[1, 0, 0], [0, 0, 2]]))
    second = (np.array([1]), _counts(["a", "d", "e"], [[3, 1, 0]]))
    joined = join_counts(3, first, second)
    assert joined.terms == ["a", "b", "d"]
    assert joined.counts.toarray().tolist() == [[0, 1, 0], [3, 0, 1], [0, 0, 2]]
    expected = counts_from_tokens([["b"], ["a", "a", "a", "d"], ["d", "d"]])
    assert joined.terms == expected.terms
    for attr in ("indptr", "indices", "data"):
        ours, theirs = getattr(joined.counts, attr), getattr(expected.counts, attr)
        assert ours.dtype == theirs.dtype and ours.tolist() == theirs.tolist()


def test_join_counts_equals_counting_all_rows_at_once() -> None:
    """200 random splits of 40 random token lists (empty ones, shared and non-ASCII terms; one side's terms
    padded with unused ones, as a previous build's are) join into exactly counts_from_tokens of all rows."""
    rng = np.random.default_rng(7)
    words = ["a", "b", "zz", "ä", "größe", "x_1", "X", "字", "_", "beta"]
    for _ in range(200):
        docs = [[str(w) for w in rng.choice(words, size=int(rng.integers(0, 6)))] for _ in range(40)]
        first = np.flatnonzero(rng.random(40) < 0.7)
        second = np.setdiff1d(np.arange(40), first)
        a = counts_from_tokens([docs[i] for i in first.tolist()] + [["unused", "ü"]])
        a = TermCounts(a.terms, a.counts[: len(first)])
        b = counts_from_tokens([docs[i] for i in second.tolist()])
        joined, expected = join_counts(40, (first, a), (second, b)), counts_from_tokens(docs)
        assert joined.terms == expected.terms
        for attr in ("indptr", "indices", "data"):
            ours, theirs = getattr(joined.counts, attr), getattr(expected.counts, attr)
            assert ours.dtype == theirs.dtype and ours.tolist() == theirs.tolist()


def test_join_counts_with_an_empty_side_and_non_ascii_terms() -> None:
    """All rows from one side: the other side has no rows; terms keep code-point order (z < ä < 字)."""
    first = (np.array([1, 0]), _counts(["z", "ä", "字"], [[0, 1, 1], [2, 0, 0]]))
    second = (np.zeros(0, dtype=np.int64), TermCounts([], sp.csr_matrix((0, 0), dtype=np.int32)))
    joined = join_counts(2, first, second)
    assert joined.terms == ["z", "ä", "字"]
    assert joined.counts.toarray().tolist() == [[2, 0, 0], [0, 1, 1]]


def test_join_counts_refuses_positions_that_do_not_cover_every_row_once() -> None:
    one = (np.array([0]), _counts(["a"], [[1]]))
    with pytest.raises(ValueError, match="do not cover 3 rows"):
        join_counts(3, one, (np.array([0]), _counts(["b"], [[1]])))


def test_rows_are_kept_only_inside_keeping_rows_and_per_namespace(tmp_path: Path) -> None:
    """Outside the block nothing is kept or found; inside, the rows of known digests are found (positions in
    increasing order), another namespace finds nothing, nor does a build whose pieces are not all stored, and
    keeping_rows(False) drops what was kept."""
    (tmp_path / "scratch").mkdir()
    cache = ContentCache(tmp_path / "store", lambda: tmp_path / "scratch")
    space = cache.namespace("term_counts", {"feature": {"tokenizer": "x"}})
    other = cache.namespace("term_counts", {"feature": {"tokenizer": "y"}})
    value = _counts(["a", "b"], [[1, 0], [0, 2]])
    remember_counts(space, ["d1", "d2"], value)
    assert previous_rows(space, ["d1"]) is None
    with keeping_rows():
        assert previous_rows(space, ["d1"]) is None
        remember_counts(space, ["d1", "d2"], value)
        found = previous_rows(space, ["d9", "d2", "d1"])
        assert found is not None
        assert found[0].tolist() == [1, 2]
        assert found[1].terms == ["a", "b"] and found[1].counts.toarray().tolist() == [[0, 2], [1, 0]]
        assert previous_rows(space, ["d9"]) is None
        assert previous_rows(other, ["d1"]) is None
        space.put("d3", b"piece")  # the build's pieces not written yet: its rows are not used
        assert previous_rows(space, ["d1"]) is None
        space.flush()
        assert previous_rows(space, ["d1"]) is not None
        space.stats.write_errors += 1  # a piece could not be stored: its rows would be hits the cache lacks
        assert previous_rows(space, ["d1"]) is None
        space.stats.write_errors = 0
        with pytest.raises(ValueError, match="1 digests for 2 rows"):
            remember_counts(space, ["d1"], value)
    assert previous_rows(space, ["d1"]) is None
    with keeping_rows(enabled=False), keeping_rows():
        assert previous_rows(space, ["d1"]) is None


def _snapshot(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_a_batch_joining_rows_writes_the_index_a_build_without_reuse_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_tree: Callable[[Path], dict[str, bytes]]
) -> None:
    """Three snapshots indexed in one batch: v2 changes beta (a new term) and drops pkg/b.py (gamma's terms go
    unused), v3 adds a file. Each later snapshot takes the rows of the chunks it shares with the one before (one
    join each) and its index files equal those of a batch without reuse; the hits count those rows."""
    a_v1 = "def alpha(x):\n    return x + 1\n\n\ndef beta(y):\n    return y * 2\n"
    common = {"pkg/a.py": a_v1, "README.md": "# Demo\n\nAlpha and beta.\n"}
    repos = tmp_path / "repos"
    _snapshot(repos / "v1", common | {"pkg/b.py": "def gamma():\n    return 'gamma'\n"})
    _snapshot(repos / "v2", common | {"pkg/a.py": a_v1.replace("y * 2", "y * delta_value")})
    _snapshot(repos / "v3", common | {"pkg/c.py": "def epsilon(z):\n    return z\n"})
    joins: list[int] = []
    real_join = join_counts  # the function indexes.reuse calls

    def counting_join(n_rows: int, *parts: Any) -> TermCounts:
        joins.append(n_rows)
        return real_join(n_rows, *parts)

    monkeypatch.setattr(reuse_module, "join_counts", counting_join)
    common_args = ["--repos", str(repos), "--jobs", "1", "--backend", "sequential", "--no-history", "--quiet"]
    assert index_main([*common_args, "--out", str(tmp_path / "reuse")]) == 0
    assert joins == [3, 4]  # v2 and v3 (3 and 4 chunks); v1 had no rows before it
    assert index_main([*common_args, "--out", str(tmp_path / "plain"), "--no-reuse"]) == 0
    reused = {k: v for k, v in store_tree(tmp_path / "reuse").items() if not k.startswith(("_cache/", "_reports/"))}
    plain = {k: v for k, v in store_tree(tmp_path / "plain").items() if not k.startswith("_reports/")}
    assert reused == plain and any(k.endswith("tf.npz") for k in plain)


def _versions(repos: Path) -> None:
    """The three snapshots of the batch test above."""
    a_v1 = "def alpha(x):\n    return x + 1\n\n\ndef beta(y):\n    return y * 2\n"
    common = {"pkg/a.py": a_v1, "README.md": "# Demo\n\nAlpha and beta.\n"}
    _snapshot(repos / "v1", common | {"pkg/b.py": "def gamma():\n    return 'gamma'\n"})
    _snapshot(repos / "v2", common | {"pkg/a.py": a_v1.replace("y * 2", "y * delta_value")})
    _snapshot(repos / "v3", common | {"pkg/c.py": "def epsilon(z):\n    return z\n"})


def test_a_cache_removed_during_a_batch_is_filled_again_not_counted_as_hits(tmp_path: Path) -> None:
    """v1 and v2 built in one block with the store's cache deleted between them (as ``store gc --cache`` may do):
    v2 takes none of v1's rows (0 hits; 2 file and 3 chunk misses, as in an empty cache) and stores every piece
    again, so the cache then holds each of v2's files and chunks."""
    _versions(tmp_path / "repos")
    store = tmp_path / "store"
    with keeping_rows():
        ensure_index(tmp_path / "repos" / "v1", store, make_chunker("function"), [make_retriever("bm25")], reuse=True)
        shutil.rmtree(store / "_cache")
        report = ensure_index(
            tmp_path / "repos" / "v2", store, make_chunker("function"), [make_retriever("bm25")], reuse=True
        )
    assert {k: (v["hits"], v["misses"]) for k, v in report.cache.items()} == {"chunks": (0, 2), "term_counts": (0, 3)}
    files, _ = walk_snapshot(tmp_path / "repos" / "v2")
    chunks, _ = chunk_files(files, make_chunker("function"))
    cache = ContentCache(store, lambda: tmp_path)
    chunker_space = cache.namespace("chunks", {"chunker": make_chunker("function").config()})
    assert None not in chunker_space.get_many([file_digest(f) for f in files]) and len(files) == 2
    spec = (make_retriever("bm25").feature_specs() or {})["counts"]
    counts_space = cache.namespace("term_counts", {"feature": json.loads(spec.config)})
    assert None not in counts_space.get_many([reuse_module._chunk_digest(c) for c in chunks]) and len(chunks) == 3


def test_a_later_build_still_lists_an_earlier_ones_packs_until_one_is_removed(tmp_path: Path) -> None:
    """A build that wrote one pack: a later build's namespace lists it (and a pack of its own too), an empty
    namespace or one whose directory was removed does not; the pack names are the written ones."""
    (tmp_path / "scratch").mkdir()

    def namespace() -> CacheNamespace:
        return ContentCache(tmp_path / "store", lambda: tmp_path / "scratch").namespace("chunks", {"chunker": {}})

    empty, first = namespace(), namespace()
    assert empty.pack_names() == frozenset()
    first.put("d1", b"one")
    first.close()
    (pack,) = [p.name for p in first.directory.iterdir() if p.suffix == ".pack"]
    assert first.pack_names() == {pack}
    assert not empty.still_lists(first)  # its listing was read before the pack was written
    later = namespace()
    later.put("d2", b"two")
    later.close()
    assert later.still_lists(first) and later.still_lists(later) and len(later.pack_names()) == 2
    shutil.rmtree(first.directory)
    assert not namespace().still_lists(first)
    assert namespace().still_lists(empty)
