"""The 17 SWE-Explore metrics, reproducing the reference evaluator (``eval.py``) exactly.

Every formula, sentinel and quirk is stated in ``docs/metrics.md`` (cited below as "docs/metrics.md §N", the
section of that page covering §N). In short:

- A region is ``(path, start, end)`` with 1-based inclusive lines; ``end == -1`` means end of file and
  ``start < 0`` counts back from the end. Both sentinels need the file's line count (``path_to_lines``); without
  it the region is *unresolvable* and silently contributes no lines (docs/metrics.md §0.1).
- Paths are compared as exact strings: no normalisation here (docs/metrics.md §0; see :mod:`evaluation.paths`).
- Predicted ends are not clamped to the file length, and ``start > end`` resolves to an empty range.

Line sets are stored as merged intervals per path (:class:`LineSet`) instead of the reference's sets of
``(path, line)`` pairs; the counts are identical (``tests/test_metrics.py`` checks this against a literal
line-by-line implementation) and a prediction such as ``(p, 1, 10**9)`` costs nothing to score.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from swe_explore.chunking.types import Region

END_OF_FILE = -1
"""The ``end`` sentinel meaning "last line of the file" (docs/metrics.md §0)."""

LINE_BUDGETS: tuple[int, ...] = (100, 300, 500)
"""The line budgets B of nDCG@B and recall@B (docs/metrics.md §1)."""

METRIC_NAMES: tuple[str, ...] = (
    "precision",
    "recall",
    "f1_score",
    "hit_file_rate",
    "noise_file_rate",
    "hit_region_rate",
    "noise_region_rate",
    "weighted_core_coverage",
    "context_efficiency",
    "optional_coverage",
    "ndcg_at_100",
    "ndcg_at_300",
    "ndcg_at_500",
    "recall_at_100",
    "recall_at_300",
    "recall_at_500",
    "first_useful_hit",
)
"""The metric keys of a reference result row, in the reference runner's order (docs/metrics.md §1, §3.2)."""

#: The metrics the scripts print by default (all 17 with ``evaluate.py --metrics all``).
MAIN_METRICS = [
    "hit_file_rate",
    "hit_region_rate",
    "ndcg_at_500",
    "recall_at_500",
    "context_efficiency",
    "precision",
    "recall",
    "f1_score",
    "first_useful_hit",
]

_Lines = tuple[int, int]
"""A resolved region's lines ``[s, e]`` (1-based, inclusive; ``s > e`` is an empty range)."""


# ----------------------------------------------------------------------------------------------------------
# Regions and their resolution (docs/metrics.md §0, §0.1)
# ----------------------------------------------------------------------------------------------------------


def resolve_interval(path: str, start: int, end: int, path_to_lines: Mapping[str, int]) -> _Lines | None:
    """Resolve a region to concrete lines ``[s, e]``, as the reference's ``_resolve_interval`` (docs/metrics.md §0.1).

    1. If ``end == -1`` or ``start < 0``, the line count ``L = path_to_lines[path]`` is needed. If it is missing
       or below 1 the region is unresolvable. Otherwise ``e = L`` (or ``end``), ``s = L + start + 1`` (or
       ``start``), and both are clamped to ``[1, L]``.
    2. Otherwise ``s = max(1, start)``; ``end < 1`` is unresolvable; else ``e = end``, **not** clamped to the
       file length. ``s > e`` is returned as is (an empty range).

    :param path: repo-relative path, the key into ``path_to_lines``.
    :param start: first line (1-based) or a negative offset from the end of the file.
    :param end: last line (1-based, inclusive) or ``-1`` for end of file.
    :param path_to_lines: file line counts of this instance (lines); may lack ``path``.
    :return: ``(s, e)``, or ``None`` when the region is unresolvable.
    """
    if end == END_OF_FILE or start < 0:
        n_lines = path_to_lines.get(path)
        if n_lines is None or n_lines < 1:
            return None
        e = n_lines if end == END_OF_FILE else end
        s = n_lines + start + 1 if start < 0 else start
        return (max(1, min(s, n_lines)), max(1, min(e, n_lines)))
    if end < 1:
        return None
    return (max(1, start), end)


class LineSet:
    """A set of ``(path, line)`` pairs, stored per path as sorted, disjoint inclusive intervals.

    ``len()`` is the number of pairs, ``&`` and ``|`` are set intersection and union, ``(path, line) in s``
    tests membership. Intervals with ``s > e`` are empty and ignored.

    :param intervals: ``(path, s, e)`` triples (1-based, inclusive), in any order, overlapping or not.
    """

    __slots__ = ("_spans",)

    def __init__(self, intervals: Iterable[tuple[str, int, int]] = ()) -> None:
        by_path: dict[str, list[_Lines]] = {}
        for path, s, e in intervals:
            if s <= e:
                by_path.setdefault(path, []).append((s, e))
        self._spans: dict[str, list[_Lines]] = {path: _merge(spans) for path, spans in by_path.items()}

    @classmethod
    def _from_spans(cls, spans: dict[str, list[_Lines]]) -> LineSet:
        out = cls()
        out._spans = {path: merged for path, merged in spans.items() if merged}
        return out

    def __len__(self) -> int:
        return sum(e - s + 1 for spans in self._spans.values() for s, e in spans)

    def __bool__(self) -> bool:
        return bool(self._spans)

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, tuple) or len(item) != 2:
            return False
        path, line = item
        return any(s <= line <= e for s, e in self._spans.get(path, []))

    def __and__(self, other: LineSet) -> LineSet:
        out: dict[str, list[_Lines]] = {}
        for path, mine in self._spans.items():
            theirs = other._spans.get(path)
            if theirs:
                out[path] = _intersect(mine, theirs)
        return LineSet._from_spans(out)

    def __or__(self, other: LineSet) -> LineSet:
        out = {path: list(spans) for path, spans in self._spans.items()}
        for path, spans in other._spans.items():
            out[path] = _merge(out.get(path, []) + spans)
        return LineSet._from_spans(out)

    def count_range(self, path: str, s: int, e: int) -> int:
        """Number of lines ``s..e`` of ``path`` that are in the set.

        :param path: repo-relative path.
        :param s: first line (1-based).
        :param e: last line (1-based, inclusive); ``s > e`` gives 0.
        :return: ``|{(path, ln) : s <= ln <= e} ∩ self|`` (lines).
        """
        return sum(max(0, min(e, b) - max(s, a) + 1) for a, b in self._spans.get(path, ()))


def _merge(spans: list[_Lines]) -> list[_Lines]:
    """Sort intervals and merge overlapping or adjacent ones."""
    merged: list[_Lines] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1] + 1:
            if e > merged[-1][1]:
                merged[-1] = (merged[-1][0], e)
        else:
            merged.append((s, e))
    return merged


def _intersect(a: list[_Lines], b: list[_Lines]) -> list[_Lines]:
    """Intersection of two sorted, disjoint interval lists (two-pointer walk)."""
    out: list[_Lines] = []
    i = j = 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s <= e:
            out.append((s, e))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def line_set(regions: Iterable[Region | Mapping[str, Any]], path_to_lines: Mapping[str, int] | None = None) -> LineSet:
    """The "line set" of a region list: union of the lines of its resolvable regions (docs/metrics.md §0.1).

    :param regions: regions (Regions or their JSON dicts); unresolvable ones are dropped silently.
    :param path_to_lines: file line counts (lines) used for the ``-1``/negative-start sentinels.
    :return: the set of ``(path, line)`` pairs.
    :raises ValueError: if a region is malformed (see :meth:`Region.from_json`).
    """
    counts = path_to_lines or {}
    triples = []
    for region in regions:
        path, start, end = Region.from_json(region)
        span = resolve_interval(path, start, end, counts)
        if span is not None:
            triples.append((path, span[0], span[1]))
    return LineSet(triples)


# ----------------------------------------------------------------------------------------------------------
# Ground-truth fields (docs/metrics.md §1, notation)
# ----------------------------------------------------------------------------------------------------------


def optional_regions(gt: Mapping[str, Any]) -> list[Region | Mapping[str, Any]]:
    """All optional regions: the concatenation of every list of ``read_optional_regions_map`` (all models).

    :param gt: a record's ``ground_truth`` dict.
    :return: the regions in map order, duplicates kept.
    """
    out: list[Region | Mapping[str, Any]] = []
    for regions in (gt.get("read_optional_regions_map") or {}).values():
        out.extend(regions)
    return out


def optional_files(gt: Mapping[str, Any]) -> set[str]:
    """``OF``: the union of the lists of ``read_optional_files_map``.

    :param gt: a record's ``ground_truth`` dict.
    :return: the optional file paths.
    """
    out: set[str] = set()
    for files in (gt.get("read_optional_files_map") or {}).values():
        out.update(files)
    return out


@dataclass
class _Instance:
    """Everything the metrics need about one (preds, gt, line counts) triple, computed once."""

    preds: list[Region]
    pred_spans: list[_Lines | None]
    core: list[Region]
    core_spans: list[_Lines | None]
    optional: list[Region]
    optional_spans: list[_Lines | None]
    pred_lines: LineSet  # P
    core_lines: LineSet  # C
    optional_lines: LineSet  # O
    core_files: set[str]  # CF
    optional_files: set[str]  # OF
    main_files: set[str]  # M
    visited: set[str]  # V


def _resolve_all(
    regions: Iterable[Region | Mapping[str, Any]], counts: Mapping[str, int]
) -> tuple[list[Region], list[_Lines | None]]:
    triples = [Region.from_json(r) for r in regions]
    return triples, [resolve_interval(p, s, e, counts) for p, s, e in triples]


def _lines(triples: list[Region], spans: list[_Lines | None]) -> LineSet:
    return LineSet((path, span[0], span[1]) for (path, _, _), span in zip(triples, spans) if span is not None)


def _prepare(
    preds: Iterable[Region | Mapping[str, Any]], gt: Mapping[str, Any], path_to_lines: Mapping[str, int] | None
) -> _Instance:
    counts = path_to_lines or {}
    preds_t, pred_spans = _resolve_all(preds, counts)
    core_t, core_spans = _resolve_all(gt.get("read_core_regions") or [], counts)
    opt_t, opt_spans = _resolve_all(optional_regions(gt), counts)
    return _Instance(
        preds=preds_t,
        pred_spans=pred_spans,
        core=core_t,
        core_spans=core_spans,
        optional=opt_t,
        optional_spans=opt_spans,
        pred_lines=_lines(preds_t, pred_spans),
        core_lines=_lines(core_t, core_spans),
        optional_lines=_lines(opt_t, opt_spans),
        core_files=set(gt.get("read_core_files") or []),
        optional_files=optional_files(gt),
        main_files=set(gt.get("main_files") or []),
        visited={path for path, _, _ in preds_t},
    )


def _overlaps(path_a: str, span_a: _Lines | None, path_b: str, span_b: _Lines | None) -> bool:
    """Reference overlap test: same path, both resolvable, ``s1 <= e2 and s2 <= e1`` (even for empty ranges)."""
    if path_a != path_b or span_a is None or span_b is None:
        return False
    return span_a[0] <= span_b[1] and span_b[0] <= span_a[1]


# ----------------------------------------------------------------------------------------------------------
# The metrics on a prepared instance (docs/metrics.md §1 table, notes, §1.1, §1.2)
# ----------------------------------------------------------------------------------------------------------


def _precision(x: _Instance) -> float:
    if not x.pred_lines:
        return 0.0
    return len(x.pred_lines & x.core_lines) / len(x.pred_lines)


def _recall(x: _Instance) -> float:
    if not x.core_lines:
        return 0.0
    return len(x.pred_lines & x.core_lines) / len(x.core_lines)


def _f1_score(x: _Instance) -> float:
    p, r = _precision(x), _recall(x)
    if p + r == 0:
        return 0.0
    return 2.0 * p * r / (p + r)


def _hit_file_rate(x: _Instance) -> float:
    if not x.core_files:
        return 0.0
    return len(x.visited & x.core_files) / len(x.core_files)


def _noise_file_rate(x: _Instance) -> float:
    if not x.visited:
        return 0.0
    return len(x.visited - x.core_files - x.optional_files) / len(x.visited)


def _hit_region_rate(x: _Instance) -> float:
    if not x.core:
        return 0.0
    hits = 0
    for (c_path, _, _), c_span in zip(x.core, x.core_spans):
        if any(_overlaps(c_path, c_span, p_path, p_span) for (p_path, _, _), p_span in zip(x.preds, x.pred_spans)):
            hits += 1
    return hits / len(x.core)


def _noise_region_rate(x: _Instance) -> float:
    if not x.preds:
        return 0.0
    gold = list(zip(x.core, x.core_spans)) + list(zip(x.optional, x.optional_spans))
    noise = 0
    for (p_path, _, _), p_span in zip(x.preds, x.pred_spans):
        if not any(_overlaps(p_path, p_span, g_path, g_span) for (g_path, _, _), g_span in gold):
            noise += 1
    return noise / len(x.preds)


def _weighted_core_coverage(x: _Instance) -> float:
    if not x.core:
        return 0.0
    weighted_sum = 0.0
    weight_total = 0.0
    for (path, _, _), span in zip(x.core, x.core_spans):
        if span is None or span[0] > span[1]:
            continue
        s, e = span
        coverage = x.pred_lines.count_range(path, s, e) / (e - s + 1)
        weight = 3.0 if path in x.main_files else 2.0
        weighted_sum += weight * coverage
        weight_total += weight
    return weighted_sum / weight_total if weight_total > 0 else 0.0


def _context_efficiency(x: _Instance) -> float:
    if not x.pred_lines:
        return 0.0
    return len(x.pred_lines & (x.core_lines | x.optional_lines)) / len(x.pred_lines)


def _optional_coverage(x: _Instance) -> float:
    if not x.optional_lines:
        return 0.0
    return len(x.pred_lines & x.optional_lines) / len(x.optional_lines)


def _budgeted_dcg(gains: Sequence[float], line_counts: Sequence[int], budget: int) -> float:
    """DCG over regions in order: the first always counts, later ones all-or-nothing, stop at first overflow."""
    dcg = 0.0
    total = 0
    for i, (gain, n_lines) in enumerate(zip(gains, line_counts)):
        total += n_lines
        if total > budget and i > 0:
            break
        dcg += gain / math.log2(i + 2)
    return dcg


def _ndcg(x: _Instance, budget: int) -> float:
    if not x.core or not x.preds:
        return 0.0
    gains: list[float] = []
    line_counts: list[int] = []
    for (path, _, _), span in zip(x.preds, x.pred_spans):
        if span is None:
            gains.append(0.0)
            line_counts.append(0)
            continue
        s, e = span
        weight = 1.5 if path in x.main_files else 1.0
        gains.append(weight * x.core_lines.count_range(path, s, e))  # per region: duplicates re-earn gain
        line_counts.append(e - s + 1)  # may be <= 0 when s > e
    dcg = _budgeted_dcg(gains, line_counts, budget)
    # Ideal = the same predicted regions re-sorted by gain density; sorted(reverse=True) keeps ties in order.
    ideal = sorted(zip(gains, line_counts), key=lambda gl: gl[0] / max(gl[1], 1), reverse=True)
    idcg = _budgeted_dcg([g for g, _ in ideal], [n for _, n in ideal], budget)
    return min(dcg / idcg, 1.0) if idcg > 0 else 0.0


def _recall_at(x: _Instance, budget: int) -> float:
    if not x.core_lines:
        return 0.0
    walked: list[tuple[str, int, int]] = []
    used = 0
    for (path, _, _), span in zip(x.preds, x.pred_spans):
        if span is None or span[0] > span[1]:
            continue
        s, e = span
        take = min(e - s + 1, budget - used)  # line slots; duplicates and past-EOF lines use them too
        walked.append((path, s, s + take - 1))
        used += take
        if used >= budget:
            break
    return len(LineSet(walked) & x.core_lines) / len(x.core_lines)


def _first_useful_hit(x: _Instance) -> float:
    if not x.preds or not x.core_lines:
        return 0.0
    for i, ((path, _, _), span) in enumerate(zip(x.preds, x.pred_spans)):
        if span is not None and x.core_lines.count_range(path, span[0], span[1]) > 0:
            return 1.0 - (i / len(x.preds))
    return 0.0


def _check_budget(budget: int) -> None:
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"line budget must be an integer >= 1, got {budget!r}")


_METRICS: dict[str, Callable[[_Instance], float]] = {
    "precision": _precision,
    "recall": _recall,
    "f1_score": _f1_score,
    "hit_file_rate": _hit_file_rate,
    "noise_file_rate": _noise_file_rate,
    "hit_region_rate": _hit_region_rate,
    "noise_region_rate": _noise_region_rate,
    "weighted_core_coverage": _weighted_core_coverage,
    "context_efficiency": _context_efficiency,
    "optional_coverage": _optional_coverage,
    **{f"ndcg_at_{b}": functools.partial(_ndcg, budget=b) for b in LINE_BUDGETS},
    **{f"recall_at_{b}": functools.partial(_recall_at, budget=b) for b in LINE_BUDGETS},
    "first_useful_hit": _first_useful_hit,
}


# ----------------------------------------------------------------------------------------------------------
# Public API
# ----------------------------------------------------------------------------------------------------------

Preds = Iterable[Region | Mapping[str, Any]]
GroundTruth = Mapping[str, Any]
LineCounts = Mapping[str, int] | None


def evaluate_instance(
    preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None, metrics: Iterable[str] = METRIC_NAMES
) -> dict[str, float]:
    """Score one instance with the reference metrics (docs/metrics.md §1), computing the shared line sets once.

    :param preds: the predicted regions, already cut to top-k, in rank order (Regions or their JSON dicts).
    :param gt: the record's ``ground_truth`` dict (``read_core_regions``, ``read_core_files``,
        ``read_optional_files_map``, ``read_optional_regions_map``, ``main_files``; missing keys = empty).
    :param path_to_lines: file line counts (lines) of the GT paths, see :mod:`evaluation.line_counts`;
        ``None`` = no map (every sentinel region is unresolvable).
    :param metrics: which metrics to compute; default all 17 in :data:`METRIC_NAMES` order.
    :return: ``{metric name: value}``; every value is in ``[0, 1]``.
    :raises ValueError: on an unknown metric name or a malformed region.
    """
    metrics = tuple(metrics)
    unknown = [m for m in metrics if m not in _METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; valid names: {', '.join(METRIC_NAMES)}")
    x = _prepare(preds, gt, path_to_lines)
    return {name: _METRICS[name](x) for name in metrics}


def zero_metrics() -> dict[str, float]:
    """The scores of an empty prediction (every metric 0.0, docs/metrics.md §1.3), e.g. for an ERROR outcome.

    :return: ``{metric name: 0.0}`` for the 17 metrics.
    """
    return {name: 0.0 for name in METRIC_NAMES}


def precision(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None) -> float:
    """Line-level precision ``|P∩C| / |P|``; 0 if P is empty (docs/metrics.md §1).

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: file line counts (lines) for the sentinels, or ``None``.
    :return: the precision in ``[0, 1]``.
    """
    return _precision(_prepare(preds, gt, path_to_lines))


def recall(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None) -> float:
    """Line-level core recall ``|P∩C| / |C|``; 0 if C is empty (docs/metrics.md §1).

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: file line counts (lines) for the sentinels, or ``None``.
    :return: the recall in ``[0, 1]``.
    """
    return _recall(_prepare(preds, gt, path_to_lines))


def f1_score(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None) -> float:
    """Harmonic mean ``2pr / (p + r)`` of line precision and recall; 0 if ``p + r = 0`` (docs/metrics.md §1).

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: file line counts (lines) for the sentinels, or ``None``.
    :return: F1 in ``[0, 1]``.
    """
    return _f1_score(_prepare(preds, gt, path_to_lines))


def hit_file_rate(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None) -> float:
    """``|V∩CF| / |CF|``: share of ``read_core_files`` named by any pred, resolvable or not (docs/metrics.md §1).

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: unused by this metric (accepted for a uniform signature).
    :return: the file hit rate in ``[0, 1]``; 0 if ``read_core_files`` is empty.
    """
    return _hit_file_rate(_prepare(preds, gt, path_to_lines))


def noise_file_rate(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None) -> float:
    """``|V − CF − OF| / |V|``: share of predicted files that are neither core nor optional (docs/metrics.md §1).

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: unused by this metric (accepted for a uniform signature).
    :return: the file noise rate in ``[0, 1]``; 0 if there are no preds.
    """
    return _noise_file_rate(_prepare(preds, gt, path_to_lines))


def hit_region_rate(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None) -> float:
    """Share of core-region entries that overlap at least one pred (docs/metrics.md §1).

    Unresolvable core regions stay in the denominator. Overlap is ``s1 <= e2 and s2 <= e1`` on resolved
    ranges, so an empty (``s > e``) range can still "overlap".

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: file line counts (lines) for the sentinels, or ``None``.
    :return: the region hit rate in ``[0, 1]``; 0 if there are no core regions.
    """
    return _hit_region_rate(_prepare(preds, gt, path_to_lines))


def noise_region_rate(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None) -> float:
    """Share of pred entries overlapping no core and no optional region; unresolvable preds are noise.

    See docs/metrics.md §1.

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: file line counts (lines) for the sentinels, or ``None``.
    :return: the region noise rate in ``[0, 1]``; 0 if there are no preds.
    """
    return _noise_region_rate(_prepare(preds, gt, path_to_lines))


def weighted_core_coverage(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None) -> float:
    """WCC: per core-region entry coverage ``|P∩R| / |R|``, weighted 3 (path in main_files) or 2.

    Unresolvable and empty core regions are dropped from both sums (docs/metrics.md §1, the WCC row).

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: file line counts (lines) for the sentinels, or ``None``.
    :return: WCC in ``[0, 1]``; 0 if there are no core regions or the total weight is 0.
    """
    return _weighted_core_coverage(_prepare(preds, gt, path_to_lines))


def context_efficiency(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None) -> float:
    """``|P ∩ (C ∪ O)| / |P|``: share of predicted lines that are core or optional (docs/metrics.md §1).

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: file line counts (lines) for the sentinels, or ``None``.
    :return: the context efficiency in ``[0, 1]``; 0 if P is empty.
    """
    return _context_efficiency(_prepare(preds, gt, path_to_lines))


def optional_coverage(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None) -> float:
    """``|P∩O| / |O|``: line coverage of the optional regions of all models (docs/metrics.md §1).

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: file line counts (lines) for the sentinels, or ``None``.
    :return: the optional coverage in ``[0, 1]``; 0 if O is empty.
    """
    return _optional_coverage(_prepare(preds, gt, path_to_lines))


def ndcg_at_budget(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts, budget: int) -> float:
    """nDCG@B over whole regions under a line budget, as the reference computes it (docs/metrics.md §1.1).

    Gain of a pred = its core lines, weighted 1.5 when its path is in ``main_files`` (per region, so duplicates
    re-earn gain). DCG walks the preds in order adding ``e - s + 1`` lines; the first region always counts, a
    later one that makes the total exceed B stops the walk. IDCG is the same walk over the *predicted* regions
    re-sorted stably by gain density ``g / max(lines, 1)``. Result ``min(DCG / IDCG, 1)``.

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: file line counts (lines) for the sentinels, or ``None``.
    :param budget: the line budget B (lines, >= 1).
    :return: nDCG@B in ``[0, 1]``; 0 if there are no core regions, no preds, or IDCG is 0.
    :raises ValueError: if ``budget < 1``.
    """
    _check_budget(budget)
    return _ndcg(_prepare(preds, gt, path_to_lines), budget)


def recall_at_budget(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts, budget: int) -> float:
    """Core recall of the first B predicted line slots, truncating inside a region (docs/metrics.md §1.2).

    Unresolvable preds are skipped; duplicate, overlapping and past-EOF lines use slots too.

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: file line counts (lines) for the sentinels, or ``None``.
    :param budget: the line budget B (lines, >= 1).
    :return: recall@B in ``[0, 1]``; 0 if C is empty.
    :raises ValueError: if ``budget < 1``.
    """
    _check_budget(budget)
    return _recall_at(_prepare(preds, gt, path_to_lines), budget)


def ndcg_at_100(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None) -> float:
    """nDCG@100, see :func:`ndcg_at_budget` (docs/metrics.md §1.1).

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: file line counts (lines) for the sentinels, or ``None``.
    :return: nDCG@100 in ``[0, 1]``.
    """
    return ndcg_at_budget(preds, gt, path_to_lines, 100)


def ndcg_at_300(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None) -> float:
    """nDCG@300, see :func:`ndcg_at_budget` (docs/metrics.md §1.1).

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: file line counts (lines) for the sentinels, or ``None``.
    :return: nDCG@300 in ``[0, 1]``.
    """
    return ndcg_at_budget(preds, gt, path_to_lines, 300)


def ndcg_at_500(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None) -> float:
    """nDCG@500, see :func:`ndcg_at_budget` (docs/metrics.md §1.1).

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: file line counts (lines) for the sentinels, or ``None``.
    :return: nDCG@500 in ``[0, 1]``.
    """
    return ndcg_at_budget(preds, gt, path_to_lines, 500)


def recall_at_100(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None) -> float:
    """Recall@100, see :func:`recall_at_budget` (docs/metrics.md §1.2).

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: file line counts (lines) for the sentinels, or ``None``.
    :return: recall@100 in ``[0, 1]``.
    """
    return recall_at_budget(preds, gt, path_to_lines, 100)


def recall_at_300(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None) -> float:
    """Recall@300, see :func:`recall_at_budget` (docs/metrics.md §1.2).

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: file line counts (lines) for the sentinels, or ``None``.
    :return: recall@300 in ``[0, 1]``.
    """
    return recall_at_budget(preds, gt, path_to_lines, 300)


def recall_at_500(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None) -> float:
    """Recall@500, see :func:`recall_at_budget` (docs/metrics.md §1.2).

    :param preds: predicted regions in rank order.
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: file line counts (lines) for the sentinels, or ``None``.
    :return: recall@500 in ``[0, 1]``.
    """
    return recall_at_budget(preds, gt, path_to_lines, 500)


def first_useful_hit(preds: Preds, gt: GroundTruth, path_to_lines: LineCounts = None) -> float:
    """``1 − i/n`` for the 0-based index i of the first resolvable pred holding a core line (docs/metrics.md §1).

    :param preds: predicted regions in rank order (``n`` counts every entry).
    :param gt: the record's ``ground_truth`` dict.
    :param path_to_lines: file line counts (lines) for the sentinels, or ``None``.
    :return: the score in ``(0, 1]``; 0 if there is no hit, no pred, or C is empty.
    """
    return _first_useful_hit(_prepare(preds, gt, path_to_lines))
