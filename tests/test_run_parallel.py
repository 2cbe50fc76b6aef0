"""Parallel runs of the run step (``run_baselines.py --jobs N``, ``--backend dask``): the rows of a sequential run,
in bench order, resumable, one failing instance isolated."""

from __future__ import annotations

import json
import os
import runpy
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest

from swe_explore.chunking.types import Region
from swe_explore.evaluation.bench import load_bench
from swe_explore.evaluation.metrics import zero_metrics
from swe_explore.evaluation.runner import RunAbortedError, run_explorer, sort_rows
from swe_explore.indexes.batch import run_tasks

ROOT = Path(__file__).resolve().parent.parent
MINI_BENCH = ROOT / "swe_explore" / "data" / "mini" / "mini.jsonl"
MINI_REPOS = ROOT / "swe_explore" / "data" / "mini" / "repos"
BENCH_ORDER = ["mini__pyshop-1", "mini__goserver-2", "mini__tsformat-3", "mini__rustcalc-4"]


class _Stub:
    """An explorer that raises ``errors[snapshot_name]`` for the named snapshots (module level: it pickles)."""

    name = "stub"
    explorer_config: ClassVar[dict[str, int]] = {"stub": 1}

    def __init__(self, errors: dict[str, Exception] | None = None) -> None:
        self.errors = errors or {}

    def explore(self, snapshot_dir: Path, query: str, snapshot_name: str | None = None) -> list[Region]:
        if snapshot_name in self.errors:
            raise self.errors[snapshot_name]
        return [Region("README.md", 1, 2)]


def _lines(path: Path) -> list[dict[str, Any]]:
    """The rows of a result file without their ``seconds`` (the one timing field), in file order."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        del row["seconds"]
    return rows


def _main(argv: list[str]) -> int:
    main: Callable[[list[str]], int] = runpy.run_path(str(ROOT / "scripts" / "run_baselines.py"))["main"]
    return main(argv)


TaskMap = Callable[[Callable[..., Any], Sequence[tuple[Any, ...]]], Iterator[Any]]


def _reversed_tasks(limit: int | None = None) -> TaskMap:
    """A task map that runs the tasks here, last first; with ``limit``, raises KeyboardInterrupt after that many."""

    def run(function: Callable[..., Any], arguments: Sequence[tuple[Any, ...]]) -> Iterator[Any]:
        for n, args in enumerate(reversed(arguments)):
            if n == limit:
                raise KeyboardInterrupt
            yield function(*args)

    return run


def test_jobs_2_gives_the_rows_of_jobs_1_on_the_mini_bench(tmp_path: Path) -> None:
    """The default explorer over the mini bench with --jobs 2 writes the --jobs 1 file, ``seconds`` aside."""
    common = ["--store", str(tmp_path / "store"), "--quiet"]
    assert _main([*common, "--out", str(tmp_path / "j1.jsonl")]) == 0
    assert _main([*common, "--out", str(tmp_path / "j2.jsonl"), "--jobs", "2"]) == 0
    one, two = _lines(tmp_path / "j1.jsonl"), _lines(tmp_path / "j2.jsonl")
    assert [r["instance_id"] for r in one] == BENCH_ORDER
    assert two == one
    assert {r["outcome"] for r in two} == {"SUCCESS"}


def test_rows_land_in_bench_order_and_a_shared_snapshot_is_one_task(tmp_path: Path) -> None:
    """Tasks finishing last-first still give a file in bench order; two instances of one snapshot share a task."""
    records = load_bench(MINI_BENCH)
    twin = replace(records[0], instance_id="mini__pyshop-1-twin", repo_dir="mini__pyshop-1")
    records = [records[0], twin, *records[1:]]
    seen: list[list[str]] = []

    def tasks(function: Callable[..., Any], arguments: Sequence[tuple[Any, ...]]) -> Iterator[Any]:
        seen.extend([item.record.instance_id for item in args[1]] for args in arguments)
        return _reversed_tasks()(function, arguments)

    report = run_explorer(_Stub(), records, MINI_REPOS, tmp_path / "p.jsonl", progress=False, tasks=tasks)
    run_explorer(_Stub(), records, MINI_REPOS, tmp_path / "s.jsonl", progress=False)
    assert seen == [["mini__pyshop-1", "mini__pyshop-1-twin"], *([i] for i in BENCH_ORDER[1:])]
    assert (report.written, report.failed, len(report.seconds)) == (5, 0, 5)
    assert _lines(tmp_path / "p.jsonl") == _lines(tmp_path / "s.jsonl")
    assert [r["instance_id"] for r in _lines(tmp_path / "p.jsonl")] == [r.instance_id for r in records]


def test_an_interrupted_parallel_run_keeps_its_rows_and_resumes(tmp_path: Path) -> None:
    """Stopped after two tasks, the file holds their two rows in bench order; the next run adds only the other two,
    and a file a kill left in completion order with a cut-off row ends up as the sequential file."""
    records = load_bench(MINI_BENCH)
    out = tmp_path / "p.jsonl"
    with pytest.raises(KeyboardInterrupt):
        run_explorer(_Stub(), records, MINI_REPOS, out, progress=False, tasks=_reversed_tasks(limit=2))
    assert [r["instance_id"] for r in _lines(out)] == BENCH_ORDER[2:]
    report = run_explorer(_Stub(), records, MINI_REPOS, out, progress=False, tasks=_reversed_tasks())
    assert (report.resumed, report.written) == (2, 2)
    run_explorer(_Stub(), records, MINI_REPOS, tmp_path / "s.jsonl", progress=False)
    assert _lines(out) == _lines(tmp_path / "s.jsonl")
    # what SIGKILL leaves: rows 4, 2 in completion order, then half of row 1
    lines = (tmp_path / "s.jsonl").read_text().splitlines(keepends=True)
    out.write_text(lines[3] + lines[1] + lines[0][:30])
    report = run_explorer(_Stub(), records, MINI_REPOS, out, progress=False, tasks=_reversed_tasks())
    assert (report.resumed, report.written) == (2, 2)
    assert _lines(out) == _lines(tmp_path / "s.jsonl")


def test_a_failing_instance_is_isolated_in_worker_processes(tmp_path: Path) -> None:
    """With two loky workers, an instance whose explorer raises gets its ERROR row and the others their rows; an
    operational error stops the run, keeping the rows of the tasks that finished."""
    records = load_bench(MINI_BENCH)
    tasks = _loky(2)
    out = tmp_path / "p.jsonl"
    stub = _Stub({"mini__goserver-2": RuntimeError("boom")})
    report = run_explorer(stub, records, MINI_REPOS, out, progress=False, tasks=tasks)
    rows = _lines(out)
    assert (report.written, report.failed) == (4, 1)
    assert [(r["instance_id"], r["outcome"], r["error"]) for r in rows] == [
        ("mini__pyshop-1", "SUCCESS", None),
        ("mini__goserver-2", "ERROR", "RuntimeError: boom"),
        ("mini__tsformat-3", "SUCCESS", None),
        ("mini__rustcalc-4", "SUCCESS", None),
    ]
    assert rows[1]["regions"] == [] and rows[1]["metrics"] == zero_metrics()
    stopped = tmp_path / "stopped.jsonl"
    stub = _Stub({"mini__pyshop-1": OSError("disk full")})
    with pytest.raises(RunAbortedError, match="mini__pyshop-1: OSError: disk full; the run stopped"):
        run_explorer(stub, records, MINI_REPOS, stopped, progress=False, tasks=_reversed_tasks())
    assert [r["instance_id"] for r in _lines(stopped)] == BENCH_ORDER[1:]  # the tasks run before it


def test_sort_rows_puts_bench_order_first_and_leaves_a_sorted_file_alone(tmp_path: Path) -> None:
    """Rows of unknown instances go after the ordered ones, in file order; a sorted file is not rewritten."""
    path = tmp_path / "rows.jsonl"
    ids = ["c", "x", "a", "y", "b"]
    path.write_text("".join(json.dumps({"instance_id": i, "regions": []}) + "\n" for i in ids))
    assert sort_rows(path, ["a", "b", "c"]) is True
    assert [json.loads(line)["instance_id"] for line in path.read_text().splitlines()] == ["a", "b", "c", "x", "y"]
    assert sort_rows(path, ["a", "b", "c"]) is False


def _loky(n_jobs: int) -> TaskMap:
    def run(function: Callable[..., Any], arguments: Sequence[tuple[Any, ...]]) -> Iterator[Any]:
        return run_tasks(function, arguments, n_jobs=n_jobs, backend="loky")

    return run


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_a_dask_cluster_gives_the_rows_of_a_local_run(tmp_path: Path) -> None:
    """``--backend dask --scheduler`` against a ``dask scheduler`` and a ``dask worker`` (two processes) started
    here, in another working directory, writes the rows of the ``--jobs 1`` run."""
    pytest.importorskip("distributed", reason="needs distributed: pip install 'swe-explore-baselines[dask]'")
    from distributed import Client

    new_client: Callable[..., Any] = Client  # unannotated in distributed

    address = f"tcp://127.0.0.1:{_free_port()}"
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    dask = [sys.executable, "-m", "dask"]
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    processes: list[subprocess.Popen[bytes]] = []
    try:
        processes.append(
            subprocess.Popen(
                [*dask, "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1], "--no-dashboard"],
                cwd=cwd,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        processes.append(
            subprocess.Popen(
                [*dask, "worker", address, "--nworkers", "2", "--nthreads", "1", "--no-dashboard"],
                cwd=cwd,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        with new_client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
        common = ["--retriever", "bm25", "--store", str(tmp_path / "store"), "--quiet"]
        assert _main([*common, "--out", str(tmp_path / "local.jsonl")]) == 0
        assert _main([*common, "--out", str(tmp_path / "dask.jsonl"), "--backend", "dask", "--scheduler", address]) == 0
    finally:
        for process in reversed(processes):
            process.terminate()
        deadline = time.monotonic() + 30
        for process in processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    assert _lines(tmp_path / "dask.jsonl") == _lines(tmp_path / "local.jsonl")
    assert [r["instance_id"] for r in _lines(tmp_path / "dask.jsonl")] == BENCH_ORDER


def test_parallel_flags_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--jobs 0 and --scheduler without --backend dask are usage errors of run_baselines.py."""
    for argv, message in ((["--jobs", "0"], "--jobs must be"), (["--scheduler", "tcp://x:1"], "needs --backend dask")):
        with pytest.raises(SystemExit) as exc:
            _main(["--store", str(tmp_path / "s"), *argv])
        assert exc.value.code == 2 and message in capsys.readouterr().err
