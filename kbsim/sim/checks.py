"""The agent's ways of finding its stale citations, and the ground truth.

Plain functions over a tool client (no SimPy): each returns what it flagged
and what it cost. A citation is flagged "gone" (unpublished) or "changed".
The strategies of :mod:`kbsim.sim.strategies` run them at a check of a day; without
versions in the citations, the exact ones compare text (:func:`reread_by_text`,
:func:`poll_by_text`, held to :func:`text_staleness`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kbsim.sim.records import CitationRecord
from kbsim.store import Client, Store, ToolError, json_size

GONE = "gone"
CHANGED = "changed"


class StalenessMismatch(AssertionError):
    """A strategy that must be exact flagged something other than the truth."""


@dataclass
class CheckOutcome:
    """What one strategy flagged (citation index -> GONE/CHANGED) and its cost."""

    flagged: dict[int, str] = field(default_factory=dict)
    calls: int = 0
    bytes: int = 0
    cursor_expired: bool = False

    def call(self, client: Client, name: str, arguments: dict) -> dict | None:
        """Make one tool call, counting it; returns None on not_found."""
        self.calls += 1
        try:
            result, size = client.call_sized(name, arguments)
        except ToolError as error:
            self.bytes += json_size({"error": error.to_dict()})
            if error.code == "not_found":
                return None
            raise
        self.bytes += size
        return result


def true_staleness(
    store: Store, kb_id: str, citations: Sequence[CitationRecord]
) -> dict[int, str]:
    """Ground truth from the store: index -> GONE/CHANGED for every stale citation."""
    truth: dict[int, str] = {}
    current: dict[str, str | None] = {}
    for index, cited in enumerate(citations):
        article_id = cited.article_id
        if article_id not in current:
            current[article_id] = store.current_version(kb_id, article_id)
        version = current[article_id]
        if version is None:
            truth[index] = GONE
        elif version != cited.cited_version:
            truth[index] = CHANGED
    return truth


def check_by_title(
    client: Client, kb_id: str, citations: Sequence[CitationRecord], limit: int
) -> CheckOutcome:
    """Search each cited title again; flags only retitled or vanished articles.

    One search per distinct (article, cited title), as :func:`check_by_title_per_call`
    makes them; they all happen at one instant against one state of the store, so they
    are asked together (:meth:`Client.search_titles`), which ranks them in one batch and
    answers only what the check reads of each: the cited article's hit, and the size. The
    title check was about 40% of a day's time call by call. Every search is still counted
    and sized, and answered as the call would be. On any tool error the check is made
    again call by call, which meets the error exactly as the plain check does.
    """
    keys = dict.fromkeys((cited.article_id, cited.cited_title) for cited in citations)
    try:
        answers = client.search_titles(
            kb_id, [title[:200] for _, title in keys], [article_id for article_id, _ in keys], limit
        )
    except ToolError:
        return check_by_title_per_call(client, kb_id, citations, limit)
    outcome = CheckOutcome(calls=len(keys))
    verdicts: dict[tuple[str, str], str | None] = {}
    for key, (current, size) in zip(keys, answers, strict=True):
        outcome.bytes += size
        if current is None:
            verdicts[key] = GONE
        elif current != key[1]:
            verdicts[key] = CHANGED
        else:
            verdicts[key] = None
    for index, cited in enumerate(citations):
        verdict = verdicts[cited.article_id, cited.cited_title]
        if verdict is not None:
            outcome.flagged[index] = verdict
    return outcome


def check_by_title_per_call(
    client: Client, kb_id: str, citations: Sequence[CitationRecord], limit: int
) -> CheckOutcome:
    """The title check call by call through ``client.call``: the reference
    :func:`check_by_title` is held to."""
    outcome = CheckOutcome()
    verdicts: dict[tuple[str, str], str | None] = {}
    for index, cited in enumerate(citations):
        key = (cited.article_id, cited.cited_title)
        if key not in verdicts:
            result = outcome.call(
                client,
                "search_knowledge_base",
                {"knowledge_base_id": kb_id, "query": cited.cited_title[:200], "limit": limit},
            )
            hits = {hit["article_id"]: hit["title"] for hit in result["results"]}
            if cited.article_id not in hits:
                verdicts[key] = GONE
            elif hits[cited.article_id] != cited.cited_title:
                verdicts[key] = CHANGED
            else:
                verdicts[key] = None
        if verdicts[key] is not None:
            outcome.flagged[index] = verdicts[key]
    return outcome


def reread_articles(
    outcome: CheckOutcome, client: Client, kb_id: str, article_ids
) -> dict[str, str | None]:
    """Read each article once; its current version, or None when gone.

    The reads happen at one instant, so they are asked together
    (:meth:`Client.read_many`: each counted and sized as its call, no result built);
    :func:`reread_articles_per_call` is the plain path it is held to, and the one taken
    on any other error, to meet it exactly as the calls would.
    """
    article_ids = list(article_ids)
    try:
        answers = client.read_many(kb_id, article_ids)
    except ToolError:
        return reread_articles_per_call(outcome, client, kb_id, article_ids)
    current: dict[str, str | None] = {}
    for article_id, (version, size) in zip(article_ids, answers, strict=True):
        outcome.calls += 1
        outcome.bytes += size
        current[article_id] = version
    return current


def reread_articles_per_call(
    outcome: CheckOutcome, client: Client, kb_id: str, article_ids
) -> dict[str, str | None]:
    """:func:`reread_articles` call by call through ``client.call``."""
    current: dict[str, str | None] = {}
    for article_id in article_ids:
        result = outcome.call(
            client, "read_knowledge_article", {"knowledge_base_id": kb_id, "article_id": article_id}
        )
        current[article_id] = None if result is None else result["updated_at"]
    return current


def flag_citations(citations: Sequence[CitationRecord], known: dict[str, str | None]) -> dict[int, str]:
    """Index -> GONE/CHANGED of each citation whose article's current version is ``known``
    (None: gone) and is not the version it cited; citations of other articles are not flagged."""
    flagged: dict[int, str] = {}
    for index, cited in enumerate(citations):
        if cited.article_id not in known:
            continue
        version = known[cited.article_id]
        if version is None:
            flagged[index] = GONE
        elif version != cited.cited_version:
            flagged[index] = CHANGED
    return flagged


def check_by_rereading(client: Client, kb_id: str, citations: Sequence[CitationRecord]) -> CheckOutcome:
    """Read every cited article by id and compare ``updated_at``."""
    outcome = CheckOutcome()
    distinct = dict.fromkeys(cited.article_id for cited in citations)
    outcome.flagged = flag_citations(citations, reread_articles(outcome, client, kb_id, distinct))
    return outcome


@dataclass
class PollState:
    """What the polling agent keeps between checks: one cursor and what it has learnt.

    ``known`` maps an article to the current version last seen by a re-read
    (None when gone); an article absent from it has not moved since cited.
    """

    cursor: int
    known: dict[str, str | None] = field(default_factory=dict)
    #: without versions: the verdicts (citation index -> GONE/CHANGED) of citations whose
    #: article has not moved since (:func:`poll_by_text`)
    flags: dict[int, str] = field(default_factory=dict)


def check_by_polling(
    client: Client,
    kb_id: str,
    citations: Sequence[CitationRecord],
    state: PollState,
    page_size: int,
) -> CheckOutcome:
    """Page through the event log from the saved cursor; re-read only what moved.

    On ``cursor_expired`` (the log no longer reaches back to the cursor) it
    falls back to re-reading every cited article and resumes from the latest
    sequence.
    """
    outcome = CheckOutcome()
    cited_ids = dict.fromkeys(cited.article_id for cited in citations)
    moved: dict[str, None] = {}
    after = state.cursor
    while True:
        outcome.calls += 1
        try:
            page, size = client.call_sized(
                "poll_resource_events",
                {
                    "resource_type": "knowledge_base",
                    "resource_id": kb_id,
                    "after_sequence": after,
                    "limit": page_size,
                },
            )
        except ToolError as error:
            if error.code != "cursor_expired":
                raise
            outcome.bytes += json_size({"error": error.to_dict()})
            outcome.cursor_expired = True
            moved = dict.fromkeys(a for a in cited_ids if state.known.get(a, "") is not None)
            after = error.details["latest_sequence"]
            break
        outcome.bytes += size
        for event in page["events"]:
            if event["article_id"] in cited_ids:
                moved[event["article_id"]] = None
        after = page["next_sequence"]
        if not page["has_more"]:
            break
    state.cursor = after
    # An article already known gone stays gone; everything else that moved is re-read.
    to_read = [a for a in moved if state.known.get(a, "") is not None]
    state.known.update(reread_articles(outcome, client, kb_id, to_read))
    outcome.flagged = flag_citations(citations, state.known)
    return outcome


def verify_exact(check_index: int, strategy: str, flagged: dict[int, str], truth: dict[int, str]) -> None:
    """Raise :class:`StalenessMismatch` naming the check and the difference."""
    if flagged == truth:
        return
    missed = sorted(set(truth) - set(flagged))
    extra = sorted(set(flagged) - set(truth))
    mislabelled = sorted(i for i in set(truth) & set(flagged) if truth[i] != flagged[i])
    raise StalenessMismatch(
        f"check {check_index}: strategy {strategy!r} disagrees with the ground truth: "
        f"missed citations {missed[:10]}, wrongly flagged {extra[:10]}, "
        f"gone/changed mixed up {mislabelled[:10]} "
        f"({len(truth)} truly stale, {len(flagged)} flagged)"
    )


# -- citations without versions: the text cited is compared -----------------------------------


def text_staleness(store: Store, kb_id: str, citations: Sequence[CitationRecord],
                   cited_text: Mapping[int, tuple[str, str]]) -> dict[int, str]:
    """Truth by text: index -> GONE/CHANGED where the article is gone or its title or text
    differ from what was cited."""
    truth: dict[int, str] = {}
    for index, cited in enumerate(citations):
        if store.current_version(kb_id, cited.article_id) is None:
            truth[index] = GONE
            continue
        article = store.article_state(kb_id, cited.article_id)
        if (article.title, article.content) != cited_text[index]:
            truth[index] = CHANGED
    return truth


def _check_by_text(client: Client, kb_id: str, citations: Sequence[CitationRecord],
                   cited_text: Mapping[int, tuple[str, str]], article_ids, outcome: CheckOutcome) -> dict[int, str]:
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


def reread_by_text(client: Client, kb_id: str, citations: Sequence[CitationRecord],
                   cited_text: Mapping[int, tuple[str, str]]) -> CheckOutcome:
    """The re-read without versions: read every cited article and compare its text."""
    outcome = CheckOutcome()
    distinct = dict.fromkeys(cited.article_id for cited in citations)
    outcome.flagged = _check_by_text(client, kb_id, citations, cited_text, distinct, outcome)
    return outcome


def poll_by_text(client: Client, kb_id: str, citations: Sequence[CitationRecord],
                 cited_text: Mapping[int, tuple[str, str]], state: PollState, page_size: int) -> CheckOutcome:
    """The poll without versions: page the log from the cursor, read what moved in full and
    compare its text; ``state.flags`` (kept between checks) holds the verdicts of citations
    whose article has not moved since. On ``cursor_expired`` every cited article is read."""
    outcome = CheckOutcome()
    flags = state.flags
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
