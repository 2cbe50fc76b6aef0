"""The version has one source, ``swe_explore.__version__``; setuptools reads it into the distribution metadata."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

import swe_explore

ROOT = Path(__file__).resolve().parent.parent


def test_installed_metadata_version_is_the_package_version() -> None:
    """The installed distribution's version (what pip shows) equals ``swe_explore.__version__``."""
    assert importlib.metadata.version("swe-explore-baselines") == swe_explore.__version__


def test_pyproject_reads_the_version_from_the_package() -> None:
    """pyproject.toml declares no version of its own: it is dynamic, the attribute ``swe_explore.__version__``."""
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in config["project"] and "version" in config["project"]["dynamic"]
    assert config["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "swe_explore.__version__"}
