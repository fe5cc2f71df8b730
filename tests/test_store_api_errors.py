"""The store's Python API applies fully or changes nothing, on both backends.

Every public method, given an argument of the wrong type or out of range,
raises ``ToolError("invalid_argument")`` naming that argument and leaves
``snapshot()`` exactly as it was: no ``TypeError`` from deep inside, no
half-written article. Also here: times beyond the calendar (a server clock at
``--speed inf``), a knowledge base filled in one step, idempotency records
that keep a digest of the arguments, and leap seconds in ``expected_version``.
"""

from __future__ import annotations

import inspect
import json
import math
import sqlite3

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kbsim
from kbsim import MemoryStore, SQLiteStore, ToolError
from kbsim.store import ArticleWords, arguments_digest, parse_version
from kbsim.store.analyzer import analyzer_for
from kbsim.store.schema import validate_arguments
from kbsim.store.timefmt import MAX_VERSION_US, is_rfc3339
from kbsim.store.written import WrittenArticles

KB = "kb-1"
A1, A2, A3 = "art-000001", "art-000002", "art-000003"
V0 = "2026-01-05T09:00:00.000000Z"


def seeded(make) -> MemoryStore | SQLiteStore:
    """A store with one knowledge base of three articles and one applied agent edit."""
    store = make()
    store.create_knowledge_base(KB)
    for n in (1, 2, 3):
        store.publish_article(KB, title=f"title {n} words", content=f"body {n} words", at=0.0)
    store.client({KB}, clock=lambda: 1.0).call("edit_knowledge_article", edit_arguments(A1))
    return store


def edit_arguments(article_id: str, **changes) -> dict:
    return {"knowledge_base_id": KB, "article_id": article_id, "content": "edited",
            "expected_version": V0, "idempotency_key": f"key-{article_id}", **changes}


#: Every public method that takes arguments -> keyword arguments with which it succeeds.
GOOD = {
    "create_knowledge_base": {"kb_id": "kb-new", "articles": [("t", "c")], "at": 0.0,
                              "article_ids": ["own/id-1"], "analyzer": analyzer_for("unicode", "de")},
    "analyzer_name": {"kb_id": KB},
    "create_knowledge_base_from_words": {
        "kb_id": "kb-new", "articles": [("T", "c.")],
        "words": ArticleWords(["t", "c"], np.array([[1]]), np.array([[0]])), "at": 0.0,
    },
    "create_knowledge_base_written": {
        "kb_id": "kb-new", "written": WrittenArticles(["t", "c"], np.array([[0]]), np.array([[1, 1]])), "at": 0.0,
    },
    "publish_article": {"kb_id": KB, "title": "new title", "content": "new body", "at": 2.0},
    "save_article": {"kb_id": KB, "article_id": A2, "at": 2.0, "content": "c", "title": "t"},
    "save_article_words": {
        "kb_id": KB, "article_id": A2, "at": 2.0, "vocabulary": ["c", "t"], "words": np.array([0, 1]), "title": "t",
    },
    "unpublish_article": {"kb_id": KB, "article_id": A2, "at": 2.0},
    "current_version": {"kb_id": KB, "article_id": A2},
    "article_state": {"kb_id": KB, "article_id": A2},
    "published_article_ids": {"kb_id": KB},
    "unpublished_article_ids": {"kb_id": KB},
    "latest_sequence": {"kb_id": KB},
    "has_knowledge_base": {"kb_id": KB},
    "tool_search": {"kb_id": KB, "query": "words", "limit": 5},
    "tool_read": {"kb_id": KB, "article_id": A2},
    "tool_edit": {"arguments": edit_arguments(A2), "now_us": 2_000_000},
    "tool_poll": {"kb_id": KB, "after_sequence": 0, "limit": 5, "now_us": 2_000_000},
    "client": {"grants": {KB}, "clock": lambda: 0.0},
    "result_size": {"name": "read_knowledge_article", "result": None},  # result: filled in
    "search_many": {"kb_id": KB, "queries": ["words", "other words"], "limit": 5},
    "search_titles": {"kb_id": KB, "queries": ["words", "other words"], "article_ids": [A2, A1], "limit": 5},
    "read_many": {"kb_id": KB, "article_ids": [A2, "art-999999"]},
    "subscribe_article": {"subscriber": "session-1", "kb_id": KB, "article_id": A2},
    "unsubscribe_article": {"subscriber": "session-1", "kb_id": KB, "article_id": A2},
    "listen": {"listener": lambda change: None},
}
#: Optional methods, a backend's fast paths: only MemoryStore has them.
MEMORY_ONLY = {
    "result_size", "search_many", "search_titles", "read_many", "create_knowledge_base_from_words",
    "create_knowledge_base_written", "save_article_words",
}
#: Methods without arguments, and options checked like the constructor's (ValueError).
NO_ARGUMENTS = {"knowledge_base_ids", "snapshot", "close"}
OPTIONS = {"copy"}

NOT_TEXT = {"none": None, "int": 7, "float": 7.5, "bool": True, "bytes": b"kb-1",
            "list": ["kb-1"], "dict": {"kb": 1}}
NOT_INT = {"none": None, "str": "1", "float": 1.5, "bool": True, "nan": math.nan, "list": [1]}
BAD = {  # argument -> {label: value}
    "kb_id": NOT_TEXT,
    "article_id": NOT_TEXT,
    "title": NOT_TEXT,
    "content": NOT_TEXT,
    "query": NOT_TEXT,
    "at": {"none": None, "str": "1.0", "bool": True, "nan": math.nan, "inf": math.inf,
           "-inf": -math.inf, "1e20": 1e20, "-1e20": -1e20, "1e303": 1e303, "list": [1.0], "complex": 1j},
    "limit": {**NOT_INT, "zero": 0, "negative": -1},
    "after_sequence": {**NOT_INT, "negative": -1},
    "now_us": {**NOT_INT, "1e30": 10**30, "-1e30": -(10**30)},
    "arguments": {"none": None, "list": [], "str": "x", "empty": {},
                  "content_int": edit_arguments(A2, content=123),
                  "title_none": edit_arguments(A2, title=None),
                  "extra": edit_arguments(A2, extra=1)},
    "articles": {"int": 5, "str": "tc", "single": [("t",)], "content_int": [("t", 1)],
                 "none_item": [None], "triple": [("t", "c", "x")], "title_none": [(None, "c")]},
    "grants": {"str": KB, "ints": [1], "none": None, "int": 5},
    "words": {"none": None, "tuple": (["t", "c"], [[1]], [[0]]),
              "wrong_word": ArticleWords(["t", "c"], np.array([[0]]), np.array([[0]])),
              "two_rows": ArticleWords(["t", "c"], np.array([[1], [1]]), np.array([[0], [0]])),
              "out_of_range": ArticleWords(["t", "c"], np.array([[2]]), np.array([[0]])),
              "ragged": ArticleWords(["t", "c"], [[1], []], np.array([[0]])),
              # (a save's words: an array of indices into its vocabulary)
              "list": [0, 1], "floats": np.array([0.0]), "two_d": np.array([[0]]),
              "index_past_the_end": np.array([2]), "negative": np.array([-1])},
    "written": {"none": None, "tuple": (["t", "c"], [[0]], [[1]]),
                "upper_case": WrittenArticles(["T", "c"], np.array([[0]]), np.array([[1]])),
                "two_tokens": WrittenArticles(["t-x", "c"], np.array([[0]]), np.array([[1]])),
                "empty_word": WrittenArticles(["", "c"], np.array([[0]]), np.array([[1]])),
                "not_ascii": WrittenArticles(["té", "c"], np.array([[0]]), np.array([[1]])),
                "not_strings": WrittenArticles(["t", 5], np.array([[0]]), np.array([[1]])),
                "rows_differ": WrittenArticles(["t", "c"], np.array([[0]]), np.array([[1], [1]])),
                "out_of_range": WrittenArticles(["t", "c"], np.array([[0]]), np.array([[2]])),
                "floats": WrittenArticles(["t", "c"], np.array([[0.0]]), np.array([[1]])),
                "lists": WrittenArticles(["t", "c"], [[0]], np.array([[1]])),
                "no_title_word": WrittenArticles(["t", "c"], np.zeros((1, 0), dtype=int), np.array([[1]]))},
    "vocabulary": {"none": None, "str": "ct", "upper_case": ["C", "t"], "two_tokens": ["c t", "x"],
                   "not_strings": [1, 2]},
    "clock": {"none": None, "int": 5, "str": "now"},
    "name": {"int": 5, "unknown": "no_such_tool", "none": None},
    "queries": {"none": None, "str": "words", "int": 5, "item_int": ["words", 5], "item_none": [None]},
    "article_ids": {"none": None, "str": A2, "int": 5, "item_int": [A2, 5], "item_bytes": [b"x"]},
    "analyzer": {"none": None, "str": "ascii", "int": 5},
    "subscriber": NOT_TEXT,
    "listener": {"none": None, "int": 5, "str": "on_change"},
}
#: Bad values of one method's argument only (an id a read may ask for, but no article may have).
BAD_FOR = {("create_knowledge_base", "article_ids"): {
    "item_empty": [""], "item_newline": ["a\nb"], "item_padded": [" a"], "too_few": [], "too_long": ["x" * 257]}}
#: Where None is a good value (the optional save arguments) it is not a bad one.
OPTIONAL_NONE = {
    ("save_article", "content"), ("save_article", "title"), ("create_knowledge_base", "article_ids"),
    ("save_article_words", "title"),
}


def _bad_cases():
    for method, good in GOOD.items():
        for argument in good:
            if argument == "result":
                continue
            for label, value in {**BAD[argument], **BAD_FOR.get((method, argument), {})}.items():
                if value is None and (method, argument) in OPTIONAL_NONE:
                    continue
                yield pytest.param(method, argument, value, id=f"{method}-{argument}-{label}")


def _call(store, method: str, kwargs: dict):
    if method == "result_size" and kwargs.get("result") is None:
        result = store.tool_read(KB, A2)
        kwargs = {**kwargs, "result": result}
    return getattr(store, method)(**kwargs)


#: The backends with their state in memory: argument checks come before any file access.
IN_MEMORY = {"memory": MemoryStore, "sqlite": lambda: SQLiteStore(":memory:")}


def test_every_public_method_is_covered():
    for backend in (MemoryStore, SQLiteStore):
        public = {
            name for name, member in inspect.getmembers(backend)
            if not name.startswith("_") and callable(member)
        }
        assert public - NO_ARGUMENTS - OPTIONS <= set(GOOD), backend
        assert set(GOOD) - MEMORY_ONLY <= public


@pytest.mark.parametrize("method", list(GOOD))
def test_the_good_calls_succeed(store, method):
    s = seeded(store)
    if method in MEMORY_ONLY and not isinstance(s, MemoryStore):
        # A backend without the fast path: the client makes the calls one by one instead.
        assert not hasattr(s, method)
        return
    _call(s, method, dict(GOOD[method]))


def _backend_cases():
    for case in _bad_cases():
        method = case.values[0]
        for backend in sorted(IN_MEMORY):
            if backend == "memory" or method not in MEMORY_ONLY:
                yield pytest.param(backend, *case.values, id=f"{backend}-{case.id}")


@pytest.mark.parametrize(("backend", "method", "argument", "value"), list(_backend_cases()))
def test_a_bad_argument_is_refused_by_name_and_changes_nothing(backend, method, argument, value):
    s = seeded(IN_MEMORY[backend])
    before = s.snapshot()
    with pytest.raises(ToolError) as info:
        _call(s, method, {**GOOD[method], argument: value})
    assert info.value.code == "invalid_argument", info.value
    assert argument in info.value.message or method == "tool_edit", info.value.message
    assert s.snapshot() == before


@pytest.mark.parametrize("value", ["x", -1.0, math.inf, math.nan, [1]])
def test_a_bad_retention_option_is_a_value_error(value):
    with pytest.raises(ValueError, match="event_retention_s"):
        MemoryStore(event_retention_s=value)
    with pytest.raises(ValueError, match="event_retention_s"):
        MemoryStore().copy(event_retention_s=value)
    with pytest.raises(ValueError, match="event_retention_s"):
        SQLiteStore(":memory:", event_retention_s=value)


_junk = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8),
    st.binary(max_size=4), st.lists(st.integers(), max_size=2),
    st.tuples(st.text(max_size=3), st.integers()),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.sampled_from([KB, A1, A2, "kb-new", 0, 1, 2_000_000, 1e300, -1e300, "\ud800"]),
)


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
@settings(max_examples=150, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(sorted(GOOD)), data=st.data())
def test_any_value_anywhere_gives_a_result_or_a_tool_error_and_no_partial_state(
    backend, method, data
):
    if backend != "memory" and method in MEMORY_ONLY:
        method = "tool_search"  # the backend has no fast path; its tool call stands in
    good = GOOD[method]
    argument = data.draw(st.sampled_from(sorted(a for a in good if a != "result")))
    value = data.draw(_junk)
    s = seeded(IN_MEMORY[backend])
    before = s.snapshot()
    try:
        _call(s, method, {**good, argument: value})
    except ToolError:
        assert s.snapshot() == before


# -- time beyond the calendar -------------------------------------------------------------


@pytest.mark.parametrize("at", [1e12 * 86_400, math.inf, -math.inf, math.nan, -1e20])
def test_a_time_off_the_calendar_is_refused_and_the_article_stays_editable(store, at):
    s = seeded(store)
    before = s.snapshot()
    with pytest.raises(ToolError, match="at") as info:
        s.save_article(KB, A2, at=at, content="too late")
    assert info.value.code == "invalid_argument"
    with pytest.raises(ToolError, match="at") as info:
        s.unpublish_article(KB, A2, at=at)
    # The agent's clock (a server at --speed inf) runs off the calendar: nothing changes.
    late = s.client({KB}, clock=lambda: at)
    with pytest.raises(ToolError, match="clock") as info:
        late.call("edit_knowledge_article", edit_arguments(A2))
    assert info.value.code == "invalid_argument"
    assert s.snapshot() == before
    # ... so re-reading and retrying with a sane clock succeeds: the version was not bumped.
    current = s.client({KB}, clock=lambda: 5.0)
    read = current.call("read_knowledge_article", {"knowledge_base_id": KB, "article_id": A2})
    assert read["updated_at"] == V0
    assert current.call("edit_knowledge_article", edit_arguments(A2))["replayed"] is False


def test_the_last_instant_of_the_calendar_is_the_last_version(store):
    s = seeded(store)
    applied = s.tool_edit(edit_arguments(A2), MAX_VERSION_US)
    assert applied["updated_at"] == "9999-12-31T23:59:59.999999Z"
    before = s.snapshot()
    # The next change of that article would need a later instant: refused, nothing changed.
    with pytest.raises(ToolError, match="9999-12-31") as info:
        s.save_article(KB, A2, at=0.0, content="after the end")
    assert info.value.code == "invalid_argument"
    assert s.snapshot() == before


# -- a knowledge base filled in one step -----------------------------------------------------


def test_filling_a_knowledge_base_is_all_or_nothing(store):
    s = store()
    s.create_knowledge_base("other")
    before = s.snapshot()

    def interrupted():
        for n in range(5):
            yield f"title {n}", f"body {n}"
        raise KeyboardInterrupt  # Ctrl-C, or a kill, in the middle of the fill

    with pytest.raises(KeyboardInterrupt):
        s.create_knowledge_base(KB, interrupted(), at=0.0)
    assert s.snapshot() == before and not s.has_knowledge_base(KB)
    with pytest.raises(ToolError, match=r"articles\[3\]"):
        s.create_knowledge_base(KB, [("t", "c")] * 3 + [("t", None)], at=0.0)
    assert s.snapshot() == before

    articles = [(f"title {n}", f"body {n}") for n in range(5)]
    assert s.create_knowledge_base(KB, articles, at=1.0) == [f"art-00000{n}" for n in range(1, 6)]
    one_by_one = store()
    one_by_one.create_knowledge_base("other")
    one_by_one.create_knowledge_base(KB)
    for title, content in articles:
        one_by_one.publish_article(KB, title=title, content=content, at=1.0)
    assert s.snapshot() == one_by_one.snapshot()
    with pytest.raises(ToolError, match="already exists"):
        s.create_knowledge_base(KB, articles, at=1.0)


# -- idempotency records ------------------------------------------------------------------------


def test_idempotency_records_keep_a_digest_of_the_arguments_not_the_arguments(store):
    s = seeded(store)
    client = s.client({KB}, clock=lambda: 2.0)
    big = ("word " * 20_000)[:-1]  # 99,999 characters: as large as an edit may be (kbsim.store.rules)
    arguments = edit_arguments(A2, content=big, title="big")
    first = client.call("edit_knowledge_article", arguments)
    digest, result = s.snapshot()["idempotency"][arguments["idempotency_key"]]
    assert result == first and digest == arguments_digest(arguments)
    assert len(json.dumps([digest, result])) < 1_000
    # The digest is of the arguments, not of their order; other arguments are still refused.
    reordered = dict(reversed(list(arguments.items())))
    assert client.call("edit_knowledge_article", reordered) == {**first, "replayed": True}
    with pytest.raises(ToolError) as info:
        client.call("edit_knowledge_article", {**arguments, "content": big + "!"})
    assert info.value.code == "idempotency_key_reused"
    with pytest.raises(ToolError) as info:
        client.call("edit_knowledge_article", {k: v for k, v in arguments.items() if k != "title"})
    assert info.value.code == "idempotency_key_reused"
    if isinstance(s, SQLiteStore):
        raw = sqlite3.connect(s.path)
        try:
            stored = sum(len(str(column)) for row in raw.execute("SELECT * FROM idempotency")
                         for column in row)
        finally:
            raw.close()
        assert stored < 2_000  # two records, no 1 MB argument


def test_the_digest_is_sha256_of_canonical_json():
    import hashlib

    arguments = {"b": "\ud800", "a": "é"}
    canonical = '{"a":"\\u00e9","b":"\\ud800"}'
    assert arguments_digest(arguments) == hashlib.sha256(canonical.encode("ascii")).hexdigest()


# -- leap seconds --------------------------------------------------------------------------------

LEAP_SECONDS = ["2016-12-31T23:59:60Z", "2016-12-31T23:59:60.5Z", "2016-12-31T15:59:60-08:00",
                "2026-01-05t23:59:60z", "2027-01-01T00:59:60+01:00"]
NOT_LEAP_SECONDS = ["2016-12-31T23:58:60Z", "2016-12-31T23:59:61Z", "2016-12-31T12:59:60Z",
                    "2016-12-31T23:59:60-08:00"]


@pytest.mark.parametrize("version", LEAP_SECONDS)
def test_a_leap_second_is_a_valid_time_that_no_version_is(store, version):
    """RFC 3339 allows 23:59:60 (UTC); versions never name one, so it is a conflict."""
    assert is_rfc3339(version) and parse_version(version) is None
    validate_arguments("edit_knowledge_article", edit_arguments(A2, expected_version=version))
    s = seeded(store)
    before = s.snapshot()
    with pytest.raises(ToolError) as info:
        s.client({KB}, clock=lambda: 2.0).call(
            "edit_knowledge_article", edit_arguments(A2, expected_version=version))
    assert info.value.code == "version_conflict", info.value
    assert s.snapshot() == before


@pytest.mark.parametrize("version", NOT_LEAP_SECONDS)
def test_second_60_anywhere_but_a_leap_second_is_invalid(version):
    assert not is_rfc3339(version)
    with pytest.raises(ToolError) as info:
        validate_arguments("edit_knowledge_article", edit_arguments(A2, expected_version=version))
    assert info.value.code == "invalid_argument" and "expected_version" in info.value.message


def test_busy_is_a_documented_error_code():
    assert "busy" in kbsim.store.ERROR_CODES


def test_a_tool_error_is_made_again_from_its_args_as_simpy_and_pickle_do():
    """SimPy raises a process's failure anew as ``type(exc)(*exc.args)``: a ToolError raised in a
    process (a driven day's refused call) reached the caller as a TypeError about the missing
    message. Now it arrives as itself, and pickle keeps its details too."""
    import pickle

    import simpy

    from kbsim.store import ToolError

    def refused(env):
        yield env.timeout(1)
        raise ToolError("version_conflict", "expected_version is stale", current_version="v2")

    env = simpy.Environment()
    env.process(refused(env))
    with pytest.raises(ToolError) as caught:
        env.run()
    assert caught.value.code == "version_conflict"
    assert str(caught.value) == "version_conflict: expected_version is stale"
    assert caught.value.__cause__.details == {"current_version": "v2"}
    again = pickle.loads(pickle.dumps(caught.value.__cause__))
    assert (type(again), again.code, again.message, again.details) == (
        ToolError, "version_conflict", "expected_version is stale", {"current_version": "v2"})
