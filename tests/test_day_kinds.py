"""Kinds of day (``kbsim fit``), the burst test against unpublished articles, and advice for the
design day (``kbsim advise --design-day``). The measured rates over many logs are
validation/FIT_DAY_KINDS.md's; these are the mechanisms, each on one small constructed log."""

from __future__ import annotations

import json
import math
from datetime import date, timedelta

import numpy as np
import pytest
from scipy import stats

from kbsim.cli import main
from kbsim.fit import fit_log
from kbsim.fit.day_kinds import find_day_kinds
from kbsim.fit.design_day import design_day, parse_design_day
from kbsim.fit.estimates import _shuffle_within, _unpublish_limits
from kbsim.fit.fitted_config import write_config
from kbsim.fit.logs import FitInputError
from kbsim.fit.synthetic import KnownDays, generate_log
from kbsim.stats.intervals import prediction

MONDAY = date(2025, 3, 10)


def _days(totals: list[int], first: date = MONDAY) -> tuple[list[date], np.ndarray]:
    """Dates from ``first`` on, every calendar day, and an hourly table with each total spread over 09-17."""
    dates = [first + timedelta(days=i) for i in range(len(totals))]
    hourly = np.zeros((len(totals), 24))
    for d, total in enumerate(totals):
        hourly[d, 9:17] = total / 8
    return dates, hourly


def test_a_fortnight_with_weekends_and_a_release_day_has_three_kinds():
    #          Mo   Tu   We   Th    Fr   Sa  Su  Mo   Tu   We   Th   Fr   Sa  Su
    totals = [300, 290, 310, 1500, 305, 60, 55, 295, 315, 300, 298, 302, 62, 58]
    dates, hourly = _days(totals)
    found = find_day_kinds(dates, hourly)
    assert found.found and found.test is not None and found.test.over_dispersed
    assert [(k.name, [d.isoformat() for d in k.dates]) for k in found.kinds] == [
        ("weekday", [dates[i].isoformat() for i in (0, 1, 2, 4, 7, 8, 9, 10, 11)]),
        ("weekend", [dates[i].isoformat() for i in (5, 6, 12, 13)]),
        ("peak", ["2025-03-13"]),
    ]
    weekday = found.kind("weekday")
    assert weekday.saves_per_day.value == pytest.approx(np.mean([totals[i] for i in weekday.days]))
    # the mean day's interval is narrower than a future day's, and both hold the weekday mean
    assert weekday.saves_future.low < weekday.saves_per_day.low < weekday.saves_per_day.high < weekday.saves_future.high
    assert found.busiest().name == "peak"


def test_days_alike_have_no_kinds_weekend_or_not():
    rng = np.random.default_rng(7)
    every_day = rng.poisson(300, size=14).tolist()
    found = find_day_kinds(*_days(every_day))
    assert not found.found and found.kinds == () and "one kind of day" in found.reason
    weekdays = [300, 290, 310, 305, 295, 315, 300, 298, 302, 308]
    dates = [d for d in (MONDAY + timedelta(days=i) for i in range(14)) if d.weekday() < 5]
    _, hourly = _days(weekdays)
    assert not find_day_kinds(dates, hourly).found


def test_over_dispersion_that_no_rule_explains_is_named_and_kept_as_noise():
    # weekdays only, spread out (sessions), no day far above the others: no kinds, but the test says why
    totals = [200, 420, 260, 380, 300, 230, 400, 280, 350, 240]
    dates = [d for d in (MONDAY + timedelta(days=i) for i in range(14)) if d.weekday() < 5]
    found = find_day_kinds(dates, _days(totals)[1])
    assert found.test is not None and found.test.over_dispersed and not found.found
    assert "no weekend and no peak day explains it" in found.reason


def test_the_prediction_interval_is_the_t_interval_for_one_more_day():
    values = [10.0, 12.0, 15.0, 11.0]
    found = prediction(values)
    half = stats.t.ppf(0.975, 3) * np.std(values, ddof=1) * math.sqrt(1 + 1 / 4)
    assert (found.low, found.high) == pytest.approx((np.mean(values) - half, np.mean(values) + half))
    assert math.isnan(prediction([5.0]).low)


def test_a_fitted_log_with_weekends_writes_one_scenario_per_kind(tmp_path):
    known = KnownDays(articles=60, days=14, saves_per_day=150, questions_per_day=60, weekdays_only=False,
                      weekend_rate=0.2, peak_days=(3,), peak_rate=5.0)
    fit = fit_log(generate_log(known, 1), replicates=9)
    assert fit.day_kinds is not None and [k.name for k in fit.day_kinds.kinds] == ["weekday", "weekend", "peak"]
    assert fit.day_kinds.kind("peak").dates == (date(2025, 3, 13),)
    written = write_config(fit, tmp_path / "day.yaml", replay=False)
    text = written.path.read_text()
    assert "a future day" in text and "pool the kinds of day" in text
    from kbsim.cli.day_config import load_day_config

    config = load_day_config(written.path)
    assert list(config.scenarios) == ["weekday", "weekend", "peak"]
    assert config.scenarios["peak"]["saves"]["count"] > 3 * config.scenarios["weekday"]["saves"]["count"]
    # a replayed config names each day's scenario by its kind
    replayed = write_config(fit, tmp_path / "replay.yaml", replay=True)
    assert "  peak-2025-03-13: {" in replayed.path.read_text()
    assert "  weekend-2025-03-15: {" in replayed.path.read_text()
    # advise simulates only the design day's days: the weekend's four
    from kbsim.fit.design_day import design_model_day as _design
    from kbsim.fit.from_config import model_day

    loaded = load_day_config(replayed.path)
    params, scenarios = dict(loaded.params), {name: dict(body) for name, body in loaded.scenarios.items()}
    design, day, chosen = _design(fit, params, scenarios, "weekend", model_day(params, fit), 0.25)
    assert design.kind == "weekend" and sorted(chosen) == [
        "weekend-2025-03-15", "weekend-2025-03-16", "weekend-2025-03-22", "weekend-2025-03-23"]
    assert day.saves.count == design.saves_count < config.scenarios["weekday"]["saves"]["count"]


def test_the_constrained_shuffle_keeps_saves_before_their_articles_unpublish():
    # article 0: saves at places 0, 2, then its unpublish at 4 (nothing after); article 1 is free
    rows = np.array([0, 1, 0, 1, 0, 1, 1, 1])
    kinds = np.array([0, 0, 0, 0, 2, 0, 0, 0])
    limits = _unpublish_limits(rows, kinds, np.arange(8.0))
    assert limits is not None and limits[1].tolist() == [4, 8, 4, 8, -1, 8, 8, 8]
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        shuffled = _shuffle_within(rows, limits, rng)
        assert sorted(shuffled.tolist()) == sorted(rows.tolist()) and shuffled[4] == 0
        assert (np.flatnonzero(shuffled == 0) <= 4).all()
        seen.add(tuple(np.flatnonzero(shuffled[:4] == 0)))
    assert len(seen) == 6  # every pair of the four places before the unpublish comes up
    # an unpublish that a later save of the same article follows limits nothing
    assert _unpublish_limits(np.array([0, 0, 0]), np.array([0, 2, 0]), np.arange(3.0)) is None


def _shuffle_one_save_at_a_time(rows, limits, rng):
    """The constrained shuffle as first written: each limited save draws, then its place leaves the
    free ones (time that grows with the limited saves times the day's events)."""
    place, limit = limits
    ordered = rows[place]
    out = ordered.copy()
    limited = np.flatnonzero((limit >= 0) & (limit < len(rows)))
    limited = limited[np.argsort(limit[limited], kind="stable")]
    available = np.flatnonzero(limit >= 0)
    for event in limited.tolist():
        chosen = available[int(rng.integers(int(np.searchsorted(available, limit[event]))))]
        out[chosen] = ordered[event]
        available = available[available != chosen]
    rest = np.flatnonzero(limit >= len(rows))
    out[available] = ordered[rest][rng.permutation(len(rest))]
    result = np.empty_like(rows)
    result[place] = out
    return result


def test_the_constrained_shuffle_draws_what_one_save_at_a_time_drew():
    """The draws made at once and the places found by merging runs: the same shuffles, draw for
    draw, as one save at a time (so a fit's figures do not move), and the generator left alike."""
    generator = np.random.default_rng(40)
    tried = 0
    for trial in range(400):
        n, articles = int(generator.integers(2, 200)), int(generator.integers(1, 30))
        rows = np.unique(generator.integers(0, articles, n), return_inverse=True)[1]
        kinds = generator.choice([0, 1, 2], n, p=[0.6, 0.1, 0.3])
        limits = _unpublish_limits(rows, kinds, generator.random(n))
        if limits is None:
            continue
        tried += 1
        at_once, one_by_one = np.random.default_rng(trial), np.random.default_rng(trial)
        assert _shuffle_within(rows, limits, at_once).tolist() == \
            _shuffle_one_save_at_a_time(rows, limits, one_by_one).tolist()
        assert at_once.random() == one_by_one.random()
    assert tried > 300


def test_unpublished_articles_that_stop_getting_saves_are_not_bursts():
    known = KnownDays(articles=400, days=5, saves_per_day=300, zipf_s=1.2, mix=(0.8, 0.1, 0.1),
                      unpublish_ends_day=True)
    fit = fit_log(generate_log(known, 3), replicates=9)
    burst = fit.burstiness["saves"]
    assert not burst.bursty and burst.ratio.value < 1.2


def test_saves_after_an_unpublish_are_dropped_from_a_replay_with_a_warning(tmp_path):
    known = KnownDays(articles=40, days=3, saves_per_day=120, questions_per_day=30, mix=(0.7, 0.1, 0.2))
    fit = fit_log(generate_log(known, 2), replicates=9)
    written = write_config(fit, tmp_path / "day.yaml", replay=True)
    assert written.dropped_saves > 0
    share = 100 * written.dropped_saves / len(fit.log.saves)
    assert written.warning is not None and written.warning.startswith(
        f"{written.dropped_saves:,} saves ({share:.1f}% of {len(fit.log.saves):,})")


def test_the_design_day_is_the_busiest_kind_in_its_busy_hours():
    known = KnownDays(articles=60, days=14, saves_per_day=150, questions_per_day=60, weekdays_only=False,
                      weekend_rate=0.2, hours=(9, 13), profile=(1.0, 3.0, 3.0, 1.0))
    fit = fit_log(generate_log(known, 4), replicates=9)
    design = design_day(fit)
    assert design.kind == "weekday" and design.busy_hours == (10, 11)
    assert design.saves_count > design.day_saves  # the busy hours' rate, all day
    weekend = design_day(fit, "weekend")
    assert weekend.saves_count < design.saves_count and all(d.weekday() >= 5 for d in weekend.dates)
    with pytest.raises(FitInputError, match="--design-day: the log has no peak kind of day"):
        design_day(fit, "peak")
    assert parse_design_day("90%") == "p90" and parse_design_day(None) == "busiest"


KINDS_CONFIG = """\
name: kinds
params:
  corpus: {articles: 400}
  day_hours: 8
  saves: {count: 300}
  questions: {count: 120}
scenarios:
  weekday: {saves.count: 300, questions.count: 120}
  weekend: {saves.count: 60, questions.count: 20}
  peak: {saves.count: 1500, questions.count: 130}
"""


def test_advise_names_the_design_day_and_what_pooling_would_have_said(tmp_path, capsys):
    config = tmp_path / "kinds.yaml"
    config.write_text(KINDS_CONFIG)
    assert main(["advise", "--config", str(config), "--max-latency", "15min", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["design_day"]["kind"] == "peak" and answer["advice"]["day"]["saves_per_day"] == 1500
    assert answer["pooled_advice"]["day"]["saves_per_day"] == 300
    assert answer["advice"]["edit"]["delay_s"] < answer["pooled_advice"]["edit"]["delay_s"] / 2
    assert main(["advise", "--config", str(config), "--max-latency", "15min", "--design-day", "weekend"]) == 0
    text = capsys.readouterr().out
    assert "Design day: the weekend kind of day" in text and "Pooled over every kind of day" in text


@pytest.mark.parametrize(("argv", "message"), [
    (["--design-day", "p0"], "--design-day: expected busiest"),
    (["--design-day", "holiday"], "--design-day: expected busiest"),
    (["--design-day", "ordinary"], "--design-day: this config has no ordinary kind of day"),
    (["--design-day", "p90"], "--design-day: a percentile needs the log's days"),
])
def test_a_bad_design_day_is_one_line_naming_the_flag_exit_2(tmp_path, capsys, argv, message):
    config = tmp_path / "kinds.yaml"
    config.write_text(KINDS_CONFIG)
    assert main(["advise", "--config", str(config), "--max-latency", "15min", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kbsim advise: error: {message}") and err.count("\n") == 1


def test_a_design_day_without_a_day_from_a_log_is_refused(capsys):
    assert main(["advise", "--max-latency", "15min", "--design-day", "peak"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kbsim advise: error: --design-day: applies only with --config or --trace")
    assert err.count("\n") == 1


def test_kbsim_fit_warns_on_one_line_when_a_replay_drops_saves_after_an_unpublish(tmp_path, capsys):
    from kbsim.fit.synthetic import generate_events

    known = KnownDays(articles=40, days=3, saves_per_day=150, questions_per_day=30, mix=(0.7, 0.1, 0.2),
                      hours=(9, 13), profile=(6.0, 1.0, 1.0, 1.0))  # far from flat: the config replays the log
    saves, _ = generate_events(known, 5)
    log = tmp_path / "saves.csv"
    log.write_text("time,article,kind\n" + "".join(f"{e.instant.isoformat()},{e.article},{e.kind}\n" for e in saves))
    assert main(["fit", str(log), "--articles", "40", "--write-config", str(tmp_path / "day.yaml"), "--quiet"]) == 0
    err = capsys.readouterr().err.splitlines()
    warnings = [line for line in err if line.startswith("kbsim fit: warning: ")]
    assert len(warnings) == 1 and "% of " in warnings[0] and "come after their article was unpublished" in warnings[0]


def test_the_design_day_allows_for_a_busier_future_day_of_its_kind_where_the_log_can_say_how_busy(tmp_path):
    known = KnownDays(articles=60, days=14, saves_per_day=150, questions_per_day=60, weekdays_only=False,
                      weekend_rate=0.2, peak_days=(3,), peak_rate=5.0, hours=(9, 13), profile=(1.0, 3.0, 3.0, 1.0))
    fit = fit_log(generate_log(known, 4), replicates=9)
    assert [k.name for k in fit.day_kinds.kinds] == ["weekday", "weekend", "peak"]
    log, hours = fit.log, fit.window[1] - fit.window[0]
    for name in ("weekday", "weekend"):
        design = design_day(fit, name)
        members = np.array(fit.day_kinds.kind(name).days)
        # each of the kind's days is one value: its saves in the busy hours, per hour
        busy = np.isin(log.saves.day, members) & np.isin(log.saves.hour.astype(int), design.busy_hours)
        per_day = np.bincount(log.saves.day[busy], minlength=log.days)[members] / len(design.busy_hours)
        future = prediction(per_day)
        assert design.saves_busy_future == future and design.saves_per_busy_hour == pytest.approx(per_day.mean())
        assert design.margin and design.saves_per_design_hour == future.high > design.saves_per_busy_hour
        assert design.saves_count == math.ceil(future.high * hours)
        assert design.to_dict()["saves_per_busy_hour_future"]["high"] == future.high
    # one peak day: no interval for a future one, so no margin (and the output says so)
    peak = design_day(fit, "peak")
    assert not peak.margin and peak.saves_count == math.ceil(peak.saves_per_busy_hour * hours)
    future = peak.to_dict()["saves_per_busy_hour_future"]
    assert "high" not in future and future["interval"] == "n/a (1 day)"  # no null in advise's JSON
    # a percentile is the day the builder chose: taken as it is
    p90 = design_day(fit, "p90")
    assert p90.saves_busy_future is None and p90.saves_count == math.ceil(p90.saves_per_busy_hour * hours)
    from kbsim.fit.design_day import design_lines as _design_lines
    from kbsim.fit.design_day import design_model_day as _design
    from kbsim.fit.from_config import model_day

    config = write_config(fit, tmp_path / "day.yaml", replay=True).path
    from kbsim.cli.day_config import load_day_config

    loaded = load_day_config(config)
    params, scenarios = dict(loaded.params), {name: dict(body) for name, body in loaded.scenarios.items()}
    design, day, _ = _design(fit, params, scenarios, "weekday", model_day(params, fit), 0.25)
    lines = "\n".join(_design_lines(design, day))
    assert day.saves.count == design.saves_count
    assert (f"95% prediction interval over its 9 days); the answer must hold on such a day, so it is for the upper "
            f"end, {design.saves_per_design_hour:.1f} saves/h" in lines)
    design, day, _ = _design(fit, params, scenarios, "peak", model_day(params, fit), 0.25)
    assert "One day of this kind: no interval for a future day" in "\n".join(_design_lines(design, day))
