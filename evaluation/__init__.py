"""SWE-Explore evaluation: reference-exact metrics, bench/result IO, aggregation and the reference baselines."""

from evaluation.bench import BenchRecord, find_snapshot, load_bench
from evaluation.line_counts import file_line_counts
from evaluation.metrics import METRIC_NAMES, evaluate_instance
from evaluation.paths import normalize_path
from evaluation.reference import REFERENCE_EXPLORERS
from evaluation.results import evaluate_rows, format_table, make_row, read_rows, summarize

__all__ = [
    "METRIC_NAMES",
    "REFERENCE_EXPLORERS",
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
