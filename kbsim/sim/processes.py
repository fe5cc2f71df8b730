"""The actors of the simulated day, as SimPy generator functions (the day first).

Each takes the :class:`~kbsim.sim.world.Day` it acts in (environment, store,
the agent's client, parameters, random streams, log, popularity) and, for
people, the arrivals it acts on. They never print or write files: they
call the store (people) or the agent's tool client (the agent) and append
records to the day's :class:`~kbsim.sim.records.DayLog`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kbsim.sim.activity import QuestionArrival, SaveArrival, delay_until
from kbsim.sim.checks import GONE, text_staleness, true_staleness, verify_exact
from kbsim.sim.corpus import Corpus
from kbsim.sim.popularity import UNIFORMS_PER_DRAW
from kbsim.sim.records import (
    AgentCheckRecord,
    CheckRecord,
    CitationRecord,
    DraftCitationRecord,
    EditRecord,
    IntentRecord,
    ReviewRecord,
    SaveRecord,
    TextCheckRecord,
)
from kbsim.sim.strategies import CheckScope, resolve
from kbsim.sim.transport import REPLY_LOST, REQUEST_LOST, LossyClient, ToolClient, backoff_s
from kbsim.sim.world import agent_of
from kbsim.store import Store, ToolError
from kbsim.store.rules import QUERY_CHARS

if TYPE_CHECKING:
    from kbsim.sim.world import Agents, Day

#: Uniforms the asker draws for each question whatever happens (see :func:`question_draws`).
QUERY_WORD_UNIFORMS = 24
QUESTION_UNIFORMS = UNIFORMS_PER_DRAW + QUERY_WORD_UNIFORMS


def query_word_positions(n_words: int, keep: int, uniforms: list[float]) -> list[int]:
    """Which ``keep`` of a title's ``n_words`` words make the query, in title order.

    The words with the ``keep`` smallest of the question's own uniforms: a uniformly
    random subset. A title longer than the uniforms (never in the synthetic corpus) draws
    its subset from a generator seeded by the first of them, still the question's own.
    """
    keep = min(keep, n_words)
    if n_words <= len(uniforms):
        return sorted(sorted(range(n_words), key=uniforms.__getitem__)[:keep])
    rng = np.random.default_rng(int(uniforms[0] * 2**63))
    return sorted(rng.choice(n_words, size=keep, replace=False).tolist())


def search_query(words: str, title: str) -> str:
    """The query a question sends: its title words, or (when they are shorter than a query
    may be, as a title of one-letter words gives) the whole title, cut to the longest query."""
    query = words if len(words) >= QUERY_CHARS[0] else title
    return query[: QUERY_CHARS[1]]


@dataclass(frozen=True)
class Answer:
    """An answer the agent gave: its citations and the text it read for each."""

    answer_id: int
    asked_s: float
    citations: tuple[CitationRecord, ...]
    contents: tuple[str, ...]


def editor(day: Day, arrivals: Iterable[SaveArrival]):
    """People saving articles: at each arrival, save its article (or one drawn by save
    popularity among the published ones) with its text (or text the day's corpus writes).

    Every save draws its own block of :data:`UNIFORMS_PER_DRAW` uniforms from the
    ``save_targets`` stream, used or not, so that saves after it keep their draws.
    """
    env, store, kb_id, log = day.env, day.store, day.kb_id, day.log
    rng, targets = day.streams["editors"], day.streams["save_targets"]
    # a synthetic body saved as its words, where the store takes them (the same state)
    save_words = getattr(store, "save_article_words", None) if hasattr(day.corpus, "rewrite_words") else None
    for arrival in arrivals:
        yield env.timeout(delay_until(env.now, arrival))
        uniforms = targets.random(UNIFORMS_PER_DRAW).tolist()
        article_id = arrival.article_id
        if article_id is None:
            article_id = day.saves_by.draw(uniforms, day.is_published, day.unpublished_ids)
            if article_id is None:
                continue
        kind, title, content = arrival.kind, None, None
        if kind == "unpublish":
            version = _unpublish(day, article_id)
        else:
            if kind == "content_and_title":
                title = arrival.title
                if title is None:
                    title = day.corpus.retitle(store.article_state(kb_id, article_id).title, rng,
                                               article_id=article_id)
            if day.params.drafts.share > 0 and day.streams["drafts"].random() < day.params.drafts.share:
                content = _new_content(day, article_id, arrival)
                day.drafts[article_id] = (title, content, env.now)
                env.process(_publish_draft(day, article_id, kind, title, content))
                continue
            if save_words is not None and arrival.content is None and arrival.content_length is None:
                corpus = day.corpus
                assert isinstance(corpus, Corpus)  # save_words is looked up for a synthetic corpus only
                words = corpus.rewrite_words(rng)
                version = save_words(kb_id, article_id, at=env.now, vocabulary=corpus.vocabulary, words=words,
                                     title=title)
                content = None if log.save_texts is None else corpus.content_of(words)
            else:
                content = _new_content(day, article_id, arrival)
                version = store.save_article(kb_id, article_id, at=env.now, content=content, title=title)
        rank = day.questions_by.rank_of.get(article_id, -1)
        log.add_save(SaveRecord(env.now, "people", kind, article_id, version, rank))
        if log.save_texts is not None:
            log.save_texts.append((title, content))
        log.note("people", env.now, f"{kind} {article_id}")
        if kind == "unpublish" and day.params.saves.replace_unpublished:
            _replace(day, article_id, rank)


def _publish_draft(day: Day, article_id: str, kind: str, title: str | None, content: str):
    """A person publishing their draft ``drafts.lead_s`` after writing it (nothing, when the
    article was unpublished meanwhile or a newer draft replaced it)."""
    env = day.env
    drafted_s = env.now
    yield env.timeout(day.params.drafts.lead_s)
    pending = day.drafts.get(article_id)
    if pending is None or pending[2] != drafted_s:
        return
    del day.drafts[article_id]
    if not day.is_published(article_id):
        return
    version = day.store.save_article(day.kb_id, article_id, at=env.now, content=content, title=title)
    rank = day.questions_by.rank_of.get(article_id, -1)
    day.log.add_save(SaveRecord(env.now, "people", kind, article_id, version, rank))
    if day.log.save_texts is not None:
        day.log.save_texts.append((title, content))
    day.log.note("people", env.now, f"publish draft {kind} {article_id}")


def _unpublish(day: Day, article_id: str) -> str:
    """People unpublishing an article; with ``events.log_unpublish: false`` it writes no
    event (the keyword is passed only then, so any backend runs the default day)."""
    if day.params.events.log_unpublish:
        return day.store.unpublish_article(day.kb_id, article_id, at=day.env.now)
    return day.store.unpublish_article(day.kb_id, article_id, at=day.env.now, log_event=False)


def _replace(day: Day, old_id: str, rank: int) -> None:
    """A steady-state knowledge base: a new article, written by the day's corpus, takes the
    unpublished article's popularity (in the question and the save ranking)."""
    env, rng = day.env, day.streams["editors"]
    title, content = day.corpus.title(rng), day.corpus.body(rng)
    new_id = day.store.publish_article(day.kb_id, title=title, content=content, at=env.now)
    for popularity in {id(p): p for p in (day.questions_by, day.saves_by)}.values():
        if old_id in popularity.rank_of:
            popularity.replace(old_id, new_id)
    version = day.store.current_version(day.kb_id, new_id)
    assert version is not None  # the article was just published
    day.log.add_save(SaveRecord(env.now, "people", "publish", new_id, version, rank))
    if day.log.save_texts is not None:
        day.log.save_texts.append((title, content))
    day.log.note("people", env.now, f"publish {new_id}")


def _new_content(day: Day, article_id: str, arrival: SaveArrival) -> str:
    """A save's content: the arrival's own, or what the day's corpus writes (at the
    arrival's length when it gives one)."""
    if arrival.content is not None:
        return arrival.content
    # (the synthetic corpus writes a fresh body: its articles' old contents need not be read)
    old = day.store.article_state(day.kb_id, article_id).content if day.corpus.uses_old_content else ""
    written = day.corpus.rewrite(old, day.streams["editors"], article_id=article_id)
    if arrival.content_length is None:
        return written
    return fit_length(written, arrival.content_length)


def fit_length(text: str, length: int) -> str:
    """``text`` cut, or repeated (a space between copies), to exactly ``length`` characters."""
    if length <= len(text) or not text:
        return text[:length] if text else " " * length
    copies = -(-(length + 1) // (len(text) + 1))
    return " ".join([text] * copies)[:length]


def asker(day: Day, arrivals: Iterable[QuestionArrival], on_answer: Callable[[Answer], None]):
    """People asking: the agent searches, reads the top hits, cites them.

    The question is about its arrival's article, or one drawn by question popularity
    among the published ones (none when the arrival gives only a query); the query is
    the arrival's, or title words of that article. Each question draws its own block of
    :data:`QUESTION_UNIFORMS` uniforms from the ``question_draws`` stream (the target,
    then the query words), used or not, so that days which differ in one question's draw
    keep every other question in step.
    """
    env, client, store, kb_id, log = day.env, day.client, day.store, day.kb_id, day.log
    rng, rank_of = day.streams["question_draws"], day.questions_by.rank_of
    q = day.params.questions
    for answer_id, arrival in enumerate(arrivals):
        yield env.timeout(delay_until(env.now, arrival))
        uniforms = rng.random(QUESTION_UNIFORMS).tolist()
        target = arrival.article_id
        if target is None and arrival.query is None:
            target = day.questions_by.draw(uniforms[:UNIFORMS_PER_DRAW], day.is_published, day.unpublished_ids)
            if target is None:
                continue
        query = arrival.query
        if query is None:
            assert target is not None  # a question with no query asks of an article
            title = store.article_state(kb_id, target).title
            words = title.split()
            positions = query_word_positions(len(words), q.query_words, uniforms[UNIFORMS_PER_DRAW:])
            query = search_query(" ".join(words[i] for i in positions), title)
        hits = client.call(
            "search_knowledge_base",
            {"knowledge_base_id": kb_id, "query": query, "limit": q.search_limit},
        )["results"]
        citations, contents = [], []
        for position, hit in enumerate(hits[: q.citations_per_answer]):
            read = client.call(
                "read_knowledge_article",
                {"knowledge_base_id": kb_id, "article_id": hit["article_id"]},
            )
            citation = CitationRecord(
                answer_id=answer_id,
                position=position,
                asked_s=env.now,
                target_article_id=target or "",
                article_id=read["article_id"],
                popularity_rank=rank_of[read["article_id"]],
                cited_version=read["updated_at"],
                cited_title=read["title"],
                target_rank=rank_of.get(target, -1) if target else -1,
            )
            citations.append(citation)
            contents.append(_answered_text(day, answer_id, position, read))
        log.citations.extend(citations)
        if log.questions is not None:
            log.questions.append((env.now, target, query))
        log.note("asker", env.now, f"q{answer_id} {query!r} -> {[c.article_id for c in citations]}")
        on_answer(Answer(answer_id, env.now, tuple(citations), tuple(contents)))


def _answered_text(day: Day, answer_id: int, position: int, read: dict) -> str:
    """The text the agent answers from: the article as read, or, when it answers from drafts
    (``drafts.answer_from_drafts``), a person's pending draft of it, which no one has
    published (recorded in ``draft_citations``)."""
    if not day.params.drafts.answer_from_drafts:
        return read["content"]
    draft = day.drafts.get(read["article_id"])
    if draft is None:
        return read["content"]
    day.log.draft_citations.append(
        DraftCitationRecord(answer_id, position, read["article_id"], day.env.now, draft[2]))
    return draft[1]


def checker(day: Day):
    """The agent checking every citation it has given, each of the day's strategies
    (``checks.strategies``, :mod:`kbsim.sim.strategies`), at every interval.

    The strategies held exact must agree exactly with the store's ground truth (by version;
    by the text cited when citations carry no version); a disagreement raises
    :class:`~kbsim.sim.checks.StalenessMismatch`. Each keeps its own state for the day. At a
    check the exact strategies run first, then the others (one instant, one state of the
    store; over a lossy wire, so its draws fall as they always have), and every table keeps
    the day's order. Without versions, each exact strategy's text check is measured against
    the versions' truth (``text_checks``); with several agents, each agent also runs the
    exact strategies over its own citations through its own client, with its own state
    (``agent_checks``), which is what one shared consumer saves them.
    """
    env, store, kb_id, log, params = day.env, day.store, day.kb_id, day.log, day.params
    checks, n_agents = params.checks, params.agents.count
    running = resolve(checks.strategies)
    scope = CheckScope(day, day.check_client, day.cited_text)
    states = {strategy.name: None if strategy.start is None else strategy.start(scope) for strategy in running}
    first = sorted(running, key=lambda strategy: not strategy.exact)  # stable: the exact ones, then the rest
    own = [strategy for strategy in running if strategy.exact] if n_agents > 1 else []
    own_scopes = [CheckScope(day, client) for client in day.agents.clients] if own and day.agents else []
    own_states = [{s.name: None if s.start is None else s.start(mine) for s in own} for mine in own_scopes]
    check_index = 1
    while check_index * checks.interval_s <= params.day_s + 1e-9:
        yield env.timeout(check_index * checks.interval_s - env.now)
        held = log.citations
        truth = true_staleness(store, kb_id, held)
        ran = {strategy.name: strategy.check(scope, held, states[strategy.name]) for strategy in first}
        outcomes = {strategy.name: ran[strategy.name] for strategy in running}
        exact = truth if scope.cited_text is None else text_staleness(store, kb_id, held, scope.cited_text)
        for strategy in running:
            if strategy.held_exact(params):
                verify_exact(check_index, strategy.name, outcomes[strategy.name].flagged, exact)
        if scope.cited_text is not None:
            _text_checks(day, check_index, running, outcomes, truth, exact)
        true_gone = sum(1 for v in truth.values() if v == GONE)
        for name, outcome in outcomes.items():
            flagged = outcome.flagged
            log.note_flags(name, env.now, flagged)
            gone = sum(1 for v in flagged.values() if v == GONE)
            log.checks.append(
                CheckRecord(
                    check_index=check_index,
                    time_s=env.now,
                    strategy=name,
                    calls=outcome.calls,
                    bytes=outcome.bytes,
                    citations_held=len(held),
                    flagged=len(flagged),
                    flagged_gone=gone,
                    flagged_changed=len(flagged) - gone,
                    true_stale=len(truth),
                    true_gone=true_gone,
                    true_changed=len(truth) - true_gone,
                    true_positives=len(flagged.keys() & truth.keys()),
                    cursor_expired=outcome.cursor_expired,
                )
            )
        for agent, (mine_scope, mine_states) in enumerate(zip(own_scopes, own_states, strict=True)):
            _own_checks(day, check_index, agent, held, own, mine_scope, mine_states)
        log.note("checker", env.now, f"check {check_index}: {len(truth)}/{len(held)} stale")
        check_index += 1


def _text_checks(day: Day, check_index: int, running, outcomes, truth: dict[int, str], exact: dict[int, str]) -> None:
    """Without versions: what each exact strategy's text check found against the versions' truth."""
    cited_text = day.cited_text or {}
    kept = sum(len(t.encode()) + len(c.encode()) for t, c in cited_text.values())
    restored = sum(1 for i in truth if i not in exact)
    for strategy in running:
        if strategy.exact:
            flagged = outcomes[strategy.name].flagged
            day.log.text_checks.append(
                TextCheckRecord(check_index, day.env.now, strategy.name, len(truth), len(flagged), restored, kept))


def _own_checks(day: Day, check_index: int, agent: int, held: list[CitationRecord], own, scope: CheckScope,
                states: dict) -> None:
    """One agent's own checks of its own citations (by version), with its own client and state."""
    mine = [cited for cited in held if agent_of(cited.answer_id, day.params.agents.count) == agent]
    truth = true_staleness(day.store, day.kb_id, mine)
    outcomes = [(strategy.name, strategy.check(scope, mine, states[strategy.name])) for strategy in own]
    for name, outcome in outcomes:
        day.log.agent_checks.append(AgentCheckRecord(
            agent, check_index, day.env.now, name, outcome.calls, outcome.bytes, len(mine),
            len(outcome.flagged), len(truth)))


class DesignInvariantError(AssertionError):
    """With compare-and-swap and idempotency keys on, a lost update or a duplicate write."""


@dataclass
class _EditTally:
    """What one intended edit did to the store, counted over its tries and resends."""

    applications: int = 0
    people: int = 0
    agents: int = 0
    conflicts_people: int = 0
    conflicts_agents: int = 0
    conflicts_self: int = 0
    sends: int = 0
    lost: int = 0


def agent_edit(day: Day, answer: Answer, delays: Iterator[float]):
    """The agent editing its first cited article after an approval delay.

    It passes the cited ``updated_at`` as ``expected_version``. On a conflict it re-reads,
    re-applies its change to the current text and retries (each retry waits for approval
    again unless configured otherwise). After an applied edit it replays the identical
    call, which must come back ``replayed`` and write no event.

    On a day with the design switches the edit is the answering agent's, over its lossy
    wire (:func:`_send`): without compare-and-swap the store is told to expect whatever
    version is current when the request arrives (a store without the check); each send may
    lose its request or its reply, and the agent resends, with the same key or
    (``edit.idempotency_key: false``) a fresh one. Every time the store applies the edit,
    the versions it replaced beyond the one it was built on are lost updates (the
    ``intents`` table); with compare-and-swap and keys on there must be none.

    Issue 37's counterfactuals: without a version in the citation
    (``citation.edit_without_version``) the edit overwrites whatever is current, built on the
    text cited (``overwrite``) or on a read made just before the edit call, whose approval
    then runs (``reread``). Under the approval model (``review.wrong_share`` > 0) a share of
    edits is wrong; a per-call reviewer refuses a share of those (outcome ``refused``, never
    sent), while a session-wide permission lets every one through (the ``reviews`` table).
    """
    env, store, kb_id, log, params = day.env, day.store, day.kb_id, day.log, day.params
    agents = day.agents
    agent = agent_of(answer.answer_id, params.agents.count)
    client = day.agent_client(answer.answer_id)
    cited = answer.citations[0]
    note = f"\n\nAgent note for answer {answer.answer_id}."
    review = params.review
    wrong = refused = False
    if review.wrong_share > 0:  # two uniforms per edit, used or not, so the edits keep in step
        u_wrong, u_catch = day.streams["review"].random(2)
        wrong = bool(u_wrong < review.wrong_share)
        refused = wrong and review.per_call and bool(u_catch < review.catch_share)
    version, content = cited.cited_version, answer.contents[0]
    if params.citation.edit_without_version == "reread":
        # no version to send: read again just before the edit call, whose approval then runs
        try:
            current = client.call("read_knowledge_article",
                                  {"knowledge_base_id": kb_id, "article_id": cited.article_id})
            version, content = current["updated_at"], current["content"]
        except ToolError as error:
            if error.code != "not_found":
                raise
    delay_s = next(delays)
    yield env.timeout(delay_s)
    edit_s = env.now
    outcome, retry_outcome, replay_ok = None, "none", None
    tally = _EditTally()
    attempt = 0  # 0 = the first try; each retry adds one
    while not refused:
        status, result, arguments = yield from _send(day, client, answer, version, content + note, attempt, tally)
        if attempt == 0:
            outcome = status
        else:
            retry_outcome = status
        if status == "applied":
            if params.edit.idempotency_key:
                raw = client.client if isinstance(client, LossyClient) else client  # on a day of agents
                replay_ok = replay_writes_nothing(raw, store, kb_id, arguments, {**result, "replayed": False})
            break
        if status in ("gone", "lost") or attempt >= params.edit.max_retries:
            break
        attempt += 1
        try:
            current = client.call(
                "read_knowledge_article", {"knowledge_base_id": kb_id, "article_id": cited.article_id}
            )
        except ToolError as error:
            if error.code != "not_found":
                raise
            retry_outcome = "gone"
            break
        version, content = current["updated_at"], current["content"]
        if params.edit.retry_waits_approval:
            yield env.timeout(next(delays))
    if refused:
        outcome = "refused"
    if not _blind(params) and params.edit.idempotency_key and (
        tally.applications > 1 or tally.people or tally.agents
    ):
        raise DesignInvariantError(
            f"answer {answer.answer_id}'s edit of {cited.article_id} was applied {tally.applications} times "
            f"and replaced {tally.people} people's and {tally.agents} agents' saves with "
            "compare-and-swap and idempotency keys on"
        )
    assert outcome is not None  # the first try's status
    people_between = log.people_saves_between(cited.article_id, answer.asked_s, edit_s)
    log.edits.append(
        EditRecord(
            answer_id=answer.answer_id,
            article_id=cited.article_id,
            asked_s=answer.asked_s,
            delay_s=delay_s,
            edit_s=edit_s,
            outcome=outcome,
            retries=attempt,
            retry_outcome=retry_outcome,
            replay_ok=replay_ok,
            people_saves_between=people_between,
        )
    )
    if agents is not None:
        log.intents.append(IntentRecord(
            answer.answer_id, agent, cited.article_id, delay_s, outcome, tally.applications, tally.people,
            tally.agents, tally.conflicts_people, tally.conflicts_agents, tally.conflicts_self, tally.sends,
            tally.lost,
        ))
    if review.wrong_share > 0:
        log.reviews.append(ReviewRecord(answer.answer_id, agent, wrong, refused, tally.applications > 0))
    actor = "agent" if agents is None else f"agent {agent}"
    log.note(actor, edit_s, f"edit a{answer.answer_id} {cited.article_id}: {outcome}/{retry_outcome}")


def _send(day: Day, client, answer: Answer, base: str, text: str, attempt: int, tally: _EditTally):
    """One try of an edit built on version ``base``: ``(status, reply, arguments)``.

    The agent's plain client answers at once. Over a day's lossy wire a lost request or
    reply is sent again after a timeout and backoff (spent in simulated time), up to
    ``transport.max_retries`` times (status ``"lost"`` when no reply ever came): the same
    request with the same key once the store has seen it; until then, or with fresh keys,
    a blind overwrite expects what is current when it arrives.
    """
    env, store, kb_id, params = day.env, day.store, day.kb_id, day.params
    agents = day.agents
    article_id = answer.citations[0].article_id
    agent = agent_of(answer.answer_id, params.agents.count)
    key = f"answer-{answer.answer_id}-try-{attempt}"
    if agents is not None:
        key = f"agent-{agent}-{key}"
    arguments: dict = {}
    arrived = False
    status, result = "lost", None
    for resend in range(params.transport.max_retries + 1):
        if resend:
            yield env.timeout(backoff_s(params.transport, resend))
        if not arrived or not params.edit.idempotency_key:
            if not params.edit.idempotency_key and agents is not None:
                agents.fresh_keys += 1
                key = f"agent-{agent}-answer-{answer.answer_id}-send-{agents.fresh_keys}"
            expected = base
            if _blind(params):
                expected = store.current_version(kb_id, article_id) or base
            arguments = {"knowledge_base_id": kb_id, "article_id": article_id, "content": text,
                         "expected_version": expected, "idempotency_key": key}
        loss = None
        if agents is not None:
            tally.sends += 1
            loss = client.loss()
            client.ledger.add("edit_knowledge_article", sends=1)
            if loss == REQUEST_LOST:
                tally.lost += 1
                client.ledger.add("edit_knowledge_article", lost_requests=1,
                                  wait_s=backoff_s(params.transport, resend + 1))
                continue
        arrived = True
        before = store.current_version(kb_id, article_id) if agents is not None else None
        try:  # past the wire's draw: the store itself answers (the wire counted the send)
            reply = (client if agents is None else client.client).call("edit_knowledge_article", arguments)
            sent_status = "applied"
        except ToolError as error:
            if error.code not in ("version_conflict", "not_found"):
                raise
            reply, sent_status = None, ("conflict" if error.code == "version_conflict" else "gone")
            if sent_status == "conflict" and agents is not None:
                _attribute_conflict(agents, tally, before, answer.answer_id)
        if reply is not None and not reply["replayed"]:
            _applied(day, tally, article_id, base, before, reply["updated_at"], agent, answer.answer_id)
        if loss == REPLY_LOST:
            tally.lost += 1
            client.ledger.add("edit_knowledge_article", lost_replies=1,
                              wait_s=backoff_s(params.transport, resend + 1))
            continue
        if agents is not None:
            client.ledger.add("edit_knowledge_article", calls=1)
        status, result = sent_status, reply
        break
    return status, result, arguments


def _blind(params) -> bool:
    """Whether the agent's edits overwrite whatever is current: without compare-and-swap, or
    without a version in the citation to send (``citation.edit_without_version``)."""
    return not params.edit.compare_and_swap or params.citation.edit_without_version != "cited_version"


def _applied(day: Day, tally: _EditTally, article_id: str, base: str, before: str | None, version: str,
             agent: int, answer_id: int) -> None:
    """The store applied an edit built on ``base`` over ``before`` (known on a day with the
    switches): record the agent's save, and count what it replaced."""
    tally.applications += 1
    agents = day.agents
    if agents is not None:
        if before is not None and before != base:
            for index in agents.saves_after(day.log, article_id, base, before):
                save = day.log.saves[index]
                if save.actor == "people" and index not in agents.lost_saves:
                    agents.lost_saves.add(index)
                    tally.people += 1
                elif save.actor == "agent" and agents.writer.get(save.version, (None, None))[1] != answer_id:
                    tally.agents += 1
        agents.writer[version] = (agent, answer_id)
    rank = day.questions_by.rank_of.get(article_id, -1)
    day.log.add_save(SaveRecord(day.env.now, "agent", "agent_edit", article_id, version, rank))


def _attribute_conflict(agents: Agents, tally: _EditTally, current: str | None, answer_id: int) -> None:
    """Who wrote the version a conflicting edit ran into: a person, another agent, or itself."""
    if current is None:
        return
    writer = agents.writer.get(current)
    if writer is None:
        tally.conflicts_people += 1
    elif writer[1] == answer_id:
        tally.conflicts_self += 1
    else:
        tally.conflicts_agents += 1


class ReplayError(AssertionError):
    """An identical edit call with the same key did not replay cleanly."""


def replay_writes_nothing(client: ToolClient, store: Store, kb_id: str, arguments, first) -> bool:
    """Send ``arguments`` (an edit with an idempotency key) again and check it replays.

    The second call must answer ``replayed`` with the first answer ``first`` otherwise
    unchanged, and must leave the knowledge base's event log where it was: a key makes a
    retry harmless only if it writes nothing. Used by the agent's edit process.

    Returns:
        True (so the caller can record the check as passed).

    Raises:
        ReplayError: the replay answered differently or moved the event log.
    """
    before = store.latest_sequence(kb_id)
    again = client.call("edit_knowledge_article", dict(arguments))
    after = store.latest_sequence(kb_id)
    if not again.get("replayed") or after != before or {**again, "replayed": False} != first:
        raise ReplayError(
            f"replaying idempotency_key {arguments['idempotency_key']!r} gave {again!r} "
            f"and moved the log from {before} to {after}"
        )
    return True
