"""The paper's main-table rows (``docs/paper-main-table.csv``), printed next to ours by ``evaluate``/``compare``
``--paper-rows``.

The file holds one row per explorer of the SWE-Explore paper's main table (K = 5, **all 848 instances**), each
figure as printed there (three decimals, kept as text so nothing is rounded again), the set it was measured on
(``instances``) and its source. Its columns are our metric keys (docs/metrics.md): the paper's HitReg, Prec,
Rec_l (unbudgeted line recall), F1, HitFile, nDCG@500, Rec@500, FUH, CtxEff and NoiseReg are ``hit_region_rate``,
``precision``, ``recall``, ``f1_score``, ``hit_file_rate``, ``ndcg_at_500``, ``recall_at_500``,
``first_useful_hit``, ``context_efficiency`` and ``noise_region_rate``. A figure of ours over another set (dev,
one dataset) is not the same measurement, hence the label of every printed row (:data:`PAPER_LABEL`).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from swe_explore.evaluation.metrics import METRIC_NAMES

PAPER_TABLE = Path(__file__).resolve().parent.parent / "docs" / "paper-main-table.csv"
"""The data file in a source checkout (``docs/`` is not part of an installed package: pass the file instead)."""

PAPER_LABEL = "{explorer} (paper, all 848 instances)"
"""The label of a paper row in our tables."""

_FIELDS = ("explorer", "instances", "source")


@dataclass(frozen=True)
class PaperRow:
    """One explorer's figures in the paper's main table.

    :param explorer: the paper's name for it (``BM25``, ``CoSIL``, ...).
    :param instances: the set measured on (``all 848``).
    :param figures: metric key -> the figure as printed (``"0.915"``).
    :param source: where the figures come from.
    """

    explorer: str
    instances: str
    figures: dict[str, str]
    source: str

    @property
    def label(self) -> str:
        """The row's label in our tables: ``"BM25 (paper, all 848 instances)"``."""
        return PAPER_LABEL.format(explorer=self.explorer)


def load_paper_rows(path: Path = PAPER_TABLE) -> list[PaperRow]:
    """Read the paper's rows.

    :param path: the CSV (default :data:`PAPER_TABLE`).
    :return: the rows, in the file's order.
    :raises ValueError: if the file is missing, a column is not a metric key, or a figure is not a number in
        ``[0, 1]`` (the message names the file and the line).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the paper's rows ({exc.strerror or exc}); pass the CSV file") from exc
    reader = csv.DictReader(text.splitlines())
    columns = list(reader.fieldnames or [])
    unknown = [c for c in columns if c not in _FIELDS and c not in METRIC_NAMES]
    if unknown or not set(_FIELDS) <= set(columns):
        shown = ", ".join(repr(c if len(c) <= 30 else c[:27] + "...") for c in unknown[:3])
        more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
        got = f"got unknown {shown}{more}" if unknown else f"missing {', '.join(sorted(set(_FIELDS) - set(columns)))}"
        raise ValueError(
            f"{path}: not the paper's rows: the header must be {', '.join(_FIELDS)} and metric keys; {got}"
        )
    rows = []
    for line, record in enumerate(reader, start=2):
        figures = {c: record[c] for c in columns if c in METRIC_NAMES}
        for metric, figure in figures.items():
            try:
                ok = 0.0 <= float(figure) <= 1.0
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise ValueError(f"{path}:{line}: {metric} {figure!r} is not a number in [0, 1]")
        rows.append(PaperRow(record["explorer"], record["instances"], figures, record["source"]))
    if not rows:
        raise ValueError(f"{path}: no rows")
    return rows


def with_paper_rows(
    table: Mapping[str, Mapping[str, float]], rows: list[PaperRow]
) -> dict[str, Mapping[str, float | str]]:
    """Our table with the paper's rows after it (metrics the paper does not report stay empty, shown ``-``).

    :param table: label -> metric -> our mean.
    :param rows: the paper's rows (:func:`load_paper_rows`).
    :return: label -> metric -> value; a paper figure is its text as printed.
    """
    out: dict[str, Mapping[str, float | str]] = dict(table)
    for row in rows:
        out[row.label] = row.figures
    return out
