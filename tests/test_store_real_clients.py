"""What real MCP clients trip on, held on every store backend (issue 38): versions cut to
milliseconds, a cursor past the end, and subscriptions to articles."""

from __future__ import annotations

import pytest

import kbsim

KB = "kb-1"
EDIT, POLL, READ = "edit_knowledge_article", "poll_resource_events", "read_knowledge_article"


@pytest.fixture
def kb(store):
    s = store()
    s.create_knowledge_base(KB)
    ids = [s.publish_article(KB, title=f"Article {n}", content=f"Body number {n}.", at=0.0) for n in range(3)]
    return s, s.client(grants={KB}, clock=lambda: 100.0), ids


def refused(s, client, name, arguments) -> dict:
    before = s.snapshot()
    with pytest.raises(kbsim.ToolError) as info:
        client.call(name, arguments)
    assert s.snapshot() == before
    return info.value.to_dict()


def edit(article_id: str, version: str, key: str) -> dict:
    return {"knowledge_base_id": KB, "article_id": article_id, "content": "edited",
            "expected_version": version, "idempotency_key": key}


def test_a_version_cut_to_milliseconds_is_refused_as_not_exact_never_as_a_conflict(kb):
    s, client, ids = kb
    s.save_article(KB, ids[0], at=50.123456, content="v2")
    current = client.call(READ, {"knowledge_base_id": KB, "article_id": ids[0]})["updated_at"]
    assert current == "2026-01-05T09:00:50.123456Z"
    # what JavaScript's new Date(current).toISOString() gives back, and a client that rounds
    for cut in ("2026-01-05T09:00:50.123Z", "2026-01-05T09:00:50.124Z", "2026-01-05T10:00:50.123+01:00",
                "2026-01-05T09:00:50Z", "2026-01-05T09:00:50.1Z"):
        error = refused(s, client, EDIT, edit(ids[0], cut, "k1"))
        assert error["code"] == "version_not_exact", (cut, error)
        assert "exactly as read" in error["message"]
    # a cut version of another time is a conflict still; the exact one applies
    assert refused(s, client, EDIT, edit(ids[0], "2026-01-05T09:00:49.123Z", "k1"))["code"] == "version_conflict"
    assert client.call(EDIT, edit(ids[0], current, "k1"))["replayed"] is False


def test_a_version_at_a_whole_millisecond_still_matches_cut(kb):
    """An exact instant written with fewer digits is the same version, as before."""
    s, client, ids = kb
    s.save_article(KB, ids[1], at=50.123, content="v2")
    assert client.call(EDIT, edit(ids[1], "2026-01-05T09:00:50.123Z", "k1"))["replayed"] is False


def test_a_cursor_past_the_end_says_the_latest_sequence_in_its_details(kb):
    s, client, _ = kb
    error = refused(s, client, POLL, {"resource_type": "knowledge_base", "resource_id": KB, "after_sequence": 9})
    assert error == {"code": "invalid_argument", "latest_sequence": 3,
                     "message": "after_sequence 9 is beyond the latest sequence 3; resume from latest_sequence"}


def test_subscribers_hear_each_committed_change_of_their_articles_once(kb):
    """A trace of every change heard: saves, an edit, a replay and a refusal (not heard), an
    unsubscribe, and an unpublish that ends the subscriptions with it."""
    s, client, ids = kb
    heard: list[tuple[str, str, str, tuple[str, ...]]] = []
    stop = s.listen(lambda change, who: heard.append(
        (change.type, change.article_id, change.updated_at, tuple(sorted(who)))))
    before = s.snapshot()
    assert s.subscribe_article("a", KB, ids[0]) == "2026-01-05T09:00:00.000000Z"
    s.subscribe_article("b", KB, ids[0])
    s.subscribe_article("a", KB, ids[1])
    assert s.snapshot() == before  # a subscription is not the knowledge base's state
    s.save_article(KB, ids[0], at=10.0, content="v2")
    s.save_article(KB, ids[2], at=11.0, content="nobody listens")
    v3 = client.call(EDIT, edit(ids[0], "2026-01-05T09:00:10.000000Z", "k1"))["updated_at"]
    assert client.call(EDIT, edit(ids[0], "2026-01-05T09:00:10.000000Z", "k1"))["replayed"] is True
    refused(s, client, EDIT, edit(ids[0], "2026-01-05T09:00:10.000000Z", "k2"))
    assert s.unsubscribe_article("b", KB, ids[0]) is True
    assert s.unsubscribe_article("b", KB, ids[0]) is False
    s.unpublish_article(KB, ids[0], at=120.0)
    s.save_article(KB, ids[1], at=130.0, title="Renamed")
    stop()
    s.save_article(KB, ids[1], at=140.0, content="after the listener stopped")
    assert heard == [
        ("article.updated", ids[0], "2026-01-05T09:00:10.000000Z", ("a", "b")),
        ("article.updated", ids[0], v3, ("a", "b")),
        ("article.unpublished", ids[0], "2026-01-05T09:02:00.000000Z", ("a",)),
        ("article.updated", ids[1], "2026-01-05T09:02:10.000000Z", ("a",)),
    ]
    assert s.subscriptions.subscribed("a") == [(KB, ids[1])]  # the unpublished one ended


def test_only_a_published_article_can_be_subscribed_to(kb):
    s, _, ids = kb
    s.unpublish_article(KB, ids[2], at=5.0)
    for kb_id, article_id in ((KB, ids[2]), (KB, "art-999999")):
        with pytest.raises(kbsim.ToolError) as info:
            s.subscribe_article("a", kb_id, article_id)
        assert info.value.code == "not_found"
    with pytest.raises(kbsim.ToolError, match="not_found"):
        s.subscribe_article("a", "kb-nope", ids[0])
    assert s.subscriptions.subscribed("a") == []
