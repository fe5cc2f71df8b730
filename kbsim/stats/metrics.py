"""Every metric of a run: defined once (:data:`METRICS`), computed once (:func:`run_metrics`).

A run's metrics are long, tidy rows: ``metric`` (the name in :data:`METRICS`),
its structure as columns (``at_s``: the time it is measured at, NaN when it
is not measured at a time; ``at_end``: whether that time is the end of the day
(or the day's last check, for what checks measure); ``strategy``: the name of one
of the day's strategies (:mod:`kbsim.sim.strategies`) or "";
``subset``: a part of the citations, "" for all of them), then ``value``,
``successes`` and ``trials``. ``name`` is a readable label built from those columns
(``stale_citation_share@end``, ``calls_per_check[poll]``,
``title_recall{retitled}``) for the terminal and for ``--precision``; nothing
parses it back.

How each kind is summarised over seeds is in :mod:`kbsim.stats.intervals`;
the definitions in words are in ``docs/model.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kbsim.params import DayParams
from kbsim.sim.strategies import Strategy, StrategyError, resolve, strategy_named
from kbsim.sim.tables import DAY_TABLES, key_columns

#: Staleness causes at a check, in the order the title check's recall is split by.
CAUSES = ("gone", "retitled", "content")
#: The columns of a run's metric rows, in order.
COLUMNS = ("metric", "at_s", "at_end", "strategy", "subset", "name", "value", "successes", "trials")


@dataclass(frozen=True)
class Metric:
    """What a metric means and how it is summarised.

    Attributes:
        name: the ``metric`` column's value.
        kind: ``proportion`` / ``ratio`` / ``mean`` / ``invariant`` (kbsim.stats.intervals).
        label: a phrase a reader understands.
        unit: ``share``, ``count``, ``bytes`` or ``seconds``: how to print it.
        min_seeds: the fewest seeds with which its 95% interval was measured to cover
            at least 93% (validation/COVERAGE.md: 2 for every metric measured there);
            a metric not measured there keeps 5, the seeds the study's claims rest on.
            Fewer seeds print a warning.
    """

    name: str
    kind: str
    label: str
    unit: str
    min_seeds: int = 5


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric(
            "stale_citation_share",
            "proportion",
            "citations given by then and stale then (every age mixed)",
            "share",
            min_seeds=2,
        ),
        Metric("stale_answer_share", "proportion", "answers with a stale citation", "share", min_seeds=2),
        Metric("gone_citation_share", "proportion", "citations whose article was unpublished", "share", min_seeds=2),
        Metric(
            "title_recall",
            "proportion",
            "stale citations at the last check that the title check flags, each counted once",
            "share",
            min_seeds=2,
        ),
        Metric("calls_per_check", "mean", "tool calls per check", "count", min_seeds=2),
        Metric("bytes_per_check", "mean", "result bytes per check", "bytes"),
        Metric("calls_per_hour", "mean", "tool calls per hour of the day", "count"),
        Metric("bytes_per_hour", "mean", "result bytes per hour of the day", "bytes"),
        Metric("cursor_expired_rate", "proportion", "polls that found their cursor expired", "share"),
        Metric(
            "detected_share",
            "proportion",
            "citations stale by the last check that some check flagged",
            "share",
        ),
        Metric(
            "detection_latency_s",
            "ratio",
            "mean time from going stale to the first check that flags it (detected citations)",
            "seconds",
            min_seeds=2,
        ),
        Metric(
            "detection_latency_p90_s",
            "mean",
            "90th percentile of a day's detection latencies (detected citations)",
            "seconds",
        ),
        Metric(
            "stale_exposure",
            "ratio",
            "citation-time held stale and not yet flagged, as a share of citation-time held",
            "share",
            min_seeds=2,
        ),
        Metric("edits_made", "mean", "agent edits in the day", "count"),
        Metric("rejection_rate", "proportion", "edits rejected as a version conflict", "share", min_seeds=2),
        Metric("gone_rate", "proportion", "edits that found the article unpublished", "share"),
        Metric("retry_success", "proportion", "retries after a conflict that applied", "share", min_seeds=2),
        Metric(
            "lost_update_share",
            "proportion",
            "people's saves silently replaced by an agent edit built on an older read",
            "share",
        ),
        Metric("duplicate_write_share", "proportion", "intended edits the store applied more than once", "share"),
        Metric(
            "lost_updates_per_edit",
            "ratio",
            "people's saves silently replaced, per agent edit (issue 37: the rate's true denominator)",
            "count",
        ),
        Metric(
            "duplicates_per_retried_edit",
            "proportion",
            "edits applied more than once, of the edits resent after a lost request or reply",
            "share",
        ),
        Metric(
            "wrong_landed_per_edit",
            "proportion",
            "agent edits that were wrong and that the store applied (the approval model)",
            "share",
        ),
        Metric(
            "draft_answer_share",
            "proportion",
            "answers citing a pending draft: text no person had published when it was cited",
            "share",
        ),
        Metric("conflict_writer_share", "proportion", "conflicts whose newer version this writer wrote", "share"),
        Metric("retry_calls_per_hour", "mean", "tool requests resent after a lost request or reply", "count"),
        Metric("retry_bytes_per_hour", "mean", "bytes of replies lost on the wire", "bytes"),
        Metric(
            "gone_flagged_share",
            "proportion",
            "citations gone by the last check that an exact strategy flags gone",
            "share",
        ),
        Metric(
            "gone_as_changed_share",
            "proportion",
            "citations gone by the last check that the poll flags changed (a version seen before the unpublish)",
            "share",
        ),
        Metric(
            "text_missed_share",
            "proportion",
            "citations stale by version at a check that comparing text misses (the cited text restored)",
            "share",
        ),
        Metric("cited_text_bytes", "mean", "cited text an agent without versions keeps to compare with", "bytes"),
        Metric(
            "shared_consumer_saving",
            "mean",
            "poll calls per check the agents' own cursors make beyond one shared consumer",
            "count",
        ),
        Metric(
            "replay_success",
            "invariant",
            "replays of an applied edit that returned its first result and wrote nothing",
            "share",
        ),
    )
}


def metric_name(metric: str, at_s: float, at_end: bool, strategy: str, subset: str) -> str:
    """The readable label of one metric row: ``metric@end``, ``metric@h3``, ``[strategy]``, ``{subset}``."""
    name = metric
    if at_end:
        name += "@end"
    elif not math.isnan(at_s):
        name += f"@h{at_s / 3600:g}"
    if strategy:
        name += f"[{strategy}]"
    if subset:
        name += "{" + subset + "}"
    return name


def metric_names(params: DayParams) -> set[str]:
    """The ``name`` of every row :func:`run_metrics` can give a day of ``params``: what
    ``--precision`` may name, known before anything runs (a row may still be missing from a
    run that had, say, no stale citation to recall).

    The rows follow what the day is: its length (the hours measured), the citations an
    answer keeps, whether the agent edits, and the design switches that make extra tables
    (several agents: a row per agent; citations without versions: the text check's rows).
    """
    day_s, edits = params.day_s, params.edit.enabled
    names = set()
    for t in measurement_times(day_s):
        at_end = math.isclose(t, day_s)
        names |= {metric_name(m, t, at_end, "", "") for m in ("stale_citation_share", "stale_answer_share")}
    names |= {metric_name("stale_citation_share", day_s, True, "", f"position {k}")
              for k in range(1, params.questions.citations_per_answer + 1)}
    strategies = resolve(params.checks.strategies)
    exact = [strategy.name for strategy in strategies if strategy.exact]
    log_readers = [strategy.name for strategy in strategies if strategy.reads_event_log]
    names |= {metric_name("gone_citation_share", day_s, True, "", ""), "edits_made"}
    if log_readers:
        names.add("cursor_expired_rate")
    for strategy in strategies:
        if strategy.recall_metric is not None:
            names |= {metric_name(strategy.recall_metric, day_s, True, "", subset) for subset in ("", *CAUSES)}
        names |= {metric_name(m, math.nan, False, strategy.name, "") for m in (
            "calls_per_check", "bytes_per_check", "calls_per_hour", "bytes_per_hour",
            "detection_latency_s", "detection_latency_p90_s", "stale_exposure")}
        names.add(metric_name("detected_share", day_s, True, strategy.name, ""))
    if edits:
        names |= {"rejection_rate", "gone_rate", "retry_success", "replay_success"}
    # what each design choice buys (_design_choices): on every day, and with edits
    names |= {"retry_calls_per_hour", "retry_bytes_per_hour"}
    names |= {metric_name("gone_as_changed_share", math.nan, False, s, "") for s in log_readers}
    names |= {metric_name("gone_flagged_share", math.nan, False, s, "") for s in exact}
    if edits:
        names |= {"lost_update_share", "duplicate_write_share", "lost_updates_per_edit"}
    if not params.uses_design_switches:
        return names
    names.add("draft_answer_share")
    if edits:
        names.add("duplicates_per_retried_edit")
    if edits and params.review.wrong_share > 0:
        names.add("wrong_landed_per_edit")
    # a switched day's extra tables (kbsim.sim.tables.SWITCHED_TABLES): intents, text_checks, agent_checks
    agents = [f"agent {agent}" for agent in range(params.agents.count)] if params.agents.count > 1 else []
    if edits:
        names |= {metric_name("conflict_writer_share", math.nan, False, "", writer)
                  for writer in ("people", "agents", "self")}
        names |= {metric_name(m, math.nan, False, "", agent) for agent in agents
                  for m in ("rejection_rate", "duplicate_write_share", "edits_made", "lost_update_share")}
    if not params.citation.carries_version:
        names |= {metric_name("text_missed_share", math.nan, False, s, "") for s in exact}
        names.add("cited_text_bytes")
    if agents:
        if log_readers:
            names.add("shared_consumer_saving")
        names |= {metric_name(m, math.nan, False, s, agent) for agent in agents for s in exact
                  for m in ("calls_per_check", "bytes_per_check")}
    return names


class _Rows:
    """Collects a run's metric rows."""

    def __init__(self, day_s: float) -> None:
        self.day_s = day_s
        self.rows: list[tuple] = []

    def add(
        self,
        metric: str,
        value,
        successes=math.nan,
        trials=math.nan,
        *,
        at_s=math.nan,
        at_end=False,
        strategy="",
        subset="",
    ):
        at_end = bool(at_end or (not math.isnan(at_s) and math.isclose(at_s, self.day_s)))
        name = metric_name(metric, at_s, at_end, strategy, subset)
        self.rows.append(
            (metric, float(at_s), at_end, strategy, subset, name, float(value), float(successes), float(trials))
        )

    def share(self, metric: str, successes, trials, **structure) -> None:
        self.add(metric, successes / trials if trials else math.nan, successes, trials, **structure)

    def frame(self) -> pd.DataFrame:
        frame = pd.DataFrame(self.rows, columns=list(COLUMNS))
        return frame.astype({"metric": "str", "strategy": "str", "subset": "str", "name": "str"})


def measurement_times(day_s: float) -> list[float]:
    """Each whole hour of the day, then the end of the day (once, if it falls on an hour)."""
    hours = [h * 3600.0 for h in range(1, int(math.floor(day_s / 3600.0 + 1e-9)) + 1)]
    if not hours or not math.isclose(hours[-1], day_s):
        hours.append(float(day_s))
    return hours


def run_metrics(
    tables: Mapping[str, pd.DataFrame], day_s: float | None = None, strategies: Sequence[Strategy] | None = None
) -> pd.DataFrame:
    """Every metric of one run, as tidy rows (columns :data:`COLUMNS`).

    ``tables`` are one day's tables (``run_day``'s output). ``day_s`` is the day's
    length; it defaults to the time of the last check. ``strategies`` are the day's
    (what each is: exact, a reader of the event log, ...); None: those its checks table
    names, resolved by name where they are built in (another is measured as a strategy
    that is none of those).
    """
    citations, checks = tables["citations"], tables["checks"]
    detections = tables.get("detections")
    edits = tables["edits"]
    if day_s is None:
        day_s = float(checks["time_s"].max()) if len(checks) else 0.0
    known = _day_strategies(checks, strategies)
    rows = _Rows(day_s)
    _staleness(rows, citations, day_s)
    if len(checks):
        _check_cost(rows, checks, day_s, known)
    if detections is not None and len(detections):
        _detection(rows, citations, detections, day_s, known)
    _edits(rows, edits)
    _design_choices(rows, tables, day_s, known)
    return rows.frame()


def _day_strategies(checks: pd.DataFrame, strategies: Sequence[Strategy] | None) -> dict[str, Strategy | None]:
    """The day's strategies by name: those given, else those the checks table names (None
    for a name that is no built-in strategy)."""
    if strategies is not None:
        return {strategy.name: strategy for strategy in strategies}
    known: dict[str, Strategy | None] = {}
    for name in pd.unique(checks["strategy"]) if len(checks) else ():
        try:
            known[str(name)] = strategy_named(str(name))
        except StrategyError:
            known[str(name)] = None
    return known


def _having(known: dict[str, Strategy | None], flag: str) -> list[str]:
    """The names of the day's strategies whose attribute ``flag`` is true, in the day's order."""
    return [name for name, strategy in known.items() if strategy is not None and getattr(strategy, flag)]


def _staleness(rows: _Rows, citations: pd.DataFrame, day_s: float) -> None:
    asked = citations["asked_s"].to_numpy(dtype=float)
    stale_at = citations["first_stale_s"].to_numpy(dtype=float)
    # each citation's answer as 0..n_answers-1, to count per answer with bincount
    answer_ids, answer = np.unique(citations["answer_id"].to_numpy(), return_inverse=True)
    for t in measurement_times(day_s):
        held = asked <= t
        stale = held & (stale_at <= t)
        rows.share("stale_citation_share", stale.sum(), held.sum(), at_s=t)
        answers_given = np.bincount(answer, weights=held, minlength=len(answer_ids)) > 0
        answers_stale = np.bincount(answer, weights=stale, minlength=len(answer_ids)) > 0
        rows.share("stale_answer_share", answers_stale.sum(), answers_given.sum(), at_s=t)
    end_stale = stale_at <= day_s
    positions = citations["position"].to_numpy()
    for position in sorted(set(positions.tolist())):
        mine = positions == position
        rows.share(
            "stale_citation_share", (end_stale & mine).sum(), mine.sum(), at_s=day_s, subset=f"position {position + 1}"
        )
    gone = citations["gone_s"].to_numpy(dtype=float) <= day_s
    rows.share("gone_citation_share", gone.sum(), len(gone), at_s=day_s)


def _check_cost(rows: _Rows, checks: pd.DataFrame, day_s: float, known: dict[str, Strategy | None]) -> None:
    by_strategy = {name: group for name, group in checks.groupby("strategy", sort=False)}
    hours = day_s / 3600.0
    for strategy in known:
        mine = by_strategy.get(strategy)
        if mine is None:
            continue
        rows.add("calls_per_check", mine["calls"].mean(), strategy=strategy)
        rows.add("bytes_per_check", mine["bytes"].mean(), strategy=strategy)
        rows.add("calls_per_hour", mine["calls"].sum() / hours, strategy=strategy)
        rows.add("bytes_per_hour", mine["bytes"].sum() / hours, strategy=strategy)
    readers = [by_strategy[name] for name in _having(known, "reads_event_log") if name in by_strategy]
    if readers:  # the cursor of the first strategy that follows the event log
        rows.share("cursor_expired_rate", readers[0]["cursor_expired"].sum(), len(readers[0]))


def _detection(
    rows: _Rows, citations: pd.DataFrame, detections: pd.DataFrame, day_s: float, known: dict[str, Strategy | None]
) -> None:
    """Recall by cause (of a strategy that has a ``recall_metric``: the title check's),
    detection latency and stale exposure, per strategy.

    Citations and detections are aligned by (answer_id, position): the day writes
    a strategy's detections in citation order.
    """
    last_check_s = float(detections["last_check_s"].iloc[0])
    asked = citations["asked_s"].to_numpy(dtype=float)
    stale_at = citations["first_stale_s"].to_numpy(dtype=float)
    held_at_last = asked <= last_check_s
    stale_by_last = held_at_last & (stale_at <= last_check_s)
    gone_by_last = citations["gone_s"].to_numpy(dtype=float) <= last_check_s
    retitled_by_last = citations["retitled_s"].to_numpy(dtype=float) <= last_check_s
    cause = np.where(gone_by_last, "gone", np.where(retitled_by_last, "retitled", "content"))
    held_s = np.clip(day_s - asked, 0.0, None)
    n = len(citations)
    for strategy, group in detections.groupby("strategy", sort=False):
        if len(group) != n:
            raise ValueError(f"detections[{strategy}]: {len(group)} rows for {n} citations")
        flagged_s = group["first_flagged_s"].to_numpy(dtype=float)
        recall = getattr(known.get(strategy), "recall_metric", None)
        if recall is not None:
            flagged_last = group["flagged_at_last_check"].to_numpy(dtype=bool)
            hit = stale_by_last & flagged_last
            rows.share(recall, hit.sum(), stale_by_last.sum(), at_s=last_check_s, at_end=True)
            for reason in CAUSES:
                mine = stale_by_last & (cause == reason)
                rows.share(
                    recall, (hit & mine).sum(), mine.sum(), at_s=last_check_s, at_end=True, subset=reason
                )
        detected = stale_by_last & (flagged_s <= last_check_s)
        rows.share(
            "detected_share", detected.sum(), stale_by_last.sum(), at_s=last_check_s, at_end=True, strategy=strategy
        )
        latency = flagged_s[detected] - stale_at[detected]
        rows.add(
            "detection_latency_s",
            latency.mean() if len(latency) else math.nan,
            latency.sum(),
            len(latency),
            strategy=strategy,
        )
        rows.add("detection_latency_p90_s", np.quantile(latency, 0.9) if len(latency) else math.nan, strategy=strategy)
        # stale and not yet flagged: from going stale until flagged (or the end of the day)
        until = np.minimum(np.where(np.isnan(flagged_s), day_s, flagged_s), day_s)
        exposed = np.clip(until - np.where(np.isnan(stale_at), day_s, stale_at), 0.0, None)
        rows.add(
            "stale_exposure",
            exposed.sum() / held_s.sum() if held_s.sum() else math.nan,
            exposed.sum(),
            held_s.sum(),
            strategy=strategy,
        )


def _edits(rows: _Rows, edits: pd.DataFrame) -> None:
    rows.add("edits_made", len(edits))
    if not len(edits):
        return
    n = len(edits)
    outcome = edits["outcome"]
    rows.share("rejection_rate", (outcome == "conflict").sum(), n)
    rows.share("gone_rate", (outcome == "gone").sum(), n)
    retried = edits[edits["retries"] > 0]
    rows.share("retry_success", (retried["retry_outcome"] == "applied").sum(), len(retried))
    applied = edits["replay_ok"].notna()
    rows.share("replay_success", (edits.loc[applied, "replay_ok"] == True).sum(), applied.sum())  # noqa: E712


def _design_choices(
    rows: _Rows, tables: Mapping[str, pd.DataFrame], day_s: float, known: dict[str, Strategy | None]
) -> None:
    """What each piece of the write-up's advice buys (issue 27): lost updates, duplicate
    writes, conflicts by writer, the transport's retries, gone against changed, and what
    checking without versions and with several cursors costs.

    A day at the defaults has no ``intents`` table: its edits ran with compare-and-swap and
    idempotency keys over a perfect wire, where the day checks at every step that no
    update is lost and nothing applied twice, so both shares are 0 of its trials.
    """
    edits, saves = tables["edits"], tables["saves"]
    intents = tables.get("intents")
    if len(edits):
        people = saves[(saves["actor"] == "people") & saves["kind"].isin(["content", "content_and_title"])]
        lost = 0 if intents is None else int(intents["people_overwritten"].sum())
        dup = 0 if intents is None else int((intents["applications"] > 1).sum())
        rows.share("lost_update_share", lost, len(people))
        rows.share("duplicate_write_share", dup, len(edits))
        rows.share("lost_updates_per_edit", lost, len(edits))
    if intents is not None and len(intents):
        resent = intents["sends"] > 1
        rows.share("duplicates_per_retried_edit", (resent & (intents["applications"] > 1)).sum(), resent.sum())
    reviews = tables.get("reviews")
    if reviews is not None and len(reviews):
        rows.share("wrong_landed_per_edit", (reviews["wrong"] & reviews["landed"]).sum(), len(reviews))
    if tables.get("transport") is not None:  # a switched day: what answering from drafts exposed
        citations = tables["citations"]
        drafted = tables.get("draft_citations")
        cited_drafts = 0 if drafted is None else drafted["answer_id"].nunique()
        rows.share("draft_answer_share", cited_drafts, citations["answer_id"].nunique())
    if intents is not None and len(intents):
        writers = intents[["conflicts_people", "conflicts_agents", "conflicts_self"]].sum()
        for writer, column in (("people", "conflicts_people"), ("agents", "conflicts_agents"),
                               ("self", "conflicts_self")):
            rows.share("conflict_writer_share", writers[column], writers.sum(), subset=writer)
        if intents["agent"].nunique() > 1:
            for agent, mine in intents.groupby("agent"):
                subset = f"agent {agent}"
                rows.share("rejection_rate", (mine["outcome"] == "conflict").sum(), len(mine), subset=subset)
                rows.share("duplicate_write_share", (mine["applications"] > 1).sum(), len(mine), subset=subset)
                rows.add("edits_made", len(mine), subset=subset)
                rows.share("lost_update_share", mine["people_overwritten"].sum(), len(people), subset=subset)
    transport = tables.get("transport")
    hours = day_s / 3600.0 if day_s else math.nan
    resent = 0.0 if transport is None else float((transport["sends"] - transport["calls"]).sum())
    lost_bytes = 0.0 if transport is None else float(transport["retry_bytes"].sum())
    rows.add("retry_calls_per_hour", resent / hours)
    rows.add("retry_bytes_per_hour", lost_bytes / hours)
    checks = tables["checks"]
    if len(checks):
        last = checks[checks["check_index"] == checks["check_index"].max()]
        exact = set(_having(known, "exact"))
        log_readers = set(_having(known, "reads_event_log"))
        for record in last.itertuples(index=False):
            # only an exact strategy's flags are a subset of the truly stale: the title check can
            # flag more citations "gone" than are gone (a retitled article it no longer finds)
            if record.strategy in exact:
                rows.share("gone_flagged_share", record.flagged_gone, record.true_gone, strategy=record.strategy)
            if record.strategy in log_readers:  # what an unpublish without an event costs it
                as_changed = max(record.flagged_changed - record.true_changed, 0)
                rows.share("gone_as_changed_share", as_changed, record.true_gone, strategy=record.strategy)
    text = tables.get("text_checks")
    if text is not None and len(text):
        for strategy, mine in text.groupby("strategy", sort=False):
            rows.share("text_missed_share", mine["missed_restored"].sum(), mine["true_stale"].sum(), strategy=strategy)
        rows.add("cited_text_bytes", text["kept_bytes"].iloc[-1])
    own = tables.get("agent_checks")
    if own is not None and len(own) and len(checks):
        consumer = _having(known, "reads_event_log")[:1]  # the first strategy following the event log
        if consumer:
            own_polls = own[own["strategy"] == consumer[0]].groupby("check_index")["calls"].sum()
            shared = checks[checks["strategy"] == consumer[0]].set_index("check_index")["calls"]
            rows.add("shared_consumer_saving", float((own_polls - shared.reindex(own_polls.index)).mean()))
        for agent, mine in own.groupby("agent"):
            for strategy, group in mine.groupby("strategy"):
                rows.add("calls_per_check", group["calls"].mean(), strategy=strategy, subset=f"agent {agent}")
                rows.add("bytes_per_check", group["bytes"].mean(), strategy=strategy, subset=f"agent {agent}")


def metrics_by_run(
    tables: Mapping[str, pd.DataFrame], day_s: float | Mapping[str, float] | None = None
) -> pd.DataFrame:
    """:func:`run_metrics` of every run in stacked result tables, with the run keys on each row.

    For tables stacked by hand (``kbsim.report.frames.day_tables``); the runner stores each
    run's rows when it computes the run, and those are the ones the study reads.
    ``day_s`` may map a scenario to its day length.
    """
    frames = [t for name, t in tables.items() if name in DAY_TABLES and len(t)]
    if not frames:
        raise ValueError("no rows in any result table")
    keys: list[str] = []
    for table in frames:
        keys += [c for c in key_columns(table) if c not in keys]
    runs = pd.concat([t[[c for c in [*keys, "seed", "run_id"] if c in t]] for t in frames], ignore_index=True)
    runs = runs.drop_duplicates("run_id").reset_index(drop=True)
    split = {name: dict(tuple(t.groupby("run_id", sort=False))) for name, t in tables.items() if name in DAY_TABLES}
    out = []
    for run in runs.to_dict("records"):
        mine = {name: groups.get(run["run_id"], tables[name].iloc[0:0]) for name, groups in split.items()}
        length = day_s.get(run.get("scenario")) if isinstance(day_s, Mapping) else day_s
        frame = run_metrics(mine, length)
        for column in [*keys, "seed", "run_id"]:
            frame.insert(len(frame.columns) - len(COLUMNS), column, run.get(column))
        out.append(frame)
    return pd.concat(out, ignore_index=True)
