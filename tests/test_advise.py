"""``kbsim advise``: the answer from the model, its inputs, and its verification by simulation."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from kbsim.cli import main
from kbsim.cli.advise_options import duration_option, share_option
from kbsim.model import advise
from kbsim.model.advise import AdviceError, Target
from kbsim.sim.strategies import resolve
from kbsim.sim.strategies.subscribe import STRATEGY as SUBSCRIBE

README = Path(__file__).resolve().parents[1] / "README.md"
REFERENCE = advise.day_params(articles=400, saves_per_day=300, questions_per_day=120, zipf=0.9)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("15min", 900), ("90s", 90), ("1.5h", 5400), ("1h30min", 5400), ("2 h", 7200), ("45s", 45), (".5d", 43200)],
)
def test_durations_parse_with_units(text, seconds):
    assert duration_option(text, "--max-latency") == seconds


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty"),
        ("soon", "expected a duration"),
        ("15fortnights", "unknown unit 'fortnights'"),
        ("-5min", "expected a positive duration"),
        ("0s", "positive"),
        ("15min later", "expected a duration"),
        ("45", "45 has no unit: write 45s or 45min"),
    ],
)
def test_bad_durations_name_the_flag(text, problem):
    with pytest.raises(AdviceError, match=problem) as error:
        duration_option(text, "--max-latency")
    assert error.value.flag == "--max-latency" and str(error.value).startswith("--max-latency: ")


def test_shares_parse_as_percent_or_fraction_and_refuse_the_ambiguous():
    assert share_option("2%", "--max-exposure") == pytest.approx(0.02)
    assert share_option("0.02", "--max-exposure") == pytest.approx(0.02)
    assert share_option("100%", "--edit-share", allow_all=True) == 1.0
    for text, problem in (("2", "write 2%"), ("150%", "between 0% and 100%"), ("0%", "between"), ("lots", "like 2%")):
        with pytest.raises(AdviceError, match=problem):
            share_option(text, "--max-exposure")


def test_pareto_and_the_largest_delay_below_a_target():
    cost, value = [1, 2, 3, 2, 5], [5, 3, 1, 4, 1]
    assert advise.pareto_optimal(cost, value).tolist() == [True, True, True, False, False]
    delays, rates = [10, 100, 1000], [0.001, 0.01, 0.1]
    assert advise.largest_delay_below(delays, rates, 0.05) == pytest.approx(10 ** (2 + 4 / 9))
    assert advise.largest_delay_below(delays, rates, 0.5) == 1000  # never crossed: the longest swept
    assert math.isnan(advise.largest_delay_below(delays, rates, 0.0001))  # crossed at once


def test_the_reference_day_gets_the_cheapest_option_that_meets_the_target():
    answer = advise.advise(REFERENCE, Target("detection_latency_s", 900))
    choice = answer.choice
    assert choice.strategy == "poll" and choice.detection_latency_s <= 900
    options = answer.options
    feasible = options[options["strategy"].isin([s.name for s in resolve() if s.exact]) & options["meets"]]
    assert choice.calls_per_hour == pytest.approx(feasible["calls_per_hour"].min())
    # the runner-up is the next exact strategy: the subscription, which subscribes to and reads every
    # article as it is first cited; re-read, which reads them all at every check, pays far more
    assert answer.runner_up.strategy == SUBSCRIBE.name
    assert answer.runner_up.calls_per_hour > 2 * choice.calls_per_hour
    assert [o.strategy for o in answer.others] == ["reread"]
    assert answer.others[0].calls_per_hour > 5 * choice.calls_per_hour
    # the title check sees only retitles and unpublishing: it misses most stale citations
    assert answer.title.interval_s == choice.interval_s and answer.title.detected_share < 0.5
    assert 60 < answer.edit.delay_s < 600 and answer.edit.max_conflict_rate == 0.05
    text = "\n".join(answer.lines())
    assert "poll events every 30 min" in text and "Runner-up: subscribe (MCP resources) every 30 min" in text
    assert "Also meets it: re-read every 30 min" in text and "Title check" in text
    assert json.loads(json.dumps(answer.to_dict(), allow_nan=False))["choice"]["strategy"] == "poll"


def test_the_subscription_is_advised_with_its_model_cost_and_chosen_where_polling_pays_for_empty_pages(capsys):
    """Issue 38/39: subscribe is among advise's strategies with its analytic cost (a subscription
    and a read of each article first cited, a read of each held article told of a change), never
    "simulated only"; checking every minute, polling pays a page at every check and subscribing
    costs less."""
    assert SUBSCRIBE.name in REFERENCE.checks.strategies and SUBSCRIBE.model is not None
    tight = advise.advise(REFERENCE, Target("detection_latency_s", 30))
    assert tight.choice.strategy == SUBSCRIBE.name and tight.choice.interval_s == 60
    assert tight.runner_up.strategy == "poll" and tight.runner_up.calls_per_hour > tight.choice.calls_per_hour
    # exact: the same detection as the poll at the same interval
    assert tight.choice.detection_latency_s == pytest.approx(tight.runner_up.detection_latency_s)
    quantities = advise.analytic.FreshnessModel.from_params(REFERENCE).policy_quantities(60.0)
    expected = (2 * quantities.newly_cited + quantities.moved_held) / quantities.hours
    assert tight.choice.calls_per_hour == pytest.approx(expected)
    assert not tight.unmodelled and "simulation_only" not in tight.to_dict()
    assert main(["advise", "--max-latency", "30s"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"Do: subscribe \(MCP resources\) every 1 min: [\d.]+ calls/h", out), out
    assert "simulation only" not in out


def test_targets_on_exposure_and_on_the_p90_and_on_bytes():
    mean = advise.advise(REFERENCE, Target("detection_latency_s", 900))
    p90 = advise.advise(REFERENCE, Target("detection_latency_p90_s", 900))
    assert p90.choice.interval_s < mean.choice.interval_s
    assert p90.choice.detection_latency_p90_s <= 900
    exposure = advise.advise(REFERENCE, Target("stale_exposure", 0.02))
    assert exposure.choice.stale_exposure <= 0.02
    by_bytes = advise.advise(REFERENCE, Target("stale_exposure", 0.02), cost="bytes")
    assert by_bytes.choice.bytes_per_hour <= exposure.runner_up.bytes_per_hour


def test_an_impossible_target_names_its_flag_and_what_is_feasible():
    with pytest.raises(AdviceError, match=r"--max-latency: 10 s cannot be met.*every 1 min.*30 s"):
        advise.advise(REFERENCE, Target("detection_latency_s", 10))
    with pytest.raises(AdviceError, match="--max-exposure"):
        advise.advise(REFERENCE, Target("stale_exposure", 1e-6))
    with pytest.raises(AdviceError, match="--min-interval"):
        advise.advise(REFERENCE, Target("detection_latency_s", 900), min_interval_s=10 * 3600)


def test_a_large_day_answers_from_the_grouped_model():
    day = advise.day_params(articles=20_000, saves_per_day=3000, questions_per_day=5000, zipf=1.0)
    answer = advise.advise(day, Target("detection_latency_s", 900))
    assert answer.choice.strategy == "poll" and answer.choice.detection_latency_s <= 900
    assert answer.runner_up.calls_per_hour > 1000  # thousands of distinct cited articles to subscribe to
    assert answer.others[0].calls_per_hour > 4 * answer.runner_up.calls_per_hour  # and to re-read at every check


def test_a_day_without_saves_never_goes_stale():
    quiet = advise.day_params(articles=100, saves_per_day=0, questions_per_day=50, zipf=0.9)
    answer = advise.advise(quiet, Target("detection_latency_s", 60))
    assert answer.choice.interval_s == quiet.day_s and answer.choice.stale_exposure == 0
    # only the agent's own edits of the same articles conflict: a longer wait is safe
    reference = advise.advise(REFERENCE, Target("detection_latency_s", 900))
    assert reference.edit.delay_s < answer.edit.delay_s < math.inf


# -- the command ---------------------------------------------------------------------------------


def test_cli_answers_in_a_few_lines_and_as_json(capsys):
    assert main(["advise", "--max-latency", "15min"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Day: 400 articles") and out[2].startswith("Do: poll events every 30 min")
    assert main(["advise", "--max-exposure", "2%", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)["advice"]
    assert answer["target"] == {"metric": "stale_exposure", "limit": 0.02}
    assert answer["choice"]["stale_exposure"] <= 0.02 and answer["title_check"]["misses_share"] > 0.5


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--articles", "many"], "--articles: expected a whole number"),
        (["--articles", "2"], "--articles: expected 3 to"),
        (["--questions-per-day", "0"], "--questions-per-day: expected 1 to"),
        (["--zipf", "7"], "--zipf: expected an exponent"),
        (["--day-hours", "0"], "--day-hours: expected more than 0"),
        (["--max-conflicts", "5"], "--max-conflicts: expected a share"),
        (["--seeds", "1", "--verify"], "--seeds: expected 2 to 1000"),
        (["--max-latency", "15 fortnights"], None),
    ],
)
def test_cli_refuses_bad_inputs_naming_the_flag(arguments, message, capsys):
    base = [] if "--max-latency" in arguments else ["--max-latency", "15min"]
    assert main(["advise", *base, *arguments]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kbsim advise: error: ")
    assert message in err if message else "--max-latency: unknown unit 'fortnights'" in err


def test_cli_needs_exactly_one_target(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["advise"])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit):
        main(["advise", "--max-latency", "15min", "--max-exposure", "2%"])
    assert "not allowed with argument" in capsys.readouterr().err


def test_readme_advise_commands_answer(capsys):
    commands = re.findall(r"^kbsim advise (.*?)(?:\s+#.*)?$", README.read_text(encoding="utf-8"), flags=re.M)
    # --config and --trace name files the README's own walk-through makes (tests/test_readme.py runs it)
    commands = [c.replace("\\", " ") for c in commands if not {"--verify", "--config", "--trace"} & set(c.split())]
    assert commands
    for command in commands:
        assert main(["advise", *command.split()]) == 0, command
    assert capsys.readouterr().out.count("Do: ") == len([c for c in commands if "--json" not in c])


@pytest.mark.xdist_group("advise-verify")
def test_verify_simulates_the_answer_through_the_runner_and_compares(tmp_path, capsys):
    tiny = ["--articles", "60", "--saves-per-day", "80", "--questions-per-day", "30", "--day-hours", "2"]
    out = tmp_path / "results"
    assert main(["advise", *tiny, "--max-latency", "10min", "--verify", "--seeds", "4", "--workers", "1",
                 "--out", str(out), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    verified = answer["verify"]
    assert Path(verified["directory"]).parent == out and verified["seeds"] == 4
    names = {(q["option"].split()[0], q["metric"]) for q in verified["quantities"]}
    assert ("poll", "detection_latency_s") in names and ("edits", "rejection_rate") in names
    assert ("subscribe", "calls_per_hour") in names  # the runner-up, simulated beside its model cost
    assert verified["scored"] >= 10 and 0 <= verified["agree"] <= verified["scored"]
    # the same question reuses its runs
    assert main(["advise", *tiny, "--max-latency", "10min", "--verify", "--seeds", "4", "--workers", "1",
                 "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "already done" in captured.err and "Simulated (4 seeds per day" in captured.out
    assert re.search(r"(agree on all \d+|DISAGREE on \d+ of \d+)", captured.out)


def test_verify_refuses_a_day_above_the_size_limits(tmp_path, capsys):
    huge = ["--articles", "1000000", "--saves-per-day", "1000000", "--questions-per-day", "200000"]
    code = main(["advise", *huge, "--max-latency", "1h", "--verify", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 2 and "Do: poll events" in captured.out  # the model still answers
    assert "--verify:" in captured.err and "--yes" in captured.err
    assert not any(tmp_path.iterdir())


def test_verify_config_names_the_question_and_its_scenarios():
    answer = advise.advise(REFERENCE, Target("detection_latency_s", 900))
    config = advise.verify_config(answer, seeds=5)
    assert config["name"].startswith("advise-") and config["seeds"] == 5
    assert set(config["scenarios"]) == {"choice", "edits"}  # the runner-up checks at the same interval
    assert config["scenarios"]["choice"] == {"checks.interval_s": answer.choice.interval_s}
    assert np.isclose(config["scenarios"]["edits"]["edit.delay_s"], answer.edit.delay_s, rtol=1e-3)
    assert advise.verify_config(answer, seeds=5) == config
    # the simulated days run the strategies advised among, so the runner-up (subscribe) is simulated too
    assert config["params"]["checks.strategies"] == list(advise.ADVISED_STRATEGIES)
