"""Sources of a day's activity: when people save and ask, and (when known) what.

A source is a callable ``source(day) -> iterable of arrivals``. The day's
actors take whatever their source yields, so synthetic arrivals and a
replayed log are interchangeable parts of a :class:`~kbsim.sim.world.Day`:

- :func:`synthetic_saves` and :func:`synthetic_questions`: the model's
  arrivals (uniform times or a Poisson number of them, the save mix), with
  targets left to the day's popularity;
- :class:`ReplayedSaves` and :class:`ReplayedQuestions` (in
  :mod:`kbsim.sim.replay`): the rows of a trace, each naming its article,
  at exactly the recorded times.

What an arrival leaves open (``None``) is decided when it happens, from the
day's own random streams: the article by popularity among the published
ones, the text of a save by the day's corpus, a question's query from its
article's title.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kbsim.params import DayParams

if TYPE_CHECKING:
    from kbsim.sim.world import Day

SAVE_KINDS = ("content", "content_and_title", "unpublish")


@dataclass(frozen=True, slots=True)
class SaveArrival:
    """A person's save: when, what kind, and what is known in advance of it.

    ``exact``: the save happens at ``time_s`` to the last bit (a replayed
    time); otherwise after ``time_s - now`` simulated seconds, as the model
    always scheduled it.
    """

    time_s: float
    kind: str  # one of SAVE_KINDS
    article_id: str | None = None  # None: drawn by save popularity when it happens
    content: str | None = None  # None: written by the day's corpus
    content_length: int | None = None  # with no content: the written text cut or repeated to this length
    title: str | None = None  # content_and_title only; None: the day's corpus retitles
    exact: bool = False


@dataclass(frozen=True, slots=True)
class QuestionArrival:
    """A person's question: when, and what it is about or asks (``None``: drawn)."""

    time_s: float
    article_id: str | None = None  # the article asked about; None: drawn by question popularity
    query: str | None = None  # None: words of the article's title
    exact: bool = False


SaveSource = Callable[["Day"], Iterable[SaveArrival]]
QuestionSource = Callable[["Day"], Iterable[QuestionArrival]]


def delay_until(now: float, arrival: SaveArrival | QuestionArrival) -> float:
    """The timeout that brings a process from ``now`` to the arrival.

    An exact arrival fires at ``time_s`` itself: ``now + (time_s - now)`` can
    miss it by a rounding step, so the delay is nudged until it does not.
    """
    delay = arrival.time_s - now
    if not arrival.exact:
        return delay
    for _ in range(64):
        landed = now + delay
        if landed == arrival.time_s:
            break
        delay = math.nextafter(delay, math.inf if landed < arrival.time_s else -math.inf)
    return delay


def arrival_times(rng: np.random.Generator, count: int, day_s: float, model: str) -> np.ndarray:
    """``count`` uniform times in the day, or a Poisson process with that mean count."""
    if model == "uniform":
        return np.sort(rng.uniform(0.0, day_s, size=count))
    n = rng.poisson(count)
    return np.sort(rng.uniform(0.0, day_s, size=n))


def save_shares(params: DayParams) -> list[float]:
    """The shares of people's save kinds: content, content and title, unpublish."""
    mix = params.saves.mix
    return [mix.content, mix.content_and_title, mix.unpublish]


def day_save_arrivals(
    params: DayParams, rng: np.random.Generator, offset_s: float = 0.0
) -> Iterator[SaveArrival]:
    """One day of people's saves (times and kinds from ``rng``), times shifted by ``offset_s``."""
    times = arrival_times(rng, params.saves.count, params.day_s, params.arrivals)
    kinds = rng.choice(len(SAVE_KINDS), size=len(times), p=save_shares(params))
    for time_s, kind in zip(times, kinds, strict=True):
        yield SaveArrival(offset_s + float(time_s), SAVE_KINDS[kind])


def tail_saves(day: Day, after_s: float, per_s: float) -> Iterator[SaveArrival]:
    """Poisson saves at ``per_s`` a second from ``after_s`` on, for as long as they are asked
    for (edits running past the end of the day), times and kinds from the ``tail`` stream."""
    if per_s <= 0:
        return
    tail = day.streams["tail"]
    shares = save_shares(day.params)
    time_s = after_s
    while True:
        time_s += float(tail.exponential(1.0 / per_s))
        yield SaveArrival(time_s, SAVE_KINDS[int(tail.choice(len(SAVE_KINDS), p=shares))])


def synthetic_saves(day: Day) -> Iterator[SaveArrival]:
    """The model's saves: the day's (``editors`` stream), then, only when edits run past the
    day, Poisson saves at the day's rate until the last edit is done."""
    params = day.params
    yield from day_save_arrivals(params, day.streams["editors"])
    if params.edit.enabled and params.saves.count > 0:
        yield from tail_saves(day, params.day_s, params.saves.count / params.day_s)


def repeating_saves(day: Day) -> Iterator[SaveArrival]:
    """The model's saves day after day from ``day.env.now`` (``kbsim serve --live``): each day
    has the configured count, arrival model and mix; the first is exactly the simulated day's."""
    params = day.params
    if params.saves.count == 0:
        return
    start_s = day.env.now
    day_index = 0
    while True:
        yield from day_save_arrivals(params, day.streams["editors"], start_s + day_index * params.day_s)
        day_index += 1


def synthetic_questions(day: Day) -> Iterator[QuestionArrival]:
    """The model's questions: ``questions.count`` times from the ``askers`` stream."""
    params = day.params
    times = arrival_times(day.streams["askers"], params.questions.count, params.day_s, params.arrivals)
    return (QuestionArrival(time_s) for time_s in times.tolist())
