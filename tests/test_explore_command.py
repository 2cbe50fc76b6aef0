"""``scripts/explore.py``: one folder, a free-text issue, ranked regions; indexes never in the working directory."""

from __future__ import annotations

import io
import json
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOSERVER = ROOT / "swe_explore" / "data" / "mini" / "repos" / "mini__goserver-2"
QUERY = "ServeHTTP ignores the X-Timeout request header"


def _explore(argv: list[str]) -> int:
    return int(runpy.run_path(str(ROOT / "scripts" / "explore.py"))["main"](argv))


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from an empty working directory with the default store in ``tmp_path/cache``."""
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.setenv("SWE_EXPLORE_STORE", str(tmp_path / "cache"))


def test_json_output_lists_k_regions_with_their_first_lines(capsys: pytest.CaptureFixture[str]) -> None:
    """--format json gives at most K regions within the budget, each with its first lines from the file."""
    argv = [str(GOSERVER), QUERY, "--retriever", "bm25", "--k", "2", "--budget", "40", "--format", "json", "--no-fill"]
    assert _explore(argv) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["k"] == 2 and payload["explorer"] == "bm25+function"
    regions = payload["regions"]
    assert 1 <= len(regions) <= 2 and sum(r["end"] - r["start"] + 1 for r in regions) <= 40
    first = regions[0]
    assert first["path"] == "server/handler.go"
    lines = (GOSERVER / first["path"]).read_text().split("\n")
    assert first["lines"] == lines[first["start"] - 1 : first["start"] + 2]


def test_issue_from_stdin_and_text_format(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``-`` reads the issue from standard input; the text format numbers the regions and their lines."""
    monkeypatch.setattr("sys.stdin", io.StringIO(QUERY))
    assert _explore([str(GOSERVER), "-", "--k", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("learned+function: 1 region(s)")
    assert "\n1. server/handler.go:" in out


def test_default_store_is_the_cache_not_the_working_directory(tmp_path: Path) -> None:
    """Without --store the index goes to $SWE_EXPLORE_STORE (the user cache), nothing into the cwd; the store
    entry is named after the folder and a hash of its path (beside it only the content cache, ``_cache``)."""
    assert _explore([str(GOSERVER), QUERY]) == 0
    assert list((tmp_path / "cwd").iterdir()) == []
    names = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert names[0] == "_cache"
    (entry,) = [tmp_path / "cache" / name for name in names[1:]]
    assert entry.name.startswith("mini__goserver-2-") and len(entry.name) == len("mini__goserver-2-") + 8


@pytest.mark.parametrize("retriever", ["learned", "bm25"])
def test_no_reuse_builds_without_the_content_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], retriever: str
) -> None:
    """``--no-reuse`` builds the index without reading or writing ``<store>/_cache``; the regions are those of a
    build with the cache."""
    regions = []
    for store, flags in (("with", []), ("without", ["--no-reuse"])):
        argv = [str(GOSERVER), QUERY, "--retriever", retriever, "--format", "json", "--store", str(tmp_path / store)]
        assert _explore(argv + flags) == 0
        regions.append(json.loads(capsys.readouterr().out)["regions"])
    assert regions[0] == regions[1] and regions[0][0]["path"] == "server/handler.go"
    assert (tmp_path / "with" / "_cache").is_dir() and not (tmp_path / "without" / "_cache").exists()


def test_make_explorer_takes_reuse_and_the_reference_refuses_it() -> None:
    """``make_explorer(reuse=False)`` reaches both of our explorers; the reference, which has no index, refuses
    it by name."""
    from swe_explore.explore.explorer import IndexedExplorer, make_explorer
    from swe_explore.explore.fusion import FusionExplorer

    learned, bm25, default = make_explorer("learned", reuse=False), make_explorer("bm25", reuse=False), make_explorer()
    assert isinstance(learned, FusionExplorer) and isinstance(bm25, IndexedExplorer)
    assert isinstance(default, FusionExplorer)
    assert (learned.reuse, bm25.reuse, default.reuse) == (False, False, True)
    with pytest.raises(ValueError, match="reuse"):
        make_explorer("reference_bm25", reuse=False)


def test_bad_folder_and_empty_issue_are_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing folder, a file, a negative --lines or an empty issue text exits 2 with a message naming the
    problem."""
    with pytest.raises(SystemExit) as exc:
        _explore([str(tmp_path / "nope"), "x"])
    assert exc.value.code == 2 and "nope does not exist" in capsys.readouterr().err
    (tmp_path / "file.txt").write_text("x\n")
    with pytest.raises(SystemExit) as exc:
        _explore([str(tmp_path / "file.txt"), "x"])
    assert exc.value.code == 2 and "file.txt is not a directory" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        _explore([str(GOSERVER), "x", "--lines", "-1"])
    assert exc.value.code == 2 and "--lines must be >= 0, got -1" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        _explore([str(GOSERVER), "   "])
    assert exc.value.code == 2 and "issue text is empty" in capsys.readouterr().err


def test_one_line_is_singular_and_a_filter_matching_nothing_is_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A one-line file: ``1 region(s), 1 line`` and ``(1 line, score ...)``; an --include that matches none of
    the folder's files: one ``note:`` line on stderr naming the flags, 0 regions."""
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "one.py").write_text("value = 1\n")
    argv = [str(tmp_path / "one"), "value", "--retriever", "bm25", "--store", str(tmp_path / "st")]
    assert _explore(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "bm25+function: 1 region(s), 1 line (k=5, budget=500)"
    assert out[2].startswith("1. one.py:1-1 (1 line, score ")
    assert _explore([*argv, "--include", "docs/", "--exclude", "a b"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "bm25+function: 0 region(s), 0 lines (k=5, budget=500)\n"
    assert captured.err.splitlines()[-1] == (
        f"note: no file matches --include docs/ --exclude 'a b' in {tmp_path / 'one'} (1 file(s) indexed)"
    )
