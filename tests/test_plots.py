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
          zipf: {}
          control: {saves.popularity: uniform}
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
}


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
    lines = [line for line in readme.splitlines() if line.startswith("- `")]
    assert len(lines) == len(figures.FIGURES)
    for line, name in zip(lines, figures.FIGURE_NAMES, strict=True):
        assert line.startswith(f"- `{name}.png`") and f"`kbsim figures --only {name}`" in line
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
    captions = [text.get_text() for text in fig.texts]
    assert any(
        f"experiments/{needed[0]}.yaml" in text and f"--only {name}" in text for text in captions
    )


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
