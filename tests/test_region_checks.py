"""Scores that look complete but are not (issue 18, case 6) and the ``end: -1`` quirk (case 7).

Case 6: nothing scored is an error; invalid ground-truth and predicted regions are counted, warned about,
written into the JSON and refused by ``--strict``; issue-map ids that match nothing and records dropped for
empty core regions are reported. Case 7: regions the reference scores as zero lines because their file is
outside the ground truth are counted, and ``--score-predicted-lines`` scores them with the file's length
(the worked example of docs/metrics.md). The scores themselves never change.
"""

from __future__ import annotations

import json
import math
import runpy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from swe_explore.evaluation.bench import load_bench
from swe_explore.evaluation.metrics import evaluate_instance, resolve_interval

ROOT = Path(__file__).resolve().parent.parent
MINI_BENCH = ROOT / "swe_explore" / "data" / "mini" / "mini.jsonl"
MINI_REPOS = ROOT / "swe_explore" / "data" / "mini" / "repos"


def _script(name: str) -> Callable[[list[str]], int]:
    main: Callable[[list[str]], int] = runpy.run_path(str(ROOT / "scripts" / f"{name}.py"))["main"]
    return main


def _region(path: str, start: int, end: int) -> dict[str, Any]:
    return {"path": path, "start": start, "end": end}


def _record(iid: str, core: list[dict[str, Any]], optional: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "instance_id": iid,
        "repo": "org/r",
        "base_commit": "",
        "problem_statement": "the total is wrong",
        "ground_truth": {
            "read_core_files": sorted({r["path"] for r in core}),
            "read_core_regions": core,
            "read_optional_files_map": {},
            "read_optional_regions_map": {"m": optional or []},
            "modified_core_files": [],
            "main_files": [],
        },
    }


def _write_jsonl(path: Path, objects: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects))
    return path


def _snapshot(repos: Path, iid: str, files: dict[str, int]) -> None:
    """A snapshot ``repos/iid`` whose files have the given numbers of lines."""
    for rel, n in files.items():
        target = repos / iid / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(f"line {i}\n" for i in range(1, n + 1)))


def _run_evaluate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, bench: Path, repos: Path, rows: Path, *extra: str
) -> tuple[int, dict[str, Any], str, str]:
    report = tmp_path / "report.json"
    argv = [str(rows), "--bench", str(bench), "--repos", str(repos), "--json", str(report), *extra]
    status = _script("evaluate")(argv)
    captured = capsys.readouterr()
    summary = next(iter(json.loads(report.read_text()).values())) if report.is_file() else {}
    return status, summary, captured.out, captured.err


# ----------------------------------------------------------------------------------------------------------
# Case 6
# ----------------------------------------------------------------------------------------------------------


def test_case6_nothing_scored_is_an_error_not_a_table_of_zeros(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--repos holding none of the snapshots: exit 1, one line saying why, no table of 0.0000."""
    empty = tmp_path / "repos"
    empty.mkdir()
    rows = _write_jsonl(
        tmp_path / "rows.jsonl",
        [{"instance_id": "mini__pyshop-1", "explorer": "x", "regions": [_region("pyshop/cart.py", 1, 5)]}],
    )
    status, summary, out, err = _run_evaluate(capsys, tmp_path, MINI_BENCH, empty, rows)
    assert status == 1
    assert "0.0000" not in out and summary == {}
    errors = [line for line in err.splitlines() if line.startswith("error")]
    assert errors == [
        f"error: nothing scored: none of the 4 bench instances has a snapshot under {empty} "
        "(looked for <repos>/<instance_id> or the record's repo_dir; see --shared-snapshots)"
    ]


@pytest.fixture
def invalid_bench(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Two instances over a.py (20 lines) and b.py (30 lines): ``org__r-1`` has invalid ground-truth regions,
    ``org__r-2`` a clean ground truth and invalid predictions."""
    repos = tmp_path / "repos"
    for iid in ("org__r-1", "org__r-2"):
        _snapshot(repos, iid, {"a.py": 20, "b.py": 30})
    gt1 = [
        _region("a.py", 1, 10),
        _region("a.py", 12, 11),  # start > end
        _region("a.py", 0, 3),  # start < 1
        _region("a.py", 15, 25),  # past the last line (20)
        _region("gone.py", 1, 5),  # not in the snapshot
        _region("a.py", -5, -1),  # the last 5 lines: a valid sentinel
    ]
    records = [
        _record("org__r-1", gt1, optional=[_region("b.py", 1, -1), _region("b.py", 9, 4)]),
        _record("org__r-2", [_region("a.py", 1, 10)]),
    ]
    bench = _write_jsonl(tmp_path / "bench.jsonl", records)
    preds2 = [
        _region("a.py", 1, 10),
        _region("a.py", 5, 3),  # start > end
        _region("a.py", 15, 10**9),  # past the last line
        _region("b.py", 0, 4),  # start < 1
        _region("b.py", -3, -1),  # valid sentinel (outside the ground truth: case 7)
    ]
    rows = _write_jsonl(
        tmp_path / "rows.jsonl",
        [
            {"instance_id": "org__r-1", "explorer": "x", "regions": [_region("a.py", 1, 10)]},
            {"instance_id": "org__r-2", "explorer": "x", "regions": preds2},
        ],
    )
    return bench, repos, rows


def test_case6_invalid_regions_are_counted_warned_recorded_and_strict_errors(
    invalid_bench: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each kind of invalid region is counted, gets one warning line naming the first instance, is written into
    the JSON, and makes --strict exit 1; the scores are those of the reference evaluator, unchanged."""
    bench, repos, rows = invalid_bench
    status, summary, _, err = _run_evaluate(capsys, tmp_path, bench, repos, rows)
    assert status == 0
    invalid = summary["coverage"]["invalid_regions"]
    assert invalid["ground_truth"] == {
        "start_after_end": [
            {"instance_id": "org__r-1", **_region("a.py", 12, 11)},
            {"instance_id": "org__r-1", **_region("b.py", 9, 4)},
        ],
        "start_below_1": [{"instance_id": "org__r-1", **_region("a.py", 0, 3)}],
        "past_end_of_file": [{"instance_id": "org__r-1", **_region("a.py", 15, 25), "file_lines": 20}],
        "outside_snapshot": [{"instance_id": "org__r-1", **_region("gone.py", 1, 5)}],
    }
    assert invalid["predictions"] == {
        "start_after_end": [{"instance_id": "org__r-2", **_region("a.py", 5, 3)}],
        "start_below_1": [{"instance_id": "org__r-2", **_region("b.py", 0, 4)}],
        "past_end_of_file": [{"instance_id": "org__r-2", **_region("a.py", 15, 10**9), "file_lines": 20}],
    }
    kinds = [line for line in err.splitlines() if line.startswith("warning: x: ") and " region(s) in " in line]
    assert len(kinds) == 7  # one line per side and kind
    assert "warning: x: 2 ground-truth region(s) in 1 instance(s) have start > end, e.g. org__r-1: a.py 12-11" in err
    assert "warning: x: 1 ground-truth region(s) in 1 instance(s) name files outside the snapshot" in err
    assert (
        "warning: x: 1 predicted region(s) in 1 instance(s) end past the file's last line (margin 0 lines), "
        "e.g. org__r-2: a.py 15-1000000000 (the file has 20 lines)" in err
    )
    # the scores are the reference's: P = a.py 1-10 and 15-1e9 (5-3 is empty), b.py 1-4 (start 0 -> 1; b.py -3..-1
    # has no line count: 0 lines) -> 10 + (1e9 - 14) + 4 = 1e9 lines, 10 of them core
    metrics = summary["per_instance"][1]["metrics"]
    assert metrics["precision"] == 10 / 10**9
    assert metrics["recall"] == 1.0
    gt_counts = {"org__r-1": {"a.py": 20, "b.py": 30}, "org__r-2": {"a.py": 20}}  # gone.py: not in the snapshot
    preds = {json.loads(line)["instance_id"]: json.loads(line)["regions"] for line in rows.read_text().splitlines()}
    for record, row in zip(load_bench(bench), summary["per_instance"], strict=True):
        expected = evaluate_instance(preds[record.instance_id], record.ground_truth, gt_counts[record.instance_id])
        assert row["metrics"] == expected
    assert _run_evaluate(capsys, tmp_path, bench, repos, rows, "--strict")[0] == 1


def test_case6_issue_map_ids_matching_no_record_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An issue map with ids of no record: their number and the first few are printed."""
    issue_map = tmp_path / "issues.json"
    issue_map.write_text(json.dumps({"mini__pyshop-1": "text", "nope-1": "a", "nope-2": "b", "nope-3": "c"}))
    rows = _write_jsonl(
        tmp_path / "rows.jsonl",
        [{"instance_id": "mini__pyshop-1", "explorer": "x", "regions": [_region("pyshop/cart.py", 28, 31)]}],
    )
    status, _, _, err = _run_evaluate(capsys, tmp_path, MINI_BENCH, MINI_REPOS, rows, "--issue-map", str(issue_map))
    assert status == 0
    assert (
        f"warning: {issue_map}: 3 of its 4 instance ids match no record of {MINI_BENCH}: nope-1, nope-2, nope-3" in err
    )


def test_case6_records_without_core_regions_are_counted_in_run_evaluate_and_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """run, evaluate and compare each say how many records they drop for empty read_core_regions."""
    records = [json.loads(line) for line in MINI_BENCH.read_text().splitlines()][:2]
    empty = _record("mini__empty-9", [])
    bench = _write_jsonl(tmp_path / "bench.jsonl", [records[0], empty, records[1]])
    note = (
        f"note: {bench}: 1 of 3 records have no read_core_regions and are skipped (as the reference runner's "
        "--skip-empty-core): mini__empty-9"
    )
    store = ["--store", str(tmp_path / "store")]
    out = tmp_path / "rows.jsonl"
    assert (
        _script("run_baselines")(
            ["--bench", str(bench), "--repos", str(MINI_REPOS), "--out", str(out), *store, "--quiet"]
        )
        == 0
    )
    assert note in capsys.readouterr().err
    assert _run_evaluate(capsys, tmp_path, bench, MINI_REPOS, out)[3].count(note) == 1
    compare = [
        "--bench", str(bench), "--repos", str(MINI_REPOS), "--out", str(tmp_path / "cmp"), *store, "--quiet",
        "--chunkers", "window", "--retrievers", "bm25", "--references", "reference_bm25", "--resamples", "20",
    ]  # fmt: skip
    assert _script("compare_chunkers")(compare) == 0
    assert note in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------------------
# Case 7
# ----------------------------------------------------------------------------------------------------------


@pytest.fixture
def whole_file_guess(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The worked example of docs/metrics.md: core region a.py 1-10 (a.py has 20 lines); the prediction is a
    whole-file guess at b.py (400 lines, outside the ground truth) followed by a.py 1-10."""
    repos = tmp_path / "repos"
    _snapshot(repos, "org__r-1", {"a.py": 20, "b.py": 400})
    bench = _write_jsonl(tmp_path / "bench.jsonl", [_record("org__r-1", [_region("a.py", 1, 10)])])
    preds = [_region("b.py", 1, -1), _region("a.py", 1, 10)]
    rows = _write_jsonl(tmp_path / "rows.jsonl", [{"instance_id": "org__r-1", "explorer": "agent", "regions": preds}])
    return bench, repos, rows


#: The worked example's reference figures (b.py unresolvable: 0 lines, no budget) ...
REFERENCE_FIGURES = {
    "precision": 1.0,
    "recall": 1.0,
    "f1_score": 1.0,
    "noise_region_rate": 0.5,
    "context_efficiency": 1.0,
    "ndcg_at_100": 1 / math.log2(3),
    "ndcg_at_500": 1 / math.log2(3),
    "recall_at_100": 1.0,
    "recall_at_500": 1.0,
    "first_useful_hit": 0.5,
}
#: ... and with b.py resolved to its 400 lines (P = 410 lines; b.py fills the first 100 and 300 line slots).
RESOLVED_FIGURES = {
    "precision": 10 / 410,
    "recall": 1.0,
    "f1_score": 20 / 420,
    "noise_region_rate": 0.5,
    "context_efficiency": 10 / 410,
    "ndcg_at_100": 0.0,
    "ndcg_at_500": 1 / math.log2(3),
    "recall_at_100": 0.0,
    "recall_at_500": 1.0,
    "first_useful_hit": 0.5,
}


def test_case7_sentinel_regions_outside_the_ground_truth_are_counted(
    whole_file_guess: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole-file guess is counted (screen and JSON); the reference figures stay as they are."""
    bench, repos, rows = whole_file_guess
    status, summary, _, err = _run_evaluate(capsys, tmp_path, bench, repos, rows)
    assert status == 0
    assert summary["coverage"]["sentinel_regions_outside_gt"] == {"org__r-1": [_region("b.py", 1, -1)]}
    assert summary["coverage"]["sentinel_region_count"] == 1
    assert (
        "note: agent: 1 predicted region(s) in 1 instance(s) use end -1 or a negative start on a file outside the "
        "ground truth: the reference scores them as 0 lines (--score-predicted-lines scores them with the file's "
        "length), e.g. org__r-1: b.py 1--1" in err
    )
    for name, value in REFERENCE_FIGURES.items():
        assert summary["metrics"][name] == pytest.approx(value), name
    assert "predicted_files_resolved" not in summary


def test_case7_score_predicted_lines_prints_a_second_table(
    whole_file_guess: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--score-predicted-lines adds the figures with b.py resolved to its 400 lines (the worked example)."""
    bench, repos, rows = whole_file_guess
    status, summary, out, _ = _run_evaluate(capsys, tmp_path, bench, repos, rows, "--score-predicted-lines")
    assert status == 0
    for name, value in REFERENCE_FIGURES.items():
        assert summary["metrics"][name] == pytest.approx(value), name
    resolved = summary["predicted_files_resolved"]["metrics"]
    for name, value in RESOLVED_FIGURES.items():
        assert resolved[name] == pytest.approx(value), name
    assert "\npredicted files resolved (end -1 and negative starts scored with the file's length)\n" in out
    table = out.split("predicted files resolved")[1]
    assert "| agent |" in table and "0.0244" in table  # precision 10/410


def test_case7_our_explorers_emit_only_plain_disjoint_regions(tmp_path: Path, tiny_model_factory: Any) -> None:
    """Every explorer of the toolkit, on the mini bench: 1 <= start <= end <= the file's line count, no
    sentinels, and no two regions of one answer overlap (embedding explorers use a tiny model knowing the
    queries' words, so that they return regions)."""
    import re

    import numpy as np

    from swe_explore.chunking.lines import count_lines
    from swe_explore.explore.config import EXPLORER_NAMES, takes_option
    from swe_explore.explore.explorer import make_explorer

    records = load_bench(MINI_BENCH)
    words = sorted({w for r in records for w in re.findall(r"[a-z0-9]+", r.query.lower())})
    rng = np.random.default_rng(0)
    tiny_model_dir = tiny_model_factory({w: rng.random(8).tolist() for w in words})
    for name in EXPLORER_NAMES:
        n_regions = 0
        options: dict[str, Any] = {} if name.startswith("reference_") else {"store": tmp_path / "store"}
        if takes_option(name, "model") and name != "learned":
            options["model"] = str(tiny_model_dir)
        explorer = make_explorer(name, **options)
        for record in records:
            snapshot = MINI_REPOS / record.instance_id
            regions = explorer.explore(snapshot, record.query)
            for path, start, end in regions:
                n_lines = count_lines((snapshot / path).read_bytes())
                assert 1 <= start <= end <= n_lines, (name, record.instance_id, path, start, end, n_lines)
                assert resolve_interval(path, start, end, {}) == (start, end)
            for i, (p1, s1, e1) in enumerate(regions):
                for p2, s2, e2 in regions[i + 1 :]:
                    assert p1 != p2 or e1 < s2 or e2 < s1, (name, record.instance_id, (p1, s1, e1), (p2, s2, e2))
            n_regions += len(regions)
        assert n_regions, f"{name} returned no region on the mini bench"
