"""The snapshot history file: round trip, deterministic bytes, checks, and the walker skipping it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from swe_explore.chunking.history import (
    HISTORY_FILE,
    Commit,
    FileChange,
    History,
    HistoryError,
    author_free,
    changed_paths,
    commits_touching,
    read_history,
    read_history_columns,
    write_history,
)
from swe_explore.chunking.walk import WalkConfig, WalkStats, iter_source_files

A = "a" * 40
B = "b" * 40
C = "c" * 40


def _history() -> History:
    return History(
        A,
        (
            Commit(A, 300, "Fix the parser", (FileChange("src/p.py", "M", None, ((10, 2, 10, 3),)),)),
            Commit(B, 200, "Rename util", (FileChange("src/u2.py", "R", "src/u.py"), FileChange("src/p.py", "M"))),
            Commit(C, 100, "Initial", (FileChange("src/u.py", "A", None, ((0, 0, 1, 40),)),)),
        ),
        {"max_commits": 5000, "since": None},
    )


def test_round_trip_and_deterministic_bytes(tmp_path: Path) -> None:
    path = write_history(tmp_path, _history())
    assert path == tmp_path / HISTORY_FILE
    first = path.read_bytes()
    write_history(tmp_path, _history())
    assert path.read_bytes() == first
    assert read_history(tmp_path, A[:12]) == _history()
    lines = gzip.decompress(first).decode().splitlines()
    assert json.loads(lines[0]) == {
        "base_commit": A,
        "bounds": {"max_commits": 5000, "since": None},
        "format": 2,
        "n_commits": 3,
    }
    assert json.loads(lines[1]) == {
        "files": [["src/p.py", "M", None, "10 2 10 3"]],
        "id": A,
        "message": "Fix the parser",
        "time": 300,
    }
    assert json.loads(lines[2])["files"] == [["src/u2.py", "R", "src/u.py", ""], ["src/p.py", "M", None, ""]]


def test_no_file_is_none_and_another_commit_is_an_error(tmp_path: Path) -> None:
    assert read_history(tmp_path) is None
    write_history(tmp_path, _history())
    with pytest.raises(HistoryError, match=f"history of commit {A}, not of {B}"):
        read_history(tmp_path, B)


def test_a_bad_line_names_the_file_and_line(tmp_path: Path) -> None:
    target = tmp_path / HISTORY_FILE
    header = {"format": 1, "base_commit": A, "n_commits": 1, "bounds": {}}
    bad = {"id": A, "time": "noon", "message": "", "files": []}
    target.write_bytes(gzip.compress((json.dumps(header) + "\n" + json.dumps(bad) + "\n").encode()))
    with pytest.raises(HistoryError, match=r"line 2: commit aaaaaaaaaaaa: time is not a 64-bit integer"):
        read_history(target)
    target.write_bytes(b"not gzip")
    with pytest.raises(HistoryError, match="not a readable history file"):
        read_history(target)


def test_author_trailers_are_dropped() -> None:
    message = "Fix x\n\nDetails.\n\nSigned-off-by: A Person <a@example.org>\nCo-authored-by: B <b@example.org>\n"
    assert author_free(message) == "Fix x\n\nDetails."


def test_commits_touching_counts_renames_for_both_paths() -> None:
    history = _history()
    assert commits_touching(history, ["src/p.py", "src/u.py", "src/u2.py", "x.py"]) == {
        "src/p.py": [0, 1],
        "src/u.py": [1, 2],
        "src/u2.py": [1],
    }
    assert changed_paths(history.commits) == ["src/p.py", "src/u.py", "src/u2.py"]


def test_the_walker_skips_the_history_file(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = 1\n")
    write_history(tmp_path, _history())
    stats = WalkStats()
    assert [f.path for f in iter_source_files(tmp_path, WalkConfig(), stats)] == ["m.py"]
    assert stats.skipped == {"snapshot_history": 1}


def test_a_message_with_unicode_line_separators_round_trips(tmp_path: Path) -> None:
    odd = "Fix\u2028the\x85parser\x1cnow"
    history = History(A, (Commit(A, 1, odd),), {})
    write_history(tmp_path, history)
    assert read_history(tmp_path) == history


def _write_lines(target: Path, fmt: int, commits: list[dict[str, object]]) -> None:
    header = {"format": fmt, "base_commit": A, "n_commits": len(commits), "bounds": {}}
    lines = [json.dumps(header)] + [json.dumps(c) for c in commits]
    target.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))


def test_a_format_1_file_reads_as_the_same_history_and_columns(tmp_path: Path) -> None:
    old = [
        {"id": A, "time": 300, "message": "Fix the parser", "files": [{"path": "src/p.py", "hunks": [[10, 2, 10, 3]]}]},
        {
            "id": B,
            "time": 200,
            "message": "Rename util",
            "files": [{"path": "src/u2.py", "status": "R", "old_path": "src/u.py"}, {"path": "src/p.py"}],
        },
        {
            "id": C,
            "time": 100,
            "message": "Initial",
            "files": [{"path": "src/u.py", "status": "A", "hunks": [[0, 0, 1, 40]]}],
        },
    ]
    _write_lines(tmp_path / "v1.jsonl.gz", 1, old)
    v2 = write_history(tmp_path / "v2.jsonl.gz", _history())
    expected = History(A, _history().commits, {})
    assert read_history(tmp_path / "v1.jsonl.gz") == expected
    assert read_history(v2) == _history()
    for cols in (read_history_columns(tmp_path / "v1.jsonl.gz"), read_history_columns(v2)):
        assert cols is not None
        assert cols.ids == [A, B, C] and cols.times.tolist() == [300, 200, 100]
        assert cols.file_ptr.tolist() == [0, 1, 3, 4]
        assert cols.paths == ["src/p.py", "src/u2.py", "src/p.py", "src/u.py"]
        assert cols.statuses == ["M", "R", "M", "A"] and cols.old_paths == [None, "src/u.py", None, None]
        assert cols.hunk_ptr.tolist() == [0, 1, 1, 1, 2]
        assert cols.hunks.tolist() == [[10, 2, 10, 3], [0, 0, 1, 40]]
        assert cols.to_history().commits == _history().commits


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        (["src/p.py", "M", None, "10 2 10"], "src/p.py: hunks are not groups of four numbers"),
        (["src/p.py", "M", None, "10  2 10 3"], "src/p.py: hunks are not groups of four numbers"),
        (["src/p.py", "M", None, "10 2 10 3 "], "src/p.py: hunks are not groups of four numbers"),
        (["src/p.py", "M", None, "-1 2 10 3"], "src/p.py: hunks are not groups of four numbers"),
        (["src/p.py", "M", None, "1 2 10 1000000000"], "src/p.py: hunks are not groups of four numbers"),
        (["src/p.py", "M", None, [1, 2, 3, 4]], "src/p.py: hunks are not groups of four numbers"),
        (["src/p.py", "M", None, None], "src/p.py: hunks are not groups of four numbers"),
        (["src/p.py", "M", None, 0], "src/p.py: hunks are not groups of four numbers"),
        (["src/p.py", "X", None, ""], "src/p.py: unknown status 'X'"),
        (["src/p.py", "R", 7, ""], "src/p.py: old_path is not a string"),
        (["", "M", None, ""], "a file change without a path"),
        ({"path": "src/p.py"}, r"a file change is not a list \[path, status, old_path, hunks\]"),
    ],
)
def test_a_bad_format_2_change_names_the_line_and_the_problem(tmp_path: Path, row: object, problem: str) -> None:
    good = {"id": A, "time": 2, "message": "ok", "files": [["a.py", "M", None, "1 1 1 1"]]}
    bad = {"id": B, "time": 1, "message": "bad", "files": [["b.py", "A", None, ""], row]}
    _write_lines(tmp_path / HISTORY_FILE, 2, [good, bad])
    for reader in (read_history, read_history_columns):
        with pytest.raises(HistoryError, match=rf"line 3: commit bbbbbbbbbbbb: {problem}"):
            reader(tmp_path)


def test_the_writer_refuses_a_hunk_number_the_format_cannot_hold(tmp_path: Path) -> None:
    huge = History(A, (Commit(A, 1, "x", (FileChange("p.py", "M", None, ((1, 1, 10**9, 1),)),)),), {})
    with pytest.raises(ValueError, match=r"p\.py: a hunk number outside 0\.\.999999999"):
        write_history(tmp_path, huge)
    assert not (tmp_path / HISTORY_FILE).exists()


def test_times_hunk_bounds_header_bounds_and_commit_prefixes_are_checked(tmp_path: Path) -> None:
    """A time beyond 64 bits (both formats), a format-1 hunk number beyond the format's bound, header bounds that
    are not an object: a HistoryError naming the file; a base_commit shorter than 7 digits: a ValueError."""
    huge = {"id": A, "time": 10**20, "message": "x", "files": []}
    for fmt in (1, 2):
        _write_lines(tmp_path / HISTORY_FILE, fmt, [huge])
        for reader in (read_history, read_history_columns):
            with pytest.raises(HistoryError, match="line 2: commit aaaaaaaaaaaa: time is not a 64-bit integer"):
                reader(tmp_path)
    wide = {"id": A, "time": 1, "message": "x", "files": [{"path": "p.py", "hunks": [[1, 2, 3, 10**10]]}]}
    _write_lines(tmp_path / HISTORY_FILE, 1, [wide])
    with pytest.raises(HistoryError, match=r"p\.py: hunks are not lists of four integers in 0\.\.999999999"):
        read_history(tmp_path)
    header = {"format": 2, "base_commit": A, "n_commits": 0, "bounds": "x"}
    (tmp_path / HISTORY_FILE).write_bytes(gzip.compress((json.dumps(header) + "\n").encode()))
    with pytest.raises(HistoryError, match="header bounds is not a JSON object"):
        read_history(tmp_path)
    write_history(tmp_path, _history())
    with pytest.raises(ValueError, match="base_commit must be 7 to 40 hex digits"):
        read_history(tmp_path, A[:6])
