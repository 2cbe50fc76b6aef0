"""Regions shaped like the evidence (explore/shaping.py), test-file completion (explore/completion.py) and the
``shape`` option of the learned explorer (issue 19). Every expected value is computed by hand in the comments."""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import pytest

from swe_explore.chunking.registry import chunk_files, make_chunker
from swe_explore.chunking.types import Chunk, ScoredChunk, ScoredRegion
from swe_explore.chunking.walk import walk_snapshot
from swe_explore.commands.explorer_args import add_explorer_arguments, explorer_from_args, shape_from_args
from swe_explore.commands.operating_points import budget_summary, format_points
from swe_explore.explore.completion import complete_tests, conventional_test_names, conventional_tests, importing_tests
from swe_explore.explore.explorer import make_explorer
from swe_explore.explore.fusion import FusionExplorer
from swe_explore.explore.shaping import ShapeConfig, file_scores, shape, shape_config
from swe_explore.indexes.graph_build import build_graph

FILE_LINES = {"a.py": 300, "b.py": 1000, "c.py": 80, "d.py": 50, "tests/test_a.py": 200}


def ranking() -> list[ScoredChunk]:
    """Files a 5.0, b 4.6, c 3.0, d 0.5 (their best chunks' scores)."""
    spans = [("a.py", 10, 30, 5.0), ("b.py", 400, 450, 4.6), ("b.py", 100, 120, 4.5), ("b.py", 900, 990, 4.4)]
    spans += [("c.py", 5, 60, 3.0), ("d.py", 1, 10, 0.5)]
    return [ScoredChunk(Chunk(p, s, e), score) for p, s, e, score in spans]


TEST = ScoredRegion("tests/test_a.py", 3, 12, 4.0)
CFG = ShapeConfig(whole_file_lines=200, confident_margin=0.5, keep_margin=3.0, doubtful_lines=20, fill=False)


def spans(regions: list[ScoredRegion]) -> list[tuple[str, int, int]]:
    return [(r.path, r.start, r.end) for r in regions]


def test_file_scores_are_best_chunk_scores() -> None:
    assert file_scores(ranking()) == {"a.py": 5.0, "b.py": 4.6, "c.py": 3.0, "d.py": 0.5}


def test_shape_confident_dense_spans_then_tests_and_doubtful_by_score() -> None:
    """a (top) and b (4.6 >= 5.0 - 0.5) are confident; both are longer than W=200, so each gets its dense span:
    a (10, 30); b (400, 450) (adding 100-120 would span 351 lines, 900-990 591, both > 200). Then by score the
    test (4.0) and c's best chunk cut to 20 lines (5, 24); d (0.5 < 5.0 - 3.0) is dropped."""
    out = shape(ranking(), FILE_LINES, 5, 500, CFG, [TEST])
    assert spans(out) == [("a.py", 10, 30), ("b.py", 400, 450), ("tests/test_a.py", 3, 12), ("c.py", 5, 24)]
    assert [r.score for r in out] == [5.0, 4.6, 4.0, 3.0]


def test_shape_whole_file_when_it_fits() -> None:
    """W=400: a (300 lines) is whole, 1-300; b then has 200 lines left: cap 200, dense span (400, 450)."""
    out = shape(ranking(), FILE_LINES, 5, 500, ShapeConfig(**{**CFG.to_dict(), "whole_file_lines": 400}), [TEST])
    assert spans(out) == [("a.py", 1, 300), ("b.py", 400, 450), ("tests/test_a.py", 3, 12), ("c.py", 5, 24)]


def test_shape_fill_grows_confident_regions_downwards_first() -> None:
    """102 lines used, 398 left: a grows by 200 - 21 = 179 lines down (10, 209); b by 200 - 51 = 149 (400, 599)."""
    out = shape(ranking(), FILE_LINES, 5, 500, ShapeConfig(**{**CFG.to_dict(), "fill": True}), [TEST])
    assert spans(out) == [("a.py", 10, 209), ("b.py", 400, 599), ("tests/test_a.py", 3, 12), ("c.py", 5, 24)]
    assert sum(r.end - r.start + 1 for r in out) == 430


def test_shape_respects_the_budget() -> None:
    """B=100, W=400: a's cap is 100 < 300 lines, so its dense span (10, 30) = 21; b 51 (72 used); the test 10 (82);
    c is cut to the 18 lines left: (5, 22). Exactly 100 lines."""
    cfg = ShapeConfig(**{**CFG.to_dict(), "whole_file_lines": 400})
    out = shape(ranking(), FILE_LINES, 5, 100, cfg, [TEST])
    assert spans(out) == [("a.py", 10, 30), ("b.py", 400, 450), ("tests/test_a.py", 3, 12), ("c.py", 5, 22)]
    assert sum(r.end - r.start + 1 for r in out) == 100


def test_calibrated_k_drops_weak_files() -> None:
    """keep_margin 1.5: c (3.0 < 5.0 - 1.5) is dropped, the test (4.0) stays; so 3 regions, not K=5."""
    out = shape(ranking(), FILE_LINES, 5, 500, ShapeConfig(**{**CFG.to_dict(), "keep_margin": 1.5}), [TEST])
    assert spans(out) == [("a.py", 10, 30), ("b.py", 400, 450), ("tests/test_a.py", 3, 12)]
    assert spans(shape(ranking(), FILE_LINES, 2, 500, CFG, [TEST])) == [("a.py", 10, 30), ("b.py", 400, 450)]


def test_reserve_lines_leave_room_after_a_confident_file() -> None:
    """W=400, reserve 250 of B=500: a's cap is 250 < 300 lines, so its dense span, not the whole file."""
    cfg = ShapeConfig(**{**CFG.to_dict(), "whole_file_lines": 400, "reserve_lines": 250})
    assert spans(shape(ranking(), FILE_LINES, 1, 500, cfg)) == [("a.py", 10, 30)]


def test_shape_invariants_on_random_rankings() -> None:
    """Explicit in-file ranges, one region per file (so no overlap), at most K, at most B lines."""
    rng = random.Random(7)
    lines = {f"f{i}.py": rng.randint(1, 900) for i in range(8)}
    for _ in range(300):
        ranked = []
        for _ in range(rng.randint(0, 30)):
            path = rng.choice(sorted(lines))
            start = rng.randint(1, lines[path] + 5)
            ranked.append(ScoredChunk(Chunk(path, start, start + rng.randint(0, 120)), rng.uniform(-5, 5)))
        ranked.sort(key=lambda s: -s.score)
        k, budget = rng.randint(1, 6), rng.randint(1, 2000)
        cfg = ShapeConfig(
            whole_file_lines=rng.randint(1, 1000),
            confident_margin=rng.uniform(0, 2),
            keep_margin=rng.uniform(2, 6),
            reserve_lines=rng.randint(0, 300),
            fill=rng.random() < 0.5,
        )
        out = shape(ranked, lines, k, budget, cfg)
        assert len(out) <= k and sum(r.end - r.start + 1 for r in out) <= budget
        assert len({r.path for r in out}) == len(out)
        assert all(1 <= r.start <= r.end <= lines[r.path] for r in out)


def test_shape_config_checks_and_names() -> None:
    assert shape_config("plain") is None and shape_config(None) is None
    assert shape_config("evidence") == ShapeConfig()
    with pytest.raises(ValueError, match="unknown shape 'tall'"):
        shape_config("tall")
    with pytest.raises(ValueError, match="keep_margin=0.5"):
        ShapeConfig(confident_margin=1.0, keep_margin=0.5)
    with pytest.raises(ValueError, match="k >= 1"):
        shape(ranking(), FILE_LINES, 0, 500)


PATHS = [
    "pkg/sessions.py",
    "tests/test_sessions.py",
    "pkg/tests/test_sessions.py",
    "other/sessions_test.py",
    "server/handler.go",
    "server/handler_test.go",
    "src/util.ts",
    "src/util.test.ts",
    "src/__tests__/util.js",
    "lib/util.spec.js",
    "src/parser.rs",
    "tests/parser.rs",
    "src/main/java/org/x/Foo.java",
    "src/test/java/org/x/FooTest.java",
    "src/Cache.php",
    "tests/CacheTest.php",
    "lib/widget.rb",
    "spec/widget_spec.rb",
    "test/widget_test.rb",
    "src/cjson.c",
    "tests/test_cjson.c",
    "src/json.cc",
    "src/json_test.cc",
    "test/json.cpp",
]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        # directory distance: pkg/tests 1, other 2, tests 2 (ties by path)
        ("pkg/sessions.py", ["pkg/tests/test_sessions.py", "other/sessions_test.py", "tests/test_sessions.py"]),
        ("server/handler.go", ["server/handler_test.go"]),
        # TypeScript: beside it (0), __tests__/ below it (1), another directory (2)
        ("src/util.ts", ["src/util.test.ts", "src/__tests__/util.js", "lib/util.spec.js"]),
        # JavaScript: lib (0), src (2), src/__tests__ (3)
        ("lib/util.js", ["lib/util.spec.js", "src/util.test.ts", "src/__tests__/util.js"]),
        ("src/parser.rs", ["tests/parser.rs"]),  # only under a tests/ directory
        ("src/main/java/org/x/Foo.java", ["src/test/java/org/x/FooTest.java"]),
        ("src/Cache.php", ["tests/CacheTest.php"]),
        ("lib/widget.rb", ["spec/widget_spec.rb", "test/widget_test.rb"]),
        ("src/cjson.c", ["tests/test_cjson.c"]),
        ("src/json.cc", ["src/json_test.cc", "test/json.cpp"]),
    ],
)
def test_conventional_tests_per_language(code: str, expected: list[str]) -> None:
    assert conventional_tests(code, PATHS, limit=None) == expected


def test_naming_rules_edge_cases() -> None:
    """``__init__.py`` is its package; a file never lists itself; unknown extensions have no tests."""
    assert conventional_tests("pkg/__init__.py", ["tests/test_pkg.py", "pkg/__init__.py"]) == ["tests/test_pkg.py"]
    assert conventional_tests("tests/parser.rs", PATHS) == []
    assert conventional_test_names("README") == (frozenset(), frozenset())
    assert conventional_tests("pkg/sessions.py", PATHS) == ["pkg/tests/test_sessions.py", "other/sessions_test.py"]


def test_importing_tests_and_completion(tmp_path: Path) -> None:
    """tests/test_api.py imports app/core.py (no naming match): found through the graph's imports edge."""
    for rel, text in {
        "app/__init__.py": "",
        "app/core.py": "def run():\n    return 1\n",
        "tests/test_api.py": "from app.core import run\n\n\ndef test_run():\n    assert run() == 1\n",
        "tests/test_core.py": "def test_nothing():\n    pass\n",
    }.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    files, _ = walk_snapshot(tmp_path)
    chunks, _ = chunk_files(files, make_chunker("function"))
    graph = build_graph(files, chunks)
    assert importing_tests(graph, "app/core.py") == ["tests/test_api.py"]
    assert importing_tests(None, "app/core.py") == []
    assert importing_tests(graph, "missing.py") == []
    paths = sorted(graph.files)
    assert complete_tests(["app/core.py"], paths, graph) == [
        ("tests/test_core.py", "app/core.py", "named"),
        ("tests/test_api.py", "app/core.py", "imports"),
    ]


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_explorer_arguments(parser)
    return parser.parse_args(argv)


def test_shape_option_through_make_explorer_and_the_command_line(tmp_path: Path) -> None:
    learned = make_explorer("learned", shape="evidence", budget=1000, store=tmp_path)
    assert isinstance(learned, FusionExplorer)
    assert learned.shape == ShapeConfig() and learned._pack.budget == 1000
    assert learned.explorer_config["shape"] == ShapeConfig().to_dict()
    default = make_explorer("learned", store=tmp_path)
    assert default.explorer_config["shape"] == ShapeConfig().to_dict()  # evidence is the default
    assert "shape" not in make_explorer("learned", shape="plain", store=tmp_path).explorer_config
    with pytest.raises(ValueError, match="shape applies to the learned explorer only, not bm25"):
        make_explorer("bm25", shape="evidence")
    args = parse(["--shape", "evidence", "--whole-file-lines", "300", "--completion", "none", "--store", str(tmp_path)])
    assert shape_from_args(args) == ShapeConfig(whole_file_lines=300, completion="none")
    from_args = explorer_from_args(args)
    assert isinstance(from_args, FusionExplorer)
    assert from_args.shape == ShapeConfig(whole_file_lines=300, completion="none")
    tuned = explorer_from_args(parse(["--confident-margin", "2", "--store", str(tmp_path)]))  # evidence: default
    assert isinstance(tuned, FusionExplorer) and tuned.shape == ShapeConfig(confident_margin=2.0)
    plain = ["--shape", "plain", "--store", str(tmp_path)]
    with pytest.raises(ValueError, match="--confident-margin need --shape evidence"):
        explorer_from_args(parse(["--confident-margin", "2", *plain]))
    assert explorer_from_args(parse(plain)).explorer_config.get("shape") is None
    with pytest.raises(ValueError, match="--shape"):
        explorer_from_args(parse(["--retriever", "bm25", "--shape", "evidence", "--store", str(tmp_path)]))
    with pytest.raises(ValueError, match="--whole-file-lines"):
        explorer_from_args(parse(["--retriever", "bm25", "--whole-file-lines", "9", "--store", str(tmp_path)]))


def test_operating_points_table() -> None:
    """Means 0.5 and 1.0 (constant vectors: CI = the value); seconds 1, 3 -> p50 2, p95 2.9."""
    rows = [
        {"metrics": {"precision": 0.25, "recall": 1.0}, "seconds": 1.0},
        {"metrics": {"precision": 0.75, "recall": 1.0}, "seconds": 3.0},
    ]
    point = budget_summary(rows, ["precision", "recall"])
    assert point["n"] == 2 and point["recall"] == (1.0, 1.0, 1.0) and point["precision"][0] == 0.5
    assert (point["p50_s"], point["p95_s"]) == pytest.approx((2.0, 2.9))
    table = format_points({500: point}, ["recall"])
    assert table.splitlines()[2] == "| 500 | 2 | 1.000 [1.000, 1.000] | 2.000 | 2.900 |"


def test_completed_test_replaces_its_files_weak_ranked_region() -> None:
    """tests/test_a.py is ranked at 1.0 (< 5.0 - 3.0: dropped alone); completed at 4.0 it takes that place with
    its own region (3, 12), before c (3.0)."""
    ranked = [*ranking(), ScoredChunk(Chunk("tests/test_a.py", 100, 150), 1.0)]
    out = shape(ranked, FILE_LINES, 5, 500, CFG, [TEST])
    assert spans(out) == [("a.py", 10, 30), ("b.py", 400, 450), ("tests/test_a.py", 3, 12), ("c.py", 5, 24)]
    assert spans(shape(ranked, FILE_LINES, 5, 500, CFG)) == [("a.py", 10, 30), ("b.py", 400, 450), ("c.py", 5, 24)]
    weak = TEST._replace(score=0.5)  # below the ranked 1.0: the ranked region stays, and is dropped (1.0 < 2.0)
    assert spans(shape(ranked, FILE_LINES, 5, 500, CFG, [weak])) == spans(shape(ranked, FILE_LINES, 5, 500, CFG))
