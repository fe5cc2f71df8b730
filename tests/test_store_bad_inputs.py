"""Every constraint of tools.json, on both sides of every bound.

Each bad case must raise ``ToolError`` with the right code and a message
naming the offending argument, and leave ``store.snapshot()`` unchanged;
each good boundary case must succeed.
"""

from __future__ import annotations

import copy
import re

import pytest

import kbsim

KB = "kb-1"
N_ARTICLES = 25
AID = "art-000001"
V0 = "2026-01-05T09:00:00.000000Z"  # every article is published at second 0
SEARCH, READ, EDIT, POLL = (
    "search_knowledge_base",
    "read_knowledge_article",
    "edit_knowledge_article",
    "poll_resource_events",
)
VALID = {
    SEARCH: {"knowledge_base_id": KB, "query": "common"},
    READ: {"knowledge_base_id": KB, "article_id": AID},
    EDIT: {
        "knowledge_base_id": KB,
        "article_id": AID,
        "content": "new body",
        "expected_version": V0,
        "idempotency_key": "key-1",
    },
    POLL: {"resource_type": "knowledge_base", "resource_id": KB},
}
STRING_ARGS = {
    SEARCH: ("knowledge_base_id", "query"),
    READ: ("knowledge_base_id", "article_id"),
    EDIT: ("knowledge_base_id", "article_id", "content", "title", "expected_version",
           "idempotency_key"),
    POLL: ("resource_type", "resource_id"),
}
INTEGER_ARGS = {SEARCH: ("limit",), READ: (), EDIT: (), POLL: ("after_sequence", "limit")}
NOT_A_STRING = {"int": 7, "float": 7.5, "bool": True, "null": None, "list": ["x"],
                "object": {"x": 1}}
NOT_AN_INTEGER = {"string": "7", "bool_true": True, "bool_false": False, "float": 1.5,
                  "nan": float("nan"), "inf": float("inf"), "null": None, "list": [1],
                  "object": {"x": 1}}
Q200 = ("common " * 29)[:200]


def args(tool: str, drop: str | None = None, **changes) -> dict:
    result = {**VALID[tool], **changes}
    if drop is not None:
        del result[drop]
    return result


def _bad_cases():
    """``(id, tool, arguments, code, word the message must contain)``."""
    bad = [
        ("query_0_chars", SEARCH, args(SEARCH, query=""), "invalid_argument", "query"),
        ("query_1_char", SEARCH, args(SEARCH, query="c"), "invalid_argument", "query"),
        ("query_1_codepoint", SEARCH, args(SEARCH, query="\N{GRINNING FACE}"),
         "invalid_argument", "query"),
        ("query_201_chars", SEARCH, args(SEARCH, query=Q200 + "x"), "invalid_argument", "query"),
        ("after_sequence_-1", POLL, args(POLL, after_sequence=-1), "invalid_argument",
         "after_sequence"),
        ("after_sequence_past_latest", POLL, args(POLL, after_sequence=N_ARTICLES + 1),
         "invalid_argument", "after_sequence"),
    ]
    for tool, low, high in ((SEARCH, 1, 20), (POLL, 1, 100)):
        for value in (-1, low - 1, high + 1, 10**12):
            bad.append((f"{tool}_limit_{value}", tool, args(tool, limit=value),
                        "invalid_argument", "limit"))
    for tool in VALID:
        for name in STRING_ARGS[tool]:
            for kind, value in NOT_A_STRING.items():
                bad.append((f"{tool}_{name}_{kind}", tool, args(tool, **{name: value}),
                            "invalid_argument", name))
        for name in INTEGER_ARGS[tool]:
            for kind, value in NOT_AN_INTEGER.items():
                bad.append((f"{tool}_{name}_{kind}", tool, args(tool, **{name: value}),
                            "invalid_argument", name))
        for name in VALID[tool]:  # every argument of VALID is a required one
            bad.append((f"{tool}_missing_{name}", tool, args(tool, drop=name),
                        "invalid_argument", name))
        for unknown in ("extra", "Knowledge_Base_Id", "after_sequence" if tool != POLL else "q"):
            bad.append((f"{tool}_unknown_{unknown}", tool, args(tool, **{unknown: 1}),
                        "invalid_argument", unknown))
        for kind, value in {"null": None, "list": [], "list_of_names": list(VALID[tool]),
                            "string": "knowledge_base_id", "int": 1}.items():
            bad.append((f"{tool}_arguments_{kind}", tool, value, "invalid_argument",
                        "arguments"))
    bad.append(("search_missing_everything", SEARCH, {}, "invalid_argument", "query"))
    for value in ("folder", "", "Knowledge_Base", "knowledge-base", " knowledge_base", "kb"):
        bad.append((f"resource_type_{value!r}", POLL, args(POLL, resource_type=value),
                    "invalid_argument", "resource_type"))
    for value in ("channel", "note", "record", "session"):  # listed, not simulated
        bad.append((f"resource_type_{value}", POLL, args(POLL, resource_type=value),
                    "unsupported", "resource_type"))
    for label, value in {
        "empty": "",
        "word": "yesterday",
        "date_only": "2026-01-05",
        "no_offset": "2026-01-05T09:00:00",
        "space_separator": "2026-01-05 09:00:00Z",
        "no_such_day": "2026-02-30T09:00:00Z",
        "hour_24": "2026-01-05T24:00:00Z",
        "offset_without_colon": "2026-01-05T09:00:00+0000",
        "offset_24h": "2026-01-05T09:00:00+24:00",
        "empty_fraction": "2026-01-05T09:00:00.Z",
        "non_ascii_digits": "\u0662\u0660\u0662\u0666-01-05T09:00:00Z",
        "unix_seconds": "1767603600",
        "trailing_space": V0 + " ",
    }.items():
        bad.append((f"expected_version_{label}", EDIT, args(EDIT, expected_version=value),
                    "invalid_argument", "expected_version"))
    for name in ("search", "", "Search_Knowledge_Base", "read_knowledge_articles",
                 "delete_knowledge_article", " poll_resource_events"):
        bad.append((f"tool_{name!r}", name, {}, "invalid_argument", repr(name)))
    return bad


def _good_cases():
    """``(id, tool, arguments, expected number of results or events, or None)``."""
    return [
        ("query_2_chars", SEARCH, args(SEARCH, query="co"), 0),
        ("query_2_codepoints", SEARCH, args(SEARCH, query="\N{GRINNING FACE}" * 2), 0),
        ("query_200_chars", SEARCH, args(SEARCH, query=Q200), 10),
        ("search_limit_default", SEARCH, args(SEARCH), 10),
        ("search_limit_1", SEARCH, args(SEARCH, limit=1), 1),
        ("search_limit_20", SEARCH, args(SEARCH, limit=20), 20),
        # JSON Schema: an integer is any number with a zero fractional part
        ("search_limit_2.0", SEARCH, args(SEARCH, limit=2.0), 2),
        ("poll_limit_default", POLL, args(POLL), N_ARTICLES),
        ("poll_limit_1", POLL, args(POLL, limit=1), 1),
        ("poll_limit_100", POLL, args(POLL, limit=100), N_ARTICLES),
        ("after_sequence_0", POLL, args(POLL, after_sequence=0), N_ARTICLES),
        ("after_sequence_latest", POLL, args(POLL, after_sequence=N_ARTICLES), 0),
        ("read", READ, args(READ), None),
        ("edit_without_title", EDIT, args(EDIT), None),
        ("edit_with_title", EDIT, args(EDIT, title="New title"), None),
        ("edit_empty_content_and_title", EDIT, args(EDIT, content="", title=""), None),
        ("expected_version_lower_case", EDIT, args(EDIT, expected_version=V0.lower()), None),
        ("expected_version_offset", EDIT,
         args(EDIT, expected_version="2026-01-05T10:00:00+01:00"), None),
    ]


def _params(cases):
    return [pytest.param(*case[1:], id=case[0]) for case in cases]


@pytest.fixture
def seeded(store):
    """A store with KB holding N_ARTICLES published articles, and a client for it."""
    s = store()
    s.create_knowledge_base(KB)
    for i in range(N_ARTICLES):
        s.publish_article(KB, title=f"Topic {i}", content=f"common words, number {i}", at=0.0)
    return s, s.client(grants={KB}, clock=lambda: 60.0)


def names(word: str, message: str) -> bool:
    """True if ``word`` appears in ``message`` as a whole name, not inside another one."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", message) is not None


@pytest.mark.parametrize(("tool", "arguments", "code", "argument"), _params(_bad_cases()))
def test_bad_input_is_refused_and_changes_nothing(seeded, tool, arguments, code, argument):
    s, client = seeded
    before = s.snapshot()
    with pytest.raises(kbsim.ToolError) as info:
        client.call(tool, copy.deepcopy(arguments))
    assert (info.value.code, names(argument, info.value.message)) == (code, True), (
        info.value.to_dict()
    )
    assert s.snapshot() == before


@pytest.mark.parametrize(("tool", "arguments", "count"), _params(_good_cases()))
def test_boundary_input_is_accepted(seeded, tool, arguments, count):
    _, client = seeded
    result = client.call(tool, copy.deepcopy(arguments))
    if tool == SEARCH:
        assert len(result["results"]) == count
    elif tool == POLL:
        assert len(result["events"]) == count
    elif tool == READ:
        assert result["article_id"] == AID
    else:
        assert (result["article_id"], result["replayed"]) == (AID, False)
        assert result["title"] == arguments.get("title", "Topic 0")


# -- an oversized argument is never echoed whole (issue 24, audited again) -----------------------

HUGE = "x" * 1_000_000


@pytest.mark.parametrize(("tool", "changes", "code"), [
    pytest.param(READ, {"article_id": HUGE}, "not_found", id="read-article_id"),
    pytest.param(READ, {"knowledge_base_id": HUGE}, "not_found", id="read-knowledge_base_id"),
    pytest.param(EDIT, {"article_id": HUGE}, "not_found", id="edit-article_id"),
    pytest.param(POLL, {"resource_id": HUGE}, "not_found", id="poll-resource_id"),
    pytest.param(POLL, {"resource_type": "y" * 1_000_000}, "invalid_argument", id="poll-resource_type"),
    pytest.param(READ, {HUGE: 1}, "invalid_argument", id="unknown-argument-name"),
])
def test_an_oversized_argument_is_shown_cut_short_in_the_error(seeded, tool, changes, code):
    """A 1 MB ``article_id`` gave a 2 MB ``not_found`` reply: the message quoted it whole."""
    s, client = seeded
    before = s.snapshot()
    with pytest.raises(kbsim.ToolError) as info:
        client.call(tool, args(tool, **changes))
    assert info.value.code == code
    assert len(info.value.message) < 1_000, len(info.value.message)
    assert code != "not_found" or "(1,000,000 characters) not found" in info.value.message
    assert s.snapshot() == before


def test_a_reused_long_idempotency_key_is_named_cut_short(seeded):
    """The schema lets an idempotency key be any length (tools.json sets no maxLength), so
    a 100,000-character key is accepted; a refusal of its reuse does not echo it whole."""
    s, client = seeded
    key = "k" * 100_000
    assert client.call(EDIT, args(EDIT, idempotency_key=key))["replayed"] is False
    with pytest.raises(kbsim.ToolError) as info:
        client.call(EDIT, args(EDIT, idempotency_key=key, content="other body"))
    assert info.value.code == "idempotency_key_reused"
    assert info.value.message == (f"idempotency_key '{'k' * 17}...{'k' * 18}' (100,000 characters) was already "
                                  "used with different arguments")


def test_an_id_within_the_echo_limit_is_quoted_whole(seeded):
    _, client = seeded
    wanted = "a" * 256
    with pytest.raises(kbsim.ToolError) as info:
        client.call(READ, args(READ, article_id=wanted))
    assert info.value.message == f"article_id {wanted!r} not found in knowledge base {KB!r}"
