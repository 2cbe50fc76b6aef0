"""Issue 18 follow-ups found by a fresh-user breaker run: nothing silently wrong, nothing lost, no tracebacks."""

from __future__ import annotations

import errno
import json
import os
import runpy
import shutil
import subprocess
import sys
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


def _exit_status(main: Callable[[list[str]], int], argv: list[str]) -> int:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    return int(caught.value.code or 0)


def _python(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=ROOT, env={**os.environ, **(env or {})}
    )


@pytest.fixture()
def repos(tmp_path: Path) -> Path:
    """A copy of the mini bench's snapshots."""
    copy = tmp_path / "repos"
    shutil.copytree(MINI_REPOS, copy)
    return copy


@pytest.fixture(scope="module")
def predictions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A result file of the mini bench."""
    tmp = tmp_path_factory.mktemp("preds")
    out = tmp / "preds.jsonl"
    argv = ["--out", str(out), "--store", str(tmp / "store"), "--quiet", "--retriever", "bm25"]
    assert _script("run_baselines")(argv) == 0
    return out


# ----------------------------------------------------------------------------------------------------------
# 1. an output inside a snapshot folder or the index store
# ----------------------------------------------------------------------------------------------------------


def test_breaker_run_refuses_an_out_inside_a_snapshot(
    repos: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """run --out <repos>/<snapshot>/setup.cfg --overwrite: exit 2, one line, the snapshot file is kept."""
    target = repos / "mini__pyshop-1" / "setup.cfg"
    before = target.read_bytes()
    argv = ["--bench", str(MINI_BENCH), "--repos", str(repos), "--out", str(target), "--overwrite", "--quiet"]
    status = _exit_status(_script("run_baselines"), [*argv, "--store", str(tmp_path / "store")])
    err = capsys.readouterr().err.strip()
    assert (
        status == 2
        and err.split(" ", 1)[0].endswith(".py:")
        and err.split(" ", 1)[1]
        == (f"error: --out {target} is inside --repos {repos}; writing there would change it: write elsewhere")
    )
    assert target.read_bytes() == before


def test_breaker_run_refuses_an_out_inside_the_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """run --out <store>/rows.jsonl: exit 2 (the store holds indexes only)."""
    store = tmp_path / "store"
    argv = ["--out", str(store / "rows.jsonl"), "--store", str(store), "--quiet", "--retriever", "bm25"]
    assert _exit_status(_script("run_baselines"), argv) == 2
    assert f"is inside --store {store}" in capsys.readouterr().err
    assert not (store / "rows.jsonl").exists()


@pytest.mark.parametrize("flag", ["--json", "--per-instance-csv"])
def test_breaker_evaluate_refuses_an_output_inside_a_snapshot(
    predictions: Path, repos: Path, flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """evaluate --json / --per-instance-csv inside --repos: exit 2, the snapshot file is kept."""
    target = repos / "mini__pyshop-1" / "setup.cfg"
    before = target.read_bytes()
    argv = [str(predictions), "--bench", str(MINI_BENCH), "--repos", str(repos), flag, str(target)]
    assert _exit_status(_script("evaluate"), argv) == 2
    assert f"{flag} {target} is inside --repos {repos}" in capsys.readouterr().err
    assert target.read_bytes() == before


def test_breaker_compare_refuses_an_out_inside_the_repos(repos: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """compare --out <repos>/x: exit 2 before anything is written."""
    out = repos / "mini__pyshop-1" / "grid"
    argv = ["--bench", str(MINI_BENCH), "--repos", str(repos), "--out", str(out), "--quiet", "--retrievers", "bm25"]
    assert _exit_status(_script("compare_chunkers"), argv) == 2
    assert f"--out {out} is inside --repos {repos}" in capsys.readouterr().err
    assert not out.exists()


def test_breaker_index_refuses_a_store_inside_the_repos(repos: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """index_repos --out <repos>/store: exit 2 (the store would become a snapshot folder)."""
    out = repos / "store"
    assert _exit_status(_script("index_repos"), ["--repos", str(repos), "--out", str(out), "--quiet"]) == 2
    assert f"--out {out} is inside --repos {repos}" in capsys.readouterr().err
    assert not out.exists()


# ----------------------------------------------------------------------------------------------------------
# 2. explore on a read-only store built by index_repos
# ----------------------------------------------------------------------------------------------------------


def test_breaker_explore_read_only_store_advice_and_exit_status(
    repos: Path, tmp_path: Path, read_only: Callable[[Path], list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """index_repos keys a snapshot by folder name, explore by name + path hash: on a read-only copy, explore finds
    the folder-name entry by its content and answers without writing; once the folder's content differs, it
    exits 1 with advice that helps (a writable store, --snapshot-name, store list)."""
    from swe_explore.commands.explore import main as explore_main

    store, snapshot = tmp_path / "store", repos / "mini__pyshop-1"
    argv = ["--repos", str(repos), "--out", str(store), "--retriever", "bm25", "--quiet"]
    assert _script("index_repos")(argv) == 0
    capsys.readouterr()
    refused = read_only(store)
    query = [str(snapshot), "cart total", "--store", str(store), "--retriever", "bm25"]
    assert explore_main(query) == 0
    assert refused == []
    assert capsys.readouterr().err == f"indexes: {store} (0 built, 1 current)\n"
    with (snapshot / "pyshop" / "cart.py").open("a") as handle:
        handle.write("# edited\n")
    assert explore_main(query) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "index_repos.py in a writable store" not in err
    assert "; build it on a writable store with " in err
    assert err.endswith(
        f".py {snapshot} 'cart total' --retriever bm25 --store DIR, or pass --snapshot-name NAME to use an entry "
        "the store holds under "
        "another name (swe-explore store list)"
    )


# ----------------------------------------------------------------------------------------------------------
# 3. index_repos: a read-only or full store is exit status 1 and the error policy's line
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "hint"),
    [
        (errno.EROFS, "Read-only file system (EROFS); write elsewhere"),
        (errno.ENOSPC, "No space left on device (ENOSPC); free some space"),
    ],
)
def test_breaker_index_report_write_failure_is_exit_1_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], code: int, hint: str
) -> None:
    """The run report cannot be written (read-only store, full disk): exit 1, one line naming the report file,
    no "loky backend: OSError" and no raw errno text."""
    from swe_explore.commands._errors import run_main

    store = tmp_path / "store"
    argv = ["--repos", str(MINI_REPOS), "--out", str(store), "--retriever", "bm25", "--quiet"]
    real_fdopen = os.fdopen

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
        handle = real_fdopen(fd, *args, **kwargs)
        if "_reports" in os.readlink(f"/proc/self/fd/{fd}"):

            def write(data: bytes) -> int:
                raise OSError(code, os.strerror(code))

            handle.write = write
        return handle

    monkeypatch.setattr(os, "fdopen", fdopen)
    assert run_main(_script("index_repos"), argv) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    (report,) = [line for line in lines if "error" in line]
    assert "backend" not in report and "[Errno" not in report
    assert f"error: {store / '_reports'}/index-" in report and f".json: {hint}" in report
    assert list((store / "_reports").iterdir()) == []  # no partial report, no temporary


# ----------------------------------------------------------------------------------------------------------
# 4. Ctrl-C while a script imports its command
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("script", ["run_baselines", "evaluate", "index_repos", "explore", "ablation"])
def test_breaker_ctrl_c_during_start_up_is_quiet(tmp_path: Path, script: str) -> None:
    """A KeyboardInterrupt while the heavy modules import (here: numpy's import raises it): exit 130, one line
    "interrupted", no traceback."""
    (tmp_path / "numpy.py").write_text("raise KeyboardInterrupt\n")
    done = _python(f"scripts/{script}.py", "--out", str(tmp_path / "x.jsonl"), env={"PYTHONPATH": str(tmp_path)})
    assert (done.returncode, done.stderr.strip()) == (130, f"{script}.py: interrupted")


# ----------------------------------------------------------------------------------------------------------
# 5. a missing hub model; a negative start resolved after its end
# ----------------------------------------------------------------------------------------------------------


def test_breaker_missing_hub_model_is_exit_1_in_one_line(tmp_path: Path) -> None:
    """--retriever potion offline without a model: exit 1, one line naming the model and the fix (no usage)."""
    env = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    argv = ["--retriever", "potion", "--out", str(tmp_path / "x.jsonl"), "--store", str(tmp_path / "s"), "--quiet"]
    done = _python("scripts/run_baselines.py", *argv, env=env)
    assert done.returncode == 1 and "usage:" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("run_baselines.py: error: could not load Potion model 'minishlab/potion-base-8M'")
    assert line.endswith("pass --model PATH (a local model2vec directory) or set SWE_EXPLORE_POTION_MODEL")


def test_breaker_negative_start_resolved_after_its_end_is_invalid() -> None:
    """-3..5 in a 32-line file resolves to 30..5 (docs/metrics.md §0.1): start_after_end; -3..31 and -3..-1 stay
    valid, and without a line count nothing can be said."""
    from swe_explore.evaluation.region_checks import region_problem

    assert region_problem(-3, 5, 32) == "start_after_end"
    assert region_problem(-40, 5, 32) is None  # resolves to 1..5
    assert region_problem(-3, 30, 32) is None  # 30..30
    assert region_problem(-3, 29, 32) == "start_after_end"
    assert region_problem(-3, -1, 32) is None
    assert region_problem(-3, 5, None) is None


def test_breaker_strict_evaluate_fails_on_an_inverted_negative_start(
    predictions: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ground-truth region -3..5 in pyshop/cart.py (31 lines -> 29..5): warned, and --strict exits 1."""
    lines = MINI_BENCH.read_text().splitlines()
    record = json.loads(lines[0])
    record["ground_truth"]["read_core_regions"][0] = {"path": "pyshop/cart.py", "start": -3, "end": 5}
    bench = tmp_path / "bench.jsonl"
    bench.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    argv = [str(predictions), "--bench", str(bench), "--repos", str(MINI_REPOS)]
    assert _script("evaluate")([*argv, "--strict"]) == 1
    assert (
        "1 ground-truth region(s) in 1 instance(s) have start > end, "
        "e.g. mini__pyshop-1: pyshop/cart.py -3-5" in capsys.readouterr().err
    )


# ----------------------------------------------------------------------------------------------------------
# 6. a full disk leaves no empty output file
# ----------------------------------------------------------------------------------------------------------


class _FullDisk:
    """A file object whose writes fail as on a full disk (ENOSPC, no file name), delegating everything else."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    def write(self, data: Any) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __enter__(self) -> _FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)


@pytest.mark.parametrize("flag", ["--json", "--per-instance-csv"])
def test_breaker_full_disk_leaves_no_output_file_and_names_it(
    predictions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    """ENOSPC while evaluate writes --json / --per-instance-csv: exit 1, one line naming the file, and no file."""
    import io

    from swe_explore.commands._errors import run_main

    out_dir = tmp_path / "out"
    out_dir.mkdir()
    real_open = io.open

    def open_(file: Any, *args: Any, **kwargs: Any) -> Any:
        handle = real_open(file, *args, **kwargs)
        name = os.readlink(f"/proc/self/fd/{file}") if isinstance(file, int) else os.fspath(file)
        return _FullDisk(handle) if os.path.abspath(name).startswith(str(out_dir)) else handle

    monkeypatch.setattr(io, "open", open_)
    target = out_dir / "out.file"
    assert run_main(_script("evaluate"), [str(predictions), flag, str(target)]) == 1
    (line,) = [x for x in capsys.readouterr().err.strip().splitlines() if ": error: " in x]
    assert line.split(": error: ", 1)[1] == (
        f"{target}: No space left on device (ENOSPC); free some space or write elsewhere"
    )
    assert list(out_dir.iterdir()) == []


# ----------------------------------------------------------------------------------------------------------
# minor: a directory as PRED; a newline in a file name
# ----------------------------------------------------------------------------------------------------------


def test_breaker_evaluate_names_a_directory_given_as_pred(tmp_path: Path) -> None:
    """evaluate DIR: one line saying it is a directory (not "does not exist"), a usage error (exit 2) as a missing
    file is."""
    done = _python("scripts/evaluate.py", str(tmp_path))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith(f"result file {tmp_path} is a directory; give a result JSONL file")
    )


def test_breaker_explore_text_escapes_a_newline_in_a_file_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file named "a\\nb.py": the text output shows it on one line, as a\\nb.py."""
    from swe_explore.commands.explore import main as explore_main

    root = tmp_path / "snap"
    root.mkdir()
    (root / "a\nb.py").write_text("def cart_total(items):\n    return sum(items)\n")
    argv = [str(root), "cart total", "--retriever", "bm25", "--store", str(tmp_path / "s"), "--lines", "0"]
    assert explore_main(argv) == 0
    out = capsys.readouterr().out
    assert "\n1. a\\nb.py:1-2 (2 lines, score " in out


def test_breaker_strict_evaluate_refuses_unmatched_issue_map_ids(
    predictions: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """evaluate --strict --issue-map with ids of no record: exit 1 (a --strict gap); without --strict: a warning."""
    issue_map = tmp_path / "issues.json"
    issue_map.write_text(json.dumps({"mini__pyshop-1": "text", "nope-1": "a"}))
    argv = [str(predictions), "--issue-map", str(issue_map)]
    assert _script("evaluate")(argv) == 0
    capsys.readouterr()
    assert _exit_status(_script("evaluate"), [*argv, "--strict"]) == 1
    err = capsys.readouterr().err
    assert f"error: --strict: 1 instance id(s) of --issue-map {issue_map} match no record of {MINI_BENCH}" in err


def test_breaker_per_instance_csv_has_the_resolved_metrics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--score-predicted-lines --per-instance-csv: 17 resolved_<metric> columns after the 17 metrics. A row
    predicting (pyshop/inventory.py, 1, -1) (16 lines, no ground truth) and the core region cart.py 28-31: the
    reference scores the sentinel as 0 lines (precision 4/4 = 1.0), the resolved columns as 16 (4/20 = 0.2)."""
    import csv

    from swe_explore.evaluation.metrics import METRIC_NAMES

    regions = [
        {"path": "pyshop/inventory.py", "start": 1, "end": -1},
        {"path": "pyshop/cart.py", "start": 28, "end": 31},
    ]
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"instance_id": "mini__pyshop-1", "explorer": "x", "regions": regions}) + "\n")
    out = tmp_path / "per.csv"
    argv = [str(rows), "--score-predicted-lines", "--per-instance-csv", str(out)]
    assert _script("evaluate")(argv) == 0
    table = list(csv.DictReader(out.open(newline="")))
    resolved = [f"resolved_{m}" for m in METRIC_NAMES]
    assert list(table[0]) == ["label", "instance_id", "outcome", *METRIC_NAMES, *resolved]
    (pyshop,) = [r for r in table if r["instance_id"] == "mini__pyshop-1"]
    assert (float(pyshop["precision"]), float(pyshop["resolved_precision"])) == (1.0, 0.2)


def test_os_error_line_says_the_reason_once() -> None:
    """A missing path: the file, the OS reason once and what to do, e.g. for ``--store /proc/nope``."""
    from swe_explore.commands._errors import describe_os_error

    missing = FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), "/proc/nope")
    assert describe_os_error(missing) == "/proc/nope: No such file or directory (ENOENT); check the path"
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert describe_os_error(full) == "No space left on device (ENOSPC); free some space or write elsewhere"
