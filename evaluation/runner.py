"""Run an explorer over bench records: one reference-compatible result row per instance, resumable.

Shared by ``scripts/run_baselines.py`` (one explorer) and ``scripts/compare_chunkers.py`` (a grid).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
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
    :param exc: the error, or its ``"<type>: <message>"`` (as a worker of a parallel run reports it).
    """

    def __init__(self, instance_id: str, exc: BaseException | str) -> None:
        error = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"
        super().__init__(
            f"{instance_id}: {error}; the run stopped (rows written so far are kept; "
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


#: Runs ``function(*args)`` for each argument tuple, possibly in other processes or on other hosts, and yields the
#: results as the tasks finish: :func:`~swe_explore.indexes.batch.run_tasks` with its backend bound (the command
#: layer builds it; this package stays free of joblib and Dask).
TaskMap = Callable[[Callable[..., Any], Sequence[tuple[Any, ...]]], Iterable[Any]]


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
    tasks: TaskMap | None = None,
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

    With ``tasks`` the instances run in parallel, one task per snapshot (the instances that share a snapshot go
    to one worker, which loads its index once); each task gets a copy of the explorer, and failures are handled
    as above (an operational error stops the run: the tasks not started are cancelled). This process appends
    each finished task's rows to ``out`` (flushed; the durable state is ``out`` alone, no part files) and, at the
    end of the run, stopped or not, rewrites ``out`` atomically in bench order (rows of instances not in
    ``records`` after them, in file order) if it is not in that order already. The rows are those of a
    sequential run except ``seconds``; a run killed before the end leaves its finished tasks' rows in completion
    order, and the next run keeps them and sorts.

    :param explorer: the explorer (see :class:`Explorer`).
    :param records: bench records.
    :param repos_dir: snapshots, one per instance.
    :param out: result JSONL file.
    :param overwrite: delete ``out`` first instead of resuming.
    :param progress: show a progress bar.
    :param shared_snapshots: accept shared snapshot folders (see :func:`evaluation.bench.snapshot_candidates`).
    :param keep_going: record operational errors as ``ERROR`` rows and go on instead of stopping.
    :param tasks: run the snapshots' tasks with this (``None``: here, one instance after the other).
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
        return _run_locked(explorer, records, repos_dir, out, overwrite, progress, shared_snapshots, keep_going, tasks)


def _run_locked(
    explorer: Explorer,
    records: Sequence[BenchRecord],
    repos_dir: Path,
    out: Path,
    overwrite: bool,
    progress: bool,
    shared_snapshots: bool,
    keep_going: bool,
    tasks: TaskMap | None,
) -> RunReport:
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
    if tasks is not None:
        _run_parallel(explorer, records, repos_dir, out, done, snapshots, keep_going, tasks, progress, report)
        return report
    stop_on = () if keep_going else _operational_errors()
    with ResultsWriter(out) as writer:
        pending = tqdm(records, desc=explorer.name, unit="instance", disable=not progress)
        for record, snapshot, commit in _pending(pending, done, snapshots, repos_dir, report):
            try:
                row, seconds = _explore_one(
                    explorer, record, snapshot, snapshot.name, str(snapshot), commit, config, stop_on
                )
            except stop_on as exc:
                raise RunAbortedError(record.instance_id, exc) from exc
            if row["outcome"] != OUTCOME_SUCCESS:
                report.failed += 1
                logger.error("%s: %s", record.instance_id, row["error"])
            writer.write(row)
            report.written += 1
            report.seconds.append(seconds)
    return report


def _operational_errors() -> tuple[type[BaseException], ...]:
    """The errors that stop a run unless ``keep_going`` (see :func:`run_explorer`)."""
    from swe_explore.indexes.files import CorruptIndexError
    from swe_explore.indexes.store import ReadOnlyStoreError

    return (CorruptIndexError, ReadOnlyStoreError, OSError, ImportError, MemoryError)


def _explore_one(
    explorer: Explorer,
    record: BenchRecord,
    snapshot: Path,
    snapshot_name: str,
    snapshot_label: str,
    commit: str | None,
    config: Mapping[str, Any],
    stop_on: tuple[type[BaseException], ...],
) -> tuple[dict[str, Any], float]:
    """Explore one instance and score it: its result row and explore seconds.

    :param explorer: the explorer.
    :param record: the instance.
    :param snapshot: its snapshot directory, as this process reads it.
    :param snapshot_name: the snapshot's name in the store (the directory's name where the run found it).
    :param snapshot_label: the snapshot directory written to the row (where the run found it).
    :param commit: the snapshot's known commit (:func:`~evaluation.bench.check_snapshot`).
    :param config: the explorer config written to the row.
    :param stop_on: the explorer's exceptions that stop the run (:func:`_operational_errors`, or none with
        ``keep_going``); any other exception of the explorer gives an ``ERROR`` row.
    :return: ``(row, seconds)``.
    :raises Exception: an exception of ``stop_on`` raised by the explorer, for the caller to stop the run.
    """
    t0 = time.perf_counter()
    try:
        regions = explorer.explore(snapshot, record.query, snapshot_name)
    except Exception as exc:  # one instance's failure is recorded, the run goes on
        if isinstance(exc, stop_on):
            raise
        return _error_row(explorer, record, exc, snapshot_label, commit, config, time.perf_counter() - t0)
    seconds = time.perf_counter() - t0
    counts = file_line_counts(record.ground_truth, snapshot)
    metrics = evaluate_instance(regions, record.ground_truth, counts)
    row = make_row(
        record.instance_id,
        explorer.name,
        regions,
        metrics,
        outcome=OUTCOME_SUCCESS,
        error=None,
        repo_revision=commit,
        explorer_config=config,
    )
    return _finish_row(row, record, snapshot_label, seconds), seconds


def _error_row(
    explorer: Explorer,
    record: BenchRecord,
    exc: BaseException,
    snapshot_label: str,
    commit: str | None,
    config: Mapping[str, Any],
    seconds: float,
) -> tuple[dict[str, Any], float]:
    """The ``ERROR`` row of an instance whose explorer raised ``exc`` (empty regions, scored 0)."""
    row = make_row(
        record.instance_id,
        explorer.name,
        [],
        None,
        outcome=OUTCOME_ERROR,
        error=exc,
        repo_revision=commit,
        explorer_config=config,
    )
    return _finish_row(row, record, snapshot_label, seconds), seconds


def _finish_row(row: dict[str, Any], record: BenchRecord, snapshot_label: str, seconds: float) -> dict[str, Any]:
    """Add the runner's fields to a row: ``snapshot``, ``seconds`` and ``query_sha256``."""
    row["snapshot"] = snapshot_label
    row["seconds"] = round(seconds, 4)
    row["query_sha256"] = query_sha256(record.query)
    return row


@dataclass(frozen=True)
class GroupItem:
    """One instance of a parallel run's task, as it is pickled to the worker.

    :param record: the bench record.
    :param snapshot: its snapshot directory made absolute (a worker may run in another directory).
    :param snapshot_name: the snapshot's name in the store.
    :param snapshot_label: the snapshot directory as the run found it (written to the row).
    :param commit: the snapshot's known commit, if any.
    """

    record: BenchRecord
    snapshot: str
    snapshot_name: str
    snapshot_label: str
    commit: str | None


@dataclass
class GroupResult:
    """What a task of a parallel run sends back.

    :param rows: ``(row, explore seconds)`` per instance explored, in the task's order.
    :param abort: ``(instance_id, "<type>: <message>")`` of an operational error that stopped the task (without
        ``keep_going``); the instances after it got no row.
    """

    rows: list[tuple[dict[str, Any], float]] = field(default_factory=list)
    abort: tuple[str, str] | None = None


def explore_group(
    explorer: Explorer, items: Sequence[GroupItem], config: Mapping[str, Any], keep_going: bool
) -> GroupResult:
    """Explore the instances of one snapshot, in order (a task of a parallel :func:`run_explorer`).

    :param explorer: the worker's copy of the explorer (its loaded index is reused between the instances).
    :param items: the instances.
    :param config: the explorer config written to the rows (computed once, by the caller).
    :param keep_going: record operational errors as ``ERROR`` rows instead of stopping the task.
    :return: the rows, and the operational error of the explorer that stopped the task, if any (the explorer's
        other exceptions are ERROR rows; an error outside the explorer, e.g. while scoring, propagates as in a
        sequential run).
    """
    result = GroupResult()
    stop_on = () if keep_going else _operational_errors()
    for item in items:
        try:
            row, seconds = _explore_one(
                explorer,
                item.record,
                Path(item.snapshot),
                item.snapshot_name,
                item.snapshot_label,
                item.commit,
                config,
                stop_on,
            )
        except stop_on as exc:  # sent back as text: not every exception pickles
            result.abort = (item.record.instance_id, f"{type(exc).__name__}: {exc}")
            break
        result.rows.append((row, seconds))
    return result


def _pending(
    records: Iterable[BenchRecord],
    done: set[str],
    snapshots: Mapping[str, Path | None],
    repos_dir: Path,
    report: RunReport,
) -> Iterator[tuple[BenchRecord, Path, str | None]]:
    """The records still to run, with their snapshot and its known commit; those without a snapshot are recorded
    in ``report.missing`` (and logged) and skipped; a snapshot at another commit raises ``SnapshotCommitError``
    (:func:`~evaluation.bench.check_snapshot`)."""
    for record in records:
        if record.instance_id in done:
            continue
        snapshot = snapshots[record.instance_id]
        if snapshot is None:
            report.missing.append(record.instance_id)
            logger.warning("%s: no snapshot under %s; skipped", record.instance_id, repos_dir)
            continue
        yield record, snapshot, check_snapshot(record, snapshot)


def _run_parallel(
    explorer: Explorer,
    records: Sequence[BenchRecord],
    repos_dir: Path,
    out: Path,
    done: set[str],
    snapshots: Mapping[str, Path | None],
    keep_going: bool,
    tasks: TaskMap,
    progress: bool,
    report: RunReport,
) -> None:
    """The parallel branch of :func:`run_explorer`: one task per snapshot, rows appended as tasks finish, then
    ``out`` put in bench order."""
    groups: dict[Path, list[GroupItem]] = {}
    for record, snapshot, commit in _pending(records, done, snapshots, repos_dir, report):
        item = GroupItem(record, str(snapshot.absolute()), snapshot.name, str(snapshot), commit)
        groups.setdefault(snapshot.absolute(), []).append(item)
    config = explorer.explorer_config
    arguments = [(explorer, items, config, keep_going) for items in groups.values()]
    seconds: dict[str, float] = {}
    abort: tuple[str, str] | None = None
    bar = tqdm(total=sum(map(len, groups.values())), desc=explorer.name, unit="instance", disable=not progress)
    try:
        results = iter(tasks(explore_group, arguments)) if arguments else iter(())
        try:
            with ResultsWriter(out) as writer:
                for result in results:
                    for row, explore_seconds in result.rows:
                        if row["outcome"] != OUTCOME_SUCCESS:
                            report.failed += 1
                            logger.error("%s: %s", row["instance_id"], row["error"])
                        writer.write(row)
                        report.written += 1
                        seconds[row["instance_id"]] = explore_seconds
                    bar.update(len(result.rows))
                    if result.abort is not None:
                        abort = result.abort
                        break
        finally:  # stopped or not: cancels the tasks not started yet
            close = getattr(results, "close", None)
            if close is not None:
                close()
    finally:
        bar.close()
        report.seconds = [seconds[r.instance_id] for r in records if r.instance_id in seconds]
        if out.exists():
            sort_rows(out, [r.instance_id for r in records])
    if abort is not None:
        raise RunAbortedError(*abort)


def sort_rows(path: Path, order: Sequence[str]) -> bool:
    """Put a result file's rows in the order of ``order`` (instance ids), atomically; other rows go after, in file
    order. A last row cut off by a kill is dropped.

    :param path: the result file.
    :param order: instance ids, e.g. the bench's.
    :return: whether the file was rewritten (``False``: it was in that order already).
    :raises ValueError: on an invalid row (see :func:`~evaluation.results.read_rows`).
    """
    rows = read_rows(path, drop_partial_last=True)
    position = {instance_id: i for i, instance_id in enumerate(order)}
    ordered = sorted(rows, key=lambda row: position.get(row["instance_id"], len(position)))
    if ordered == rows and path.read_bytes().endswith(b"\n"):
        return False
    _rewrite(path, ordered)
    return True


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
