"""The study's figures. The only module that imports matplotlib (Agg backend).

Every function takes frames already computed from saved results (summaries of
:mod:`kbsim.stats`, frames of :mod:`kbsim.report.frames`) and analytic predictions
(see :mod:`kbsim.model.analytic`),
returns a :class:`matplotlib.figure.Figure`, and never runs a simulation.
Each figure carries axis labels with units, a legend and a caption line
naming the config that made it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeGuard, cast

from kbsim.extras import require

matplotlib = require("plots", "matplotlib", "drawing kbsim's figures")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Annotation, Text  # noqa: E402
from matplotlib.ticker import FuncFormatter, PercentFormatter  # noqa: E402
from matplotlib.typing import RcKeyType  # noqa: E402

from kbsim.files import atomic_write_bytes  # noqa: E402
from kbsim.sim.strategies import Strategy, default_strategies  # noqa: E402
from kbsim.stats.summary import MetricSelector  # noqa: E402
from kbsim.units import format_bytes, format_duration  # noqa: E402

#: The one palette of every figure: one meaning per colour, declared here and nowhere else in
#: the report (a check strategy's colour is its own ``colour``, :class:`kbsim.sim.strategies.Strategy`,
#: distinct from every colour here: tests/test_plots.py holds both). A figure that tells several
#: values of one quantity apart (check intervals, conflict targets) draws shades of its colour
#: (:func:`shades`).
PALETTE = {
    "zipf": "#1f77b4",  # the Zipf day (people save popular articles more)
    "control": "#ff7f0e",  # the control day: saves uniform over articles
    "conflict": "#d62728",  # an edit rejected as a version conflict
    "gone": "#8c564b",  # an edit (or a citation) finding the article gone
    "retry": "#bcbd22",  # a re-read-and-retry that succeeds
    "saves": "#1b9e77",  # people's saves in a log (kbsim fit)
    "questions": "#e7298a",  # people's questions in a log (kbsim fit)
    "harm": "#3b3b3b",  # turning a piece of advice off adds harm (advice_effects); design_choices' first harm
    "harm_other": "#e6ab02",  # it takes harm away (advice_effects); design_choices' second harm
    "ink": "#000000",  # models (dashed), Pareto rings, zero lines: marks, not series
    "no_limit": "#eeeeee",  # the band of a retention window that keeps every event
    "grid": "#b0b0b0",  # grid lines
}
ANALYTIC_STYLE = {"color": PALETTE["ink"], "linestyle": "--", "linewidth": 1.1}
#: Print sizes (inches): a figure is drawn at the width it is printed, so its fonts stay 8-9 pt.
SINGLE_WIDTH, DOUBLE_WIDTH = 4.8, 7.2
_RC: dict[RcKeyType, Any] = {
    "font.size": 9,
    "axes.titlesize": 9.5,
    "axes.labelsize": 9,
    "xtick.labelsize": 8.5,
    "ytick.labelsize": 8.5,
    "legend.fontsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.color": PALETTE["grid"],
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.hashsalt": "kbsim",
}
SHARE = PercentFormatter(xmax=1.0, decimals=0)
P = ParamSpec("P")
#: The gid of a figure's caption text, so figures/README.md can repeat it.
CAPTION_GID = "kbsim-caption"


def _figure(ncols: int = 1, nrows: int = 1, width: float = SINGLE_WIDTH, height: float = 3.4, **kwargs):
    with plt.rc_context(_RC):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False, **kwargs)
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
        ax.spines[["top", "right"]].set_visible(False)
    return fig, axes


def _styled(draw: Callable[P, Figure]) -> Callable[P, Figure]:
    """Draw a figure under the figures' fonts and sizes (:data:`_RC`): text takes its size
    when it is made, so the whole drawing runs inside the style, not only the axes' creation."""

    @functools.wraps(draw)
    def styled(*args: P.args, **kwargs: P.kwargs) -> Figure:
        with plt.rc_context(_RC):
            return draw(*args, **kwargs)

    return styled


def shades(colour: str, count: int) -> list[tuple[float, float, float]]:
    """``count`` shades of one palette colour, light to dark: several values of one quantity
    (check intervals of the poll, conflict targets) keep its colour and its one meaning."""
    from matplotlib.colors import to_rgb

    base = np.asarray(to_rgb(colour))
    if count == 1:
        return [cast(tuple[float, float, float], tuple(base))]
    out = []
    for t in np.linspace(-0.45, 0.45, count):  # < 0: towards white, > 0: towards black
        mixed = base + (1.0 - base) * -t if t < 0 else base * (1.0 - t)
        out.append(cast(tuple[float, float, float], tuple(float(v) for v in mixed)))
    return out


def _caption(fig: Figure, caption: str) -> None:
    """Keep the caption with the figure, undrawn: it is printed in figures/README.md and the
    pages (:func:`caption_of`), never in the image, whose reader sees it beside the figure."""
    fig.text(0.0, 0.0, caption, visible=False, gid=CAPTION_GID)


def caption_of(fig: Figure) -> str:
    """The caption a figure was drawn for (:func:`_finish`); empty when it has none."""
    return next((text.get_text() for text in fig.texts if text.get_gid() == CAPTION_GID), "")


def _row_major(labels: list[str], ncol: int) -> list[str]:
    """Labels in the order that makes matplotlib's column-by-column legend read row by row."""
    rows = -(-len(labels) // ncol)
    return [labels[r * ncol + c] for c in range(ncol) for r in range(rows) if r * ncol + c < len(labels)]


def _finish(fig: Figure, caption: str, title: str | None = None, legend_below: int = 0,
            order: Sequence[str] = ()) -> Figure:
    """Title and layout; the caption is kept undrawn (:func:`_caption`). ``legend_below=ncol``
    gathers every axes' legend entries into one legend under the plots (so no legend hides
    data), read row by row in the order they were drawn, or with the labels of ``order`` first,
    in its order."""
    if title:
        fig.suptitle(title, fontsize=10.5)
    height = fig.get_figheight()
    bottom = 0.0
    if legend_below:
        handles, labels = {}, []
        for ax in fig.axes:
            for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
                if label not in handles and not label.startswith("_"):
                    handles[label] = handle
                    labels.append(label)
        rank = {label: index for index, label in enumerate(order)}
        labels = sorted(labels, key=lambda label: rank.get(label, len(rank)))  # stable: drawn order otherwise
        ncol = min(legend_below, len(labels)) or 1
        rows = -(-len(labels) // ncol)
        ordered = _row_major(labels, ncol)
        fig.legend(
            [handles[label] for label in ordered],
            ordered,
            loc="lower center",
            bbox_to_anchor=(0.5, 0.0),
            ncol=ncol,
            frameon=False,
            fontsize=8,
            columnspacing=1.2,
            handlelength=2.2,
        )
        bottom = (0.06 + 0.17 * rows) / height
    fig.tight_layout(rect=(0, bottom, 1, 1), pad=0.5)
    _caption(fig, caption)
    return fig


def _band(ax, x, value, low, high, colour, label, marker="o", share=False, steps=False):
    """A line with its CI band; ``share=True`` keeps the band inside [0, 1]; ``steps=True``
    draws a step function (a Kaplan-Meier estimate), each value held until the next x."""
    order = np.argsort(np.asarray(x, dtype=float))
    x, value = np.asarray(x, dtype=float)[order], np.asarray(value, dtype=float)[order]
    low, high = np.asarray(low, dtype=float)[order], np.asarray(high, dtype=float)[order]
    if share:
        low, high = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
    step = "post" if steps else None
    ax.fill_between(x, low, high, color=colour, alpha=0.18, linewidth=0, step=step)
    ax.plot(x, value, marker=marker, markersize=3.5, color=colour, label=label, linewidth=1.5,
            drawstyle="steps-post" if steps else "default")


def _metric(frame: pd.DataFrame, metric: str, strategy: str = "") -> pd.DataFrame:
    """Summary rows of one metric (one strategy's), at the end of the day when it is
    measured over time, selected by the structure columns."""
    return frame[MetricSelector(metric, strategy=strategy).mask(frame)]


def _duration(seconds: float) -> str:
    """A duration as the figures write it: every digit it takes, in s, min or h."""
    return format_duration(seconds, "tick")


def _delay_formatter(keep_all_x: float | None = None):
    def fmt(seconds, _pos):
        if keep_all_x is not None and np.isclose(seconds, keep_all_x):
            return "keep all"
        return _duration(seconds)

    return FuncFormatter(fmt)


_DURATION_TICKS = (1, 5, 10, 30, 60, 300, 600, 1800, 3600, 2 * 3600, 4 * 3600, 8 * 3600, 24 * 3600)


def _duration_axis(ax, values) -> None:
    """Log x axis with ticks at round durations (1 s, 1 min, 10 min, 1 h...) inside the data."""
    values = np.asarray(values, dtype=float)
    lo, hi = np.nanmin(values), np.nanmax(values)
    ticks = [t for t in _DURATION_TICKS if lo / 1.01 <= t <= hi * 1.01]
    if len(ticks) > 7:  # keep every other tick, always the ends
        ticks = ticks[::2] if ticks[-1] in ticks[::2] else [*ticks[::2], ticks[-1]]
    ax.set_xscale("log")
    ax.set_xticks(ticks)
    ax.xaxis.set_major_formatter(_delay_formatter())
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda _v, _p: ""))


def _count_label(value, _pos) -> str:
    """A count axis' tick label (a FuncFormatter): plain digits, never a power of ten."""
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def _plain_log_y(ax, formatter=_count_label) -> None:
    """Log y axis labelled in its own unit at 1, 2 and 5 of each decade (10, 20, 50, 100 or
    10 kB, 20 kB ...), so no tick reads 10^1 beside a tick in kB."""
    from matplotlib.ticker import LogLocator, NullFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(formatter))
    ax.yaxis.set_minor_formatter(NullFormatter())


def save_figure(fig: Figure, out_dir: str | Path, name: str) -> list[Path]:
    """Write ``name.png`` (150 dpi) and ``name.svg`` into ``out_dir``; close the figure.

    Each file is drawn into memory, then written atomically
    (:func:`kbsim.files.atomic_write_bytes`): a full disk or a read-only folder leaves the
    previous figure whole and raises :class:`~kbsim.files.FileWriteError` naming the file.
    """
    import io

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{name}.png", out_dir / f"{name}.svg"]
    drawn = []
    # fixed metadata and SVG ids: the same results give byte-identical files
    try:
        with plt.rc_context({"svg.hashsalt": "kbsim"}):
            for kind, options in (("png", {"dpi": 150, "metadata": {"Software": None}}),
                                  ("svg", {"metadata": {"Date": None, "Creator": None}})):
                buffer = io.BytesIO()
                fig.savefig(buffer, format=kind, **options)
                drawn.append(buffer.getvalue())
    finally:
        plt.close(fig)
    for path, data in zip(paths, drawn, strict=True):
        atomic_write_bytes(path, data)
    return paths


def save_as(fig: Figure, path: str | Path, dpi: int = 150) -> Path:
    """Write the figure to ``path`` in the format its suffix names (``.png``, ``.svg``, ``.pdf``),
    with fixed metadata (the same data give the same bytes); close the figure."""
    path = Path(path)
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in ("png", "svg", "pdf"):
        raise ValueError(f"{path}: expected a .png, .svg or .pdf file name")
    metadata = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None},
                "pdf": {"CreationDate": None, "Creator": None, "Producer": None}}[suffix]
    import io

    buffer = io.BytesIO()
    try:
        with plt.rc_context({"svg.hashsalt": "kbsim"}):
            fig.savefig(buffer, format=suffix, dpi=dpi, metadata=metadata)
    finally:
        plt.close(fig)
    return atomic_write_bytes(path, buffer.getvalue())  # whole or not at all (FileWriteError)


def png_bytes(fig: Figure, dpi: int = 110) -> bytes:
    """The figure as PNG bytes (closes it): for notebooks, which display them as an image."""
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})  # the same bytes on every run
    plt.close(fig)
    return buffer.getvalue()


def show(fig: Figure):
    """An ``IPython.display.Image`` of the figure, so a notebook cell shows it."""
    display = require("notebooks", "IPython.display", "showing a figure in a notebook")
    return display.Image(png_bytes(fig))


# -- (a) staleness over the day --------------------------------------------------------


@_styled
def staleness_over_day(
    observed: pd.DataFrame,
    analytic: Mapping[str, pd.DataFrame],
    caption: str,
    scenario_column: str = "scenario",
    labels: Mapping[str, str] | None = None,
) -> Figure:
    """Stale share of citations (left) and answers (right) by hour, one line per scenario.

    Args:
        observed: :func:`kbsim.report.frames.staleness_by_hour` output.
        analytic: scenario -> :meth:`FreshnessModel.staleness_by_hour` frame.
        caption: the caption line.
        scenario_column: the column naming the scenario.
        labels: scenario -> legend label (and the order of the lines).
    """
    labels = dict(labels or {s: s for s in observed[scenario_column].unique()})
    fig, axes = _figure(ncols=2, width=DOUBLE_WIDTH, height=3.6, sharey=True)
    for ax, kind in zip(axes[0], ("citations", "answers"), strict=True):
        for scenario, label in labels.items():
            rows = observed[(observed[scenario_column] == scenario) & (observed["kind"] == kind)]
            if rows.empty:
                continue
            colour = PALETTE.get(scenario)
            _band(
                ax,
                rows["hour"],
                rows["share"],
                rows["ci_low"],
                rows["ci_high"],
                colour,
                f"{label} (simulated, 95% CI)",
                share=True,
            )
            model = analytic.get(scenario)
            if model is not None:
                column = "stale_citation_share" if kind == "citations" else "stale_answer_share"
                ax.plot(
                    model["hour"],
                    model[column],
                    color=colour,
                    linestyle="--",
                    linewidth=1.2,
                    label=f"{label} (analytic)",
                )
        ax.set_title(f"Share of {kind} stale")
        ax.set_xlabel("time since start of day (h)")
        ax.yaxis.set_major_formatter(SHARE)
        ax.set_xlim(0, None)
    axes[0, 0].set_ylim(0, None)
    axes[0, 0].set_ylabel("stale share of citations given so far (%)")
    axes[0, 1].set_ylabel("stale share of answers given so far (%)")
    axes[0, 1].yaxis.set_tick_params(labelleft=True)
    return _finish(fig, caption, legend_below=2)


@_styled
def staleness_by_age(
    observed: pd.DataFrame,
    caption: str,
    scenario_column: str = "scenario",
    labels: Mapping[str, str] | None = None,
    day_hours: float | None = None,
) -> Figure:
    """The share of citations stale within each age since they were given (Kaplan-Meier),
    one line per scenario with its 95% band.

    Args:
        observed: :func:`kbsim.stats.survival.survival_by` output (``age_s``, ``value``,
            ``ci_low``, ``ci_high``) with ``scenario_column``.
        labels: scenario -> legend label (and the order of the lines).
        day_hours: the day's length, marked on the age axis (no citation is older).
        caption: the caption line under the figure (names the config that made it).
        scenario_column: the column telling the scenarios (the lines) apart.
    """
    labels = dict(labels or {s: s for s in observed[scenario_column].unique()})
    fig, axes = _figure(width=SINGLE_WIDTH, height=3.6)
    ax = axes[0, 0]
    for scenario, label in labels.items():
        rows = observed[observed[scenario_column] == scenario]
        if rows.empty:
            continue
        rows = rows.sort_values("age_s")
        zero = pd.Series([0.0])  # every citation is fresh when given: the steps start at 0
        _band(
            ax,
            pd.concat([zero, rows["age_s"] / 3600.0]),
            pd.concat([zero, rows["value"]]),
            pd.concat([zero, rows["ci_low"]]),
            pd.concat([zero, rows["ci_high"]]),
            PALETTE.get(scenario),
            f"{label} (Kaplan-Meier, 95% CI)",
            marker="",
            share=True,
            steps=True,
        )
    if day_hours:
        ax.set_xlim(0, day_hours)
    ax.set_xlabel("age of the citation: time since it was given (h)")
    ax.set_ylabel("citations stale within that age (%)")
    ax.yaxis.set_major_formatter(SHARE)
    ax.set_ylim(0, None)
    ax.legend(loc="upper left")
    return _finish(fig, caption, "How soon a citation goes stale")


# -- (b), (c) end-of-day staleness against one parameter ------------------------------


@_styled
def end_staleness_vs(
    observed: pd.DataFrame,
    x: str,
    analytic: pd.DataFrame | None,
    caption: str,
    xlabel: str,
    title: str,
    logx: bool = False,
    control: pd.DataFrame | None = None,
) -> Figure:
    """End-of-day stale share of citations and of answers against a swept parameter.

    Args:
        observed: summary rows (:func:`kbsim.stats.summarize`) holding the end-of-day
            ``stale_citation_share`` and ``stale_answer_share``, with column ``x``.
        x: the swept key column.
        analytic: columns ``x``, ``stale_citation_share``, ``stale_answer_share``.
        control: optional summary rows (same metrics) of a uniform-saves control,
            also with column ``x``, drawn dotted.
        caption: the caption line under the figure (names the config that made it).
        xlabel: the x axis's label.
        title: the figure's title.
        logx: whether the x axis is logarithmic.
    """
    fig, axes = _figure(ncols=2, width=DOUBLE_WIDTH, height=3.6, sharey=True)
    for ax, (kind, metric) in zip(
        axes[0], (("citations", "stale_citation_share"), ("answers", "stale_answer_share")), strict=True
    ):
        rows = _metric(observed, metric)
        _band(ax, rows[x], rows["value"], rows["ci_low"], rows["ci_high"], PALETTE["zipf"],
              "Zipf saves (simulated, 95% CI)", share=True)
        if analytic is not None:
            line = analytic.sort_values(x)
            ax.plot(line[x], line[metric], color=PALETTE["zipf"], linestyle="--", linewidth=1.2,
                    label="Zipf saves (analytic)")
        if control is not None:
            rows = _metric(control, metric).sort_values(x)
            ax.plot(rows[x], rows["value"], color=PALETTE["control"], linestyle=":", marker="s", markersize=3,
                    label="control: uniform saves (simulated)")
        if logx:
            _plain_log_x(ax)
        ax.set_xlabel(xlabel)
        ax.set_title(f"{kind} stale at the end of the day")
        ax.yaxis.set_major_formatter(SHARE)
    axes[0, 0].set_ylabel("stale share of citations (%)")
    axes[0, 1].set_ylabel("stale share of answers (%)")
    axes[0, 1].yaxis.set_tick_params(labelleft=True)
    axes[0, 0].set_ylim(0, 1.0)
    return _finish(fig, caption, title, legend_below=3)


def _plain_log_x(ax, subs: tuple[float, ...] = (1.0, 2.0, 5.0)) -> None:
    """Log x axis labelled in plain digits at ``subs`` of each decade (20, 50, 100, 200 ...),
    not at the decades alone."""
    from matplotlib.ticker import LogLocator, NullFormatter

    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.xaxis.set_major_formatter(FuncFormatter(_count_label))
    ax.xaxis.set_minor_formatter(NullFormatter())


# -- (d) check cost ------------------------------------------------------------------


def _has_line(analytic: pd.DataFrame | None, strategy: Strategy) -> TypeGuard[pd.DataFrame]:
    """Whether ``analytic`` has an exact strategy's calls (the model draws no inexact line)."""
    return analytic is not None and strategy.exact and f"{strategy.name}_calls" in analytic


@_styled
def check_cost(
    by_saves: pd.DataFrame,
    saves_column: str,
    by_held: pd.DataFrame,
    caption: str,
    analytic_saves: pd.DataFrame | None = None,
    analytic_held: pd.DataFrame | None = None,
    strategies: Sequence[Strategy] | None = None,
) -> Figure:
    """Calls (top) and bytes (bottom) per check, per strategy, against saves a day
    (left) and against the citations held at the check (right).

    Args:
        by_saves: summary rows of ``calls_per_check`` and ``bytes_per_check`` (every
            strategy) with column ``saves_column``.
        by_held: :func:`kbsim.report.frames.cost_by_citations_held` output.
        analytic_saves: columns ``saves_column`` and ``<strategy>_calls`` of the exact
            strategies the model has calls for.
        analytic_held: columns ``held`` and ``<strategy>_calls``, the same.
        strategies: the strategies drawn, in order (default: the study's three).
        caption: the caption line under the figure (names the config that made it).
        saves_column: the column of ``by_saves`` holding the saves a day.
    """
    strategies = default_strategies() if strategies is None else strategies
    fig, axes = _figure(ncols=2, nrows=2, width=DOUBLE_WIDTH, height=6.2)
    for row, measure in enumerate(("calls", "bytes")):
        ax = axes[row, 0]
        for strategy in strategies:
            rows = _metric(by_saves, f"{measure}_per_check", strategy.name)
            _band(
                ax,
                rows[saves_column],
                rows["value"],
                rows["ci_low"],
                rows["ci_high"],
                strategy.colour,
                strategy.label,
            )
            if measure == "calls" and _has_line(analytic_saves, strategy):
                line = analytic_saves.sort_values(saves_column)
                ax.plot(
                    line[saves_column],
                    line[f"{strategy.name}_calls"],
                    color=strategy.colour,
                    linestyle="--",
                    linewidth=1.2,
                    label=f"{strategy.label} (analytic)",
                )
        _plain_log_x(ax)
        ax.set_xlabel("saves by people per day (log scale)")
        ax = axes[row, 1]
        for strategy in strategies:
            rows = by_held[(by_held["strategy"] == strategy.name) & (by_held["measure"] == measure)]
            _band(
                ax,
                rows["held"],
                rows["value"],
                rows["ci_low"],
                rows["ci_high"],
                strategy.colour,
                strategy.label,
            )
            if measure == "calls" and _has_line(analytic_held, strategy):
                line = analytic_held.sort_values("held")
                ax.plot(
                    line["held"],
                    line[f"{strategy.name}_calls"],
                    color=strategy.colour,
                    linestyle="--",
                    linewidth=1.2,
                    label=f"{strategy.label} (analytic)",
                )
        ax.set_xlabel("citations held at the check")
    for col in range(2):
        axes[0, col].set_ylabel("tool calls per check (log scale)")
        axes[1, col].set_ylabel("result bytes per check (log scale)")
        _plain_log_y(axes[0, col])
        _plain_log_y(axes[1, col], _bytes_label)
    axes[0, 0].set_title("against save volume\n(mean over the day's checks)")
    axes[0, 1].set_title("against citations held\n(one point per hourly check)")
    for ax in axes.flat:
        _clip_log_bands(ax)
    return _finish(
        fig, caption, "Cost of checking every citation, per strategy (95% CI bands)", legend_below=5
    )


def _clip_log_bands(ax) -> None:
    """On a log axis a t-interval reaching below zero would plunge: clip at half the lowest line."""
    lines = [line.get_ydata() for line in ax.get_lines() if len(line.get_ydata())]
    if not lines:
        return
    floor = 0.5 * float(np.nanmin(np.concatenate([np.asarray(y, dtype=float) for y in lines])))
    for collection in ax.collections:
        for path in collection.get_paths():
            path.vertices[:, 1] = np.maximum(path.vertices[:, 1], floor)


def _bytes_label(value, _pos) -> str:
    """A size axis' tick label (a FuncFormatter): every digit it takes, in B, kB or MB."""
    return format_bytes(value, "tick")


# -- (e) edit rejections ---------------------------------------------------------------


#: The fewest retries (over all seeds) a delay's retry-success point needs to be drawn: below
#: it the share rests on a handful of edits and its interval spans most of the axis.
MIN_RETRIES = 10


@_styled
def edit_rejections(
    observed: pd.DataFrame,
    delay_column: str,
    analytic: pd.DataFrame | None,
    caption: str,
    control: pd.DataFrame | None = None,
    min_retries: int = MIN_RETRIES,
) -> Figure:
    """First-try outcomes (left, share of edits) and retry success (right, share of retried
    edits) against the approval delay (log x).

    The right panel draws a delay only where at least ``min_retries`` retries back it, and
    states each point's retry count, so a share from one or two retries does not dominate.

    Args:
        observed: summary rows of ``rejection_rate``, ``gone_rate`` and
            ``retry_success`` with column ``delay_column`` (and ``trials``: the retries).
        analytic: columns ``delay_s`` and the same three rates.
        control: optional ``rejection_rate`` rows of the uniform-saves control (dotted).
        caption: the caption line under the figure (names the config that made it).
        delay_column: the column holding the approval delay (seconds).
        min_retries: the fewest retries (over all seeds) that a delay's retry success is drawn from.
    """
    fig, axes = _figure(ncols=2, width=DOUBLE_WIDTH, height=3.9)
    ax, right = axes[0, 0], axes[0, 1]
    labels = {
        "rejection_rate": "first try rejected (version conflict)",
        "gone_rate": "first try finds the article gone",
        "retry_success": "re-read and retry succeeds",
    }
    colours = {"rejection_rate": PALETTE["conflict"], "gone_rate": PALETTE["gone"], "retry_success": PALETTE["retry"]}
    line = analytic.sort_values("delay_s") if analytic is not None else None
    drawn = []  # every rate the log axis must hold
    for metric in ("rejection_rate", "gone_rate"):
        rows = _on_log_axis(_metric(observed, metric).dropna(subset=["value"]))
        _band(ax, rows[delay_column], rows["value"], rows["ci_low"], rows["ci_high"], colours[metric],
              f"{labels[metric]}, simulated", share=True)
        drawn.append(rows["value"])
        if line is not None:
            ax.plot(line["delay_s"], line[metric], color=colours[metric], linestyle="--", linewidth=1.2,
                    label=f"{labels[metric]}, analytic model")
    if control is not None:
        rows = _on_log_axis(control.sort_values(delay_column))
        ax.plot(rows[delay_column], rows["value"], color=colours["rejection_rate"], linestyle=":", marker="s",
                markersize=3, label="first try rejected, control (uniform saves)")
        drawn.append(rows["value"])
    _log_share_y(ax, pd.concat(drawn) if drawn else pd.Series(dtype=float))
    retries = _metric(observed, "retry_success").dropna(subset=["value"])
    backed = retries[retries["trials"] >= min_retries].sort_values(delay_column)
    value = backed["value"].to_numpy(float)
    right.errorbar(
        backed[delay_column], value,
        yerr=np.vstack([value - backed["ci_low"].clip(0, 1), backed["ci_high"].clip(0, 1) - value]).clip(0),
        fmt="o", color=colours["retry_success"], markersize=4, elinewidth=1.0, capsize=2,
        label=f"{labels['retry_success']}, simulated (95% CI, >= {min_retries} retries)",
    )
    if line is not None:
        shown = line if backed.empty else line[line["delay_s"] >= backed[delay_column].min() / 1.5]
        right.plot(shown["delay_s"], shown["retry_success"], color=colours["retry_success"], linestyle="--",
                   linewidth=1.2, label=f"{labels['retry_success']}, analytic model")
    for panel in (ax, right):
        _duration_axis(panel, observed[delay_column])
        panel.set_xlabel("delay from read to edit (log scale)")
    right.yaxis.set_major_formatter(SHARE)
    right.set_ylim(0, 1.04)
    ax.set_ylabel("edits whose first try fails\n(% of edits, log scale)")
    right.set_ylabel("retries that succeed (% of retried edits)")
    ax.set_title("first try: conflicts and gone articles")
    few = int((retries["trials"] < min_retries).sum())
    right.set_title("retries after a conflict (n: retries)"
                    + (f"\nnot drawn: {few} shorter delays (< {min_retries} retries)" if few else ""))
    _finish(fig, caption, "Edits with a stale expected_version", legend_below=2)
    for _, row in backed.iterrows():
        place_label(right, f"n={row['trials']:,.0f}", (row[delay_column], row["value"]), colours["retry_success"])
    return fig


def _on_log_axis(rows: pd.DataFrame) -> pd.DataFrame:
    """Summary rows for a log axis: a value of 0 (no such edit in any seed) has no place on it, so
    it and its band are left out (NaN) rather than drawn as a plunge to the axis' floor."""
    zero = ~(rows["value"] > 0)
    return rows.assign(**{column: rows[column].mask(zero) for column in ("value", "ci_low", "ci_high")
                          if column in rows})


def _log_share_y(ax, values) -> None:
    """Log y axis for shares, from the decade under the smallest rate above 0 to above the
    largest, labelled at 1, 2 and 5 of each decade (0.1%, 0.2%, ... 50%): small rates stay
    readable beside large ones. A rate of 0 has no place on it and is not drawn."""
    from matplotlib.ticker import LogLocator, NullFormatter

    values = np.asarray(values, dtype=float)
    positive = values[np.isfinite(values) & (values > 0)]
    if not len(positive):
        return
    low = 10.0 ** np.floor(np.log10(positive.min()))
    ax.set_yscale("log")
    ax.set_ylim(low, min(1.0, positive.max() * 1.6))
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(_LOG_SHARE)
    ax.yaxis.set_minor_formatter(NullFormatter())
    for collection in ax.collections:  # a band reaching 0 stops at the axis' floor
        for path in collection.get_paths():
            path.vertices[:, 1] = np.maximum(path.vertices[:, 1], low)


# -- (f) event retention ---------------------------------------------------------------


@_styled
def retention_cost(
    observed: pd.DataFrame,
    retention_column: str,
    interval_column: str,
    caption: str,
    analytic: pd.DataFrame | None = None,
    reread: pd.DataFrame | None = None,
    *,
    poll: Strategy,
    reread_strategy: Strategy | None = None,
) -> Figure:
    """Poll cost per check (left) and the share of polls finding the cursor expired
    (right) against the retention window, one line per check interval in shades of the
    poll's colour, and the re-read's cost over those intervals as one band for reference.

    Args:
        observed: summary rows of ``calls_per_check`` (of ``poll``) and
            ``cursor_expired_rate`` with the two key columns.
        analytic: columns ``retention_column``, ``interval_column``,
            ``<poll>_calls``, ``cursor_expired_rate``.
        reread: summary rows of ``calls_per_check`` for re-read (drawn for reference).
        caption: the caption (names the config that made it; kept for figures/README.md).
        retention_column: the column holding the event log's retention window (seconds).
        interval_column: the column holding the check interval (seconds), one line each.
        poll: the strategy that follows the event log (its name and colour).
        reread_strategy: the strategy ``reread`` holds (its label and colour).
    """
    fig, axes = _figure(ncols=2, width=DOUBLE_WIDTH, height=3.7)
    finite = observed[retention_column].dropna()
    keep_all_x = float(finite.max()) * 3 if len(finite) else 1.0
    observed = observed.assign(**{retention_column: observed[retention_column].fillna(keep_all_x)})
    if analytic is not None:
        analytic = analytic.assign(
            **{retention_column: analytic[retention_column].fillna(keep_all_x)}
        )
    intervals = sorted(observed[interval_column].unique())
    colours = dict(zip(intervals, shades(poll.colour, len(intervals)), strict=True))
    for ax, (metric, strategy), model_column in (
        (axes[0, 0], ("calls_per_check", poll.name), f"{poll.name}_calls"),
        (axes[0, 1], ("cursor_expired_rate", ""), "cursor_expired_rate"),
    ):
        for interval in intervals:
            rows = _metric(observed, metric, strategy)
            rows = rows[rows[interval_column] == interval]
            _band(ax, rows[retention_column], rows["value"], rows["ci_low"], rows["ci_high"], colours[interval],
                  f"poll every {_duration(interval)}", share=metric == "cursor_expired_rate")
            if analytic is not None:
                line = analytic[analytic[interval_column] == interval].sort_values(retention_column)
                ax.plot(line[retention_column], line[model_column], color=colours[interval], linestyle="--",
                        linewidth=1.1)
        _duration_axis(ax, finite if len(finite) else observed[retention_column])
        if len(finite) < len(observed):
            ax.set_xticks([*ax.get_xticks(), keep_all_x])
            ax.xaxis.set_major_formatter(_delay_formatter(keep_all_x))
            ax.axvspan(float(finite.max()) * 1.7, keep_all_x * 1.3, color=PALETTE["no_limit"], zorder=0,
                       label="grey band: every event kept")
        ax.set_xlim(None, keep_all_x * 1.3)
        ax.set_xlabel("event retention window (log scale)")
    if reread is not None and len(reread):
        # re-read's cost hardly moves with the interval: one band over the intervals, not a line each
        levels = [reread[reread[interval_column] == interval]["value"].mean() for interval in intervals]
        label = reread_strategy.label if reread_strategy is not None else "re-read"
        colour = reread_strategy.colour if reread_strategy is not None else PALETTE["ink"]
        xs = np.sort(observed[retention_column].unique())
        axes[0, 0].fill_between(xs, np.nanmin(levels), np.nanmax(levels), color=colour, alpha=0.25, linewidth=0)
        axes[0, 0].plot(xs, np.full(len(xs), np.nanmean(levels)), color=colour, linestyle=":", linewidth=1.3,
                        label=f"{label}, every {_duration(intervals[0])} to {_duration(intervals[-1])}")
    if analytic is not None:
        axes[0, 0].plot([], [], **ANALYTIC_STYLE, label="analytic model")
    axes[0, 0].set_ylabel("tool calls per check (log scale)")
    _plain_log_y(axes[0, 0])
    axes[0, 1].set_ylabel("polls whose cursor had expired (%)")
    axes[0, 1].yaxis.set_major_formatter(SHARE)
    axes[0, 1].set_ylim(0, 1.02)
    axes[0, 0].set_title("poll cost per check (95% CI)")
    axes[0, 1].set_title("cursor expired (95% CI)")
    return _finish(fig, caption, "What a too-short event history costs the poll strategy", legend_below=3)


@_styled
def agreement(
    observed: pd.DataFrame, predicted: Sequence[float], caption: str, label: str
) -> Figure:
    """Analytic prediction against simulated value with its CI, one point per row."""
    fig, axes = _figure(width=5.0, height=5.0)
    ax = axes[0, 0]
    value = observed["value"].to_numpy(dtype=float)
    err = np.vstack([value - observed["ci_low"].to_numpy(), observed["ci_high"].to_numpy() - value])
    ax.errorbar(
        predicted,
        value,
        yerr=err,
        fmt="o",
        markersize=3,
        color=PALETTE["zipf"],
        label="simulated (95% CI)",
    )
    top = float(np.nanmax([np.nanmax(value), np.nanmax(predicted)])) * 1.05
    ax.plot([0, top], [0, top], **ANALYTIC_STYLE, label="perfect agreement")
    ax.set_xlabel(f"analytic {label}")
    ax.set_ylabel(f"simulated {label}")
    ax.legend(loc="upper left")
    return _finish(fig, caption)


# -- (g) the check frontier and the safe edit delay -----------------------------------------


def _log_duration_y(ax, values) -> None:
    """Log y axis with ticks at round durations inside the data (10 s, 1 min, 1 h...)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    if not len(values):
        return
    ax.set_yscale("log")
    lo, hi = values.min(), values.max()
    ticks = [t for t in (10, 30, *_DURATION_TICKS[4:]) if lo / 1.5 <= t <= hi * 1.5]
    if len(ticks) > 8:
        ticks = ticks[::2]
    ax.set_yticks(ticks)
    ax.yaxis.set_major_formatter(_delay_formatter())
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda _v, _p: ""))


_LOG_SHARE = FuncFormatter(lambda v, _p: f"{100 * v:.3g}%")


@_styled
def check_frontier(
    observed: pd.DataFrame,
    analytic: pd.DataFrame | None,
    caption: str,
    interval_column: str = "checks.interval_s",
    volume_column: str = "saves.count",
    strategies: Sequence[Strategy] | None = None,
    detected: Mapping[tuple[float, str], float] | None = None,
) -> Figure:
    """Tool calls per hour (x, log) against mean detection latency (top) and stale exposure
    (bottom), one curve per strategy across check intervals, one column per save volume.

    A strategy that is not exact (the title lookup) detects only some stale citations, and its
    latency is the mean over those: its legend entry says so, and each latency panel says
    what share it detects (``detected``).

    Args:
        observed: per volume, strategy and interval: ``calls``, ``latency`` and ``exposure``,
            each with ``_low`` and ``_high`` (95% interval), and ``pareto_latency``,
            ``pareto_exposure`` (booleans).
        analytic: :func:`kbsim.model.analytic.predict_check_policy` rows with ``volume_column``.
        caption: the caption line under the figure (names the config that made it).
        interval_column: the column holding the check interval (seconds).
        volume_column: the column holding the saves a day, one column of panels each.
        strategies: the strategies drawn, in order (default: the study's three).
        detected: (volume, strategy name) -> the share of stale citations an inexact strategy
            detects (over the experiment's intervals), written in the latency panels.
    """
    strategies = default_strategies() if strategies is None else strategies
    detected = detected or {}
    last_exact = [strategy.name for strategy in strategies if strategy.exact][-1:]
    volumes = sorted(observed[volume_column].unique())
    fig, axes = _figure(ncols=len(volumes), nrows=2, width=DOUBLE_WIDTH, height=7.2)
    pending = []  # (axes, text, point, colour): placed once the layout is final
    panels = (
        ("latency", "detection_latency_s", "mean detection latency (log scale)"),
        ("exposure", "stale_exposure", "stale exposure: citation-time\nstale and unflagged (log scale)"),
    )
    for col, volume in enumerate(volumes):
        for row, (short, metric, ylabel) in enumerate(panels):
            ax = axes[row, col]
            mine = observed[observed[volume_column] == volume]
            for strategy in strategies:
                name = strategy.name
                rows = mine[mine["strategy"] == name].sort_values(interval_column)
                colour = strategy.colour
                x, y = rows["calls"].to_numpy(float), rows[short].to_numpy(float)
                xerr = np.vstack([x - rows["calls_low"], rows["calls_high"] - x]).clip(0)
                yerr = np.vstack([y - rows[f"{short}_low"], rows[f"{short}_high"] - y]).clip(0)
                ax.errorbar(
                    x, y, xerr=xerr, yerr=yerr, fmt="o-", color=colour, markersize=3.5, linewidth=1.4,
                    elinewidth=0.7,
                    label=f"{strategy.label} (simulated, 95% CI)" if strategy.exact
                    else f"{strategy.label} (simulated, 95% CI; latency: of the stale it detects)",
                )
                share = detected.get((volume, name))
                if short == "latency" and not strategy.exact and share is not None:
                    ax.text(0.98, 0.98, f"{strategy.label}: mean over the {share:.0%}\nof stale citations it detects",
                            transform=ax.transAxes, ha="right", va="top", fontsize=7.5, color=colour, gid=NOTE_GID)
                best = rows[rows[f"pareto_{short}"].astype(bool)]
                ax.scatter(
                    best["calls"], best[short], s=80, facecolors="none", edgecolors=PALETTE["ink"], linewidths=1.0,
                    zorder=5, label="Pareto-optimal (simulated)",
                )
                if strategy.exact and len(rows):  # the intervals along the exact strategies' curves
                    labelled = [0, len(rows) // 2] + ([len(rows) - 1] if [name] == last_exact else [])
                    for _, point in rows.iloc[sorted(set(labelled))].iterrows():
                        pending.append((ax, f"every {_duration(point[interval_column])}",
                                        (point["calls"], point[short]), colour))
                if analytic is not None:
                    line = analytic[(analytic[volume_column] == volume) & (analytic["strategy"] == name)]
                    line = line.sort_values("interval_s")
                    exact = strategy.exact
                    ax.plot(
                        line["calls_per_hour"], line[metric], color=colour, linestyle="--" if exact else ":",
                        linewidth=1.1, label=f"{strategy.label} (analytic{'' if exact else ', rough'})",
                    )
            _plain_log_x(ax, subs=(1.0, 3.0))
            ax.set_xlabel("tool calls per hour (log scale)")
            ax.set_ylabel(ylabel)
            if short == "latency":
                _log_duration_y(ax, mine[[short, f"{short}_low", f"{short}_high"]].to_numpy().ravel())
                ax.set_title(f"{volume:,.0f} saves per day")
            else:
                ax.set_yscale("log")
                ax.yaxis.set_major_formatter(_LOG_SHARE)
    order = [label for strategy in strategies for label in (
        f"{strategy.label} (simulated, 95% CI)",
        f"{strategy.label} (simulated, 95% CI; latency: of the stale it detects)",
        f"{strategy.label} (analytic)", f"{strategy.label} (analytic, rough)")]
    _finish(fig, caption, "Checking citations: cost per hour against what stays unnoticed", legend_below=2,
            order=order)
    for ax, text, point, colour in pending:
        place_label(ax, text, point, colour)
    return fig


def _obstacles(ax, renderer) -> list:
    """What a label must not cover, in display coordinates: every line's path (data lines,
    error bars, model lines) and a box around every marker of a scatter (the Pareto rings)."""
    from matplotlib.collections import LineCollection, PathCollection
    from matplotlib.transforms import Bbox

    paths, boxes = [], []
    for line in ax.get_lines():
        if len(line.get_xdata()):
            paths.append(line.get_transform().transform_path(line.get_path()))
            if line.get_marker() not in (None, "None", "", " "):
                pad = line.get_markersize() * renderer.points_to_pixels(1.0) / 2 + 1
                for x, y in line.get_transform().transform(line.get_xydata()):
                    boxes.append(Bbox.from_extents(x - pad, y - pad, x + pad, y + pad))
    for collection in ax.collections:
        if isinstance(collection, LineCollection):
            transform = collection.get_transform()
            paths += [transform.transform_path(path) for path in collection.get_paths()]
        elif isinstance(collection, PathCollection) and len(np.asarray(collection.get_offsets())):
            sizes = collection.get_sizes()
            radius = (np.sqrt(sizes.max()) if len(sizes) else 6.0) * renderer.points_to_pixels(1.0) / 2 + 1
            for x, y in collection.get_offset_transform().transform(collection.get_offsets()):
                boxes.append(Bbox.from_extents(x - radius, y - radius, x + radius, y + radius))
    return paths + boxes


def _covers(bbox, obstacle) -> bool:
    from matplotlib.transforms import Bbox

    if isinstance(obstacle, Bbox):
        return bbox.overlaps(obstacle)
    return obstacle.intersects_bbox(bbox, filled=False)


#: Where a label may go, in points from its point: nearest first, around the compass.
_LABEL_OFFSETS = tuple(
    (round(r * np.cos(a), 1), round(r * np.sin(a), 1))
    for r in (7, 12, 18, 26, 36, 48, 64, 84)
    for a in np.radians((0, 330, 30, 300, 60, 180, 210, 150, 270, 90, 240, 120, 15, 345, 165, 195))
)


#: The gid of a note written in an axes that :func:`place_label` keeps its labels off, as it does other labels.
NOTE_GID = "kbsim-note"


def place_label(ax, text: str, point, colour) -> None:
    """Annotate ``point`` with ``text`` at the nearest offset where the label covers no line,
    marker, other label or note (a text whose gid is :data:`NOTE_GID`) and stays inside the
    axes; a leader line joins a far label to its point. Where no offset is free the label is
    left out (a label on a line is worse than none: the caption gives the range). Call it once
    the layout is final (after :func:`_finish`)."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    obstacles = _obstacles(ax, renderer)
    placed = [a.get_window_extent(renderer) for a in ax.texts if a.get_gid() in ("kbsim-label", NOTE_GID)]
    inside = ax.get_window_extent(renderer)
    for dx, dy in _LABEL_OFFSETS:
        far = (dx * dx + dy * dy) > 15 ** 2
        label = ax.annotate(
            text, point, textcoords="offset points", xytext=(dx, dy), fontsize=7, color=colour,
            ha="left" if dx > 1 else ("right" if dx < -1 else "center"),
            va="bottom" if dy > 1 else ("top" if dy < -1 else "center"), gid="kbsim-label",
            arrowprops={"arrowstyle": "-", "color": colour, "linewidth": 0.6, "shrinkA": 0, "shrinkB": 2}
            if far else None,
        )
        if far:  # the text alone first: where it is not free, the text and its leader are not
            label.update_positions(renderer)
            if not _free(Text.get_window_extent(label, renderer).padded(1.0), inside, obstacles, placed):
                label.remove()
                continue
        if _free(label.get_window_extent(renderer).padded(1.0), inside, obstacles, placed):
            return
        label.remove()


def _free(box, inside, obstacles, placed) -> bool:
    """Whether ``box`` lies inside the axes' box and covers no obstacle and no placed label
    (the cheap tests first; the answer does not depend on their order)."""
    return (
        inside.contains(box.x0, box.y0)
        and inside.contains(box.x1, box.y1)
        and not any(box.overlaps(b) for b in placed)
        and not any(_covers(box, o) for o in obstacles)
    )


def overlapping_labels(fig: Figure) -> list[str]:
    """Each annotation of the figure that covers a line, a marker or another annotation, named
    with its text: what a figure's test requires to be empty (:func:`place_label` avoids them)."""
    fig.canvas.draw()
    renderer = cast(FigureCanvasAgg, fig.canvas).get_renderer()  # the Agg backend (matplotlib.use above)
    found = []
    for ax in fig.axes:
        labels = [a for a in ax.texts if isinstance(a, Annotation)]  # placed or not
        obstacles = _obstacles(ax, renderer)
        boxes = [a.get_window_extent(renderer) for a in labels]
        for index, (label, box) in enumerate(zip(labels, boxes, strict=True)):
            if any(_covers(box, o) for o in obstacles):
                found.append(f"{label.get_text()!r} covers a line or marker")
            if any(box.overlaps(other) for other in boxes[index + 1:]):
                found.append(f"{label.get_text()!r} overlaps another label")
    return found




@_styled
def safe_edit_delay(observed: pd.DataFrame, volume_column: str, analytic: pd.DataFrame | None, caption: str) -> Figure:
    """The largest read-to-write delay keeping the conflict rate under each target, against
    saves per day (log-log).

    Args:
        observed: per volume and ``target``: ``delay_s`` with ``low`` and ``high`` (NaN low:
            the target is crossed at the shortest delay swept, ``shortest``), ``longest``.
        analytic: :func:`kbsim.model.analytic.predict_safe_edit_delay` rows with ``volume_column``.
        caption: the caption line under the figure (names the config that made it).
        volume_column: the column holding the saves a day (the x axis).
    """
    fig, axes = _figure(width=SINGLE_WIDTH, height=4.0)
    ax = axes[0, 0]
    targets = sorted(observed["target"].unique())
    # shades of the conflict colour, light (fewest conflicts allowed) to dark; a marker each
    for target, colour, marker in zip(targets, shades(PALETTE["conflict"], len(targets)), "os^D", strict=False):
        rows = observed[observed["target"] == target].sort_values(volume_column)
        value = rows["delay_s"].fillna(rows["shortest"]).to_numpy(float)
        low = rows["low"].fillna(rows["shortest"]).to_numpy(float)
        high = rows["high"].fillna(rows["shortest"]).to_numpy(float)
        ax.errorbar(
            rows[volume_column], value, yerr=np.vstack([value - low, high - value]).clip(0), fmt=f"{marker}-",
            color=colour, markersize=4, linewidth=1.4, elinewidth=0.8, capsize=2,
            label=f"< {100 * target:g}% conflicts, simulated",
        )
        if analytic is not None:
            line = analytic[np.isclose(analytic["target"], target)].sort_values(volume_column)
            ax.plot(
                line[volume_column], line["delay_s"], color=colour, linestyle="--", linewidth=1.1,
                label=f"< {100 * target:g}% conflicts, analytic",
            )
    _plain_log_x(ax)
    ax.set_xlabel("saves by people per day (log scale)")
    ax.set_ylabel("largest delay from read to edit (log scale)")
    _log_duration_y(ax, np.concatenate([observed["delay_s"].dropna(), observed["shortest"], observed["longest"]]))
    order = [f"< {100 * target:g}% conflicts, {kind}" for target in targets for kind in ("simulated", "analytic")]
    return _finish(fig, caption, "How long an edit may wait for approval", legend_below=2, order=order)


@_styled
def fit_rank_frequency(curves: pd.DataFrame, hourly: pd.DataFrame, caption: str) -> Figure:
    """What ``kbsim fit`` found in a log: each popularity's rank-frequency curve against the
    fitted Zipf law, and the hourly profile.

    Args:
        curves: :meth:`kbsim.fit.Fit.rank_frequency` (per ``what`` and ``rank``: ``observed``,
            ``expected`` with ``low``/``high``, ``law``, ``exponent``, ``p_value``).
        hourly: :meth:`kbsim.fit.Fit.hourly_profile` (per ``what`` and ``hour``: ``rate`` with
            ``low``/``high``).
        caption: the caption line under the figure (names the config that made it).
    """
    kinds = list(dict.fromkeys(curves["what"]))
    fig, axes = _figure(ncols=len(kinds) + 1, width=4.0 * (len(kinds) + 1), height=4.6)
    for ax, what in zip(axes[0], kinds, strict=False):
        rows = curves[curves["what"] == what]
        counted = rows[rows["observed"] > 0]
        colour = PALETTE.get(what, PALETTE["saves"])
        ax.fill_between(rows["rank"], rows["low"].clip(lower=0.5), rows["high"].clip(lower=0.5), color=PALETTE["ink"],
                        alpha=0.12, linewidth=0, label="logs drawn from the fitted law (5-95%)")
        ax.plot(rows["rank"], rows["expected"].clip(lower=0.5), color=PALETTE["ink"], linewidth=1.2,
                label="fitted law: expected sorted counts")
        ax.plot(rows["rank"], rows["law"], **{**ANALYTIC_STYLE, "linewidth": 0.9}, label="fitted law: N w(rank)")
        ax.plot(counted["rank"], counted["observed"], "o", markersize=2.6, color=colour, label=f"the log ({what})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        first = rows.iloc[0]
        verdict = "fits" if not first["p_value"] < 0.05 else "does not fit"
        ax.set_title(f"{what}: Zipf s = {first['exponent']:.2f}, p = {first['p_value']:.2g} ({verdict})", fontsize=9.5)
        ax.set_xlabel("popularity rank (1 = most counted, log scale)")
        ax.set_ylabel(f"{what} per article over the log (log scale)")
    ax = axes[0, -1]
    for what, rows in hourly.groupby("what", sort=False):
        colour = PALETTE.get(str(what), PALETTE["saves"])
        x = rows["hour"].to_numpy(float) + 0.5
        low = rows["low"].fillna(rows["rate"])
        high = rows["high"].fillna(rows["rate"])
        _band(ax, x, rows["rate"], low, high, colour, f"{what} per hour (95% CI over days)")
    ax.set_xlabel("local time of day (hour)")
    ax.set_ylabel("events per hour, mean over days")
    ax.set_ylim(bottom=0)
    ax.set_title("hourly profile", fontsize=9.5)
    return _finish(fig, caption, "What kbsim fit found in the log", legend_below=3)


#: Colours of the up-to-two harms of a design-choices panel.
_HARM_COLOURS = (PALETTE["harm"], PALETTE["harm_other"])


@_styled
def design_choices(contrasts: pd.DataFrame, advice: Sequence, caption: str) -> Figure:
    """One panel per piece of advice: the harm of turning it off, with paired 95% intervals.

    Args:
        contrasts: :func:`kbsim.report.figures.design_contrasts` rows: the swept keys,
            ``advice`` (index into ``advice``), ``harm``, ``unit``, ``value``, ``ci_low``
            and ``ci_high`` (scenario minus baseline, paired on common seeds).
        advice: the :class:`kbsim.report.figures.Advice` entries; each panel plots its
            harms against ``x`` with its ``at`` keys fixed.
        caption: the caption line under the figure (names the config that made it).
    """
    fig, axes = _figure(ncols=len(advice), width=3.1 * len(advice), height=5.2)
    for index, (item, ax) in enumerate(zip(advice, axes[0], strict=True)):
        rows = contrasts[contrasts["advice"] == index]
        for key, value in item.at:
            rows = rows[rows[key] == value]
        share = bool(len(rows)) and (rows["unit"] == "share").all()
        xs = sorted(rows[item.x].unique()) if len(rows) else []
        positions = {x: i for i, x in enumerate(xs)}
        for k, harm in enumerate(item.harms):
            mine = rows[rows["harm"] == harm.label].sort_values(item.x)
            if mine.empty:
                continue
            offset = (k - (len(item.harms) - 1) / 2) * 0.18
            x = mine[item.x].map(positions).to_numpy(dtype=float) + offset
            value = mine["value"].to_numpy(dtype=float)
            low = np.clip(value - mine["ci_low"].to_numpy(dtype=float), 0, None)
            high = np.clip(mine["ci_high"].to_numpy(dtype=float) - value, 0, None)
            colour = _HARM_COLOURS[k % len(_HARM_COLOURS)]
            ax.errorbar(x, value, yerr=[low, high], fmt="o", color=colour, capsize=3, markersize=4, label=harm.label)
        ax.axhline(0.0, color=PALETTE["ink"], linewidth=0.8)
        ax.set_xticks(range(len(xs)))
        if item.x == "transport.loss_rate":
            ax.set_xticklabels([f"{x:.0%}" for x in xs])
            ax.set_xlabel("replies (and requests) lost")
        else:
            ax.set_xticklabels([f"{x:g}" for x in xs])
            ax.set_xlabel("agents sharing\nthe knowledge base")
        if share:
            ax.yaxis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=1))
            ax.set_ylabel("without minus with (%, paired)")
        else:
            ax.yaxis.set_major_formatter(FuncFormatter(_bytes_label))
            ax.set_ylabel("without minus with, bytes per check")
        ax.set_title(item.panel, fontsize=9.5)
        # under its own panel (each panel's colours are its own harms): inside, it hid the top of
        # the intervals and, in the approval panel, the lost updates' points
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28), fontsize=7.5, frameon=False)
    return _finish(fig, caption, "What each design choice buys (paired on common seeds)")


@_styled
def advice_forest(effects: pd.DataFrame, rows: Sequence, caption: str) -> Figure:
    """A forest plot of what turning each piece of advice off does: one row per piece of
    advice (its headline effect), point and paired 95% interval, each on its own axis in its
    own unit, with zero marked.

    Args:
        effects: :func:`kbsim.report.figures.advice_effects` rows (``row`` indexes ``rows``;
            ``value``, ``ci_low``, ``ci_high`` already in the row's unit; ``seeds``).
        rows: the :class:`kbsim.report.figures.Counterfactual` entries.
        caption: the caption line under the figure (names the config that made it).
    """
    shown = effects[effects["headline"]].sort_values("number")
    fig, axes = _figure(nrows=max(len(shown), 1), width=DOUBLE_WIDTH, height=0.95 * max(len(shown), 1) + 1.3)
    for ax, effect in zip(axes[:, 0], shown.itertuples(index=False), strict=False):
        row = rows[effect.row]
        low, high = effect.value - effect.ci_low, effect.ci_high - effect.value
        colour = PALETTE["harm"] if effect.value > 0 else PALETTE["harm_other"]
        ax.errorbar([effect.value], [0], xerr=[[low], [high]], fmt="o", color=colour, capsize=4, markersize=6,
                    label="effect of turning it off (point, paired 95% interval)")
        ax.axvline(0.0, color=PALETTE["ink"], linewidth=0.8, label="no effect")
        span = max(abs(effect.ci_low), abs(effect.ci_high), abs(effect.value)) * 1.15 or 1.0
        ax.set_xlim(-span if effect.ci_low < 0 else -0.08 * span, span if effect.ci_high > 0 else 0.08 * span)
        ax.set_yticks([])
        ax.set_ylabel(f"{row.number}. {row.advice}\noff: {row.lacks}", rotation=0, ha="right", va="center",
                      fontsize=8)
        ax.set_ylim(-1, 1)
        ax.grid(False, axis="y")
        ax.set_xlabel(f"{row.effect} ({row.unit}), {effect.seeds} seeds", fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
    return _finish(fig, caption, "What turning each piece of advice off does (paired on common seeds)", legend_below=2)
