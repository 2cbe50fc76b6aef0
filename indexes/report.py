"""Indexing a batch of snapshots as ``swe-explore index`` does: the job's retriever options, the run report
written to ``<store>/_reports/`` and the summary lines printed.

:func:`index_snapshots` runs :func:`~swe_explore.indexes.batch.index_many` and writes the run report (per
snapshot: status, counts, seconds per step, worker, cache lookups; :func:`run_report_path`);
:func:`cache_totals` sums the content-addressed cache's lookups per kind.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swe_explore.chunking.atomic import write_text_atomic
from swe_explore.chunking.registry import make_chunker
from swe_explore.indexes.batch import IndexJob, index_many
from swe_explore.indexes.cache import CACHE_KINDS
from swe_explore.indexes.manage import REPORTS_DIR
from swe_explore.retrievers.registry import make_retriever, retriever_options

#: What ``swe-explore index`` builds without ``--retriever``: the indexes of the default (learned) explorer.
DEFAULT_RETRIEVERS = ("bm25", "tfidf")


def run_report_path(store: Path, when: time.struct_time | None = None, pid: int | None = None) -> Path:
    """Where a batch's run report goes: ``<store>/_reports/index-<YYYYmmddTHHMMSS>-<pid>.json``.

    The local time and the process id make the name distinct per run, so concurrent runs on one store do not
    overwrite each other's reports. (A bench's report sits beside the bench instead:
    :func:`swe_explore.benchprep.release.report_path`.)

    :param store: the index store.
    :param when: the run's time (default: now).
    :param pid: the process id (default: this process's).
    :return: the report path (its directory is not created).
    """
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime() if when is None else when)
    return store / REPORTS_DIR / f"index-{stamp}-{os.getpid() if pid is None else pid}.json"


def snapshot_dirs(repos: Path) -> list[Path]:
    """The snapshot directories under ``repos``: every subdirectory not starting with ``.``, sorted."""
    return sorted(p for p in repos.iterdir() if p.is_dir() and not p.name.startswith("."))


def retriever_specs(names: Sequence[str], given: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Give each retriever its ``-O KEY=VALUE`` options: all of them for one retriever, else those it accepts.

    :param names: the retrievers.
    :param given: the options.
    :return: ``(name, options)`` per retriever, in order.
    :raises ValueError: an option no retriever accepts (``--retriever-option KEY: accepted by none of ...``).
    """
    unused = set(given)
    specs = []
    for name in names:
        accepted = set(retriever_options(name))
        options = {k: v for k, v in given.items() if len(names) == 1 or k in accepted}
        unused -= set(options)
        specs.append((name, options))
    if unused:
        raise ValueError(f"--retriever-option {', '.join(sorted(unused))}: accepted by none of {', '.join(names)}")
    return specs


def check_job(job: IndexJob) -> None:
    """Build the job's chunker and retrievers once, so bad names and options fail before any worker starts.

    :param job: the chunker and retrievers to check.
    :raises ValueError: an unknown name or a bad option (the message of :func:`make_chunker` or
        :func:`make_retriever`).
    """
    make_chunker(job.chunker, **job.chunker_options)
    for name, options in job.retrievers:
        make_retriever(name, **options)


def cache_totals(reports: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The content-addressed cache's lookups of a batch, summed per kind over the snapshots, with hit rates.

    :param reports: :func:`~indexes.batch.index_one` reports.
    :return: kind -> ``{"hits", "misses", "corrupt", "write_errors", "corrupt_indexes", "hit_rate"}`` (counted in
        files for ``chunks``, in chunks for ``term_counts`` and ``vectors``; ``hit_rate``: hits / lookups, ``None``
        without lookups), in :data:`~indexes.cache.CACHE_KINDS` order; ``{}`` when nothing was looked up.
    """
    totals: dict[str, dict[str, Any]] = {}
    for kind in CACHE_KINDS:
        counts = [r["cache"][kind] for r in reports if kind in (r.get("cache") or {})]
        if not counts:
            continue
        keys = ("hits", "misses", "corrupt", "write_errors", "corrupt_indexes")
        summed: dict[str, Any] = {key: sum(c.get(key, 0) for c in counts) for key in keys}
        lookups = summed["hits"] + summed["misses"] + summed["corrupt"]
        summed["hit_rate"] = round(summed["hits"] / lookups, 4) if lookups else None
        totals[kind] = summed
    return totals


def format_hit_rates(totals: dict[str, dict[str, Any]]) -> str:
    """One line of :func:`cache_totals`: ``cache hit rate chunks 83.1% (1250/1505 files), term_counts 91.0%
    (24500/26920 chunks), ...``, plus damaged entries, damaged pack indexes and write errors when there were any.

    :param totals: :func:`cache_totals`' result.
    :return: the line.
    """
    parts = []
    for kind, t in totals.items():
        lookups = t["hits"] + t["misses"] + t["corrupt"]
        rate = f"{100 * t['hit_rate']:.1f}%" if t["hit_rate"] is not None else "-"
        unit = "files" if kind in ("chunks", "graph_names") else "chunks"
        extra = "".join(
            f", {t[k]} {k.replace('_', ' ')}" for k in ("corrupt", "corrupt_indexes", "write_errors") if t[k]
        )
        parts.append(f"{kind} {rate} ({t['hits']}/{lookups} {unit}{extra})")
    return "cache hit rate " + ", ".join(parts)


@dataclass
class IndexRun:
    """A finished batch: its run report (as written) and where it was written.

    :param run: ``{"argv", "job", "jobs", "backend", "wall_seconds", "status", "lines", "built_lines",
        "step_seconds", "cache", "snapshots"}`` (``status``: count per ``built``/``up-to-date``/``error``;
        ``step_seconds``: worker seconds per step summed over the snapshots built; ``snapshots``: the
        :func:`~indexes.batch.index_one` reports sorted by snapshot).
    :param path: the report file.
    :param wall: the batch's wall-clock seconds.
    """

    run: dict[str, Any]
    path: Path
    wall: float

    @property
    def failed(self) -> int:
        """Snapshots that failed."""
        return int(self.run["status"]["error"])

    def summary(self) -> str:
        """The lines printed to stdout: counts, lines and wall time, seconds per 100K lines built, reuse."""
        status, steps, built_lines = self.run["status"], self.run["step_seconds"], self.run["built_lines"]
        lines = [
            f"{len(self.run['snapshots'])} snapshots: {status['built']} built, {status['up-to-date']} up to date, "
            f"{status['error']} failed; {self.run['lines']:,} lines in {self.wall:.1f} s; "
            f"report {self.path}"
        ]
        if built_lines:
            lines.append(f"  worker seconds per 100K lines built: {steps.get('total', 0.0) / built_lines * 1e5:.2f}")
        if self.run["cache"]:
            lines.append(f"  reuse: {format_hit_rates(self.run['cache'])}")
        return "\n".join(lines)

    def problems(self, tracebacks: bool = False) -> list[str]:
        """The lines printed to stderr: each failed snapshot, each with no indexable file, and each with files
        skipped as too large.

        :param tracebacks: also each failed snapshot's traceback (``--debug``), as the run report holds it.
        :return: the lines.
        """
        out = []
        for r in self.run["snapshots"]:
            if r["status"] == "error":
                out.append(f"  FAILED {r['snapshot']}: {r['error']}")
                if tracebacks and r.get("traceback"):
                    out.extend("    " + line for line in str(r["traceback"]).rstrip("\n").split("\n"))
                continue
            if r.get("counts", {}).get("chunks") == 0:
                out.append(
                    f"  warning: {r['snapshot']} has no indexable file (0 chunks); see the walk statistics in its "
                    "manifest"
                )
            too_large = r.get("skipped", {}).get("too_large", 0)
            if too_large:
                out.append(f"  note: {r['snapshot']}: {too_large} file(s) skipped as too large (not indexed)")
        return out


def index_snapshots(
    snapshots: Sequence[Path],
    store: Path,
    job: IndexJob,
    n_jobs: int,
    backend: str,
    scheduler: str | None,
    progress: Callable[[Any, int], Any],
    argv: list[str],
) -> IndexRun:
    """Index every snapshot (:func:`~indexes.batch.index_many`) and write the run report.

    :param snapshots: the snapshot directories.
    :param store: the index store.
    :param job: what to build.
    :param n_jobs: parallel workers (``-1``: all cores).
    :param backend: a :data:`~indexes.batch.BATCH_BACKENDS` name.
    :param scheduler: the Dask scheduler address (``dask`` backend).
    :param progress: wraps the results iterator (a progress bar), given it and the snapshot count.
    :param argv: the command line, recorded in the report.
    :return: the run.
    :raises ImportError: the backend's extra is not installed.
    :raises OSError: the backend cannot start (e.g. an unreachable scheduler; no ``filename``), or the run report
        cannot be written (``filename`` is the report).
    :raises TimeoutError: the Dask scheduler does not answer in time.
    """
    t0 = time.perf_counter()
    reports = index_many(snapshots, store, job, n_jobs, backend, scheduler, progress)
    wall = time.perf_counter() - t0
    reports.sort(key=lambda r: r["snapshot"])
    status = {s: sum(r["status"] == s for r in reports) for s in ("built", "up-to-date", "error")}
    steps: dict[str, float] = {}  # seconds per step, summed over the snapshots built in this run
    for r in reports:
        if r["status"] == "built":
            for step, seconds in r["seconds"].items():
                steps[step] = round(steps.get(step, 0.0) + seconds, 4)
    run = {
        "argv": argv,
        "job": job.__dict__ | {"retrievers": list(job.retrievers)},
        "jobs": n_jobs,
        "backend": backend,
        "wall_seconds": round(wall, 3),
        "status": status,
        "lines": sum(r.get("counts", {}).get("lines", 0) for r in reports),
        "built_lines": sum(r["counts"].get("lines", 0) for r in reports if r["status"] == "built"),
        "step_seconds": steps,
        "cache": cache_totals(reports),
        "snapshots": reports,
    }
    path = run_report_path(store)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(json.loads(json.dumps(run, default=str)), indent=1, sort_keys=True) + "\n")
    return IndexRun(run, path, wall)
