"""Run one explorer over a bench file: one reference-compatible JSONL result row per instance.

Thin wrapper: the command lives in :mod:`swe_explore.commands.run` (also ``swe-explore run``); run with ``--help``.
"""

import sys

from swe_explore.commands._errors import interrupt_quietly, run_main

with interrupt_quietly():  # Ctrl-C while the command imports: exit 130 quietly
    from swe_explore.commands.run import main

if __name__ == "__main__":
    sys.exit(run_main(main))
