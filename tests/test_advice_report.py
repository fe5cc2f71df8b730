"""Issue 37: the table "What each design choice buys", its forest plot and the approval model's
trade-off, from tiny runs of the shipped advice and approval configs (3-hour days of 60 articles)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from kbsim.report import build, experiments, figures, pages, reproduction
from kbsim.runner.shipped import SHIPPED_DIR

pytestmark = pytest.mark.xdist_group("advice_report")

TINY_DAY = {"day_hours": 3, "corpus": {"articles": 60}, "questions": {"count": 30}, "saves": {"count": 80}}


@pytest.fixture(scope="module")
def exps(tmp_path_factory):
    """The shipped advice config on 2 seeds and the approval config on 2 seeds and 2 points, run once."""
    root = tmp_path_factory.mktemp("advice")
    (root / "experiments").mkdir()
    advice = yaml.safe_load((Path(SHIPPED_DIR) / "advice.yaml").read_text())
    advice["seeds"] = 2
    advice["params"].update(TINY_DAY)
    for scenario in ("approval_per_call", "approval_session"):  # enough wrong edits in a tiny day
        advice["scenarios"][scenario]["review.wrong_share"] = 0.5
    approval = yaml.safe_load((Path(SHIPPED_DIR) / "approval.yaml").read_text())
    approval["seeds"] = 2
    approval["params"].update(TINY_DAY)
    approval["sweep"] = {"review.wrong_share": [0.2], "review.catch_share": [0.5, 0.95]}
    for name, config in (("advice", advice), ("approval", approval)):
        (root / "experiments" / f"{name}.yaml").write_text(yaml.safe_dump(config))
    written = build.build_figures(["advice_effects"], experiments_dir=root / "experiments",
                                  results_dir=root / "results", figures_dir=root / "figures", workers=1)
    loaded = {name: experiments.load_experiment(name, experiments_dir=root / "experiments",
                                                results_dir=root / "results", workers=1, progress=False)
              for name in ("advice", "approval")}
    return written, loaded


def test_each_row_turns_one_advice_off_with_its_sign_unit_interval_and_seeds(exps):
    _, loaded = exps
    effects = figures.advice_effects(loaded["advice"])
    assert list(effects["row"]) == list(range(len(figures.COUNTERFACTUALS)))
    assert sorted(set(effects["number"])) == [1, 2, 3, 4, 5]
    assert ((effects["ci_low"] <= effects["value"]) & (effects["value"] <= effects["ci_high"])).all()
    assert (effects["seeds"] == 2).all() and set(effects["verdict"]) <= {"excludes zero", "negligible", "undecided"}
    by = {figures.COUNTERFACTUALS[r].scenario + "/" + figures.COUNTERFACTUALS[r].metric: e
          for r, e in zip(effects["row"], effects.itertuples(), strict=True)}
    # no event log: the re-read makes more calls per check than the poll on the same day
    assert by["default/calls_per_check"].value > 0
    # drafts: the published-only day cites none, so the effect is the share answered from drafts
    assert by["answer_from_drafts/draft_answer_share"].value > 0
    # a session-wide permission lands wrong edits a per-call reviewer would refuse, and conflicts less
    assert by["approval_session/wrong_landed_per_edit"].value > 0
    assert by["approval_session/rejection_rate"].value <= 0
    # blind overwrites lose people's saves per agent edit
    assert by["no_compare_and_swap/lost_updates_per_edit"].value > 0


def test_each_verdict_is_what_its_interval_says(exps):
    """Every row's verdict follows from its interval and the row's precision, in its own units."""
    _, loaded = exps
    effects = figures.advice_effects(loaded["advice"])
    for effect in effects.itertuples():
        row = figures.COUNTERFACTUALS[effect.row]
        excludes = effect.ci_low > 0 or effect.ci_high < 0
        narrow = (effect.ci_high - effect.ci_low) / 2 <= row.precision * row.scale + 1e-12
        expected = "excludes zero" if excludes else "negligible" if narrow else "undecided"
        assert effect.verdict == expected, row
        assert effect.bound == pytest.approx(max(abs(effect.ci_low), abs(effect.ci_high)))


def test_the_table_says_effect_of_turning_it_off_and_the_reproduction_links_to_it(exps):
    _, loaded = exps
    lines = pages.design_choices_section(loaded)
    assert f"### {pages.DESIGN_CHOICES_TITLE}" in lines
    table = [line for line in lines if line.startswith("| ")]
    header, _, *body = table[0].splitlines()
    assert "effect of turning it off" in header and "seeds" in header and "verdict" in header
    assert len(body) == len(figures.COUNTERFACTUALS)
    for row in body:
        assert re.search(r"[+-][\d.]+ \[[+-][\d.]+, [+-][\d.]+\]", row), row
    assert any(row.startswith("| 2. keep an event log") for row in body)
    approval = table[1].splitlines()
    assert len(approval) == 2 + 2 and "wrong edits landed per 100 edits, session (1 s)" in approval[0]
    anchor = re.sub(r"[^a-z0-9 -]", "", pages.DESIGN_CHOICES_TITLE.lower()).replace(" ", "-")
    assert anchor == pages.DESIGN_CHOICES_ANCHOR and f"results.md#{anchor}" in reproduction.WITHOUT_IT
    assert f"docs/results.md#{anchor}" in (Path(__file__).parents[1] / "README.md").read_text()


def test_the_forest_plot_has_one_row_per_piece_of_advice(exps):
    written, loaded = exps
    assert {path.name for path in written} == {"advice_effects.png", "advice_effects.svg"}
    fig = figures.draw("advice_effects", loaded)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    labels = [ax.get_ylabel() for ax in axes]
    assert [label.split(".")[0] for label in labels] == ["1", "2", "3", "4", "5"]
    for ax in axes:
        assert "seeds" in ax.get_xlabel() and ax.lines  # the point, its bar, and zero
    assert "experiments/advice.yaml" in " ".join(text.get_text() for text in fig.texts)


def test_the_approval_rows_sweep_both_assumptions(exps):
    _, loaded = exps
    rows = pages.approval_rows(loaded)
    assert list(rows["per-call reviewer catches"]) == ["50%", "95%"]
    session = rows["wrong edits landed per 100 edits, session (1 s)"]
    per_call = rows["wrong edits landed per 100 edits, per-call (10 min)"]
    value = lambda cell: float(cell.split(" ")[0])  # noqa: E731
    # without a review every wrong edit lands, whatever the reviewer would have caught
    assert value(session.iloc[0]) == value(session.iloc[1]) > value(per_call.iloc[1])
    assert isinstance(rows, pd.DataFrame)
