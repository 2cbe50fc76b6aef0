"""The whole pipeline at release scale: materialize → index → run → evaluate, timed per stage and per instance.

Usage::

    python scripts/bench_release.py --set NAME=BENCH:REPOS [--set ...] [--mirrors DIR] [--work DIR]
        [--jobs 1 --jobs 2] [--limit N] [--release ../shared/data/release-repos.txt] [--json FILE] [--markdown FILE]
    python scripts/bench_release.py --from-json FILE      # the tables of an earlier run again

    # dev and the two mined eval benches, snapshots already made:
    python scripts/bench_release.py --set dev=../shared/data/dev.jsonl:repos/dev \\
        --set mined=MINED/eval.jsonl:repos/mined --jobs 1 --jobs 2 --work /tmp/bench-release

Every set is a bench JSONL and its snapshot folder (``<repos>/<instance_id>``). Per set, each stage is its own
process (``scripts/*.py`` of this checkout), so its wall time includes interpreter start and imports, and its
peak memory is the largest resident set of the process and the workers it waited for (``os.wait4``):

1. **materialize** (only with ``--mirrors``; snapshots already in place cost only their check);
2. **index, cold, no reuse** (``index_repos.py --no-reuse`` into an empty store) and **index, cold, with reuse**
   (the default, into another empty store: only what the set's snapshots share is reused) — the default
   explorer's indexes (chunk table, BM25, TF-IDF, symbol graph);
3. **run** with the default explorer on the warm store (``run_baselines.py``), once per ``--jobs`` value (each
   into a fresh result file), so the ratio of the wall times is the parallel speed-up;
4. **evaluate** the first run's rows.

Per instance: the explore seconds of each row (``seconds``) and the per-snapshot index seconds of the run report.
Then the **extrapolation** to the public release (``--release``: its repositories and instance counts): an
instance of a repository measured here costs its repository's mean index (with reuse) + explore seconds; any other
instance costs the mean over every instance measured (said in the output, with how many instances each rule
covers): an assumption that the release's other repositories are like the measured ones in size, which the larger
ones (sympy, django, ...) are not, so read it as an order of magnitude.
The time on P cores is the one-core total divided by P × the parallel efficiency measured here at two jobs
(``t1 / (2 t2)``), an assumption stated with the figure.

Printed: a Markdown table per set and the extrapolation; ``--json`` writes every measurement. The exit status
is 2 on bad arguments, 1 if a stage failed, else 0.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_explore.commands._errors import run_main

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"


@dataclass
class Stage:
    """One stage's process: wall seconds, CPU seconds (user + system, the process and its waited-for workers),
    peak resident set (MiB) and exit status."""

    name: str
    wall: float
    cpu: float
    peak_mib: float
    status: int
    extra: dict[str, Any] = field(default_factory=dict)


def run_stage(name: str, argv: list[str], log: Path) -> Stage:
    """Run one stage as a child process and measure it.

    :param name: stage name.
    :param argv: the command line (``sys.executable`` first).
    :param log: where its standard output and error go.
    :return: the measurements.
    """
    with log.open("wb") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    # ru_maxrss is in KiB on Linux.
    return Stage(name, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode)


def parse_set(text: str) -> tuple[str, Path, Path]:
    """``NAME=BENCH:REPOS`` -> ``(name, bench, repos)``.

    :param text: the option value.
    :return: the set's name, bench file and snapshot folder.
    :raises ValueError: if malformed or the bench file is missing.
    """
    name, sep, rest = text.partition("=")
    bench, colon, repos = rest.rpartition(":")
    if not sep or not name or not colon or not bench or not repos:
        raise ValueError(f"--set {text!r}: expected NAME=BENCH:REPOS")
    if not Path(bench).is_file():
        raise ValueError(f"--set {name}: bench {bench} does not exist")
    return name, Path(bench), Path(repos)


def _records(bench: Path, limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in bench.read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows[:limit] if limit else rows


def _index_report(store: Path) -> dict[str, Any]:
    reports = sorted((store / "_reports").glob("index-*.json"))
    return json.loads(reports[-1].read_text(encoding="utf-8")) if reports else {}


def _per_snapshot_seconds(report: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for entry in report.get("snapshots", []) or []:
        seconds = entry.get("seconds") if isinstance(entry, dict) else None
        if isinstance(seconds, dict) and "total" in seconds:
            out[Path(str(entry.get("snapshot"))).name] = float(seconds["total"])
    return out


def bench_set(name: str, bench: Path, repos: Path, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """All stages of one set (module docstring).

    :param name: the set's name.
    :param bench: its bench JSONL.
    :param repos: its snapshot folder.
    :param args: the parsed options.
    :param work: scratch folder for stores, results and logs.
    :return: the set's measurements.
    """
    py = sys.executable
    here = work / name
    here.mkdir(parents=True, exist_ok=True)
    records = _records(bench, args.limit)
    subset = here / "bench.jsonl"
    subset.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    stages: list[Stage] = []
    if args.mirrors:
        stages.append(
            run_stage(
                "materialize",
                [py, str(SCRIPTS / "materialize.py"), str(subset), "--mirrors", args.mirrors, "--repos", str(repos)],
                here / "materialize.log",
            )
        )
    lines = 0
    per_index: dict[str, float] = {}
    for mode, extra in (("index (no reuse)", ["--no-reuse"]), ("index (reuse)", [])):
        store = Path(tempfile.mkdtemp(prefix="store-", dir=here))
        stage = run_stage(
            mode,
            [
                py,
                str(SCRIPTS / "index_repos.py"),
                "--repos",
                str(repos),
                "--bench",
                str(subset),
                "--out",
                str(store),
                "--jobs",
                "1",
                "--quiet",
                *extra,
            ],
            here / f"index-{'reuse' if not extra else 'noreuse'}.log",
        )
        report = _index_report(store)
        stage.extra = {"lines": report.get("lines"), "status": report.get("status")}
        lines = int(report.get("lines") or lines or 0)
        per_index = _per_snapshot_seconds(report) or per_index
        stages.append(stage)
    warm = store  # the reuse build's store
    explore_seconds: dict[str, float] = {}
    first_rows: Path | None = None
    for jobs in args.jobs:
        out = here / f"rows-jobs{jobs}.jsonl"
        out.unlink(missing_ok=True)
        stage = run_stage(
            f"run (--jobs {jobs})",
            [
                py,
                str(SCRIPTS / "run_baselines.py"),
                "--bench",
                str(subset),
                "--repos",
                str(repos),
                "--store",
                str(warm),
                "--out",
                str(out),
                "--quiet",
                *(["--jobs", str(jobs)] if jobs != 1 else []),
            ],
            here / f"run-jobs{jobs}.log",
        )
        stages.append(stage)
        if first_rows is None and out.is_file():
            first_rows = out
            for line in out.read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                explore_seconds[str(row.get("instance_id"))] = float(row.get("seconds") or 0.0)
    if first_rows is not None:
        stages.append(
            run_stage(
                "evaluate",
                [
                    py,
                    str(SCRIPTS / "evaluate.py"),
                    str(first_rows),
                    "--bench",
                    str(subset),
                    "--repos",
                    str(repos),
                    "--metrics",
                    "main",
                ],
                here / "evaluate.log",
            )
        )
    per_instance = []
    for record in records:
        iid = str(record["instance_id"])
        per_instance.append(
            {
                "instance_id": iid,
                "repo": str(record.get("repo", "")).lower(),
                "index_seconds": per_index.get(iid),
                "explore_seconds": explore_seconds.get(iid),
            }
        )
    return {
        "set": name,
        "bench": str(bench),
        "instances": len(records),
        "lines": lines,
        "stages": [vars(s) for s in stages],
        "per_instance": per_instance,
    }


def extrapolate(sets: list[dict[str, Any]], release: Path, cores: list[int]) -> dict[str, Any]:
    """The release's time from the per-instance costs measured here (module docstring).

    :param sets: the measured sets.
    :param release: ``release-repos.txt`` (``repo<TAB>instances`` per line, ``#`` comments).
    :param cores: core counts to extrapolate to.
    :return: ``{"instances", "measured_repo_instances", "other_instances", "one_core_hours", "efficiency",
        "hours": {P: hours}}``.
    """
    by_repo: dict[str, list[float]] = {}
    every: list[float] = []
    for s in sets:
        for inst in s["per_instance"]:
            if inst["index_seconds"] is None or inst["explore_seconds"] is None:
                continue
            cost = inst["index_seconds"] + inst["explore_seconds"]
            by_repo.setdefault(inst["repo"], []).append(cost)
            every.append(cost)
    if not every:
        return {}
    fallback = statistics.fmean(every)
    total = 0.0
    measured = other = 0
    for line in release.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        repo, _, count = line.partition("\t")
        n = int(count or 0)
        if repo.lower() in by_repo:
            total += n * statistics.fmean(by_repo[repo.lower()])
            measured += n
        else:
            total += n * fallback
            other += n
    ratios = []
    for s in sets:
        runs = {st["name"]: st["wall"] for st in s["stages"] if st["name"].startswith("run")}
        if "run (--jobs 1)" in runs and "run (--jobs 2)" in runs and runs["run (--jobs 2)"] > 0:
            ratios.append(runs["run (--jobs 1)"] / (2 * runs["run (--jobs 2)"]))
    efficiency = min(1.0, statistics.median(ratios)) if ratios else 1.0
    return {
        "instances": measured + other,
        "measured_repo_instances": measured,
        "other_instances": other,
        "fallback_seconds": fallback,
        "one_core_hours": total / 3600,
        "efficiency": efficiency,
        "hours": {p: total / 3600 / (1 if p == 1 else p * efficiency) for p in cores},
    }


def markdown(sets: list[dict[str, Any]], extra: dict[str, Any]) -> str:
    """The tables (module docstring).

    :param sets: the measured sets.
    :param extra: the extrapolation.
    :return: Markdown text.
    """
    out = []
    for s in sets:
        out.append(f"**{s['set']}** ({s['instances']} instances, {s['lines'] or 0:,} lines)\n")
        out.append("| stage | wall s | CPU s | peak MiB | s / instance | exit |")
        out.append("|---|--:|--:|--:|--:|--:|")
        for st in s["stages"]:
            per = st["wall"] / max(1, s["instances"])
            out.append(
                f"| {st['name']} | {st['wall']:.1f} | {st['cpu']:.1f} | {st['peak_mib']:.0f} | {per:.2f} |"
                f" {st['status']} |"
            )
        walls = {st["name"]: st["wall"] for st in s["stages"]}
        if walls.get("index (no reuse)"):
            out.append(f"\nreuse / no reuse: {walls['index (reuse)'] / walls['index (no reuse)']:.2f}x")
        if walls.get("run (--jobs 1)") and walls.get("run (--jobs 2)"):
            out.append(f"run --jobs 2 / --jobs 1: {walls['run (--jobs 2)'] / walls['run (--jobs 1)']:.2f}x")
        out.append("")
    if extra:
        out.append(
            f"**Release extrapolation** ({extra['instances']} instances: {extra['measured_repo_instances']} of"
            f" repositories measured here at their mean cost, {extra['other_instances']} at the mean of every"
            f" instance measured, {extra['fallback_seconds']:.1f} s; index + explore per instance, materialize"
            f" and evaluate not counted; parallel efficiency {extra['efficiency']:.2f} as measured at 2 jobs,"
            " assumed to hold at more cores)\n"
        )
        out.append("| cores | hours |")
        out.append("|--:|--:|")
        for p, hours in extra["hours"].items():
            out.append(f"| {p} | {hours:.2f} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (module docstring).

    :param argv: command-line arguments (default: ``sys.argv[1:]``).
    :return: the exit status.
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", default=[], metavar="NAME=BENCH:REPOS")
    parser.add_argument("--mirrors", default=None, help="materialize missing snapshots from these mirrors")
    parser.add_argument("--work", default=None, help="scratch folder (default: a temporary folder)")
    parser.add_argument("--jobs", action="append", type=int, default=None, help="run with N jobs (repeatable)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N instances of each set")
    parser.add_argument("--release", default=str(ROOT.parent / "shared" / "data" / "release-repos.txt"))
    parser.add_argument("--cores", action="append", type=int, default=None, help="extrapolate to P cores")
    parser.add_argument("--json", default=None, help="also write every measurement here")
    parser.add_argument("--markdown", default=None, help="also write the tables here")
    parser.add_argument("--from-json", default=None, help="print the tables of an earlier --json run (runs nothing)")
    args = parser.parse_args(argv)
    args.jobs = args.jobs or [1, 2]
    if args.from_json:
        sets = json.loads(Path(args.from_json).read_text(encoding="utf-8"))["sets"]
    else:
        if not args.set:
            parser.error("give --set NAME=BENCH:REPOS (or --from-json FILE)")
        try:
            sets_spec = [parse_set(s) for s in args.set]
        except ValueError as exc:
            parser.error(str(exc))
        work = Path(args.work or tempfile.mkdtemp(prefix="bench-release-"))
        sets = [bench_set(name, bench, repos, args, work) for name, bench, repos in sets_spec]
    release = Path(args.release)
    extra = extrapolate(sets, release, args.cores or [1, 2, 16]) if release.is_file() else {}
    text = markdown(sets, extra)
    print(text, end="")
    if args.markdown:
        Path(args.markdown).write_text(text, encoding="utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps({"sets": sets, "release": extra}, indent=1) + "\n", encoding="utf-8")
    return 1 if any(st["status"] for s in sets for st in s["stages"]) else 0


if __name__ == "__main__":
    sys.exit(run_main(main))
