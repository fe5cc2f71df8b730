"""The differential test: a simulated day on SQLiteStore gives the same tables as in memory.

``run_day(..., store=factory)`` fills the store the factory builds with the
seed's starting knowledge base, so the whole day (people's saves, searches,
reads, checks, edits, retries, replays, polls) runs on SQLite. Any
difference in any table is a bug in one of the backends.
"""

from __future__ import annotations

import pandas as pd
import pytest

from kbsim import SQLiteStore
from kbsim.params import DayParams
from kbsim.sim import run_day


@pytest.mark.parametrize(
    "seed, overrides, on_file",
    [
        (1, {"edit": {"delay_s": 60.0}}, True),
        (2, {"edit": {"delay_s": 60.0}}, False),
        (3, {"edit": {"delay_s": 600.0}, "event_retention_s": 1800.0}, False),
    ],
)
def test_reference_day_gives_identical_tables_on_both_backends(tmp_path, seed, overrides, on_file):
    params = DayParams.model_validate(overrides)
    expected = run_day(params, seed)
    path = tmp_path / f"day-{seed}.db" if on_file else ":memory:"
    opened: list[SQLiteStore] = []

    def on_sqlite(event_retention_s: float | None) -> SQLiteStore:
        opened.append(SQLiteStore(path, event_retention_s=event_retention_s))
        return opened[-1]

    actual = run_day(params, seed, store=on_sqlite)
    assert len(opened) == 1 and opened[0].event_retention_s == params.event_retention_s
    assert opened[0].latest_sequence("kb-1") == params.corpus.articles + len(expected["saves"])
    assert set(actual) == set(expected)
    for name in expected:
        pd.testing.assert_frame_equal(actual[name], expected[name], obj=name)
    assert len(expected["citations"]) > 0 and len(expected["checks"]) > 0
    assert len(expected["edits"]) > 0
