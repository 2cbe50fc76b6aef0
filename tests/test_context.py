"""The repair bridge (evaluation/context.py, ``swe-explore context``): exactly the predicted lines are visible."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from swe_explore.chunking.lines import count_lines
from swe_explore.commands.context import main
from swe_explore.evaluation.bench import load_bench
from swe_explore.evaluation.context import restricted_file, write_contexts
from swe_explore.evaluation.results import make_row

IID = "org__repo-1"
A_PY = "".join(f"a{i}\n" for i in range(1, 11)).encode()  # 10 lines, LF, final newline
B_TXT = b"b1\r\nb2\r\nb3"  # 3 lines, CRLF, the last unterminated
REGIONS = [
    {"path": "a.py", "start": 2, "end": 3},
    {"path": "a.py", "start": 4, "end": 5},  # adjacent to 2-3: merged into 2-5
    {"path": "b.txt", "start": 3, "end": 9},  # past the last line (3): clipped
    {"path": "missing.py", "start": 1, "end": 2},  # no such file: reported
    {"path": "a.py", "start": 20, "end": 25},  # wholly past the end: reported
    {"path": "a.py", "start": 9, "end": 9},
    {"path": "b.txt", "start": 1, "end": 1},
]


def _bench(tmp_path: Path) -> tuple[Path, Path]:
    """A one-instance bench and its snapshot: a.py, b.txt (CRLF), c.py (no region), sub/d.go (no region)."""
    snapshot = tmp_path / "repos" / IID
    (snapshot / "sub").mkdir(parents=True)
    (snapshot / "a.py").write_bytes(A_PY)
    (snapshot / "b.txt").write_bytes(B_TXT)
    (snapshot / "c.py").write_bytes(b"c1\n")
    (snapshot / "sub" / "d.go").write_bytes(b"package d\n")
    record = {
        "instance_id": IID,
        "repo": "org/repo",
        "problem_statement": "fix a",
        "ground_truth": {"read_core_files": ["a.py"], "read_core_regions": [{"path": "a.py", "start": 2, "end": 3}]},
    }
    bench = tmp_path / "bench.jsonl"
    bench.write_text(json.dumps(record) + "\n")
    return bench, tmp_path / "repos"


def _results(tmp_path: Path, regions: list[dict[str, Any]] = REGIONS) -> Path:
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(make_row(IID, "x", regions)) + "\n")
    return path


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


EXPECTED_DOC = """# Context: org__repo-1

4 region(s), 7 line(s), 2 file(s).

## a.py:2-5

```
2 | a2
3 | a3
4 | a4
5 | a5
```

## b.txt:3-3

```
3 | b3
```

## a.py:9-9

```
9 | a9
```

## b.txt:1-1

```
1 | b1
```
"""


def test_blank_mode_keeps_exactly_the_predicted_lines_at_their_numbers(tmp_path: Path) -> None:
    """Default mode: files without a region are gone; hidden lines are empty, visible ones byte-identical, and
    every file keeps its line count; the document shows the merged regions in the row's order."""
    bench, repos = _bench(tmp_path)
    out = tmp_path / "out"
    assert main([str(_results(tmp_path)), "--bench", str(bench), "--repos", str(repos), "--out", str(out)]) == 0
    files = _files(out / IID / "snapshot")
    assert files == {
        "a.py": b"\na2\na3\na4\na5\n\n\n\na9\n\n",
        "b.txt": b"b1\r\n\r\nb3",
    }
    assert count_lines(files["a.py"]) == 10 and count_lines(files["b.txt"]) == 3
    assert not (out / IID / "line_map.json").exists()
    document = (out / IID / "context.md").read_text()
    assert document == EXPECTED_DOC
    context = json.loads((out / IID / "context.json").read_text())
    assert context["shown"] == [
        {"path": "a.py", "start": 2, "end": 5},
        {"path": "b.txt", "start": 3, "end": 3},
        {"path": "a.py", "start": 9, "end": 9},
        {"path": "b.txt", "start": 1, "end": 1},
    ]
    assert (context["files"], context["visible_lines"]) == (2, 7)
    assert (context["context_lines"], context["context_chars"]) == (EXPECTED_DOC.count("\n"), len(EXPECTED_DOC))
    assert context["problems"] == [
        {"region": {"path": "b.txt", "start": 3, "end": 9}, "problem": "clipped"},
        {"region": {"path": "missing.py", "start": 1, "end": 2}, "problem": "no_such_file"},
        {"region": {"path": "a.py", "start": 20, "end": 25}, "problem": "past_end"},
    ]
    summary = json.loads((out / "summary.json").read_text())
    assert summary == {"mode": "blank", "instances": [context]}


def test_remove_mode_keeps_only_the_predicted_lines_with_a_line_map(tmp_path: Path) -> None:
    """--mode remove: only visible lines, in file order, with their terminators; the map gives their numbers."""
    bench, repos = _bench(tmp_path)
    out = tmp_path / "out"
    argv = [str(_results(tmp_path)), "--bench", str(bench), "--repos", str(repos), "--out", str(out)]
    assert main([*argv, "--mode", "remove"]) == 0
    assert _files(out / IID / "snapshot") == {"a.py": b"a2\na3\na4\na5\na9\n", "b.txt": b"b1\r\nb3"}
    line_map = json.loads((out / IID / "line_map.json").read_text())
    assert line_map == {"a.py": {"1": 2, "2": 3, "3": 4, "4": 5, "5": 9}, "b.txt": {"1": 1, "2": 3}}
    assert (out / IID / "context.md").read_text() == EXPECTED_DOC


def test_sentinels_resolve_against_the_file_and_a_hidden_unterminated_last_line_stays_a_line() -> None:
    """A hidden last line without terminator becomes an empty terminated line (the count stays 2); a classic-Mac
    file keeps its ``\\r``; a UTF-8 BOM is kept."""
    assert restricted_file(b"e1\ne2", [(1, 1)], "blank") == (b"e1\n\n", {})
    assert restricted_file(b"m1\rm2\rm3\r", [(2, 2)], "blank") == (b"\rm2\r\r", {})
    assert restricted_file(b"\xef\xbb\xbfx\ny\n", [(2, 2)], "remove") == (b"\xef\xbb\xbfy\n", {"1": 2})
    with pytest.raises(ValueError, match="unknown mode"):
        restricted_file(b"x\n", [], "hide")


def test_end_of_file_sentinels_and_resume(tmp_path: Path) -> None:
    """``end: -1`` and a negative start resolve against the predicted file, as the metrics resolve them; a second
    run skips the written instance, another mode rewrites it."""
    bench, repos = _bench(tmp_path)
    records = load_bench(bench)
    rows = [make_row(IID, "x", [{"path": "a.py", "start": -2, "end": -1}, {"path": "b.txt", "start": 2, "end": -1}])]
    out = tmp_path / "out"
    run = write_contexts(rows, records, repos, out)
    assert run.written == [IID]
    assert _files(out / IID / "snapshot") == {"a.py": b"\n" * 8 + b"a9\na10\n", "b.txt": b"\r\nb2\r\nb3"}
    assert write_contexts(rows, records, repos, out).skipped == [IID]
    again = write_contexts(rows, records, repos, out, mode="remove")
    assert again.written == [IID]
    assert _files(out / IID / "snapshot") == {"a.py": b"a9\na10\n", "b.txt": b"b2\r\nb3"}
    assert sorted(p.name for p in out.iterdir()) == [IID, "summary.json"]  # no temporary left behind


def test_failed_rows_missing_rows_and_foreign_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A failed row gives an empty context; a row of an instance outside the bench is a one-line error (exit 2)."""
    bench, repos = _bench(tmp_path)
    records = load_bench(bench)
    failed = [make_row(IID, "x", REGIONS, outcome="ERROR", error="boom")]
    run = write_contexts(failed, records, repos, tmp_path / "out")
    assert run.failed == [IID] and run.contexts[0].visible_lines == 0
    assert _files(tmp_path / "out" / IID / "snapshot") == {}
    assert write_contexts([], records, repos, tmp_path / "none").no_row == [IID]
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text(json.dumps(make_row("other__repo-2", "x", REGIONS)) + "\n")
    argv = [str(foreign), "--bench", str(bench), "--repos", str(repos), "--out", str(tmp_path / "o")]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not in the bench" in err and str(foreign) in err


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()[-1:]
    return line[line.index("error: ") :]


def test_note_names_every_problem_kind_and_bad_paths_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """REGIONS show less than asked in three ways (b.txt 3-9 clipped, missing.py, a.py 20-25 past the end): the
    note counts each kind. --out equal to the results file is a usage error (exit 2); a missing results file is
    named once."""
    bench, repos = _bench(tmp_path)
    results = _results(tmp_path)
    base = ["--bench", str(bench), "--repos", str(repos)]
    assert main([str(results), *base, "--out", str(tmp_path / "out")]) == 0
    note = capsys.readouterr().err.strip()
    assert note == (
        "note: 3 region(s) show less than asked (1 clipped, 1 no_such_file, 1 past_end; e.g. org__repo-1: "
        f"b.txt:3-9); see problems in {tmp_path / 'out' / 'summary.json'}"
    )
    assert _usage_error([str(results), *base, "--out", str(results)], capsys) == (
        f"error: --out {results} is the input results {results}; it would be overwritten: write elsewhere"
    )
    missing = tmp_path / "nores.jsonl"
    assert _usage_error([str(missing), *base, "--out", str(tmp_path / "o2")], capsys) == (
        f"error: result file {missing} does not exist"
    )
