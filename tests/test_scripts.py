"""End-to-end tests of the scripts on the mini bench that ships with the project (examples/mini)."""

from __future__ import annotations

import json
import runpy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
MINI_BENCH = ROOT / "swe_explore" / "data" / "mini" / "mini.jsonl"
MINI_REPOS = ROOT / "swe_explore" / "data" / "mini" / "repos"


def _script(name: str) -> Callable[[list[str]], int]:
    main: Callable[[list[str]], int] = runpy.run_path(str(ROOT / "scripts" / f"{name}.py"))["main"]
    return main


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _run(tmp_path: Path, *extra: str) -> tuple[int, Path]:
    out = tmp_path / "rows.jsonl"
    argv = [
        "--bench",
        str(MINI_BENCH),
        "--repos",
        str(MINI_REPOS),
        "--out",
        str(out),
        "--store",
        str(tmp_path / "store"),
        "--quiet",
        *extra,
    ]
    return _script("run_baselines")(argv), out


def test_run_baselines_writes_one_reference_row_per_instance(tmp_path: Path) -> None:
    """BM25 over function chunks finds the buggy definition of each mini instance first, within K and B."""
    status, out = _run(tmp_path, "--retriever", "bm25", "--k", "3", "--budget", "60", "--no-fill", "--merge-gap", "0")
    assert status == 0
    rows = {r["instance_id"]: r for r in _rows(out)}
    assert sorted(rows) == ["mini__goserver-2", "mini__pyshop-1", "mini__rustcalc-4", "mini__tsformat-3"]
    first = {iid: (r["regions"][0]["path"], r["regions"][0]["start"]) for iid, r in rows.items()}
    assert first["mini__pyshop-1"][0] == "pyshop/cart.py"
    assert first["mini__goserver-2"] == ("server/handler.go", 14)
    assert first["mini__tsformat-3"] == ("src/format.ts", 8)
    for row in rows.values():
        assert row["outcome"] == "SUCCESS" and row["explorer"] == "bm25+function"
        assert 1 <= row["num_regions"] <= 3
        assert sum(r["end"] - r["start"] + 1 for r in row["regions"]) <= 60
        assert set(row["metrics"]) >= {"hit_file_rate", "ndcg_at_500", "context_efficiency"}
        assert row["explorer_config"]["pack"]["k"] == 3
    assert rows["mini__goserver-2"]["metrics"]["hit_file_rate"] == 1.0


def test_run_baselines_resumes_and_refuses_a_different_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second run appends nothing; a run with another K into the same file is refused (exit 2), naming the
    field that differs."""
    _run(tmp_path)
    out = tmp_path / "rows.jsonl"
    before = out.read_text()
    assert _run(tmp_path)[0] == 0
    assert out.read_text() == before
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        _run(tmp_path, "--k", "2")
    assert exc.value.code == 2
    assert "pack.k: 5 in the file, 2 now" in capsys.readouterr().err


def test_config_differences_names_nested_fields() -> None:
    """Differences are dotted paths with both values; a missing config is reported whole; at most `limit`."""
    from swe_explore.evaluation.runner import config_differences

    old = {"pack": {"k": 5, "merge_gap": 20}, "chunker": {"name": "function"}}
    new = {"pack": {"k": 5, "merge_gap": 10}, "chunker": {"name": "window"}}
    assert config_differences(old, new) == [
        'chunker.name: "function" in the file, "window" now',
        "pack.merge_gap: 20 in the file, 10 now",
    ]
    assert config_differences(old, new, limit=1) == ['chunker.name: "function" in the file, "window" now']
    assert config_differences(old, old) == []
    assert config_differences(None, {"k": 1}) == ['explorer_config: null in the file, {"k": 1} now']


def test_reference_baseline_runs_through_the_same_script(tmp_path: Path) -> None:
    """The reference BM25 re-run returns raw 80-line windows of .py/.md/.toml files only (no Go, TS, Rust)."""
    status, out = _run(tmp_path, "--retriever", "reference_bm25")
    assert status == 0
    rows = {r["instance_id"]: r for r in _rows(out)}
    go_paths = {reg["path"] for reg in rows["mini__goserver-2"]["regions"]}
    assert not any(p.endswith(".go") for p in go_paths)
    assert rows["mini__goserver-2"]["metrics"]["hit_file_rate"] == 0.0


def test_evaluate_prints_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """evaluate.py rescored rows match the metrics written by run_baselines.py."""
    _, out = _run(tmp_path, "--retriever", "bm25")
    capsys.readouterr()
    assert (
        _script("evaluate")(
            ["--bench", str(MINI_BENCH), "--repos", str(MINI_REPOS), str(out), "--json", str(tmp_path / "s.json")]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "bm25+function" in printed and "nDCG@500" in printed
    summary = json.loads((tmp_path / "s.json").read_text())["bm25+function"]
    rows = _rows(out)
    mean_hit = sum(r["metrics"]["hit_file_rate"] for r in rows) / len(rows)
    assert summary["cases"] == 4
    assert summary["metrics"]["hit_file_rate"] == pytest.approx(mean_hit)


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_evaluate_compare_two_tiny_result_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``gold`` predicts each instance's core regions (all hit metrics 1), ``empty`` predicts nothing (all 0) and
    lacks one instance: 3 instances compared; 3 differences of +1 give the exact p = 2 / 2^3 = 0.25."""
    records = [json.loads(line) for line in MINI_BENCH.read_text().splitlines()]
    gold = _write_rows(
        tmp_path / "gold.jsonl",
        [
            {"instance_id": r["instance_id"], "explorer": "gold", "regions": r["ground_truth"]["read_core_regions"]}
            for r in records
        ],
    )
    empty = _write_rows(
        tmp_path / "empty.jsonl",
        [{"instance_id": r["instance_id"], "explorer": "empty", "regions": []} for r in records[:3]],
    )
    argv = [
        "--bench",
        str(MINI_BENCH),
        "--repos",
        str(MINI_REPOS),
        str(gold),
        str(empty),
        "--compare",
        "--baseline",
        str(empty),
        "--metrics",
        "main",
        "--json",
        str(tmp_path / "s.json"),
        "--per-instance-csv",
        str(tmp_path / "pi.csv"),
    ]
    capsys.readouterr()
    assert _script("evaluate")(argv) == 0
    printed = capsys.readouterr().out
    missing = records[3]["instance_id"]
    assert (
        f"compared: 3 instances present in all 2 files, baseline 'empty' (left out: 1 missing from empty: {missing})"
    ) in printed
    table = printed.split("compared: ")[1].splitlines()
    assert table[1].split("|")[1:3] == [" metric    ", " empty                           "]
    assert table[3] == "| HitFile   | 0.000 [0.000, 0.000] (baseline) | 1.000 [1.000, 1.000] p=0.250 |"
    assert "n = 3 instances present in all 2 compared files" in printed
    summaries = json.loads((tmp_path / "s.json").read_text())
    assert list(summaries) == ["empty", "gold"]
    # the means table still scores the missing row as 0 (4 cases); the comparison keeps the 3 common ones
    assert summaries["empty"]["cases"] == 4 and summaries["empty"]["per_instance"][3]["outcome"] == "NOT_ATTEMPTED"
    assert [r["metrics"]["recall"] for r in summaries["gold"]["per_instance"]] == [1.0] * 4
    hit = summaries["gold"]["comparison"]["metrics"]["hit_file_rate"]
    assert (hit["mean"], hit["delta"], hit["p"], hit["p_holm"]) == (1.0, 1.0, 0.25, 0.25)
    assert summaries["empty"]["comparison"]["metrics"]["hit_file_rate"]["p"] is None
    csv_lines = (tmp_path / "pi.csv").read_text().splitlines()
    assert csv_lines[0].startswith("label,instance_id,outcome,precision,recall,")
    assert len(csv_lines) == 1 + 4 + 4
    assert csv_lines[5].startswith(f"gold,{records[0]['instance_id']},SUCCESS,")


def test_index_repos_builds_then_skips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """index_repos.py builds every mini snapshot with two retrievers, then finds them all up to date."""
    argv = [
        "--repos",
        str(MINI_REPOS),
        "--out",
        str(tmp_path / "store"),
        "--quiet",
        "--retriever",
        "bm25",
        "--retriever",
        "tfidf",
        "--chunker",
        "window",
        "--size",
        "20",
        "--overlap",
        "5",
    ]
    index_repos = _script("index_repos")
    assert index_repos(argv) == 0
    assert "4 built, 0 up to date, 0 failed" in capsys.readouterr().out
    assert index_repos(argv) == 0
    assert "0 built, 4 up to date, 0 failed" in capsys.readouterr().out
    manifests = sorted((tmp_path / "store").glob("*/window-*/manifest.json"))
    assert len(manifests) == 4
    manifest = json.loads(manifests[0].read_text())
    assert manifest["chunker"] == {"name": "window", "config": {"name": "window", "size": 20, "overlap": 5}}
    # mini__goserver-2: cmd/app/main.go, go.mod, server/handler.go, server/logging.go
    assert manifest["snapshot"]["name"] == "mini__goserver-2"
    assert manifest["counts"]["files"] == manifest["stats"]["walk"]["files_indexed"] == 4


def test_index_repos_records_a_failing_snapshot_and_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A corrupt index in one snapshot is reported as failed while the others are built; exit status 1; one line
    per failure, and its traceback too under --debug."""
    store = tmp_path / "store"
    argv = ["--repos", str(MINI_REPOS), "--out", str(store), "--quiet"]
    index_repos = _script("index_repos")
    assert index_repos(argv) == 0
    npz = next(store.glob("mini__pyshop-1/function-*/chunks.npz"))
    npz.write_bytes(b"garbage")
    (store / "mini__rustcalc-4").rename(tmp_path / "gone")
    capsys.readouterr()
    assert index_repos(argv) == 1
    captured = capsys.readouterr()
    assert "1 built, 2 up to date, 1 failed" in captured.out
    assert "mini__pyshop-1" in captured.err and "chunks.npz" in captured.err
    failed = [line for line in captured.err.splitlines() if line.startswith("  FAILED")]
    assert len(failed) == 1 and "Traceback" not in captured.err  # one line, no traceback
    monkeypatch.setenv("SWE_EXPLORE_DEBUG", "1")  # what --debug sets for the whole command (commands._errors)
    npz.write_bytes(b"garbage again")
    assert index_repos(argv) == 1
    err = capsys.readouterr().err
    assert "  FAILED mini__pyshop-1" in err and "    Traceback (most recent call last):" in err


def test_compare_chunkers_writes_table_csv_rows_and_plots(tmp_path: Path) -> None:
    """A 2×1 grid plus the reference BM25 writes one result file per cell, the tables and one plot per metric."""
    out = tmp_path / "cmp"
    argv = [
        "--bench",
        str(MINI_BENCH),
        "--repos",
        str(MINI_REPOS),
        "--out",
        str(out),
        "--store",
        str(tmp_path / "store"),
        "--quiet",
        "--chunkers",
        "window",
        "function",
        "--retrievers",
        "bm25",
        "--references",
        "reference_bm25",
    ]
    assert _script("compare_chunkers")(argv) == 0
    assert sorted(p.name for p in (out / "results").iterdir()) == [
        "bm25+function.jsonl",
        "bm25+window.jsonl",
        "reference_bm25.jsonl",
    ]
    lines = (out / "table.csv").read_text().splitlines()
    assert lines[0].startswith("cell,chunker,retriever,language,cases")
    # 3 cells × (all + 4 languages: go, python, rust, typescript)
    assert len(lines) == 1 + 3 * 5
    table = (out / "table.md").read_text()
    assert "## typescript" in table
    # the default baseline is the default explorer's cell; every cell has mean [CI], the others a Holm p
    assert "| metric      | reference_bm25  " in table and "(baseline)" in table
    assert "n = 4 instances present in all 3 compared files" in table
    assert "vs `bm25+function`" in table
    header = lines[0].split(",")
    assert header[23:25] == ["baseline", "compared_instances"]
    assert header[25:31] == [
        "precision_ci_low",
        "precision_ci_high",
        "precision_delta",
        "precision_p",
        "precision_p_holm",
        "precision_sig",
    ]
    by_cell = {row.split(",")[0]: row.split(",") for row in lines[1:] if row.split(",")[3] == "all"}
    assert by_cell["bm25+function"][23:25] == ["bm25+function", "4"]
    assert by_cell["bm25+function"][28:30] == ["", ""]  # the baseline is not tested
    assert len((out / "per_instance.csv").read_text().splitlines()) == 1 + 3 * 4
    pytest.importorskip("matplotlib")
    assert (out / "plots" / "ndcg_at_500.png").stat().st_size > 1000
    assert (out / "plots" / "delta_ndcg_at_500.png").stat().st_size > 1000


def test_compare_chunkers_baseline_cell_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--baseline-cell takes a label or CHUNKER/RETRIEVER (default: the default explorer's cell, else the first);
    an unknown cell is a usage error naming the cells, before anything runs."""
    from swe_explore.evaluation.compare import baseline_cell

    cells: list[tuple[str, Any, dict[str, str]]] = [
        ("reference_bm25", None, {"chunker": "reference", "retriever": "reference_bm25"}),
        ("bm25+window", None, {"chunker": "window", "retriever": "bm25"}),
        ("bm25+window (raw)", None, {"chunker": "window", "retriever": "bm25 raw"}),
    ]
    assert baseline_cell(None, cells) == "reference_bm25"
    assert baseline_cell(None, [*cells, ("bm25+function", None, {})]) == "bm25+function"
    assert baseline_cell("window/bm25", cells) == "bm25+window"
    assert baseline_cell("window/bm25 raw", cells) == "bm25+window (raw)"
    assert baseline_cell("reference_bm25", cells) == "reference_bm25"
    with pytest.raises(ValueError, match="cells: reference_bm25, bm25[+]window, bm25[+]window [(]raw[)]"):
        baseline_cell("function/bm25", cells)
    argv = [
        "--bench",
        str(MINI_BENCH),
        "--repos",
        str(MINI_REPOS),
        "--out",
        str(tmp_path / "cmp"),
        "--store",
        str(tmp_path / "store"),
        "--quiet",
        "--chunkers",
        "window",
        "--retrievers",
        "bm25",
        "--references",
        "reference_bm25",
        "--baseline-cell",
        "function/bm25",
    ]
    with pytest.raises(SystemExit) as exc:
        _script("compare_chunkers")(argv)
    assert exc.value.code == 2
    assert "cells: reference_bm25, bm25+window" in capsys.readouterr().err
    assert not (tmp_path / "cmp").exists()


@pytest.mark.parametrize("retriever", ["bm25", "tfidf", "reference_bm25", "reference_tfidf"])
def test_br16_empty_and_binary_only_snapshots_give_empty_rows(tmp_path: Path, retriever: str) -> None:
    """An empty and a binary-only snapshot give SUCCESS rows; ours return no regions and zero metrics.

    See docs/chunking.md, 'The walker'. The reference baselines have no binary detection (they decode with
    errors="ignore"), so they faithfully return the binary file's window; they must still not fail.
    """
    record = json.loads(MINI_BENCH.read_text().splitlines()[0])
    bench = tmp_path / "bench.jsonl"
    rows = []
    for iid in ("empty__repo-1", "binary__repo-2"):
        rows.append(json.dumps(record | {"instance_id": iid}))
        (tmp_path / "repos" / iid).mkdir(parents=True)
    bench.write_text("\n".join(rows) + "\n")
    (tmp_path / "repos" / "empty__repo-1" / "empty.py").write_text("")
    (tmp_path / "repos" / "binary__repo-2" / "blob.py").write_bytes(b"\x00\x01\x02" * 100)
    out = tmp_path / "rows.jsonl"
    argv = [
        "--bench",
        str(bench),
        "--repos",
        str(tmp_path / "repos"),
        "--out",
        str(out),
        "--store",
        str(tmp_path / "store"),
        "--quiet",
        "--retriever",
        retriever,
        "--k",
        "50",
    ]
    assert _script("run_baselines")(argv) == 0
    rows_by_id = {row["instance_id"]: row for row in _rows(out)}
    assert all(row["outcome"] == "SUCCESS" for row in rows_by_id.values())
    checked = ["empty__repo-1"] if retriever.startswith("reference") else ["empty__repo-1", "binary__repo-2"]
    for iid in checked:
        assert rows_by_id[iid]["regions"] == []
        assert set(rows_by_id[iid]["metrics"].values()) == {0.0}


def test_evaluate_keeps_every_file_of_one_explorer_and_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Three copies of one result file (same explorer, same file name, dirs a/ b/ c/) give three columns and
    three ``--json`` summaries: the first keeps the explorer name, the others are told apart by their folder."""
    records = [json.loads(line) for line in MINI_BENCH.read_text().splitlines()]
    rows = [{"instance_id": r["instance_id"], "explorer": "learned", "regions": []} for r in records]
    paths = []
    for folder in "abc":
        (tmp_path / folder).mkdir()
        paths.append(str(_write_rows(tmp_path / folder / "learned.jsonl", rows)))
    argv = ["--bench", str(MINI_BENCH), "--repos", str(MINI_REPOS), *paths, "--json", str(tmp_path / "s.json")]
    capsys.readouterr()
    assert _script("evaluate")([*argv, "--compare"]) == 0
    printed = capsys.readouterr().out
    summaries = json.loads((tmp_path / "s.json").read_text())
    assert list(summaries) == ["learned", "learned (b/learned.jsonl)", "learned (c/learned.jsonl)"]
    assert [s["file"] for s in summaries.values()] == paths
    assert "compared: 4 instances present in all 3 files, baseline 'learned'" in printed
    table = printed.splitlines()[3:8]
    assert [line.split("|")[1].strip() for line in table[2:]] == list(summaries)


def test_repos_without_bench_is_a_usage_error_unless_it_is_the_mini_repos(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``run_baselines.py --repos DIR`` without ``--bench``: the mini bench would run (or resume) on foreign
    snapshots, so it is refused (exit 2, one line naming DIR); the mini bench's own repos are accepted."""
    from swe_explore import MINI_REPOS
    from swe_explore.commands.run import main as run_main

    (tmp_path / "repos").mkdir()
    with pytest.raises(SystemExit) as exc:
        run_main(["--repos", str(tmp_path / "repos"), "--out", str(tmp_path / "x.jsonl")])
    assert exc.value.code == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.endswith(
        f"error: --repos {tmp_path / 'repos'} needs --bench FILE, the bench of its snapshots (without --bench the "
        "mini bench runs, on its own snapshots)"
    )
    argv = ["--repos", str(MINI_REPOS), "--out", str(tmp_path / "mini.jsonl"), "--retriever", "bm25", "--quiet"]
    argv += ["--store", str(tmp_path / "store")]
    assert run_main(argv) == 0
    assert len((tmp_path / "mini.jsonl").read_text().splitlines()) == 4
