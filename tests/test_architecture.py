"""The package flow is one-directional: importing a package loads none of the packages downstream of it."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


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


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("evaluation", {"retrievers", "indexes", "explore", "benchprep"}),
        ("chunking", {"retrievers", "indexes", "explore", "evaluation", "benchprep"}),
        ("retrievers", {"indexes", "explore", "evaluation", "benchprep"}),
        ("indexes", {"explore", "evaluation", "benchprep"}),
    ],
)
def test_packages_do_not_import_downstream(package: str, forbidden: set[str]) -> None:
    """Every module of a package imports, and none of the forbidden packages is loaded on the way."""
    loaded = _loaded_after_importing(package)
    assert package in loaded
    assert loaded & forbidden == set()


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
