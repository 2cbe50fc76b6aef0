"""Build and save the chunk table and retriever indexes of every snapshot, resumably and in parallel.

Thin wrapper: the command lives in :mod:`swe_explore.commands.index` (also ``swe-explore index``); run with ``--help``.
"""

import sys

from swe_explore.commands._errors import run_main
from swe_explore.commands.index import main

if __name__ == "__main__":
    sys.exit(run_main(main))
