"""One day driven in real time against a live server: the simulated day's processes on a
:class:`PacedEnvironment` (``simpy.rt``), over :class:`~kbsim.drive.remote.RemoteStore`.

:func:`drive_day` connects, lists and checks the tools, reads a sample of the corpus,
makes one probe call per tool, runs the day, and writes its history
(:mod:`kbsim.drive.history`) with the day's tables, the in-process twin's tables
(``model/``) and ``drive.json`` (lateness, the plan, what the day ran without). Any stop
(Ctrl-C, a server that stops answering, a speed the server cannot keep up with) keeps the
history so far, marked partial (``complete: false``, ``stopped_because``).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd
import simpy
import simpy.rt
from simpy.core import EmptySchedule

from kbsim.drive.client import DEFAULT_CALL_TIMEOUT_S, DriveError, McpConnection, ServerAddress, TransportFailure
from kbsim.drive.history import CallRecorder, history_meta, write_history
from kbsim.drive.remote import EDIT, POLL, READ, SEARCH, FieldMap, Ledger, RemoteStore, check_corpus, check_tools
from kbsim.drive.remote import sample_ids as corpus_sample
from kbsim.files import atomic_write_bytes, atomic_write_text
from kbsim.params import DayParams
from kbsim.sim.checks import StalenessMismatch
from kbsim.sim.day import agent_edits, open_day, prepared, simulate_day
from kbsim.sim.processes import ReplayError, agent_edit, asker, checker, editor
from kbsim.sim.records import DayLog
from kbsim.sim.replay import activity_sources
from kbsim.sim.tables import tabulate
from kbsim.sim.world import KB_ID, starting_knowledge_base
from kbsim.store import Store, ToolError

__all__ = [
    "DEFAULT_MAX_LAG_S",
    "DEFAULT_MAX_LATE",
    "DriveOptions",
    "DriveResult",
    "PacedEnvironment",
    "TooLate",
    "day_plan",
    "drive_day",
    "driven_params",
]

#: An event is late when it starts more than this many wall seconds after its due time: half a
#: minute (half an hour of the day at --speed 60), above the burst of a check's calls (about 300 on
#: the reference day, measured up to 14 s on the shared 2-core machine).
DEFAULT_MAX_LAG_S = 30.0
#: The day is refused (``too_late``) after this many late events.
DEFAULT_MAX_LATE = 20
#: Articles of the corpus read and compared before the day starts.
DEFAULT_SAMPLE_ARTICLES = 20
#: The longest single sleep of the paced clock (so Ctrl-C is seen at once).
MAX_SLEEP_S = 0.25
#: A stale version the probe edit passes: a compare-and-swap server refuses it, writing nothing.
PROBE_STALE_VERSION = "1970-01-01T00:00:00.000001Z"


class TooLate(DriveError):
    """The server could not keep up with the day's speed (``stopped_because: too_late``)."""


class PacedEnvironment(simpy.rt.RealtimeEnvironment):
    """SimPy's real-time environment at ``speed`` simulated seconds per wall second,
    measuring how late each event starts instead of raising at the first late one.

    An event is late when it starts more than ``max_lag_s`` wall seconds after its due
    time; after ``max_late`` late events :class:`TooLate` is raised with the measured lag.
    """

    def __init__(self, speed: float, max_lag_s: float = DEFAULT_MAX_LAG_S, max_late: int = DEFAULT_MAX_LATE) -> None:
        super().__init__(initial_time=0.0, factor=1.0 / speed, strict=False)
        self.speed = speed
        self.max_lag_s = max_lag_s
        self.max_late = max_late
        #: ``(simulated seconds, wall seconds late)`` of every event processed
        self.lags: list[tuple[float, float]] = []
        self.late = 0

    def step(self) -> None:
        """Wait for the next event's wall time, note its lag, then process it."""
        evt_time = self.peek()
        if evt_time == math.inf:
            raise EmptySchedule
        due = self.real_start + (evt_time - self.env_start) * self.factor
        while (delta := due - time.monotonic()) > 0:
            time.sleep(min(delta, MAX_SLEEP_S))
        lag = time.monotonic() - due
        self.lags.append((evt_time, lag))
        if lag > self.max_lag_s:
            self.late += 1
            if self.late > self.max_late:
                worst = max(late for _, late in self.lags)
                raise TooLate(
                    f"--speed {self.speed:g}: {self.late} events started more than {self.max_lag_s:g} s late "
                    f"(worst {worst:.1f} s, at simulated {evt_time / 3600:.2f} h): the server cannot keep up; "
                    "lower --speed")
        simpy.Environment.step(self)

    def lateness(self) -> dict[str, float]:
        """The lags measured: events, late ones, median, p99 and worst, in wall seconds."""
        lags = np.array([lag for _, lag in self.lags]) if self.lags else np.zeros(1)
        return {"events": len(self.lags), "late_events": self.late, "max_lag_s": self.max_lag_s,
                "lag_p50_s": float(np.percentile(lags, 50)), "lag_p99_s": float(np.percentile(lags, 99)),
                "lag_max_s": float(lags.max())}


@dataclass(frozen=True)
class DriveOptions:
    """How a day is driven (the command line's options)."""

    speed: float = 60.0
    timeout_s: float = DEFAULT_CALL_TIMEOUT_S
    max_calls_per_second: float | None = None
    max_lag_s: float = DEFAULT_MAX_LAG_S
    max_late: int = DEFAULT_MAX_LATE
    sample_articles: int = DEFAULT_SAMPLE_ARTICLES
    field_map: FieldMap = field(default_factory=FieldMap)
    kb_id: str = KB_ID
    corpus_name: str = "synthetic"


@dataclass
class DriveResult:
    """What a driven day did: where its history is, whether it ran to its end, and why not."""

    folder: Path
    complete: bool
    stopped_because: str | None
    message: str | None
    calls: int
    report: dict[str, Any]


def driven_params(params: DayParams, admin: bool) -> DayParams:
    """The day a server can be driven through: without its admin tools, people's unpublishes
    become content saves (and nothing is published to replace them)."""
    mix = params.saves.mix
    if admin or mix.unpublish == 0:
        return params
    saves = params.saves.model_copy(update={
        "mix": mix.model_copy(update={"content": mix.content + mix.unpublish, "unpublish": 0.0}),
        "replace_unpublished": False})
    return params.model_copy(update={"saves": saves})


def day_plan(params: DayParams, tables: dict[str, pd.DataFrame], speed: float) -> dict[str, Any]:
    """What a driven day will do, from its in-process twin: calls per hour, saves, edits."""
    checks, saves, edits = tables["checks"], tables["saves"], tables["edits"]
    citations = tables["citations"]
    people = saves[saves["actor"] == "people"]
    check_calls = int(checks["calls"].sum())
    answers = int(citations["answer_id"].nunique()) if len(citations) else 0
    writes = people["kind"].isin(["content", "content_and_title"])
    save_calls = 2 * int(writes.sum()) + int((~writes).sum())  # read + edit; one admin call
    ask_calls = answers + len(citations)
    edit_calls = 4 * len(edits)
    total = check_calls + save_calls + ask_calls + edit_calls
    hours = params.day_s / 3600.0
    return {
        "day_hours": hours, "wall_minutes": params.day_s / speed / 60.0,
        "saves": len(people), "saves_by_kind": {str(k): int(v) for k, v in people["kind"].value_counts().items()},
        "questions": answers, "agent_edits": len(edits), "check_calls": check_calls,
        "calls": total, "calls_per_hour": total / hours if hours else float(total),
    }


def labelled(process: Generator, client, actor: str) -> Generator:
    """``process`` (a SimPy generator) run with the agent client's ``actor`` set at each step,
    so its calls are recorded as what the day was doing."""
    value, error = None, None
    while True:
        client.actor, client.polling = actor, False
        try:
            event = process.throw(error) if error is not None else process.send(value)
        except StopIteration as stop:
            return stop.value
        try:
            value, error = (yield event), None
        except BaseException as exc:  # noqa: BLE001 - a failed event is thrown into the process as SimPy would
            value, error = None, exc


def _probe(store: RemoteStore, agent, kb_id: str, article_id: str, field_map: FieldMap) -> None:
    """One call per tool, each answer mapped to kbsim's shape; a server whose shapes cannot
    be mapped is refused here, never mid-day. The edit is sent with a stale version and the
    article's own text, so a compare-and-swap server writes nothing."""
    read = field_map.normalised(READ, agent.call(READ, {"knowledge_base_id": kb_id, "article_id": article_id},
                                                 actor="probe"))
    field_map.normalised(SEARCH, agent.call(SEARCH, {"knowledge_base_id": kb_id, "query": read["title"][:200],
                                                     "limit": 5}, actor="probe"))
    try:
        agent.call(EDIT, {"knowledge_base_id": kb_id, "article_id": article_id, "content": read["content"],
                          "title": read["title"], "expected_version": PROBE_STALE_VERSION,
                          "idempotency_key": f"{store.token}:probe"}, actor="probe")
    except ToolError as error:
        if error.code != "version_conflict":
            raise DriveError(f"the probe edit with a stale expected_version answered {error.code}, not "
                             "version_conflict: the server does not compare and swap as the tools promise") from None
    else:
        raise DriveError("the server applied an edit with a stale expected_version (the probe wrote the "
                         f"article's own text back to {article_id}): it does not compare and swap")
    try:
        field_map.normalised(POLL, agent.call(POLL, {"resource_type": "knowledge_base", "resource_id": kb_id,
                                                     "after_sequence": 0, "limit": 1}, actor="probe"))
    except ToolError as error:
        if error.code != "cursor_expired":
            raise DriveError(f"the probe poll answered {error.code}: {error.message}") from None


def _stop_reason(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    if isinstance(exc, TransportFailure):
        return "server_timeout" if exc.kind == "timeout" else f"server_{exc.kind}"
    if isinstance(exc, TooLate):
        return "too_late"
    if isinstance(exc, StalenessMismatch):
        return "staleness_mismatch"
    if isinstance(exc, ReplayError):
        return "replay_mismatch"
    return "refused"


def drive_day(address: ServerAddress, params: DayParams, seed: int, out: str | Path,
              options: DriveOptions = DriveOptions(), *,
              on_ready: Callable[[dict[str, Any]], None] | None = None) -> DriveResult:
    """Drive one day against the server at ``address`` and write its history to ``out``.

    Nothing is written to ``out`` when the server is refused before the day starts (it
    cannot be reached, refuses the credentials, lacks a tool or has another schema, does
    not hold the corpus, or its shapes cannot be mapped): :class:`DriveError` is raised,
    one line. Once the day has started, every stop writes the partial history and is
    returned (``complete`` False), never raised.

    Args:
        address: the server (:class:`~kbsim.drive.client.ServerAddress`).
        params: the day (its corpus is the one the server holds).
        seed: the day's seed (the in-process twin's too).
        out: the history folder to write.
        options: speed, timeouts, lateness bounds, field map, knowledge base id.
        on_ready: called once the server is checked, before the day starts, with the
            day's report so far (the plan, and whether it runs without unpublishes).
    """
    out = Path(out)
    starting = starting_knowledge_base(params.corpus, seed)
    params = prepared(params, starting)
    if params.uses_design_switches:
        raise DriveError("kbsim drive runs the default day: turn off the design switches "
                         "(edit.compare_and_swap, transport.loss_rate, agents.count, ...)")
    env = PacedEnvironment(options.speed, options.max_lag_s, options.max_late)
    recorder = CallRecorder()
    connection = McpConnection(address, recorder, timeout_s=options.timeout_s,
                               max_calls_per_second=options.max_calls_per_second)
    try:
        return _drive(connection, recorder, env, address, params, seed, out, options, starting, on_ready)
    finally:
        connection.close()


def _drive(connection, recorder, env, address, params, seed, out, options, starting, on_ready) -> DriveResult:
    kb_id, field_map = options.kb_id, options.field_map
    agent = connection.session("agent")
    tools = agent.list_tools()
    admin = check_tools(tools)
    people, truth = connection.session("people"), connection.session("truth")
    ledger = Ledger()
    store = RemoteStore(people, agent, truth, kb_id=kb_id, field_map=field_map, ledger=ledger, admin=admin)
    titles = {article_id: title for article_id, (title, _) in zip(starting.article_ids, starting.articles(),
                                                                   strict=True)}
    sample = {a: titles[a] for a in corpus_sample(starting.article_ids, options.sample_articles)}
    check_corpus(people, kb_id, sample, field_map, ledger, options.corpus_name)
    _probe(store, agent, kb_id, starting.article_ids[0], field_map)
    day_params = driven_params(params, admin)
    model_tables, _ = simulate_day(day_params, seed)
    report: dict[str, Any] = {
        "plan": day_plan(day_params, model_tables, options.speed),
        "admin_tools": admin,
        "without_unpublishes": day_params is not params,
        "corpus_sampled": len(sample),
    }
    if on_ready is not None:
        on_ready(report)
    # -- the day ------------------------------------------------------------------------------
    log = DayLog()
    # the store the day's processes use; the rest of the Store protocol is never asked of it
    day = open_day(day_params, seed, cast(Store, store), env=env, log=log, starting=starting, kb_id=kb_id)
    client = store.remote_client
    recorder.sim_clock = lambda: env.now
    saves, questions = activity_sources(day_params, seed)
    on_answer = agent_edits(day, lambda d, answer, delays: labelled(agent_edit(d, answer, delays), client,
                                                                     "agent_edit"))
    stopped, message, failure = None, None, None
    env.sync()
    started = time.monotonic()
    report["day_start_s"] = recorder.now_s()  # a call's lateness: started_s - (day_start_s + sim_s / speed)
    try:
        env.process(editor(day, saves(day)))
        asking = env.process(labelled(asker(day, questions(day), on_answer), client, "ask"))
        checking = env.process(labelled(checker(day), client, "check"))
        env.run(until=simpy.AllOf(env, [asking, checking]))
        if day.edits:
            env.run(until=simpy.AllOf(env, day.edits))
    except (KeyboardInterrupt, DriveError, ToolError, StalenessMismatch, ReplayError) as exc:
        stopped = _stop_reason(exc)
        message = "interrupted (Ctrl-C)" if isinstance(exc, KeyboardInterrupt) else str(exc).splitlines()[0]
    except Exception as exc:  # noqa: BLE001 - a fault of the driver's own: keep the history, then raise it
        stopped, message, failure = "error", f"{type(exc).__name__}: {exc}".splitlines()[0], exc
    wall_s = time.monotonic() - started
    recorder.sim_clock = None
    report.update(lateness=env.lateness(), wall_s=wall_s, simulated_s=float(env.now),
                  foreign_versions=ledger.foreign_versions, save_conflicts=store.save_conflicts,
                  stopped_because=stopped, message=message, server=connection.server_info)
    tables = tabulate(log, day_params, seed)
    lags = pd.DataFrame(env.lags, columns=["sim_s", "lag_s"])
    lags.insert(0, "seed", seed)
    meta = history_meta(
        complete=stopped is None, stopped_because=stopped,
        server={**address.describe(), **connection.server_info}, tools=tools,
        field_map=field_map.model_dump(), seed=seed, speed=options.speed,
        params=day_params.model_dump(mode="json"), started_utc=recorder.started_utc, calls=len(recorder))
    calls = recorder.frame()
    for name, table in model_tables.items():
        _write_parquet(out / "model" / f"{name}.parquet", table)
    atomic_write_text(out / "drive.json", json.dumps(report, indent=1, default=str) + "\n")
    write_history(out, meta, calls, {**tables, "lateness": lags})
    if failure is not None:
        raise failure
    return DriveResult(out, stopped is None, stopped, message, len(calls), report)


def _write_parquet(path: Path, table: pd.DataFrame) -> None:
    import io

    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    table.to_parquet(buffer, index=False)
    atomic_write_bytes(path, buffer.getvalue())
