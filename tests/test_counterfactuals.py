"""Issue 37: each piece of the write-up's advice turned off as what the system then lacks."""

from __future__ import annotations

import pandas as pd
import pytest

from kbsim.params import DayParams
from kbsim.sim import run_day
from kbsim.stats import run_metrics

TINY = {"day_hours": 3, "corpus": {"articles": 30}, "questions": {"count": 40}, "saves": {"count": 90}}


def _day(**groups) -> DayParams:
    edit = {"delay_s": 1800, "share": 1.0, **groups.pop("edit", {})}
    return DayParams.model_validate({**TINY, "edit": edit, **groups})


def _metric(tables, name: str) -> pd.Series:
    rows = run_metrics(tables, 3 * 3600)
    return rows[rows["name"] == name].iloc[0]


def test_new_switches_at_their_defaults_are_todays_day_and_its_dump():
    assert DayParams().model_dump() == DayParams.model_validate(
        {"drafts": {"share": 0, "answer_from_drafts": False}, "review": {"wrong_share": 0}}).model_dump()
    assert not {"drafts", "review"} & set(DayParams().model_dump())
    assert not DayParams().uses_design_switches
    assert _day(drafts={"share": 0.2}).uses_design_switches and _day(review={"wrong_share": 0.1}).uses_design_switches


@pytest.mark.parametrize("bad", [
    {"citation": {"edit_without_version": "overwrite"}},  # needs citations without a version
    {"drafts": {"answer_from_drafts": True}},  # needs drafts
])
def test_a_counterfactual_without_what_it_needs_is_refused(bad):
    with pytest.raises(ValueError):
        DayParams.model_validate(bad)


def test_without_a_version_the_edit_overwrites_and_loses_peoples_saves():
    with_version = run_day(_day(citation={"carries_version": False}), 4)  # still sends the cited version
    blind = run_day(_day(citation={"carries_version": False, "edit_without_version": "overwrite"}), 4)
    assert with_version["intents"]["people_overwritten"].sum() == 0
    assert (with_version["edits"]["outcome"] == "conflict").sum() > 0
    lost = blind["intents"]["people_overwritten"]
    assert (blind["edits"]["outcome"] != "conflict").all() and lost.sum() > 0
    # only people's saves made between the citation and the edit can be lost
    assert (lost.to_numpy() <= blind["edits"]["people_saves_between"].to_numpy()).all()
    per_edit = _metric(blind, "lost_updates_per_edit")
    assert (per_edit["successes"], per_edit["trials"]) == (lost.sum(), len(blind["edits"]))
    assert _metric(with_version, "lost_updates_per_edit")["value"] == 0


def test_a_reread_just_before_the_edit_call_costs_a_read_and_still_races_the_approval():
    overwrite = run_day(_day(citation={"carries_version": False, "edit_without_version": "overwrite"}), 4)
    reread = run_day(_day(citation={"carries_version": False, "edit_without_version": "reread"}), 4)
    reads = {name: t["transport"].query("agent == '0' and tool == 'read_knowledge_article'")["calls"].sum()
             for name, t in (("overwrite", overwrite), ("reread", reread))}
    assert reads["reread"] - reads["overwrite"] == len(reread["edits"])
    # the approval sits between the read and the write: saves in that window are still lost
    assert reread["intents"]["people_overwritten"].sum() > 0


def test_answering_from_drafts_cites_text_no_person_had_published():
    published_only = run_day(_day(drafts={"share": 0.5, "lead_s": 3600}), 2)
    from_drafts = run_day(_day(drafts={"share": 0.5, "lead_s": 3600, "answer_from_drafts": True}), 2)
    # what the agent reads does not change what people save (common random numbers)
    pd.testing.assert_frame_equal(published_only["saves"], from_drafts["saves"])
    assert "draft_citations" not in published_only
    drafted = from_drafts["draft_citations"]
    assert len(drafted) > 0
    # each was pending when cited: written before, and published (if ever) an hour after writing
    assert ((drafted["drafted_s"] <= drafted["asked_s"]) & (drafted["asked_s"] < drafted["drafted_s"] + 3600)).all()
    share = _metric(from_drafts, "draft_answer_share")
    assert share["successes"] == drafted["answer_id"].nunique() > 0
    assert _metric(published_only, "draft_answer_share")["value"] == 0


def test_wrong_edits_land_only_without_a_per_call_review():
    review = {"wrong_share": 0.4, "catch_share": 1.0}
    per_call = run_day(_day(review=review), 3)
    session = run_day(_day(edit={"delay_s": 1}, review={**review, "per_call": False}), 3)
    per_call["reviews"] = per_call["reviews"].sort_values("answer_id", ignore_index=True)
    session["reviews"] = session["reviews"].sort_values("answer_id", ignore_index=True)
    # the same edits are wrong in both (the review stream), whatever the delay
    assert per_call["reviews"]["wrong"].tolist() == session["reviews"]["wrong"].tolist()
    wrong = per_call["reviews"]["wrong"]
    assert wrong.sum() > 0
    assert (per_call["reviews"]["refused"] == wrong).all() and not (wrong & per_call["reviews"]["landed"]).any()
    assert (per_call["edits"]["outcome"] == "refused").sum() == wrong.sum()
    assert not session["reviews"]["refused"].any() and (wrong & session["reviews"]["landed"]).sum() == wrong.sum()
    assert _metric(per_call, "wrong_landed_per_edit")["value"] == 0
    assert _metric(session, "wrong_landed_per_edit")["successes"] == wrong.sum()


def test_a_reviewer_who_catches_some_lets_the_rest_land():
    tables = run_day(_day(review={"wrong_share": 0.5, "catch_share": 0.5}), 3)
    reviews = tables["reviews"]
    caught, missed = reviews["refused"], reviews["wrong"] & ~reviews["refused"]
    assert caught.sum() > 0 and missed.sum() > 0 and (reviews["landed"][missed]).any()


def test_duplicates_are_counted_against_the_edits_that_were_resent():
    tables = run_day(_day(edit={"idempotency_key": False}, transport={"loss_rate": 0.2}), 1)
    intents = tables["intents"]
    row = _metric(tables, "duplicates_per_retried_edit")
    assert row["trials"] == (intents["sends"] > 1).sum() < len(intents)
    assert row["successes"] == (intents["applications"] > 1).sum() > 0
