"""The command-line programs: one module per ``swe-explore`` subcommand, each with ``main(argv) -> exit status``.

``scripts/<name>.py`` are thin wrappers around the same ``main`` functions.
"""
