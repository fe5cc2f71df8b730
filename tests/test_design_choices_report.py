"""The figure ``design_choices``, from a tiny ablation study (the shipped config's scenarios and
contrasts on 3-hour days of 60 articles). The table "What each design choice buys" reads
experiments/advice.yaml since issue 37 (tests/test_advice_report.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kbsim.report import build, experiments, figures, model_checks, plots
from kbsim.runner.shipped import SHIPPED_DIR

pytestmark = pytest.mark.xdist_group("design_choices")

TINY_DAY = {"day_hours": 3, "corpus": {"articles": 60}, "questions": {"count": 30}, "saves": {"count": 80}}


@pytest.fixture(scope="module")
def ablation(tmp_path_factory):
    """The shipped ablation config, shrunk to 2 seeds, 2 loss rates and 1-2 agents, run once."""
    root = tmp_path_factory.mktemp("ablation")
    config = yaml.safe_load((Path(SHIPPED_DIR) / "ablation.yaml").read_text())
    config["seeds"] = 2
    config["params"].update(TINY_DAY)
    config["sweep"] = {"transport.loss_rate": [0, 0.05], "agents.count": [1, 2]}
    (root / "experiments").mkdir()
    (root / "experiments" / "ablation.yaml").write_text(yaml.safe_dump(config))
    written = build.build_figures(
        ["design_choices"],
        experiments_dir=root / "experiments",
        results_dir=root / "results",
        figures_dir=root / "figures",
        workers=1,
    )
    experiment = experiments.load_experiment(
        "ablation", experiments_dir=root / "experiments", results_dir=root / "results", run_missing=False
    )
    return root, written, experiment


def test_the_figure_has_one_labelled_panel_per_piece_of_advice(ablation):
    root, written, experiment = ablation
    assert {path.name for path in written} == {"design_choices.png", "design_choices.svg"}
    assert (root / "figures" / "design_choices.png").stat().st_size > 20_000
    fig = figures.draw("design_choices", {"ablation": experiment})
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == [advice.panel for advice in figures.ADVICE]
    for ax, advice in zip(axes, figures.ADVICE, strict=True):
        assert ax.get_xlabel() and ax.get_ylabel()
        assert [text.get_text() for text in ax.get_legend().get_texts()] == [h.label for h in advice.harms]
    # the caption is kept with the figure for figures/README.md, never drawn in it (issue 39)
    assert "experiments/ablation.yaml" in plots.caption_of(fig)
    assert not [text for text in fig.texts if text.get_visible() and text.get_gid() == plots.CAPTION_GID]


def test_the_contrasts_are_paired_and_keys_cost_nothing_on_a_perfect_wire(ablation):
    _, _, experiment = ablation
    frame = figures.design_contrasts(experiment)
    harms = [(i, h.label) for i, advice in enumerate(figures.ADVICE) for h in advice.harms]
    # every harm at every one of the 4 sweep points, over the 2 common seeds
    assert sorted(frame.groupby(["advice", "harm"]).size().items()) == sorted((h, 4) for h in harms)
    assert (frame["seeds"] == 2).all()
    assert ((frame["ci_low"] <= frame["value"]) & (frame["value"] <= frame["ci_high"])).all()
    # without loss no reply is lost, so no edit is retried: a fresh key has nothing to duplicate
    keys = frame[(frame["scenario"] == "no_idempotency_key") & (frame["transport.loss_rate"] == 0)]
    assert len(keys) == 2 and (keys["value"] == 0).all()
    # the default day loses no update (compare-and-swap on): the blind day's harm is its own level
    blind = frame[(frame["scenario"] == "no_compare_and_swap")]
    summary = experiment.summary
    level = summary[(summary["scenario"] == "no_compare_and_swap") & (summary["metric"] == "lost_update_share")
                    & (summary["subset"].fillna("") == "")]
    merged = blind.merge(level, on=["transport.loss_rate", "agents.count"], suffixes=("", "_level"))
    assert len(merged) == 4 and (merged["value"] - merged["value_level"]).abs().max() < 1e-12


def test_the_lost_update_model_check_sets_each_blind_delay_beside_the_model(ablation):
    _, _, experiment = ablation
    frame = model_checks.lost_update_model_check({"ablation": experiment})
    assert list(frame["scenario"]) == list(model_checks.BLIND_SCENARIOS)
    assert list(frame["delay_s"]) == [600.0, 1.0]
    # a longer wait between read and edit leaves more people's saves to overwrite
    assert frame["model"].iloc[0] > frame["model"].iloc[1] > 0
    assert ((frame["ci_low"] <= frame["simulated"]) & (frame["simulated"] <= frame["ci_high"])).all()
    assert frame["model_inside_ci"].dtype == bool
