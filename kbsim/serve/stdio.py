r"""The stdio transport of ``kbsim serve``: the MCP SDK's, with every line answered.

The SDK's stdio transport drops a line it cannot parse, so a request in it
is never answered and its client waits forever. Here every line is checked
first, with the SDK's own parser, and a line it would drop is answered with
a JSON-RPC error instead (its ``id`` when one can be read, else ``null``):

- ``-32700`` parse error: the line is not UTF-8 text, or not JSON (``NaN``
  included). Invalid UTF-8 is refused, not silently replaced by U+FFFD;
- ``-32602`` invalid params: a string holds a lone surrogate (``"\ud800"``,
  what a client cutting a string inside an emoji sends), which is not
  Unicode text; the message names where (``params.arguments.query``);
- ``-32600`` invalid request: JSON that is not a JSON-RPC 2.0 message; a
  request whose ``id`` is ``null``, an object, a list, a boolean or a fraction
  (JSON-RPC 2.0 takes a string or a number, and MCP forbids ``null``: the
  SDK would read it as a notification and never answer); a message nested
  deeper than the SDK reads (about 200 levels of brackets).

Blank lines are skipped. Everything else is passed to the SDK unchanged. No
line can stop the server: should checking one fail in a way not foreseen,
it is answered ``-32603`` internal error and the server reads on.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

from kbsim.extras import require

require("serve", "mcp", "kbsim serve")

import anyio  # noqa: E402
import anyio.from_thread  # noqa: E402
import anyio.lowlevel  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402
from mcp.shared.message import SessionMessage  # noqa: E402


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _lone_surrogate(value: Any, where: str) -> tuple[str, str] | None:
    """``(path, character)`` of the first string holding a lone surrogate, else None.

    Walked with a stack, not recursion: a message may nest as deep as ``json`` parses.
    """
    stack = [(value, where)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, str):
            for character in value:
                if "\ud800" <= character <= "\udfff":
                    return where, character
        elif isinstance(value, dict):
            for key, item in reversed(list(value.items())):
                stack.append((item, f"{where}.{key}"))
                stack.append((key, where))
        elif isinstance(value, list):
            stack.extend((item, f"{where}[{i}]") for i, item in reversed(list(enumerate(value))))
    return None


class _TooDeep(ValueError):
    """JSON nested deeper than Python's parser reads."""


def _loads(text: str) -> Any:
    """``json.loads`` refusing NaN and Infinity; ValueError for anything it cannot read,
    :class:`_TooDeep` for a nesting too deep for Python's parser."""
    try:
        return json.loads(text, parse_constant=_no_constants)
    except RecursionError:
        raise _TooDeep("nested too deeply to read") from None


def _request_id(message: Any) -> str | int | None:
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        return None
    return request_id


_ID_TOKEN = re.compile(r'\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*[,}]')


def _top_level_id(text: str, scan: int = 1 << 20) -> str | int | None:
    """The ``id`` member of the outermost object of ``text`` (a string or an integer), found
    by a scan of its first ``scan`` characters, for a message too deep for ``json`` to parse."""
    depth, i, end = 0, 0, min(len(text), scan)
    while i < end:
        character = text[i]
        if character == '"':
            close = i + 1
            while close < end and text[close] != '"':
                close += 2 if text[close] == "\\" else 1
            if depth == 1 and text[i:close + 1] == '"id"':
                token = _ID_TOKEN.match(text, close + 1)
                if token:
                    return _request_id({"id": json.loads(token.group(1))})
            i = close + 1
            continue
        if character in "{[":
            depth += 1
        elif character in "}]":
            depth -= 1
        i += 1
    return None


def _bad_id(message: Any) -> str | None:
    """What is wrong with a request's ``id`` the SDK would take for a notification's
    absent one (and so never answer), else None."""
    if not (isinstance(message, dict) and "method" in message and "id" in message):
        return None
    request_id = message["id"]
    if isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool)):
        return None
    shown = {type(None): "null", dict: "an object", list: "a list", bool: "a boolean", float: "a fraction"}
    return shown.get(type(request_id), type(request_id).__name__)


def line_error(line: bytes) -> types.JSONRPCError | None:
    """The JSON-RPC error answering ``line``, or None if the SDK can read it."""

    def error(code: int, message: str) -> types.JSONRPCError:
        lenient = line.decode("utf-8", "replace")
        try:  # only to address the answer: the id, read as leniently as can be
            request_id = _request_id(_loads(lenient))
        except _TooDeep:  # JSON, too deep to parse: its id is still a request's (not so for a parse error)
            request_id = _top_level_id(lenient)
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
        parsed = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValueError as exc:  # pydantic's ValidationError
        if "recursion limit exceeded" in str(exc):
            return error(types.INVALID_REQUEST, "Invalid Request: the message is nested deeper than the MCP SDK "
                         "reads (about 200 levels of brackets)")
    else:
        if not isinstance(parsed, types.JSONRPCNotification) or '"id"' not in text:
            return None
        try:
            wrong = _bad_id(_loads(text))
        except ValueError as exc:  # NaN or Infinity, which the SDK reads: an id it hides is never answered
            return error(types.PARSE_ERROR, f"Parse error: the line is not JSON: {exc}")
        if wrong is None:
            return None
        return error(types.INVALID_REQUEST, f"Invalid Request: id is {wrong}; JSON-RPC 2.0 takes a string or an "
                     "integer (MCP forbids null), and a message without an id is a notification, never answered")
    try:
        message = _loads(text)
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
    """stdin's lines as the SDK reads them, minus those answered here with an error.

    A daemon thread reads stdin's file descriptor (``os.read``: no Python buffer lock held
    while it waits) and hands each line to the event loop, so a blocked read never keeps
    the process alive once serving has ended (the live day stopping, say), as a worker
    thread of ``anyio.wrap_file`` would until the client closes stdin.
    """

    def __init__(self, stdin_fd: int, errors) -> None:
        self._fd = stdin_fd
        self._errors = errors
        self._send, self._receive = anyio.create_memory_object_stream[bytes](16)
        self._reader: threading.Thread | None = None

    def _pump(self, token) -> None:
        pending = bytearray()
        try:
            while chunk := os.read(self._fd, 1 << 16):
                start = len(pending)
                pending += chunk
                cut = pending.find(b"\n", start)
                while cut >= 0:
                    anyio.from_thread.run(self._send.send, bytes(pending[:cut + 1]), token=token)
                    del pending[:cut + 1]
                    cut = pending.find(b"\n")
            if pending:
                anyio.from_thread.run(self._send.send, bytes(pending), token=token)
        except Exception:  # noqa: BLE001 - the loop has finished, or stdin failed: stop reading
            pass
        finally:
            with suppress(Exception):
                anyio.from_thread.run_sync(self._send.close, token=token)

    def close(self) -> None:
        """End the lines (the SDK's reader stops) though stdin is still open: serving ended."""
        self._send.close()

    def __aiter__(self) -> _AnsweredLines:
        return self

    async def __anext__(self) -> str:
        if self._reader is None:
            self._reader = threading.Thread(target=self._pump, args=(anyio.lowlevel.current_token(),),
                                            name="kbsim-stdin", daemon=True)
            self._reader.start()
        while True:
            try:
                line = await self._receive.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                raise StopAsyncIteration from None
            if not line.strip():
                continue
            try:
                error = line_error(line.rstrip(b"\r\n"))
            except Exception as exc:  # noqa: BLE001 - a line must never stop the server
                error = types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(
                    code=types.INTERNAL_ERROR, message=f"Internal error: the line could not be checked ({exc!r:.200})"))
            if error is None:
                return line.decode("utf-8")
            await self._errors.send(error)


@asynccontextmanager
async def answering_stdio_server() -> AsyncIterator[tuple[Any, Any]]:
    """Like the SDK's ``stdio_server()``, but every line gets an answer."""
    errors_in, errors_out = anyio.create_memory_object_stream[types.JSONRPCError](16)
    stdin = _AnsweredLines(sys.stdin.fileno(), errors_in)
    # the SDK types stdin as anyio's AsyncFile; _AnsweredLines has the one method it uses (async iteration)
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
                stdin.close()
