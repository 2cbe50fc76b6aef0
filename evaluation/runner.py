"""Run an explorer over bench records: one reference-compatible result row per instance, resumable.

Shared by ``scripts/run_baselines.py`` (one explorer) and ``scripts/compare_chunkers.py`` (a grid).
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tqdm import tqdm

from swe_explore.chunking.atomic import write_text_atomic
from swe_explore.chunking.types import Region
from swe_explore.evaluation.bench import BenchRecord, check_snapshot, find_snapshot
from swe_explore.evaluation.line_counts import file_line_counts
from swe_explore.evaluation.metrics import evaluate_instance
from swe_explore.evaluation.results import (
    OUTCOME_ERROR,
    OUTCOME_SUCCESS,
    ResultsWriter,
    make_row,
    read_rows,
    row_line,
)

try:  # POSIX advisory locks; elsewhere concurrent runs on one file are not detected
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)


class Explorer(Protocol):
    """What :func:`run_explorer` needs from an explorer (this package's contract; ours and the reference
    baselines in :mod:`swe_explore.explore` implement it, and so can any other explorer).
    """

    @property
    def name(self) -> str:
        """The explorer name written to result rows (e.g. ``bm25+function``)."""
        ...

    @property
    def explorer_config(self) -> Mapping[str, Any]:
        """Everything that determines the output, written to every row (JSON-serialisable)."""
        ...

    def explore(self, snapshot_dir: Path, query: str, snapshot_name: str | None = None) -> Sequence[Region]:
        """At most K regions for the issue text, best first.

        :param snapshot_dir: the snapshot (repository tree at ``base_commit``).
        :param query: the issue text.
        :param snapshot_name: the snapshot's name (the ``instance_id``), for explorers that keep indexes.
        :return: the regions.
        """
        ...


class ConfigMismatchError(ValueError):
    """The result file already holds rows written with another explorer config.

    :param path: the result file.
    :param instance_id: the first row with another config.
    :param differences: the differing fields of that row's config, e.g. ``["pack.merge_gap: 20 in the file, 10
        now"]`` (at most a few are named).
    """

    def __init__(self, path: Path, instance_id: str, differences: Sequence[str] = ()) -> None:
        detail = f": {'; '.join(differences)}" if differences else ""
        super().__init__(
            f"{path} holds rows of another explorer config (e.g. {instance_id}{detail}); "
            "use another --out or --overwrite"
        )


def config_differences(old: Any, new: Any, prefix: str = "", limit: int = 3) -> list[str]:
    """The fields where two explorer configs (nested JSON dicts) differ, as ``"a.b: X in the file, Y now"``.

    :param old: the config stored in a result row (any JSON value; a missing config is ``None``).
    :param new: the current explorer's config.
    :param prefix: dotted path of ``old`` and ``new`` inside the whole config.
    :param limit: at most this many differences are returned.
    :return: the differences, in key order.
    """
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in sorted(old.keys() | new.keys()):
            out += config_differences(old.get(key), new.get(key), f"{prefix}{key}.", limit - len(out))
            if len(out) >= limit:
                break
        return out[:limit]
    if old == new:
        return []
    return [f"{prefix.rstrip('.') or 'explorer_config'}: {json.dumps(old)} in the file, {json.dumps(new)} now"]


class ConcurrentRunError(RuntimeError):
    """Another process is writing the same result file.

    :param path: the result file.
    """

    def __init__(self, path: Path) -> None:
        super().__init__(f"another run is writing {path} (lock {path}.lock); wait for it or use another --out")


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive, non-blocking advisory lock on ``<path>.lock`` while writing ``path``.

    :param path: the file to protect.
    :return: a context manager.
    :raises ConcurrentRunError: if another process holds the lock.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = Path(f"{path}.lock")
    with open(lock, "w") as handle:
        if fcntl is not None:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ConcurrentRunError(path) from None
        try:
            yield
        finally:
            lock.unlink(missing_ok=True)


@dataclass
class RunReport:
    """What :func:`run_explorer` did.

    :param out: the result file.
    :param written: rows written in this call.
    :param resumed: rows already present (skipped).
    :param retried: rows of failed instances dropped from the file to be run again.
    :param failed: instances whose explorer raised (written as ERROR rows scored 0).
    :param missing: instance ids without a snapshot (no row; excluded, as the reference runner does).
    :param seconds: per-instance explore wall-clock seconds of the rows written in this call.
    """

    out: Path
    written: int = 0
    resumed: int = 0
    retried: int = 0
    failed: int = 0
    missing: list[str] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)


def run_explorer(
    explorer: Explorer,
    records: Sequence[BenchRecord],
    repos_dir: Path,
    out: Path,
    overwrite: bool = False,
    progress: bool = True,
    shared_snapshots: bool = False,
) -> RunReport:
    """Explore every record and append one result row per instance to ``out`` (flushed per row).

    Successful rows already in ``out`` are kept (resume); they must have been written with the same explorer
    config. Rows of instances that failed before are dropped and run again, and so is a last row cut off by a
    killed run. One instance's exception becomes an ``ERROR`` row with empty regions (scored 0, as the
    reference's new runner does) and the run goes on. Each row carries the reference fields, the 17 metrics
    (our line definition), ``explorer_config``, ``snapshot`` (the directory used), ``repo_revision`` (its
    commit when known: a marker written when it was materialised, or its ``.git`` HEAD; a commit other than
    ``base_commit`` is an error) and ``seconds`` (wall-clock explore time of that instance). Only one process may
    write ``out`` at a time.

    :param explorer: the explorer (see :class:`Explorer`).
    :param records: bench records.
    :param repos_dir: snapshots, one per instance.
    :param out: result JSONL file.
    :param overwrite: delete ``out`` first instead of resuming.
    :param progress: show a progress bar.
    :param shared_snapshots: accept shared snapshot folders (see :func:`evaluation.bench.snapshot_candidates`).
    :return: the run report.
    :raises ConfigMismatchError: if ``out`` holds rows of another explorer config.
    :raises ConcurrentRunError: if another process is writing ``out``.
    :raises IsADirectoryError: if ``out`` is a directory.
    :raises SnapshotCommitError: if a snapshot's known commit is not its record's ``base_commit``.
    """
    out = Path(out)
    if out.is_dir():
        raise IsADirectoryError(f"--out {out} is a directory; give a .jsonl file path")
    with exclusive_lock(out):
        return _run_locked(explorer, records, repos_dir, out, overwrite, progress, shared_snapshots)


def _run_locked(
    explorer: Explorer,
    records: Sequence[BenchRecord],
    repos_dir: Path,
    out: Path,
    overwrite: bool,
    progress: bool,
    shared_snapshots: bool,
) -> RunReport:
    config = explorer.explorer_config
    if overwrite and out.exists():
        out.unlink()
    done: set[str] = set()
    retried = 0
    if out.exists():
        rows = read_rows(out, drop_partial_last=True)
        other = [r for r in rows if r.get("explorer_config") != config]
        if other:
            first = other[0]
            diffs = config_differences(first.get("explorer_config"), config)
            raise ConfigMismatchError(out, first["instance_id"], diffs)
        kept = [r for r in rows if r.get("outcome", OUTCOME_SUCCESS) == OUTCOME_SUCCESS]
        retried = len(rows) - len(kept)
        if retried or not out.read_bytes().endswith(b"\n"):
            _rewrite(out, kept)
        done = {r["instance_id"] for r in kept}
    report = RunReport(out, resumed=len(done), retried=retried)
    with ResultsWriter(out) as writer:
        for record in tqdm(records, desc=explorer.name, unit="instance", disable=not progress):
            if record.instance_id in done:
                continue
            snapshot = find_snapshot(record, repos_dir, shared_snapshots)
            if snapshot is None:
                report.missing.append(record.instance_id)
                logger.warning("%s: no snapshot under %s; skipped", record.instance_id, repos_dir)
                continue
            commit = check_snapshot(record, snapshot)
            t0 = time.perf_counter()
            try:
                regions = explorer.explore(snapshot, record.query, snapshot.name)
                outcome, error = OUTCOME_SUCCESS, None
            except Exception as exc:  # one instance's failure is recorded, the run goes on
                regions, outcome, error = [], OUTCOME_ERROR, exc
                report.failed += 1
                logger.error("%s: %s: %s", record.instance_id, type(exc).__name__, exc)
            seconds = time.perf_counter() - t0
            metrics = None
            if outcome == OUTCOME_SUCCESS:
                counts = file_line_counts(record.ground_truth, snapshot)
                metrics = evaluate_instance(regions, record.ground_truth, counts)
            row = make_row(
                record.instance_id,
                explorer.name,
                regions,
                metrics,
                outcome=outcome,
                error=error,
                repo_revision=commit,
                explorer_config=config,
            )
            row["snapshot"] = str(snapshot)
            row["seconds"] = round(seconds, 4)
            writer.write(row)
            report.written += 1
            report.seconds.append(seconds)
    return report


def _rewrite(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Atomically replace a result file with the given rows."""
    write_text_atomic(path, "".join(row_line(row) for row in rows))
