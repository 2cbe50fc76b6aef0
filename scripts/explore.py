"""Explore one folder with a free-text issue: the ranked regions, with their first lines.

Thin wrapper: the command lives in :mod:`swe_explore.commands.explore` (also ``swe-explore explore``); run with
``--help``.
"""

import sys

from swe_explore.commands._errors import interrupt_quietly, run_main

with interrupt_quietly():  # Ctrl-C while the command imports: exit 130 quietly
    from swe_explore.commands.explore import main

if __name__ == "__main__":
    sys.exit(run_main(main))
