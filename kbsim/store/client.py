"""The agent's caller-bound entry point: ``client.call(name, arguments) -> dict``.

Every caller (the simulation, the tests, the MCP server) goes through here,
so validation, grants and dispatch happen in exactly one place; the store
backends implement only the semantics behind each tool.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from kbsim.store.errors import ToolError, echoed, shown
from kbsim.store.rules import check_at, json_size, nfc
from kbsim.store.schema import validate_arguments, validate_each

if TYPE_CHECKING:
    from kbsim.store.protocol import Store

Clock = Callable[[], float]

DEFAULT_SEARCH_LIMIT = 10
DEFAULT_POLL_LIMIT = 100


class Client:
    """The agent's view of a store: the four tools, limited to granted KBs.

    A knowledge base that is not granted answers exactly like a missing one.
    ``clock()`` gives the simulated seconds an edit or a poll happens at; a
    time no ``updated_at`` can write (``inf``, or past the year 9999) refuses
    the call with ``invalid_argument`` and changes nothing.
    """

    def __init__(self, store: Store, grants: set[str] | frozenset[str], clock: Clock) -> None:
        if isinstance(grants, (str, bytes)) or not isinstance(grants, Iterable):
            raise ToolError(
                "invalid_argument", f"grants must be a set of knowledge base ids, got {shown(grants)}"
            )
        grants = frozenset(grants)
        if not all(isinstance(kb_id, str) for kb_id in grants):
            raise ToolError(
                "invalid_argument", f"grants must hold knowledge base ids (strings), got {grants!r}"
            )
        if not callable(clock):
            raise ToolError("invalid_argument", f"clock must be callable, got {shown(clock)}")
        self.store = store
        self.grants = grants
        self.clock = clock

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run tool ``name``; returns its JSON-serialisable result or raises ``ToolError``."""
        args = validate_arguments(name, arguments)
        if name == "search_knowledge_base":
            kb_id = self._granted(args["knowledge_base_id"])
            return self.store.tool_search(
                kb_id, nfc(args["query"]), int(args.get("limit", DEFAULT_SEARCH_LIMIT))
            )
        if name == "read_knowledge_article":
            kb_id = self._granted(args["knowledge_base_id"])
            return self.store.tool_read(kb_id, nfc(args["article_id"]))
        if name == "edit_knowledge_article":
            self._granted(args["knowledge_base_id"])
            if not args["article_id"].isascii():  # ids are kept as NFC (rules.nfc)
                args = {**args, "article_id": nfc(args["article_id"])}
            return self.store.tool_edit(args, check_at(self.clock(), "clock()"))
        # poll_resource_events: the schema admits nothing else
        if args["resource_type"] != "knowledge_base":
            raise ToolError(
                "unsupported",
                f"resource_type {echoed(args['resource_type'])} is not simulated; "
                "only 'knowledge_base' is supported",
            )
        kb_id = self._granted(args["resource_id"], argument="resource_id")
        return self.store.tool_poll(
            kb_id,
            int(args.get("after_sequence", 0)),
            int(args.get("limit", DEFAULT_POLL_LIMIT)),
            check_at(self.clock(), "clock()"),
        )

    def call_sized(self, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """Like :meth:`call`, also returning the result's size in JSON bytes."""
        result = self.call(name, arguments)
        sizer = getattr(self.store, "result_size", None)
        return result, (json_size(result) if sizer is None else sizer(name, result))

    def search_many(
        self, kb_id: str, queries: list[str], limit: int
    ) -> list[tuple[list[tuple[str, str]], int]]:
        """``search_knowledge_base`` for each query, at one instant: for each, its hits'
        ``(article_id, title)`` in order and the result's size in JSON bytes, as
        :meth:`call_sized` gives them call by call.

        Why it exists: a check that searches many titles at once can have them ranked
        together (a store's ``search_many``, when it has one). Each call's arguments are
        validated as :meth:`call` validates them; any error is raised as the first failing
        call would raise it (the caller may then make the calls one by one to see it).
        """
        queries = list(queries)
        validate_each("search_knowledge_base", {"knowledge_base_id": kb_id, "limit": limit}, "query", queries)
        if not queries:
            return []
        kb_id = self._granted(kb_id)
        many = getattr(self.store, "search_many", None)
        if many is None:
            answers = []
            for query in queries:
                args = {"knowledge_base_id": kb_id, "query": query, "limit": limit}
                result, size = self.call_sized("search_knowledge_base", args)
                answers.append(([(hit["article_id"], hit["title"]) for hit in result["results"]], size))
            return answers
        return many(kb_id, list(queries), int(limit))

    def search_titles(
        self, kb_id: str, queries: list[str], article_ids: list[str], limit: int
    ) -> list[tuple[str | None, int]]:
        """``search_knowledge_base`` for each query at one instant, as :meth:`search_many`,
        answering for each only the title of ``article_ids[i]``'s hit (None when it is not
        among the hits) and the result's size in JSON bytes.

        Why it exists: the title check wants nothing else of its searches; a store's
        ``search_titles`` (when it has one) answers it without building any hit. Arguments are
        validated as :meth:`search_many` validates them; ``article_ids`` must hold one id a query.
        """
        queries, article_ids = list(queries), list(article_ids)
        validate_each("search_knowledge_base", {"knowledge_base_id": kb_id, "limit": limit}, "query", queries)
        if len(article_ids) != len(queries) or not all(isinstance(article_id, str) for article_id in article_ids):
            raise ToolError("invalid_argument", f"article_ids must be {len(queries)} strings, one a query")
        if not queries:
            return []
        titles = getattr(self.store, "search_titles", None)
        if titles is None:
            answers = self.search_many(kb_id, queries, limit)
            pairs = zip(article_ids, answers, strict=True)
            return [(dict(hits).get(article_id), size) for article_id, (hits, size) in pairs]
        return titles(self._granted(kb_id), queries, article_ids, int(limit))

    def read_many(self, kb_id: str, article_ids: list[str]) -> list[tuple[str | None, int]]:
        """``read_knowledge_article`` for each article, at one instant: for each, the result's
        ``updated_at`` and size in JSON bytes as :meth:`call_sized` gives them, or, where the
        call answers ``not_found``, None and the size of that error (``{"error": ...}``).

        Why it exists: the re-read and poll checks read many articles at once and need
        only their versions; a store's ``read_many`` (when it has one) answers without
        building each result. Arguments are validated as :meth:`call` validates them; any
        other error is raised as the first failing call would raise it.
        """
        article_ids = list(article_ids)
        validate_each("read_knowledge_article", {"knowledge_base_id": kb_id}, "article_id", article_ids)
        many = getattr(self.store, "read_many", None)
        if many is not None and article_ids and kb_id in self.grants and self.store.has_knowledge_base(kb_id):
            return many(kb_id, article_ids)
        return reads_call_by_call(self.call_sized, kb_id, article_ids)

    def _granted(self, kb_id: str, argument: str = "knowledge_base_id") -> str:
        if kb_id not in self.grants or not self.store.has_knowledge_base(kb_id):
            raise ToolError("not_found", f"{argument} {echoed(kb_id)} not found")
        return kb_id


def reads_call_by_call(call_sized, kb_id: str, article_ids: list[str]) -> list[tuple[str | None, int]]:
    """Each article read by its own ``read_knowledge_article`` call through ``call_sized``
    (``(name, arguments) -> (result, size)``): its version (None when not found) and the
    reply's size, a not-found reply sized as its error. Any other tool error is raised."""
    answers: list[tuple[str | None, int]] = []
    for article_id in article_ids:
        args = {"knowledge_base_id": kb_id, "article_id": article_id}
        try:
            result, size = call_sized("read_knowledge_article", args)
        except ToolError as error:
            if error.code != "not_found":
                raise
            answers.append((None, json_size({"error": error.to_dict()})))
            continue
        answers.append((result["updated_at"], size))
    return answers
