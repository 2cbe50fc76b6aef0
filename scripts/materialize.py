"""Write one repository snapshot per bench record, ``<repos>/<instance_id>/``, from bare git mirrors.

Thin wrapper: the command lives in :mod:`swe_explore.commands.materialize` (also ``swe-explore materialize``); run with
``--help``.
"""

import sys

from swe_explore.commands._errors import interrupt_quietly, run_main

with interrupt_quietly():  # Ctrl-C while the command imports: exit 130 quietly
    from swe_explore.commands.materialize import main

if __name__ == "__main__":
    sys.exit(run_main(main))
