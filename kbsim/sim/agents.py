"""The write-up's advice as switches, and several agents on one knowledge base (issue 27).

A day whose parameters leave today's behaviour (:attr:`DayParams.uses_design_switches`)
runs its agents here instead of the one agent of :mod:`kbsim.sim.processes`:

- ``agents.count`` agents. The day's questions are dealt to them in turn (answer ``i`` to
  agent ``i mod N``), so every N answers the same questions as the one agent does, and the
  ``agent`` stream chooses the same answers to edit. Each agent has its own client (behind
  its own lossy wire), its own citations, cursor, checks and edits. The questions'
  searches and reads go through one more wire, the desk's.
- edits (:func:`switched_edit`): compare-and-swap or a blind overwrite, the same
  idempotency key on every resend or a fresh one, over the lossy transport.
- checks (:func:`switched_checker`): the three strategies over every citation (one shared
  event-log consumer, the ``checks`` table as always), and, with several agents, the poll
  and re-read each agent makes over its own citations with its own cursor (the
  ``agent_checks`` table): their difference is what a shared consumer saves. Without a
  version in the citation the re-read and the poll compare the whole text instead.

Invariants, checked at every step: with compare-and-swap and keys on, no agent write
ever replaces a version it did not build on (no lost update) and no intended edit is
applied twice, whatever the loss rate and the number of agents; at every check the
re-read is exactly the store's truth (by version; by text without versions), and so is
the poll while unpublishing writes events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from kbsim.sim.checks import (
    CHANGED,
    GONE,
    CheckOutcome,
    PollState,
    check_by_polling,
    check_by_rereading,
    check_by_title,
    true_staleness,
    verify_exact,
)
from kbsim.sim.processes import Answer, replay_writes_nothing
from kbsim.sim.records import CheckRecord, CitationRecord, EditRecord, SaveRecord
from kbsim.sim.strategies import BUILT_IN
from kbsim.sim.transport import REPLY_LOST, REQUEST_LOST, LossyClient, backoff_s
from kbsim.store import ToolError, json_size, parse_version

if TYPE_CHECKING:
    from kbsim.sim.day import Day

__all__ = [
    "OWN_CHECKS",
    "TEXT_CHECKS",
    "AgentCheckRecord",
    "Agents",
    "DesignInvariantError",
    "IntentRecord",
    "agent_of",
    "on_answer_of",
    "switched_checker",
    "switched_edit",
]

#: The strategies each of several agents runs on its own citations (the ``agent_checks`` table).
OWN_CHECKS = ("reread", "poll")
#: The exact strategies an agent without versions runs by comparing text (the ``text_checks`` table).
TEXT_CHECKS = ("reread", "poll")


class DesignInvariantError(AssertionError):
    """With compare-and-swap and idempotency keys on, a lost update or a duplicate write."""


@dataclass(frozen=True, slots=True)
class IntentRecord:
    """One edit an agent meant to make, and what became of it (the ``intents`` table)."""

    answer_id: int
    agent: int
    article_id: str
    delay_s: float
    outcome: str  # the first try: "applied" | "conflict" | "gone" | "lost" (no reply after every retry)
    applications: int  # times the store applied this edit (more than 1: a duplicate write)
    people_overwritten: int  # people's saves this edit's writes silently replaced (lost updates)
    agents_overwritten: int  # other agents' writes it replaced
    conflicts_people: int  # conflicts whose newer version a person wrote
    conflicts_agents: int  # ... another agent wrote
    conflicts_self: int  # ... this very edit wrote (a resend with a fresh key)
    sends: int  # edit requests sent, resends included
    lost: int  # sends whose request or reply was lost


@dataclass(frozen=True, slots=True)
class AgentCheckRecord:
    """One agent's own check of its own citations (the ``agent_checks`` table)."""

    agent: int
    check_index: int
    time_s: float
    strategy: str  # "reread" | "poll"
    calls: int
    bytes: int
    citations_held: int
    flagged: int
    true_stale: int


@dataclass(frozen=True, slots=True)
class TextCheckRecord:
    """A check without versions: what comparing text found against the versions' truth
    (the ``text_checks`` table)."""

    check_index: int
    time_s: float
    strategy: str  # "reread" | "poll"
    true_stale: int
    flagged: int
    missed_restored: int  # stale by version, but the text is the cited text again
    kept_bytes: int  # cited text the agent must keep to compare with


def agent_of(answer_id: int, count: int) -> int:
    """The agent an answer is dealt to."""
    return answer_id % count


@dataclass(eq=False)
class Agents:
    """The agents of a day and what the switches need to remember while it runs."""

    day: Day
    clients: list[LossyClient]
    desk: LossyClient
    #: the shared consumer's client (agent 0's own when there is one agent)
    shared: LossyClient
    intents: list[IntentRecord] = field(default_factory=list)
    agent_checks: list[AgentCheckRecord] = field(default_factory=list)
    text_checks: list[TextCheckRecord] = field(default_factory=list)
    #: each agent write's version -> (agent, answer) that wrote it
    writer: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: indices into ``day.log.saves`` of people's saves already lost
    lost_saves: set[int] = field(default_factory=set)
    #: citation index -> (title, content) as cited (kept only without versions)
    cited_text: dict[int, tuple[str, str]] = field(default_factory=dict)
    fresh_keys: int = 0

    @classmethod
    def open(cls, day: Day) -> Agents:
        """One lossy client per agent and one for the desk, each with its own child of the
        ``transport`` stream (never drawn from while ``loss_rate`` is 0)."""
        count, transport = day.params.agents.count, day.params.transport
        children = day.streams["transport"].spawn(count + 2)

        def wire(rng: np.random.Generator, name: str) -> LossyClient:
            return LossyClient(day.store.client(grants={day.kb_id}, clock=lambda: day.env.now), rng, transport, name)

        clients = [wire(rng, str(k)) for k, rng in enumerate(children[:count])]
        shared = clients[0] if count == 1 else wire(children[count + 1], "shared")
        return cls(day, clients, LossyClient(day.client, children[count], transport, "desk"), shared)

    def note_answer(self, answer: Answer) -> None:
        """Keep the cited text when citations carry no version (the agent must compare it)."""
        if self.day.params.citation.carries_version:
            return
        start = len(self.day.log.citations) - len(answer.citations)
        for i, (cited, content) in enumerate(zip(answer.citations, answer.contents, strict=True)):
            self.cited_text[start + i] = (cited.cited_title, content)

    def transport_records(self) -> list:
        """Every wire's :class:`~kbsim.sim.transport.TransportRecord` rows: each agent's,
        the desk's, and the shared consumer's when it is a wire of its own."""
        wires = [*self.clients, self.desk] + ([self.shared] if self.shared not in self.clients else [])
        return [record for client in wires for record in client.ledger.records()]

    def tables(self, seed: int) -> dict[str, pd.DataFrame]:
        """The switched day's own tables, those with rows: ``intents``, ``transport``,
        ``agent_checks``, ``text_checks``."""
        out = {}
        for name, records in (("intents", self.intents), ("transport", self.transport_records()),
                              ("agent_checks", self.agent_checks), ("text_checks", self.text_checks)):
            if records:
                frame = pd.DataFrame([asdict(r) for r in records])
                frame.insert(0, "seed", pd.Series(seed, index=frame.index, dtype="int64"))
                out[name] = frame
        return out

    def saves_after(self, article_id: str, after: str, until: str) -> list[int]:
        """Indices of the saves of ``article_id`` with a version in ``(after, until]``."""
        low, high = parse_version(after), parse_version(until)
        return [
            i for i, save in enumerate(self.day.log.saves)
            if save.article_id == article_id and low < parse_version(save.version) <= high
        ]


# -- edits -----------------------------------------------------------------------------------


def switched_edit(agents: Agents, answer: Answer, delays: Iterator[float]):
    """An agent editing its first cited article after an approval delay, under the switches.

    As :func:`kbsim.sim.processes.agent_edit`, and: without compare-and-swap the store is
    told to expect whatever version is current when the request arrives (the tools
    require ``expected_version``; this is what a store without the check does); each send
    may lose its request or its reply, and the agent resends after a timeout and backoff,
    with the same key or (``edit.idempotency_key: false``) a fresh one, up to
    ``transport.max_retries`` times. Every time the store applies the edit, the versions it
    replaced beyond the one the edit was built on are lost updates.
    """
    day = agents.day
    env, store, kb_id, log, params = day.env, day.store, day.kb_id, day.log, day.params
    agent = agent_of(answer.answer_id, params.agents.count)
    client = agents.clients[agent]
    cited = answer.citations[0]
    note = f"\n\nAgent note for answer {answer.answer_id}."
    delay_s = next(delays)
    yield env.timeout(delay_s)
    edit_s = env.now
    base, content = cited.cited_version, answer.contents[0]
    outcome, retry_outcome, replay_ok = None, "none", None
    counts = {"applications": 0, "people": 0, "agents": 0, "c_people": 0, "c_agents": 0, "c_self": 0,
              "sends": 0, "lost": 0}
    my_versions: set[str] = set()
    attempt = 0
    while True:
        key = f"agent-{agent}-answer-{answer.answer_id}-try-{attempt}"
        arguments, arrived = None, False
        status, result = "lost", None
        for resend in range(params.transport.max_retries + 1):
            if resend:
                yield env.timeout(backoff_s(params.transport, resend))
            # the same request is resent (same key) once the store has seen it; until then, or
            # with fresh keys, a blind overwrite expects what is current when it arrives
            if not arrived or not params.edit.idempotency_key:
                if not params.edit.idempotency_key:
                    agents.fresh_keys += 1
                    key = f"agent-{agent}-answer-{answer.answer_id}-send-{agents.fresh_keys}"
                expected = base
                if not params.edit.compare_and_swap:
                    expected = store.current_version(kb_id, cited.article_id) or base
                arguments = {"knowledge_base_id": kb_id, "article_id": cited.article_id, "content": content + note,
                             "expected_version": expected, "idempotency_key": key}
            counts["sends"] += 1
            loss = client.loss()
            client.ledger.add("edit_knowledge_article", sends=1)
            if loss == REQUEST_LOST:
                counts["lost"] += 1
                client.ledger.add("edit_knowledge_article", lost_requests=1,
                                  wait_s=backoff_s(params.transport, resend + 1))
                continue
            arrived = True
            before = store.current_version(kb_id, cited.article_id)
            try:
                reply = client.client.call("edit_knowledge_article", arguments)
                sent_status = "applied"
            except ToolError as error:
                if error.code not in ("version_conflict", "not_found"):
                    raise
                reply, sent_status = None, ("conflict" if error.code == "version_conflict" else "gone")
                if sent_status == "conflict":
                    _attribute_conflict(agents, counts, before, agent, answer.answer_id)
            if reply is not None and not reply["replayed"]:
                _applied(agents, counts, cited.article_id, base, before, reply["updated_at"], agent, answer)
                my_versions.add(reply["updated_at"])
            if loss == REPLY_LOST:
                counts["lost"] += 1
                client.ledger.add("edit_knowledge_article", lost_replies=1,
                                  wait_s=backoff_s(params.transport, resend + 1))
                continue
            client.ledger.add("edit_knowledge_article", calls=1)
            status, result = sent_status, reply
            break
        if attempt == 0:
            outcome = status
        else:
            retry_outcome = status
        if status == "applied":
            if params.edit.idempotency_key:
                first = {**result, "replayed": False}
                replay_ok = replay_writes_nothing(client.client, store, kb_id, arguments, first)
            break
        if status in ("gone", "lost") or attempt >= params.edit.max_retries:
            break
        attempt += 1
        try:
            current = client.call("read_knowledge_article",
                                  {"knowledge_base_id": kb_id, "article_id": cited.article_id})
        except ToolError as error:
            if error.code != "not_found":
                raise
            retry_outcome = "gone"
            break
        base, content = current["updated_at"], current["content"]
        if params.edit.retry_waits_approval:
            yield env.timeout(next(delays))
    if params.edit.compare_and_swap and params.edit.idempotency_key and (
        counts["applications"] > 1 or counts["people"] or counts["agents"]
    ):
        raise DesignInvariantError(
            f"answer {answer.answer_id}'s edit of {cited.article_id} was applied {counts['applications']} times "
            f"and replaced {counts['people']} people's and {counts['agents']} agents' saves with "
            "compare-and-swap and idempotency keys on"
        )
    log.edits.append(EditRecord(
        answer_id=answer.answer_id, article_id=cited.article_id, asked_s=answer.asked_s, delay_s=delay_s,
        edit_s=edit_s, outcome=outcome, retries=attempt, retry_outcome=retry_outcome, replay_ok=replay_ok,
        people_saves_between=log.people_saves_between(cited.article_id, answer.asked_s, edit_s),
    ))
    agents.intents.append(IntentRecord(
        answer.answer_id, agent, cited.article_id, delay_s, outcome, counts["applications"], counts["people"],
        counts["agents"], counts["c_people"], counts["c_agents"], counts["c_self"], counts["sends"], counts["lost"],
    ))
    log.note(f"agent {agent}", edit_s, f"edit a{answer.answer_id} {cited.article_id}: {outcome}/{retry_outcome}")


def _applied(agents: Agents, counts: dict, article_id: str, base: str, before: str | None, version: str,
             agent: int, answer: Answer) -> None:
    """The store applied an edit built on ``base`` over ``before``: count what it replaced."""
    day = agents.day
    counts["applications"] += 1
    if before is not None and before != base:
        for index in agents.saves_after(article_id, base, before):
            save = day.log.saves[index]
            if save.actor == "people" and index not in agents.lost_saves:
                agents.lost_saves.add(index)
                counts["people"] += 1
            elif save.actor == "agent" and agents.writer.get(save.version, (None, None))[1] != answer.answer_id:
                counts["agents"] += 1
    agents.writer[version] = (agent, answer.answer_id)
    rank = day.questions_by.rank_of.get(article_id, -1)
    day.log.add_save(SaveRecord(day.env.now, "agent", "agent_edit", article_id, version, rank))


def _attribute_conflict(agents: Agents, counts: dict, current: str | None, agent: int, answer_id: int) -> None:
    """Who wrote the version a conflicting edit ran into: a person, another agent, or itself."""
    if current is None:
        return
    writer = agents.writer.get(current)
    if writer is None:
        counts["c_people"] += 1
    elif writer[1] == answer_id:
        counts["c_self"] += 1
    else:
        counts["c_agents"] += 1


# -- checks ------------------------------------------------------------------------------------


def text_staleness(day: Day, citations, cited_text: dict[int, tuple[str, str]]) -> dict[int, str]:
    """Truth by text: index -> GONE/CHANGED where the article is gone or its title or text
    differ from what was cited."""
    truth: dict[int, str] = {}
    for index, cited in enumerate(citations):
        if day.store.current_version(day.kb_id, cited.article_id) is None:
            truth[index] = GONE
            continue
        article = day.store.article_state(day.kb_id, cited.article_id)
        if (article.title, article.content) != cited_text[index]:
            truth[index] = CHANGED
    return truth


def _check_by_text(client, kb_id: str, citations, cited_text, article_ids, outcome: CheckOutcome) -> dict[int, str]:
    """Read each of ``article_ids`` in full and flag the citations of it whose text moved."""
    current: dict[str, tuple[str, str] | None] = {}
    for article_id in article_ids:
        read = outcome.call(client, "read_knowledge_article", {"knowledge_base_id": kb_id, "article_id": article_id})
        current[article_id] = None if read is None else (read["title"], read["content"])
    flagged: dict[int, str] = {}
    for index, cited in enumerate(citations):
        if cited.article_id not in current:
            continue
        now = current[cited.article_id]
        if now is None:
            flagged[index] = GONE
        elif now != cited_text[index]:
            flagged[index] = CHANGED
    return flagged


def reread_by_text(client, kb_id: str, citations, cited_text) -> CheckOutcome:
    """The re-read without versions: read every cited article and compare its text."""
    outcome = CheckOutcome()
    distinct = dict.fromkeys(cited.article_id for cited in citations)
    outcome.flagged = _check_by_text(client, kb_id, citations, cited_text, distinct, outcome)
    return outcome


def poll_by_text(client, kb_id: str, citations, cited_text, state: PollState, page_size: int,
                 flags: dict[int, str]) -> CheckOutcome:
    """The poll without versions: page the log from the cursor, read what moved in full and
    compare its text; ``flags`` (kept between checks) holds the verdicts of citations whose
    article has not moved since. On ``cursor_expired`` every cited article is read."""
    outcome = CheckOutcome()
    cited_ids = dict.fromkeys(cited.article_id for cited in citations)
    moved: dict[str, None] = {}
    after = state.cursor
    while True:
        outcome.calls += 1
        arguments = {"resource_type": "knowledge_base", "resource_id": kb_id, "after_sequence": after,
                     "limit": page_size}
        try:
            page, size = client.call_sized("poll_resource_events", arguments)
        except ToolError as error:
            if error.code != "cursor_expired":
                raise
            outcome.bytes += json_size({"error": error.to_dict()})
            outcome.cursor_expired = True
            moved = dict(cited_ids)
            after = error.details["latest_sequence"]
            break
        outcome.bytes += size
        moved.update((event["article_id"], None) for event in page["events"] if event["article_id"] in cited_ids)
        after = page["next_sequence"]
        if not page["has_more"]:
            break
    state.cursor = after
    fresh = _check_by_text(client, kb_id, citations, cited_text, moved, outcome)
    for index, cited in enumerate(citations):
        if cited.article_id in moved:
            flags.pop(index, None)
            if index in fresh:
                flags[index] = fresh[index]
    outcome.flagged = dict(flags)
    return outcome


def switched_checker(agents: Agents):
    """The checks of a switched day: the three strategies over every citation (one shared
    consumer, recorded as :func:`kbsim.sim.processes.checker` records them), and with several
    agents each agent's own poll and re-read of its own citations.

    The re-read is held to the store's truth at every check (by version, or by text without
    versions); so is the poll while unpublishing writes events.
    """
    day = agents.day
    env, store, kb_id, log, params = day.env, day.store, day.kb_id, day.log, day.params
    checks, n_agents = params.checks, params.agents.count
    by_version = params.citation.carries_version
    state = PollState(cursor=store.latest_sequence(kb_id))
    text_flags: dict[int, str] = {}
    own_states = [PollState(cursor=store.latest_sequence(kb_id)) for _ in range(n_agents)]
    client = agents.shared
    check_index = 1
    while check_index * checks.interval_s <= params.day_s + 1e-9:
        yield env.timeout(check_index * checks.interval_s - env.now)
        held = log.citations
        truth = true_staleness(store, kb_id, held)
        if by_version:
            reread = check_by_rereading(client, kb_id, held)
            poll = check_by_polling(client, kb_id, held, state, checks.poll_page_size)
            exact = truth
        else:
            reread = reread_by_text(client, kb_id, held, agents.cited_text)
            poll = poll_by_text(client, kb_id, held, agents.cited_text, state, checks.poll_page_size, text_flags)
            exact = text_staleness(day, held, agents.cited_text)
        outcomes = {"title": check_by_title(client, kb_id, held, checks.title_search_limit),
                    "reread": reread, "poll": poll}
        assert tuple(outcomes) == tuple(strategy.name for strategy in BUILT_IN)  # a switched day runs these three
        verify_exact(check_index, "reread", reread.flagged, exact)
        if params.events.log_unpublish:
            verify_exact(check_index, "poll", poll.flagged, exact)
        if not by_version:
            kept = sum(len(t.encode()) + len(c.encode()) for t, c in agents.cited_text.values())
            for strategy in TEXT_CHECKS:
                flagged = outcomes[strategy].flagged
                agents.text_checks.append(TextCheckRecord(
                    check_index, env.now, strategy, len(truth), len(flagged),
                    sum(1 for i in truth if i not in exact), kept))
        true_gone = sum(1 for v in truth.values() if v == GONE)
        for strategy, outcome in outcomes.items():
            flagged = outcome.flagged
            log.note_flags(strategy, env.now, flagged)
            gone = sum(1 for v in flagged.values() if v == GONE)
            log.checks.append(CheckRecord(
                check_index=check_index, time_s=env.now, strategy=strategy, calls=outcome.calls,
                bytes=outcome.bytes, citations_held=len(held), flagged=len(flagged), flagged_gone=gone,
                flagged_changed=len(flagged) - gone, true_stale=len(truth), true_gone=true_gone,
                true_changed=len(truth) - true_gone, true_positives=len(flagged.keys() & truth.keys()),
                cursor_expired=outcome.cursor_expired,
            ))
        if n_agents > 1:
            _own_checks(agents, check_index, held, own_states)
        log.note("checker", env.now, f"check {check_index}: {len(truth)}/{len(held)} stale")
        check_index += 1


def _own_checks(agents: Agents, check_index: int, held: list[CitationRecord], states: list[PollState]) -> None:
    """Each agent's own poll and re-read of its own citations, with its own cursor."""
    day = agents.day
    n = day.params.agents.count
    for agent, state in enumerate(states):
        mine = [cited for cited in held if agent_of(cited.answer_id, n) == agent]
        truth = true_staleness(day.store, day.kb_id, mine)
        client = agents.clients[agent]
        for strategy, outcome in (
            ("reread", check_by_rereading(client, day.kb_id, mine)),
            ("poll", check_by_polling(client, day.kb_id, mine, state, day.params.checks.poll_page_size)),
        ):
            agents.agent_checks.append(AgentCheckRecord(
                agent, check_index, day.env.now, strategy, outcome.calls, outcome.bytes, len(mine),
                len(outcome.flagged), len(truth)))


def on_answer_of(agents: Agents, edits: Callable[[Answer], None]) -> Callable[[Answer], None]:
    """What the agent of each answer does after it: keep its cited text (without versions),
    then maybe edit (``edits``, :func:`kbsim.sim.day.agent_edits` over :func:`switched_edit`)."""

    def on_answer(answer: Answer) -> None:
        agents.note_answer(answer)
        edits(answer)

    return on_answer


def conflict_counts(intents: list[IntentRecord]) -> np.ndarray:
    """Conflicts by who wrote the newer version: people, other agents, the edit itself."""
    return np.array([[i.conflicts_people, i.conflicts_agents, i.conflicts_self] for i in intents]).sum(axis=0)
