"""Explore one folder with a free-text issue: the ranked regions, with their first lines.

Thin wrapper: the command lives in :mod:`swe_explore.commands.explore` (also ``swe-explore explore``); run with
``--help``.
"""

import sys

from swe_explore.commands._errors import run_main
from swe_explore.commands.explore import main

if __name__ == "__main__":
    sys.exit(run_main(main))
