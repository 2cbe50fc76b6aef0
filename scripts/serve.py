"""An MCP server on standard input/output: exploration as tools for a coding agent.

Thin wrapper: the command lives in :mod:`swe_explore.commands.serve` (also ``swe-explore serve``); run with
``--help``.
"""

import sys

from swe_explore.commands._errors import interrupt_quietly, run_main

with interrupt_quietly():  # Ctrl-C while the command imports: exit 130 quietly
    from swe_explore.commands.serve import main

if __name__ == "__main__":
    sys.exit(run_main(main))
