"""``swe-explore serve``: the MCP server, driven through the SDK's own stdio client; and its service functions."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from swe_explore.commands.serve import main
from swe_explore.explore.service import ExploreService

CART = '''"""Shopping cart."""


def apply_discount(total, code):
    """Apply a discount code to the total."""
    if code == "HALF":
        return total / 2
    return total


def cart_total(prices, code=None):
    """Sum the prices and apply the discount code."""
    return apply_discount(sum(prices), code)
'''
MAIL = '''"""Sending mail."""


def send_mail(address, body):
    """Send a message."""
    return f"to {address}: {body}"
'''
ISSUE = "apply_discount gives the wrong cart_total with the HALF discount code"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    (folder / "shop").mkdir(parents=True)
    (folder / "shop" / "cart.py").write_text(CART)
    (folder / "shop" / "mail.py").write_text(MAIL)
    return folder


def test_service_explores_a_folder_with_scores_and_code(tmp_path: Path) -> None:
    """The learned explorer finds the cart function for the issue; code is the file's lines; globs filter."""
    folder = _folder(tmp_path)
    service = ExploreService(store=tmp_path / "store")
    indexed = service.index_folder(str(folder))
    assert (indexed["files"], indexed["lines"], indexed["explorer"]) == (2, 19, "learned+function")
    answer = service.explore(str(folder), ISSUE, k=2, budget=40)
    first = answer["regions"][0]
    assert first["path"] == "shop/cart.py"
    lines = CART.split("\n")
    assert first["code"] == "\n".join(lines[first["start"] - 1 : first["end"]])
    assert isinstance(first["score"], float)
    filtered = service.explore(str(folder), ISSUE, k=2, budget=40, exclude=["*/cart.py"])
    assert all(r["path"] != "shop/cart.py" for r in filtered["regions"])
    assert [r["path"] for r in service.explore(str(folder), ISSUE, k=2, budget=40, include=["shop/"])["regions"]][
        :1
    ] == ["shop/cart.py"]
    assert service.explore(str(folder), ISSUE, k=2, budget=40, languages=["go"])["regions"] == []
    listed = service.list_indexes()
    assert listed["session"] == [indexed] and listed["store_snapshots"] == [indexed["snapshot_name"]]
    with pytest.raises(ValueError, match="does not exist"):
        service.explore(str(tmp_path / "nowhere"), ISSUE)
    with pytest.raises(ValueError, match="gives no scores"):
        service.explorer("reference_bm25", 5, 500)


def test_serve_without_the_sdk_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """No ``mcp`` package: exit status 1 and one line naming the extra."""
    monkeypatch.setitem(sys.modules, "mcp", None)
    assert main([]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "swe-explore-baselines[mcp]" in err


def test_mcp_session_over_stdio(tmp_path: Path) -> None:
    """A real session: the server as a subprocess (``python -m swe_explore.cli serve``), the SDK's stdio client
    lists the tools, indexes the folder and explores it; a missing folder is a tool error with its message."""
    pytest.importorskip("mcp", reason="the MCP SDK (the mcp extra) is not installed")
    from mcp import Client, StdioServerParameters

    folder = _folder(tmp_path)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "swe_explore.cli", "serve", "--store", str(tmp_path / "store")]
    )

    async def session() -> dict[str, Any]:
        async with Client(params) as client:
            tools = sorted(t.name for t in (await client.list_tools()).tools)
            indexed = await client.call_tool("index_folder", {"path": str(folder)})
            explored = await client.call_tool(
                "explore", {"path": str(folder), "issue": ISSUE, "k": 2, "budget": 40, "include": ["shop/*"]}
            )
            missing = await client.call_tool("explore", {"path": str(tmp_path / "nowhere"), "issue": ISSUE})
            return {"tools": tools, "indexed": indexed, "explored": explored, "missing": missing}

    out = asyncio.run(session())
    assert out["tools"] == ["explore", "index_folder", "list_indexes"]
    assert not out["indexed"].is_error and out["indexed"].structured_content["files"] == 2
    explored = out["explored"]
    assert not explored.is_error
    regions = explored.structured_content["regions"]
    assert regions and regions[0]["path"] == "shop/cart.py"
    assert regions[0]["code"] == "\n".join(CART.split("\n")[regions[0]["start"] - 1 : regions[0]["end"]])
    assert json.loads(explored.content[0].text)["regions"] == regions  # the same answer as text
    assert out["missing"].is_error and "nowhere does not exist" in out["missing"].content[0].text


def test_serve_refuses_a_store_it_cannot_use_at_start(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--store a file, or under a file: exit 2 and one line before the server starts; a folder without source
    files gets a note in the service's answers."""
    from swe_explore.commands.serve import main as serve_main

    (tmp_path / "file.py").write_text("x = 1\n")
    for store, reason in (
        (tmp_path / "file.py", f"{tmp_path / 'file.py'} is not a directory"),
        (
            tmp_path / "file.py" / "sub" / "store",
            f"{tmp_path / 'file.py' / 'sub' / 'store'} cannot be created: {tmp_path / 'file.py'} is not a directory",
        ),
    ):
        with pytest.raises(SystemExit) as exc:
            serve_main(["--store", str(store)])
        assert exc.value.code == 2
        line = capsys.readouterr().err.strip().splitlines()[-1]
        assert line.endswith(f"error: --store {reason}")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.bin").write_bytes(b"\x00\x01")
    service = ExploreService(store=tmp_path / "store")
    note = f"no source files indexed in {tmp_path / 'docs'}; see docs/chunking.md for the languages indexed"
    assert service.index_folder(str(tmp_path / "docs"))["note"] == note
    answer = service.explore(str(tmp_path / "docs"), "anything")
    assert (answer["regions"], answer["note"]) == ([], note)
    assert "note" not in service.index_folder(str(_folder(tmp_path)))
