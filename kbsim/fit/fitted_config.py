"""The experiment config a fit writes (``kbsim fit --write-config day.yaml``).

The config is an ordinary experiment (``kbsim run``, ``kbsim advise --config``; ``kbsim serve
--config`` serves its ``params``), and a comment beside each value says where it came from.

- **The log is Poisson-like** (no bursts, a flat profile, a Zipf law that fits, one
  exponent for saves and questions): the config is the synthetic day of the fitted
  numbers, ``seeds`` days of it.
- **Otherwise** it **replays the log**: one scenario per day of the log, whose saves and
  questions are that day's traces (written beside the config), each simulated for a few
  seeds (only the text people write and the agent's choices differ between them). Why
  replay rather than a model of sessions: a trace keeps the bursts, the hourly profile
  and the empirical popularity exactly, where a session model would reproduce only the
  summaries it was fitted to; and a day already replays traces, so the config needs no
  parameter kbsim does not have. The price is that the days are the log's, no more
  (docs/fit.md). ``params`` still holds the fitted numbers: the analytic model and
  ``kbsim serve --live`` (whose people draw their saves) use them.

On the synthetic corpus (``--articles``) the log's articles become ``art-000001`` onward
in order of popularity (most asked, else most saved, first) and the config ranks them
in that order (``ranking: by_id``); each trace row keeps the log's own name in a
``log_article`` column, which a day ignores. With ``--corpus`` the traces name the
corpus's articles by kbsim's ids.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kbsim.files import atomic_write_text
from kbsim.fit.estimates import Fit
from kbsim.fit.logs import SAVE_KINDS, Activity
from kbsim.stats.intervals import Estimate
from kbsim.store import article_id_for
from kbsim.version import __version__

__all__ = ["REPLAY_SEEDS", "SYNTHETIC_SEEDS", "WrittenConfig", "article_order", "write_config"]

#: Simulated days per day of the log, when the config replays it.
REPLAY_SEEDS = 2
#: Simulated days of a synthetic config.
SYNTHETIC_SEEDS = 5


@dataclass(frozen=True)
class WrittenConfig:
    """What :func:`write_config` wrote: the config, the traces and the popularity table."""

    path: Path
    replay: bool
    reasons: tuple[str, ...]
    traces: tuple[Path, ...]
    popularity: Path
    dropped_saves: int
    #: saves the log holds (the share ``dropped_saves`` is of)
    total_saves: int = 0

    @property
    def warning(self) -> str | None:
        """One line on the saves the replayed traces left out (None: none were)."""
        if not self.dropped_saves:
            return None
        share = self.dropped_saves / max(1, self.total_saves)
        return (f"{self.dropped_saves:,} saves ({100 * share:.1f}% of {self.total_saves:,}) come after their article "
                "was unpublished that day; the replayed traces drop them (a simulated day cannot save an unpublished "
                "article), so the replayed days hold fewer saves than the log")


def article_order(fit: Fit) -> list[str]:
    """Kbsim's id for each of the log's articles (by :attr:`Log.articles` index): the corpus's
    own on a corpus from files, else ``art-000001`` onward by popularity."""
    log = fit.log
    if log.corpus_source is not None:
        return list(log.articles)
    saves = fit.popularity["saves"].counts
    questions = fit.popularity["questions"].counts if "questions" in fit.popularity else np.zeros_like(saves)
    order = np.lexsort((np.arange(len(saves)), -saves, -questions))
    ids = [""] * len(saves)
    for rank, index in enumerate(order.tolist(), start=1):
        ids[index] = article_id_for(rank)
    return ids


def _interval(value: Estimate, digits: int = 3) -> str:
    if math.isnan(value.low) or math.isnan(value.high):
        return f"{value.value:.{digits}g} (no interval: one day)"
    return f"{value.value:.{digits}g} [{value.low:.{digits}g}, {value.high:.{digits}g}]"


def _percent(value: Estimate) -> str:
    if math.isnan(value.low) or math.isnan(value.high):
        return f"{100 * value.value:.1f}% (no interval)"
    return f"{100 * value.value:.1f}% [{100 * value.low:.1f}, {100 * value.high:.1f}]"


def _mix(fit: Fit) -> dict[str, float]:
    """The save mix rounded to 4 decimals, summing to 1 exactly (content takes the rest)."""
    title = round(fit.mix["content_and_title"].value, 4)
    unpublish = round(fit.mix["unpublish"].value, 4)
    return {"content": round(1.0 - title - unpublish, 4), "content_and_title": title, "unpublish": unpublish}


def write_config(fit: Fit, path: str | Path, *, command: str = "kbsim fit", seeds: int | None = None,
                 name: str | None = None, replay: bool | None = None) -> WrittenConfig:
    """Write the experiment config of ``fit`` at ``path`` (and, when it replays the log, one
    saves and one questions trace per day in ``<stem>-traces/``), with ``<stem>-popularity.csv``:
    every article's saves and questions. See the module doc for what the config holds;
    ``replay`` forces the choice (True: replay the log even when a synthetic day would do,
    to simulate the log itself; False: the synthetic day whatever the log).

    Raises:
        OSError: the folder cannot be written.
    """
    path = Path(path)
    folder, stem = path.parent, path.stem
    log = fit.log
    reasons = tuple(fit.replay_reasons())
    replay = bool(reasons) if replay is None else replay
    ids = article_order(fit)
    first, end = fit.window
    day_hours = float(end - first)
    window_starts = [start.replace(hour=first).timestamp() for start in log.day_starts]
    origin = log.day_starts[0].timestamp()
    questions = "questions" in fit.popularity
    popularity = fit.popularity["questions" if questions else "saves"]
    day_start = _window_start(log, 0, first)

    lines = [
        f"# Written by {command}",
        f"# (kbsim {__version__}) from {len(log.saves):,} saves"
        + (f" and {len(log.questions):,} questions" if log.questions is not None else "")
        + f" over {log.days} day{'s' if log.days != 1 else ''}, {log.dates[0]} to {log.dates[-1]} ({log.timezone}).",
        "# Every value says where it came from: an estimate over the log's days with its 95% interval",
        "# (kbsim fit prints how each was made), or an assumption.",
    ]
    if replay and not reasons:
        lines += ["#", "# The log is Poisson-like, but this config replays it as asked (each scenario one day of it)."]
    elif replay:
        lines += ["#", "# The analytic model's Poisson day does not stand for this log:"]
        lines += [f"#   - {reason}" for reason in reasons]
        lines += [
            "# so each scenario below replays one day of the log as traces (docs/fit.md says why replay and not",
            "# a model of sessions). The numbers in params are what the analytic model and kbsim serve --live use.",
        ]
    elif reasons:
        lines += ["#", "# The synthetic day of the fitted numbers, as asked, though it does not stand for this log:"]
        lines += [f"#   - {reason}" for reason in reasons]
    else:
        lines += ["#", "# The log is Poisson-like (no bursts, a flat profile, a Zipf law that fits): the config is the",
                  "# synthetic day of the fitted numbers."]
    name = name or stem
    source_name = Path(log.origin.get("saves") or "the log").name
    lines += [f"name: {json.dumps(name)}",
              f"description: {json.dumps('The day kbsim fit fitted from ' + source_name)}",
              "params:"]
    if log.corpus_source is not None:
        lines.append(f"  corpus: {{source: {json.dumps(log.corpus_source)}}}   # --corpus: {log.n_articles:,} articles")
    else:
        lines.append(f"  corpus: {{articles: {log.n_articles}}}   # {log.n_source.split(' (')[0]}")
        lines.append("  ranking: by_id   # art-000001 is the log's most asked (else most saved) article, and so on")
    lines.append(f"  day_hours: {day_hours:g}   # the log's active hours: {first:02d}:00 to {end:02d}:00 local time")
    lines.append(f"  day_start: {json.dumps(day_start)}   # the first day's {first:02d}:00")
    lines.append("  arrivals: poisson   # the analytic model's arrivals" + ("; the traces replay the log's own"
                                                                           if replay else ""))
    zipf = popularity.exponent
    lines.append(f"  zipf_s: {round(zipf.value, 4)!r}   # {popularity.what}' Zipf exponent {_interval(zipf)}, "
                 f"{_short_method(popularity)}; goodness of fit p = {popularity.gof.p_value:.3g}")
    if questions:
        other = fit.popularity["saves"]
        lines.append(f"  # (saves' exponent: {_interval(other.exponent)}, {_short_method(other)}; a day takes one "
                     "exponent for both)")
    kinds = fit.day_kinds if fit.day_kinds is not None and fit.day_kinds.found else None
    lines.append("  saves:")
    lines.append(f"    count: {round(fit.saves_per_day.value)}   # saves per day: the log's mean day "
                 f"{_interval(fit.saves_per_day, 4)}, mean over {log.days} days"
                 + (f"; a future day {_interval(fit.saves_future, 4)} (prediction)" if fit.saves_future is not None
                    else "") + ("; both intervals are wide because they pool the kinds of day the scenarios below split"
                                                if kinds is not None else ""))
    if fit.rank_correlation is not None and not math.isnan(fit.rank_correlation.value):
        lines.append(f"    rank_correlation: {round(fit.rank_correlation.value, 3)!r}   # saves to questions, "
                     f"{_interval(fit.rank_correlation)}, as kbsim's copula gives it on average")
    elif not questions:
        lines.append("    # rank_correlation: no questions log, so the saves' ranking is the questions' too (1)")
    mix = _mix(fit)
    lines.append("    mix:   # shares of saves by kind, over the log's days")
    for kind in SAVE_KINDS:
        lines.append(f"      {kind}: {mix[kind]!r}   # {_percent(fit.mix[kind])}")
    lines.append("  questions:")
    if fit.questions_per_day is not None:
        lines.append(f"    count: {round(fit.questions_per_day.value)}   # questions per day: the log's mean day "
                     f"{_interval(fit.questions_per_day, 4)}, mean over {log.days} days")
    else:
        lines.append("    count: 120   # no questions log: the reference day's 120 questions")

    traces: list[Path] = []
    dropped = 0
    if replay:
        seeds = REPLAY_SEEDS if seeds is None else seeds
        lines.append(f"seeds: {seeds}   # simulated days per day of the log: only the text people write and the "
                     "agent's choices differ between them")
        trace_folder = folder / f"{stem}-traces"
        trace_folder.mkdir(parents=True, exist_ok=True)
        lines.append("scenarios:   # one per day of the log, its saves and questions replayed"
                     + ("; each named by its kind of day, then its date" if kinds is not None else ""))
        for d, date in enumerate(log.dates):
            saves_path = trace_folder / f"saves-{date.isoformat()}.csv"
            dropped += _write_saves(saves_path, log.saves, d, window_starts[d] - origin, day_hours, ids, log.articles)
            traces.append(saves_path)
            entry = {"day_start": _window_start(log, d, first),
                     "saves.trace": f"{trace_folder.name}/{saves_path.name}"}
            if log.questions is not None:
                questions_path = trace_folder / f"questions-{date.isoformat()}.csv"
                _write_questions(questions_path, log.questions, d, window_starts[d] - origin, day_hours, ids,
                                 log.articles)
                traces.append(questions_path)
                entry["questions.trace"] = f"{trace_folder.name}/{questions_path.name}"
            body = ", ".join(f"{key}: {json.dumps(value)}" for key, value in entry.items())
            kind = "day" if kinds is None else (kinds.kind_of_day(d) or "day")
            lines.append(f"  {kind}-{date.isoformat()}: {{{body}}}")
        if dropped:
            lines.append(f"# ({dropped} saves of an article after it was unpublished that day are left out of the "
                         "traces: a day cannot save an unpublished article)")
    else:
        seeds = SYNTHETIC_SEEDS if seeds is None else seeds
        lines.append(f"seeds: {seeds}   # simulated days of the fitted day"
                     + (" (of each kind of day)" if kinds is not None else ""))
        if kinds is not None:
            lines += _kind_scenarios(fit)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, "\n".join(lines) + "\n")
    table = fit.empirical_popularity()
    kbsim_id = dict(zip(log.articles, ids, strict=True))
    table.insert(0, "article_id", table["article"].map(kbsim_id))
    table = table.rename(columns={"article": "log_article"})
    popularity_path = folder / f"{stem}-popularity.csv"
    atomic_write_text(popularity_path, table.to_csv(index=False))
    return WrittenConfig(path, replay, reasons, tuple(traces), popularity_path, dropped, len(log.saves))


def _kind_scenarios(fit: Fit) -> list[str]:
    """One scenario per kind of day: its saves (and questions) on its mean day, with both intervals."""
    kinds = fit.day_kinds
    assert kinds is not None
    lines = [f"# Kinds of day: {kinds.reason}.",
             "# Each scenario is one kind: its count is the mean day of that kind in the log (interval: where that",
             "# mean lies); 'future' is where one more such day's count will fall (prediction interval).",
             "scenarios:   # one per kind of day"]
    for kind in kinds.kinds:
        entry = {"saves.count": round(kind.saves_per_day.value)}
        if kind.questions_per_day is not None:
            entry["questions.count"] = round(kind.questions_per_day.value)
        body = ", ".join(f"{key}: {value}" for key, value in entry.items())
        lines.append(f"  {kind.name}: {{{body}}}   # {kind.description}; {len(kind.days)} "
                     f"day{'s' if len(kind.days) != 1 else ''}; saves: mean day {_interval(kind.saves_per_day, 4)}, "
                     f"future {_interval(kind.saves_future, 4)}")
    return lines


def _short_method(popularity) -> str:
    return ("cross-day moment (the saves are bursty)" if popularity.chosen == "moment"
            else "maximum likelihood over ranks")


def _window_start(log, day: int, first_hour: int) -> str:
    start = log.day_starts[day]
    moment = start.replace(hour=first_hour)
    return moment.isoformat()


def _write_saves(path: Path, saves: Activity, day: int, start_s: float, day_hours: float, ids: list[str],
                 names: tuple[str, ...]) -> int:
    """One day's saves as a trace (times from the day's window start); returns how many saves of
    an already unpublished article were left out."""
    assert saves.kind is not None  # saves have kinds (questions do not)
    mine = np.flatnonzero(saves.day == day)
    gone: set[int] = set()
    dropped = 0
    handle = io.StringIO(newline="")
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(("time", "article", "kind", "log_article"))
    for i in mine.tolist():
        article = int(saves.article[i])
        if article in gone:
            dropped += 1
            continue
        kind = SAVE_KINDS[int(saves.kind[i])]
        if kind == "unpublish":
            gone.add(article)
        time_s = min(max(0.0, float(saves.time_s[i]) - start_s), day_hours * 3600.0)
        writer.writerow((f"{time_s:.6f}", ids[article], kind, names[article]))
    atomic_write_text(path, handle.getvalue())
    return dropped


def _write_questions(path: Path, questions: Activity, day: int, start_s: float, day_hours: float, ids: list[str],
                     names: tuple[str, ...]) -> None:
    mine = np.flatnonzero(questions.day == day)
    handle = io.StringIO(newline="")
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(("time", "article", "log_article"))
    for i in mine.tolist():
        article = int(questions.article[i])
        time_s = min(max(0.0, float(questions.time_s[i]) - start_s), day_hours * 3600.0)
        writer.writerow((f"{time_s:.6f}", ids[article], names[article]))
    atomic_write_text(path, handle.getvalue())
