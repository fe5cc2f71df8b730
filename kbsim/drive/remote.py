"""A live server behind the day's seams: the store people use and the agent's client.

:class:`RemoteStore` is the day's ``store`` and :class:`RemoteClient` its ``client``
(:class:`~kbsim.sim.world.Day`), so the simulated day's processes run unchanged against
a server reached through the official MCP client (:mod:`kbsim.drive.client`):

- people's saves are a read then a compare-and-swap edit through the edit tool, by the
  people's own MCP session; unpublishing and publishing go through the server's opt-in
  admin tools (``kbsim serve --admin-tools``) when it has them;
- the agent's searches, reads, edits and polls are its own session's tool calls, each
  mapped to kbsim's result shape by the :class:`FieldMap` in force;
- what the day asks of the store as ground truth (an article's current version, title,
  whether it is published, the latest event sequence) comes from the driver's own record
  of what it wrote (its *ledger*), or, for the event sequence, from polling the server.
  A driven server is a staging copy nobody else writes to; a read that finds a version
  the ledger does not know is counted (``foreign_versions``) and reported.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from kbsim.drive.client import DEFAULT_CALL_TIMEOUT_S, DriveError, McpConnection, ToolSession
from kbsim.drive.history import CallRecorder
from kbsim.store import ToolError
from kbsim.store.client import reads_call_by_call

__all__ = [
    "ADMIN_PUBLISH",
    "ADMIN_UNPUBLISH",
    "FieldMap",
    "Ledger",
    "RemoteBackend",
    "RemoteClient",
    "RemoteStore",
    "TOOLS",
    "check_tools",
]

SEARCH, READ, EDIT, POLL = ("search_knowledge_base", "read_knowledge_article", "edit_knowledge_article",
                            "poll_resource_events")
TOOLS = (SEARCH, READ, EDIT, POLL)
ADMIN_PUBLISH, ADMIN_UNPUBLISH = "publish_knowledge_article", "unpublish_knowledge_article"
#: The arguments the driver sends each tool: a server's schema must accept them all and
#: require nothing else.
SENT_ARGUMENTS = {
    SEARCH: ("knowledge_base_id", "query", "limit"),
    READ: ("knowledge_base_id", "article_id"),
    EDIT: ("knowledge_base_id", "article_id", "content", "title", "expected_version", "idempotency_key"),
    POLL: ("resource_type", "resource_id", "after_sequence", "limit"),
}
ADMIN_ARGUMENTS = {
    ADMIN_PUBLISH: ("knowledge_base_id", "title", "content"),
    ADMIN_UNPUBLISH: ("knowledge_base_id", "article_id"),
}


class FieldMap(BaseModel):
    """Which of a server's result fields play kbsim's roles (identity for kbsim's own server).

    The tool descriptions promise a citation with its version (``updated_at``) in search
    and read results, the version an edit returns, and each event's sequence and article.
    A server that names them otherwise is driven with a map naming its fields (YAML,
    ``--field-map FILE``); unknown keys are refused.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    search_results: str = "results"
    hit_article_id: str = "article_id"
    hit_title: str = "title"
    read_article_id: str = "article_id"
    read_title: str = "title"
    read_content: str = "content"
    citation_version: str = "updated_at"
    edit_version: str = "updated_at"
    edit_replayed: str = "replayed"
    poll_events: str = "events"
    event_sequence: str = "sequence"
    event_article: str = "article_id"
    poll_next_sequence: str = "next_sequence"
    poll_has_more: str = "has_more"
    published_article_id: str = "article_id"

    def normalised(self, tool: str, payload: Any) -> dict[str, Any]:
        """``payload`` of ``tool`` in kbsim's shape (the server's other fields kept as they are).

        Raises:
            DriveError: a mapped field is missing (the message names the role and the field).
        """
        if not isinstance(payload, dict):
            raise DriveError(f"{tool}: the server's result is not a JSON object")
        out = dict(payload)
        if tool == SEARCH:
            hits = self._field(tool, payload, "search_results")
            if not isinstance(hits, list):
                raise DriveError(f"{tool}: field {self.search_results!r} (field map search_results) is not a list")
            out["results"] = [{**hit, "article_id": self._field(tool, hit, "hit_article_id"),
                               "title": self._field(tool, hit, "hit_title")} for hit in hits]
        elif tool == READ:
            out.update(article_id=self._field(tool, payload, "read_article_id"),
                       title=self._field(tool, payload, "read_title"),
                       content=self._field(tool, payload, "read_content"),
                       updated_at=self._field(tool, payload, "citation_version"))
        elif tool == EDIT:
            out.update(updated_at=self._field(tool, payload, "edit_version"),
                       replayed=bool(payload.get(self.edit_replayed, False)))
        elif tool == POLL:
            events = self._field(tool, payload, "poll_events")
            if not isinstance(events, list):
                raise DriveError(f"{tool}: field {self.poll_events!r} (field map poll_events) is not a list")
            out["events"] = [{**event, "sequence": self._field(tool, event, "event_sequence"),
                              "article_id": self._field(tool, event, "event_article")} for event in events]
            out.update(next_sequence=self._field(tool, payload, "poll_next_sequence"),
                       has_more=bool(self._field(tool, payload, "poll_has_more")))
        elif tool == ADMIN_PUBLISH:
            out["article_id"] = self._field(tool, payload, "published_article_id")
        return out

    def _field(self, tool: str, payload: Any, role: str) -> Any:
        name = getattr(self, role)
        if not isinstance(payload, dict) or name not in payload:
            raise DriveError(f"{tool}: the server's result has no field {name!r} (field map {role}); "
                             "name the server's field in --field-map")
        return payload[name]


def check_tools(tools: list[dict[str, Any]]) -> bool:
    """Refuse a tool list the driver cannot use, in one line; True when it has both admin tools.

    Each of the four tools must be listed, accept every argument the driver sends
    (:data:`SENT_ARGUMENTS`; ``expected_version`` above all) and require no other.

    Raises:
        DriveError: a tool is missing, or its schema lacks an argument or requires another.
    """
    by_name = {tool.get("name"): tool for tool in tools if isinstance(tool, dict)}
    missing = [name for name in TOOLS if name not in by_name]
    if missing:
        raise DriveError(f"the server does not list {', '.join(missing)} (it lists "
                         f"{', '.join(sorted(str(n) for n in by_name)) or 'no tools'})")
    for name, sent in [*SENT_ARGUMENTS.items(), *ADMIN_ARGUMENTS.items()]:
        if name not in by_name:
            continue
        schema = by_name[name].get("inputSchema") or {}
        properties = schema.get("properties") or {}
        lacking = [arg for arg in sent if arg not in properties]
        if lacking:
            raise DriveError(f"the server's {name} has no argument {', '.join(lacking)} in its input schema "
                             "(the driver sends it)")
        extra = [arg for arg in schema.get("required") or [] if arg not in sent]
        if extra:
            raise DriveError(f"the server's {name} requires {', '.join(map(str, extra))}, which the driver "
                             "does not send")
    return ADMIN_PUBLISH in by_name and ADMIN_UNPUBLISH in by_name


@dataclass
class _Entry:
    """What the driver knows of one article: its version (None: unpublished), title, content."""

    version: str | None
    title: str
    content: str


@dataclass
class Ledger:
    """The driver's record of every article's state, from what it wrote and first read.

    ``foreign_versions`` counts reads that found a version the ledger did not hold (a
    writer other than the driver, or a server that changed a version by itself).
    """

    entries: dict[str, _Entry] = field(default_factory=dict)
    foreign_versions: int = 0

    def seen(self, article_id: str, version: str, title: str, content: str) -> None:
        """A read's answer: the first tells the ledger the version; later ones are checked."""
        entry = self.entries.get(article_id)
        if entry is None:
            self.entries[article_id] = _Entry(version, title, content)
        elif entry.version != version:
            self.foreign_versions += 1
            self.entries[article_id] = _Entry(version, title, content)

    def wrote(self, article_id: str, version: str | None, title: str | None = None,
              content: str | None = None) -> None:
        """The driver's own write (a save, an edit, an unpublish: version None)."""
        entry = self.entries.get(article_id)
        if entry is None:
            entry = self.entries[article_id] = _Entry(version, title or "", content or "")
        entry.version = version
        if title is not None:
            entry.title = title
        if content is not None:
            entry.content = content


class _ArticleView:
    """The part of :class:`kbsim.store.rules.Article` the day's people read (title, content)."""

    def __init__(self, article_id: str, entry: _Entry) -> None:
        self.article_id = article_id
        self.title = entry.title
        self.content = entry.content
        self.published = entry.version is not None


class RemoteClient:
    """The agent's tool client over its MCP session: kbsim's ``Client`` face (``call``,
    ``call_sized``, ``search_titles``, ``read_many``, ``search_many``).

    Results come back in kbsim's shape (:class:`FieldMap`). Idempotency keys are prefixed
    with the day's token, so a second driven day never reuses the first one's keys.
    ``actor`` (set by the driver around each process step) labels the recorded calls.
    """

    def __init__(self, session: ToolSession, ledger: Ledger, field_map: FieldMap, token: str) -> None:
        self.session = session
        self.ledger = ledger
        self.field_map = field_map
        self.token = token
        self.grants: frozenset[str] = frozenset()
        self.actor = "agent"
        #: within a check: whether the poll has started (its re-reads are the poll's)
        self.polling = False
        self._keys_sent: set[str] = set()

    def call_sized(self, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """One tool call: ``(result in kbsim's shape, JSON bytes of the server's result)``."""
        actor = self._actor_for(name)
        sent = dict(arguments)
        if name == EDIT and "idempotency_key" in sent:
            sent["idempotency_key"] = key = f"{self.token}:{sent['idempotency_key']}"
            if key in self._keys_sent:  # the same edit again: the replay check
                actor = "agent_replay"
            self._keys_sent.add(key)
        payload, size = self.session.call_sized(name, sent, actor=actor)
        result = self.field_map.normalised(name, payload)
        if name == READ:
            self.ledger.seen(result["article_id"], result["updated_at"], result["title"], result["content"])
        elif name == EDIT and not result["replayed"]:
            self.ledger.wrote(arguments["article_id"], result["updated_at"], arguments.get("title"),
                              arguments["content"])
        return result, size

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """One tool call's result in kbsim's shape (a refusal raises ToolError)."""
        return self.call_sized(name, arguments)[0]

    def _actor_for(self, name: str) -> str:
        actor = self.actor
        if actor == "check":
            if name == POLL:
                self.polling = True
                return "check:poll"
            if name == SEARCH:
                return "check:title"
            return "check:poll" if self.polling else "check:reread"
        if actor == "ask":
            return "ask_search" if name == SEARCH else "ask_read"
        return actor

    def search_titles(self, kb_id: str, queries: list[str], article_ids: list[str],
                      limit: int) -> list[tuple[str | None, int]]:
        """The title check's searches, call by call (a server has no batch)."""
        answers = []
        for query, article_id in zip(queries, article_ids, strict=True):
            result, size = self.call_sized(SEARCH, {"knowledge_base_id": kb_id, "query": query, "limit": limit})
            titles = {hit["article_id"]: hit["title"] for hit in result["results"]}
            answers.append((titles.get(article_id), size))
        return answers

    def search_many(self, kb_id: str, queries: list[str], limit: int) -> list[tuple[list[tuple[str, str]], int]]:
        """Searches call by call: each one's hits ``(article_id, title)`` and size."""
        answers = []
        for query in queries:
            result, size = self.call_sized(SEARCH, {"knowledge_base_id": kb_id, "query": query, "limit": limit})
            answers.append(([(hit["article_id"], hit["title"]) for hit in result["results"]], size))
        return answers

    def read_many(self, kb_id: str, article_ids: list[str]) -> list[tuple[str | None, int]]:
        """Reads call by call: each one's version (None when not found) and size."""
        return reads_call_by_call(self.call_sized, kb_id, article_ids)


class RemoteStore:
    """The day's store over a live server: people's side through their own MCP session,
    ground truth from the driver's :class:`Ledger`.

    Args:
        people: the people's MCP session (saves, and the admin tools when ``admin``).
        agent: the agent's MCP session (the day's client is built over it).
        truth: the session that polls for the latest event sequence (the replay check).
        admin: whether the server has the admin tools (without them no unpublish or
            publish is ever asked for: the driver removes them from the day's save mix).
    """

    def __init__(self, people: ToolSession, agent: ToolSession, truth: ToolSession, *, kb_id: str,
                 field_map: FieldMap, ledger: Ledger, admin: bool, token: str | None = None) -> None:
        self.people, self.agent, self.truth = people, agent, truth
        self.kb_id = kb_id
        self.field_map = field_map
        self.ledger = ledger
        self.admin = admin
        self.token = token or secrets.token_hex(4)
        self._saves = 0
        self._cursor = 0
        self.remote_client: RemoteClient | None = None
        #: saves whose compare-and-swap edit was refused as a conflict and made again
        self.save_conflicts = 0
        #: articles :meth:`create_knowledge_base` reads to check the server holds the corpus
        self.sample_articles = 20

    # -- the day's seams ------------------------------------------------------------------

    def client(self, grants: Iterable[str], clock) -> RemoteClient:
        """The agent's client (``clock`` is unused: the server keeps its own time)."""
        client = RemoteClient(self.agent, self.ledger, self.field_map, self.token)
        client.grants = frozenset(grants)
        self.remote_client = client
        return client

    def create_knowledge_base(self, kb_id: str, articles: Iterable[tuple[str, str]] = (), *, at: float = 0.0,
                              article_ids: Iterable[str] | None = None, analyzer=None) -> list[str]:
        """Check that the server holds ``articles`` as ``kb_id`` (a sample of them read, as
        :func:`check_corpus` reads it) and return their ids; nothing is written.

        Raises:
            DriveError: ``kb_id`` is not the driven one, or the sample does not match.
        """
        if kb_id != self.kb_id:
            raise DriveError(f"the day's knowledge base {kb_id!r} is not the driven one ({self.kb_id!r})")
        titles = [title for title, _ in articles]
        ids = list(article_ids) if article_ids is not None else [f"art-{i:06d}" for i in range(1, len(titles) + 1)]
        chosen = sample_ids(tuple(ids), self.sample_articles)
        by_id = dict(zip(ids, titles, strict=True))
        check_corpus(self.people, kb_id, {a: by_id[a] for a in chosen}, self.field_map, self.ledger, "the day's corpus")
        return ids

    def current_version(self, kb_id: str, article_id: str) -> str | None:
        """The version the driver last wrote or read (None: unpublished; an article never
        touched is published at a version the driver has not seen, ``""``)."""
        entry = self.ledger.entries.get(article_id)
        if entry is None:
            return ""
        return entry.version

    def article_state(self, kb_id: str, article_id: str) -> _ArticleView:
        """The title and content the driver knows (read from the server on first use)."""
        if article_id not in self.ledger.entries:
            self._read(article_id, "person_read")
        return _ArticleView(article_id, self.ledger.entries[article_id])

    def unpublished_article_ids(self, kb_id: str) -> list[str]:
        """Every article the driver has unpublished, sorted."""
        return sorted(a for a, entry in self.ledger.entries.items() if entry.version is None)

    def has_knowledge_base(self, kb_id: str) -> bool:
        """Whether ``kb_id`` is the driven knowledge base."""
        return kb_id == self.kb_id

    def latest_sequence(self, kb_id: str) -> int:
        """The server's latest event sequence: its event log polled from the last one seen."""
        while True:
            page = self.field_map.normalised(POLL, self.truth.call(POLL, {
                "resource_type": "knowledge_base", "resource_id": kb_id, "after_sequence": self._cursor,
                "limit": 100}, actor="truth:sequence"))
            self._cursor = int(page["next_sequence"])
            if not page["has_more"]:
                return self._cursor

    def save_article(self, kb_id: str, article_id: str, *, at: float, content: str | None = None,
                     title: str | None = None) -> str:
        """A person's save: read the article, then edit it with the version read (CAS);
        a conflict (someone wrote in between) reads and edits again, at most 3 times."""
        self._saves += 1
        for attempt in range(3):
            version = self._read(article_id, "person_read")
            entry = self.ledger.entries[article_id]
            arguments = {"knowledge_base_id": kb_id, "article_id": article_id,
                         "content": entry.content if content is None else content,
                         "expected_version": version,
                         "idempotency_key": f"{self.token}:people-{self._saves}-{attempt}"}
            if title is not None:
                arguments["title"] = title
            try:
                result = self.field_map.normalised(EDIT, self.people.call(EDIT, arguments, actor="person_save"))
            except ToolError as error:
                if error.code != "version_conflict":
                    raise
                self.save_conflicts += 1
                continue
            self.ledger.wrote(article_id, result["updated_at"], title, arguments["content"])
            return result["updated_at"]
        raise DriveError(f"a person's save of {article_id} met a version conflict 3 times: another writer "
                         "is editing this server (drive a staging copy)")

    def unpublish_article(self, kb_id: str, article_id: str, *, at: float, log_event: bool = True) -> str:
        """People unpublishing, through the server's admin tool."""
        if not self.admin or not log_event:
            raise DriveError("the server has no admin tools: the driven day cannot unpublish")
        result = self.people.call(ADMIN_UNPUBLISH, {"knowledge_base_id": kb_id, "article_id": article_id},
                                  actor="admin")
        version = self.field_map.normalised(EDIT, result)["updated_at"]
        self.ledger.wrote(article_id, None)
        return version

    def publish_article(self, kb_id: str, *, title: str, content: str, at: float) -> str:
        """People publishing a new article, through the server's admin tool; its id."""
        if not self.admin:
            raise DriveError("the server has no admin tools: the driven day cannot publish")
        result = self.field_map.normalised(ADMIN_PUBLISH, self.people.call(
            ADMIN_PUBLISH, {"knowledge_base_id": kb_id, "title": title, "content": content}, actor="admin"))
        article_id = str(result["article_id"])
        self.ledger.wrote(article_id, str(result.get(self.field_map.edit_version, "")), title, content)
        return article_id

    def _read(self, article_id: str, actor: str) -> str:
        """Read an article by the people's session; its version (the ledger learns it)."""
        result = self.field_map.normalised(READ, self.people.call(
            READ, {"knowledge_base_id": self.kb_id, "article_id": article_id}, actor=actor))
        self.ledger.seen(article_id, result["updated_at"], result["title"], result["content"])
        return result["updated_at"]


def sample_ids(article_ids: tuple[str, ...], count: int) -> list[str]:
    """``count`` of the corpus's articles, evenly spaced from the first to the last."""
    n = len(article_ids)
    if n <= count:
        return list(article_ids)
    return [article_ids[round(i * (n - 1) / (count - 1))] for i in range(count)]


def check_corpus(session: ToolSession, kb_id: str, titles: Mapping[str, str], field_map: FieldMap,
                 ledger: Ledger, corpus_name: str) -> int:
    """Read each sampled article; refuse in one line an id the server lacks or a title that differs.

    Returns:
        How many articles were read.
    """
    for article_id, title in titles.items():
        try:
            result = field_map.normalised(READ, session.call(
                READ, {"knowledge_base_id": kb_id, "article_id": article_id}, actor="probe"))
        except ToolError as error:
            if error.code == "not_found":
                raise DriveError(f"--corpus {corpus_name}: article {article_id} is not on the server "
                                 f"(knowledge base {kb_id}): the server does not hold this corpus") from None
            raise
        if result["title"] != title:
            raise DriveError(f"--corpus {corpus_name}: article {article_id} is titled {result['title'][:60]!r} "
                             f"on the server, {title[:60]!r} in the corpus: the server does not hold this corpus")
        ledger.seen(article_id, result["updated_at"], result["title"], result["content"])
    return len(titles)


class RemoteBackend:
    """A live server as a store backend: the :data:`~kbsim.store.StoreFactory` a day is handed
    (``run_day(params, seed, store=RemoteBackend(address))``), run on the day's own clock.

    The server already holds the starting knowledge base: the factory's store checks a sample
    of it (:meth:`RemoteStore.create_knowledge_base`) instead of filling it. Every call is
    recorded in :attr:`recorder`. Use as a context manager, or call :meth:`close`.
    Without a real-time clock the day runs as fast as the server answers.
    """

    def __init__(self, address, *, kb_id: str = "kb-1", field_map: FieldMap | None = None,
                 timeout_s: float | None = None, sample_articles: int = 20) -> None:
        self.recorder = CallRecorder()
        self.connection = McpConnection(address, self.recorder,
                                        timeout_s=DEFAULT_CALL_TIMEOUT_S if timeout_s is None else timeout_s)
        self.kb_id = kb_id
        self.field_map = field_map or FieldMap()
        self.sample_articles = sample_articles

    def __call__(self, event_retention_s: float | None = None) -> RemoteStore:
        """A store over the server (the retention window is the server's own, not the day's)."""
        agent = self.connection.session("agent")
        admin = check_tools(agent.list_tools())
        store = RemoteStore(self.connection.session("people"), agent, self.connection.session("truth"),
                            kb_id=self.kb_id, field_map=self.field_map, ledger=Ledger(), admin=admin)
        store.sample_articles = self.sample_articles
        return store

    def __enter__(self) -> RemoteBackend:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (a stdio server is stopped)."""
        self.connection.close()
