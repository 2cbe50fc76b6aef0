"""The package flow is one-directional: importing a package loads none of the packages downstream of it."""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("chunking", "retrievers", "indexes", "explore", "evaluation", "benchprep")


def _loaded_after_importing(package: str) -> set[str]:
    """Top-level ``swe_explore`` subpackages in ``sys.modules`` after importing every module of ``package``."""
    code = f"""
import importlib, json, pkgutil, sys
import swe_explore.{package} as pkg
for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
    importlib.import_module(info.name)
print(json.dumps(sorted({{m.split(".")[1] for m in sys.modules if m.startswith("swe_explore.") }})))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return set(json.loads(out.stdout))


@pytest.mark.parametrize("folder", ["chunking", "retrievers", "indexes", "explore", "evaluation", "benchprep"])
def test_every_source_folder_is_a_subpackage_of_the_import_root(folder: str) -> None:
    """``swe_explore.<folder>`` is the top-level folder of that name (the package-dir mapping of pyproject.toml)."""
    module = importlib.import_module(f"swe_explore.{folder}")
    assert module.__file__ is not None
    assert Path(module.__file__).resolve().parent.name == folder


def test_fusion_and_explorer_do_not_import_each_other() -> None:
    """The default explorer (fusion.py) loads without explorer.py: the store default and the packer defaults live
    upstream (indexes/store.py, explore/config.py), so the two modules share no import cycle."""
    code = "import sys, swe_explore.explore.fusion; print('swe_explore.explore.explorer' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def _allowed_imports() -> dict[str, set[str]]:
    """The ``| package | may import |`` table of docs/architecture.md, as {package: allowed packages}."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text[text.index("| package | may import |") :].split("\n\n", 1)[0].splitlines()[2:]
    allowed: dict[str, set[str]] = {}
    for row in table:
        package, imports = (cell.strip() for cell in row.strip("|").split("|"))
        allowed[re.findall(r"`([\w.]+)`", package)[0]] = set(re.findall(r"`(\w+)`", imports))
    return allowed


def test_the_import_table_names_every_package() -> None:
    """docs/architecture.md's table covers the six packages and the command layer, nothing else."""
    assert set(_allowed_imports()) == {*PACKAGES, "commands"}


@pytest.mark.parametrize("package", [*PACKAGES, "commands"])
def test_packages_import_only_what_the_architecture_allows(package: str) -> None:
    """Importing every module of a package loads only the packages docs/architecture.md allows it."""
    loaded = _loaded_after_importing(package)
    assert package in loaded
    assert loaded - {package, "deprecation"} <= _allowed_imports()[package]


def _library_sources() -> list[Path]:
    return [
        path
        for folder in (*PACKAGES, "swe_explore")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "data" not in path.relative_to(ROOT).parts
    ]


def test_no_library_or_command_module_over_800_lines() -> None:
    """Modules are cut along their seams: none of the library or the command layer is over 800 lines."""
    long = {str(p.relative_to(ROOT)): n for p in _library_sources() if (n := len(p.read_text().splitlines())) > 800}
    assert long == {}


def test_no_library_or_command_function_over_100_lines() -> None:
    """No function or method of the library or the command layer is over 100 lines (ruff's C901 bounds its
    cyclomatic complexity at 25, pyproject.toml)."""
    long = []
    for path in _library_sources():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > 100:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({n} lines)")
    assert long == []
