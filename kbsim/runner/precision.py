"""Seeds chosen by precision: add seeds until every named interval is narrow enough.

``kbsim run CONFIG --precision NAME=HALF_WIDTH`` runs the config, then keeps
doubling its seeds (``1..5`` -> ``1..10`` -> ``1..20`` ...; a config's own seed
list is extended with the next integers) until, at every point, each named
metric's 95% interval has a half-width of at most ``HALF_WIDTH``, or
``--max-seeds`` is reached. Each batch is an ordinary run of the experiment,
so results extend (runs already done are reused) and an interrupted search
resumes.

Doubling rather than a fixed batch: the half-width shrinks as ``1/sqrt(seeds)``,
so doubling reaches a target within a factor of two of the seeds it needs in
``log2`` batches, while a fixed batch would either overshoot a small target or
take many batches for a tight one. Stopping as soon as an interval is narrow
enough makes the last interval slightly optimistic; with doubling batches the
effect is small (the coverage file measures fixed seed counts).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from kbsim.runner import limits
from kbsim.runner.config import ConfigError, ExperimentConfig
from kbsim.stats.metrics import METRICS, metric_names

DEFAULT_MAX_SEEDS = 640


@dataclass(frozen=True)
class PrecisionTarget:
    """A metric row by its readable name (``stale_citation_share@end``) and the widest
    95% half-width accepted at every point."""

    name: str
    half_width: float

    @classmethod
    def parse(cls, text: str) -> PrecisionTarget:
        """``NAME=HALF_WIDTH``; a half-width may be a number (0.02) or a percentage (2%)."""
        name, sep, value = text.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise ConfigError("--precision", text, "expected NAME=HALF_WIDTH, e.g. stale_citation_share@end=0.02")
        base = re.split(r"[@\[{]", name, maxsplit=1)[0]
        if base not in METRICS:
            raise ConfigError(
                "--precision", name, f"unknown metric {base!r}; expected one of: {', '.join(METRICS)}"
            )
        try:
            half = float(value[:-1]) / 100 if value.endswith("%") else float(value)
        except ValueError:
            half = math.nan
        if not (math.isfinite(half) and half > 0):
            raise ConfigError("--precision", name, f"expected a positive half-width, got {value!r}")
        return cls(name, half)


def check_targets(config: ExperimentConfig, targets: Iterable[PrecisionTarget], max_seeds: int) -> None:
    """Refuse, before anything runs, a target naming no metric row of this config's days
    (``stale_citation_share@h99`` on an 8-hour day) and a ``max_seeds`` outside 1 to
    :data:`~kbsim.runner.limits.MAX_SEEDS` or below the config's own seeds."""
    if isinstance(max_seeds, bool) or not isinstance(max_seeds, int) or not 1 <= max_seeds <= limits.MAX_SEEDS:
        raise ConfigError("--max-seeds", "", f"expected 1 to {limits.MAX_SEEDS:,} seeds, got {max_seeds!r}")
    if max_seeds < len(config.seeds):
        raise ConfigError(
            "--max-seeds", "", f"expected at least the config's {len(config.seeds)} seeds, got {max_seeds}"
        )
    names = set().union(*(metric_names(params) for params in {params for _, _, params in config.points()}))
    for target in targets:
        if target.name not in names:
            close = difflib.get_close_matches(target.name, sorted(names), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                "--precision",
                target.name,
                f"no such metric in this experiment's summary{hint}; expected one of: {', '.join(sorted(names))}",
            )


@dataclass
class PrecisionResult:
    """What the search did: the seeds run, each point's seeds needed, and the last run."""

    seeds: int
    met: bool
    needed: pd.DataFrame  # keys, name, seeds_needed (NaN: not met), half_width, target
    batches: list[int] = field(default_factory=list)
    result: Any = None  # the last ExperimentResult


def half_widths(summary: pd.DataFrame, target: PrecisionTarget) -> pd.DataFrame:
    """Each point's interval half-width for one target (the larger side of an asymmetric interval)."""
    rows = summary[summary["name"] == target.name]
    if rows.empty:
        names = sorted(summary["name"].unique())
        raise ConfigError(
            "--precision",
            target.name,
            f"no such metric in this experiment's summary; expected one of: {', '.join(names)}",
        )
    half = pd.concat([rows["value"] - rows["ci_low"], rows["ci_high"] - rows["value"]], axis=1).max(axis=1)
    return rows.assign(half_width=half)


def _key(row: tuple, n_keys: int) -> tuple:
    """A point's keys and the metric name, hashable with missing values made comparable."""
    return tuple("<none>" if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in row[: n_keys + 1])


def next_seeds(seeds: list[int], total: int) -> list[int]:
    """The config's seeds, extended with the next unused integers, up to ``total`` of them."""
    out = list(seeds[:total])
    candidate = max(seeds) + 1 if seeds else 1
    while len(out) < total:
        if candidate not in out:
            out.append(candidate)
        candidate += 1
    return out


def run_until_precise(
    config: ExperimentConfig,
    targets: Iterable[PrecisionTarget],
    run: Callable[[ExperimentConfig], Any],
    keys: list[str],
    max_seeds: int = DEFAULT_MAX_SEEDS,
    log: Callable[[str], None] | None = None,
) -> PrecisionResult:
    """Run ``config`` with doubling seeds until every target holds at every point.

    ``run(config)`` runs one batch (the caller's :func:`kbsim.runner.run.run_experiment`
    with its options) and returns its result, whose ``summary`` is read.
    """
    targets = list(targets)
    if not targets:
        raise ValueError("targets: expected at least one --precision target")
    check_targets(config, targets, max_seeds)
    total = len(config.seeds)
    needed: dict[tuple, int] = {}
    batches: list[int] = []
    while True:
        batch = config.model_copy(update={"seeds": next_seeds(config.seeds, total)})
        result = run(batch)
        batches.append(total)
        if not result.ok:
            return PrecisionResult(total, False, pd.DataFrame(), batches, result)
        frames = []
        for target in targets:
            frame = half_widths(result.summary, target)
            frame = frame[[*keys, "name", "value", "half_width"]].assign(target=target.half_width)
            frames.append(frame)
        status = pd.concat(frames, ignore_index=True)
        undefined = status["value"].isna()
        ok = (status["half_width"] <= status["target"]) | undefined
        point_keys = [_key(row, len(keys)) for row in status.itertuples(index=False)]
        for key, met in zip(point_keys, ok, strict=True):
            if met and key not in needed:
                needed[key] = total
        if log:
            widest = status.loc[~undefined].sort_values("half_width", ascending=False)
            if len(widest):
                worst = widest.iloc[0]
                log(
                    f"precision: {total} seeds, {int(ok.sum())} of {len(ok)} targets met; widest "
                    f"{worst['name']} +-{worst['half_width']:.4g} (target {worst['target']:.4g})"
                )
        status["seeds_needed"] = [needed.get(key, math.nan) for key in point_keys]
        status.loc[undefined, "seeds_needed"] = math.nan
        if ok.all():
            return PrecisionResult(total, True, status, batches, result)
        if total >= max_seeds:
            return PrecisionResult(total, False, status, batches, result)
        total = min(2 * total, max_seeds)
