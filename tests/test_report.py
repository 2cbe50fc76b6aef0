"""evaluation/report.py: one label per result file, and the tables per group of ``swe-explore evaluate``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swe_explore import MINI_BENCH, MINI_REPOS
from swe_explore.benchprep.release import record_language
from swe_explore.evaluation.bench import load_bench
from swe_explore.evaluation.report import evaluate_files, file_labels, record_dataset


@pytest.mark.parametrize(
    ("paths", "names", "labels"),
    [
        (["a/x.jsonl", "b/y.jsonl"], ["bm25", "tfidf"], ["bm25", "tfidf"]),
        # two files of one explorer: the second is told apart by its file name (the rule before three files)
        (["a/p.jsonl", "a/q.jsonl"], ["x", "x"], ["x", "x (q.jsonl)"]),
        (["a/learned.jsonl", "b/learned.jsonl"], ["learned"] * 2, ["learned", "learned (learned.jsonl)"]),
        (
            ["a/learned.jsonl", "b/learned.jsonl", "c/learned.jsonl"],
            ["learned"] * 3,
            ["learned", "learned (b/learned.jsonl)", "learned (c/learned.jsonl)"],
        ),
        (["a/l.jsonl", "b/m.jsonl", "c/n.jsonl"], ["x"] * 3, ["x", "x (m.jsonl)", "x (n.jsonl)"]),
        (
            ["r1/a/l.jsonl", "r2/a/l.jsonl", "r3/a/l.jsonl", "r4/b/l.jsonl"],
            ["x"] * 4,
            ["x", "x (r2/a/l.jsonl)", "x (r3/a/l.jsonl)", "x (b/l.jsonl)"],
        ),
        # the same path three times, and a name equal to another file's label: numeric suffixes
        (["p.jsonl"] * 3, ["x"] * 3, ["x", "x (p.jsonl)", "x (p.jsonl) #2"]),
        (["p.jsonl", "q.jsonl", "z.jsonl"], ["x", "x", "x (q.jsonl)"], ["x", "x (q.jsonl)", "x (q.jsonl) #2"]),
    ],
)
def test_file_labels_are_distinct(paths: list[str], names: list[str], labels: list[str]) -> None:
    """The first file of a name keeps it; later ones get the shortest path tail no other later one shares."""
    assert file_labels([Path(p) for p in paths], names) == labels


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_evaluate_files_tables_per_group_and_comparison(tmp_path: Path) -> None:
    """``gold`` predicts every core region (HitFile 1), ``empty`` nothing on 3 of the 4 instances (HitFile 0, the
    fourth NOT_ATTEMPTED): one table overall, one per dataset (all ``mini``) and one per language (one instance
    each), and the comparison over the 3 instances both files hold."""
    records = load_bench(MINI_BENCH)
    gold = _write(
        tmp_path / "gold.jsonl",
        [
            {"instance_id": r.instance_id, "explorer": "gold", "regions": r.raw["ground_truth"]["read_core_regions"]}
            for r in records
        ],
    )
    empty = _write(
        tmp_path / "empty.jsonl",
        [{"instance_id": r.instance_id, "explorer": "empty", "regions": []} for r in records[:3]],
    )
    warnings: list[str] = []
    report = evaluate_files(
        [empty, gold],
        records,
        MINI_REPOS,
        bench=MINI_BENCH,
        metrics=["hit_file_rate"],
        groupings=(("dataset", record_dataset), ("language", record_language)),
        compare={"n_resamples": 100, "seed": 0},
        warn=warnings.append,
    )
    assert warnings == []
    assert list(report.files) == ["empty", "gold"]
    gold_summary, empty_summary = report.summaries["gold"], report.summaries["empty"]
    assert gold_summary["metrics"]["hit_file_rate"] == 1.0 and empty_summary["metrics"]["hit_file_rate"] == 0.0
    assert gold_summary["per_dataset"]["mini"]["cases"] == 4
    assert sorted(gold_summary["per_language"]) == ["go", "python", "rust", "typescript"]
    assert {v["cases"] for v in gold_summary["per_language"].values()} == {1}
    assert report.files["empty"].instance_ids == {r.instance_id for r in records[:3]}
    assert report.comparison is not None and report.comparison.n == 3
    assert "\ndataset mini (4 instances)\n" in report.text
    assert "\nlanguage python (1 instance)\n" in report.text
    assert "compared: 3 instances present in all 2 files, baseline 'empty'" in report.text
    assert gold_summary["comparison"]["metrics"]["hit_file_rate"]["delta"] == 1.0
    assert report.has_gaps()  # empty lacks a row


def test_evaluate_files_names_the_bad_file(tmp_path: Path) -> None:
    """A file with no row of the bench is refused, naming it; rows of other instances are warned about."""
    records = load_bench(MINI_BENCH)
    other = _write(tmp_path / "other.jsonl", [{"instance_id": "nope-1", "explorer": "x", "regions": []}])
    warnings: list[str] = []
    with pytest.raises(ValueError, match="other.jsonl: none of its rows is for an instance of"):
        evaluate_files([other], records, MINI_REPOS, bench=MINI_BENCH, metrics=["recall"], warn=warnings.append)
    assert len(warnings) == 1 and "other.jsonl: 1 row(s) for instances not scored" in warnings[0]
    with pytest.raises(ValueError, match="empty.jsonl: no result rows"):
        evaluate_files(
            [_write(tmp_path / "empty.jsonl", [])], records, MINI_REPOS, bench=MINI_BENCH, metrics=["recall"]
        )


def test_foreign_instance_ids_of_a_result_file(tmp_path: Path) -> None:
    """Rows of instances the bench lacks are listed, sorted; a partial last line is ignored."""
    from swe_explore.evaluation.results import foreign_instance_ids

    path = tmp_path / "rows.jsonl"
    rows: list[dict[str, object]] = [{"instance_id": i, "regions": []} for i in ("zz-2", "mini__pyshop-1", "aa-1")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"instance_id": "partial')
    assert foreign_instance_ids(path, MINI_BENCH) == ["aa-1", "zz-2"]
