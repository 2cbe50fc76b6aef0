"""The reference local baselines (docs/metrics.md §2.1-§2.5): discovery, 80/20 windows, cap, BM25, TF-IDF, Potion."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from swe_explore.evaluation.bench import find_snapshot, load_bench
from swe_explore.evaluation.results import evaluate_rows, make_row, summarize
from swe_explore.explore.reference import (
    PAPER_ERA_EXTENSIONS,
    REFERENCE_EXPLORERS,
    ReferenceBM25,
    ReferencePotion,
    ReferenceTFIDF,
    reference_chunks,
    reference_source_files,
    reference_windows,
)

SHARED = Path(__file__).resolve().parents[2] / "shared"  # ../shared from the project root, as in conftest.py
POTION_DIR = SHARED / "models" / "potion-base-8M"
DEV_BENCH = SHARED / "data" / "dev.jsonl"
DEV_REPOS = Path(__file__).resolve().parents[1] / "repos" / "dev"


def write(root: Path, files: dict[str, str]) -> Path:
    """Write text files under root (parents created)."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def numbered(n: int, word: str = "line") -> str:
    """n lines 'word 1' .. 'word n', newline-terminated."""
    return "".join(f"{word} {i}\n" for i in range(1, n + 1))


# ----------------------------------------------------------------------------------------------------------
# Windows (docs/metrics.md §2.2)
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (0, []),
        (1, [(1, 1)]),
        (80, [(1, 80)]),
        (81, [(1, 80), (61, 81)]),
        (100, [(1, 80), (61, 100)]),
        (140, [(1, 80), (61, 140)]),
        (141, [(1, 80), (61, 140), (121, 141)]),
    ],
)
def test_window_ranges_80_20(n: int, expected: list[tuple[int, int]]) -> None:
    """Windows start every 60 lines, cover 80, and stop after the first one reaching the last line."""
    assert reference_windows(n) == expected


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (80, 80), (80, -1)])
def test_window_ranges_rejects_bad_parameters(size: int, overlap: int) -> None:
    """A window size below 1 or an overlap outside [0, size) raises ValueError."""
    with pytest.raises(ValueError, match="chunk_"):
        reference_windows(100, size, overlap)


def test_chunks_have_exact_windows_and_text(tmp_path: Path) -> None:
    """Files of 80, 81 and 100 lines give the reference windows, with the lines joined by newlines."""
    write(tmp_path, {"a.py": numbered(80), "b.py": numbered(81), "c.py": numbered(100)})
    chunks = reference_chunks(tmp_path)
    assert [(c.path, c.start, c.end) for c in chunks] == [
        ("a.py", 1, 80), ("b.py", 1, 80), ("b.py", 61, 81), ("c.py", 1, 80), ("c.py", 61, 100),
    ]  # fmt: skip
    assert chunks[2].text == "\n".join(f"line {i}" for i in range(61, 82))
    assert all(c.kind == "window" for c in chunks)


def test_whitespace_only_window_is_skipped(tmp_path: Path) -> None:
    """A window of blank lines is not emitted, but the next window still starts at line 61."""
    write(tmp_path, {"a.py": " \n" * 80 + numbered(20)})  # lines 1-80 blank, 81-100 text
    assert [(c.start, c.end) for c in reference_chunks(tmp_path)] == [(61, 100)]


def test_reference_line_definition_is_splitlines(tmp_path: Path) -> None:
    """The reference chunker numbers lines with splitlines: the form-feed file has 5 lines, not 4.

    See the example in docs/metrics.md, 'Line counts'.
    """
    (tmp_path / "f.py").write_bytes(b"a = 1\n\x0c\ndef g():\n    pass\n")
    (tmp_path / "g.py").write_bytes(b"x\xff = 1\ny = 2\r\n")  # invalid byte ignored, CRLF
    chunks = reference_chunks(tmp_path)
    assert [(c.path, c.start, c.end) for c in chunks] == [("f.py", 1, 5), ("g.py", 1, 2)]
    assert chunks[0].text == "a = 1\n\n\ndef g():\n    pass"
    assert chunks[1].text == "x = 1\ny = 2"


def test_chunk_cap_is_global_and_lazy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a cap of 3, a.py (2 chunks) and b.py (1) are indexed and c.py is never read."""
    write(tmp_path, {"a.py": numbered(100), "b.py": numbered(10), "c.py": numbered(10)})
    read: list[str] = []
    original = Path.read_text

    def spy(self: Path, *args: Any, **kwargs: Any) -> str:
        read.append(self.name)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", spy)
    chunks = reference_chunks(tmp_path, max_chunks=3)
    assert [(c.path, c.start) for c in chunks] == [("a.py", 1), ("a.py", 61), ("b.py", 1)]
    assert read == ["a.py", "b.py"]
    assert [c.path for c in reference_chunks(tmp_path, max_chunks=1)] == ["a.py"]
    assert reference_chunks(tmp_path, max_chunks=0) == []
    assert len(reference_chunks(tmp_path, max_chunks=None)) == 4


# ----------------------------------------------------------------------------------------------------------
# Source discovery (docs/metrics.md §2.1)
# ----------------------------------------------------------------------------------------------------------


def test_excluded_directories_are_pruned_at_any_depth_case_insensitively(tmp_path: Path) -> None:
    """build, dist, node_modules, .git, venv, __pycache__ ... are pruned; tests/ and docs/ are kept."""
    excluded = ["build", "Dist", "node_modules", ".git", ".venv", "venv", "__pycache__", ".pytest_cache",
                ".mypy_cache", "oh_modules", ".hvigor", "pkg/BUILD"]  # fmt: skip
    write(tmp_path, {f"{d}/gen.py": "x = 1\n" for d in excluded})
    write(tmp_path, {"src/main.py": "x\n", "tests/test_a.py": "x\n", "docs/index.rst": "x\n", "pkg/mod.py": "x\n"})
    assert reference_source_files(tmp_path) == ["docs/index.rst", "pkg/mod.py", "src/main.py", "tests/test_a.py"]


def test_extension_filter(tmp_path: Path) -> None:
    """The reference list (case-insensitive, .d.ts included) keeps .ts/.ets/.json5; the paper-era ten do not."""
    names = ["a.py", "b.md", "c.js", "d.d.ts", "e.TS", "f.ts.bak", "g.json5", "h.ets", "i.go", "j.YML", "k.tsx"]
    write(tmp_path, {name: "x\n" for name in names})
    assert reference_source_files(tmp_path) == ["a.py", "b.md", "d.d.ts", "e.TS", "g.json5", "h.ets", "j.YML"]
    assert reference_source_files(tmp_path, PAPER_ERA_EXTENSIONS) == ["a.py", "b.md", "j.YML"]
    assert reference_source_files(tmp_path, ["go", ".JS"]) == ["c.js", "i.go"]


def test_order_is_plain_string_order(tmp_path: Path) -> None:
    """Paths sort as plain strings: uppercase before lowercase, 'a.py' before 'a/b.py' ('.' < '/')."""
    write(tmp_path, {"b.py": "x\n", "a/b.py": "x\n", "a.py": "x\n", "Z.py": "x\n", "a-b.py": "x\n"})
    assert reference_source_files(tmp_path) == ["Z.py", "a-b.py", "a.py", "a/b.py", "b.py"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlinks(tmp_path: Path) -> None:
    """Directory symlinks are not followed, file symlinks that resolve are kept, broken ones dropped."""
    root, outside = tmp_path / "repo", tmp_path / "outside"
    write(outside, {"lib/x.py": "x\n", "t.py": "x\n"})
    write(root, {"m.py": "x\n"})
    (root / "lib").symlink_to(outside / "lib", target_is_directory=True)
    (root / "dir.py").symlink_to(outside / "lib", target_is_directory=True)
    (root / "link.py").symlink_to(outside / "t.py")
    (root / "broken.py").symlink_to(outside / "missing.py")
    assert reference_source_files(root) == ["link.py", "m.py"]


def test_missing_snapshot_raises(tmp_path: Path) -> None:
    """A snapshot directory that does not exist raises FileNotFoundError naming it."""
    with pytest.raises(FileNotFoundError, match="nowhere"):
        reference_chunks(tmp_path / "nowhere")


# ----------------------------------------------------------------------------------------------------------
# BM25 (docs/metrics.md §2.3)
# ----------------------------------------------------------------------------------------------------------


@pytest.fixture
def tiny_repo(tmp_path: Path) -> Path:
    """Four one-chunk files with distinct vocabularies."""
    return write(
        tmp_path,
        {
            "a.py": "def alpha(x):\n    return x\n",
            "b.py": "def beta(y):\n    return y\n",
            "c.py": "class Gamma:\n    foo(bar): pass\n",
            "d.md": "the and of\n",
        },
    )


def test_bm25_returns_zero_score_chunks_in_corpus_order(tiny_repo: Path) -> None:
    """A query matching nothing returns the first k chunks in corpus (path) order, scores 0."""
    hits = ReferenceBM25(tiny_repo).search("nothing matches", 3)
    assert [(c.path, s) for c, s in hits] == [("a.py", 0.0), ("b.py", 0.0), ("c.py", 0.0)]


def test_bm25_ranks_match_first_then_zero_scores_in_corpus_order(tiny_repo: Path) -> None:
    """The one matching chunk comes first, then the zero-score chunks in corpus order (no score filter)."""
    regions = ReferenceBM25(tiny_repo).explore("Gamma:", 3)  # c.py's raw token is "Gamma:"
    assert regions == [
        ("c.py", 1, 2), ("a.py", 1, 2),
        ("b.py", 1, 2),
    ]  # fmt: skip


def test_bm25_tokens_are_whitespace_split_case_sensitive(tiny_repo: Path) -> None:
    """'foo(bar):' matches as one raw token; 'Gamma', 'gamma:' and 'foo' match nothing."""
    explorer = ReferenceBM25(tiny_repo)
    assert explorer.search("foo(bar):", 1)[0][0].path == "c.py" and explorer.search("foo(bar):", 1)[0][1] > 0
    assert explorer.search("Gamma gamma: foo", 1)[0][1] == 0.0


def test_bm25_score_matches_rank_bm25_by_hand(tiny_repo: Path) -> None:
    """The score of 'Gamma' on c.py equals the Okapi formula with k1=1.5, b=0.75 computed by hand."""
    # Whitespace tokens per doc: a "def alpha(x): return x" = 4, b = 4, c "class Gamma: foo(bar): pass" = 4,
    # d "the and of" = 3; avgdl = 15/4. "Gamma:" occurs once, in c only: idf = ln((4 - 1 + 0.5) / (1 + 0.5)).
    avgdl = (4 + 4 + 4 + 3) / 4
    idf = np.log((4 - 1 + 0.5) / (1 + 0.5))  # one of four docs contains "Gamma:"
    tf, dl = 1, 4
    expected = idf * tf * (1.5 + 1) / (tf + 1.5 * (1 - 0.75 + 0.75 * dl / avgdl))
    hit = ReferenceBM25(tiny_repo).search("Gamma:", 1)[0]
    assert hit[0].path == "c.py" and hit[1] == pytest.approx(expected)


# ----------------------------------------------------------------------------------------------------------
# TF-IDF (docs/metrics.md §2.4)
# ----------------------------------------------------------------------------------------------------------


def test_tfidf_skips_zero_scores(tiny_repo: Path) -> None:
    """Only chunks sharing a token with the query come back, even with k = 4."""
    assert ReferenceTFIDF(tiny_repo).explore("where is beta defined", 4) == [("b.py", 1, 2)]


def test_tfidf_tokens_are_lowercased_identifiers(tiny_repo: Path) -> None:
    """'GAMMA' matches 'Gamma' (lower-cased), stop words and 1-char tokens match nothing."""
    explorer = ReferenceTFIDF(tiny_repo)
    assert [r.path for r in explorer.explore("GAMMA", 2)] == ["c.py"]
    assert explorer.explore("the and x", 2) == []
    assert explorer.explore("   ", 2) == []


def test_tfidf_empty_vocabulary_returns_nothing(tmp_path: Path) -> None:
    """A corpus of only stop words and 1-character tokens has no vocabulary: every query returns []."""
    write(tmp_path, {"a.txt": "the and of\n", "b.txt": "a b c 1 2\n"})
    assert ReferenceTFIDF(tmp_path).explore("the a b", 3) == []


def test_empty_corpus_returns_nothing(tmp_path: Path) -> None:
    """A snapshot without source files gives [] for BM25 and TF-IDF."""
    write(tmp_path, {"image.png": "x", "main.go": "package main\n"})
    assert ReferenceBM25(tmp_path).explore("main", 5) == []
    assert ReferenceTFIDF(tmp_path).explore("main", 5) == []


def test_k_must_be_positive(tiny_repo: Path) -> None:
    """k (top-K) below 1 raises ValueError (argsort()[-0:] would return everything)."""
    with pytest.raises(ValueError, match="k"):
        ReferenceTFIDF(tiny_repo).explore("beta", 0)


def test_prebuilt_chunks_are_reused(tiny_repo: Path) -> None:
    """Explorers built from shared chunks answer like explorers that chunk the snapshot themselves."""
    chunks = reference_chunks(tiny_repo)
    assert ReferenceBM25(tiny_repo, chunks=chunks).search("Gamma:", 4) == ReferenceBM25(tiny_repo).search("Gamma:", 4)
    assert ReferenceTFIDF(tiny_repo, chunks=chunks[:1]).explore("alpha beta", 3) == [("a.py", 1, 2)]


# ----------------------------------------------------------------------------------------------------------
# Potion (docs/metrics.md §2.5), with a fake encoder
# ----------------------------------------------------------------------------------------------------------


class KeywordModel:
    """Fake model2vec model: the vector of a text counts 'alpha', 'beta' and 'gamma'."""

    def encode(self, texts: list[str]) -> np.ndarray:
        """Return one 3-d count vector per text."""
        return np.array([[t.count("alpha"), t.count("beta"), t.lower().count("gamma")] for t in texts], dtype=float)


def test_potion_cosine_ranking_skips_non_positive_scores(tiny_repo: Path) -> None:
    """Cosine of normalised vectors ranks chunks; zero vectors (norm 1 instead of 0) score 0 and are skipped."""
    explorer = ReferencePotion(tiny_repo, model=KeywordModel())
    # Query vector (1, 1, 0)/sqrt(2); a.py (1, 0, 0) and b.py (0, 1, 0) both score 1/sqrt(2); c.py, d.md 0.
    hits = explorer.search("alpha beta", 4)
    assert sorted(c.path for c, _ in hits) == ["a.py", "b.py"]
    assert all(s == pytest.approx(1 / np.sqrt(2)) for _, s in hits)
    assert explorer.explore("nothing", 4) == []
    assert explorer.explorer_config == {"chunk_size": 80, "chunk_overlap": 20, "model_path": None}


def test_potion_needs_a_model(tiny_repo: Path) -> None:
    """ReferencePotion without model_path or model raises ValueError."""
    with pytest.raises(ValueError, match="model_path"):
        ReferencePotion(tiny_repo)


def test_registry() -> None:
    """The registry maps the three reference names to their classes."""
    assert {
        "reference_bm25": ReferenceBM25, "reference_tfidf": ReferenceTFIDF, "reference_potion": ReferencePotion,
    } == REFERENCE_EXPLORERS  # fmt: skip


@pytest.mark.slow
@pytest.mark.skipif(not POTION_DIR.is_dir(), reason=f"real Potion model not found at {POTION_DIR}")
def test_real_potion_defaults(tiny_repo: Path) -> None:
    """The real potion-base-8M loads with encode's max_length default of 512 tokens and ranks the Gamma chunk."""
    explorer = ReferencePotion(tiny_repo, model_path=POTION_DIR)
    assert explorer.model.max_length == 512
    assert explorer.explore("class Gamma foo bar", 1) == [("c.py", 1, 2)]


# ----------------------------------------------------------------------------------------------------------
# The dev-set anchors of the reference re-run
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(
    not (DEV_BENCH.is_file() and DEV_REPOS.is_dir()), reason=f"dev bench {DEV_BENCH} or snapshots {DEV_REPOS} missing"
)
def test_dev_set_reference_anchors() -> None:
    """BM25 and TF-IDF at K=5 on the 23 dev instances reproduce the reference re-run's HitFile/nDCG@500/CtxEff."""
    records = load_bench(DEV_BENCH)
    rows: dict[str, list[dict[str, Any]]] = {"bm25": [], "tfidf": []}
    for record in records:
        snapshot = find_snapshot(record, DEV_REPOS)
        if snapshot is None:
            pytest.skip(f"snapshot of {record.instance_id} missing under {DEV_REPOS}")
        chunks = reference_chunks(snapshot)
        for name, cls in (("bm25", ReferenceBM25), ("tfidf", ReferenceTFIDF)):
            regions = cls(snapshot, chunks=chunks).explore(record.query, 5)
            rows[name].append(make_row(record.instance_id, name, regions))
    means = {name: summarize(evaluate_rows(r, records, DEV_REPOS))["metrics"] for name, r in rows.items()}
    got = {name: tuple(round(m[k], 3) for k in ("hit_file_rate", "ndcg_at_500", "context_efficiency"))
           for name, m in means.items()}  # fmt: skip
    assert got == {"bm25": (0.146, 0.163, 0.130), "tfidf": (0.277, 0.330, 0.264)}
