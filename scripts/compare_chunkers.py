"""Run the grid chunker × retriever (plus the reference baselines) over a bench and compare them.

Thin wrapper: the command lives in :mod:`swe_explore.commands.compare` (also ``swe-explore compare``); run with
``--help``.
"""

import sys

from swe_explore.commands._errors import run_main
from swe_explore.commands.compare import main

if __name__ == "__main__":
    sys.exit(run_main(main))
