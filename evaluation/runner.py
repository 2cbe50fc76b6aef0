"""Run an explorer over bench records: one reference-compatible result row per instance, resumable.

Shared by ``scripts/run_baselines.py`` (one explorer) and ``scripts/compare_chunkers.py`` (a grid).
"""

from __future__ import annotations

import contextlib
import hashlib
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

RERUN_QUERY = "issue text changed"
RERUN_SNAPSHOT = "snapshot changed"
RERUN_OLD_ROW = "row of an older version without query_sha256"


def query_sha256(query: str) -> str:
    """The hex SHA-256 of an issue text (UTF-8), stored in each row as ``query_sha256`` to tell stale rows.

    :param query: the query given to the explorer.
    :return: 64 hex digits.
    """
    return hashlib.sha256(query.encode("utf-8", "surrogatepass")).hexdigest()


class RunAbortedError(RuntimeError):
    """An operational error (corrupt index, read-only store, disk full, missing extra) stopped the run.

    The instance gets no row, so the next run retries it; ``keep_going=True`` records such errors as ``ERROR``
    rows instead.

    :param instance_id: the instance being explored.
    :param exc: the error.
    """

    def __init__(self, instance_id: str, exc: BaseException) -> None:
        super().__init__(
            f"{instance_id}: {type(exc).__name__}: {exc}; the run stopped (rows written so far are kept; "
            "--keep-going records such failures as ERROR rows and goes on)"
        )


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
    :param rerun: rows dropped as stale to be run again, by reason (:data:`RERUN_QUERY`, ...).
    :param failed: instances whose explorer raised (written as ERROR rows scored 0).
    :param missing: instance ids without a snapshot (no row; excluded, as the reference runner does).
    :param seconds: per-instance explore wall-clock seconds of the rows written in this call.
    """

    out: Path
    written: int = 0
    resumed: int = 0
    retried: int = 0
    rerun: dict[str, int] = field(default_factory=dict)
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
    keep_going: bool = False,
) -> RunReport:
    """Explore every record and append one result row per instance to ``out`` (flushed per row).

    Successful rows already in ``out`` are kept (resume); they must have been written with the same explorer
    config. Rows of instances that failed before are dropped and run again, and so is a last row cut off by a
    killed run. A kept row must also match what the explorer would read now: its ``query_sha256`` (the hash of
    the issue text, :func:`query_sha256`) and its ``snapshot``; a stale row (another issue text, another snapshot,
    or a row of an older version without ``query_sha256``) is dropped and run again (counted in
    :attr:`RunReport.rerun`). One instance's exception becomes an ``ERROR`` row with empty regions (scored 0, as
    the reference's new runner does) and the run goes on, except for an operational error (a corrupt index, a
    read-only store, a failed file operation, a missing optional dependency), which stops the run unless
    ``keep_going``. Each row carries the reference fields, the 17 metrics
    (our line definition), ``explorer_config``, ``snapshot`` (the directory used), ``repo_revision`` (its
    commit when known: a marker written when it was materialised, or its ``.git`` HEAD; a commit other than
    ``base_commit`` is an error), ``seconds`` (wall-clock explore time of that instance) and ``query_sha256``.
    Only one process may
    write ``out`` at a time.

    :param explorer: the explorer (see :class:`Explorer`).
    :param records: bench records.
    :param repos_dir: snapshots, one per instance.
    :param out: result JSONL file.
    :param overwrite: delete ``out`` first instead of resuming.
    :param progress: show a progress bar.
    :param shared_snapshots: accept shared snapshot folders (see :func:`evaluation.bench.snapshot_candidates`).
    :param keep_going: record operational errors as ``ERROR`` rows and go on instead of stopping.
    :return: the run report.
    :raises ConfigMismatchError: if ``out`` holds rows of another explorer config.
    :raises ConcurrentRunError: if another process is writing ``out``.
    :raises IsADirectoryError: if ``out`` is a directory.
    :raises SnapshotCommitError: if a snapshot's known commit is not its record's ``base_commit``.
    :raises RunAbortedError: on an operational error, without ``keep_going``.
    """
    out = Path(out)
    if out.is_dir():
        raise IsADirectoryError(f"--out {out} is a directory; give a .jsonl file path")
    with exclusive_lock(out):
        return _run_locked(explorer, records, repos_dir, out, overwrite, progress, shared_snapshots, keep_going)


def _run_locked(
    explorer: Explorer,
    records: Sequence[BenchRecord],
    repos_dir: Path,
    out: Path,
    overwrite: bool,
    progress: bool,
    shared_snapshots: bool,
    keep_going: bool,
) -> RunReport:
    from swe_explore.indexes.files import CorruptIndexError
    from swe_explore.indexes.store import ReadOnlyStoreError

    operational = (CorruptIndexError, ReadOnlyStoreError, OSError, ImportError, MemoryError)
    config = explorer.explorer_config
    if overwrite and out.exists():
        out.unlink()
    done: set[str] = set()
    retried = 0
    rerun: dict[str, int] = {}
    snapshots = {r.instance_id: find_snapshot(r, repos_dir, shared_snapshots) for r in records}
    if out.exists():
        rows = read_rows(out, drop_partial_last=True)
        other = [r for r in rows if r.get("explorer_config") != config]
        if other:
            first = other[0]
            diffs = config_differences(first.get("explorer_config"), config)
            raise ConfigMismatchError(out, first["instance_id"], diffs)
        kept = [r for r in rows if r.get("outcome", OUTCOME_SUCCESS) == OUTCOME_SUCCESS]
        retried = len(rows) - len(kept)
        by_id = {r.instance_id: r for r in records}
        fresh = []
        for row in kept:
            reason = _stale_reason(row, by_id.get(row["instance_id"]), snapshots)
            if reason is None:
                fresh.append(row)
            else:
                rerun[reason] = rerun.get(reason, 0) + 1
        if retried or len(fresh) < len(kept) or not out.read_bytes().endswith(b"\n"):
            _rewrite(out, fresh)
        done = {r["instance_id"] for r in fresh}
    report = RunReport(out, resumed=len(done), retried=retried, rerun=rerun)
    with ResultsWriter(out) as writer:
        for record in tqdm(records, desc=explorer.name, unit="instance", disable=not progress):
            if record.instance_id in done:
                continue
            snapshot = snapshots[record.instance_id]
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
                if isinstance(exc, operational) and not keep_going:
                    raise RunAbortedError(record.instance_id, exc) from exc
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
            row["query_sha256"] = query_sha256(record.query)
            writer.write(row)
            report.written += 1
            report.seconds.append(seconds)
    return report


def _stale_reason(
    row: Mapping[str, Any], record: BenchRecord | None, snapshots: Mapping[str, Path | None]
) -> str | None:
    """Why a kept row no longer matches what the explorer would read for its record, or ``None`` if it does."""
    if record is None:  # an instance not run this time (e.g. beyond --limit): left as it is
        return None
    if "query_sha256" not in row:
        return RERUN_OLD_ROW
    if row["query_sha256"] != query_sha256(record.query):
        return RERUN_QUERY
    snapshot = snapshots.get(record.instance_id)
    if snapshot is not None and row.get("snapshot") not in (None, str(snapshot)):
        return RERUN_SNAPSHOT
    return None


def _rewrite(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Atomically replace a result file with the given rows."""
    write_text_atomic(path, "".join(row_line(row) for row in rows))
