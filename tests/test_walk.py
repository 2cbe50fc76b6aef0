"""Tests of the snapshot walker: include/exclude rules, skip reasons, decoding, symlinks and order."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from swe_explore.chunking.walk import SKIP_REASONS, WalkConfig, WalkStats, walk_snapshot


def _write(root: Path, rel: str, data: bytes | str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    """A small snapshot holding one example of every include/exclude rule."""
    root = tmp_path / "snap"
    _write(root, "pkg/__init__.py", "")
    _write(root, "pkg/core.py", "def f():\n    return 1\n")
    _write(root, "pkg/build/__init__.py", "X = 1\n")
    _write(root, "pkg/build/steps.py", "def step():\n    pass\n")
    _write(root, "pkg/dist/util.py", "Y = 2\n")
    _write(root, "build/lib/pkg/core.py", "def f():\n    return 1\n")
    _write(root, "dist/bundle.js", "var a = 1;\n")
    _write(root, "vendor/lib.go", "package lib\n")
    _write(root, "node_modules/left-pad/index.js", "module.exports = 1;\n")
    _write(root, "web/node_modules/x/index.js", "module.exports = 2;\n")
    _write(root, ".git/config", "[core]\n")
    _write(root, "pkg/__pycache__/core.cpython-311.pyc", b"\x00\x01")
    _write(root, "swe_explore.egg-info/PKG-INFO", "Name: x\n")
    _write(root, ".venv/lib/site.py", "x = 1\n")
    _write(root, "pyproject.toml", "[project]\nname = 'x'\n")
    _write(root, "setup.cfg", "[metadata]\nname = x\n")
    _write(root, "docs/index.rst", "Title\n=====\n")
    _write(root, "doc/pylintrc", "[MAIN]\n")
    _write(root, ".github/workflows/ci.yml", "on: push\n")
    _write(root, "package-lock.json", "{}\n")
    _write(root, "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    _write(root, "data.json", b'{"a": 1}\x00\n')
    _write(root, "empty.py", b"")
    _write(root, "latin1.py", b"name = 'caf\xe9'\n")
    _write(root, "big.py", b"x = 1\n" * 400)
    _write(root, "crlf.py", b"a = 1\r\nb = 2\r\n")
    _write(root, "inc/geo.h", "namespace geo { int f(); }\n")
    _write(root, "inc/c.h", "int f(void);\n")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the snapshot, target of a symlink that leaves it."""
    return _write(tmp_path / "elsewhere", "secret.py", "TOKEN = 1\n")


def test_included_files_and_order(snapshot: Path) -> None:
    """Exactly the source/docs files outside excluded directories are kept, sorted by POSIX path."""
    files, _ = walk_snapshot(snapshot, WalkConfig(max_file_bytes=1000))
    assert [f.path for f in files] == [
        ".github/workflows/ci.yml",
        "crlf.py",
        "doc/pylintrc",
        "docs/index.rst",
        "inc/c.h",
        "inc/geo.h",
        "latin1.py",
        "pkg/build/__init__.py",
        "pkg/build/steps.py",
        "pkg/core.py",
        "pkg/dist/util.py",
        "pyproject.toml",
        "setup.cfg",
    ]


def test_nested_build_package_kept_top_level_build_dropped(snapshot: Path) -> None:
    """A source package named build (pkg/build/__init__.py) is kept; top-level build/ and dist/ are pruned."""
    files, stats = walk_snapshot(snapshot)
    paths = {f.path for f in files}
    assert "pkg/build/__init__.py" in paths and "pkg/build/steps.py" in paths and "pkg/dist/util.py" in paths
    assert not any(p.startswith(("build/", "dist/", "vendor/")) for p in paths)
    assert stats.excluded_dirs == {
        ".git": 1,
        ".venv": 1,
        "__pycache__": 1,
        "build": 1,
        "dist": 1,
        "node_modules": 2,
        "swe_explore.egg-info": 1,
        "vendor": 1,
    }


def test_top_level_build_package_with_init_kept(tmp_path: Path) -> None:
    """A top-level build/ directory that is itself a Python package (build/__init__.py) is kept."""
    _write(tmp_path, "build/__init__.py", "")
    _write(tmp_path, "build/main.py", "def main():\n    pass\n")
    files, stats = walk_snapshot(tmp_path)
    assert [f.path for f in files] == ["build/main.py"]
    assert stats.skipped == {"empty": 1}


def test_skip_reasons_counted(snapshot: Path) -> None:
    """Every skipped file is counted under its reason; totals add up."""
    files, stats = walk_snapshot(snapshot, WalkConfig(max_file_bytes=1000))
    assert stats.skipped == {
        "binary": 1,  # data.json (NUL byte)
        "empty": 2,  # empty.py, pkg/__init__.py
        "lock_file": 1,  # package-lock.json
        "too_large": 1,  # big.py (2400 bytes > 1000)
        "unsupported_extension": 1,  # logo.png
    }
    assert stats.files_indexed == len(files) == 13
    assert stats.files_seen == stats.files_indexed + sum(stats.skipped.values())
    assert set(stats.skipped) <= set(SKIP_REASONS)


def test_decoding_and_language(snapshot: Path) -> None:
    """Non-UTF-8 files are kept with U+FFFD and counted; CRLF is normalised; .h is C or C++ by content."""
    files, stats = walk_snapshot(snapshot)
    by_path = {f.path: f for f in files}
    assert by_path["latin1.py"].lines == ["name = 'caf\ufffd'"]
    assert stats.non_utf8 == 1
    assert by_path["crlf.py"].lines == ["a = 1", "b = 2"]
    assert by_path["crlf.py"].n_bytes == 14
    assert by_path["inc/geo.h"].language == "cpp"
    assert by_path["inc/c.h"].language == "c"
    assert by_path["pyproject.toml"].language == "text"
    assert by_path["doc/pylintrc"].language == "text"
    assert stats.lines == sum(len(f.lines) for f in files)
    assert stats.bytes == sum(f.n_bytes for f in files)
    assert stats.languages == {"c": 1, "cpp": 1, "python": 7, "text": 5}


def test_size_guard_default_keeps_five_megabytes(tmp_path: Path) -> None:
    """The default size guard (8 MiB) keeps a 5 MB minified file; a smaller limit skips it.

    See docs/chunking.md, 'The walker' (too_large).
    """
    _write(tmp_path, "app.min.js", b"var a=" + b"1+" * 2_500_000 + b"1;\n")
    files, stats = walk_snapshot(tmp_path)
    assert [f.path for f in files] == ["app.min.js"] and len(files[0].lines) == 1
    files, stats = walk_snapshot(tmp_path, WalkConfig(max_file_bytes=1_000_000))
    assert files == [] and stats.skipped == {"too_large": 1}


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_symlinks(tmp_path: Path, outside: Path) -> None:
    """File symlinks inside the snapshot are kept; leaving, broken and directory symlinks are skipped."""
    root = tmp_path / "snap"
    _write(root, "pkg/real.py", "A = 1\n")
    (root / "alias.py").symlink_to(root / "pkg" / "real.py")
    (root / "leak.py").symlink_to(outside)
    (root / "gone.py").symlink_to(root / "missing.py")
    (root / "linked_pkg").symlink_to(root / "pkg", target_is_directory=True)
    files, stats = walk_snapshot(root)
    assert [f.path for f in files] == ["alias.py", "pkg/real.py"]
    assert files[0].lines == ["A = 1"]
    assert stats.skipped == {"broken_symlink": 1, "symlink_dir": 1, "symlink_outside": 1}


def test_empty_snapshot(tmp_path: Path) -> None:
    """docs/chunking.md, 'The walker': an empty snapshot gives no files and zero counts, no exception."""
    files, stats = walk_snapshot(tmp_path)
    assert files == []
    assert stats.to_dict() == WalkStats().to_dict()


def test_only_empty_and_binary_files(tmp_path: Path) -> None:
    """docs/chunking.md, 'The walker': a snapshot of only empty and binary files gives no files and says why."""
    _write(tmp_path, "a.py", b"")
    _write(tmp_path, "b.py", b"\x00\x00\x00")
    _write(tmp_path, "c.md", b"\xef\xbb\xbf")
    files, stats = walk_snapshot(tmp_path)
    assert files == []
    assert stats.skipped == {"binary": 1, "empty": 2}
    assert stats.files_seen == 3 and stats.files_indexed == 0


def test_missing_root_raises_naming_it(tmp_path: Path) -> None:
    """A non-existent root raises FileNotFoundError naming the path."""
    missing = tmp_path / "nope"
    with pytest.raises(FileNotFoundError, match="nope"):
        walk_snapshot(missing)


def test_root_is_a_file(tmp_path: Path) -> None:
    """A root that is a file raises NotADirectoryError naming it."""
    path = _write(tmp_path, "a.py", "x = 1\n")
    with pytest.raises(NotADirectoryError, match="a.py"):
        walk_snapshot(path)


def test_text_can_be_excluded(snapshot: Path) -> None:
    """include_text=False keeps only source code and counts docs/config as text_excluded."""
    files, stats = walk_snapshot(snapshot, WalkConfig(include_text=False))
    assert all(f.language != "text" for f in files)
    assert stats.skipped["text_excluded"] == 6  # five docs + data.json (not read)


def test_stats_and_config_are_json(snapshot: Path) -> None:
    """WalkStats.to_dict and WalkConfig.to_dict round-trip through JSON unchanged."""
    config = WalkConfig()
    _, stats = walk_snapshot(snapshot, config)
    assert json.loads(json.dumps(stats.to_dict())) == stats.to_dict()
    as_dict = config.to_dict()
    assert json.loads(json.dumps(as_dict)) == as_dict
    assert as_dict["max_file_bytes"] == 8 * 1024 * 1024
    assert "node_modules" in as_dict["exclude_dirs"]  # type: ignore[operator]


def test_config_validation() -> None:
    """A non-positive size guard is rejected with the number in the message."""
    with pytest.raises(ValueError, match="max_file_bytes must be >= 1, got 0"):
        WalkConfig(max_file_bytes=0)


def test_deep_directories(tmp_path: Path) -> None:
    """Deeply nested directories are walked iteratively (no recursion limit)."""
    rel = "/".join(f"d{i}" for i in range(60)) + "/leaf.py"
    _write(tmp_path, rel, "x = 1\n")
    files, _ = walk_snapshot(tmp_path)
    assert [f.path for f in files] == [rel]


def _write_bytes_name(directory: Path, name: bytes, data: bytes) -> None:
    """Create a file whose name is raw bytes (possibly not UTF-8) inside ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(os.path.join(os.fsencode(directory), name), "wb") as handle:
        handle.write(data)


def test_undecodable_file_name_is_skipped_and_shown(tmp_path: Path) -> None:
    """A file (or directory) name that is not UTF-8 is skipped as undecodable_name; the rest is kept and the
    skipped path is listed with its bad byte escaped."""
    _write(tmp_path, "pkg/ok.py", "def ok_func():\n    return 5\n")
    _write_bytes_name(tmp_path / "pkg", b"bad\xffname.py", b"def f():\n    return 1\n")
    _write_bytes_name(Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), b"d\xe9j\xe0"))), b"m.py", b"x = 1\n")
    files, stats = walk_snapshot(tmp_path)
    assert [f.path for f in files] == ["pkg/ok.py"]
    assert stats.skipped == {"undecodable_name": 2}
    assert stats.examples == {"undecodable_name": ["d\\xe9j\\xe0/m.py", "pkg/bad\\xffname.py"]}
    assert stats.files_seen == 3 and stats.files_indexed == 1
    assert json.loads(json.dumps(stats.to_dict(), ensure_ascii=False).encode("utf-8")) == stats.to_dict()


def test_skip_examples_are_capped_per_reason(tmp_path: Path) -> None:
    """Each skip reason keeps its first MAX_SKIP_EXAMPLES paths in walk order; the count keeps counting."""
    from swe_explore.chunking.walk import MAX_SKIP_EXAMPLES

    for i in range(MAX_SKIP_EXAMPLES + 2):
        _write(tmp_path, f"img{i}.png", b"x")
    _write(tmp_path, "z/empty.py", b"")
    _, stats = walk_snapshot(tmp_path)
    assert MAX_SKIP_EXAMPLES == 3
    assert stats.skipped == {"empty": 1, "unsupported_extension": 5}
    assert stats.examples == {"empty": ["z/empty.py"], "unsupported_extension": ["img0.png", "img1.png", "img2.png"]}
