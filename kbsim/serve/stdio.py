"""The stdio transport of ``kbsim serve``: the MCP SDK's, with every line answered.

The SDK's stdio transport drops a line it cannot parse, so a request in it
is never answered and its client waits forever. Here every line is checked
first, with the SDK's own parser, and a line it would drop is answered with
a JSON-RPC error instead (its ``id`` when one can be read, else ``null``):

- ``-32700`` parse error: the line is not UTF-8 text, or not JSON (``NaN``
  included). Invalid UTF-8 is refused, not silently replaced by U+FFFD;
- ``-32602`` invalid params: a string holds a lone surrogate (``"\\ud800"``,
  what a client cutting a string inside an emoji sends), which is not
  Unicode text; the message names where (``params.arguments.query``);
- ``-32600`` invalid request: JSON that is not a JSON-RPC 2.0 message.

Blank lines are skipped. Everything else is passed to the SDK unchanged.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

from kbsim.extras import require

require("serve", "mcp", "kbsim serve")

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402
from mcp.shared.message import SessionMessage  # noqa: E402


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _lone_surrogate(value: Any, where: str) -> tuple[str, str] | None:
    """``(path, character)`` of the first string holding a lone surrogate, else None."""
    if isinstance(value, str):
        for character in value:
            if "\ud800" <= character <= "\udfff":
                return where, character
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = _lone_surrogate(key, where) or _lone_surrogate(item, f"{where}.{key}")
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _lone_surrogate(item, f"{where}[{i}]")
            if found:
                return found
    return None


def _request_id(message: Any) -> str | int | None:
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        return None
    return request_id


def line_error(line: bytes) -> types.JSONRPCError | None:
    """The JSON-RPC error answering ``line``, or None if the SDK can read it."""

    def error(code: int, message: str) -> types.JSONRPCError:
        try:  # only to address the answer: the id, read as leniently as can be
            request_id = _request_id(json.loads(line.decode("utf-8", "replace")))
        except ValueError:
            request_id = None
        return types.JSONRPCError(
            jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
        )

    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return error(
            types.PARSE_ERROR,
            f"Parse error: the line is not UTF-8 text (byte {line[exc.start]:#04x} at offset "
            f"{exc.start}); JSON-RPC messages must be UTF-8",
        )
    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        return None
    except ValueError:  # pydantic's ValidationError
        pass
    try:
        message = json.loads(text, parse_constant=_no_constants)
    except ValueError as exc:
        return error(types.PARSE_ERROR, f"Parse error: the line is not JSON: {exc}")
    found = _lone_surrogate(message, "message")
    if found is not None:
        where, character = found
        where = where.removeprefix("message.")
        in_params = where.startswith("params")
        return error(
            types.INVALID_PARAMS if in_params else types.INVALID_REQUEST,
            f"{'Invalid params' if in_params else 'Invalid Request'}: {where} holds a lone "
            f"surrogate ({character.encode('unicode_escape').decode()}), which is not Unicode "
            "text; send whole characters (was a string cut inside one?)",
        )
    return error(types.INVALID_REQUEST,
                 "Invalid Request: not a JSON-RPC 2.0 request, notification or response")


class _AnsweredLines:
    """stdin's lines as the SDK reads them, minus those answered here with an error."""

    def __init__(self, stdin: anyio.AsyncFile[bytes], errors) -> None:
        self._stdin = stdin
        self._errors = errors

    def __aiter__(self) -> _AnsweredLines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._stdin.readline()
            if not line:
                raise StopAsyncIteration
            if not line.strip():
                continue
            error = line_error(line.rstrip(b"\r\n"))
            if error is None:
                return line.decode("utf-8")
            await self._errors.send(error)


@asynccontextmanager
async def answering_stdio_server() -> AsyncIterator[tuple[Any, Any]]:
    """Like the SDK's ``stdio_server()``, but every line gets an answer."""
    errors_in, errors_out = anyio.create_memory_object_stream[types.JSONRPCError](16)
    stdin = _AnsweredLines(anyio.wrap_file(sys.stdin.buffer), errors_in)
    async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # type: ignore[arg-type]

        async def answer_errors() -> None:
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                async with errors_out:
                    async for error in errors_out:
                        await write_stream.send(SessionMessage(error))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(answer_errors)
            try:
                yield read_stream, write_stream
            finally:
                tasks.cancel_scope.cancel()
