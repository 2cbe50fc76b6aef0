"""Histories read from git (chunking/history.py) and written by materialize --history (benchprep/snapshots.py).

Every repository is made here with ``git`` and fixed dates; the expected ids, statuses and hunk numbers are
worked out by hand from the edits.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from pathlib import Path

import pytest

from swe_explore.benchprep.snapshots import HistoryOptions, SnapshotTask, materialize
from swe_explore.chunking.history import HISTORY_FILE, FileChange, HistoryError, read_history, write_history
from swe_explore.chunking.history_git import (
    SECONDS_PER_YEAR,
    HistoryGitError,
    histories_from_git,
    history_for_snapshot,
    history_from_git,
)
from swe_explore.commands import materialize as materialize_cmd
from swe_explore.commands import prepare as prepare_cmd

T0 = 1_600_000_000  # 2020-09-13; commit n is dated T0 + n days


class Repo:
    """A work repository whose commits get fixed identities and dates (commit n at ``T0 + n`` days)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.n = 0
        path.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str, date: int | None = None) -> str:
        when = f"@{date if date is not None else T0 + self.n * 86400} +0000"
        env = {**os.environ, "GIT_AUTHOR_NAME": "A Person", "GIT_AUTHOR_EMAIL": "a@example.org",
               "GIT_COMMITTER_NAME": "A Person", "GIT_COMMITTER_EMAIL": "a@example.org",
               "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when, "GIT_CONFIG_GLOBAL": os.devnull}  # fmt: skip
        out = subprocess.run(["git", *args], cwd=self.path, env=env, capture_output=True, check=True)
        return out.stdout.decode().strip()

    def write(self, path: str, text: str) -> None:
        (self.path / path).parent.mkdir(parents=True, exist_ok=True)
        (self.path / path).write_text(text)

    def commit(self, message: str) -> str:
        self.n += 1
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def time(self, commit: str) -> int:
        return int(self.git("log", "-1", "--format=%ct", commit))


def lines(*items: str) -> str:
    return "".join(f"{item}\n" for item in items)


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Repo, dict[str, str]]:
    """main: c1 (add a.py, b.txt) - c2 (edit a.py) - c3 (rename b.txt -> c.txt, edit) = base - c4 (later);
    branch ``side`` from c2: c5; tag ``v9`` on c5."""
    r = Repo(tmp_path / "work")
    r.write("a.py", lines("l1", "l2", "l3", "l4", "l5"))
    r.write("b.txt", lines(*(f"row {i}" for i in range(1, 11))))
    c1 = r.commit("Initial\n\nSigned-off-by: A Person <a@example.org>")
    r.write("a.py", lines("l2", "L3", "l4", "l5", "l6"))
    c2 = r.commit("Edit a")
    r.git("mv", "b.txt", "c.txt")
    r.write("c.txt", lines(*(f"row {i}" for i in range(1, 10)), "row TEN"))
    c3 = r.commit("Rename b to c")
    r.write("later.py", "secret = 1\n")
    r.write("a.py", lines("LATER"))
    c4 = r.commit("LATERMESSAGE after the base")
    r.git("checkout", "-q", "-b", "side", c2)
    r.write("branch.py", "b = 1\n")
    c5 = r.commit("SIDEMESSAGE on a branch")
    r.git("tag", "v9")
    r.git("checkout", "-q", "main")
    return r, {"c1": c1, "c2": c2, "c3": c3, "c4": c4, "c5": c5}


def test_the_history_holds_exactly_the_ancestors_and_nothing_later(
    repo: tuple[Repo, dict[str, str]], tmp_path: Path
) -> None:
    """THE LEAK TEST: base c3 has a later commit on its branch (c4) and another branch and tag (c5); its
    history is c3, c2, c1 and the written file names neither later commit, message nor file."""
    r, c = repo
    history = history_from_git(r.path / ".git", c["c3"][:10])
    assert history.base_commit == c["c3"]
    assert [x.id for x in history.commits] == [c["c3"], c["c2"], c["c1"]]
    assert [x.time for x in history.commits] == [T0 + 3 * 86400, T0 + 2 * 86400, T0 + 86400]
    assert [x.message for x in history.commits] == ["Rename b to c", "Edit a", "Initial"]
    assert history.bounds == {"max_commits": 5000, "since": None, "merges": "skipped"}
    text = gzip.decompress(write_history(tmp_path / "h.jsonl.gz", history).read_bytes()).decode()
    for later in (c["c4"], c["c5"], c["c4"][:7], c["c5"][:7], "LATER", "SIDEMESSAGE", "later.py", "branch.py"):
        assert later not in text
    assert read_history(tmp_path / "h.jsonl.gz", c["c3"]) == history


def test_renames_and_hunk_numbers(repo: tuple[Repo, dict[str, str]]) -> None:
    """a.py "l1..l5" -> "l2 L3 l4 l5 l6": l1 deleted (-1 +0,0), l3 changed (-3 +2), l6 appended (-5,0 +5);
    b.txt renamed to c.txt with its last row changed (-10 +10); the root commit adds whole files."""
    r, c = repo
    first, second, third = history_from_git(r.path / ".git", c["c3"]).commits[::-1]
    assert first.files == (
        FileChange("a.py", "A", None, ((0, 0, 1, 5),)),
        FileChange("b.txt", "A", None, ((0, 0, 1, 10),)),
    )
    assert second.files == (FileChange("a.py", "M", None, ((1, 1, 0, 0), (3, 1, 2, 1), (5, 0, 5, 1))),)
    assert third.files == (FileChange("c.txt", "R", "b.txt", ((10, 1, 10, 1),)),)


def test_type_changes_odd_paths_and_binary_files(tmp_path: Path) -> None:
    """A file turned into a symlink is T with the deletion's and the creation's hunks; a path with a quote and
    a non-ASCII letter comes back as it is; a binary file has no hunks."""
    r = Repo(tmp_path / "work")
    r.write("f.txt", lines("one", "two"))
    r.write('d/na\u00efve "q".py', "x = 1\n")
    (r.path / "blob.bin").write_bytes(b"\0\1\2")
    r.commit("one")
    (r.path / "f.txt").unlink()
    (r.path / "f.txt").symlink_to("target")
    r.write('d/na\u00efve "q".py', "x = 2\n")
    (r.path / "blob.bin").write_bytes(b"\0\1\3")
    head = r.commit("two")
    files = history_from_git(r.path / ".git", head).commits[0].files
    assert files == (
        FileChange("blob.bin", "M"),
        FileChange('d/na\u00efve "q".py', "M", None, ((1, 1, 1, 1),)),
        FileChange("f.txt", "T", None, ((1, 2, 0, 0), (0, 0, 1, 1))),
    )


def test_max_commits_since_and_years(repo: tuple[Repo, dict[str, str]]) -> None:
    """max_commits=2 keeps c3, c2; since = c2's time keeps c3, c2; one year before c3 (days apart) keeps all;
    a bound after c3 keeps nothing."""
    r, c = repo
    git_dir = r.path / ".git"
    assert [x.id for x in history_from_git(git_dir, c["c3"], max_commits=2).commits] == [c["c3"], c["c2"]]
    since = history_from_git(git_dir, c["c3"], since=r.time(c["c2"]))
    assert [x.id for x in since.commits] == [c["c3"], c["c2"]]
    assert since.bounds["since"] == T0 + 2 * 86400
    yearly = history_from_git(git_dir, c["c3"], years=1.0, max_commits=None)
    assert len(yearly.commits) == 3
    assert yearly.bounds == {"max_commits": None, "since": T0 + 3 * 86400 - SECONDS_PER_YEAR, "merges": "skipped",
                             "years": 1.0}  # fmt: skip
    assert history_from_git(git_dir, c["c3"], years=1.5 / 365.25).commits[-1].id == c["c2"]  # 1.5 days back
    assert history_from_git(git_dir, c["c3"], since=T0 + 4 * 86400).commits == ()
    # A bound at or before the epoch is no bound (git would read --max-age=-N as "nothing"), recorded as null.
    ages = history_from_git(git_dir, c["c3"], years=1000.0, max_commits=2)
    assert [x.id for x in ages.commits] == [c["c3"], c["c2"]] and ages.bounds["since"] is None
    for bad in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="years must be a positive number"):
            history_from_git(git_dir, c["c3"], years=bad)


def test_merges_are_skipped(repo: tuple[Repo, dict[str, str]]) -> None:
    """Merging side (c5) into main (c4): the merge is not in the history, the commits of both sides are."""
    r, c = repo
    r.n = 6
    r.git("merge", "-q", "--no-ff", "-m", "Merge side", "side", date=T0 + 6 * 86400)
    merge = r.git("rev-parse", "HEAD")
    history = history_from_git(r.path / ".git", merge)
    assert history.base_commit == merge
    assert [x.id for x in history.commits] == [c["c5"], c["c4"], c["c3"], c["c2"], c["c1"]]
    assert history.bounds["merges"] == "skipped"


def test_a_blob_missing_from_the_mirror_leaves_that_change_without_hunks(tmp_path: Path) -> None:
    """Deleting the loose object of big.dat's second version (a partial mirror): the commit that made it keeps
    big.dat as M without hunks and a.py's hunks; the commit before keeps both files' hunks."""
    r = Repo(tmp_path / "work")
    r.write("a.py", "x = 1\n")
    r.write("big.dat", "data 1\n")
    first = r.commit("one")
    r.write("a.py", "x = 2\n")
    r.write("big.dat", "data 2\n")
    second = r.commit("two")
    blob = r.git("rev-parse", "HEAD:big.dat")
    (r.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    with pytest.raises(subprocess.CalledProcessError):  # git itself cannot diff it
        r.git("log", "-p", "-1")
    history = history_from_git(r.path / ".git", second)
    assert [x.id for x in history.commits] == [second, first]
    assert history.commits[0].files == (
        FileChange("a.py", "M", None, ((1, 1, 1, 1),)),
        FileChange("big.dat", "M"),
    )
    assert history.commits[1].files == (
        FileChange("a.py", "A", None, ((0, 0, 1, 1),)),
        FileChange("big.dat", "A", None, ((0, 0, 1, 1),)),
    )


def test_batch_equals_one_by_one_and_isolates_bad_commits(repo: tuple[Repo, dict[str, str]]) -> None:
    """histories_from_git over c3, c4, c5 gives what history_from_git gives for each; an unknown commit is
    listed in ``failed`` (or raised without it)."""
    r, c = repo
    git_dir = r.path / ".git"
    failed: dict[str, str] = {}
    batch = histories_from_git(git_dir, [c["c3"], c["c4"], c["c5"], "f" * 40], failed=failed)
    assert list(batch) == [c["c3"], c["c4"], c["c5"]]
    for commit in (c["c3"], c["c4"], c["c5"]):
        assert batch[commit] == history_from_git(git_dir, commit)
    assert [x.id for x in batch[c["c5"]].commits] == [c["c5"], c["c2"], c["c1"]]
    assert failed == {"f" * 40: f"commit {'f' * 40} is not in {git_dir}"}
    with pytest.raises(HistoryGitError, match="is not in"):
        history_from_git(git_dir, "f" * 40)


def test_history_for_snapshot_reads_the_file_or_the_checkout(repo: tuple[Repo, dict[str, str]], tmp_path: Path) -> None:
    """A checkout with .git gives HEAD's history (c4, c3, c2, c1 on main); a folder with a history file gives
    that file, checked against its marker; a plain folder gives None."""
    r, c = repo
    from_checkout = history_for_snapshot(r.path)
    assert from_checkout is not None
    assert [x.id for x in from_checkout.commits] == [c["c4"], c["c3"], c["c2"], c["c1"]]
    plain = tmp_path / "plain"
    plain.mkdir()
    assert history_for_snapshot(plain) is None
    write_history(plain, history_from_git(r.path / ".git", c["c3"]))
    assert history_for_snapshot(plain) == history_from_git(r.path / ".git", c["c3"])
    (plain / ".swe-explore-snapshot.json").write_text(json.dumps({"base_commit": c["c4"]}))
    with pytest.raises(HistoryError, match=f"not of {c['c4']}"):
        history_for_snapshot(plain)


def _mirror(repo: Repo, tmp_path: Path) -> Path:
    mirrors = tmp_path / "mirrors"
    (mirrors / "acme+demo").mkdir(parents=True)
    repo.git("clone", "-q", "--mirror", str(repo.path), str(mirrors / "acme+demo" / "repo"))
    return mirrors


def test_materialize_history_on_fresh_and_present_snapshots(repo: tuple[Repo, dict[str, str]], tmp_path: Path) -> None:
    """--history writes the history of new snapshots, adds it to a present one without it (its files
    unchanged), reuses one in place, and is off by default."""
    r, c = repo
    mirrors, snaps = _mirror(r, tmp_path), tmp_path / "repos"
    git_dir = mirrors / "acme+demo" / "repo"
    one, two = SnapshotTask("acme__demo-1", "acme/demo", c["c3"]), SnapshotTask("acme__demo-2", "acme/demo", c["c5"])
    plain = materialize([one], mirrors, snaps, progress=False)
    assert plain.to_dict()["made"] == 1 and "histories" not in plain.to_dict()
    assert not (snaps / one.instance_id / HISTORY_FILE).exists()
    before = sorted(p.name for p in (snaps / one.instance_id).iterdir())
    report = materialize([one, two], mirrors, snaps, progress=False, history=HistoryOptions(max_commits=2))
    assert (report.made, report.present) == ([two.instance_id], [one.instance_id])
    assert report.histories_written == [one.instance_id, two.instance_id]
    assert report.to_dict()["histories"] == {"written": 2, "reused": 0, "failed": 0, "failures": {}}
    assert read_history(snaps / one.instance_id, c["c3"]) == history_from_git(git_dir, c["c3"], max_commits=2)
    assert [x.id for x in read_history(snaps / two.instance_id, c["c5"]).commits] == [c["c5"], c["c2"]]  # type: ignore[union-attr]
    assert sorted(p.name for p in (snaps / one.instance_id).iterdir()) == sorted([*before, HISTORY_FILE])
    again = materialize([one, two], mirrors, snaps, progress=False, history=HistoryOptions())
    assert (again.histories_written, again.histories_reused) == ([], [one.instance_id, two.instance_id])
    assert again.summary().endswith("; histories: 0 written, 2 reused, 0 failed")


def test_materialize_rewrites_a_damaged_old_or_other_commits_history(
    repo: tuple[Repo, dict[str, str]], tmp_path: Path
) -> None:
    """A present snapshot's history file that is damaged, of format 1 or of another commit is written again (and
    counted written); the current one of the other snapshot stays (reused)."""
    r, c = repo
    mirrors, snaps = _mirror(r, tmp_path), tmp_path / "repos"
    one, two = SnapshotTask("acme__demo-1", "acme/demo", c["c3"]), SnapshotTask("acme__demo-2", "acme/demo", c["c5"])
    materialize([one, two], mirrors, snaps, progress=False, history=HistoryOptions())
    target = snaps / one.instance_id / HISTORY_FILE
    good = target.read_bytes()
    other = (snaps / two.instance_id / HISTORY_FILE).read_bytes()
    header, *rest = gzip.decompress(good).decode().split("\n")
    old_format = json.dumps({**json.loads(header), "format": 1}) + "\n" + "\n".join(rest)
    for bad in (good[:-20], other, gzip.compress(old_format.encode())):
        target.write_bytes(bad)
        report = materialize([one, two], mirrors, snaps, progress=False, history=HistoryOptions())
        assert (report.histories_written, report.histories_reused) == ([one.instance_id], [two.instance_id])
        assert target.read_bytes() == good


def test_the_history_index_refuses_another_commits_history(repo: tuple[Repo, dict[str, str]], tmp_path: Path) -> None:
    """A history file of another commit than the marker's is never indexed, and an index built from one before is
    refused when opened (the leak-free rule on the index path)."""
    from swe_explore.indexes.history import ensure_history_index, open_history_index

    r, c = repo
    mirrors, snaps = _mirror(r, tmp_path), tmp_path / "repos"
    one, two = SnapshotTask("acme__demo-1", "acme/demo", c["c3"]), SnapshotTask("acme__demo-2", "acme/demo", c["c5"])
    materialize([one, two], mirrors, snaps, progress=False, history=HistoryOptions())
    snapshot, store = snaps / one.instance_id, tmp_path / "store"
    assert ensure_history_index(snapshot, store) is True
    (snapshot / HISTORY_FILE).write_bytes((snaps / two.instance_id / HISTORY_FILE).read_bytes())
    with pytest.raises(HistoryError, match=f"history of commit {c['c5']}, not of {c['c3']}"):
        ensure_history_index(snapshot, store)
    # An index built from the wrong file without the marker check (as before it existed) is refused on opening.
    marker = snapshot / ".swe-explore-snapshot.json"
    saved = marker.read_bytes()
    marker.unlink()
    assert ensure_history_index(snapshot, store) is True
    marker.write_bytes(saved)
    with pytest.raises(HistoryError, match=f"history of commit {c['c5']}, not of {c['c3']}"):
        open_history_index(snapshot, store)


def test_materialize_history_failure_keeps_the_snapshot(repo: tuple[Repo, dict[str, str]], tmp_path: Path) -> None:
    """A present snapshot whose mirror is gone: the snapshot stays present, its history is listed as failed."""
    r, c = repo
    mirrors, snaps = _mirror(r, tmp_path), tmp_path / "repos"
    task = SnapshotTask("acme__demo-1", "acme/demo", c["c3"])
    materialize([task], mirrors, snaps, progress=False)
    report = materialize([task], tmp_path / "elsewhere", snaps, progress=False, history=HistoryOptions())
    assert report.present == [task.instance_id] and not report.failed
    assert list(report.history_failed) == [task.instance_id]
    assert report.history_failed[task.instance_id].startswith("no history: no mirror of acme/demo")


def test_materialize_command_with_history(
    repo: tuple[Repo, dict[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """scripts/materialize.py --history --history-commits 1 writes one-commit histories and says so."""
    r, c = repo
    mirrors, snaps = _mirror(r, tmp_path), tmp_path / "repos"
    bench = tmp_path / "bench.jsonl"
    gt = {"read_core_files": ["a.py"], "read_core_regions": [{"path": "a.py", "start": 1, "end": 1}]}
    bench.write_text(json.dumps({"instance_id": "acme__demo-1", "repo": "acme/demo", "base_commit": c["c3"],
                                 "ground_truth": gt}) + "\n")  # fmt: skip
    argv = [str(bench), "--mirrors", str(mirrors), "--repos", str(snaps), "--quiet", "--history"]
    assert materialize_cmd.main([*argv, "--history-commits", "1"]) == 0
    assert "snapshots: 1 made, 0 already present, 0 unverified (no marker), 0 failed; histories: 1 written, " \
           "0 reused, 0 failed" in capsys.readouterr().out  # fmt: skip
    history = read_history(snaps / "acme__demo-1", c["c3"])
    assert history is not None and [x.id for x in history.commits] == [c["c3"]]
    with pytest.raises(SystemExit):
        materialize_cmd.main([*argv, "--history-commits", "0"])


def test_prepare_with_history_reports_the_histories(repo: tuple[Repo, dict[str, str]], tmp_path: Path) -> None:
    """prepare_bench --mirrors --repos --history writes the snapshot with its history; the report counts it;
    --history without --mirrors is refused."""
    r, c = repo
    mirrors, snaps = _mirror(r, tmp_path), tmp_path / "snaps"
    gt = {"read_core_files": ["a.py"], "read_core_regions": [{"path": "a.py", "start": 1, "end": 1}]}
    release, source = tmp_path / "release.jsonl", tmp_path / "source.jsonl"
    release.write_text(json.dumps({"instance_id": "acme__demo-1", "ground_truth": gt, "dataset": "verified"}) + "\n")
    source.write_text(json.dumps({"instance_id": "acme__demo-1", "repo": "acme/demo", "base_commit": c["c2"],
                                  "problem_statement": "a is wrong"}) + "\n")  # fmt: skip
    out = tmp_path / "bench.jsonl"
    argv = [str(release), "--source", str(source), "--out", str(out), "--quiet", "--history"]
    with pytest.raises(SystemExit):
        prepare_cmd.main(argv)
    assert prepare_cmd.main([*argv, "--mirrors", str(mirrors), "--repos", str(snaps)]) == 0
    report = json.loads((tmp_path / "bench.report.json").read_text())
    assert report["snapshots"]["histories"] == {"written": 1, "reused": 0, "failed": 0, "failures": {}}
    history = read_history(snaps / "acme__demo-1", c["c2"])
    assert history is not None and [x.id for x in history.commits] == [c["c2"], c["c1"]]
