"""An experiment's config and results, loaded for the report: tables, per-run metrics, summary.

:func:`load_experiment` runs what is missing of ``<experiments_dir>/<name>.yaml``
through :func:`kbsim.runner.run.run_experiment` (results are cached under
``<results_dir>/<experiment>/``), then summarises the per-run metrics the
runner stored with :func:`kbsim.stats.summarize`. Quick mode runs a few seeds
and thins every sweep, into ``<results_dir>/quick/``, so that quick and full
results never mix. Every path is passed in (the configs default to the ones kbsim
ships, :data:`kbsim.runner.shipped.SHIPPED_DIR`): nothing here looks for a checkout.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from kbsim.report import frames
from kbsim.runner.config import ExperimentConfig
from kbsim.runner.shipped import SHIPPED_DIR
from kbsim.sim.strategies import Strategy, default_strategies, resolve
from kbsim.stats import summarize

QUICK_SEEDS = 3
QUICK_POINTS = 4
FULL_COMMAND = "kbsim figures"
#: Columns the report adds to per-run metric rows (not run keys; see :func:`load_experiment`).
ANNOTATIONS = ("edits", "edit_delay_s", "save_popularity")


def quick_from_env() -> bool:
    """True when ``KBSIM_QUICK`` is set to a non-empty value other than ``0``."""
    return os.environ.get("KBSIM_QUICK", "") not in ("", "0")


@dataclass
class Experiment:
    """One experiment's config and results: tables, per-run metrics, summary, params per point."""

    name: str
    config: ExperimentConfig
    tables: Mapping[str, pd.DataFrame]  # a kbsim.runner.results.ResultTables: read on first use
    points: pd.DataFrame  # scenario, swept keys, params (DayParams), derived columns
    per_run: pd.DataFrame = field(default_factory=pd.DataFrame)
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    name_is_quick: bool = False

    @property
    def swept(self) -> list[str]:
        """The parameters the experiment sweeps, by dotted name."""
        return list(self.config.swept)

    @property
    def seeds(self) -> int:
        """How many seeds each point runs."""
        return len(self.config.seeds)

    @property
    def strategies(self) -> tuple[Strategy, ...]:
        """The check strategies its days ran (``checks.strategies`` of every point), in order."""
        found: dict[str, Strategy] = {}
        for params in self.points["params"] if "params" in self.points else ():
            for strategy in resolve(params.checks.strategies):
                found.setdefault(strategy.name, strategy)
        return tuple(found.values()) or default_strategies()

    def runs_per_point(self) -> str:
        """The runs behind each point of the experiment's figures, from its config:
        ``"20 seeds of 8-hour days"`` (a range of day lengths when the points differ)."""
        hours = sorted({round(float(s) / 3600.0, 6) for s in self.points["day_s"]})
        days = f"{hours[0]:g}-hour" if len(hours) == 1 else f"{hours[0]:g}- to {hours[-1]:g}-hour"
        return f"{self.seeds} seed{'s' if self.seeds != 1 else ''} of {days} days"

    def caption(self, figure: str, extra: str = "", *, bands: bool = True) -> str:
        """The caption every figure of this experiment opens with: the config (as a clone holds
        it, ``experiments/NAME.yaml``), the runs behind each point and what its bands are
        (``bands=False`` for a figure that draws its intervals as bars, which ``extra`` then
        explains); then ``extra``. It is printed beside the figure (figures/README.md, the
        pages), never in it; figures/README.md gives the command that redraws ``figure``."""
        quick = " (quick mode)" if self.name_is_quick else ""
        text = (
            f"Made by experiments/{self.name}.yaml{quick}: each point {self.runs_per_point()}"
            + (", bands = 95% intervals over seeds" if bands else "")
        )
        return f"{text}. {extra}" if extra else text


def _thin(values: list, keep: int) -> list:
    if not isinstance(values, list) or len(values) <= keep:
        return values
    index = np.unique(np.round(np.linspace(0, len(values) - 1, keep)).astype(int))
    return [values[i] for i in index]


def experiment_config(name: str, experiments_dir: str | Path = SHIPPED_DIR, quick: bool = False):
    """The validated config ``<experiments_dir>/<name>.yaml`` (quick: fewer seeds and points)."""
    from kbsim.runner.load import load_config

    path = Path(experiments_dir) / f"{name}.yaml"
    if not path.exists():
        raise FileNotFoundError(f"experiment config {str(path)!r} does not exist")
    config = load_config(path)
    if quick:
        sweep = {key: _thin(values, QUICK_POINTS) for key, values in config.sweep.items()}
        config = config.model_copy(update={"seeds": list(config.seeds[:QUICK_SEEDS]), "sweep": sweep})
    return config


def _points(config) -> pd.DataFrame:
    rows = []
    for scenario, point, params in config.points():
        rows.append(
            {
                "scenario": scenario,
                **point,
                "params": params,
                "edits": params.edit.enabled,
                "edit_delay_s": params.edit.delay_s if params.edit.enabled else np.nan,
                "save_popularity": params.saves.popularity,
                "day_s": params.day_s,
            }
        )
    return pd.DataFrame(rows)


def load_experiment(
    name: str,
    *,
    experiments_dir: str | Path = SHIPPED_DIR,
    results_dir: str | Path,
    quick: bool = False,
    run_missing: bool = True,
    workers: int | None = None,
    log: Callable[[str], None] | None = None,
    fresh: bool = False,
    progress: bool = True,
) -> Experiment:
    """Run the missing runs of ``<experiments_dir>/<name>.yaml`` (cached) and load its results.

    Quick mode reads and writes ``<results_dir>/quick/``. A changed config extends the
    results (runs are stored by parameters and seed); ``fresh`` discards them first.
    ``progress`` shows the runner's bar (on a terminal); ``log`` takes its status lines.
    """
    return Experiments(
        [name],
        experiments_dir=experiments_dir,
        results_dir=results_dir,
        quick=quick,
        run_missing=run_missing,
        workers=workers,
        log=log,
        fresh=fresh,
        progress=progress,
    )[name]


class Experiments(Mapping):
    """Experiments by name, each loaded (:func:`experiment_of`) when first asked for, its runs
    done beforehand: what :func:`load_experiment` gives, for a report that reads some of them.

    Why: drawing the figures in worker processes, the parent need not load an experiment only
    a figure reads.
    """

    def __init__(
        self,
        names: Iterable[str],
        *,
        experiments_dir: str | Path = SHIPPED_DIR,
        results_dir: str | Path,
        quick: bool = False,
        run_missing: bool = True,
        workers: int | None = None,
        log: Callable[[str], None] | None = None,
        fresh: bool = False,
        progress: bool = True,
    ) -> None:
        self._root = Path(results_dir) / ("quick" if quick else "")
        self._quick = quick
        self._configs = {name: experiment_config(name, experiments_dir, quick) for name in dict.fromkeys(names)}
        self._loaded: dict[str, Experiment] = {}
        if run_missing:  # each one's missing runs (cached); a failed run is an error
            from kbsim.runner.run import run_experiment

            for name, config in self._configs.items():
                result = run_experiment(config, self._root, workers=workers, progress=progress, log=log, fresh=fresh)
                if not result.ok:
                    raise RuntimeError(
                        f"experiment {name!r}: {len(result.failures)} runs failed; see {result.directory}/errors"
                    )

    def __getitem__(self, name: str) -> Experiment:
        if name not in self._loaded:
            config = self._configs[name]  # KeyError for an experiment not named
            self._loaded[name] = experiment_of(config, self._root / config.name, name=name, quick=self._quick)
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._configs)

    def __len__(self) -> int:
        return len(self._configs)

    def loaded(self) -> dict[str, Experiment]:
        """The experiments loaded so far, by name."""
        return dict(self._loaded)

    def adopt(self, loaded: Mapping[str, Experiment]) -> None:
        """Take experiments another :class:`Experiments` over the same results loaded (a
        drawing worker's, sent back), so that they are not loaded here again; one already
        loaded here, or not named here, is left as it is."""
        for name, experiment in loaded.items():
            if name in self._configs and name not in self._loaded:
                self._loaded[name] = experiment


def experiment_of(config, directory: str | Path, *, name: str | None = None, quick: bool = False) -> Experiment:
    """The :class:`Experiment` of ``config`` whose runs are done in ``directory`` (the results
    folder of the experiment itself): its tables, read on first use, per-run metrics and summary."""
    from kbsim.runner.results import ResultTables

    # each table is read when a figure, page or notebook first asks for it
    tables = ResultTables(Path(directory), keep=(*frames.TABLE_NAMES, "runs", "timings"))
    points = _points(config)
    by = ["scenario", *config.swept]
    per_run = tables["metrics"]
    summary = _annotate(summarize(per_run, by), points, by)
    per_run = _annotate(per_run, points, by)
    return Experiment(name or config.name, config, tables, points, per_run, summary, name_is_quick=quick)


def _annotate(frame: pd.DataFrame, points: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Add the derived point columns (edits, edit_delay_s, save_popularity) to ``frame``."""
    derived = points[[*by, "edits", "edit_delay_s", "save_popularity"]]
    left = frame.copy()
    right = derived.copy()
    for column in by:  # None/NaN keys must match each other
        left[column] = left[column].astype(object).where(left[column].notna(), "<none>")
        right[column] = right[column].astype(object).where(right[column].notna(), "<none>")
    merged = left.merge(right, on=by, how="left", validate="many_to_one")
    for column in by:
        merged[column] = frame[column].to_numpy()
    return merged


def study(
    names: Iterable[str],
    *,
    experiments_dir: str | Path = SHIPPED_DIR,
    results_dir: str | Path,
    quick: bool | None = None,
    workers: int | None = None,
) -> dict[str, Experiment]:
    """Experiments for a notebook, run where missing (cached), loaded with their summaries.

    ``quick`` defaults to ``KBSIM_QUICK``; ``KBSIM_RESULTS_DIR``, when set, replaces
    ``results_dir`` (the test suite points it at a temporary folder).
    """
    quick = quick_from_env() if quick is None else quick
    results_dir = Path(os.environ.get("KBSIM_RESULTS_DIR") or results_dir)
    with warnings.catch_warnings():
        # tqdm.auto looks for ipywidgets inside a kernel; the runner shows no bar there anyway
        warnings.filterwarnings("ignore", message="IProgress not found")
        return {
            name: load_experiment(
                name, experiments_dir=experiments_dir, results_dir=results_dir, quick=quick, workers=workers
            )
            for name in names
        }


# -- choosing the days a figure or table shows ------------------------------------------------


ROLE_LABELS = {"zipf": "Zipf saves (s = {s:g})", "control": "control: uniform saves"}


def role(popularity: str) -> str:
    """``zipf`` for days whose saves follow popularity, ``control`` for the others."""
    return "zipf" if popularity == "zipf" else "control"


def prefer_quiet(points: pd.DataFrame) -> pd.DataFrame:
    """The points without agent edits when there are any, else all of them."""
    quiet = points[~points["edits"].astype(bool)]
    return quiet if len(quiet) else points


def staleness_days(experiments: Iterable[Experiment]):
    """Per popularity role, the first day (no-edit if any): role -> (keys, params, experiment)."""
    found = {}
    for experiment in experiments:
        for popularity, group in prefer_quiet(experiment.points).groupby("save_popularity"):
            name = role(popularity)
            if name in found:
                continue
            row = group.iloc[0]
            keys = {"scenario": row["scenario"], **{k: row[k] for k in experiment.swept}}
            found[name] = (keys, row["params"], experiment)
    return found


def match(frame: pd.DataFrame, keys: dict) -> pd.DataFrame:
    """Rows of ``frame`` whose key columns equal ``keys`` (None/NaN matching missing values)."""
    mask = np.ones(len(frame), dtype=bool)
    for column, value in keys.items():
        if value is None or (isinstance(value, float) and np.isnan(value)):
            mask &= frame[column].isna().to_numpy()
        else:
            mask &= (frame[column] == value).to_numpy()
    return frame[mask]


def sweep_points(experiment: Experiment, key: str, popularity: str = "zipf") -> pd.DataFrame:
    """The points of a sweep over ``key`` (no-edit days if any) for one save popularity."""
    if key not in experiment.swept:
        raise KeyError(f"experiment {experiment.name!r} does not sweep {key!r} (sweeps {experiment.swept})")
    points = prefer_quiet(experiment.points)
    return points[points["save_popularity"] == popularity]


def sweep_frame(experiment: Experiment, key: str, popularity: str = "zipf") -> pd.DataFrame:
    """Summary rows of the sweep over ``key`` (no-edit days if any) for one save popularity."""
    points = sweep_points(experiment, key, popularity)
    summary = experiment.summary
    edits = set(points["edits"].astype(bool))
    return summary[summary["edits"].astype(bool).isin(edits) & (summary["save_popularity"] == popularity)]
