"""The learned explorer at several line budgets: a Markdown table (mean and 95% CI per main metric) and a plot.

Thin wrapper: the command lives in :mod:`swe_explore.commands.operating_points`; run with ``--help``.
"""

import sys

from swe_explore.commands._errors import run_main
from swe_explore.commands.operating_points import main

if __name__ == "__main__":
    sys.exit(run_main(main))
