"""Checks of the regions an evaluation scores: invalid regions, and sentinels the reference cannot resolve.

The evaluator scores every region as the reference does (:mod:`evaluation.metrics`, ``docs/metrics.md``); these
checks only report, so that a score never looks complete when it is not:

- An **invalid region** (ground truth or prediction) is one of the kinds of :data:`INVALID_KINDS`: ``start >
  end`` (for a negative start, once resolved against the file's length), ``start == 0``, a negative start with
  an end below 1 other than ``-1``, an end past the file's last line by more than :data:`PAST_EOF_MARGIN` lines,
  or (ground truth) a file outside the snapshot. ``end == -1`` and negative starts are the reference's sentinels
  and stay valid. Predicted files outside the snapshot are reported as ``paths_not_in_snapshot``
  (:class:`evaluation.results.Coverage`).
- A **sentinel region outside the ground truth** is a prediction with ``end == -1`` or a negative start on a
  file of the snapshot that no ground-truth region names: the reference has no line count for it, so it adds
  no predicted lines (docs/metrics.md §0.1). :func:`resolved_line_counts` gives the map that scores it with the file's
  real length instead (``--score-predicted-lines``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_explore.evaluation.metrics import END_OF_FILE
from swe_explore.evaluation.paths import in_snapshot

PAST_EOF_MARGIN = 0
"""Lines an end may lie past the file's last line before the region is invalid (docs/metrics.md). The
reference never clips a plain end, so every line past EOF counts as a predicted line: none is tolerated."""

INVALID_KINDS: dict[str, str] = {
    "start_after_end": "have start > end",
    "start_below_1": "have start 0 (lines count from 1; only negative starts count from the end)",
    "end_below_1": "have a negative start and an end below 1 other than -1",
    "past_end_of_file": f"end past the file's last line (margin {PAST_EOF_MARGIN} lines)",
    "outside_snapshot": "name files outside the snapshot",
}
"""Kind of invalid region -> what the warning says of it, in the order warnings are printed."""

Entry = dict[str, Any]
"""A reported region: ``{"instance_id", "path", "start", "end"}``, plus ``file_lines`` for ``past_end_of_file``."""


def region_problem(start: int, end: int, n_lines: int | None) -> str | None:
    """The kind of invalidity of a region (a key of :data:`INVALID_KINDS`), or ``None`` when it is valid.

    :param start: first line (1-based), or negative: counts back from the end (a reference sentinel).
    :param end: last line (1-based, inclusive), or ``-1``: end of file (a reference sentinel).
    :param n_lines: the file's line count, ``None`` when unknown (the end is then not checked).
    :return: ``start_after_end``, ``start_below_1``, ``end_below_1``, ``past_end_of_file`` or ``None``.
    """
    if start == 0:
        return "start_below_1"
    if start < 0:
        if end != END_OF_FILE and end < 1:
            return "end_below_1"
        if end != END_OF_FILE and n_lines is not None and n_lines >= 1:
            resolved_start = max(1, min(n_lines + start + 1, n_lines))  # as metrics.resolve_interval resolves it
            if resolved_start > min(end, n_lines):
                return "start_after_end"
    elif end != END_OF_FILE and start > end:
        return "start_after_end"
    if n_lines is not None and end > n_lines + PAST_EOF_MARGIN:
        return "past_end_of_file"
    return None


def _entry(instance_id: str, region: Mapping[str, Any]) -> Entry:
    return {"instance_id": instance_id, "path": region["path"], "start": region["start"], "end": region["end"]}


@dataclass
class InvalidRegions:
    """Invalid regions found by an evaluation, per side (``ground_truth``, ``predictions``) and kind.

    :param ground_truth: kind -> the invalid core and optional regions, in bench order.
    :param predictions: kind -> the invalid predicted regions (after the cut to k), in bench order.
    """

    ground_truth: dict[str, list[Entry]] = field(default_factory=dict)
    predictions: dict[str, list[Entry]] = field(default_factory=dict)

    def check(
        self,
        side: str,
        instance_id: str,
        regions: Iterable[Mapping[str, Any]],
        line_counts: Mapping[str, int],
        snapshot: Path | None = None,
    ) -> None:
        """Record the invalid regions of one instance.

        :param side: ``"ground_truth"`` or ``"predictions"``.
        :param instance_id: the instance.
        :param regions: its ``{"path", "start", "end"}`` regions.
        :param line_counts: line counts of the files (a missing path: its end is not checked).
        :param snapshot: with it, a region whose file is not in the snapshot is ``outside_snapshot``.
        """
        found = self.ground_truth if side == "ground_truth" else self.predictions
        for region in regions:
            n_lines = line_counts.get(region["path"])
            if snapshot is not None and not in_snapshot(snapshot, region["path"]):
                kind: str | None = "outside_snapshot"
            else:
                kind = region_problem(region["start"], region["end"], n_lines)
            if kind is None:
                continue
            entry = _entry(instance_id, region)
            if kind == "past_end_of_file":
                entry["file_lines"] = n_lines
            found.setdefault(kind, []).append(entry)

    def to_dict(self) -> dict[str, dict[str, list[Entry]]]:
        """JSON form: ``{"ground_truth": {kind: [entry]}, "predictions": {kind: [entry]}}``, kinds in order."""
        return {
            side: {kind: list(found[kind]) for kind in INVALID_KINDS if kind in found}
            for side, found in (("ground_truth", self.ground_truth), ("predictions", self.predictions))
        }

    def problems(self) -> list[str]:
        """One warning line per side and kind, naming the first instance and region.

        :return: lines such as ``"2 ground-truth region(s) in 1 instance(s) have start > end, e.g. x: a.py 12-11"``.
        """
        out = []
        for side, found in (("ground-truth", self.ground_truth), ("predicted", self.predictions)):
            for kind, says in INVALID_KINDS.items():
                entries = found.get(kind)
                if not entries:
                    continue
                first = entries[0]
                extra = f" (the file has {first['file_lines']} lines)" if "file_lines" in first else ""
                n_instances = len({e["instance_id"] for e in entries})
                out.append(
                    f"{len(entries)} {side} region(s) in {n_instances} instance(s) {says}, e.g. "
                    f"{first['instance_id']}: {first['path']} {first['start']}-{first['end']}{extra}"
                )
        return out


def is_sentinel(start: int, end: int) -> bool:
    """Whether a region needs its file's line count to resolve: ``end == -1`` or ``start < 0`` (docs/metrics.md §0.1).

    :param start: first line or negative offset.
    :param end: last line or ``-1``.
    :return: true for the sentinel forms.
    """
    return end == END_OF_FILE or start < 0


def sentinels_outside_gt(
    regions: Iterable[Mapping[str, Any]], gt_counts: Mapping[str, int], file_counts: Mapping[str, int]
) -> list[dict[str, Any]]:
    """The predicted sentinel regions the reference scores as 0 lines although their file is in the snapshot.

    :param regions: the predicted ``{"path", "start", "end"}`` regions (cut to k).
    :param gt_counts: the instance's ``path_to_lines`` (ground-truth files only, as the reference).
    :param file_counts: line counts of the predicted files found in the snapshot.
    :return: those regions, in order, as ``{"path", "start", "end"}``.
    """
    return [
        {"path": r["path"], "start": r["start"], "end": r["end"]}
        for r in regions
        if is_sentinel(r["start"], r["end"]) and r["path"] not in gt_counts and r["path"] in file_counts
    ]


def resolved_line_counts(gt_counts: Mapping[str, int], file_counts: Mapping[str, int]) -> dict[str, int]:
    """The ``path_to_lines`` of the "predicted files resolved" semantics: the reference's map plus the predicted
    files' line counts, so ``(path, 1, -1)`` on any file of the snapshot covers the whole file. Ground-truth
    regions resolve exactly as under the reference (their paths keep their counts).

    :param gt_counts: the reference's map (ground-truth files).
    :param file_counts: line counts of the predicted files in the snapshot.
    :return: the merged map.
    """
    return {**file_counts, **gt_counts}
