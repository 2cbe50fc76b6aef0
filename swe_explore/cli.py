"""The ``swe-explore`` console command: ``swe-explore SUBCOMMAND [options]``, one subcommand per script.

===============  ===============================  ==================================================================
subcommand       script                           what it does
===============  ===============================  ==================================================================
``index``        ``scripts/index_repos.py``       build and save the indexes of every snapshot (resumable, parallel)
``run``          ``scripts/run_baselines.py``     run one explorer over a bench: one result row per instance
``evaluate``     ``scripts/evaluate.py``          score result files: the 17 SWE-Explore metrics
``compare``      ``scripts/compare_chunkers.py``  the chunker x retriever grid with tables and plots
``chunks``       ``scripts/show_chunks.py``       the chunks of a file or folder as JSON lines
``explore``      ``scripts/explore.py``           explore one folder with a free-text issue (no bench record)
``prepare``      ``scripts/prepare_bench.py``     join the SWE-Explore release with its issue sources into a bench
``materialize``  ``scripts/materialize.py``       write one snapshot per bench record from bare git mirrors
``mine``         ``scripts/mine_history.py``      mine a labelled bench from a git mirror's history
``train``        ``scripts/train_ranker.py``      train the learned ranker on labelled benches
``context``      ``scripts/context.py``           per result row: a snapshot copy and a document of only its regions
``serve``        ``scripts/serve.py``             an MCP server (stdio) with the tools index_folder and explore
``store``        (none)                           list an index store, its size per kind, remove stale indexes
===============  ===============================  ==================================================================

``swe-explore SUBCOMMAND --help`` prints the subcommand's options; ``--version`` prints the version and
``--debug`` (any command) shows tracebacks instead of one-line errors (exit statuses:
:mod:`swe_explore.commands._errors`).
"""

from __future__ import annotations

import importlib
import sys

from swe_explore.commands._errors import run_main

#: Subcommand -> (module under :mod:`swe_explore.commands`, one-line summary).
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "index": ("index", "build and save the indexes of every snapshot (resumable, parallel)"),
    "run": ("run", "run one explorer over a bench: one result row per instance"),
    "evaluate": ("evaluate", "score result files: the 17 SWE-Explore metrics"),
    "compare": ("compare", "the chunker x retriever grid with tables and plots"),
    "chunks": ("chunks", "the chunks of a file or folder as JSON lines"),
    "explore": ("explore", "explore one folder with a free-text issue: ranked regions with their first lines"),
    "mine": ("mine", "mine a labelled bench from a git mirror's history"),
    "prepare": ("prepare", "join the SWE-Explore release with its issue sources into a bench"),
    "materialize": ("materialize", "write one snapshot per bench record from bare git mirrors"),
    "train": ("train", "train the learned ranker on labelled benches"),
    "context": ("context", "per instance of a result file: a snapshot copy and a document showing only its regions"),
    "serve": ("serve", "an MCP server on standard input/output: the tools index_folder, explore, list_indexes"),
    "store": ("store", "list an index store, its size per kind, remove stale indexes (list, du, gc)"),
}


def usage() -> str:
    """The top-level help text listing the subcommands."""
    lines = ["usage: swe-explore SUBCOMMAND [options]   (swe-explore SUBCOMMAND --help for its options)", ""]
    lines += [f"  {name:<12} {summary}" for name, (_, summary) in SUBCOMMANDS.items()]
    lines += [
        "",
        "options of every command: --version (print the version), --debug (tracebacks, also SWE_EXPLORE_DEBUG=1)",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Dispatch to a subcommand's ``main`` under the error policy of :func:`~swe_explore.commands._errors.run_main`.

    :param argv: arguments without the program name (default ``sys.argv[1:]``).
    :return: the subcommand's exit status; 2 for a missing or unknown subcommand, 0 for ``--help``.
    """
    sys.argv[0] = "swe-explore"
    return run_main(_dispatch, argv)


def _dispatch(args: list[str]) -> int:
    """Run the subcommand named by ``args[0]``."""
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in SUBCOMMANDS:
        print(f"swe-explore: unknown subcommand {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"swe_explore.commands.{SUBCOMMANDS[name][0]}")
    sys.argv[0] = f"swe-explore {name}"
    return int(module.main(rest))


if __name__ == "__main__":
    sys.exit(main())
