"""The one atomic file writer (chunking/atomic.py): content, permissions, and nothing left behind on failure."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from swe_explore.chunking.atomic import write_bytes_atomic, write_text_atomic


@pytest.fixture
def set_umask() -> Iterator[Callable[[int], int]]:
    """Set the process umask for one test and restore it afterwards."""
    old = os.umask(0o022)
    os.umask(old)
    yield lambda mask: os.umask(mask)
    os.umask(old)


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_mode_is_what_a_plain_open_gives(
    tmp_path: Path, set_umask: Callable[[int], int], umask: int, mode: int
) -> None:
    set_umask(umask)
    path = tmp_path / "out.json"
    write_text_atomic(path, "{}\n")
    plain = tmp_path / "plain.json"
    plain.write_text("{}\n")
    assert path.stat().st_mode & 0o777 == mode == plain.stat().st_mode & 0o777


def test_writes_text_and_bytes_exactly(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "dir" / "a.txt"  # the directory is created
    write_text_atomic(path, "é\r\nx\n")
    assert path.read_bytes() == b"\xc3\xa9\r\nx\n"  # newlines as given, UTF-8
    write_text_atomic(path, "é", encoding="latin-1")
    assert path.read_bytes() == b"\xe9"
    write_bytes_atomic(path, b"\x00\x01")
    assert path.read_bytes() == b"\x00\x01"
    assert os.listdir(path.parent) == ["a.txt"]  # no temporary left


def test_failed_replace_removes_the_temporary_and_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "bench.jsonl"
    path.write_text("old\n")

    def fail(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("swe_explore.chunking.atomic.os.replace", fail)
    with pytest.raises(OSError, match="No space left"):
        write_text_atomic(path, "new\n")
    assert path.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["bench.jsonl"]


def test_failed_encoding_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        write_text_atomic(path, "é", encoding="ascii")
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["a.txt"]


def test_temporary_goes_to_temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    seen: list[str] = []
    real = os.replace

    def spy(src: str | Path, dst: str | Path) -> None:
        seen.append(Path(src).parent.name)
        real(src, dst)

    monkeypatch.setattr("swe_explore.chunking.atomic.os.replace", spy)
    write_bytes_atomic(tmp_path / "x.pack", b"abc", temp_dir=scratch)
    assert seen == ["scratch"] and (tmp_path / "x.pack").read_bytes() == b"abc" and os.listdir(scratch) == []


def test_concurrent_writers_use_distinct_temporaries(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    texts = [f"writer {i}\n" * 1000 for i in range(8)]
    threads = [threading.Thread(target=write_text_atomic, args=(path, text)) for text in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert path.read_text() in texts and os.listdir(tmp_path) == ["a.txt"]
