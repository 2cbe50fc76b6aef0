"""Print the chunks of a file or a directory as JSON lines, to see what an index will hold.

Thin wrapper: the command lives in :mod:`swe_explore.commands.chunks` (also ``swe-explore chunks``); run with
``--help``.
"""

import sys

from swe_explore.commands._errors import interrupt_quietly, run_main

with interrupt_quietly():  # Ctrl-C while the command imports: exit 130 quietly
    from swe_explore.commands.chunks import main

if __name__ == "__main__":
    sys.exit(run_main(main))
