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
    header = json.loads(gzip.decompress(first).decode().splitlines()[0])
    assert header == {"base_commit": A, "bounds": {"max_commits": 5000, "since": None}, "format": 1, "n_commits": 3}


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
    with pytest.raises(HistoryError, match=r"line 2: commit aaaaaaaaaaaa: time is not an integer"):
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
