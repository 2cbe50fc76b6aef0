"""One error policy for every command: operational errors are one line on standard error, with an exit status.

===========  ================================================================================================
exit status  meaning
===========  ================================================================================================
0            done
1            failure: an instance failed, a file could not be read or written (disk full, read-only, no
             permission), a corrupt index, a missing optional dependency or model, ``--strict`` gaps
2            usage: bad flags or bad input (a malformed bench, an output that is one of the inputs)
130          interrupted (Ctrl-C)
===========  ================================================================================================

``--debug`` (accepted by every command, anywhere on the line) or ``SWE_EXPLORE_DEBUG=1`` shows the traceback
instead; ``--version`` prints ``swe-explore-baselines <version>``. A closed standard output (``| head``) ends
the command quietly. :func:`run_main` is used by ``swe-explore`` and by every ``scripts/*.py``; a script imports
its command inside :func:`interrupt_quietly` (this module is light), so Ctrl-C during its start-up is quiet too.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Callable, Iterator, Sequence

from swe_explore import __version__

EXIT_FAILURE = 1
"""Something failed (an instance, a file operation, an index)."""
EXIT_USAGE = 2
"""Bad flags or bad input."""
EXIT_INTERRUPTED = 130
"""Interrupted by Ctrl-C (128 + SIGINT), as shells report it."""
VERSION_LINE = f"swe-explore-baselines {__version__}"
"""What ``--version`` prints."""

_ERRNO_HINTS = {
    errno.ENOSPC: "free some space or write elsewhere",
    errno.EDQUOT: "free some space or write elsewhere",
    errno.EROFS: "write elsewhere (another --out, --json or --store)",
    errno.EACCES: "write elsewhere or fix the permissions",
    errno.EPERM: "write elsewhere or fix the permissions",
    errno.ENOENT: "check the path",
    errno.EISDIR: "give a file path",
    errno.ENOTDIR: "check the path",
    errno.EEXIST: "a file is in the way, check the path",
}
"""What to do about a failed file operation, per ``errno`` (the OS reason itself is said once, before it)."""


def debug_requested(argv: Sequence[str]) -> bool:
    """Whether tracebacks are wanted: ``--debug`` among the arguments or ``SWE_EXPLORE_DEBUG=1``.

    :param argv: the command's arguments.
    :return: ``True`` to show tracebacks.
    """
    return "--debug" in _options(argv) or os.environ.get("SWE_EXPLORE_DEBUG", "") not in ("", "0")


def _options(argv: Sequence[str]) -> list[str]:
    """The arguments before a ``--`` separator (after it everything is positional)."""
    args = list(argv)
    return args[: args.index("--")] if "--" in args else args


def describe_os_error(exc: OSError) -> str:
    """One line for a failed file operation: the file, the OS reason (once) and what to do.

    :param exc: the error (``errno`` and ``filename`` are used when set).
    :return: e.g. ``"out.jsonl: No space left on device (ENOSPC); free some space or write elsewhere"``, without
        the file when the error names none.
    """
    if not exc.errno:  # raised with a message of its own, e.g. FileNotFoundError("<path>: ...; pass --model PATH")
        return str(exc)
    target = f"{exc.filename}: " if exc.filename else ""
    code = errno.errorcode.get(exc.errno, "")
    reason = exc.strerror or str(exc) or type(exc).__name__
    hint = _ERRNO_HINTS.get(exc.errno, "")
    return f"{target}{reason}" + (f" ({code})" if code else "") + (f"; {hint}" if hint else "")


def error_message(exc: BaseException) -> tuple[str, int]:
    """The one-line message and exit status of an operational error.

    :param exc: the error raised by a command.
    :return: ``(message, exit status)``.
    """
    from swe_explore.evaluation.runner import RunAbortedError
    from swe_explore.indexes.files import CorruptIndexError
    from swe_explore.indexes.store import ReadOnlyStoreError
    from swe_explore.retrievers.potion import ModelUnavailableError

    if isinstance(exc, (CorruptIndexError, ModelUnavailableError, ReadOnlyStoreError, RunAbortedError)):
        return str(exc), EXIT_FAILURE
    if isinstance(exc, OSError):
        return describe_os_error(exc), EXIT_FAILURE
    if isinstance(exc, ImportError):
        message = str(exc)
        if "pip install" not in message:
            message += " (an optional dependency: pip install 'swe-explore-baselines[all]')"
        return message, EXIT_FAILURE
    if isinstance(exc, MemoryError):
        return "out of memory; use a smaller input (--limit) or a machine with more memory", EXIT_FAILURE
    return f"{type(exc).__name__}: {exc} (rerun with --debug for the traceback)", EXIT_FAILURE


@contextlib.contextmanager
def interrupt_quietly() -> Iterator[None]:
    """Ctrl-C inside the block exits with status 130 and one line, as under :func:`run_main`; for a script's
    imports, which take about a second before ``run_main`` runs (``--debug`` shows the traceback).

    :raises SystemExit: with :data:`EXIT_INTERRUPTED` on ``KeyboardInterrupt``.
    """
    try:
        yield
    except KeyboardInterrupt:
        if debug_requested(sys.argv[1:]):
            raise
        print(f"\n{os.path.basename(sys.argv[0]) or 'swe-explore'}: interrupted", file=sys.stderr)
        raise SystemExit(EXIT_INTERRUPTED) from None


def run_main(main: Callable[[list[str]], int | None], argv: Sequence[str] | None = None) -> int:
    """Run a command's ``main`` under the error policy above.

    ``--debug`` is removed from the arguments before ``main`` sees them; ``--version`` prints
    :data:`VERSION_LINE` without running the command.

    :param main: the command, ``main(argv) -> exit status``.
    :param argv: its arguments without the program name (default ``sys.argv[1:]``).
    :return: the exit status (see the table above).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    debug = debug_requested(args)
    options = _options(args)
    if "--debug" in options:
        args = [a for a in options if a != "--debug"] + args[len(options) :]
    if "--version" in _options(args):
        print(VERSION_LINE)
        return 0
    prog = os.path.basename(sys.argv[0]) or "swe-explore"
    try:
        status = main(args)
        sys.stdout.flush()  # a closed pipe is reported here, not at interpreter exit
        return int(status or 0)
    except BrokenPipeError:
        # the reader went away (``| head``): stop quietly; point stdout at devnull so the final flush is silent
        # (https://docs.python.org/3/library/signal.html#note-on-sigpipe)
        with contextlib.suppress(OSError, ValueError):  # no real file descriptor (e.g. captured output)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILURE
    except KeyboardInterrupt:
        if debug:
            raise
        print(f"\n{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        if debug:
            raise
        message, status = error_message(exc)
        print(f"{prog}: error: {message}", file=sys.stderr)
        return status
