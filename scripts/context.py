"""The repair bridge: per instance of a result file, a snapshot copy and a document showing only its regions.

Thin wrapper: the command lives in :mod:`swe_explore.commands.context` (also ``swe-explore context``); run with
``--help``.
"""

import sys

from swe_explore.commands._errors import interrupt_quietly, run_main

with interrupt_quietly():  # Ctrl-C while the command imports: exit 130 quietly
    from swe_explore.commands.context import main

if __name__ == "__main__":
    sys.exit(run_main(main))
