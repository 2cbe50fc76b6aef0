"""Python's cyclic garbage collector, paused around the index steps that make many long-lived small objects.

Tokenizing a snapshot's chunks (millions of token strings in lists), reading each chunk's identifiers for the
symbol graph (hundreds of thousands of frozensets) and linking the graph (sets, tuples, dictionaries) keep what
they make alive until the step ends, and every collection of the collector's oldest generation walks all of it
again. None of these steps makes reference cycles, and reference counting frees what they drop, so the collector
is paused for them (:func:`paused_gc`). Measured on astropy__astropy-s2 (1,542 files, 26,832 chunks, CPU seconds,
medians of 3 to 5 in one process; docs/benchmarks.md): ``build_graph`` 0.86-0.90 with the collector on and
0.55-0.60 off; tokenizing and counting the chunks 2.26 and 1.98; chunking itself 3.67 and 3.75 (no difference, so
it is not paused).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Turn the cyclic garbage collector off for the block, and back on after it if it was on (also on an error).

    Nested or concurrent blocks are safe: a block that found the collector off leaves it off, so at worst a thread
    runs part of its block with the collector on.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
