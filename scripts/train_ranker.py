"""Train the learned ranker on labelled benches: one reproducible command, fixed seed.

Thin wrapper: the command lives in :mod:`swe_explore.commands.train` (also ``swe-explore train``); run with
``--help``.
"""

import sys

from swe_explore.commands._errors import interrupt_quietly, run_main

with interrupt_quietly():  # Ctrl-C while the command imports: exit 130 quietly
    from swe_explore.commands.train import main

if __name__ == "__main__":
    sys.exit(run_main(main))
