"""A study for a notebook or a script: an experiment run where its runs are missing, then read.

:func:`study` names a shipped experiment (or a config file), :meth:`Study.from_config` takes a
path or a dict; either runs what is missing of it (:func:`kbsim.run_experiment`, resumable and
cached under ``out``) and answers with its summary, tables, contrasts and figures. In Jupyter
a study shows as a table of its headline metrics with their 95% intervals.

    >>> import kbsim
    >>> reference = kbsim.study("reference", seeds=2, out="results")   # doctest: +SKIP
    >>> reference.summary("stale_citation_share")                      # doctest: +SKIP

With ``workers=1`` (the default) the runs are computed in this process, so the lines above
run as they are in a script without a ``__main__`` guard and piped into ``python -``.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from kbsim.report.experiments import Experiment, experiment_of, load_experiment
from kbsim.report.text_tables import summary_cells
from kbsim.runner.config import ExperimentConfig
from kbsim.runner.load import config_from_dict, load_config
from kbsim.runner.results import load_results
from kbsim.runner.run import ExperimentResult, run_experiment
from kbsim.runner.shipped import experiment_path
from kbsim.stats.summary import MetricSelector

__all__ = ["Study", "study"]


class Study:
    """An experiment's results: run where missing on creation, then read on first use.

    Attributes:
        config: the validated :class:`~kbsim.runner.config.ExperimentConfig`.
        result: what :func:`kbsim.run_experiment` did (runs reused, computed, failed).
        out: the folder holding ``<experiment name>/`` (and the other experiments a figure needs).
    """

    def __init__(
        self,
        config: ExperimentConfig,
        *,
        out: str | Path = "results",
        workers: int = 1,
        progress: bool = True,
        fresh: bool = False,
    ) -> None:
        self.config = config
        self.out = Path(out)
        self.workers = workers
        self.progress = progress
        self.result: ExperimentResult = run_experiment(
            config, self.out, workers=workers, progress=progress, fresh=fresh
        )
        self._tables: Mapping[str, pd.DataFrame] | None = None
        self._experiment: Experiment | None = None

    @classmethod
    def from_config(
        cls,
        config: str | Path | dict | ExperimentConfig,
        *,
        seeds: Any = None,
        overrides: list[str] | tuple[str, ...] = (),
        out: str | Path = "results",
        workers: int = 1,
        progress: bool = True,
        fresh: bool = False,
    ) -> Study:
        """The study of a config file, a config dict (as a YAML file would hold it) or a config.

        Args:
            config: a path, a dict or an :class:`~kbsim.runner.config.ExperimentConfig`.
            seeds: replaces the config's seeds (a count N means seeds 1 to N, or a list).
            overrides: ``KEY=VALUE`` strings, as ``kbsim run --set`` takes them.
            out: results go to ``out/<experiment name>/``; runs already there are reused.
            workers: processes computing runs; 1 computes them in this process.
            progress: a progress bar (``tqdm.auto``) while runs are computed.
            fresh: discard this experiment's previous results first.

        Returns:
            The :class:`Study`, its missing runs computed.

        Raises:
            ConfigError: a bad config, naming the key; RunsFailedError: every run failed.
        """
        if isinstance(config, dict):
            config = config_from_dict(config)
            if seeds is not None or overrides:
                raise ValueError("seeds and overrides: give them in the dict itself")
        elif not isinstance(config, ExperimentConfig):
            config = load_config(config, list(overrides), seeds=seeds)
        return cls(config, out=out, workers=workers, progress=progress, fresh=fresh)

    @property
    def name(self) -> str:
        """The experiment's name (its results folder)."""
        return self.config.name

    @property
    def directory(self) -> Path:
        """The experiment's results folder, ``out/<name>/``."""
        return self.result.directory

    @property
    def keys(self) -> list[str]:
        """The columns that tell its points apart: ``scenario`` and the swept parameters."""
        return ["scenario", *self.config.swept]

    @property
    def tables(self) -> Mapping[str, pd.DataFrame]:
        """Every run's tables, concatenated, by name (``citations``, ``metrics``, ...), each read
        when first asked for (:func:`kbsim.load_results`)."""
        if self._tables is None:
            self._tables = load_results(self.directory)
        return self._tables

    def summary(self, metric: str | None = None, **selector: Any) -> pd.DataFrame:
        """Each metric per point: its estimate, 95% interval over seeds, standard error, seeds.

        Args:
            metric: one metric (``stale_citation_share``), or all of them.
            **selector: with ``metric``, which of its rows: ``at`` (``"end"``, ``"1h"``),
                ``strategy`` (a strategy's name, ``poll``) or ``subset`` (``"position 1"``).

        Returns:
            The rows of ``summary.csv`` asked for.
        """
        frame = self.result.summary
        if metric is None:
            return frame.copy()
        rows = frame[MetricSelector(metric, **selector).mask(frame)]
        return rows.reset_index(drop=True)

    def contrasts(self) -> pd.DataFrame:
        """The contrasts the config declares, paired on common seeds (``contrasts.csv``)."""
        return self.result.contrasts.copy()

    def experiment(self) -> Experiment:
        """The report layer's view of this study (points, per-run metrics, annotated summary)."""
        if self._experiment is None:
            self._experiment = experiment_of(self.config, self.directory)
        return self._experiment

    def figure(self, name: str):
        """Draw the figure ``name`` (``kbsim figures --only NAME``'s) from this study's results;
        the other shipped experiments it reads are run under ``out`` where missing. Needs the
        ``plots`` extra.

        Returns:
            The matplotlib figure (a notebook shows it; ``kbsim.report.plots.save_as`` writes it).
        """
        from kbsim.report.figures import specs

        spec = specs([name])[0]
        experiments = {
            needed: self.experiment() if needed == self.name else load_experiment(
                needed, results_dir=self.out, workers=self.workers, progress=self.progress
            )
            for needed in spec.experiments
        }
        return spec.draw(experiments)

    def cells(self) -> pd.DataFrame:
        """The headline metrics as text cells, ``value [low, high]``, a point per column."""
        return summary_cells(self.result.summary, self.keys)

    def __repr__(self) -> str:
        result = self.result
        return (
            f"<Study {self.name!r}: {result.runs_total} runs ({len(self.config.seeds)} seeds), "
            f"{result.runs_reused} reused, {result.runs_computed} computed, "
            f"{len(result.failures)} failed; {self.directory}>"
        )

    def _repr_html_(self) -> str:
        """Jupyter's display: the headline metrics with their 95% intervals over seeds."""
        result = self.result
        title = (
            f"<p><b>{html.escape(self.name)}</b>: {result.runs_total} runs, "
            f"{len(self.config.seeds)} seeds per point; value [95% interval over seeds]"
            f"{f'; {len(result.failures)} runs failed' if result.failures else ''}</p>"
        )
        return title + self.cells().to_html(escape=True)


def study(
    name: str | Path,
    *,
    seeds: Any = None,
    overrides: list[str] | tuple[str, ...] = (),
    out: str | Path = "results",
    workers: int = 1,
    progress: bool = True,
    fresh: bool = False,
) -> Study:
    """The study of a shipped experiment by name (``kbsim experiments`` lists them) or a config
    file by path, run where its runs are missing.

    Args:
        name: ``"reference"``, or a path to a YAML config of your own.
        seeds: replaces the config's seeds (a count N means seeds 1 to N, or a list).
        overrides: ``KEY=VALUE`` strings, as ``kbsim run --set`` takes them.
        out: results go to ``out/<experiment name>/``; runs already there are reused.
        workers: processes computing runs; 1 (the default) computes them in this process.
        progress: a progress bar (``tqdm.auto``) while runs are computed.
        fresh: discard this experiment's previous results first.

    Returns:
        A :class:`Study`: ``.summary()``, ``.tables``, ``.contrasts()``, ``.figure(name)``.

    Example:
        >>> import kbsim
        >>> reference = kbsim.study("reference", seeds=2, out="results", progress=False)
        >>> reference.result.runs_total
        20
        >>> float(reference.summary("stale_citation_share").iloc[0]["value"]) > 0
        True
    """
    return Study.from_config(
        experiment_path(name), seeds=seeds, overrides=overrides, out=out, workers=workers,
        progress=progress, fresh=fresh,
    )
