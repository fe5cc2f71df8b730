"""Print the transcript of a short session with ``kbsim serve`` through the MCP SDK client.

Usage: python scripts/mcp_transcript.py [extra ``kbsim serve`` arguments, e.g. --live]

Starts ``python -m kbsim serve`` as a subprocess over stdio, lists the tools,
then searches, reads, edits with the cited version, retries with the stale
one, replays the edit, polls and makes one bad call. Long texts are shortened.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parents[1]


def shorten(value: Any, limit: int = 60) -> Any:
    """Strings over ``limit`` characters cut, lists over 2 items elided (for reading)."""
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"...(+{len(value) - limit} chars)"
    if isinstance(value, list) and len(value) > 2:
        return [shorten(v, limit) for v in value[:2]] + [f"...(+{len(value) - 2} more)"]
    if isinstance(value, list):
        return [shorten(v, limit) for v in value]
    if isinstance(value, dict):
        return {k: shorten(v, limit) for k, v in value.items()}
    return value


async def session_transcript(serve_args: list[str]) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kbsim", "serve", *serve_args],
        env={"PYTHONPATH": str(REPO)},
        cwd=str(REPO),
    )
    async with stdio_client(params) as streams, ClientSession(*streams) as session:
        init = await session.initialize()
        print(f"# connected: {init.server_info.name} {init.server_info.version}, "
              f"protocol {init.protocol_version}")
        print(f"# instructions: {init.instructions}")
        tools = await session.list_tools()
        for tool in tools.tools:
            annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True)
            print(f"# tool {tool.name} required={tool.input_schema['required']} {annotations}")

        async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            result = await session.call_tool(name, arguments)
            payload = json.loads(result.content[0].text)
            print(f"> {name} {json.dumps(shorten(arguments))}")
            flag = "isError " if result.is_error else ""
            print(f"< {flag}{json.dumps(payload if result.is_error else shorten(payload))}")
            return payload

        kb = "kb-1"
        article = await call("read_knowledge_article", {"knowledge_base_id": kb,
                                                        "article_id": "art-000007"})
        hits = await call("search_knowledge_base", {"knowledge_base_id": kb,
                                                    "query": article["title"], "limit": 3})
        top = hits["results"][0]["article_id"]
        cited = await call("read_knowledge_article", {"knowledge_base_id": kb, "article_id": top})
        edit = {"knowledge_base_id": kb, "article_id": cited["article_id"],
                "content": "Corrected by the agent.",
                "expected_version": cited["citation"]["updated_at"],
                "idempotency_key": "transcript-edit-1"}
        await call("edit_knowledge_article", edit)
        await call("edit_knowledge_article", {**edit, "idempotency_key": "transcript-edit-2"})
        await call("edit_knowledge_article", edit)
        await call("poll_resource_events", {"resource_type": "knowledge_base",
                                            "resource_id": kb, "limit": 2})
        await call("poll_resource_events", {"resource_type": "knowledge_base",
                                            "resource_id": kb, "after_sequence": 399})
        await call("poll_resource_events", {"resource_type": "channel", "resource_id": kb})
        await call("search_knowledge_base", {"knowledge_base_id": kb, "query": "x", "limit": 50})
        await call("read_knowledge_article", {"knowledge_base_id": "kb-9",
                                              "article_id": "art-000001"})


def main() -> int:
    anyio.run(session_transcript, sys.argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
