"""Snapshots from bare git mirrors (benchprep/snapshots.py, scripts/materialize.py, prepare_bench --repos)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from filelock import FileLock, Timeout

from swe_explore.benchprep.snapshots import (
    LOCK_FILE,
    SNAPSHOT_MARKER,
    TMP_DIR,
    SnapshotTask,
    check_snapshot,
    export_commit,
    find_mirror,
    materialize,
    read_marker,
)
from swe_explore.chunking.walk import walk_snapshot
from swe_explore.commands import materialize as materialize_cmd
from swe_explore.commands import prepare as prepare_cmd
from swe_explore.explore.reference import reference_source_files

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
}  # fmt: skip
MISSING = "f" * 40


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` with a fixed identity and date; return its stdout."""
    out = subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, capture_output=True, check=True)
    return out.stdout.decode().strip()


@pytest.fixture
def mirror(tmp_path: Path) -> dict[str, str | Path]:
    """A repository with two commits, bare-cloned as the mirror ``<mirrors>/acme+demo/repo``.

    Commit one: ``pkg/a.py`` (2 lines), ``tests/t.py``, ``VERSION.txt`` holding ``$Format:%H$`` and a
    ``.gitattributes`` marking ``tests`` export-ignore and ``VERSION.txt`` export-subst. Commit two changes a.py.
    """
    work = tmp_path / "origins" / "acme" / "demo"
    (work / "pkg").mkdir(parents=True)
    (work / "tests").mkdir()
    git(work, "init", "-q")
    (work / "pkg" / "a.py").write_text("x = 1\ny = 2\n")
    (work / "tests" / "t.py").write_text("assert True\n")
    (work / "VERSION.txt").write_text("$Format:%H$\n")
    (work / ".gitattributes").write_text("tests export-ignore\nVERSION.txt export-subst\n")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "one")
    first = git(work, "rev-parse", "HEAD")
    (work / "pkg" / "a.py").write_text("x = 10\n")
    git(work, "commit", "-q", "-am", "two")
    second = git(work, "rev-parse", "HEAD")
    mirrors = tmp_path / "mirrors"
    (mirrors / "acme+demo").mkdir(parents=True)
    git(tmp_path, "clone", "-q", "--mirror", str(work), str(mirrors / "acme+demo" / "repo"))
    return {"first": first, "second": second, "mirrors": mirrors, "origins": tmp_path / "origins"}


def files_of(snapshot: Path) -> dict[str, str]:
    """Every file of a snapshot (relative POSIX path -> text)."""
    return {p.relative_to(snapshot).as_posix(): p.read_text() for p in sorted(snapshot.rglob("*")) if p.is_file()}


def test_materialize_checkouts_with_marker_and_fails_one_record_only(
    mirror: dict[str, str | Path], tmp_path: Path
) -> None:
    """Two snapshots are the checkouts of their commits (export attributes ignored) with a marker; a missing
    commit fails its record only; nothing is left in the staging folder."""
    repos = tmp_path / "repos"
    tasks = [
        SnapshotTask("acme__demo-1", "acme/demo", str(mirror["first"])),
        SnapshotTask("acme__demo-9", "acme/demo", MISSING),
        SnapshotTask("acme__demo-2", "acme/demo", str(mirror["second"])),
    ]
    report = materialize(tasks, mirror["mirrors"], repos, progress=False)
    assert (report.made, report.present, report.unverified) == (["acme__demo-1", "acme__demo-2"], [], [])
    assert list(report.failed) == ["acme__demo-9"]
    assert report.failed["acme__demo-9"].startswith(f"commit {MISSING} of acme/demo is not in the mirror")
    first = files_of(repos / "acme__demo-1")
    marker = json.loads(first.pop(SNAPSHOT_MARKER))
    assert first == {
        ".gitattributes": "tests export-ignore\nVERSION.txt export-subst\n",
        "VERSION.txt": "$Format:%H$\n",  # a checkout does not expand export-subst
        "pkg/a.py": "x = 1\ny = 2\n",
        "tests/t.py": "assert True\n",  # nor drop export-ignore
    }
    assert {k: marker[k] for k in ("repo", "base_commit", "instance_id")} == {
        "repo": "acme/demo", "base_commit": mirror["first"], "instance_id": "acme__demo-1",
    }  # fmt: skip
    assert marker["created_at"].endswith("+00:00")
    assert files_of(repos / "acme__demo-2")["pkg/a.py"] == "x = 10\n"
    assert not (repos / "acme__demo-9").exists() and not (repos / TMP_DIR).exists()
    assert sorted(p.name for p in repos.iterdir()) == [LOCK_FILE, "acme__demo-1", "acme__demo-2"]
    assert check_snapshot(repos / "acme__demo-2", str(mirror["second"])) is None
    assert "is at commit" in str(check_snapshot(repos / "acme__demo-2", str(mirror["first"])))


def test_materialize_resumes_and_checks_snapshots_in_place(mirror: dict[str, str | Path], tmp_path: Path) -> None:
    """A second run skips complete snapshots; a marker naming another commit fails; a directory without a marker
    is left as it is and listed; a leftover staging folder is removed."""
    repos = tmp_path / "repos"
    task = SnapshotTask("acme__demo-1", "acme/demo", str(mirror["first"]))
    materialize([task], mirror["mirrors"], repos, progress=False)
    (repos / TMP_DIR / "acme__demo-7.x" / "tree").mkdir(parents=True)  # as a killed run leaves it
    (repos / "acme__demo-3").mkdir()  # made by another tool: no marker
    stale = SnapshotTask("acme__demo-1", "acme/demo", str(mirror["second"]))
    report = materialize([task, SnapshotTask("acme__demo-3", "acme/demo", str(mirror["first"]))], mirror["mirrors"],
                         repos, progress=False)  # fmt: skip
    assert (report.made, report.present, report.unverified, report.failed) == (
        [],
        ["acme__demo-1"],
        ["acme__demo-3"],
        {},
    )
    assert not (repos / TMP_DIR).exists() and list((repos / "acme__demo-3").iterdir()) == []
    report = materialize([stale], mirror["mirrors"], repos, progress=False)
    assert report.failed["acme__demo-1"] == (
        f"{repos / 'acme__demo-1'} is at commit {mirror['first']} (its marker), not {mirror['second']}; "
        f"delete it to rebuild"
    )


def test_missing_mirror_and_bad_records_fail_alone(mirror: dict[str, str | Path], tmp_path: Path) -> None:
    """A repo without a mirror, an empty commit and a bad instance_id fail their records; the others are made."""
    tasks = [
        SnapshotTask("acme__other-1", "acme/other", "a" * 40),
        SnapshotTask("acme__demo-1", "acme/demo", ""),
        SnapshotTask("../evil", "acme/demo", str(mirror["first"])),
        SnapshotTask("acme__demo-2", "acme/demo", str(mirror["second"])),
    ]
    report = materialize(tasks, mirror["mirrors"], tmp_path / "repos", progress=False)
    assert report.made == ["acme__demo-2"]
    assert report.failed == {
        "acme__other-1": f"no mirror of acme/other at {mirror['mirrors']}/acme+other/repo (pass --clone-missing "
                         f"to clone https://github.com/acme/other)",
        "acme__demo-1": "base_commit '' is not a hex commit id",
        "../evil": "instance_id '../evil' cannot name a snapshot folder",
    }  # fmt: skip


def test_clone_missing_makes_the_mirror(mirror: dict[str, str | Path], tmp_path: Path) -> None:
    """With clone_missing a missing mirror is cloned (here from a local path, never the network) and used."""
    mirrors = tmp_path / "new-mirrors"
    task = SnapshotTask("acme__demo-2", "acme/demo", str(mirror["second"]))
    report = materialize([task], mirrors, tmp_path / "repos", clone_missing=True, progress=False,
                         clone_url=f"{mirror['origins']}/{{repo}}")  # fmt: skip
    assert (report.cloned, report.made) == (["acme/demo"], ["acme__demo-2"])
    assert find_mirror(mirrors, "ACME/Demo") == mirrors / "acme+demo" / "repo"  # folder name matched ignoring case
    assert git(mirrors / "acme+demo" / "repo", "rev-parse", "--is-bare-repository") == "true"


def test_one_materialisation_at_a_time(mirror: dict[str, str | Path], tmp_path: Path) -> None:
    """While another run holds <repos>'s lock, materialize raises Timeout naming the directory."""
    repos = tmp_path / "repos"
    repos.mkdir()
    with FileLock(str(repos / LOCK_FILE)), pytest.raises(Timeout, match="another materialisation is writing"):
        materialize([], mirror["mirrors"], repos, progress=False)


def test_walkers_skip_the_marker(mirror: dict[str, str | Path], tmp_path: Path) -> None:
    """Neither the snapshot walker nor the reference file discovery indexes the marker file (a .json file, which
    both would index otherwise)."""
    repos = tmp_path / "repos"
    materialize([SnapshotTask("acme__demo-1", "acme/demo", str(mirror["first"]))], mirror["mirrors"], repos,
                progress=False)  # fmt: skip
    files, stats = walk_snapshot(repos / "acme__demo-1")
    assert [f.path for f in files] == ["VERSION.txt", "pkg/a.py", "tests/t.py"]
    assert stats.skipped["snapshot_marker"] == 1
    assert reference_source_files(repos / "acme__demo-1") == ["VERSION.txt", "pkg/a.py", "tests/t.py"]
    assert read_marker(repos / "acme__demo-1")["instance_id"] == "acme__demo-1"  # type: ignore[index]


def test_materialize_command(mirror: dict[str, str | Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """scripts/materialize.py makes every record's snapshot; a missing commit is listed and exits 1."""
    gt = {"read_core_files": ["pkg/a.py"], "read_core_regions": [{"path": "pkg/a.py", "start": 1, "end": 1}]}
    bench = tmp_path / "bench.jsonl"
    rows = [{"instance_id": f"acme__demo-{i}", "repo": "acme/demo", "base_commit": c, "ground_truth": gt}
            for i, c in ((1, mirror["first"]), (2, MISSING))]  # fmt: skip
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = [str(bench), "--mirrors", str(mirror["mirrors"]), "--repos", str(tmp_path / "repos"), "--quiet"]
    assert materialize_cmd.main(argv) == 1
    captured = capsys.readouterr()
    assert "snapshots: 1 made, 0 already present, 0 unverified (no marker), 1 failed" in captured.out
    assert f"acme__demo-2: commit {MISSING} of acme/demo is not in the mirror" in captured.err
    assert (tmp_path / "repos" / "acme__demo-1" / "pkg" / "a.py").is_file()


def test_prepare_with_mirrors_makes_the_snapshots(mirror: dict[str, str | Path], tmp_path: Path) -> None:
    """prepare_bench --mirrors --repos writes the bench, then the snapshots of its records; the report has both."""
    gt = {"read_core_files": ["pkg/a.py"], "read_core_regions": [{"path": "pkg/a.py", "start": 1, "end": 2}]}
    release = tmp_path / "release.jsonl"
    release.write_text(json.dumps({"instance_id": "acme__demo-1", "repo_dir": "repos/acme__demo-1",
                                   "ground_truth": gt, "dataset": "verified"}) + "\n")  # fmt: skip
    source = tmp_path / "source.jsonl"
    source.write_text(json.dumps({"instance_id": "acme__demo-1", "repo": "acme/demo", "base_commit": mirror["first"],
                                  "problem_statement": "a is wrong"}) + "\n")  # fmt: skip
    out, repos = tmp_path / "bench.jsonl", tmp_path / "snaps"
    argv = [str(release), "--source", str(source), "--out", str(out), "--mirrors", str(mirror["mirrors"]),
            "--repos", str(repos), "--quiet"]  # fmt: skip
    assert prepare_cmd.main(argv) == 0
    assert json.loads(out.read_text())["base_commit"] == mirror["first"]
    report = json.loads((tmp_path / "bench.report.json").read_text())
    assert (report["snapshots"]["made"], report["snapshots"]["failed"]) == (1, 0)
    assert "found_elsewhere" not in report["snapshots"]
    assert (repos / "acme__demo-1" / "pkg" / "a.py").read_text() == "x = 1\ny = 2\n"


def test_blobs_missing_from_the_mirror_are_left_out_and_listed(tmp_path: Path) -> None:
    """A mirror without one file's blob (partial mirrors omit large files) still gives a snapshot: the file is
    absent and the marker lists it under ``missing_files``."""
    repo = tmp_path / "src"
    repo.mkdir()
    (repo / "a.py").write_text("x = 1\n")
    (repo / "big.dat").write_text("data\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    blob = subprocess.run([*git, "rev-parse", "HEAD:big.dat"], capture_output=True, text=True, check=True).stdout
    (repo / ".git" / "objects" / blob[:2] / blob.strip()[2:]).unlink()  # loose object of the new repo
    target = export_commit(repo / ".git", SnapshotTask("o__r-1", "o/r", head), tmp_path / "repos")
    assert sorted(p.name for p in target.iterdir()) == [".swe-explore-snapshot.json", "a.py"]
    marker = read_marker(target)
    assert marker is not None and marker["missing_files"] == ["big.dat"]


def test_relative_paths_give_the_whole_checkout(
    mirror: dict[str, str | Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Relative mirror and snapshot folders (``--repos repos/dev`` as the README writes it) give the same files as
    absolute ones; they used to give a snapshot holding only its marker."""
    monkeypatch.chdir(tmp_path)
    report = materialize(
        [SnapshotTask("acme__demo-2", "acme/demo", str(mirror["second"]))], "mirrors", Path("rel") / "repos",
        progress=False,
    )  # fmt: skip
    assert report.made == ["acme__demo-2"]
    files = files_of(tmp_path / "rel" / "repos" / "acme__demo-2")
    assert sorted(files) == [".gitattributes", SNAPSHOT_MARKER, "VERSION.txt", "pkg/a.py", "tests/t.py"]
    assert files["pkg/a.py"] == "x = 10\n"
