"""Build and save the chunk table and retriever indexes of every snapshot, resumably and in parallel.

Thin wrapper: the command lives in :mod:`swe_explore.commands.index` (also ``swe-explore index``); run with ``--help``.
"""

import sys

from swe_explore.commands._errors import interrupt_quietly, run_main

with interrupt_quietly():  # Ctrl-C while the command imports: exit 130 quietly
    from swe_explore.commands.index import main

if __name__ == "__main__":
    sys.exit(run_main(main))
