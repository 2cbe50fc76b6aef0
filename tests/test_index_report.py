"""indexes/report.py: the job's retriever options, the run report's path and the cache's hit rates."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from swe_explore.indexes.batch import IndexJob
from swe_explore.indexes.report import cache_totals, check_job, format_hit_rates, retriever_specs, run_report_path


def test_run_report_path_is_in_the_store_reports_folder() -> None:
    """``<store>/_reports/index-<local time>-<pid>.json``."""
    when = time.struct_time((2026, 3, 4, 5, 6, 7, 0, 63, -1))
    assert run_report_path(Path("store"), when, 42) == Path("store/_reports/index-20260304T050607-42.json")


def test_retriever_specs_give_each_retriever_the_options_it_accepts() -> None:
    """One retriever takes every option; several take only their own; an option none takes is refused."""
    assert retriever_specs(["bm25"], {"k1": "1.2", "x": "1"}) == [("bm25", {"k1": "1.2", "x": "1"})]
    assert retriever_specs(["bm25", "tfidf"], {"k1": "1.2", "tokenizer": "code"}) == [
        ("bm25", {"k1": "1.2", "tokenizer": "code"}),
        ("tfidf", {"tokenizer": "code"}),
    ]
    with pytest.raises(ValueError, match="--retriever-option ef, zz: accepted by none of bm25, tfidf"):
        retriever_specs(["bm25", "tfidf"], {"zz": "1", "ef": "2", "k1": "1"})


def test_check_job_refuses_a_bad_option_before_any_work() -> None:
    """The chunker and every retriever are built once: an option of another strategy or out of range is refused."""
    with pytest.raises(ValueError, match="chunker 'function' has no option 'size'"):
        check_job(IndexJob("function", {"size": 3}))
    with pytest.raises(ValueError, match="window overlap must be in \\[0, size=3\\), got 20"):
        check_job(IndexJob("window", {"size": 3}))
    check_job(IndexJob("window", {"size": 30}, (("bm25", {"k1": 1.2}),)))


def test_cache_totals_and_hit_rates() -> None:
    """Summed per kind over the snapshots: chunks 3 hits of 4 files, term_counts 10 of 10 chunks, 1 write error."""
    reports: list[dict[str, Any]] = [
        {"cache": {"chunks": {"hits": 1, "misses": 1}, "term_counts": {"hits": 4, "write_errors": 1}}},
        {"cache": {"chunks": {"hits": 2}, "term_counts": {"hits": 6}}},
        {"status": "error"},
    ]
    totals = cache_totals(reports)
    assert list(totals) == ["chunks", "term_counts"]
    assert totals["chunks"] == {
        "hits": 3,
        "misses": 1,
        "corrupt": 0,
        "write_errors": 0,
        "corrupt_indexes": 0,
        "hit_rate": 0.75,
    }
    assert totals["term_counts"]["hit_rate"] == 1.0 and totals["term_counts"]["write_errors"] == 1
    assert format_hit_rates(totals) == (
        "cache hit rate chunks 75.0% (3/4 files), term_counts 100.0% (10/10 chunks, 1 write errors)"
    )
    assert cache_totals([{"cache": {}}]) == {}
