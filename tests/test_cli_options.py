"""The command line's shared options (issue 29, part 6): ``--seed`` beside ``--seeds``,
``--quiet``, durations with units in every flag, config and ``--set``, and an undefined
interval written as ``n/a (1 seed)``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from tiny_configs import TINY_DAY

from kbsim.cli import build_parser, main


def write_config(directory: Path, text: str = TINY_DAY, name: str = "tiny") -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def seeds_run(directory: Path) -> list[int]:
    """The seeds of the runs an experiment's results folder lists (its manifest's)."""
    manifest = json.loads((directory / "manifest.json").read_text())
    return sorted({run["seed"] for run in manifest["runs"]})


# -- --seed -----------------------------------------------------------------------------------


def test_seed_runs_that_one_seed_alone(tmp_path, capsys):
    config = write_config(tmp_path)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--workers", "1", "--no-progress",
                 "--seed", "7"]) == 0
    assert seeds_run(tmp_path / "out" / "tiny") == [7]
    assert "1 runs (0 reused, 1 computed" in capsys.readouterr().err


def test_seeds_n_still_means_seeds_one_to_n(tmp_path, capsys):
    config = write_config(tmp_path)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--workers", "1", "--no-progress",
                 "--seeds", "3"]) == 0
    assert seeds_run(tmp_path / "out" / "tiny") == [1, 2, 3]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--seed", "3", "--seeds", "1-5"], "--seed: give --seed N (one seed) or --seeds (several), not both"),
        (["--seed", "1-5"], "--seed: expected one seed, a whole number like 7, got '1-5'"),
        (["--seed", "x"], "--seed: expected one seed"),
        (["--seed", str(2**63)], "--seed: expected a seed from 0 to 2**63 - 1"),
    ],
)
def test_a_bad_or_doubled_seed_is_one_line_naming_the_flag(tmp_path, capsys, arguments, message):
    config = write_config(tmp_path)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--no-progress", *arguments]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"kbsim run: error: {message}")
    assert not (tmp_path / "out").exists()


def test_the_help_says_what_seeds_means():
    parser = build_parser()
    run = parser._subparsers._group_actions[0].choices["run"]  # noqa: SLF001 (argparse keeps them so)
    text = " ".join(run.format_help().split())
    assert "a count N means seeds 1 to N (--seeds 3 runs seeds 1, 2 and 3)" in text
    assert "--seed N run this one seed alone" in text
    assert "seeds 1-5 are reused" not in text


def test_advise_verify_refuses_one_seed_and_both_seed_options(capsys):
    assert main(["advise", "--max-latency", "15min", "--verify", "--seed", "3"]) == 2
    assert capsys.readouterr().err.startswith("kbsim advise: error: --seed: --verify sets the model beside 95% "
                                              "intervals over seeds, which need at least 2 seeds")
    assert main(["advise", "--max-latency", "15min", "--verify", "--seed", "3", "--seeds", "4"]) == 2
    assert "not both" in capsys.readouterr().err


@pytest.mark.xdist_group("advise-verify")
def test_advise_config_simulates_the_one_seed_asked_for(tmp_path, capsys):
    day = tmp_path / "day.yaml"
    day.write_text("day_hours: 2\ncorpus: {articles: 60}\nsaves.count: 80\nquestions.count: 30\n")
    out = tmp_path / "results"
    assert main(["advise", "--config", str(day), "--max-latency", "10min", "--min-interval", "5min", "--verify",
                 "--seed", "3", "--workers", "1", "--out", str(out), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["simulated"]["source"].startswith("simulation: 1 seeds per point")
    folders = [p for p in out.iterdir() if p.name.startswith("advise-sim")]
    assert folders and all(seeds_run(folder) == [3] for folder in folders)
    # one seed gives no interval: it is left out of --json, never written as null
    assert "calls_per_hour_low" not in answer["simulated"].get("choice", {}) and "null" not in json.dumps(answer)
    # the same seed's runs again (reused), as text: one seed leaves every interval undefined
    assert main(["advise", "--config", str(day), "--max-latency", "10min", "--min-interval", "5min", "--verify",
                 "--seed", "3", "--workers", "1", "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "[n/a (1 seed)]" in printed and "nan" not in printed and "[n/a, n/a]" not in printed


# -- --quiet ----------------------------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "helpdesk-log"


def test_run_quiet_prints_the_summary_and_nothing_else(tmp_path, capsys):
    config = write_config(tmp_path)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--workers", "1", "--seed", "2", "--quiet"]) == 0
    printed = capsys.readouterr()
    assert printed.err == ""
    assert "stale_citation_share@end" in printed.out


def test_run_says_a_warning_once_for_every_metric_it_concerns(tmp_path, capsys):
    config = write_config(tmp_path, TINY_DAY.replace("seeds: 2", "seeds: 3"))
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--workers", "1", "--no-progress"]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "3 seeds at some points, fewer than the 5" in warnings[0]


def test_run_quiet_still_reports_an_error(tmp_path, capsys):
    config = write_config(tmp_path)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet", "--set", "saves.count=-1"]) == 2
    assert capsys.readouterr().err.startswith("kbsim run: error: ")


def test_figures_quiet_passes_no_log_and_no_bar(tmp_path, capsys, monkeypatch):
    import kbsim.report.build

    calls = []

    def build_figures(only, **options):
        calls.append(options)
        return [tmp_path / "figures" / "x.png"]

    monkeypatch.setattr(kbsim.report.build, "build_figures", build_figures)
    assert main(["figures", "--quiet", "--out", str(tmp_path)]) == 0
    assert calls[0]["log"] is None and calls[0]["progress"] is False
    printed = capsys.readouterr()
    assert printed.err == "" and printed.out.strip() == str(tmp_path / "figures" / "x.png")
    assert main(["figures", "--out", str(tmp_path)]) == 0
    assert calls[1]["log"] is not None and calls[1]["progress"] is True
    assert "kbsim figures: 1 files in" in capsys.readouterr().err


def test_fit_quiet_drops_the_notes_not_the_estimates(capsys):
    arguments = ["fit", str(EXAMPLES / "saves.csv"), str(EXAMPLES / "questions.csv"), "--corpus", "kbsim:sample"]
    assert main(arguments) == 0
    loud = capsys.readouterr().out
    assert main([*arguments, "--quiet"]) == 0
    quiet = capsys.readouterr().out
    assert "Note: " in loud and "Note: " not in quiet
    assert quiet.splitlines() == [line for line in loud.splitlines() if not line.startswith("Note: ")]


@pytest.mark.xdist_group("advise-verify")
def test_advise_verify_quiet_prints_the_answer_and_the_comparison_only(tmp_path, capsys):
    tiny = ["--articles", "60", "--saves-per-day", "80", "--questions-per-day", "30", "--day-hours", "2"]
    assert main(["advise", *tiny, "--max-latency", "10min", "--verify", "--seeds", "2", "--workers", "1",
                 "--out", str(tmp_path), "--quiet"]) == 0
    printed = capsys.readouterr()
    assert printed.err == ""
    assert "Do: " in printed.out and "Simulated (2 seeds per day" in printed.out


# -- durations with units ---------------------------------------------------------------------


def run_ids(config) -> list[str]:
    return [run.run_id for run in config.runs()]


def test_set_takes_a_duration_with_its_unit_and_holds_its_seconds(tmp_path):
    from kbsim.runner.load import load_config

    config = write_config(tmp_path)
    with_unit = load_config(config, ["edit.delay_s=10min", "checks.interval_s=1h30min"])
    in_seconds = load_config(config, ["edit.delay_s=600", "checks.interval_s=5400"])
    assert with_unit.params["edit"] == {"delay_s": 600} and with_unit.params["checks"] == {"interval_s": 5400}
    assert run_ids(with_unit) == run_ids(in_seconds)
    assert json.dumps(with_unit.model_dump(mode="json", exclude={"source"})) == json.dumps(
        in_seconds.model_dump(mode="json", exclude={"source"}))


def test_a_config_file_writes_durations_with_units_in_params_sweeps_and_contrasts(tmp_path):
    from kbsim.runner.load import load_config

    units = write_config(tmp_path, TINY_DAY + textwrap.dedent("""\
        scenarios:
          hourly: {}
          often: {checks.interval_s: 15min}
        sweep:
          edit.delay_s: [5s, 10min, 1h]
        contrasts:
          - {metric: rejection_rate, baseline: {edit.delay_s: 5s}}
        """), name="a")
    seconds = write_config(tmp_path, TINY_DAY + textwrap.dedent("""\
        scenarios:
          hourly: {}
          often: {checks.interval_s: 900}
        sweep:
          edit.delay_s: [5, 600, 3600]
        contrasts:
          - {metric: rejection_rate, baseline: {edit.delay_s: 5}}
        """), name="b")
    a, b = load_config(units), load_config(seconds)
    assert a.model_dump(exclude={"source", "name"}) == b.model_dump(exclude={"source", "name"})
    assert a.sweep == {"edit.delay_s": [5, 600, 3600]} and a.scenarios["often"] == {"checks": {"interval_s": 900}}
    assert a.contrasts == b.contrasts
    assert run_ids(a) == run_ids(b)


def test_a_bad_duration_in_set_names_the_key(tmp_path, capsys):
    config = write_config(tmp_path)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--set", "edit.delay_s=10 fortnights"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kbsim run: error: --set edit.delay_s=10 fortnights: edit.delay_s: "), err  # as written
    assert "unknown unit 'fortnights'" in err and "params.edit" not in err, err
    assert "\n" not in err


def test_the_shipped_experiments_keep_their_run_ids():
    """Durations with units change nothing of a config written in seconds: the reference
    study's first run id is the one its cached results were stored under."""
    from kbsim.runner.load import load_config
    from kbsim.runner.shipped import experiment_path

    config = load_config(experiment_path("reference"))
    assert config.sweep == {"edit.delay_s": [None, 5, 60, 600, 3600]}
    assert run_ids(config)[0] == "54b98efaeab7"


@pytest.mark.parametrize(
    ("arguments", "flag"),
    [
        (["advise", "--max-latency", "15"], "--max-latency"),
        (["advise", "--max-latency", "15min", "--min-interval", "60"], "--min-interval"),
    ],
)
def test_a_bare_number_is_refused_where_it_is_ambiguous(capsys, arguments, flag):
    assert main(arguments) == 2
    value = arguments[arguments.index(flag) + 1]
    assert capsys.readouterr().err == (f"kbsim advise: error: {flag}: {value} has no unit: write {value}s or "
                                       f"{value}min (or h, d)\n")


def test_fit_burst_window_needs_its_unit(capsys):
    assert main(["fit", str(EXAMPLES / "saves.csv"), "--articles", "400", "--burst-window", "5"]) == 2
    assert capsys.readouterr().err == "kbsim fit: error: --burst-window: 5 has no unit: write 5s or 5min (or h, d)\n"


# -- an undefined interval --------------------------------------------------------------------


def test_a_one_seed_contrast_reads_n_a_not_nan(tmp_path, capsys):
    from tiny_configs import TINY_SWEEP

    config = write_config(tmp_path, TINY_SWEEP + "contrasts:\n  - {metric: stale_citation_share, "
                          "baseline: {scenario: control}}\n")
    out = tmp_path / "out"
    assert main(["run", str(config), "--out", str(out), "--workers", "1", "--no-progress", "--seed", "4"]) == 0
    printed = capsys.readouterr().out
    lines = [line for line in printed.splitlines() if " vs scenario=control: " in line]
    assert len(lines) == 2 and all(line.endswith(" pp [n/a (1 seed)]") for line in lines), lines
    assert "nan" not in printed
    contrasts = (out / "tiny" / "contrasts.csv").read_text()
    assert "stale_citation_share" in contrasts  # the file keeps the undefined bounds empty, as before
    assert main(["run", str(config), "--out", str(out), "--workers", "1", "--no-progress", "--seeds", "4 5"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if " vs scenario=control: " in line]
    assert all(line.endswith("(2 seeds)") and "n/a" not in line for line in lines), lines


def test_the_simulated_advice_writes_an_undefined_interval_as_n_a():
    from kbsim.stats.intervals import no_interval

    assert no_interval(1) == "n/a (1 seed)" and no_interval(1, "day") == "n/a (1 day)"
    assert no_interval(3) == "n/a" and no_interval(None) == "n/a" and no_interval(float("nan")) == "n/a"


# -- make reproduce's notebooks ---------------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.xdist_group("notebooks")
def test_the_notebook_kernel_starts_encrypted_and_without_a_warning(tmp_path):
    """scripts/execute_notebooks.py (make reproduce) asks jupyter_client for CurveZMQ channels;
    ipykernel then has no TCP-without-encryption warning to print on the kernel's stderr."""
    pytest.importorskip("nbclient")
    code = textwrap.dedent("""\
        import sys
        from pathlib import Path
        import nbformat
        sys.path.insert(0, "scripts")
        from execute_notebooks import notebook_client
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("6 * 7")])
        client = notebook_client(notebook, Path(sys.argv[1]) / "x.ipynb")
        with client.setup_kernel():
            encrypted = client.km.curve_publickey is not None
            client.execute_cell(notebook.cells[0], 0)
        print(encrypted, notebook.cells[0].outputs[0]["data"]["text/plain"])
        """)
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=REPO, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", "42"]
    assert "without encryption" not in run.stderr, run.stderr


def test_every_run_help_example_loads_its_config():
    """The examples ``kbsim run --help`` shows parse, and their configs load with their --set and
    --seeds (one once pinned the swept edit.delay_s, which the reference's contrasts then refused)."""
    import shlex

    from kbsim.cli.config_args import config_from_args
    from kbsim.cli.run_cmd import EPILOG
    from kbsim.runner.config import TooLargeError
    from kbsim.runner.shipped import experiment_path

    parser = build_parser()
    loaded = 0
    for line in EPILOG.splitlines():
        command = line.split("#")[0].strip()
        if not command.startswith("kbsim "):
            continue
        args = parser.parse_args(shlex.split(command)[1:])
        if args.config.endswith(".yaml"):
            continue  # a file of the user's
        args.config = str(experiment_path(args.config))
        try:
            config_from_args(args)
        except TooLargeError:
            args.yes = True  # kbsim run prints the estimate and asks for --yes: a config that loads
            config_from_args(args)
        loaded += 1
    assert loaded >= 6
