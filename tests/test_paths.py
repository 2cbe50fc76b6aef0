"""Path policy (docs/metrics.md, 'Paths'): exact string comparison in the evaluator, normalize_path only on request."""

from __future__ import annotations

from pathlib import Path

import pytest

from swe_explore.chunking.types import Region
from swe_explore.evaluation.bench import BenchRecord
from swe_explore.evaluation.metrics import evaluate_instance, hit_file_rate, recall
from swe_explore.evaluation.paths import normalize_path
from swe_explore.evaluation.results import evaluate_rows, make_row


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("./a.py", "a.py"),
        ("././a.py", "a.py"),
        (".//a.py", "a.py"),
        (".\\pkg\\a.py", "pkg/a.py"),
        ("pkg\\a.py", "pkg/a.py"),
        (".github/workflows/x.yml", ".github/workflows/x.yml"),
        ("../x.py", "../x.py"),
        ("./../x.py", "../x.py"),
        ("app/x.py", "app/x.py"),
        (".env", ".env"),
        ("a/./b.py", "a/./b.py"),
        ("...py", "...py"),
    ],
)
def test_normalize_path(raw: str, expected: str) -> None:
    """Backslashes become slashes and leading ./ segments go, one at a time; dot-files and .. stay."""
    assert normalize_path(raw) == expected


@pytest.mark.parametrize("path", [".github/workflows/x.yml", "../x.py", "app/x.py"])
def test_paths_keep_their_identity_in_the_evaluator(path: str) -> None:
    """A predicted path equal to the GT path hits it, and normalize_path leaves it unchanged."""
    gt = {"read_core_regions": [{"path": path, "start": 1, "end": 5}], "read_core_files": [path]}
    assert hit_file_rate([Region(path, 1, 5)], gt) == 1.0
    assert recall([Region(path, 1, 5)], gt) == 1.0
    assert normalize_path(path) == path


def test_dotdot_path_is_not_the_plain_path() -> None:
    """'../x.py' does not hit a GT 'x.py' (the reference does not resolve .. either)."""
    gt = {"read_core_regions": [{"path": "x.py", "start": 1, "end": 5}], "read_core_files": ["x.py"]}
    assert hit_file_rate([Region("../x.py", 1, 5)], gt) == 0.0


def test_dot_slash_differs_in_reference_mode_and_matches_after_normalisation() -> None:
    """'./a.py' misses GT 'a.py' when compared exactly, and hits it after normalize_path."""
    gt = {"read_core_regions": [{"path": "a.py", "start": 1, "end": 5}], "read_core_files": ["a.py"]}
    raw = evaluate_instance([Region("./a.py", 1, 5)], gt)
    assert raw["hit_file_rate"] == 0.0 and raw["recall"] == 0.0 and raw["noise_file_rate"] == 1.0
    fixed = evaluate_instance([Region(normalize_path("./a.py"), 1, 5)], gt)
    assert fixed["hit_file_rate"] == 1.0 and fixed["recall"] == 1.0 and fixed["noise_file_rate"] == 0.0


def test_evaluate_rows_normalises_only_when_asked(tmp_path: Path) -> None:
    """evaluate_rows compares paths exactly by default and applies normalize_path with normalize_paths=True."""
    (tmp_path / "i__r-1").mkdir()
    gt = {"read_core_regions": [{"path": "a.py", "start": 1, "end": 5}], "read_core_files": ["a.py"]}
    record = BenchRecord("i__r-1", "i/r", "", "q", gt)
    rows = [make_row("i__r-1", "agent", [{"path": ".\\a.py", "start": 1, "end": 5}])]
    exact = evaluate_rows(rows, [record], tmp_path)
    normalised = evaluate_rows(rows, [record], tmp_path, normalize_paths=True)
    assert exact[0]["metrics"]["recall"] == 0.0 and exact[0]["regions"][0]["path"] == ".\\a.py"
    assert normalised[0]["metrics"]["recall"] == 1.0 and normalised[0]["regions"][0]["path"] == "a.py"
