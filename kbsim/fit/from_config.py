"""A config's day, read back: the fit of the traces it replays, and the numbers the analytic model takes.

``kbsim advise --config`` answers for the day of a config. When the config replays a log
(scenarios naming traces, as :mod:`kbsim.fit.fitted_config` writes), the log is fitted again from
those traces, so that advise knows what the analytic model's assumptions meet
(:meth:`kbsim.fit.Fit.model_gaps`); the model then takes the fitted numbers. A synthetic
day is the model's own, but for a save ranking only partly the questions'.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kbsim.fit.estimates import Fit, fit_log
from kbsim.fit.logs import RawEvent, build_log, read_events
from kbsim.params import CorpusParams, DayParams
from kbsim.store import DAY_START

__all__ = ["merged", "model_day", "replayed_fit", "synthetic_gaps"]


def merged(base: dict, override: dict) -> dict:
    """A scenario's parameters: ``override`` deep-merged into the config's ``base``."""
    out = dict(base)
    for key, value in override.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def replayed_fit(params: dict, scenarios: dict[str, dict], source: str | None = None) -> Fit | None:
    """The fit of the traces the scenarios of a config replay, each a day of the log (None when
    they replay none). Times in seconds count from each scenario's ``day_start``.

    Raises:
        InputError: a trace that cannot be read, naming the file, line and column.
    """
    saves: list[RawEvent] = []
    questions: list[RawEvent] = []
    any_questions = False
    n = None
    for body in scenarios.values() or [{}]:
        day = DayParams.model_validate(merged(params, body))
        if day.saves.trace is None:
            continue
        start = DAY_START if day.day_start is None else datetime.fromisoformat(day.day_start)
        saves += read_events(day.saves.trace, "saves", day_start=start)[0]
        if day.questions.trace is not None:
            questions += read_events(day.questions.trace, "questions", day_start=start)[0]
            any_questions = True
        n = day.corpus.articles if day.corpus.source is None else None
    if not saves:
        return None
    corpus = DayParams.model_validate(params).corpus.source
    log = build_log(saves, questions if any_questions else None, articles=n, corpus=corpus,
                    sources=(source or "saves traces", "questions traces" if any_questions else None))
    return fit_log(log)


def model_day(params: dict, fit: Fit | None) -> DayParams:
    """The analytic model's day of a config: its numbers (a fit's, where it replays a log), its
    corpus as a synthetic one of as many articles, no traces."""
    from kbsim.inputs import load_corpus

    day = DayParams.model_validate(params)
    articles = day.corpus.articles if day.corpus.source is None else len(load_corpus(day.corpus.source))
    saves = day.saves.model_copy(update={"trace": None})
    questions = day.questions.model_copy(update={"trace": None})
    update: dict[str, Any] = {"corpus": CorpusParams(articles=articles), "saves": saves, "questions": questions}
    if fit is not None:
        popularity = fit.popularity.get("questions", fit.popularity["saves"])
        mix = day.saves.mix.model_copy(update={kind: fit.mix[kind].value for kind in fit.mix})
        update["saves"] = saves.model_copy(update={"count": int(round(fit.saves_per_day.value)), "mix": mix})
        if fit.questions_per_day is not None:
            update["questions"] = questions.model_copy(update={"count": int(round(fit.questions_per_day.value))})
        update["zipf_s"] = float(popularity.exponent.value)
    return day.model_copy(update=update)


def synthetic_gaps(day: DayParams) -> list[str]:
    """What the analytic model assumes that a synthetic day does not do (empty: it holds)."""
    if day.saves.popularity == "zipf" and day.saves.rank_correlation < 0.95:
        return [f"saves follow the questions' ranking only in part (rank_correlation {day.saves.rank_correlation:g}); "
                "the model takes them to share it"]
    return []
