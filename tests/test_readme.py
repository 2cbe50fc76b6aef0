"""The README's first ``python`` code block runs as written from the project root."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_first_python_block_runs_and_prints_regions(tmp_path: Path) -> None:
    """The block indexes a mini snapshot, queries it and prints Region lines, the cart's total() first."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", readme, re.S)
    assert block is not None
    env = {"SWE_EXPLORE_STORE": str(tmp_path / "store"), "PATH": "", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", block.group(1)], cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert 1 <= len(lines) <= 5
    assert all(line.startswith("Region(path=") for line in lines)
    assert lines[0].startswith("Region(path='pyshop/cart.py'")
    entries = sorted(p.name for p in (tmp_path / "store").iterdir())
    assert entries[0] == "_cache" and [name.startswith("mini__pyshop-1-") for name in entries[1:]] == [True]
