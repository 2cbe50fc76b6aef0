"""Join the public SWE-Explore release with its issue sources into a bench the toolkit runs.

Thin wrapper: the command lives in :mod:`swe_explore.commands.prepare` (also ``swe-explore prepare``); run with
``--help``.
"""

import sys

from swe_explore.commands._errors import interrupt_quietly, run_main

with interrupt_quietly():  # Ctrl-C while the command imports: exit 130 quietly
    from swe_explore.commands.prepare import main

if __name__ == "__main__":
    sys.exit(run_main(main))
