"""Logs from known days: the process ``validation/fit.py`` fits to see what the fit recovers,
and that made the example log kbsim ships (``examples/helpdesk-log/``).

A :class:`KnownDays` is a knowledge base of ``articles`` with a fixed popularity: a
Zipf law of exponent ``zipf_s`` over a seeded ranking for questions, and over a second
ranking drawn from kbsim's own copula (:func:`kbsim.sim.popularity.correlated_ranking`,
correlation ``rank_correlation``) for saves; the same rankings every day, as a real
knowledge base keeps its popular articles. Each day, independently:

- people start a Poisson number of **sessions** (mean ``saves_per_day / session_saves``),
  each at a time drawn from the hourly ``profile`` over ``hours`` and on an article drawn
  by save popularity; a session is 1 + a geometric number of saves of that article
  (mean ``session_saves``; 1 is Poisson saves), ``session_gap_s`` apart on average
  (exponential gaps), each of a kind drawn from ``mix``;
- a Poisson number of questions (mean ``questions_per_day``) arrive at times drawn
  from the same profile, each about an article drawn by question popularity.

With ``unpublish_ends_day`` an article gets no save after one unpublished it that day
(the knowledge base republishes it overnight), as a trace must be to replay.
Everything comes from ``numpy.random.SeedSequence(seed)``: the same seed, the same log.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import numpy as np

from kbsim.files import atomic_write_text
from kbsim.fit.logs import SAVE_KINDS, Activity, Log, RawEvent, build_log
from kbsim.sim.popularity import correlated_ranking

__all__ = [
    "EXAMPLE",
    "EXAMPLE_SEED",
    "KnownDays",
    "generate_events",
    "generate_log",
    "popularities",
    "realized_truth",
    "write_example_log",
]


@dataclass(frozen=True)
class KnownDays:
    """The parameters of a generated log (see the module doc); every one is a truth a fit
    should recover."""

    articles: int = 400
    days: int = 5
    saves_per_day: float = 300.0
    questions_per_day: float = 120.0
    zipf_s: float = 0.9
    #: ``q`` of a Zipf-Mandelbrot law, weights ``(rank + q)^-s``: 0 is Zipf's law itself; a
    #: positive ``q`` flattens the head (what the goodness-of-fit test should notice)
    zipf_offset: float = 0.0
    rank_correlation: float = 1.0
    mix: tuple[float, float, float] = (0.85, 0.10, 0.05)
    hours: tuple[int, int] = (9, 17)
    profile: tuple[float, ...] | None = None
    session_saves: float = 1.0
    session_gap_s: float = 90.0
    first_date: date = date(2025, 3, 10)
    weekdays_only: bool = True
    utc_offset_minutes: int = 60
    unpublish_ends_day: bool = False
    #: Saturdays and Sundays (with ``weekdays_only`` False) have this many times a weekday's saves and questions
    weekend_rate: float = 1.0
    #: the days (indices into :meth:`dates`) that are peak days, with ``peak_rate`` times the saves
    peak_days: tuple[int, ...] = ()
    peak_rate: float = 1.0

    def __post_init__(self) -> None:
        first, end = self.hours
        if not 0 <= first < end <= 24:
            raise ValueError(f"hours: expected 0 <= first < end <= 24, got {self.hours}")
        if self.profile is not None and len(self.profile) != end - first:
            raise ValueError(f"profile: expected {end - first} hourly weights for hours {self.hours}, "
                             f"got {len(self.profile)}")
        if self.session_saves < 1:
            raise ValueError(f"session_saves: expected at least 1, got {self.session_saves}")
        if abs(sum(self.mix) - 1) > 1e-9:
            raise ValueError(f"mix: shares must sum to 1, got {self.mix}")

    @property
    def hour_weights(self) -> np.ndarray:
        """The share of each active hour's arrivals (sums to 1)."""
        first, end = self.hours
        weights = np.ones(end - first) if self.profile is None else np.asarray(self.profile, dtype=float)
        return weights / weights.sum()

    def day_rates(self) -> np.ndarray:
        """Each day's multiple of ``saves_per_day`` (and, but for peak days, ``questions_per_day``)."""
        rates = np.array([self.weekend_rate if d.weekday() >= 5 else 1.0 for d in self.dates()])
        for day in self.peak_days:
            rates[day] *= self.peak_rate
        return rates

    def day_kind(self) -> list[str]:
        """The kind of each generated day: ``peak``, ``weekend`` (when its rate differs) or ``weekday``."""
        kinds = []
        for d, day in enumerate(self.dates()):
            if d in self.peak_days and self.peak_rate != 1.0:
                kinds.append("peak")
            elif day.weekday() >= 5 and self.weekend_rate != 1.0:
                kinds.append("weekend")
            else:
                kinds.append("weekday")
        return kinds

    def dates(self) -> list[date]:
        """The calendar dates of the generated days, in order."""
        out: list[date] = []
        day = self.first_date
        while len(out) < self.days:
            if not (self.weekdays_only and day.weekday() >= 5):
                out.append(day)
            day += timedelta(days=1)
        return out

    def truth(self) -> dict[str, float]:
        """The parameters a fit estimates, by the name validation/fit.py reports them under."""
        truth = {
            "saves_per_day": self.saves_per_day,
            "questions_per_day": self.questions_per_day,
            "zipf_saves": self.zipf_s,
            "zipf_questions": self.zipf_s,
            "rank_correlation": self.rank_correlation,
        }
        truth.update({f"mix_{kind}": share for kind, share in zip(SAVE_KINDS, self.mix, strict=True)})
        return truth


def _zipf(n: int, s: float, offset: float = 0.0) -> np.ndarray:
    weights = (np.arange(1, n + 1, dtype=float) + offset) ** -s
    return weights / weights.sum()


@dataclass(frozen=True)
class _Draws:
    """A generated log as arrays (days in order, times in seconds since the first day's midnight)."""

    saves: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # day, seconds of day, article, kind
    questions: tuple[np.ndarray, np.ndarray, np.ndarray]  # day, seconds of day, article


def _streams(seed: int) -> dict[str, np.random.Generator]:
    children = np.random.SeedSequence(seed).spawn(3)
    return {name: np.random.default_rng(child) for name, child in zip(("ranking", "saves", "questions"), children,
                                                                       strict=True)}


def popularities(known: KnownDays, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(question popularity, save popularity)`` of each article in ``known``'s log for ``seed``."""
    n, rng = known.articles, _streams(seed)["ranking"]
    question_ranking = rng.permutation(n)
    save_ranking = correlated_ranking(question_ranking, known.rank_correlation, rng)
    weights = _zipf(n, known.zipf_s, known.zipf_offset)
    p_question, p_save = np.empty(n), np.empty(n)
    p_question[question_ranking] = weights
    p_save[save_ranking] = weights
    return p_question, p_save


def realized_truth(known: KnownDays, seed: int) -> dict[str, float]:
    """:meth:`KnownDays.truth` with the rank correlation this seed's knowledge base realises: the
    copula correlation at which kbsim's day gives, on average, the overlap of its two drawn
    popularities (what :func:`kbsim.fit.popularity.rank_correlation` estimates)."""
    from kbsim.fit.popularity import rank_correlation

    p_question, p_save = popularities(known, seed)
    truth = known.truth()
    truth["rank_correlation"] = rank_correlation(float(np.dot(p_question, p_save)), known.articles, known.zipf_s,
                                                 known.zipf_s)
    return truth


def _draw(known: KnownDays, seed: int) -> _Draws:
    n = known.articles
    rng = _streams(seed)
    p_question, p_save = popularities(known, seed)
    first, _ = known.hours
    hour_weights = known.hour_weights

    def times(generator: np.random.Generator, count: int) -> np.ndarray:
        hours = generator.choice(len(hour_weights), size=count, p=hour_weights)
        return (first + hours + generator.random(count)) * 3600.0

    save_parts, question_parts = [], []
    day_rates = known.day_rates()
    weekend = np.array([day.weekday() >= 5 for day in known.dates()])
    for d in range(known.days):
        g = rng["saves"]
        sessions = g.poisson(day_rates[d] * known.saves_per_day / known.session_saves)
        start = times(g, sessions)
        article = g.choice(n, size=sessions, p=p_save)
        size = g.geometric(1.0 / known.session_saves, size=sessions) if known.session_saves > 1 else np.ones(
            sessions, dtype=int)
        owner = np.repeat(np.arange(sessions), size)
        firsts = np.cumsum(size) - size  # where each session's first save is
        gaps = g.exponential(known.session_gap_s, size=int(size.sum()))
        gaps[firsts] = 0.0
        elapsed = np.cumsum(gaps)
        offsets = elapsed - np.repeat(elapsed[firsts], size)
        seconds = start[owner] + offsets
        saved = article[owner]
        kinds = g.choice(len(SAVE_KINDS), size=len(seconds), p=np.asarray(known.mix))
        keep = seconds < 86_400.0
        order = np.argsort(seconds[keep], kind="stable")
        seconds, saved, kinds = seconds[keep][order], saved[keep][order], kinds[keep][order]
        if known.unpublish_ends_day:
            keep = np.ones(len(seconds), dtype=bool)
            gone: set[int] = set()
            for i, (a, k) in enumerate(zip(saved.tolist(), kinds.tolist(), strict=True)):
                if a in gone:
                    keep[i] = False
                elif SAVE_KINDS[k] == "unpublish":
                    gone.add(a)
            seconds, saved, kinds = seconds[keep], saved[keep], kinds[keep]
        save_parts.append((np.full(len(seconds), d), seconds, saved, kinds))
        q = rng["questions"]
        count = q.poisson(known.questions_per_day * (known.weekend_rate if weekend[d] else 1.0))
        asked = np.sort(times(q, count))
        question_parts.append((np.full(count, d), asked, q.choice(n, size=count, p=p_question)))
    save_day, save_seconds, save_article, save_kind = (np.concatenate([part[i] for part in save_parts])
                                                       for i in range(4))
    asked_day, asked_seconds, asked_article = (np.concatenate([part[i] for part in question_parts])
                                               for i in range(3))
    return _Draws((save_day, save_seconds, save_article, save_kind), (asked_day, asked_seconds, asked_article))


def _names(n: int) -> list[str]:
    return [f"art-{i:06d}" for i in range(1, n + 1)]


def generate_log(known: KnownDays, seed: int) -> Log:
    """The log of ``known`` for ``seed``, in memory (articles named ``art-000001``, ...): what
    :func:`generate_events` would give read back, without the files and the parsing."""
    draws = _draw(known, seed)
    dates = known.dates()
    zone = timezone(timedelta(minutes=known.utc_offset_minutes))
    day_starts = tuple(datetime(d.year, d.month, d.day, tzinfo=zone) for d in dates)
    offsets = np.array([(start - day_starts[0]).total_seconds() for start in day_starts])
    s_day, s_sec, s_art, s_kind = draws.saves
    q_day, q_sec, q_art = draws.questions
    # articles indexed in the order the log first names them, saves first, as build_log does
    every = np.concatenate([s_art[np.argsort(offsets[s_day] + s_sec, kind="stable")], q_art])
    _, first_seen = np.unique(every, return_index=True)
    named = every[np.sort(first_seen)]
    index = np.full(known.articles, -1)
    index[named] = np.arange(len(named))

    def activity(day, seconds, article, kind, source):
        order = np.argsort(offsets[day] + seconds, kind="stable")
        day, seconds, article = day[order], seconds[order], article[order]
        return Activity(offsets[day] + seconds, day.astype(int), seconds / 3600.0, index[article].astype(int),
                        None if kind is None else kind[order].astype(int), np.arange(len(order)) + 2, source)

    names = _names(known.articles)
    return Log(tuple(dates), day_starts, tuple(names[i] for i in named), known.articles,
               activity(s_day, s_sec, s_art, s_kind, "saves"), activity(q_day, q_sec, q_art, None, "questions"),
               (), "the generator's articles", str(zone), None, {"saves": "generated", "questions": "generated"})


def generate_events(known: KnownDays, seed: int, names: list[str] | None = None
                    ) -> tuple[list[RawEvent], list[RawEvent]]:
    """The rows of ``known``'s log for ``seed`` (saves, questions), each with its local time in
    the known UTC offset, articles named by ``names`` (default ``art-000001``, ...)."""
    draws = _draw(known, seed)
    names = _names(known.articles) if names is None else list(names)
    if len(names) != known.articles:
        raise ValueError(f"names: expected {known.articles} article names, got {len(names)}")
    zone = timezone(timedelta(minutes=known.utc_offset_minutes))
    dates = known.dates()

    def rows(day, seconds, article, kind) -> list[RawEvent]:
        out = []
        for i, (d, t, a) in enumerate(zip(day.tolist(), seconds.tolist(), article.tolist(), strict=True)):
            local = datetime(dates[d].year, dates[d].month, dates[d].day) + timedelta(seconds=round(t))
            out.append(RawEvent(local.replace(tzinfo=zone), local, names[a],
                                None if kind is None else SAVE_KINDS[int(kind[i])], i + 2))
        return out

    return rows(*draws.saves), rows(*draws.questions, None)


def generated_log_from_events(known: KnownDays, seed: int) -> Log:
    """:func:`generate_events` through :func:`kbsim.fit.logs.build_log` (the path a file takes)."""
    saves, questions = generate_events(known, seed)
    zone = timezone(timedelta(minutes=known.utc_offset_minutes))
    return build_log(saves, questions, articles=known.articles, tz=zone)


# -- the shipped example --------------------------------------------------------------------------

#: The example log kbsim ships (``examples/helpdesk-log/``): two working weeks of the sample
#: help desk (``kbsim:sample``, 400 articles) in Central European Time, office hours 08:00 to
#: 18:00 with a morning peak and a lunch dip, saves in sessions of 2.5 on average (people
#: save an article several times while they fix it), and what people edit following what
#: others ask about only in part (rank correlation 0.6).
EXAMPLE = KnownDays(
    articles=400,
    days=10,
    saves_per_day=260.0,
    questions_per_day=150.0,
    zipf_s=1.0,
    rank_correlation=0.6,
    mix=(0.88, 0.10, 0.02),
    hours=(8, 18),
    profile=(0.5, 1.2, 1.5, 1.4, 0.7, 0.9, 1.3, 1.2, 0.9, 0.4),
    session_saves=2.5,
    session_gap_s=80.0,
    first_date=date(2025, 3, 10),
    weekdays_only=True,
    utc_offset_minutes=60,
    unpublish_ends_day=True,
)
EXAMPLE_SEED = 2025


def write_example_log(folder: str | Path) -> tuple[Path, Path]:
    """Write the example log as ``saves.csv`` (time, article, kind) and ``questions.csv`` (time,
    article): ISO 8601 times with their offset, articles by their title in the sample."""
    from kbsim.inputs import load_corpus

    titles = list(load_corpus("kbsim:sample").titles)
    saves, questions = generate_events(EXAMPLE, EXAMPLE_SEED, titles)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = folder / "saves.csv", folder / "questions.csv"
    files = ((paths[0], saves, ("time", "article", "kind")), (paths[1], questions, ("time", "article")))
    for path, rows, header in files:
        handle = io.StringIO()
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            cells = [row.instant.isoformat(), row.article] + ([row.kind] if row.kind is not None else [])
            writer.writerow(cells)
        atomic_write_text(path, handle.getvalue())
    return paths
