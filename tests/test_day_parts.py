"""A day's parts are passed in: its store (a factory) and its sources of activity."""

from __future__ import annotations

import pandas as pd

from kbsim import MemoryStore
from kbsim.params import DayParams
from kbsim.sim import run_day, simulate_day
from kbsim.sim.activity import SaveArrival, synthetic_questions

PARAMS = DayParams.model_validate(
    {"day_hours": 2, "corpus": {"articles": 40}, "questions": {"count": 30}, "saves": {"count": 40}}
)


def test_a_hand_written_saves_source_replaces_the_synthetic_saves():
    """The editor saves exactly what its source says; the questions keep their own streams."""
    arrivals = [
        SaveArrival(600.0, "content", "art-000003", content="Step 1: restart the router."),
        SaveArrival(1200.0, "content_and_title", "art-000003", content="New text.", title="Router help"),
        SaveArrival(1800.5, "unpublish", "art-000007"),
        SaveArrival(2400.0, "content", content="Drawn by popularity."),  # no article: drawn
    ]
    stores: list[MemoryStore] = []

    def factory(event_retention_s):
        stores.append(MemoryStore(event_retention_s))
        return stores[-1]

    tables, log = simulate_day(PARAMS, 3, saves=lambda day: iter(arrivals), store=factory)
    saves = tables["saves"]
    assert saves[["time_s", "kind"]].values.tolist() == [
        [600.0, "content"], [1200.0, "content_and_title"], [1800.5, "unpublish"], [2400.0, "content"]]
    assert saves["article_id"].tolist()[:3] == ["art-000003", "art-000003", "art-000007"]
    drawn = saves["article_id"].iloc[3]
    state = stores[0].article_state("kb-1", "art-000003")
    assert (state.title, state.content) == ("Router help", "New text.")
    assert not stores[0].article_state("kb-1", "art-000007").published
    assert stores[0].article_state("kb-1", drawn).content == "Drawn by popularity."
    # the questions come from their own streams: the same times as in the synthetic day
    synthetic = run_day(PARAMS, 3, questions=synthetic_questions)
    pd.testing.assert_series_equal(
        tables["citations"].groupby("answer_id")["asked_s"].first(),
        synthetic["citations"].groupby("answer_id")["asked_s"].first(),
    )
    assert log.people_save_times["art-000003"] == [600.0, 1200.0]
