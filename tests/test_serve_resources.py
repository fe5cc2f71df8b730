"""``kbsim serve`` as a first-class MCP server (issue 38): output schemas, logging, articles as
resources with subscriptions, and resumable streams, through the official SDK client over
Streamable HTTP (and stdio where it differs)."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager

import fastjsonschema
import pytest
from anyio.from_thread import start_blocking_portal
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from kbsim.serve.resources import URI_TEMPLATE, article_uri, parse_article_uri
from kbsim.serve.shapes import output_schema
from tests.test_serve_http import http_server, in_process_http

pytestmark = pytest.mark.xdist_group("serve-resources")

KB = "kb-1"
SEARCH, READ, EDIT, POLL = ("search_knowledge_base", "read_knowledge_article", "edit_knowledge_article",
                            "poll_resource_events")


@contextmanager
def session_to(url: str, heard: list | None = None) -> Iterator[tuple]:
    """An initialized SDK session over HTTP; every notification it gets is appended to ``heard``."""

    async def on_message(message) -> None:
        if heard is not None and isinstance(message, types.ServerNotification | types.LoggingMessageNotification
                                            | types.ResourceUpdatedNotification):
            heard.append(message)

    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(streamable_http_client(url)) as (read_stream, write_stream):
            with portal.wrap_async_context_manager(
                    ClientSession(read_stream, write_stream, message_handler=on_message)) as session:
                initialized = portal.call(session.initialize)
                yield portal, session, initialized


def wait_until(condition, what: str, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"no {what} within {timeout_s:g} s"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def url(tmp_path_factory) -> Iterator[str]:
    with http_server(tmp_path_factory.mktemp("serve-resources") / "stderr.log") as endpoint:
        yield endpoint


# logging is deprecated from protocol 2026-07-28 on; the 2025 protocols the clients speak have it
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
def test_the_server_declares_logging_resources_with_subscribe_and_completions(url):
    with session_to(url) as (portal, session, initialized):
        capabilities = initialized.capabilities
        assert capabilities.logging is not None and capabilities.completions is not None
        assert capabilities.resources is not None and capabilities.resources.subscribe is True
        assert portal.call(session.set_logging_level, "warning") is not None  # {}, not "method not found"


def test_every_tool_declares_an_output_schema_its_structured_content_meets(url):
    with session_to(url) as (portal, session, _):
        tools = {tool.name: tool for tool in portal.call(session.list_tools).tools}
        assert {name: tool.output_schema for name, tool in tools.items()} == {
            name: output_schema(name) for name in (SEARCH, READ, EDIT, POLL)}
        read = portal.call(session.call_tool, READ, {"knowledge_base_id": KB, "article_id": "art-000003"})
        version = read.structured_content["updated_at"]
        calls = {
            SEARCH: {"knowledge_base_id": KB, "query": "password reset"},
            READ: {"knowledge_base_id": KB, "article_id": "art-000003"},
            EDIT: {"knowledge_base_id": KB, "article_id": "art-000003", "content": "new", "expected_version": version,
                   "idempotency_key": "schema-1"},
            POLL: {"resource_type": "knowledge_base", "resource_id": KB, "after_sequence": 399, "limit": 2},
        }
        for name, arguments in calls.items():
            result = portal.call(session.call_tool, name, arguments)
            assert not result.is_error, result
            fastjsonschema.compile(tools[name].output_schema)(result.structured_content)
            assert json.loads(result.content[0].text) == result.structured_content
        page = result.structured_content
        # the cursor under its clear name, and under the old one for one more release
        assert page["last_sequence"] == page["next_sequence"] == page["events"][-1]["sequence"] == 401


def test_a_cursor_past_the_end_is_refused_with_a_structured_latest_sequence(url):
    with session_to(url) as (portal, session, _):
        result = portal.call(session.call_tool, POLL,
                             {"resource_type": "knowledge_base", "resource_id": KB, "after_sequence": 10**6})
        assert result.is_error and result.structured_content["code"] == "invalid_argument"
        assert result.structured_content["latest_sequence"] >= 400


def test_articles_are_resources_listed_a_page_at_a_time_and_read_as_the_tool_reads_them(url):
    with session_to(url) as (portal, session, _):
        uris, cursor, pages = [], None, 0
        while True:
            listed = portal.call(functools.partial(session.list_resources,
                                                   params=types.PaginatedRequestParams(cursor=cursor)))
            uris += [resource.uri for resource in listed.resources]
            assert all(resource.name and resource.mime_type == "application/json" for resource in listed.resources)
            pages += 1
            cursor = listed.next_cursor
            if cursor is None:
                break
        assert pages == 4 and len(uris) == len(set(uris)) == 400  # the sample: 400 articles, 100 a page
        assert uris[:2] == [article_uri(KB, "art-000001"), article_uri(KB, "art-000002")]
        templates = portal.call(session.list_resource_templates).resource_templates
        assert [t.uri_template for t in templates] == [URI_TEMPLATE]
        read = portal.call(session.read_resource, article_uri(KB, "art-000002"))
        tool = portal.call(session.call_tool, READ, {"knowledge_base_id": KB, "article_id": "art-000002"})
        assert json.loads(read.contents[0].text) == tool.structured_content
        for missing in (article_uri(KB, "art-999999"), article_uri("kb-2", "art-000001")):
            with pytest.raises(MCPError) as info:
                portal.call(session.read_resource, missing)
            assert info.value.code == -32002  # resource not found, granted or not alike
        with pytest.raises(MCPError) as info:
            portal.call(session.read_resource, "test://static-text")
        assert info.value.code == types.INVALID_PARAMS
        template = types.ResourceTemplateReference(type="ref/resource", uri=URI_TEMPLATE)
        completed = portal.call(session.complete, template, {"name": "article_id", "value": "art-00001"})
        assert completed.completion.values == [f"art-{n:06d}" for n in range(10, 20)]


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # removed from 2026-07-28 on
def test_a_subscriber_hears_each_change_of_its_article_and_only_its_own(url):
    """Two sessions: one subscribes to an article; an edit from the other and an unpublish
    (through the store's people path is live-only, so an edit twice) are heard, once each."""
    heard: list = []
    article, other = "art-000011", "art-000012"
    with session_to(url, heard) as (portal, session, _), session_to(url) as (portal2, session2, _):
        portal.call(session.subscribe_resource, article_uri(KB, article))
        with pytest.raises(MCPError):
            portal.call(session.subscribe_resource, article_uri(KB, "art-999999"))

        def edit(article_id: str, key: str) -> None:
            version = portal2.call(session2.call_tool, READ, {"knowledge_base_id": KB, "article_id": article_id})
            result = portal2.call(session2.call_tool, EDIT, {
                "knowledge_base_id": KB, "article_id": article_id, "content": key,
                "expected_version": version.structured_content["updated_at"], "idempotency_key": key})
            assert not result.is_error, result

        edit(article, "sub-1")
        edit(other, "sub-2")  # not subscribed to: not heard
        wait_until(lambda: len(heard) >= 1, "notifications/resources/updated")
        portal.call(session.unsubscribe_resource, article_uri(KB, article))
        edit(article, "sub-3")  # after the unsubscribe: not heard
        portal.call(session.subscribe_resource, article_uri(KB, other))
        edit(other, "sub-4")
        wait_until(lambda: len(heard) >= 2, "a second notification")
        time.sleep(0.5)
    updates = [note.params.uri for note in heard if isinstance(note, types.ResourceUpdatedNotification)]
    assert updates == [article_uri(KB, article), article_uri(KB, other)]


def test_uris_carry_any_id_as_one_segment():
    for kb_id, article_id in (("kb-1", "guides/vpn setup"), ("kb ü", "100%")):
        uri = article_uri(kb_id, article_id)
        assert uri.count("/") == 5 and parse_article_uri(uri) == (kb_id, article_id)
    assert parse_article_uri("kbsim://knowledge-bases/kb-1/articles/") is None


def test_a_closed_http_session_is_forgotten_with_its_subscriptions():
    """A long-running ``serve --http`` keeps only the open sessions: one its client deleted
    (the SDK client deletes it on leaving) is forgotten, with its log level and subscriptions,
    while another session stays; a request naming a session the server no longer knows (404)
    changes nothing else."""
    import urllib.error
    import urllib.request

    with in_process_http() as (url, sessions):
        store = sessions.on_closed[0].__self__.served.store
        with session_to(url) as (portal2, session2, _):
            portal2.call(session2.subscribe_resource, article_uri(KB, "art-000002"))
            with session_to(url) as (portal, session, _):
                portal.call(session.subscribe_resource, article_uri(KB, "art-000001"))
                portal.call(session.set_logging_level, "error")
                wait_until(lambda: len(sessions) == 2, "two open sessions")
                assert len(store.subscriptions.subscribed(sessions.keys()[1])) == 1
            wait_until(lambda: len(sessions) == 1, "the closed session forgotten")
            (kept,) = sessions.keys()
            assert store.subscriptions.subscribed(kept) == [(KB, "art-000002")]
            assert store.subscriptions.subscribers(KB, "art-000001") == frozenset()
            body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
            ping = urllib.request.Request(url, data=body, method="POST", headers={
                "mcp-session-id": "no-such-session", "content-type": "application/json",
                "accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"})
            with pytest.raises(urllib.error.HTTPError) as gone:
                urllib.request.urlopen(ping, timeout=10)
            assert gone.value.code == 404 and sessions.keys() == [kept]
