"""``kbsim advise`` never gives confident nonsense (issue 24, part 3).

A day whose knowledge base empties is refused with the hour it empties by; a
``--min-interval`` implying more checks than the model follows is refused before any
work; and over a grid of extreme days every number an answer prints is finite, there
are no numpy warnings, and ``--json`` holds no null.
"""

from __future__ import annotations

import json
import math
import time
import warnings

import pytest

from kbsim.cli import main
from kbsim.model import advise
from kbsim.model.advise import MAX_CHECKS, AdviceError, Target

LATENCY = Target("detection_latency_s", 900.0)


def test_a_day_whose_knowledge_base_empties_is_refused_with_the_hour(capsys):
    argv = ["advise", "--max-latency", "15min", "--articles", "400", "--saves-per-day", "10000"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the RuntimeWarnings it printed before
        assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("kbsim advise: error: --saves-per-day: the knowledge base empties by hour 6.4:")
    assert captured.err.count("\n") == 1
    assert main([*argv, "--json"]) == 2 and "empties" in capsys.readouterr().err


def test_a_day_that_nearly_empties_is_still_answered_in_finite_numbers():
    day = advise.day_params(articles=400, saves_per_day=7900, questions_per_day=120, zipf=0.9)
    answer = advise.advise(day, LATENCY)
    assert answer.choice.detection_latency_s <= 900
    assert all(math.isfinite(v) for v in (answer.edit.delay_s, answer.edit.gone_rate))


@pytest.mark.parametrize("interval", ["0.001s", "0.5s", "1s"])  # a bare number has no unit: refused first
def test_a_min_interval_implying_too_many_checks_is_refused_at_once(interval, capsys):
    started = time.perf_counter()
    assert main(["advise", "--max-latency", "15min", "--min-interval", interval]) == 2
    assert time.perf_counter() - started < 10  # no allocation of millions of checks first
    err = capsys.readouterr().err
    assert err.startswith("kbsim advise: error: --min-interval: ") and f"at most {MAX_CHECKS:,}" in err


def test_the_shortest_interval_the_bound_allows_is_answered():
    day = advise.day_params(articles=100, saves_per_day=300, questions_per_day=50, zipf=0.9, day_hours=1.0)
    answer = advise.advise(day, LATENCY, min_interval_s=day.day_s / MAX_CHECKS)
    assert answer.choice.interval_s >= day.day_s / MAX_CHECKS


def test_no_delay_reaching_the_conflict_target_says_up_to_what_it_looked():
    day = advise.day_params(articles=400, saves_per_day=0, questions_per_day=1, zipf=0.0)
    answer = advise.advise(day, LATENCY, max_conflict_rate=0.9)
    assert answer.edit.longest and answer.edit.delay_s == 10 * 86400
    assert "any delay up to 10 days (the longest considered)" in answer.lines()[-1]
    assert answer.to_dict()["edit"]["longest"] is True


EXTREME_DAYS = [
    {"articles": 3, "saves_per_day": 0, "questions_per_day": 1, "zipf": 0.0},
    {"articles": 3, "saves_per_day": 1, "questions_per_day": 1, "zipf": 5.0},
    {"articles": 3, "saves_per_day": 100_000_000, "questions_per_day": 1, "zipf": 0.9},
    {"articles": 400, "saves_per_day": 10_000, "questions_per_day": 120, "zipf": 0.9},
    {"articles": 400, "saves_per_day": 7_990, "questions_per_day": 120, "zipf": 0.9},
    {"articles": 400, "saves_per_day": 1, "questions_per_day": 100_000_000, "zipf": 0.9},
    {"articles": 400, "saves_per_day": 300, "questions_per_day": 120, "zipf": 5.0, "day_hours": 168.0},
    {"articles": 400, "saves_per_day": 300, "questions_per_day": 120, "zipf": 0.9, "day_hours": 0.02},
    {"articles": 400, "saves_per_day": 300, "questions_per_day": 1, "zipf": 0.0, "saves_popularity": "uniform"},
    {"articles": 10_000_000, "saves_per_day": 100_000_000, "questions_per_day": 100_000_000, "zipf": 0.0},
    {"articles": 10_000_000, "saves_per_day": 1, "questions_per_day": 1, "zipf": 5.0, "citations_per_answer": 20},
]
TARGETS = [Target("detection_latency_s", 1.0), Target("detection_latency_p90_s", 900.0),
           Target("stale_exposure", 1e-6), Target("stale_exposure", 0.5)]


def _numbers(value, where=""):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _numbers(item, f"{where}[{i}]")
    else:
        yield where, value


@pytest.mark.slow
@pytest.mark.parametrize("day", EXTREME_DAYS, ids=lambda d: ",".join(f"{k}={v}" for k, v in d.items()))
def test_every_number_advise_gives_over_a_grid_of_extreme_days_is_finite(day):
    """Each answer is a refusal naming a flag, or numbers that are all finite: no null in the
    JSON, no "n/a" or "nan" in the text, no numpy warning on the way."""
    params = advise.day_params(**day)
    for target in TARGETS:
        for cost, conflicts in (("calls", 0.05), ("bytes", 0.99)):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    answer = advise.advise(params, target, cost=cost, max_conflict_rate=conflicts,
                                           min_interval_s=min(60.0, params.day_s))
                except AdviceError as refused:
                    assert refused.flag.startswith("--") and "\n" not in str(refused)
                    continue
            text = json.dumps(answer.to_dict(), allow_nan=False)
            assert "null" not in text
            for where, value in _numbers(answer.to_dict()):
                assert value is not None, where
                if isinstance(value, float):
                    assert math.isfinite(value), where
            lines = " ".join(answer.lines())
            assert "n/a" not in lines and "nan" not in lines.lower().replace("answers", ""), lines
            assert answer.choice.interval_s <= params.day_s
            if params.saves.count:
                assert getattr(answer.choice, target.metric) <= target.limit * (1 + 1e-9)
                assert 0 <= answer.choice.stale_exposure <= 1 and answer.choice.detection_latency_s >= 0
            assert 0 <= answer.edit.gone_rate <= 1 and answer.edit.delay_s >= 0


def test_json_has_no_null_for_what_the_model_does_not_give(capsys):
    assert main(["advise", "--max-latency", "15min", "--saves-per-day", "0", "--json"]) == 0
    out = capsys.readouterr().out
    assert "null" not in out
    answer = json.loads(out)["advice"]
    assert "detection_latency_p90_s" not in answer["title_check"]
    assert "detection_latency_s" not in answer["choice"]  # nothing goes stale: no latency to give
