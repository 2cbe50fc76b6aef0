"""Run the grid chunker × retriever (plus the reference baselines) over a bench and compare them.

Thin wrapper: the command lives in :mod:`swe_explore.commands.compare` (also ``swe-explore compare``); run with
``--help``.
"""

import sys

from swe_explore.commands._errors import interrupt_quietly, run_main

with interrupt_quietly():  # Ctrl-C while the command imports: exit 130 quietly
    from swe_explore.commands.compare import main

if __name__ == "__main__":
    sys.exit(run_main(main))
