"""Result rows compatible with the reference runner, scoring them, aggregating them, and printing tables.

A result file holds one JSON object per line and per instance (docs/metrics.md §3.2)::

    {"instance_id": "...", "explorer": "bm25", "outcome": "SUCCESS", "error": null,
     "regions": [{"path", "start", "end"}, ...],      # preds[:k], raw (sentinels not resolved)
     "metrics": {"precision": ..., ... 17 names},
     "num_regions": 5, "token_usage": null, "repo_revision": null,
     "explorer_config": {"chunk_size": 80, "chunk_overlap": 20}}   # only when non-empty

Rows are appended and flushed one by one (:class:`ResultsWriter`), so an interrupted run can resume
(:func:`done_instance_ids`). Aggregation follows the new reference runner (docs/metrics.md §1.3): the mean over
evaluated instances, where errors are scored 0 and included and instances without a snapshot are excluded.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import Any

from swe_explore.chunking.atomic import write_text_atomic
from swe_explore.chunking.types import Region
from swe_explore.evaluation.bench import (
    BenchRecord,
    check_snapshot,
    find_snapshot,
    first_ids,
    load_bench,
    not_utf8,
    repo_from_instance_id,
)
from swe_explore.evaluation.line_counts import file_line_counts, snapshot_line_counts
from swe_explore.evaluation.metrics import METRIC_NAMES, evaluate_instance, optional_regions, zero_metrics
from swe_explore.evaluation.paths import in_snapshot, normalize_path
from swe_explore.evaluation.region_checks import InvalidRegions, resolved_line_counts, sentinels_outside_gt

OUTCOME_SUCCESS = "SUCCESS"
"""The explorer returned regions (possibly none)."""
OUTCOME_ERROR = "ERROR"
"""The explorer raised; the row is scored as an empty prediction (all metrics 0) and included in means."""
OUTCOME_NOT_ATTEMPTED = "NOT_ATTEMPTED"
"""No prediction exists for the instance (e.g. missing from an external result file); scored 0."""
MAX_ERROR_CHARS = 4000
"""The reference truncates ``error`` to this many characters."""
RESOLVED_METRICS_KEY = "metrics_predicted_files_resolved"
"""The key of a scored row's metrics under the "predicted files resolved" semantics (``score_predicted_lines``)."""

SHORT_NAMES: dict[str, str] = {
    "precision": "Prec",
    "recall": "Rec",
    "f1_score": "F1",
    "hit_file_rate": "HitFile",
    "noise_file_rate": "NoiseFile",
    "hit_region_rate": "HitRegion",
    "noise_region_rate": "NoiseRegion",
    "weighted_core_coverage": "WCC",
    "context_efficiency": "CtxEff",
    "optional_coverage": "OptCov",
    "ndcg_at_100": "nDCG@100",
    "ndcg_at_300": "nDCG@300",
    "ndcg_at_500": "nDCG@500",
    "recall_at_100": "R@100",
    "recall_at_300": "R@300",
    "recall_at_500": "R@500",
    "first_useful_hit": "FirstHit",
}
"""Short column headers for tables (the row keys stay the reference names)."""


# ----------------------------------------------------------------------------------------------------------
# Rows and files
# ----------------------------------------------------------------------------------------------------------


def make_row(
    instance_id: str,
    explorer: str,
    regions: Iterable[Region | Mapping[str, Any]],
    metrics: Mapping[str, float] | None = None,
    *,
    outcome: str = OUTCOME_SUCCESS,
    error: str | BaseException | None = None,
    token_usage: Mapping[str, Any] | None = None,
    repo_revision: str | None = None,
    explorer_config: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build one result row in the reference runner's format (docs/metrics.md §3.2).

    :param instance_id: the instance id.
    :param explorer: the explorer name.
    :param regions: the predicted regions, already cut to k (Regions or their JSON dicts); written raw.
    :param metrics: the 17 metrics; ``None`` = all 0 (an empty prediction).
    :param outcome: ``SUCCESS``, ``ERROR``, ``NOT_ATTEMPTED`` or a classified failure name.
    :param error: the error (message or exception) of a failed case; truncated to 4000 characters.
    :param token_usage: token counts of agentic explorers, ``None`` for local ones.
    :param repo_revision: git HEAD of the snapshot, if known.
    :param explorer_config: e.g. ``{"chunk_size": 80, "chunk_overlap": 20}``; omitted when empty.
    :return: the row as a JSON-serialisable dict.
    :raises ValueError: if a region is malformed.
    """
    region_dicts = [Region.from_json(r).to_json() for r in regions]
    if isinstance(error, BaseException):
        error = f"{type(error).__name__}: {error}"
    row: dict[str, Any] = {
        "instance_id": instance_id,
        "explorer": explorer,
        "outcome": outcome,
        "error": None if error is None else str(error)[:MAX_ERROR_CHARS],
        "regions": region_dicts,
        "metrics": dict(metrics) if metrics is not None else zero_metrics(),
        "num_regions": len(region_dicts),
        "token_usage": None if token_usage is None else dict(token_usage),
        "repo_revision": repo_revision,
    }
    if explorer_config:
        row["explorer_config"] = dict(explorer_config)
    return row


def row_line(row: Mapping[str, Any]) -> str:
    """One result row as its JSONL line (compact JSON, ASCII-escaped, newline-terminated).

    :param row: a row from :func:`make_row` (any JSON-serialisable mapping).
    :return: the line, ending in ``"\\n"``.
    """
    # ensure_ascii keeps rows writable even for paths with lone surrogates (undecodable file names)
    return json.dumps(row, ensure_ascii=True) + "\n"


class ResultsWriter:
    """Append result rows to a JSONL file, one line per row, flushed after every row.

    Use as a context manager; the parent directory is created and an existing file is appended to (resume).

    :param path: the result file, e.g. ``results/bm25/top5.jsonl``.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = self.path.open("a", encoding="utf-8")

    def write(self, row: Mapping[str, Any]) -> None:
        """Append one row and flush it to disk.

        :param row: a row from :func:`make_row` (any JSON-serialisable mapping).
        """
        self._handle.write(row_line(row))
        self._handle.flush()

    def close(self) -> None:
        """Close the file."""
        self._handle.close()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def read_rows(path: str | Path, *, drop_partial_last: bool = False) -> list[dict[str, Any]]:
    """Read a result JSONL file (ours, the reference runner's, or external predictions).

    Each row needs ``instance_id`` (string) and ``regions`` (list); other fields are kept as they are.

    :param path: the JSONL file; blank lines are ignored.
    :param drop_partial_last: ignore a last line that is not valid JSON and has no final newline (a row cut
        off by a killed run), instead of raising.
    :return: the rows in file order.
    :raises FileNotFoundError: if the file does not exist.
    :raises IsADirectoryError: if it is a directory.
    :raises ValueError: on invalid JSON or a row without ``instance_id``/``regions``, naming file and line.
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"result file {path} is a directory; give a result JSONL file")
    if not path.is_file():
        raise FileNotFoundError(f"result file {path} does not exist")
    rows: list[dict[str, Any]] = []
    try:
        with path.open(encoding="utf-8-sig") as handle:
            lines = handle.readlines()
    except UnicodeDecodeError as exc:
        raise ValueError(not_utf8(path, exc)) from None
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line.rstrip("\n"))  # an error at the end of the line is reported on the line
        except json.JSONDecodeError as exc:
            if drop_partial_last and line_no == len(lines) and not line.endswith("\n"):
                break
            raise ValueError(f"{path}:{line_no}: invalid JSON ({exc.msg}, column {exc.colno})") from None
        if not isinstance(row, dict) or not isinstance(row.get("instance_id"), str):
            raise ValueError(f"{path}:{line_no}: row has no string 'instance_id'")
        if not isinstance(row.get("regions"), list):
            raise ValueError(f"{path}:{line_no} ({row['instance_id']}): row has no 'regions' list")
        rows.append(row)
    return rows


def done_instance_ids(*paths: str | Path) -> set[str]:
    """Instance ids present in *every* given result file, for resuming (per k, docs/metrics.md §3.2).

    :param paths: the result files of one explorer (one per k); a missing file counts as empty.
    :return: the ids done in all files (empty if no path is given or any file is missing).
    :raises ValueError: on a malformed file (see :func:`read_rows`).
    """
    done: set[str] | None = None
    for path in paths:
        ids = {row["instance_id"] for row in read_rows(path)} if Path(path).is_file() else set()
        done = ids if done is None else done & ids
    return done or set()


# ----------------------------------------------------------------------------------------------------------
# Scoring
# ----------------------------------------------------------------------------------------------------------


def foreign_instance_ids(path: str | Path, bench: str | Path) -> list[str]:
    """The instances a result file has rows for that the bench has no record of (every record counts, with or
    without core regions and issue text): such a file is another bench's, not one to resume.

    :param path: the result file (a partial last line is ignored, as a resumed run does).
    :param bench: the bench JSONL.
    :return: the foreign instance ids, sorted.
    :raises ValueError: a file that cannot be parsed (the message names it).
    :raises FileNotFoundError: a file that does not exist.
    """
    bench_ids = {r.instance_id for r in load_bench(bench, skip_empty_core=False, require_query=False)}
    return sorted({row["instance_id"] for row in read_rows(path, drop_partial_last=True)} - bench_ids)


def score_row(
    row: Mapping[str, Any],
    record: BenchRecord,
    path_to_lines: Mapping[str, int] | None,
    *,
    k: int | None = None,
    normalize_paths: bool = False,
) -> dict[str, Any]:
    """(Re-)score one row against its record: a copy with ``regions`` cut to k and fresh ``metrics``.

    A row whose ``outcome`` is present and not ``SUCCESS`` is scored as an empty prediction (all 0), as the
    new reference runner does for failures.

    :param row: a result row (needs ``regions``; ``outcome`` defaults to ``SUCCESS``).
    :param record: the bench record of the row's instance.
    :param path_to_lines: the instance's line counts, see :func:`evaluation.line_counts.file_line_counts`.
    :param k: keep only the first k regions (``None`` = all).
    :param normalize_paths: apply :func:`evaluation.paths.normalize_path` to predicted paths first.
    :return: the new row.
    :raises ValueError: if ``k < 1`` or a region is malformed.
    """
    if k is not None and k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    out = dict(row)
    out.setdefault("outcome", OUTCOME_SUCCESS)
    try:
        regions = [Region.from_json(r) for r in row.get("regions") or []]
    except ValueError as exc:
        raise ValueError(f"instance {row.get('instance_id')!r}: {exc}") from None
    if k is not None:
        regions = regions[:k]
    if normalize_paths:
        regions = [Region(normalize_path(p), s, e) for p, s, e in regions]
    out["regions"] = [{"path": p, "start": s, "end": e} for p, s, e in regions]
    out["num_regions"] = len(regions)
    if out["outcome"] == OUTCOME_SUCCESS:
        out["metrics"] = evaluate_instance(regions, record.ground_truth, path_to_lines)
    else:
        out["metrics"] = zero_metrics()
    return out


@dataclass
class Coverage:
    """What an evaluation covered, so that nothing hides in a mean: filled by :func:`evaluate_rows`.

    :param bench: instances in the bench (records with core regions).
    :param scored: instances scored (in the means).
    :param no_snapshot: instances without a snapshot under ``--repos`` (excluded from the means, as the
        reference runner does).
    :param no_row: instances with a snapshot but no result row (scored 0 and included, as the reference does).
    :param failed: instances whose row has an outcome other than ``SUCCESS`` (scored 0 and included).
    :param paths_not_in_snapshot: per instance, predicted paths that name no file of the snapshot in the
        ground truth's form (:func:`evaluation.paths.in_snapshot`); such regions score nothing.
    :param commits_checked: snapshots whose commit was known and matched ``base_commit``.
    :param rows_over_k: rows with more than ``k`` regions, scored on their first ``k``.
    :param invalid_regions: invalid ground-truth and predicted regions (:mod:`evaluation.region_checks`).
    :param sentinel_regions_outside_gt: per instance, predicted ``end: -1`` / negative-start regions on files
        of the snapshot outside the ground truth, which the reference scores as 0 lines (docs/metrics.md).
    """

    bench: int = 0
    scored: int = 0
    no_snapshot: list[str] = field(default_factory=list)
    no_row: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    paths_not_in_snapshot: dict[str, list[str]] = field(default_factory=dict)
    commits_checked: int = 0
    rows_over_k: int = 0
    invalid_regions: InvalidRegions = field(default_factory=InvalidRegions)
    sentinel_regions_outside_gt: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (written under ``coverage`` by ``evaluate.py --json``)."""
        return {
            "bench": self.bench,
            "scored": self.scored,
            "no_snapshot": list(self.no_snapshot),
            "no_row": list(self.no_row),
            "failed": list(self.failed),
            "paths_not_in_snapshot": {k: list(v) for k, v in self.paths_not_in_snapshot.items()},
            "regions_not_in_snapshot": sum(len(v) for v in self.paths_not_in_snapshot.values()),
            "commits_checked": self.commits_checked,
            "rows_over_k": self.rows_over_k,
            "invalid_regions": self.invalid_regions.to_dict(),
            "sentinel_regions_outside_gt": {k: list(v) for k, v in self.sentinel_regions_outside_gt.items()},
            "sentinel_region_count": sum(len(v) for v in self.sentinel_regions_outside_gt.values()),
        }

    def problems(self) -> list[str]:
        """One line per kind of gap (empty when the evaluation covered every instance cleanly).

        :return: messages such as ``"2 of 23 bench instances have no snapshot (excluded): a, b"``.
        """

        out = []
        if self.no_snapshot:
            out.append(
                f"{len(self.no_snapshot)} of {self.bench} bench instances have no snapshot (excluded from "
                f"the means): {first_ids(self.no_snapshot)}"
            )
        if self.no_row:
            out.append(
                f"{len(self.no_row)} of {self.scored} scored instances have no result row (scored 0): "
                f"{first_ids(self.no_row)}"
            )
        if self.failed:
            out.append(
                f"{len(self.failed)} of {self.scored} scored instances failed (scored 0): {first_ids(self.failed)}"
            )
        if self.paths_not_in_snapshot:
            n = sum(len(v) for v in self.paths_not_in_snapshot.values())
            first = next(iter(self.paths_not_in_snapshot.items()))
            out.append(
                f"{n} predicted region(s) in {len(self.paths_not_in_snapshot)} instance(s) name files that "
                f"are not in the snapshot (scored as misses), e.g. {first[0]}: {first[1][0]!r}"
            )
        if self.rows_over_k:
            out.append(f"{self.rows_over_k} row(s) hold more than k regions and were scored on their first k")
        out.extend(self.invalid_regions.problems())
        return out

    def notes(self) -> list[str]:
        """What is scored as the reference does but differs from the other semantics (not a gap: ``--strict``
        accepts it): the sentinel regions outside the ground truth (docs/metrics.md).

        :return: zero or one line.
        """
        if not self.sentinel_regions_outside_gt:
            return []
        n = sum(len(v) for v in self.sentinel_regions_outside_gt.values())
        iid, regions = next(iter(self.sentinel_regions_outside_gt.items()))
        first = regions[0]
        return [
            f"{n} predicted region(s) in {len(self.sentinel_regions_outside_gt)} instance(s) use end -1 or a "
            "negative start on a file outside the ground truth: the reference scores them as 0 lines "
            "(--score-predicted-lines scores them with the file's length), e.g. "
            f"{iid}: {first['path']} {first['start']}-{first['end']}"
        ]

    def summary_line(self) -> str:
        """``"scored 21 of 23 bench instances (..)"``: the counts in one line."""
        parts = [
            f"{len(self.no_snapshot)} without snapshot",
            f"{len(self.no_row)} without result row",
            f"{len(self.failed)} failed",
            f"{self.commits_checked} snapshot commits checked",
        ]
        return f"scored {self.scored} of {self.bench} bench instances ({', '.join(parts)})"


def rows_by_id(rows: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Result rows keyed by ``instance_id``, in their order.

    :param rows: result rows.
    :return: ``{instance_id: row}``.
    :raises ValueError: naming the instance of a second row for it.
    """
    by_id: dict[str, Mapping[str, Any]] = {}
    for given in rows:
        iid = given["instance_id"]
        if iid in by_id:
            raise ValueError(f"two result rows for instance {iid!r}")
        by_id[iid] = given
    return by_id


def evaluate_rows(
    rows: Iterable[Mapping[str, Any]],
    records: Sequence[BenchRecord],
    repos_dir: str | Path | None,
    *,
    k: int | None = None,
    line_count_mode: str = "lines",
    normalize_paths: bool = False,
    skip_missing_repo: bool = True,
    missing_rows: str = "zero",
    shared_snapshots: bool = False,
    coverage: Coverage | None = None,
    score_predicted_lines: bool = False,
) -> list[dict[str, Any]]:
    """Score result rows against the bench, instance by instance, in bench order.

    Line counts come from each record's snapshot under ``repos_dir`` (:func:`evaluation.bench.find_snapshot`).

    :param rows: result rows, at most one per instance_id, all for instances in ``records``.
    :param records: the bench records to evaluate (e.g. from :func:`evaluation.bench.load_bench`).
    :param repos_dir: the ``--repos`` directory with the snapshots (``None`` = no snapshots).
    :param k: keep only the first k regions of each row (``None`` = as written).
    :param line_count_mode: ``"lines"`` (ours) or ``"splitlines"`` (reference), see
        :mod:`evaluation.line_counts`.
    :param normalize_paths: apply :func:`evaluation.paths.normalize_path` to predicted paths.
    :param skip_missing_repo: exclude instances without a snapshot (the reference default); if false they
        are scored without line counts.
    :param missing_rows: what to do with a record that has no row: ``"zero"`` adds a ``NOT_ATTEMPTED`` row
        scored 0 (included in means), ``"skip"`` leaves it out, ``"error"`` raises.
    :param shared_snapshots: accept shared snapshot folders (see :func:`evaluation.bench.snapshot_candidates`).
    :param coverage: filled with what was scored and what was missing (see :class:`Coverage`), and with the
        invalid regions and the sentinel regions outside the ground truth (:mod:`evaluation.region_checks`).
    :param score_predicted_lines: also score every row with the predicted files' line counts (the "predicted
        files resolved" semantics of docs/metrics.md), under :data:`RESOLVED_METRICS_KEY`.
    :return: the scored rows, one per evaluated instance, in bench order.
    :raises ValueError: on a duplicate row, a row for an unknown instance, a missing row with
        ``missing_rows="error"``, or an invalid option.
    :raises SnapshotCommitError: if a snapshot's known commit is not its record's ``base_commit``.
    """
    if missing_rows not in ("zero", "skip", "error"):
        raise ValueError(f"missing_rows must be 'zero', 'skip' or 'error', got {missing_rows!r}")
    by_id = rows_by_id(rows)
    known = {r.instance_id for r in records}
    unknown = sorted(set(by_id) - known)
    if unknown:
        raise ValueError(f"{len(unknown)} result row(s) for instances not in the bench records, e.g. {unknown[:3]}")
    explorer = next((str(r.get("explorer", "")) for r in by_id.values()), "")
    cov = coverage if coverage is not None else Coverage()
    cov.bench += len(records)
    scored: list[dict[str, Any]] = []
    for record in records:
        snapshot = find_snapshot(record, repos_dir, shared_snapshots)
        if snapshot is None:
            cov.no_snapshot.append(record.instance_id)
            if skip_missing_repo:
                continue
        elif check_snapshot(record, snapshot):
            cov.commits_checked += 1
        found = by_id.get(record.instance_id)
        row: Mapping[str, Any]
        if found is None:
            if missing_rows == "skip":
                continue
            if missing_rows == "error":
                raise ValueError(f"no result row for instance {record.instance_id!r}")
            cov.no_row.append(record.instance_id)
            row = make_row(record.instance_id, explorer, [], outcome=OUTCOME_NOT_ATTEMPTED)
        else:
            row = found
            if row.get("outcome", OUTCOME_SUCCESS) != OUTCOME_SUCCESS:
                cov.failed.append(record.instance_id)
            elif k is not None and len(row.get("regions") or []) > k:
                cov.rows_over_k += 1
        counts = file_line_counts(record.ground_truth, snapshot, line_count_mode) if snapshot else None
        out = score_row(row, record, counts, k=k, normalize_paths=normalize_paths)
        if snapshot is not None:
            _check_regions(cov, record, snapshot, counts or {}, out, line_count_mode, score_predicted_lines)
        elif score_predicted_lines:
            out[RESOLVED_METRICS_KEY] = dict(out["metrics"])  # no snapshot: no file to resolve
        scored.append(out)
    cov.scored += len(scored)
    return scored


def _check_regions(
    cov: Coverage,
    record: BenchRecord,
    snapshot: Path,
    counts: Mapping[str, int],
    out: dict[str, Any],
    line_count_mode: str,
    score_predicted_lines: bool,
) -> None:
    """Fill ``cov`` with one scored row's region checks (:mod:`evaluation.region_checks`); with
    ``score_predicted_lines``, add the row's metrics with the predicted files resolved."""
    iid = record.instance_id
    gt_regions = [Region.from_json(r).to_json() for r in [*record.core_regions, *optional_regions(record.ground_truth)]]
    cov.invalid_regions.check("ground_truth", iid, gt_regions, counts, snapshot)
    if out["outcome"] != OUTCOME_SUCCESS:
        if score_predicted_lines:
            out[RESOLVED_METRICS_KEY] = zero_metrics()
        return
    regions = out["regions"]
    outside = [r["path"] for r in regions if not in_snapshot(snapshot, r["path"])]
    if outside:
        cov.paths_not_in_snapshot[iid] = outside
    file_counts = snapshot_line_counts(snapshot, sorted({r["path"] for r in regions} - set(outside)), line_count_mode)
    cov.invalid_regions.check("predictions", iid, regions, file_counts)
    unresolved = sentinels_outside_gt(regions, counts, file_counts)
    if unresolved:
        cov.sentinel_regions_outside_gt[iid] = unresolved
    if score_predicted_lines:
        out[RESOLVED_METRICS_KEY] = evaluate_instance(
            regions, record.ground_truth, resolved_line_counts(counts, file_counts)
        )


# ----------------------------------------------------------------------------------------------------------
# Aggregation and tables
# ----------------------------------------------------------------------------------------------------------


def mean_metrics(rows: Iterable[Mapping[str, Any]], metrics: Sequence[str] = METRIC_NAMES) -> dict[str, float]:
    """Arithmetic mean of each metric over rows, ``total / count`` as the reference runner (docs/metrics.md §1.3).

    :param rows: scored rows (a missing metric counts as 0.0).
    :param metrics: the metric names to average.
    :return: ``{metric: mean}``; all 0.0 when there are no rows.
    """
    totals = {m: 0.0 for m in metrics}
    count = 0
    for row in rows:
        count += 1
        values = row.get("metrics") or {}
        for m in metrics:
            totals[m] += float(values.get(m, 0.0))
    return {m: (totals[m] / count if count else 0.0) for m in metrics}


def summarize(rows: Sequence[Mapping[str, Any]], records: Sequence[BenchRecord] | None = None) -> dict[str, Any]:
    """Aggregate scored rows: overall means, outcome counts, and per-repo means.

    :param rows: scored rows (every row counts, whatever its outcome: failures are already scored 0).
    :param records: bench records giving each instance's repo; without them the repo is derived from the
        instance id (``org__name-123`` → ``org/name``).
    :return: ``{"cases": n, "outcomes": {outcome: count}, "metrics": {metric: mean},
        "per_repo": {repo: {"cases": n, "metrics": {metric: mean}}}}``, repos sorted by name.
    """
    repo_of = {r.instance_id: r.repo for r in records or []}
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        iid = row["instance_id"]
        groups.setdefault(repo_of.get(iid) or repo_from_instance_id(iid) or "?", []).append(row)
    return {
        "cases": len(rows),
        "outcomes": dict(Counter(str(row.get("outcome", OUTCOME_SUCCESS)) for row in rows)),
        "metrics": mean_metrics(rows),
        "per_repo": {
            repo: {"cases": len(group), "metrics": mean_metrics(group)} for repo, group in sorted(groups.items())
        },
    }


def instance_metrics(rows: Iterable[Mapping[str, Any]], metrics: Sequence[str] = METRIC_NAMES) -> list[dict[str, Any]]:
    """The per-instance metric rows of scored rows, without regions: what means and statistical tests are made of.

    :param rows: scored rows (:func:`evaluate_rows`); a missing metric counts as 0.0.
    :param metrics: the metric names to keep.
    :return: ``[{"instance_id", "outcome", "metrics": {metric: value}}]`` in row order.
    """
    return [
        {
            "instance_id": row["instance_id"],
            "outcome": str(row.get("outcome", OUTCOME_SUCCESS)),
            "metrics": {m: float((row.get("metrics") or {}).get(m, 0.0)) for m in metrics},
        }
        for row in rows
    ]


def write_instance_csv(
    path: str | Path, rows_by_label: Mapping[str, Iterable[Mapping[str, Any]]], metrics: Sequence[str] = METRIC_NAMES
) -> int:
    """Write per-instance metrics of several labelled files as one CSV: ``label, instance_id, outcome, metrics...``.

    Rows scored with ``score_predicted_lines`` (:func:`evaluate_rows`) add the same metrics scored with the
    predicted files' line counts, as columns ``resolved_<metric>`` after the others.

    :param path: the CSV file (parent directories are created; an existing file is replaced).
    :param rows_by_label: ``{label: scored rows}`` (labels = explorers, files or grid cells).
    :param metrics: the metric columns, in order.
    :return: the number of data rows written.
    :raises OSError: if the file cannot be written (naming it); nothing is left behind.
    """
    rows_of = {label: list(rows) for label, rows in rows_by_label.items()}
    resolved = any(RESOLVED_METRICS_KEY in row for rows in rows_of.values() for row in rows)
    handle = io.StringIO(newline="")
    count = 0
    writer = csv.writer(handle)
    writer.writerow(
        ["label", "instance_id", "outcome", *metrics, *([f"resolved_{m}" for m in metrics] if resolved else [])]
    )
    for label, rows in rows_of.items():
        for row, scored in zip(instance_metrics(rows, metrics), rows, strict=True):
            values = [repr(row["metrics"][m]) for m in metrics]
            if resolved:
                extra = scored.get(RESOLVED_METRICS_KEY) or {}
                values += [repr(float(extra.get(m, 0.0))) for m in metrics]
            writer.writerow([label, row["instance_id"], row["outcome"], *values])
            count += 1
    write_text_atomic(path, handle.getvalue())  # a failed write (full disk) leaves no file, or the old one
    return count


def format_table(
    table: Mapping[str, Mapping[str, float | str]],
    *,
    metrics: Sequence[str] = METRIC_NAMES,
    metrics_as: str = "columns",
    style: str = "markdown",
    digits: int = 4,
    short_names: bool = True,
) -> str:
    """Format ``{label: {metric: value}}`` (labels = explorers, repos, ...) as a text table.

    :param table: one entry per row label, e.g. ``{"bm25": summary["metrics"], ...}``; a text value is shown as it
        is (the paper's figures, :mod:`swe_explore.evaluation.paper_rows`).
    :param metrics: which metrics to show, in order.
    :param metrics_as: ``"columns"`` (one row per label) or ``"rows"`` (one row per metric).
    :param style: ``"markdown"`` (pipe table) or ``"plain"`` (space-aligned).
    :param digits: decimals shown (the reference prints 4).
    :param short_names: use :data:`SHORT_NAMES` headers instead of the metric keys.
    :return: the table, lines joined with ``"\\n"``.
    :raises ValueError: on an unknown ``metrics_as`` or ``style``.
    """
    if metrics_as not in ("columns", "rows"):
        raise ValueError(f"metrics_as must be 'columns' or 'rows', got {metrics_as!r}")
    if style not in ("markdown", "plain"):
        raise ValueError(f"style must be 'markdown' or 'plain', got {style!r}")
    names = [SHORT_NAMES.get(m, m) if short_names else m for m in metrics]
    labels = list(table)

    def cell(label: str, metric: str) -> str:
        value = table[label].get(metric)
        if isinstance(value, str):
            return value
        return "-" if value is None else f"{value:.{digits}f}"

    if metrics_as == "columns":
        header = [""] + names
        body = [[label] + [cell(label, m) for m in metrics] for label in labels]
    else:
        header = ["metric"] + labels
        body = [[name] + [cell(label, m) for label in labels] for name, m in zip(names, metrics)]
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        padded = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return "| " + " | ".join(padded) + " |" if style == "markdown" else "  ".join(padded)

    out = [line(header)]
    if style == "markdown":
        out.append("|" + "|".join(("-" * (w + 1) + ":") if i else ("-" * (w + 2)) for i, w in enumerate(widths)) + "|")
    out.extend(line(r) for r in body)
    return "\n".join(out)


def _sha256(path: str | Path | None) -> str | None:
    if path is None or not Path(path).is_file():
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_manifest(
    path: str | Path,
    explorer: str,
    summaries_by_k: Mapping[int, Mapping[str, Any]],
    *,
    bench_path: str | Path | None = None,
    issues_path: str | Path | None = None,
    explorer_config: Mapping[str, Any] | None = None,
    harness_revision: str | None = None,
) -> dict[str, Any]:
    """Write (or update) the sidecar ``X.manifest.json`` of the reference runner (docs/metrics.md §3.2), kept simple.

    The file holds ``{"schema": 1, "explorers": {name: {"manifest": {...}, "summary": {k: {...}}}}}``; an
    existing manifest keeps its other explorers. Each per-k summary has ``cases, attempted, not_attempted,
    outcomes, completion_rate, metrics, token_usage, token_usage_cases``.

    :param path: the manifest file, e.g. ``results/bm25/top5.manifest.json``.
    :param explorer: the explorer name.
    :param summaries_by_k: ``{k: summarize(rows_k)}``.
    :param bench_path: the bench JSONL (its sha256 is recorded).
    :param issues_path: the issue map, if one was used (its sha256 is recorded).
    :param explorer_config: the explorer's configuration.
    :param harness_revision: git revision of this toolkit, if known.
    :return: the whole manifest as written.
    :raises ValueError: if an existing manifest is not valid JSON.
    """
    path = Path(path)
    manifest: dict[str, Any] = {"schema": 1, "explorers": {}}
    if path.is_file():
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: existing manifest is not valid JSON ({exc.msg})") from None
        manifest.setdefault("explorers", {})
    per_k: dict[str, Any] = {}
    for k, summary in summaries_by_k.items():
        outcomes = dict(summary.get("outcomes", {}))
        cases = int(summary.get("cases", 0))
        not_attempted = int(outcomes.get(OUTCOME_NOT_ATTEMPTED, 0))
        per_k[str(k)] = {
            "cases": cases,
            "attempted": cases - not_attempted,
            "not_attempted": not_attempted,
            "outcomes": outcomes,
            "completion_rate": (outcomes.get(OUTCOME_SUCCESS, 0) / cases) if cases else 0.0,
            "metrics": dict(summary.get("metrics", {})),
            "token_usage": None,
            "token_usage_cases": 0,
        }
    manifest["explorers"][explorer] = {
        "manifest": {
            "explorer": explorer,
            "bench_sha256": _sha256(bench_path),
            "issues_sha256": _sha256(issues_path),
            "explorer_config": dict(explorer_config or {}),
            "recorded": {
                "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "bench_path": None if bench_path is None else str(bench_path),
                "harness_revision": harness_revision,
            },
        },
        "summary": per_k,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest
