"""The day raises the collector's generation-2 threshold while it runs and puts the caller's back."""

from __future__ import annotations

import gc
import threading

import pytest

from kbsim.sim import run_day
from kbsim.sim.day import DAY_GC_THRESHOLD_2, collector_threshold
from kbsim.store import MemoryStore

TINY = {"day_hours": 1, "corpus": {"articles": 20}, "saves": {"count": 10}, "questions": {"count": 5}}


@pytest.fixture
def caller_thresholds():
    """The test's own thresholds (not Python's defaults, so a restore to the defaults would
    fail), put back as they were after the test."""
    before = gc.get_threshold()
    gc.set_threshold(555, 7, 3)
    yield (555, 7, 3)
    gc.set_threshold(*before)


def test_a_day_raises_the_threshold_while_it_runs_and_restores_the_callers(caller_thresholds):
    seen = []

    def store(retention_s):
        seen.append(gc.get_threshold())
        return MemoryStore(event_retention_s=retention_s)

    run_day(TINY, 1, store=store)
    assert seen == [(555, 7, DAY_GC_THRESHOLD_2)]
    assert gc.get_threshold() == caller_thresholds


def test_a_day_that_raises_restores_the_callers_thresholds(caller_thresholds):
    def store(retention_s):
        raise RuntimeError("no store today")

    with pytest.raises(RuntimeError, match="no store today"):
        run_day(TINY, 1, store=store)
    assert gc.get_threshold() == caller_thresholds


def test_the_threshold_is_never_lowered():
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 5000)
    try:
        with collector_threshold(100):
            assert gc.get_threshold() == (700, 10, 5000)
        assert gc.get_threshold() == (700, 10, 5000)
    finally:
        gc.set_threshold(*before)


def test_overlapping_days_in_threads_restore_the_callers_setting_when_the_last_ends(caller_thresholds):
    """Two days overlapping in two threads, the first to start ending first: the setting
    stays raised until the second ends, then is the caller's (not the first day's raised one)."""
    first_in, first_out, second_in = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def second():
        first_in.wait()
        with collector_threshold(200):
            second_in.set()
            first_out.wait()
            seen["after the first ended"] = gc.get_threshold()

    thread = threading.Thread(target=second)
    thread.start()
    with collector_threshold(200):
        first_in.set()
        second_in.wait()
    first_out.set()
    thread.join()
    assert seen["after the first ended"] == (555, 7, 200)
    assert gc.get_threshold() == caller_thresholds
