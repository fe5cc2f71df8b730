"""The check's own short day: probes, then racing clients on a few hot articles, recorded.

Every call goes through :mod:`kbsim.drive`'s recording MCP client, so the day's history is
a driven day's (:mod:`kbsim.drive.history`) and is checked the same way. In order:

1. ``tools/list``; the whole log polled from the start, to find published articles (the
   first few are the hot ones, the next the quiet one) and the log's end (the day's cursor).
2. Probes on the quiet article, one at a time: an edit with the version just read; its
   replay (same key, same arguments); the same key with other arguments; an edit with the
   stale first version; the version cut to milliseconds, as a JavaScript ``Date`` sends it;
   an edit while another client polls and reads as soon as its event is listed.
3. With the unpublish tool (``kbsim serve --admin-tools``): a probe article is published,
   found, unpublished, then searched for and read again.
4. Racing clients read and edit the hot articles with compare-and-swap, some edits replayed
   after, some replayed racing; a tailing client resumes the log a few events at a time and
   reads each article an event names as soon as it is listed.
5. The log read from the day's cursor to its end, and every hot article read once more.

Nothing is made up: the content written is ``kbsim check`` text with the day's token. The day
edits the server (the hot and quiet articles' text), hence the driver's safety flag.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from kbsim.drive.client import (
    DEFAULT_CALL_TIMEOUT_S,
    DriveError,
    McpConnection,
    ServerAddress,
    ServerError,
)
from kbsim.drive.history import CallRecorder, history_meta, write_history
from kbsim.drive.remote import ADMIN_PUBLISH, ADMIN_UNPUBLISH, EDIT, POLL, READ, SEARCH, FieldMap
from kbsim.store import ToolError

__all__ = ["CheckDayOptions", "Session", "check_day", "check_day_meta", "cut_to_milliseconds", "run_check_day"]


@dataclass(frozen=True)
class CheckDayOptions:
    """How the check's day is driven (the command line's options).

    Attributes:
        racers: racing clients.
        rounds: read-and-edit rounds of each racing client.
        hot: articles the racing clients share.
        seed: the seed of the racing clients' choices.
        kb_id: the knowledge base on the server.
        timeout_s: a call unanswered this long stops the day.
        field_map: the server's result fields (kbsim's own by default).
    """

    racers: int = 4
    rounds: int = 20
    hot: int = 2
    seed: int = 1
    kb_id: str = "kb-1"
    timeout_s: float = DEFAULT_CALL_TIMEOUT_S
    field_map: FieldMap = FieldMap()


def cut_to_milliseconds(version: str) -> str:
    """``version`` (RFC 3339) as a JavaScript ``Date``'s ``toISOString`` writes it: three
    fraction digits, ``Z``. A version that is not such a time is returned as it is."""
    import pandas as pd

    moment = pd.to_datetime(version, utc=True, errors="coerce", format="ISO8601")
    if pd.isna(moment):
        return version
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class _Day:
    """The day's sessions, token and the articles it works on."""

    def __init__(self, options: CheckDayOptions, tools: set[str]) -> None:
        self.options = options
        self.tools = tools
        self.fields = options.field_map
        self.kb_id = options.kb_id
        self.token = secrets.token_hex(4)
        self._keys = 0
        self._lock = threading.Lock()

    def key(self, what: str) -> str:
        with self._lock:
            self._keys += 1
            return f"kbsim-check-{self.token}-{what}-{self._keys}"

    def text(self, what: str) -> str:
        return f"kbsim check {self.token}: {what}. This text was written by kbsim check's day."

    def call(self, session: Session, tool: str, arguments: dict[str, Any], actor: str) -> tuple[bool, Any]:
        """``(True, payload)``, or ``(False, the refusal's code)``; no answer raises."""
        try:
            return True, session.call(tool, arguments, actor=actor)
        except (ToolError, ServerError) as error:
            return False, error.code

    def read(self, session: Session, article: str, actor: str) -> tuple[str | None, str | None]:
        """The article's ``(version, title)`` as read (None, None when refused)."""
        ok, payload = self.call(session, READ, {"knowledge_base_id": self.kb_id, "article_id": article}, actor)
        if not ok or not isinstance(payload, dict):
            return None, None
        return payload.get(self.fields.citation_version), payload.get(self.fields.read_title)

    def edit(self, session: Session, article: str, expected: str, content: str, key: str,
             actor: str) -> tuple[bool, Any]:
        return self.call(session, EDIT, {"knowledge_base_id": self.kb_id, "article_id": article, "content": content,
                                         "expected_version": expected, "idempotency_key": key}, actor)

    def poll(self, session: Session, after: int, limit: int, actor: str) -> tuple[list[dict], int, bool]:
        """One page: ``(events, next cursor, has more)`` (no events when refused)."""
        ok, payload = self.call(session, POLL, {"resource_type": "knowledge_base", "resource_id": self.kb_id,
                                                "after_sequence": after, "limit": limit}, actor)
        if not ok or not isinstance(payload, dict):
            return [], after, False
        events = payload.get(self.fields.poll_events) or []
        cursor = payload.get(self.fields.poll_next_sequence)
        return events, int(cursor) if isinstance(cursor, int) else after, bool(payload.get(self.fields.poll_has_more))


def _discover(day: _Day, session: Session) -> tuple[list[str], int]:
    """Published articles (in the log's order) and the log's end, from a poll from the start."""
    after, seen, gone = 0, list[str](), set[str]()
    while True:
        events, cursor, more = day.poll(session, after, 100, "probe:discover")
        for event in events:
            article, kind = event.get(day.fields.event_article), str(event.get("type", ""))
            if not isinstance(article, str):
                continue
            if "unpublish" in kind:
                gone.add(article)
            elif article not in seen:
                seen.append(article)
        if not more or cursor == after:
            return [a for a in seen if a not in gone], cursor
        after = cursor


def _probes(day: _Day, checker: Session, watcher: Session, quiet: str, cursor: int) -> None:
    """The sequential probes on the quiet article (module docstring, step 2)."""
    first, _ = day.read(checker, quiet, "probe:round_trip")
    if first is None:
        raise DriveError(f"the quiet article {quiet} cannot be read")
    key, content = day.key("probe"), day.text("probe edit")
    day.edit(checker, quiet, first, content, key, "probe:round_trip")
    day.edit(checker, quiet, first, content, key, "probe:replay")
    current, _ = day.read(checker, quiet, "probe:other_args")
    if current is not None:
        day.edit(checker, quiet, current, day.text("other arguments"), key, "probe:other_args")
    day.edit(checker, quiet, first, day.text("stale edit"), day.key("stale"), "probe:stale")
    for attempt in range(2):  # cut to milliseconds, twice: a conflict both times is a conflict forever
        current, _ = day.read(checker, quiet, "probe:milliseconds")
        if current is None:
            break
        ok, _ = day.edit(checker, quiet, cut_to_milliseconds(current), day.text(f"millisecond edit {attempt}"),
                         day.key("ms"), "probe:milliseconds")
        if ok:
            break
    if POLL in day.tools:
        _visible_probe(day, checker, watcher, quiet, cursor)


def _visible_probe(day: _Day, checker: Session, watcher: Session, quiet: str, cursor: int) -> None:
    """An edit in one thread while the watcher tails the log and reads the article the moment
    its event is listed."""
    current, _ = day.read(checker, quiet, "probe:visible")
    if current is None:
        return
    done = threading.Event()

    def edit() -> None:
        try:
            day.edit(checker, quiet, current, day.text("visible edit"), day.key("visible"), "probe:visible")
        finally:
            done.set()

    thread = threading.Thread(target=edit, daemon=True)
    thread.start()
    deadline = time.monotonic() + day.options.timeout_s
    while time.monotonic() < deadline:
        finished = done.is_set()
        events, cursor, _ = day.poll(watcher, cursor, 50, "probe:visible")
        if any(event.get(day.fields.event_article) == quiet for event in events):
            day.read(watcher, quiet, "probe:visible")
            break
        if finished:
            break
    thread.join(day.options.timeout_s)


def _unpublish_probe(day: _Day, checker: Session) -> None:
    """Publish a probe article, find it, unpublish it, then look for it again."""
    title = f"kbsim check probe {day.token}"
    ok, payload = day.call(checker, ADMIN_PUBLISH, {"knowledge_base_id": day.kb_id, "title": title,
                                                     "content": day.text("probe article")}, "probe:publish")
    if not ok or not isinstance(payload, dict):
        return
    article = payload.get(day.fields.published_article_id)
    if not isinstance(article, str):
        return
    search = {"knowledge_base_id": day.kb_id, "query": title, "limit": 5}
    day.call(checker, SEARCH, search, "probe:publish")
    ok, _ = day.call(checker, ADMIN_UNPUBLISH, {"knowledge_base_id": day.kb_id, "article_id": article},
                     "probe:unpublish")
    if ok:
        day.call(checker, SEARCH, search, "probe:after_unpublish")
        day.read(checker, article, "probe:after_unpublish")


def _racer(day: _Day, session: Session, hot: list[str], rng: np.random.Generator, errors: list) -> None:
    """Read and edit the hot articles with compare-and-swap; replay some edits, after or racing."""
    try:
        for round_ in range(day.options.rounds):
            article = hot[int(rng.integers(len(hot)))]
            version, _ = day.read(session, article, "race")
            if version is None:
                continue
            key, content = day.key("race"), day.text(f"{session.client} round {round_}")
            draw = rng.random()
            if draw < 0.15:  # two calls of one key racing
                twin = threading.Thread(target=day.edit, args=(session, article, version, content, key,
                                                               "race:replay"), daemon=True)
                twin.start()
                day.edit(session, article, version, content, key, "race")
                twin.join(day.options.timeout_s)
            else:
                day.edit(session, article, version, content, key, "race")
                if draw < 0.35:
                    day.edit(session, article, version, content, key, "race:replay")
    except Exception as exc:  # noqa: BLE001 - handed to the day, which raises it
        errors.append(exc)


def _tail(day: _Day, session: Session, cursor: int, hot: set[str], stop: threading.Event, errors: list) -> None:
    """Resume the log a few events at a time; read each hot article an event names at once."""
    try:
        while True:
            stopping = stop.is_set()
            events, cursor, more = day.poll(session, cursor, 3, "tail")
            for article in dict.fromkeys(event.get(day.fields.event_article) for event in events):
                if article in hot:
                    day.read(session, article, "tail:read")
            if stopping and not more:
                return
            if not events:
                time.sleep(0.005)
    except Exception as exc:  # noqa: BLE001 - handed to the day, which raises it
        errors.append(exc)


class Session(Protocol):
    """What the day asks of a client: :class:`~kbsim.drive.client.Session`'s face."""

    client: str

    def call(self, tool: str, arguments: dict[str, Any], actor: str | None = None) -> Any:
        """The tool's payload, or :class:`~kbsim.store.ToolError` for a refusal."""

    def list_tools(self, actor: str = "probe") -> list[dict[str, Any]]:
        """The server's tools as listed."""


def run_check_day(open_session: Callable[[str], Session], options: CheckDayOptions = CheckDayOptions(), *,
                  on_ready: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """The check's day (module docstring) through the clients ``open_session(name)`` gives;
    returns the tool list. The calls are recorded by the sessions.

    Raises:
        DriveError: the server lacks the read, edit or poll tool, or holds too few published
            articles; or a call went unanswered.
    """
    checker = open_session("checker")
    listed = checker.list_tools()
    tools = {str(tool.get("name")) for tool in listed}
    for needed in (READ, EDIT, POLL):
        if needed not in tools:
            raise DriveError(f"the server does not list {needed}: kbsim check's day needs it (it finds the "
                             "articles in the log)" if needed == POLL else
                             f"the server does not list {needed}: kbsim check's day needs it")
    day = _Day(options, tools)
    articles, cursor = _discover(day, checker)
    if len(articles) < options.hot + 1:
        raise DriveError(f"the knowledge base {options.kb_id} holds {len(articles)} published articles; "
                         f"the check needs {options.hot + 1}")
    hot, quiet = articles[:options.hot], articles[options.hot]
    if on_ready is not None:
        on_ready(f"hot articles {', '.join(hot)}; quiet article {quiet}; the log from sequence {cursor}")
    tailer = open_session("tail")  # the visible probe's watcher, then the racing day's tail
    _probes(day, checker, tailer, quiet, cursor)
    if ADMIN_PUBLISH in tools and ADMIN_UNPUBLISH in tools:
        _unpublish_probe(day, checker)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(options.seed).spawn(options.racers)]
    errors: list[BaseException] = []
    stop = threading.Event()
    tail = threading.Thread(target=_tail, args=(day, tailer, cursor, set(hot), stop, errors), daemon=True)
    tail.start()
    racers = [threading.Thread(target=_racer, args=(day, open_session(f"race-{i}"), hot, rng, errors),
                               daemon=True) for i, rng in enumerate(rngs)]
    for thread in racers:
        thread.start()
    for thread in racers:
        thread.join()
    stop.set()
    tail.join()
    if errors:
        raise errors[0]
    after = cursor
    while True:
        _, next_cursor, more = day.poll(checker, after, 100, "log")
        if not more or next_cursor == after:
            break
        after = next_cursor
    for article in hot:
        day.read(checker, article, "final")
    return listed


def check_day_meta(listed: list[dict[str, Any]], server: dict[str, Any], options: CheckDayOptions,
                   recorder: CallRecorder) -> dict[str, Any]:
    """The ``history.json`` of a check day."""
    return history_meta(complete=True, stopped_because=None, server=server, tools=listed,
                        field_map=options.field_map.model_dump(), seed=options.seed, speed=0.0,
                        params={"check_day": {"racers": options.racers, "rounds": options.rounds, "hot": options.hot,
                                              "kb_id": options.kb_id}},
                        started_utc=recorder.started_utc, calls=len(recorder))


def check_day(address: ServerAddress, out: str | Path, options: CheckDayOptions = CheckDayOptions(), *,
              on_ready: Callable[[str], None] | None = None) -> Path:
    """Drive the check's day against ``address`` and write its history to ``out``.

    Raises:
        DriveError: the server cannot be reached, lacks the read, edit or poll tool, or holds
            too few published articles; or a call went unanswered (nothing is written then).
    """
    recorder = CallRecorder()
    with McpConnection(address, recorder, timeout_s=options.timeout_s) as connection:
        listed = run_check_day(connection.session, options, on_ready=on_ready)
        server = {**address.describe(), **connection.server_info}
    return write_history(out, check_day_meta(listed, server, options, recorder), recorder.frame(), {})
