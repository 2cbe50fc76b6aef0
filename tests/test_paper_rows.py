"""The paper's main-table rows (docs/paper-main-table.csv) and ``evaluate``/``compare --paper-rows``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swe_explore import MINI_BENCH, MINI_REPOS
from swe_explore.commands import evaluate
from swe_explore.evaluation.bench import load_bench
from swe_explore.evaluation.compare import SHOWN, GridResult
from swe_explore.evaluation.metrics import MAIN_METRICS, METRIC_NAMES
from swe_explore.evaluation.paper_rows import PAPER_TABLE, load_paper_rows
from swe_explore.evaluation.results import SHORT_NAMES

# The paper's Table tab:main-results as printed (K = 5, all 848 instances), columns HitReg Prec Rec_l F1 HitFile
# nDCG@500 Rec@500 FUH CtxEff NoiseReg.
PAPER = """
Oracle 0.915 1.000 0.953 0.964 0.923 0.858 0.576 1.000 1.000 0.000
Random 0.003 0.002 0.004 0.002 0.004 0.004 0.001 0.006 0.002 0.997
BM25 0.065 0.055 0.021 0.024 0.079 0.132 0.021 0.141 0.087 0.910
TF-IDF 0.121 0.117 0.049 0.054 0.140 0.223 0.049 0.240 0.190 0.821
Potion 0.069 0.055 0.025 0.026 0.088 0.136 0.025 0.146 0.100 0.897
OpenHands 0.514 0.489 0.179 0.209 0.645 0.867 0.177 0.895 0.737 0.245
Mini-SWE-Agent 0.505 0.530 0.151 0.190 0.640 0.885 0.151 0.907 0.754 0.253
AweAgent 0.534 0.577 0.140 0.182 0.682 0.954 0.140 0.975 0.829 0.191
AutoCodeRover 0.272 0.680 0.233 0.291 0.280 0.720 0.165 0.730 0.738 0.034
LocAgent 0.472 0.642 0.191 0.241 0.540 0.950 0.173 0.977 0.799 0.195
OrcaLoca 0.126 0.295 0.033 0.049 0.129 0.311 0.030 0.313 0.317 0.003
CoSIL 0.544 0.581 0.788 0.602 0.544 0.824 0.412 0.920 0.898 0.471
Claude_Code 0.531 0.598 0.154 0.202 0.667 0.938 0.154 0.963 0.829 0.186
Codex 0.516 0.523 0.194 0.223 0.649 0.901 0.190 0.936 0.762 0.249
"""
COLUMNS = [
    "hit_region_rate",
    "precision",
    "recall",
    "f1_score",
    "hit_file_rate",
    "ndcg_at_500",
    "recall_at_500",
    "first_useful_hit",
    "context_efficiency",
    "noise_region_rate",
]


def test_data_file_holds_the_paper_figures() -> None:
    """Every explorer and figure of the paper's table, as printed, labelled as measured on all 848 instances."""
    rows = load_paper_rows()
    expected = {}
    for line in PAPER.strip().splitlines():
        name, *figures = line.split()
        expected[name.replace("_", " ")] = dict(zip(COLUMNS, figures))
    assert {r.explorer: r.figures for r in rows} == expected
    assert [r.explorer for r in rows][:3] == ["Oracle", "Random", "BM25"]
    assert {r.instances for r in rows} == {"all 848"}
    assert all("arXiv 2606.07297" in r.source and "1-main.tex" in r.source for r in rows)
    assert rows[2].label == "BM25 (paper, all 848 instances)"


def test_bad_data_file_is_one_line_naming_it(tmp_path: Path) -> None:
    """A figure out of range or an unknown column names the file and the line."""
    bad = tmp_path / "t.csv"
    bad.write_text("explorer,instances,precision,source\nX,all 848,1.5,s\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"t\.csv:2: precision '1\.5' is not a number in \[0, 1\]"):
        load_paper_rows(bad)
    bad.write_text("explorer,instances,hitreg,source\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"t\.csv: not the paper's rows: the header must be .*; got unknown 'hitreg'$"):
        load_paper_rows(bad)
    record = '{"instance_id": "pallets__flask-5014", "repo": "pallets/flask", "a": "1", "b": "2", "c": "3"}'
    bad.write_text(record + "\n", encoding="utf-8")  # a bench JSONL given as the CSV: its content is not dumped
    with pytest.raises(ValueError) as exc:
        load_paper_rows(bad)
    assert str(exc.value) == (
        f"{bad}: not the paper's rows: the header must be explorer, instances, source and metric keys; got unknown "
        """'{"instance_id": "pallets__f...', ' "repo": "pallets/flask"', ' "a": "1"' and 2 more"""
    )
    with pytest.raises(ValueError, match="missing.csv: cannot read"):
        load_paper_rows(tmp_path / "missing.csv")


def _table_rows(text: str, label_suffix: str) -> dict[str, list[str]]:
    """The markdown rows whose first cell ends with ``label_suffix``: label -> the other cells."""
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0].endswith(label_suffix):
            out[cells[0]] = cells[1:]
    return out


def _gold(tmp_path: Path) -> Path:
    records = load_bench(MINI_BENCH)
    path = tmp_path / "gold.jsonl"
    rows = [
        {"instance_id": r.instance_id, "explorer": "gold", "regions": r.raw["ground_truth"]["read_core_regions"]}
        for r in records
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_evaluate_prints_the_paper_rows_after_ours(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``evaluate --paper-rows``: one row per paper explorer in the overall table, each figure under its metric
    as in the data file, ``-`` under the metrics the paper does not report; the group tables have none."""
    argv = [str(_gold(tmp_path)), "--bench", str(MINI_BENCH), "--repos", str(MINI_REPOS), "--paper-rows"]
    assert evaluate.main(argv) == 0
    out = capsys.readouterr().out
    printed = _table_rows(out, "(paper, all 848 instances)")
    rows = load_paper_rows(PAPER_TABLE)
    assert list(printed) == [r.label for r in rows]
    for row in rows:
        assert printed[row.label] == [row.figures.get(m, "-") for m in METRIC_NAMES]
    assert out.count("(paper, all 848 instances)") == len(rows)  # overall table only
    header = next(line for line in out.splitlines() if "HitFile" in line)
    assert [c.strip() for c in header.strip().strip("|").split("|")][1:] == [SHORT_NAMES[m] for m in METRIC_NAMES]
    assert _table_rows(out, "gold")["gold"][METRIC_NAMES.index("hit_file_rate")] == "1.0000"


def test_evaluate_main_metrics_and_comparison(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With ``--metrics main --compare`` the paper's figures are in the overall table and are extra columns of
    the comparison (one row per metric), not compared."""
    gold = _gold(tmp_path)
    other = tmp_path / "b" / "gold.jsonl"
    other.parent.mkdir()
    other.write_bytes(gold.read_bytes())
    argv = [str(gold), str(other), "--bench", str(MINI_BENCH), "--repos", str(MINI_REPOS), "--metrics", "main"]
    assert evaluate.main([*argv, "--compare", "--resamples", "50", "--paper-rows", str(PAPER_TABLE)]) == 0
    out = capsys.readouterr().out
    rows = load_paper_rows()
    printed = _table_rows(out, "(paper, all 848 instances)")
    assert printed == {r.label: [r.figures.get(m, "-") for m in MAIN_METRICS] for r in rows}
    comparison_header = next(line for line in out.splitlines() if line.startswith("| metric"))
    labels = [c.strip() for c in comparison_header.strip().strip("|").split("|")][1:]
    assert labels == ["gold", "gold (gold.jsonl)", *(r.label for r in rows)]
    ndcg = next(line for line in out.splitlines() if line.startswith("| nDCG@500"))
    assert [c.strip() for c in ndcg.strip().strip("|").split("|")][3:] == [r.figures["ndcg_at_500"] for r in rows]


def test_compare_table_takes_the_paper_rows() -> None:
    """``compare``'s printed table (means when there is no comparison) with the paper's rows after the cells."""
    grid = GridResult({"bm25+function": {"metrics": dict.fromkeys(METRIC_NAMES, 0.5)}}, {"all": None}, 0, False)
    rows = load_paper_rows()
    text = grid.table(paper_rows=rows)
    printed = _table_rows(text, "(paper, all 848 instances)")
    assert printed == {r.label: [r.figures.get(m, "-") for m in SHOWN] for r in rows}
    assert _table_rows(text, "bm25+function")["bm25+function"] == ["0.5000"] * len(SHOWN)
    assert grid.table() == grid.table(paper_rows=[])
    assert "paper" not in grid.table()
