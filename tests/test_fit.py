"""``kbsim fit``: reading logs in every format, errors naming file/line/column, the round trip of a
kbsim day through ``kbsim trace export``, the config it writes (and that it runs), and
``kbsim advise --config``/``--trace``."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from kbsim.cli import main
from kbsim.fit import Columns, FitInputError, fit_log, read_log
from kbsim.fit.logs import parse_timezone
from kbsim.fit.synthetic import EXAMPLE, KnownDays, generate_events, generate_log, write_example_log
from kbsim.inputs import InputError
from kbsim.stats.intervals import estimate, jackknife
from kbsim.store import DAY_START, SQLiteStore

ROOT = Path(__file__).resolve().parents[1]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _inside(entry: dict, truth: float) -> bool:
    return entry["low"] <= truth <= entry["high"]


# -- reading ----------------------------------------------------------------------------------------


def test_a_generic_csv_is_read_with_its_column_mapping_time_zone_and_days(tmp_path):
    """Naive local times in Europe/Berlin across the change to summer time (30 March 2025), the kinds
    by their synonyms: days are local dates, hours local hours, and the weekend is no day of the log."""
    saves = _write(tmp_path / "edits.csv", "changed_at,page,action,who\n"
                   "2025-03-28 09:15:00,Reset a password,edit,ann\n"
                   "2025-03-28 17:30:00,VPN setup,retitle,bob\n"
                   "2025-03-31 09:15:00,Reset a password,delete,ann\n"
                   "2025-03-31 17:30:00,VPN setup,edit,bob\n")
    log = read_log(saves, articles=10, columns=Columns("changed_at", "page", "action"),
                   tz=parse_timezone("Europe/Berlin"))
    assert [d.isoformat() for d in log.dates] == ["2025-03-28", "2025-03-31"]
    assert log.saves.hour.tolist() == [9.25, 17.5, 9.25, 17.5]
    assert log.saves.kind.tolist() == [0, 1, 2, 0]  # content, content_and_title, unpublish, content
    # the instants: three days and 23 hours (summer time began) between the two 09:15s
    assert log.saves.time_s[2] - log.saves.time_s[0] == 3 * 86400 - 3600
    assert log.articles == ("Reset a password", "VPN setup") and log.n_articles == 10
    assert any("2 calendar days" in note for note in log.notes)


def test_jsonl_rows_poll_pages_and_event_json_are_read(tmp_path):
    rows = _write(tmp_path / "saves.jsonl", "\n".join(json.dumps(r) for r in (
        {"time": "2026-01-05T09:00:10Z", "article": "art-000001", "kind": "content"},
        {"time": 40.0, "article": "art-000002"},  # seconds from kbsim's day start; no kind: content
    )) + "\n")
    log = read_log(rows, articles=5)
    assert log.saves.time_s.tolist() == [9 * 3600 + 10.0, 9 * 3600 + 40.0]
    assert any("name no kind" in note for note in log.notes)
    page = {"events": [
        {"sequence": 1, "type": "article.published", "article_id": "art-000001", "updated_at": "2026-01-05T09:00:00Z"},
        {"sequence": 2, "type": "article.updated", "article_id": "art-000001", "updated_at": "2026-01-05T10:00:00Z"},
        {"sequence": 3, "type": "article.unpublished", "article_id": "art-000002",
         "updated_at": "2026-01-05T11:00:00.5Z"},
    ], "next_sequence": 3, "has_more": False}
    for name, text in (("poll.json", json.dumps(page)), ("poll.jsonl", json.dumps(page) + "\n" + json.dumps(page))):
        log = read_log(_write(tmp_path / name, text), articles=5)
        per_page = 2
        assert len(log.saves) == per_page * (2 if name.endswith("l") else 1)
        assert set(log.saves.kind.tolist()) == {0, 2}
        assert any("publish a new article" in note for note in log.notes)
        assert any("article.updated" in note for note in log.notes)


def test_the_event_log_of_a_sqlite_store_is_read(tmp_path):
    db = tmp_path / "kb.db"
    store = SQLiteStore(db, synchronous="NORMAL")
    store.create_knowledge_base("kb-1")
    ids = [store.publish_article("kb-1", title=f"Article {i}", content="text", at=0.0) for i in range(5)]
    for i, at in enumerate((60.0, 120.0, 3600.0)):
        store.save_article("kb-1", ids[i], at=at, content=f"changed {i}")
    store.unpublish_article("kb-1", ids[4], at=4000.0)
    store.close()
    log = read_log(db, articles=5)
    assert len(log.saves) == 4 and log.saves.kind.tolist() == [0, 0, 0, 2]
    assert log.saves.time_s.tolist() == [9 * 3600 + 60.0, 9 * 3600 + 120.0, 10 * 3600.0, 9 * 3600 + 4000.0]
    with pytest.raises(InputError, match="holds no knowledge base 'kb-2'"):
        read_log(db, articles=5, kb_id="kb-2")


@pytest.mark.parametrize(("text", "where"), [
    ("when,article,kind\n1,a,content\n", "line 1, column 'time': missing column 'time'"),
    ("time,article,kind\n1,a,content\nsoon,a,content\n", "line 3, column 'time': 'soon' is neither"),
    ("time,article,kind\n1,a,rewrite\n", "line 2, column 'kind': unknown kind 'rewrite'"),
    ("time,article,kind\n2026-01-05T09:00:00,a,content\n", "line 2, column 'time': '2026-01-05T09:00:00' has no "
     "time zone"),
    ("time,article,kind\n1,,content\n", "line 2, column 'article': no 'article'"),
    ("time,article,kind\n1,a\n", "line 2: 2 values where the header names 3 columns"),
])
def test_a_bad_row_is_refused_naming_the_file_line_and_column(tmp_path, capsys, text, where):
    path = _write(tmp_path / "saves.csv", text)
    with pytest.raises(InputError) as caught:
        read_log(path, articles=10)
    assert str(caught.value).startswith(f"{path}, {where}")
    assert main(["fit", str(path), "--articles", "10"]) == 2
    assert capsys.readouterr().err.startswith(f"kbsim fit: error: {path}, {where}")


def test_an_article_the_corpus_does_not_hold_and_too_few_articles_are_refused(tmp_path):
    path = _write(tmp_path / "saves.csv", "time,article,kind\n1,Reset your network password,content\n"
                  "2,No such article,content\n")
    with pytest.raises(InputError, match=r"line 3, column 'article': unknown article 'No such article'"):
        read_log(path, corpus="kbsim:sample")
    with pytest.raises(FitInputError, match="the logs name 2 distinct articles, more than --articles 1"):
        read_log(path, articles=1)
    with pytest.raises(FitInputError, match="--articles or --corpus, not both"):
        read_log(path, articles=400, corpus="kbsim:sample")


def test_the_jackknife_of_a_mean_is_the_t_interval_of_the_mean():
    """A linear statistic's jackknife influence values are its own: the one method, either way."""
    values = np.array([3.0, 5.0, 4.0, 9.0, 6.0])
    loo = [(values.sum() - v) / (len(values) - 1) for v in values]
    by_jackknife, by_mean = jackknife(values.mean(), loo, unit="days"), estimate("mean", values)
    assert math.isclose(by_jackknife.low, by_mean.low) and math.isclose(by_jackknife.high, by_mean.high)
    assert by_jackknife.method == "jackknife over days, linearised, t(days-1)"
    assert math.isnan(jackknife(1.0, [0.9]).low)  # one unit: no interval


# -- what the fit recovers --------------------------------------------------------------------------


def _run_kbsim_days(tmp_path: Path, days: int) -> tuple[Path, Path]:
    """``days`` kbsim days (one ranking: by_id), each exported with ``kbsim trace export`` and dated
    one after another into one log (the days a real log would hold)."""
    config = _write(tmp_path / "rt.yaml", "name: rt\nparams:\n  ranking: by_id\n  arrivals: poisson\n"
                    "  saves: {mix: {content: 0.9, content_and_title: 0.1, unpublish: 0.0}}\n"
                    f"seeds: {days}\n")
    assert main(["run", str(config), "--out", str(tmp_path / "results"), "--workers", "1", "--no-progress"]) == 0
    runs = sorted((tmp_path / "results" / "rt" / "runs").iterdir())
    joined = {"saves": [], "questions": []}
    for day, run in enumerate(runs):
        out = tmp_path / f"day-{day}"
        assert main(["trace", "export", str(run), "--out", str(out)]) == 0
        for kind in joined:
            with (out / f"{kind}.csv").open(encoding="utf-8") as handle:
                for row in csv.DictReader(handle):
                    instant = DAY_START + timedelta(days=day, seconds=float(row["time"]))
                    joined[kind].append({**row, "time": instant.isoformat()})
    paths = []
    for kind, rows in joined.items():
        path = tmp_path / f"{kind}.csv"
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        paths.append(path)
    return paths[0], paths[1]


def test_a_kbsim_day_exported_and_fitted_gives_back_its_parameters(tmp_path, capsys):
    """The round trip: six days simulated by kbsim (300 saves and 120 questions a day, Poisson, Zipf
    0.9 for both, one ranking), exported with ``kbsim trace export``, fitted: every parameter is
    inside its 95% interval, and the fit finds the day Poisson-like, so its config is synthetic."""
    saves, questions = _run_kbsim_days(tmp_path, 6)
    capsys.readouterr()
    assert main(["fit", str(saves), str(questions), "--articles", "400", "--json",
                 "--write-config", str(tmp_path / "fitted.yaml")]) == 0
    fitted = json.loads(capsys.readouterr().out)
    assert fitted["log"]["days"] == 6
    assert _inside(fitted["saves_per_day"], 300) and _inside(fitted["questions_per_day"], 120)
    for what in ("saves", "questions"):
        popularity = fitted["popularity"][what]
        assert popularity["estimator"] == "mle" and _inside(popularity["zipf_exponent"], 0.9), popularity
        assert popularity["goodness_of_fit"]["fits"]
    assert _inside(fitted["save_mix"]["content"], 0.9) and _inside(fitted["save_mix"]["content_and_title"], 0.1)
    assert fitted["save_mix"]["unpublish"]["value"] == 0.0
    assert fitted["rank_correlation"]["high"] >= 0.95  # one ranking: saves follow the questions'
    assert not fitted["burstiness"]["saves"]["bursty"]
    assert not any(p["far_from_flat"] for p in fitted["profile"].values())
    assert fitted["model_gaps"] == [] and fitted["config"]["replays_log"] is False
    text = (tmp_path / "fitted.yaml").read_text(encoding="utf-8")
    assert "ranking: by_id" in text and "arrivals: poisson" in text and "scenarios" not in text


def _bursty_log(tmp_path: Path) -> tuple[Path, Path, KnownDays]:
    """A small log of office hours and sessions (3 days, 60 articles, 2 hours a day)."""
    known = KnownDays(articles=60, days=3, saves_per_day=90.0, questions_per_day=40.0, zipf_s=1.0,
                      rank_correlation=0.5, hours=(9, 11), profile=(2.0, 1.0), session_saves=3.0,
                      session_gap_s=60.0, unpublish_ends_day=True)
    saves_rows, question_rows = generate_events(known, 5)
    paths = []
    for name, rows, header in (("saves.csv", saves_rows, ("time", "article", "kind")),
                               ("questions.csv", question_rows, ("time", "article"))):
        path = tmp_path / name
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            for row in rows:
                writer.writerow([row.instant.isoformat(), row.article] + ([row.kind] if row.kind else []))
        paths.append(path)
    return paths[0], paths[1], known


def test_fit_writes_a_config_that_replays_a_bursty_log_and_runs(tmp_path, capsys):
    saves, questions, _ = _bursty_log(tmp_path)
    config = tmp_path / "day.yaml"
    args = ["fit", str(saves), str(questions), "--articles", "60", "--write-config", str(config), "--figure",
            str(tmp_path / "fit.png")]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "BURSTY" in printed and "replays the log (3 days as 3 scenarios" in printed
    assert (tmp_path / "fit.png").stat().st_size > 20_000
    text = config.read_text(encoding="utf-8")
    assert "saves come in bursts" in text and "# saves per day" in text and "day-traces/saves-" in text
    assert main(args) == 2 and "exists; choose another file or pass --force" in capsys.readouterr().err
    assert main(["run", str(config), "--seeds", "1", "--out", str(tmp_path / "results"), "--workers", "1",
                 "--no-progress"]) == 0
    assert len(list((tmp_path / "results" / "day" / "runs").iterdir())) == 3
    from kbsim.cli.day_config import load_day

    served = load_day(config)  # what kbsim serve --config serves: the fitted numbers
    assert served.corpus.articles == 60 and served.saves.trace is None and served.arrivals == "poisson"


def test_advise_config_says_the_model_does_not_hold_and_simulates(tmp_path, capsys):
    saves, questions, _ = _bursty_log(tmp_path)
    config = tmp_path / "day.yaml"
    assert main(["fit", str(saves), str(questions), "--articles", "60", "--write-config", str(config)]) == 0
    capsys.readouterr()
    assert main(["advise", "--config", str(config), "--max-latency", "10min", "--min-interval", "5min",
                 "--out", str(tmp_path / "results"), "--workers", "1", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert any("bursts" in gap for gap in answer["model_gaps"])
    simulated = answer["simulated"]
    assert simulated["source"].startswith("simulation: 3 days per point")
    compared = {row["metric"] for row in simulated["model_vs_simulation"]}
    assert {"detection_latency_s", "stale_exposure", "calls_per_hour", "rejection_rate"} <= compared
    assert all(row["agrees"] in (True, False, None) for row in simulated["model_vs_simulation"])


def test_advise_trace_fits_the_log_and_a_poisson_day_needs_no_simulation(tmp_path, capsys):
    known = KnownDays(articles=100, days=4, saves_per_day=120.0, questions_per_day=60.0, hours=(9, 13))
    saves_rows, question_rows = generate_events(known, 3)
    for name, rows in (("saves.csv", saves_rows), ("questions.csv", question_rows)):
        with (tmp_path / name).open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(("time", "article", "kind") if rows[0].kind else ("time", "article"))
            for row in rows:
                writer.writerow([row.instant.isoformat(), row.article] + ([row.kind] if row.kind else []))
    assert main(["advise", "--trace", str(tmp_path / "saves.csv"), str(tmp_path / "questions.csv"), "--articles",
                 "100", "--max-latency", "15min", "--out", str(tmp_path / "results")]) == 0
    printed = capsys.readouterr().out
    assert "your log" in printed and "fitted" in printed and "Do: poll events every" in printed
    assert "does not hold" not in printed and "Simulated" not in printed
    assert list((tmp_path / "results").glob("advise-fit-*/day.yaml"))


@pytest.mark.parametrize(("args", "message"), [
    (["--config", "day.yaml", "--saves-per-day", "500"], "--saves-per-day: does not apply with --config"),
    (["--trace", "a.csv", "b.csv", "c.csv"], "--trace: expected SAVES [QUESTIONS], got 3 files"),
    (["--config", "missing.yaml"], "missing.yaml: config file not found"),
])
def test_advise_config_and_trace_errors_name_the_option(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    assert main(["advise", *args, "--max-latency", "15min"]) == 2
    assert message in capsys.readouterr().err


# -- the generator and the shipped example ------------------------------------------------------------


def test_the_in_memory_log_is_the_one_the_files_give():
    """generate_log (what validation/fit.py fits) and the rows a file would hold, read back, fit alike."""
    from kbsim.fit.synthetic import generated_log_from_events

    known = replace(KnownDays(days=3), session_saves=2.0)
    direct, parsed = fit_log(generate_log(known, 4), replicates=0), fit_log(generated_log_from_events(known, 4),
                                                                            replicates=0)
    assert direct.saves_per_day == parsed.saves_per_day
    for what in ("saves", "questions"):
        assert math.isclose(direct.popularity[what].exponent.value, parsed.popularity[what].exponent.value,
                            abs_tol=1e-9)


def test_the_shipped_example_log_is_the_documented_process(tmp_path):
    written = write_example_log(tmp_path)
    for path in written:
        assert path.read_bytes() == (ROOT / "examples" / "helpdesk-log" / path.name).read_bytes(), path.name
    assert EXAMPLE.session_saves > 1 and EXAMPLE.profile is not None  # bursts and office hours


def test_kbsim_figures_keeps_the_sections_below_its_marker(tmp_path):
    from kbsim.report.pages import KEPT_MARKER, kept_sections

    page = _write(tmp_path / "results.md", f"generated\n{KEPT_MARKER}\n## Mine\nkept\n")
    assert kept_sections(page) == f"\n{KEPT_MARKER}\n## Mine\nkept\n"
    assert kept_sections(_write(tmp_path / "other.md", "generated only\n")) == ""


def test_one_day_gives_estimates_without_intervals_and_says_so(tmp_path, capsys):
    """kbsim's own trace of one day (seconds from the day start) fits; with one day nothing has an
    interval, the JSON says so with nulls, and the written config still loads."""
    known = KnownDays(articles=80, days=1, saves_per_day=120.0, questions_per_day=50.0, hours=(9, 12))
    saves_rows, question_rows = generate_events(known, 2)
    start = saves_rows[0].instant.replace(hour=9, minute=0, second=0)
    for name, rows, header in (("saves.csv", saves_rows, ("time", "article", "kind")),
                               ("questions.csv", question_rows, ("time", "article"))):
        with (tmp_path / name).open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            for row in rows:
                seconds = (row.instant - start).total_seconds()
                writer.writerow([repr(seconds), row.article] + ([row.kind] if row.kind else []))
    day_start = start.isoformat()
    assert main(["fit", str(tmp_path / "saves.csv"), str(tmp_path / "questions.csv"), "--articles", "80",
                 "--day-start", day_start, "--json", "--write-config", str(tmp_path / "one.yaml")]) == 0
    fitted = json.loads(capsys.readouterr().out)
    assert fitted["log"]["days"] == 1 and fitted["log"]["active_hours"][0] == 9
    assert fitted["saves_per_day"]["low"] is None and fitted["popularity"]["saves"]["zipf_exponent"]["low"] is None
    assert any("one day: no interval" in note for note in fitted["log"]["notes"])
    from kbsim.runner.load import load_config

    assert load_config(tmp_path / "one.yaml").runs()
