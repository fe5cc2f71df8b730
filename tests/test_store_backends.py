"""The store backend a day runs on, named by ``store.backend``: the registry, the day, an experiment.

Every backend in ``kbsim.store.STORE_BACKENDS`` must give a day the very tables the
default in-memory store gives (the backends are held to identical behaviour by the
conformance tests, which cover every registered backend too).
"""

from __future__ import annotations

import pandas as pd
import pytest
from tiny_configs import TINY_DAY

from kbsim import MemoryStore, SQLiteStore
from kbsim.params import DEFAULT_STORE_BACKEND, DayParams
from kbsim.runner.config import ConfigError
from kbsim.runner.load import config_from_dict, load_config
from kbsim.runner.run import load_results, run_experiment
from kbsim.sim import run_day
from kbsim.sim.day import day_store, starting_knowledge_base
from kbsim.store import STORE_BACKENDS, store_backend

SMALL_DAY = {
    "day_hours": 2,
    "corpus": {"articles": 30},
    "questions": {"count": 20},
    "saves": {"count": 30},
    "edit": {"delay_s": 60.0},
}


def _on(backend: str, **overrides) -> DayParams:
    return DayParams.model_validate({**SMALL_DAY, **overrides, "store": {"backend": backend}})


@pytest.mark.parametrize("backend", sorted(set(STORE_BACKENDS) - {DEFAULT_STORE_BACKEND}))
@pytest.mark.parametrize("overrides", [{}, {"event_retention_s": 900.0}])
def test_every_registered_backend_gives_a_day_the_default_backends_tables(monkeypatch, backend, overrides):
    built = []
    factory = STORE_BACKENDS[backend]

    def recording(event_retention_s):
        built.append(factory(event_retention_s))
        return built[-1]

    monkeypatch.setitem(STORE_BACKENDS, backend, recording)
    params = _on(backend, **overrides)
    expected = run_day(params.model_copy(update={"store": DayParams().store}), 3)
    actual = run_day(params, 3)
    assert len(built) == 1 and built[0].latest_sequence("kb-1") == 30 + len(expected["saves"])
    assert set(actual) == set(expected)
    for name in expected:
        pd.testing.assert_frame_equal(actual[name], expected[name], obj=name)
    assert len(expected["edits"]) > 0 and len(expected["checks"]) > 0


def test_day_store_builds_the_named_backend_and_a_given_factory_wins():
    params = _on("sqlite")
    starting = starting_knowledge_base(params.corpus, 1)
    on_sqlite = day_store(starting, params)
    assert isinstance(on_sqlite, SQLiteStore) and on_sqlite.path == ":memory:"
    assert on_sqlite.published_article_ids("kb-1") == list(starting.article_ids)
    given = day_store(starting, params, MemoryStore)
    assert isinstance(given, MemoryStore)
    assert isinstance(day_store(starting, _on("memory")), MemoryStore)
    assert given.snapshot() == on_sqlite.snapshot()


def test_the_default_backend_is_left_out_of_the_parameters_so_run_ids_stay():
    assert "store" not in DayParams().model_dump(mode="json")
    assert "store" not in _on("memory").model_dump(mode="json")
    assert _on("sqlite").model_dump(mode="json")["store"] == {"backend": "sqlite"}
    assert DayParams.model_validate(_on("sqlite").model_dump(mode="json")) == _on("sqlite")

    default = config_from_dict({"name": "tiny", "params": SMALL_DAY, "seeds": 2})
    named = config_from_dict({"name": "tiny", "params": {**SMALL_DAY, "store.backend": "memory"}, "seeds": 2})
    on_sqlite = config_from_dict({"name": "tiny", "params": {**SMALL_DAY, "store.backend": "sqlite"}, "seeds": 2})
    assert [r.run_id for r in named.runs()] == [r.run_id for r in default.runs()]
    assert not {r.run_id for r in on_sqlite.runs()} & {r.run_id for r in default.runs()}


def test_an_experiment_on_sqlite_finds_the_memory_backends_tables(tmp_path):
    path = tmp_path / "backends.yaml"
    path.write_text(
        "name: backends\n"
        + TINY_DAY.replace("seeds:", "  edit.delay_s: 60\nseeds:")
        + "scenarios:\n  memory: {}\n  sqlite: {store.backend: sqlite}\n",
        encoding="utf-8",
    )
    config = load_config(path)
    assert [r.params.store.backend for r in config.runs()] == ["memory", "memory", "sqlite", "sqlite"]
    result = run_experiment(config, tmp_path / "out", workers=2, progress=False)
    assert result.failures == [] and result.runs_computed == 4
    tables = load_results(result.directory)
    compared = [name for name in tables if name not in ("runs", "timings", "errors")]
    assert {"citations", "checks", "detections", "edits", "metrics"} <= set(compared)
    for name in compared:
        frame = tables[name].drop(columns="run_id")
        by_backend = [
            frame[frame["scenario"] == scenario].drop(columns="scenario").reset_index(drop=True)
            for scenario in ("memory", "sqlite")
        ]
        assert len(by_backend[0]) > 0, name
        pd.testing.assert_frame_equal(by_backend[1], by_backend[0], obj=name)
    summary = result.summary.set_index("scenario")
    pd.testing.assert_frame_equal(
        summary.loc["sqlite"].reset_index(drop=True), summary.loc["memory"].reset_index(drop=True)
    )


def test_a_backend_no_one_registered_is_refused_naming_the_key_before_anything_runs():
    with pytest.raises(ConfigError) as caught:
        config_from_dict(
            {"name": "tiny", "params": SMALL_DAY, "scenarios": {"fast": {}, "typo": {"store.backend": "sqlit"}}}
        )
    assert caught.value.key_path == "scenarios.typo.store.backend"
    assert "'sqlit' is not a store backend" in caught.value.problem and "memory, sqlite" in caught.value.problem
    with pytest.raises(ConfigError, match=r"params\.store\.backend: .*should match pattern"):
        config_from_dict({"name": "tiny", "params": {"store.backend": "SQLite file"}})
    with pytest.raises(ValueError, match="'sqlit' is not a store backend"):
        store_backend("sqlit")


def test_registering_a_backend_is_all_an_experiment_needs_to_name_it(monkeypatch):
    """The "add a store backend" task: a module with the factory, one registry entry."""
    opened = []

    class CountingStore(MemoryStore):
        """A toy backend: the in-memory store, counting the saves it takes."""

        saves = 0

        def save_article(self, *args, **kwargs):
            type(self).saves += 1
            return super().save_article(*args, **kwargs)

    def counting(event_retention_s):
        opened.append(CountingStore(event_retention_s))
        return opened[-1]

    monkeypatch.setitem(STORE_BACKENDS, "counting", counting)
    config = config_from_dict({"name": "toy", "params": {**SMALL_DAY, "store.backend": "counting"}, "seeds": 1})
    (run,) = config.runs()
    tables = run_day(run.params, run.seed)
    people_saves = tables["saves"]["kind"].isin(["content", "content_and_title"]).sum()
    assert len(opened) == 1 and CountingStore.saves == people_saves > 0
    expected = run_day(run.params.model_copy(update={"store": DayParams().store}), run.seed)
    for name in expected:
        pd.testing.assert_frame_equal(tables[name], expected[name], obj=name)
