"""Issue 27: the write-up's advice as switches, the lossy transport and several agents."""

from __future__ import annotations

import pandas as pd
import pytest

from kbsim.params import DayParams
from kbsim.sim import run_day
from kbsim.store import MemoryStore, SQLiteStore


def _day(**groups) -> DayParams:
    edit = {"delay_s": 600, **groups.pop("edit", {})}
    return DayParams.model_validate({"edit": edit, **groups})


def test_switches_at_their_defaults_leave_the_dump_and_so_every_run_id():
    assert DayParams().model_dump() == DayParams.model_validate(
        {"edit": {"compare_and_swap": True, "idempotency_key": True}, "transport": {"loss_rate": 0},
         "citation": {"carries_version": True}, "events": {"log_unpublish": True}, "agents": {"count": 1}}
    ).model_dump()
    dumped = DayParams().model_dump()
    assert not {"transport", "citation", "events", "agents"} & set(dumped)
    assert not {"compare_and_swap", "idempotency_key"} & set(dumped["edit"])
    assert _day(agents={"count": 2}).model_dump()["agents"] == {"count": 2}
    assert not DayParams().uses_design_switches and _day(transport={"loss_rate": 0.01}).uses_design_switches


@pytest.mark.parametrize("delay", [None, 60, 3600])
def test_the_switched_agents_at_the_defaults_give_todays_tables(monkeypatch, delay):
    params = _day(edit={"delay_s": delay})
    today = run_day(params, 3)
    monkeypatch.setattr(DayParams, "uses_design_switches", property(lambda self: True))
    switched = run_day(params, 3)
    for name, table in today.items():
        pd.testing.assert_frame_equal(table, switched[name])
    assert set(switched) - set(today) <= {"intents", "transport"}


@pytest.mark.parametrize("backend", [MemoryStore, lambda: SQLiteStore(":memory:")])
def test_an_unpublish_without_an_event_is_a_store_option_both_backends_keep(backend):
    store = backend()
    ids = store.create_knowledge_base("kb", [("Alpha guide", "alpha text"), ("Beta guide", "beta text")], at=0.0)
    before = store.latest_sequence("kb")
    quiet = store.unpublish_article("kb", ids[0], at=5.0, log_event=False)
    assert store.latest_sequence("kb") == before and store.current_version("kb", ids[0]) is None
    loud = store.unpublish_article("kb", ids[1], at=6.0)
    assert store.latest_sequence("kb") == before + 1
    assert (quiet, loud) == ("2026-01-05T09:00:05.000000Z", "2026-01-05T09:00:06.000000Z")
    client = store.client(grants={"kb"}, clock=lambda: 7.0)
    events = client.call("poll_resource_events", {"resource_type": "knowledge_base", "resource_id": "kb",
                                                  "after_sequence": before})["events"]
    assert [(e["type"], e["article_id"]) for e in events] == [("article.unpublished", ids[1])]


@pytest.mark.parametrize("loss", [0.01, 0.05, 0.2])
@pytest.mark.parametrize("count", [1, 5])
def test_with_compare_and_swap_and_keys_no_lost_update_or_duplicate_ever(loss, count):
    # DesignInvariantError would be raised at the step; the tables say so too
    params = _day(edit={"delay_s": 3600}, transport={"loss_rate": loss}, agents={"count": count})
    intents = run_day(params, 1)["intents"]
    assert len(intents) > 20
    assert intents["applications"].max() <= 1 and intents["people_overwritten"].sum() == 0
    assert intents["agents_overwritten"].sum() == 0


def test_blind_overwrites_lose_peoples_saves_and_fresh_keys_duplicate():
    blind = run_day(_day(edit={"delay_s": 3600, "compare_and_swap": False}), 1)
    assert blind["intents"]["people_overwritten"].sum() > 0 and blind["intents"]["applications"].max() == 1
    assert (blind["edits"]["outcome"] != "conflict").all()
    fresh = run_day(_day(edit={"idempotency_key": False}, transport={"loss_rate": 0.2}), 1)
    assert (fresh["intents"]["applications"] > 1).sum() > 0
    assert fresh["intents"]["conflicts_self"].sum() > 0  # a resend ran into the edit's own write
    transport = fresh["transport"].set_index(["agent", "tool"])
    assert transport["sends"].sum() > transport["calls"].sum() and transport["retry_bytes"].sum() > 0


def test_several_agents_check_their_own_citations_and_a_shared_consumer_polls_less():
    tables = run_day(_day(agents={"count": 5}), 2)
    own = tables["agent_checks"]
    assert sorted(own["agent"].unique()) == [0, 1, 2, 3, 4]
    held = own[own["strategy"] == "poll"].groupby("check_index")["citations_held"].sum()
    shared = tables["checks"][tables["checks"]["strategy"] == "poll"].set_index("check_index")
    assert (held == shared["citations_held"]).all()
    own_calls = own[own["strategy"] == "poll"].groupby("check_index")["calls"].sum()
    assert (own_calls >= shared["calls"]).all() and own_calls.sum() > shared["calls"].sum()


def test_without_unpublish_events_the_poll_misses_gone_citations_and_the_reread_does_not():
    checks = run_day(_day(events={"log_unpublish": False}), 1)["checks"]
    last = checks[checks["check_index"] == checks["check_index"].max()].set_index("strategy")
    assert last.loc["poll", "true_gone"] > 0
    assert last.loc["poll", "flagged_gone"] < last.loc["poll", "true_gone"]
    assert last.loc["reread", "flagged_gone"] == last.loc["reread", "true_gone"]


def test_without_versions_the_checks_compare_text_and_stay_exact_by_text():
    tables = run_day(_day(citation={"carries_version": False}), 1)
    text = tables["text_checks"]
    assert set(text["strategy"]) == {"reread", "poll"} and (text["kept_bytes"] > 0).all()
    assert (text["flagged"] + text["missed_restored"] == text["true_stale"]).all()
