"""Score result JSONL files against a bench and print the SWE-Explore metrics table.

Thin wrapper: the command lives in :mod:`swe_explore.commands.evaluate` (also ``swe-explore evaluate``); run with
``--help``.
"""

import sys

from swe_explore.commands._errors import interrupt_quietly, run_main

with interrupt_quietly():  # Ctrl-C while the command imports: exit 130 quietly
    from swe_explore.commands.evaluate import main

if __name__ == "__main__":
    sys.exit(run_main(main))
