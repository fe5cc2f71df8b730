"""One test per rule of the store and its tools (docs/model.md), against every store backend.

Only the public API and ``snapshot()`` are used. Every expected error goes
through :func:`expect_error`, which also checks that the store is unchanged.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import kbsim

KB = "kb-1"
SEARCH, READ, EDIT, POLL = (
    "search_knowledge_base",
    "read_knowledge_article",
    "edit_knowledge_article",
    "poll_resource_events",
)
WORD = re.compile(r"[a-z0-9]+")
RFC3339_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
REPO_ROOT = Path(__file__).resolve().parents[1]


class Clock:
    """A settable simulated clock for ``store.client(clock=...)``."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def expect_error(store, client, name, arguments, code) -> kbsim.ToolError:
    """Call a tool that must fail with ``code``; assert the store did not change."""
    before = store.snapshot()
    with pytest.raises(kbsim.ToolError) as info:
        client.call(name, arguments)
    assert info.value.code == code, info.value.to_dict()
    assert store.snapshot() == before
    return info.value


def search(client, query, kb=KB, **extra):
    return client.call(SEARCH, {"knowledge_base_id": kb, "query": query, **extra})["results"]


def read(client, article_id, kb=KB):
    return client.call(READ, {"knowledge_base_id": kb, "article_id": article_id})


def edit_args(article_id, version, key, content="edited body", kb=KB, **extra):
    return {
        "knowledge_base_id": kb,
        "article_id": article_id,
        "content": content,
        "expected_version": version,
        "idempotency_key": key,
        **extra,
    }


def poll(client, after=None, limit=None, kb=KB):
    args = {"resource_type": "knowledge_base", "resource_id": kb}
    if after is not None:
        args["after_sequence"] = after
    if limit is not None:
        args["limit"] = limit
    return client.call(POLL, args)


def poll_all(client, after=0, kb=KB):
    events = []
    while True:
        page = poll(client, after, kb=kb)
        events += page["events"]
        after = page["next_sequence"]
        if not page["has_more"]:
            return events


def as_instant(updated_at: str) -> datetime:
    assert RFC3339_UTC.fullmatch(updated_at), updated_at
    moment = datetime.fromisoformat(updated_at)
    assert moment.utcoffset() == timedelta(0)
    return moment


@pytest.fixture
def kb(store):
    """A store with KB holding three articles, and a client granted KB only."""
    s = store()
    s.create_knowledge_base(KB)
    ids = [
        s.publish_article(KB, title="Reset a password", content="Open settings, then security.",
                          at=0.0),
        s.publish_article(KB, title="Billing cycles", content="Invoices go out monthly.", at=0.0),
        s.publish_article(KB, title="Password rules", content="At least twelve characters.",
                          at=0.0),
    ]
    clock = Clock()
    return s, s.client(grants={KB}, clock=clock), clock, ids


# -- search ------------------------------------------------------------------------------


def test_search_result_shape(kb):
    s, client, _, ids = kb
    results = search(client, "password")
    assert sorted(r["article_id"] for r in results) == [ids[0], ids[2]]
    for hit in results:
        assert set(hit) == {"article_id", "title", "snippet", "updated_at", "citation"}
        article = read(client, hit["article_id"])
        assert hit["title"] == article["title"]
        assert hit["updated_at"] == article["updated_at"]
        assert hit["citation"] == article["citation"]
        assert isinstance(hit["snippet"], str) and hit["snippet"]
        words = set(WORD.findall((article["title"] + " " + article["content"]).lower()))
        assert set(WORD.findall(hit["snippet"].lower())) <= words
    assert json.loads(json.dumps({"results": results})) == {"results": results}


def test_search_returns_published_only(kb):
    s, client, _, ids = kb
    s.unpublish_article(KB, ids[0], at=10.0)
    assert [r["article_id"] for r in search(client, "password")] == [ids[2]]
    s.unpublish_article(KB, ids[2], at=11.0)
    assert search(client, "password") == []


def test_search_ranks_best_first(store):
    s = store()
    s.create_knowledge_base(KB)
    one_term = s.publish_article(KB, title="apple notes", content="kiwi pear plum fig", at=0.0)
    both = s.publish_article(KB, title="apple notes", content="kiwi banana plum fig", at=0.0)
    often = s.publish_article(KB, title="cider notes", content="kiwi kiwi kiwi fig", at=0.0)
    once = s.publish_article(KB, title="cider notes", content="kiwi pear plum fig", at=0.0)
    client = s.client(grants={KB}, clock=Clock())
    assert [r["article_id"] for r in search(client, "apple banana")] == [both, one_term]
    # same length, more occurrences of the only query term ranks higher
    assert [r["article_id"] for r in search(client, "kiwi", limit=20)][0] == often
    assert set(r["article_id"] for r in search(client, "kiwi")) == {one_term, both, often, once}


def test_search_ties_broken_by_article_id(store):
    s = store()
    s.create_knowledge_base(KB)
    ids = [s.publish_article(KB, title="same title", content="same body", at=0.0)
           for _ in range(5)]
    # re-save the first ones so an index's insertion order no longer follows the ids
    s.save_article(KB, ids[1], at=1.0, content="same body")
    s.save_article(KB, ids[0], at=2.0, content="same body")
    client = s.client(grants={KB}, clock=Clock())
    assert [r["article_id"] for r in search(client, "same body")] == ids
    assert [r["article_id"] for r in search(client, "same", limit=2)] == ids[:2]


def test_search_default_limit_is_10(store):
    s = store()
    s.create_knowledge_base(KB)
    ids = [s.publish_article(KB, title=f"topic {i}", content="shared words", at=0.0)
           for i in range(15)]
    client = s.client(grants={KB}, clock=Clock())
    assert len(search(client, "shared")) == 10
    assert [r["article_id"] for r in search(client, "shared", limit=20)] == ids


def test_title_query_finds_that_article_first(store, corpus):
    s = store()
    ids = corpus(s, n_articles=30)
    client = s.client(grants={KB}, clock=Clock())
    firsts, with_others = [], 0
    for article_id in ids:
        results = search(client, read(client, article_id)["title"])
        firsts.append(results[0]["article_id"])
        with_others += len(results) > 1
    assert firsts == ids
    assert with_others == len(ids)  # a title query finds other articles too


# -- read and citations -----------------------------------------------------------------


def test_read_shape(kb):
    _, client, _, ids = kb
    article = read(client, ids[1])
    version = "2026-01-05T09:00:00.000000Z"
    assert kbsim.DAY_START == datetime(2026, 1, 5, 9, tzinfo=UTC)
    assert article == {
        "article_id": ids[1],
        "title": "Billing cycles",
        "content": "Invoices go out monthly.",
        "updated_at": version,
        "citation": {"knowledge_base_id": KB, "article_id": ids[1], "updated_at": version},
    }


def test_citation_is_the_version_an_edit_supplies(kb):
    s, client, _, ids = kb
    hit = search(client, "billing")[0]
    citation = hit["citation"]
    assert set(citation) == {"knowledge_base_id", "article_id", "updated_at"}
    assert citation == read(client, ids[1])["citation"]
    result = client.call(EDIT, edit_args(citation["article_id"], citation["updated_at"], "k1"))
    assert result["citation"] == read(client, ids[1])["citation"]
    assert result["citation"]["updated_at"] == s.current_version(KB, ids[1])


def test_updated_at_is_rfc3339_utc_from_simulated_seconds(kb):
    s, client, clock, ids = kb
    s.save_article(KB, ids[0], at=90.5, content="new")
    assert as_instant(read(client, ids[0])["updated_at"]) == kbsim.DAY_START + timedelta(
        seconds=90.5
    )
    clock.now = 3600.25
    edited = client.call(EDIT, edit_args(ids[1], read(client, ids[1])["updated_at"], "k1"))
    assert as_instant(edited["updated_at"]) == kbsim.DAY_START + timedelta(seconds=3600.25)
    assert as_instant(poll_all(client)[-1]["updated_at"]) == as_instant(edited["updated_at"])


def test_updated_at_strictly_increases_even_in_the_same_instant(kb):
    s, client, clock, ids = kb
    seen = [read(client, ids[0])["updated_at"]]
    s.save_article(KB, ids[0], at=0.0, content="same instant as publish")
    seen.append(read(client, ids[0])["updated_at"])
    s.save_article(KB, ids[0], at=0.0, title="same instant again")
    seen.append(read(client, ids[0])["updated_at"])
    s.save_article(KB, ids[0], at=-5.0, content="a clock running behind")
    seen.append(read(client, ids[0])["updated_at"])
    clock.now = 0.0
    seen.append(client.call(EDIT, edit_args(ids[0], seen[-1], "k1"))["updated_at"])
    seen.append(s.unpublish_article(KB, ids[0], at=0.0))
    instants = [as_instant(v) for v in seen]
    assert all(a < b for a, b in zip(instants, instants[1:], strict=False)), seen
    article_events = [e["updated_at"] for e in poll_all(client) if e["article_id"] == ids[0]]
    assert article_events == seen


def test_a_citation_never_looks_current_after_a_change(kb):
    s, client, clock, ids = kb
    clock.now = 0.0  # the agent's edit lands in the same instant as the person's save
    cited = read(client, ids[0])["citation"]
    s.save_article(KB, ids[0], at=0.0, content="changed in the same instant")
    assert read(client, ids[0])["updated_at"] != cited["updated_at"]
    assert s.current_version(KB, ids[0]) != cited["updated_at"]
    expect_error(s, client, EDIT, edit_args(ids[0], cited["updated_at"], "k1"), "version_conflict")


# -- edit ------------------------------------------------------------------------------


def test_edit_applies_only_on_the_equal_version(kb):
    s, client, clock, ids = kb
    s.save_article(KB, ids[0], at=50.0, content="v2")
    current = read(client, ids[0])["updated_at"]
    earlier = kbsim.format_version(0)
    later = kbsim.format_version(60_000_000)
    off_by_one_us = kbsim.format_version(50_000_001)
    for version in (earlier, later, off_by_one_us):
        expect_error(s, client, EDIT, edit_args(ids[0], version, "k1"), "version_conflict")
    result = client.call(EDIT, edit_args(ids[0], current, "k1"))
    assert result["replayed"] is False


def test_edit_version_is_compared_as_an_instant(kb):
    s, client, _, ids = kb
    s.save_article(KB, ids[0], at=50.25, content="v2")
    assert read(client, ids[0])["updated_at"] == "2026-01-05T09:00:50.250000Z"
    for finer in ("2026-01-05T09:00:50.2500001Z", "2026-01-05T09:00:50.2499999Z"):
        expect_error(s, client, EDIT, edit_args(ids[0], finer, "k1"), "version_conflict")
    # the same instant spelt another RFC 3339 way is the same version
    first = client.call(EDIT, edit_args(ids[0], "2026-01-05t09:00:50.25z", "k1"))
    assert first["updated_at"] == "2026-01-05T09:01:40.000000Z"  # the clock: 100 s
    second = client.call(EDIT, edit_args(ids[0], "2026-01-05T10:01:40.0000000+01:00", "k2"))
    assert second["replayed"] is False


def test_edit_replaces_content_and_title_when_given(kb):
    s, client, clock, ids = kb
    clock.now = 200.0
    before = read(client, ids[0])
    latest = s.latest_sequence(KB)
    result = client.call(EDIT, edit_args(ids[0], before["updated_at"], "k1",
                                         content="Use the reset link.", title="Recover access"))
    after = read(client, ids[0])
    assert result == {
        "article_id": ids[0],
        "title": "Recover access",
        "updated_at": after["updated_at"],
        "citation": after["citation"],
        "replayed": False,
    }
    assert (after["title"], after["content"]) == ("Recover access", "Use the reset link.")
    assert as_instant(after["updated_at"]) > as_instant(before["updated_at"])
    # without a title, the title is kept
    client.call(EDIT, edit_args(ids[0], after["updated_at"], "k2", content="Second body."))
    assert (read(client, ids[0])["title"], read(client, ids[0])["content"]) == (
        "Recover access", "Second body.")
    # the index follows: the old title words no longer find it, the new ones do
    assert ids[0] not in [r["article_id"] for r in search(client, "reset")]
    assert search(client, "recover access")[0]["article_id"] == ids[0]
    events = poll(client, after=latest)["events"]
    assert [(e["sequence"], e["type"], e["article_id"]) for e in events] == [
        (latest + 1, "article.updated", ids[0]),
        (latest + 2, "article.updated", ids[0]),
    ]
    assert events[0]["updated_at"] == result["updated_at"]


def test_replay_returns_first_result_and_writes_nothing(kb):
    s, client, clock, ids = kb
    args = edit_args(ids[0], read(client, ids[0])["updated_at"], "key-1", title="New title")
    first = client.call(EDIT, args)
    for change in (
        lambda: None,
        lambda: s.save_article(KB, ids[0], at=300.0, content="a person's later save"),
        lambda: s.unpublish_article(KB, ids[0], at=400.0),
    ):
        change()
        clock.now += 100.0
        before = s.snapshot()
        again = client.call(EDIT, dict(args))
        assert again == {**first, "replayed": True}
        assert s.snapshot() == before


def test_same_key_with_different_arguments_is_refused(kb):
    s, client, _, ids = kb
    version = read(client, ids[0])["updated_at"]
    client.call(EDIT, edit_args(ids[0], version, "key-1"))
    new_version = read(client, ids[0])["updated_at"]
    for args in (
        edit_args(ids[0], version, "key-1", content="other body"),
        edit_args(ids[0], version, "key-1", title="added title"),
        edit_args(ids[0], new_version, "key-1"),
        edit_args(ids[1], read(client, ids[1])["updated_at"], "key-1"),
    ):
        error = expect_error(s, client, EDIT, args, "idempotency_key_reused")
        assert "idempotency_key" in error.message


def test_version_conflict_returns_no_content(kb):
    s, client, _, ids = kb
    stale = read(client, ids[0])["updated_at"]
    s.save_article(KB, ids[0], at=10.0, content="SECRET-CURRENT-BODY", title="SECRET-TITLE")
    error = expect_error(s, client, EDIT, edit_args(ids[0], stale, "k1"), "version_conflict")
    assert "expected_version" in error.message
    text = json.dumps(error.to_dict()) + str(error)
    assert "SECRET" not in text
    assert s.current_version(KB, ids[0]) not in text


# -- events and polling -----------------------------------------------------------------


def test_events_are_gapless_from_1_with_the_three_types(kb):
    s, client, clock, ids = kb
    s.save_article(KB, ids[0], at=10.0, content="body")
    s.save_article(KB, ids[1], at=20.0, title="title only")
    clock.now = 25.0
    client.call(EDIT, edit_args(ids[2], read(client, ids[2])["updated_at"], "k1"))
    s.unpublish_article(KB, ids[0], at=30.0)
    new = s.publish_article(KB, title="Fresh", content="new article", at=40.0)
    trace = [(e["sequence"], e["type"], e["article_id"]) for e in poll_all(client)]
    assert trace == [
        (1, "article.published", ids[0]),
        (2, "article.published", ids[1]),
        (3, "article.published", ids[2]),
        (4, "article.updated", ids[0]),
        (5, "article.updated", ids[1]),
        (6, "article.updated", ids[2]),
        (7, "article.unpublished", ids[0]),
        (8, "article.published", new),
    ]
    assert s.latest_sequence(KB) == 8


def test_poll_shape_cursor_and_paging(kb):
    s, client, _, ids = kb
    for i in range(4):
        s.save_article(KB, ids[i % 3], at=10.0 + i, content=f"v{i}")
    page = poll(client, after=0, limit=3)
    assert set(page) == {"events", "next_sequence", "has_more"}
    event_keys = {"sequence", "type", "article_id", "updated_at"}
    assert [set(e) for e in page["events"]] == [event_keys] * 3
    pages = [(0, [e["sequence"] for e in page["events"]], page["next_sequence"], page["has_more"])]
    cursor = page["next_sequence"]
    while True:
        page = poll(client, after=cursor, limit=3)
        pages.append((cursor, [e["sequence"] for e in page["events"]], page["next_sequence"],
                      page["has_more"]))
        if not page["events"]:
            break
        cursor = page["next_sequence"]
    assert pages == [
        (0, [1, 2, 3], 3, True),
        (3, [4, 5, 6], 6, True),
        (6, [7], 7, False),
        (7, [], 7, False),  # no events: next_sequence is the cursor passed in
    ]
    assert poll(client) == poll(client, after=0)  # after_sequence defaults to 0
    assert poll(client, after=5, limit=2)["events"] == poll_all(client)[5:7]


def test_poll_default_limit_is_100(store):
    s = store()
    s.create_knowledge_base(KB)
    for i in range(130):
        s.publish_article(KB, title=f"t{i}", content="c", at=float(i))
    page = poll(s.client(grants={KB}, clock=Clock(1000.0)))
    assert (len(page["events"]), page["next_sequence"], page["has_more"]) == (100, 100, True)


def test_people_saves_and_agent_edits_write_the_same_events(kb):
    s, client, clock, ids = kb
    s.save_article(KB, ids[0], at=10.0, content="by a person")
    clock.now = 10.0
    client.call(EDIT, edit_args(ids[1], read(client, ids[1])["updated_at"], "k1"))
    person, agent = poll(client, after=3)["events"]
    assert (person["type"], agent["type"]) == ("article.updated", "article.updated")
    assert person["updated_at"] == agent["updated_at"] == kbsim.format_version(10_000_000)


def test_a_save_that_changes_nothing_is_refused_and_writes_nothing(kb):
    s, _, _, ids = kb
    before = s.snapshot()
    with pytest.raises(kbsim.ToolError) as refused:
        s.save_article(KB, ids[0], at=10.0)
    assert refused.value.code == "invalid_argument" and "content or title" in str(refused.value)
    assert s.snapshot() == before


@pytest.mark.parametrize("resource_type", ["channel", "note", "record", "session"])
def test_other_resource_types_are_unsupported(kb, resource_type):
    s, client, _, _ = kb
    args = {"resource_type": resource_type, "resource_id": KB}
    error = expect_error(s, client, POLL, args, "unsupported")
    assert "resource_type" in error.message and resource_type in error.message


# -- grants, not found, retention, errors -----------------------------------------------


def _every_tool_on(kb_id: str) -> list[tuple[str, dict]]:
    version = kbsim.format_version(0)
    return [
        (SEARCH, {"knowledge_base_id": kb_id, "query": "password"}),
        (READ, {"knowledge_base_id": kb_id, "article_id": "art-000001"}),
        (EDIT, edit_args("art-000001", version, "k-grant", kb=kb_id)),
        (POLL, {"resource_type": "knowledge_base", "resource_id": kb_id}),
        (POLL, {"resource_type": "knowledge_base", "resource_id": kb_id, "after_sequence": 0}),
    ]


def test_a_kb_not_granted_answers_exactly_like_a_missing_one(store):
    holds_kb2, lacks_kb2 = store(), store()
    for s in (holds_kb2, lacks_kb2):
        s.create_knowledge_base(KB)
        s.publish_article(KB, title="Reset a password", content="body", at=0.0)
    holds_kb2.create_knowledge_base("kb-2")
    holds_kb2.publish_article("kb-2", title="Reset a password", content="body", at=0.0)
    views = [
        (holds_kb2, holds_kb2.client(grants={KB}, clock=Clock())),  # exists, not granted
        (lacks_kb2, lacks_kb2.client(grants={KB}, clock=Clock())),  # missing, not granted
        (lacks_kb2, lacks_kb2.client(grants={KB, "kb-2"}, clock=Clock())),  # granted, missing
    ]
    for name, args in _every_tool_on("kb-2"):
        answers = [expect_error(s, c, name, args, "not_found").to_dict() for s, c in views]
        assert answers[0] == answers[1] == answers[2], (name, answers)
        assert "kb-2" in answers[0]["message"]
    # the granted KB itself works
    assert read(views[0][1], "art-000001")["article_id"] == "art-000001"


def test_an_unpublished_article_is_not_found(kb, store):
    s, client, _, ids = kb
    last = read(client, ids[1])["updated_at"]
    s.unpublish_article(KB, ids[1], at=10.0)
    unpublished = s.current_version(KB, ids[1])
    assert unpublished is None
    # another store where ids[1] never existed answers the same
    other = store()
    other.create_knowledge_base(KB)
    other.publish_article(KB, title="Reset a password", content="x", at=0.0)
    other_client = other.client(grants={KB}, clock=Clock())
    for name, args in (
        (READ, {"knowledge_base_id": KB, "article_id": ids[1]}),
        (EDIT, edit_args(ids[1], last, "k1")),
    ):
        gone = expect_error(s, client, name, args, "not_found")
        never = expect_error(other, other_client, name, args, "not_found")
        assert gone.to_dict() == never.to_dict()
        assert "article_id" in gone.message and ids[1] in gone.message
    assert ids[1] not in [r["article_id"] for r in search(client, "billing cycles")]


def test_event_retention_expires_old_cursors(store):
    s = store(event_retention_s=100.0)
    s.create_knowledge_base(KB)
    ids = [s.publish_article(KB, title=f"t{i}", content="c", at=float(i)) for i in range(3)]
    s.save_article(KB, ids[0], at=1000.0, content="kept")
    s.save_article(KB, ids[1], at=1001.0, content="kept too")
    client = s.client(grants={KB}, clock=Clock(1050.0))
    for cursor in (0, 1, 2):
        error = expect_error(s, client, POLL, {"resource_type": "knowledge_base",
                                               "resource_id": KB, "after_sequence": cursor},
                             "cursor_expired")
        assert error.details == {"oldest_available_sequence": 4, "latest_sequence": 5}
        assert error.to_dict()["oldest_available_sequence"] == 4
        assert "after_sequence" in error.message
    page = poll(client, after=3)
    assert [e["sequence"] for e in page["events"]] == [4, 5]
    # the window moves with the poll's clock: at 1200 nothing is kept
    late = s.client(grants={KB}, clock=Clock(1200.0))
    error = expect_error(s, late, POLL, {"resource_type": "knowledge_base", "resource_id": KB,
                                         "after_sequence": 3}, "cursor_expired")
    assert error.details["latest_sequence"] == 5
    assert poll(late, after=5) == {"events": [], "next_sequence": 5, "has_more": False}


def test_default_retention_keeps_everything(store):
    s = store()
    s.create_knowledge_base(KB)
    s.publish_article(KB, title="t", content="c", at=0.0)
    s.save_article(KB, "art-000001", at=10 * 86_400.0, content="much later")
    client = s.client(grants={KB}, clock=Clock(20 * 86_400.0))
    assert [e["sequence"] for e in poll(client)["events"]] == [1, 2]


def test_every_error_code_leaves_the_store_unchanged(store):
    s = store(event_retention_s=50.0)
    s.create_knowledge_base(KB)
    aid = s.publish_article(KB, title="Reset a password", content="body", at=0.0)
    clock = Clock(10.0)
    client = s.client(grants={KB}, clock=clock)
    version = read(client, aid)["updated_at"]
    client.call(EDIT, edit_args(aid, version, "used"))
    s.save_article(KB, aid, at=20.123456, content="a person's save")
    current = read(client, aid)["updated_at"]
    clock.now = 500.0
    cases = [
        (SEARCH, {"knowledge_base_id": KB, "query": "x"}, "invalid_argument"),
        (READ, {"knowledge_base_id": KB, "article_id": "art-999999"}, "not_found"),
        (EDIT, edit_args(aid, version, "fresh"), "version_conflict"),
        (EDIT, edit_args(aid, current[:23] + "Z", "fresh"), "version_not_exact"),
        (EDIT, edit_args(aid, current, "used", content="different"), "idempotency_key_reused"),
        (POLL, {"resource_type": "session", "resource_id": KB}, "unsupported"),
        (POLL, {"resource_type": "knowledge_base", "resource_id": KB}, "cursor_expired"),
        (POLL, {"resource_type": "knowledge_base", "resource_id": KB, "after_sequence": 9},
         "invalid_argument"),
    ]
    codes = [expect_error(s, client, name, args, code).code for name, args, code in cases]
    # busy needs a second process holding a SQLite file's write lock: see
    # test_sqlite_backend.py::test_busy_timeout_expiry_is_a_clear_error_and_changes_nothing
    assert set(codes) == set(kbsim.store.ERROR_CODES) - {"busy"}


def test_results_are_json_and_call_sized_counts_their_bytes(kb):
    s, client, clock, ids = kb
    calls = [
        (SEARCH, {"knowledge_base_id": KB, "query": "password"}),
        (READ, {"knowledge_base_id": KB, "article_id": ids[0]}),
        (POLL, {"resource_type": "knowledge_base", "resource_id": KB}),
    ]
    sizes = []
    for change in (
        lambda: None,
        lambda: s.save_article(KB, ids[0], at=10.0, title="Reset a password, quickly \u00e9"),
        lambda: client.call(EDIT, edit_args(ids[0], read(client, ids[0])["updated_at"], "k1",
                                            content="A much longer body " * 5)),
    ):
        change()
        for name, args in calls:
            result, size = client.call_sized(name, args)
            text = json.dumps(result, separators=(",", ":"), ensure_ascii=False)
            assert json.loads(text) == result
            assert size == len(text.encode("utf-8")), (name, result)
            sizes.append(size)
    assert len(set(sizes)) > 3  # the sizes followed the changes


# -- the tool definitions ----------------------------------------------------------------

EXPECTED_TOOLS = {
    SEARCH: ({"knowledge_base_id", "query"}, {"readOnlyHint": True}),
    READ: ({"knowledge_base_id", "article_id"}, {"readOnlyHint": True}),
    EDIT: (
        {"knowledge_base_id", "article_id", "content", "expected_version", "idempotency_key"},
        {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True},
    ),
    POLL: ({"resource_type", "resource_id"}, {"readOnlyHint": True}),
}


def test_packaged_tools_json_matches_the_service_listing():
    """The packaged listing's ``tools`` are the service's. Given a copy of the service's own
    listing (``KBSIM_SERVICE_TOOLS=path/to/tools.json``), the two ``tools`` lists must be
    equal; its ``_about`` note is the service's, not kbsim's, and is not compared. Always:
    the names, required arguments and annotations the model fixes."""
    packaged = json.loads((REPO_ROOT / "kbsim/spec/tools.json").read_text(encoding="utf-8"))
    service = os.environ.get("KBSIM_SERVICE_TOOLS")
    if service:
        assert packaged["tools"] == json.loads(Path(service).read_text(encoding="utf-8"))["tools"]
    assert "docs/model.md" in packaged["_about"]
    definitions = kbsim.tool_definitions()
    assert list(definitions) == list(EXPECTED_TOOLS) == list(kbsim.TOOL_NAMES)
    assert [t["name"] for t in packaged["tools"]] == list(EXPECTED_TOOLS)
    for name, (required, hints) in EXPECTED_TOOLS.items():
        assert set(definitions[name].required) == required
        assert definitions[name].annotations == hints


# -- the store protocol -------------------------------------------------------------------


def test_every_backend_implements_the_store_protocol_with_its_signatures(store):
    """A backend has every member of ``kbsim.Store``, each taking the protocol's parameters
    (names, kinds and defaults): a caller written against the protocol works on it."""
    import inspect

    from kbsim.store.protocol import Store

    backend = store()
    assert isinstance(backend, Store)
    members = [name for name, value in vars(Store).items() if inspect.isfunction(value) and not name.startswith("_")]
    assert len(members) == 17
    for name in members:
        wanted = inspect.signature(getattr(Store, name)).parameters
        given = inspect.signature(getattr(type(backend), name)).parameters
        shape = [(p.name, p.kind, p.default) for p in wanted.values()]
        assert [(p.name, p.kind, p.default) for p in given.values()] == shape, name
