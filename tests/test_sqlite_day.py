"""The differential test: a simulated day on SQLiteStore gives the same tables as in memory.

``run_day`` builds each seed's starting knowledge base once and copies it
for every day (``starting_knowledge_base(...)[1].copy(event_retention_s=...)``).
Here that template is swapped for one whose ``copy()`` publishes the same
corpus into a fresh SQLiteStore, so the whole day (people's saves, searches,
reads, checks, edits, retries, replays, polls) runs on SQLite. Any
difference in any table is a bug in one of the backends.
"""

from __future__ import annotations

import pandas as pd
import pytest

import kbsim.sim.day as sim_day
from kbsim import SQLiteStore
from kbsim.params import DayParams


class SQLiteTemplate:
    """Stands in for the in-memory starting knowledge base; copies become SQLiteStores."""

    def __init__(self, memory_template, path_for_copy) -> None:
        self.memory_template = memory_template
        self.path_for_copy = path_for_copy

    def copy(self, event_retention_s: float | None = None) -> SQLiteStore:
        state = self.memory_template.snapshot()
        store = SQLiteStore(self.path_for_copy(), event_retention_s=event_retention_s)
        for kb_id, kb in state["kbs"].items():
            store.create_knowledge_base(kb_id)
            for article_id, title, content, _published, version_us in kb["articles"]:
                published = store.publish_article(
                    kb_id, title=title, content=content, at=version_us / 1e6
                )
                assert published == article_id
        assert store.snapshot() == state
        return store


def run_day_on_sqlite(monkeypatch, params: DayParams, seed: int, path_for_copy):
    build = sim_day.starting_knowledge_base
    used = []

    def on_sqlite(corpus_params, seed):
        corpus, template, article_ids, ranking = build(corpus_params, seed)
        used.append(True)
        return corpus, SQLiteTemplate(template, path_for_copy), article_ids, ranking

    with monkeypatch.context() as patch:
        patch.setattr(sim_day, "starting_knowledge_base", on_sqlite)
        tables = sim_day.run_day(params, seed)
    assert used, "run_day no longer builds its store from starting_knowledge_base"
    return tables


@pytest.mark.parametrize(
    "seed, overrides, on_file",
    [
        (1, {"edit": {"delay_s": 60.0}}, True),
        (2, {"edit": {"delay_s": 60.0}}, False),
        (3, {"edit": {"delay_s": 600.0}, "event_retention_s": 1800.0}, False),
    ],
)
def test_reference_day_gives_identical_tables_on_both_backends(
    tmp_path, monkeypatch, seed, overrides, on_file
):
    params = DayParams.model_validate(overrides)
    expected = sim_day.run_day(params, seed)
    path = tmp_path / f"day-{seed}.db" if on_file else ":memory:"
    actual = run_day_on_sqlite(monkeypatch, params, seed, lambda: path)
    assert set(actual) == set(expected)
    for name in expected:
        pd.testing.assert_frame_equal(actual[name], expected[name], obj=name)
    assert len(expected["citations"]) > 0 and len(expected["checks"]) > 0
    assert len(expected["edits"]) > 0
