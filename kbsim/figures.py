"""The figures pipeline: which experiment feeds which figure, run what is missing, draw.

``kbsim figures`` calls :func:`build_figures`: for each figure it loads the
experiment configs it needs (``experiments/<name>.yaml``), runs the missing
runs through :func:`kbsim.runner.run_experiment` (results are cached under
``results/<experiment>/``, so a second call only redraws), computes the
frames with :mod:`kbsim.analysis` and the predictions with
:mod:`kbsim.analytic`, and draws with :mod:`kbsim.plots`. It writes
``figures/<name>.png`` and ``.svg``, ``figures/README.md`` and the reference
study's table ``docs/results.md``.

Quick mode (``--quick`` or ``KBSIM_QUICK=1``) runs a few seeds and thins
every sweep to a handful of points, into ``results/quick/`` (the CLI draws its
figures there too), so that quick and full results never mix.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from kbsim import analysis, analytic
from kbsim.params import DayParams

QUICK_SEEDS = 3
#: Figures and the results table use t-intervals over seeds (see analysis.summarize).
INTERVAL = "seeds"
QUICK_POINTS = 4
FULL_COMMAND = "kbsim figures"


def quick_from_env() -> bool:
    """True when ``KBSIM_QUICK`` is set to a non-empty value other than ``0``."""
    return os.environ.get("KBSIM_QUICK", "") not in ("", "0")


# -- experiments -------------------------------------------------------------------------


@dataclass
class Experiment:
    """One experiment's config and results: tables, per-run metrics, summary, params per point."""

    name: str
    config: object  # kbsim.config.ExperimentConfig
    tables: dict[str, pd.DataFrame]
    points: pd.DataFrame  # scenario, swept keys, params (DayParams), derived columns
    per_run: pd.DataFrame = field(default_factory=pd.DataFrame)
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def swept(self) -> list[str]:
        return list(self.config.swept)

    @property
    def seeds(self) -> int:
        return len(self.config.seeds)

    def caption(self, figure: str, extra: str = "") -> str:
        quick = " (quick mode)" if self.name_is_quick else ""
        text = (
            f"Made by experiments/{self.name}.yaml{quick}: {self.seeds} seeds per point, "
            f"bands = 95% t-intervals over seeds. Regenerate: {FULL_COMMAND} --only {figure}"
        )
        return f"{text}. {extra}" if extra else text

    name_is_quick: bool = False


def _thin(values: list, keep: int) -> list:
    if not isinstance(values, list) or len(values) <= keep:
        return values
    index = np.unique(np.round(np.linspace(0, len(values) - 1, keep)).astype(int))
    return [values[i] for i in index]


def experiment_config(name: str, experiments_dir: str | Path = "experiments", quick: bool = False):
    """The validated config ``experiments/<name>.yaml`` (quick: fewer seeds and points)."""
    from kbsim.config import load_config

    path = Path(experiments_dir) / f"{name}.yaml"
    if not path.exists():
        raise FileNotFoundError(f"experiment config {str(path)!r} does not exist")
    config = load_config(path)
    if quick:
        sweep = {key: _thin(values, QUICK_POINTS) for key, values in config.sweep.items()}
        config = config.model_copy(
            update={"seeds": list(config.seeds[:QUICK_SEEDS]), "sweep": sweep}
        )
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
    experiments_dir: str | Path = "experiments",
    results_dir: str | Path = "results",
    quick: bool = False,
    run_missing: bool = True,
    workers: int | None = None,
    log: Callable[[str], None] | None = None,
    fresh: bool = False,
) -> Experiment:
    """Run the missing runs of ``experiments/<name>.yaml`` (cached) and load its results.

    Quick mode reads and writes ``<results_dir>/quick/`` (and starts it anew when the
    config changed). ``fresh`` discards the experiment's results first.
    """
    from kbsim.runner import ResultsConflictError, load_results, run_experiment

    config = experiment_config(name, experiments_dir, quick)
    root = Path(results_dir) / ("quick" if quick else "")
    if run_missing:
        try:
            result = run_experiment(
                config, root, workers=workers, progress=True, log=log, fresh=fresh
            )
        except ResultsConflictError:
            if not quick:
                raise
            # quick results are a disposable cache: a changed config simply starts them anew
            result = run_experiment(
                config, root, workers=workers, progress=True, log=log, fresh=True
            )
        if not result.ok:
            raise RuntimeError(
                f"experiment {name!r}: {len(result.failures)} runs failed; "
                f"see {result.directory}/errors"
            )
    tables = load_results(root / config.name)
    tables = {k: v for k, v in tables.items() if k in analysis.TABLE_NAMES}
    points = _points(config)
    day_s = dict(zip(points["scenario"], points["day_s"], strict=True))
    if "metrics" in tables and all(
        (p.checks.interval_s * math.floor(p.day_s / p.checks.interval_s + 1e-9)) == p.day_s
        for p in points["params"]
    ):  # the runner's stored metrics end at the last check, which is then the day's end
        per_run = analysis.stored_run_metrics(tables)
    else:
        per_run = analysis.run_metrics(tables, day_s)
    by = ["scenario", *config.swept]
    summary = analysis.summarize(per_run, by, interval=INTERVAL)
    summary = _annotate(summary, points, by)
    per_run = _annotate(per_run, points, by)
    return Experiment(name, config, tables, points, per_run, summary, name_is_quick=quick)


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


# -- the figures ---------------------------------------------------------------------------


ROLE_LABELS = {"zipf": "Zipf saves (s = {s:g})", "control": "control: uniform saves"}


def _role(popularity: str) -> str:
    return "zipf" if popularity == "zipf" else "control"


def _prefer_quiet(points: pd.DataFrame) -> pd.DataFrame:
    """The points without agent edits when there are any, else all of them."""
    quiet = points[~points["edits"].astype(bool)]
    return quiet if len(quiet) else points


def _staleness_days(experiments: Iterable[Experiment]):
    """Per popularity role, the first day (no-edit if any): role -> (keys, params, experiment)."""
    found = {}
    for experiment in experiments:
        for popularity, group in _prefer_quiet(experiment.points).groupby("save_popularity"):
            role = _role(popularity)
            if role in found:
                continue
            row = group.iloc[0]
            keys = {"scenario": row["scenario"], **{k: row[k] for k in experiment.swept}}
            found[role] = (keys, row["params"], experiment)
    return found


def _edits_note(params: DayParams) -> str:
    if not params.edit.enabled:
        return "Days without agent edits."
    return (
        f"These days include the edit experiment ({params.edit.share:.0%} of answers edited after "
        f"{analysis.format_duration(params.edit.delay_s)}); the model includes the agent's edits."
    )


def _match(frame: pd.DataFrame, keys: dict) -> pd.DataFrame:
    mask = np.ones(len(frame), dtype=bool)
    for column, value in keys.items():
        if value is None or (isinstance(value, float) and np.isnan(value)):
            mask &= frame[column].isna().to_numpy()
        else:
            mask &= (frame[column] == value).to_numpy()
    return frame[mask]


def figure_staleness_over_day(exps: dict[str, Experiment]):
    from kbsim import plots

    days = _staleness_days([exps["reference"], exps["control"]])
    observed, models, labels, used = [], {}, {}, []
    for role in ("zipf", "control"):
        if role not in days:
            continue
        keys, params, experiment = days[role]
        rows = analysis.staleness_by_hour(_match(experiment.summary, keys))
        rows["role"] = role
        observed.append(rows)
        models[role] = analytic.predict_staleness(params)
        labels[role] = ROLE_LABELS[role].format(s=params.zipf_s)
        used.append(experiment)
    caption = used[0].caption(
        "staleness_over_day",
        _edits_note(days["zipf"][1])
        + " Dashed: Poisson/Zipf freshness model."
        + (
            ""
            if len(used) < 2 or used[1] is used[0]
            else f" Control from experiments/{used[1].name}.yaml."
        ),
    )
    return plots.staleness_over_day(pd.concat(observed), models, caption, "role", labels)


def _sweep_points(experiment: Experiment, key: str, popularity: str = "zipf") -> pd.DataFrame:
    if key not in experiment.swept:
        raise KeyError(
            f"experiment {experiment.name!r} does not sweep {key!r} (sweeps {experiment.swept})"
        )
    points = _prefer_quiet(experiment.points)
    return points[points["save_popularity"] == popularity]


def _sweep_frame(experiment: Experiment, key: str, popularity: str = "zipf") -> pd.DataFrame:
    """Summary rows of the sweep over ``key`` (no-edit days if any) for one save popularity."""
    points = _sweep_points(experiment, key, popularity)
    summary = experiment.summary
    edits = set(points["edits"].astype(bool))
    return summary[
        summary["edits"].astype(bool).isin(edits) & (summary["save_popularity"] == popularity)
    ]


def _end_model(experiment: Experiment, key: str) -> pd.DataFrame:
    rows = []
    for _, point in _sweep_points(experiment, key).iterrows():
        prediction = analytic.predict_end_staleness(point["params"])
        rows.append({key: point[key], **prediction.drop("time_s").to_dict()})
    return pd.DataFrame(rows)


def _day_hours(experiment: Experiment) -> float:
    return experiment.points["params"].iloc[0].day_hours


def _sweep_note(experiment: Experiment, key: str) -> str:
    params = _sweep_points(experiment, key).iloc[0]["params"]
    return _edits_note(params)


def _end_staleness_figure(
    exps: dict[str, Experiment], name: str, experiment_name: str, key: str, control_note: str, **style
):
    """End-of-day staleness against one swept parameter, with the control and the model."""
    from kbsim import plots

    experiment = exps[experiment_name]
    control = _sweep_frame(experiment, key, "uniform")
    return plots.end_staleness_vs(
        _sweep_frame(experiment, key),
        key,
        _end_model(experiment, key),
        experiment.caption(name, _sweep_note(experiment, key) + f" Dashed: analytic model. Dotted: {control_note}."),
        control=control if len(control) else None,
        **style,
    )


def figure_staleness_vs_zipf(exps: dict[str, Experiment]):
    return _end_staleness_figure(
        exps,
        "staleness_vs_zipf",
        "zipf_sweep",
        "zipf_s",
        "control (saves uniform, questions Zipf)",
        xlabel="Zipf exponent s of article popularity (0 = uniform)",
        title="Stale at end of day against popularity skew",
    )


def figure_staleness_vs_saves(exps: dict[str, Experiment]):
    return _end_staleness_figure(
        exps,
        "staleness_vs_saves",
        "save_volume_sweep",
        "saves.count",
        "control (saves uniform)",
        xlabel=f"saves by people per {_day_hours(exps['save_volume_sweep']):g}-hour day (log scale)",
        title="Stale at end of day against save volume",
        logx=True,
    )


def _held_model(params: DayParams, by_held: pd.DataFrame) -> pd.DataFrame:
    """Analytic calls per check at each check time, placed at the expected citations held."""
    model = analytic.FreshnessModel.from_params(params)
    cost = model.check_cost(
        params.checks.interval_s,
        page_size=params.checks.poll_page_size,
        retention_s=params.event_retention_s,
    )
    held = by_held.drop_duplicates("check_index").set_index("check_index")["held"]
    cost["held"] = cost["check_index"].map(held)
    return cost.dropna(subset=["held"])


def figure_check_cost(exps: dict[str, Experiment]):
    from kbsim import plots

    volume, key = exps["save_volume_sweep"], "saves.count"
    by_saves = _sweep_frame(volume, key)
    model_saves = pd.DataFrame(
        [
            {key: point[key], **analytic.predict_check_cost(point["params"]).to_dict()}
            for _, point in _sweep_points(volume, key).iterrows()
        ]
    )
    days = _staleness_days([exps["reference"]])
    keys, params, reference = days["zipf"]
    checks = _match(reference.tables["checks"], keys)
    by_held = analysis.cost_by_citations_held(checks)
    caption = volume.caption(
        "check_cost",
        f"Right: each hourly check of the Zipf no-edit day of experiments/{reference.name}.yaml "
        f"({reference.seeds} seeds). Dashed: analytic calls (no analytic bytes or title line). "
        + _sweep_note(volume, key).replace("These days", "Left: the days"),
    )
    return plots.check_cost(
        by_saves, key, by_held, caption, model_saves, _held_model(params, by_held)
    )


def figure_edit_rejections(exps: dict[str, Experiment]):
    from kbsim import plots

    experiment, key = exps["edit_delay_sweep"], "edit.delay_s"
    if key not in experiment.swept:
        raise KeyError(f"experiment {experiment.name!r} does not sweep {key!r}")
    edits = experiment.summary[experiment.summary["edits"].astype(bool)]
    summary = edits[edits["save_popularity"] == "zipf"]
    control = edits[(edits["save_popularity"] != "zipf") & (edits["metric"] == "rejection_rate")]
    points = experiment.points[
        experiment.points["edits"] & (experiment.points["save_popularity"] == "zipf")
    ]
    params = points.iloc[0]["params"]
    delays = np.geomspace(summary[key].min(), summary[key].max(), 60)
    model = analytic.predict_edit_outcomes(params, delays)
    caption = experiment.caption(
        "edit_rejections",
        f"{params.edit.share:.0%} of answers edit their first citation; "
        "a retry waits a new approval "
        "delay. Dashed: analytic model (Zipf day).",
    )
    return plots.edit_rejections(summary, key, model, caption, control if len(control) else None)


def figure_retention_cost(exps: dict[str, Experiment]):
    from kbsim import plots

    experiment = exps["retention_sweep"]
    retention, interval = "event_retention_s", "checks.interval_s"
    for key in (retention, interval):
        if key not in experiment.swept:
            raise KeyError(f"experiment {experiment.name!r} does not sweep {key!r}")
    points = _prefer_quiet(experiment.points)
    points = points[points["save_popularity"] == "zipf"]
    summary = experiment.summary[
        experiment.summary["edits"].astype(bool).isin(set(points["edits"]))
    ]
    summary = summary[summary["save_popularity"] == "zipf"]
    rows = []
    for _, point in points.iterrows():
        cost = analytic.predict_check_cost(point["params"])
        rows.append({retention: point[retention], interval: point[interval], **cost.to_dict()})
    reread = summary[summary["metric"] == "calls_per_check[reread]"]
    caption = experiment.caption(
        "retention_cost",
        "An expired cursor makes the poll fall back to re-reading every live cited article. "
        "Dashed: analytic model. " + _edits_note(points.iloc[0]["params"]),
    )
    return plots.retention_cost(summary, retention, interval, caption, pd.DataFrame(rows), reread)


@dataclass(frozen=True)
class FigureSpec:
    """A figure: its file name, what it shows, the experiments it reads, how it is drawn."""

    name: str
    shows: str
    experiments: tuple[str, ...]
    draw: Callable[[dict[str, Experiment]], object]


FIGURES: tuple[FigureSpec, ...] = (
    FigureSpec(
        "staleness_over_day",
        "Share of citations and of answers stale at each hour, "
        "Zipf saves against the uniform control, "
        "with the analytic model.",
        ("reference", "control"),
        figure_staleness_over_day,
    ),
    FigureSpec(
        "staleness_vs_zipf",
        "Share of citations and answers stale at the end of the day against the Zipf exponent.",
        ("zipf_sweep",),
        figure_staleness_vs_zipf,
    ),
    FigureSpec(
        "staleness_vs_saves",
        "Share of citations and answers stale at the end of the day against the saves per day.",
        ("save_volume_sweep",),
        figure_staleness_vs_saves,
    ),
    FigureSpec(
        "check_cost",
        "Tool calls and result bytes per check for title lookup, re-read and poll, "
        "against save volume "
        "and against citations held.",
        ("save_volume_sweep", "reference"),
        figure_check_cost,
    ),
    FigureSpec(
        "edit_rejections",
        "Share of edits rejected as conflicts, finding the article gone, and retries that succeed, "
        "against the delay since the read.",
        ("edit_delay_sweep",),
        figure_edit_rejections,
    ),
    FigureSpec(
        "retention_cost",
        "Poll cost per check and share of expired cursors against the event retention window, "
        "per check interval.",
        ("retention_sweep",),
        figure_retention_cost,
    ),
)
FIGURE_NAMES = tuple(spec.name for spec in FIGURES)


def _specs(only: Iterable[str] | None) -> list[FigureSpec]:
    if not only:
        return list(FIGURES)
    only = list(only)
    unknown = [name for name in only if name not in FIGURE_NAMES]
    if unknown:
        raise ValueError(
            f"--only: unknown figure(s) {unknown}; expected some of {list(FIGURE_NAMES)}"
        )
    return [spec for spec in FIGURES if spec.name in only]


def build_figures(
    only: Iterable[str] | None = None,
    *,
    quick: bool = False,
    experiments_dir: str | Path = "experiments",
    results_dir: str | Path = "results",
    figures_dir: str | Path = "figures",
    docs_path: str | Path | None = "docs/results.md",
    workers: int | None = None,
    log: Callable[[str], None] | None = None,
    fresh: bool = False,
    readme_path: str | Path | None = None,
) -> list[Path]:
    """Run what is missing, draw the figures, write figures/README.md and the results table.

    Returns the files written. ``only`` restricts to named figures
    (:data:`FIGURE_NAMES`); README and the results table are rewritten only
    when every figure is drawn.
    """
    from kbsim import plots

    specs = _specs(only)
    needed = dict.fromkeys(name for spec in specs for name in spec.experiments)
    if docs_path is not None and not only:
        needed.update(dict.fromkeys(("reference", "control")))
    exps = {
        name: load_experiment(
            name,
            experiments_dir=experiments_dir,
            results_dir=results_dir,
            quick=quick,
            workers=workers,
            log=log,
            fresh=fresh,
        )
        for name in needed
    }
    written: list[Path] = []
    for spec in specs:
        written += plots.save_figure(spec.draw(exps), figures_dir, spec.name)
        if log:
            log(f"wrote {figures_dir}/{spec.name}.png and .svg")
    if not only:
        written.append(write_figures_readme(figures_dir, quick))
        if docs_path is not None:
            written.append(write_results_markdown(exps, docs_path, figures_dir))
            if readme_path is not None and Path(readme_path).exists():
                written.append(update_readme_results(exps, readme_path, figures_dir))
    return written


README_START = "<!-- results:start (rewritten by `kbsim figures`) -->"
README_END = "<!-- results:end -->"
#: Figures embedded in README.md; docs/results.md embeds all of them.
README_FIGURES = ("staleness_over_day", "check_cost", "edit_rejections")


def update_readme_results(exps: dict[str, Experiment], readme_path: str | Path, figures_dir: str | Path) -> Path:
    """Rewrite the block between the results markers of README.md: the reference table and
    the main figures, so the README always shows the last full run."""
    path = Path(readme_path)
    text = path.read_text(encoding="utf-8")
    if README_START not in text or README_END not in text:
        raise ValueError(f"{path} has no {README_START!r} ... {README_END!r} block to rewrite")
    try:
        rel = Path(os.path.relpath(Path(figures_dir).resolve(), path.parent.resolve()))
    except ValueError:
        rel = Path(figures_dir).resolve()
    reference = exps["reference"]
    shows = {spec.name: spec.shows for spec in FIGURES}
    lines = [
        README_START,
        "",
        f"The reference study (`experiments/{reference.name}.yaml`, {reference.seeds} seeds per scenario): "
        "value [95% t-interval over seeds]. Staleness and check costs from days without agent edits; "
        "edit rows from the days with edits. All figures and their captions: "
        "[docs/results.md](docs/results.md) and [figures/README.md](figures/README.md).",
        "",
        analysis.markdown_table(reference_results(exps)),
        "",
    ]
    for name in README_FIGURES:
        lines += [f"![{shows[name]}]({(rel / (name + '.png')).as_posix()})", ""]
    lines.append(README_END)
    head, rest = text.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    path.write_text(head + "\n".join(lines) + tail, encoding="utf-8")
    return path


def regenerate_command(name: str | None = None, quick: bool = False) -> str:
    """The command that regenerates one figure (or all)."""
    parts = [FULL_COMMAND]
    if name:
        parts.append(f"--only {name}")
    if quick:
        parts.append("--quick")
    return " ".join(parts)


def write_figures_readme(figures_dir: str | Path, quick: bool = False) -> Path:
    """``figures/README.md``: one line per figure, what it shows and how to regenerate it."""
    lines = [
        "# Figures",
        "",
        "Generated by `kbsim figures` (or `make figures`) from the experiment configs in",
        "`experiments/`; results are cached under `results/`.",
        "Each figure's caption names its config.",
        ""
        if not quick
        else "\n**These were drawn in quick mode (few seeds): rerun without --quick.**",
        "",
    ]
    for spec in FIGURES:
        lines.append(
            f"- `{spec.name}.png` / `.svg`: {spec.shows} "
            f"Regenerate: `{regenerate_command(spec.name, quick)}`"
        )
    path = Path(figures_dir) / "README.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def reference_results(exps: dict[str, Experiment]) -> pd.DataFrame:
    """The reference study table: Zipf and control no-edit days, edit outcomes per delay."""
    days = _staleness_days([exps["reference"], exps["control"]])
    frames, columns = [], {}
    for role, heading in (
        ("zipf", "Zipf saves (s = {s:g})"),
        ("control", "Control: uniform saves"),
    ):
        if role not in days:
            continue
        keys, params, experiment = days[role]
        rows = _match(experiment.summary, keys).copy()
        rows["role"] = role
        frames.append(rows)
        columns[role] = heading.format(s=params.zipf_s)
    summary = pd.concat(frames, ignore_index=True)
    reference = exps["reference"].summary
    edits = reference[reference["edits"].astype(bool)].copy()
    edits["role"] = edits["save_popularity"].map(_role)
    return analysis.reference_table(summary, "role", columns, edits, delay_column="edit_delay_s")


def write_results_markdown(
    exps: dict[str, Experiment], path: str | Path, figures_dir: str | Path
) -> Path:
    """``docs/results.md``: the reference study's table with CIs and the main figures."""
    path = Path(path)
    reference = exps["reference"]
    table = reference_results(exps)
    try:
        rel = Path(os.path.relpath(Path(figures_dir).resolve(), path.parent.resolve()))
    except ValueError:
        rel = Path(figures_dir).resolve()
    quick = (
        " **(quick mode: few seeds; rerun `make figures` for the full study)**"
        if quick_flag(exps)
        else ""
    )
    lines = [
        "<!-- Generated by `kbsim figures` (kbsim/figures.py); do not edit by hand. -->",
        "## Results",
        "",
        f"The reference study (`experiments/{reference.name}.yaml`, "
        f"{reference.seeds} seeds per scenario){quick}: "
        "value with its 95% t-interval over seeds (each seed's day is one replication; "
        "`summary.csv` gives Wilson intervals on pooled counts, "
        "which ignore that a day's citations "
        "share its saves and so come out narrower). "
        "Staleness and check costs come from days without agent edits; "
        "edit rows from the days with edits, one row per delay.",
        "",
        analysis.markdown_table(table),
    ]
    for spec in FIGURES:
        lines += [
            f"![{spec.shows}]({(rel / (spec.name + '.png')).as_posix()})",
            "",
            f"*{spec.shows}*",
            "",
        ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))
    return path


def quick_flag(exps: dict[str, Experiment]) -> bool:
    return any(e.name_is_quick for e in exps.values())


# -- for the notebooks ---------------------------------------------------------------------


def repo_root() -> Path:
    """The checkout this package lives in (where experiments/ and results/ are)."""
    return Path(__file__).resolve().parents[1]


def study(
    names: Iterable[str], quick: bool | None = None, workers: int | None = None
) -> dict[str, Experiment]:
    """Experiments for a notebook, run where missing (cached), loaded with their summaries.

    ``quick`` defaults to ``KBSIM_QUICK``; configs come from ``KBSIM_EXPERIMENTS_DIR``
    (default ``<repo>/experiments``), results go to ``KBSIM_RESULTS_DIR`` (default
    ``<repo>/results``, gitignored), so a notebook writes nothing else.
    """
    import warnings

    quick = quick_from_env() if quick is None else quick
    experiments_dir = Path(os.environ.get("KBSIM_EXPERIMENTS_DIR") or repo_root() / "experiments")
    results_dir = Path(os.environ.get("KBSIM_RESULTS_DIR") or repo_root() / "results")
    with warnings.catch_warnings():
        # tqdm.auto looks for ipywidgets inside a kernel; the runner shows no bar there anyway
        warnings.filterwarnings("ignore", message="IProgress not found")
        return {
            name: load_experiment(
                name,
                experiments_dir=experiments_dir,
                results_dir=results_dir,
                quick=quick,
                workers=workers,
            )
            for name in names
        }


def draw(name: str, exps: dict[str, Experiment]):
    """Draw one figure (by :data:`FIGURE_NAMES` name) from loaded experiments."""
    return _specs([name])[0].draw(exps)


def staleness_model_check(exps: dict[str, Experiment]) -> pd.DataFrame:
    """Simulated stale shares by hour (with CI) beside the analytic model, with and
    without unpublished articles leaving the day, for the Zipf and control days."""
    rows = []
    for role, (keys, params, experiment) in _staleness_days(
        [exps["reference"], exps["control"]]
    ).items():
        observed = analysis.staleness_by_hour(_match(experiment.summary, keys))
        models = {
            "model": analytic.predict_staleness(params).set_index("hour"),
            "model_no_unpublish": analytic.predict_staleness(params, unpublish=False).set_index(
                "hour"
            ),
        }
        for _, row in observed.iterrows():
            column = "stale_citation_share" if row["kind"] == "citations" else "stale_answer_share"
            rows.append(
                {
                    "day": role,
                    "kind": row["kind"],
                    "hour": row["hour"],
                    "simulated": row["share"],
                    "ci_low": row["ci_low"],
                    "ci_high": row["ci_high"],
                    **{name: frame.loc[row["hour"], column] for name, frame in models.items()},
                }
            )
    frame = pd.DataFrame(rows)
    frame["model_inside_ci"] = analysis.inside_ci(frame, frame["model"])
    return frame


def edit_model_check(exps: dict[str, Experiment]) -> pd.DataFrame:
    """Simulated rejection, gone and retry-success rates per delay beside the model (Zipf days)."""
    experiment, key = exps["edit_delay_sweep"], "edit.delay_s"
    summary = experiment.summary[
        experiment.summary["edits"].astype(bool) & (experiment.summary["save_popularity"] == "zipf")
    ]
    params = experiment.points[experiment.points["edits"]].iloc[0]["params"]
    delays = sorted(summary[key].unique())
    model = analytic.predict_edit_outcomes(params, delays).set_index("delay_s")
    rows = []
    for metric in ("rejection_rate", "gone_rate", "retry_success"):
        for delay in delays:
            hit = summary[(summary[key] == delay) & (summary["metric"] == metric)]
            if not len(hit) or hit["value"].isna().all():  # e.g. no retries at this delay
                continue
            value, low, high = hit[["value", "ci_low", "ci_high"]].iloc[0]
            rows.append(
                {
                    "metric": metric,
                    "delay": analysis.format_duration(delay),
                    "delay_s": delay,
                    "simulated": value,
                    "ci_low": low,
                    "ci_high": high,
                    "model": model.loc[delay, metric],
                }
            )
    frame = pd.DataFrame(rows)
    frame["model_inside_ci"] = analysis.inside_ci(frame, frame["model"])
    return frame


def check_cost_model_check(exps: dict[str, Experiment]) -> pd.DataFrame:
    """Simulated calls per check of re-read and poll per save volume beside the model."""
    experiment, key = exps["save_volume_sweep"], "saves.count"
    summary = _sweep_frame(experiment, key)
    rows = []
    for _, point in _sweep_points(experiment, key).iterrows():
        model = analytic.predict_check_cost(point["params"])
        for strategy in ("reread", "poll"):
            hit = summary[
                (summary[key] == point[key]) & (summary["metric"] == f"calls_per_check[{strategy}]")
            ]
            value, low, high = hit[["value", "ci_low", "ci_high"]].iloc[0]
            rows.append(
                {
                    "saves_per_day": point[key],
                    "strategy": strategy,
                    "simulated": value,
                    "ci_low": low,
                    "ci_high": high,
                    "model": model[f"{strategy}_calls"],
                }
            )
    frame = pd.DataFrame(rows)
    frame["model_inside_ci"] = analysis.inside_ci(frame, frame["model"])
    return frame


#: The headline numbers the original write-up reported; fill in when it is supplied.
WRITEUP_FIGURES: dict[str, str] = {}


def reproduction_table(exps: dict[str, Experiment]) -> pd.DataFrame:
    """The reference study's table beside an (empty, to fill) column of the write-up's figures."""
    table = reference_results(exps)
    heading = "original write-up (TO FILL IN)"
    table.insert(1, heading, [WRITEUP_FIGURES.get(metric, "") for metric in table["metric"]])
    return table


def agent_edit_effect(exps: dict[str, Experiment], key: str = "zipf_s") -> pd.DataFrame:
    """Analytic end-of-day staleness along the Zipf sweep, Zipf and control saves, with and
    without the agent's own edits: how much of the sweep's staleness the agent causes itself."""
    rows = []
    for _, point in exps["zipf_sweep"].points.iterrows():
        params = point["params"]
        for label, day in (
            ("with agent edits", params),
            (
                "without agent edits",
                params.model_copy(
                    update={"edit": params.edit.model_copy(update={"delay_s": None})}
                ),
            ),
        ):
            end = analytic.predict_end_staleness(day)
            rows.append(
                {
                    key: point[key],
                    "saves": point["save_popularity"],
                    "agent": label,
                    "stale_citations": end["stale_citation_share"],
                }
            )
    frame = pd.DataFrame(rows).drop_duplicates([key, "saves", "agent"])
    return frame.pivot_table(index=key, columns=["saves", "agent"], values="stale_citations")
