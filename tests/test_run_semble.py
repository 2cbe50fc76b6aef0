"""Tests of scripts/run_semble.py that need no semble: line mapping, region conversion, the missing-semble message."""

from __future__ import annotations

import importlib.util
import runpy
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
MINI_BENCH = ROOT / "swe_explore" / "data" / "mini" / "mini.jsonl"
MINI_REPOS = ROOT / "swe_explore" / "data" / "mini" / "repos"
SCRIPT: dict[str, Any] = runpy.run_path(str(ROOT / "scripts" / "run_semble.py"))


def test_line_map_is_none_when_line_definitions_agree() -> None:
    """LF, CRLF, classic-Mac CR and empty files number lines alike in semble and in chunking/lines.py."""
    line_map = SCRIPT["semble_line_map"]
    assert line_map(b"a\nb\n") is None
    assert line_map(b"a\r\nb\r\n") is None
    assert line_map(b"a\rb\rc") is None
    assert line_map(b"") is None


def test_line_map_folds_lone_carriage_returns_into_our_lines() -> None:
    """In ``a\\nb\\rc\\nd\\n`` semble sees lines a, b, c, d; ours are a, b\\rc, d, so semble 3 -> 2 and 4 -> 3."""
    to_ours = SCRIPT["semble_line_map"](b"a\nb\rc\nd\n")
    assert [to_ours(line) for line in (1, 2, 3, 4, 5)] == [1, 2, 2, 3, 3]


def test_to_regions_maps_paths_and_lines(tmp_path: Path) -> None:
    """Results keep semble's order and repo-relative path; lines of a mixed-newline file are mapped to ours."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mixed.py").write_bytes(b"x = 1\ns = '\r'\ny = 2\nz = 3\n")
    (tmp_path / "plain.py").write_bytes(b"a\nb\nc\n")

    def result(path: str, start: int, end: int) -> SimpleNamespace:
        return SimpleNamespace(chunk=SimpleNamespace(file_path=path, start_line=start, end_line=end))

    regions = SCRIPT["to_regions"]([result("plain.py", 2, 3), result("pkg/mixed.py", 3, 5)], tmp_path)
    assert regions == [{"path": "plain.py", "start": 2, "end": 3}, {"path": "pkg/mixed.py", "start": 2, "end": 4}]


@pytest.mark.skipif(importlib.util.find_spec("semble") is not None, reason="semble is importable here")
def test_missing_semble_exits_with_install_hint(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Without semble the script returns 2, says to install it in a separate environment, and writes no rows."""
    out = tmp_path / "rows.jsonl"
    status = SCRIPT["main"](["--bench", str(MINI_BENCH), "--repos", str(MINI_REPOS), "--out", str(out)])
    assert status == 2
    assert "pip install semble in a separate environment" in capsys.readouterr().err
    assert not out.exists()
