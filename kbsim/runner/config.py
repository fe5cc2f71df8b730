"""The experiment model: a validated config, the grid of runs it names, and their ids.

An :class:`ExperimentConfig` sets day parameters, lists seeds and scenarios, and
declares a sweep (the product of listed values, Mesa batch-runner style); it is read
from YAML and checked by :mod:`kbsim.runner.load` against the keys
:mod:`kbsim.runner.config_keys` declares, so a misspelled key fails at once with a
:class:`ConfigError` naming the file, the key path and what was expected. This
module knows nothing of files: it expands a config into runs
(:meth:`ExperimentConfig.runs`), and gives every run an id that hashes its
parameters, its seed and the digests of the input files it reads, so a rerun finds
the runs already done.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, PrivateAttr, field_validator

from kbsim.inputs import load_corpus
from kbsim.inputs.resolve import refuse_crowded_titles
from kbsim.params import INPUT_PATHS, DayParams
from kbsim.runner import limits
from kbsim.runner.errors import MAX_REPORTED, ConfigError, ConfigErrors, all_errors
from kbsim.runner.grid import DEFAULT_SCENARIOS, DEFAULT_SEEDS, expand_sweep
from kbsim.runner.reading import deep_merge

if TYPE_CHECKING:
    from kbsim.stats.summary import ContrastSpec

# kbsim.sim.replay and kbsim.stats.summary (pandas, SimPy) are imported where a config needs
# them, so that listing the shipped experiments (kbsim experiments) does not load them.

__all__ = [
    "MAX_REPORTED",
    "ConfigError",
    "ConfigErrors",
    "TooLargeError",
    "ExperimentConfig",
    "Point",
    "RunSpec",
    "canonical_json",
    "all_errors",
    "contrast_spec",
    "deep_merge",
    "expand_sweep",
]

#: One scenario at one sweep point: ``(scenario, swept parameter -> value, its DayParams)``.
Point = tuple[str, dict[str, Any], DayParams]


class TooLargeError(ConfigError):
    """An experiment above :mod:`kbsim.runner.limits`' confirmation thresholds, run without ``yes``."""


# --------------------------------------------------------------- nested mappings


def set_nested(target: dict, parts: list[str], value: Any) -> None:
    """Set ``target[parts[0]][parts[1]]... = value``, making (or replacing) mappings on the way."""
    for part in parts[:-1]:
        child = target.get(part)
        if not isinstance(child, dict):
            child = target[part] = {}
        target = child
    target[parts[-1]] = value


def get_dotted(params: BaseModel, dotted: str) -> Any:
    """The value of a dotted parameter (``edit.delay_s``) of validated parameters."""
    value: Any = params
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def with_point(base: dict, point: dict[str, Any]) -> dict:
    """A deep copy of nested overrides with each dotted sweep value set."""
    nested = copy.deepcopy(base)
    for dotted, value in point.items():
        set_nested(nested, dotted.split("."), value)
    return nested


# -------------------------------------------------------------------- sweep grid


def iter_points(config: ExperimentConfig) -> Iterator[tuple[str, dict[str, Any], dict]]:
    """``(scenario, raw point, nested overrides)``: scenario-major, then the sweep product."""
    for scenario, overrides in config.scenarios.items():
        base = deep_merge(config.params, overrides)
        for point in expand_sweep(config.sweep):
            yield scenario, point, with_point(base, point)


# ----------------------------------------------------------------------- run ids


def canonical_json(obj: Any) -> str:
    """Key-sorted compact JSON: the text hashed into run ids and fingerprints."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def short_hash(obj: Any, length: int = 12) -> str:
    """The first ``length`` hex digits of the SHA-256 of ``obj``'s :func:`canonical_json`."""
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()[:length]


def _sized(params: DayParams) -> DayParams:
    """The day sized to its corpus from files (:meth:`DayParams.sized_to`): the run's params,
    its id and its run.json then hold the counts it runs with."""
    if params.corpus.source is None:
        return params
    loaded = load_corpus(params.corpus.source)
    refuse_crowded_titles(params, loaded)  # before any run, not in every worker
    return params.sized_to(len(loaded))


def _input_digests(params: DayParams) -> dict[str, dict[str, str]]:
    """What a run id adds for the input files a day reads: nothing for a synthetic day."""
    if all(get_dotted(params, dotted) is None for dotted in INPUT_PATHS):
        return {}
    from kbsim.sim.replay import input_digests

    return {"inputs": input_digests(params)}


# --------------------------------------------------------------------- the model


@dataclass(frozen=True)
class RunSpec:
    """One simulated day to run: a scenario at a sweep point with one seed."""

    run_id: str
    scenario: str
    point: dict[str, Any]  # swept parameter (dotted) -> validated value
    seed: int
    params: DayParams


def contrast_spec(item: dict) -> ContrastSpec:
    """One entry of a config's ``contrasts`` as the :class:`kbsim.stats.ContrastSpec` it declares.

    Raises:
        ValueError: a metric, time or strategy :mod:`kbsim.stats` does not know.
    """
    from kbsim.stats.summary import ContrastSpec, MetricSelector

    selector = MetricSelector(
        item["metric"], at=item.get("at"), strategy=item.get("strategy", ""), subset=item.get("subset", "")
    )
    return ContrastSpec(
        selector, dict(item["baseline"]), dict(item.get("where") or {}), item.get("compare", "difference")
    )


class ExperimentConfig(BaseModel):
    """A validated experiment: build it with :func:`kbsim.runner.load.load_config` (or
    directly in a notebook).

    Its fields are the top-level keys of a config file (but ``extends``, which is resolved
    when the file is read, and ``source``, the file it came from); how the loader reads,
    inherits, overrides and checks each is declared once in :data:`kbsim.runner.config_keys.KEYS`.
    """

    model_config = {"extra": "forbid", "frozen": True}
    #: What the loader found worth saying that is not an error (which shipped experiment an
    #: ``extends: NAME`` used); not part of the config, its runs or its fingerprint.
    _notes: list[str] = PrivateAttr(default_factory=list)

    @property
    def notes(self) -> list[str]:
        """The loader's notes on this config (``kbsim run`` prints them)."""
        return self._notes

    name: str
    description: str = ""
    params: dict[str, Any] = {}
    seeds: list[int] = list(DEFAULT_SEEDS)
    scenarios: dict[str, dict[str, Any]] = {name: {} for name in DEFAULT_SCENARIOS}
    sweep: dict[str, Any] = {}
    contrasts: list[dict[str, Any]] = []
    source: str | None = None

    @field_validator("seeds")
    @classmethod
    def _seeds_fit_int64(cls, seeds: list[int]) -> list[int]:
        for seed in seeds:
            if not 0 <= seed <= limits.MAX_SEED:
                raise ValueError(f"seed {seed}: expected 0 <= seed < 2**63 (seeds are stored as int64)")
        return seeds

    @property
    def swept(self) -> list[str]:
        """The swept parameters' dotted names, in sweep order (the tables' extra columns)."""
        return list(self.sweep)

    def points(self) -> list[Point]:
        """``(scenario, sweep point, params)`` for every scenario x point, in run order."""
        out = []
        for scenario, point, nested in iter_points(self):
            params = DayParams.model_validate(nested, strict=True)
            validated = {dotted: get_dotted(params, dotted) for dotted in point}
            out.append((scenario, validated, params))
        return out

    def runs(self, points: list[Point] | None = None) -> list[RunSpec]:
        """Every run, scenario-major, then sweep point, then seed.

        Args:
            points: this config's :meth:`points`, when the caller has them already.
        """
        specs = []
        for scenario, point, params in self.points() if points is None else points:
            inputs = _input_digests(params)  # {} for a synthetic day: its run ids are as they were
            params = _sized(params)  # a corpus from files: counts not given are per article
            dumped = params.model_dump(mode="json")
            for seed in self.seeds:
                run_id = short_hash({"params": dumped, "seed": seed, **inputs})
                specs.append(RunSpec(run_id, scenario, point, seed, params))
        return specs

    def contrast_specs(self) -> list[ContrastSpec]:
        """The declared contrasts as :class:`kbsim.stats.ContrastSpec` (validated at load)."""
        return [contrast_spec(item) for item in self.contrasts]

    def estimate(self, points: list[Point] | None = None) -> limits.ExperimentEstimate:
        """How big running this config is (runs, CPU, disk, memory per run), without listing its runs.

        Args:
            points: this config's :meth:`points`, when the caller has them already.
        """
        points = self.points() if points is None else points
        return limits.estimate_experiment([params for _, _, params in points], len(self.seeds))

    def fingerprint(self, runs: list[RunSpec] | None = None) -> str:
        """A hash of what the config runs (not of its wording): same runs, same fingerprint.

        Args:
            runs: this config's :meth:`runs`, when the caller has them already.
        """
        listed = [(r.scenario, r.point, r.seed, r.run_id) for r in (self.runs() if runs is None else runs)]
        return short_hash({"name": self.name, "runs": listed}, length=16)
