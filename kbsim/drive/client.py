"""A synchronous, recording MCP tool client over Streamable HTTP or stdio.

The official SDK's async ``ClientSession`` runs on one background event-loop thread (an
anyio blocking portal); :class:`ToolSession` gives it a synchronous face, every call
bounded by a timeout, and records every request it makes (tool calls and ``tools/list``)
in a :class:`~kbsim.drive.history.CallRecorder`. A SimPy process, or a test's racing
threads, call it as they call kbsim's own :class:`~kbsim.store.Client`: a refused call
raises :class:`~kbsim.store.ToolError` with the server's code.

Credentials: a header's value is read from an environment variable the user names
(``--header-env Authorization=MY_TOKEN``), at connection time, and kept only in the HTTP
client's headers; it is never printed, logged, recorded, or part of any repr.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kbsim.drive.history import CallRecorder, redacted_url
from kbsim.errors import UsageError
from kbsim.store import ToolError
from kbsim.store.errors import ERROR_CODES

__all__ = [
    "DEFAULT_CALL_TIMEOUT_S",
    "DriveError",
    "McpConnection",
    "ServerAddress",
    "ServerError",
    "ToolSession",
    "TransportFailure",
    "parse_header_env",
]

#: How long one call may take before the server is deemed to have stopped answering.
DEFAULT_CALL_TIMEOUT_S = 30.0
#: The least time a stdio server's process is given to start and answer the handshake.
STDIO_START_S = 60.0


class DriveError(UsageError):
    """A server, an option or an input the driver refuses: one line naming it."""


class TransportFailure(DriveError):
    """A request that got no answer: the server timed out, closed, refused the credentials
    (HTTP 401/403) or broke the protocol. ``kind`` is what the calls table records after
    ``transport:`` (``timeout``, ``closed``, ``http_401``, ``http_403``, ``connect``,
    ``protocol``)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class ServerError(DriveError):
    """A tool error whose code is not one of kbsim's (:data:`kbsim.store.errors.ERROR_CODES`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def parse_header_env(specs: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``["Authorization=MY_TOKEN", ...]`` as ``(header, variable)`` pairs.

    Raises:
        DriveError: a spec is not ``HEADER=VARIABLE``, or a variable is not set (its
            value is never shown).
    """
    pairs = []
    for spec in specs:
        header, sep, variable = spec.partition("=")
        if not sep or not header.strip() or not variable.strip():
            raise DriveError(f"--header-env {spec!r}: expected HEADER=ENV_VARIABLE, e.g. Authorization=MY_TOKEN")
        if variable not in os.environ:
            raise DriveError(f"--header-env {header}={variable}: the environment variable {variable} is not set")
        pairs.append((header.strip(), variable.strip()))
    return tuple(pairs)


@dataclass(frozen=True)
class ServerAddress:
    """Where the server is: a Streamable HTTP ``url``, or a stdio ``command``.

    ``header_env`` names, for each HTTP header, the environment variable holding its value;
    the values are read by :meth:`headers` when connecting and never stored here.
    """

    transport: str
    url: str | None = None
    command: tuple[str, ...] = ()
    header_env: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    #: extra environment for a stdio server (merged over the SDK's safe default)
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    @classmethod
    def http(cls, url: str, header_env: Sequence[str] = ()) -> ServerAddress:
        """A Streamable HTTP endpoint (``http://`` or ``https://``)."""
        if not url.startswith(("http://", "https://")):
            raise DriveError(f"--url {redacted_url(url)!r}: expected an http:// or https:// URL of an MCP endpoint")
        return cls("http", url=url, header_env=parse_header_env(header_env))

    @classmethod
    def stdio(cls, command: Sequence[str], env: Mapping[str, str] | None = None) -> ServerAddress:
        """A command that serves MCP over its stdin and stdout."""
        command = tuple(command)
        if not command or not command[0]:
            raise DriveError("no server: give --url URL or -- COMMAND ARGS")
        if shutil.which(command[0]) is None:
            raise DriveError(f"-- {command[0]}: no such command")
        return cls("stdio", command=command, env=tuple(sorted((env or {}).items())))

    def describe(self) -> dict[str, Any]:
        """The address as a history records it: no credential, no ``user:password@``."""
        if self.transport == "http":
            return {"transport": "http", "url": redacted_url(self.url or "")}
        return {"transport": "stdio", "command": list(self.command)}

    def shown(self) -> str:
        """The address for a one-line message."""
        if self.transport == "http":
            return redacted_url(self.url or "")
        return " ".join(self.command)

    def headers(self) -> dict[str, str]:
        """The HTTP headers, their values read from the environment now."""
        values = {}
        for header, variable in self.header_env:
            if variable not in os.environ:
                raise DriveError(f"--header-env {header}={variable}: the environment variable {variable} is not set")
            values[header] = os.environ[variable]
        return values


def _json_bytes(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass"))


def tool_payload(result) -> Any:
    """A ``CallToolResult``'s payload: its structured content, else its text parsed as JSON
    (else the text itself)."""
    if result.structured_content is not None:
        return result.structured_content
    texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
    text = "".join(texts)
    try:
        return json.loads(text)
    except ValueError:
        return text


class McpConnection:
    """The driver's link to one server: a background event loop and the MCP sessions on it.

    Over HTTP each named client (``people``, ``agent``, ``race-3`` ...) gets its own MCP
    session; over stdio there is one server process and one session, which every named
    client shares (each call still records its client's name).

    Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, address: ServerAddress, recorder: CallRecorder, *,
                 timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
                 connect_timeout_s: float | None = None,
                 max_calls_per_second: float | None = None) -> None:
        if not timeout_s > 0:
            raise DriveError(f"--timeout {timeout_s!r}: expected seconds > 0")
        if max_calls_per_second is not None and not max_calls_per_second > 0:
            raise DriveError(f"--max-calls-per-second {max_calls_per_second!r}: expected a number > 0")
        self.address = address
        self.recorder = recorder
        self.timeout_s = float(timeout_s)
        #: connecting (the transport and the handshake) is bounded by the call timeout unless given;
        #: a stdio server is a process that must start first, and gets at least STDIO_START_S
        if connect_timeout_s is None:
            connect_timeout_s = max(timeout_s, STDIO_START_S) if address.transport == "stdio" else timeout_s
        self.connect_timeout_s = float(connect_timeout_s)
        self._min_gap_s = 0.0 if max_calls_per_second is None else 1.0 / max_calls_per_second
        self._pace_lock = threading.Lock()
        self._next_call_at = 0.0
        self._stack = contextlib.ExitStack()
        self._portal: Any = None
        self._sessions: dict[str, _Session] = {}
        self._shared: _Session | None = None
        self._stderr: Any = None
        self.server_info: dict[str, str] = {}

    def __enter__(self) -> McpConnection:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _started_portal(self):
        if self._portal is None:
            from anyio.from_thread import start_blocking_portal

            self._portal = self._stack.enter_context(start_blocking_portal())
        return self._portal

    def session(self, client: str) -> ToolSession:
        """The synchronous tool client named ``client`` (opened on first use).

        Raises:
            TransportFailure: the server cannot be reached, refuses the credentials, or does
                not complete the MCP handshake within the connect timeout.
        """
        if self.address.transport == "stdio":
            if self._shared is None:
                self._shared = self._open()
            return ToolSession(self, self._shared, client)
        if client not in self._sessions:
            self._sessions[client] = self._open()
        return ToolSession(self, self._sessions[client], client)

    def _open(self) -> _Session:
        portal = self._started_portal()
        box = _Session()
        try:
            if self.address.transport == "http":
                streams = self._http_streams(portal, box)
            else:
                streams = self._stdio_streams(portal)
            from mcp import ClientSession

            session = self._stack.enter_context(portal.wrap_async_context_manager(ClientSession(*streams)))
            initialized = portal.call(self._bounded, session.initialize, self.connect_timeout_s)
        except TransportFailure:
            raise
        except BaseException as exc:  # noqa: BLE001 - every failure to connect is one line
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise self._failure(exc, box, connecting=True) from None
        box.session = session
        info = initialized.server_info
        if info is not None and not self.server_info:
            self.server_info = {"name": info.name, "version": info.version}
        return box

    def _http_streams(self, portal, box: _Session):
        import httpx2
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        timeout = httpx2.Timeout(self.timeout_s, connect=self.connect_timeout_s)
        http = create_mcp_http_client(headers=self.address.headers(), timeout=timeout)

        async def note_status(response) -> None:
            box.last_status = response.status_code

        http.event_hooks = {"request": [], "response": [note_status]}
        http = self._stack.enter_context(portal.wrap_async_context_manager(http))
        read, write = self._stack.enter_context(
            portal.wrap_async_context_manager(streamable_http_client(self.address.url or "", http_client=http)))
        return read, write

    def _stdio_streams(self, portal):
        from mcp.client.stdio import StdioServerParameters, stdio_client

        self._stderr = self._stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))
        parameters = StdioServerParameters(command=self.address.command[0], args=list(self.address.command[1:]),
                                           env=dict(self.address.env) or None)
        return self._stack.enter_context(portal.wrap_async_context_manager(stdio_client(parameters, self._stderr)))

    @staticmethod
    async def _bounded(function, timeout_s: float, *args, **kwargs):
        import anyio

        with anyio.fail_after(timeout_s):
            return await function(*args, **kwargs)

    def server_stderr_tail(self) -> str:
        """The last line a stdio server wrote to its stderr ('' over HTTP or if none)."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            lines = [line.strip() for line in self._stderr.read().splitlines() if line.strip()]
        except (OSError, ValueError):
            return ""
        return lines[-1][:300] if lines else ""

    def _failure(self, exc: BaseException, box: _Session, *, connecting: bool = False) -> TransportFailure:
        """A failure of a request (or of connecting) as one :class:`TransportFailure`."""
        where = self.address.shown()
        status = box.last_status
        if status in (401, 403):
            return TransportFailure(f"http_{status}", f"{where}: the server answered HTTP {status} "
                                    f"({'unauthorized' if status == 401 else 'forbidden'}): check --header-env")
        if isinstance(exc, TimeoutError):
            what = "connecting" if connecting else "a call"
            limit = self.connect_timeout_s if connecting else self.timeout_s
            return TransportFailure("timeout", f"{where}: no answer within {limit:g} s ({what}; --timeout)")
        text = _describe(exc)
        if connecting:
            tail = self.server_stderr_tail()
            detail = f"; the server said: {tail}" if tail else ""
            if status is not None and status >= 400:
                return TransportFailure(f"http_{status}", f"{where}: the server answered HTTP {status}")
            return TransportFailure("connect", f"{where}: cannot connect: {text}{detail}")
        if status is not None and status >= 400:
            return TransportFailure(f"http_{status}", f"{where}: the server answered HTTP {status}")
        import anyio

        if isinstance(exc, (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)):
            return TransportFailure("closed", f"{where}: the connection closed")
        from mcp.shared.exceptions import MCPError

        if isinstance(exc, MCPError) and exc.code == -32000:  # CONNECTION_CLOSED
            return TransportFailure("closed", f"{where}: the connection closed ({exc.error.message})")
        return TransportFailure("protocol", f"{where}: {text}")

    def pace(self) -> None:
        """Wait, if need be, so calls start no more often than ``--max-calls-per-second``."""
        if not self._min_gap_s:
            return
        with self._pace_lock:
            now = time.monotonic()
            start = max(now, self._next_call_at)
            self._next_call_at = start + self._min_gap_s
        if start > now:
            time.sleep(start - now)

    def close(self) -> None:
        """Close every session and the event loop (a stdio server is stopped)."""
        stack, self._stack = self._stack, contextlib.ExitStack()
        self._sessions.clear()
        self._shared = None
        self._portal = None
        with contextlib.suppress(Exception):
            stack.close()


def _describe(exc: BaseException) -> str:
    """An exception in a few words (an exception group by its first leaf)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}"[:300] if text else type(exc).__name__


@dataclass
class _Session:
    """One SDK session and what its transport last saw."""

    session: Any = None
    last_status: int | None = None


class ToolSession:
    """A synchronous, recording tool client: one named client of an :class:`McpConnection`.

    :meth:`call` answers a tool's payload or raises :class:`~kbsim.store.ToolError`
    (a refusal with one of kbsim's codes), :class:`ServerError` (another code) or
    :class:`TransportFailure` (no answer). Every request is a row of the recorder's calls
    table, with ``actor`` saying what the day was doing.
    """

    def __init__(self, connection: McpConnection, box: _Session, client: str) -> None:
        self.connection = connection
        self._box = box
        self.client = client
        #: what the calls are for, recorded on each row (the caller sets it)
        self.actor = "call"

    def list_tools(self, actor: str = "probe") -> list[dict[str, Any]]:
        """The server's tools as listed (``tools/list``, every page), as JSON objects."""
        connection, recorder = self.connection, self.connection.recorder
        tools: list[dict[str, Any]] = []
        cursor = None
        while True:
            call_id, started_s, sim_s = recorder.begin()
            sent = _json_bytes({"method": "tools/list", "params": {"cursor": cursor} if cursor else {}})
            try:
                from mcp import types

                params = None if cursor is None else types.PaginatedRequestParams(cursor=cursor)
                listed = connection._portal.call(connection._bounded, functools.partial(
                    self._box.session.list_tools, params=params), connection.timeout_s)
            except BaseException as exc:  # noqa: BLE001 - recorded, then one line
                if isinstance(exc, KeyboardInterrupt):
                    raise
                failure = connection._failure(exc, self._box)
                recorder.finish(call_id, started_s, sim_s, client=self.client, actor=actor, tool="tools/list",
                                arguments={}, ok=False, error_code=f"transport:{failure.kind}", result=None,
                                bytes_sent=sent, bytes_received=0)
                raise failure from None
            page = listed.model_dump(by_alias=True, exclude_none=True, mode="json")
            tools.extend(page.get("tools", []))
            recorder.finish(call_id, started_s, sim_s, client=self.client, actor=actor, tool="tools/list",
                            arguments={"cursor": cursor} if cursor else {}, ok=True, error_code=None,
                            result={"tools": [tool.get("name") for tool in page.get("tools", [])]},
                            bytes_sent=sent, bytes_received=_json_bytes(page))
            cursor = page.get("nextCursor")
            if not cursor:
                return tools

    def call_sized(self, tool: str, arguments: dict[str, Any], actor: str | None = None) -> tuple[Any, int]:
        """Call ``tool``; ``(payload, JSON bytes of the payload)``, as kbsim's own client sizes it.

        Raises:
            ToolError: the server refused the call with one of kbsim's codes (its size is
                the JSON of ``{"error": payload}``, as the model counts it: ``error_size``).
            ServerError: the server refused it with another code.
            TransportFailure: no answer (timeout, closed, HTTP 401/403, protocol).
        """
        connection, recorder = self.connection, self.connection.recorder
        actor = self.actor if actor is None else actor
        connection.pace()
        call_id, started_s, sim_s = recorder.begin()
        sent = _json_bytes({"method": "tools/call", "params": {"name": tool, "arguments": arguments}})
        try:
            result = connection._portal.call(connection._bounded, self._box.session.call_tool,
                                             connection.timeout_s, tool, arguments)
        except BaseException as exc:  # noqa: BLE001 - recorded, then one line
            if isinstance(exc, KeyboardInterrupt):
                recorder.finish(call_id, started_s, sim_s, client=self.client, actor=actor, tool=tool,
                                arguments=arguments, ok=False, error_code="transport:interrupted", result=None,
                                bytes_sent=sent, bytes_received=0)
                raise
            failure = connection._failure(exc, self._box)
            recorder.finish(call_id, started_s, sim_s, client=self.client, actor=actor, tool=tool,
                            arguments=arguments, ok=False, error_code=f"transport:{failure.kind}", result=None,
                            bytes_sent=sent, bytes_received=0)
            raise failure from None
        payload = tool_payload(result)
        received = len(result.model_dump_json(by_alias=True, exclude_none=True).encode())
        code = None
        if result.is_error:
            code = str(payload.get("code", "error")) if isinstance(payload, dict) else "error"
        recorder.finish(call_id, started_s, sim_s, client=self.client, actor=actor, tool=tool, arguments=arguments,
                        ok=not result.is_error, error_code=code, result=payload, bytes_sent=sent,
                        bytes_received=received)
        if result.is_error:
            message = str(payload.get("message", "")) if isinstance(payload, dict) else str(payload)[:300]
            if code in ERROR_CODES:
                details = {k: v for k, v in payload.items() if k not in ("code", "message")}
                raise ToolError(code, message, **details)
            raise ServerError(code or "error", f"{tool}: the server refused the call: {code}: {message}")
        return payload, _json_bytes(payload)

    def call(self, tool: str, arguments: dict[str, Any], actor: str | None = None) -> Any:
        """Call ``tool`` and return its payload (see :meth:`call_sized`)."""
        return self.call_sized(tool, arguments, actor)[0]
