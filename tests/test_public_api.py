"""The typed public API: ``swe_explore``'s exports are real types to a type checker (not ``Any``), ``import
swe_explore`` stays cheap, and renamed names still work with a DeprecationWarning naming the new one."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import swe_explore

ROOT = Path(__file__).resolve().parent.parent

CLIENT = """\
import swe_explore
from swe_explore import ScoredRegion, make_explorer

reveal_type(swe_explore.make_explorer)
reveal_type(swe_explore.FusionExplorer)
reveal_type(swe_explore.IndexedExplorer)
reveal_type(swe_explore.Explorer)
reveal_type(swe_explore.default_store())
reveal_type(swe_explore.load_bench)
reveal_type(swe_explore.evaluate_instance)
reveal_type(swe_explore.PackConfig(k=3).budget)
explorer = make_explorer("bm25")
reveal_type(explorer.explore("snapshot", "issue"))
region: ScoredRegion = ScoredRegion("a.py", 1, 2, 0.5)
reveal_type(region.score)
make_explorer("bm25", top_nn=3)
"""


def _package_tree(target: Path) -> Path:
    """The package as pip installs it (one ``swe_explore`` tree), made of links to the source folders."""
    tomllib = pytest.importorskip("tomllib")
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    root = target / "swe_explore"
    shutil.copytree(ROOT / "swe_explore", root, ignore=shutil.ignore_patterns("data", "commands", "__pycache__"))
    for package, folder in package_dir.items():
        if package != "swe_explore":
            (target / package.replace(".", "/")).symlink_to(ROOT / folder, target_is_directory=True)
    return target


def test_exports_are_typed_for_mypy(tmp_path: Path) -> None:
    """mypy sees the exports' real types (none is ``Any``), and a wrong call is an error."""
    pytest.importorskip("mypy")
    tree = _package_tree(tmp_path / "site")
    (tmp_path / "client.py").write_text(CLIENT)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-incremental", "client.py"],
        cwd=tmp_path,
        env={"MYPYPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    notes = [line for line in result.stdout.splitlines() if "Revealed type" in line]
    assert len(notes) == 10, result.stdout + result.stderr
    assert not [note for note in notes if '"Any"' in note], result.stdout
    revealed = "\n".join(notes)
    for expected in (
        "def (name: str =, *, k: int | None =",
        "-> swe_explore.explore.fusion.FusionExplorer",
        "-> swe_explore.explore.explorer.IndexedExplorer",
        "def () -> swe_explore.evaluation.runner.Explorer",
        'client.py:8: note: Revealed type is "pathlib.Path"',
        "-> list[swe_explore.evaluation.bench.BenchRecord]",
        'client.py:11: note: Revealed type is "int"',
        "list[tuple[str, int, int, fallback=swe_explore.chunking.types.Region]]",
        'client.py:15: note: Revealed type is "float"',
    ):
        assert expected in revealed, revealed
    assert 'Unexpected keyword argument "top_nn" for "make_explorer"' in result.stdout, result.stdout


def test_every_export_resolves_and_import_stays_cheap() -> None:
    """Every name of ``__all__`` resolves at run time; importing the package imports none of its subpackages."""
    for name in swe_explore.__all__:
        assert getattr(swe_explore, name) is not None
    code = "import sys, swe_explore; print(sorted(m for m in sys.modules if m.startswith('swe_explore.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("swe_explore.explore.ranker", "DEFAULT_MODEL", "DEFAULT_RANKER_MODEL"),
        ("swe_explore.explore.ranker", "load_model", "load_ranker"),
        ("swe_explore.retrievers.potion", "DEFAULT_MODEL", "DEFAULT_EMBEDDING_MODEL"),
        ("swe_explore.retrievers.potion", "load_model", "load_embedding_model"),
    ],
)
def test_renamed_names_still_work_and_warn(module: str, old: str, new: str) -> None:
    """An old spelling gives the new name's value with a DeprecationWarning naming the new one."""
    mod = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=f"{module}.{old} is deprecated; use {new}"):
        value = getattr(mod, old)
    assert value is getattr(mod, new)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        mod.no_such_name  # noqa: B018


def test_fusion_explorer_model_is_ranker_model(tmp_path: Path) -> None:
    """``FusionExplorer(model=...)`` still names the ranker model, with a warning; ``ranker_model`` is the name."""
    from swe_explore.explore.fusion import FusionExplorer

    with pytest.warns(DeprecationWarning, match="use ranker_model"):
        old = FusionExplorer(model="ranker-mentions", store=tmp_path)
    new = FusionExplorer(ranker_model="ranker-mentions", store=tmp_path)
    assert old.ranker_model == "ranker-mentions" and old.explorer_config == new.explorer_config
