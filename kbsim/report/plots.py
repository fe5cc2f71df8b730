"""The study's figures. The only module that imports matplotlib (Agg backend).

Every function takes frames already computed from saved results (summaries of
:mod:`kbsim.stats`, frames of :mod:`kbsim.report.frames`) and analytic predictions
(see :mod:`kbsim.model.analytic`),
returns a :class:`matplotlib.figure.Figure`, and never runs a simulation.
Each figure carries axis labels with units, a legend and a caption line
naming the config that made it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeGuard, cast

from kbsim.extras import require

matplotlib = require("plots", "matplotlib", "drawing kbsim's figures")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Annotation  # noqa: E402
from matplotlib.ticker import FuncFormatter, PercentFormatter  # noqa: E402
from matplotlib.typing import RcKeyType  # noqa: E402

from kbsim.files import atomic_write_bytes  # noqa: E402
from kbsim.sim.strategies import Strategy, default_strategies  # noqa: E402
from kbsim.stats.summary import MetricSelector  # noqa: E402
from kbsim.units import format_bytes, format_duration  # noqa: E402

#: One colour per series kind, used the same way in every figure (a strategy's is its own
#: ``colour``, :class:`kbsim.sim.strategies.Strategy`).
COLOURS = {
    "zipf": "#1f77b4",
    "control": "#ff7f0e",
    "citations": "#1f77b4",
    "answers": "#d62728",
    "rejection_rate": "#d62728",
    "gone_rate": "#7f7f7f",
    "retry_success": "#2ca02c",
}
ANALYTIC_STYLE = {"color": "black", "linestyle": "--", "linewidth": 1.2}
_RC: dict[RcKeyType, Any] = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 8.5,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.hashsalt": "kbsim",
}
SHARE = PercentFormatter(xmax=1.0, decimals=0)
#: The gid of a figure's caption text, so figures/README.md can repeat it.
CAPTION_GID = "kbsim-caption"


def _figure(ncols: int = 1, nrows: int = 1, width: float = 6.4, height: float = 4.2, **kwargs):
    with plt.rc_context(_RC):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False, **kwargs)
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
        ax.spines[["top", "right"]].set_visible(False)
    return fig, axes


def _caption(fig: Figure, caption: str) -> None:
    """The caption line at the bottom of the figure (names the config that made it)."""
    fig.text(0.01, 0.01, caption, ha="left", va="bottom", fontsize=7.5, color="#444444", wrap=True,
             gid=CAPTION_GID)


def caption_of(fig: Figure) -> str:
    """The caption line a figure was drawn with (:func:`_finish`); empty when it has none."""
    return next((text.get_text() for text in fig.texts if text.get_gid() == CAPTION_GID), "")


def _finish(fig: Figure, caption: str, title: str | None = None, legend_below: int = 0) -> Figure:
    """Title, layout and caption; ``legend_below=ncol`` gathers every axes' legend
    entries into one legend under the plots (so no legend hides data)."""
    if title:
        fig.suptitle(title, fontsize=11.5)
    height = fig.get_figheight()
    caption_h = 0.42 / height
    bottom = caption_h
    if legend_below:
        handles, labels = {}, []
        for ax in fig.axes:
            for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
                if label not in handles and not label.startswith("_"):
                    handles[label] = handle
                    labels.append(label)
        rows = -(-len(labels) // legend_below)
        legend_h = (0.12 + 0.2 * rows) / height
        fig.legend(
            [handles[label] for label in labels],
            labels,
            loc="lower center",
            bbox_to_anchor=(0.5, caption_h),
            ncol=legend_below,
            frameon=False,
            fontsize=8.5,
        )
        bottom += legend_h
    fig.tight_layout(rect=(0, bottom, 1, 1))
    _caption(fig, caption)
    return fig


def _band(ax, x, value, low, high, colour, label, marker="o", share=False):
    """A line with its CI band; ``share=True`` keeps the band inside [0, 1]."""
    order = np.argsort(np.asarray(x, dtype=float))
    x, value = np.asarray(x, dtype=float)[order], np.asarray(value, dtype=float)[order]
    low, high = np.asarray(low, dtype=float)[order], np.asarray(high, dtype=float)[order]
    if share:
        low, high = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
    ax.fill_between(x, low, high, color=colour, alpha=0.18, linewidth=0)
    ax.plot(x, value, marker=marker, markersize=3.5, color=colour, label=label, linewidth=1.5)


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
    fig, axes = _figure(ncols=2, width=9.6, height=4.2, sharey=True)
    for ax, kind in zip(axes[0], ("citations", "answers"), strict=True):
        for scenario, label in labels.items():
            rows = observed[(observed[scenario_column] == scenario) & (observed["kind"] == kind)]
            if rows.empty:
                continue
            colour = COLOURS.get(scenario, None)
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
    axes[0, 0].legend(loc="upper left")
    return _finish(fig, caption)


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
    fig, axes = _figure(width=7.6, height=5.0)
    ax = axes[0, 0]
    for scenario, label in labels.items():
        rows = observed[observed[scenario_column] == scenario]
        if rows.empty:
            continue
        _band(
            ax,
            rows["age_s"] / 3600.0,
            rows["value"],
            rows["ci_low"],
            rows["ci_high"],
            COLOURS.get(scenario),
            f"{label} (Kaplan-Meier, 95% CI)",
            marker="",
            share=True,
        )
    if day_hours:
        ax.set_xlim(0, day_hours)
    ax.set_xlabel("age of the citation: time since it was given (h)")
    ax.set_ylabel("citations stale within that age (%)")
    ax.yaxis.set_major_formatter(SHARE)
    ax.set_ylim(0, None)
    ax.legend(loc="upper left")
    return _finish(fig, caption, "How long a citation stays fresh")


# -- (b), (c) end-of-day staleness against one parameter ------------------------------


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
    fig, axes = _figure(width=7.6, height=5.2)
    ax = axes[0, 0]
    for kind, metric in (
        ("citations", "stale_citation_share"),
        ("answers", "stale_answer_share"),
    ):
        rows = _metric(observed, metric)
        _band(
            ax,
            rows[x],
            rows["value"],
            rows["ci_low"],
            rows["ci_high"],
            COLOURS[kind],
            f"{kind} (simulated, 95% CI)",
            share=True,
        )
        if analytic is not None:
            column = "stale_citation_share" if kind == "citations" else "stale_answer_share"
            line = analytic.sort_values(x)
            ax.plot(
                line[x],
                line[column],
                color=COLOURS[kind],
                linestyle="--",
                linewidth=1.2,
                label=f"{kind} (analytic)",
            )
        if control is not None:
            rows = _metric(control, metric).sort_values(x)
            ax.plot(
                rows[x],
                rows["value"],
                color=COLOURS[kind],
                linestyle=":",
                marker="s",
                markersize=3,
                label=f"{kind}, uniform-saves control",
            )
    if logx:
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}"))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("stale at end of day (%)")
    ax.yaxis.set_major_formatter(SHARE)
    ax.set_ylim(0, 1.02)
    return _finish(fig, caption, title, legend_below=3 if control is not None else 2)


# -- (d) check cost ------------------------------------------------------------------


def _has_line(analytic: pd.DataFrame | None, strategy: Strategy) -> TypeGuard[pd.DataFrame]:
    """Whether ``analytic`` has an exact strategy's calls (the model draws no inexact line)."""
    return analytic is not None and strategy.exact and f"{strategy.name}_calls" in analytic


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
    fig, axes = _figure(ncols=2, nrows=2, width=10.0, height=7.4)
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
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}"))
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
    axes[0, 0].set_title("against save volume (mean over the day's checks)")
    axes[0, 1].set_title("against citations held (one point per hourly check)")
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
    fig, axes = _figure(ncols=2, width=11.0, height=5.4, gridspec_kw={"width_ratios": (1.25, 1)})
    ax, right = axes[0, 0], axes[0, 1]
    labels = {
        "rejection_rate": "first try rejected (version conflict)",
        "gone_rate": "first try finds the article gone",
        "retry_success": "re-read and retry succeeds",
    }
    line = analytic.sort_values("delay_s") if analytic is not None else None
    for metric in ("rejection_rate", "gone_rate"):
        rows = _metric(observed, metric).dropna(subset=["value"])
        _band(ax, rows[delay_column], rows["value"], rows["ci_low"], rows["ci_high"], COLOURS[metric],
              f"{labels[metric]}, simulated", share=True)
        if line is not None:
            ax.plot(line["delay_s"], line[metric], color=COLOURS[metric], linestyle="--", linewidth=1.2,
                    label=f"{labels[metric]}, analytic model")
    if control is not None:
        rows = control.sort_values(delay_column)
        ax.plot(rows[delay_column], rows["value"], color=COLOURS["rejection_rate"], linestyle=":", marker="s",
                markersize=3, label="first try rejected, control (uniform saves)")
    retries = _metric(observed, "retry_success").dropna(subset=["value"])
    backed = retries[retries["trials"] >= min_retries].sort_values(delay_column)
    _band(right, backed[delay_column], backed["value"], backed["ci_low"], backed["ci_high"],
          COLOURS["retry_success"], f"{labels['retry_success']}, simulated (>= {min_retries} retries)", share=True)
    if line is not None:
        shown = line if backed.empty else line[line["delay_s"] >= backed[delay_column].min() / 1.5]
        right.plot(shown["delay_s"], shown["retry_success"], color=COLOURS["retry_success"], linestyle="--",
                   linewidth=1.2, label=f"{labels['retry_success']}, analytic model")
    for panel in (ax, right):
        _duration_axis(panel, observed[delay_column])
        panel.set_xlabel("delay between reading the version and editing (log scale)")
        panel.yaxis.set_major_formatter(SHARE)
        panel.set_ylim(0, 1.02)
    ax.set_ylabel("edits whose first try fails (% of edits)")
    right.set_ylabel("retries that succeed (% of retried edits)")
    ax.set_title("first try: conflicts and gone articles")
    few = int((retries["trials"] < min_retries).sum())
    right.set_title("retries after a conflict (n: retries over all seeds)"
                    + (f"\n{few} shorter delays with fewer than {min_retries} retries not drawn" if few else ""),
                    fontsize=10)
    _finish(fig, caption, "Edits with a stale expected_version", legend_below=2)
    for _, row in backed.iterrows():
        place_label(right, f"n={row['trials']:,.0f}", (row[delay_column], row["value"]), COLOURS["retry_success"])
    return fig


# -- (f) event retention ---------------------------------------------------------------


#: Markers of the re-read reference lines, one per check interval (their colours are the
#: poll lines'; the markers tell dotted lines of near colours apart).
_REREAD_MARKERS = ("x", "^", "s", "D", "v", "P")


def retention_cost(
    observed: pd.DataFrame,
    retention_column: str,
    interval_column: str,
    caption: str,
    analytic: pd.DataFrame | None = None,
    reread: pd.DataFrame | None = None,
    poll: str = "",
) -> Figure:
    """Poll cost per check (left) and the share of polls finding the cursor expired
    (right) against the retention window, one line per check interval.

    Args:
        observed: summary rows of ``calls_per_check`` (of ``poll``) and
            ``cursor_expired_rate`` with the two key columns.
        analytic: columns ``retention_column``, ``interval_column``,
            ``<poll>_calls``, ``cursor_expired_rate``.
        reread: summary rows of ``calls_per_check`` for re-read (drawn for reference).
        caption: the caption line under the figure (names the config that made it).
        retention_column: the column holding the event log's retention window (seconds).
        interval_column: the column holding the check interval (seconds), one line each.
        poll: the name of the strategy that follows the event log.
    """
    fig, axes = _figure(ncols=2, width=10.0, height=5.2)
    finite = observed[retention_column].dropna()
    keep_all_x = float(finite.max()) * 3 if len(finite) else 1.0
    observed = observed.assign(**{retention_column: observed[retention_column].fillna(keep_all_x)})
    if analytic is not None:
        analytic = analytic.assign(
            **{retention_column: analytic[retention_column].fillna(keep_all_x)}
        )
    intervals = sorted(observed[interval_column].unique())
    cmap = plt.get_cmap("viridis")
    colours = {iv: cmap(i / max(1, len(intervals) - 1) * 0.85) for i, iv in enumerate(intervals)}
    for ax, (metric, strategy), model_column in (
        (axes[0, 0], ("calls_per_check", poll), f"{poll}_calls"),
        (axes[0, 1], ("cursor_expired_rate", ""), "cursor_expired_rate"),
    ):
        for interval in intervals:
            rows = _metric(observed, metric, strategy)
            rows = rows[rows[interval_column] == interval]
            label = f"check every {_duration(interval)}"
            _band(
                ax,
                rows[retention_column],
                rows["value"],
                rows["ci_low"],
                rows["ci_high"],
                colours[interval],
                label,
                share=metric == "cursor_expired_rate",
            )
            if analytic is not None:
                line = analytic[analytic[interval_column] == interval].sort_values(retention_column)
                ax.plot(
                    line[retention_column],
                    line[model_column],
                    color=colours[interval],
                    linestyle="--",
                    linewidth=1.1,
                )
        _duration_axis(ax, finite if len(finite) else observed[retention_column])
        if len(finite) < len(observed):
            ax.set_xticks([*ax.get_xticks(), keep_all_x])
            ax.xaxis.set_major_formatter(_delay_formatter(keep_all_x))
            ax.axvspan(float(finite.max()) * 1.7, keep_all_x * 1.3, color="#eeeeee", zorder=0,
                       label="grey: no retention limit (every event kept)")
        ax.set_xlim(None, keep_all_x * 1.3)
        ax.set_xlabel("event retention window (log scale)")
    if reread is not None and len(reread):
        xs = np.sort(observed[retention_column].unique())
        for interval, marker in zip(intervals, _REREAD_MARKERS * len(intervals), strict=False):
            level = reread[reread[interval_column] == interval]["value"].mean()
            axes[0, 0].plot(
                xs, np.full(len(xs), level), color=colours[interval], linestyle=":", linewidth=1.1,
                marker=marker, markersize=6, fillstyle="none",
                label=f"re-read strategy, check every {_duration(interval)}",
            )
    if analytic is not None:
        axes[0, 0].plot([], [], **ANALYTIC_STYLE, label="analytic model")
    axes[0, 0].set_ylabel("tool calls per check (log scale)")
    _plain_log_y(axes[0, 0])
    axes[0, 1].set_ylabel("polls whose cursor had expired (%)")
    axes[0, 1].yaxis.set_major_formatter(SHARE)
    axes[0, 1].set_ylim(0, 1.02)
    axes[0, 0].set_title("poll cost per check (95% CI)")
    axes[0, 1].set_title("cursor expired (95% CI)")
    return _finish(
        fig,
        caption,
        "What a too-short event history costs the poll strategy",
        legend_below=4,
    )


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
        color=COLOURS["zipf"],
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


def check_frontier(
    observed: pd.DataFrame,
    analytic: pd.DataFrame | None,
    caption: str,
    interval_column: str = "checks.interval_s",
    volume_column: str = "saves.count",
    strategies: Sequence[Strategy] | None = None,
) -> Figure:
    """Tool calls per hour (x, log) against mean detection latency (top) and stale exposure
    (bottom), one curve per strategy across check intervals, one column per save volume.

    Args:
        observed: per volume, strategy and interval: ``calls``, ``latency`` and ``exposure``,
            each with ``_low`` and ``_high`` (95% interval), and ``pareto_latency``,
            ``pareto_exposure`` (booleans).
        analytic: :func:`kbsim.model.analytic.predict_check_policy` rows with ``volume_column``.
        caption: the caption line under the figure (names the config that made it).
        interval_column: the column holding the check interval (seconds).
        volume_column: the column holding the saves a day, one column of panels each.
        strategies: the strategies drawn, in order (default: the study's three).
    """
    strategies = default_strategies() if strategies is None else strategies
    last_exact = [strategy.name for strategy in strategies if strategy.exact][-1:]
    volumes = sorted(observed[volume_column].unique())
    fig, axes = _figure(ncols=len(volumes), nrows=2, width=5.0 * len(volumes) + 0.6, height=8.6)
    pending = []  # (axes, text, point, colour): placed once the layout is final
    panels = (
        ("latency", "detection_latency_s", "mean detection latency (log scale)"),
        ("exposure", "stale_exposure", "stale exposure: citation-time stale, unflagged (log, %)"),
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
                    elinewidth=0.7, label=f"{strategy.label} (simulated, 95% CI)",
                )
                best = rows[rows[f"pareto_{short}"].astype(bool)]
                ax.scatter(
                    best["calls"], best[short], s=95, facecolors="none", edgecolors="black", linewidths=1.1,
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
            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
            ax.set_xlabel("tool calls per hour (log scale)")
            ax.set_ylabel(ylabel)
            if short == "latency":
                _log_duration_y(ax, mine[[short, f"{short}_low", f"{short}_high"]].to_numpy().ravel())
                ax.set_title(f"{volume:,.0f} saves per day")
            else:
                ax.set_yscale("log")
                ax.yaxis.set_major_formatter(_LOG_SHARE)
    _finish(fig, caption, "Checking citations: cost per hour against what stays unnoticed", legend_below=3)
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


def place_label(ax, text: str, point, colour) -> None:
    """Annotate ``point`` with ``text`` at the nearest offset where the label covers no line,
    marker or other label and stays inside the axes; a leader line joins a far label to its
    point. Where no offset is free the label is left out (a label on a line is worse than
    none: the caption gives the range). Call it once the layout is final (after :func:`_finish`)."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    obstacles = _obstacles(ax, renderer)
    placed = [a.get_window_extent(renderer) for a in ax.texts if a.get_gid() == "kbsim-label"]
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
        box = label.get_window_extent(renderer).padded(1.0)
        hits = sum(_covers(box, o) for o in obstacles) + sum(box.overlaps(b) for b in placed)
        hits += 0 if inside.contains(box.x0, box.y0) and inside.contains(box.x1, box.y1) else 100
        if hits == 0:
            return
        label.remove()


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


CONFLICT_COLOURS = {0.01: "#2ca02c", 0.05: "#ff7f0e", 0.10: "#d62728"}


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
    fig, axes = _figure(width=7.6, height=5.4)
    ax = axes[0, 0]
    for target in sorted(observed["target"].unique()):
        colour = CONFLICT_COLOURS.get(round(float(target), 4), None)
        rows = observed[observed["target"] == target].sort_values(volume_column)
        value = rows["delay_s"].fillna(rows["shortest"]).to_numpy(float)
        low = rows["low"].fillna(rows["shortest"]).to_numpy(float)
        high = rows["high"].fillna(rows["shortest"]).to_numpy(float)
        ax.errorbar(
            rows[volume_column], value, yerr=np.vstack([value - low, high - value]).clip(0), fmt="o-",
            color=colour, markersize=4, linewidth=1.4, elinewidth=0.8, capsize=2,
            label=f"conflicts under {100 * target:g}% (simulated, 95% CI)",
        )
        if analytic is not None:
            line = analytic[np.isclose(analytic["target"], target)].sort_values(volume_column)
            ax.plot(
                line[volume_column], line["delay_s"], color=colour, linestyle="--", linewidth=1.1,
                label=f"conflicts under {100 * target:g}% (analytic)",
            )
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}"))
    ax.set_xlabel("saves by people per day (log scale)")
    ax.set_ylabel("largest delay between read and edit (log scale)")
    _log_duration_y(ax, np.concatenate([observed["delay_s"].dropna(), observed["shortest"], observed["longest"]]))
    return _finish(fig, caption, "How long an edit may wait for approval", legend_below=2)


FIT_COLOURS = {"saves": "#1f77b4", "questions": "#d62728"}


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
        colour = FIT_COLOURS.get(what, "#1f77b4")
        ax.fill_between(rows["rank"], rows["low"].clip(lower=0.5), rows["high"].clip(lower=0.5), color="black",
                        alpha=0.12, linewidth=0, label="logs drawn from the fitted law (5-95%)")
        ax.plot(rows["rank"], rows["expected"].clip(lower=0.5), color="black", linewidth=1.2,
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
        colour = FIT_COLOURS.get(what, "#1f77b4")
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
_HARM_COLOURS = ("#d62728", "#1f77b4")


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
        ax.axhline(0.0, color="black", linewidth=0.8)
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
    fig, axes = _figure(nrows=max(len(shown), 1), width=7.2, height=0.95 * max(len(shown), 1) + 1.3)
    for ax, effect in zip(axes[:, 0], shown.itertuples(index=False), strict=False):
        row = rows[effect.row]
        low, high = effect.value - effect.ci_low, effect.ci_high - effect.value
        colour = "#d62728" if effect.value > 0 else "#1f77b4"
        ax.errorbar([effect.value], [0], xerr=[[low], [high]], fmt="o", color=colour, capsize=4, markersize=6,
                    label="effect of turning it off (point, paired 95% interval)")
        ax.axvline(0.0, color="black", linewidth=0.8, label="no effect")
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
