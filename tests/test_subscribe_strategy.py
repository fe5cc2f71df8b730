"""The fourth check strategy, ``subscribe`` (issue 38): MCP's resources/subscribe in the day.

It is held exact by the day's checker (which raises at the first check it is not), on both
store backends, on a day of two agents over a lossy wire, and with unpublishes that write no
event; it costs what it subscribes to and what moves, not every save; and the analytic model
gives that cost, so advice weighs it with the others."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from kbsim.params import DayParams
from kbsim.sim import run_day
from kbsim.sim.strategies import DEFAULT, resolve
from kbsim.store import SQLiteStore

DAY = {
    "day_hours": 3,
    "corpus": {"articles": 80},
    "questions": {"count": 40},
    "saves": {"count": 300},
    "checks": {"interval_s": 1800, "strategies": [*DEFAULT, "subscribe"]},
    "edit": {"delay_s": 600},
}


def day(**changes) -> DayParams:
    return DayParams.model_validate({**DAY, **changes})


def per_strategy(tables, column: str) -> pd.Series:
    return tables["checks"].groupby("strategy")[column].sum()


def test_subscribe_is_exact_and_finds_each_stale_citation_when_poll_and_reread_do():
    tables = run_day(day(), 3, checked=True)  # the checker raises at the first check it is not exact
    assert set(tables["checks"]["strategy"]) == {"title", "reread", "poll", "subscribe"}
    first = tables["detections"].pivot_table(index=["answer_id", "position"], columns="strategy",
                                             values="first_flagged_s", aggfunc="first")
    assert first["subscribe"].notna().sum() > 0
    pd.testing.assert_series_equal(first["subscribe"], first["poll"], check_names=False)
    pd.testing.assert_series_equal(first["subscribe"], first["reread"], check_names=False)
    calls = per_strategy(tables, "calls")
    assert 0 < calls["subscribe"] < calls["reread"]


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_subscribe_is_exact_on_both_backends_with_unlogged_unpublishes(tmp_path, backend):
    """An unpublish that writes no event is missed by the poll (not held exact then) but heard
    by a subscription."""
    params = day(events={"log_unpublish": False}, saves={"count": 300, "mix": {
        "content": 0.6, "content_and_title": 0.1, "unpublish": 0.3}})
    store = None if backend == "memory" else (lambda retention: SQLiteStore(
        tmp_path / "kb.db", event_retention_s=retention, synchronous="NORMAL"))
    tables = run_day(params, 5, store=store, checked=True)  # raises StalenessMismatch if not exact
    assert per_strategy(tables, "calls")["subscribe"] > 0


def test_subscribe_is_exact_for_each_of_two_agents_over_a_lossy_wire():
    tables = run_day(day(agents={"count": 2}, transport={"loss_rate": 0.2}), 7, checked=True)
    assert "subscribe" in set(tables["checks"]["strategy"])


def test_the_model_has_its_cost_so_advice_for_a_day_naming_it_gives_that_not_simulation_only(tmp_path, capsys):
    """Issues 38/39: the model costs the subscription (a subscription and a read of each article
    first cited, a read of each held one told of a change), so ``kbsim advise`` weighs it with
    the others and names it with its cost, and nothing is left to simulation only."""
    from kbsim.cli import main
    from kbsim.model import analytic

    (subscribe,) = resolve(["subscribe"])
    assert subscribe.model is not None and subscribe.exact
    assert set(subscribe.model_checked) == {"calls_per_hour", "bytes_per_hour"}
    path = tmp_path / "day.yaml"
    path.write_text(yaml.safe_dump(DAY))
    assert main(["advise", "--config", str(path), "--max-latency", "40min"]) == 0
    out = capsys.readouterr().out
    predicted = analytic.predict_check_policy(day(checks={**DAY["checks"], "interval_s": 3600})).set_index("strategy")
    calls = predicted.loc["subscribe", "calls_per_hour"]
    assert f"subscribe (MCP resources) every 1 h: {calls:.3g} calls/h" in out, out
    assert "simulation only" not in out
