"""Opt-in admin tools of ``kbsim serve --admin-tools``: publish and unpublish an article.

The four knowledge-base tools cannot publish or unpublish; a driven day
(:mod:`kbsim.drive`) needs both to run people's whole save mix against a server. They
are served only with ``--admin-tools`` (off by default) and never listed otherwise; a
call to one without the flag is refused as an unknown tool would be. Arguments are
checked here; the store's own rules refuse a missing knowledge base or article.
"""

from __future__ import annotations

from typing import Any

from kbsim.store import ToolError
from kbsim.store.errors import shown

__all__ = ["ADMIN_TOOLS", "admin_call", "admin_tool_list"]

_KB = {"type": "string"}
#: The admin tools as listed: name -> (description, input schema).
ADMIN_TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "publish_knowledge_article": (
        "Admin (kbsim serve --admin-tools): publish a new article; returns its article_id and updated_at.",
        {"type": "object", "required": ["knowledge_base_id", "title", "content"],
         "properties": {"knowledge_base_id": _KB, "title": {"type": "string"}, "content": {"type": "string"}}},
    ),
    "unpublish_knowledge_article": (
        "Admin (kbsim serve --admin-tools): take an article out of search and reads; writes an "
        "article.unpublished event; returns its final updated_at.",
        {"type": "object", "required": ["knowledge_base_id", "article_id"],
         "properties": {"knowledge_base_id": _KB, "article_id": {"type": "string"}}},
    ),
}


def admin_tool_list() -> list[Any]:
    """The admin tools as MCP ``Tool`` objects (listed only with ``--admin-tools``)."""
    from mcp import types

    return [
        types.Tool(name=name, description=description, input_schema=schema,
                   annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=True))
        for name, (description, schema) in ADMIN_TOOLS.items()
    ]


def _text(arguments: dict[str, Any], name: str) -> str:
    value = arguments.get(name)
    if not isinstance(value, str) or not value:
        raise ToolError("invalid_argument", f"{name} must be a non-empty string, got {shown(value)}")
    return value


def admin_call(store, grants: frozenset[str], name: str, arguments: dict[str, Any], at: float) -> dict[str, Any]:
    """Run admin tool ``name`` on ``store`` at simulated time ``at``; its result, or ToolError."""
    if not isinstance(arguments, dict):
        raise ToolError("invalid_argument", f"arguments must be an object, got {shown(arguments)}")
    kb_id = _text(arguments, "knowledge_base_id")
    if kb_id not in grants or not store.has_knowledge_base(kb_id):
        raise ToolError("not_found", f"knowledge_base_id {kb_id!r} not found")
    if name == "publish_knowledge_article":
        article_id = store.publish_article(kb_id, title=_text(arguments, "title"),
                                           content=_text(arguments, "content"), at=at)
        return {"article_id": article_id, "updated_at": store.current_version(kb_id, article_id)}
    article_id = _text(arguments, "article_id")
    version = store.unpublish_article(kb_id, article_id, at=at)
    return {"article_id": article_id, "unpublished": True, "updated_at": version}
