"""SWE-Explore evaluation: reference-exact metrics, bench/result IO, aggregation and the run loop.

This package imports nothing from ``retrievers``, ``indexes`` or ``explore``: explorers reach it through the
:class:`~swe_explore.evaluation.runner.Explorer` protocol it defines.
"""

from swe_explore.evaluation.bench import BenchRecord, find_snapshot, load_bench
from swe_explore.evaluation.line_counts import file_line_counts
from swe_explore.evaluation.metrics import METRIC_NAMES, evaluate_instance
from swe_explore.evaluation.paths import normalize_path
from swe_explore.evaluation.results import evaluate_rows, format_table, make_row, read_rows, summarize

__all__ = [
    "METRIC_NAMES",
    "BenchRecord",
    "evaluate_instance",
    "evaluate_rows",
    "file_line_counts",
    "find_snapshot",
    "format_table",
    "load_bench",
    "make_row",
    "normalize_path",
    "read_rows",
    "summarize",
]
