"""Mine a labelled bench from a bare git mirror's history: commit message -> query, old side of its diff -> gold.

Thin wrapper: the command lives in :mod:`swe_explore.commands.mine` (also ``swe-explore mine``); run with ``--help``.
"""

import sys

from swe_explore.commands._errors import interrupt_quietly, run_main

with interrupt_quietly():  # Ctrl-C while the command imports: exit 130 quietly
    from swe_explore.commands.mine import main

if __name__ == "__main__":
    sys.exit(run_main(main))
