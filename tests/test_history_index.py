"""The history index (indexes/history.py) and the history features (explore/history_features.py), on a 3-file
snapshot with a 4-commit history whose scores are computed by hand below."""

from __future__ import annotations

import math
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from swe_explore.chunking.history import (
    HISTORY_FILE,
    Commit,
    FileChange,
    History,
    HistoryColumns,
    read_history_columns,
    write_history,
)
from swe_explore.explore.features import (
    FEATURE_GROUPS,
    FROM_HISTORY,
    FROM_RETRIEVERS,
    CandidateConfig,
    SnapshotIndex,
    candidate_features,
)
from swe_explore.explore.fusion import FusionExplorer
from swe_explore.explore.history_features import history_ranking
from swe_explore.explore.ranker import DEFAULT_RANKER_MODEL, load_ensemble
from swe_explore.indexes.cache import ContentCache
from swe_explore.indexes.files import StaleIndexError
from swe_explore.indexes.history import (
    HistoryIndex,
    build_history_index,
    ensure_history_index,
    history_dir_for,
    is_fix,
    load_history_index,
    open_history_index,
)
from swe_explore.indexes.store import ReadOnlyStoreError

QUERY = "discount rounding"
IDS = [str(d) * 40 for d in (1, 2, 3, 4)]  # positions 0 (newest) .. 3
CART = "class Cart:\n    def total(self):\n        return sum(self.items)\n\n\ndef discount(x):\n    return x * 0.9\n"

# BM25 over the four messages (tokens: c0 fix/discount/rounding/cart, c1 add/slugify/helper,
# c2 closes/discount/shopping/carts, c3 initial/commit): c0 and c2 have the same length, so both hold "discount"
# with the same weight and c0 adds "rounding": sim(c0) = 1 and sim(c2) = idf(discount) / (idf(discount) +
# idf(rounding)) with the Lucene idf log(1 + (N - n + 0.5) / (n + 0.5)), N = 4.
IDF_DISCOUNT = math.log(1 + 2.5 / 2.5)
IDF_ROUNDING = math.log(1 + 3.5 / 1.5)
SIM2 = IDF_DISCOUNT / (IDF_DISCOUNT + IDF_ROUNDING)


def _history() -> History:
    return History(
        IDS[0],
        (
            Commit(
                IDS[0],
                400,
                "Fix discount rounding in cart",
                (
                    FileChange("pkg/cart.py", "M", None, ((5, 2, 5, 2),)),
                    FileChange("pkg/util.py", "M", None, ((1, 1, 1, 1),)),
                ),
            ),
            Commit(
                IDS[1], 300, "Add slugify helper", (FileChange("pkg/util.py", "M", None, ((0, 0, 1, 2), (3, 1, 2, 0))),)
            ),
            Commit(
                IDS[2],
                200,
                "Closes #12: discount for shopping carts",
                (
                    FileChange("pkg/cart.py", "M", None, ((1, 0, 1, 7),)),
                    FileChange("README.md", "A", None, ((0, 0, 1, 3),)),
                ),
            ),
            Commit(
                IDS[3],
                100,
                "Initial commit",
                (FileChange("pkg/cart.py", "A"), FileChange("pkg/util.py", "A"), FileChange("docs/old.md", "A")),
            ),
        ),
        {"max_commits": None, "since": None},
    )


@pytest.fixture()
def snapshot(tmp_path: Path) -> Path:
    """pkg/cart.py (Cart.total, discount), pkg/util.py (slugify), README.md; and its history file."""
    root = tmp_path / "snap"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "cart.py").write_text(CART)
    (root / "pkg" / "util.py").write_text("def slugify(text):\n    return text.lower().replace(' ', '-')\n")
    (root / "README.md").write_text("# Shop\n\nCarts and discounts.\n")
    write_history(root, _history())
    return root


def test_fix_rule() -> None:
    """Fix words and issue references are fix-like; a word that merely contains "fix" is not."""
    assert [is_fix(c.message) for c in _history().commits] == [True, False, True, False]
    assert is_fix("Resolves psf/requests#99") and is_fix("regression in 2.1") and is_fix("Crashed on empty input")
    assert not is_fix("Add prefix option") and not is_fix("Close the socket")


def test_index_holds_commits_paths_and_hunk_spans(snapshot: Path, tmp_path: Path) -> None:
    """Arrays of the module docstring; a pure deletion (3,1,2,0) is the span (2, 3) around it."""
    h = load_history_index(snapshot, tmp_path / "store")
    assert h is not None
    assert h.commit_ids == IDS and h.base_commit == IDS[0]
    assert h.paths == ["README.md", "docs/old.md", "pkg/cart.py", "pkg/util.py"]
    assert h.times.tolist() == [400, 300, 200, 100] and h.fix.tolist() == [1, 0, 1, 0]
    assert [h.commit_paths(i).tolist() for i in range(4)] == [[2, 3], [3], [0, 2], [1, 2, 3]]
    assert [h.spans(e).tolist() for e in range(h.path_ids.size)] == [
        [[5, 6]],
        [[1, 1]],
        [[1, 2], [2, 3]],
        [[1, 3]],
        [[1, 7]],
        [],
        [],
        [],
    ]
    assert h.path_entries("pkg/cart.py").tolist() == [0, 4, 6]
    assert h.similarities(QUERY).tolist() == pytest.approx([1.0, 0.0, SIM2, 0.0])


def test_buglocator_ranking_by_hand(snapshot: Path, tmp_path: Path) -> None:
    """Score(f) = Σ sim(c) / |paths(c)| over the similar commits c that changed f: cart 1/2 + SIM2/2, util 1/2,
    README SIM2/2; docs/old.md is not in the snapshot and no similar commit changed it."""
    h = load_history_index(snapshot, tmp_path / "store")
    assert h is not None
    ranking = history_ranking(h, QUERY, {"pkg/cart.py", "pkg/util.py", "README.md"})
    assert ranking.similar.tolist() == [0, 2]
    assert dict(ranking.file_score) == pytest.approx(
        {"pkg/cart.py": 0.5 + SIM2 / 2, "pkg/util.py": 0.5, "README.md": SIM2 / 2}
    )
    assert ranking.ranked == ("pkg/cart.py", "pkg/util.py", "README.md")
    assert history_ranking(h, QUERY, {"pkg/util.py"}, top_commits=1).file_score == {
        "pkg/cart.py": 0.5,
        "pkg/util.py": 0.5,
    }


def _explorer(store: Path, history: int = 2) -> FusionExplorer:
    return FusionExplorer(
        ranker="priors", candidates=CandidateConfig(mentions=False, graph=False, history=history), store=store
    )


def _features(
    index: SnapshotIndex, history: int
) -> tuple[list[tuple[str, int, int]], dict[str, list[float]], list[int]]:
    names = FEATURE_GROUPS["history"]
    cands = candidate_features(QUERY, index, CandidateConfig(mentions=False, graph=False, history=history), names)
    chunks = [index.chunks[i] for i in cands.ids.tolist()]
    keys = [(c.path, c.start, c.end) for c in chunks]
    return keys, {n: cands.features[:, j].astype(float).tolist() for j, n in enumerate(names)}, cands.sources.tolist()


def test_features_and_candidates_by_hand(snapshot: Path, tmp_path: Path) -> None:
    """BM25 finds only cart.py's discount chunk; history=2 adds util.py's chunk (the second file of the history
    ranking), not README.md (the third). Hand-computed features of both (module docstring of history_features)."""
    explorer = _explorer(tmp_path / "store")
    index = explorer.load(snapshot, "snap")
    assert index.history is not None
    keys, feats, sources = _features(index, 2)
    discount = keys.index(("pkg/cart.py", 6, 7))
    util = keys.index(("pkg/util.py", 1, 2))
    assert [p for p, _, _ in keys].count("README.md") == 0
    assert sources[discount] & FROM_RETRIEVERS and sources[util] == FROM_HISTORY
    row = {n: v[discount] for n, v in feats.items()}
    assert row == pytest.approx(
        {
            "history_similar_score": 0.5 + SIM2 / 2,
            "history_max_sim": 1.0,
            "history_log_rank": math.log2(2),
            "history_fix_count": math.log1p(2),
            "history_fix_recency": 0.0,
            "history_change_count": math.log1p(3),
            "history_cochange": 0.0,  # cart.py is the only lexical file, and itself is left out
            "history_hunk_score": 1.0 + SIM2,  # c0's (5, 6) and c2's (1, 7) overlap lines 6-7
            "history_hunk_count": 2.0,
        }
    )
    row = {n: v[util] for n, v in feats.items()}
    assert row == pytest.approx(
        {
            "history_similar_score": 0.5,
            "history_max_sim": 1.0,
            "history_log_rank": math.log2(3),
            "history_fix_count": math.log1p(1),
            "history_fix_recency": 0.0,
            "history_change_count": math.log1p(3),
            "history_cochange": 2 / 3,  # of c0, c1, c3, c0 and c3 changed cart.py
            "history_hunk_score": 1.0,  # c0's (1, 1) is in lines 1-2; c1 is not a similar commit
            "history_hunk_count": 3.0,  # c0's (1, 1), c1's (1, 2) and (2, 3)
        }
    )
    keys3, feats3, _ = _features(index, 3)
    readme = keys3.index(("README.md", 1, 3)) if ("README.md", 1, 3) in keys3 else None
    assert readme is not None
    assert feats3["history_cochange"][readme] == 1.0 and feats3["history_fix_recency"][readme] == 2.0
    assert feats3["history_similar_score"][readme] == pytest.approx(SIM2 / 2)


def test_features_are_nan_without_history(snapshot: Path, tmp_path: Path) -> None:
    """The same snapshot without its history file: no history candidates and every history feature nan."""
    (snapshot / HISTORY_FILE).unlink()
    index = _explorer(tmp_path / "store").load(snapshot, "snap")
    assert index.history is None
    keys, feats, sources = _features(index, 2)
    assert keys == [("pkg/cart.py", 6, 7)] and sources == [FROM_RETRIEVERS]
    assert all(math.isnan(v[0]) for v in feats.values())
    assert not any(p.name.startswith("history-") for p in (tmp_path / "store" / "snap").iterdir())


def test_index_is_persisted_reloaded_identical_and_reused(
    snapshot: Path, tmp_path: Path, store_tree: Callable[[Path], dict[str, bytes]]
) -> None:
    """Built once, then reused; a rebuild (with or without the term-count cache) writes the same bytes, and the
    reloaded arrays equal the built ones."""
    store = tmp_path / "store"
    assert ensure_history_index(snapshot, store, "snap", reuse=True) is True
    assert ensure_history_index(snapshot, store, "snap") is False
    assert any((store / "_cache" / "term_counts").rglob("*.pack"))
    hdir = history_dir_for(store, "snap")
    first = {k: v for k, v in store_tree(store).items() if k.startswith("snap/")}
    assert ensure_history_index(snapshot, store, "snap", rebuild=True, reuse=True) is True  # from the cache
    assert {k: v for k, v in store_tree(store).items() if k.startswith("snap/")} == first
    other = tmp_path / "other"
    assert ensure_history_index(snapshot, other, "snap") is True
    assert {k: v for k, v in store_tree(other).items() if k.startswith("snap/")} == first
    loaded = HistoryIndex.load(hdir)
    again = open_history_index(snapshot, store, "snap")
    assert again is not None
    for name in ("times", "fix", "path_ptr", "path_ids", "hunk_ptr", "hunk_spans"):
        assert np.array_equal(getattr(loaded, name), getattr(again, name))
    assert loaded.bm25.scores(QUERY).tolist() == again.bm25.scores(QUERY).tolist()


def test_term_counts_come_from_the_cache(tmp_path: Path) -> None:
    """A second build of the same commits takes all four commits' term counts from the cache, same matrix."""
    scratch = tmp_path / "scratch"

    def make_scratch() -> Path:
        scratch.mkdir(exist_ok=True)
        return scratch

    first_cache = ContentCache(tmp_path, make_scratch)
    first = build_history_index(_history(), cache=first_cache)
    first_cache.close()
    cache = ContentCache(tmp_path, make_scratch)
    second = build_history_index(_history(), cache=cache)
    assert cache.stats["term_counts"].hits == 4 and cache.stats["term_counts"].misses == 0
    plain = build_history_index(_history())
    for index in (first, second):
        assert index.bm25.state().files["vocab.json"] == plain.bm25.state().files["vocab.json"]
        assert (index.bm25.state().files["tf.npz"] != plain.bm25.state().files["tf.npz"]).nnz == 0


def test_index_is_stale_when_the_history_file_changes(snapshot: Path, tmp_path: Path) -> None:
    """Content decides: another history file makes the stored index stale, and the next ensure rebuilds it."""
    store = tmp_path / "store"
    assert ensure_history_index(snapshot, store, "snap") is True
    history = _history()
    write_history(snapshot, History(history.base_commit, history.commits[:2], history.bounds))
    with pytest.raises(StaleIndexError, match="another history"):
        open_history_index(snapshot, store, "snap")
    h = load_history_index(snapshot, store, "snap")
    assert h is not None and h.n_commits == 2


def test_read_only_store(snapshot: Path, tmp_path: Path, read_only: Callable[[Path], list[str]]) -> None:
    """A built history index is read from a read-only store without writing; a missing one is named."""
    store = tmp_path / "store"
    built = load_history_index(snapshot, store, "snap")
    refused = read_only(store)
    again = load_history_index(snapshot, store, "snap")
    assert refused == [] and built is not None and again is not None and again.commit_ids == built.commit_ids
    shutil.copytree(snapshot, tmp_path / "snap2")
    with pytest.raises(ReadOnlyStoreError, match="history-"):
        load_history_index(tmp_path / "snap2", store, "snap2")


def test_default_explorer_reads_the_history_when_there_is_one(snapshot: Path, tmp_path: Path) -> None:
    """The shipped models learn the history features: with the history file the default explorer builds and loads
    the history index (and takes no history-ranking candidates); without it the features are missing (``nan``)
    and no history index is built. Both rank cart.py's discount first for the discount issue."""
    plain = tmp_path / "plain"
    shutil.copytree(snapshot, plain)
    (plain / HISTORY_FILE).unlink()
    store = tmp_path / "store"
    explorer = FusionExplorer(store=store)
    assert any(f.startswith("history_") for f in load_ensemble(DEFAULT_RANKER_MODEL).features)
    with_history = explorer.explore_scored(snapshot, QUERY, "with")
    assert explorer.load(snapshot, "with").history is not None
    assert [p.name.startswith("history-") for p in sorted((store / "with").iterdir()) if p.is_dir()].count(True) == 1
    without = FusionExplorer(store=store).explore_scored(plain, QUERY, "without")
    assert FusionExplorer(store=store).load(plain, "without").history is None
    assert not any(p.name.startswith("history-") for p in (store / "without").iterdir())
    assert "history" not in explorer.explorer_config["candidates"]
    assert with_history[0].path == without[0].path == "pkg/cart.py"
    assert with_history[0].score != without[0].score  # the history features moved the score


def test_a_similar_commit_that_changed_no_file_is_skipped(tmp_path: Path) -> None:
    """An empty commit (no changed path) that matches the query best adds nothing and divides by nothing: the
    ranking is that of the other similar commit alone (cart 1/1 after normalising by the best score, 1)."""
    root = tmp_path / "snap"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "cart.py").write_text(CART)
    history = History(
        IDS[0],
        (
            Commit(IDS[0], 200, "discount discount", ()),
            Commit(IDS[1], 100, "discount", (FileChange("pkg/cart.py", "M", None, ((5, 2, 5, 2),)),)),
        ),
        {},
    )
    write_history(root, history)
    h = load_history_index(root, tmp_path / "store")
    assert h is not None
    ranking = history_ranking(h, "discount", {"pkg/cart.py"})
    assert ranking.similar.tolist() == [0, 1]
    assert ranking.ranked == ("pkg/cart.py",)
    assert dict(ranking.file_score) == pytest.approx({"pkg/cart.py": float(ranking.sim[1])})


def test_a_git_checkout_gets_its_history_index_from_head(tmp_path: Path) -> None:
    """A folder that is a git checkout (no history file) is indexed from ``.git`` at HEAD; a new commit makes the
    index stale and it is rebuilt with that commit first."""
    import subprocess

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    env = {
        "GIT_AUTHOR_NAME": "a",
        "GIT_AUTHOR_EMAIL": "a@example.org",
        "GIT_COMMITTER_NAME": "a",
        "GIT_COMMITTER_EMAIL": "a@example.org",
        "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z",
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)

    git("init", "-q")
    (repo / "pkg" / "cart.py").write_text(CART)
    git("add", ".")
    git("commit", "-q", "-m", "Add the cart")
    store = tmp_path / "store"
    first = load_history_index(repo, store)
    assert first is not None and first.n_commits == 1
    (repo / "pkg" / "cart.py").write_text(CART + "\n\ndef fee(x):\n    return x + 1\n")
    git("commit", "-q", "-am", "Fix the discount fee")
    with pytest.raises(StaleIndexError):
        open_history_index(repo, store)
    second = load_history_index(repo, store)
    assert second is not None and second.n_commits == 2 and second.fix.tolist() == [1, 0]
    assert second.paths == ["pkg/cart.py"]


def test_spans_are_sorted_and_distinct_and_a_rename_lists_both_paths(tmp_path: Path) -> None:
    """One commit: b.py twice with unsorted and repeated hunks, a rename a.py -> c.py, and b.py's old path equal
    to a changed path; hand-computed CSR arrays, the same from tuples, from columns and from the file."""
    history = History(
        IDS[0],
        (
            Commit(
                IDS[0],
                10,
                "Move a to c",
                (
                    FileChange("b.py", "M", None, ((9, 1, 9, 2), (1, 1, 1, 1))),
                    FileChange("c.py", "R", "a.py", ((4, 0, 5, 1),)),
                    FileChange("b.py", "M", None, ((1, 1, 1, 1), (0, 3, 0, 0))),
                ),
            ),
            Commit(IDS[1], 5, "Add a", (FileChange("a.py", "A", None, ((0, 0, 1, 4),)),)),
        ),
        {},
    )
    write_history(tmp_path, history)
    columns = read_history_columns(tmp_path)
    assert columns is not None
    for built in (
        build_history_index(history),
        build_history_index(HistoryColumns.from_history(history)),
        build_history_index(columns),
    ):
        assert built.paths == ["a.py", "b.py", "c.py"]
        assert built.path_ptr.tolist() == [0, 3, 4] and built.path_ids.tolist() == [0, 1, 2, 0]
        assert built.hunk_ptr.tolist() == [0, 0, 2, 3, 4]  # b.py: (1, 1) three times (a deletion after line 0 too)
        assert built.hunk_spans.tolist() == [[1, 1], [9, 10], [5, 5], [1, 4]]
        assert built.hunk_spans.dtype == np.int32 and built.path_ids.dtype == np.int32
