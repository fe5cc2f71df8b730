"""The actors of the simulated day, as SimPy generator functions (``env`` first).

They never print or write files: they call the store (people) or the
agent's tool client (the agent) and append records to a :class:`DayLog`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from kbsim.params import DayParams
from kbsim.sim.checks import (
    STRATEGIES,
    PollState,
    check_by_polling,
    check_by_rereading,
    check_by_title,
    true_staleness,
    verify_exact,
)
from kbsim.sim.corpus import Corpus
from kbsim.sim.popularity import UNIFORMS_PER_DRAW
from kbsim.sim.records import CheckRecord, CitationRecord, DayLog, EditRecord, SaveRecord
from kbsim.store import Client, MemoryStore, ToolError

ChooseArticle = Callable[[], str | None]
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


@dataclass(frozen=True)
class Answer:
    """An answer the agent gave: its citations and the text it read for each."""

    answer_id: int
    asked_s: float
    citations: tuple[CitationRecord, ...]
    contents: tuple[str, ...]


def editor(
    env,
    store: MemoryStore,
    kb_id: str,
    arrivals: Iterable[tuple[float, str]],
    choose: ChooseArticle,
    corpus: Corpus,
    rng: np.random.Generator,
    log: DayLog,
):
    """People saving articles: at each ``(time, kind)`` arrival, save a chosen article."""
    for time_s, kind in arrivals:
        yield env.timeout(time_s - env.now)
        article_id = choose()
        if article_id is None:
            continue
        if kind == "unpublish":
            version = store.unpublish_article(kb_id, article_id, at=env.now)
        elif kind == "content_and_title":
            title = corpus.retitle(store.article_state(kb_id, article_id).title, rng)
            version = store.save_article(
                kb_id, article_id, at=env.now, content=corpus.body(rng), title=title
            )
        else:
            version = store.save_article(kb_id, article_id, at=env.now, content=corpus.body(rng))
        log.add_save(SaveRecord(env.now, "people", kind, article_id, version))
        log.note("people", env.now, f"{kind} {article_id}")


def asker(
    env,
    client: Client,
    store: MemoryStore,
    kb_id: str,
    times: Iterable[float],
    choose: Callable[[list[float]], str | None],
    rank_of: dict[str, int],
    params: DayParams,
    rng: np.random.Generator,
    log: DayLog,
    on_answer: Callable[[Answer], None],
):
    """People asking: the agent searches with title words, reads the top hits, cites them.

    Each question draws its own block of :data:`QUESTION_UNIFORMS` uniforms from ``rng``
    (the target by ``choose(uniforms)``, then the query words), used or not, so that
    days which differ in one question's draw keep every other question in step.
    """
    q = params.questions
    for answer_id, time_s in enumerate(times):
        yield env.timeout(time_s - env.now)
        uniforms = rng.random(QUESTION_UNIFORMS).tolist()
        target = choose(uniforms[:UNIFORMS_PER_DRAW])
        if target is None:
            continue
        words = store.article_state(kb_id, target).title.split()
        positions = query_word_positions(len(words), q.query_words, uniforms[UNIFORMS_PER_DRAW:])
        query = " ".join(words[i] for i in positions)
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
                target_article_id=target,
                article_id=read["article_id"],
                popularity_rank=rank_of[read["article_id"]],
                cited_version=read["updated_at"],
                cited_title=read["title"],
            )
            citations.append(citation)
            contents.append(read["content"])
        log.citations.extend(citations)
        log.note("asker", env.now, f"q{answer_id} {query!r} -> {[c.article_id for c in citations]}")
        on_answer(Answer(answer_id, env.now, tuple(citations), tuple(contents)))


def checker(
    env,
    client: Client,
    store: MemoryStore,
    kb_id: str,
    params: DayParams,
    log: DayLog,
):
    """The agent checking every citation it has given, three ways, at every interval.

    Re-read and poll must agree exactly with the store's ground truth; a
    disagreement raises :class:`~kbsim.sim.checks.StalenessMismatch`.
    """
    checks = params.checks
    state = PollState(cursor=store.latest_sequence(kb_id))
    check_index = 1
    while check_index * checks.interval_s <= params.day_s + 1e-9:
        yield env.timeout(check_index * checks.interval_s - env.now)
        held = log.citations
        truth = true_staleness(store, kb_id, held)
        outcomes = {
            "title": check_by_title(client, kb_id, held, checks.title_search_limit),
            "reread": check_by_rereading(client, kb_id, held),
            "poll": check_by_polling(client, kb_id, held, state, checks.poll_page_size),
        }
        assert tuple(outcomes) == STRATEGIES
        verify_exact(check_index, "reread", outcomes["reread"].flagged, truth)
        verify_exact(check_index, "poll", outcomes["poll"].flagged, truth)
        true_gone = sum(1 for v in truth.values() if v == "gone")
        for strategy, outcome in outcomes.items():
            flagged = outcome.flagged
            log.note_flags(strategy, env.now, flagged)
            gone = sum(1 for v in flagged.values() if v == "gone")
            log.checks.append(
                CheckRecord(
                    check_index=check_index,
                    time_s=env.now,
                    strategy=strategy,
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
        log.note("checker", env.now, f"check {check_index}: {len(truth)}/{len(held)} stale")
        check_index += 1


def agent_edit(
    env,
    client: Client,
    store: MemoryStore,
    kb_id: str,
    answer: Answer,
    delays: Iterator[float],
    params: DayParams,
    log: DayLog,
):
    """The agent editing its first cited article after an approval delay.

    It passes the cited ``updated_at`` as ``expected_version``. On a conflict
    it re-reads, re-applies its change to the current text and retries (each
    retry waits for approval again unless configured otherwise). After an
    applied edit it replays the identical call, which must come back
    ``replayed`` and write no event.
    """
    cited = answer.citations[0]
    note = f"\n\nAgent note for answer {answer.answer_id}."
    delay_s = next(delays)
    yield env.timeout(delay_s)
    edit_s = env.now
    version, content = cited.cited_version, answer.contents[0]
    outcome, retry_outcome, replay_ok = None, "none", None
    attempt = 0  # 0 = the first try; each retry adds one
    while True:
        arguments = {
            "knowledge_base_id": kb_id,
            "article_id": cited.article_id,
            "content": content + note,
            "expected_version": version,
            "idempotency_key": f"answer-{answer.answer_id}-try-{attempt}",
        }
        try:
            result = client.call("edit_knowledge_article", arguments)
            status = "applied"
        except ToolError as error:
            if error.code not in ("version_conflict", "not_found"):
                raise
            status = "conflict" if error.code == "version_conflict" else "gone"
        if attempt == 0:
            outcome = status
        else:
            retry_outcome = status
        if status == "applied":
            log.add_save(SaveRecord(env.now, "agent", "agent_edit", cited.article_id, result["updated_at"]))
            replay_ok = _replay_writes_nothing(client, store, kb_id, arguments, result)
            break
        if status == "gone" or attempt >= params.edit.max_retries:
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
    log.note("agent", edit_s, f"edit a{answer.answer_id} {cited.article_id}: {outcome}/{retry_outcome}")


class ReplayError(AssertionError):
    """An identical edit call with the same key did not replay cleanly."""


def _replay_writes_nothing(client: Client, store: MemoryStore, kb_id: str, arguments, first) -> bool:
    before = store.latest_sequence(kb_id)
    again = client.call("edit_knowledge_article", dict(arguments))
    after = store.latest_sequence(kb_id)
    if not again.get("replayed") or after != before or {**again, "replayed": False} != first:
        raise ReplayError(
            f"replaying idempotency_key {arguments['idempotency_key']!r} gave {again!r} "
            f"and moved the log from {before} to {after}"
        )
    return True
