"""The paused cyclic garbage collector of the index builds (indexes/collector.py)."""

from __future__ import annotations

import gc

import pytest

from swe_explore.indexes.collector import paused_gc


def test_paused_gc_turns_the_collector_off_and_restores_its_state() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # it was off before: left off
    finally:
        gc.enable()
    with pytest.raises(RuntimeError), paused_gc():
        raise RuntimeError("boom")
    assert gc.isenabled()
