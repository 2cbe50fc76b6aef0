"""Tests for the run loop (evaluation/runner.py) and the scripts' handling of bad input."""

from __future__ import annotations

import json
import runpy
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from swe_explore.chunking.types import Region
from swe_explore.commands.explorer_args import parse_option
from swe_explore.evaluation.bench import load_bench
from swe_explore.evaluation.runner import ConcurrentRunError, exclusive_lock, run_explorer

ROOT = Path(__file__).resolve().parent.parent
MINI_BENCH = ROOT / "swe_explore" / "data" / "mini" / "mini.jsonl"
MINI_REPOS = ROOT / "swe_explore" / "data" / "mini" / "repos"


class _Explorer:
    """A stub explorer that fails on the instances named in ``fail``."""

    name = "stub"
    explorer_config: ClassVar[dict[str, int]] = {"stub": 1}

    def __init__(self, fail: set[str]) -> None:
        self.fail = fail
        self.calls: list[str | None] = []

    def explore(self, snapshot_dir: Path, query: str, snapshot_name: str | None = None) -> list[Region]:
        self.calls.append(snapshot_name)
        if snapshot_name in self.fail:
            raise RuntimeError("boom")
        return [Region("README.md", 1, 2)]


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_failed_rows_are_retried_on_resume(tmp_path: Path) -> None:
    """An ERROR row is dropped and rerun on the next run; SUCCESS rows are kept and not rerun."""
    records = load_bench(MINI_BENCH)
    out = tmp_path / "rows.jsonl"
    first = run_explorer(_Explorer({"mini__goserver-2"}), records, MINI_REPOS, out, progress=False)
    assert (first.written, first.failed) == (4, 1)
    again = _Explorer(set())
    second = run_explorer(again, records, MINI_REPOS, out, progress=False)
    assert (second.resumed, second.retried, second.written, again.calls) == (3, 1, 1, ["mini__goserver-2"])
    outcomes = {r["instance_id"]: r["outcome"] for r in _rows(out)}
    assert len(_rows(out)) == 4 and set(outcomes.values()) == {"SUCCESS"}


def test_a_row_cut_off_by_a_kill_is_dropped_and_rerun(tmp_path: Path) -> None:
    """A last line without newline that is not valid JSON (a killed write) is discarded on resume."""
    records = load_bench(MINI_BENCH)
    out = tmp_path / "rows.jsonl"
    run_explorer(_Explorer(set()), records[:2], MINI_REPOS, out, progress=False)
    text = out.read_text()
    out.write_text(text + text.splitlines()[0][:40])  # a partial third row
    report = run_explorer(_Explorer(set()), records, MINI_REPOS, out, progress=False)
    assert (report.resumed, report.written) == (2, 2)
    assert [r["instance_id"] for r in _rows(out)] == [r.instance_id for r in records]


def test_a_second_writer_is_refused(tmp_path: Path) -> None:
    """While one run holds the result file's lock, another run on it raises ConcurrentRunError."""
    out = tmp_path / "rows.jsonl"
    with exclusive_lock(out), pytest.raises(ConcurrentRunError, match="another run is writing"):
        run_explorer(_Explorer(set()), load_bench(MINI_BENCH), MINI_REPOS, out, progress=False)
    assert not Path(f"{out}.lock").exists()


@pytest.mark.parametrize(
    "text,expected",
    [
        ("k1=1.2", ("k1", 1.2)),
        ("parts=[bm25,tfidf]", ("parts", ["bm25", "tfidf"])),
        ('parts=["bm25","potion"]', ("parts", ["bm25", "potion"])),
        ("backend=bm25s", ("backend", "bm25s")),
        ("max-length=512", ("max_length", 512)),
    ],
)
def test_parse_option(text: str, expected: tuple[str, Any]) -> None:
    """-O values are JSON, unquoted bracketed lists, or text; dashes in keys become underscores."""
    assert parse_option(text) == expected


def _main(script: str, argv: list[str]) -> int:
    main: Callable[[list[str]], int] = runpy.run_path(str(ROOT / "scripts" / f"{script}.py"))["main"]
    return main(argv)


def test_bench_without_repos_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A non-default --bench needs --repos; a missing --repos directory is named."""
    with pytest.raises(SystemExit) as exc:
        _main("run_baselines", ["--bench", str(MINI_BENCH.with_name("other.jsonl"))])
    assert exc.value.code == 2 and "--repos DIR is required" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        _main("run_baselines", ["--repos", str(tmp_path / "nope"), "--bench", str(MINI_BENCH)])
    assert exc.value.code == 2 and "nope is not a directory" in capsys.readouterr().err


def test_out_directory_and_bad_top_n_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--out pointing at a directory and --top-n 0 are rejected before any work, naming the problem."""
    with pytest.raises(SystemExit):
        _main("run_baselines", ["--out", str(tmp_path), "--store", str(tmp_path / "s"), "--quiet"])
    assert "is a directory" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        _main("run_baselines", ["--retriever", "bm25", "--top-n", "0", "--store", str(tmp_path / "s")])
    assert "top_n must be >= 1" in capsys.readouterr().err


def test_reference_baseline_rejects_options_it_would_ignore(capsys: pytest.CaptureFixture[str]) -> None:
    """The reference baselines are fixed (docs/metrics.md §2): chunker options and -O are refused, not ignored."""
    with pytest.raises(SystemExit):
        _main("run_baselines", ["--retriever", "reference_bm25", "--max-lines", "50"])
    assert "reference baseline as specified" in capsys.readouterr().err


def test_evaluate_skips_rows_outside_the_bench_and_accepts_empty_queries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rows for unknown instances are reported and skipped; a record with an empty issue text still scores."""
    lines = MINI_BENCH.read_text().splitlines()
    record = json.loads(lines[0]) | {"problem_statement": " "}
    bench = tmp_path / "bench.jsonl"
    bench.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    preds = tmp_path / "preds.jsonl"
    rows = [
        {"instance_id": "mini__pyshop-1", "regions": [{"path": "pyshop/cart.py", "start": 28, "end": 31}]},
        {"instance_id": "ghost__repo-9", "regions": []},
    ]
    preds.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert (
        _main(
            "evaluate",
            ["--bench", str(bench), "--repos", str(MINI_REPOS), str(preds), "--json", str(tmp_path / "s.json")],
        )
        == 0
    )
    assert "ghost__repo-9" in capsys.readouterr().err
    summary = json.loads((tmp_path / "s.json").read_text())
    only = next(iter(summary.values()))
    assert only["cases"] == 4  # three bench instances without a row count as 0
    assert only["metrics"]["hit_file_rate"] == pytest.approx(0.5 / 4)  # cart.py is 1 of 2 core files


def test_index_repos_store_alias_and_option_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """index_repos.py writes to --store as to --out, and rejects --jobs 0 and --scheduler without dask."""
    assert _main("index_repos", ["--repos", str(MINI_REPOS), "--store", str(tmp_path / "s"), "--quiet"]) == 0
    assert len(list((tmp_path / "s").glob("mini__*/function-*/manifest.json"))) == 4
    for argv, message in ((["--jobs", "0"], "--jobs must be"), (["--scheduler", "tcp://x:1"], "needs --backend dask")):
        with pytest.raises(SystemExit):
            _main("index_repos", ["--repos", str(MINI_REPOS), "--store", str(tmp_path / "s"), *argv])
        assert message in capsys.readouterr().err
