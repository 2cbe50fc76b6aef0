"""Statistics for comparing result files over the same instances: bootstrap CIs, paired permutation tests, Holm.

Every explorer is scored per instance (one metric vector of length n per file and metric, see
:func:`evaluation.results.evaluate_rows`). A comparison of several files keeps only the instances present in
all of them (:func:`common_instances`), then for every metric:

- the **mean** with a 95% **bootstrap confidence interval** (:func:`bootstrap_ci`): percentile interval over
  10,000 resamples of the instances (Efron & Tibshirani 1993, *An Introduction to the Bootstrap*, ch. 13;
  BCa, ch. 14, and basic are available), computed by :func:`scipy.stats.bootstrap` with a fixed seed. Every
  file is resampled with the same seed over the same n instances, so all files see the *same* resampled
  instance sets: the intervals are paired over instances;
- the **mean difference** to the baseline file with the bootstrap CI of the per-instance differences;
- a **two-sided paired randomization (permutation) test** of the mean difference (:func:`paired_permutation_test`):
  Fisher's randomization test as recommended for IR evaluation by Smucker, Allan & Carterette 2007, "A comparison
  of statistical significance tests for information retrieval evaluation" (CIKM '07), computed by
  :func:`scipy.stats.permutation_test` with ``permutation_type="samples"`` (swap the two files' scores of an
  instance = flip the sign of its difference). Exact over all 2^n sign assignments when 2^n <= 10,000 (n <= 13),
  else 10,000 random assignments with a fixed seed (p = (hits + 1) / (10,000 + 1)). (scipy's exact enumeration
  is slow beyond that: 0.4 s per test at n = 16, against 7 ms for 10,000 random assignments at n = 23.);
- **Holm's step-down correction** across the files compared with the baseline, per metric (:func:`holm`; Holm
  1979, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6:65-70), which controls
  the family-wise error rate without assuming independence.

Only numpy and scipy; the functions are pure (same input, same output).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from swe_explore.evaluation.results import SHORT_NAMES

DEFAULT_CONFIDENCE = 0.95
"""Confidence level of the bootstrap intervals."""
DEFAULT_RESAMPLES = 10_000
"""Bootstrap resamples, and random sign assignments of the permutation test when it is not exact."""
DEFAULT_SEED = 0
"""Seed of the bootstrap and of the random permutations: results are reproducible."""
CI_METHODS = ("percentile", "bca", "basic")
"""Bootstrap interval methods (:func:`scipy.stats.bootstrap` ``method``); ``percentile`` is the default."""
SIGNIFICANCE_LEVELS = ((0.01, "**"), (0.05, "*"))
"""Markers of the (Holm-adjusted) p-value: ``**`` p < 0.01, ``*`` p < 0.05."""
LOWER_IS_BETTER = frozenset({"noise_file_rate", "noise_region_rate"})
"""Metrics where a lower mean is better (named in table legends; the tests themselves are two-sided)."""


# ----------------------------------------------------------------------------------------------------------
# The three procedures
# ----------------------------------------------------------------------------------------------------------


def _vector(values: Sequence[float] | np.ndarray, name: str = "values") -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of numbers, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} holds NaN or infinite values")
    return array


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    method: str = "percentile",
) -> tuple[float, float]:
    """Bootstrap confidence interval of the mean of ``values`` (Efron & Tibshirani 1993, ch. 13-14).

    Resamples the n values with replacement ``n_resamples`` times (:func:`scipy.stats.bootstrap`, seeded, so two
    vectors of the same length are resampled at the same indices). A constant vector gives ``(c, c)`` (the
    bootstrap distribution is a point; BCa would be undefined).

    :param values: one value per instance, shape ``(n,)``, n >= 1.
    :param confidence: the confidence level, in (0, 1).
    :param n_resamples: bootstrap resamples.
    :param seed: seed of the resampling.
    :param method: ``"percentile"``, ``"bca"`` (bias-corrected and accelerated) or ``"basic"``.
    :return: ``(low, high)``; NaN bounds only if scipy cannot compute a BCa interval (it then warns).
    :raises ValueError: on an empty, non-1-D or non-finite vector, a confidence outside (0, 1), or an unknown method.
    """
    array = _vector(values)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if method not in CI_METHODS:
        raise ValueError(f"unknown bootstrap method {method!r}; valid: {', '.join(CI_METHODS)}")
    if np.ptp(array) == 0.0:
        return float(array[0]), float(array[0])
    from scipy import stats as scipy_stats  # here, not at import: scipy.stats costs 0.5 s, needed for CIs only

    result = scipy_stats.bootstrap(
        (array,),
        np.mean,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="BCa" if method == "bca" else method,
        vectorized=True,
        random_state=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> Any:
    return np.mean(x - y, axis=axis)


def paired_permutation_test(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> float:
    """Two-sided paired randomization test of ``mean(x - y) = 0`` (Fisher; Smucker, Allan & Carterette 2007).

    Under the null hypothesis the two scores of an instance are exchangeable, so the sign of each difference
    ``x_i - y_i`` is flipped at random. :func:`scipy.stats.permutation_test` with ``permutation_type="samples"``
    does this exactly over all 2^n assignments when 2^n <= ``n_resamples`` (:func:`is_exact`), else over
    ``n_resamples`` random ones (seeded; p = (hits + 1) / (n_resamples + 1), never 0). Two-sided
    p = 2 min(P(T <= t), P(T >= t)), capped at 1.
    Identical vectors give p = 1; n distinct positive differences give the exact p = 2 / 2^n (so n = 1 gives 1).

    :param x: scores of one file, shape ``(n,)``.
    :param y: scores of the other file on the same instances, same order and shape.
    :param n_resamples: random sign assignments when the test is not exact (and the exact test's limit).
    :param seed: seed of the random assignments.
    :return: the two-sided p-value in (0, 1].
    :raises ValueError: if the vectors are empty, not finite or of different lengths.
    """
    a, b = _vector(x, "x"), _vector(y, "y")
    if a.shape != b.shape:
        raise ValueError(f"paired vectors differ in length: {a.size} and {b.size}")
    if a.size == 1:  # the two sign assignments give t and -t: p = 2 * 1/2 (scipy needs n >= 2)
        return 1.0
    from scipy import stats as scipy_stats  # see bootstrap_ci

    result = scipy_stats.permutation_test(
        (a, b),
        _mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        random_state=np.random.default_rng(seed),
    )
    return float(min(1.0, result.pvalue))


def is_exact(n: int, n_resamples: int = DEFAULT_RESAMPLES) -> bool:
    """Whether :func:`paired_permutation_test` enumerates all 2^n sign assignments of n instances (scipy's rule)."""
    return (1 << n) <= n_resamples


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm 1979), controlling the family-wise error rate.

    With the m p-values sorted ascending, ``p_adj(i) = max_{j <= i} min(1, (m - j + 1) p(j))`` (1-based ranks),
    returned in the input order. NaN entries (e.g. the baseline, not tested) stay NaN and do not count in m.
    Example: ``[0.01, 0.04, 0.03] -> [0.03, 0.06, 0.06]``.

    :param p_values: raw p-values in [0, 1] (or NaN).
    :return: the adjusted p-values, same length and order.
    :raises ValueError: if a p-value is outside [0, 1].
    """
    p = np.asarray(p_values, dtype=float)
    tested = np.flatnonzero(~np.isnan(p))
    if np.any((p[tested] < 0.0) | (p[tested] > 1.0)):
        raise ValueError(f"p-values must be in [0, 1], got {list(p_values)}")
    adjusted = np.full(p.shape, math.nan)
    m = tested.size
    order = tested[np.argsort(p[tested], kind="stable")]
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return [float(v) for v in adjusted]


def significance_marker(p: float) -> str:
    """``"**"`` if p < 0.01, ``"*"`` if p < 0.05, else ``""`` (also for NaN)."""
    for level, marker in SIGNIFICANCE_LEVELS:
        if p < level:
            return marker
    return ""


def direction_marker(delta: float, p: float, alpha: float = 0.05) -> str:
    """``"▲"`` / ``"▼"`` when the mean is significantly (p < alpha) above / below the baseline's, else ``""``."""
    if not p < alpha or delta == 0.0:
        return ""
    return "▲" if delta > 0 else "▼"


# ----------------------------------------------------------------------------------------------------------
# Comparing files
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricStats:
    """One file's statistics for one metric, over the compared instances.

    :ivar mean: the mean over the n instances.
    :ivar ci_low: lower bound of the bootstrap CI of the mean.
    :ivar ci_high: upper bound.
    :ivar delta: mean difference to the baseline (0 for the baseline itself).
    :ivar delta_ci_low: lower bound of the bootstrap CI of the per-instance differences' mean.
    :ivar delta_ci_high: upper bound.
    :ivar p: two-sided paired permutation p-value against the baseline (NaN for the baseline).
    :ivar p_holm: ``p`` adjusted by Holm across the files compared with the baseline (NaN for the baseline).
    """

    mean: float
    ci_low: float
    ci_high: float
    delta: float
    delta_ci_low: float
    delta_ci_high: float
    p: float
    p_holm: float

    @property
    def marker(self) -> str:
        """Direction and significance of the Holm-adjusted difference, e.g. ``"▲**"``, ``"▼*"`` or ``""``."""
        return direction_marker(self.delta, self.p_holm) + significance_marker(self.p_holm)


@dataclass
class Comparison:
    """Every file's statistics per metric against a baseline file, over the instances all files hold.

    :ivar baseline: the baseline's label.
    :ivar labels: the compared files' labels, baseline included, in input order.
    :ivar instance_ids: the n compared instances (present in every file), sorted.
    :ivar metrics: the metric names, in order.
    :ivar cells: ``{label: {metric: MetricStats}}``.
    :ivar confidence: the CI level.
    :ivar n_resamples: bootstrap resamples (and random permutations when not exact).
    :ivar seed: the seed.
    :ivar ci_method: the bootstrap interval method.
    :ivar exact: whether the permutation tests enumerated all 2^n sign assignments.
    :ivar excluded: per label, the instances other files hold but it lacks (left out of the comparison).
    """

    baseline: str
    labels: list[str]
    instance_ids: list[str]
    metrics: list[str]
    cells: dict[str, dict[str, MetricStats]]
    confidence: float = DEFAULT_CONFIDENCE
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    ci_method: str = "percentile"
    exact: bool = True
    excluded: dict[str, list[str]] = field(default_factory=dict)

    @property
    def n(self) -> int:
        """The number of compared instances."""
        return len(self.instance_ids)

    def settings(self) -> dict[str, Any]:
        """The procedure's settings as a JSON-serialisable dict (for reports next to the numbers)."""
        return {
            "baseline": self.baseline,
            "instances": self.n,
            "confidence": self.confidence,
            "ci": f"bootstrap {self.ci_method}, {self.n_resamples} resamples, seed {self.seed}",
            "test": "two-sided paired permutation test of the mean difference, "
            + ("exact (all 2^n sign flips)" if self.exact else f"{self.n_resamples} random sign flips")
            + f", Holm-adjusted across the {len(self.labels) - 1} file(s) compared with the baseline, per metric",
        }

    def to_dict(self, label: str) -> dict[str, Any]:
        """One file's comparison as JSON-serialisable data: the settings plus ``{"metrics": {m: {mean, ...}}}``.

        NaN (the baseline's p-values) is written as ``None``.
        """
        return {
            **self.settings(),
            "metrics": {
                m: {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(s).items()}
                for m, s in self.cells[label].items()
            },
        }


def common_instances(
    rows_by_label: Mapping[str, Iterable[Mapping[str, Any]]],
) -> tuple[list[str], dict[str, list[str]]]:
    """The instance ids present in every labelled row list, and, per label, the ids it lacks of the others'.

    :param rows_by_label: ``{label: rows}``, each row with an ``instance_id``.
    :return: ``(common ids sorted, {label: sorted ids held by another label but not by this one})`` (labels
        lacking none are omitted); the instances left out of a comparison are the union of the lists.
    """
    ids = {label: {str(row["instance_id"]) for row in rows} for label, rows in rows_by_label.items()}
    common = set.intersection(*ids.values()) if ids else set()
    union = set.union(*ids.values()) if ids else set()
    lacking = {label: sorted(union - held) for label, held in ids.items() if union - held}
    return sorted(common), lacking


def metric_vectors(
    rows: Iterable[Mapping[str, Any]], instance_ids: Sequence[str], metrics: Sequence[str]
) -> dict[str, np.ndarray]:
    """One file's per-instance metric values aligned on ``instance_ids``.

    :param rows: scored rows (``instance_id`` and ``metrics``; a missing metric counts as 0.0 like
        :func:`evaluation.results.mean_metrics`).
    :param instance_ids: the instances, in the order wanted; every one must have a row.
    :param metrics: the metric names.
    :return: ``{metric: array of shape (len(instance_ids),)}``.
    :raises ValueError: if an instance has no row.
    """
    by_id = {str(row["instance_id"]): row.get("metrics") or {} for row in rows}
    missing = [iid for iid in instance_ids if iid not in by_id]
    if missing:
        raise ValueError(f"no row for {len(missing)} instance(s), e.g. {missing[:3]}")
    return {m: np.array([float(by_id[iid].get(m, 0.0)) for iid in instance_ids]) for m in metrics}


def compare(
    values: Mapping[str, Mapping[str, Sequence[float] | np.ndarray]],
    baseline: str,
    metrics: Sequence[str],
    *,
    instance_ids: Sequence[str] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    ci_method: str = "percentile",
) -> Comparison:
    """Compare files on aligned per-instance values: mean and CI per file, difference, p and Holm p vs baseline.

    :param values: ``{label: {metric: vector}}``, all vectors of the same length n and instance order.
    :param baseline: the label every other file is tested against.
    :param metrics: the metrics to compare, in order.
    :param instance_ids: the n instance ids (recorded in the result; default ``"0".."n-1"``).
    :param confidence: the CI level.
    :param n_resamples: bootstrap resamples and random permutations.
    :param seed: the seed of both.
    :param ci_method: see :data:`CI_METHODS`.
    :return: the comparison.
    :raises ValueError: if the baseline is not a label, a metric is missing or the vectors differ in length.
    """
    if baseline not in values:
        raise ValueError(f"baseline {baseline!r} is not one of the compared files: {list(values)}")
    lengths = {len(vector) for per_metric in values.values() for vector in per_metric.values()}
    if len(lengths) != 1:
        raise ValueError(f"per-instance vectors differ in length: {sorted(lengths)}")
    n = lengths.pop()
    ids = [str(i) for i in range(n)] if instance_ids is None else list(instance_ids)
    if len(ids) != n:
        raise ValueError(f"{len(ids)} instance ids for vectors of length {n}")
    for label, per_metric in values.items():
        absent = [m for m in metrics if m not in per_metric]
        if absent:
            raise ValueError(f"{label}: no values for metric(s) {absent}")
    others = [label for label in values if label != baseline]
    options: dict[str, Any] = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed, "method": ci_method}
    cells: dict[str, dict[str, MetricStats]] = {label: {} for label in values}
    for metric in metrics:
        base = _vector(values[baseline][metric], f"{baseline}/{metric}")
        raw_p = {
            label: paired_permutation_test(values[label][metric], base, n_resamples=n_resamples, seed=seed)
            for label in others
        }
        adjusted = dict(zip(others, holm([raw_p[label] for label in others])))
        for label in values:
            vector = _vector(values[label][metric], f"{label}/{metric}")
            low, high = bootstrap_ci(vector, **options)
            if label == baseline:
                delta_low = delta_high = 0.0
                p = p_holm = math.nan
            else:
                delta_low, delta_high = bootstrap_ci(vector - base, **options)
                p, p_holm = raw_p[label], adjusted[label]
            cells[label][metric] = MetricStats(
                mean=float(np.mean(vector)),
                ci_low=low,
                ci_high=high,
                delta=float(np.mean(vector - base)),
                delta_ci_low=delta_low,
                delta_ci_high=delta_high,
                p=p,
                p_holm=p_holm,
            )
    return Comparison(
        baseline=baseline,
        labels=list(values),
        instance_ids=ids,
        metrics=list(metrics),
        cells=cells,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        ci_method=ci_method,
        exact=is_exact(n, n_resamples),
    )


def compare_rows(
    rows_by_label: Mapping[str, Sequence[Mapping[str, Any]]],
    baseline: str,
    metrics: Sequence[str],
    **options: Any,
) -> Comparison:
    """:func:`compare` scored result rows over the instances present in every file (:func:`common_instances`).

    :param rows_by_label: ``{label: scored rows}`` (rows of :func:`evaluation.results.evaluate_rows`).
    :param baseline: the baseline label.
    :param metrics: the metrics to compare.
    :param options: ``confidence``, ``n_resamples``, ``seed``, ``ci_method`` of :func:`compare`.
    :return: the comparison; ``excluded`` lists, per file, the instances it lacks.
    :raises ValueError: if no instance is present in every file, or as :func:`compare`.
    """
    ids, excluded = common_instances(rows_by_label)
    if not ids:
        raise ValueError(f"no instance is present in all {len(rows_by_label)} compared files")
    values = {label: metric_vectors(rows, ids, metrics) for label, rows in rows_by_label.items()}
    result = compare(values, baseline, metrics, instance_ids=ids, **options)
    result.excluded = excluded
    return result


# ----------------------------------------------------------------------------------------------------------
# Tables
# ----------------------------------------------------------------------------------------------------------


def format_p(p: float, digits: int = 3) -> str:
    """``"p=0.012"``, ``"p<0.001"`` below 10^-digits, ``""`` for NaN."""
    if math.isnan(p):
        return ""
    floor = 10.0**-digits
    return f"p<{floor:.{digits}f}" if p < floor else f"p={p:.{digits}f}"


def format_cell(stats: MetricStats, *, baseline: bool = False, digits: int = 3) -> str:
    """One table cell: ``"0.412 [0.301, 0.523] ▲** p=0.004"``; the baseline's cell ends in ``"(baseline)"``.

    :param stats: the file's statistics for one metric.
    :param baseline: whether the cell is the baseline's (no test).
    :param digits: decimals of the mean, the CI and the p-value.
    :return: the cell text.
    """
    text = f"{stats.mean:.{digits}f} [{stats.ci_low:.{digits}f}, {stats.ci_high:.{digits}f}]"
    if baseline:
        return text + " (baseline)"
    marker = stats.marker
    return f"{text} {marker + ' ' if marker else ''}{format_p(stats.p_holm, digits)}"


def legend(comparison: Comparison, metrics: Sequence[str] | None = None) -> str:
    """The sentence under a comparison table stating n, the CI, the test, the correction and the markers.

    :param comparison: the comparison.
    :param metrics: the metrics the table shows (for the lower-is-better note; default all compared).
    :return: the sentence, one line of Markdown.
    """
    test = (
        "exact over all 2^n sign flips"
        if comparison.exact
        else f"{comparison.n_resamples:,} random sign flips, seed {comparison.seed}"
    )
    lower = [SHORT_NAMES.get(m, m) for m in (metrics or comparison.metrics) if m in LOWER_IS_BETTER]
    note = f" Lower is better for {', '.join(lower)}." if lower else ""
    return (
        f"n = {comparison.n} instances present in all {len(comparison.labels)} compared files. "
        f"Cell: mean [{comparison.confidence:.0%} bootstrap CI: {comparison.ci_method}, "
        f"{comparison.n_resamples:,} resamples of the instances, seed {comparison.seed}]; "
        f"p: two-sided paired permutation (randomization) test of the mean difference vs `{comparison.baseline}` "
        f"({test}), Holm-adjusted per metric over the {len(comparison.labels) - 1} comparison(s) with the baseline; "
        f"▲/▼ significantly above/below the baseline, * p < 0.05, ** p < 0.01.{note}"
    )


def format_comparison(
    comparison: Comparison,
    *,
    metrics: Sequence[str] | None = None,
    metrics_as: str = "rows",
    digits: int = 3,
    with_legend: bool = True,
    extra: Mapping[str, Mapping[str, str]] | None = None,
) -> str:
    """A markdown table of a comparison: ``mean [CI] marker p`` per file and metric, then the legend.

    :param comparison: the comparison.
    :param metrics: the metrics to show (default all compared ones).
    :param metrics_as: ``"rows"`` (one row per metric, one column per file) or ``"columns"`` (one row per file).
    :param digits: decimals.
    :param with_legend: append :func:`legend` after a blank line.
    :param extra: more labels after the files (label -> metric -> text shown as it is, ``-`` when missing), not
        compared: the paper's figures (:mod:`swe_explore.evaluation.paper_rows`).
    :return: the table text.
    :raises ValueError: on an unknown ``metrics_as`` or a metric not compared.
    """
    if metrics_as not in ("rows", "columns"):
        raise ValueError(f"metrics_as must be 'rows' or 'columns', got {metrics_as!r}")
    shown = list(metrics or comparison.metrics)
    unknown = [m for m in shown if m not in comparison.metrics]
    if unknown:
        raise ValueError(f"metric(s) not compared: {unknown}")

    added = dict(extra or {})

    def cell(label: str, metric: str) -> str:
        if label in added:
            return added[label].get(metric, "-")
        return format_cell(comparison.cells[label][metric], baseline=label == comparison.baseline, digits=digits)

    def name(metric: str) -> str:
        return SHORT_NAMES.get(metric, metric)

    labels = [*comparison.labels, *added]
    if metrics_as == "rows":
        header = ["metric", *labels]
        body = [[name(m), *(cell(label, m) for label in labels)] for m in shown]
    else:
        header = ["", *(name(m) for m in shown)]
        body = [[label, *(cell(label, m) for m in shown)] for label in labels]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in [header, *body]]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines) + (f"\n\n{legend(comparison, shown)}" if with_legend else "")
