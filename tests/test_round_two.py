"""Issue 18, round two: nothing silently wrong, nothing lost, no tracebacks (cases 1, 2, 5 and 9)."""

from __future__ import annotations

import argparse
import dataclasses
import errno
import hashlib
import json
import os
import runpy
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from swe_explore.chunking.types import Region
from swe_explore.evaluation.bench import SNAPSHOT_MARKER, check_snapshot, load_bench

ROOT = Path(__file__).resolve().parent.parent
MINI_BENCH = ROOT / "swe_explore" / "data" / "mini" / "mini.jsonl"
MINI_REPOS = ROOT / "swe_explore" / "data" / "mini" / "repos"
PYSHOP = MINI_REPOS / "mini__pyshop-1"


def _script(name: str) -> Callable[[list[str]], int]:
    main: Callable[[list[str]], int] = runpy.run_path(str(ROOT / "scripts" / f"{name}.py"))["main"]
    return main


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _python(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=ROOT, env={**os.environ, **(env or {})}
    )


class _Stub:
    """An explorer that records the queries it is given."""

    name = "stub"
    explorer_config: ClassVar[dict[str, int]] = {"stub": 1}

    def __init__(self) -> None:
        self.calls: list[str | None] = []

    def explore(self, snapshot_dir: Path, query: str, snapshot_name: str | None = None) -> list[Region]:
        self.calls.append(snapshot_name)
        return [Region("README.md", 1, 2)]


# ----------------------------------------------------------------------------------------------------------
# Case 1: stale resume
# ----------------------------------------------------------------------------------------------------------


def test_case1_rows_carry_the_hash_of_their_issue_text(tmp_path: Path) -> None:
    """Each row stores query_sha256, the SHA-256 of the issue text the explorer was given."""
    from swe_explore.evaluation.runner import run_explorer

    records = load_bench(MINI_BENCH)
    out = tmp_path / "rows.jsonl"
    run_explorer(_Stub(), records[:1], MINI_REPOS, out, progress=False)
    expected = hashlib.sha256(records[0].problem_statement.encode("utf-8")).hexdigest()
    assert _rows(out)[0]["query_sha256"] == expected


def test_case1_a_changed_issue_text_is_run_again(tmp_path: Path) -> None:
    """Two of four issue texts change: those two are re-run and counted, the other two are resumed."""
    from swe_explore.evaluation.runner import RERUN_QUERY, run_explorer

    records = load_bench(MINI_BENCH)
    out = tmp_path / "rows.jsonl"
    run_explorer(_Stub(), records, MINI_REPOS, out, progress=False)
    changed = [dataclasses.replace(r, problem_statement=r.problem_statement + " (edited)") for r in records[:2]]
    again = _Stub()
    report = run_explorer(again, changed + records[2:], MINI_REPOS, out, progress=False)
    assert (report.written, report.resumed, report.rerun) == (2, 2, {RERUN_QUERY: 2})
    assert again.calls == [r.instance_id for r in records[:2]]
    rows = {r["instance_id"]: r for r in _rows(out)}
    assert len(_rows(out)) == 4
    edited = hashlib.sha256((records[0].problem_statement + " (edited)").encode()).hexdigest()
    assert rows[records[0].instance_id]["query_sha256"] == edited


def test_case1_rows_of_an_older_version_are_run_again(tmp_path: Path) -> None:
    """Rows without query_sha256 cannot be checked: all are re-run, counted under one reason."""
    from swe_explore.evaluation.runner import RERUN_OLD_ROW, run_explorer

    records = load_bench(MINI_BENCH)
    out = tmp_path / "rows.jsonl"
    run_explorer(_Stub(), records, MINI_REPOS, out, progress=False)
    old = [{k: v for k, v in row.items() if k != "query_sha256"} for row in _rows(out)]
    out.write_text("".join(json.dumps(r) + "\n" for r in old))
    report = run_explorer(_Stub(), records, MINI_REPOS, out, progress=False)
    assert (report.written, report.resumed, report.rerun) == (4, 0, {RERUN_OLD_ROW: 4})


def test_case1_run_says_how_many_rows_were_rerun(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A second run with an --issue-map changing two texts prints "2 new, 2 resumed, 2 re-run: issue text changed"."""
    out = tmp_path / "rows.jsonl"
    argv = ["--out", str(out), "--store", str(tmp_path / "store"), "--quiet", "--retriever", "bm25"]
    assert _script("run_baselines")(argv) == 0
    records = load_bench(MINI_BENCH)
    issue_map = {r.instance_id: r.problem_statement for r in records}
    for r in records[:2]:
        issue_map[r.instance_id] = "the total is wrong"
    (tmp_path / "issues.json").write_text(json.dumps(issue_map))
    capsys.readouterr()
    assert _script("run_baselines")([*argv, "--issue-map", str(tmp_path / "issues.json")]) == 0
    assert "(2 new, 2 resumed, 2 re-run: issue text changed)" in capsys.readouterr().out


# ----------------------------------------------------------------------------------------------------------
# Case 2: no command writes over one of its inputs
# ----------------------------------------------------------------------------------------------------------


def _exit_status(main: Callable[[list[str]], int], argv: list[str]) -> int:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    return int(caught.value.code or 0)


@pytest.fixture(scope="module")
def predictions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A result file of the mini bench."""
    tmp = tmp_path_factory.mktemp("preds")
    out = tmp / "preds.jsonl"
    argv = ["--out", str(out), "--store", str(tmp / "store"), "--quiet", "--retriever", "bm25"]
    assert _script("run_baselines")(argv) == 0
    return out


@pytest.mark.parametrize("flag", ["--json", "--per-instance-csv"])
def test_case2_evaluate_refuses_to_write_over_its_predictions(
    predictions: Path, tmp_path: Path, flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json PRED (and --per-instance-csv via a symlink to PRED) is an error, exit 2; PRED is untouched."""
    before = predictions.read_bytes()
    predictions = tmp_path / "preds.jsonl"  # a copy: the shared file stays intact even where the check fails
    predictions.write_bytes(before)
    link = tmp_path / "link.jsonl"
    link.symlink_to(predictions)
    target = predictions if flag == "--json" else link
    assert _exit_status(_script("evaluate"), [str(predictions), flag, str(target)]) == 2
    err = capsys.readouterr().err
    assert f"{flag} {target} is the input PRED {predictions}" in err and len(err.strip().splitlines()) == 1
    assert predictions.read_bytes() == before


def test_case2_run_refuses_to_overwrite_its_bench(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """run --out BENCH --overwrite (here a hard link to the bench) is an error, exit 2; the bench is kept."""
    bench = tmp_path / "bench.jsonl"
    bench.write_bytes(MINI_BENCH.read_bytes())
    os.link(bench, tmp_path / "same.jsonl")
    argv = ["--bench", str(bench), "--repos", str(MINI_REPOS), "--out", str(tmp_path / "same.jsonl")]
    assert _exit_status(_script("run_baselines"), [*argv, "--overwrite", "--quiet", "--retriever", "bm25"]) == 2
    assert "is the input --bench" in capsys.readouterr().err
    assert bench.read_bytes() == MINI_BENCH.read_bytes()


def test_case2_prepare_refuses_to_overwrite_a_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """prepare --out SOURCE (a --source file) is an error, exit 2; the source file is kept."""
    release, source = tmp_path / "release.jsonl", tmp_path / "source.jsonl"
    release.write_text('{"instance_id": "a__b-1"}\n')
    source.write_text('{"instance_id": "a__b-1", "problem_statement": "x"}\n')
    argv = [str(release), "--source", str(source), "--out", str(source), "--quiet"]
    assert _exit_status(_script("prepare_bench"), argv) == 2
    assert "--out" in capsys.readouterr().err
    assert source.read_text() == '{"instance_id": "a__b-1", "problem_statement": "x"}\n'


# ----------------------------------------------------------------------------------------------------------
# Case 5: one line, an exit status, no traceback
# ----------------------------------------------------------------------------------------------------------


@pytest.fixture()
def corrupt_store(tmp_path: Path) -> Path:
    """A store holding the pyshop snapshot's bm25 index with a truncated chunk table."""
    store = tmp_path / "store"
    assert _script("explore")([str(PYSHOP), "cart total", "--retriever", "bm25", "--store", str(store)]) == 0
    (table,) = store.glob("*/function-*/chunks.npz")
    table.write_bytes(b"xx")
    return store


def test_case5_corrupt_index_in_explore_is_one_line(corrupt_store: Path) -> None:
    """explore over a corrupt index: exit 1, one line naming the file and --rebuild; --debug shows the traceback."""
    argv = ["scripts/explore.py", str(PYSHOP), "cart", "--retriever", "bm25", "--store", str(corrupt_store)]
    done = _python(*argv)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("explore.py: error: ") and "rerun with --rebuild" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" in _python(*argv, "--debug").stderr
    assert "Traceback" in _python(*argv, env={"SWE_EXPLORE_DEBUG": "1"}).stderr


def test_case5_corrupt_index_stops_a_run_unless_keep_going(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """run over a corrupt index stops at the instance (exit 1, no ERROR row written); --keep-going writes it."""
    from swe_explore.commands._errors import run_main

    store = tmp_path / "store"
    argv = ["--store", str(store), "--quiet", "--retriever", "bm25", "--limit", "1"]
    assert run_main(_script("run_baselines"), [*argv, "--out", str(tmp_path / "first.jsonl")]) == 0
    (table,) = store.glob("mini__pyshop-1/function-*/chunks.npz")
    table.write_bytes(b"xx")
    out = tmp_path / "rows.jsonl"
    capsys.readouterr()
    assert run_main(_script("run_baselines"), [*argv, "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "mini__pyshop-1: CorruptIndexError" in err and "the run stopped" in err and "Traceback" not in err
    assert not out.exists() or _rows(out) == []
    assert run_main(_script("run_baselines"), [*argv, "--out", str(out), "--keep-going"]) == 1
    assert [r["outcome"] for r in _rows(out)] == ["ERROR"]


def test_case5_disk_full_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ENOSPC while writing rows: exit 1, one line naming the file, the reason and what to do."""
    from swe_explore.commands._errors import run_main
    from swe_explore.evaluation.results import ResultsWriter

    out = tmp_path / "rows.jsonl"

    def full(self: ResultsWriter, row: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(self.path))

    monkeypatch.setattr(ResultsWriter, "write", full)
    argv = ["--out", str(out), "--store", str(tmp_path / "store"), "--quiet", "--retriever", "bm25"]
    assert run_main(_script("run_baselines"), argv) == 1
    err = capsys.readouterr().err.strip()
    assert err.split(": error: ", 1)[1] == (
        f"{out}: No space left on device (ENOSPC); free some space or write elsewhere"
    )


def test_case5_unwritable_json_is_one_line(predictions: Path, tmp_path: Path) -> None:
    """evaluate --json under a path that is a file (ENOTDIR): exit 1, one line, no traceback."""
    (tmp_path / "file").write_text("")
    done = _python("scripts/evaluate.py", str(predictions), "--json", str(tmp_path / "file" / "out.json"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"evaluate.py: error: {tmp_path / 'file' / 'out.json'}: File exists (EEXIST); "
        "a file is in the way, check the path"
    )


def test_case5_missing_model_is_one_line(tmp_path: Path) -> None:
    """--model /nonexistent: exit 1, one line naming the path and the flag."""
    done = _python(
        "scripts/explore.py", str(PYSHOP), "cart", "--retriever", "potion", "--model", "/nonexistent",
        "--store", str(tmp_path / "store"),
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        "explore.py: error: /nonexistent: Potion model directory does not exist; pass --model PATH"
    )


def test_case5_missing_extra_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """-O backend=bm25s without bm25s installed: exit 1, the pip command."""
    from swe_explore.commands._errors import run_main

    monkeypatch.setitem(sys.modules, "bm25s", None)  # import bm25s raises ImportError
    argv = [str(PYSHOP), "cart", "--retriever", "bm25", "-O", "backend=bm25s", "--store", str(tmp_path / "s")]
    assert run_main(_script("explore"), argv) == 1
    assert capsys.readouterr().err.strip().split(": error: ", 1)[1] == (
        "backend='bm25s' needs bm25s: pip install 'swe-explore-baselines[bm25s]'"
    )


def test_case5_ctrl_c_exits_130(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """KeyboardInterrupt during a run: exit status 130, "interrupted", no traceback."""
    import swe_explore.commands.run as run_command
    from swe_explore.commands._errors import run_main

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(run_command, "run_explorer", interrupted)
    assert run_main(run_command.main, ["--quiet", "--retriever", "bm25"]) == 130
    assert capsys.readouterr().err.strip().endswith("interrupted")


@pytest.mark.parametrize(
    "argv",
    [
        ["scripts/evaluate.py", "PRED"],
        ["scripts/show_chunks.py", str(MINI_REPOS), "--text"],
        ["scripts/run_baselines.py", "--retriever", "bm25", "--quiet", "--out", "OUT"],
        ["-m", "swe_explore.cli", "-h"],
    ],
)
def test_case5_a_closed_pipe_ends_quietly(argv: list[str], predictions: Path, tmp_path: Path) -> None:
    """Writing into a pipe whose reader is gone (``| head``): no traceback, no "Exception ignored"."""
    argv = [str(predictions) if a == "PRED" else str(tmp_path / "o.jsonl") if a == "OUT" else a for a in argv]
    proc = subprocess.Popen(
        [sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader goes away before the command writes
    err = proc.stderr.read()
    proc.wait()
    assert "Traceback" not in err and "BrokenPipeError" not in err and "Exception ignored" not in err


# ----------------------------------------------------------------------------------------------------------
# Case 9: small ones
# ----------------------------------------------------------------------------------------------------------


def test_case9_a_folder_without_source_files_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """explore over a folder of non-source files: a note naming the folder and the skip reasons."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.bin").write_text("hello")
    argv = [str(folder), "hello", "--retriever", "bm25", "--store", str(tmp_path / "store")]
    assert _script("explore")(argv) == 0
    err = capsys.readouterr().err
    assert f"note: no source files indexed in {folder} (1 file(s) seen; skipped: 1 unsupported_extension)" in err


def test_case9_too_large_files_are_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 9 MiB source file is skipped: explore and index say how many files were skipped as too large."""
    snapshot = tmp_path / "repos" / "big"
    snapshot.mkdir(parents=True)
    (snapshot / "small.py").write_text("def total():\n    return 1\n")
    (snapshot / "huge.py").write_text("x = 1\n" * (9 * 1024 * 1024 // 6 + 1))
    store = tmp_path / "store"
    assert _script("explore")([str(snapshot), "total", "--retriever", "bm25", "--store", str(store)]) == 0
    assert "note: 1 file(s) skipped as too large, not indexed: huge.py" in capsys.readouterr().err
    argv = ["--repos", str(tmp_path / "repos"), "--store", str(tmp_path / "store2"), "--quiet", "--no-graph"]
    assert _script("index_repos")([*argv, "--retriever", "bm25"]) == 0
    assert "note: big: 1 file(s) skipped as too large (not indexed)" in capsys.readouterr().err


def test_case9_an_integer_instance_id_is_named(tmp_path: Path) -> None:
    """instance_id 5 is not "missing": the error says it must be a string, naming file and line."""
    bench = tmp_path / "bench.jsonl"
    bench.write_text('{"instance_id": 5, "problem_statement": "x", "ground_truth": {}}\n')
    with pytest.raises(ValueError, match=r"bench\.jsonl:1: instance_id must be a string, got int$"):
        load_bench(bench)


def test_case9_a_bench_directory_is_named(tmp_path: Path) -> None:
    """A bench path that is a directory: the error says so (not "does not exist")."""
    with pytest.raises(FileNotFoundError, match="is a directory"):
        load_bench(tmp_path)


def test_case9_commits_compare_case_insensitively(tmp_path: Path) -> None:
    """An upper-case base_commit matches the snapshot's lower-case commit."""
    commit = "abcdef0123456789abcdef0123456789abcdef01"
    (tmp_path / SNAPSHOT_MARKER).write_text(json.dumps({"base_commit": commit}))
    record = dataclasses.replace(load_bench(MINI_BENCH)[0], base_commit=commit.upper())
    assert check_snapshot(record, tmp_path) == commit


def test_case9_help_texts(capsys: pytest.CaptureFixture[str]) -> None:
    """The ranking-prior help names explore/priors.py; every option of explore, evaluate and train has help."""
    from swe_explore.commands import evaluate, explore, train

    for module in (explore, train):
        parser: argparse.ArgumentParser = module._parser()
        assert [a.dest for a in parser._actions if not a.help] == []
    assert [a.dest for a in evaluate._parse(["PRED"])[0]._actions if not a.help] == []
    with pytest.raises(SystemExit):
        explore.main(["--help"])
    help_text = capsys.readouterr().out
    assert "explore/priors.py" in help_text and "retrievers/priors.py" not in help_text


def test_case9_version(capsys: pytest.CaptureFixture[str]) -> None:
    """swe-explore --version and every script's --version print the package version."""
    done = _python("-m", "swe_explore.cli", "run", "--version")
    assert (done.returncode, done.stdout) == (0, "swe-explore-baselines 0.1.0\n")
    done = _python("scripts/benchmark.py", "--version")
    assert (done.returncode, done.stdout) == (0, "swe-explore-baselines 0.1.0\n")
    for script in sorted((ROOT / "scripts").glob("*.py")):
        assert "sys.exit(run_main(main))" in script.read_text(), script.name


def test_case9_readme_names_the_scripts_that_are_not_subcommands() -> None:
    """The README lists which scripts are subcommands and which are not (it no longer says "every script")."""
    from swe_explore.cli import SUBCOMMANDS

    readme = (ROOT / "README.md").read_text()
    assert "Every script is also a subcommand" not in readme
    for script in sorted((ROOT / "scripts").glob("*.py")):
        assert f"`{script.name}`" in readme, script.name
    assert all(f"(`{name}`)" in readme for name in SUBCOMMANDS)


def test_case9_run_prints_the_17_metrics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """run's summary table has evaluate's 17 columns (WCC, OptCov, nDCG@100, ... included)."""
    argv = ["--out", str(tmp_path / "r.jsonl"), "--store", str(tmp_path / "s"), "--quiet", "--retriever", "bm25"]
    assert _script("run_baselines")(argv) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("|"))
    assert len(header.strip("|").split("|")) == 18  # the label and 17 metrics
    assert "WCC" in header and "OptCov" in header and "nDCG@100" in header


@pytest.mark.parametrize("script", ["index_repos", "run_baselines"])
def test_a_missing_dask_extra_is_exit_1_in_one_line(
    script: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--backend dask`` without the extra: exit 1 (README: a missing extra), one line saying what to install."""
    import sys

    from swe_explore.commands._errors import run_main

    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # "import dask.distributed" raises ImportError
    out = ["--out", str(tmp_path / "rows.jsonl"), "--store", str(tmp_path / "store")]
    argv = ["--out", str(tmp_path / "store")] if script == "index_repos" else out
    assert run_main(_script(script), [*argv, "--quiet", "--backend", "dask"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "pip install 'swe-explore-baselines[dask]'" in err and "Traceback" not in err


def test_index_repos_names_an_empty_bench(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A bench without instances is named as such (not "no snapshot directories under --repos"); exit 2."""
    from swe_explore.commands._errors import run_main

    bench = tmp_path / "empty.jsonl"
    bench.write_text("")
    with pytest.raises(SystemExit) as exited:
        run_main(_script("index_repos"), ["--bench", str(bench), "--out", str(tmp_path / "store")])
    assert exited.value.code == 2
    message = capsys.readouterr().err.strip().split(": error: ", 1)[1]
    assert message == f"--bench {bench} holds no instances (records without core regions are skipped)"
