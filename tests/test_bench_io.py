"""Bench loading, snapshot lookup, line-count maps, result rows, aggregation and tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from swe_explore.chunking.types import Region
from swe_explore.evaluation.bench import (
    SNAPSHOT_MARKER,
    BenchRecord,
    SnapshotCommitError,
    check_snapshot,
    find_snapshot,
    load_bench,
    parse_record,
    snapshot_candidates,
    snapshot_commit,
)
from swe_explore.evaluation.line_counts import count_file_lines, file_line_counts, gt_paths
from swe_explore.evaluation.metrics import METRIC_NAMES, zero_metrics
from swe_explore.evaluation.results import (
    OUTCOME_ERROR,
    OUTCOME_NOT_ATTEMPTED,
    ResultsWriter,
    done_instance_ids,
    evaluate_rows,
    format_table,
    make_row,
    mean_metrics,
    read_rows,
    score_row,
    summarize,
    write_manifest,
)


def record_dict(iid: str, core: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    """A minimal valid bench object."""
    core = [{"path": "a.py", "start": 1, "end": 10}] if core is None else core
    data = {
        "instance_id": iid,
        "repo": "org/name",
        "base_commit": "abc",
        "problem_statement": f"issue of {iid}",
        "ground_truth": {
            "read_core_files": sorted({r["path"] for r in core}),
            "read_core_regions": core,
            "read_optional_files_map": {"m": ["b.py"]},
            "read_optional_regions_map": {"m": [{"path": "b.py", "start": 1, "end": 3}]},
            "modified_core_files": [],
            "main_files": [],
        },
    }
    data.update(extra)
    return data


def write_jsonl(path: Path, objects: list[Any]) -> Path:
    """Write objects (or raw strings) one per line."""
    path.write_text("".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objects), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------------------------------------
# load_bench
# ----------------------------------------------------------------------------------------------------------


def test_load_bench_reads_records_and_skips_empty_core(tmp_path: Path) -> None:
    """Records load in order; the empty-core one is skipped by default and kept on request."""
    path = write_jsonl(
        tmp_path / "bench.jsonl",
        [record_dict("o__r-1"), record_dict("o__r-2", core=[]), "", record_dict("o__r-3", repo_dir="r3")],
    )
    records = load_bench(path)
    assert [r.instance_id for r in records] == ["o__r-1", "o__r-3"]
    first = records[0]
    assert (first.repo, first.base_commit, first.query) == ("org/name", "abc", "issue of o__r-1")
    assert first.core_regions == [{"path": "a.py", "start": 1, "end": 10}]
    assert first.repo_dir is None and records[1].repo_dir == "r3"
    assert first.raw["instance_id"] == "o__r-1"
    assert [r.instance_id for r in load_bench(path, skip_empty_core=False)] == ["o__r-1", "o__r-2", "o__r-3"]
    assert [r.instance_id for r in load_bench(path, limit=1)] == ["o__r-1"]


def test_repo_and_commit_fall_back_to_meta_then_instance_id() -> None:
    """repo/base_commit come from meta when absent at the top level, else repo is derived from the id."""
    data = record_dict("psf__requests-1142")
    del data["repo"], data["base_commit"]
    assert parse_record(data).repo == "psf/requests"
    data["meta"] = {"repo": "psf/requests-fork", "base_commit": "def"}
    record = parse_record(data)
    assert (record.repo, record.base_commit) == ("psf/requests-fork", "def")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"instance_id": "x__y-1", ', r"bench.jsonl:2: invalid JSON \(Expecting property name .* column 27\)"),
        ("[1, 2]", r"bench.jsonl:2: expected a JSON object"),
        (json.dumps({"ground_truth": {}}), r"bench.jsonl:2: missing or empty 'instance_id'"),
        (json.dumps({"instance_id": "/etc"}), r"bench.jsonl:2: instance_id '/etc' is not a folder name"),
        (json.dumps({"instance_id": ".."}), r"bench.jsonl:2: instance_id '..' is not a folder name"),
        (json.dumps({"instance_id": "_reports"}), r"bench.jsonl:2: instance_id '_reports' is not a folder name"),
        (json.dumps({"instance_id": "a\\b"}), r"bench.jsonl:2: instance_id 'a\\\\b' is not a folder name"),
        (json.dumps({"instance_id": "x__y-1", "problem_statement": "q"}), r"bench.jsonl:2 \(x__y-1\): ground_truth"),
    ],
)
def test_load_bench_errors_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    """Bad JSON or a missing field raises ValueError naming the file and line number."""
    path = write_jsonl(tmp_path / "bench.jsonl", [record_dict("o__r-1"), line])
    with pytest.raises(ValueError, match=message):
        load_bench(path)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["ground_truth"].pop("read_core_regions"), "lacks 'read_core_regions'"),
        (lambda d: d["ground_truth"].pop("read_core_files"), "lacks 'read_core_files'"),
        (lambda d: d["ground_truth"]["read_core_regions"][0].pop("end"), r"read_core_regions\[0\].*lacks \['end'\]"),
        (lambda d: d["ground_truth"]["read_core_regions"][0].update(start="1"), "non-integer start"),
        (lambda d: d["ground_truth"]["read_optional_regions_map"]["m"][0].update(path=3), "non-string path"),
        (lambda d: d["ground_truth"].update(main_files="a.py"), "main_files is a str, expected a list of paths"),
        (lambda d: d["ground_truth"].update(read_core_files=None), "read_core_files is null, expected a list"),
        (lambda d: d["ground_truth"].update(read_core_regions=None), "read_core_regions is null, expected a list"),
        (lambda d: d["ground_truth"].update(modified_core_files=None), "modified_core_files is null"),
        (lambda d: d["ground_truth"].update(read_optional_regions_map=None), "read_optional_regions_map is null"),
        (lambda d: d["ground_truth"].update(read_optional_files_map=[]), "read_optional_files_map is a list"),
        (lambda d: d.pop("problem_statement"), "problem_statement"),
    ],
)
def test_malformed_ground_truth_is_reported(tmp_path: Path, mutate: Any, message: str) -> None:
    """Missing or mistyped GT fields raise ValueError with the line number and the field."""
    data = record_dict("o__r-1")
    mutate(data)
    path = write_jsonl(tmp_path / "bench.jsonl", [data])
    with pytest.raises(ValueError, match=rf"bench.jsonl:1 \(o__r-1\): .*{message}"):
        load_bench(path)


def test_missing_query_allowed_when_not_required(tmp_path: Path) -> None:
    """With require_query=False a record without problem_statement loads with an empty query."""
    data = record_dict("o__r-1")
    del data["problem_statement"]
    path = write_jsonl(tmp_path / "bench.jsonl", [data])
    assert load_bench(path, require_query=False)[0].query == ""


def test_duplicate_instance_id_names_both_lines(tmp_path: Path) -> None:
    """A repeated instance_id raises ValueError naming both line numbers."""
    path = write_jsonl(tmp_path / "bench.jsonl", [record_dict("o__r-1"), record_dict("o__r-2"), record_dict("o__r-1")])
    with pytest.raises(ValueError, match=r"bench.jsonl:3: duplicate instance_id 'o__r-1' \(first seen on line 1\)"):
        load_bench(path)


def test_missing_bench_file(tmp_path: Path) -> None:
    """A bench path that does not exist raises FileNotFoundError naming it."""
    with pytest.raises(FileNotFoundError, match="nope.jsonl"):
        load_bench(tmp_path / "nope.jsonl")


# ----------------------------------------------------------------------------------------------------------
# Snapshot lookup (docs/metrics.md §3.1)
# ----------------------------------------------------------------------------------------------------------


def make_record(iid: str, repo_dir: str | None = None) -> BenchRecord:
    """A BenchRecord with an empty GT."""
    return BenchRecord(iid, "", "", "q", {"read_core_regions": []}, repo_dir=repo_dir)


def test_snapshot_candidates_are_exact_unless_shared_folders_are_allowed(tmp_path: Path) -> None:
    """By default only <repos>/<instance_id>; with shared=True the reference's name, org__name, org-name, org."""
    assert snapshot_candidates(make_record("psf__requests-1142"), tmp_path) == [tmp_path / "psf__requests-1142"]
    names = [p.name for p in snapshot_candidates(make_record("psf__requests-1142"), tmp_path, shared=True)]
    assert names == ["psf__requests-1142", "requests", "psf__requests", "psf-requests", "psf"]
    assert snapshot_candidates(make_record("no-double-underscore"), tmp_path) == [tmp_path / "no-double-underscore"]


@pytest.mark.parametrize("existing", ["requests", "psf__requests", "psf-requests", "psf"])
def test_shared_folders_are_used_only_when_allowed(tmp_path: Path, existing: str) -> None:
    """A shared folder of another commit is never taken silently (psf__requests-1142 was scored on a wrong tree);
    with shared=True each fallback is found when it is the only one present."""
    (tmp_path / existing).mkdir()
    assert find_snapshot(make_record("psf__requests-1142"), tmp_path) is None
    assert find_snapshot(make_record("psf__requests-1142"), tmp_path, shared=True) == tmp_path / existing


def test_id_without_double_underscore_is_found_at_its_own_folder(tmp_path: Path) -> None:
    """An instance_id without ``__`` is looked up at <repos>/<instance_id> like any other."""
    (tmp_path / "mini-1").mkdir()
    assert find_snapshot(make_record("mini-1"), tmp_path) == tmp_path / "mini-1"


def test_snapshot_commit_from_marker_and_git_head(tmp_path: Path) -> None:
    """The marker's base_commit, else .git HEAD, else None; a different commit is an error naming the record."""
    import json as _json
    import subprocess

    marked = tmp_path / "marked"
    marked.mkdir()
    (marked / SNAPSHOT_MARKER).write_text(_json.dumps({"base_commit": "a" * 40}), encoding="utf-8")
    assert snapshot_commit(marked) == "a" * 40
    plain = tmp_path / "plain"
    plain.mkdir()
    assert snapshot_commit(plain) is None
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "x.py").write_text("x = 1\n", encoding="utf-8")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "x.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert snapshot_commit(repo) == head
    record = parse_record(
        {
            "instance_id": "o__r-1",
            "base_commit": "b" * 40,
            "problem_statement": "q",
            "ground_truth": {"read_core_files": [], "read_core_regions": []},
        }
    )
    with pytest.raises(SnapshotCommitError, match=r"o__r-1: snapshot .*marked is at commit aaaaaaaaaaaa"):
        check_snapshot(record, marked)
    assert check_snapshot(record, plain) is None
    same = parse_record({**record.raw, "base_commit": head[:12]})
    assert check_snapshot(same, repo) == head


def test_find_snapshot_prefers_instance_id_and_returns_none_when_missing(tmp_path: Path) -> None:
    """The instance_id directory wins over the repo-name one; nothing found gives None."""
    (tmp_path / "requests").mkdir()
    (tmp_path / "psf__requests-1142").mkdir()
    assert find_snapshot(make_record("psf__requests-1142"), tmp_path) == tmp_path / "psf__requests-1142"
    assert find_snapshot(make_record("pallets__flask-5014"), tmp_path) is None
    assert find_snapshot(make_record("psf__requests-1142"), None) is None


def test_find_snapshot_with_repo_dir(tmp_path: Path) -> None:
    """repo_dir is taken under --repos, also when it repeats the --repos directory name; else None."""
    repos = tmp_path / "repos"
    (repos / "goodconf").mkdir(parents=True)
    assert find_snapshot(make_record("x__goodconf-49", "goodconf"), repos) == repos / "goodconf"
    assert find_snapshot(make_record("x__goodconf-49", "repos/goodconf"), repos) == repos / "goodconf"
    assert find_snapshot(make_record("x__goodconf-49", str(repos / "goodconf")), tmp_path / "elsewhere") == (
        repos / "goodconf"
    )
    assert find_snapshot(make_record("x__goodconf-49", "missing"), repos) is None


# ----------------------------------------------------------------------------------------------------------
# Line counts (docs/metrics.md §0)
# ----------------------------------------------------------------------------------------------------------


def test_line_counts_only_for_gt_region_paths(tmp_path: Path) -> None:
    """Counts cover core and optional region paths only; core-file-only, predicted and missing paths are absent."""
    for name, text in {"a.py": "1\n2\n3\n", "b.py": "x", "c.py": "1\n2\n", "pred.py": "1\n"}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    gt = {
        "read_core_regions": [{"path": "a.py", "start": 1, "end": -1}, {"path": "gone.py", "start": 1, "end": 2}],
        "read_core_files": ["a.py", "c.py"],  # c.py has no region: not counted
        "read_optional_regions_map": {"m1": [], "m2": [{"path": "b.py", "start": 1, "end": 1}]},
    }
    assert gt_paths(gt) == ["a.py", "b.py", "gone.py"]
    assert file_line_counts(gt, tmp_path) == {"a.py": 3, "b.py": 1}


@pytest.mark.parametrize(
    ("data", "ours", "splitlines"),
    [
        (b"", 0, 0),
        (b"a\n", 1, 1),
        (b"a", 1, 1),
        (b"\n", 1, 1),
        (b"a\r\nb\r\n", 2, 2),
        (b"a\rb\nc\n", 2, 3),  # lone \r inside an \n file: a line break only for splitlines
        (b"a\rb\r", 2, 2),  # classic Mac file: both split on \r
        (b"a\x0cb\n", 1, 2),  # form feed
        (b"a\x0bb\x1cc\n", 1, 3),  # vertical tab, file separator
        ("a\u2028b\x85c\n".encode(), 1, 3),  # Unicode line separator, NEL
        (b"\xef\xbb\xbfa\nb", 2, 2),  # BOM
        (b"a\xffb\nc", 2, 2),  # invalid UTF-8 byte: replaced vs ignored, same count
    ],
)
def test_count_file_lines_modes(data: bytes, ours: int, splitlines: int) -> None:
    """Our line count and the reference's splitlines count agree except on \\r, \\f, \\v and Unicode separators."""
    assert count_file_lines(data, "lines") == ours
    assert count_file_lines(data, "splitlines") == splitlines


def test_unknown_line_count_mode(tmp_path: Path) -> None:
    """An unknown mode raises ValueError listing the valid ones; a missing snapshot raises FileNotFoundError."""
    with pytest.raises(ValueError, match="lines, splitlines"):
        count_file_lines(b"a", "universal")
    with pytest.raises(ValueError, match="lines, splitlines"):
        file_line_counts({}, tmp_path, "universal")
    with pytest.raises(FileNotFoundError):
        file_line_counts({}, tmp_path / "missing")


# ----------------------------------------------------------------------------------------------------------
# Result rows and files (docs/metrics.md §3.2)
# ----------------------------------------------------------------------------------------------------------


def test_make_row_has_the_reference_fields() -> None:
    """A row carries the reference fields; regions become dicts; explorer_config only when non-empty."""
    row = make_row("i", "bm25", [Region("a.py", 1, 80)], {"precision": 0.5}, explorer_config={"chunk_size": 80})
    assert row == {
        "instance_id": "i",
        "explorer": "bm25",
        "outcome": "SUCCESS",
        "error": None,
        "regions": [{"path": "a.py", "start": 1, "end": 80}],
        "metrics": {"precision": 0.5},
        "num_regions": 1,
        "token_usage": None,
        "repo_revision": None,
        "explorer_config": {"chunk_size": 80},
    }
    failed = make_row("i", "bm25", [], outcome=OUTCOME_ERROR, error=RuntimeError("x" * 5000))
    assert "explorer_config" not in failed and failed["metrics"] == zero_metrics()
    assert failed["error"].startswith("RuntimeError: xxx") and len(failed["error"]) == 4000


def test_writer_appends_and_reader_reads_back(tmp_path: Path) -> None:
    """Rows written in two sessions are read back in order; done ids are those present in every file."""
    path = tmp_path / "out" / "bm25" / "top5.jsonl"
    with ResultsWriter(path) as writer:
        writer.write(make_row("a", "bm25", [Region("x.py", 1, 2)]))
    with ResultsWriter(path) as writer:
        writer.write(make_row("b", "bm25", []))
    rows = read_rows(path)
    assert [r["instance_id"] for r in rows] == ["a", "b"]
    assert rows[0]["regions"] == [{"path": "x.py", "start": 1, "end": 2}]
    other = tmp_path / "out" / "bm25" / "top10.jsonl"
    with ResultsWriter(other) as writer:
        writer.write(make_row("b", "bm25", []))
    assert done_instance_ids(path) == {"a", "b"}
    assert done_instance_ids(path, other) == {"b"}
    assert done_instance_ids(path, tmp_path / "absent.jsonl") == set()


@pytest.mark.parametrize(
    ("line", "message"),
    [("{not json", r"rows.jsonl:2: invalid JSON \(Expecting property name .*, column 2\)"),
     ('{"regions": []}', r"rows.jsonl:2: row has no string"),
     ('{"instance_id": "b"}', r"rows.jsonl:2 \(b\): row has no 'regions'")],
)  # fmt: skip
def test_read_rows_errors_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    """A malformed result line raises ValueError with file and line number."""
    path = write_jsonl(tmp_path / "rows.jsonl", [make_row("a", "x", []), line])
    with pytest.raises(ValueError, match=message):
        read_rows(path)


def test_a_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    """A bench or result file that is not UTF-8 is one error naming the file and the first bad byte (it used to be
    the codec's message alone)."""
    path = tmp_path / "binary.jsonl"
    path.write_bytes(b'{"instance_id": "a"}\n\xff\xfe\n')
    for read in (load_bench, read_rows):
        with pytest.raises(ValueError, match=r"binary.jsonl: not a UTF-8 text file \(byte 0xff: invalid start byte\)$"):
            read(path)


# ----------------------------------------------------------------------------------------------------------
# Scoring rows against the bench
# ----------------------------------------------------------------------------------------------------------


@pytest.fixture
def bench(tmp_path: Path) -> tuple[list[BenchRecord], Path]:
    """Three records; snapshots exist for o__r-1 and o__r-2 only; a.py has 10 lines."""
    repos = tmp_path / "repos"
    for iid in ("o__r-1", "o__r-2"):
        (repos / iid).mkdir(parents=True)
        (repos / iid / "a.py").write_text("".join(f"l{i}\n" for i in range(10)), encoding="utf-8")
    core = [{"path": "a.py", "start": 1, "end": -1}]
    path = write_jsonl(tmp_path / "bench.jsonl", [record_dict(i, core=core) for i in ("o__r-1", "o__r-2", "p__q-3")])
    return load_bench(path), repos


def test_evaluate_rows_scores_in_bench_order(bench: tuple[list[BenchRecord], Path]) -> None:
    """Rows are scored with the snapshot's line counts; missing snapshots are excluded; errors score 0."""
    records, repos = bench
    rows = [
        make_row("o__r-2", "bm25", [], outcome=OUTCOME_ERROR, error="boom"),
        make_row("o__r-1", "bm25", [Region("a.py", 1, 5), Region("z.py", 1, 5)]),
        make_row("p__q-3", "bm25", [Region("a.py", 1, 10)]),
    ]
    scored = evaluate_rows(rows, records, repos)
    assert [r["instance_id"] for r in scored] == ["o__r-1", "o__r-2"]  # p__q-3 has no snapshot
    # o__r-1: C = a1-10 (end=-1 resolved with 10 lines), P = a1-5 + z1-5: recall 5/10, precision 5/10.
    assert scored[0]["metrics"]["recall"] == pytest.approx(0.5)
    assert scored[0]["metrics"]["precision"] == pytest.approx(0.5)
    assert scored[1]["metrics"] == zero_metrics() and scored[1]["outcome"] == OUTCOME_ERROR
    # k=1 keeps only a1-5: precision 5/5.
    cut = evaluate_rows(rows, records, repos, k=1)
    assert cut[0]["num_regions"] == 1 and cut[0]["metrics"]["precision"] == 1.0
    # Without skipping missing repos, p__q-3 is scored without line counts: its core region is unresolvable.
    kept = evaluate_rows(rows, records, repos, skip_missing_repo=False)
    assert [r["instance_id"] for r in kept][-1] == "p__q-3" and kept[-1]["metrics"]["recall"] == 0.0


def test_evaluate_rows_missing_duplicate_and_unknown_rows(bench: tuple[list[BenchRecord], Path]) -> None:
    """A record without a row is NOT_ATTEMPTED (0) by default; duplicates and unknown ids are errors."""
    records, repos = bench
    rows = [make_row("o__r-1", "bm25", [Region("a.py", 1, 10)])]
    scored = evaluate_rows(rows, records, repos)
    assert scored[1]["instance_id"] == "o__r-2" and scored[1]["outcome"] == OUTCOME_NOT_ATTEMPTED
    assert scored[1]["metrics"] == zero_metrics()
    assert [r["instance_id"] for r in evaluate_rows(rows, records, repos, missing_rows="skip")] == ["o__r-1"]
    with pytest.raises(ValueError, match="no result row for instance 'o__r-2'"):
        evaluate_rows(rows, records, repos, missing_rows="error")
    with pytest.raises(ValueError, match="two result rows"):
        evaluate_rows(rows + rows, records, repos)
    with pytest.raises(ValueError, match="not in the bench records"):
        evaluate_rows([make_row("zz__top-1", "bm25", [])], records, repos)


def test_score_row_rejects_bad_k(bench: tuple[list[BenchRecord], Path]) -> None:
    """k below 1 raises ValueError."""
    records, _ = bench
    with pytest.raises(ValueError, match="k must be >= 1"):
        score_row(make_row("o__r-1", "x", []), records[0], {}, k=0)


# ----------------------------------------------------------------------------------------------------------
# Aggregation, tables, manifest
# ----------------------------------------------------------------------------------------------------------


def row_with(iid: str, outcome: str = "SUCCESS", **metrics: float) -> dict[str, Any]:
    """A row with the given metric values (others 0)."""
    return make_row(iid, "x", [], {**zero_metrics(), **metrics}, outcome=outcome)


def test_summarize_means_outcomes_and_per_repo() -> None:
    """Means are total/count over all rows (errors included as 0), per repo too."""
    rows = [
        row_with("a__one-1", recall=0.5, precision=1.0),
        row_with("a__one-2", recall=0.25),
        row_with("b__two-1", "ERROR"),
    ]
    summary = summarize(rows)
    assert summary["cases"] == 3
    assert summary["outcomes"] == {"SUCCESS": 2, "ERROR": 1}
    # recall (0.5 + 0.25 + 0) / 3 = 0.25; precision 1/3.
    assert summary["metrics"]["recall"] == pytest.approx(0.25)
    assert summary["metrics"]["precision"] == pytest.approx(1 / 3)
    assert list(summary["per_repo"]) == ["a/one", "b/two"]
    assert summary["per_repo"]["a/one"]["cases"] == 2
    assert summary["per_repo"]["a/one"]["metrics"]["recall"] == pytest.approx(0.375)
    records = [BenchRecord("a__one-1", "A/ONE", "", "q", {}), BenchRecord("a__one-2", "A/ONE", "", "q", {})]
    assert list(summarize(rows, records)["per_repo"]) == ["A/ONE", "b/two"]
    assert mean_metrics([]) == {m: 0.0 for m in METRIC_NAMES}


def test_format_table_markdown_and_plain() -> None:
    """Tables show 4 decimals, short headers, metrics as columns or as rows."""
    table = {"bm25": {"hit_file_rate": 0.14643, "ndcg_at_500": 0.163}, "tfidf": {"hit_file_rate": 0.27681}}
    md = format_table(table, metrics=["hit_file_rate", "ndcg_at_500"])
    assert md.splitlines() == [
        "|       | HitFile | nDCG@500 |",
        "|-------|--------:|---------:|",
        "| bm25  |  0.1464 |   0.1630 |",
        "| tfidf |  0.2768 |        - |",
    ]
    plain = format_table(
        table, metrics=["hit_file_rate"], metrics_as="rows", style="plain", digits=3, short_names=False
    )
    # Column widths: 13 ("hit_file_rate"), 5 ("0.146"), 5 ("tfidf"); first column left-aligned, others right.
    assert plain.splitlines() == ["metric" + " " * 10 + "bm25  tfidf", "hit_file_rate  0.146  0.277"]
    with pytest.raises(ValueError, match="metrics_as"):
        format_table(table, metrics_as="diagonal")


def test_write_manifest_keeps_other_explorers(tmp_path: Path) -> None:
    """The manifest records per-k summaries and keeps previously written explorers."""
    bench_path = write_jsonl(tmp_path / "bench.jsonl", [record_dict("o__r-1")])
    path = tmp_path / "top5.manifest.json"
    summary = summarize([row_with("a__b-1", recall=1.0), row_with("a__b-2", "ERROR")])
    write_manifest(path, "bm25", {5: summary}, bench_path=bench_path, explorer_config={"chunk_size": 80})
    write_manifest(path, "tfidf", {5: summary})
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["schema"] == 1 and set(data["explorers"]) == {"bm25", "tfidf"}
    bm25 = data["explorers"]["bm25"]
    assert len(bm25["manifest"]["bench_sha256"]) == 64
    assert bm25["manifest"]["explorer_config"] == {"chunk_size": 80}
    per_k = bm25["summary"]["5"]
    assert (per_k["cases"], per_k["attempted"], per_k["completion_rate"]) == (2, 2, 0.5)
    assert per_k["metrics"]["recall"] == pytest.approx(0.5)


def test_a_broken_snapshot_marker_is_an_error(tmp_path: Path) -> None:
    """A marker that does not name a commit stops the check loudly instead of skipping it."""
    (tmp_path / SNAPSHOT_MARKER).write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="unreadable snapshot marker"):
        snapshot_commit(tmp_path)
