"""The figures pipeline end to end on tiny experiments, and what every figure must carry."""

from __future__ import annotations

import re
import textwrap

import pytest

from kbsim.cli import main
from kbsim.report import build, experiments, figures, pages

# One worker runs this module, so the tiny study below is built once.
pytestmark = pytest.mark.xdist_group("plots")

# Tiny days (60 articles, 3 hours) under the real experiment names and swept keys.
DAY = """\
params:
  day_hours: 3
  corpus: {articles: 60}
  questions: {count: 30}
  saves: {count: 80}
seeds: 2
"""
CONFIGS = {
    "reference": """
        scenarios:
          zipf: {}
          control: {saves.popularity: uniform}
        sweep:
          edit.delay_s: [null, 600]
    """,
    "control": """
        scenarios:
          control: {saves.popularity: uniform}
        sweep:
          edit.delay_s: [null, 600]
    """,
    "zipf_sweep": """
        scenarios:
          zipf: {}
          control: {saves.popularity: uniform}
        sweep:
          edit.delay_s: 600
          zipf_s: [0.0, 0.8, 1.5]
    """,
    "save_volume_sweep": """
        sweep:
          saves.count: [20, 80, 300]
    """,
    "edit_delay_sweep": """
        scenarios:
          zipf: {}
          control: {saves.popularity: uniform}
        sweep:
          edit.delay_s: [5, 300, 3600]
    """,
    "retention_sweep": """
        sweep:
          event_retention_s: [null, 600, 3600]
          checks.interval_s: [1800, 3600]
    """,
    "sample_kb": """
        scenarios:
          zipf: {}
          control: {saves.popularity: uniform}
    """,
    "check_policy": """
        scenarios:
          zipf: {checks.strategies: [title, reread, poll, subscribe]}
          control: {saves.popularity: uniform, checks.strategies: [title, reread, poll, subscribe]}
        sweep:
          saves.count: [40, 160]
          checks.interval_s: [600, 2500, 10800]
    """,
    "edit_delay_by_saves": """
        sweep:
          saves.count: [40, 160]
          edit.delay_s: [30, 300, 3000]
    """,
    "ablation": """
        scenarios:
          default: {edit.delay_s: 600}
          no_compare_and_swap: {edit.delay_s: 600, edit.compare_and_swap: false}
          no_idempotency_key: {edit.delay_s: 600, edit.idempotency_key: false}
          no_version: {edit.delay_s: 600, citation.carries_version: false}
          no_unpublish_event: {edit.delay_s: 600, events.log_unpublish: false}
          session_permission: {edit.delay_s: 1}
          session_blind: {edit.delay_s: 1, edit.compare_and_swap: false}
        sweep:
          transport.loss_rate: [0, 0.05]
          agents.count: [1, 2]
    """,
    "advice": """
        scenarios:
          default: {edit.delay_s: 600}
          no_version_overwrite: {edit.delay_s: 600, citation.carries_version: false,
                                 citation.edit_without_version: overwrite}
          no_version_reread: {edit.delay_s: 600, citation.carries_version: false,
                              citation.edit_without_version: reread}
          drafts: {edit.delay_s: 600, drafts.share: 0.2}
          answer_from_drafts: {edit.delay_s: 600, drafts.share: 0.2, drafts.answer_from_drafts: true}
          no_unpublish_event: {edit.delay_s: 600, events.log_unpublish: false}
          no_compare_and_swap: {edit.delay_s: 600, edit.compare_and_swap: false}
          lossy: {edit.delay_s: 600, transport.loss_rate: 0.05}
          no_idempotency_key: {edit.delay_s: 600, transport.loss_rate: 0.05, edit.idempotency_key: false}
          approval_per_call: {edit.delay_s: 600, review.wrong_share: 0.5}
          approval_session: {edit.delay_s: 1, review.wrong_share: 0.5, review.per_call: false}
    """,
    "approval": """
        scenarios:
          per_call: {edit.delay_s: 600}
          session: {edit.delay_s: 1, review.per_call: false}
        sweep:
          review.wrong_share: [0.2]
          review.catch_share: [0.5, 0.95]
    """,
}


@pytest.fixture(autouse=True)
def _close_figures():
    """Each test's figures closed after it: pyplot keeps every figure it made until closed
    (more than 20 open made matplotlib warn in the suite)."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("study")
    experiments = root / "experiments"
    experiments.mkdir()
    for name, body in CONFIGS.items():
        day = DAY if name != "sample_kb" else DAY.replace("{articles: 60}", "{source: 'kbsim:sample'}")
        (experiments / f"{name}.yaml").write_text(day + textwrap.dedent(body))
    (root / "README.md").write_text(
        f"# kbsim\n\n## Results\n\n{pages.README_START}\nstale text\n{pages.README_END}\n\n## Tour\n"
    )
    log: list[str] = []
    written = build.build_figures(
        experiments_dir=experiments,
        results_dir=root / "results",
        figures_dir=root / "figures",
        docs_path=root / "docs" / "results.md",
        readme_path=root / "README.md",
        workers=1,
        log=log.append,
    )
    return root, written, log


@pytest.mark.slow
def test_every_figure_is_written_with_readme_and_results_table(study):
    root, written, _ = study
    names = {path.name for path in written}
    for name in figures.FIGURE_NAMES:
        assert {f"{name}.png", f"{name}.svg"} <= names
        assert (root / "figures" / f"{name}.png").stat().st_size > 20_000
    readme = (root / "figures" / "README.md").read_text()
    lines = [line for line in readme.splitlines() if line.startswith("`") and ".png` / `.svg`" in line]
    assert len(lines) == len(figures.FIGURES)
    for line, name in zip(lines, figures.FIGURE_NAMES, strict=True):
        assert line.startswith(f"`{name}.png`") and f"Regenerate: `kbsim figures --only {name}`" in readme
    results = (root / "docs" / "results.md").read_text()
    assert "| metric | Zipf saves (s = 0.9) | Control: uniform saves |" in results
    assert (
        "Citations stale at end of day" in results
        and "Edits rejected (conflict), delay 10 min" in results
    )
    assert all(f"(../figures/{name}.png)" in results for name in figures.FIGURE_NAMES)
    # the sample help desk beside the synthetic corpus, and whether real text changes title recall
    assert "| metric | Zipf saves, synthetic corpus | Zipf saves, sample help desk | control, synthetic corpus " \
        "| control, sample help desk |" in results
    assert re.search(r"\*\*Real text (does not change|raises|lowers) the title check's recall", results)
    # The README's results block is rewritten in place, the rest of it kept.
    top = (root / "README.md").read_text()
    assert "stale text" not in top and top.startswith("# kbsim") and top.endswith("## Tour\n")
    assert "Citations stale at end of day" in top
    assert all(f"(figures/{name}.png)" in top for name in pages.README_FIGURES)


@pytest.mark.slow
def test_a_second_call_reuses_results_and_never_simulates(study, monkeypatch):
    root, _, log = study
    assert any("0 already done" in line for line in log)

    def no_simulation(*_args, **_kwargs):
        raise AssertionError("a figure reran a simulation")

    monkeypatch.setattr("kbsim.sim.run_day", no_simulation)
    again: list[str] = []
    build.build_figures(
        ["edit_rejections"],
        experiments_dir=root / "experiments",
        results_dir=root / "results",
        figures_dir=root / "again",
        workers=1,
        log=again.append,
    )
    assert any("0 to run" in line for line in again)
    for suffix in ("png", "svg"):  # the same results draw byte-identical files
        first = (root / "figures" / f"edit_rejections.{suffix}").read_bytes()
        assert (root / "again" / f"edit_rejections.{suffix}").read_bytes() == first
    assert sorted(p.name for p in (root / "again").iterdir()) == [
        "edit_rejections.png",
        "edit_rejections.svg",
    ]


@pytest.mark.slow
def test_figures_drawn_side_by_side_are_byte_identical(study):
    """With two workers the figures that share no experiment are drawn in two processes, each
    loading what it reads: every file comes out as drawn in one."""
    root, _, _ = study
    assert [names for names in build._groups(figures.specs(None)) if "check_cost" in names] == [
        ["staleness_over_day", "staleness_by_age", "staleness_vs_saves", "check_cost"]
    ]
    chosen = ["staleness_vs_zipf", "edit_rejections"]  # two groups: two processes
    assert len(build._groups(figures.specs(chosen))) == 2
    build.build_figures(
        chosen,
        experiments_dir=root / "experiments",
        results_dir=root / "results",
        figures_dir=root / "parallel",
        workers=2,
    )
    drawn = sorted(p.name for p in (root / "parallel").iterdir())
    assert drawn == sorted(f"{name}.{suffix}" for name in chosen for suffix in ("png", "svg"))
    for name in drawn:
        assert (root / "parallel" / name).read_bytes() == (root / "figures" / name).read_bytes(), name


@pytest.mark.slow
def test_experiments_loaded_by_drawing_workers_are_not_loaded_again_for_the_pages(study, monkeypatch):
    """The workers that draw side by side send back the experiments they loaded: the pages,
    written here after them, read those and load none again."""
    root, _, _ = study
    chosen = figures.specs(["staleness_vs_zipf", "edit_rejections"])  # two groups: two processes
    source = {"experiments_dir": root / "experiments", "results_dir": root / "results", "quick": False}
    exps = experiments.Experiments(
        dict.fromkeys(name for spec in chosen for name in spec.experiments), run_missing=False, **source
    )
    assert exps.loaded() == {}

    def loaded_again(*_args, **_kwargs):
        raise AssertionError("an experiment a worker loaded was loaded again")

    monkeypatch.setattr(experiments, "experiment_of", loaded_again)  # here only: the workers are processes
    drawn = build._draw_all(chosen, exps, source, root / "adopted", with_alt=True, workers=2)
    assert sorted(drawn) == sorted(spec.name for spec in chosen)
    assert sorted(exps.loaded()) == sorted(exps)
    for name in exps:
        assert exps[name].name == name and len(exps[name].per_run) and len(exps[name].summary)


@pytest.mark.slow
@pytest.mark.parametrize("name", figures.FIGURE_NAMES)
def test_each_figure_has_labels_units_legend_and_caption(study, name):
    root, _, _ = study
    needed = next(spec for spec in figures.FIGURES if spec.name == name).experiments
    loaded = {
        experiment: experiments.load_experiment(
            experiment,
            experiments_dir=root / "experiments",
            results_dir=root / "results",
            run_missing=False,
        )
        for experiment in needed
    }
    fig = figures.draw(name, loaded)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    for ax in axes:
        assert ax.get_xlabel() and ax.get_ylabel(), f"{name}: an axis without a label"
    units = " ".join(ax.get_xlabel() + " " + ax.get_ylabel() for ax in axes)
    assert any(unit in units for unit in ("(%)", "(h)", "per check", "per day", "log scale"))
    assert fig.legends or any(ax.get_legend() for ax in axes), f"{name}: no legend"
    # the caption names the config as a clone holds it, and is kept for figures/README.md, not drawn:
    # no footer in the image, whose only figure-level text is its title
    from kbsim.report import plots

    caption = plots.caption_of(fig)
    assert caption.startswith(f"Made by experiments/{needed[0]}.yaml"), caption
    assert "Regenerate" not in caption and "kbsim/experiments" not in caption
    drawn = [text for text in fig.texts if text.get_visible()]
    assert all(text is fig._suptitle for text in drawn), [text.get_text() for text in drawn]


def test_cli_rejects_an_unknown_figure(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["figures", "--only", "no_such_figure"])
    assert exit_info.value.code == 2
    assert "no_such_figure" in capsys.readouterr().err


def test_cli_names_a_missing_experiments_directory(tmp_path, capsys):
    code = main(
        [
            "figures",
            "--only",
            "edit_rejections",
            "--experiments",
            str(tmp_path / "none"),
            "--results",
            str(tmp_path / "r"),
            "--figures",
            str(tmp_path / "f"),
        ]
    )
    assert code == 2
    assert "edit_delay_sweep.yaml" in capsys.readouterr().err
    assert not (tmp_path / "r").exists() and not (tmp_path / "f").exists()


def test_cli_out_writes_results_and_figures_under_one_folder(study, tmp_path, monkeypatch, capsys):
    """Outside a checkout: --out DIR holds everything kbsim figures writes, and nothing lands elsewhere."""
    root, _, _ = study
    monkeypatch.chdir(tmp_path)
    code = main(["figures", "--only", "edit_rejections", "--experiments", str(root / "experiments"),
                 "--out", "study", "--workers", "1"])
    assert code == 0, capsys.readouterr().err
    written = sorted(path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*") if path.is_file())
    assert {"study/figures/edit_rejections.png", "study/figures/edit_rejections.svg"} <= set(written)
    assert all(path.startswith(("study/figures/", "study/results/edit_delay_sweep/")) for path in written)
    assert capsys.readouterr().out.splitlines() == ["study/figures/edit_rejections.png",
                                                    "study/figures/edit_rejections.svg"]


def _loaded(root, name):
    needed = next(spec for spec in figures.FIGURES if spec.name == name).experiments
    return {
        experiment: experiments.load_experiment(
            experiment, experiments_dir=root / "experiments", results_dir=root / "results", run_missing=False
        )
        for experiment in needed
    }


@pytest.mark.slow
def test_check_frontier_labels_cover_no_line_marker_or_label(study):
    """The "every 8 h" labels once sat on the curves; each is now placed where it covers nothing."""
    from kbsim.report import plots

    fig = figures.draw("check_frontier", _loaded(study[0], "check_frontier"))
    labels = [t.get_text() for ax in fig.axes for t in ax.texts if t.get_gid() == "kbsim-label"]
    assert labels and all(text.startswith("every ") for text in labels)
    assert plots.overlapping_labels(fig) == []


@pytest.mark.slow
def test_check_frontier_draws_each_strategy_of_the_study_in_its_own_colour_with_its_model(study):
    """The check-policy study runs the subscription too (issues 38/39): its simulated curve and its
    model line are drawn in its own colour, the strategy's, and the alt text names the strategies
    of the Pareto-optimal points."""
    from matplotlib.colors import to_hex

    from kbsim.sim.strategies import resolve

    loaded = _loaded(study[0], "check_frontier")
    strategies = loaded["check_policy"].strategies
    assert [s.name for s in strategies] == ["title", "reread", "poll", "subscribe"]
    fig = figures.draw("check_frontier", loaded)
    labels = {text.get_text() for legend in fig.legends for text in legend.get_texts()}
    for strategy in resolve(["subscribe"]):
        assert {f"{strategy.label} (simulated, 95% CI)", f"{strategy.label} (analytic)"} <= labels
        drawn = [line for line in fig.axes[0].get_lines() if to_hex(line.get_color()) == to_hex(strategy.colour)]
        assert any(line.get_linestyle() == "--" for line in drawn)  # its model line
    alt = figures.alt_check_frontier(loaded)
    assert "Pareto-optimal points, ringed, are" in alt and ("poll" in alt or "subscribe" in alt)


@pytest.mark.slow
def test_check_cost_ticks_are_plain_numbers_in_the_axis_unit(study):
    """No tick reads 10^1 beside "100 kB": calls in plain digits, sizes in B/kB/MB."""
    fig = figures.draw("check_cost", _loaded(study[0], "check_cost"))
    fig.canvas.draw()
    for ax in fig.axes:
        ticks = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
        assert ticks and not any("$" in t or "^" in t for t in ticks), ticks
        if "bytes" in ax.get_ylabel():
            assert all(t.endswith("B") for t in ticks), ticks
        else:
            assert all(re.fullmatch(r"[\d,.]+", t) for t in ticks), ticks


@pytest.mark.slow
def test_edit_rejections_axes_say_what_they_are_and_thin_retries_are_left_out(study):
    from kbsim.report import plots

    loaded = _loaded(study[0], "edit_rejections")
    fig = figures.draw("edit_rejections", loaded)
    first, retries = [ax for ax in fig.axes if ax.get_visible()]
    assert first.get_ylabel() == "edits whose first try fails\n(% of edits, log scale)"
    assert first.get_yscale() == "log"  # its sub-1% rates at short delays could not be read on 0-100%
    assert retries.get_ylabel() == "retries that succeed (% of retried edits)"
    summary = loaded["edit_delay_sweep"].summary
    rows = summary[(summary["metric"] == "retry_success") & (summary["save_popularity"] == "zipf")]
    backed = rows[rows["trials"] >= plots.MIN_RETRIES]
    # points with their intervals, not a line joining the noise of a few retries
    drawn = [line for line in retries.get_lines() if line.get_marker() == "o"]
    assert len(drawn) == 1 and drawn[0].get_linestyle() == "None" and len(drawn[0].get_xdata()) == len(backed)
    assert sorted(t.get_text() for t in retries.texts) == sorted(f"n={n:,.0f}" for n in backed["trials"])
    assert plots.overlapping_labels(fig) == []


@pytest.mark.slow
def test_retention_cost_explains_the_grey_band_and_tells_the_reread_lines_apart(study):
    loaded = _loaded(study[0], "retention_cost")
    fig = figures.draw("retention_cost", loaded)
    labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert "grey band: every event kept" in labels
    # re-read's cost hardly moves with the interval: its four dotted lines of near colours could not
    # be told apart (11 legend entries); they are one band now, in re-read's own colour
    from kbsim.sim.strategies.reread import STRATEGY as REREAD

    reread = [line for line in fig.axes[0].get_lines() if line.get_label().startswith(REREAD.label)]
    assert len(reread) == 1 and reread[0].get_color() == REREAD.colour
    intervals = sorted(loaded["retention_sweep"].points["checks.interval_s"].unique())
    assert len(labels) == len(intervals) + 3, labels  # a line per interval, the grey band, re-read, the model


@pytest.mark.slow
def test_figures_readme_gives_every_figure_alt_text_a_caption_with_its_runs_and_the_model(study):
    root, _, _ = study
    readme = (root / "figures" / "README.md").read_text()
    sections = readme.split("\n## ")[1:]
    assert [section.split("\n", 1)[0] for section in sections] == list(figures.FIGURE_NAMES)
    for section, spec in zip(sections, figures.FIGURES, strict=True):
        alt = re.search(rf"!\[([^\]]+)\]\({spec.name}\.png\)", section)
        assert alt and len(alt.group(1)) > 40, spec.name
        caption = re.search(r"\n\*(Made by .*)\*\n", section).group(1)
        assert re.search(r"each point \d+ seeds? of [\d.]+-hour days", caption), caption
        # the study's folder holds no docs/model.md, so the link names its place (kbsim.report.links)
        assert f"Model: {spec.model}" in section and "`docs/model.md` (in kbsim's repository)" in section
    # the numbers in the alt text come from the results: two seeds here, not the study's twenty
    assert "each point 2 seeds of 3-hour days" in readme


@pytest.mark.slow
def test_agent_edit_effect_compares_days_with_and_without_edits_that_both_exist(study):
    """The sweep once turned edits off and the table showed two identical columns; the
    reference study's days with and without edits now differ, paired seed by seed."""
    from kbsim.report import model_checks

    root, _, _ = study
    loaded = {"reference": experiments.load_experiment(
        "reference", experiments_dir=root / "experiments", results_dir=root / "results", run_missing=False)}
    effect = model_checks.agent_edit_effect(loaded)
    assert sorted(effect["saves"]) == ["control", "zipf"] and set(effect["delay_s"]) == {600.0}
    assert (effect["with_edits"] != effect["without_edits"]).all()
    assert (effect["model_with"] != effect["model_without"]).all()
    # the paired difference of two ratios over the same seeds is the difference of the ratios
    assert (effect["difference"] - (effect["with_edits"] - effect["without_edits"])).abs().max() < 1e-9
    assert (effect["difference_low"] <= effect["difference"]).all() and (effect["seeds"] == 2).all()


@pytest.mark.slow
@pytest.mark.parametrize("name", figures.FIGURE_NAMES)
def test_a_caption_speaks_of_bands_only_where_the_figure_draws_them(study, name):
    """check_frontier, safe_edit_delay and design_choices draw their intervals as bars, yet their
    captions opened with every figure's "bands = 95% intervals over seeds"."""
    from matplotlib.collections import PolyCollection

    from kbsim.report import plots

    fig = figures.draw(name, _loaded(study[0], name))
    bands = [c for ax in fig.axes for c in ax.collections if isinstance(c, PolyCollection) and len(c.get_paths())]
    caption = plots.caption_of(fig)
    assert ("bands = 95% intervals over seeds" in caption) == bool(bands), (name, caption)
    if not bands:
        assert "bars: " in caption, caption


@pytest.mark.slow
def test_no_legend_of_design_choices_hides_a_point_or_an_interval(study):
    """Each panel's legend sat inside it, at the upper left: it hid the tops of the intervals of the
    unpublish and compare-and-swap panels and the lost updates' points of the approval panel."""
    from kbsim.report import plots

    fig = figures.draw("design_choices", _loaded(study[0], "design_choices"))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = [(ax.get_title(), ax.get_legend()) for ax in fig.axes if ax.get_legend() is not None]
    assert len(legends) == len(figures.ADVICE)
    for ax in fig.axes:
        box = ax.get_legend().get_window_extent(renderer)
        assert not any(plots._covers(box, o) for o in plots._obstacles(ax, renderer)), ax.get_title()
        assert not box.overlaps(ax.get_window_extent(renderer)), ax.get_title()  # under its panel
