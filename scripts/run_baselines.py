"""Run one explorer over a bench file: one reference-compatible JSONL result row per instance.

Thin wrapper: the command lives in :mod:`swe_explore.commands.run` (also ``swe-explore run``); run with ``--help``.
"""

import sys

from swe_explore.commands._errors import run_main
from swe_explore.commands.run import main

if __name__ == "__main__":
    sys.exit(run_main(main))
