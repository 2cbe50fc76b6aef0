"""Region filters (``--include``/``--exclude``/``--language``) and the scores of ``explore``'s output."""

from __future__ import annotations

import contextlib
import io
import json
import runpy
from pathlib import Path
from typing import Any

import pytest

from swe_explore.chunking.types import Region
from swe_explore.explore.explorer import IndexedExplorer, make_explorer
from swe_explore.explore.filters import RegionFilter, region_filter
from swe_explore.explore.fusion import FusionExplorer
from swe_explore.explore.packing import PackConfig

ROOT = Path(__file__).resolve().parent.parent
QUERY = "parse timeout header"

FILES = {
    "src/handler.py": 'import os\n\n\ndef parse_timeout(header):\n    """Read the timeout header."""\n'
    "    return int(header)\n\n\ndef unrelated():\n    return 0\n",
    "tests/test_handler.py": "from src.handler import parse_timeout\n\n\ndef test_parse_timeout():\n"
    '    assert parse_timeout("5") == 5  # timeout header\n',
    "docs/notes.md": "# Notes\n\nThe timeout header is parsed by parse_timeout.\n",
    "web/timeout.go": "package web\n\n// ParseTimeout reads the timeout header.\n"
    "func ParseTimeout(header string) int {\n\treturn len(header)\n}\n",
}
# bm25+function, no fill. Chunks: web/timeout.go 1-1 (gap: the package line) and 3-6 (ParseTimeout with its
# comment); src/handler.py 1-1 (gap), 4-6 (parse_timeout), 9-10 (unrelated, no query word); tests/test_handler.py
# 1-1 (gap: the import naming parse_timeout) and 4-5; docs/notes.md 1-3 (one window). Two ranked chunks of one file
# at most the merge gap apart become one region.
GO = Region("web/timeout.go", 1, 6)  # 1-1 and 3-6 merged
GO_FUNC = Region("web/timeout.go", 3, 6)  # ParseTimeout alone
PY = Region("src/handler.py", 4, 6)  # parse_timeout (the gap 1-1 has no query word)
TEST = Region("tests/test_handler.py", 1, 5)  # 1-1 and 4-5 merged
DOC = Region("docs/notes.md", 1, 3)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of four files that all answer the query, in four places and three languages."""
    monkeypatch.setenv("SWE_EXPLORE_STORE", str(tmp_path / "store"))
    root = tmp_path / "work"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _bm25(tmp_path: Path, **options: Any) -> IndexedExplorer:
    explorer = make_explorer("bm25", store=tmp_path / "store", pack=PackConfig(fill=False, **options))
    assert isinstance(explorer, IndexedExplorer)
    return explorer


def test_keeps_by_pattern_and_language() -> None:
    """Wildmatch semantics over repo-relative paths; exclude wins over include; languages by name."""
    f = RegionFilter(include=("src/", "*.go"), exclude=("src/gen_*",))
    assert f.keeps("src/a/b.py") and f.keeps("web/x.go") and f.keeps("x.go")
    assert not f.keeps("tests/a.py") and not f.keeps("src/gen_x.py") and not f.keeps("srcx/a.py")
    g = RegionFilter(include=("/setup.py", "**/tests/*.py"), languages=("python",))
    assert g.keeps("setup.py", "python") and g.keeps("a/tests/t.py", "python")
    assert not g.keeps("pkg/setup.py", "python") and not g.keeps("setup.py", "text")
    assert region_filter() is None
    with pytest.raises(ValueError, match="unknown language"):
        RegionFilter(languages=("cobol",))
    with pytest.raises(ValueError, match="empty"):
        RegionFilter(include=(" ",))


def test_unfiltered_ranking(folder: Path, tmp_path: Path) -> None:
    """The reference point: K=3 regions of three files, best first, with descending scores."""
    scored = _bm25(tmp_path, k=3).explore_scored(folder, QUERY)
    assert [r.region for r in scored] == [GO, PY, TEST]
    assert scored[0].score > scored[1].score > scored[2].score > 0


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (RegionFilter(languages=("python",)), [PY, TEST]),
        (RegionFilter(include=("src/", "*.go")), [GO, PY]),
        (RegionFilter(exclude=("tests/",), languages=("python", "go")), [GO, PY]),
        (RegionFilter(exclude=("*.go",)), [PY, TEST]),
        (RegionFilter(languages=("text",)), [DOC]),
        (RegionFilter(include=("nothing/",)), []),
    ],
)
def test_filters_fill_k_with_matching_regions(
    folder: Path, tmp_path: Path, filters: RegionFilter, expected: list[Region]
) -> None:
    """K=2 is filled with matching regions: docs/notes.md, fourth unfiltered, comes first with --language text."""
    assert _bm25(tmp_path, k=2).explore(folder, QUERY, filters=filters) == expected


def test_filter_reads_past_top_n(folder: Path, tmp_path: Path) -> None:
    """The filter applies to the whole ranking, not to the top_n chunks: with top_n=1 (only the Go file
    unfiltered), --language python still gives the best Python chunk."""
    explorer = make_explorer("bm25", store=tmp_path / "store", top_n=1, pack=PackConfig(k=1, fill=False))
    assert isinstance(explorer, IndexedExplorer)
    assert explorer.explore(folder, QUERY) == [GO_FUNC]
    assert explorer.explore(folder, QUERY, filters=RegionFilter(languages=("python",))) == [PY]


def test_fusion_explorers_take_filters(folder: Path, tmp_path: Path) -> None:
    """The fusion explorer (priors ranker and the learned one) keeps regions to the filter's files."""
    priors = FusionExplorer(ranker="priors", store=tmp_path / "store")
    assert [r.path for r in priors.explore(folder, QUERY, filters=RegionFilter(languages=("go",)))] == [GO.path]
    learned = make_explorer("learned", store=tmp_path / "store", k=2)
    assert isinstance(learned, FusionExplorer)
    kept = learned.explore(folder, QUERY, filters=RegionFilter(include=("src/", "tests/")))
    assert {r.path for r in kept} == {PY.path, TEST.path}


def _run(argv: list[str]) -> tuple[int, str, str]:
    main = runpy.run_path(str(ROOT / "scripts" / "explore.py"))["main"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = int(main(argv))
        except SystemExit as exc:
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()


def test_explore_command_scores_and_filters(folder: Path, tmp_path: Path) -> None:
    """JSON and text outputs carry each region's score (that of explore_scored); the filter flags apply."""
    base = [str(folder), QUERY, "--retriever", "bm25", "--no-fill", "--k", "2", "--lines", "0"]
    status, out, _ = _run(base + ["--format", "json", "--language", "python"])
    assert status == 0
    regions = json.loads(out)["regions"]
    expected = _bm25(tmp_path, k=2).explore_scored(folder, QUERY, filters=RegionFilter(languages=("python",)))
    assert [(r["path"], r["start"], r["end"], r["score"]) for r in regions] == [
        (r.path, r.start, r.end, r.score) for r in expected
    ]
    assert [(r["path"], r["start"], r["end"]) for r in regions] == [
        ("src/handler.py", 4, 6),
        ("tests/test_handler.py", 1, 5),
    ]
    status, out, _ = _run(base + ["--include", "*.go", "--include", "src/"])
    assert status == 0
    go, py = _bm25(tmp_path, k=2).explore_scored(folder, QUERY)
    assert f"\n1. web/timeout.go:1-6 (6 lines, score {go.score:.4f})\n" in out
    assert f"\n2. src/handler.py:4-6 (3 lines, score {py.score:.4f})" in out


def test_explore_command_rejects_bad_filters(folder: Path) -> None:
    """An unknown language is a usage error; the reference baselines take no filter."""
    status, _, err = _run([str(folder), QUERY, "--language", "cobol"])
    assert status == 2 and "unknown language(s) cobol; valid: python, go," in err
    status, _, err = _run([str(folder), QUERY, "--retriever", "reference_bm25", "--exclude", "tests/"])
    assert status == 2 and "not for reference_bm25" in err
