"""No silent wrong results: every gap of an evaluation is printed, written into the JSON and can be an error.

Each test is one case of the issue "No silent wrong results" (evaluation side); they failed before the
coverage report existed.
"""

from __future__ import annotations

import json
import runpy
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
MINI_BENCH = ROOT / "swe_explore" / "data" / "mini" / "mini.jsonl"
MINI_REPOS = ROOT / "swe_explore" / "data" / "mini" / "repos"
IDS = ["mini__pyshop-1", "mini__goserver-2", "mini__tsformat-3", "mini__rustcalc-4"]  # bench order


def _script(name: str) -> Callable[[list[str]], int]:
    main: Callable[[list[str]], int] = runpy.run_path(str(ROOT / "scripts" / f"{name}.py"))["main"]
    return main


@pytest.fixture(scope="module")
def mini_rows(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Result rows of the learned explorer with the plain packer (``--shape plain``: every core file of the mini
    bench is hit, so each instance's hit_file_rate is 1) on the whole mini bench."""
    tmp = tmp_path_factory.mktemp("rows")
    out = tmp / "rows.jsonl"
    argv = ["--out", str(out), "--store", str(tmp / "store"), "--quiet", "--shape", "plain"]
    assert _script("run_baselines")(argv) == 0
    return out


def _evaluate(rows: Path, repos: Path, tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    report = tmp_path / "report.json"
    argv = [str(rows), "--bench", str(MINI_BENCH), "--repos", str(repos), "--json", str(report), *extra]
    status = _script("evaluate")(argv)
    return status, next(iter(json.loads(report.read_text()).values()))


def test_missing_snapshots_are_counted_named_and_an_error_with_strict(
    mini_rows: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Case 1: with 2 of 4 snapshots present the output says 2 had none and names them; --strict exits 1."""
    repos = tmp_path / "repos"
    for iid in IDS[:2]:
        shutil.copytree(MINI_REPOS / iid, repos / iid)
    status, summary = _evaluate(mini_rows, repos, tmp_path)
    captured = capsys.readouterr()
    assert status == 0 and summary["cases"] == 2
    assert summary["coverage"]["no_snapshot"] == IDS[2:] and summary["coverage"]["bench"] == 4
    assert "scored 2 of 4 bench instances (2 without snapshot" in captured.out
    assert (
        "2 of 4 bench instances have no snapshot (excluded from the means): mini__tsformat-3, mini__rustcalc-4"
        in captured.err
    )
    assert _evaluate(mini_rows, repos, tmp_path, "--strict")[0] == 1


def test_missing_rows_are_counted_as_zero_and_reported(
    mini_rows: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Case 2: a result file with 1 of 4 rows scores 4 instances, 3 of them 0, and says so."""
    rows = tmp_path / "one.jsonl"
    rows.write_text(mini_rows.read_text().splitlines()[0] + "\n")
    status, summary = _evaluate(rows, MINI_REPOS, tmp_path)
    assert status == 0 and summary["cases"] == 4
    assert summary["coverage"]["no_row"] == IDS[1:]
    assert summary["metrics"]["hit_file_rate"] == pytest.approx(0.25)
    assert "3 of 4 scored instances have no result row (scored 0)" in capsys.readouterr().err


def test_predicted_paths_outside_the_snapshot_are_reported(
    mini_rows: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Case 6: absolute and ``sub/../a.py`` paths score 0 and are listed, even when they reach a real file."""
    rows = [json.loads(line) for line in mini_rows.read_text().splitlines()]
    target = rows[0]
    assert target["instance_id"] == "mini__pyshop-1"
    good = target["regions"][0]["path"]
    target["regions"] = [
        {"path": str(MINI_REPOS / "mini__pyshop-1" / good), "start": 1, "end": 3},
        {"path": f"pyshop/../{good}", "start": 1, "end": 3},
        {"path": "no/such/file.py", "start": 1, "end": 3},
    ]
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    status, summary = _evaluate(path, MINI_REPOS, tmp_path)
    assert status == 0
    assert summary["coverage"]["paths_not_in_snapshot"] == {"mini__pyshop-1": [r["path"] for r in target["regions"]]}
    assert summary["coverage"]["regions_not_in_snapshot"] == 3
    assert "3 predicted region(s) in 1 instance(s) name files that are not in the snapshot" in capsys.readouterr().err


def test_rows_over_k_are_scored_on_the_first_k_and_counted(mini_rows: Path, tmp_path: Path) -> None:
    """A row with more than K regions is cut to K (default 5, as the reference runner) and counted."""
    rows = [json.loads(line) for line in mini_rows.read_text().splitlines()]
    rows[0]["regions"] = rows[0]["regions"] + [{"path": "x.go", "start": 1, "end": 1}] * 6
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    status, summary = _evaluate(path, MINI_REPOS, tmp_path)
    assert status == 0 and summary["coverage"]["rows_over_k"] == 1


def test_rows_record_the_snapshot_and_a_wrong_commit_is_an_error(tmp_path: Path) -> None:
    """Case 3: rows name the snapshot used and its commit (from the marker); a marker at another commit stops
    the run and the evaluation with an error naming the record."""
    repos = tmp_path / "repos"
    shutil.copytree(MINI_REPOS, repos)
    records = [json.loads(line) for line in MINI_BENCH.read_text().splitlines()]
    commits = {r["instance_id"]: r["base_commit"] for r in records}
    for iid, commit in commits.items():
        (repos / iid / ".swe-explore-snapshot.json").write_text(json.dumps({"base_commit": commit}))
    out = tmp_path / "rows.jsonl"
    base = ["--bench", str(MINI_BENCH), "--repos", str(repos), "--store", str(tmp_path / "s"), "--quiet"]
    assert _script("run_baselines")([*base, "--out", str(out)]) == 0
    rows = {r["instance_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows["mini__pyshop-1"]["snapshot"] == str(repos / "mini__pyshop-1")
    assert rows["mini__pyshop-1"]["repo_revision"] == commits["mini__pyshop-1"]
    (repos / "mini__pyshop-1" / ".swe-explore-snapshot.json").write_text(json.dumps({"base_commit": "f" * 40}))
    with pytest.raises(SystemExit) as exc:
        _script("run_baselines")([*base, "--out", str(tmp_path / "other.jsonl")])
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        _script("evaluate")([str(out), "--bench", str(MINI_BENCH), "--repos", str(repos)])


def test_tables_per_dataset_and_language_with_counts(
    mini_rows: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """evaluate prints one table per dataset and per language (from the core regions when a record has no
    ``language``), each headed by its number of instances, and writes them into the JSON."""
    status, summary = _evaluate(mini_rows, MINI_REPOS, tmp_path)
    out = capsys.readouterr().out
    assert status == 0
    assert "dataset mini (4 instances)" in out
    for language in ("python", "go", "typescript", "rust"):
        assert f"language {language} (1 instance)" in out
        assert summary["per_language"][language]["cases"] == 1
    assert summary["per_dataset"]["mini"]["cases"] == 4


def test_a_result_file_of_another_bench_is_refused(
    mini_rows: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """run --out FILE holding rows of another bench stops before writing; evaluate of a file with no row of the
    bench is an error, not a table of zeros."""
    other = tmp_path / "other.jsonl"
    rows = [json.loads(line) for line in mini_rows.read_text().splitlines()]
    other.write_text("".join(json.dumps(r | {"instance_id": "x__y-" + str(i)}) + "\n" for i, r in enumerate(rows)))
    before = other.read_text()
    with pytest.raises(SystemExit) as exc:
        _script("run_baselines")(["--out", str(other), "--store", str(tmp_path / "s"), "--quiet"])
    assert exc.value.code == 2 and "it is another bench's result file" in capsys.readouterr().err
    assert other.read_text() == before
    with pytest.raises(SystemExit) as exc:
        _script("evaluate")([str(other)])
    assert exc.value.code == 2 and "none of its rows is for an instance of" in capsys.readouterr().err
