"""Joining the SWE-Explore release with its issue sources (benchprep/release.py, scripts/prepare_bench.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from swe_explore import MINI_BENCH, MINI_REPOS
from swe_explore.benchprep.release import (
    MATCH_RULES,
    Source,
    SourceRow,
    instance_language,
    join_release,
    pro_query_text,
    read_release,
    read_source,
    report_path,
)
from swe_explore.commands import evaluate as evaluate_cmd
from swe_explore.commands import prepare as prepare_cmd
from swe_explore.commands import run as run_cmd

SHA1 = "1" * 40
SHA2 = "2" * 40
SHA3 = "3" * 40
HEX1 = "0abc"
C_W, C_G, C_T, C_P = "a" * 40, "b" * 40, "c" * 40, "d" * 40
TOOLS_ID = f"acme__tools-{SHA1}-v{HEX1}"
PORTAL_ID = f"acme__portal-{SHA2}-vnan"


def gt(core: list[tuple[str, int, int]], modified: list[str] | None = None) -> dict[str, Any]:
    """A ground truth with the given core regions (optional regions with start > end, as in the release)."""
    return {
        "read_core_files": sorted({p for p, _, _ in core}),
        "read_core_regions": [{"path": p, "start": s, "end": e} for p, s, e in core],
        "read_optional_files_map": {"model-a": ["notes.md"]},
        "read_optional_regions_map": {"model-a": [{"path": "notes.md", "start": 9, "end": 3}]},
        "modified_core_files": modified or [],
        "main_files": [],
    }


def release_row(iid: str, dataset: str, core: list[tuple[str, int, int]], **extra: Any) -> dict[str, Any]:
    """A release row: the public release's keys, in its order, without repo/base_commit/problem_statement."""
    return {
        "instance_id": iid,
        "repo_path": "/testbed",
        "repo_dir": f"repos/{iid}",
        "ground_truth": gt(core),
        "read_step_info": {core[0][0]: [{"traj_path": "t.json", "step_idx": 2, "start": 1, "end": -1}]},
        "meta": {"num_trajectories": 2},
        "dataset": dataset,
        **extra,
    }


RELEASE = [
    release_row("acme__widgets-101", "verified", [("widgets/core.py", 10, 19), ("docs/usage.md", 1, -1)]),
    release_row(TOOLS_ID, "pro", [("web/app.tsx", 5, 9), ("server/api.go", 1, 3)]),
    release_row("acme__gadgets-7", "multilingual", [("src/lib.rs", 1, 40), ("src/main.rs", 1, -1)]),
    release_row(PORTAL_ID, "pro", [("a.js", 1, -1), ("b.js", 1, -1), ("c.py", 1, -1)]),
    release_row("acme__missing-3", "verified", [("m.py", 1, 2)]),
]

JSONL_SOURCE = [  # SWE-bench Verified / Multilingual layout
    {"instance_id": "acme__widgets-101", "repo": "acme/widgets", "base_commit": C_W, "problem_statement": "W broke",
     "version": "1.0"},
    {"instance_id": "acme__gadgets-7", "repo": "acme/gadgets", "base_commit": C_G, "problem_statement": "G panics"},
    {"instance_id": "acme__unused-1", "repo": "acme/unused", "base_commit": C_W, "problem_statement": "unused"},
]  # fmt: skip

PARQUET_SOURCE = {  # SWE-bench Pro layout: ids with the instance_ prefix, requirements and interface
    "instance_id": [f"instance_{TOOLS_ID}", f"instance_{PORTAL_ID}"],
    "repo": ["acme/tools", "acme/portal"],
    "base_commit": [C_T, C_P],
    "problem_statement": ["T is slow", "P logs out"],
    "requirements": ["- cache results", "- keep the session"],
    "interface": ["Type: Function\nName: cached", None],
    "repo_language": ["ts", "js"],
}

EXPECTED = [
    {
        "instance_id": "acme__widgets-101", "repo": "acme/widgets", "base_commit": C_W, "dataset": "verified",
        "language": "python", "problem_statement": "W broke",
        **{k: v for k, v in RELEASE[0].items() if k not in ("instance_id", "dataset")},
    },
    {
        "instance_id": TOOLS_ID, "repo": "acme/tools", "base_commit": C_T, "dataset": "pro", "language": "typescript",
        "problem_statement": "T is slow\n\nRequirements:\n- cache results\n\nNew interfaces introduced:\n"
                             "Type: Function\nName: cached",
        "requirements": "- cache results", "interface": "Type: Function\nName: cached",
        **{k: v for k, v in RELEASE[1].items() if k not in ("instance_id", "dataset")},
    },
    {
        "instance_id": "acme__gadgets-7", "repo": "acme/gadgets", "base_commit": C_G, "dataset": "multilingual",
        "language": "rust", "problem_statement": "G panics",
        **{k: v for k, v in RELEASE[2].items() if k not in ("instance_id", "dataset")},
    },
    {
        "instance_id": PORTAL_ID, "repo": "acme/portal", "base_commit": C_P, "dataset": "pro",
        "language": "javascript", "problem_statement": "P logs out\n\nRequirements:\n- keep the session",
        "requirements": "- keep the session", "interface": None,
        **{k: v for k, v in RELEASE[3].items() if k not in ("instance_id", "dataset")},
    },
]  # fmt: skip


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    """Write one JSON object per line."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """The tiny release (three datasets interleaved) and its two sources: a JSONL file and a Parquet file."""
    pq.write_table(pa.table(PARQUET_SOURCE), tmp_path / "pro.parquet")
    return {
        "release": write_jsonl(tmp_path / "release.jsonl", RELEASE),
        "jsonl": write_jsonl(tmp_path / "swebench.jsonl", JSONL_SOURCE),
        "parquet": tmp_path / "pro.parquet",
    }


def src(name: str, *rows: tuple[str, str, str, str]) -> Source:
    """A source from (instance_id, repo, base_commit, problem_statement) tuples."""
    return Source(name, [SourceRow(i, r, c, p, None, None, f"{name}:{n}") for n, (i, r, c, p) in enumerate(rows, 1)])


# ----------------------------------------------------------------------------------------------------------
# The join
# ----------------------------------------------------------------------------------------------------------


def test_join_gives_exact_records_and_report(files: dict[str, Path]) -> None:
    """Rows of the three datasets join by exact id and by Pro's instance_ prefix; the unmatched one is listed."""
    sources = [read_source(files["jsonl"]), read_source(files["parquet"])]
    result = join_release(read_release(files["release"]), sources)
    assert result.records == EXPECTED
    assert [list(r) for r in result.records][1][:8] == [
        "instance_id", "repo", "base_commit", "dataset", "language", "problem_statement", "requirements", "interface",
    ]  # fmt: skip
    assert result.unjoined == [{"instance_id": "acme__missing-3", "dataset": "verified", "line": 5,
                                "reason": "no source row with this instance_id"}]  # fmt: skip
    assert result.per_dataset == {
        "multilingual": {"rows": 1, "joined": 1, "unjoined": 0},
        "pro": {"rows": 2, "joined": 2, "unjoined": 0},
        "verified": {"rows": 2, "joined": 1, "unjoined": 1},
    }
    assert result.matched_by == {"exact": 2, "instance_prefix": 2, "case": 0, "pro_suffix": 0, "release": 0}
    assert result.sources == [{"source": str(files["jsonl"]), "rows": 3, "used": 2},
                              {"source": str(files["parquet"]), "rows": 2, "used": 2}]  # fmt: skip
    assert (result.pro_rows, result.problem_statement_replaced) == (2, 0)
    assert result.languages == {"javascript": 1, "python": 1, "rust": 1, "typescript": 1}
    sizes = [len(json.dumps(r["read_step_info"], separators=(",", ":"))) for r in RELEASE[:4]]
    # each is {"<path>":[{"traj_path":"t.json","step_idx":2,"start":1,"end":-1}]}: 61 bytes + the path
    paths = ("widgets/core.py", "web/app.tsx", "src/lib.rs", "a.js")
    assert result.read_step_info_bytes == sum(sizes) == 4 * 61 + sum(map(len, paths))


def test_pro_query_problem_keeps_the_issue_text_only(files: dict[str, Path]) -> None:
    """--pro-query problem: Pro rows' query is the problem statement; requirements/interface are still kept."""
    sources = [read_source(files["jsonl"]), read_source(files["parquet"])]
    result = join_release(read_release(files["release"]), sources, pro_query="problem")
    tools = result.records[1]
    assert (tools["problem_statement"], tools["requirements"]) == ("T is slow", "- cache results")
    assert result.records[0]["problem_statement"] == "W broke"


def test_pro_query_text_concatenation() -> None:
    """The full query is Scale's create_problem_statement layout; empty parts are left out."""
    assert pro_query_text("P", "R", "I", "full") == "P\n\nRequirements:\nR\n\nNew interfaces introduced:\nI"
    assert pro_query_text("P", None, "I", "full") == "P\n\nNew interfaces introduced:\nI"
    assert pro_query_text("P", " ", "", "full") == "P"
    assert pro_query_text("P", "R", "I", "problem") == "P"
    with pytest.raises(ValueError, match="unknown pro query mode 'both'"):
        pro_query_text("P", "R", "I", "both")


def _join_one(tmp_path: Path, release_id: str, *sources: Source, **own: Any) -> tuple[Any, Any]:
    path = write_jsonl(tmp_path / "r.jsonl", [release_row(release_id, "pro", [("a.py", 1, 2)], **own)])
    result = join_release(read_release(path), list(sources))
    return result, (result.records[0] if result.records else result.unjoined[0])


def test_case_rule_matches_ids_that_differ_in_letter_case(tmp_path: Path) -> None:
    """A release id that differs from the only source id in case joins by rule 'case'; repo as in the source."""
    result, record = _join_one(tmp_path, "acme__gizmo-12", src("s", ("Acme__Gizmo-12", "Acme/Gizmo", C_W, "x")))
    assert (record["instance_id"], record["repo"], record["problem_statement"]) == ("acme__gizmo-12", "Acme/Gizmo", "x")
    assert result.matched_by["case"] == 1


def test_pro_suffix_rule_and_its_ambiguity(tmp_path: Path) -> None:
    """A Pro id without (or with another) -v suffix joins its only suffixed source id; two candidates: not joined."""
    one = src("s", (f"instance_acme__tools-{SHA3}-v99", "acme/tools", C_T, "t"))
    result, record = _join_one(tmp_path, f"acme__tools-{SHA3}", one)
    assert (record["base_commit"], result.matched_by["pro_suffix"]) == (C_T, 1)
    two = src(
        "s", (f"acme__tools-{SHA3}-v99", "acme/tools", C_T, "t"), (f"acme__tools-{SHA3}-vnan", "acme/tools", C_P, "u")
    )
    result, row = _join_one(tmp_path, f"acme__tools-{SHA3}-vab", two)
    assert result.records == [] and row["reason"].startswith("ambiguous: 2 source ids match by rule 'pro_suffix'")


def test_duplicates_that_agree_join_and_ones_that_conflict_do_not(tmp_path: Path) -> None:
    """The same row in two sources is used from both; two different rows under one id leave the row unjoined."""
    a, b = src("a", ("x__y-1", "x/y", C_W, "p")), src("b", ("x__y-1", "x/y", C_W, "p"))
    result, record = _join_one(tmp_path, "x__y-1", a, b)
    assert record["base_commit"] == C_W and [s["used"] for s in result.sources] == [1, 1]
    c = src("c", ("x__y-1", "x/y", C_G, "p"))
    result, row = _join_one(tmp_path, "x__y-1", a, c)
    assert row["reason"] == "conflicting source rows: a:1, c:1"


@pytest.mark.parametrize(
    ("row", "own", "reason"),
    [
        (("x__y-1", "x/y", "abc", "p"), {}, "source row s:1: base_commit 'abc' is not a 40-hex commit"),
        (("x__y-1", "y", C_W, "p"), {}, "source row s:1: repo 'y' is not 'owner/name'"),
        (("x__y-1", "x/y", C_W, " "), {}, "source row s:1: missing or empty problem_statement"),
        (("x__y-1", "x/y", C_W, "p"), {"base_commit": C_G}, f"release base_commit '{C_G}' differs from '{C_W}'"),
        (("x__y-1", "x/y", C_W, "p"), {"repo": "x/z"}, "release repo 'x/z' differs from 'x/y'"),
    ],
)
def test_invalid_or_conflicting_rows_are_not_joined(tmp_path: Path, row: Any, own: Any, reason: str) -> None:
    """A bad source row, or a release row disagreeing with its source, is listed with the reason."""
    result, unjoined = _join_one(tmp_path, "x__y-1", src("s", row), **own)
    assert result.records == [] and unjoined["reason"].startswith(reason)


def test_release_rows_that_carry_their_own_fields_pass_through(tmp_path: Path) -> None:
    """An already joined row (repo, base_commit, problem_statement of its own) needs no source: rule 'release'."""
    own = {"repo": "x/y", "base_commit": C_W, "problem_statement": "own text"}
    result, record = _join_one(tmp_path, "x__y-1", **own)
    assert (record["repo"], record["base_commit"], record["problem_statement"]) == ("x/y", C_W, "own text")
    assert result.matched_by["release"] == 1
    result, record = _join_one(tmp_path, "x__y-1", src("s", ("x__y-1", "x/y", C_W, "source text")), **own)
    assert (record["problem_statement"], result.problem_statement_replaced) == ("source text", 1)


def test_read_release_errors_name_file_line_and_record(tmp_path: Path) -> None:
    """A duplicate id or a malformed ground truth in the release raises ValueError with file:line (id)."""
    path = write_jsonl(tmp_path / "r.jsonl", [RELEASE[0], RELEASE[0]])
    with pytest.raises(
        ValueError, match=r"r.jsonl:2: duplicate instance_id 'acme__widgets-101' \(first seen on line 1\)"
    ):
        read_release(path)
    bad = dict(RELEASE[0], ground_truth={"read_core_files": []})
    with pytest.raises(ValueError, match=r"r.jsonl:1 \(acme__widgets-101\): ground_truth lacks 'read_core_regions'"):
        read_release(write_jsonl(path, [bad]))


def test_read_source_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Missing files, unknown types, rows without ids and hub ids without the extra give clear errors."""
    with pytest.raises(FileNotFoundError, match=r"source file .*nope\.parquet does not exist"):
        read_source(tmp_path / "nope.parquet")
    (tmp_path / "s.csv").write_text("instance_id\n")
    with pytest.raises(ValueError, match="unknown file type"):
        read_source(tmp_path / "s.csv")
    with pytest.raises(ValueError, match=r"s.jsonl:2: missing or empty 'instance_id'"):
        read_source(write_jsonl(tmp_path / "s.jsonl", [{"instance_id": "a__b-1"}, {"repo": "a/b"}]))
    pq.write_table(pa.table({"id": ["a"]}), tmp_path / "s.parquet")
    with pytest.raises(ValueError, match="no 'instance_id' column"):
        read_source(tmp_path / "s.parquet")
    monkeypatch.setitem(sys.modules, "datasets", None)  # the hub extra is not installed
    with pytest.raises(ImportError, match=r"needs the 'hub' extra: pip install 'swe-explore-baselines\[hub\]'"):
        read_source("ScaleAI/SWE-bench_Pro:test")


def test_directory_source_reads_every_file_under_it(files: dict[str, Path], tmp_path: Path) -> None:
    """A directory source (a dataset download) is the rows of its .jsonl/.json/.parquet files in path order."""
    folder = tmp_path / "download" / "data"
    folder.mkdir(parents=True)
    (folder / "test-00000.parquet").write_bytes(files["parquet"].read_bytes())
    (folder / "README.md").write_text("not data")
    (folder / "extra.jsonl").write_text(files["jsonl"].read_text())
    source = read_source(tmp_path / "download")
    assert [r.instance_id for r in source.rows] == [
        "acme__widgets-101", "acme__gadgets-7", "acme__unused-1", f"instance_{TOOLS_ID}", f"instance_{PORTAL_ID}",
    ]  # fmt: skip
    (folder / "test-00000.parquet").unlink()
    (folder / "extra.jsonl").unlink()
    with pytest.raises(FileNotFoundError, match=r"holds no \.jsonl, \.json or \.parquet file"):
        read_source(tmp_path / "download")


class _FakeDataset:
    """What the hub adapter uses of a ``datasets.Dataset``: column names, select_columns and iteration."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        self.column_names = list(rows[0])

    def select_columns(self, columns: list[str]) -> list[dict[str, Any]]:
        return [{c: r[c] for c in columns} for r in self.rows]


def test_hub_source_through_a_fake_datasets_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hub id loads name and split with datasets.load_dataset (default split test); a failure is reported
    as RuntimeError naming the dataset. (A stand-in module: tests never reach the network.)"""
    calls: list[tuple[str, str]] = []

    def load_dataset(name: str, split: str) -> _FakeDataset:
        calls.append((name, split))
        if name == "down/hub":
            raise ConnectionError("no route to host")
        row = {"instance_id": "instance_a__b-" + SHA1, "repo": "a/b", "base_commit": C_W, "problem_statement": "p"}
        return _FakeDataset([row | {"requirements": "r", "interface": "i", "patch": "x"}])

    monkeypatch.setitem(sys.modules, "datasets", type(sys)("datasets"))
    monkeypatch.setattr(sys.modules["datasets"], "load_dataset", load_dataset, raising=False)
    (row,) = read_source("ScaleAI/SWE-bench_Pro").rows
    assert (row.instance_id, row.requirements, row.origin) == (
        "instance_a__b-" + SHA1,
        "r",
        "ScaleAI/SWE-bench_Pro[test]: row 1",
    )
    read_source("SWE-bench/SWE-bench_Multilingual:dev")
    assert calls == [("ScaleAI/SWE-bench_Pro", "test"), ("SWE-bench/SWE-bench_Multilingual", "dev")]
    with pytest.raises(RuntimeError, match=r"could not load down/hub split 'test' .*ConnectionError: no route to host"):
        read_source("down/hub")


def test_json_array_source(tmp_path: Path) -> None:
    """A .json source is an array of objects; null requirements read as None."""
    path = tmp_path / "s.json"
    path.write_text(json.dumps([{"instance_id": "a__b-1", "repo": "a/b", "requirements": None}]))
    (row,) = read_source(path).rows
    assert (row.instance_id, row.repo, row.requirements, row.origin) == ("a__b-1", "a/b", None, f"{path}: row 1")


# ----------------------------------------------------------------------------------------------------------
# Language of an instance
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("core", "modified", "language"),
    [
        ([("a.py", 1, 10), ("b.go", 1, 30), ("README.md", 1, 100)], [], "go"),  # 30 Go lines > 10, docs don't count
        ([("a.py", 1, 10), ("a.py", 5, 14), ("b.go", 1, 12)], [], "python"),  # union: 14 Python lines > 12
        ([("a.py", 1, -1), ("b.py", 1, -1), ("c.go", 1, -1)], [], "python"),  # only whole-file regions: files
        ([("a.py", 1, -1), ("c.go", 1, 5)], [], "go"),  # lines win over files
        ([("a.ts", 1, 2), ("b.tsx", 1, 2), ("c.js", 1, 3)], [], "typescript"),  # tsx counts as typescript
        ([("x.py", 1, 2), ("y.go", 1, 2)], [], "go"),  # tie (2 lines, 1 file each): alphabetical
        ([("x.h", 1, 9), ("y.cc", 1, 3)], [], "cpp"),  # a C++ file makes .h headers C++
        ([("x.h", 1, 9), ("y.c", 1, 3)], [], "c"),
        ([("notes.md", 1, 5), ("setup.cfg", 1, -1)], ["lib/x.rb"], "ruby"),  # no code region: modified files
        ([("notes.md", 1, 5)], ["CHANGES.rst"], None),
        ([("a.py", -20, -1), ("b.rs", 7, 3)], [], "python"),  # negative start, start > end: files (tie) -> python
    ],
)
def test_instance_language(core: list[tuple[str, int, int]], modified: list[str], language: str | None) -> None:
    """The language of most core lines, else of most core files, else of modified files (hand-counted cases)."""
    assert instance_language(gt(core, modified)) == language


def test_headers_are_cpp_when_the_repository_has_cpp_elsewhere(tmp_path: Path) -> None:
    """A .h-only instance is C++ when another instance of its repo names a C++ file, else C."""
    rows = [release_row("o__lib-1", "multilingual", [("inc/a.h", 1, 5)]),
            release_row("o__lib-2", "multilingual", [("src/a.cpp", 1, 5)]),
            release_row("o__c-3", "multilingual", [("inc/a.h", 1, 5)])]  # fmt: skip
    sources = [src("s", ("o__lib-1", "o/lib", C_W, "p"), ("o__lib-2", "o/lib", C_W, "p"), ("o__c-3", "o/c", C_W, "p"))]
    result = join_release(read_release(write_jsonl(tmp_path / "r.jsonl", rows)), sources)
    assert [r["language"] for r in result.records] == ["cpp", "cpp", "c"]


# ----------------------------------------------------------------------------------------------------------
# The command
# ----------------------------------------------------------------------------------------------------------


def test_prepare_command_writes_bench_and_report(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """prepare_bench writes the joined bench and BENCH.report.json and prints the per-dataset counts."""
    out = files["release"].parent / "out" / "bench.jsonl"
    argv = [
        str(files["release"]),
        "--source",
        str(files["jsonl"]),
        "--source",
        str(files["parquet"]),
        "--out",
        str(out),
    ]
    assert prepare_cmd.main(argv) == 0
    assert [json.loads(line) for line in out.read_text().splitlines()] == EXPECTED
    report = json.loads(report_path(out).read_text())
    assert report_path(out) == out.parent / "bench.report.json"
    assert (report["rows"], report["joined"], report["unjoined_count"], report["written"]) == (5, 4, 1, True)
    assert report["unjoined"][0]["instance_id"] == "acme__missing-3"
    assert report["matched_by"] == dict.fromkeys(MATCH_RULES, 0) | {"exact": 2, "instance_prefix": 2}
    captured = capsys.readouterr()
    assert "verified           1 / 2     joined" in captured.out
    assert "acme__missing-3 (verified, line 5): no source row with this instance_id" in captured.err


def test_prepare_strict_writes_only_the_report(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """--strict: an unjoined row is an error (exit 1); the bench is not written, the report is."""
    out = files["release"].parent / "bench.jsonl"
    argv = [str(files["release"]), "--source", str(files["jsonl"]), "--out", str(out), "--strict"]
    assert prepare_cmd.main(argv) == 1
    assert not out.exists()
    report = json.loads(report_path(out).read_text())
    assert (report["written"], report["unjoined_count"]) == (False, 3)
    assert "--strict: 3 row(s) not joined" in capsys.readouterr().err


def test_prepare_bad_source_exits_2(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """A source that is neither a file nor a hub id is reported (exit status 2), nothing written."""
    out = files["release"].parent / "bench.jsonl"
    with pytest.raises(SystemExit) as exc:
        prepare_cmd.main([str(files["release"]), "--source", "no/such/file.jsonl", "--out", str(out)])
    assert exc.value.code == 2 and not out.exists()
    assert "source file no/such/file.jsonl does not exist" in capsys.readouterr().err


def test_end_to_end_release_gives_the_metrics_of_the_joined_bench(tmp_path: Path) -> None:
    """prepare_bench -> run_baselines -> evaluate on a release copy of the mini bench scores exactly as the mini
    bench itself (the issue's "done when")."""
    originals = [json.loads(line) for line in MINI_BENCH.read_text().splitlines() if line.strip()]
    joined = ("repo", "base_commit", "problem_statement")
    release = [{"instance_id": r["instance_id"], "repo_path": "/testbed", "repo_dir": f"repos/{r['instance_id']}",
                **{k: v for k, v in r.items() if k not in (*joined, "instance_id")}} for r in originals]  # fmt: skip
    write_jsonl(tmp_path / "release.jsonl", release)
    write_jsonl(tmp_path / "source.jsonl", [{k: r[k] for k in ("instance_id", *joined)} for r in originals])
    bench = tmp_path / "prepared.jsonl"
    argv = [str(tmp_path / "release.jsonl"), "--source", str(tmp_path / "source.jsonl"), "--out", str(bench)]
    assert prepare_cmd.main([*argv, "--strict"]) == 0
    summaries = []
    for name, path in (("prepared", bench), ("original", MINI_BENCH)):
        rows = tmp_path / f"{name}-rows.jsonl"
        common = ["--bench", str(path), "--repos", str(MINI_REPOS)]
        assert run_cmd.main([*common, "--out", str(rows), "--store", str(tmp_path / "store"), "--quiet"]) == 0
        assert evaluate_cmd.main([*common, str(rows), "--json", str(tmp_path / f"{name}.json")]) == 0
        summary = json.loads((tmp_path / f"{name}.json").read_text())
        for per_file in summary.values():
            per_file.pop("file")  # the result file's own path
        summaries.append(summary)
        regions = [(r["instance_id"], r["regions"]) for r in map(json.loads, rows.read_text().splitlines())]
        summaries[-1]["regions"] = regions
    assert summaries[0] == summaries[1]
    assert next(iter(summaries[0].values()))["cases"] == len(originals)


@pytest.mark.parametrize(
    ("out", "keep_suffix", "expected"),
    [
        ("d/bench.jsonl", False, "d/bench.report.json"),  # prepare
        ("d/bench.jsonl", True, "d/bench.jsonl.report.json"),  # mine
        ("d/bench", False, "d/bench.report.json"),
        ("d/bench", True, "d/bench.report.json"),
        ("d/a.b.jsonl", False, "d/a.b.report.json"),
    ],
)
def test_report_path_is_one_rule_for_prepare_and_mine(out: str, keep_suffix: bool, expected: str) -> None:
    """A bench's report sits beside it; ``mine``'s keeps the bench's suffix."""
    assert report_path(Path(out), keep_suffix=keep_suffix) == Path(expected)
