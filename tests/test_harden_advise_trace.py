"""Issue 40, defect 11: ``kbsim advise --trace`` says why an interval is missing, and writes
nothing into the current folder unless asked (``--out``): its fitted config and simulated runs
go to kbsim's cache folder, named in the output."""

from __future__ import annotations

import csv
import math

import pandas as pd

from kbsim.cli import main
from kbsim.fit.synthetic import KnownDays, generate_events
from kbsim.model.advise import Target
from kbsim.runner.simulated_advice import SimulatedAdvice


def _simulated(edits: pd.DataFrame, delay: float, low: float, high: float, units: int = 3) -> SimulatedAdvice:
    points = pd.DataFrame({"strategy": ["poll"], "interval_s": [1800.0], "detection_latency_s": [800.0],
                           "detection_latency_s_low": [700.0], "detection_latency_s_high": [900.0],
                           "calls_per_hour": [4.0], "calls_per_hour_low": [3.0], "calls_per_hour_high": [5.0]})
    choice = points.iloc[0].to_dict()
    return SimulatedAdvice(Target("detection_latency_s", 900.0), "calls", points, edits, choice, None, delay, low,
                           high, 0.05, units, "days", 30, ("cache",))


def test_an_edit_delay_without_an_interval_says_why():
    """Every save on one article: the conflict rate's upper bound is above the limit from the first delay."""
    edits = pd.DataFrame({"delay_s": [1.0, 5.0, 30.0], "rejection_rate": [0.02, 0.2, 0.5],
                          "rejection_rate_low": [0.0, 0.1, 0.3], "rejection_rate_high": [0.3, 0.4, 0.7]})
    line = _simulated(edits, 1.98, math.nan, 1.98).lines()[-1]
    assert "[n/a]" not in line
    assert ("wait at most 1.98 s [n/a: even at the shortest delay simulated, 1 s, the conflict rate may reach 30.0%, "
            "above 5%: no delay is sure to keep under it]") in line
    undefined = edits.assign(rejection_rate_low=math.nan, rejection_rate_high=math.nan)
    assert "n/a: the conflict rate has no interval at any delay" in _simulated(undefined, 1.98, math.nan,
                                                                              math.nan).lines()[-1]
    assert "[n/a (1 day)]" in _simulated(undefined, 1.98, math.nan, math.nan, units=1).lines()[-1]


def test_advise_trace_writes_nothing_into_the_current_folder_and_names_the_cache(tmp_path, capsys, monkeypatch):
    known = KnownDays(articles=100, days=4, saves_per_day=120.0, questions_per_day=60.0, hours=(9, 13))
    logs = tmp_path / "logs"
    logs.mkdir()
    saves_rows, question_rows = generate_events(known, 3)
    for name, rows in (("saves.csv", saves_rows), ("questions.csv", question_rows)):
        with (logs / name).open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(("time", "article", "kind") if rows[0].kind else ("time", "article"))
            for row in rows:
                writer.writerow([row.instant.isoformat(), row.article] + ([row.kind] if row.kind else []))
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert main(["advise", "--trace", str(logs / "saves.csv"), str(logs / "questions.csv"), "--articles", "100",
                 "--max-latency", "15min"]) == 0
    printed = capsys.readouterr().out
    assert list(here.iterdir()) == []
    written = list((tmp_path / "cache" / "kbsim" / "advise").glob("advise-fit-*/day.yaml"))
    assert len(written) == 1 and f"its config: {written[0]}" in printed
