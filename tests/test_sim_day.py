"""The simulated day: determinism, a golden back-test, ground-truth checks that can fire."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pandas as pd
import pytest

import kbsim.sim.checks as checks
from kbsim.params import DayParams
from kbsim.sim import StalenessMismatch, run_day
from kbsim.sim.checks import CheckOutcome, flag_citations, reread_articles
from kbsim.stats import run_metrics, summarize

GOLDEN = Path(__file__).parent / "golden" / "small_summary.csv"

SMALL = {
    "day_hours": 4,
    "corpus": {"articles": 120},
    "questions": {"count": 60},
    "saves": {"count": 150},
    "edit": {"delay_s": 600},
}


def small(**overrides) -> DayParams:
    data = {**SMALL, **overrides}
    return DayParams.model_validate(data)


def parquet_bytes(table: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    table.to_parquet(buffer, index=False)
    return buffer.getvalue()


def test_same_seed_same_bytes_and_other_seed_differs():
    first, again, other = run_day(small(), 7), run_day(small(), 7), run_day(small(), 8)
    for name in ("citations", "checks", "edits", "saves"):
        assert parquet_bytes(first[name]) == parquet_bytes(again[name]), name
    assert parquet_bytes(first["citations"]) != parquet_bytes(other["citations"])
    assert parquet_bytes(first["checks"]) != parquet_bytes(other["checks"])


def test_edits_do_not_change_the_people_or_the_questions():
    """Common random numbers: the agent's edits use their own stream."""
    with_edits, without = run_day(small(), 3), run_day(small(edit={"delay_s": None}), 3)
    def people(tables):
        saves = tables["saves"].query("actor == 'people' and time_s <= 4 * 3600")
        return saves[["time_s", "kind", "article_id"]].reset_index(drop=True)

    pd.testing.assert_frame_equal(people(with_edits), people(without))
    assert with_edits["citations"]["asked_s"].equals(without["citations"]["asked_s"])
    assert len(without["edits"]) == 0 and len(with_edits["edits"]) > 0


def small_summary() -> pd.DataFrame:
    frames = []
    for scenario, overrides in [("zipf", {}), ("control", {"saves": {"count": 150, "popularity": "uniform"}})]:
        for seed in (1, 2):
            metrics = run_metrics(run_day(small(**overrides), seed), 4 * 3600)
            metrics.insert(0, "seed", seed)
            metrics.insert(0, "scenario", scenario)
            frames.append(metrics)
    return summarize(pd.concat(frames, ignore_index=True), ["scenario"])


def test_back_test_against_golden_summary():
    """An unintended change of results cannot pass unnoticed.

    Regenerate deliberately with ``KBSIM_UPDATE_GOLDEN=1 pytest tests/test_sim_day.py``.
    """
    summary = small_summary()
    if os.environ.get("KBSIM_UPDATE_GOLDEN") == "1":
        summary.to_csv(GOLDEN, index=False, float_format="%.12g")
    golden = pd.read_csv(GOLDEN)
    observed = pd.read_csv(io.StringIO(summary.to_csv(index=False, float_format="%.12g")))
    pd.testing.assert_frame_equal(observed, golden)


def test_broken_poll_paging_is_caught(monkeypatch):
    """Mutation check: a poll that reads only the first page must trip the ground-truth assertion."""

    def first_page_only(client, kb_id, citations, state, page_size):
        # Bug under test: ignores has_more, then jumps the cursor to the end of the log.
        page = client.call(
            "poll_resource_events",
            {"resource_type": "knowledge_base", "resource_id": kb_id,
             "after_sequence": state.cursor, "limit": page_size},
        )
        state.cursor = client.store.latest_sequence(kb_id)
        outcome = CheckOutcome(calls=1)
        cited = {c.article_id for c in citations}
        moved = [e["article_id"] for e in page["events"] if e["article_id"] in cited]
        state.known.update(reread_articles(outcome, client, kb_id, dict.fromkeys(moved)))
        outcome.flagged = flag_citations(citations, state.known)
        return outcome

    params = small(checks={"poll_page_size": 5}, edit={"delay_s": None})
    run_day(params, 1)  # the real strategy passes with small pages
    monkeypatch.setattr(checks, "check_by_polling", first_page_only)
    with pytest.raises(StalenessMismatch, match=r"check \d+: strategy 'poll' disagrees"):
        run_day(params, 1)


def test_short_retention_forces_fallback_and_stays_exact():
    params = small(event_retention_s=600, edit={"delay_s": None})
    checks = run_day(params, 2)["checks"]  # the checker asserts exactness itself
    poll = checks[checks["strategy"] == "poll"]
    assert poll["cursor_expired"].any()
    reread = checks[checks["strategy"] == "reread"].set_index("check_index")
    expired = poll[poll["cursor_expired"]].set_index("check_index")
    # The fallback re-reads every cited article not already known gone.
    floor = reread.loc[expired.index, "calls"] - reread.loc[expired.index, "true_gone"]
    assert (expired["calls"] >= floor).all()


@pytest.mark.parametrize("distribution", ["fixed", "exponential", "lognormal"])
def test_edit_outcomes_are_complete(distribution):
    params = small(edit={"delay_s": 300, "delay_distribution": distribution, "share": 0.5})
    edits = run_day(params, 4)["edits"]
    assert set(edits["outcome"]) <= {"applied", "conflict", "gone"}
    applied = (edits["outcome"] == "applied") | (edits["retry_outcome"] == "applied")
    assert edits.loc[applied, "replay_ok"].eq(True).all()
    assert edits.loc[~applied, "replay_ok"].isna().all()
    # A conflict always means somebody saved in between; an applied first try means nobody did
    # (people's saves only; the agent's own earlier edits can also cause conflicts).
    assert (edits.loc[edits["outcome"] == "applied", "people_saves_between"] == 0).all()
    if distribution == "fixed":
        assert (edits["delay_s"] == 300).all()
    else:
        assert edits["delay_s"].nunique() > 1


def test_poisson_arrivals_vary_the_counts():
    counts = {len(run_day(small(arrivals="poisson"), seed)["saves"].query("actor == 'people' and time_s <= 14400"))
              for seed in (1, 2, 3)}
    assert len(counts) > 1


def test_control_spreads_saves_over_more_articles():
    zipf = run_day(small(edit={"delay_s": None}), 5)["saves"]
    control = run_day(small(edit={"delay_s": None}, saves={"count": 150, "popularity": "uniform"}), 5)["saves"]
    assert control["article_id"].nunique() > zipf["article_id"].nunique()
