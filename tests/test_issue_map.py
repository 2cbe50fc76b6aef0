"""Reading release rows as they are: load_bench without issue text, --issue-map, repo from Pro ids, repo_dir."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from swe_explore import MINI_BENCH, MINI_REPOS
from swe_explore.commands import run as run_cmd
from swe_explore.commands._args import add_bench_arguments, load_bench_args
from swe_explore.evaluation.bench import (
    BenchRecord,
    find_snapshot,
    load_bench,
    load_issue_map,
    repo_from_instance_id,
    snapshot_candidates,
)

PRO_ID = "ansible__ansible-f327e65d11bb905ed9f15996024f857a95592629-vba6da65a0f3baefda7a058ebbd0a8dcafb8512f5"


def release_row(iid: str) -> dict[str, Any]:
    """A row in the public release's layout: no repo, base_commit or problem_statement."""
    return {
        "instance_id": iid,
        "repo_path": "/testbed",
        "repo_dir": f"repos/{iid}",
        "ground_truth": {
            "read_core_files": ["a.py"],
            "read_core_regions": [{"path": "a.py", "start": 1, "end": -1}],
            "read_optional_files_map": {"m": ["b.py"]},
            "read_optional_regions_map": {"m": [{"path": "b.py", "start": 7, "end": 2}]},
            "modified_core_files": ["a.py"],
            "main_files": ["a.py"],
        },
        "read_step_info": {},
        "meta": {"num_trajectories": 3},
        "dataset": "pro" if iid == PRO_ID else "verified",
    }


@pytest.fixture
def release(tmp_path: Path) -> Path:
    """Two release rows (a Verified-style id and a Pro id without its instance_ prefix)."""
    path = tmp_path / "release.jsonl"
    path.write_text("".join(json.dumps(release_row(i)) + "\n" for i in ("psf__requests-1142", PRO_ID)))
    return path


@pytest.mark.parametrize(
    ("instance_id", "repo"),
    [
        ("psf__requests-1142", "psf/requests"),
        ("scikit-learn__scikit-learn-10297", "scikit-learn/scikit-learn"),
        (PRO_ID, "ansible/ansible"),  # was "ansible/ansible-f327e65..." before
        ("instance_NodeBB__NodeBB-04998908ba6721d64eba79ae3b65a351dcfbc5b5-vnan", "NodeBB/NodeBB"),
        ("element-hq__element-web-f0359a5c180b8fec4329c77adcf967c8d3b7b787-vnan", "element-hq/element-web"),
        ("flipt-io__flipt-b2cd6a6dd73ca91b519015fd5924fde8d17f3f06", "flipt-io/flipt"),  # Pro id without -v suffix
        ("mini__pyshop-1", "mini/pyshop"),
        ("org__name", ""),  # no number or commit: not guessed
        ("django__django-11099_run1", ""),
        ("no-double-underscore-1", ""),
    ],
)
def test_repo_from_instance_id(instance_id: str, repo: str) -> None:
    """SWE-bench, Multilingual and Pro ids give owner/name; other shapes give "" rather than a wrong guess."""
    assert repo_from_instance_id(instance_id) == repo


def test_release_rows_load_without_issue_text(release: Path) -> None:
    """Release rows load when no query is needed: empty query, repo from the id, no commit."""
    records = load_bench(release, require_query=False)
    assert [(r.instance_id, r.repo, r.base_commit, r.query) for r in records] == [
        ("psf__requests-1142", "psf/requests", "", ""),
        (PRO_ID, "ansible/ansible", "", ""),
    ]
    assert records[1].repo_dir == f"repos/{PRO_ID}"


def test_release_rows_need_issue_text_for_a_query(release: Path) -> None:
    """Without --issue-map a release row has no query: the error names file, line, record and the remedy."""
    with pytest.raises(
        ValueError,
        match=r"release.jsonl:1 \(psf__requests-1142\): missing or empty "
        r"'problem_statement' \(the query; give the issue text with --issue-map",
    ):
        load_bench(release)


def test_issue_map_gives_the_query(release: Path, tmp_path: Path) -> None:
    """The issue map's texts become the queries; a record missing from it is an error naming it."""
    issue_map = {"psf__requests-1142": "Session drops cookies", PRO_ID: "Vault fails", "other__x-1": "unused"}
    records = load_bench(release, issue_map=issue_map)
    assert [r.query for r in records] == ["Session drops cookies", "Vault fails"]
    with pytest.raises(ValueError, match=rf"release.jsonl:2 \({PRO_ID}\): no issue text: not in the issue map"):
        load_bench(release, issue_map={"psf__requests-1142": "Session drops cookies", PRO_ID: ""})


def test_issue_map_wins_over_the_bench_text(tmp_path: Path) -> None:
    """As in the reference runner, a non-empty map text replaces the record's own problem_statement."""
    path = tmp_path / "b.jsonl"
    path.write_text(json.dumps(release_row("psf__requests-1142") | {"problem_statement": "own"}) + "\n")
    assert load_bench(path, issue_map={"psf__requests-1142": "mapped"})[0].query == "mapped"
    assert load_bench(path, issue_map={})[0].query == "own"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('["a"]', "expected a JSON object {instance_id: issue text}, got list"),
        ('{"a__b-1": 3}', "the issue text of 'a__b-1' is int, expected a string"),
        ("{", "invalid JSON"),
    ],
)
def test_load_issue_map_errors(tmp_path: Path, content: str, message: str) -> None:
    """A malformed issue map raises ValueError naming the file."""
    path = tmp_path / "map.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=rf"map.json: {message}".replace("{", r"\{").replace("[", r"\[")):
        load_issue_map(path)
    with pytest.raises(FileNotFoundError, match=r"issue map .*missing\.json does not exist"):
        load_issue_map(tmp_path / "missing.json")


def _parse(argv: list[str]) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    parser = argparse.ArgumentParser(prog="tool")
    add_bench_arguments(parser)
    return parser, parser.parse_args(argv)


def test_cli_issue_map_option(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--issue-map is a bench option of every script; without a text for a record the script exits 2 naming it."""
    (tmp_path / "map.json").write_text(json.dumps({"psf__requests-1142": "t1", PRO_ID: "t2"}))
    parser, args = _parse(
        ["--bench", str(release), "--repos", str(tmp_path), "--issue-map", str(tmp_path / "map.json")]
    )
    assert [r.query for r in load_bench_args(parser, args)] == ["t1", "t2"]
    (tmp_path / "map.json").write_text(json.dumps({"psf__requests-1142": "t1"}))
    with pytest.raises(SystemExit) as exc:
        load_bench_args(parser, args)
    assert exc.value.code == 2
    assert f"release.jsonl:2 ({PRO_ID}): no issue text: not in the issue map" in capsys.readouterr().err
    parser, args = _parse(["--bench", str(release), "--repos", str(tmp_path)])
    assert [r.query for r in load_bench_args(parser, args, require_query=False)] == ["", ""]


def test_run_baselines_on_release_rows_with_issue_map(tmp_path: Path) -> None:
    """run_baselines on release-format mini records + --issue-map gives the rows of the mini bench itself."""
    originals = [json.loads(line) for line in MINI_BENCH.read_text().splitlines() if line.strip()]
    stripped = [
        {k: v for k, v in r.items() if k not in ("repo", "base_commit", "problem_statement")} for r in originals
    ]
    bench = tmp_path / "release.jsonl"
    bench.write_text("".join(json.dumps(r | {"repo_dir": f"repos/{r['instance_id']}"}) + "\n" for r in stripped))
    (tmp_path / "map.json").write_text(json.dumps({r["instance_id"]: r["problem_statement"] for r in originals}))
    rows = {}
    for name, extra in (("release", ["--bench", str(bench), "--issue-map", str(tmp_path / "map.json")]),
                        ("mini", ["--bench", str(MINI_BENCH)])):  # fmt: skip
        out = tmp_path / f"{name}-rows.jsonl"
        argv = [*extra, "--repos", str(MINI_REPOS), "--out", str(out), "--store", str(tmp_path / "store"), "--quiet"]
        assert run_cmd.main(argv) == 0
        rows[name] = [
            (r["instance_id"], r["regions"], r["metrics"]) for r in map(json.loads, out.read_text().splitlines())
        ]
    assert rows["release"] == rows["mini"] and len(rows["mini"]) == len(originals)


def test_snapshot_of_release_repo_dir_under_any_repos_name(tmp_path: Path) -> None:
    """The release's repo_dir ``repos/<instance_id>`` finds <repos>/<instance_id> whatever --repos is called."""
    record = BenchRecord("psf__requests-1142", "psf/requests", "", "q", {}, repo_dir="repos/psf__requests-1142")
    snapshots = tmp_path / "dev-prepared-repos"
    (snapshots / "psf__requests-1142").mkdir(parents=True)
    assert snapshot_candidates(record, snapshots) == [
        snapshots / "psf__requests-1142",
        snapshots / "repos" / "psf__requests-1142",
    ]
    assert find_snapshot(record, snapshots) == snapshots / "psf__requests-1142"
    (snapshots / "psf__requests-1142").rmdir()
    (snapshots / "repos" / "psf__requests-1142").mkdir(parents=True)  # repo_dir under --repos when that is absent
    assert find_snapshot(record, snapshots) == snapshots / "repos" / "psf__requests-1142"
