"""A hypothesis state machine: random people's saves, agent edits, reads, searches
and polls against a small reference model of one knowledge base.

Invariants: the sequence is gapless; a conflict changes nothing; a replay
writes nothing; a poll from any cursor returns exactly the events after it;
reads return the model's content and version.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

import kbsim

KB = "kb-1"
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")
TEXT = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
PICK = st.integers(min_value=0, max_value=63)
TOKEN = re.compile(r"[a-z0-9]+")
SETTINGS = settings(
    max_examples=100,
    stateful_step_count=50,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
MIN_STEPS = 3_000


@dataclass
class ModelArticle:
    title: str
    content: str
    published: bool
    version: str  # updated_at
    seen: list[str]  # every updated_at it has had, oldest first


def us(updated_at: str) -> int:
    version = kbsim.parse_version(updated_at)
    assert version is not None, updated_at
    return version


class StoreMachine(RuleBasedStateMachine):
    """Drives one store and a reference model in step; ``counter`` counts rule runs."""

    def __init__(self, make_store, counter: Counter) -> None:
        super().__init__()
        self.counter = counter
        self.store = make_store()
        self.store.create_knowledge_base(KB)
        self.now = 0.0
        self.client = self.store.client(grants={KB}, clock=lambda: self.now)
        self.articles: dict[str, ModelArticle] = {}
        self.events: list[tuple[str, str, str]] = []  # (type, article_id, updated_at)
        self.edits: dict[str, tuple[dict, dict]] = {}  # key -> (arguments, first result)
        for title in ("alpha bravo", "charlie delta", "echo foxtrot"):
            self._publish(title, f"{title} body")

    # -- helpers ------------------------------------------------------------------------

    def _count(self, name: str) -> None:
        self.counter[name] += 1

    def _pick(self, index: int) -> str:
        ids = sorted(self.articles)
        return ids[index % len(ids)]

    def _publish(self, title: str, content: str) -> None:
        article_id = self.store.publish_article(KB, title=title, content=content, at=self.now)
        version = self.store.current_version(KB, article_id)
        assert article_id not in self.articles
        self.articles[article_id] = ModelArticle(title, content, True, version, [version])
        self.events.append(("article.published", article_id, version))

    def _record_change(self, article_id: str, kind: str, version: str, at_us: int) -> None:
        article = self.articles[article_id]
        assert us(version) > us(article.version)  # strictly larger, even in the same instant
        if at_us > us(article.version):
            assert us(version) == at_us
        article.version = version
        article.seen.append(version)
        self.events.append((kind, article_id, version))

    def _refused(self, code: str, call) -> kbsim.ToolError:
        before = self.store.snapshot()
        try:
            call()
        except kbsim.ToolError as error:
            assert error.code == code, error.to_dict()
            assert self.store.snapshot() == before
            return error
        raise AssertionError(f"expected {code}")

    def _edit_args(self, article_id: str, version: str, key: str, content: str,
                   title: str | None) -> dict:
        arguments = {
            "knowledge_base_id": KB,
            "article_id": article_id,
            "content": content,
            "expected_version": version,
            "idempotency_key": key,
        }
        if title is not None:
            arguments["title"] = title
        return arguments

    # -- time and people -------------------------------------------------------------------

    @rule(seconds=st.sampled_from([0.0, 0.0, 0.000001, 0.5, 30.0]))
    def tick(self, seconds):
        self._count("tick")
        self.now += seconds

    @precondition(lambda self: len(self.articles) < 10)
    @rule(title=TEXT, content=TEXT)
    def person_publishes(self, title, content):
        self._count("person_publishes")
        self._publish(title, content)

    @rule(pick=PICK, content=st.none() | TEXT, title=st.none() | TEXT,
          behind=st.sampled_from([0.0, 0.0, 5.0]))
    def person_saves(self, pick, content, title, behind):
        self._count("person_saves")
        article_id = self._pick(pick)
        article = self.articles[article_id]
        at = self.now - behind  # a person's clock may run behind the article's version

        def save():
            return self.store.save_article(KB, article_id, at=at, content=content, title=title)

        if content is None and title is None:
            self._refused("invalid_argument", save)
        elif not article.published:
            self._refused("not_found", save)
        else:
            version = save()
            self._record_change(article_id, "article.updated", version,
                                kbsim.store.seconds_to_us(at))
            article.content = content if content is not None else article.content
            article.title = title if title is not None else article.title

    # keep two articles published, so most steps exercise live articles, not only not_found
    @precondition(lambda self: sum(a.published for a in self.articles.values()) > 2)
    @rule(pick=PICK)
    def person_unpublishes(self, pick):
        self._count("person_unpublishes")
        article_id = self._pick(pick)
        article = self.articles[article_id]

        def unpublish():
            return self.store.unpublish_article(KB, article_id, at=self.now)

        if not article.published:
            self._refused("not_found", unpublish)
        else:
            version = unpublish()
            self._record_change(article_id, "article.unpublished", version,
                                kbsim.store.seconds_to_us(self.now))
            article.published = False

    # -- the agent ---------------------------------------------------------------------------

    @rule(pick=PICK, content=TEXT, title=st.none() | TEXT)
    def agent_edits_fresh(self, pick, content, title):
        self._count("agent_edits_fresh")
        article_id = self._pick(pick)
        article = self.articles[article_id]
        key = f"key-{len(self.edits) + 1}-{self.counter['agent_edits_fresh']}"
        arguments = self._edit_args(article_id, article.version, key, content, title)
        if not article.published:
            self._refused("not_found", lambda: self.client.call("edit_knowledge_article",
                                                                 arguments))
            return
        result = self.client.call("edit_knowledge_article", dict(arguments))
        self._record_change(article_id, "article.updated", result["updated_at"],
                            kbsim.store.seconds_to_us(self.now))
        article.content = content
        article.title = title if title is not None else article.title
        assert result == {
            "article_id": article_id,
            "title": article.title,
            "updated_at": article.version,
            "citation": {"knowledge_base_id": KB, "article_id": article_id,
                         "updated_at": article.version},
            "replayed": False,
        }
        self.edits[key] = (arguments, result)

    @rule(pick=PICK, which=PICK, content=TEXT)
    def agent_edits_stale(self, pick, which, content):
        self._count("agent_edits_stale")
        article_id = self._pick(pick)
        article = self.articles[article_id]
        stale = [v for v in article.seen if v != article.version]
        # with no older version, one microsecond after the current one is just as wrong
        version = (stale[which % len(stale)] if stale
                   else kbsim.format_version(us(article.version) + 1))
        arguments = self._edit_args(article_id, version, f"stale-{len(self.events)}",
                                    content, None)
        code = "version_conflict" if article.published else "not_found"
        self._refused(code, lambda: self.client.call("edit_knowledge_article", arguments))

    @precondition(lambda self: self.edits)
    @rule(pick=PICK)
    def agent_replays(self, pick):
        self._count("agent_replays")
        key = sorted(self.edits)[pick % len(self.edits)]
        arguments, first = self.edits[key]
        before = self.store.snapshot()
        again = self.client.call("edit_knowledge_article", dict(arguments))
        assert again == {**first, "replayed": True}
        assert self.store.snapshot() == before

    @precondition(lambda self: self.edits)
    @rule(pick=PICK, change=st.sampled_from(["content", "title", "expected_version"]))
    def agent_reuses_a_key(self, pick, change):
        self._count("agent_reuses_a_key")
        key = sorted(self.edits)[pick % len(self.edits)]
        arguments = dict(self.edits[key][0])
        if change == "expected_version":
            arguments["expected_version"] = self.articles[arguments["article_id"]].version
            if arguments == self.edits[key][0]:
                arguments["content"] += " again"
        else:
            arguments[change] = arguments.get(change, "") + " changed"
        self._refused("idempotency_key_reused",
                      lambda: self.client.call("edit_knowledge_article", arguments))

    @rule(pick=PICK)
    def agent_reads(self, pick):
        self._count("agent_reads")
        article_id = self._pick(pick)
        article = self.articles[article_id]
        arguments = {"knowledge_base_id": KB, "article_id": article_id}
        if not article.published:
            self._refused("not_found",
                          lambda: self.client.call("read_knowledge_article", arguments))
            return
        result = self.client.call("read_knowledge_article", arguments)
        assert (result["title"], result["content"], result["updated_at"]) == (
            article.title, article.content, article.version)

    @rule(word=st.sampled_from(WORDS), limit=st.integers(min_value=1, max_value=20))
    def agent_searches(self, word, limit):
        self._count("agent_searches")
        hits = self.client.call("search_knowledge_base",
                                {"knowledge_base_id": KB, "query": word, "limit": limit})
        found = [hit["article_id"] for hit in hits["results"]]
        matching = {
            article_id for article_id, a in self.articles.items()
            if a.published and word in TOKEN.findall(f"{a.title} {a.content}")
        }
        assert len(found) == len(set(found)) == min(limit, len(matching))
        assert set(found) <= matching
        for hit in hits["results"]:
            article = self.articles[hit["article_id"]]
            assert (hit["title"], hit["updated_at"]) == (article.title, article.version)

    @rule(cursor=PICK, limit=st.integers(min_value=1, max_value=8))
    def agent_polls(self, cursor, limit):
        self._count("agent_polls")
        cursor %= len(self.events) + 1
        page = self.client.call("poll_resource_events", {
            "resource_type": "knowledge_base", "resource_id": KB,
            "after_sequence": cursor, "limit": limit})
        expected = [
            {"sequence": n, "type": kind, "article_id": article_id, "updated_at": version}
            for n, (kind, article_id, version) in enumerate(self.events, start=1)
        ][cursor:cursor + limit]
        assert page == {
            "events": expected,
            "next_sequence": expected[-1]["sequence"] if expected else cursor,
            "has_more": cursor + len(expected) < len(self.events),
        }

    # -- invariants ----------------------------------------------------------------------------

    @invariant()
    def event_log_is_gapless_and_matches_the_model(self):
        assert self.store.latest_sequence(KB) == len(self.events)
        page = self.client.call("poll_resource_events", {
            "resource_type": "knowledge_base", "resource_id": KB, "limit": 100})
        assert [(e["sequence"], e["type"], e["article_id"], e["updated_at"])
                for e in page["events"]] == [
            (n, *event) for n, event in enumerate(self.events[:100], start=1)]

    @invariant()
    def ground_truth_matches_the_model(self):
        assert sorted(self.store.published_article_ids(KB)) == sorted(
            a for a, article in self.articles.items() if article.published)
        assert self.store.unpublished_article_ids(KB) == sorted(
            a for a, article in self.articles.items() if not article.published)
        for article_id, article in self.articles.items():
            expected = article.version if article.published else None
            assert self.store.current_version(KB, article_id) == expected


RULES = (
    "tick", "person_publishes", "person_saves", "person_unpublishes", "agent_edits_fresh",
    "agent_edits_stale", "agent_replays", "agent_reuses_a_key", "agent_reads",
    "agent_searches", "agent_polls",
)


def run_machine(make_store, run_settings=SETTINGS) -> Counter:
    """Run the machine under ``run_settings``; returns how often each rule ran."""
    counter: Counter = Counter()
    run_state_machine_as_test(lambda: StoreMachine(make_store, counter), settings=run_settings)
    return counter


def test_store_state_machine(store):
    counter = run_machine(store)
    assert set(counter) == set(RULES), counter
    assert sum(counter.values()) >= MIN_STEPS


@pytest.mark.parametrize("broken", ["conflict_writes", "replay_writes"])
def test_the_machine_catches_a_broken_store(store, broken):
    """The machine is not vacuous: a store that breaks one invariant fails it."""

    class Broken:
        def __init__(self):
            self.inner = store()

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def client(self, grants, clock):
            inner_client = self.inner.client(grants=grants, clock=clock)
            inner = self.inner

            class BrokenClient:
                def call(self, name, arguments):
                    try:
                        result = inner_client.call(name, arguments)
                    except kbsim.ToolError as error:
                        if broken == "conflict_writes" and error.code == "version_conflict":
                            inner.save_article(KB, arguments["article_id"], at=0.0, title="x")
                        raise
                    if broken == "replay_writes" and result.get("replayed"):
                        inner.publish_article(KB, title="x", content="x", at=0.0)
                    return result

            return BrokenClient()

    quick = settings(SETTINGS, max_examples=30, phases=(Phase.explicit, Phase.generate))
    with pytest.raises(AssertionError):
        run_machine(Broken, quick)
