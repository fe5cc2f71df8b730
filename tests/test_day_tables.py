"""kbsim.sim.tables owns the day's tables: what it declares is what a day writes, and the
layers above read the names from it."""

from __future__ import annotations

import re

import pytest

import kbsim.report.frames as frames
import kbsim.sim.tables as tables
import kbsim.stats.metrics as metrics
from kbsim.params import DayParams
from kbsim.sim import run_day

#: How a declared type reads back from pandas when every value is there (text: ``str`` from pandas 3 on).
PANDAS_DTYPES = {"int": ("int64",), "float": ("float64",), "str": ("str", "object"), "bool": ("bool",)}


@pytest.fixture(scope="module")
def day():
    params = {"day_hours": 3, "corpus": {"articles": 80}, "questions": {"count": 40}, "saves": {"count": 90}}
    return run_day(DayParams.model_validate({**params, "edit": {"delay_s": 600}}), 2)


def test_a_day_writes_the_declared_tables_and_columns(day):
    assert tuple(day) == tables.DAY_TABLES
    for name, frame in day.items():
        declared = tables.table_columns(name)
        assert list(frame.columns) == [column for column, _ in declared], name
        assert len(frame), name
        for column, kind in declared:
            if kind in PANDAS_DTYPES:  # an optional field (bool | None) reads back as object or bool
                assert str(frame[column].dtype) in PANDAS_DTYPES[kind], (name, column)


def test_an_empty_day_has_the_same_columns():
    empty = run_day(DayParams(day_hours=1, questions={"count": 0}, saves={"count": 0}, corpus={"articles": 20}), 1)
    for name, frame in empty.items():
        assert list(frame.columns) == [column for column, _ in tables.table_columns(name)], name


def test_the_layers_above_read_the_names_from_the_tables_module():
    assert frames.DAY_TABLES is tables.DAY_TABLES and frames.key_columns is tables.key_columns
    assert metrics.DAY_TABLES is tables.DAY_TABLES
    assert {"first_stale_s", "gone_at_end", "seed", "run_id", "strategy"} <= tables.NATIVE_COLUMNS
    with pytest.raises(KeyError, match="no day table 'metrics'"):
        tables.table_columns("metrics")


def test_the_schema_digest_is_short_stable_and_follows_every_column(monkeypatch):
    digest = tables.schema_digest()
    assert re.fullmatch(r"[0-9a-f]{16}", digest) and tables.schema_digest() == digest
    monkeypatch.setitem(tables.DERIVED_COLUMNS, "citations", (*tables.DERIVED_COLUMNS["citations"], ("x_s", "float")))
    assert tables.schema_digest() != digest
    monkeypatch.undo()
    assert tables.schema_digest() == digest
    monkeypatch.setitem(
        tables.DERIVED_COLUMNS, "citations", tuple((c, "int" if c == "gone_s" else t) for c, t in
                                                    tables.DERIVED_COLUMNS["citations"])
    )
    assert tables.schema_digest() != digest


@pytest.mark.parametrize("large", [False, True], ids=["unreachable", "collected"])
def test_the_days_store_is_let_go_before_its_tables_are_built(monkeypatch, large):
    """The tables need only the log: once the day has run, nothing of it holds its store (a
    large day's search index is most of its memory), so it is freed before the tables, not kept
    beside them (the answer callback, the checker and the environment held it once). Any day's
    store is unreachable then (a collection frees it); a day of many starting articles also
    collects its garbage itself, so its store is gone without a collection of the test's."""
    import gc
    import weakref

    import kbsim.sim.day as day_module

    stores, alive = [], []

    def day_store(*args, **kwargs):
        store = real_store(*args, **kwargs)
        stores.append(weakref.ref(store))
        return store

    def tabulate(log, params, seed):
        if not large:
            gc.collect()
        alive.append(stores[-1]() is not None)
        return real_tabulate(log, params, seed)

    real_store, real_tabulate = day_module.day_store, day_module.tabulate
    monkeypatch.setattr(day_module, "day_store", day_store)
    monkeypatch.setattr(day_module, "tabulate", tabulate)
    if large:  # the reference day's 400 articles count as many
        monkeypatch.setattr(day_module, "COLLECT_BEFORE_TABLES_FROM", 1)
    day_module.run_day(DayParams(edit={"delay_s": 60}), 1)
    assert alive == [False]


@pytest.mark.parametrize("large", [False, True])
def test_a_large_day_hands_its_free_memory_back_before_its_tables(monkeypatch, large):
    """A day of many starting articles gives the allocator's free memory back to the system
    (its store's arrays, freed in the allocator's heap) after it lets its store go and before
    its tables; a small day does not spend the call; the results are the same either way."""
    import kbsim.sim.day as day_module

    calls = []
    real_release, real_tabulate = day_module.release_free_memory, day_module.tabulate
    monkeypatch.setattr(day_module, "release_free_memory", lambda: calls.append("released") or real_release())
    monkeypatch.setattr(day_module, "tabulate", lambda *args: calls.append("tables") or real_tabulate(*args))
    if large:
        monkeypatch.setattr(day_module, "COLLECT_BEFORE_TABLES_FROM", 1)
    tables = day_module.run_day(DayParams(), 1)
    assert calls == (["released", "tables"] if large else ["tables"])
    monkeypatch.undo()
    again = day_module.run_day(DayParams(), 1)
    assert {name: frame.equals(again[name]) for name, frame in tables.items()} == dict.fromkeys(tables, True)


def test_free_memory_is_handed_back_where_the_c_library_can():
    """On glibc (Linux) the call is ``malloc_trim``; it returns nothing and can be repeated."""
    import sys

    import kbsim.sim.day as day_module

    if sys.platform.startswith("linux"):
        assert day_module._malloc_trim() is not None
    assert day_module.release_free_memory() is None and day_module.release_free_memory() is None
