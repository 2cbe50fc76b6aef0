"""Tests of scripts/benchmark.py helpers: its docs section replaces only itself; the default snapshot choice."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARK = runpy.run_path(str(ROOT / "scripts" / "benchmark.py"))


def test_update_docs_replaces_only_its_section(tmp_path: Path) -> None:
    """The Speed and memory section is replaced in place; the sections before and after it are kept verbatim."""
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\n## Quality\n\nnDCG table\n\n## Speed and memory\n\nold\n\n## Notes\n\nkeep\n")
    BENCHMARK["update_docs"](doc, "## Speed and memory\n\nnew figures\n")
    assert doc.read_text() == (
        "# Benchmarks\n\n## Quality\n\nnDCG table\n\n## Speed and memory\n\nnew figures\n\n## Notes\n\nkeep\n"
    )


def test_update_docs_appends_or_creates(tmp_path: Path) -> None:
    """Without the section it is appended; without the file, the file is created with a title."""
    doc = tmp_path / "benchmarks.md"
    BENCHMARK["update_docs"](doc, "## Speed and memory\n\nA\n")
    assert doc.read_text() == "# Benchmarks\n\n## Speed and memory\n\nA\n"
    doc.write_text("# Benchmarks\n\n## Quality\n\nQ\n")
    BENCHMARK["update_docs"](doc, "## Speed and memory\n\nB\n")
    assert doc.read_text() == "# Benchmarks\n\n## Quality\n\nQ\n\n## Speed and memory\n\nB\n"


def test_largest_snapshot_and_quantiles(tmp_path: Path) -> None:
    """The default snapshot is the one with the most bytes outside .git; p95 interpolates linearly."""
    for name, size, git in (("a", 10, 0), ("b", 30, 0), ("c", 20, 100)):
        (tmp_path / name / ".git").mkdir(parents=True)
        (tmp_path / name / "f.py").write_text("x" * size)
        (tmp_path / name / ".git" / "pack").write_text("y" * git)
    assert BENCHMARK["largest_snapshot"](tmp_path) == tmp_path / "b"
    assert BENCHMARK["largest_snapshot"](tmp_path / "missing") is None
    assert BENCHMARK["_pct"]([1.0, 2.0, 3.0, 4.0, 5.0], 0.95) == pytest.approx(4.8)


def test_a_tiny_snapshot_is_refused_unless_allowed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A snapshot of fewer than MIN_LINES indexed lines is an error naming it and its line count (the mini
    repository once produced "5.0 s per 100K lines" that measured only fixed costs)."""
    snapshot = tmp_path / "tiny"
    snapshot.mkdir()
    (snapshot / "a.py").write_text("x = 1\ny = 2\n")
    with pytest.raises(SystemExit) as exc:
        BENCHMARK["main"](["--snapshot", str(snapshot)])
    assert exc.value.code == 2
    assert f"snapshot {snapshot} has only 2 indexed lines" in capsys.readouterr().err
