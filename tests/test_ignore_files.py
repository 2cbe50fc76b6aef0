"""Tests of the walker's ignore files: ``.gitignore``/``.ignore`` with git's semantics, never in a bench snapshot."""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
from pathlib import Path

import pytest

from swe_explore.chunking.walk import SNAPSHOT_MARKER, WalkConfig, _as_git_reads_brackets, walk_snapshot


def _write(root: Path, rel: str, text: str = "x = 1\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


ALL_SOURCES = [
    "a.txt",
    "generated/deep/b.py",
    "generated/gen.py",
    "keep.txt",
    "logs/app.py",
    "main.py",
    "out/drop.py",
    "out/keep.py",
    "src/local.py",
    "src/main.py",
    "src/sub/keep.txt",
    "src/sub/local.py",
    "src/sub/main.py",
    "src/sub/other.py",
]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A checkout-like folder with a git-ignored ``generated/`` dir, negations and nested ignore files."""
    root = tmp_path / "repo"
    for rel in ALL_SOURCES:
        _write(root, rel)
    _write(root, ".gitignore", "# build output\ngenerated/\n*.txt\n!keep.txt\nout/*\n!out/keep.py\nlogs\n")
    _write(root, "src/.gitignore", "local.py\n!keep.txt\n")  # any depth below src/; re-includes keep.txt
    _write(root, "src/sub/.gitignore", "*.txt\n")  # deeper file decides: src/sub/keep.txt ignored again
    _write(root, "src/sub/.ignore", "main.py\n")
    return root


def test_gitignore_semantics(folder: Path) -> None:
    """Directory patterns prune, negations re-include, nested files are relative to their directory and the
    deepest matching file decides; ``.ignore`` counts like ``.gitignore``."""
    files, stats = walk_snapshot(folder)
    assert [f.path for f in files] == ["keep.txt", "main.py", "out/keep.py", "src/main.py", "src/sub/other.py"]
    # generated/ and logs/ are pruned (directories, not descended); out/ is descended (out/* matches its files)
    assert stats.skipped["ignored_dir"] == 2
    assert stats.examples["ignored_dir"] == ["generated", "logs"]
    # a.txt, out/drop.py, src/local.py, src/sub/keep.txt, src/sub/local.py, src/sub/main.py
    assert stats.skipped["ignored"] == 6
    assert stats.examples["ignored"] == ["a.txt", "out/drop.py", "src/local.py"]
    assert stats.skipped["unsupported_extension"] == 4  # the four ignore files themselves


def test_option_off_walks_every_file(folder: Path) -> None:
    """``ignore_files=False`` indexes every source file, and says so in its dict form."""
    config = WalkConfig(ignore_files=False)
    files, stats = walk_snapshot(folder, config)
    assert [f.path for f in files] == ALL_SOURCES
    assert "ignored" not in stats.skipped and "ignored_dir" not in stats.skipped
    assert config.to_dict()["ignore_files"] is False


def test_default_config_dict_is_unchanged() -> None:
    """The default's dict form has no ``ignore_files`` key: index keys and result rows stay as they were."""
    assert list(WalkConfig().to_dict()) == [
        "max_file_bytes",
        "include_text",
        "exclude_dirs",
        "top_level_generated",
        "lock_files",
    ]


def test_bench_snapshot_keeps_ignored_tracked_files(folder: Path) -> None:
    """A materialized snapshot (marker at its top) is walked as without ignore files: every file is tracked."""
    (folder / SNAPSHOT_MARKER).write_text(json.dumps({"base_commit": "a" * 40}), encoding="utf-8")
    files, stats = walk_snapshot(folder)
    off_files, off_stats = walk_snapshot(folder, WalkConfig(ignore_files=False))
    assert [f.path for f in files] == ALL_SOURCES
    assert files == off_files
    assert stats.to_dict() == off_stats.to_dict()
    assert stats.skipped == {"snapshot_marker": 1, "unsupported_extension": 4}


def test_marker_only_counts_at_the_top(folder: Path) -> None:
    """A marker file below the top does not make the folder a snapshot."""
    _write(folder, f"src/{SNAPSHOT_MARKER}", "{}")
    files, _ = walk_snapshot(folder)
    assert "generated/gen.py" not in [f.path for f in files]


def test_negated_directory_pattern_cannot_reinclude_below_an_ignored_parent(tmp_path: Path) -> None:
    """As in git: a file cannot be re-included when a parent directory is ignored."""
    _write(tmp_path, "build2/keep.py")
    _write(tmp_path, "build2/drop.py")
    _write(tmp_path, "ok.py")
    _write(tmp_path, ".gitignore", "build2/\n!build2/keep.py\n")
    files, stats = walk_snapshot(tmp_path)
    assert [f.path for f in files] == ["ok.py"]
    assert stats.skipped["ignored_dir"] == 1


def test_explore_command_honours_ignore_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``explore`` leaves git-ignored files out by default and ranks them with ``--no-ignore-files``."""
    monkeypatch.setenv("SWE_EXPLORE_STORE", str(tmp_path / "store"))
    root = tmp_path / "work"
    _write(root, "app.py", "def serve():\n    return 'plain header'\n")
    _write(root, "generated/timeout_parser.py", "def parse_timeout_header():\n    return 'timeout header'\n")
    _write(root, ".gitignore", "generated/\n")
    main = runpy.run_path(str(Path(__file__).resolve().parent.parent / "scripts" / "explore.py"))["main"]
    argv = [str(root), "parse timeout header", "--retriever", "bm25", "--format", "json", "--no-fill"]

    outputs: list[str] = []
    for extra in ([], ["--no-ignore-files"]):
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            assert main(argv + extra) == 0
        outputs.append(buffer.getvalue())
    default, off = ([r["path"] for r in json.loads(out)["regions"]] for out in outputs)
    assert default == ["app.py"]
    assert off[0] == "generated/timeout_parser.py"


def _git_work_tree(root: Path) -> None:
    """A git work tree: ``pkg/.gitignore`` ignores ``gen_*.py`` and ``build_out/``; ``pkg/gen_tracked.py`` and
    ``pkg/build_out/kept.py`` are force-added (tracked), ``pkg/gen_local.py`` and ``pkg/build_out/scratch.py``
    are not."""
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    for rel in (
        "main.py",
        "pkg/gen_tracked.py",
        "pkg/gen_local.py",
        "pkg/build_out/kept.py",
        "pkg/build_out/scratch.py",
    ):
        _write(root, rel)
    _write(root, "pkg/.gitignore", "gen_*.py\nbuild_out/\n")
    env = {"PATH": os.environ["PATH"], "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (
        ["init", "-q"],
        ["add", "main.py", "pkg/.gitignore"],
        ["add", "-f", "pkg/gen_tracked.py", "pkg/build_out/kept.py"],
    ):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def test_git_work_tree_keeps_tracked_files_a_nested_gitignore_matches(tmp_path: Path) -> None:
    """git never ignores a tracked file: the two force-added files are walked, the two untracked ones matched by
    ``pkg/.gitignore`` are skipped as ``ignored``."""
    _git_work_tree(tmp_path)
    files, stats = walk_snapshot(tmp_path)
    assert [f.path for f in files if f.path.endswith(".py")] == [
        "main.py",
        "pkg/build_out/kept.py",
        "pkg/gen_tracked.py",
    ]
    assert stats.skipped.get("ignored") == 2
    assert stats.skipped.get("ignored_dir") is None


def test_git_work_tree_without_git_falls_back_to_the_ignore_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no git on PATH the ignore files alone decide: ``build_out/`` is pruned, both ``gen_*`` files dropped."""
    _git_work_tree(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    files, stats = walk_snapshot(tmp_path)
    assert [f.path for f in files if f.path.endswith(".py")] == ["main.py"]
    assert (stats.skipped.get("ignored"), stats.skipped.get("ignored_dir")) == (2, 1)


def test_ignore_lines_pathspec_cannot_compile_are_read_as_git_reads_them(tmp_path: Path) -> None:
    """A reversed range, which pathspec turns into a regex that does not compile (``re.error`` for the snapshot
    before), matches what git 2.39 matches: ``[z-a]`` is ``z``, ``[b-a-c]`` is ``b``, ``-`` or ``c`` (after a range
    ``-`` is a character again), ``[!z-a]`` any one character but ``z``; a line ending in a backslash matches nothing;
    the file's other lines apply (``git status --ignored`` on the same files gave the same six)."""
    for rel in ("a.py", "b.log", "c.py", "z.py", "bx.py", "-x.py", "ax.py", "zy.py", "ay.py"):
        _write(tmp_path, rel)
    _write(tmp_path, ".gitignore", "[z-a].py\n*.log\n\\\nc.py\n[b-a-c]x.py\n[!z-a]y.py\n")
    files, stats = walk_snapshot(tmp_path)
    assert [f.path for f in files] == ["a.py", "ax.py", "zy.py"]
    assert stats.skipped["ignored"] == 6


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("[z-a].py", "[z].py"),
        ("[!z-ab]", "[!zb]"),
        ("[b-a-c]", "[bc-]"),
        ("[]-a]", "[]^-a]"),  # ``]``-``a`` holds ``]``: it goes first, the rest of the range after it
        ("[\\--^]", "[].-\\^-]"),  # ``-`` to ``^`` after an escaped ``-``: ``-`` last, ``.``-``\\`` for the rest
        ("a\\[z-a]", "a\\[z-a]"),  # an escaped ``[`` is not a bracket
        ("[z-a", None),
        ("[[:alpha:]z-a]", None),
    ],
)
def test_bracket_expressions_are_rewritten_as_the_set_git_matches(line: str, expected: str | None) -> None:
    assert _as_git_reads_brackets(line) == expected
