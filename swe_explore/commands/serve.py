"""An MCP server on standard input/output: exploration as tools for a coding agent.

Usage::

    python scripts/serve.py [--store DIR] [--model PATH]      # or: swe-explore serve

Needs the optional ``mcp`` extra (``pip install 'swe-explore-baselines[mcp]'``, the official MCP Python SDK). The
tools (:class:`swe_explore.explore.service.ExploreService`):

- ``index_folder(path, explorer="learned")``: build (if missing or stale) and load a folder's indexes; returns
  its files, lines and chunks.
- ``explore(path, issue, k=5, budget=500, explorer="learned", include=None, exclude=None)``: the regions for an
  issue, best first, each with ``path``, ``start``, ``end``, ``score`` and ``code``; ``include``/``exclude`` are
  glob lists that filter the K regions by path.
- ``list_indexes()``: the folders indexed in this session and the snapshots the store holds.

Indexes go to ``--store`` (default ``$SWE_EXPLORE_STORE``, else the user cache directory); a ``--store`` that is
a file, or that does not exist and cannot be created, is refused at start (one line, exit status 2). A folder
with no source file indexed gets a ``note`` in the tools' answers. The server runs until its client closes
standard input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from swe_explore import __version__
from swe_explore.commands._args import die
from swe_explore.explore.service import DEFAULT_BUDGET, DEFAULT_K, ExploreService
from swe_explore.indexes.manage import store_is_writable
from swe_explore.indexes.store import default_store

SERVER_NAME = "swe-explore"
"""The server's name in the MCP handshake."""


def build_server(service: ExploreService) -> Any:
    """The MCP server (the SDK's ``MCPServer``) with the service's three tools.

    :param service: the exploration state the tools share.
    :return: the server, ready to ``run("stdio")``.
    :raises ImportError: if the MCP SDK is not installed.
    """
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    def answer(call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """Run a tool's call; bad input (a missing folder, an unknown explorer) is a tool error with its message,
        anything else a crash the SDK logs with its traceback."""
        try:
            return call()
        except (ValueError, FileNotFoundError, NotADirectoryError) as exc:
            raise ToolError(str(exc)) from None

    server = MCPServer(
        SERVER_NAME,
        version=__version__,
        instructions="Find the code regions relevant to an issue in a local repository: explore(path, issue).",
        log_level="WARNING",
    )

    @server.tool()
    def index_folder(path: str, explorer: str = "learned") -> dict[str, Any]:
        """Index a folder (a repository tree) for an explorer; later explore calls on it only load the index.

        :param path: the folder.
        :param explorer: ``learned`` (default) or a retriever name (``bm25``, ``tfidf``, ...).
        :return: the folder's snapshot name, files, lines, chunks and the seconds it took.
        """
        return answer(lambda: service.index_folder(path, explorer))

    @server.tool()
    def explore(
        path: str,
        issue: str,
        k: int = DEFAULT_K,
        budget: int = DEFAULT_BUDGET,
        explorer: str = "learned",
        include: list[str] | None = None,
        exclude: list[str] | None = None,
        languages: list[str] | None = None,
    ) -> dict[str, Any]:
        """The code regions relevant to an issue, best first, with their scores and code (the folder is indexed
        on first use).

        :param path: the folder (a repository tree).
        :param issue: the issue text.
        :param k: at most this many regions.
        :param budget: at most this many lines in all.
        :param explorer: ``learned`` (default) or a retriever name.
        :param include: .gitignore-style patterns; only files matching one give regions (``src/``, ``*.py``).
        :param exclude: .gitignore-style patterns; files matching one give none (exclude wins).
        :param languages: only files of these languages (``python``, ``go``, ``rust``, ...).
        :return: ``{"regions": [{"path", "start", "end", "score", "code"}], ...}``.
        """
        return answer(lambda: service.explore(path, issue, k, budget, explorer, include, exclude, languages))

    @server.tool()
    def list_indexes() -> dict[str, Any]:
        """The folders indexed in this session and the snapshot names the store holds.

        :return: ``{"store", "session", "store_snapshots"}``.
        """
        return answer(service.list_indexes)

    return server


def store_problem(store: Path) -> str | None:
    """Why a store cannot serve, checked before the server starts (a client would otherwise see it only on its
    first tool call): a path that is not a directory, or a store that does not exist and cannot be created (its
    nearest existing parent is not a writable directory). An existing read-only store is fine (prebuilt indexes).

    :param store: the store root.
    :return: a one-line reason naming the path, or ``None``.
    """
    if store.exists():
        return None if store.is_dir() else f"{store} is not a directory"
    parent = store.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return f"{store} cannot be created: {parent} is not a directory"
    if not store_is_writable(parent):
        return f"{store} cannot be created: {parent} is not writable"
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 when the client closes the session, 1 without the SDK, 2 a
    bad ``--store``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, default=None, help="index store root (default: the user cache)")
    parser.add_argument("--model", default=None, help="embedding model for potion/faiss/hybrid explorers")
    args = parser.parse_args(argv)
    store = args.store or default_store()
    problem = store_problem(store)
    if problem is not None:
        die(parser, f"--store {problem}")
    try:
        import mcp  # noqa: F401
    except ImportError:
        print(
            f"{parser.prog}: error: the MCP Python SDK is not installed; "
            "pip install 'swe-explore-baselines[mcp]' (or: pip install mcp)",
            file=sys.stderr,
        )
        return 1
    service = ExploreService(store=store, model=args.model)
    build_server(service).run("stdio")
    return 0
