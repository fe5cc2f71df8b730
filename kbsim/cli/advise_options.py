"""The values ``kbsim advise`` (and ``kbsim fit``) read from their options: numbers, durations
and shares, each refused with an :class:`~kbsim.model.advise.AdviceError` that names the flag."""

from __future__ import annotations

import math
import re
from typing import Literal, overload

from kbsim.model.advise import AdviceError
from kbsim.units import parse_duration

__all__ = ["duration_option", "number_option", "share_option", "target_and_options"]


@overload
def number_option(text: str, flag: str, integral: Literal[True]) -> int: ...
@overload
def number_option(text: str, flag: str, integral: Literal[False]) -> float: ...


def number_option(text: str, flag: str, integral: bool) -> float:
    """A number from ``text`` (``20,000`` and ``20_000`` too); AdviceError naming ``flag``."""
    cleaned = re.sub(r"[,_]", "", str(text).strip())
    try:
        value = float(cleaned)
    except ValueError:
        kind = "a whole number" if integral else "a number"
        raise AdviceError(flag, f"expected {kind}, got {text!r}") from None
    if not math.isfinite(value):
        raise AdviceError(flag, f"expected a finite number, got {text!r}")
    if integral:
        if value != int(value):
            raise AdviceError(flag, f"expected a whole number, got {text!r}")
        return int(value)
    return value


def duration_option(text: str, flag: str) -> float:
    """Seconds from ``15min``, ``90s``, ``1.5h`` or ``1h30min`` (:func:`kbsim.units.parse_duration`);
    AdviceError naming ``flag``. A bare number is refused: nothing in a flag such as
    ``--max-latency`` says whether 15 means seconds or minutes."""
    try:
        return parse_duration(text, unit_required=True)
    except ValueError as exc:
        raise AdviceError(flag, str(exc)) from None


def share_option(text: str, flag: str, *, allow_all: bool = False) -> float:
    """A share from ``2%`` or ``0.02``; refuses ``2`` (ambiguous) and anything outside (0, 1)
    (``allow_all``: (0, 1]). AdviceError naming ``flag``."""
    raw = str(text).strip()
    percent = raw.endswith("%")
    try:
        value = float(raw[:-1] if percent else raw)
    except ValueError:
        raise AdviceError(flag, f"expected a share like 2% or 0.02, got {text!r}") from None
    share = value / 100.0 if percent else value
    if not percent and value > 1:
        raise AdviceError(flag, f"expected a share like 2% or 0.02, got {text!r} (write {value:g}% for percent)")
    if not (math.isfinite(share) and 0 < share and (share < 1 or (allow_all and share == 1))):
        raise AdviceError(flag, f"expected a share between 0% and 100%, got {text!r}")
    return share


def target_and_options(args):
    """What ``kbsim advise`` is asked to meet, from its flags, whatever gives the day (its own
    flags, ``--config`` or ``--trace``): the :class:`~kbsim.model.advise.Target` (a latency,
    mean or p90, else a stale exposure) and the options of the advice (cost, the shortest
    interval, the conflict target). AdviceError naming a bad flag."""
    from kbsim.model.advise import Target

    if args.max_latency is not None:
        metric = "detection_latency_s" if args.latency_statistic == "mean" else "detection_latency_p90_s"
        target = Target(metric, duration_option(args.max_latency, "--max-latency"))
    else:
        target = Target("stale_exposure", share_option(args.max_exposure, "--max-exposure"))
    options = {
        "cost": args.cost,
        "min_interval_s": duration_option(args.min_interval, "--min-interval"),
        "max_conflict_rate": share_option(args.max_conflicts, "--max-conflicts"),
    }
    return target, options
